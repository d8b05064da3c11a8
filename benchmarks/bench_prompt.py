"""How big is a Claude planner request, and how much of it does prompt caching cover?

For a handful of typical questions this builds exactly what :class:`sage.planner.claude.claude.ClaudePlanner` sends —
the static prefix (system prompt + worked examples, cached) and the per-question user message (the places block from
the place reader, retrieved context from the real index with each variable's periods, the question; once more with
one failed attempt, as on a retry) — and reports their sizes.

Tokens are an **estimate** (characters / 4, the usual rule of thumb for English and SQL): Anthropic's tokenizer is
only reachable through the API (``messages.count_tokens``), which this machine cannot call.  With ``--api`` and
``ANTHROPIC_API_KEY`` set (and ``ANTHROPIC_BASE_URL`` if needed) the script asks the API instead.

    python benchmarks/bench_prompt.py [--top-k 10] [--json] [--api]

Needs a set-up database (``python -m sage setup``) for retrieval.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sage.errors import SageError  # noqa: E402
from sage.planner.base import Attempt  # noqa: E402
from sage.planner.claude.blocks import format_places  # noqa: E402
from sage.planner.claude.claude import system_blocks  # noqa: E402
from sage.planner.claude.message import build_user_message  # noqa: E402
from sage.planner.claude.plan_model import PLAN_SCHEMA  # noqa: E402
from sage.settings import load_settings  # noqa: E402

#: typical questions of each kind (written for this benchmark; not from any eval set)
QUESTIONS = [
    "What is the median age in Cuyahoga County, Ohio?",
    "Which 10 states have the most housing units?",
    "Which Arizona counties have the highest share of people below the poverty line?",
    "Compare the share of adults with a graduate or professional degree in Colorado and Utah",
    "How many US households have an internet subscription?",
    "Give me population, per capita income and Gini index for Suffolk County, MA",
    "How long is the average commute in Ohio?",
    "How many housing units are in Austin, TX, and in Springfield?",
    "How has real median household income changed in Travis County, TX since 2014-2018?",
]
RETRY = Attempt(
    sql="SELECT g.county_name, e.poverty_rate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id",
    error='column e.poverty_rate does not exist (LINE 1: SELECT g.county_name, e.poverty_rate ...)',
    kind="undefined",
)


def estimate_tokens(text: str) -> int:
    return round(len(text) / 4)


def measure(top_k: int, api: bool) -> dict:
    from sage.planner.claude.resolve import ground
    from sage.planner.offline.catalog import load_catalog
    from sage.retrieve import retrieve_parts

    settings = load_settings()
    catalog = load_catalog(settings)
    system = system_blocks()
    prefix_text = "\n".join(b["text"] for b in system)
    schema_text = json.dumps(PLAN_SCHEMA)
    counter = _api_counter(settings, system) if api else None
    rows = []
    for q in QUESTIONS:
        # the schema and loaded variables, then the best ACS tables not loaded (when the catalog is indexed)
        loaded, found_catalog = retrieve_parts(settings, q, [(("table", "column", "variable"), top_k),
                                                            (("acs_table",), 5)])
        chunks = loaded + found_catalog
        grounding = ground(q, catalog)
        first = build_user_message(q, chunks, grounding=grounding)
        retry = build_user_message(q, chunks, error_context=[RETRY], grounding=grounding)
        row = {
            "question": q,
            "chunks": len(chunks),
            "catalog_chunks": len(found_catalog),
            "places_tokens": estimate_tokens(format_places(grounding)),
            "question_tokens": estimate_tokens(first),
            "retry_tokens": estimate_tokens(retry),
        }
        if counter:
            row["api_total_tokens"] = counter(first)
        rows.append(row)
    prefix = {
        "system_prompt_tokens": estimate_tokens(system[0]["text"]),
        "examples_tokens": estimate_tokens(system[-1]["text"]),
        "prefix_tokens": estimate_tokens(prefix_text),
    }
    per_q = [r["question_tokens"] for r in rows]
    typical = statistics.median(per_q)
    return {
        "method": "count_tokens API" if counter else "estimate: characters / 4",
        "model": settings.model,
        "top_k": top_k,
        **prefix,
        "output_schema_tokens": estimate_tokens(schema_text),
        "per_question_tokens": {"p50": typical, "min": min(per_q), "max": max(per_q)},
        "places_block_tokens": {"p50": statistics.median(r["places_tokens"] for r in rows),
                                "max": max(r["places_tokens"] for r in rows)},
        "retry_adds_tokens": statistics.median(r["retry_tokens"] - r["question_tokens"] for r in rows),
        "typical_total_tokens": prefix["prefix_tokens"] + typical,
        "cached_share": round(prefix["prefix_tokens"] / (prefix["prefix_tokens"] + typical), 3),
        "questions": rows,
    }


def _api_counter(settings, system):
    """``messages.count_tokens`` for the whole request (needs a key and the network)."""
    import anthropic

    if not settings.anthropic_api_key:
        raise SystemExit("--api needs ANTHROPIC_API_KEY")
    client = anthropic.Anthropic(api_key=settings.anthropic_api_key, timeout=settings.claude_timeout_s)

    def count(message: str) -> int:
        return client.messages.count_tokens(
            model=settings.model,
            system=system,
            messages=[{"role": "user", "content": message}],
            output_config={"format": {"type": "json_schema", "schema": PLAN_SCHEMA}},
        ).input_tokens

    return count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--api", action="store_true", help="count with the API's count_tokens instead of estimating")
    args = ap.parse_args(argv)
    try:
        report = measure(args.top_k, args.api)
    except SageError as exc:
        print(f"bench_prompt: {exc.message}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Prompt size ({report['method']}; model {report['model']}; top-{report['top_k']} retrieval)")
    print(f"  cached prefix          {report['prefix_tokens']:>6} tokens"
          f"  (system prompt {report['system_prompt_tokens']}, worked examples {report['examples_tokens']})")
    pq = report["per_question_tokens"]
    print(f"  per question (p50)     {pq['p50']:>6} tokens  (min {pq['min']}, max {pq['max']}; context + question)")
    pb = report["places_block_tokens"]
    print(f"  of which places block  {pb['p50']:>6} tokens  (max {pb['max']})")
    print(f"  + one failed attempt   {report['retry_adds_tokens']:>6} tokens")
    print(f"  output JSON schema     {report['output_schema_tokens']:>6} tokens  (output_config.format)")
    print(f"  typical request        {report['typical_total_tokens']:>6} tokens, "
          f"{report['cached_share']:.0%} of it in the cached prefix")
    for r in report["questions"]:
        print(f"    {r['question_tokens']:>5} tok  {r['chunks']:>2} chunks  {r['question']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
