"""The layering of memlab, enforced (docs/architecture.md, "Layers").

Pure ``ast`` over the source files (nothing of memlab is imported here), except the
two subprocess tests at the end, which run a real search and look at ``sys.modules``.

Decisions, so a failure reads as a rule and not as a whim:

- Layers: engine < lab < apps; an import may only point to the same layer or down.
  Every import counts: module level, inside a function (a lazy import is still a
  dependency: it runs on the first call) and under ``if TYPE_CHECKING:`` (a type
  annotation naming a lab type couples the engine to the lab just the same).
- Import cycles: module-level and function-level imports count (a lazy import used
  to dodge a cycle is still a cycle, only deferred to the first call); imports
  under ``TYPE_CHECKING`` do not, since they never run and are the standard way to
  name a type in an annotation. They still obey the layers.
- ``from a.b import c`` is an edge to ``a.b.c`` when ``c`` is a module, else to
  ``a.b``. A package's ``__init__`` is a node like any module; the implicit import
  of a parent package is not an edge (a submodule of a package is always loaded
  with it, so counting it would make every re-exporting ``__init__`` a cycle).
  ``importlib.import_module("memlab.x")`` with a literal name is an import too. The
  root package's lazy re-exports (``memlab.__getattr__`` over a table of names) are a
  facade for notebooks, not imports: ``test_import_memlab_stays_light`` guards them.
- Private names: no ``_name`` of one module used by another, in memlab/, benchmarks/
  and scripts/ (``from memlab.x import _y``, ``memlab.x._y``, ``obj._y`` or
  ``getattr(obj, "_y")`` where ``_y`` is defined in a different memlab module and
  not in the one using it; ``self._y`` inherited from another module's class counts
  too). Dunders are public. tests/ may use privates: a white-box test of a module's
  internals belongs to that module.
- Module size: no module of memlab/ over 600 lines (``TOO_LONG_ALLOWED`` lists the
  ones still being split); one over 400 lines says why at its top, in a paragraph of
  its module docstring that starts with ``Size:``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ the one table
# Module (or package, covering everything under it) → layer. A trailing "*" matches
# any name with that prefix (memlab.cli* covers memlab.cli and memlab.cli.lab). The
# longest matching entry wins; a module matching nothing fails
# test_every_module_is_classified.
LAYERS: dict[str, str] = {
    "memlab": "engine",  # the package itself: lazy re-exports only (checked below)
    "memlab.paths": "engine",
    "memlab.errors": "engine",
    "memlab.config": "engine",  # OpenClaw's config files, preset files, the allowed values
    "memlab.files": "engine",  # OpenClaw's memory files: discovery, watcher, doctor, sessions
    "memlab.chunking*": "engine",
    "memlab.embed": "engine",
    "memlab.store": "engine",
    "memlab.retrieval": "engine",  # the kernels: candidates, vectors, fusion, rerank, query text
    "memlab.openclaw_current": "engine",
    "memlab.qmd": "engine",
    "memlab.stages": "engine",
    "memlab.pipeline": "engine",  # Pipeline, explain, the presets
    "memlab.tools": "engine",
    "memlab.eval": "lab",
    "memlab.datasets": "lab",
    "memlab.flush": "lab",
    "memlab.viz": "lab",
    "memlab.widgets": "lab",
    "memlab.demo": "lab",
    "memlab.cli*": "app",
    "memlab.server": "app",
}
# The only modules that sit at the package root: the rest is grouped by layer into packages.
ROOT_MODULES = {"__init__", "__main__", "errors", "paths"}
RANK = {"engine": 0, "lab": 1, "app": 2}
# App modules `memlab search` may load: the command line itself.
CLI = ("memlab.cli",)


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name by the longest matching LAYERS entry, or None."""
    best: tuple[int, str] | None = None
    for pattern, layer in LAYERS.items():
        if pattern.endswith("*"):
            hit = module.startswith(pattern[:-1])
        elif pattern == "memlab":
            hit = module == "memlab"  # the root matches itself only, not its submodules
        else:
            hit = module == pattern or module.startswith(pattern + ".")
        if hit and (best is None or len(pattern) > best[0]):
            best = (len(pattern), layer)
    return best[1] if best else None


