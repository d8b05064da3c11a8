"""Many users at once and a long day: throughput, latency per stage, errors and memory (issue 12).

    python benchmarks/bench_load.py [--data-dir DIR] [--quick] [--json] [--phases single,loops,soak,browser]

Questions are those of ``tests/data/questions/dev.jsonl`` (45 of every kind), answered by the offline planner and
logged to ``sage.questions`` as in the app.  Phases:

* ``single``: one user in this process asks every question twice: the single-user p50/p95 per stage;
* ``loops`` (a): 50 question loops in threads of this one process for 60 s, each starting at a different question
  (throughput, p50/p95 per stage, errors);
* ``soak`` (c): 2,000 questions (4 threads) after a warm-up, with this process's resident memory (RSS) measured
  after a garbage collection before and after, and every 250 questions;
* ``browser`` (b): ``streamlit run app.py`` on a free port and one headless Chromium (Debian's /usr/bin/chromium,
  the flags of tests/app_driver.py) with one browser context per session: first one session asks 6 questions in
  turn, then 10 sessions ask 6 questions each, all at once.  Enter-to-answer-drawn per question in the browser,
  the server-side stages from the app's own query log, errors (an error box in the answer, or no answer within
  60 s, or a failed outcome in the log), the app process's RSS (after a warm-up question, and at the end), and the
  CPU seconds the app and Chromium used meanwhile (both share this machine's cores).

Stages: ``retrieve``, ``plan``, ``guard``, ``execute`` and ``total`` are the answer's own timings (``total`` is the
question loop, without the log); ``log`` is the time writing the query log took after it; ``wall`` is everything,
as the caller waits.  Targets: 0 errors; p95 with 10 browser sessions at most 3x the single-session p95; memory
growth over the soak at most 50 MB.  Speed is measured here, never asserted in tests.

``--quick`` runs a short version (10 loops for 10 s, a soak of 200, 3 browser sessions of 2 questions).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sage import agent, db  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402
from tests.app_driver import ANSWER_SELECTOR, CHROMIUM, CHROMIUM_ARGS, app_env, streamlit_app  # noqa: E402

QUESTIONS_FILE = ROOT / "tests" / "data" / "questions" / "dev.jsonl"
STAGES = ("retrieve", "plan", "guard", "execute", "total", "log", "wall")
#: asked by every browser session (a ranking, one number, a state map, a county map, a stat row, a comparison)
BROWSER_QUESTIONS = (
    "The 5 states with the most people",
    "Median household income in Cook County, Illinois",
    "Poverty rate by state",
    "Median gross rent by county in Arizona",
    "Travis County, TX: population, median age and median rent",
    "Compare the poverty rate of Kentucky and Tennessee",
)
ERROR_SELECTOR = '[data-testid="stAlertContentError"]'


def questions() -> list[str]:
    return [json.loads(line)["question"] for line in QUESTIONS_FILE.read_text().splitlines() if line.strip()]


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB, from /proc."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")  # pragma: no cover - not Linux


def summary(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    out = {}
    for stage in STAGES:
        values = [s[stage] for s in samples if stage in s]
        if values:
            out[stage] = {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1)}
    return out


def ask_one(settings, question: str) -> tuple[dict[str, float], str | None]:
    """One question as the app asks it (offline planner, logged); its timings and its error kind (None if fine)."""
    started = time.perf_counter()
    answer = agent.ask(question, settings, planner="offline")
    wall = (time.perf_counter() - started) * 1000
    timings = {k: float(v) for k, v in answer.timings_ms.items()}
    timings["wall"] = wall
    timings["log"] = max(0.0, wall - timings.get("total", 0.0))
    if answer.error is not None:
        return timings, str(answer.error.kind)
    return timings, None


def run_threads(settings, threads: int, *, seconds: float | None = None, total: int | None = None,
                qs: list[str]) -> dict[str, Any]:
    """``threads`` question loops until ``seconds`` passed or ``total`` questions were asked in all."""
    samples: list[dict[str, float]] = []
    errors: dict[str, int] = {}
    lock = threading.Lock()
    asked = [0]
    stop_at = time.perf_counter() + seconds if seconds else None
    barrier = threading.Barrier(threads)

    def loop(n: int) -> None:
        barrier.wait()
        i = n * 7  # each loop starts at another question
        while True:
            with lock:
                if total is not None and asked[0] >= total:
                    return
                asked[0] += 1
            if stop_at is not None and time.perf_counter() >= stop_at:
                return
            timings, error = ask_one(settings, qs[i % len(qs)])
            i += 1
            with lock:
                samples.append(timings)
                if error:
                    errors[error] = errors.get(error, 0) + 1

    workers = [threading.Thread(target=loop, args=(n,), name=f"load-{n}") for n in range(threads)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    return {"threads": threads, "questions": len(samples), "errors": sum(errors.values()), "error_kinds": errors,
            "seconds": round(elapsed, 1), "per_second": round(len(samples) / elapsed, 1),
            "stages_ms": summary(samples)}


def phase_single(settings, qs: list[str]) -> dict[str, Any]:
    for q in qs:  # warm: the embedder, the planner's catalog, both pools
        ask_one(settings, q)
    return run_threads(settings, 1, total=2 * len(qs), qs=qs)


def phase_loops(settings, qs: list[str], threads: int, seconds: float) -> dict[str, Any]:
    before = rss_mb()
    out = run_threads(settings, threads, seconds=seconds, qs=qs)
    out["rss_mb"] = {"start": round(before, 1), "end": round(rss_mb(), 1)}
    return out


def phase_soak(settings, qs: list[str], total: int, threads: int = 4) -> dict[str, Any]:
    run_threads(settings, threads, total=min(total, 200), qs=qs)  # warm-up: every cache and pool at its size
    gc.collect()
    start = rss_mb()
    checkpoints = [round(start, 1)]
    samples: list[dict[str, Any]] = []
    done = 0
    step = max(1, total // 8)
    while done < total:
        n = min(step, total - done)
        samples.append(run_threads(settings, threads, total=n, qs=qs))
        done += n
        gc.collect()
        checkpoints.append(round(rss_mb(), 1))
    errors = sum(s["errors"] for s in samples)
    seconds = sum(s["seconds"] for s in samples)
    return {"threads": threads, "questions": done, "errors": errors, "seconds": round(seconds, 1),
            "per_second": round(done / seconds, 1) if seconds else None,
            "rss_mb": {"start": checkpoints[0], "end": checkpoints[-1], "checkpoints": checkpoints,
                       "growth": round(checkpoints[-1] - checkpoints[0], 1)},
            "stages_ms": {k: v for k, v in samples[-1]["stages_ms"].items()}}


# ---------------------------------------------------------------------------------------------------------------
# the browser phase


async def _session(browser, url: str, asks: list[str], ready: list[int] | None = None,
                   start: asyncio.Event | None = None) -> list[dict[str, Any]]:
    """One browser context asking ``asks`` in turn; with ``start``, it first loads its page, then waits for it."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    await page.goto(url)
    box = page.locator('[data-testid="stChatInputTextArea"]')
    await box.wait_for(timeout=120_000)
    if ready is not None and start is not None:
        ready.append(1)
        await start.wait()
    out = []
    messages = page.locator('[data-testid="stChatMessage"]')
    for n, question in enumerate(asks):
        before = 2 * n  # a user message and an answer per earlier question
        await box.fill(question)
        started = time.perf_counter()
        await box.press("Enter")
        answer = messages.nth(before + 1)
        try:
            await answer.locator(ANSWER_SELECTOR).first.wait_for(timeout=60_000)
            seconds = time.perf_counter() - started
            failed = await answer.locator(ERROR_SELECTOR).count() > 0
            out.append({"question": question, "seconds": seconds, "error": "error box" if failed else None})
        except Exception as exc:  # noqa: BLE001 - a time-out is the measurement
            out.append({"question": question, "seconds": time.perf_counter() - started,
                        "error": f"no answer ({type(exc).__name__})"})
        # the earlier turns are redrawn after the new answer: let that run end before the next question
        deadline = time.perf_counter() + 30
        while await messages.count() < before + 2 and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
    return out  # the context stays open until the browser closes: its renderer's CPU time is read at the end


