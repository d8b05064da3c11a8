"""Does retrieval find the ACS table a question needs when that table is not loaded?

    python benchmarks/bench_catalog.py [QUESTIONS.jsonl] [--top-k 5] [--configured] [--json]

QUESTIONS.jsonl holds ``{"id", "question", "tables": [acceptable table ids]}`` rows (default: the blind topic set
``tests/data/questions/retrieval_topics.jsonl``, 30 questions about tables the shipped extract does not hold).
Reported, each as recall@k (an acceptable table among the first k tables named) and top-1:

* **catalog retrieval** — the ``acs_table`` entries of the retrieval index (the offline ACS table catalog, minus
  the loaded tables): what the planners are shown as "not loaded — fetchable";
* **variable retrieval** — the tables of the retrieved *variables* (what retrieval offered before the catalog was
  indexed: only loaded tables, so a question about a table that is not loaded cannot be served);
* **keyword catalog search** — ``sage.census.catalog_search.search_tables`` on the question's words (the offline
  ``census tables --search``), for reference.

By default it sets up its own embedded PostgreSQL in a temporary directory (the setup is timed: that is the setup
time with the catalog indexed) and removes it afterwards; ``--configured`` uses the database of the current
settings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sage.census.catalog_search import search_tables  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.evaluate import eval_table_retrieval, read_topic_questions  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.types import OBJECT_TYPES  # noqa: E402

DEFAULT_QUESTIONS = ROOT / "tests" / "data" / "questions" / "retrieval_topics.jsonl"
_STOP = frozenset(
    "a an the of in on at for to by and or with who what whats how is are do does many much share percent "
    "percentage fraction number rate which most least have has had their there my i here me".split()
)


def keyword_search(settings, path: Path, top_k: int) -> dict:
    results = []
    for row in read_topic_questions(path):
        words = [w for w in re.findall(r"[a-z0-9]+", row["question"].lower()) if w not in _STOP]
        found = [t["table_id"] for t in search_tables(settings, " ".join(words), limit=top_k)]
        gold = {t.upper() for t in row["tables"]}
        results.append({"id": row["id"], "retrieved": found, "hit": bool(gold & set(found)),
                        "top1": bool(found) and found[0] in gold})
    n = len(results)
    return {"recall_at_k": sum(r["hit"] for r in results) / n, "top1": sum(r["top1"] for r in results) / n,
            "results": results}


def measure(settings, path: Path, top_k: int, setup_s: float | None) -> dict:
    out: dict = {"questions": len(read_topic_questions(path)), "k": top_k, "setup_s": setup_s}
    runs = {"variable retrieval": ("variable",)}
    if "acs_table" in OBJECT_TYPES:
        runs = {"catalog retrieval": ("acs_table",), **runs}
    for name, types in runs.items():
        t = time.perf_counter()
        result = eval_table_retrieval(settings, path, top_k=top_k, object_types=types)
        out[name] = {
            "recall_at_k": round(result["recall_at_k"], 4),
            "top1": round(result["top1"], 4),
            "seconds": round(time.perf_counter() - t, 2),
            "results": [{k: r[k] for k in ("id", "gold", "retrieved", "scores", "hit", "top1")}
                        for r in result["results"]],
        }
    kw = keyword_search(settings, path, top_k)
    out["keyword catalog search"] = {"recall_at_k": round(kw["recall_at_k"], 4), "top1": round(kw["top1"], 4),
                                     "results": kw["results"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", type=Path, nargs="?", default=DEFAULT_QUESTIONS)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--configured", action="store_true", help="use the configured database, not a temporary one")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.questions.is_file():
        parser.error(f"{args.questions} is not a file")

    if args.configured:
        out = measure(load_settings(), args.questions, args.top_k, None)
    else:
        with tempfile.TemporaryDirectory(prefix="sage-bench-catalog-") as tmp:
            settings = load_settings(environ={}, secrets_path=Path(os.devnull), data_dir=Path(tmp) / "pgdata")
            t = time.perf_counter()
            report = run_setup(settings)
            setup_s = round(time.perf_counter() - t, 2)
            out = measure(settings, args.questions, args.top_k, setup_s)
            out["setup_steps"] = report.steps
            out["index"] = report.index

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    k = out["k"]
    print(f"questions    {out['questions']}")
    if out["setup_s"] is not None:
        print(f"setup        {out['setup_s']:.1f} s on a fresh data directory "
              f"(index: {(out.get('index') or {}).get('chunks')})")
    for name in ("catalog retrieval", "variable retrieval", "keyword catalog search"):
        if name in out:
            r = out[name]
            print(f"{name:<24} recall@{k} {r['recall_at_k']:.3f}   top-1 {r['top1']:.3f}")
    for name in ("catalog retrieval", "variable retrieval"):
        if name in out:
            misses = [r for r in out[name]["results"] if not r["hit"]]
            if misses:
                print(f"\n{name}: misses")
                for r in misses:
                    print(f"  {r['id']}  gold {','.join(r['gold'])}  got {', '.join(r['retrieved'])}")
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