# --------------------------------------------------------------- reading sources
def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files(*roots: str) -> dict[str, Path]:
    return {
        module_name(p): p
        for root in roots
        for p in sorted((REPO / root).rglob("*.py"))
        if "__pycache__" not in p.parts
    }


MODULES = source_files("memlab")


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    path: Path
    line: int
    target: str  # imported module (see the docstring for `from a.b import c`)
    names: tuple[str, ...]  # names taken by `from ... import`, else ()
    lazy: bool  # inside a function
    typing: bool  # under `if TYPE_CHECKING:`

    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_module_call(node: ast.AST) -> str | None:
    """The module named by ``importlib.import_module("x")`` or ``__import__("x")``, else None."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return None
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    arg = node.args[0].value
    return arg if name in ("import_module", "__import__") and isinstance(arg, str) else None


def imports_of(module: str, path: Path) -> Iterator[Import]:
    """Every import statement of one file, with its context (lazy, TYPE_CHECKING)."""
    is_package = path.name == "__init__.py"

    def walk(nodes: Iterable[ast.AST], lazy: bool, typing: bool) -> Iterator[Import]:
        for child in nodes:
            if isinstance(child, ast.Import):
                for a in child.names:
                    yield Import(module, path, child.lineno, a.name, (), lazy, typing)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: climb from this module's package
                    pkg = module.split(".") if is_package else module.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (child.level - 1)]
                    base = ".".join([*pkg, *([base] if base else [])])
                for a in child.names:
                    sub = f"{base}.{a.name}"
                    target = sub if sub in MODULES else base
                    yield Import(module, path, child.lineno, target, (a.name,), lazy, typing)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                yield from walk(child.body, lazy, True)
                yield from walk(child.orelse, lazy, typing)
            else:
                if (name := _import_module_call(child)) is not None:
                    yield Import(module, path, child.lineno, name, (), lazy, typing)
                inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                yield from walk(ast.iter_child_nodes(child), inner, typing)

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    yield from walk(tree.body, False, False)


def memlab_imports() -> list[Import]:
    return [
        imp
        for mod, path in MODULES.items()
        for imp in imports_of(mod, path)
        if imp.target == "memlab" or imp.target.startswith("memlab.")
    ]


# ------------------------------------------------------------------------ layers
def test_every_module_is_classified() -> None:
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, f"add these modules to LAYERS in {__file__}: {missing}"


def test_only_the_root_modules_sit_at_the_package_root() -> None:
    """Every other module lives in the package of its layer's concept (retrieval, files,
    config, pipeline …), so the tree reads like the architecture."""
    loose = sorted(p.name for p in (REPO / "memlab").glob("*.py") if p.stem not in ROOT_MODULES)
    assert not loose, f"move these into a package of memlab/: {loose}"


@pytest.mark.slow
def test_imports_point_down() -> None:
    bad = []
    for imp in memlab_imports():
        src, dst = layer_of(imp.source), layer_of(imp.target)
        if src and dst and RANK[dst] > RANK[src]:
            how = " (TYPE_CHECKING)" if imp.typing else " (lazy)" if imp.lazy else ""
            bad.append(f"{imp.where()} imports {imp.target}{how} ({src} → {dst})")
    assert not bad, "imports that point up a layer:\n" + "\n".join(bad)


# ----------------------------------------------------------------- private names
def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def defined_privates(path: Path) -> set[str]:
    """Private names a file defines: defs, classes, assigned names and self._x attributes."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname:
            out.add(node.asname)
    return {n for n in out if _private(n)}


