"""Write ``datasets/example-agent/``: a small hand-written OpenClaw agent, workspace and
session transcripts, to harvest (``memlab harvest``) and to judge presets on.

Everything here is hand-written: the memory files (``FILES``, with the earlier versions
the agent saw in ``BEFORE``) and ten sessions (``SESSIONS``: the user's messages, the
agent's ``memory_search`` / ``memory_get`` calls and replies). The script only renders
them in the release's transcript format (openclaw@2026.9.6: a ``session`` header, then
``message`` entries with ``toolCall`` parts and ``toolResult`` messages): each hit is the
release chunk (``memlab.chunking.release.chunk_markdown``) holding a given text, as the
file was on the session's day, its snippet the chunk's first 700 characters plus the
``Source:`` line; each ``memory_get`` answer is ``memlab.tools.release.read_window``; ids
and times are derived from the session's number, so the output is the same on every run.

    .venv/bin/python scripts/make_example_agent.py            # rewrite the folder
    .venv/bin/python scripts/make_example_agent.py --check    # exit 1 if it would change
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memlab.chunking.release import chunk_markdown  # noqa: E402
from memlab.retrieval.rerank import snippet as make_snippet  # noqa: E402
from memlab.tools.release import read_window  # noqa: E402

OUT = REPO / "datasets" / "example-agent"
CWD = "/home/dana/.openclaw/workspace"

# ------------------------------------------------------------------ the memory files
MEMORY_NOW = """\
# MEMORY.md — long-term notes for Dana

Reviewed 2026-03-25: people and infrastructure checked against the wiki.

## People
- Dana Whitfield runs Ledgerly, a small invoicing SaaS, mostly alone; prefers short answers, metric units and ISO dates.
- Priya Raman is the contract designer (Tuesdays and Thursdays); reach her on Signal, not by email.
- Marco Bellini at Northwind Bank is the payments contact; escalations go through the PAY ticket queue.
- Tomás Ortega helps with customer support part-time since May 2026 (mornings, Europe/Madrid).

## Infrastructure
- Production API: api-prod-2.ledgerly.internal (10.20.0.12). Postgres 16 on db-prod-1 (10.20.0.31), port 5432. <!-- importance: 8 -->
- Staging is stg-1.ledgerly.internal; every deploy goes through the GitHub Actions workflow deploy.yml.
- Backups: nightly pg_dump at 02:30 UTC to s3://ledgerly-backups, kept 35 days; restore tested monthly.
- DNS and TLS are on Cloudflare; the certificate renews by itself.

## Preferences
- Deploys only Monday to Thursday, never on a Friday or before a holiday.
- Code style: Python 3.12, ruff, type hints everywhere; commit messages in the imperative mood.
- Office coffee order: oat flat white.

## Decisions
- 2026-02-11: moved transactional email from SendGrid to Postmark (better deliverability for invoices).
- 2026-03-19: chose Stripe Billing over Paddle for subscriptions; Paddle's tax handling was the runner-up argument.
- 2026-04-22: public API rate limit set to 600 requests per minute per API key.
"""

DAILY: dict[str, str] = {
    "2026-02-03": """\
# 2026-02-03

- Customer Brightside Ltd reported invoice PDFs whose totals were off by one cent.
- Root cause: VAT was rounded per line item instead of once on the invoice total (half-cent cases).
- Ticket LED-142; fixed in commit 4f2a9c1: rounding now uses Decimal with ROUND_HALF_EVEN on the total.
- Re-issued the 14 affected invoices and emailed Brightside an apology.
- Added a property test for the rounding (hypothesis) the same evening.
""",
    "2026-02-11": """\
# 2026-02-11

- Switched transactional email from SendGrid to Postmark today.
- Postmark server token is in the 1Password vault "Ledgerly Prod", item "Postmark server token".
- DNS: added the Postmark DKIM and Return-Path CNAME records on Cloudflare; verified green.
- Invoice emails now send from billing@ledgerly.app; bounce webhook points to /webhooks/postmark.
- SendGrid account to be closed at the end of February.
""",
    "2026-02-24": """\
# 2026-02-24

- Outage 14:05–14:40 UTC: the API returned 500s for every write.
- Cause: db-prod-1's disk filled up with WAL files because archiving to S3 had failed since the 21st.
- Fix: repaired archive_command credentials, then Postgres recycled the old WAL segments by itself.
- Ticket LED-171; postmortem written in docs/postmortems/2026-02-24-disk.md.
- Follow-up: disk usage alert at 80 % on db-prod-1 (added in Grafana).
""",
    "2026-03-05": """\
# 2026-03-05

- Priya delivered the new dashboard mockups (Figma file "Ledgerly v3 dashboard").
- Feedback for Priya: the dark mode contrast of the secondary text is too low; invoice list needs a status filter.
- Next review with Priya on Thursday 2026-03-12.
""",
    "2026-03-19": """\
