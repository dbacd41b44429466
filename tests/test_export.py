"""``memlab export``: every target, every refusal, and the round trips — an exported
config or preset file read back (``memlab search/eval --config``, ``--preset-file``) ranks
exactly as the setting it came from (generated workspaces, the hashing embedder;
Hypothesis over settings for the readers and writers themselves).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import json5
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.config.load import ExportRefused, config_system, export_config, load_search_config
from memlab.config.preset_file import parse_preset_file, preset_file_data
from memlab.pipeline.presets import PRESETS, memlab_learned, preset
from tests.conftest import cli, write

HASHING = {"provider": "hashing", "model": "hashing-64"}
QUERIES = ["dentist appointment", "who owns billing", "commit a828e60", "coffee roast"]


def same_system(a: Any, b: Any) -> bool:
    """Equal in every parameter but the name (a tokenizer left to the index = unicode61)."""
    pa, pb = a.get_params(), b.get_params()
    for d in (pa, pb):
        d.pop("name")
        d["fts_tokenizer"] = d["fts_tokenizer"] or "unicode61"
    return pa == pb


def read_back(tmp_path: Path, data: dict[str, Any], agent: str | None = None) -> Any:
    f = tmp_path / "exported.json"
    f.write_text("// a JSON5 comment, as memlab export writes\n" + json.dumps(data))
    cfg, _ = load_search_config(f, agent, check_provider=False)
    return cfg


# ------------------------------------------------------------------ the writers
april = st.fixed_dictionaries(
    {
        "keyword": st.booleans(),
        "max_results": st.integers(1, 30),
        "min_score": st.floats(-1, 1, allow_nan=False),
        "candidate_multiplier": st.floats(1, 20, allow_nan=False),
        "vector_weight": st.floats(0, 1, allow_nan=False),
        "text_weight": st.floats(0, 1, allow_nan=False),
        "mmr": st.sampled_from(["off", "jaccard"]),
        "mmr_lambda": st.floats(0, 1, allow_nan=False),
        "decay": st.sampled_from(["off", "exact"]),
        "half_life_days": st.floats(0.5, 400, allow_nan=False),
        "fts_tokenizer": st.sampled_from([None, "unicode61", "trigram"]),
    }
)


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(params=april, agent=st.sampled_from([None, "work"]), tokens=st.sampled_from([400, 256]))
def test_openclaw_2026_4_round_trip(tmp_path: Path, params: dict, agent: str, tokens: int) -> None:
    """Any setting OpenClaw 2026-04 can express is written with only the keys it changes
    and read back (the reader memlab search --config uses) to the same system."""
    p = preset("openclaw", **params)
    chunker = {"kind": "openclaw", "tokens": tokens, "overlap": 80}
    data, _ = export_config(
        p, "openclaw-2026.4", agent=agent, embedder=HASHING, chunker=chunker, extra=["notes"]
    )
    cfg = read_back(tmp_path, data, agent)
    assert same_system(config_system(cfg, {}), p)
    assert (cfg.provider, cfg.model, cfg.chunk_tokens, cfg.extra_paths) == (
        "hashing",
        "hashing-64",
        tokens,
        ("notes",),
    )
    section = (
        data["agents"]["list"][0]["memorySearch"]
        if agent
        else data["agents"]["defaults"]["memorySearch"]
    )
    # only what the setting changes: the default weights are never written
    if p.vector_weight == 0.7:
        assert "vectorWeight" not in json.dumps(section)
    if agent:
        assert data["agents"]["list"][0]["id"] == agent and "defaults" not in data["agents"]


def test_default_setting_writes_no_query_keys() -> None:
    data, _ = export_config(preset("openclaw"), "openclaw-2026.4", embedder=None)
    assert data == {"agents": {"defaults": {"memorySearch": {}}}}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    max_results=st.integers(1, 30),
    min_score=st.floats(0, 1, allow_nan=False),
    tok=st.sampled_from([None, "trigram"]),
    agent=st.sampled_from([None, "Work Bot"]),
)
def test_openclaw_2026_9_round_trip(tmp_path: Path, max_results, min_score, tok, agent) -> None:
    p = preset("openclaw-current", max_results=max_results, min_score=min_score, fts_tokenizer=tok)
    data, _ = export_config(p, "openclaw-2026.9", agent=agent, embedder=HASHING)
    cfg = read_back(tmp_path, data, agent)
    assert same_system(config_system(cfg, {}), p)
    if agent:  # under the release's normalised agent id
        assert list(data["agents"]["entries"]) == ["work-bot"]
    assert set(json5.loads(json.dumps(data))) <= {"memory", "agents"}


@pytest.mark.parametrize(
    "name, target, expected",
    [
        (
            "memlab-best",
            "openclaw-2026.4",
            [
                "stage neighbor: neighbor_prev=0.3",
                "fts_tokenizer=porter",
                "stage identifier_tier: identifier_tier=True",
                "candidateMultiplier (1–20) cannot hold it",
            ],
        ),
        ("qmd-like", "openclaw-2026.4", ["stage fusion: fusion='rrf'", "rrf_top_bonus=True"]),
        (
            "openclaw",
            "openclaw-2026.9",
            ["vector_weight=0.5 (the release fixes 0.7)", "memory_files='openclaw-2026.4'"],
        ),
        ("openclaw-current", "openclaw-2026.4", ["keyword_mode='openclaw-current'"]),
    ],
)
def test_refusals_name_each_parameter_and_stage(name: str, target: str, expected: list) -> None:
    p = preset(name, vector_weight=0.5) if name == "openclaw" else preset(name)
    with pytest.raises(ExportRefused) as exc:
        export_config(p, target, embedder=HASHING)
    msg = str(exc.value)
    for part in expected:
        assert part in msg, (part, msg)
    assert "--target mcp" in msg


def test_openclaw_2026_4_refuses_other_chunkers() -> None:
    with pytest.raises(ExportRefused, match="chunker line"):
        export_config(preset("openclaw"), "openclaw-2026.4", chunker={"kind": "line"})


# ------------------------------------------------------------------ preset files
every_preset = st.sampled_from([*PRESETS, "learned"])


@settings(max_examples=40, deadline=None)
@given(name=every_preset, w=st.floats(0, 1, allow_nan=False), k=st.integers(1, 12))
def test_preset_file_round_trip(name: str, w: float, k: int) -> None:
    """Every preset (the learned one with its tuple-of-tuples model too), with a changed
    weight and depth, written and parsed back through JSON equals itself."""
    p = memlab_learned() if name == "learned" else preset(name)
    p = p.replace(vector_weight=w, max_results=k)
    base = "memlab-best" if name == "learned" else name
    data = json.loads(json.dumps(preset_file_data(p, base=base, embedder=HASHING)))
    assert parse_preset_file(data).pipeline == p


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda d: d["parameters"].update(vector_wieght=0.5),
            "parameters.vector_wieght (did you mean vector_weight?)",
        ),
        (lambda d: d.update(paramters={}), "unknown key paramters (did you mean parameters?)"),
        (
            lambda d: d["index"].update(chunkr={}),
            "unknown key index.chunkr (did you mean chunker?)",
        ),
        (
            lambda d: d["index"]["embedder"].update(modle="x"),
            "index.embedder.modle (did you mean model?)",
        ),
        (lambda d: d.update(base="memlab-bst"), "did you mean memlab-best?"),
        (lambda d: d["parameters"].update(vector_weight=1.5), "vector_weight must be in [0, 1]"),
        (lambda d: d.update(format="other"), "format must be 'memlab-preset/1'"),
        (lambda d: d["index"].update(fts_tokenizer="trigram"), "index.fts_tokenizer is 'trigram'"),
    ],
)
def test_preset_file_is_strict(
    tmp_path: Path, edit: Any, message: str, private_cache: Path
) -> None:
    """A bad preset file is refused (exit 2, the key named with a did-you-mean) by every
    command, before any index is opened."""
    data = preset_file_data(preset("memlab-best"), base="memlab-best", embedder=HASHING)
    edit(data)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(data))
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# M\n\nhello\n")
    for args in (
        ["search", str(ws), "hello", "--preset-file", str(f)],
        ["mcp", str(ws), "--preset-file", str(f)],
        ["eval", "folder", "--path", str(tmp_path / "none"), "--preset-file", str(f)],
        ["export", "--preset-file", str(f), "--target", "mcp"],
    ):
        code, _, err = cli(*args)
        assert code == 2 and message in err and str(f) in err, (args, err)
    assert not (private_cache / "memlab" / "indexes").exists()


# --------------------------------------------------------- round trips end to end
@pytest.fixture
def ws(small_workspace: Path, private_cache: Path) -> Path:
    return small_workspace


def search_json(*args: str) -> list[tuple]:
    code, out, err = cli("search", *args, "--json", "--now", "2026-06-01")  # decay: one clock
    assert code == 0, err
    return [
        (r["path"], r["startLine"], r["endLine"], r["score"]) for r in json.loads(out)["results"]
    ]


def export(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    code, _, err = cli("export", *args, "--out", str(out))
    assert code == 0, err
    return out


@pytest.mark.slow
def test_search_config_ranks_as_the_setting(ws: Path, tmp_path: Path) -> None:
    """The 2026-04 export (defaults and one agent) and the 2026.9.6 export read back by
    memlab search --config give the very results of the preset and --set they came from."""
    sets = [
        "--set",
        "vector_weight=0.45",
        "--set",
        "text_weight=0.55",
        "--set",
        "mmr=jaccard",
        "--set",
        "min_score=0.1",
        "--set",
        "candidate_multiplier=6",
    ]
    pf = export(tmp_path, "tuned.json", "--preset", "openclaw", *sets, "--target", "mcp")
    pf_data = json.loads(pf.read_text())
    pf_data["index"]["embedder"] = HASHING  # tuned, say, with the hashing embedder
    pf.write_text(json.dumps(pf_data))
    april = export(tmp_path, "april.json", "--preset-file", str(pf), "--target", "openclaw-2026.4")
    agent = export(
        tmp_path,
        "agent.json",
        "--preset-file",
        str(pf),
        "--target",
        "openclaw-2026.4",
        "--agent",
        "work",
    )
    assert april.read_text().startswith("// memlab export")
    for q in QUERIES:
        want = search_json(
            str(ws),
            q,
            "--preset",
            "openclaw",
            *sets,
            "--embedder",
            "hashing",
            "--model",
            "hashing-64",
        )
        assert search_json(str(ws), q, "--config", str(april)) == want
        assert search_json(str(ws), q, "--config", str(agent), "--agent", "work") == want
        assert search_json(str(ws), q, "--preset-file", str(pf)) == want
    cur = export(
        tmp_path,
        "cur.json",
        "--preset",
        "openclaw-current",
        "--set",
        "max_results=3",
        "--provider",
        "hashing",
        "--model",
        "hashing-64",
        "--target",
        "openclaw-2026.9",
    )
    for q in QUERIES:
        want = search_json(
            str(ws),
            q,
            "--preset",
            "openclaw-current",
            "--set",
            "max_results=3",
            "--embedder",
            "hashing",
            "--model",
            "hashing-64",
        )
        assert search_json(str(ws), q, "--config", str(cur)) == want


def test_memlab_best_goes_through_a_preset_file(ws: Path, tmp_path: Path) -> None:
    code, _, err = cli("export", "--preset", "memlab-best", "--target", "openclaw-2026.4")
    assert code == 2 and "--target mcp" in err and "stage neighbor" in err
    pf = export(tmp_path, "best.json", "--preset", "memlab-best", "--target", "mcp")
    data = json.loads(pf.read_text())
    assert data["index"]["fts_tokenizer"] == "porter"
    assert data["index"]["embedder"] == {"provider": "local", "model": "all-MiniLM-L6-v2"}
    for q in QUERIES:
        want = search_json(str(ws), q, "--preset", "memlab-best", "--embedder", "hashing")
        assert search_json(str(ws), q, "--preset-file", str(pf), "--embedder", "hashing") == want


def test_export_refuses_to_overwrite(tmp_path: Path) -> None:
    out = export(tmp_path, "a.json", "--target", "mcp")
    code, _, err = cli("export", "--target", "mcp", "--out", str(out))
    assert code == 2 and "--overwrite" in err
    assert cli("export", "--target", "mcp", "--out", str(out), "--overwrite")[0] == 0
    mine = tmp_path / "openclaw.json"
    mine.write_text('{"agents": {}}')
    code, _, err = cli("export", "--target", "mcp", "--out", str(mine), "--overwrite")
    assert code == 2 and "not one memlab export wrote" in err
    assert mine.read_text() == '{"agents": {}}'


# ------------------------------------------------------- from the lab's results
@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from memlab.datasets.synthetic import SynthConfig, generate

    root = tmp_path_factory.mktemp("corpus")
    generate(SynthConfig(days=8, seed=3, queries_per_type=2), root / "c")
    return root / "c"


def test_sweep_result_to_eval_same_ranking(corpus: Path, tmp_path: Path, private_cache) -> None:
    """sweep --json → export --result (both targets) → eval --config / --preset-file: the
    config's system and the file's rank exactly as the sweep's best setting (same_ranking_as)."""
    lab = ["synthetic", "--path", str(corpus), "--embedder", "hashing"]
    code, out, err = cli("sweep", *lab, "--param", "vector_weight=0.2:0.8:0.3", "--json")
    assert code == 0, err
    sweep = json.loads(out)
    assert sweep["base_preset"] == "openclaw" and sweep["embedder"]["provider"] == "hashing"
    res = tmp_path / "sweep.json"
    res.write_text(out)
    best = sweep["best"]["setting"]
    cfg = export(tmp_path, "cfg.json", "--result", str(res), "--target", "openclaw-2026.4")
    pf = export(tmp_path, "pf.json", "--result", str(res), "--target", "mcp")
    sets = [x for k, v in best.items() for x in ("--set", f"{k}={v}")]
    code, out, err = cli(
        "eval",
        *lab,
        "--preset",
        "openclaw",
        *sets,
        "--config",
        str(cfg),
        "--preset-file",
        str(pf),
        "--json",
    )
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == {"openclaw", "openclaw-tuned", "config"}
    assert rows["openclaw-tuned"]["same_ranking_as"] == "openclaw"
    assert rows["config"]["same_ranking_as"] == "openclaw"
    assert rows["openclaw"]["metrics"] == rows["config"]["metrics"]


