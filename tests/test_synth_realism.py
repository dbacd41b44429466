"""The synthetic generator's realism knobs (``SynthConfig``: paraphrase, style, level,
confusability, mix_weights): their defaults write today's corpora byte for byte, and each
moves the statistic it is about, monotonically, without touching the rest."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from memlab.config.vocab import SYNTH_WORD_CATEGORIES
from memlab.datasets.synthetic import SynthConfig, generate
from memlab.datasets.synthetic.base import REALISM_KNOBS, config_record
from memlab.datasets.synthetic.lexicon import content_words
from memlab.datasets.synthetic.realism import reword_for, reworded, swapped_units
from memlab.datasets.synthetic.realism_wording import ALIASES, REWORDS
from memlab.eval.stats import corpus_stats
from tests.conftest import REPO, cli

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
SMALL = {"days": 12, "seed": 4, "queries_per_type": 8}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for name, data in _tree(root).items():
        h.update(name.encode())
        h.update(data)
    return h.hexdigest()


# ------------------------------------------------------------------ defaults: byte for byte
# sha256 over (relative path, bytes) of every file the generator writes, for corpora the
# demo, the lab and notebook 02 generate (the committed ones: test_synthetic_release). A
# change here is a change of every seeded corpus: make it deliberately, with its reason.
PINNED = {
    "demo": (
        {"days": 180, "notes_per_day": 60, "queries_per_type": 60, "seed": 7},
        "a58cd88839eff81766107710e0567a1f36e533bd677cc7a03bf062da15f37890",
    ),
    "lab": (
        {"days": 60, "seed": 0},
        "174b9ac6aba1f5fc9b49f2a000815452c73eab3db5e5b6dfdd97bfb3a74c03d1",
    ),
    "notebook": (
        {"days": 60, "seed": 7, "queries_per_type": 40},
        "323deddb6ba74ad686942bce67e940909de6c160cd01b199c59eff67d842d6ca",
    ),
    "knobs": (
        {
            "days": 30,
            "seed": 11,
            "distractors_per_fact": 3,
            "update_versions": 5,
            "redundancy_copies": 6,
            "near_misses": 4,
        },
        "84d1ae38b2492f99c44410586b2de96a871aec4e9132130e1544f3ec6e498ae4",
    ),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_default_knobs_write_the_corpora_byte_for_byte(name: str, tmp_path: Path) -> None:
    fields, digest = PINNED[name]
    generate(SynthConfig(**fields), tmp_path / "a")
    assert _digest(tmp_path / "a") == digest
    # the knobs named at their defaults are the same corpus, and dataset.json omits them
    generate(SynthConfig(**fields, **REALISM_KNOBS), tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    config = json.loads((tmp_path / "a" / "dataset.json").read_text())["info"]["config"]
    assert not set(config) & set(REALISM_KNOBS)


def test_a_knob_away_from_its_default_is_recorded() -> None:
    rec = config_record(SynthConfig(paraphrase=0.5, style="conversation", mix_weights=()))
    assert rec["paraphrase"] == 0.5 and rec["style"] == "conversation"
    assert "mix_weights" not in rec and "level" not in rec


# ------------------------------------------------------------------ paraphrase
@pytest.mark.parametrize("style", ["notes", "conversation"])
def test_overlap_falls_monotonically_over_paraphrase_by_at_least_0_3(
    style: str, tmp_path: Path
) -> None:
    stats = []
    for p in LEVELS:
        ds = generate(SynthConfig(**SMALL, paraphrase=p, style=style), tmp_path / f"{p}")
        stats.append(corpus_stats(ds))
    overall = [s["term_overlap"] for s in stats]
    assert all(a >= b for a, b in itertools.pairwise(overall)), overall
    assert overall[0] - overall[-1] >= 0.3, overall
    # per question, too: a larger share swaps a superset of units
    per = [s["per_query"].set_index("qid")["term_overlap"] for s in stats]
    for a, b in itertools.pairwise(per):
        assert ((a >= b - 1e-12) | a.isna()).all()


def test_paraphrase_reaches_both_ends_on_every_word_question(tmp_path: Path) -> None:
    """0: a reworded question's content terms are all in its evidence; 1: none is (the
    paraphrase category keeps its own table, tested in test_synthetic)."""
    for p, want in ((0.0, 1.0), (1.0, 0.0)):
        ds = generate(SynthConfig(**SMALL, paraphrase=p), tmp_path / f"{p}")
        rows = corpus_stats(ds)["per_query"]
        rows = rows[rows["category"].isin(set(SYNTH_WORD_CATEGORIES) - {"paraphrase"})]
        assert len(rows) == 4 * SMALL["queries_per_type"]
        assert (rows["term_overlap"] == want).all(), rows[rows["term_overlap"] != want]


def test_paraphrase_changes_the_questions_and_nothing_else(tmp_path: Path) -> None:
    a = generate(SynthConfig(**SMALL), tmp_path / "a")
    b = generate(SynthConfig(**SMALL, paraphrase=0.75), tmp_path / "b")
    assert _tree(a.workspaces["default"]) == _tree(b.workspaces["default"])
    assert a.evidence.equals(b.evidence)
    for name in ("negatives.jsonl",):
        assert (a.root / name).read_bytes() == (b.root / name).read_bytes()
    changed = a.queries["query"] != b.queries["query"]
    assert set(a.queries.loc[changed, "category"]) <= set(SYNTH_WORD_CATEGORIES)
    assert changed.sum() > 0


def test_every_reword_form_frames_with_evidence_words_and_swaps_to_none() -> None:
    """Each template's frame words are stop words (so p=0 reuses the evidence's words and
    p=1 none of them), and a swapped unit shares no stem with the unit it replaces."""
    for key, (template, units) in REWORDS.items():
        frame = template.format(*([""] * len(units)))
        assert not content_words(frame), (key, content_words(frame))
        for note, other in units:  # names and synonyms: the next test
            if not other.startswith("@") and other != "~":
                assert not content_words(other, stems=True) & content_words(note, stems=True)


def test_no_other_wording_shares_a_stem_with_a_fact_it_may_ask_about() -> None:
    """Every synonym against every line its question's evidence may hold (each family's
    values, each topic's facts, each initiative's and purpose's lines), every alias against
    every name: a fully reworded question shares no stem with its evidence."""
    from memlab.datasets.synthetic import facts as fx
    from memlab.datasets.synthetic import lexicon as lx
    from memlab.datasets.synthetic.realism_wording import SYNONYMS

    def stems(text: str) -> set[str]:
        return content_words(text, stems=True)

    for fam in fx.FAMILIES:
        for attr, values in fam.attrs:
            for v in values:
                line = fam.note.format(P="X Y", attr=attr, v=v.format(slug="abc"))
                assert not stems(SYNONYMS[attr]) & stems(line), (attr, v)
    for topic, lines in fx.REDUNDANCY_TOPICS:
        for line in lines:
            assert not stems(SYNONYMS[topic]) & stems(line.format(project="P", F="F")), topic
    for i in fx.INITIATIVES:
        assert not stems(SYNONYMS[i]) & stems(
            f"Kicked off the P {i} with F; P {i} shipped; F signed off"
        )
    for pur in fx.PURPOSES:
        for cause in fx.OUTAGE_CAUSES:
            line = f"X depends on the Y service for {pur}; Y service outage at 10:00: {cause}"
            assert not stems(SYNONYMS[pur]) & stems(line), (pur, cause)
    for aliases in ALIASES.values():
        for alias in aliases:
            for name in (*lx.PROJECTS, *lx.FIRST_NAMES, *lx.LAST_NAMES):
                assert not stems(alias) & stems(name), (alias, name)


def test_swapped_units_are_nested_and_keep_names_to_the_end() -> None:
    import random

    rw = reword_for("Where does {P} prefer to be pinged?", P="Priya Natarajan")
    sets = [swapped_units(rw, s, random.Random(1)) for s in LEVELS]
    assert all(a <= b for a, b in itertools.pairwise(sets))
    name = next(i for i, u in enumerate(rw.units) if u[2])
    assert all(name not in s for s in sets[:-1]) and name in sets[-1]
    assert reworded(rw, 0.0, random.Random(1)) == "Priya Natarajan prefers to be pinged on what?"
    assert reworded(rw, 1.0, random.Random(1)).endswith(" likes to be contacted on what?")


# ------------------------------------------------------------------ style, level, mix
def test_conversation_style_writes_sessions_of_user_and_assistant_turns(tmp_path: Path) -> None:
    ds = generate(SynthConfig(**SMALL, style="conversation"), tmp_path / "c")
    ws = ds.workspaces["default"]
    assert not (ws / "MEMORY.md").exists()
    files = sorted((ws / "memory").glob("*.md"))
    assert len(files) == SMALL["days"]
    for f in files:
        lines = f.read_text().splitlines()
        assert lines[0].startswith("## Session ") and len(lines) % 2 == 1
        assert all(ln.startswith("User: ") for ln in lines[1::2])
        assert all(ln.startswith("Assistant: ") for ln in lines[2::2])
    # every evidence line is a user turn stating its fact
    for e in ds.evidence.itertuples():
        if e.start_line == e.end_line:
            line = (ws / e.path).read_text().splitlines()[e.start_line - 1]
            assert line.startswith("User: ") and e.fact in line
    assert corpus_stats(ds)["style"] == "conversation"


def test_file_level_makes_every_span_a_whole_file(tmp_path: Path) -> None:
    ds = generate(SynthConfig(**SMALL, level="file", style="conversation"), tmp_path / "f")
    assert ds.info["level"] == "file"
    ws = ds.workspaces["default"]
    for e in ds.evidence.itertuples():
        assert e.start_line == 1
        assert e.end_line == len((ws / e.path).read_text().splitlines())


def test_confusability_raises_the_best_other_unit_monotonically(tmp_path: Path) -> None:
    got, overlap = [], []
    for c in (None, 0.0, 0.5, 1.0):
        s = corpus_stats(generate(SynthConfig(**SMALL, confusability=c), tmp_path / f"{c}"))
        got.append(s["distractor_overlap"])
        overlap.append(s["term_overlap"])
    # look-alike lines are never evidence: a line's terms, and so the overlap, stay
    assert overlap == pytest.approx([overlap[0]] * 4)
    assert got[1] <= got[2] <= got[3] and got[3] - got[0] >= 0.2, got


def test_mix_weights_scale_each_category(tmp_path: Path) -> None:
    cfg = SynthConfig(
        days=12, seed=1, queries_per_type=10, mix=("update", "multi"), mix_weights=(0.5, 2)
    )
    ds = generate(cfg, tmp_path / "m")
    assert ds.info["counts"] == {"update": 5, "multi": 20}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"paraphrase": 1.5}, "paraphrase must be None or a number in [0, 1]"),
        ({"confusability": -0.1}, "confusability must be None"),
        ({"style": "chat"}, "style must be one of"),
        ({"level": "session"}, "level must be one of"),
        ({"mix_weights": (1.0,)}, "one number >= 0 per category of mix"),
        ({"mix_weights": "a,b"}, "mix_weights must be numbers"),
        ({"style": "conversation", "mix": ("update", "trigger")}, "need files of their own"),
    ],
)
def test_bad_knobs_are_refused_naming_the_field(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SynthConfig(**fields)


def test_memlab_synth_sets_the_knobs(tmp_path: Path) -> None:
    code, _out, err = cli(
        "synth", str(tmp_path / "s"), "--days", "8", "--queries-per-type", "3",
        "--set", "paraphrase=1", "--set", "style=conversation", "--set", "mix_weights=1,1,1,1,1,1,1,1,2",
    )  # fmt: skip
    assert code == 0, err
    rec = json.loads((tmp_path / "s" / "dataset.json").read_text())["info"]["config"]
    assert rec["paraphrase"] == 1 and rec["style"] == "conversation"
    code, _, err = cli("synth", str(tmp_path / "t"), "--set", "style=chat")
    assert code == 2 and "style must be one of" in err


# ------------------------------------------------------------------ the ladder
def test_a_ladder_is_each_level_on_one_workspace(tmp_path: Path) -> None:
    from memlab.datasets.synthetic.ladder import level_qid, level_subset, write_ladder

    cfg = SynthConfig(**SMALL, style="conversation")
    lad = write_ladder(cfg, [0.0, 1.0], tmp_path / "ladder")
    for p in (0.0, 1.0):
        one = generate(replace_knob(cfg, p), tmp_path / f"one-{p}")
        sub = level_subset(lad, p)
        assert sub.queries["query"].tolist() == one.queries["query"].tolist()
        assert sub.queries["qid"].tolist() == [level_qid(p, q) for q in one.queries["qid"]]
        assert sub.evidence.drop(columns="qid").equals(one.evidence.drop(columns="qid"))
        assert _tree(lad.workspaces["default"]) == _tree(one.workspaces["default"])
    with pytest.raises(ValueError, match="confusability must be None"):
        write_ladder(SynthConfig(confusability=0.5), [0.0], tmp_path / "x")


def replace_knob(cfg: SynthConfig, p: float) -> SynthConfig:
    from dataclasses import replace

    return replace(cfg, paraphrase=p)


@pytest.mark.parametrize("style", ["notes", "conversation"])
def test_the_committed_ladders_regenerate_byte_identical(style: str, tmp_path: Path) -> None:
    from memlab.datasets.synthetic.ladder import write_ladder
    from memlab.eval.realism import LADDERS
    from memlab.eval.realism import LEVELS as CURVE_LEVELS

    write_ladder(SynthConfig(**LADDERS[style]), list(CURVE_LEVELS), tmp_path / style)
    assert _tree(tmp_path / style) == _tree(REPO / "datasets" / f"realism-{style}")
