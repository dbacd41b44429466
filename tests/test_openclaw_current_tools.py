"""OpenClaw 2026.9.6's memory_search / memory_get (spec openclaw-current.md §11), the 2026-04
tools unchanged beside them, the command line and the MCP server as a client meets them."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memlab.tools import SearchArgumentError
from memlab.tools import memory_get as legacy_get
from memlab.tools import release as rt
from tests.conftest import cli
from tests.openclaw_release import require_release

HARNESS = Path(__file__).parent / "data" / "openclaw_read_window_harness.mjs"
NOTICE = "\n\n[More content available. Use from={} to continue.]"
BUDGET = "\n\n[More content available. Requested excerpt exceeded the default maxChars budget."
READ = " If you need the full raw line, use read on the source file."
REFUSED = {
    "text": "",
    "status": "error",
    "code": "MEMORY_PATH_NOT_ALLOWED",
    "error": "path is not an allowed Markdown memory file",
}


def current_preset(**overrides: Any) -> Any:
    from memlab.pipeline.presets import PRESETS, preset

    # registered: a missing preset is a failure, not a skip
    assert "openclaw-current" in PRESETS
    return preset("openclaw-current", **overrides)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Memory\n\n- The gateway runs on the laptop. <!-- importance: 8 -->\n"
        "- Alice likes green tea.\n"
    )
    (root / "USER.md").write_text("# User\n\n- Prefers short answers.\n")
    (root / "memory.md").write_text("legacy root notes\n")
    (root / "DREAMS.md").write_text("# Dreams\n")
    (root / "memory" / "2026-11-20.md").write_text("# Log\n\nDeployed the gateway to the laptop.\n")
    (root / "long.md").write_text("not memory\n")
    return root


# ------------------------------------------------------------------- the window
def test_default_window_is_120_lines_with_the_from_notice() -> None:
    content = "".join(f"line {i}\n" for i in range(1, 301))
    res = rt.read_window(content, "memory/a.md")
    assert (res["from"], res["lines"], res["nextFrom"], res["truncated"]) == (1, 120, 121, True)
    body = "\n".join(f"line {i}" for i in range(1, 121))
    assert res["text"] == body + NOTICE.format(121)
    nxt = rt.read_window(content, "memory/a.md", from_=281)  # the last 20 lines: nothing more
    assert nxt["lines"] == 20 and "truncated" not in nxt and "nextFrom" not in nxt
    assert nxt["text"] == "\n".join(f"line {i}" for i in range(281, 301))


def test_char_budget_keeps_whole_lines_and_points_at_the_next() -> None:
    content = "\n".join("x" * 100 for _ in range(200)) + "\n"
    res = rt.read_window(content, "MEMORY.md")
    # whole lines while 100·n + (n − 1) <= 12,000: n = 118 (119 lines would be 12,018)
    assert (res["lines"], res["nextFrom"], res["truncated"]) == (118, 119, True)
    assert res["text"] == "\n".join(["x" * 100] * 118) + NOTICE.format(119)
    wide = "y" * 5000 + "\n" + "z" * 5000 + "\n" + "w" * 5000 + "\n"
    two = rt.read_window(wide, "MEMORY.md")
    assert two["lines"] == 2 and two["nextFrom"] == 3
    assert two["text"] == "y" * 5000 + "\n" + "z" * 5000 + NOTICE.format(3)


def test_one_line_over_budget_is_cut_and_says_so() -> None:
    res = rt.read_window("a" * 13_000 + "\nb\n", "memory/x.md")
    assert res["lines"] == 1 and res["truncated"] and "nextFrom" not in res
    assert res["text"] == "a" * 12_000 + BUDGET + READ + "]"
    extra = rt.read_window("a" * 13_000, "../notes/x.md", suggest_read=False)
    assert extra["text"] == "a" * 12_000 + BUDGET + "]"
    # UTF-16 budget: an astral character counts 2 and is never split
    astral = rt.read_window("😀" * 7, "memory/e.md", max_chars=5)
    assert astral["text"].startswith("😀😀\n\n[More") and rt.utf16_len("😀😀") == 4


def test_window_edges() -> None:
    assert rt.read_window("a\nb\n", "m.md", from_=9) == {
        "status": "ok",
        "text": "",
        "path": "m.md",
        "from": 9,
        "lines": 0,
    }
    assert rt.read_window("a\nb", "m.md", lines=1)["text"] == "a" + NOTICE.format(2)
    # split on \n only, as the release: a CRLF file keeps its \r on every line
    assert rt.read_window("a\r\nb\r\n", "m.md")["text"] == "a\r\nb\r"
    assert rt.continuation_notice(7) == "\n\n[More content available. Use from=7 to continue.]"


def test_window_matches_the_release_under_node() -> None:
    dist = require_release("extensions/memory-core/manager-runtime.js")
    long = "".join(f"entry {i} " * (i % 7) + "\n" for i in range(400))
    cases: list[dict[str, Any]] = []
    for content in (
        long,
        "a" * 13_000 + "\nb",
        "😀" * 9 + "\nx\n",
        "",
        "one",
        "a\n\nb\n\n",
        "a\r\nb\r\n",
    ):
        for frm, lines, cap in ((None, None, None), (3, 2, None), (1, 500, 50), (2, None, 7)):
            for suggest in (True, False):
                c = {"content": content, "relPath": "memory/x.md", "suggestReadFallback": suggest}
                c |= {k: v for k, v in (("from", frm), ("lines", lines), ("maxChars", cap)) if v}
                cases.append(c)
    got = subprocess.run(
        ["node", str(HARNESS), str(dist)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    theirs = json.loads(got.stdout)
    mine = [
        rt.read_window(
            c["content"],
            c["relPath"],
            c.get("from"),
            c.get("lines"),
            max_chars=c.get("maxChars", 12_000),
            suggest_read=c["suggestReadFallback"],
        )
        for c in cases
    ]
    assert mine == theirs


# ------------------------------------------------------------------- memory_get
def test_release_get_files(ws: Path) -> None:
    assert rt.memory_get(ws, "USER.md") == {
        "status": "ok",
        "text": "# User\n\n- Prefers short answers.",
        "path": "USER.md",
        "from": 1,
        "lines": 3,
    }
    assert rt.memory_get(ws, "memory.md") == {"path": "memory.md", **REFUSED}
    assert rt.memory_get(ws, "long.md") == {"path": "long.md", **REFUSED}
    assert rt.memory_get(ws, "DREAMS.md")["status"] == "ok"  # dreams.md in any case
    assert rt.memory_get(ws, "memory/none.md") == {
        "status": "not_found",
        "text": "",
        "path": "memory/none.md",
    }
    assert rt.memory_get(ws, "MEMORY.md", 3, 1)["text"] == (
        "- The gateway runs on the laptop. <!-- importance: 8 -->" + NOTICE.format(4)
    )
    bad = rt.memory_get(ws, "MEMORY.md", 0)
    assert bad["status"] == "error" and "from must be an integer >= 1" in bad["error"]
    assert rt.memory_get(ws, "  ")["error"] == "path required"


def test_release_get_corpus(ws: Path) -> None:
    wiki = rt.memory_get(ws, "USER.md", corpus="wiki")
    assert wiki == {
        "path": "USER.md",
        "text": "",
        "corpora": [{"corpus": "wiki", "outcome": "not-registered"}],
        "warning": "Wiki corpus is not registered; results do not cover that requested corpus.",
    }
    both = rt.memory_get(ws, "USER.md", corpus="all")
    assert both["status"] == "ok" and both["corpora"] == [
        {"corpus": "memory", "outcome": "ok"},
        {"corpus": "wiki", "outcome": "not-registered"},
    ]
    assert "warning" not in both
    refused = rt.memory_get(ws, "memory.md", corpus="all")
    assert refused["status"] == "error" and refused["corpora"][0]["outcome"] == "unavailable"
    odd = rt.memory_get(ws, "USER.md", corpus="sessions")  # memory_get has no sessions corpus
    assert odd["status"] == "error" and odd["error"] == "corpus must be one of: memory, wiki, all"


def test_2026_04_get_is_unchanged(ws: Path) -> None:
    assert legacy_get(ws, "memory.md") == {"text": "legacy root notes\n", "path": "memory.md"}
    assert legacy_get(ws, "USER.md") == {"error": "path required", "path": "USER.md"}
    whole = "".join(f"l{i}\n" for i in range(300))
    (ws / "memory" / "big.md").write_text(whole)
    assert legacy_get(ws, "memory/big.md") == {"text": whole, "path": "memory/big.md"}


# ---------------------------------------------------------------- memory_search
@pytest.fixture
def index(ws: Path, tmp_path: Path) -> Any:
    from memlab.embed import resolve_embedder
    from memlab.store import MemoryIndex

    p = current_preset()
    idx = MemoryIndex(
        ws,
        db_path=tmp_path / "idx.sqlite",
        embedder=resolve_embedder("hashing"),
        memory_files=p.memory_files,
    )
    idx.sync()
    yield idx
    idx.close()


NOW = 1_764_547_200.0  # 2025-12-01 is older than every file: decay ≈ 1 for "now" files


def test_release_search_shape(index: Any) -> None:
    p = current_preset()
    res = rt.memory_search(index, "gateway laptop", pipeline=p, now=NOW)
    assert list(res) == ["results", "provider", "model", "fallback", "citations", "mode"]
    assert res["mode"] == "hybrid" and res["results"]
    order = ["path", "startLine", "endLine", "score", "vectorScore", "textScore", "snippet"]
    for r in res["results"]:
        keys = list(r)
        assert keys[:7] == order and keys[7] == "source"
        assert keys[-2:] == ["corpus", "citation"] and r["corpus"] == r["source"] == "memory"
        assert set(keys[8:-2]) <= {"importance", "triggers", "projectKey"}
        assert r["citation"] == rt.citation(r["path"], r["startLine"], r["endLine"])
        assert r["snippet"].endswith(f"\n\nSource: {r['citation']}")
        assert "<!--" not in r["snippet"]  # annotations never shown
    top = next(r for r in res["results"] if r["path"] == "MEMORY.md")
    assert top["importance"] == 8.0  # the index stores the annotation (openclaw-2026.9)
    off = rt.memory_search(index, "gateway laptop", pipeline=p, citations="off", now=NOW)
    assert all("citation" not in r and "Source:" not in r["snippet"] for r in off["results"])


def test_release_search_corpus_and_failures(index: Any) -> None:
    p = current_preset()
    full = rt.memory_search(index, "gateway", minScore=0, pipeline=p, now=NOW)
    mem = rt.memory_search(index, "gateway", minScore=0, corpus="memory", pipeline=p, now=NOW)
    assert mem["results"] == full["results"]
    both = rt.memory_search(index, "gateway", minScore=0, corpus="all", pipeline=p, now=NOW)
    assert both["results"] == full["results"] and both["corpora"][1]["outcome"] == "not-registered"
    wiki = rt.memory_search(index, "gateway", corpus="wiki", pipeline=p)
    assert wiki["results"] == [] and wiki["warning"].startswith("Wiki corpus is not registered")
    sess = rt.memory_search(index, "gateway", corpus="sessions", pipeline=p)
    assert (
        sess["unavailable"] is True and sess["error"] == "Session transcript search is not enabled."
    )
    # a bad argument is the caller's mistake, not an outage
    with pytest.raises(SearchArgumentError, match="corpus must be one of: memory, wiki, all"):
        rt.memory_search(index, "gateway", corpus="web", pipeline=p)
    one = rt.memory_search(index, "gateway", maxResults=1, minScore=0, pipeline=p, now=NOW)
    assert len(one["results"]) == 1
    kw = rt.memory_search(index, "gateway", minScore=0, pipeline=p.replace(vector=False), now=NOW)
    assert kw["mode"] == "keyword-only"
    assert all("vectorScore" not in r and "textScore" not in r for r in kw["results"])


def test_switch_follows_the_system() -> None:
    from memlab.pipeline.presets import preset
    from memlab.tools.variants import tool_variant

    assert tool_variant(preset("openclaw")).rules == "openclaw-2026.4"
    assert tool_variant(preset("openclaw-latest")).search is tool_variant(None).search
    assert tool_variant(current_preset()).search is rt.memory_search
    assert tool_variant("openclaw-2026.9").get_corpora == ("memory", "wiki", "all")
    assert rt.citation("memory/a.md", 5, 7) == "memory/a.md#L5-L7"  # spec §11
    from memlab.tools import get_root_file_allowed

    assert [
        get_root_file_allowed(n, "openclaw-2026.9") for n in ("USER.md", "memory.md", "Dreams.MD")
    ] == [True, False, True]
    assert [get_root_file_allowed(n) for n in ("USER.md", "memory.md", "Dreams.MD")] == [
        False,
        True,
        False,
    ]
    with pytest.raises(ValueError, match="memory_files must be one of"):
        get_root_file_allowed("MEMORY.md", "openclaw-2027")


# ------------------------------------------------------------- the command line
def test_cli_get_release_and_2026_04(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    current_preset()
    w = str(ws)
    code, out, _ = cli("get", w, "USER.md", "--preset", "openclaw-current")
    assert code == 0 and out == "# User\n\n- Prefers short answers.\n"
    code, out, err = cli("get", w, "memory.md", "--preset", "openclaw-current", "--json")
    assert code == 2 and json.loads(out) == {"path": "memory.md", **REFUSED}
    assert "path is not an allowed Markdown memory file" in err
    code, out, _ = cli("get", w, "MEMORY.md", "--preset", "openclaw-2026.9", "--lines", "2")
    assert code == 0 and out == "# Memory\n" + NOTICE.format(3) + "\n"
    code, out, _ = cli("get", w, "memory.md")  # 2026-04: the root memory.md is readable
    assert code == 0 and out == "legacy root notes\n"
    code, _, err = cli("get", w, "USER.md")
    assert code == 2 and "refused" in err
    code, _, err = cli("get", w, "USER.md", "--corpus", "all")
    assert code == 2 and "--preset openclaw-current" in err


def test_cli_search_json_release(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    current_preset()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    base = ["search", str(ws), "gateway laptop", "--embedder", "hashing", "--json"]
    code, out, err = cli(
        *base, "--preset", "openclaw-current", "--corpus", "all", "--now", "2025-12-01"
    )
    assert code == 0, err
    res = json.loads(out)
    assert res["corpora"][0] == {"corpus": "memory", "outcome": "ok"}
    assert list(res["results"][0])[:6] == [
        "path",
        "startLine",
        "endLine",
        "score",
        "vectorScore",
        "textScore",
    ]
    code, out, _ = cli(*base, "--min-score", "0")  # 2026-04: the old shape, no corpus
    assert code == 0 and "corpus" not in json.loads(out)["results"][0]
    # 2026-04: the corpora the MCP server takes too (memory, sessions, all) filter by source
    code, out, err = cli(*base, "--min-score", "0", "--corpus", "memory")
    res = json.loads(out)
    assert code == 0 and res["results"] and {r["source"] for r in res["results"]} == {"memory"}
    code, _, err = cli(*base, "--corpus", "wiki")  # the release's corpus only
    assert code == 2 and "openclaw-current" in err and "takes memory, sessions, all" in err


# ------------------------------------------------------------------ MCP server
@pytest.mark.slow
def test_mcp_release_tools(ws: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    current_preset()
    from mcp import Client

    from tests.test_server import data, stdio_params

    async def main() -> None:
        params = stdio_params(ws, tmp_path, "--preset", "openclaw-current")
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools["memory_get"].input_schema["properties"]) == {
                "path",
                "from",
                "lines",
                "corpus",
            }
            res = data(
                await client.call_tool("memory_search", {"query": "gateway laptop", "minScore": 0})
            )
            assert res["mode"] == "hybrid" and res["results"]
            assert {"vectorScore", "textScore", "corpus"} <= set(res["results"][0])
            got = data(await client.call_tool("memory_get", {"path": "USER.md"}))
            assert got["status"] == "ok" and got["lines"] == 3
            refused = data(await client.call_tool("memory_get", {"path": "memory.md"}))
            assert refused == {"path": "memory.md", **REFUSED}
            wiki = data(await client.call_tool("memory_get", {"path": "USER.md", "corpus": "wiki"}))
            assert wiki["corpora"] == [{"corpus": "wiki", "outcome": "not-registered"}]

    asyncio.run(main())
