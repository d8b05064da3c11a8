"""`python -m sage bench`: stage latencies over a question set, the first question of a fresh app process, cold
start, and setup times.

Speed is measured here, never asserted in tests.  Setup times use a fresh temporary data directory (embedded
server only), so the user's database is not touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .settings import PROJECT_ROOT, Settings
from .timing import percentile

#: used when no question file is given: one question per common kind
SAMPLE_QUESTIONS = (
    "What is the population of Oregon?",
    "Top 10 counties by median household income",
    "Which states have an unemployment rate above 5%?",
    "Compare the poverty rate of Kentucky and Tennessee",
    "Los Angeles County, CA: population, median age and median gross rent",
    "Total number of housing units in the US",
    "Median home value by county in Colorado",
)


def stage_latencies(settings: Settings, questions: list[str], repeat: int = 3, planner: str | None = None) -> dict:
    from .agent import ask
    from .embeddings import get_provider

    stages: dict[str, list[float]] = {}
    answered = 0
    ask(questions[0], settings, planner=planner, record=False)  # warm the caches
    get_provider(settings).embed(["warm up"])  # and the model (a question loads it only when it retrieves)
    for _ in range(repeat):
        for q in questions:
            a = ask(q, settings, planner=planner, record=False)
            answered += a.answered
            for k, v in a.timings_ms.items():
                stages.setdefault(k, []).append(v)
    return {
        "questions": len(questions),
        "runs": len(questions) * repeat,
        "answered": answered,
        "stages_ms": {k: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
                      for k, v in stages.items()},
    }


def setup_times() -> dict:
    """First setup on a fresh data directory, then a second one (both in a child process, as a user runs them)."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sage-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
        env["SAGE_DATA_DIR"] = str(Path(tmp) / "pgdata")
        env["SAGE_EMBEDDED_LINGER_S"] = "0"  # each step starts the server, as on a machine just started
        for label in ("first_setup_s", "second_setup_s"):
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "sage", "setup", "--json"], cwd=PROJECT_ROOT, env=env,
                                  capture_output=True, text=True)
            out[label] = round(time.perf_counter() - t, 2)
            if proc.returncode != 0:
                out["error"] = proc.stderr.strip().splitlines()[-1:]
                break
            out[label.replace("_s", "_steps")] = json.loads(proc.stdout)["steps"]
        t = time.perf_counter()
        code = (
            "from sage.settings import load_settings; from sage.retrieve import retrieve; "
            "retrieve(load_settings(), 'median household income', top_k=5)"
        )
        subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True)
        out["cold_start_first_retrieve_s"] = round(time.perf_counter() - t, 2)
    return out


#: the first question of :func:`first_question` (a ranking: the card draws a chart)
FIRST_QUESTION = "The 5 states with the most people"

_FIRST_QUESTION_CODE = """
import json, sys, time
started = time.perf_counter()
from sage import agent, charts, db  # what the app's pages import before anyone can ask
from sage.settings import load_settings
settings = load_settings()
db.run(settings, db.OWNER, db.is_set_up)  # the app's set-up check at its start
planner = agent.make_planner(settings, sys.argv[2] or None)  # the Ask page builds it when it is drawn
start_s = time.perf_counter() - started
asked = time.perf_counter()
answer = agent.ask(sys.argv[1], settings, planner=planner)
if answer.answered:
    charts.build(answer.result.columns, answer.result.rows, answer.display_hint)
print(json.dumps({"start_s": start_s, "to_card_s": time.perf_counter() - asked, "answered": answer.answered,
                  "stages_ms": answer.timings_ms}))
"""


def first_question(settings: Settings, planner: str | None = None, runs: int = 3) -> dict:
    """The first question of a freshly started app process, from asking to the card built (the answer and its
    chart; drawing it is the browser's): a new process imports what the app's pages import, makes the app's
    set-up check and builds the planner as the Ask page does when it is drawn (``start_s``), then asks
    :data:`FIRST_QUESTION` (``to_card_s``) with nothing else warmed up — the app's background warm-up, which asks
    a question of its own at start, would only make it faster.  Medians of ``runs`` processes."""
    env = dict(os.environ)
    if settings.database_url:
        env["DATABASE_URL"] = settings.database_url
    else:
        env.pop("DATABASE_URL", None)
        env["SAGE_DATA_DIR"] = str(settings.data_dir)
    found = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-c", _FIRST_QUESTION_CODE, FIRST_QUESTION, planner or ""],
                              cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1:]}
        found.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    by_card = sorted(found, key=lambda x: x["to_card_s"])
    middle = by_card[len(by_card) // 2]
    return {"question": FIRST_QUESTION, "runs": runs, "answered": all(x["answered"] for x in found),
            "to_card_s": round(middle["to_card_s"], 3), "start_s": round(sorted(x["start_s"] for x in found)[
                len(found) // 2], 3), "stages_ms": middle["stages_ms"]}


def run_bench(settings: Settings, file: Path | None = None, repeat: int = 3, planner: str | None = None) -> dict:
    if file:
        questions = [json.loads(line)["question"] for line in file.read_text().splitlines() if line.strip()]
    else:
        questions = list(SAMPLE_QUESTIONS)
    data: dict[str, Any] = {"planner": planner or settings.effective_planner}
    data.update(stage_latencies(settings, questions, repeat=repeat, planner=planner))
    data["first_question"] = first_question(settings, planner=planner)
    data["setup"] = setup_times()
    return data


def format_table(data: dict) -> str:
    lines = [f"planner {data['planner']}: {data['answered']}/{data['runs']} answered over {data['questions']} "
             "questions",
             f"{'stage':<10} {'p50 ms':>10} {'p95 ms':>10}"]
    for stage, v in data["stages_ms"].items():
        lines.append(f"{stage:<10} {v['p50']:>10.1f} {v['p95']:>10.1f}")
    first = data.get("first_question", {})
    lines.append("")
    if "to_card_s" in first:
        lines.append(f"first question of a fresh app process ({first['question']!r}): {first['to_card_s']:.2f} s to "
                     f"the card (median of {first['runs']}; the process started and checked the database in "
                     f"{first['start_s']:.2f} s)")
    elif "error" in first:
        lines.append(f"first question error: {first['error']}")
    s = data.get("setup", {})
    lines.append("")
    for k in ("first_setup_s", "second_setup_s", "cold_start_first_retrieve_s"):
        if k in s:
            lines.append(f"{k:<30} {s[k]:>8.2f}")
    if "error" in s:
        lines.append(f"setup error: {s['error']}")
    return "\n".join(lines)
