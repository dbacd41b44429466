"""The synthetic query mix (memlab.datasets.synthetic.querymix): identifier, keyword, dated.

The per-question checks (``check_identifier``, ``check_keyword``, ``check_dated``) are
also run by ``tests/test_synthetic.check_invariants`` on every random config there.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.config.vocab import SYNTH_DEFAULT_MIX, SYNTH_PHENOMENA
from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import (
    MAX_NEAR_MISSES,
    SynthConfig,
    capacity,
    generate,
    load_negatives,
)
from memlab.datasets.synthetic import querymix as qm
from memlab.datasets.synthetic import querymix_wording as qw

MIX = ("identifier", "keyword", "dated")
KINDS = [k.kind for k in qw.ID_KINDS]
ALL_KINDS = [*KINDS, qw.ID_DIGIT_KIND.kind]  # the all-digit kind: SynthConfig.digit_ids
LOG_RE = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})\.md$")
ISO_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
WHEN_RE = re.compile(r"on ([A-Z][a-z]+) (\d{1,2})(?:, (\d{4}))?\?$")


def lines_of(ds: Dataset) -> dict[str, list[str]]:
    """path -> file lines (index 0 = line 1) of the default workspace."""
    ws = ds.workspaces["default"]
    return {
        str(p.relative_to(ws)): p.read_text(encoding="utf-8").split("\n")
        for p in sorted(ws.rglob("*.md"))
    }


def holds(text: str, token: str) -> bool:
    """``token`` occurs in ``text`` as a whole identifier: not inside a longer run of word
    characters, dots or dashes followed by more (``10.0.3.17`` is not in ``10.0.3.170``
    nor ``110.0.3.17``; it is in ``10.0.3.17:8443``)."""
    pat = rf"(?<![\w.\-/]){re.escape(token)}(?![\w]|[.\-/]\w)"
    return re.search(pat, text) is not None


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), plain DP."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _neg(neg: pd.DataFrame | None) -> pd.DataFrame:
    return neg if neg is not None else pd.DataFrame(columns=["path", "fact", "kind"])


def check_identifier(
    e: pd.DataFrame,
    neg: pd.DataFrame | None,
    query: str,
    token: str,
    files: dict[str, list[str]],
    cfg: SynthConfig,
) -> None:
    """The evidence line holds the identifier verbatim and is the only line that does; a
    bare query is the identifier alone, a question holds it; every near miss is exactly
    one edit away, in a line that never holds the identifier."""
    assert len(e) == 1
    path, line = e["path"].iloc[0], e["start_line"].iloc[0]
    assert holds(files[path][line - 1], token)
    assert sum(holds(ln, token) for lines in files.values() for ln in lines) == 1, token
    assert query == token or (holds(query, token) and query.endswith("?")), query
    misses = _neg(neg)
    assert len(misses) == cfg.near_misses and (misses["kind"] == "near-miss").all()
    found = set()
    for text in misses["fact"]:
        assert not holds(text, token)
        near = {
            w.rstrip(".:,;")
            for w in text.split()
            if edit_distance(w.rstrip(".:,;"), token) == 1 and len(w.rstrip(".:,;")) == len(token)
        }
        assert len(near) == 1, (token, text)
        found |= near
    assert len(found) == len(misses)  # distinct near misses


def check_keyword(
    e: pd.DataFrame, neg: pd.DataFrame | None, query: str, files: dict[str, list[str]]
) -> None:
    """A short keyword query (2-3 words, no question) whose words all occur in the
    evidence line and together in no other line; each partial negative holds some of
    them, not all."""
    assert len(e) == 1 and not query.endswith("?") and 2 <= len(query.split()) <= 3
    want = _words(query)
    path, line = e["path"].iloc[0], e["start_line"].iloc[0]
    assert want <= _words(files[path][line - 1])
    every = [
        (p, i) for p, lines in files.items() for i, ln in enumerate(lines, 1) if want <= _words(ln)
    ]
    assert every == [(path, line)], (query, every)
    partial = _neg(neg)
    assert len(partial) == 2 and (partial["kind"] == "partial").all()
    for text in partial["fact"]:
        assert 0 < len(want & _words(text)) < len(want)


def check_dated(
    e: pd.DataFrame, query: str, answer: str, files: dict[str, list[str]], cfg: SynthConfig
) -> None:
    """The evidence is the asked day's whole log (title to last line) holding the event
    (the answer) once; the question names the day (ISO, or month and day, with the year
    when the logs span over a year)."""
    assert len(e) == 1 and e["fact"].iloc[0] == answer
    path = e["path"].iloc[0]
    m = LOG_RE.match(path)
    assert m, path
    lines = files[path]
    assert e["start_line"].iloc[0] == 1 and lines[0] == f"# {m.group(1)}"
    assert e["end_line"].iloc[0] == len(lines) - 1 and lines[-1] == ""  # the last line
    assert sum(ln == f"- {answer}" for ln in lines) == 1
    day = dt.date.fromisoformat(m.group(1))
    iso = ISO_RE.search(query)
    if iso:
        assert dt.date.fromisoformat(iso.group(0)) == day
    else:
        w = WHEN_RE.search(query)
        assert w, query
        assert (qw.MONTHS.index(w.group(1)) + 1, int(w.group(2))) == (day.month, day.day)
        assert (w.group(3) is not None) == (cfg.days > 365)
    assert day.isoformat() not in answer  # only the log's name and title carry the date


def check_querymix(ds: Dataset, cfg: SynthConfig) -> None:
    """Every identifier, keyword and dated question of ``ds`` passes its check."""
    files = lines_of(ds)
    ev = dict(tuple(ds.evidence.groupby("qid")))
    neg = dict(tuple(load_negatives(ds.root).groupby("qid")))
    for row in ds.queries.itertuples():
        if row.category == "identifier":
            check_identifier(ev[row.qid], neg.get(row.qid), row.query, row.answer, files, cfg)
        elif row.category == "keyword":
            check_keyword(ev[row.qid], neg.get(row.qid), row.query, files)
        elif row.category == "dated":
            check_dated(ev[row.qid], row.query, row.answer, files, cfg)


# --- tests -------------------------------------------------------------------------------

CFG = SynthConfig(days=40, seed=4, queries_per_type=48, mix=MIX)


@pytest.fixture(scope="module")
def mix_ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return generate(CFG, tmp_path_factory.mktemp("mix") / "ds")


def test_registered_once_in_the_default_mix() -> None:
    assert set(MIX) <= set(SYNTH_PHENOMENA)
    assert SynthConfig().mix == SYNTH_DEFAULT_MIX
    assert set(MIX) <= set(SYNTH_DEFAULT_MIX) and "cjk" not in SYNTH_DEFAULT_MIX
    caps = capacity(SynthConfig(days=60))
    assert caps["identifier"] == qm.IDENTIFIERS_PER_KIND * len(qw.ID_KINDS)
    assert caps["keyword"] == 2 * (len(qw.KEYWORD_SUBJECTS) // 2) * (len(qw.KEYWORD_ATTRS) // 2)
    assert caps["dated"] == min(60, len(qw.DATED_EVENTS)) == len(qw.DATED_EVENTS)
    assert capacity(SynthConfig(days=7))["dated"] == 7


def test_every_question_passes_its_check(mix_ds: Dataset) -> None:
    assert mix_ds.info["counts"] == {"identifier": 48, "keyword": 48, "dated": 40}
    check_querymix(mix_ds, CFG)


def test_identifiers_cover_every_kind_and_two_thirds_are_bare(mix_ds: Dataset) -> None:
    q = mix_ds.queries[mix_ds.queries.category == "identifier"]
    kinds = Counter(_kind_of(tok) for tok in q["answer"])
    assert kinds == dict.fromkeys(KINDS, 48 // len(KINDS))  # rotation: equal shares
    bare = (q["query"] == q["answer"]).to_numpy()
    assert bare.sum() == 48 * 2 // 3
    # The form rotates (bare, bare, question) from a random start.
    assert all(bare[i] == bare[i + 3] for i in range(len(bare) - 3))


def _kind_of(tok: str) -> str:
    for kind, pat in (
        ("number", r"[1-9]\d{6}|00\d{5}|[1-9]\d{7,8}"),
        ("commit", r"[0-9a-f]{7}"),
        ("ticket", r"(INC|SUP|ENG|REL|CS|QA)-\d{4}"),
        ("hostport", r"10(\.\d{1,3}){3}:\d{4}"),
        ("ip", r"10(\.\d{1,3}){3}"),
        ("errcode", r"E\d{4}|ORA-\d{5}|ERR-\d{3}"),
        ("path", r"(migrations|deploy|scripts)/\S+\.(sql|yaml|py)"),
        ("version", r"v\d\.\d{1,2}\.\d{1,2}"),
        ("name", r"[a-z0-9]+-[a-z]+-\d{1,2}"),
    ):
        if re.fullmatch(pat, tok):
            return kind
    raise AssertionError(tok)


@settings(max_examples=250, deadline=None)
@given(kind=st.sampled_from(ALL_KINDS), seed=st.integers(0, 2**32))
def test_near_misses_are_one_edit_away_and_well_formed(kind: str, seed: int) -> None:
    """Every kind, the all-digit one too: a near miss is one edit away, never holds the
    identifier nor is held by it, keeps the kind's form, and both are identifiers by the
    one rule of what an identifier in a query is (``memlab.retrieval.textquery.identifier_terms``)."""
    from memlab.retrieval.textquery import holds_identifier, identifier_terms

    rng = random.Random(seed)
    tok = qm.fresh_identifier(kind, rng)
    assert _kind_of(tok) == kind
    assert identifier_terms(tok) == [tok]
    assert identifier_terms(f"what is {tok}?") == [tok]
    cands = qm.near_miss_candidates(tok, kind)
    assert len(cands) >= MAX_NEAR_MISSES and len(set(cands)) == len(cands)
    for c in cands:
        assert edit_distance(c, tok) == 1 and len(c) == len(tok)
        assert not holds(c, tok) and not holds(tok, c)
        assert not holds_identifier(c, tok) and not holds_identifier(tok, c)
        assert identifier_terms(c) == [c]
        assert _kind_of(c) == kind  # still well formed: a commit, an address ...
        if kind in ("ip", "hostport"):
            octets = [int(x) for x in c.split(":")[0].split(".")]
            assert octets[0] == 10 and all(o < 250 for o in octets)


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown identifier kind 'uuid'"):
        qm.fresh_identifier("uuid", random.Random(0))
    with pytest.raises(ValueError, match="unknown identifier kind"):
        qm.near_miss_candidates("x1", "uuid")


def test_each_category_is_its_own_stream(tmp_path: Path) -> None:
    """A category's questions, evidence wording and negatives do not depend on the other
    categories in the mix (only their placement in the files may move)."""
    base = dict(days=20, seed=9, queries_per_type=9)
    alone = {c: generate(SynthConfig(mix=(c,), **base), tmp_path / c) for c in MIX}
    together = generate(SynthConfig(mix=("paraphrase", "exact", *MIX), **base), tmp_path / "all")
    neg_all = load_negatives(together.root)
    for c, ds in alone.items():
        q = together.queries[together.queries.category == c].reset_index(drop=True)
        pd.testing.assert_frame_equal(ds.queries, q)
        facts = together.evidence[together.evidence.qid.str.startswith(c)]["fact"].tolist()
        assert ds.evidence["fact"].tolist() == facts
        neg = neg_all[neg_all.qid.str.startswith(c)]
        assert load_negatives(ds.root)["fact"].tolist() == neg["fact"].tolist()


def test_same_seed_same_bytes_other_seed_other_questions(tmp_path: Path) -> None:
    cfg = SynthConfig(days=10, seed=3, queries_per_type=6, mix=MIX)
    a, b = generate(cfg, tmp_path / "a"), generate(cfg, tmp_path / "b")
    for name in ("queries.jsonl", "evidence.jsonl", "negatives.jsonl", "workspace/MEMORY.md"):
        assert (a.root / name).read_bytes() == (b.root / name).read_bytes()
    c = generate(cfg, tmp_path / "c", seed=4)
    assert c.queries["query"].tolist() != a.queries["query"].tolist()


def test_near_misses_setting(tmp_path: Path) -> None:
    for k in (0, MAX_NEAR_MISSES):
        cfg = SynthConfig(days=6, seed=1, queries_per_type=8, mix=("identifier",), near_misses=k)
        ds = generate(cfg, tmp_path / str(k))
        check_querymix(ds, cfg)
        assert len(load_negatives(ds.root)) == 8 * k
    with pytest.raises(ValueError, match=f"near_misses must be <= {MAX_NEAR_MISSES}"):
        SynthConfig(near_misses=MAX_NEAR_MISSES + 1)
    with pytest.raises(ValueError, match="near_misses must be an integer >= 0"):
        SynthConfig(near_misses=-1)


def test_dated_names_the_year_beyond_a_year(tmp_path: Path) -> None:
    cfg = SynthConfig(days=400, seed=2, queries_per_type=12, notes_per_day=1, mix=("dated",))
    ds = generate(cfg, tmp_path / "long")
    check_querymix(ds, cfg)
    assert ds.queries["query"].str.contains(r", \d{4}\?$").any()


def test_keyword_capacity_is_reached(tmp_path: Path) -> None:
    cfg = SynthConfig(days=8, seed=5, queries_per_type=500, notes_per_day=2, mix=("keyword",))
    ds = generate(cfg, tmp_path / "kw")
    assert ds.info["counts"]["keyword"] == capacity(cfg)["keyword"]
    check_querymix(ds, cfg)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    days=st.integers(1, 25),
    seed=st.integers(0, 2**31),
    qpt=st.integers(0, 17),
    misses=st.integers(0, MAX_NEAR_MISSES),
    mix=st.lists(st.sampled_from(MIX), min_size=1, max_size=3, unique=True),
)
def test_checks_hold_for_random_configs(
    days: int, seed: int, qpt: int, misses: int, mix: list[str]
) -> None:
    cfg = SynthConfig(
        days=days,
        seed=seed,
        queries_per_type=qpt,
        notes_per_day=3,
        near_misses=misses,
        mix=tuple(mix),
    )
    with tempfile.TemporaryDirectory() as tmp:
        ds = generate(cfg, Path(tmp) / "ds")
        assert ds.info["counts"] == {c: min(qpt, capacity(cfg)[c]) for c in mix}
        check_querymix(ds, cfg)


def test_digit_ids_is_a_new_option_off_by_default(tmp_path: Path) -> None:
    """``digit_ids`` adds the all-digit kind to the rotation; off, the config records
    nothing new (the committed corpora regenerate byte for byte: test_synthetic_release)."""
    from memlab.datasets.synthetic import generated_with
    from memlab.datasets.synthetic.base import config_record

    assert "digit_ids" not in config_record(SynthConfig())
    cfg = SynthConfig(days=12, seed=4, queries_per_type=18, mix=("identifier",), digit_ids=True)
    assert config_record(cfg)["digit_ids"] is True
    assert capacity(cfg)["identifier"] == qm.IDENTIFIERS_PER_KIND * len(ALL_KINDS)
    ds = generate(cfg, tmp_path / "ds")
    assert generated_with(tmp_path / "ds", cfg)
    assert not generated_with(
        tmp_path / "ds", SynthConfig(days=12, seed=4, queries_per_type=18, mix=("identifier",))
    )
    q = ds.queries
    kinds = Counter(_kind_of(tok) for tok in q["answer"])
    assert kinds == dict.fromkeys(ALL_KINDS, 18 // len(ALL_KINDS))
    check_querymix(ds, cfg)
    with pytest.raises(ValueError, match="digit_ids must be true or false"):
        SynthConfig(digit_ids=1)