def test_experiment_result_by_system(corpus: Path, tmp_path: Path, private_cache) -> None:
    lab = ["synthetic", "--path", str(corpus), "--embedder", "hashing"]
    saved = tmp_path / "exp"
    code, _, err = cli("eval", *lab, "--preset", "openclaw,qmd-like", "--save", str(saved))
    assert code == 0, err
    code, _, err = cli("export", "--result", str(saved), "--target", "mcp")
    assert code == 2 and "--system" in err and "qmd-like" in err
    code, _, err = cli("export", "--result", str(saved), "--system", "qmd-lke", "--target", "mcp")
    assert code == 2 and "did you mean qmd-like?" in err
    code, out, err = cli(
        "export", "--result", str(saved), "--system", "qmd-like", "--target", "mcp"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["base"] == "qmd-like" and data["index"]["embedder"]["provider"] == "hashing"
    assert parse_preset_file(data).pipeline == preset("qmd-like")
    # the experiment's embedder is named in the note
    assert "tuned with hashing" in err


def test_sweep_takes_a_preset_file_as_its_base(corpus: Path, tmp_path: Path, private_cache) -> None:
    """memlab sweep --preset-file: the file's system is the base (its settings in the JSON),
    checked before the lab is built (a bad file: exit 2, nothing indexed)."""
    pf = tmp_path / "base.json"
    data = preset_file_data(preset("openclaw", min_score=0.0, mmr="jaccard"), base="openclaw")
    data["name"] = "mine"
    pf.write_text(json.dumps(data))
    lab = ["synthetic", "--path", str(corpus), "--embedder", "hashing"]
    code, out, err = cli(
        "sweep", *lab, "--preset-file", str(pf), "--param", "mmr_lambda=0.5,0.9", "--json"
    )
    assert code == 0, err
    res = json.loads(out)
    assert res["base_preset"] == "openclaw" and res["base_settings"]["name"] == "mine"
    assert res["base_settings"]["mmr"] == "jaccard" and res["base_settings"]["min_score"] == 0.0
    data["parameters"]["mmr_lamda"] = 0.5
    pf.write_text(json.dumps(data))
    code, _, err = cli("sweep", *lab, "--preset-file", str(pf), "--param", "mmr_lambda=0.5,0.9")
    assert code == 2 and "did you mean mmr_lambda?" in err


def test_export_names_the_embedder_and_warns_on_another(tmp_path: Path) -> None:
    code, out, err = cli("export", "--preset", "openclaw", "--target", "openclaw-2026.4")
    assert code == 0 and "tuned with local all-MiniLM-L6-v2" in err
    assert "// tuned with local all-MiniLM-L6-v2" in out
    assert json5.loads(out)["agents"]["defaults"]["memorySearch"]["model"] == "all-MiniLM-L6-v2"
    code, out, err = cli(
        "export",
        "--preset",
        "openclaw",
        "--target",
        "openclaw-2026.4",
        "--provider",
        "openai",
        "--model",
        "text-embedding-3-small",
    )
    assert code == 0 and "do not carry over" in err
    ms = json5.loads(out)["agents"]["defaults"]["memorySearch"]
    assert (ms["provider"], ms["model"]) == ("openai", "text-embedding-3-small")
    code, _, err = cli("export", "--preset", "openclaw", "--target", "mcp", "--agent", "x")
    assert code == 2 and "OpenClaw config keys" in err
