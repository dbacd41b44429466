"""Wording of the synthetic phenomena that exercise OpenClaw 2026.9.6's new stages.

Pure data, drawn from by ``memlab.datasets.synthetic.release``. As in ``lexicon``, the
vocabularies stay apart from the filler and from the classic facts, so a question's
evidence lines are the only lines that answer it: importance attributes of projects,
project-wide settings (tagged with a project key), named note files whose text never
repeats their file name, trigger-annotated preferences whose text shares no word with the
message that should recall them, and durable personal facts stated once long ago.
"""

from __future__ import annotations

from typing import NamedTuple

from memlab.datasets.synthetic.lexicon import parse_table

__all__ = [
    "FILE_QUERIES",
    "IMPORTANCE_ATTRS",
    "LONG_ATTRS",
    "LOW_QUALIFIERS",
    "NAMED_FILES",
    "OLD_FILLER",
    "PROJECT_SETTINGS",
    "TRIGGERS",
    "LongAttr",
    "NamedFile",
    "Setting",
    "Trigger",
]


class Setting(NamedTuple):
    """A fact with a subject-free ``query``; ``values`` are distinct, none a prefix of another."""

    attr: str
    query: str
    values: tuple[str, ...]


def _settings(text: str) -> tuple[Setting, ...]:
    return tuple(
        Setting(a, q, tuple(v.strip() for v in vals.split(";")))
        for a, q, vals in parse_table(text, 3)
    )


# "{project} {attr}: {v}" in MEMORY.md; the answer carries a high importance, a near-copy
# with another value ("{project} {attr} ({qualifier}): {w}") a low one.
IMPORTANCE_ATTRS = _settings(
    """
staging host | What is the staging host for {project}? | stg-a1.internal; stg-b2.internal; stg-c3.internal; stg-d4.internal
status page | Where is the {project} status page? | status-north.example.net; status-blue.example.net; status-ops.example.net
error budget | What is the error budget of {project}? | 99.5% monthly; 99.9% monthly; 98% quarterly; 99.95% weekly
test account | Which test account do we use for {project}? | qa-bravo@example.org; qa-delta@example.org; qa-kilo@example.org
feature freeze | When is the {project} feature freeze? | two weeks before launch; the last Friday of the month; every sixth sprint
primary dashboard | Which dashboard is the primary one for {project}? | Grafana board 112; Grafana board 245; Grafana board 378
"""
)
LOW_QUALIFIERS = ("tentative", "old note", "unconfirmed", "from a draft")

# "{attr}: {v} <!-- project: key -->" in MEMORY.md, one entry per project that states it;
# the question never names the project (the active project decides).
PROJECT_SETTINGS = _settings(
    """
Deploy window | When is the deploy window? | Tuesday 14:00 UTC; Thursday 09:00 UTC; Monday 16:30 UTC
Standup time | What time is standup? | 09:15 on weekdays; 10:30 on weekdays; 08:45 on weekdays
CI provider | Which CI provider do we use? | Buildkite; CircleCI; Drone
Code freeze | Which day is code freeze? | the Wednesday before release; the Monday of release week; the day after sprint review
Ticket prefix | What ticket prefix do we use? | ALPHA-; BRAVO-; CHARLIE-
Chat channel | Which chat channel do we post updates in? | #eng-launchpad; #eng-hangar; #eng-workbench
Error tracker | Which error tracker do we use? | Rollbar; Bugsnag; Honeybadger
Docs location | Where do the docs live? | the wiki space ENG; the docs/ folder of the repo; the Notion workspace
Release cadence | How often do we release? | every two weeks; every Thursday; monthly, on the first Monday
Branch naming | How do we name branches? | user/topic; feature/ticket-id; topic-date
Review rule | How many approvals does a PR need? | one approval from a code owner; two approvals; one approval plus green CI
Database | Which database do we run on? | Postgres 16; MySQL 8; CockroachDB
Log retention | How long do we keep logs? | 14 days hot, 90 days cold; 30 days; 7 days, then deleted
Pager rotation | How long is a pager rotation? | one week, handover Monday; two weeks, handover Friday; four days, handover at noon
Design tool | Which design tool do we use? | Penpot; Sketch; Framer
Test runner | Which test runner do we use? | Vitest; Jest; Playwright Test
Hosting | Where is the app hosted? | Hetzner; Fly.io; Render
Support inbox | Which support inbox do we watch? | help-desk@example.com; care-team@example.com; assist@example.com
Demo day | When is demo day? | the last Thursday of the sprint; every other Friday; the first Tuesday of the month
Flag service | Which feature flag service do we use? | Unleash; Flagsmith; GrowthBook
"""
)


