"""Wording of the query-mix phenomena (``identifier``, ``keyword``, ``dated``).

The queries an agent sends to ``memory_search`` are often not questions: a bare
identifier, two keywords, a date. ``memlab.datasets.synthetic.querymix`` builds them
from these tables:

- ``ID_KINDS``: one entry per identifier kind (commit, ticket, host:port, IP, error code,
  file path, version, host name) with the log lines that state one (``{tok}`` is the
  identifier, the other slots are ``lexicon``'s) and the questions that ask about it;
  ``ID_DIGIT_KIND`` the all-digit kind a config may add (``SynthConfig.digit_ids``).
- ``KEYWORD_SUBJECTS`` × ``KEYWORD_ATTRS``: a grid of plain facts (``Printer warranty
  runs until June 2027``) asked by their two or three keywords (``printer warranty``).
- ``DATED_EVENTS``: one notable event per asked day; ``DATED_FORMS``: how the date is asked.

The words of these tables are disjoint from the filler's (``lexicon``) and from the other
categories' facts (``facts``) where it matters: no other line of a workspace holds every
keyword of a keyword query, an identifier or a near miss of one (tests check both).
"""

from __future__ import annotations

from typing import NamedTuple

from memlab.datasets.synthetic.lexicon import parse_table

__all__ = [
    "DATED_EVENTS",
    "DATED_FORMS",
    "ID_DIGIT_KIND",
    "ID_KINDS",
    "ID_TICKET_KEYS",
    "KEYWORD_ATTRS",
    "KEYWORD_SUBJECTS",
    "MONTHS",
    "NAME_ENVS",
    "NAME_PREFIXES",
    "PATH_TABLES",
    "PATH_VERBS",
    "IdKind",
    "KeywordAttr",
]


class IdKind(NamedTuple):
    """An identifier kind: lines stating one (``{tok}``) and questions asking about it.

    ``fixed`` is the length of the prefix a near miss never changes (``"10."`` of an
    IP: a near miss stays in the private range); ``memory_share`` is the share of
    evidence lines written to ``MEMORY.md`` (section Infrastructure) instead of a log,
    always in the first line's wording (a durable statement, not an event).
    """

    kind: str
    lines: tuple[str, ...]
    questions: tuple[str, ...]
    fixed: int
    memory_share: float


# Kinds in rotation order (``querymix.build_identifier`` starts at a random one).
# kind | fixed prefix | memory share | line;line;line | question;question
ID_KINDS = tuple(
    IdKind(kind, tuple(lines.split(";")), tuple(qs.split(";")), int(fixed), float(share))
    for kind, fixed, share, lines, qs in parse_table(
        """
commit | 0 | 0 | Deployed {tok} to staging, {F} watched the {component} afterwards;{tok} on main reworks the {component} retry loop;Tagged {tok} as the {project} release candidate | which change is {tok}?;what did commit {tok} do?
ticket | 0 | 0 | Opened {tok}: the {component} drops webhooks under load;{F} picked up {tok} about the {component} memory leak;{tok} is waiting on {vendor} before we can close it | what is {tok} about?;who picked up {tok}?
hostport | 3 | 0.25 | The {component} listens on {tok} in staging;Pointed the {project} load test at {tok};{vendor} webhook target is now {tok} | what listens on {tok}?;which service is at {tok}?
ip | 3 | 0.25 | {host} got the static address {tok};Allow-listed {tok} in the firewall for the {component};{F}'s laptop shows up as {tok} on the office VPN | which machine has the address {tok}?;what is {tok}?
errcode | 0 | 0 | The {component} failed with {tok} during the nightly import;{tok} again from the {component}, {F} is digging into it;Support ticket from {vendor} quotes error {tok} | what does error {tok} mean?;when did we hit {tok}?
path | 0 | 0.25 | Settings for the {component} live in {tok};{F} rewrote {tok} to fix the {component} race;Reviewed {tok} for the {project} rollout | what is in {tok}?;who touched {tok}?
version | 0 | 0 | Upgraded the {component} to {tok}, no alerts overnight;{tok} of the {component} leaks file handles, pinned the previous one;{project} ships the {component} at {tok} from Monday | what changed in {tok}?;which component runs {tok}?
name | 0 | 0.25 | {tok} hosts the {component} for {project};Drained {tok} before the kernel patch;{F} rebuilt {tok} from the golden image | which host runs {tok}?;what runs on {tok}?
""",
        5,
    )
)
# The all-digit kind (``SynthConfig.digit_ids``, off in the committed corpora): a short commit
# hash that happens to be all digits, an order or invoice number with leading zeros, a long
# reference number. Rotated after the eight kinds above when on.
ID_DIGIT_KIND = IdKind(
    "number",
    (
        "Invoice {tok} from {vendor} is still unpaid, {F} is chasing it",
        "{F} cherry-picked {tok} onto the {component} hotfix branch",
        "Order {tok} for the {project} hardware shipped today",
    ),
    ("what is {tok}?", "what happened with {tok}?"),
    0,
    0.0,
)
# Ticket keys of identifier questions: disjoint from the filler's (``lexicon.TICKET_KEYS``).
ID_TICKET_KEYS = ("INC", "SUP", "ENG", "REL", "CS", "QA")
NAME_PREFIXES = ("gw", "pg", "redis", "kafka", "minio", "etcd", "vault")
NAME_ENVS = ("prod", "stg", "dev", "eu", "us")
PATH_VERBS = ("add", "drop", "alter")
PATH_TABLES = ("users", "events", "invoices", "sessions", "chunks", "audit")

