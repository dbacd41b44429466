"""OpenClaw 2026.9.6 discovery, chunking, annotations and trigger recall (spec
openclaw-current.md §1, §2, §8–§10): the spec's worked examples, properties of the chunker,
and a differential run against the release's own functions under node (skipped when the
npm package or node is absent)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.chunking.release import (
    INVALID_PROJECT_KEY,
    chunk_markdown,
    chunk_text,
    estimate_chars,
    parse_annotations,
    split_curated_entries,
    strip_annotations,
)
from memlab.openclaw_current.triggers import TriggerEntry, trigger_context, trigger_matches
from memlab.store.release_files import classify_memory_path, glob_match, list_memory_files
from tests.openclaw_release import require_release

# --- §2 weights ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "weight"),
    [("你好", 8), ("こんにちは", 20), ("hello 世界", 14), ("😀", 2), ("한국어", 12), ("𠮷", 16),
     ("ᄀ", 12), ("ｱ", 8), ("", 0), ("·", 4), ("\U0001d360", 12), ("ˇ", 8)],
)  # fmt: skip
def test_estimate_chars_spec(text: str, weight: int) -> None:
    assert estimate_chars(text) == weight


# --- §2 chunking --------------------------------------------------------------------------


def test_bounded_overlap_long_line() -> None:
    chunks = chunk_text("x" * 3000)
    assert [len(c.text) for c in chunks] == [1600, 1599]
    tail, rest = chunks[1].text.split("\n")
    assert (len(tail), len(rest)) == (198, 1400)


def test_bounded_overlap_lines() -> None:
    text = "\n".join(["a" * 1500, "b" * 200, "c" * 200])
    chunks = chunk_text(text)
    assert [(len(c.text), c.start_line, c.end_line) for c in chunks] == [(1500, 1, 1), (721, 1, 3)]


def test_cjk_recut() -> None:
    chunks = chunk_text("你" * 900)
    assert [len(c.text) for c in chunks] == [400, 400, 180]
    assert all(estimate_chars(c.text) <= 1600 for c in chunks)


MEMORY = """# Prefs
- likes tea <!-- importance: 8 -->
  continued line