class NamedFile(NamedTuple):
    """``memory/{stem}.md``: a ``# title`` and three notes, none repeating the stem's words."""

    stem: str
    title: str
    lines: tuple[str, str, str]


NAMED_FILES = tuple(
    NamedFile(stem, title, tuple(x.strip() for x in lines.split(";")))  # type: ignore[arg-type]
    for stem, title, lines in parse_table(
        """
deploy-checklist | Before shipping | Run the migrations against a staging copy first; Tag the release only after the smoke tests pass; Post the changelog link in the team channel
packing-list | For trips | Travel adapter and the spare charger; Noise-cancelling headphones; Printed copy of the insurance card
reading-queue | Later | The Dispossessed, then Piranesi; Finish the essay collection from the library; Nothing over 600 pages until summer
router-settings | Basement box | Admin page only from the wired port; Guest SSID rotates its passphrase monthly; Firmware updates on the first Sunday
gift-ideas | Presents | Pottery class voucher; Vinyl of the live album; A good chef's knife, the Japanese one
interview-questions | Hiring loop | Ask about a system they simplified; One debugging exercise, 30 minutes max; Leave ten minutes at the end for the candidate
recipe-notes | Kitchen | Dal: temper the spices last; Sourdough needs 18 hours in the fridge; Double the garlic in everything
onboarding-plan | First two weeks | Laptop, accounts and repo access on day one; Pair on a small bug in week one; Demo something by the second Friday
garden-plan | Spring beds | Tomatoes along the south fence; Move the mint into a pot, it spreads; Compost goes on in late February
budget-2026 | Money | Rent and utilities come out on the 1st; Holiday fund gets a fixed transfer each payday; Cancel the unused streaming trial
retro-template | Looking back | Start with what went well, five minutes of silent writing; Dot-vote the top three problems; Every action item gets a name and a date
side-project-ideas | Maybe someday | A tiny app that reminds me to water houseplants; A CLI that turns meeting notes into tickets; Solar-powered weather station for the balcony
wedding-speech | Toast draft | Open with the camping story; Keep it under four minutes; Thank both families by name
running-plan | Training | Long run on Sundays at an easy pace; Intervals on Wednesday; Rest day after every hard session
meeting-norms | How we meet | No laptops in the weekly review; Agenda shared a day ahead; End five minutes early
bike-repairs | Workshop | Rear brake pads are worn; True the front wheel before the spring rides; Chain lube every 300 km
movie-list | Watch next | Paris, Texas; The new Villeneuve on the big screen; Anything by Kore-eda
language-study | Practice | Twenty minutes of flashcards each morning; Conversation group on Thursday evenings; Read one short article aloud a day
apartment-search | Moving | Two bedrooms, walking distance to the station; Ground floor is fine if there is a garden; Rent tops out at 1,900 a month
offsite-agenda | Team days | Morning: roadmap walk-through; Afternoon: hack session in pairs; Dinner booked at the harbour place
vendor-contacts | Who to call | Plumber: ask for the emergency line; Electrician quotes take a week; The locksmith only takes cash
sleep-log | Nights | No screens after ten helps; Caffeine after two ruins the night; Seven hours is the floor
""",
        3,
    )
)
# How a file-name question names the file; rotates (stem: tier 1, basename: tier 2, in a
# sentence: found through the path table and expansion).
FILE_QUERIES = ("{stem}", "{stem}.md", "What's in {stem}?")


class Trigger(NamedTuple):
    """A MEMORY.md preference with ``<!-- trigger: … -->`` phrases and a message recalling it."""

    triggers: str
    entry: str
    message: str


