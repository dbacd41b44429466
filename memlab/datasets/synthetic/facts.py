"""Wording of the facts that synthetic questions ask about, one block per category.

Each block pairs the note that states a fact with the question that asks for it
(paraphrase units, successive values of an updated fact, sibling attributes of a
person, redundant topic facts, the two halves of a multi-hop fact, Chinese facts).
None of these words appear in the filler of ``memlab.datasets.synthetic.lexicon``,
so a question's evidence spans are the only lines that answer it.

In paraphrase templates ``{0}``, ``{1}``... are paraphrase units and ``{v}`` the
value; other slots are as in ``lexicon``.
"""

from __future__ import annotations

from typing import NamedTuple

from memlab.datasets.synthetic.lexicon import parse_table

__all__ = [
    "CJK_FACTS",
    "COPY_WRAPPERS",
    "FAMILIES",
    "INITIATIVES",
    "MAX_DISTRACTORS",
    "MAX_UPDATE_VERSIONS",
    "OUTAGE_CAUSES",
    "PARAPHRASES",
    "PURPOSES",
    "REDUNDANCY_QUERY",
    "REDUNDANCY_TOPICS",
    "UPDATE_ATTRS",
    "VACATION_ENDS",
    "Family",
    "Paraphrase",
    "UpdateAttr",
]


# --- paraphrase ---------------------------------------------------------------------------


class Paraphrase(NamedTuple):
    """A fact and a question about it, with aligned (note wording, query wording) units.

    ``note`` and ``query`` use ``{0}``, ``{1}``... for units and ``{v}`` for the
    value (``note`` only). Fully paraphrased, the query shares no content word
    (nor word stem) with the note; unswapped units reuse the note's wording.
    """

    note: str
    query: str
    units: tuple[tuple[str, str], ...]
    values: tuple[str, ...]
    section: str  # MEMORY.md section