# --- keyword: short keyword queries over a grid of plain facts ----------------------------


class KeywordAttr(NamedTuple):
    """An attribute of the keyword grid: ``note`` states it (``{S}`` the capitalised
    subject, ``{v}`` a value); the query is ``"{subject} {attr}"``."""

    attr: str
    note: str
    values: tuple[str, ...]


KEYWORD_SUBJECTS = (
    "printer projector scanner thermostat doorbell dashcam drone treadmill aquarium "
    "greenhouse sauna piano canoe scooter boiler dishwasher telescope camper kayak freezer"
).split()
# attribute | note | values
KEYWORD_ATTRS = tuple(
    KeywordAttr(attr, note, tuple(values.split(";")))
    for attr, note, values in parse_table(
        """
password | {S} password is {v} | lantern-fig-27;otter-moss-64;quill-harbor-19;amber-wren-52
serial number | {S} serial number: {v} | SN-48213;SN-99107;SN-30552;SN-71846
warranty | {S} warranty runs until {v} | June 2027;March 2028;the end of next year;October 2026
supplier | {S} supplier: {v} | Conrad;a small shop on Elm St;the manufacturer's web store;Amazon Business
manual | {S} manual is in {v} | the blue binder;the kitchen drawer;the shared drive under /manuals;the hall cabinet
insurance | {S} insurance is covered by {v} | the household policy;a separate rider;the office policy;nobody yet
location | {S} location: {v} | the back room;the second floor landing;the garden shed;the loft
spare parts | {S} spare parts are kept in {v} | a labelled box in the cellar;the top shelf of the storeroom;a drawer under the workbench;the red crate
""",
        3,
    )
)

# --- dated: what happened on a given day ---------------------------------------------------

MONTHS = (
    "January February March April May June July August September October November December"
).split()
# How a dated question names its day; the forms rotate. ``{when}`` is ``March 3`` (``March 3,
# 2026`` when the logs span more than a year, so the day stays unique), ``{iso}`` 2026-03-03.
DATED_FORMS = (
    "What happened on {when}?",
    "What happened on {iso}?",
    "{iso}",
)
# One notable event per asked day; each is used once, so its text occurs once.
DATED_EVENTS = tuple(
    line.strip()
    for line in """
Power cut in the building from 10:00 to 13:00, worked from the café downstairs
Fire drill at 11:00, the whole floor stood outside for forty minutes
Moved desks to the quiet corner on the third floor
Water leak in the server closet, facilities put buckets under the ceiling tile
Laptop battery swelled, IT swapped the machine the same afternoon
{F} announced they are leaving at the end of the quarter
Welcomed a new intern, {F} is showing them around
All-hands meeting: the company is opening an office in Lisbon
Snowstorm closed the office, everyone worked from home
Street festival outside made calls impossible after 15:00
Cracked my phone screen on the way in
Team lunch to celebrate the hundredth customer
Internet provider outage kept us offline until noon
Stuck in the lift for twenty minutes with {F}
Quarterly board review went better than expected
Security badge stopped working, reception printed a temporary one
Hackathon day: built a toy voice assistant with {F}
Coffee machine finally replaced with an espresso grinder
Gave a talk at the local meetup about memory search
Heat wave: the air conditioning failed and we left at 14:00
Smoke alarm went off twice because of burnt toast
Farewell drinks for {F} at the rooftop bar
Lost the office keys and had to call the locksmith
Visitors from the Tokyo partner toured the office
Whiteboards were repainted and every diagram on them is gone
Blood donation drive in the lobby
Car park closed for resurfacing, took the train
Charity run around the lake with half the team
Office plants delivered, {F} volunteered to water them
Flu going around, half the team called in sick
Quarter-end close: finance asked everyone for receipts
Got the keynote slot at the spring conference
Earthquake drill, we hid under the desks
Pipes burst in the kitchen and the floor was closed
Bought a standing desk converter
Team photo on the roof terrace
Pitch meeting with an investor from Berlin
Town hall about the new expense policy
Bike stolen from the rack outside
Jury duty summons arrived for next month
Visited the data centre in Frankfurt
Cake for {F}'s birthday in the kitchen
Window cleaners on ropes outside all morning
Signed the lease for the second floor
Accessibility audit of the web app with an external tester
Recorded a product demo video for the launch page
Fridge clean-out: everything unlabelled went in the bin
Kicked off the mentoring programme with three pairs
Fire marshal training for {F} and two others
Broken heating, everyone wore coats indoors
""".strip().splitlines()
)
