"""The verified-answer library: where to put the similarity threshold, and how long a verified answer takes.

**Threshold.**  Every question of the question sets (``tests/data/questions/*.jsonl``, conversations left out) is
paired with every other one.  A pair is *the same question* when the two gold queries return the same result (the
scoring rule of ``sage/evaluate.py``): a paraphrase.  For each pair (A asked, B verified) the similarity is the one
the library computes — the embedding of A against the embedding of B's standalone reading (the offline planner's,
or B itself when it has none).  The report gives, per threshold, how many paraphrases pass (recall) and how many
pairs that are *not* the same question pass the similarity alone and the similarity plus the frame check
(``sage.verified.same_question``) — the second must be 0: a wrong answer served as verified is the one failure
that matters.

**Latency.**  Verifies the answers to ``--latency N`` development questions, then asks each again through
``agent.ask`` (retrieve -> library lookup -> guard -> execute), alternating with the same question answered by the
offline planner (the library not consulted), and reports p50/p95 of both (the whole ``ask``, the log not written).

    python benchmarks/bench_verified.py [--json] [--latency 30]

Starts its own temporary embedded database (or uses DATABASE_URL / SAGE_DATA_DIR with --use-env).
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

import numpy as np  # noqa: E402

from sage import agent, db, execute, guard, verified  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.embeddings import get_provider  # noqa: E402
from sage.errors import SageError  # noqa: E402
from sage.evaluate import compare_results, gold_is_ordered, read_questions  # noqa: E402
from sage.roles import Role  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402

QUESTIONS = ROOT / "tests" / "data" / "questions"
THRESHOLDS = (0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90)


def _rows(settings):
    rows = []
    for path in sorted(QUESTIONS.glob("*.jsonl")):
        if path.name.startswith(("conversations", "retrieval_")):
            continue  # conversations, and topic sets with acceptable tables rather than gold SQL
        for row in read_questions(path):
            if row.get("gold_sql"):
                rows.append(row)
    out = []
    for row in rows:
        try:
            gold = execute.run(guard.check(row["gold_sql"], max_rows=settings.max_rows), settings)
        except SageError:
            continue
        row["_gold"] = gold
        out.append(row)
    return out


def _same_result(a, b) -> bool:
    ga, gb = a["_gold"], b["_gold"]
    if len(ga.rows) != len(gb.rows) or len(ga.columns) != len(gb.columns):
        return False
    ordered = gold_is_ordered(a["gold_sql"]) and gold_is_ordered(b["gold_sql"])
    return compare_results(ga.columns, ga.rows, gb.columns, gb.rows, ordered)[0] and \
        compare_results(gb.columns, gb.rows, ga.columns, ga.rows, ordered)[0]


def threshold_report(settings) -> dict:
    rows = _rows(settings)
    provider = get_provider(settings)
    readings = [verified.read(settings, r["question"]) for r in rows]
    asked = np.asarray(provider.embed([r["question"] for r in rows]), dtype=np.float32)
    stored_text = [rd.standalone or r["question"] for r, rd in zip(rows, readings, strict=True)]
    stored = np.asarray(provider.embed(stored_text), dtype=np.float32)
    sims = asked @ stored.T
    n = len(rows)
    # group by gold result (a paraphrase = the same result); pairs compared once per ordered pair (A asked, B kept)
    groups: list[int] = []
    reps: list[int] = []
    for i in range(n):
        for g, j in enumerate(reps):
            if _same_result(rows[i], rows[j]):
                groups.append(g)
                break
        else:
            groups.append(len(reps))
            reps.append(i)
    same = np.equal.outer(np.asarray(groups), np.asarray(groups))
    np.fill_diagonal(same, False)
    off = ~np.eye(n, dtype=bool)
    positives = int(same.sum())
    negatives = int((off & ~same).sum())
    entries = [verified.VerifiedAnswer(j, None, rows[j]["question"], stored_text[j], rows[j]["gold_sql"], "table", [],
                                       readings[j].frame, "bench", None) for j in range(n)]  # type: ignore[arg-type]
    report = {"questions": n, "paraphrase_pairs": positives, "other_pairs": negatives, "thresholds": []}
    frame_ok: dict[tuple[int, int], bool] = {}
    for t in THRESHOLDS:
        passing = (sims >= t) & off
        tp = fp_sim = fp_full = tp_full = 0
        for i, j in zip(*np.nonzero(passing), strict=True):
            key = (int(i), int(j))
            if key not in frame_ok:
                frame_ok[key] = verified.same_question(readings[i], rows[i]["question"], entries[j])
            if same[i, j]:
                tp += 1
                tp_full += frame_ok[key]
            else:
                fp_sim += 1
                fp_full += frame_ok[key]
        report["thresholds"].append({
            "threshold": t,
            "paraphrases_passing_similarity": round(tp / positives, 3) if positives else 0.0,
            "paraphrases_served": round(tp_full / positives, 3) if positives else 0.0,
            "others_passing_similarity": fp_sim,
            "others_served": fp_full,
        })
    pos = sims[same]
    report["paraphrase_similarity"] = {"p5": round(float(np.percentile(pos, 5)), 3),
                                       "p50": round(float(np.percentile(pos, 50)), 3)} if positives else {}
    return report


def latency_report(settings, n: int, repeat: int = 3) -> dict:
    """Verify the answers to ``n`` development questions, then ask each again ``repeat`` times, alternating a
    verified answer (the library consulted) with the offline planner (``use_verified=False``), so both see the same
    machine load."""
    questions = [r["question"] for r in read_questions(QUESTIONS / "dev.jsonl") if r.get("gold_sql")][:n]
    ids = []
    for q in questions:
        answer = agent.ask(q, settings, planner="offline")
        if answer.answered and answer.id is not None:
            verified.add(settings, answer.id, role=Role.OPERATOR)
            ids.append(answer.id)
    served: list[float] = []
    lookup: list[float] = []
    planned: list[float] = []
    hits = asked = 0
    try:
        for _ in range(repeat):
            for q in questions:
                t = time.perf_counter()
                answer = agent.ask(q, settings, planner="offline", record=False)
                ms = (time.perf_counter() - t) * 1000
                asked += 1
                if answer.verified:
                    hits += 1
                    served.append(ms)
                    lookup.append(answer.timings_ms.get("verified", 0.0))
                t = time.perf_counter()
                agent.ask(q, settings, planner="offline", record=False, use_verified=False)
                planned.append((time.perf_counter() - t) * 1000)
    finally:
        with db.owner(settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers WHERE question_id = ANY(%s)", (ids,))

    def p(xs: list[float]) -> dict:
        return {"p50": round(percentile(xs, 50), 1), "p95": round(percentile(xs, 95), 1)}

    return {"questions": len(questions), "asked": asked, "served_verified": hits, "verified_ms": p(served),
            "library_lookup_ms": p(lookup), "offline_planner_ms": p(planned)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--latency", type=int, default=30, help="questions for the latency run (0: none)")
    ap.add_argument("--use-env", action="store_true", help="use DATABASE_URL / SAGE_DATA_DIR instead of a temp db")
    args = ap.parse_args()
    tmp = None
    if args.use_env:
        settings = load_settings()
    else:
        tmp = tempfile.TemporaryDirectory(prefix="sage-bench-verified-")
        settings = load_settings(environ={}, secrets_path=Path(os.devnull), data_dir=Path(tmp.name) / "pgdata")
        run_setup(settings)
    settings = settings.replace(planner="offline")
    out = {"threshold_in_use": verified.THRESHOLD, "threshold": threshold_report(settings)}
    if args.latency:
        out["latency"] = latency_report(settings, args.latency)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        th = out["threshold"]
        print(f"{th['questions']} questions, {th['paraphrase_pairs']} paraphrase pairs, {th['other_pairs']} others; "
              f"paraphrase similarity p5 {th['paraphrase_similarity'].get('p5')}, "
              f"p50 {th['paraphrase_similarity'].get('p50')}")
        print(f"{'threshold':>9} {'para sim':>9} {'para served':>11} {'others sim':>10} {'others served':>13}")
        for r in th["thresholds"]:
            print(f"{r['threshold']:>9.2f} {r['paraphrases_passing_similarity']:>9.3f} "
                  f"{r['paraphrases_served']:>11.3f} {r['others_passing_similarity']:>10} {r['others_served']:>13}")
        if "latency" in out:
            lat = out["latency"]
            print(f"verified answer: p50 {lat['verified_ms']['p50']} ms, p95 {lat['verified_ms']['p95']} ms "
                  f"({lat['served_verified']}/{lat['asked']} served; library lookup p50 "
                  f"{lat['library_lookup_ms']['p50']} ms); offline planner p50 {lat['offline_planner_ms']['p50']} ms, "
                  f"p95 {lat['offline_planner_ms']['p95']} ms")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