async def _browser_rounds(url: str, sessions: int, per_session: int, mark) -> dict[str, Any]:
    """A warm-up session (not counted), one session alone, then ``sessions`` at once; ``mark(name)`` is called
    between them (it notes the query log's last id and the app's memory)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            asks = list(BROWSER_QUESTIONS[:per_session])
            await _session(browser, url, asks[:1])  # the app's first question (its caches, the browser's)
            mark("single")
            single = await _session(browser, url, asks)
            mark("many")
            ready: list[int] = []
            start = asyncio.Event()
            tasks = [asyncio.create_task(_session(browser, url, asks[i % len(asks):] + asks[:i % len(asks)],
                                                  ready, start))
                     for i in range(sessions)]
            # every session loads its page first, then they all ask at once
            while len(ready) < sessions and not any(t.done() for t in tasks):
                await asyncio.sleep(0.05)
            start.set()
            many = [r for t in tasks for r in await t]
            mark("end")
        finally:
            await browser.close()
    return {"single": single, "many": many}


def cpu_seconds(pid: int | None = None, cmdline: str | None = None) -> float:
    """User + system CPU seconds of one process, or of every process whose command line contains ``cmdline``."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [str(pid)] if pid else [p for p in os.listdir("/proc") if p.isdigit()]
    total = 0.0
    for p in pids:
        try:
            if cmdline and cmdline not in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace"):
                continue
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _log_stages(settings, since_id: int, until_id: int | None = None) -> tuple[dict, int]:
    """Server-side stage timings and failures of the questions the app logged with since_id < id <= until_id."""
    with db.owner(settings) as conn:
        rows = conn.execute(
            "SELECT timings_ms, outcome FROM sage.questions WHERE id > %s AND (%s::bigint IS NULL OR id <= %s) "
            "ORDER BY id", (since_id, until_id, until_id)).fetchall()
    samples = [{k: float(v) for k, v in (t or {}).items()} for t, _ in rows]
    return summary(samples), sum(1 for _, outcome in rows if outcome == "failed")


