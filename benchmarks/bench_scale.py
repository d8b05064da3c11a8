"""Does the offline question path stay fast when the database holds tens of millions of estimates?

Two benchmark databases, each in its own embedded PostgreSQL data directory under ``--dir`` (never the user's
``SAGE_DATA_DIR``, never shipped):

* **shipped** — ``python -m sage setup`` alone: the shipped extracts (about 194,000 rows in
  ``public.estimates_by_vintage``);
* **scale** — the same, plus a **clearly synthetic** national tract table: about ``--tracts`` 85,000 tract rows in
  ``public.geography`` with generated codes under the real counties (as many per county as its population share;
  named ``Synthetic tract N (benchmark); <county>; <state>``), with a row for every tract of the 34 shipped
  variables (as if their tables had been fetched for all tracts: the questions' own variables then have 85,000 more
  rows each to skip) and of as many generated variables (tables ``B90001``..., 24 lines each, labelled ``Synthetic
  benchmark line N``, category demographics) as it takes for ``public.estimates_by_vintage`` to hold about
  ``--rows`` 20 million rows.  Values come from a hash of the GEO_ID and the code; source ``synthetic-benchmark``.
  The retrieval index is refreshed afterwards, as ``census fetch`` would.

Then the same fixed list of state and county questions (``--questions``, by default
``tests/data/questions/offline_probe6.jsonl``, the development set's mix) is asked of both through the whole offline
path, ``sage.agent.ask(question, settings, planner="offline", record=False)``, ``--repeat`` times after one warm-up
question, and the script reports p50/p95 of the whole question and of each stage (retrieve, plan, guard, execute),
the ratio scale/shipped of the whole-question p50 (target: at most 2), and the one-off costs a process pays once
per database: the semantic layer's coverage query (``load_measures``) and the offline planner's catalog
(``planner/catalog.py``, which reads every geo_id with an estimate of each variable) with the process's peak memory.

    python benchmarks/bench_scale.py [--dir DIR] [--tracts 85000] [--rows 20000000] [--repeat 3]
                                     [--questions FILE] [--json]

Building the scale database takes minutes (the 20 million rows are generated in SQL, then keyed and indexed); it
is kept in ``--dir`` and reused by later runs (``--rebuild`` starts over).  Delete ``--dir`` to reclaim the disk
space (about 5 GB).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sage import db  # noqa: E402
from sage.agent import ask  # noqa: E402
from sage.census import loader, schema, semantic  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.index import index_schema  # noqa: E402
from sage.planner import catalog  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from sage.timing import percentile  # noqa: E402

DEFAULT_DIR = Path(tempfile.gettempdir()) / "census-sage-bench-scale"
DEFAULT_QUESTIONS = ROOT / "tests" / "data" / "questions" / "offline_probe6.jsonl"
SOURCE = "synthetic-benchmark"
MARKER = "bench-scale-synthetic"  # its sage.data_loads entry: the synthetic rows are there
LINES_PER_TABLE = 24
STAGES = ("retrieve", "plan", "guard", "execute", "total")


def _settings(data_dir: Path):
    """Settings of a benchmark database: nothing from the environment or the user's secrets, offline planner."""
    user_dir = os.environ.get("SAGE_DATA_DIR")
    default = load_settings(environ={}, secrets_path=Path(os.devnull)).data_dir
    for other in (Path(user_dir) if user_dir else None, default):
        if other is not None and other.expanduser().resolve() == data_dir.resolve():
            raise SystemExit(f"{data_dir} is a user's data directory; give the benchmark its own --dir")
    return load_settings(environ={"SAGE_PLANNER": "offline"}, secrets_path=Path(os.devnull), data_dir=data_dir)


def _timed(fn, *args, **kw) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


# ---------------------------------------------------------------------------------------------------------------
# the synthetic tract table