@pytest.mark.slow
def test_no_private_names_across_modules() -> None:
    owners: dict[str, set[str]] = {}  # private name → memlab modules defining it
    for mod, path in MODULES.items():
        for name in defined_privates(path):
            owners.setdefault(name, set()).add(mod)
    bad = []
    for mod, path in source_files("memlab", "benchmarks", "scripts").items():
        own = defined_privates(path)
        for imp in imports_of(mod, path):
            if imp.target.startswith("memlab") and imp.target != mod:
                bad += [f"{imp.where()} imports {imp.target}.{n}" for n in imp.names if _private(n)]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr", "setattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                name = node.args[1].value
            else:
                continue
            others = owners.get(name, set()) - {mod}
            if _private(name) and others and name not in own:
                rel = path.relative_to(REPO)
                bad.append(
                    f"{rel}:{node.lineno} uses .{name} (defined in {', '.join(sorted(others))})"
                )
    assert not bad, "private names used across modules:\n" + "\n".join(sorted(set(bad)))


# ------------------------------------------------------------------------ cycles
def import_graph() -> dict[str, dict[str, int]]:
    """module → {imported memlab module: first line}: runtime imports and the imports under
    ``if TYPE_CHECKING:`` alike. An annotation never runs, but it still says that one
    module's definitions are written in terms of the other's: two modules that name each
    other, even only in annotations, cannot be read, documented or moved apart (a stage
    annotated with ``Pipeline`` while it reads a declared view ties ``stages/`` and
    ``pipeline/`` together). So a cycle of annotations is a cycle too."""
    graph: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for imp in memlab_imports():
        if imp.target in MODULES and imp.target != imp.source:
            graph[imp.source].setdefault(imp.target, imp.line)
    return graph


