"""Measure the SQL guard and the guarded executor.

    python benchmarks/bench_guard.py [--database-url URL] [--timeout-ms 5000] [--rounds 5] [--json]

Without ``--database-url`` an embedded PostgreSQL is started in a temporary directory and set up from the
shipped extract (no retrieval index), then stopped at exit.  It reports:

* guard latency (p50 / p95) over every corpus line (tests/data/guard_corpus.jsonl), and over the accepted ones;
* how long a runaway statement (pg_sleep, a cartesian join) runs before the statement timeout stops it, and how
  long the cost gate takes to refuse the join instead;
* the executor's overhead over the bare query: the same guarded SQL on an already-open reader connection with
  nothing around it, versus ``execute.run`` (a pooled connection: ping, BEGIN READ ONLY + SET LOCAL, EXPLAIN cost
  gate, streaming fetch, ROLLBACK, DISCARD ALL), with the parts measured on their own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sage import db, execute, guard  # noqa: E402
from sage.errors import ExecutionError, GuardError  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402

CORPUS = [
    json.loads(line)
    for line in (ROOT / "tests" / "data" / "guard_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def bench_guard(rounds: int) -> dict:
    for case in CORPUS:  # warm up imports and caches
        try:
            guard.check(case["sql"])
        except GuardError:
            pass
    every, accepted = [], []
    for _ in range(rounds):
        for case in CORPUS:
            t = time.perf_counter()
            try:
                guard.check(case["sql"])
            except GuardError:
                pass
            took = ms(t)
            every.append(took)
            if case["expect"] == "accept":
                accepted.append(took)
    return {
        "statements": len(CORPUS),
        "all_p50_ms": percentile(every, 50),
        "all_p95_ms": percentile(every, 95),
        "accepted_p50_ms": percentile(accepted, 50),
        "accepted_p95_ms": percentile(accepted, 95),
        "max_ms": max(every),
    }


def bench_runaway(settings) -> list[dict]:
    timeout_ms = settings.statement_timeout_ms
    join = next(c["sql"] for c in CORPUS if c["expect"] == "runtime")
    out = []
    for label, call in (
        ("pg_sleep(60), no guard", lambda: execute._execute("SELECT pg_sleep(60)", settings)),
        ("cartesian join, no cost gate", lambda: execute._execute(guard.check(join).sql, settings)),
        ("cartesian join, run() with cost gate", lambda: execute.run(guard.check(join), settings)),
    ):
        t = time.perf_counter()
        try:
            call()
            kind = "finished"
        except ExecutionError as exc:
            kind = exc.kind
        took = ms(t)
        out.append({"query": label, "stopped_as": kind, "elapsed_ms": took, "over_timeout_ms": took - timeout_ms})
    return out


def bench_overhead(settings, rounds: int) -> dict:
    queries = [guard.check(c["sql"], max_rows=settings.max_rows) for c in CORPUS if c["expect"] == "accept"]
    conn = db.reader_connect(settings)
    conn.autocommit = True
    bare, full, connects, begins, explains, resets = [], [], [], [], [], []
    try:
        for q in queries:  # warm the server's caches and plans
            conn.execute(q.sql, prepare=True).fetchall()
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                conn.execute(q.sql, prepare=True).fetchall()
                b = ms(t)
                t = time.perf_counter()
                execute.run(q, settings)
                f = ms(t)
                bare.append(b)
                full.append(f)
            t = time.perf_counter()
            db.reader_connect(settings).close()
            connects.append(ms(t))
            t = time.perf_counter()
            conn.execute(execute._begin_sql(conn, settings.statement_timeout_ms))
            begins.append(ms(t))
            t = time.perf_counter()
            conn.execute("EXPLAIN (FORMAT JSON) " + queries[2].sql, prepare=True).fetchall()
            explains.append(ms(t))
            conn.execute("ROLLBACK")
            t = time.perf_counter()
            conn.execute("DISCARD ALL")  # what the pool pays per return, instead of a fresh connection
            resets.append(ms(t))
    finally:
        conn.close()
    overhead = [f - b for f, b in zip(full, bare, strict=True)]
    return {
        "queries": len(queries),
        "bare_p50_ms": percentile(bare, 50),
        "run_p50_ms": percentile(full, 50),
        "overhead_p50_ms": percentile(overhead, 50),
        "overhead_p95_ms": percentile(overhead, 95),
        "connect_p50_ms": percentile(connects, 50),
        "begin_set_local_p50_ms": percentile(begins, 50),
        "explain_p50_ms": percentile(explains, 50),
        "discard_all_p50_ms": percentile(resets, 50),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a set-up census-sage database (default: a temporary embedded one)")
    parser.add_argument("--timeout-ms", type=int, default=5000, help="statement timeout for the runaway test")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)

    report: dict = {"guard": bench_guard(args.rounds)}
    with tempfile.TemporaryDirectory(prefix="sage-bench-") as tmp:
        settings = load_settings(
            environ={}, secrets_path=Path(os.devnull), database_url=args.database_url, data_dir=Path(tmp) / "pgdata"
        ).replace(statement_timeout_ms=args.timeout_ms)
        if not args.database_url:
            from sage.census.setup import run_setup

            t = time.perf_counter()
            run_setup(settings, build_index=False)
            report["setup_s"] = ms(t) / 1000
        report["runaway"] = bench_runaway(settings)
        report["executor"] = bench_overhead(settings, args.rounds)

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    g = report["guard"]
    print(f"guard over {g['statements']} corpus statements x {args.rounds} rounds")
    print(f"  {'':<22}{'p50 ms':>10}{'p95 ms':>10}")
    print(f"  {'every statement':<22}{g['all_p50_ms']:>10.3f}{g['all_p95_ms']:>10.3f}")
    print(f"  {'accepted only':<22}{g['accepted_p50_ms']:>10.3f}{g['accepted_p95_ms']:>10.3f}")
    print(f"\nrunaway statements (statement timeout {args.timeout_ms} ms)")
    print(f"  {'query':<40}{'stopped as':>12}{'elapsed ms':>12}{'over ms':>10}")
    for r in report["runaway"]:
        print(f"  {r['query']:<40}{r['stopped_as']:>12}{r['elapsed_ms']:>12.1f}{r['over_timeout_ms']:>10.1f}")
    e = report["executor"]
    print(f"\nexecutor over {e['queries']} accepted queries x {args.rounds} rounds (p50 ms)")
    for key in (
        "bare_p50_ms",
        "run_p50_ms",
        "overhead_p50_ms",
        "overhead_p95_ms",
        "connect_p50_ms",
        "begin_set_local_p50_ms",
        "explain_p50_ms",
        "discard_all_p50_ms",
    ):
        print(f"  {key.removesuffix('_ms'):<24}{e[key]:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