def build_scale(settings, tracts: int, rows: int, log) -> dict:
    """Add the synthetic tracts, variables and estimates (once; kept for later runs).  Returns what it did."""
    with db.connect(settings, autocommit=True) as conn:
        done = conn.execute("SELECT rows FROM sage.data_loads WHERE name = %s", (MARKER,)).fetchone()
        if done:
            return {**done[0], "reused": True}
        steps: dict[str, float] = {}
        with conn.transaction():
            t = time.perf_counter()
            conn.execute(
                """WITH c AS (
                       SELECT g.fips, g.state_fips, g.state_abbr, g.state_name, g.county_fips, g.county_name,
                              e.estimate AS pop
                       FROM public.geography g
                       JOIN public.estimates e ON e.geo_id = g.geo_id AND e.variable_code = 'B01003_001E'
                       WHERE g.level = 'county'),
                     n AS (SELECT c.*, greatest(1, round(c.pop * %(tracts)s / sum(c.pop) OVER ()))::int AS n FROM c)
                   INSERT INTO public.geography (geo_id, fips, level, name, state_fips, state_abbr, state_name,
                                                 county_fips, county_name)
                   SELECT '1400000US' || n.fips || lpad((i * 100)::text, 6, '0'), n.fips || lpad((i * 100)::text, 6,
                          '0'), 'tract', 'Synthetic tract ' || i || ' (benchmark); ' || n.county_name || '; '
                          || n.state_name, n.state_fips, n.state_abbr, n.state_name, n.county_fips, n.county_name
                   FROM n, generate_series(1, n.n) AS i""",
                {"tracts": tracts},
            )
            n_tracts = db.scalar(conn, "SELECT count(*) FROM public.geography WHERE level = 'tract'")
            shipped_vars = db.scalar(conn, "SELECT count(*) FROM public.variables")
            n_vars = max(0, math.ceil(rows / n_tracts) - shipped_vars)  # generated ones, beside the shipped ones
            n_tables = math.ceil(n_vars / LINES_PER_TABLE)
            conn.execute(
                """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe,
                                                 vintage, vintages)
                   SELECT 'B9' || lpad(t::text, 4, '0') || '_' || lpad(l::text, 3, '0') || 'E',
                          'Estimate!!Synthetic benchmark line ' || l,
                          'Synthetic benchmark table ' || t || ' (generated for benchmarks, not ACS data)',
                          'demographics', 'B9' || lpad(t::text, 4, '0'), 'Synthetic', '2019-2023', '{2019-2023}'
                   FROM generate_series(1, %(tables)s) AS t, generate_series(1, %(lines)s) AS l
                   WHERE (t - 1) * %(lines)s + l <= %(vars)s""",
                {"tables": n_tables, "lines": LINES_PER_TABLE, "vars": n_vars},
            )
            steps["geography_and_variables_s"] = time.perf_counter() - t
            log(f"{n_tracts:,} synthetic tracts x ({shipped_vars} shipped + {n_vars} synthetic variables): generating "
                f"{n_tracts * (shipped_vars + n_vars):,} estimates")
            # keys, foreign keys and the index are built after the rows, as the loader does for a bulk load
            t = time.perf_counter()
            conn.execute(f"DROP INDEX public.{schema.ESTIMATES_INDEX_NAME}")
            conn.execute("ALTER TABLE public.estimates_by_vintage "
                         + ", ".join(f"DROP CONSTRAINT {name}" for name in schema.ESTIMATES_KEYS))
            conn.execute(
                """INSERT INTO public.estimates_by_vintage (geo_id, variable_code, estimate, margin_error, source,
                                                            vintage)
                   SELECT g.geo_id, v.variable_code, abs(hashtext(g.geo_id || v.variable_code)::bigint) %% 5000,
                          abs(hashtext(v.variable_code || g.geo_id)::bigint) %% 300, %(source)s, v.vintage
                   FROM public.variables v CROSS JOIN public.geography g
                   WHERE g.level = 'tract'""",
                {"source": SOURCE},
            )
            steps["estimates_s"] = time.perf_counter() - t
            log(f"  rows inserted in {steps['estimates_s']:.0f} s; keying and indexing")
            t = time.perf_counter()
            conn.execute("ALTER TABLE public.estimates_by_vintage " + ", ".join(
                f"ADD CONSTRAINT {name} {definition}" for name, definition in schema.ESTIMATES_KEYS.items()))
            conn.execute(f"CREATE INDEX {schema.ESTIMATES_INDEX_NAME} {schema.ESTIMATES_INDEX}")
            steps["keys_and_index_s"] = time.perf_counter() - t
            tables = {(r[0], r[1]) for r in conn.execute("SELECT DISTINCT table_id, vintage FROM public.variables")}
            loader.record_tables(conn.cursor(), tables, SOURCE)
            info = {"tracts": n_tracts, "variables": shipped_vars + n_vars, "synthetic_variables": n_vars,
                    "rows": n_tracts * (shipped_vars + n_vars), **{k: round(v, 1) for k, v in steps.items()}}
            conn.execute("INSERT INTO sage.data_loads (name, sha256, rows) VALUES (%s, %s, %s)",
                         (MARKER, SOURCE, json.dumps(info)))
        log("  vacuum and analyze")
        _, info["vacuum_analyze_s"] = _timed(conn.execute, "VACUUM ANALYZE public.geography, public.variables, "
                                                           "public.estimates_by_vintage")
    log("  refreshing the retrieval index (as census fetch does)")
    report, seconds = _timed(index_schema, settings)
    info["index_refresh_s"] = round(seconds, 1)
    info["index_upserted"] = report.upserted
    with db.connect(settings, autocommit=True) as conn:
        conn.execute("UPDATE sage.data_loads SET rows = %s WHERE name = %s", (json.dumps(info), MARKER))
    return {**info, "reused": False}


