"""Screenshot memlab's ``Explorer`` widget rendered live in JupyterLab.

Writes a small notebook into a temporary directory (a synthetic dataset, the
hashing embedder, ``Explorer(lab, qid=...)``), starts JupyterLab there on
127.0.0.1 with a throwaway token and throwaway settings, opens the notebook in
headless Chromium, runs all cells, waits until the widget panel and its
results table have rendered, lowers the ``minScore`` slider through its
readout (as a user would) so the picture shows a live re-score, saves a
screenshot and shuts JupyterLab down (also on error). It exits non-zero with
a clear message when the widget does not render (for instance "Error
displaying widget", a Python traceback in the cell, or no slider after the
timeout).

Needs, besides the project venv (which has jupyterlab and ipywidgets):

* Chromium from Debian: ``apt-get install -y chromium`` (``/usr/bin/chromium``);
  never ``playwright install``.
* Playwright for Python in the same venv: ``.venv/bin/pip install playwright``
  (it is not a memlab dependency).

Run from the repository root::

    .venv/bin/python scripts/explorer_screenshot.py --out docs/explorer.png
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The notebook: small enough that the kernel builds its index in a few seconds.
NOTEBOOK_CELLS = [
    "# memlab.widgets.Explorer over a small synthetic dataset (hashing embedder)\n"
    "from pathlib import Path\n"
    "\n"
    "from memlab.datasets.synthetic import SynthConfig, generate\n"
    "from memlab.embed import HashingEmbedder\n"
    "from memlab.eval.lab import Lab\n"
    "from memlab.widgets import Explorer\n"
    "\n"
    'ds = generate(SynthConfig(days=8, seed=5, queries_per_type=4), Path("synth"))\n'
    "lab = Lab(ds, embedder=HashingEmbedder(dimensions=128), progress=False)",
    'ex = Explorer(lab, preset="openclaw", qid="{qid}")\nex',
]
# Settings for a clean window: no news/update toasts.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
# True once the open notebook's kernel has started and is idle.
KERNEL_IDLE_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === "idle";
}"""
# Resolves to "ok" once the panel and its results table are on the page, to an
# error message when the cell failed, and to null while still waiting.
RENDER_STATE_JS = r"""() => {
  const body = document.body.innerText || "";
  if (body.includes("Error displaying widget")) return "JupyterLab says: Error displaying widget";
  // JupyterLab renders a cell's exception as stderr text with the traceback.
  const err = Array.from(document.querySelectorAll(
    ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"))
    .find(e => /Traceback \(most recent call last\)/.test(e.innerText));
  if (err) return "cell error: " + err.innerText.slice(0, 2000);
  const panel = document.querySelector(".jp-OutputArea .jupyter-widgets");
  if (!panel) return null;
  if (!panel.querySelector(".widget-slider")) return null;
  if (!panel.querySelector(".memlab-x table")) return null;
  return "ok";
}"""


class ScreenshotError(RuntimeError):
    """The widget did not render (or JupyterLab / Chromium failed)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_notebook(path: Path, qid: str) -> None:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"cell-{i}",
            "metadata": {},
            "outputs": [],
            "source": src.replace("{qid}", qid),
        }
        for i, src in enumerate(NOTEBOOK_CELLS)
    ]
    nb = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def write_lab_settings(settings_dir: Path) -> None:
    for rel, values in LAB_SETTINGS.items():
        f = settings_dir / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(values), encoding="utf-8")


class JupyterLab:
    """A JupyterLab server in ``root``, started and stopped by this script."""

    def __init__(self, root: Path, python: str, timeout: float) -> None:
        self.root = root
        self.python = python
        self.timeout = timeout
        self.port = free_port()
        self.token = os.urandom(16).hex()
        self.log_path = root.parent / "jupyterlab.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        home = self.root.parent
        settings = home / "lab-settings"
        write_lab_settings(settings)
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(home / "config"),
            JUPYTER_RUNTIME_DIR=str(home / "runtime"),
            JUPYTER_DATA_DIR=str(home / "data"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
            IPYTHONDIR=str(home / "ipython"),
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        )
        cmd = [
            self.python,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--ServerApp.root_dir={self.root}",
            f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # containers often run as root
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ScreenshotError(f"JupyterLab exited with code {self.proc.returncode}")
            try:
                self.api("GET", "/api/status")
                return
            except OSError:  # not listening yet
                time.sleep(0.5)
        raise ScreenshotError(f"JupyterLab did not answer within {self.timeout:.0f} s")

    def api(self, method: str, path: str) -> Any:
        req = urllib.request.Request(
            self.base + path,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])

    def stop(self) -> None:
        """Shut down through the API (kernels included), then make sure the process ended."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(OSError):  # URLError, refused, timeout: signals follow
            self.api("POST", "/api/shutdown")
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                proc.send_signal(sig)
            try:
                proc.wait(timeout=15)
                return
            except subprocess.TimeoutExpired:
                continue