# 2026-03-19

- Decided: Stripe Billing for subscriptions (Paddle was the alternative; tax handling was the close call).
- Webhook endpoint: POST /webhooks/stripe, events invoice.paid and customer.subscription.updated.
- The webhook signing secret is rotated every 90 days; it lives in STRIPE_WEBHOOK_SECRET on api-prod-2.
- Migration of the 31 existing subscribers planned for April.
""",
    "2026-03-27": """\
# 2026-03-27

- Call with Marco Bellini (Northwind Bank) about failed SEPA direct debits.
- SEPA batch cut-off is 15:00 CET; files submitted later go out the next banking day.
- Failed debits of March tracked in ticket PAY-2281 on Northwind's side.
- Marco will send the new return-code list (R-transactions) by e-mail.
""",
    "2026-04-08": """\
# 2026-04-08

- Upgraded Postgres 15 to 16 on db-prod-1 with pg_upgrade --link; downtime was 6 minutes.
- Commit e91b7d0 raised the API's connection pool to max 40 and set statement_timeout to 15 s.
- Vacuum analyze ran afterwards; query plans look the same.
""",
    "2026-04-22": """\
# 2026-04-22

- Public API rate limit is now 600 requests per minute per API key (burst 50).
- Implemented in nginx with limit_req zone=api; the config is /etc/nginx/conf.d/ratelimit.conf.
- Clients over the limit get HTTP 429 with a Retry-After header.
""",
    "2026-05-06": """\
# 2026-05-06

- Acme GmbH asked for invoice export as XRechnung (German e-invoicing standard).
- Ticket LED-233; estimate 3 days, mostly the XML schema validation.
- Tomás started today on support, mornings only.
""",
    "2026-05-14": """\
# 2026-05-14

- Tagged release v2.7.0 (commit b3c8e21): XRechnung export for LED-233, dark mode for the dashboard.
- Deployed on Wednesday 2026-05-13 evening to staging, production this morning.
- Changelog sent to customers through Postmark.
""",
    "2026-05-20": """\
# 2026-05-20