# MEMORY.md section | note | query | note word=query word;... | value;value;...
PARAPHRASES = tuple(
    Paraphrase(
        note,
        query,
        tuple((u.split("=")[0], u.split("=")[1]) for u in units.split(";")),
        tuple(values.split(";")),
        section,
    )
    for section, note, query, units, values in parse_table(
        """
Infrastructure | {0} {1} lives {v} | where is the {0} serving as our {1} | Mac Studio=Apple desktop;gateway host=agent hub | in the hallway closet;under the standing desk;on the garage shelf;in the basement rack
Decisions | Agreed on a {0} {1} {v} | how long is the {0} {1} | deploy=release;freeze=pause | until the 14th;through quarter close;until Friday noon;for the whole conference week
Preferences | {0} {1}: {v} | what {0} {1} do I usually get | Coffee=caffeine;order=drink | oat flat white;double espresso, no sugar;iced americano;cortado
Preferences | {0} {1} booked {v} | when is my {0} {1} | Dentist=teeth;appointment=checkup | for Tuesday 3 pm;on the 22nd at 10:00;for next Monday morning
Infrastructure | {0} {1} {2} is {v} | what is the {0} {1} {2} | Guest=visitor;wifi=wireless network;password=passphrase | maple-otter-42;blue-heron-17;copper-fox-88
People | {0}'s {1} is {v} | when was my {0} {1} | Mom=mother;birthday=born | on 12 May;on 3 September;on 28 February
Preferences | {0} {1} to {v} | what food gives me a {0} {1} | Severe=serious;allergy=reaction | peanuts;shellfish;sesame
Preferences | {0} {1} should be written in {v} | what language do {0} {1} use | Slack=chat;replies=responses | plain English, no emoji;Spanish;German with formal address
Infrastructure | Team {0} {1}: {v} | where do we {1} shared {0} | secrets=passwords;vault=store | 1Password Business;Bitwarden self-hosted;HashiCorp Vault on the NAS
Infrastructure | {0} {1} run {v} | when do the {0} {1} happen | Nightly=overnight;backups=snapshots | at 02:30 to Backblaze B2;at 03:00 to the Synology;at 01:15 to rsync.net
Preferences | {0} {1} is due {v} | when does the {0} need {1} | Car=vehicle;service=maintenance | in April;after 15,000 km;on the 9th
People | {0} {1}: {v} | how do I {1} the {0} | Landlord=apartment owner;contact=reach | Mr. Achebe, +44 7700 900123;Ms. Halvorsen via the tenant portal;Jan Vos, text only
Preferences | No {0} before {v} | earliest time I accept {0} | meetings=calls | 10:00;11 am;noon
Preferences | {0} {1} from {v} | what hours should I {0} {1} | Mute=silence;notifications=alerts | 22:00 to 07:00;midnight to 8 am;21:30 to 06:30
Preferences | {0} {1} are {v} | when are the {0} {1} | Swim=pool;lessons=classes | Saturday 9:00 at the Aquadome;Tuesdays after school;Sunday mornings
Preferences | {0} {1} lives in {v} | which app has my {0} {1} | Work=job;calendar=schedule | Google Calendar;Fantastical;Outlook
Infrastructure | {0} {1} page is {v} | how do I reach the {0} {1} console | NAS=network storage;admin=management | 192.168.1.20:5000;nas.lan:5001;https://synology.lan
Infrastructure | Home {0} is {v} | which {0} does the house use | DNS=name resolver | Pi-hole on 192.168.1.3;NextDNS profile 4a1b2c;AdGuard on the router
Infrastructure | {0} {1} runs on {v} | where is the {0} {1} | VPN=private tunnel;exit node=egress point | the Hetzner box in Falkenstein;the Raspberry Pi at home;a Linode in Frankfurt
Infrastructure | {0} {1} renewal is due {v} | when must we extend the {0} {1} | Domain=website;registration=name lease | in October;on 2 March;before the summer
Infrastructure | {0} {1} renew {v} | how do the {0} {1} get refreshed | TLS=https;certificates=certs | via certbot every 60 days;through Caddy automatically;by hand each quarter
Infrastructure | {0} {1} has {v} | what {0} is in the {1} | GPU=graphics card;workstation=tower | an RTX 4090 with 24 GB;two RTX 3090s;a Radeon 7900 XTX
Infrastructure | {0} {1} go to {v} | where are {0} {1} sent | Uptime=availability;alerts=warnings | the #ops-pager channel;PagerDuty;Matt's phone via Pushover
Preferences | {0} {1} is {v} | what is the {0} {1} | Kids=children's;bedtime=sleep time | 19:30 on school nights;8 pm sharp;20:15 after a story
Infrastructure | {0} {1} kept for {v} | how long do we keep {0} {1} | Database=db;dumps=exports | 30 days;two weeks;six months
People | {0}: {v} | who is my {0} | Accountant=tax advisor | Helen Marsh at Marsh & Co;Tomás Ruiz;Maren Sølvberg
People | {0} {1}: {v} | who is our {0} {1} | Family=household;doctor=physician | Dr. Selma Kraus;Dr. Otto Brandt;Dr. Lucía Marín
People | Go-to {0}: {v} | who is our usual {0} | babysitter=child minder | Hannah from next door;Mia Schulz;Grandma on Wednesdays
People | {0} {1}: {v} | who is my {0} {1} | Line=direct;manager=supervisor | Rachel Kim;Yara Nassar;Gideon Blum
People | {0} we trust: {v} | who do we call about {0} | Plumber=leaking pipes | Bauer & Sons;Nico Ferrante;QuickFix 24h
Preferences | {0} comes {v} | when does the {0} visit | Cleaner=housekeeper | on Tuesday mornings;every other Thursday;Fridays after 14:00
Preferences | {0} {1} arrives {v} | when does the {0} {1} show up | Grocery=supermarket;delivery=order | Saturdays before 10:00;on alternate Mondays;every Thursday evening
Decisions | Picked {v} as the {0} {1} | what is our {0} {1} | primary=main;datastore=database | SQLite with Litestream;MySQL 8;CockroachDB
Decisions | {0} {1} moved to {v} | where is the {0} {1} hosted | Marketing=promo;site=website | Cloudflare Pages;Netlify;a Hetzner VPS
Decisions | {0} {1} capped at {v} | what is the maximum {0} {1} | Cloud=hosting;spend=budget | $400 a month;2k EUR per quarter;$90 per week
People | {0} {1} is with {v} | who holds a {0} to the front {1} | Spare=duplicate;key=door | Bruno Salas;the neighbours at number 12;Keiko Abe
Decisions | {0} {1} go in {v} | where do we keep {1} in each {0} | Meeting=call;minutes=what was said | the team Notion;the wiki under /rituals;Confluence
Decisions | {0} {1} moved to {v} | which {1} holds {0} reports | Bug=defect;tracker=ticket system | Linear;GitHub Issues;Jira Cloud
Infrastructure | {0} {1} runs on {v} | where do our {0} {1} execute | CI=continuous integration;pipeline=jobs | GitHub Actions;Buildkite agents on the NAS;a self-hosted Woodpecker
People | {0} {1}: {v} | which {1} sees the {0} | Dog=puppy;vet=animal clinic | Dr. Patel at Riverside;Greenway Veterinary;Dr. Moll in the old town
Preferences | {0} {1}: {v} | where is my {0} {1} | Gym=workout;membership=subscription | Anytime Fitness on Elm St;the bouldering hall;the YMCA downtown
Preferences | {0} {1} number: {v} | what is my {0} {1} policy | Health=medical;insurance=coverage | AXA 55-1029;TK 88231;Bupa 7734-A
Preferences | {0} {1} due {v} | deadline for the {0} {1} | Tax=yearly income;return=filing | on 31 July;by 15 April;end of May
Decisions | {0} {1} is {v} | where is the {0} {1} | Team=group;offsite=retreat | at a lake house in May;in a mountain lodge in June;at a seaside hotel in September
Decisions | {0} {1} goes out {v} | when do we send the {0} {1} | Customer=client;newsletter=email bulletin | on the first Tuesday of the month;every other Friday;on the 15th
Decisions | {0} {1}: {v} | what is our {0} {1} | Support=help desk;SLA=response target | first reply within 4 business hours;reply the same working day;reply within 2 h to P1s
Preferences | {0} {1} is {v} | which {0} {1} is mine | Parking=garage;spot=bay | level 2, space 114;P3 near the lifts;spot 27 by the ramp
Infrastructure | {0} {1}: {v} | what is the {0} {1} | Office=workplace;door code=entry PIN | 4821#;0917*;2364 then the bell
Preferences | {0} is paid {v} | when does the {0} go out | Rent=apartment payment | on the 1st by standing order;on the 28th;every fourth week
Preferences | {0} {1} {v} | when is my {0} {1} | Passport=travel ID;expires=no longer valid | in March 2027;on 4 Nov 2026;next January
Preferences | {0} {1} meets {v} | when does the {0} {1} get together | Book=reading;club=circle | last Thursday of the month;every second Sunday;on Wednesdays at 19:00
Infrastructure | {0} {1}: {v} | who is our {0} {1} | Electricity=power;provider=utility company | Octopus Energy;Vattenfall;EDF
Infrastructure | {0} {1} is {v} | what {0} {1} do we have | Fiber=broadband;plan=contract | 1 Gbit with Init7;500 Mbit from Vodafone;300 Mbit via Telekom
Infrastructure | {0} {1} is {v} | what is the {0} {1} | OpenAI=LLM vendor;rate limit=request quota | 500 RPM on tier 3;10k TPM;60 RPM for the free key
Decisions | {0} {1} go to {v} | where do we {1} {0} | Incident=outages;updates=announce | #incidents;#ops-war-room;the status page
People | {0} {1}: {v} | when is our {0} {1} | Wedding=marriage;anniversary=yearly celebration | 18 August;2 June;30 September
""",
        5,
    )
)

