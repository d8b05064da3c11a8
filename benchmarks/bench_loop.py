"""The question loop's own overhead with the Claude planner, against the local fake Messages API.

For each question of a JSON Lines file the fake answers with the question's gold SQL (a decline when it is null),
so the full path runs: retrieve -> prompt -> the real SDK over HTTP -> guard -> execute -> log.  The time spent
inside the SDK call (HTTP round trip to the fake) is measured separately and subtracted: what is left is the loop's
own overhead, the part this project controls.

    python benchmarks/bench_loop.py FILE [--repeat 3] [--json]

Starts its own temporary embedded database (or uses DATABASE_URL / SAGE_DATA_DIR with --use-env).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sage import agent  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.planner.claude.claude import ClaudePlanner  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, reply_plan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--use-env", action="store_true", help="use DATABASE_URL / SAGE_DATA_DIR instead of a temp db")
    args = ap.parse_args()
    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line.strip()]

    tmp = None
    if args.use_env:
        settings = load_settings()
    else:
        tmp = tempfile.TemporaryDirectory(prefix="sage-bench-loop-")
        settings = load_settings(environ={}, secrets_path=Path(os.devnull), data_dir=Path(tmp.name) / "pgdata")
        run_setup(settings)
    with FakeAnthropic() as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        settings = settings.replace(anthropic_api_key="bench-key", planner="claude")
        planner = ClaudePlanner(settings)
        sdk_ms: list[float] = []
        parse = planner._client.messages.parse  # the SDK call (HTTP round trip and validating the reply)

        def timed_parse(*a, **kw):
            t = time.perf_counter()
            try:
                return parse(*a, **kw)
            finally:
                sdk_ms.append((time.perf_counter() - t) * 1000)

        planner._client.messages.parse = timed_parse
        fake.enqueue(reply_plan(rows[0]["gold_sql"] or "", ["warm-up"], "table"))
        agent.ask(rows[0]["question"], settings, planner=planner, record=False)  # warm the model and connections
        overhead, totals, answered = [], [], 0
        for _ in range(args.repeat):
            for row in rows:
                fake.enqueue(reply_plan(row["gold_sql"] or "", ["benchmark plan"], "table"))
                sdk_ms.clear()
                a = agent.ask(row["question"], settings, planner=planner)
                answered += a.answered
                totals.append(a.timings_ms["total"])
                overhead.append(a.timings_ms["total"] - sum(sdk_ms))
    out = {
        "runs": len(totals),
        "answered": answered,
        "loop_overhead_ms": {"p50": round(percentile(overhead, 50), 2), "p95": round(percentile(overhead, 95), 2),
                             "mean": round(statistics.mean(overhead), 2)},
        "total_ms_with_fake_model": {"p50": round(percentile(totals, 50), 2), "p95": round(percentile(totals, 95), 2)},
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['runs']} runs, {answered} answered (declines count as not answered)")
        print(f"loop overhead (all but the model call): p50 {out['loop_overhead_ms']['p50']} ms, "
              f"p95 {out['loop_overhead_ms']['p95']} ms")
        print(f"total with the local fake model:      p50 {out['total_ms_with_fake_model']['p50']} ms, "
              f"p95 {out['total_ms_with_fake_model']['p95']} ms")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