# ---------------------------------------------------------------------------------------------------------------
# the question path


def one_off_loads(settings) -> dict:
    """The per-process, per-database loads the first question pays: the semantic layer's coverage query and the
    offline planner's catalog (read cold)."""
    _, semantic_s = _timed(semantic.load_measures, settings, refresh=True)
    catalog._catalogs.clear()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cat, catalog_s = _timed(catalog.load_catalog, settings)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"semantic_load_s": round(semantic_s, 3), "catalog_load_s": round(catalog_s, 3),
            "catalog_geo_ids": sum(len(ids) for ids in cat.has_rows.values()),
            "peak_rss_mb_after_catalog": round(after / 1024), "peak_rss_growth_mb": round((after - before) / 1024)}


def question_path(databases: dict[str, Any], questions: list[str], repeat: int) -> dict[str, dict]:
    """Every question of ``questions``, ``repeat`` rounds, the databases taking turns round by round (so that a
    change in the machine's load hits both alike), after one warm-up question each."""
    first = {name: ask(questions[0], s, planner="offline", record=False) for name, s in databases.items()}
    stages: dict[str, dict[str, list[float]]] = {name: {} for name in databases}
    answered = dict.fromkeys(databases, 0)
    for _ in range(repeat):
        for name, settings in databases.items():
            for q in questions:
                a = ask(q, settings, planner="offline", record=False)
                answered[name] += a.answered
                for k, v in a.timings_ms.items():
                    stages[name].setdefault(k, []).append(v)
    return {
        name: {
            "first_question_ms": round(first[name].timings_ms.get("total", 0.0), 1),
            "runs": len(questions) * repeat,
            "answered": answered[name],
            "stages_ms": {k: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
                          for k, v in stages[name].items() if k in STAGES},
        }
        for name in databases
    }


def sizes(settings) -> dict:
    with db.owner(settings) as conn:
        row = conn.execute(
            """SELECT (SELECT count(*) FROM public.estimates_by_vintage),
                      (SELECT count(*) FROM public.geography),
                      pg_total_relation_size('public.estimates_by_vintage'),
                      pg_database_size(current_database())""").fetchone()
    return {"estimates_by_vintage": row[0], "geography": row[1], "estimates_mb": round(row[2] / 2**20),
            "database_mb": round(row[3] / 2**20)}


