"""Bad input answered clearly, with the documented exit codes; nothing written unasked.

Every case runs ``memlab.cli.main([...])`` in-process, as a user's shell would run
``memlab ...``: exit codes 0 ok, 1 runtime failure, 2 usage error, 130 interrupted
(docs/cli.md). The user cache is redirected to a temporary folder throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.cli import main
from tests.conftest import write


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A workspace and a few openclaw.json files, by placeholder name."""
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# Memory\n- The gateway runs on the Mac Studio.\n")
    write(ws, "memory/2026-01-05.md", "# 2026-01-05\n- Peter likes dark roast coffee.\n")
    write(ws, "other.md", "not a memory file\n")
    (ws / "memory" / "bin.md").write_bytes(b"\x00\xff\xfe binary")
    cfgs = {
        "typo": "{agents: {defaults: {memorySearch: {query: {hybrid: {textWieght: 0.5}}}}}}",
        "array": "[{agents: {}}]",
        "openai": "{agents: {defaults: {memorySearch: {provider: 'openai'}}}}",
        "agents": "{agents: {list: [{id: 'work', memorySearch: {query: {maxResults: 2}}}]}}",
        "badtype": "{agents: {defaults: {memorySearch: {query: {maxResults: 'six'}}}}}",
    }
    out = {"ws": str(ws), "tmp": str(tmp_path)}
    for name, text in cfgs.items():
        p = tmp_path / f"{name}.json"
        p.write_text(text)
        out[name] = str(p)
    return out


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``memlab ARGV``; argparse's SystemExit included."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


H = ["--embedder", "hashing"]

CASES = [
    # openclaw.json problems: file, full key path, nearest key / the fix
    (
        ["search", "{ws}", "q", *H, "--config", "{typo}"],
        2,
        [
            "typo.json",
            "agents.defaults.memorySearch.query.hybrid.textWieght",
            "did you mean textWeight?",
        ],
    ),
    (
        ["search", "{ws}", "q", *H, "--config", "{array}"],
        2,
        ["array.json", "top level must be an object"],
    ),
    (["index", "{ws}", *H, "--config", "{badtype}"], 2, ["badtype.json", "query.maxResults"]),
    (
        ["search", "{ws}", "q", "--config", "{openai}"],
        2,
        ["openai.json", "memorySearch.remote.baseUrl", "--embedder"],
    ),
    (["status", "{ws}", *H, "--config", "{tmp}/missing.json"], 2, ["OpenClaw config not found"]),
    (["search", "{ws}", "q", *H, "--config", ""], 2, ["--config is empty"]),
    # --agent
    (["search", "{ws}", "q", *H, "--agent", "work"], 2, ["--agent 'work'", "add --config PATH"]),
    (
        ["search", "{ws}", "q", *H, "--config", "{agents}", "--agent", ""],
        2,
        ["agent id is empty", "work"],
    ),
    (
        ["search", "{ws}", "q", *H, "--config", "{agents}", "--agent", "nobody"],
        2,
        ["no agent 'nobody'"],
    ),
    # memlab get: the rule broken, a missing file, bad line numbers
    (["get", "{ws}", "../secret.md"], 2, ["refused", "outside the workspace"]),
    (["get", "{ws}", "other.md"], 2, ["refused", "not MEMORY.md, memory.md or dreams.md"]),
    (["get", "{ws}", "memory/notes.txt"], 2, ["refused", "not a .md file"]),
    (["get", "{ws}", "memory/2026-09-09.md"], 2, ["memory/2026-09-09.md", "does not exist"]),
    (["get", "{ws}", "memory/2026-01-05.md", "--from", "0"], 2, ["--from must be an integer >= 1"]),
    (["get", "{ws}", "memory/bin.md"], 2, ["memory/bin.md", "UTF-8"]),
    (["get", "{tmp}/nope", "MEMORY.md"], 2, ["workspace not found"]),
    # memlab chunk
    (["chunk", "{ws}"], 2, ["is a directory", "memlab files"]),
    (["chunk", "{ws}/nope.md"], 2, ["file not found"]),
    (["chunk", "{ws}/memory/bin.md"], 2, ["cannot chunk", "UTF-8"]),
    # other commands' usage errors
    (["files", "{tmp}/nope"], 2, ["workspace not found"]),
    (["index", "{tmp}/nope", *H], 2, ["workspace not found"]),
    (["search", "{ws}", "q", *H, "--preset", "nosuch"], 2, ["unknown preset 'nosuch'"]),
    (["search", "{ws}", "q", *H, "--set", "novalue"], 2, ["--set expects key=value"]),
    (["search", "{ws}", "q", *H, "--vector-backend", "annoy"], 2, ["invalid choice"]),
    (["search", "{ws}", "q", "--embedder", "hashing", "--model", "x"], 2, ["not a hashing model"]),
    (["synth", "{tmp}/s", "--days", "0"], 2, ["bad synth settings"]),
    (["eval", "folder", *H], 2, ["--path is required"]),
    (["eval", "folder", "--path", "{tmp}/nope", *H], 2, ["dataset folder not found"]),
    (["eval", "locomo", "--path", "{tmp}/nope.json", *H], 2, ["not found"]),
    (["eval", "synthetic", "--path", "{ws}", *H], 2, ["not a memlab synth corpus", "memlab synth"]),
    (["sweep", "synthetic", "--path", "{tmp}/typo", *H, "--param", "x=1"], 2, ["does not exist"]),
    (["bench", "nosuch"], 2, ["no benchmark 'nosuch'"]),
    (["nosuch"], 2, ["invalid choice"]),
]


