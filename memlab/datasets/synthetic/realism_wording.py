"""Wording of the realism knobs: questions said in other words, aliases, look-alike lines,
assistant replies.

- ``REWORDS``: each word question of ``update``, ``distractor``, ``redundancy`` and
  ``multi`` as a template with units (``paraphrase`` has its own units in ``facts``). A
  unit is ``evidence wording=other wording``; ``{P}``, ``{project}``, ``{attr}``… are
  filled with the question's entity. The other wording is a word list, ``@person`` /
  ``@project`` (a name, replaced by one of ``ALIASES``), or ``~`` (the filled value's
  entry in ``SYNONYMS``). Every frame word of a template is a stop word or an evidence
  word, so a question with no unit swapped reuses its evidence's words, and one with every
  unit swapped shares none of them (tests check both).
- ``CONFUSER_FRAMES``: look-alike lines (``confusability``) around some of a question's
  words; ``ACKS``: the assistant's replies in conversation style.
"""

from __future__ import annotations

from memlab.datasets.synthetic.lexicon import parse_table

__all__ = ["ACKS", "ALIASES", "CONFUSER_FRAMES", "REWORDS", "SYNONYMS"]

# key | template | units (evidence wording=other wording; @kind: an alias; ~: a synonym)
REWORDS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    key: (template, tuple(tuple(u.split("=", 1)) for u in units.split(";")))  # type: ignore[misc]
    for key, template, units in parse_table(
        """
Where does {P} prefer to be pinged? | {0} {1} to be {2} on what? | {P}=@person;prefers=likes;pinged=contacted
What are {P}'s working hours? | What are {0}'s {1} {2}? | {P}=@person;working=office;hours=times
Which code editor does {P} prefer? | Which is {0}'s {1} {2} {3}? | {P}=@person;preferred=favourite;code=programming;editor=app
Which model should write {P}'s daily summaries? | Who should have {0} {1}'s {2} {3}? | written=drafted;{P}=@person;daily=everyday;summaries=recaps
What is the default branch for {project}? | What is the {0} {1} for {2}? | default=standard;branch=code line;{project}=@project
How often does the {project} release train leave? | {0}'s {1} {2} {3} when? | {project}=@project;release=ship;train=cycle;leaves=departs
Which Node version is {project} pinned to? | Which {0} {1} is {2} {3} to? | Node=JavaScript runtime;version=build;{project}=@project;pinned=locked
What is the {project} error budget? | What is {0}'s {1} {2}? | {project}=@project;error=failure;budget=allowance
What {attr} does {P} use? | What {0} does {1} have? | {attr}=~;{P}=@person
What is {P}'s favourite {attr}? | What is {0}'s {1} {2}? | {P}=@person;favourite=go-to;{attr}=~
What is {P}'s {attr}? | What is {0}'s {1}? | {P}=@person;{attr}=~
What do we know about the {project} {topic}? | What about {0}'s {1}? | {project}=@project;{topic}=~
multi:0 | Where is the {0} that {1} {2}? | service=system;{x}=@person;owns=looks after
multi:1 | When was {0}'s {1} {2}, and when was it {3}? | {x}=@project;{y}=~;kicked off=started;shipped=released
multi:2 | Why was there an {0} of the {1} {2} {3} on for {4}? | outage=downtime;service=system;{x}=@project;depends=relies;{purpose}=~
multi:3 | Who is the {0} {1} for {2}, and are they on {3}? | on-call=standby;lead=head;{y}=@project;vacation=holiday
""",
        3,
    )
}

# What a name becomes when its unit is swapped: it names no one (the question then shares
# no word with its evidence, and is as ambiguous as a question that forgot the name).
ALIASES: dict[str, tuple[str, ...]] = {
    "person": ("my teammate", "a colleague", "our teammate", "my coworker"),
    "project": ("our project", "that project", "the product", "our app"),
}

# The other wording of an attribute, a topic, an initiative or a purpose (the ``~`` units).
SYNONYMS: dict[str, str] = dict(
    parse_table(
        """
laptop | notebook computer
phone | mobile
monitor | external screen
keyboard | typing gear
headset | headphones
tablet | touch device
snack | nibble
lunch spot | midday eatery
tea | infusion
pizza topping | pie garnish
dessert | sweet
board game | tabletop pastime
GitHub handle | code-hosting username
timezone | clock region
desk | workstation
badge number | ID card code
shirt size | tee fit
cost centre | budget code
launch | rollout
data migration | database move
security audit | safety review
pricing change | price update
hiring | recruiting
API deprecation | interface phase-out
mobile app | phone application
docs revamp | documentation rewrite
SSO rollout | unified login launch
dark mode | night theme
CSV export | spreadsheet download
audit log | activity record
offline sync | no-network replication
usage dashboard | consumption overview
webhook retries | callback resends
billing revamp | invoicing overhaul
sending receipts | mailing proofs of payment
search | lookups
image uploads | picture transfers
login | sign-in
reporting | analytics summaries
invoicing | bill generation
""",
        2,
    )
)

# A look-alike line: ``{words}`` some of a question's content words, ``{F}`` a first name.
CONFUSER_FRAMES = (
    "Asked {F} about {words}; no answer yet",
    "{F} brought up {words} in passing",
    "Still need to look into {words}",
    "Heard something about {words}, not confirmed",
)

# The assistant's reply to each user turn in conversation style: no content word a
# question asks about.
ACKS = ("Noted.", "Got it.", "Understood.", "Thanks, noted.", "OK, will do.", "Sure.")