- Incident 09:12–09:40 UTC: Stripe webhooks failed signature checks after the secret rotation.
- Fix: updated STRIPE_WEBHOOK_SECRET on api-prod-2 and replayed the failed events from the Stripe dashboard.
- Ticket LED-240. Add a checklist step: rotate the secret in Stripe and on the server together.
""",
}

# 2026-02-24 before Dana's clean-up on 2026-03-01: a workaround line, deleted since.
DAILY_0224_BEFORE = DAILY["2026-02-24"].replace(
    "- Ticket LED-171;",
    "- Workaround during the outage: moved 12 GB of old WAL to /mnt/scratch by hand (do not repeat).\n"
    "- Ticket LED-171;",
)

# MEMORY.md as it was before each of its edits, newest first: Tomás joined on 2026-05-06,
# the rate-limit decision was added on 2026-04-22, the Postgres upgrade of 2026-04-08
# changed the infrastructure entry, and the review of 2026-03-25 added the line under the
# title (so every entry sat lower than before).
_TOMAS = "- Tomás Ortega helps with customer support part-time since May 2026 (mornings, Europe/Madrid).\n"
_RATE = "- 2026-04-22: public API rate limit set to 600 requests per minute per API key.\n"
_REVIEW = "Reviewed 2026-03-25: people and infrastructure checked against the wiki.\n\n"
MEMORY_V4 = MEMORY_NOW.replace(_TOMAS, "")
MEMORY_V3 = MEMORY_V4.replace(_RATE, "")
MEMORY_V2 = MEMORY_V3.replace("Postgres 16 on db-prod-1", "Postgres 15 on db-prod-1")
MEMORY_V1 = MEMORY_V2.replace(_REVIEW, "")
assert len({MEMORY_NOW, MEMORY_V4, MEMORY_V3, MEMORY_V2, MEMORY_V1}) == 5

FILES_NOW: dict[str, str] = {"MEMORY.md": MEMORY_NOW}
FILES_NOW.update({f"memory/{d}.md": text for d, text in DAILY.items()})

# (path, the day the text changed, the text before that day), oldest first per path
BEFORE: list[tuple[str, str, str]] = [
    ("MEMORY.md", "2026-03-25", MEMORY_V1),
    ("MEMORY.md", "2026-04-08", MEMORY_V2),
    ("MEMORY.md", "2026-04-22", MEMORY_V3),
    ("MEMORY.md", "2026-05-06", MEMORY_V4),
    ("memory/2026-02-24.md", "2026-03-01", DAILY_0224_BEFORE),
]


def files_at(day: str) -> dict[str, str]:
    """The memory files as they were on ``day`` (YYYY-MM-DD): the daily logs up to that
    day, each file in its text of that day."""
    out = {p: t for p, t in FILES_NOW.items() if not p.startswith("memory/") or p[7:17] <= day}
    done: set[str] = set()
    for path, until, text in BEFORE:
        if path not in done and day < until:
            out[path] = text
            done.add(path)
    return out


# ------------------------------------------------------------------ rendering
def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class SessionWriter:
    """One session's JSONL lines, entry by entry, ids and times derived from ``number``."""

    def __init__(self, number: int, start: str) -> None:
        digest = hashlib.sha256(f"example-agent-session-{number}".encode()).digest()
        self.id = str(uuid.UUID(bytes=digest[:16], version=4))
        self.t = datetime.fromisoformat(start).replace(tzinfo=UTC)
        self.day = start[:10]
        self.files = files_at(self.day)
        self.n = 0
        self.prev: str | None = None
        self.calls = 0
        self.lines = [
            json.dumps(
                {
                    "type": "session",
                    "version": 4,
                    "id": self.id,
                    "timestamp": _iso(self.t),
                    "cwd": CWD,
                }
            )
        ]

    def _new_id(self, kind: str) -> str:
        self.n += 1
        return hashlib.sha256(f"{self.id}:{kind}:{self.n}".encode()).hexdigest()[:8]

    def entry(self, body: dict[str, Any], seconds: float = 2.0) -> str:
        """Append an entry ``seconds`` after the previous one (a message gets the same time
        in ms); returns its id."""
        self.t += timedelta(seconds=seconds)
        if "message" in body:
            body["message"]["timestamp"] = int(self.t.timestamp() * 1000)
        eid = self._new_id("entry")
        rec = {"type": body.pop("type", "message"), "id": eid, "parentId": self.prev}
        rec["timestamp"] = _iso(self.t)
        rec.update(body)
        self.lines.append(json.dumps(rec, ensure_ascii=False))
        self.prev = eid
        return eid

    def raw(self, line: str) -> None:
        """A line as given (noise: an unknown entry, a malformed line)."""
        self.lines.append(line)

    def user(self, text: str, seconds: float = 30.0) -> None:
        """The user's message."""
        self.entry(
            {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}, seconds
        )

    def assistant(self, parts: list[Any], seconds: float = 4.0, stop: str = "toolUse") -> list[str]:
        """An assistant message of text parts (str) and tool calls ((name, arguments));
        returns the call ids."""
        content, ids = [], []
        for p in parts:
            if isinstance(p, str):
                content.append({"type": "text", "text": p})
            else:
                self.calls += 1
                cid = f"call_{hashlib.sha256(f'{self.id}:call:{self.calls}'.encode()).hexdigest()[:24]}"
                ids.append(cid)
                content.append({"type": "toolCall", "id": cid, "name": p[0], "arguments": p[1]})
        msg = {
            "role": "assistant",
            "content": content,
            "provider": "openai",
            "model": "gpt-5.2",
            "stopReason": stop,
        }
        self.entry({"message": msg}, seconds)
        return ids

    def result(self, call_id: str, tool: str, payload: Any, *, is_error: bool = False) -> None:
        """The tool result of ``call_id``: OpenClaw's JSON answer (one text part holding the
        pretty-printed JSON, the payload also as ``details``), or a plain text."""
        text = payload if isinstance(payload, str) else json.dumps(payload, indent=2)
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
        }
        if not isinstance(payload, str):
            msg["details"] = payload
        self.entry({"message": msg}, 1.5)

    # -------------------------------------------------------------- memory tools
    def line_of(self, path: str, needle: str) -> int:
        """The 1-based line of ``path`` (as on the session's day) holding ``needle``."""
        for i, line in enumerate(self.files[path].split("\n"), 1):
            if needle in line:
                return i
        raise ValueError(f"{needle!r} not in {path} on {self.day}")

    def hit(self, path: str, needle: str, score: float) -> dict[str, Any]:
        """The release's result for the chunk of ``path`` holding ``needle``."""
        line = self.line_of(path, needle)
        chunk = next(
            c for c in chunk_markdown(self.files[path], path) if c.start_line <= line <= c.end_line
        )
        lines = f"#L{chunk.start_line}" + (
            f"-L{chunk.end_line}" if chunk.end_line != chunk.start_line else ""
        )
        citation = f"{path}{lines}"
        text = make_snippet(chunk.text).rstrip()
        return {
            "path": path,
            "startLine": chunk.start_line,
            "endLine": chunk.end_line,
            "score": score,
            "snippet": f"{text}\n\nSource: {citation}",
            "source": "memory",
            "corpus": "memory",
            "vectorScore": round(min(1.0, score + 0.08), 4),
            "textScore": round(max(0.0, score - 0.21), 4),
            "citation": citation,
        }

    def search(
        self,
        query: str,
        hits: list[tuple[str, str, float]],
        *,
        text: str = "",
        seconds: float = 5.0,
        **arguments: Any,
    ) -> None:
        """A ``memory_search`` call (``text``: words the assistant says before it) and its
        answer: the chunks holding each ``(path, needle, score)``, in the order given."""
        parts: list[Any] = [text] if text else []
        parts.append(("memory_search", {"query": query, **arguments}))
        (cid,) = self.assistant(parts, seconds)
        payload = {
            "results": [self.hit(p, n, s) for p, n, s in hits],
            "provider": "openai",
            "model": "text-embedding-3-small",
            "citations": "auto",
            "mode": "hybrid",
        }
        self.result(cid, "memory_search", payload)

    def failed_search(self, query: str, error: str, seconds: float = 5.0) -> None:
        """A ``memory_search`` the release answered as unavailable."""
        (cid,) = self.assistant([("memory_search", {"query": query})], seconds)
        warning = "Memory search is unavailable due to an embedding/provider error."
        action = "Check embedding provider configuration and retry memory_search."
        payload = {
            "results": [],
            "disabled": True,
            "unavailable": True,
            "error": error,
            "warning": warning,
            "action": action,
            "debug": {"warning": warning, "action": action, "error": error},
        }
        self.result(cid, "memory_search", payload)

    def sessions_search(self, query: str, transcript: str, score: float) -> None:
        """A ``memory_search`` over the sessions corpus: its hit is a transcript."""
        (cid,) = self.assistant([("memory_search", {"query": query, "corpus": "sessions"})])
        hit = {
            "path": f"sessions/{transcript}.jsonl",
            "startLine": 12,
            "endLine": 14,
            "score": score,
            "snippet": "User: is the pool size still 20? Assistant: yes, max 20 connections.",
            "source": "sessions",
            "corpus": "sessions",
        }
        payload = {"results": [hit], "provider": "openai", "model": "text-embedding-3-small"}
        self.result(cid, "memory_search", {**payload, "citations": "auto", "mode": "hybrid"})

    def get(self, path: str, start: str | None = None, lines: int | None = None) -> None:
        """A ``memory_get`` of ``path`` (from the line holding ``start``, ``lines`` lines;
        neither: the release's default window) and the release's answer."""
        args: dict[str, Any] = {"path": path}
        if start is not None:
            args["from"] = self.line_of(path, start)
        if lines is not None:
            args["lines"] = lines
        (cid,) = self.assistant([("memory_get", args)])
        self.result(cid, "memory_get", read_window(self.files[path], path, args.get("from"), lines))

    def get_outside(self, path: str, text: str) -> None:
        """A ``memory_get`` of a file outside the workspace (a configured extra path)."""
        (cid,) = self.assistant([("memory_get", {"path": path})])
        self.result(cid, "memory_get", read_window(text, path))

    def cite(self, path: str, first: str, last: str | None = None) -> str:
        """``Source: path#La-Lb`` of the lines holding ``first`` … ``last``."""
        a = self.line_of(path, first)
        b = self.line_of(path, last) if last else a
        return f"Source: {path}#L{a}" + (f"-L{b}" if b != a else "")

    def reply(self, text: str, seconds: float = 6.0) -> None:
        """The assistant's answer to the user."""
        self.assistant([text], seconds, stop="stop")

    def other_tool(self, name: str, arguments: dict[str, Any], output: str) -> None:
        """A call of another tool and its text result."""
        (cid,) = self.assistant([(name, arguments)])
        self.result(cid, name, output)


