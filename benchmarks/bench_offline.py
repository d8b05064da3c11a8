"""Accuracy and planning latency of the offline planner on a question file.

    python benchmarks/bench_offline.py FILE [--json] [--verbose]

FILE is JSON Lines with ``id``, ``question``, ``gold_sql`` (null = the data cannot answer it; the right result
is a decline) and optionally ``kind``.  For each row the planner plans, its SQL and the gold SQL run through the
guard and the read-only executor, and :func:`sage.evaluate.compare_results` decides.  Prints accuracy (overall
and per kind), every failure with its reason, and plan latency p50/p95.  Uses the database of the current
settings (DATABASE_URL or the embedded server in SAGE_DATA_DIR; run `python -m sage setup` first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sage import execute, guard  # noqa: E402
from sage.errors import SageError  # noqa: E402
from sage.evaluate import compare_results, gold_is_ordered  # noqa: E402
from sage.planner.offline import OfflinePlanner  # noqa: E402
from sage.settings import load_settings  # noqa: E402


def run_sql(sql: str, settings):
    res = execute.run(guard.check(sql, max_rows=settings.max_rows), settings)
    return res.columns, res.rows


def evaluate_file(path: Path, settings, verbose: bool = False) -> dict:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    planner = OfflinePlanner(settings)
    planner.plan("warm up: population of Ohio", [])  # loads the catalog once, outside the timings
    results = []
    plan_ms = []
    for row in rows:
        t0 = time.perf_counter()
        plan = planner.plan(row["question"], [])
        ms = (time.perf_counter() - t0) * 1000
        plan_ms.append(ms)
        gold = row.get("gold_sql")
        item = {"id": row.get("id"), "kind": row.get("kind") or ("decline" if gold is None else "other"),
                "question": row["question"], "sql": plan.sql, "plan_ms": round(ms, 2),
                "assumptions": plan.assumptions, "display_hint": plan.display_hint}
        if gold is None:
            item["correct"] = plan.declined
            item["reason"] = "declined" if plan.declined else "answered a question the data cannot answer"
        elif plan.declined:
            item["correct"] = False
            item["reason"] = "declined: " + (plan.assumptions[0] if plan.assumptions else "")
        else:
            try:
                gcols, grows = run_sql(gold, settings)
            except SageError as exc:
                item["correct"], item["reason"] = False, f"gold SQL failed: {exc.message}"
                results.append(item)
                continue
            try:
                pcols, prows = run_sql(plan.sql, settings)
            except SageError as exc:
                item["correct"], item["reason"] = False, f"planned SQL failed: {exc.message} {exc.detail or ''}"
                results.append(item)
                continue
            ok, why = compare_results(gcols, grows, pcols, prows, gold_is_ordered(gold))
            item["correct"], item["reason"] = ok, why
            if verbose or not ok:
                item["gold_columns"], item["gold_rows"] = gcols, grows[:5]
                item["columns"], item["rows"] = pcols, prows[:5]
        results.append(item)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_kind[r["kind"]].append(r["correct"])
    n = len(results)
    correct = sum(r["correct"] for r in results)
    return {
        "file": str(path),
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 3) if n else 0.0,
        "by_kind": {k: {"n": len(v), "correct": sum(v), "accuracy": round(sum(v) / len(v), 3)}
                    for k, v in sorted(by_kind.items())},
        "plan_ms": {"p50": round(statistics.median(plan_ms), 2) if plan_ms else 0.0,
                    "p95": round(sorted(plan_ms)[max(0, int(len(plan_ms) * 0.95) - 1)], 2) if plan_ms else 0.0,
                    "max": round(max(plan_ms), 2) if plan_ms else 0.0},
        "results": results,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", type=Path)
    ap.add_argument("--json", action="store_true", help="print the full report as JSON")
    ap.add_argument("--verbose", action="store_true", help="show SQL and rows of every question")
    args = ap.parse_args(argv)
    settings = load_settings(planner="offline")
    report = evaluate_file(args.file, settings, verbose=args.verbose)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    print(f"{report['file']}: {report['correct']}/{report['n']} correct, accuracy {report['accuracy']:.3f}")
    for kind, v in report["by_kind"].items():
        print(f"  {kind:<10} {v['correct']:>3}/{v['n']:<3} {v['accuracy']:.3f}")
    ms = report["plan_ms"]
    print(f"plan latency ms: p50 {ms['p50']}, p95 {ms['p95']}, max {ms['max']}")
    for r in report["results"]:
        if r["correct"] and not args.verbose:
            continue
        mark = "ok  " if r["correct"] else "FAIL"
        print(f"\n{mark} {r['id']} [{r['kind']}] {r['question']}\n     reason: {r['reason']}")
        if r["sql"]:
            print(f"     sql: {r['sql']}")
        if not r["correct"] and "gold_rows" in r:
            print(f"     gold: {r['gold_columns']} {r['gold_rows']}")
            print(f"     pred: {r['columns']} {r['rows']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
