"""Identifiers never sink: the identifier rule, the keyword leg's floor,
the identifier tier, and the recommended presets finding a bare identifier at rank 1."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.pipeline.presets import preset
from memlab.retrieval.fusion import NORMALIZATIONS, floor_value, normalize
from memlab.retrieval.textquery import holds_identifier, identifier_terms
from tests.conftest import cli

# ----------------------------------------------------------------- what an identifier is

NAMED = {
    "a828e60": ["a828e60"],
    "INC-3317": ["INC-3317"],
    "Which change is 008ed78?": ["008ed78"],
    "gw-prod-7 at 10.0.3.17:8443": ["gw-prod-7", "10.0.3.17:8443"],
    "what is on /etc/hosts and memory/projects/net.md": ["/etc/hosts", "memory/projects/net.md"],
    "v3.18.2, E4012 and ORA-01555.": ["v3.18.2", "E4012", "ORA-01555"],
    "user_id of bob@host": ["user_id", "bob@host"],
    "What happened on 2026-03-03?": ["2026-03-03"],
    "issue #4512 in config.yaml (Node.js)": ["#4512", "config.yaml", "Node.js"],
    "A828E60 or a828e60": ["A828E60"],  # de-duplicated case-insensitively
    "4410923": ["4410923"],  # a short commit hash that is all digits
    "was 226501f reverted?": ["226501f"],  # hex digits, then letters: a hash, not a unit
    "what was order 0031877?": ["0031877"],  # a leading zero
    "invoice 482203917 and ref 123456": ["482203917", "123456"],  # 6 digits or more
}
NOT_NAMED = [
    "gateway host",
    "Bought a second-hand road bike",
    "meet at 3pm on the 1st, 20km ride",
    "and/or e.g. 2026 or 42",
    "12000 users since 2019, up at 0830, agent 007",  # counts, years, times
    "44100hz at 1080p, 42f outside, 1024kb left",  # units
    "",
]


@pytest.mark.parametrize("query", list(NAMED))
def test_identifiers_a_query_names(query: str) -> None:
    assert identifier_terms(query) == NAMED[query]


@pytest.mark.parametrize("query", NOT_NAMED)
def test_plain_words_numbers_and_hyphenated_words_are_not_identifiers(query: str) -> None:
    assert identifier_terms(query) == []


def test_held_verbatim_as_a_whole_word_any_case() -> None:
    assert holds_identifier("merged in commit A828E60.", "a828e60")
    assert not holds_identifier("commit a828e601", "a828e60")  # a longer word
    assert not holds_identifier("INC-33170", "INC-3317")
    assert holds_identifier("gw at 10.0.3.17:8443", "10.0.3.17")  # an address in host:port
    assert holds_identifier("memory/2026-03-03.md", "2026-03-03")  # a path holds a date


# ------------------------------------------------------------------- the keyword floor


def test_floor_value_worked_examples() -> None:
    row = np.array([[1.0, 2.0, 3.0]])
    std = np.sqrt(2 / 3)
    assert floor_value(row, "zscore", 0.0)[0, 0] == pytest.approx(-2 / std)  # (0 − 2)/std
    assert floor_value(row, "minmax", 0.0)[0, 0] == pytest.approx(-0.5)  # (0 − 1)/(3 − 1)
    assert floor_value(row, "none", 0.0)[0, 0] == 0.0
    assert floor_value(row, "max", 0.0)[0, 0] == 0.0
    for m in ("theoretical", "rank"):
        assert floor_value(row, m, 0.0)[0, 0] == 0.0
    # one hit, or equal hits: the hits normalise to 0 (zscore) / 1 (minmax); floor −1 / 0
    assert floor_value(np.array([[4.0, np.nan]]), "zscore", 0.0)[0, 0] == -1.0
    assert floor_value(np.array([[4.0, 4.0]]), "minmax", 0.0)[0, 0] == 0.0
    # bunched hits far from the bound: clamped at the hits' spread (z: −1 and 1 → −3)
    bunched = np.array([[10.0, 10.001]])
    assert floor_value(bunched, "zscore", 0.0)[0, 0] == pytest.approx(-3.0)
    assert floor_value(bunched, "minmax", 0.0)[0, 0] == pytest.approx(-1.0)
    # an empty row: 0, −1 for zscore, `lower` for none
    empty = np.full((1, 3), np.nan)
    assert floor_value(empty, "zscore", 0.0)[0, 0] == -1.0
    assert floor_value(empty, "minmax", 0.0)[0, 0] == 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1e-3, 1e3) | st.just(np.nan), min_size=1, max_size=12),
    st.sampled_from([m for m in NORMALIZATIONS if m != "sigmoid"]),
)
def test_every_match_stays_above_the_floor(scores: list[float], method: str) -> None:
    """A keyword score is > 0; under every normalisation but sigmoid (whose image of 0 is
    ½ while tiny scores map just above it) each match normalises strictly above the
    floor a non-match gets."""
    x = np.array([scores])
    present = ~np.isnan(x)
    norm = normalize(x, method, lower=0.0)
    floor = floor_value(x, method, 0.0)
    if present.any():
        assert (norm[present] > floor[0, 0]).all()


# ----------------------------------------- the presets put the holder of an identifier first


def _identifier(kind: int, n: int) -> str:
    return [f"a{n:06x}"[:7], f"INC-{3000 + n}", f"10.0.{n % 200}.{n % 250}:8443"][kind]


def _near_miss(ident: str) -> str:
    return ident[:-1] + ("1" if ident[-1] != "1" else "2")


BACKGROUND = (
    "Planned the weekend ride along the river",
    "The gateway restarted after the certificate change",
    "Coffee with Dana about the quarterly budget",
    "The backup job ran on the staging disk again",
    "Fixed the login loop and merged the change",
    "Ordered new tyres for the road bike",
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.integers(0, 2),
    n=st.integers(1, 180),
    files=st.integers(2, 5),
    holder=st.integers(0, 4),
    misses=st.integers(0, 3),
    in_question=st.booleans(),
)
def test_the_one_chunk_holding_an_identifier_ranks_first(
    tmp_path_factory: pytest.TempPathFactory,
    kind: int,
    n: int,
    files: int,
    holder: int,
    misses: int,
    in_question: bool,
) -> None:
    """Any workspace where exactly one chunk holds the query's identifier (others hold
    near misses one edit away and background lines that share its topic): that chunk is
    first under memlab-best and memlab-best-chunk, the query bare or inside a question."""
    from memlab.embed import HashingEmbedder
    from memlab.store import MemoryIndex

    ws = tmp_path_factory.mktemp("ws")
    ident = _identifier(kind, n)
    holder %= files
    for f in range(files):
        lines = [f"# 2026-03-0{f + 1}", *(f"- {BACKGROUND[(f + i) % 6]}." for i in range(4))]
        if f == holder:
            lines.insert(2, f"- Logged {ident} during the change.")
        elif f < misses + (f > holder):
            lines.insert(2, f"- Logged {_near_miss(ident)} during the change.")
        (ws / "memory").mkdir(exist_ok=True)
        (ws / "memory" / f"2026-03-0{f + 1}.md").write_text("\n".join(lines) + "\n")
    query = f"What happened with {ident}?" if in_question else ident
    holder_path = f"memory/2026-03-0{holder + 1}.md"
    for name in ("memlab-best", "memlab-best-chunk"):
        p = preset(name)
        spec = p.retrieval_spec()
        idx = MemoryIndex(
            ws,
            db_path=ws.parent / f"{ws.name}-{name}.sqlite",
            embedder=HashingEmbedder(64),
            fts_tokenizer=spec.fts_tokenizer or "unicode61",
            memory_files=spec.memory_files,
            progress=False,
        )
        try:
            idx.sync()
            paths = p.search(idx, query, with_text=False)["path"].tolist()
        finally:
            idx.close()
        assert paths and paths[0] == holder_path, (name, query, paths)


@pytest.mark.usefixtures("private_cache")
def test_search_finds_bare_identifiers_with_near_misses_at_rank_1(tmp_path: Path) -> None:
    """`memlab synth --mix identifier` (identifiers with near-miss distractors), then
    `memlab search --json` as a user would: every bare identifier bm25 finds at rank 1,
    memlab-best and memlab-best-chunk find at rank 1 too — and each finds all of them."""
    corpus = tmp_path / "corpus"
    code, _, err = cli(
        "synth", str(corpus), "--days", "20", "--mix", "identifier", "--queries-per-type", "12"
    )
    assert code == 0, err
    queries = [json.loads(x) for x in (corpus / "queries.jsonl").read_text().splitlines()]
    evidence = {}
    for line in (corpus / "evidence.jsonl").read_text().splitlines():
        e = json.loads(line)
        evidence[e["qid"]] = (e["path"], e["start_line"])
    bare = [q for q in queries if q["query"] == q["answer"]]
    assert len(bare) >= 6
    first: dict[str, list[bool]] = {}
    for name in ("bm25", "memlab-best", "memlab-best-chunk"):
        for q in bare:
            code, out, err = cli(
                "search",
                str(corpus / "workspace"),
                q["query"],
                "--preset",
                name,
                "--embedder",
                "hashing",
                "--json",
            )
            assert code == 0, err
            hits = json.loads(out)["results"]
            path, line = evidence[q["qid"]]
            top = hits[0] if hits else None
            first.setdefault(name, []).append(
                top is not None
                and top["path"] == path
                and top["startLine"] <= line <= top["endLine"]
            )
    for name in ("memlab-best", "memlab-best-chunk"):
        assert all(b <= m for b, m in zip(first["bm25"], first[name], strict=True)), name
        assert all(first[name]), name


@pytest.mark.usefixtures("private_cache")
def test_explain_names_the_rule(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-03-01.md").write_text("# 2026-03-01\n- Merged commit a828e60.\n")
    (ws / "MEMORY.md").write_text("# Memory\n- Bought a second-hand road bike.\n")
    code, out, err = cli(
        "search",
        str(ws),
        "a828e60",
        "--preset",
        "memlab-best",
        "--embedder",
        "hashing",
        "--explain",
    )
    assert code == 0, err
    assert "keyword non-match: text_norm of a 0 score, below every match" in out
    assert "identifier tier: units holding more of a828e60 lead (ids_held)" in out
    assert out.index("memory/2026-03-01.md") < out.index("MEMORY.md")
