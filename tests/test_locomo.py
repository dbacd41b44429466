"""LoCoMo loader: synthetic defect handling (always runs) and the real dev split (marked locomo)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.datasets.base import load_folder
from memlab.datasets.locomo import (
    LOCOMO_CATEGORIES,
    load_locomo,
    locomo_default_path,
    normalise_dia_id,
    parse_locomo_datetime,
)

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip


def _real_path() -> Path:
    env = os.environ.get("MEMLAB_LOCOMO")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared/datasets/locomo/locomo-dev.json"


# --------------------------------------------------------------------------- synthetic


def _turn(dia: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


SYNTH = [
    {
        "sample_id": "syn-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("D1:1", "Ann", "Hi Bob!"),
                _turn(
                    "D1:2",
                    "Bob",
                    "Look at my dog.",
                    img_url=["http://example.invalid/x.jpg"],
                    blip_caption="a photo of a dog\non a beach",
                ),
                _turn("D1:3", "Ann", "Cute!\n\nWhat is\r\nhis name?"),
            ],
            "session_2_date_time": "10:15 pm on 8 May, 2023",
            "session_2": [_turn("D2:1", "Bob", "Rex."), _turn("D2:2", "Ann", "Nice name.")],
            "session_3_date_time": "12:05 am on 10 June, 2023",
            "session_3": [_turn("D3:1", "Ann", "Rex ran away today.")],
            "session_4_date_time": "3:00 pm on 1 July, 2023",
        },
        "qa": [
            {"question": "Q0", "answer": "a", "evidence": ["D1:1"], "category": 4},
            {"question": "Q1", "answer": "b", "evidence": ["D1:2; D2:1"], "category": 1},
            {
                "question": "Q2",
                "answer": "c",
                "evidence": ["D1:3 D3:1", "D:2:2", "D03:01"],
                "category": 2,
            },
            {"question": "Q3", "answer": "d", "evidence": ["D", "D9:9", "D1:99"], "category": 3},
            {"question": "Q4", "adversarial_answer": "e", "evidence": [], "category": 5},
            {
                "question": "Q5",
                "answer": "No",
                "adversarial_answer": "Yes",
                "evidence": ["D2:2"],
                "category": 5,
            },
            {"question": "Q6", "answer": 2022, "evidence": ["D1:1", "D1:1"], "category": 2},
        ],
    }
]

SYNTH_DEFECTS = {
    "evidence_multi_id_strings": 2,  # "D1:2; D2:1", "D1:3 D3:1"
    "evidence_ids_normalised": 1,  # D:2:2
    "evidence_ids_malformed": 1,  # D
    "evidence_ids_unknown_turn": 2,  # D9:9, D1:99
    "evidence_ids_duplicate": 2,  # D03:01 after D3:1, D1:1 twice
    "evidence_not_a_list": 0,
    "questions_without_evidence": 2,  # Q3, Q4
    "adversarial_without_answer": 1,  # Q4
    "questions_without_answer": 0,
    "unknown_categories": 0,
    "turns_multiline_flattened": 2,  # D1:2 caption, D1:3 text
    "turns_missing_text": 0,
    "turn_ids_normalised": 0,
    "turn_ids_malformed": 0,
    "turn_ids_duplicate": 0,
    "dated_sessions_without_turns": 1,  # session_4
}


@pytest.fixture
def synth_file(tmp_path: Path) -> Path:
    path = tmp_path / "synth.json"
    path.write_text(json.dumps(SYNTH))
    return path


@pytest.fixture
def synth(synth_file: Path, tmp_path: Path):
    return load_locomo(synth_file, tmp_path / "out")


def test_synthetic_daily_files_have_one_line_per_turn(synth) -> None:
    ws = synth.workspaces["syn-1"]
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()) == [
        "memory/2023-05-08.md",
        "memory/2023-06-10.md",
    ]
    assert (ws / "memory/2023-05-08.md").read_text().splitlines() == [
        "## Session 1 — 1:56 pm on 8 May, 2023",
        "[D1:1] Ann: Hi Bob!",
        "[D1:2] Bob: Look at my dog. [image: a photo of a dog on a beach]",
        "[D1:3] Ann: Cute! What is his name?",
        "",
        "## Session 2 — 10:15 pm on 8 May, 2023",
        "[D2:1] Bob: Rex.",
        "[D2:2] Ann: Nice name.",
    ]
    assert (ws / "memory/2023-06-10.md").read_text() == (
        "## Session 3 — 12:05 am on 10 June, 2023\n[D3:1] Ann: Rex ran away today.\n"
    )
    assert not (ws / "MEMORY.md").exists()


def test_synthetic_evidence_spans_and_defects(synth) -> None:
    ev = synth.evidence
    got = [(r.qid, r.span_id, r.path, r.start_line, r.end_line, r.grade) for r in ev.itertuples()]
    may, june = "memory/2023-05-08.md", "memory/2023-06-10.md"
    assert got == [
        ("syn-1:q0", "D1:1", may, 2, 2, 1),
        ("syn-1:q1", "D1:2", may, 3, 3, 1),
        ("syn-1:q1", "D2:1", may, 7, 7, 1),
        ("syn-1:q2", "D1:3", may, 4, 4, 1),
        ("syn-1:q2", "D3:1", june, 2, 2, 1),
        ("syn-1:q2", "D2:2", may, 8, 8, 1),
        ("syn-1:q5", "D2:2", may, 8, 8, 1),
        ("syn-1:q6", "D1:1", may, 2, 2, 1),
    ]
    assert synth.info["defects"] == SYNTH_DEFECTS
    assert synth.info["evidence_entries"] == 11
    assert synth.info["evidence_ids_total"] == 13
    assert synth.info["evidence_ids_valid"] == 8
    assert (synth.info["sessions"], synth.info["turns"], synth.info["images"]) == (3, 6, 1)


def test_synthetic_queries(synth) -> None:
    q = synth.queries
    assert list(q["qid"]) == [f"syn-1:q{i}" for i in range(7)]
    assert set(q["group"]) == {"syn-1"}
    assert list(q["category_id"]) == [4, 1, 2, 3, 5, 5, 2]
    assert list(q["category"]) == [LOCOMO_CATEGORIES[c] for c in [4, 1, 2, 3, 5, 5, 2]]
    assert list(q["answer"]) == ["a", "b", "c", "d", "e", "No", "2022"]
    assert list(q["answer_is_adversarial"]) == [False] * 4 + [True, False, False]
    expected_time = datetime(2023, 6, 11, 0, 5, tzinfo=UTC).timestamp()
    assert (q["time"] == expected_time).all()
    assert synth.info["questions_per_category"] == {
        "adversarial": 2,
        "multi-hop": 1,
        "open-domain": 1,
        "single-hop": 1,
        "temporal": 2,
    }
    assert synth.info["license"] == "CC BY-NC 4.0"


def test_synthetic_same_date_sessions_keep_session_order(tmp_path: Path) -> None:
    # Session 2 is earlier in the day than session 1: the file keeps session order.
    data = json.loads(json.dumps(SYNTH))
    conv = data[0]["conversation"]
    conv["session_2_date_time"] = "9:00 am on 8 May, 2023"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    ds = load_locomo(path, tmp_path / "o")
    lines = (ds.workspaces["syn-1"] / "memory/2023-05-08.md").read_text().splitlines()
    assert [ln for ln in lines if ln.startswith("## ")] == [
        "## Session 1 — 1:56 pm on 8 May, 2023",
        "## Session 2 — 9:00 am on 8 May, 2023",
    ]


def test_out_dir_reuse_and_overwrite(synth_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = load_locomo(synth_file, out)
    (out / "sentinel.txt").write_text("kept while reused")
    again = load_locomo(synth_file, out)
    assert (out / "sentinel.txt").exists()
    assert again.fingerprint == first.fingerprint
    assert again.info == first.info
    rebuilt = load_locomo(synth_file, out, overwrite=True)
    assert not (out / "sentinel.txt").exists()
    assert rebuilt.fingerprint == first.fingerprint
    # A different source into the same folder needs overwrite.
    other = tmp_path / "other.json"
    data = json.loads(json.dumps(SYNTH))
    data[0]["qa"] = data[0]["qa"][:2]
    other.write_text(json.dumps(data))
    with pytest.raises(FileExistsError, match="overwrite=True"):
        load_locomo(other, out)
    assert len(load_locomo(other, out, overwrite=True).queries) == 2


def test_foreign_non_empty_out_dir_is_never_deleted(synth_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("user data")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match="not written by memlab"):
            load_locomo(synth_file, out, overwrite=overwrite)
    assert (out / "notes.txt").read_text() == "user data"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert len(load_locomo(synth_file, empty).queries) == 7


def test_default_out_dir_is_cache_keyed_by_sha(
    synth_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = load_locomo(synth_file)
    sha = hashlib.sha256(synth_file.read_bytes()).hexdigest()
    assert ds.root == tmp_path / "cache" / "memlab" / f"locomo-{sha[:12]}"
    assert ds.info["source_sha256"] == sha
    assert load_folder(ds.root).fingerprint == ds.fingerprint
    assert not list((tmp_path / "cache" / "memlab").glob(".*tmp*"))


def test_build_is_deterministic(synth_file: Path, tmp_path: Path) -> None:
    a = load_locomo(synth_file, tmp_path / "a")
    b = load_locomo(synth_file, tmp_path / "b")
    assert a.fingerprint == b.fingerprint
    assert a.queries.equals(b.queries) and a.evidence.equals(b.evidence)


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.json"):
        load_locomo(tmp_path / "nope.json", tmp_path / "o")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a LoCoMo JSON"):
        load_locomo(bad, tmp_path / "o1")
    bad.write_text(json.dumps({"sample_id": "x"}))
    with pytest.raises(ValueError, match="expected a JSON list of LoCoMo samples"):
        load_locomo(bad, tmp_path / "o2")
    bad.write_text(json.dumps([{"sample_id": "x", "conversation": {}}]))
    with pytest.raises(ValueError, match="'qa'"):
        load_locomo(bad, tmp_path / "o3")
    undated = json.loads(json.dumps(SYNTH))
    del undated[0]["conversation"]["session_3_date_time"]
    bad.write_text(json.dumps(undated))
    with pytest.raises(ValueError, match="session_3_date_time"):
        load_locomo(bad, tmp_path / "o4")
    assert not (tmp_path / "o4").exists()
    assert not list(tmp_path.glob(".o*.tmp-*"))


def test_missing_default_path_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMLAB_LOCOMO", str(tmp_path / "absent.json"))
    assert locomo_default_path() == tmp_path / "absent.json"
    with pytest.raises(FileNotFoundError, match=r"absent\.json"):
        load_locomo()


def test_default_path_without_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLAB_LOCOMO", raising=False)
    beside = Path(__file__).resolve().parents[2] / "shared/datasets/locomo/locomo-dev.json"
    assert locomo_default_path() == (beside if beside.is_file() else None)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D3:5", "D3:5"),
        (" D3:5 ", "D3:5"),
        ("D:11:26", "D11:26"),
        ("D30:05", "D30:5"),
        ("D", None),
        ("11:26", None),
        ("D3", None),
        ("D3:5:1", None),
        ("", None),
    ],
)
def test_normalise_dia_id(raw: str, expected: str | None) -> None:
    assert normalise_dia_id(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
        ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30)),
        ("10:04 am on 19 December, 2023", datetime(2023, 12, 19, 10, 4)),
        ("7:31 PM on 21 Jan 2022", datetime(2022, 1, 21, 19, 31)),
    ],
)
def test_parse_locomo_datetime(text: str, expected: datetime) -> None:
    assert parse_locomo_datetime(text) == expected.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    ["13:00 pm on 1 May, 2023", "1:60 pm on 1 May, 2023", "1:56 pm on 31 February, 2023",
     "1:56 pm on 8 Mai, 2023", "8 May 2023", ""],
)  # fmt: skip
def test_parse_locomo_datetime_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"LoCoMo date|impossible"):
        parse_locomo_datetime(text)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)))
def test_parse_locomo_datetime_roundtrip(dt: datetime) -> None:
    dt = dt.replace(second=0, microsecond=0)
    hour12 = dt.hour % 12 or 12
    ampm = "am" if dt.hour < 12 else "pm"
    text = f"{hour12}:{dt.minute:02d} {ampm} on {dt.day} {MONTHS[dt.month - 1]}, {dt.year}"
    assert parse_locomo_datetime(text) == dt.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- real dev split

SESSION = re.compile(r"^session_(\d+)$")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory):
    path = _real_path()
    if not path.is_file():
        pytest.skip(f"LoCoMo not found at {path} (set MEMLAB_LOCOMO to the dev JSON)")
    raw = json.loads(path.read_text())
    return path, raw, load_locomo(path, tmp_path_factory.mktemp("locomo") / "out")


def _sessions(conv: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]]]]:
    nums = sorted(int(m.group(1)) for k in conv if (m := SESSION.match(k)))
    return [(n, conv[f"session_{n}"]) for n in nums if conv[f"session_{n}"]]


def _scan_defects(raw: list[dict[str, Any]]) -> dict[str, int]:
    """Independent tally of the evidence defects, straight from the raw JSON."""
    keys = (
        "adv_no_answer",
        "duplicate",
        "malformed",
        "multi",
        "no_evidence",
        "normalised",
        "unknown",
    )
    c: Counter[str] = Counter(dict.fromkeys(keys, 0))
    for s in raw:
        ids = {t["dia_id"] for _, turns in _sessions(s["conversation"]) for t in turns}
        for q in s["qa"]:
            kept: list[str] = []
            for entry in q["evidence"]:
                parts = entry.replace(";", " ").split()
                c["multi"] += len(parts) > 1
                for p in parts:
                    nums = re.findall(r"\d+", p)
                    if not re.fullmatch(r"D:?\d+:\d+", p):
                        c["malformed"] += 1
                        continue
                    norm = "D{}:{}".format(*map(int, nums))
                    if norm not in ids:
                        c["unknown"] += 1
                    elif norm in kept:
                        c["duplicate"] += 1
                    else:
                        c["normalised"] += norm != p
                        kept.append(norm)
            c["no_evidence"] += not kept
            c["adv_no_answer"] += q["category"] == 5 and "answer" not in q
    return {k: c[k] for k in sorted(c)}


@pytest.mark.locomo
def test_real_counts(real) -> None:
    _, raw, ds = real
    cats = Counter(q["category"] for s in raw for q in s["qa"])
    assert len(raw) == 5 and sum(cats.values()) == 998
    assert cats == {4: 418, 5: 237, 2: 156, 1: 142, 3: 45}
    assert ds.info["conversations"] == len(raw) == len(ds.workspaces)
    assert set(ds.workspaces) == {s["sample_id"] for s in raw}
    assert len(ds.queries) == 998
    assert ds.info["questions_per_category"] == {LOCOMO_CATEGORIES[c]: n for c, n in cats.items()}
    assert Counter(ds.queries["category"]) == {LOCOMO_CATEGORIES[c]: n for c, n in cats.items()}
    sessions = [sess for s in raw for sess in _sessions(s["conversation"])]
    assert ds.info["sessions"] == len(sessions)
    assert ds.info["turns"] == sum(len(turns) for _, turns in sessions)
    lines = [ln for ws in ds.workspaces.values() for p in ws.rglob("*.md") for ln in p.read_text().splitlines()]  # fmt: skip
    assert sum(ln.startswith("## Session ") for ln in lines) == ds.info["sessions"]
    assert sum(ln.startswith("[D") for ln in lines) == ds.info["turns"]
    assert all(ln == "" or ln.startswith(("## Session ", "[D")) for ln in lines)


@pytest.mark.locomo
def test_real_defects_match_independent_scan(real) -> None:
    _, raw, ds = real
    scan = _scan_defects(raw)
    # Pinned: what the dev split (December 2025 label fixes) holds.
    assert scan == {
        "adv_no_answer": 235,
        "duplicate": 0,
        "malformed": 1,
        "multi": 0,
        "no_evidence": 2,
        "normalised": 1,
        "unknown": 1,
    }
    d = ds.info["defects"]
    assert d["evidence_ids_malformed"] == scan["malformed"]
    assert d["evidence_ids_normalised"] == scan["normalised"]
    assert d["evidence_ids_unknown_turn"] == scan["unknown"]
    assert d["evidence_ids_duplicate"] == scan["duplicate"]
    assert d["evidence_multi_id_strings"] == scan["multi"]
    assert d["questions_without_evidence"] == scan["no_evidence"]
    assert d["adversarial_without_answer"] == scan["adv_no_answer"]
    n_ids = sum(len(q["evidence"]) for s in raw for q in s["qa"])
    assert ds.info["evidence_ids_total"] == n_ids
    assert ds.info["evidence_ids_valid"] == len(ds.evidence) == n_ids - 2
    with_ev = ds.evidence["qid"].nunique()
    assert with_ev == 998 - scan["no_evidence"]


@pytest.mark.locomo
def test_real_evidence_lines_start_with_their_id(real) -> None:
    _, _, ds = real
    cache: dict[Path, list[str]] = {}
    groups = dict(zip(ds.queries["qid"], ds.queries["group"], strict=True))
    for r in ds.evidence.itertuples():
        assert r.start_line == r.end_line and r.grade == 1
        f = ds.workspaces[groups[r.qid]] / r.path
        lines = cache.setdefault(f, f.read_text().splitlines())
        assert lines[r.start_line - 1].startswith(f"[{r.span_id}] ")


@pytest.mark.locomo
def test_real_session_files_hold_turns_in_order(real) -> None:
    _, raw, ds = real
    for s in raw:
        conv = s["conversation"]
        ws = ds.workspaces[s["sample_id"]]
        for n, turns in _sessions(conv):
            when_raw = conv[f"session_{n}_date_time"]
            when = datetime.strptime(when_raw, "%I:%M %p on %d %B, %Y")
            lines = (ws / f"memory/{when.date().isoformat()}.md").read_text().splitlines()
            head = lines.index(f"## Session {n} — {when_raw}")
            body = lines[head + 1 : head + 1 + len(turns)]
            for line, t in zip(body, turns, strict=True):
                assert line.startswith(f"[{t['dia_id']}] {t['speaker']}: ")
                assert line.split(": ", 1)[1].startswith(t["text"].split("\n")[0][:20].strip())
                assert ("[image: " in line) == ("blip_caption" in t)
            after = lines[head + 1 + len(turns) :]
            assert not after or after[0] == ""


@pytest.mark.locomo
def test_real_question_time_and_dates(real) -> None:
    _, raw, ds = real
    for s in raw:
        conv = s["conversation"]
        whens = []
        for k, v in conv.items():
            if k.endswith("_date_time"):
                ref = datetime.strptime(v, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
                assert parse_locomo_datetime(v) == ref
                if conv.get(k[: -len("_date_time")]):
                    whens.append(ref)
        times = ds.queries.loc[ds.queries["group"] == s["sample_id"], "time"]
        assert (times == (max(whens) + timedelta(days=1)).timestamp()).all()


@pytest.mark.locomo
def test_real_reuse_and_determinism(real, tmp_path: Path) -> None:
    path, _, ds = real
    (ds.root / "sentinel").write_text("x")
    again = load_locomo(path, ds.root)
    assert (ds.root / "sentinel").exists()
    (ds.root / "sentinel").unlink()
    assert again.fingerprint == ds.fingerprint
    fresh = load_locomo(path, tmp_path / "fresh")
    assert fresh.fingerprint == ds.fingerprint
    assert fresh.queries.equals(ds.queries) and fresh.evidence.equals(ds.evidence)