def run(base: Path, tracts: int, rows: int, questions: list[str], repeat: int, rebuild: bool, log) -> dict:
    out: dict[str, Any] = {"questions": len(questions), "repeat": repeat}
    databases = {}
    for name in ("shipped", "scale"):
        data_dir = base / name / "pgdata"
        if rebuild and name == "scale" and data_dir.exists():
            import shutil

            shutil.rmtree(data_dir.parent)
        settings = databases[name] = _settings(data_dir)
        log(f"{name}: setup in {data_dir}")
        report, setup_s = _timed(run_setup, settings)
        part: dict[str, Any] = {"setup_s": round(setup_s, 1), "data_skipped": report.data_skipped}
        if name == "scale":
            part["build"] = build_scale(settings, tracts, rows, log)
        part["sizes"] = sizes(settings)
        log(f"{name}: one-off loads")
        part["one_off"] = one_off_loads(settings)
        out[name] = part
    log(f"{len(questions)} questions x {repeat}, the two databases taking turns")
    for name, timings in question_path(databases, questions, repeat).items():
        out[name].update(timings)
    shipped, scale = out["shipped"]["stages_ms"], out["scale"]["stages_ms"]
    out["ratio_p50"] = {k: round(scale[k]["p50"] / shipped[k]["p50"], 2) if shipped[k]["p50"] else None
                        for k in STAGES if k in shipped and k in scale}
    out["target_met"] = out["ratio_p50"].get("total") is not None and out["ratio_p50"]["total"] <= 2.0
    return out


def format_table(data: dict) -> str:
    sh, sc = data["shipped"], data["scale"]
    lines = [
        f"offline question path, {data['questions']} questions x {data['repeat']} "
        f"(answered: shipped {sh['answered']}/{sh['runs']}, scale {sc['answered']}/{sc['runs']})",
        f"{'':<34}{'shipped':>14}{'scale':>14}{'ratio':>8}",
        f"{'rows in estimates_by_vintage':<34}{sh['sizes']['estimates_by_vintage']:>14,}"
        f"{sc['sizes']['estimates_by_vintage']:>14,}",
        f"{'rows in geography':<34}{sh['sizes']['geography']:>14,}{sc['sizes']['geography']:>14,}",
        f"{'database size (MB)':<34}{sh['sizes']['database_mb']:>14,}{sc['sizes']['database_mb']:>14,}",
    ]
    for stage in STAGES:
        a, b = sh["stages_ms"].get(stage), sc["stages_ms"].get(stage)
        if a and b:
            label = "whole question" if stage == "total" else stage
            lines.append(f"{label + ' p50 / p95 (ms)':<34}{a['p50']:>7.1f} /{a['p95']:>5.0f}"
                         f"{b['p50']:>7.1f} /{b['p95']:>5.0f}{data['ratio_p50'][stage]:>8.2f}")
    lines.append(f"{'first question (ms)':<34}{sh['first_question_ms']:>14,.0f}{sc['first_question_ms']:>14,.0f}")
    one_off = (("semantic_load_s", "semantic coverage load (s)"), ("catalog_load_s", "planner catalog load (s)"),
               ("catalog_geo_ids", "catalog geo_ids held"),
               ("peak_rss_mb_after_catalog", "peak RSS after catalog (MB)"))
    for key, label in one_off:
        lines.append(f"{label:<34}{sh['one_off'][key]:>14,}{sc['one_off'][key]:>14,}")
    build = sc.get("build", {})
    if build and not build.get("reused"):
        lines.append(f"scale build: {build['tracts']:,} tracts x {build['variables']} variables "
                     f"({build['synthetic_variables']} generated); rows "
                     f"{build['estimates_s']} s, keys+index {build['keys_and_index_s']} s, vacuum/analyze "
                     f"{build['vacuum_analyze_s']:.0f} s, index refresh {build['index_refresh_s']} s")
    lines.append(f"target (whole-question p50 at scale within 2x): {'met' if data['target_met'] else 'NOT met'}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"where the two databases live ({DEFAULT_DIR})")
    ap.add_argument("--tracts", type=int, default=85_000)
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--rebuild", action="store_true", help="generate the scale database again")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [json.loads(line)["question"] for line in args.questions.read_text().splitlines() if line.strip()]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    data = run(args.dir.resolve(), args.tracts, args.rows, questions, max(1, args.repeat), args.rebuild, log)
    print(json.dumps(data, indent=2) if args.json else format_table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