@pytest.mark.parametrize(
    ("argv", "code", "fragments"), CASES, ids=[f"{c[0][0]}: {c[2][0]}" for c in CASES]
)
def test_bad_input_exit_code_and_message(
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    fragments: list[str],
) -> None:
    got, _out, err = run([a.format(**env) for a in argv], capsys)
    assert got == code, err
    for frag in fragments:
        assert frag in err, (frag, err)


def test_get_json_keeps_openclaws_answer(env: dict[str, str], capsys) -> None:
    """--json prints the tool's JSON unchanged; the reason goes to stderr, exit 2."""
    code, out, err = run(["get", env["ws"], "other.md", "--json"], capsys)
    assert code == 2 and json.loads(out) == {"error": "path required", "path": "other.md"}
    assert "not MEMORY.md" in err
    code, out, err = run(["get", env["ws"], "memory/2026-09-09.md", "--json"], capsys)
    assert code == 2 and json.loads(out) == {"text": "", "path": "memory/2026-09-09.md"}
    assert "does not exist" in err
    code, out, _ = run(["get", env["ws"], "memory/2026-01-05.md", "--json"], capsys)
    assert code == 0 and json.loads(out)["text"].startswith("# 2026-01-05")


def test_runtime_failure_and_interrupt_codes(
    env: dict[str, str], capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.cli as cli
    from memlab.embed import EmbeddingError
    from memlab.store import IndexLockedError

    def raising(exc: BaseException):
        def fn(args):
            raise exc

        return fn

    for exc, code in (
        (EmbeddingError("openai: request failed"), 1),
        (IndexLockedError("index locked by pid 1"), 1),
        (OSError(28, "No space left on device"), 1),
        (KeyboardInterrupt(), 130),
    ):
        monkeypatch.setattr(cli, "cmd_files", raising(exc))
        got, _, err = run(["files", env["ws"]], capsys)
        assert got == code, (exc, err)
    monkeypatch.setattr(cli, "cmd_files", lambda args: 7)  # e.g. a child's exit code
    assert run(["files", env["ws"]], capsys)[0] == 1


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path below root → (size, mtime_ns); folders included (size 0)."""
    return {
        str(p.relative_to(root)): (p.lstat().st_size if p.is_file() else 0, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_lab_commands_write_nothing_into_the_users_folders(
    tmp_path: Path, _cache: Path, capsys
) -> None:
    """eval/sweep on a corpus folder, and every workspace command on a workspace, leave both
    folders exactly as they were; indexes go to the user cache."""
    corpus = tmp_path / "corpus"
    code, _, err = run(["synth", str(corpus), "--days", "6", "--queries-per-type", "2"], capsys)
    assert code == 0, err  # asked: memlab synth writes its folder
    ws = tmp_path / "openclaw-ws"
    write(ws, "MEMORY.md", "# Memory\n- The gateway runs on the Mac Studio.\n")
    write(ws, "memory/2026-01-05.md", "# 2026-01-05\n- Peter likes dark roast coffee.\n")
    before = {"corpus": _snapshot(corpus), "ws": _snapshot(ws)}

    for argv in (
        ["eval", "folder", "--path", str(corpus), *H, "--preset", "bm25,openclaw"],
        ["eval", "synthetic", "--path", str(corpus), *H, "--preset", "bm25"],
        ["sweep", "synthetic", "--path", str(corpus), *H, "--param", "vector_weight=0,1"],
    ):
        code, _, err = run(argv, capsys)
        assert code == 0, (argv, err)
    code, _, err = run(["eval", "synthetic", "--path", str(ws), *H], capsys)
    assert code == 2 and str(ws) in err and "memlab synth NEW_FOLDER" in err
    assert f"memlab synth {ws}" not in err  # no hint writes into the user's folder
    code, _, err = run(["eval", "synthetic", "--path", str(tmp_path / "typo"), *H], capsys)
    assert code == 2 and "does not exist" in err
    for argv in (
        ["files", str(ws)],
        ["chunk", str(ws / "MEMORY.md")],
        ["index", str(ws), *H, "--quiet"],
        ["status", str(ws), *H],
        ["search", str(ws), "coffee", *H],
        ["get", str(ws), "MEMORY.md"],
    ):
        code, _, err = run(argv, capsys)
        assert code == 0, (argv, err)

    assert _snapshot(corpus) == before["corpus"]
    assert _snapshot(ws) == before["ws"]
    assert not (tmp_path / "typo").exists()
    assert list((_cache / "memlab" / "lab").iterdir())  # the lab's indexes went here


def test_lab_default_index_dir_is_in_the_user_cache(tmp_path: Path, _cache: Path) -> None:
    from memlab.datasets.base import load_folder
    from memlab.eval.lab import Lab, default_lab_index_dir

    for name in ("a", "b"):
        assert main(["synth", str(tmp_path / name), "--days", "4", "--queries-per-type", "1"]) == 0
    a, b = load_folder(tmp_path / "a"), load_folder(tmp_path / "b")
    lab = Lab(a, embedder="hashing", progress=False)
    assert lab.index_dir == default_lab_index_dir(a)
    assert lab.index_dir.parent == _cache / "memlab" / "lab"
    assert lab.index_dir.name.startswith(f"{a.name}-")
    assert default_lab_index_dir(b) != lab.index_dir  # one folder per dataset folder
    lab.index("default")
    assert not list((tmp_path / "a").rglob("*.sqlite")) and list(lab.index_dir.glob("*.sqlite"))
    own = Lab(a, embedder="hashing", index_dir=tmp_path / "mine", progress=False)
    own.index("default")
    assert own.index_dir == tmp_path / "mine" and list(own.index_dir.glob("*.sqlite"))