# --- update: one template, successive values ------------------------------------------------


class UpdateAttr(NamedTuple):
    """A fact that changes: every version uses ``note`` with a new ``{v}``."""

    entity: str  # "person" | "project"
    note: str
    query: str
    values: tuple[str, ...]


# entity | note | query | values in no particular order
UPDATE_ATTRS = tuple(
    UpdateAttr(entity, note, query, tuple(values.split(";")))
    for entity, note, query, values in parse_table(
        """
person | {P} prefers to be pinged on {v} | Where does {P} prefer to be pinged? | Slack;Signal;email;Telegram;WhatsApp;Matrix;Discord;SMS
person | {P} set their working hours to {v} | What are {P}'s working hours? | 08:00-16:00;09:00-17:00;10:00-18:00;07:30-15:30;11:00-19:00;12:00-20:00;09:30-17:30;08:30-16:30
person | {P}'s preferred code editor is now {v} | Which code editor does {P} prefer? | VS Code;Neovim;Zed;Cursor;Helix;Emacs;Sublime Text;IntelliJ
person | {P} wants daily summaries written by {v} | Which model should write {P}'s daily summaries? | claude-sonnet-4;gpt-5-mini;gemini-2.5-flash;llama-3.3-70b;qwen3-32b;mistral-large;claude-haiku-4;gpt-4.1
project | Default branch for {project} is now `{v}` | What is the default branch for {project}? | main;trunk;develop;stable;next;master;dev;mainline
project | {project} release train now leaves every {v} | How often does the {project} release train leave? | Monday;Tuesday;Wednesday;Thursday;Friday;other Monday;other Wednesday;other Friday
project | {project} Node version pinned to {v} | Which Node version is {project} pinned to? | 18.19;20.11;20.17;22.3;22.11;22.14;23.1;24.0
project | {project} error budget set to {v} | What is the {project} error budget? | 99.0%;99.5%;99.9%;99.95%;98.5%;99.7%;99.8%;99.99%
""",
        4,
    )
)
MAX_UPDATE_VERSIONS = min(len(a.values) for a in UPDATE_ATTRS)