# ------------------------------------------------------------------ the sessions
def session_1() -> SessionWriter:
    s = SessionWriter(1, "2026-02-12T09:10:00")
    s.entry({"type": "model_change", "provider": "openai", "modelId": "gpt-5.2"}, 0.2)
    s.entry({"type": "thinking_level_change", "thinkingLevel": "low"}, 0.1)
    s.user("Did we finish moving email to Postmark? And where did I put the API token?")
    s.search(
        "Postmark migration server token",
        [
            ("memory/2026-02-11.md", "Switched transactional email", 0.71),
            ("MEMORY.md", "moved transactional email", 0.58),
        ],
        text="Let me check my notes.",
        maxResults=5,
    )
    s.get("memory/2026-02-11.md", "Switched transactional", 4)
    path = "memory/2026-02-11.md"
    s.reply(
        "Yes: transactional email moved to Postmark on 2026-02-11. The server token is in the"
        ' 1Password vault "Ledgerly Prod", item "Postmark server token".\n\n'
        + s.cite(path, "Postmark server token is in", "Postmark server token is in")
    )
    s.user("Thanks. What was the ticket for that VAT rounding bug last week?", 45)
    s.search(
        "VAT rounding bug invoice PDF ticket",
        [("memory/2026-02-03.md", "Root cause: VAT", 0.66)],
    )
    s.reply(
        "LED-142: VAT was rounded per line item instead of on the total; fixed in commit"
        " 4f2a9c1.\n\n" + s.cite("memory/2026-02-03.md", "Root cause", "Ticket LED-142")
    )
    return s


