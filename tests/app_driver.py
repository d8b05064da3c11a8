"""Drive the real app: ``streamlit run app.py`` on a free port, and Debian's Chromium through Playwright.

Shared by ``tests/test_browser.py`` (does it work?) and ``benchmarks/bench_app.py`` (how fast?).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: what "the answer is drawn" looks like in the newest assistant message
ANSWER_SELECTOR = (
    '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg, .vega-embed canvas, '
    '[data-testid="stMetric"], [data-testid="stDataFrame"], [data-testid="stAlert"]'
)
CHART_SELECTOR = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg, .vega-embed canvas'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(data_dir: Path | str, **extra: str) -> dict:
    """The environment for the app under test: the given data directory, the offline planner, no keys, and no
    background indexing of the ACS table catalog (it would compete for the cores and change the index); ``extra``
    may say otherwise (e.g. the Claude planner against a local fake of its API)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "DATABASE_URL", "SAGE_READER_URL", "CENSUS_API_KEY")}
    env.update(SAGE_DATA_DIR=str(data_dir), SAGE_PLANNER="offline", HF_HUB_OFFLINE="1", SAGE_CATALOG_INDEX="off")
    env.update(extra)
    return env


@dataclass
class AppServer:
    url: str
    process: subprocess.Popen
    started: float  # perf_counter() when `streamlit run` was started
    healthy_s: float  # seconds until /_stcore/health answered
    served_s: float  # seconds until the page itself was served


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 - 127.0.0.1 only
        resp.read()
        return resp.status


@contextmanager
def streamlit_app(env: dict, *, timeout: float = 60.0, log: Path | None = None) -> Iterator[AppServer]:
    """Start ``streamlit run app.py`` and wait until its health check and its page answer; stop it afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
    )
    try:
        healthy_s = served_s = None
        while time.perf_counter() - started < timeout:
            if process.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {process.returncode}")
            try:
                if healthy_s is None and _get(url + "/_stcore/health") == 200:
                    healthy_s = time.perf_counter() - started
                if healthy_s is not None and _get(url + "/") == 200:
                    served_s = time.perf_counter() - started
                    break
            except OSError:
                pass
            time.sleep(0.05)
        if served_s is None:
            raise TimeoutError(f"the app did not start within {timeout:.0f} s")
        yield AppServer(url, process, started, healthy_s, served_s)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            out.close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def open_app(browser, url: str, *, width: int = 1440, height: int = 1000, timeout_ms: int = 60_000):
    """A page on the app, once the chat input is there (the first script run has finished its setup check)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for(timeout=timeout_ms)
    return page


def wait_idle(page, *, timeout_ms: int = 60_000) -> None:
    """Until the script run in progress (a click's rerun) has finished: no "Running..." icon and no stale element
    left on the page. Counting the messages during a rerun counts stale copies too, and the next answer would be
    looked for at the wrong place."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid^=\"stStatusWidgetRunning\"]') && "
        "!document.querySelector('[data-stale=\"true\"]')", timeout=timeout_ms)


def ask(page, question: str, *, timeout_ms: int = 60_000):
    """Type ``question``, press Enter, wait until the answer is drawn; the assistant message and the seconds."""
    wait_idle(page, timeout_ms=timeout_ms)
    messages = page.locator('[data-testid="stChatMessage"]')
    before = messages.count()
    box = page.locator('[data-testid="stChatInputTextArea"]')
    box.fill(question)
    started = time.perf_counter()
    box.press("Enter")
    answer = messages.nth(before + 1)
    answer.locator(ANSWER_SELECTOR).first.wait_for(timeout=timeout_ms)
    return answer, time.perf_counter() - started


def sign_in(page, password: str) -> None:
    """The sidebar's "Curator sign-in": the password, then "Sign in" (pressed again if the first press was lost: the
    form empties its field when it is sent); returns once the page is idle again."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    field = sidebar.get_by_label("Curator password")
    if not field.is_visible():
        sidebar.get_by_text("Curator sign-in").click()
    field.fill(password)
    button = sidebar.get_by_role("button", name="Sign in")
    button.click()
    signed_in = sidebar.get_by_text("Curator", exact=True)
    deadline = time.monotonic() + 30
    pressed_again = False
    while not (signed_in.is_visible() or _emptied(field)):
        assert time.monotonic() < deadline, "the sign-in form was not sent"
        if not pressed_again and time.monotonic() > deadline - 20:
            button.click()
            pressed_again = True
        time.sleep(0.2)
    wait_idle(page)


def _emptied(field) -> bool:
    try:
        return field.is_visible() and field.input_value(timeout=1000) == ""
    except Exception:  # detached meanwhile: the page was redrawn
        return False
