"""How good and how fast is retrieval?  Recall@k and top-1 of gold variables, warm latency, index build time.

    python benchmarks/bench_retrieve.py QUESTIONS.jsonl [--top-k 5] [--repeat 3] [--configured] [--json]

QUESTIONS.jsonl holds ``{"id", "question", "gold_sql"}`` rows; the gold variables of a question are the ACS codes
in its gold SQL (rows with ``gold_sql`` null are skipped).  Reported:

* **recall@k** — per question, the share of its gold variables among the first k retrieved variables, capped at k
  (a question needing 8 variables counts as fully served when its first 5 are all gold), averaged;
  **recall@k uncapped** the same without the cap; **all gold in k** the share of questions fully served;
* **top-1** — the share of questions whose first retrieved variable is a gold one;
* **latency** — p50 / p95 of ``retrieve()`` with a warm model and a warm connection: embedding the question (and
  its clauses) + the pgvector query + re-ranking, over every question ``--repeat`` times;
* **index build** — a full build of ``sage.schema_embeddings`` from nothing (introspection, variable catalog,
  embedding every chunk, writing), with the model already loaded; the model load is reported apart.

By default it starts its own embedded PostgreSQL in a temporary directory, loads the shipped extract (about 3 s,
not measured) and removes it afterwards; ``--configured`` uses the database of the current settings
(DATABASE_URL / SAGE_DATA_DIR) instead and rebuilds its index in place.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sage.census.setup import run_setup  # noqa: E402
from sage.embeddings import get_provider  # noqa: E402
from sage.evaluate import eval_retrieval  # noqa: E402
from sage.index import index_schema  # noqa: E402
from sage.retrieve import retrieve  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402


def measure(settings, questions_path: Path, top_k: int, repeat: int) -> dict:
    t = time.perf_counter()
    provider = get_provider(settings)
    model_load_s = time.perf_counter() - t

    with _owner(settings) as conn:  # a build from nothing: no table, no rows
        conn.execute("DROP TABLE IF EXISTS sage.schema_embeddings")
    t = time.perf_counter()
    report = index_schema(settings, provider=provider)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    rebuild = index_schema(settings, provider=provider, rebuild=True)
    rebuild_s = time.perf_counter() - t
    t = time.perf_counter()
    index_schema(settings, provider=provider)
    noop_s = time.perf_counter() - t

    result = eval_retrieval(settings, questions_path, top_k=top_k)
    questions = [r["question"] for r in result["results"]]
    retrieve(settings, "warm up", top_k=top_k)
    latencies = []
    for _ in range(repeat):
        for question in questions:
            t = time.perf_counter()
            retrieve(settings, question, top_k=top_k, object_types=("variable",))
            latencies.append((time.perf_counter() - t) * 1000)
    mixed = []
    for question in questions:
        t = time.perf_counter()
        retrieve(settings, question, top_k=10)
        mixed.append((time.perf_counter() - t) * 1000)
    return {
        "questions": result["n"],
        "skipped": result["skipped"],
        "k": top_k,
        "recall_at_k": round(result["recall_at_k"], 4),
        "recall_at_k_uncapped": round(result["recall_at_k_uncapped"], 4),
        "all_gold_in_k": round(result["all_gold_in_k"], 4),
        "top1": round(result["top1"], 4),
        "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2),
                       "max": round(max(latencies), 2), "n": len(latencies)},
        "latency_mixed_top10_ms": {"p50": round(percentile(mixed, 50), 2), "p95": round(percentile(mixed, 95), 2)},
        "model": provider.name,
        "model_load_s": round(model_load_s, 3),
        "index_build_s": round(build_s, 3),
        "index_rebuild_s": round(rebuild_s, 3),
        "index_noop_s": round(noop_s, 3),
        "chunks": report.chunks,
        "embedded": rebuild.upserted,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "misses": [
            {"id": r["id"], "gold": r["gold"], "retrieved": r["retrieved"]}
            for r in result["results"] if r["recall"] < 1 or not r["top1"]
        ],
    }


def _owner(settings):
    from sage import db

    return db.owner(settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path, help="JSON Lines file of {id, question, gold_sql}")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="latency passes over the questions")
    parser.add_argument("--configured", action="store_true", help="use the configured database, not a temporary one")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.questions.is_file():
        parser.error(f"{args.questions} is not a file")

    if args.configured:
        out = measure(load_settings(), args.questions, args.top_k, args.repeat)
    else:
        with tempfile.TemporaryDirectory(prefix="sage-bench-retrieve-") as tmp:
            settings = load_settings(environ={}, secrets_path=Path(os.devnull), data_dir=Path(tmp) / "pgdata")
            run_setup(settings, build_index=False)
            out = measure(settings, args.questions, args.top_k, args.repeat)

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    k = out["k"]
    print(f"questions             {out['questions']} (skipped {out['skipped']} without gold SQL)")
    print(f"recall@{k}              {out['recall_at_k']:.3f}   (uncapped {out['recall_at_k_uncapped']:.3f}, "
          f"all gold in top {k}: {out['all_gold_in_k']:.3f})")
    print(f"top-1                 {out['top1']:.3f}")
    lat = out["latency_ms"]
    print(f"retrieve latency      p50 {lat['p50']:.1f} ms   p95 {lat['p95']:.1f} ms   (warm, n={lat['n']}, variables "
          f"top {k}; mixed top 10: p50 {out['latency_mixed_top10_ms']['p50']:.1f} ms)")
    print(f"index build           {out['index_build_s']:.2f} s from nothing ({sum(out['chunks'].values())} chunks: "
          f"{out['chunks']}), rebuild {out['index_rebuild_s']:.2f} s, no-op {out['index_noop_s']:.2f} s")
    print(f"model                 {out['model']} (load {out['model_load_s']:.2f} s), {out['cores']} cores")
    for miss in out["misses"]:
        print(f"  miss {miss['id']}: gold {miss['gold']} got {miss['retrieved']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