def session_2() -> SessionWriter:
    s = SessionWriter(2, "2026-02-25T08:30:00")
    s.user("What happened in yesterday's outage?")
    s.search(
        "outage db-prod-1 disk full",
        [
            ("memory/2026-02-24.md", "Outage 14:05", 0.74),
            ("MEMORY.md", "Production API:", 0.41),
        ],
    )
    s.search(
        "postmortem disk outage",
        [("memory/2026-02-24.md", "postmortem written", 0.69)],
        seconds=20,
    )
    s.get("memory/2026-02-24.md")
    s.reply(
        "The API returned 500s on writes from 14:05 to 14:40 UTC: db-prod-1's disk filled with"
        " WAL because archiving to S3 had been failing since the 21st. During the outage 12 GB"
        " of WAL were moved to /mnt/scratch by hand.\n\n"
        "Sources: "
        + s.cite("memory/2026-02-24.md", "Outage 14:05", "Cause:")[8:]
        + ", "
        + s.cite("memory/2026-02-24.md", "Workaround during")[8:]
    )
    s.user("Ticket number?", 40)
    s.search("LED-171", [("memory/2026-02-24.md", "Ticket LED-171", 0.62)])
    s.reply("LED-171.\n\n" + s.cite("memory/2026-02-24.md", "Ticket LED-171"))
    s.user("How do we clean up pg_wal if it happens again?", 60)
    s.failed_search("pg_wal cleanup procedure", "embedding provider timeout after 30000 ms")
    s.search(
        "pg_wal cleanup",
        [("memory/2026-02-24.md", "Fix: repaired", 0.57)],
        seconds=15,
    )
    s.reply(
        "Fix the archive_command first; Postgres then recycles old WAL segments by itself.\n\n"
        + s.cite("memory/2026-02-24.md", "Fix: repaired")
    )
    return s


def session_3() -> SessionWriter:
    s = SessionWriter(3, "2026-03-06T10:00:00")
    s.user("What was my feedback on Priya's dashboard mockups?")
    s.search(
        "Priya dashboard mockups feedback",
        [
            ("memory/2026-03-05.md", "Priya delivered", 0.77),
            ("MEMORY.md", "Priya Raman", 0.49),
        ],
    )
    s.reply(
        "Dark mode contrast of the secondary text is too low, and the invoice list needs a"
        " status filter.\n\n" + s.cite("memory/2026-03-05.md", "Feedback for Priya")
    )
    s.user("How do I reach her fastest?", 30)
    s.search("how to contact Priya", [("MEMORY.md", "Priya Raman", 0.64)])
    s.reply("On Signal, not by email.\n\n" + s.cite("MEMORY.md", "Priya Raman"))
    s.other_tool(
        "web_search",
        {"query": "WCAG contrast ratio secondary text dark mode"},
        "WCAG 2.2 asks for 4.5:1 for body text and 3:1 for large text.",
    )
    s.reply("WCAG asks for at least 4.5:1 for body text; worth passing on to Priya.")
    return s


def session_4() -> SessionWriter:
    s = SessionWriter(4, "2026-03-20T14:00:00")
    s.user("Which billing provider did we pick yesterday, and why?")
    s.search(
        "which billing provider did we choose and why",
        [
            ("memory/2026-03-19.md", "Decided: Stripe Billing", 0.79),
            ("MEMORY.md", "chose Stripe Billing", 0.72),
        ],
    )
    s.get("memory/2026-03-19.md", "Decided: Stripe", 2)
    s.raw('{"type":"bookmark","id":"bm000001","parentId":null,"label":"billing"}')
    s.reply(
        "Stripe Billing; Paddle was the alternative and its tax handling was the close call.\n\n"
        + s.cite("memory/2026-03-19.md", "Decided: Stripe")
    )
    s.raw('{"type":"message","id":"broken01","message":{"role":"assistant","content":[{"ty')
    s.user("What's the webhook endpoint again?", 50)
    s.search("stripe webhook endpoint", [("memory/2026-03-19.md", "Webhook endpoint", 0.68)])
    s.reply(
        "POST /webhooks/stripe (invoice.paid, customer.subscription.updated).\n\n"
        + s.cite("memory/2026-03-19.md", "Webhook endpoint")
    )
    return s