# --- distractor: same person, sibling attributes ----------------------------------------------


class Family(NamedTuple):
    """Sibling attributes of one person, all stated with ``note``."""

    note: str  # slots {P}, {attr}, {v}
    query: str  # slots {P}, {attr}
    attrs: tuple[tuple[str, tuple[str, ...]], ...]


_FAMILY_FORMS = (
    ("{P}'s {attr} is a {v}", "What {attr} does {P} use?"),
    ("{P}'s favourite {attr} is {v}", "What is {P}'s favourite {attr}?"),
    ("{P}'s {attr}: {v}", "What is {P}'s {attr}?"),
)
# family (index into _FAMILY_FORMS) | attribute | values ({slug} = first name, lower case)
_FAMILY_ROWS = parse_table(
    """
0 | laptop | ThinkPad X1 Carbon;MacBook Air M3;Framework 13;Dell XPS 13
0 | phone | Pixel 8;iPhone 15;Galaxy S24;Fairphone 5
0 | monitor | LG UltraFine 5K;Dell U2723QE;Studio Display;BenQ PD2705U
0 | keyboard | Keychron Q1;HHKB Hybrid;ZSA Moonlander;Magic Keyboard
0 | headset | Jabra Evolve2 65;Sony WH-1000XM5;Bose QC45;AirPods Max
0 | tablet | iPad Air;reMarkable 2;Kindle Scribe;Galaxy Tab S9
1 | snack | salted almonds;dark chocolate;rice crackers;dried mango
1 | lunch spot | the ramen bar;Café Nord;the falafel cart;Luigi's
1 | tea | sencha;rooibos;Earl Grey;masala chai
1 | pizza topping | mushrooms;anchovies;pineapple;nduja
1 | dessert | tiramisu;pastel de nata;cheesecake;baklava
1 | board game | Wingspan;Catan;Azul;Codenames
2 | GitHub handle | @{slug};@{slug}-dev;@{slug}42;@the-{slug}
2 | timezone | Europe/Berlin;America/Chicago;Asia/Tokyo;Europe/Lisbon
2 | desk | desk 4B;desk 2A by the window;hot desk zone C;desk 7F
2 | badge number | B-1042;B-2210;B-3307;B-0815
2 | shirt size | S;M;L;XL
2 | cost centre | CC-410;CC-225;CC-318;CC-502
""",
    3,
)
FAMILIES = tuple(
    Family(
        note,
        query,
        tuple((a, tuple(v.split(";"))) for f, a, v in _FAMILY_ROWS if int(f) == i),
    )
    for i, (note, query) in enumerate(_FAMILY_FORMS)
)
MAX_DISTRACTORS = min(len(f.attrs) for f in FAMILIES) - 1

