"""Wording of a synthetic workspace's background: entities, opaque tokens, filler, layout.

Pure data plus four helpers (``content_words``, ``content_terms``, ``stem``, ``parse_table``);
``stem`` and ``content_words`` are also the one rule of a query's content terms wherever
memlab measures word overlap (``memlab.eval.stats``). The
generator (``memlab.datasets.synthetic``) draws from these with a seeded RNG; the
facts that questions ask about are worded in ``memlab.datasets.synthetic.facts``.
Vocabularies are kept disjoint on purpose: filler notes never state a fact that a
question asks about (no devices, favourites, owners, defaults, launches ...), so the
evidence spans of a question are the only lines that answer it.

Template slots: ``{v}`` is the answer value, ``{P}`` a full name, ``{F}`` a
first name, ``{project}``, ``{svc}``, ``{component}``... are entities, ``{tok}``
an opaque token.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "CJK_FILLER",
    "CJK_GIVEN",
    "CJK_PROJECTS",
    "CJK_SURNAMES",
    "COMPONENTS",
    "CONFIG_GROUP",
    "CONFIG_LEAF",
    "CONFIG_NS",
    "CONFIG_VALUES",
    "DAILY_SECTIONS",
    "ENV_A",
    "ENV_B",
    "ERRORS",
    "FILLER",
    "FILLER_SECTION_WEIGHTS",
    "FIRST_NAMES",
    "HOSTNAMES",
    "ID_SHARE_OF_LOG",
    "ID_TEMPLATES",
    "LAST_NAMES",
    "LUNCH_TOPICS",
    "MEMORY_SECTIONS",
    "MEMORY_STATIC",
    "PROJECTS",
    "PROJECT_BLURBS",
    "REGIONS",
    "ROLES",
    "SERVICES",
    "STOPWORDS",
    "SYMBOL_NOUNS",
    "SYMBOL_VERBS",
    "TICKET_KEYS",
    "VENDORS",
    "WEEKDAYS",
    "IdTemplate",
    "content_terms",
    "content_words",
    "parse_table",
    "stem",
]


# Function words and question words; everything else counts as a content word
# when the paraphrase strength is measured.
STOPWORDS = frozenset(
    """
    a about after again all also am an and any are as at be been before being but by can
    could d did do does doing done during each for from get gets got had has have having he
    her here hers him his how i if in into is it its just ll m may me might mine more most
    my no nor not now of off on once one only or other our ours out over own re s same she
    should so some still such t than that the their theirs them then there these they this
    those through to too under until up us ve very was we were what when where which while
    who whom whose why will with would you your yours
    """.split()
)

_WORD = re.compile(r"[a-z0-9]+")
_WORD_CASED = re.compile(r"[A-Za-z0-9]+")


def stem(word: str) -> str:
    """Crude suffix stripping (``ies``→``y``, then ``ing``/``ed``/``es``/``s``/``er``).

    Only used to check that a fully paraphrased query shares no word stem with
    its note (so a Porter-stemming BM25 cannot match it either). Words of four
    letters or fewer are returned unchanged.
    """
    if len(word) <= 4:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str, stems: bool = False) -> set[str]:
    """Lower-cased ``[a-z0-9]+`` runs of ``text`` that are not in ``STOPWORDS``.

    With ``stems=True`` each word is reduced by ``stem``. Empty text → empty set.
    """
    words = {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}
    return {stem(w) for w in words} if stems else words


def content_terms(text: str) -> list[str]:
    """The content words of ``text`` in order, as written: each ``[A-Za-z0-9]+`` run whose
    lower case is not in ``STOPWORDS``, the first of each (case-insensitive) kept. Their
    lower cases are ``content_words(text)``."""
    out: dict[str, str] = {}
    for w in _WORD_CASED.findall(text):
        if w.lower() not in STOPWORDS:
            out.setdefault(w.lower(), w)
    return list(out.values())


# --- entities -------------------------------------------------------------------------

FIRST_NAMES = (
    "Priya Marco Lena Tomasz Aisha Jonas Mei Diego Sofia Kwame Hana Oskar Ines Ravi Nadia "
    "Felix Yuki Amara Lucas Elif Mateo Zara Anton Leila Theo Noor Viktor Chloe Omar Greta "
    "Samir Ingrid Kenji Beatriz Malik Freya Arjun Clara Emeka Sanna"
).split()
LAST_NAMES = (
    "Natarajan Rossi Fischer Kowalski Bello Berg Lin Alvarez Conti Mensah Sato Lindqvist "
    "Moreau Iyer Haddad Wagner Tanaka Osei Ferreira Yilmaz Herrera Qureshi Novak Farah "
    "Laurent Aziz Petrov Dubois Khalil Svensson Rahman Holm Mori Costa Adeyemi Nilsen "
    "Kapoor Weber Okafor Virtanen"
).split()
PROJECTS = (
    "Atlas Borealis Cobalt Dynamo Ember Falcon Garnet Helix Indigo Juniper Kestrel Lumen "
    "Meridian Nimbus Onyx Pioneer Quartz Raven Sierra Tundra Umbra Vega Willow Xenon Yarrow "
    "Zephyr Aurora Basalt Cinder Delta Echo Fjord Glacier Harbor Iris Jasper Kodiak Lotus "
    "Mistral Nova"
).split()
SERVICES = (
    "ledger notifier search-indexer thumbnailer auth-proxy billing-sync mailer "
    "feature-flags audit-trail geo-lookup rate-limiter pdf-renderer webhook-relay "
    "session-store image-cache metrics-gateway scheduler-api export-worker invoice-api "
    "profile-api chat-bridge sms-sender link-shortener translation-api recommender "
    "payments-api inventory-sync report-builder push-service media-transcoder "
    "consent-manager tax-calculator address-validator queue-router blob-janitor "
    "license-server usage-meter backup-agent cdn-purger"
).split()
COMPONENTS = (
    "gateway",
    "indexer",
    "embedder",
    "scheduler",
    "webhook worker",
    "sync daemon",
    "CLI",
    "settings page",
    "importer",
    "chunker",
    "cron runner",
    "plugin loader",
)
VENDORS = ("Stripe", "Twilio", "Fastly", "Sentry", "Grafana Cloud", "Zendesk", "Figma", "Vercel")
REGIONS = (
    "eu-west-1",
    "eu-central-1",
    "eu-north-1",
    "us-east-2",
    "us-west-2",
    "ap-southeast-1",
    "ap-northeast-1",
    "ca-central-1",
    "sa-east-1",
    "me-central-1",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
HOSTNAMES = ("ci-runner-1", "ci-runner-2", "build-box", "nas-01", "edge-2", "pi-kitchen")
LUNCH_TOPICS = ("climbing", "sci-fi books", "the city marathon", "board games", "podcasts")

# --- exact tokens ------------------------------------------------------------------------

TICKET_KEYS = ("OPS", "MEM", "GW", "WEB", "INFRA", "DATA", "SEC", "BILL", "PLAT", "APP")
ENV_A = (
    "STATE LOG CACHE GATEWAY MEMORY EMBED INDEX SYNC PLUGIN SESSION WORKSPACE AGENT "
    "PROXY TRACE QUEUE BACKUP VECTOR SEARCH TOOL MODEL"
).split()
ENV_B = "DIR LEVEL TTL PORT HOST PATH TOKEN LIMIT MODE URL TIMEOUT SIZE FLAGS REGION SEED".split()
CONFIG_NS = ("memorySearch", "gateway", "agents", "plugins")
CONFIG_GROUP = ("query", "store", "sync", "cache", "remote", "chunking", "hybrid", "fallback")
CONFIG_LEAF = (
    "enabled maxEntries intervalMinutes watchDebounceMs baseUrl vectorWeight textWeight "
    "candidateMultiplier halfLifeDays lambda tokenizer overlap"
).split()
CONFIG_VALUES = ("true", "false", "0", "1", "4", "30", "0.5", "0.7", "1500", '"trigram"')
SYMBOL_VERBS = "build parse resolve flush merge rank fetch encode split hydrate score prune".split()
SYMBOL_NOUNS = (
    "Chunks Index Snippet Embeddings Session Config Workspace Citations Candidates Batch "
    "Watcher Manifest Fingerprint Provider Vectors Results"
).split()
ERRORS = (
    "sqlite-vec unavailable",
    "database is locked",
    "ECONNRESET on /v1/embeddings",
    "fts5: syntax error near AND",
    "no such module: vec0",
    "embedding dimension mismatch",
    "lockfile held by pid",
    "ENOSPC while writing index",
    "token budget exceeded",
    "unexpected end of JSON input",
    "TLS handshake timeout",
    "rate limit exceeded (429)",
    "worker exited with code 137",
    "invalid UTF-8 in memory file",
    "snapshot checksum mismatch",
    "watcher limit reached (inotify)",
    "cannot open shared object file",
    "request body too large",
    "socket hang up",
    "certificate has expired",
    "out of memory in tokenizer",
    "duplicate chunk id",
    "permission denied on MEMORY.md",
    "stale provider key",
)


class IdTemplate(NamedTuple):
    """A log line holding an opaque token; ``query`` only uses words of ``line``."""

    kind: str  # commit | ticket | env | config | symbol | error
    line: str
    query: str


def parse_table(text: str, cols: int) -> list[list[str]]:
    """Rows of a ``" | "``-separated table: one row per non-blank line, cells stripped.

    Raises ``ValueError`` (showing the first two bad rows) unless every row has ``cols``
    cells. A cell may not contain ``" | "``; leading/trailing blank lines are ignored.
    """
    rows = [[c.strip() for c in line.split(" | ")] for line in text.strip().splitlines()]
    bad = [r for r in rows if len(r) != cols]
    if bad:
        raise ValueError(f"lexicon table rows need {cols} columns: {bad[:2]}")
    return rows


# Shared by filler and by "exact" questions, so the evidence line has dozens of
# near-identical neighbours that differ only in the token. kind | line | query
ID_TEMPLATES = tuple(
    IdTemplate(*row)
    for row in parse_table(
        """