def session_5() -> SessionWriter:
    s = SessionWriter(5, "2026-03-28T09:00:00")
    s.user("Until when can we submit SEPA files to Northwind?")
    s.search(
        "SEPA cut-off time Northwind",
        [
            ("memory/2026-03-27.md", "SEPA batch cut-off", 0.73),
            ("MEMORY.md", "Marco Bellini", 0.52),
        ],
    )
    s.reply(
        "15:00 CET; later files go out the next banking day.\n\n"
        + s.cite("memory/2026-03-27.md", "SEPA batch cut-off")
    )
    s.user("And the ticket for the failed debits?", 35)
    s.search("PAY-2281", [("memory/2026-03-27.md", "PAY-2281", 0.61)])
    s.reply("PAY-2281, on Northwind's side.\n\n" + s.cite("memory/2026-03-27.md", "PAY-2281"))
    s.user("Who is our contact there?", 30)
    s.search(
        "who is our contact at Northwind Bank?",
        [("MEMORY.md", "Marco Bellini", 0.69), ("memory/2026-03-27.md", "Call with Marco", 0.55)],
    )
    s.get("MEMORY.md", "Marco Bellini", 1)
    s.reply(
        "Marco Bellini; escalations go through the PAY ticket queue.\n\n"
        + s.cite("MEMORY.md", "Marco Bellini")
    )
    return s


def session_6() -> SessionWriter:
    s = SessionWriter(6, "2026-04-08T16:00:00")
    s.user("Summarise what we changed in today's Postgres upgrade.")
    s.search(
        "Postgres 16 upgrade changes",
        [
            ("memory/2026-04-08.md", "Upgraded Postgres", 0.81),
            ("MEMORY.md", "Production API:", 0.47),
        ],
    )
    s.get("memory/2026-04-08.md", "Upgraded Postgres", 3)
    s.reply(
        "pg_upgrade --link from 15 to 16 on db-prod-1 (6 minutes down); commit e91b7d0 raised"
        " the pool to 40 and set statement_timeout to 15 s.\n\n"
        + s.cite("memory/2026-04-08.md", "Upgraded Postgres", "Commit e91b7d0")
    )
    s.user("What exactly did e91b7d0 touch?", 40)
    s.search("e91b7d0", [("memory/2026-04-08.md", "Commit e91b7d0", 0.6)])
    s.reply("The connection pool (max 40) and statement_timeout (15 s).")
    s.user("Remind me of the database host's IP and port.", 30)
    s.search("db-prod-1 10.20.0.31 port", [("MEMORY.md", "Production API:", 0.66)])
    s.reply("10.20.0.31, port 5432.\n\n" + s.cite("MEMORY.md", "Production API:"))
    s.user("Did we ever talk about the old pool size in chat?", 45)
    s.sessions_search("connection pool size discussion", "0b7d5e1c-pool", 0.44)
    s.reply("Yes, in an earlier chat: it was 20 connections before today's change.")
    return s


def session_7() -> SessionWriter:
    s = SessionWriter(7, "2026-04-23T16:00:00")
    s.user("What rate limit did we set for the public API?")
    s.search(
        "public API rate limit per key",
        [
            ("memory/2026-04-22.md", "Public API rate limit", 0.8),
            ("MEMORY.md", "public API rate limit", 0.75),
        ],
        maxResults=4,
    )
    s.get("memory/2026-04-22.md", "Public API rate limit", 3)
    s.reply(
        "600 requests per minute per API key, burst 50; over the limit clients get 429 with"
        " Retry-After.\n\n"
        + s.cite("memory/2026-04-22.md", "Public API rate limit", "Clients over the limit")
    )
    s.user("Where's the nginx config for it?", 30)
    s.search(
        "/etc/nginx/conf.d/ratelimit.conf",
        [("memory/2026-04-22.md", "Implemented in nginx", 0.63)],
    )
    s.get_outside(
        "/home/dana/runbooks/nginx.md",
        "# nginx runbook\n\n- Reload with: sudo nginx -t && sudo systemctl reload nginx\n",
    )
    s.reply(
        "/etc/nginx/conf.d/ratelimit.conf (limit_req zone=api). Reload with"
        " `sudo nginx -t && sudo systemctl reload nginx`.\n\n"
        + s.cite("memory/2026-04-22.md", "Implemented in nginx")
    )
    s.user("Should we raise the burst?", 60)
    s.search(
        "nginx limit_req burst",
        [("memory/2026-04-22.md", "Public API rate limit", 0.52)],
        maxResults=8,
        minScore=0.2,
    )
    s.reply("Burst is 50 today; no complaints are noted, so I would leave it.")
    return s


def session_8() -> SessionWriter:
    s = SessionWriter(8, "2026-05-07T09:30:00")
    s.user("What did Acme ask for yesterday and how long will it take?")
    s.search(
        "Acme XRechnung request estimate",
        [("memory/2026-05-06.md", "Acme GmbH", 0.78)],
    )
    s.reply(
        "Invoice export as XRechnung; estimated 3 days, mostly XML schema validation.\n\n"
        + s.cite("memory/2026-05-06.md", "Acme GmbH", "Ticket LED-233")
    )
    s.user("LED-233 is the ticket, right?", 25)
    s.search("LED-233", [("memory/2026-05-06.md", "Ticket LED-233", 0.64)])
    s.reply("Yes.\n\n" + s.cite("memory/2026-05-06.md", "Ticket LED-233"))
    return s


