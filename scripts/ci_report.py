"""Print how long each phase of a CI run took, and its slowest tests.

``.ci/run`` calls this last: the seconds of each phase ``make test`` recorded in
``.pytest_cache/ci/phases.tsv`` (lint, fetching OpenClaw's release, tests), the set-up
and docs phases ``.ci/run`` passes with ``--phase NAME=SECONDS``, the notebooks' share
of the tests (the executed notebooks' own durations, from pytest's JUnit XML), and the
ten slowest tests, so a slow addition shows in the log of the change that made it.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPORT = Path(".pytest_cache") / "ci"
NOTEBOOK_TEST = "test_notebook_executes"


def read_phases(path: Path) -> dict[str, float]:
    """{phase: seconds} from ``NAME<TAB>SECONDS`` lines (a later line of a name adds up)."""
    out: dict[str, float] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, _, seconds = line.partition("\t")
            if name and seconds.strip():
                out[name] = out.get(name, 0.0) + float(seconds)
    return out


def read_tests(path: Path) -> list[tuple[float, str]]:
    """(seconds, ``file::name``) of every test case in a JUnit XML file, slowest first."""
    if not path.is_file():
        return []
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        where = case.get("classname", "").replace(".", "/") + ".py"
        cases.append((float(case.get("time", 0.0)), f"{where}::{case.get('name', '')}"))
    return sorted(cases, reverse=True)


def report(phases: dict[str, float], tests: list[tuple[float, str]], slowest: int = 10) -> str:
    """The phase table (with the notebooks' share of the tests) and the slowest tests."""
    notebooks = [(s, n) for s, n in tests if NOTEBOOK_TEST in n]
    lines = ["CI phases:"]
    for name, seconds in phases.items():
        lines.append(f"  {name:<9} {seconds:7.0f} s")
        if name == "tests" and notebooks:
            total = sum(s for s, _ in notebooks)
            worst = max(notebooks)
            lines.append(
                f"  {'notebooks':<9} {total:7.0f} s  ({len(notebooks)} executed within the tests; "
                f"slowest {worst[0]:.0f} s: {worst[1].split('[')[-1].rstrip(']')})"
            )
    lines.append(f"  {'total':<9} {sum(phases.values()):7.0f} s")
    if tests:
        lines.append(f"slowest {min(slowest, len(tests))} tests:")
        lines += [f"  {s:7.1f} s  {n}" for s, n in tests[:slowest]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=REPORT, help="phases.tsv and junit.xml")
    p.add_argument("--phase", action="append", default=[], metavar="NAME=SECONDS")
    args = p.parse_args(argv)
    phases: dict[str, float] = {}
    for item in args.phase:
        name, _, seconds = item.partition("=")
        phases[name] = float(seconds)
    recorded = read_phases(args.dir / "phases.tsv")
    # Set-up first, then make test's own phases, then what ran after it (docs).
    first = {k: v for k, v in phases.items() if k == "setup"}
    later = {k: v for k, v in phases.items() if k != "setup"}
    print(report({**first, **recorded, **later}, read_tests(args.dir / "junit.xml")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