# --- redundancy: one topic, three distinct facts, the first repeated ---------------------------

# topic | fact repeated across days | second fact | third fact
REDUNDANCY_TOPICS = tuple(
    (topic, tuple(f"{{project}} {topic}: {fact}" for fact in facts))
    for topic, *facts in parse_table(
        """
launch | beta opens to internal users first | press embargo lifts at 09:00 CET | {F} writes the announcement post
data migration | dual writes are on, reads still hit the old cluster | cutover window is Sunday 02:00-04:00 | rollback means flipping the read flag back
security audit | auditors get read-only staging access | final report due at month end | {F} is the point of contact
pricing change | existing customers keep the old plan for a year | new tiers go live on the 1st | finance signed off on the discount caps
hiring | we need one senior backend engineer | interviews run Tuesdays and Thursdays | {F} screens the take-home tasks
API deprecation | v1 endpoints now send a Sunset header | v1 shuts off after 90 days | SDK 3.0 drops v1 support
mobile app | TestFlight build goes to 50 testers | Play Store review takes about 3 days | crash reports flow into Sentry
docs revamp | moving from Docusaurus to Starlight | every page gets a last-reviewed date | {F} owns the style guide
""",
        4,
    )
)
REDUNDANCY_QUERY = "What do we know about the {project} {topic}?"
# Near-verbatim wrappers for the repeated fact (copy 0 is the plain note).
COPY_WRAPPERS = (
    "{}",
    "Reminder: {}",
    "{} (unchanged)",
    "Still true: {}",
    "{} (again)",
    "Recap: {}",
    "{} (as before)",
    "Note: {}",
)

# --- multi: two facts in two files ------------------------------------------------------------

INITIATIVES = (
    "SSO rollout",
    "dark mode",
    "CSV export",
    "audit log",
    "offline sync",
    "usage dashboard",
    "webhook retries",
    "billing revamp",
)
PURPOSES = ("sending receipts", "search", "image uploads", "login", "reporting", "invoicing")
OUTAGE_CAUSES = (
    "an expired TLS certificate",
    "a full disk on the primary",
    "a bad config push",
    "a DNS misconfiguration",
    "a memory leak after the upgrade",
    "a runaway cron job",
)
VACATION_ENDS = ("the 3rd", "the 10th", "the 17th", "the 24th", "next Tuesday", "month end")

# --- cjk ---------------------------------------------------------------------------------

# note | question | values
CJK_FACTS = tuple(
    (note, query, tuple(values.split(";")))
    for note, query, values in parse_table(
        """
{p}的生日是{v} | {p}的生日是哪天？ | 三月十二日;五月八日;十月三日;七月二十日
{p}最喜欢的菜是{v} | {p}最喜欢吃什么菜？ | 麻婆豆腐;红烧肉;宫保鸡丁;酸菜鱼
{p}负责{v}项目 | {p}负责哪个项目？ | 支付;搜索;推荐;客服
{p}的工位在{v} | {p}坐在哪里？ | 三楼东区;五楼靠窗;二楼会议室旁;六楼西侧
{p}对{v}过敏 | {p}对什么过敏？ | 花生;海鲜;芒果;牛奶
{p}的老家在{v} | {p}是哪里人？ | 成都;杭州;西安;长沙
{p}每周{v}去健身房 | {p}哪天健身？ | 一和三;二和四;三和五;六
{p}的猫叫{v} | {p}的猫叫什么名字？ | 团子;豆豆;橘子;小黑
{p}平时喝{v} | {p}平时喝什么？ | 乌龙茶;美式咖啡;豆浆;普洱
{p}下个月去{v}开会 | {p}下个月去哪里开会？ | 上海;深圳;北京;广州
""",
        3,
    )
)