def session_9() -> SessionWriter:
    s = SessionWriter(9, "2026-05-15T10:00:00")
    s.user("What went into v2.7.0?")
    s.search(
        "what went into release v2.7.0?",
        [
            ("memory/2026-05-14.md", "Tagged release v2.7.0", 0.82),
            ("memory/2026-05-06.md", "Acme GmbH", 0.51),
        ],
    )
    s.get("memory/2026-05-14.md")
    s.reply(
        "XRechnung export (LED-233) and dark mode for the dashboard; commit b3c8e21.\n\n"
        + s.cite("memory/2026-05-14.md", "Tagged release v2.7.0")
    )
    s.user("Commit b3c8e21 is on main?", 30)
    s.search("b3c8e21", [("memory/2026-05-14.md", "Tagged release v2.7.0", 0.59)])
    s.reply("It is the tagged commit of v2.7.0.")
    s.user("Can I deploy the hotfix today? It's Friday.", 40)
    s.search(
        "do we deploy on fridays?",
        [("MEMORY.md", "Deploys only Monday", 0.7)],
    )
    s.reply(
        "Better not: deploys are Monday to Thursday only.\n\n"
        + s.cite("MEMORY.md", "Deploys only Monday")
    )
    return s


def session_10() -> SessionWriter:
    s = SessionWriter(10, "2026-05-20T17:30:00")
    s.user("Why did the Stripe webhooks fail this morning?")
    s.search(
        "stripe webhook signature failures",
        [
            ("memory/2026-05-20.md", "Incident 09:12", 0.84),
            ("memory/2026-03-19.md", "signing secret is rotated", 0.62),
        ],
    )
    s.reply(
        "They failed signature checks after the secret rotation; STRIPE_WEBHOOK_SECRET on"
        " api-prod-2 was updated and the events replayed (LED-240).\n\n"
        + s.cite("memory/2026-05-20.md", "Incident 09:12", "Fix: updated")
    )
    s.user("How often do we rotate that secret?", 30)
    s.search(
        "STRIPE_WEBHOOK_SECRET rotation",
        [("memory/2026-03-19.md", "signing secret is rotated", 0.66)],
    )
    s.search(
        "webhook secret rotation schedule",
        [("memory/2026-03-19.md", "signing secret is rotated", 0.61)],
        seconds=40,
    )
    s.reply("Every 90 days.\n\n" + s.cite("memory/2026-03-19.md", "signing secret is rotated"))
    s.user("Is Tomás on support this evening?", 50)
    s.search("Tomás support schedule evening", [])
    s.reply("I have nothing on an evening schedule for Tomás; only that he works mornings.")
    return s


SESSIONS = [
    session_1,
    session_2,
    session_3,
    session_4,
    session_5,
    session_6,
    session_7,
    session_8,
    session_9,
    session_10,
]