def _max_log_id(settings) -> int:
    with db.owner(settings) as conn:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM sage.questions").fetchone()[0])


def phase_browser(settings, data_dir: Path, sessions: int, per_session: int) -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is missing (apt-get install -y chromium)"}
    marks: dict[str, tuple[int, float, float, float]] = {}
    with streamlit_app(app_env(data_dir), timeout=120) as app:
        pid = app.process.pid

        def mark(name: str) -> None:  # the app logs a question before it draws the answer
            marks[name] = (_max_log_id(settings), rss_mb(pid), cpu_seconds(pid), cpu_seconds(cmdline="/chromium"))

        rounds = asyncio.run(_browser_rounds(app.url, sessions, per_session, mark))
    single, many = rounds["single"], rounds["many"]
    single_stages, single_failed = _log_stages(settings, marks["single"][0], marks["many"][0])
    many_stages, many_failed = _log_stages(settings, marks["many"][0], marks["end"][0])
    rss_start, rss_end = marks["single"][1], marks["end"][1]

    def block(results: list[dict], stages: dict, failed: int, n: int) -> dict[str, Any]:
        seconds = [r["seconds"] * 1000 for r in results]
        errors = sum(1 for r in results if r["error"]) + failed
        return {"sessions": n, "questions": len(results), "errors": errors,
                "error_kinds": sorted({r["error"] for r in results if r["error"]}),
                "enter_to_answer_ms": {"p50": round(percentile(seconds, 50), 1),
                                       "p95": round(percentile(seconds, 95), 1)},
                "stages_ms": stages}

    one = block(single, single_stages, single_failed, 1)
    all_ = block(many, many_stages, many_failed, sessions)
    ratio = all_["enter_to_answer_ms"]["p95"] / one["enter_to_answer_ms"]["p95"] if single else None
    # where the time goes: the app (every session's script, the question loop) against the browser's rendering
    cpu = {phase: {"app": round(marks[b][2] - marks[a][2], 1), "chromium": round(marks[b][3] - marks[a][3], 1)}
           for phase, a, b in (("single", "single", "many"), ("many", "many", "end"))}
    return {"single": one, "many": all_, "p95_ratio": round(ratio, 2) if ratio else None,
            "app_rss_mb": {"start": round(rss_start, 1), "end": round(rss_end, 1)},
            "cpu_seconds": cpu}


# ---------------------------------------------------------------------------------------------------------------
# report


def _cell(stages: dict, stage: str) -> str:
    s = stages.get(stage)
    return f"{s['p50']:.0f}/{s['p95']:.0f}" if s else "-"