commit | Reverted commit {tok} on main; it broke the {component} reconnect | reverted commit {tok}
commit | Merged PR #{pr} as {tok} into main after review by {F} | merged {tok} into main
commit | Bisected the {component} regression to commit {tok} | regression commit {tok}
commit | Cherry-picked {tok} onto the release branch of {project} | cherry-picked {tok}
ticket | Filed {tok}: {component} drops events after sleep | filed {tok}
ticket | {tok} closed by {F}; the fix ships with the next build | {tok} closed
ticket | Blocked on {tok} until {F} reviews the {component} patch | blocked on {tok}
env | Set {tok}={n} on {host} for the {component} | set {tok}
env | {tok} was unset after the reboot of {host} | {tok} unset after reboot
config | Changed `{tok}` to {cfg} in openclaw.json | changed `{tok}`
config | `{tok}` is ignored when the {component} starts in safe mode | `{tok}` ignored
symbol | Profiled `{tok}()`: {n} ms per call in the {component} | profiled `{tok}`
symbol | Renamed `{tok}()` during the {component} refactor | renamed `{tok}`
error | Gateway log at {time}: "{tok}" ({n} times) | gateway log "{tok}"
error | The {component} crashed with "{tok}" after the upgrade | crashed with "{tok}"
""",
        3,
    )
)

# --- filler ------------------------------------------------------------------------------

# Section of a daily log → templates. Background noise only: no fact here is
# ever asked about. "Log" lines additionally come from ID_TEMPLATES.
FILLER = {
    "Meetings": (
        "{time} standup: {project} is on track, {F} demoed the {component} changes",
        "{time} sync with {P} about {project} scope; next check-in {weekday}",
        "{time} sprint planning for {project}: {n} stories pulled in",
        "{time} retro: too many interrupts, {F} will batch review requests",
        "{time} call with {vendor} support about invoice {n}; waiting on a reply",
        "{time} pairing with {F} on the {component} tests",
        "{time} design review for {project}: {F} to revise the {component} diagram",
        "{time} quick chat with {F} about flaky tests in {repo}",
    ),
    "Todos": (
        "[ ] Review {F}'s PR #{pr} for {project}",
        "[ ] Follow up with {P} about the {project} estimate",
        "[x] Reply to {F} about the {weekday} demo",
        "[ ] Update the {project} README with the new setup steps",
        "[x] Rotate the {vendor} API token",
        "[ ] Book a room for the {project} review on {weekday}",
        "[ ] Clean up stale branches in {repo}",
        "[x] Send {F} the summary of the {project} sync",
    ),
    "Decisions": (
        "Hold the {project} demo until the {component} fix lands",
        "{F} takes over {project} triage for the rest of the week",
        "Skip the {weekday} sync; async update in the channel instead",
        "Keep {repo} on weekly dependency bumps",
        "Split the {component} work into two PRs to keep reviews small",
    ),
    "Notes": (
        "{F} mentioned the {component} dashboard is slow again",
        "{project} sprint velocity: {n} points",
        "Read the {vendor} changelog; nothing that affects {project}",
        "{F} is travelling on {weekday}, reachable on chat",
        "Lunch with {F}; talked about {topic}",
        "{project} retro action items are in the shared doc",
    ),
    "Log": (
        "`pnpm test` in {repo}: {n} passed, {m} skipped ({s}s)",
        "`openclaw memory status`: {n} files, {m} chunks indexed",
        "`git pull` in {repo} fast-forwarded {m} commits",
        "`openclaw doctor` reported {m} warnings for the {component}",
    ),
}
FILLER_SECTION_WEIGHTS = {"Meetings": 2, "Todos": 2, "Decisions": 1, "Notes": 2, "Log": 5}
ID_SHARE_OF_LOG = 0.7  # share of "Log" filler lines that come from ID_TEMPLATES
DAILY_SECTIONS = ("Meetings", "Decisions", "Todos", "Notes", "Log")
MEMORY_SECTIONS = ("Preferences", "People", "Projects", "Infrastructure", "Decisions")
MEMORY_STATIC = {
    "Preferences": (
        "Use metric units and 24-hour times",
        "Dates in ISO format (YYYY-MM-DD)",
        "Ask before sending anything on my behalf",
    ),
    "Infrastructure": (
        "Workspace is a git repo; commit memory changes daily",
        "Home network uses the 192.168.1.0/24 range",
    ),
    "Decisions": (
        "Write durable facts here; daily detail goes to memory/",
        "Prefer boring technology for internal tools",
    ),
}
ROLES = ("backend", "frontend", "design", "product", "QA", "infra", "data")
PROJECT_BLURBS = (
    "internal analytics app",
    "customer billing portal",
    "mobile companion app",
    "docs site",
    "partner API",
    "ops tooling",
    "onboarding flow",
)

# --- cjk names and filler ----------------------------------------------------------------
CJK_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗"
CJK_GIVEN = (
    "伟",
    "芳",
    "娜",
    "敏",
    "静",
    "磊",
    "洋",
    "勇",
    "艳",
    "杰",
    "涛",
    "明",
    "超",
    "霞",
    "平",
    "刚",
    "婷",
    "欣",
    "浩",
    "宇",
)
CJK_PROJECTS = ("支付系统", "搜索服务", "推荐引擎", "客服平台", "数据看板")
CJK_FILLER = (
    "和{p}开会，讨论了{proj}的排期",
    "待办：提醒{p}更新周报",
    "{p}提交了{proj}的修复补丁",
    "下午和{p}对了一下{proj}的需求",
    "{p}今天请假，{proj}的评审推迟到明天",
    "记录：{proj}的测试环境又挂了，{p}在查",
)