def reachable(graph: dict[str, dict[str, int]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    return seen


# ------------------------------------------------------------------ no shims
def is_shim(tree: ast.Module) -> bool:
    """A module whose body is only a docstring, imports and ``__all__`` / ``__getattr__``:
    a re-export of names that live elsewhere (a package's ``__init__`` may be one: its
    names are the package's public face, not an old path)."""
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            continue
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        return False
    return True


@pytest.mark.slow
def test_no_shim_modules() -> None:
    """Moved names are not kept at their old paths: no module outside a package's
    ``__init__`` only re-exports, and no module calls itself deprecated."""
    bad = []
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        doc = (ast.get_docstring(tree) or "").lower()
        if path.name != "__init__.py" and is_shim(tree):
            bad.append(f"{path.relative_to(REPO)}: only re-exports names defined elsewhere")
        if "deprecated" in doc or "kept for one release" in text:
            bad.append(f"{path.relative_to(REPO)}: calls itself deprecated")
    assert not bad, "shim modules (import from the new home and delete them):\n" + "\n".join(bad)


# ------------------------------------------------------------------ module size
MAX_MODULE_LINES = 600
# Modules allowed over MAX_MODULE_LINES for now; each entry is a debt with an owner.
TOO_LONG_ALLOWED: set[str] = set()


def test_no_module_over_600_lines() -> None:
    """No module of memlab/ is longer than MAX_MODULE_LINES lines: a module that long
    holds more than one idea; split it into modules named for what they hold."""
    bad = []
    for path in MODULES.values():
        rel = path.relative_to(REPO).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES and rel not in TOO_LONG_ALLOWED:
            bad.append(f"{rel}: {n} lines")
    assert not bad, f"modules over {MAX_MODULE_LINES} lines (split them):\n" + "\n".join(bad)


LONG_MODULE_LINES = 400


def test_a_long_module_says_why_at_its_top() -> None:
    """A module of memlab/ over LONG_MODULE_LINES lines states, in a paragraph of its
    module docstring starting with ``Size:``, why its parts belong together."""
    bad = []
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n <= LONG_MODULE_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not any(par.startswith("Size: ") for par in doc.split("\n\n")):
            bad.append(f"{path.relative_to(REPO).as_posix()}: {n} lines")
    assert not bad, (
        f"modules over {LONG_MODULE_LINES} lines without a 'Size:' paragraph in their "
        "docstring (say why the module is one, or split it):\n" + "\n".join(bad)
    )


def test_no_import_cycles() -> None:
    # A strongly connected component = the modules that reach each other; with ~60
    # modules one reachability walk per module is instant and easier to read than Tarjan.
    graph = import_graph()
    reach = {m: reachable(graph, m) for m in graph}
    components = {
        frozenset({m} | {n for n in reach[m] if m in reach[n]}) for m in graph if m in reach[m]
    }
    report = []
    for comp in sorted(components, key=sorted):
        edges = [
            f"    {MODULES[a].relative_to(REPO)}:{line} imports {b}"
            for a in sorted(comp)
            for b, line in sorted(graph[a].items())
            if b in comp
        ]
        report.append(" ↔ ".join(sorted(comp)) + "\n" + "\n".join(edges))
    assert not report, "import cycles:\n" + "\n".join(report)


# ------------------------------------------------------- what a search really loads
def _run(code: str, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "out.json"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


SEARCH = """
import json, sys
from memlab.cli import main
rc = main(["search", sys.argv[2], "when is the dentist", "--preset", sys.argv[3],
           "--embedder", "hashing", "--db", sys.argv[4]])
json.dump({"rc": rc, "modules": sorted(m for m in sys.modules if m.startswith("memlab"))},
          open(sys.argv[1], "w"))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["memlab-best", "openclaw"])
def test_search_loads_no_lab_code(tmp_path: Path, name: str) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Health\n\nThe dentist is on Tuesday at 9.\n")
    (ws / "memory" / "2026-11-30.md").write_text("# Notes\n\nBought milk. Called the dentist.\n")
    got = _run(SEARCH, tmp_path, str(ws), name, str(tmp_path / "index.sqlite"))
    assert got["rc"] == 0
    assert "memlab.pipeline" in got["modules"]  # the search really ran
    loaded = [
        m
        for m in got["modules"]
        if layer_of(m) == "lab"
        or (layer_of(m) == "app" and not m.startswith(CLI))
        or m == "ray"
        or m.startswith("ray.")
    ]
    assert not loaded, f"`memlab search --preset {name}` loaded lab/app code: {loaded}"


def test_import_memlab_stays_light(tmp_path: Path) -> None:
    code = "import json, sys, memlab; json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))"
    modules = _run(code, tmp_path)
    heavy = ("sentence_transformers", "torch", "sklearn", "memlab.eval", "ray")
    loaded = [m for m in modules if m.startswith(heavy) or layer_of(m) == "lab"]
    assert not loaded, f"`import memlab` loaded: {loaded}"


def test_every_name_of_the_root_package_resolves(tmp_path: Path) -> None:
    """``memlab.<name>`` for every name in ``memlab.__all__`` imports (its lazy table names
    the module a name lives in; a moved name must be moved there too)."""
    code = (
        "import json, sys, memlab\n"
        "bad = []\n"
        "for n in memlab.__all__:\n"
        "    try:\n"
        "        getattr(memlab, n)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{n}: {exc!r}')\n"
        "json.dump(bad, open(sys.argv[1], 'w'))"
    )
    assert _run(code, tmp_path) == []


# ------------------------------------------------------------------ stage declarations
def test_stages_declare_what_they_read() -> None:
    """Every stage names what it reads, and every name is real: ``uses`` a `Pipeline`
    parameter or method, ``inputs`` a `CandidateSet` field or method, ``reads`` and
    ``writes`` stage arrays (or the selection's results). In each stage function's own
    body, every ``p.X``, ``cs.X`` and ``st["K"]`` is declared (the views enforce the same
    at run time, through the helpers too: memlab.stages.views)."""
    import inspect
    import textwrap

    from memlab.pipeline import Pipeline
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages import STAGE_ARRAYS, STAGES
    from memlab.stages.order import RESULT_KEYS

    params = set(Pipeline().get_params())
    bad = []
    for s in STAGES:
        for name in s.uses:
            attr = getattr(Pipeline, name, None)
            if name not in params and not (callable(attr) or isinstance(attr, property)):
                bad.append(f"{s.name}: uses {name!r}, not a Pipeline parameter or method")
        for name in s.inputs:
            if not hasattr(CandidateSet, name) and name not in CandidateSet.__dataclass_fields__:
                bad.append(f"{s.name}: inputs {name!r}, not a CandidateSet field")
        for name in s.reads | set(s.writes):
            if name not in STAGE_ARRAYS and name not in RESULT_KEYS:
                bad.append(f"{s.name}: {name!r} is not in STAGE_ARRAYS")
        tree = ast.parse(textwrap.dedent(inspect.getsource(s.run)))
        fn = tree.body[0]
        assert isinstance(fn, ast.FunctionDef)
        p_name, cs_name, st_name = (a.arg for a in fn.args.args[:3])
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                owner, declared = {p_name: ("uses", s.uses), cs_name: ("inputs", s.inputs)}.get(
                    node.value.id, (None, None)
                )
                if owner and node.attr not in declared:
                    bad.append(f"{s.name}: reads {node.value.id}.{node.attr}, not in {owner}")
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == st_name
                and isinstance(node.slice, ast.Constant)
                and node.slice.value not in s.reads
            ):
                bad.append(f"{s.name}: reads {st_name}[{node.slice.value!r}], not in reads")
    assert not bad, "undeclared or unknown stage reads:\n" + "\n".join(bad)


# ------------------------------------------------------------------ the release
RELEASE_NAMES = {"openclaw-current", "openclaw-2026.9"}
RELEASE_CODE = ("memlab.openclaw_current", "memlab.tools.release")
# Where the release may be named in a branch or its code imported: its own functions,
# its stages and presets, and the one owner of each choice made by name (the tools per
# memory-file rule, the keyword legs, the config readers, the file rules, the chunkers).
RELEASE_OWNERS = (
    "memlab.openclaw_current*",
    "memlab.stages*",
    "memlab.pipeline.presets",
    "memlab.tools.release",
    "memlab.tools.variants",
    "memlab.retrieval.candidates",
    "memlab.config*",
    "memlab.store.filerules",
    "memlab.chunking*",
)


def release_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each comparison with a release name and each import of the
    release's code in ``tree``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for v in (node.left, *node.comparators):
                items = v.elts if isinstance(v, ast.Tuple | ast.List | ast.Set) else [v]
                if any(isinstance(c, ast.Constant) and c.value in RELEASE_NAMES for c in items):
                    out.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(n.startswith(RELEASE_CODE) for n in names):
                out.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Import) and any(
            a.name.startswith(RELEASE_CODE) for a in node.names
        ):
            out.append((node.lineno, "import " + ", ".join(a.name for a in node.names)))
    return sorted(out)


def test_no_release_branch_outside_its_stages_and_presets() -> None:
    """The 2026.9.6 release is presets and stages of the one engine: outside the modules
    that own a choice by name (RELEASE_OWNERS), no module compares a value with a release
    name or imports the release's code; the command line and the server ask the owners
    (memlab.tools.variants, memlab.config.load, memlab.store.filerules)."""
    bad = []
    for name, path in MODULES.items():
        owned = any(
            name.startswith(o[:-1]) if o.endswith("*") else name == o for o in RELEASE_OWNERS
        )
        if owned:
            continue
        for line, what in release_branches(ast.parse(path.read_text(encoding="utf-8"))):
            bad.append(f"{path.relative_to(REPO)}:{line}: {what}")
    assert not bad, "release branches outside its stages and presets:\n" + "\n".join(bad)


def test_the_release_branch_check_sees_a_branch() -> None:
    """The check above is not vacuous: it finds a comparison, a tuple membership and an
    import of the release's code."""
    src = (
        "if p.memory_files == 'openclaw-2026.9': pass\n"
        "if mode in ('and', 'openclaw-current'): pass\n"
        "from memlab.tools import release\n"
        "import memlab.openclaw_current.ranking\n"
    )
    assert [line for line, _ in release_branches(ast.parse(src))] == [1, 2, 3, 4]