def table(result: dict[str, Any]) -> str:
    head = ("phase", "questions", "errors", "q/s", "wall", "retrieve", "plan", "guard", "execute", "log", "RSS MB")
    rows: list[tuple[str, ...]] = []

    def row(name: str, r: dict, wall_key: str = "wall") -> None:
        stages = r.get("stages_ms", {})
        rss = r.get("rss_mb") or r.get("app_rss_mb") or {}
        wall = (f"{r[wall_key]['p50']:.0f}/{r[wall_key]['p95']:.0f}" if wall_key in r
                else _cell(stages, wall_key))
        rows.append((name, str(r["questions"]), str(r["errors"]), str(r.get("per_second", "-")), wall,
                     *(_cell(stages, s) for s in ("retrieve", "plan", "guard", "execute", "log")),
                     f"{rss['start']:.0f} → {rss['end']:.0f}" if rss else "-"))

    if "single" in result:
        row("single user, in process", result["single"])
    if "loops" in result:
        r = result["loops"]
        row(f"(a) {r['threads']} loops × {r['seconds']:.0f} s", r)
    if "browser" in result and "skipped" not in result["browser"]:
        b = result["browser"]
        row("(b) browser, 1 session", {**b["single"], "rss_mb": {}}, "enter_to_answer_ms")
        row(f"(b) browser, {b['many']['sessions']} sessions", {**b["many"], "rss_mb": b["app_rss_mb"]},
            "enter_to_answer_ms")
    if "soak" in result:
        r = result["soak"]
        row(f"(c) soak of {r['questions']:,}", r)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)] if rows else [len(h) for h in head]
    lines = [" | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines.append("-|-".join("-" * w for w in widths))
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append("Stage cells are p50/p95 in ms; browser 'wall' is Enter to answer drawn, its stages from the app's "
                 "query log.")
    return "\n".join(lines)


def verdict(result: dict[str, Any]) -> list[str]:
    out = []
    errors = sum(result[p]["errors"] for p in ("single", "loops", "soak") if p in result)
    b = result.get("browser") or {}
    if "many" in b:
        errors += b["single"]["errors"] + b["many"]["errors"]
        out.append(f"p95 with {b['many']['sessions']} browser sessions / single session: {b['p95_ratio']} "
                   f"(target <= 3): {'met' if b['p95_ratio'] is not None and b['p95_ratio'] <= 3 else 'NOT met'}")
    if "cpu_seconds" in b:
        c = b["cpu_seconds"]
        out.append(f"CPU seconds used while the browser sessions asked: 1 session: app {c['single']['app']}, "
                   f"Chromium {c['single']['chromium']}; {b['many']['sessions']} sessions: app {c['many']['app']}, "
                   f"Chromium {c['many']['chromium']} (on {result['cores']} cores)")
    out.insert(0, f"errors: {errors} (target 0): {'met' if errors == 0 else 'NOT met'}")
    if "soak" in result:
        growth = result["soak"]["rss_mb"]["growth"]
        out.append(f"memory growth over the soak: {growth:+.1f} MB (target <= 50 MB): "
                   f"{'met' if growth <= 50 else 'NOT met'}; checkpoints {result['soak']['rss_mb']['checkpoints']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="a census-sage data directory (set up if needed)")
    parser.add_argument("--phases", default="single,loops,soak,browser")
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--soak", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--per-session", type=int, default=len(BROWSER_QUESTIONS))
    parser.add_argument("--quick", action="store_true", help="10 loops × 10 s, a soak of 200, 3 sessions × 2")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.threads, args.seconds, args.soak, args.sessions, args.per_session = 10, 10, 200, 3, 2
    phases = {p.strip() for p in args.phases.split(",") if p.strip()}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="sage-bench-load-") as tmp:
        data_dir = (args.data_dir or Path(tmp) / "pgdata").resolve()
        env = app_env(data_dir)
        subprocess.run([sys.executable, "-m", "sage", "setup"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        settings = load_settings(environ={"SAGE_DATA_DIR": str(data_dir), "SAGE_PLANNER": "offline"},
                                 secrets_path=Path(os.devnull))
        qs = questions()
        result: dict[str, Any] = {"settings": {k: settings.public()[k] for k in
                                               ("pool_size", "pool_max_overflow", "pool_timeout_s")},
                                  "cores": len(os.sched_getaffinity(0))}
        if "single" in phases or "browser" in phases:
            result["single"] = phase_single(settings, qs)
        if "loops" in phases:
            result["loops"] = phase_loops(settings, qs, args.threads, args.seconds)
        if "soak" in phases:
            result["soak"] = phase_soak(settings, qs, args.soak)
        if "browser" in phases:
            result["browser"] = phase_browser(settings, data_dir, args.sessions, args.per_session)
        db.dispose(settings)
    result["verdict"] = verdict(result)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(table(result))
        for line in result["verdict"]:
            print(line)
        if (result.get("browser") or {}).get("skipped"):
            print("browser phase skipped:", result["browser"]["skipped"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