def set_slider_readout(page: Any, label: str, value: str) -> None:
    """Type a value into a slider's editable readout and press Enter, as a user would."""
    slider = page.locator(".jp-OutputArea .widget-slider").filter(
        has=page.locator(".widget-label", has_text=label)
    )
    if slider.count() != 1:
        raise ScreenshotError(f"expected one slider labelled {label!r}, found {slider.count()}")
    readout = slider.locator(".widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.keyboard.press("Enter")


def screenshot(args: argparse.Namespace) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    out = Path(args.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memlab-explorer-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        write_notebook(root / "explorer.ipynb", args.qid)
        lab = JupyterLab(root, args.python, args.timeout)
        try:
            lab.start()
            print(f"JupyterLab running at {lab.base} (root {root})")
            with sync_playwright() as pw:
                try:
                    browser = pw.chromium.launch(
                        executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS
                    )
                except PlaywrightError as exc:
                    raise ScreenshotError(f"could not start {args.chromium}: {exc}") from exc
                page = None
                try:
                    page = browser.new_page(
                        viewport={"width": args.width, "height": 1000},
                        device_scale_factor=1,
                    )
                    page.goto(
                        f"{lab.base}/lab/tree/explorer.ipynb?token={lab.token}",
                        wait_until="domcontentloaded",
                    )
                    timeout_ms = args.timeout * 1000
                    page.wait_for_function(
                        "() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout_ms
                    )
                    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout_ms)
                    # Wait for the kernel, so "run all" is not queued behind a kernel picker.
                    page.wait_for_function(KERNEL_IDLE_JS, timeout=timeout_ms)
                    page.evaluate(
                        """async () => {
                          const app = window.jupyterapp;
                          if (app.shell.leftCollapsed === false)
                            await app.commands.execute('application:toggle-left-area');
                          await app.commands.execute('notebook:run-all-cells');
                        }"""
                    )
                    wait_rendered(page, timeout_ms, "after running the cells")
                    if args.min_score is not None:
                        set_slider_readout(page, "minScore", args.min_score)
                        page.wait_for_function(
                            "(v) => Array.from(document.querySelectorAll("
                            "'.jp-OutputArea .memlab-x')).some("
                            "e => e.innerText.includes('min_score=' + v))",
                            arg=str(float(args.min_score)),
                            timeout=timeout_ms,
                        )
                        wait_rendered(page, timeout_ms, f"after setting minScore={args.min_score}")
                    # Save (clears the tab's "unsaved" dot), deselect the readout and park the
                    # mouse so no focus ring or tooltip shows.
                    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
                    page.mouse.move(args.width - 5, 5)
                    page.evaluate("() => document.activeElement && document.activeElement.blur()")
                    fit_explorer_cell(page, args.width, args.height)
                    page.screenshot(path=str(out))
                except (PlaywrightError, ScreenshotError) as exc:
                    # Keep a picture of the failure, outside the repo and the temp root.
                    shot = Path(tempfile.gettempdir()) / f"{out.stem}.failed.png"
                    where = ""
                    if page is not None:
                        with contextlib.suppress(PlaywrightError):
                            page.screenshot(path=str(shot))
                            where = f" (the page as it was: {shot})"
                    if isinstance(exc, ScreenshotError):
                        raise ScreenshotError(f"{exc}{where}") from exc
                    raise ScreenshotError(f"browser step failed{where}: {exc}") from exc
                finally:
                    browser.close()
        except ScreenshotError:
            print("--- JupyterLab log (tail) ---", file=sys.stderr)
            print(lab.log_tail(), file=sys.stderr)
            raise
        finally:
            lab.stop()
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")


def fit_explorer_cell(page: Any, width: int, max_height: int) -> None:
    """Grow the window (up to ``max_height``) to fit the Explorer's cell, then scroll to it."""
    cell = ".jp-Notebook .jp-Cell:last-child"
    # Height of everything around the notebook's scrolling area (menus, toolbar, status bar).
    extra = page.evaluate(
        """() => {
          const nb = document.querySelector('.jp-WindowedPanel-outer, .jp-Notebook');
          const r = nb.getBoundingClientRect();
          return r.top + (window.innerHeight - r.bottom);
        }"""
    )
    need = page.eval_on_selector(cell, "e => e.getBoundingClientRect().height")
    page.set_viewport_size({"width": width, "height": min(max_height, int(extra + need + 24))})
    page.wait_for_timeout(300)  # let JupyterLab lay out the new size
    page.eval_on_selector(cell, "e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)  # let the scroll and fonts settle


def wait_rendered(page: Any, timeout_ms: float, when: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        handle = page.wait_for_function(RENDER_STATE_JS, timeout=timeout_ms)
    except PlaywrightTimeout as exc:
        raise ScreenshotError(
            f"the Explorer widget did not render {when}: no .jupyter-widgets panel with a "
            ".widget-slider and a results table within the timeout"
        ) from exc
    state = handle.json_value()
    if state != "ok":
        raise ScreenshotError(f"the Explorer widget did not render {when}: {state}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "explorer.png"), help="PNG to write")
    ap.add_argument("--qid", default="exact-0003", help="question the Explorer starts on")
    ap.add_argument(
        "--min-score",
        default="0.1",
        help="value typed into the minScore slider before the shot, unlike the preset's "
        "0.35 ('' to leave the preset's)",
    )
    ap.add_argument("--width", type=int, default=1400, help="viewport width")
    ap.add_argument(
        "--height", type=int, default=1600, help="max viewport height (shrunk to fit the cell)"
    )
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per wait")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium executable")
    ap.add_argument(
        "--python", default=sys.executable, help="Python with jupyterlab, ipywidgets and memlab"
    )
    args = ap.parse_args(argv)
    if args.min_score == "":
        args.min_score = None
    else:
        try:
            value = float(args.min_score)
        except ValueError:
            ap.error(f"--min-score must be a number in [0, 1], got {args.min_score!r}")
        if not 0.0 <= value <= 1.0:
            ap.error(f"--min-score must be in [0, 1], got {value}")
        # The slider steps by 0.01: ask for a value it can hold, or the wait never ends.
        args.min_score = str(round(value, 2))
    if not Path(args.chromium).exists():
        print(
            f"error: no Chromium at {args.chromium} (apt-get install -y chromium)", file=sys.stderr
        )
        return 2
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("error: playwright is not installed (pip install playwright)", file=sys.stderr)
        return 2
    try:
        screenshot(args)
    except ScreenshotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