TRIGGERS = tuple(
    Trigger(*row)
    for row in parse_table(
        """
dentist appointment, teeth cleaning | Dr. Moreau's clinic on Harbor Street; book through their app, never Mondays | I need a dentist appointment before the trip
expense report | Receipts go to finance as one PDF per month, cost centre 4410 | How do I file my expense report for March?
flight booking; book a flight | Aisle seat, no red-eyes, carry-on only; loyalty number is on the travel profile | Please handle the flight booking for the Lisbon offsite
car service | The hatchback goes to the garage on Mill Road every 15,000 km; winter tyres in October | Remind me when the car service is due
tax return | Accountant is Ingrid Holm; she needs the annual statements by 15 March | Let's start on the tax return this weekend
birthday gift | Mum likes botanical prints and dark chocolate; never scented candles | Any ideas for a birthday gift for my mother?
gym session, workout | Physio says no running on concrete; rowing and cycling are fine for the knee | Plan a gym session for tomorrow morning
grocery order | Oat milk, not soy; the household buys in bulk on Sundays from the co-op | Put together the grocery order for this week
vpn, remote access | Use the WireGuard profile on the laptop; the old OpenVPN config is revoked | The vpn won't connect from the hotel
printer | The office one needs the IPP driver; scans go to the shared drive | Why is the printer refusing my job?
password reset | Resets only through the hardware-key account, never over chat | Can you do a password reset for me?
water the plants, plant watering | Fern twice a week, cactus once a month, the olive tree only when the soil is dry | Can you water the plants while I'm away?
wine pairing | Partner avoids sulfites and prefers natural reds from the Loire | Suggest a wine pairing for Friday's dinner
audiobook suggestion | Prefers narrated history under ten hours; no true crime | Any audiobook suggestion for the long drive?
hotel booking | Quiet room away from the lift, breakfast included, loyalty tier with the Nordic chain | Sort out the hotel booking for Berlin
school pickup | 15:10 by the side gate; the gate code is on the fridge note | Who's doing school pickup today?
parking permit | Residents' zone B, renewed online each January with the car registration | The parking permit expired, what now?
coffee order | Flat white, extra shot, no sugar, from the kiosk by the station | Grab me a coffee order on the way in
backup drive | The external disk is encrypted; its recovery phrase is in the fireproof box | Where did I put the backup drive?
team lunch | Two vegetarians and one coeliac; the Thai place on 5th handles both | Book somewhere for the team lunch on Thursday
conference talk | Slides template in the brand folder; talks are capped at 25 minutes | Help me prepare the conference talk outline
insurance claim | Policy number is on the renewal letter; claims need photos within 14 days | I have to make an insurance claim for the bike
""",
        3,
    )
)


class LongAttr(NamedTuple):
    """A durable personal fact (``note``), a recent transient note on the same topic."""

    note: str
    transient: str
    query: str
    values: tuple[str, ...]


LONG_ATTRS = tuple(
    LongAttr(n, t, q, tuple(v.strip() for v in vals.split(";")))
    for n, t, q, vals in parse_table(
        """
{P}'s blood type is {v} | {P} donated blood at the office drive this morning | What is {P}'s blood type? | A positive; O negative; B positive; AB negative
{P}'s home airport is {v} | {P} is flying out of {w} this week for the offsite | Which airport is {P}'s home airport? | Lisbon Humberto Delgado; Oslo Gardermoen; Porto Francisco Sa Carneiro; Dublin Airport; Vienna Schwechat
{P} wears shoe size {v} | {P} is breaking in new hiking shoes this week | What shoe size does {P} wear? | EU 38; EU 41; EU 43; EU 45
{P} is allergic to {v} | {P} had an allergy flare-up from the pollen today | What is {P} allergic to? | peanuts; shellfish; penicillin; sesame; kiwi
{P}'s partner is called {v} | {P} left early to pick up their partner from the station | What is the name of {P}'s partner? | Robin; Sasha; Jordan; Kim; Morgan
{P}'s first language is {v} | {P} started an evening class in {w} this month | What is {P}'s first language? | Portuguese; Finnish; Tamil; Polish; Swahili; Korean
""",
        4,
    )
)

# Background of the old daily logs (never asked about).
OLD_FILLER = (
    "Quiet day, mostly inbox and reading",
    "Moved the standing desk to the window",
    "Cleared out the downloads folder",
    "Long walk at lunch, back by two",
)