-x not an entry
* star stays
#x stays
## Work
- gateway runs on the laptop <!-- trigger: gateway setup, my laptop gateway -->
- billing <!-- project: OC/Billing; path:src/x -->
- broken <!-- project: a; -->
"""


def test_split_curated_entries() -> None:
    got = [(e.start_line, e.end_line, e.kind) for e in split_curated_entries(MEMORY)]
    assert got == [(1, 1, "section"), (2, 6, "entry"), (7, 7, "section"), (8, 8, "entry"),
                   (9, 9, "entry"), (10, 11, "entry")]  # fmt: skip


def test_chunk_markdown_memory_entries_and_annotations() -> None:
    chunks = chunk_markdown(MEMORY, "MEMORY.md")
    spans = [(c.start_line, c.end_line, c.entry_start_line, c.entry_end_line) for c in chunks]
    assert spans == [(1, 1, None, None), (2, 6, 2, 6), (7, 7, None, None), (8, 8, 8, 8),
                     (9, 9, 9, 9), (10, 11, 10, 11)]  # fmt: skip
    assert "<!--" not in "".join(c.text for c in chunks)
    assert chunks[1].text.startswith("- likes tea\n")  # trailing space gone with the comment
    assert chunks[1].importance == 8
    assert chunks[3].triggers == "gateway setup; my laptop gateway"
    assert chunks[4].project_key == "oc/Billing; path:src/x"
    assert chunks[5].project_key == INVALID_PROJECT_KEY and chunks[5].excluded
    assert chunks[0].importance is None and not chunks[0].excluded


def test_daily_log_line_based_no_importance() -> None:
    text = "- a <!-- importance: 9 --> <!-- project: x -->\n- b"
    chunks = chunk_markdown(text, "memory/2026-09-20.md")
    assert len(chunks) == 1 and chunks[0].entry_start_line is None
    assert chunks[0].text == "- a\n- b"
    assert chunks[0].importance is None  # only curated roots carry importance
    assert chunks[0].project_key == "x"  # projects count in every memory file


def test_user_md_per_entry_without_projects() -> None:
    chunks = chunk_markdown("- a <!-- project: x --> <!-- importance: 3 -->\n- b", "USER.md")
    assert [(c.start_line, c.project_key, c.importance) for c in chunks] == [
        (1, None, 3),
        (2, None, None),
    ]


def test_blank_chunks_dropped() -> None:
    assert (
        chunk_markdown("- a\n\n   \n- <!-- trigger: x -->", "memory/x.md")[0].text == "- a\n\n\n-"
    )
    # "- <!-- … -->" strips to "-", no longer an entry: it stays in the heading's block
    (only,) = chunk_markdown("# h\n- <!-- trigger: x -->\n", "MEMORY.md")
    assert (only.text, only.end_line, only.entry_start_line, only.triggers) == (
        "# h\n-\n",
        3,
        None,
        "x",
    )
    assert chunk_markdown("\u3000\n \t", "MEMORY.md") == []


def test_strip_annotations() -> None:
    assert strip_annotations("a  \nb \t") == "a  \nb \t"  # nothing removed: spaces kept
    assert strip_annotations("a <!-- Trigger : x -->  \nb  ") == "a\nb"
    assert (
        strip_annotations("a <!-- project: x\n -->") == "a <!-- project: x\n -->"
    )  # not closed on its line
    assert strip_annotations("a <!-- note: x -->") == "a <!-- note: x -->"


# --- §8 / §9 annotations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "importance"),
    [("- a <!-- importance: 8 -->", 8), ("- a <!-- importance: 8 --> x", None),
     ("- a <!-- importance: 0 -->", None), ("- a <!-- importance: 11 -->", None),
     ("- a <!-- importance: 7.5 -->", None), ("- a <!-- importance: 3 --><!-- importance: 9 -->", 9),
     ("- a <!-- IMPORTANCE:10 -->  ", 10), ("- a <!-- importance: ٣ -->", None)],
)  # fmt: skip
def test_importance(line: str, importance: int | None) -> None:
    assert parse_annotations([line], curated_root=True).importance == importance
    assert parse_annotations([line], curated_root=False).importance is None


def test_triggers_split_and_dedup() -> None:
    lines = ["- x <!-- trigger: a, b; c -->", "  <!-- trigger: c;; d -->"]
    assert parse_annotations(lines, curated_root=True).triggers == "a; b; c; d"


@pytest.mark.parametrize(
    ("text", "key"),
    [("<!-- project: OC/x; k2 -->", "oc/x; k2"), ("<!-- project: path:A/B -->", "path:A/B"),
     ("<!-- project: /X -->", "/X"), ("<!-- project: Plain -->", "Plain"),
     ("<!-- project: a; -->", INVALID_PROJECT_KEY), ("<!-- project: a", INVALID_PROJECT_KEY),
     ("<!-- project: <b> -->", INVALID_PROJECT_KEY), ("no tags", None),
     ("<!-- project: a --> <!-- project: a -->", "a")],
)  # fmt: skip
def test_project_keys(text: str, key: str | None) -> None:
    assert parse_annotations([text]).project_key == key
    assert parse_annotations([text], project_scope=False).project_key is None


# --- chunker properties -------------------------------------------------------------------

_TEXT = st.lists(
    st.sampled_from(["a", "bb ", "你", "😀", "ｱ", "𠮷", "\n", "- ", "# ", "x" * 17, "\t", "-->",
                     "<!-- importance: 5 -->", "<!-- project: p -->"]),
    max_size=60,
).map("".join)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    text=_TEXT, per_entry=st.booleans(), max_chars=st.integers(32, 80), overlap=st.integers(0, 40)
)
def test_chunker_covers_every_line_within_bound(text, per_entry, max_chars, overlap) -> None:
    chunks = chunk_text(text, per_entry=per_entry, max_chars=max_chars, overlap_chars=overlap)
    covered = set()
    for c in chunks:
        assert estimate_chars(c.text) <= max_chars
        assert c.text.count("\n") >= c.end_line - c.start_line
        covered.update(range(c.start_line, c.end_line + 1))
    assert covered == set(range(1, text.count("\n") + 2))
    if per_entry:  # chunks never cross blocks
        blocks = [(e.start_line, e.end_line) for e in split_curated_entries(text)]
        assert all(any(s <= c.start_line and c.end_line <= e for s, e in blocks) for c in chunks)


@settings(max_examples=100, deadline=None)
@given(text=_TEXT)
def test_strip_keeps_line_count(text) -> None:
    assert strip_annotations(text).count("\n") == text.count("\n")


# --- §1 discovery -------------------------------------------------------------------------


def _write(root: Path, rel: str, text: str = "x\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_list_memory_files_order_and_trust(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for rel in [
        "MEMORY.md",
        "memory.md",
        "USER.md",
        "DREAMS.md",
        "README.md",
        "memory/2026-09-20.md",
        "memory/dreaming/d.md",
        "memory/sub/deep/a.md",
        "memory/sub/notes.md",
        "memory/a.MD",
        "memory/.openclaw-repair/x.md",
        "memory/sub-a.md",
        "notes/extra.md",
        "notes/skip.txt",
        ".openclaw-repair/root-memory/t/memory.md",
        "docs/a/b.md",
        "docs/c.md",
        "docs/.h/d.md",
    ]:
        _write(ws, rel)  # fmt: skip
    (ws / "memory" / "link.md").symlink_to(ws / "README.md")
    outside = tmp_path / "out.md"
    _write(tmp_path, "out.md")
    extra = ["notes", "notes/extra.md", "memory.md", "missing", str(outside), ".openclaw-repair",
             {"path": "docs", "pattern": "**/*.md"}, {"path": "docs", "pattern": "*.md"}]  # fmt: skip
    files = list_memory_files(ws, extra)
    assert [f.path for f in files] == [
        "MEMORY.md", "USER.md", "memory/2026-09-20.md", "memory/dreaming/d.md", "memory/sub-a.md",
        "memory/sub/deep/a.md", "memory/sub/notes.md", "notes/extra.md", "../out.md",
        "docs/a/b.md", "docs/c.md",
    ]  # fmt: skip
    trust = {f.path: (f.curated_root, f.origin_class) for f in files}
    assert trust["MEMORY.md"] == (True, "agent") and trust["USER.md"] == (True, "agent")
    assert trust["memory/dreaming/d.md"] == (False, "system")
    assert trust["notes/extra.md"] == (False, "untrusted") and trust["../out.md"] == (
        False,
        "untrusted",
    )
    assert classify_memory_path(ws, ws / "DREAMS.md") == (False, "system")


def test_memory_md_symlink_not_root(tmp_path: Path) -> None:
    _write(tmp_path, "real.md")
    (tmp_path / "MEMORY.md").symlink_to(tmp_path / "real.md")
    assert list_memory_files(tmp_path) == []


@pytest.mark.parametrize(
    ("rel", "pattern", "ok"),
    [("a.md", "*.md", True), ("x/a.md", "*.md", False), ("x/a.md", "**/*.md", True),
     ("a.md", "**/*.md", True), (".h/a.md", "**/*.md", False), ("b.md", "{a,b}.md", True),
     ("c.md", "[ab].md", False), (".a.md", ".*.md", True)],
)  # fmt: skip
def test_glob_match(rel: str, pattern: str, ok: bool) -> None:
    assert glob_match(rel, pattern) is ok


# --- §10 trigger recall -------------------------------------------------------------------


def test_trigger_recall_spec_example() -> None:
    entries = [
        TriggerEntry("MEMORY.md", 3, 3, "- ask for help <!-- trigger: help -->", 0.9, "help"),
        TriggerEntry("MEMORY.md", 8, 8, "- gw", 0.1, "my laptop gateway"),
        TriggerEntry("USER.md", 2, 2, "- setup", 0.0, "gateway setup"),
        TriggerEntry("MEMORY.md", 9, 9, "- x", 1.0, "unrelated words"),
        TriggerEntry("MEMORY.md", 10, 10, "- t", 1.0, "help", project_key="oc"),
        TriggerEntry("MEMORY.md", 11, 11, "- s", 1.0, "help", origin_class="system"),
    ]
    got = trigger_matches("Can you help with the gateway setup on my laptop?", entries, [])
    assert [(m.entry.start_line, round(m.match_score, 4)) for m in got] == [
        (3, 0.86),
        (8, 0.82),
        (2, 0.8),
    ]
    assert trigger_context(got[:1]) == "- - ask for help (Source: MEMORY.md#L3)"
    with_project = trigger_matches("help", entries, ["oc"])
    assert [m.entry.start_line for m in with_project] == [10, 3]


# --- differential: the release's own functions under node ---------------------------------

_NODE = Path(__file__).with_name("data") / "openclaw_current_chunks.mjs"


def _run_release(cases: list[dict]) -> list:
    dist = require_release("markdown-chunks-DYWd0D11.mjs")
    done = subprocess.run(
        ["node", str(_NODE), str(dist)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_differential_against_release() -> None:
    rng = random.Random(15)
    alphabet = ["a", "b", " ", "\t", "-", "#", "\n", "\n", "- ", "# ", "你", "😀", "ｱ", "𠮷", "\r\n",
                "<!-- importance: 8 -->", "<!-- trigger: a, b; c -->", "<!-- project: OC/x; path:y -->",
                "<!-- PROJECT: -->", "-->", "<!-- project: a", "x" * 50, "y" * 700, "你" * 200, "ᄀ"]  # fmt: skip
    cases, mine = [], []
    for _ in range(150):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        per_entry = rng.random() < 0.5
        lines = text.replace("\r\n", "\n").split("\n")
        cases += [{"op": "est", "text": text}, {"op": "chunk", "text": text, "perEntry": per_entry},
                  {"op": "split", "text": text}, {"op": "strip", "text": text},
                  {"op": "ann", "lines": lines, "curated": True, "scope": True}]  # fmt: skip
        path = rng.choice(["MEMORY.md", "USER.md", "memory/2026-09-20.md"])
        cases.append(
            {"op": "prep", "text": text, "path": path, "curated": path != "memory/2026-09-20.md"}
        )
        ann = parse_annotations(lines, curated_root=True)
        mine += [
            estimate_chars(text),
            [[c.text, c.start_line, c.end_line, c.entry_start_line, c.entry_end_line]
             for c in chunk_text(text, per_entry=per_entry)],
            [[e.start_line, e.end_line, e.text, e.kind] for e in split_curated_entries(text)],
            strip_annotations(text),
            [ann.importance, ann.triggers, ann.project_key],
        ]  # fmt: skip
        mine.append([[c.text, c.start_line, c.end_line, c.entry_start_line, c.entry_end_line, c.importance,
                      c.triggers, c.project_key, c.hash] for c in chunk_markdown(text, path)])  # fmt: skip
    theirs = _run_release(cases)
    bad = [(c, m, t) for c, m, t in zip(cases, mine, theirs, strict=True) if m != t]
    assert not bad, bad[:3]
