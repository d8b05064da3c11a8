"""How fast the app feels: start on a warm data directory, and Enter-to-chart in a real browser (offline planner).

    python benchmarks/bench_app.py [--data-dir DIR] [--rounds 2] [--json]

1. Makes sure ``DIR`` (default: a temporary directory) is set up, with `python -m sage setup` in a separate
   process, so the embedded server is stopped again and the app starts as it would after a reboot-free restart.
2. App start: ``streamlit run app.py`` until ``/_stcore/health`` answers and the page is served, and (with the
   browser already running) until the chat input is on screen, i.e. the first script run with its setup check is
   done.  Repeated ``--rounds`` times.
3. In headless Chromium (Debian's /usr/bin/chromium): for each question, the time from pressing Enter to the
   answer drawn (a Vega canvas/svg or a metric in the new message); p50 and max.  Questions are asked in one
   conversation, as a user would, so later ones also pay for redrawing the earlier cards.

Targets (issue 7): Enter-to-chart p50 <= 1.5 s; start <= 5 s.  Speed is reported here, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sage.timing import percentile  # noqa: E402
from tests.app_driver import CHROMIUM, app_env, ask, launch, open_app, streamlit_app  # noqa: E402

#: asked in this order in one conversation: a ranking, one number, a state map, a county map, a stat row...
QUESTIONS = (
    "The 5 states with the most people",
    "Median household income in Cook County, Illinois",
    "Poverty rate by state",
    "Median gross rent by county in Arizona",
    "Which 10 counties have the largest population?",
    "How many housing units are there in Oregon?",
    "Unemployment rate by state",
)


def setup(data_dir: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sage", "setup"], cwd=ROOT, env=app_env(data_dir), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def bench(data_dir: Path, rounds: int, questions: tuple[str, ...]) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {"setup_s": round(setup(data_dir), 2), "starts": [], "questions": []}
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            for round_no in range(rounds):
                with streamlit_app(app_env(data_dir)) as app:
                    page = open_app(browser, app.url)
                    start = {
                        "health_s": round(app.healthy_s, 2),
                        "served_s": round(app.served_s, 2),
                        "interactive_s": round(time.perf_counter() - app.started, 2),
                    }
                    out["starts"].append(start)
                    if round_no == rounds - 1:
                        for question in questions:
                            _, seconds = ask(page, question)
                            out["questions"].append({"question": question, "seconds": round(seconds, 3)})
                    page.close()
        finally:
            browser.close()
    times = [q["seconds"] for q in out["questions"]]
    out["enter_to_chart_p50_s"] = round(percentile(times, 50), 3) if times else None
    out["enter_to_chart_max_s"] = round(max(times), 3) if times else None
    out["start_served_s"] = max(s["served_s"] for s in out["starts"])
    out["start_interactive_s"] = max(s["interactive_s"] for s in out["starts"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="a census-sage data directory (set up if needed)")
    parser.add_argument("--rounds", type=int, default=2, help="app starts to time (the last one asks questions)")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS), help="how many of the questions to ask")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sage-bench-app-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "pgdata"
        result = bench(data_dir, max(1, args.rounds), QUESTIONS[: max(1, args.questions)])
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"setup (separate process, warm or first): {result['setup_s']:.2f} s")
    for i, s in enumerate(result["starts"], 1):
        print(f"start {i}: health {s['health_s']:.2f} s · page served {s['served_s']:.2f} s · "
              f"chat input on screen {s['interactive_s']:.2f} s")
    for q in result["questions"]:
        print(f"{q['seconds']:6.3f} s  {q['question']}")
    print(f"Enter to answer drawn: p50 {result['enter_to_chart_p50_s']:.3f} s, "
          f"max {result['enter_to_chart_max_s']:.3f} s (target p50 <= 1.5 s); start: served "
          f"{result['start_served_s']:.2f} s, interactive {result['start_interactive_s']:.2f} s (target <= 5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