# The answer key, by hand: for each question the agent asked, the lines of the memory
# that answer it (read against the workspace as it is now). memlab judge's spans are
# judged from it in notebook 11 and the tests: a span is relevant when it holds one.
ANSWERS: list[tuple[str, str, int, int]] = [
    ("Postmark migration server token", "memory/2026-02-11.md", 3, 4),
    ("VAT rounding bug invoice PDF ticket", "memory/2026-02-03.md", 3, 5),
    ("outage db-prod-1 disk full", "memory/2026-02-24.md", 3, 7),
    ("postmortem disk outage", "memory/2026-02-24.md", 3, 6),
    ("LED-171", "memory/2026-02-24.md", 3, 7),
    ("pg_wal cleanup procedure", "memory/2026-02-24.md", 4, 5),
    ("pg_wal cleanup", "memory/2026-02-24.md", 4, 5),
    ("Priya dashboard mockups feedback", "memory/2026-03-05.md", 3, 5),
    ("how to contact Priya", "MEMORY.md", 7, 7),
    ("which billing provider did we choose and why", "memory/2026-03-19.md", 3, 3),
    ("which billing provider did we choose and why", "MEMORY.md", 24, 24),
    ("stripe webhook endpoint", "memory/2026-03-19.md", 4, 4),
    ("SEPA cut-off time Northwind", "memory/2026-03-27.md", 4, 4),
    ("PAY-2281", "memory/2026-03-27.md", 5, 5),
    ("who is our contact at Northwind Bank?", "MEMORY.md", 8, 8),
    ("who is our contact at Northwind Bank?", "memory/2026-03-27.md", 3, 3),
    ("Postgres 16 upgrade changes", "memory/2026-04-08.md", 3, 5),
    ("e91b7d0", "memory/2026-04-08.md", 4, 4),
    ("db-prod-1 10.20.0.31 port", "MEMORY.md", 12, 12),
    ("connection pool size discussion", "memory/2026-04-08.md", 4, 4),
    ("public API rate limit per key", "memory/2026-04-22.md", 3, 3),
    ("public API rate limit per key", "MEMORY.md", 25, 25),
    ("/etc/nginx/conf.d/ratelimit.conf", "memory/2026-04-22.md", 4, 4),
    ("nginx limit_req burst", "memory/2026-04-22.md", 3, 4),
    ("Acme XRechnung request estimate", "memory/2026-05-06.md", 3, 4),
    ("LED-233", "memory/2026-05-06.md", 3, 4),
    ("what went into release v2.7.0?", "memory/2026-05-14.md", 3, 3),
    ("b3c8e21", "memory/2026-05-14.md", 3, 3),
    ("do we deploy on fridays?", "MEMORY.md", 18, 18),
    ("stripe webhook signature failures", "memory/2026-05-20.md", 3, 5),
    ("STRIPE_WEBHOOK_SECRET rotation", "memory/2026-03-19.md", 5, 5),
    ("STRIPE_WEBHOOK_SECRET rotation", "memory/2026-05-20.md", 4, 5),
    ("webhook secret rotation schedule", "memory/2026-03-19.md", 5, 5),
    ("Tomás support schedule evening", "MEMORY.md", 9, 9),
    ("Tomás support schedule evening", "memory/2026-05-06.md", 5, 5),
]

README = """\
# example-agent: a small hand-written OpenClaw agent

A made-up agent (Dana's assistant for "Ledgerly", a one-person invoicing SaaS) with its
memory workspace and ten session transcripts from February to May 2026, to try
`memlab harvest` on and to judge presets with the agent's own queries:

    memlab harvest datasets/example-agent/workspace \\
        --sessions datasets/example-agent/sessions --out /tmp/example-harvest
    memlab eval folder --path /tmp/example-harvest --run deployed=/tmp/example-harvest/shown.trec

- `workspace/`: `MEMORY.md` and eleven daily logs `memory/YYYY-MM-DD.md`.
- `sessions/`: one JSONL transcript per session in OpenClaw 2026.9.6's format: a
  `session` header, then `message` entries with `toolCall` parts (`memory_search`,
  `memory_get`, another tool) and `toolResult` messages, and replies citing
  `Source: path#Lx-Ly`. It holds what a real log holds: an errored search, re-asked
  queries, bare identifiers (tickets, commits, an IP, a path), a search of the sessions
  corpus, a read outside the workspace, a search with no result, and noise (model and
  thinking-level entries, an unknown entry type, a malformed line).
- The workspace changed after some sessions: `MEMORY.md` gained two lines near its top
  (2026-03-25 and May), and a line of `memory/2026-02-24.md` was deleted on 2026-03-01, so
  harvest re-anchors some spans by their text and drops one.
- `answers.jsonl`: the answer key, written by hand: for each question (`query`), the lines
  of a memory file that answer it (`path`, `start_line`, `end_line`). Notebook 11 judges
  `memlab judge`'s pool from it (a span is relevant when it holds one of them), as a person
  would by reading each span.

Everything here is invented and hand-written; the transcripts are rendered from the
hand-written sessions in `scripts/make_example_agent.py` (ids and times are fixed, so a
re-run writes the same bytes: `--check`). License: the repository's.
"""


def render() -> dict[str, str]:
    """Every file of the folder: relative path → text."""
    out = {"README.md": README}
    out["answers.jsonl"] = "".join(
        json.dumps({"query": q, "path": path, "start_line": a, "end_line": b}, ensure_ascii=False)
        + "\n"
        for q, path, a, b in ANSWERS
    )
    for path, text in FILES_NOW.items():
        out[f"workspace/{path}"] = text
    for make in SESSIONS:
        s = make()
        out[f"sessions/{s.id}.jsonl"] = "\n".join(s.lines) + "\n"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the folder differs")
    args = ap.parse_args()
    files = render()
    if args.check:
        present = {
            str(p.relative_to(OUT)): p.read_text(encoding="utf-8")
            for p in OUT.rglob("*")
            if p.is_file()
        }
        if present != files:
            print(f"{OUT} differs from scripts/make_example_agent.py", file=sys.stderr)
            return 1
        print(f"{OUT} is up to date")
        return 0
    for rel, text in files.items():
        p = OUT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    stale = [p for p in OUT.rglob("*") if p.is_file() and str(p.relative_to(OUT)) not in files]
    for p in stale:
        p.unlink()
    print(f"wrote {len(files)} files to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
