"""How fast the command line answers, against the time Python takes only to import what the app runs on.

    python benchmarks/bench_cli.py [--runs 5] [--json]

On the database the environment names (``SAGE_DATA_DIR`` / ``DATABASE_URL``; set up first when it is not), all in
one run, the measurements interleaved so that a busy machine slows every one of them alike:

* **import floor**: ``python -c "import pandas, sqlalchemy, psycopg, altair"``, the least a Python process of this
  project can take;
* **ask**: ``python -m sage ask "population of Ohio" --planner offline``, a whole process from start to exit;
* **eval**: ``python -m sage eval tests/data/questions/dev.jsonl --planner offline --quiet`` (45 questions, each
  also run against its gold SQL and scored);
* **in-app p50**: the same 45 questions asked again and again in one warm process (``agent.ask``, logged as the
  app logs them): what a question costs in the app;
* **catalog reload**: the offline planner's catalog read back from its stored copy, as a process does after a
  ``census fetch`` elsewhere (the fetch itself builds and stores it), and, for comparison, built from the census
  tables (what every process did before issue 22).

Medians of ``--runs`` runs, the project's modules compiled once and cached as Python does by default (see
``_PYCACHE``; ``--no-bytecode`` for an environment that forbids it).  Targets (issue 22): ask <= 1.5x the floor;
eval <= 1.2x the floor + 45x the in-app p50; a catalog reload <= 0.3 s.  Speed is reported here, never asserted
in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sage.timing import percentile  # noqa: E402

DEV = ROOT / "tests" / "data" / "questions" / "dev.jsonl"
QUESTION = "population of Ohio"

COMMANDS = {
    "floor": [sys.executable, "-c", "import pandas, sqlalchemy, psycopg, altair"],
    "ask": [sys.executable, "-m", "sage", "ask", QUESTION, "--planner", "offline"],
    "eval": [sys.executable, "-m", "sage", "eval", str(DEV), "--planner", "offline", "--quiet"],
}


#: Python caches compiled modules by default; an environment with ``PYTHONDONTWRITEBYTECODE`` set (some containers
#: and CI images) compiles the project's 120-odd modules again in every process (about 0.3 s), while the libraries
#: of the floor were compiled once by pip.  The commands run with Python's default, the cache in a directory of its
#: own outside the checkout (``PYTHONPYCACHEPREFIX``), so both sides are measured alike; ``--no-bytecode`` measures
#: the other case.
_PYCACHE = Path(tempfile.mkdtemp(prefix="sage-bench-pycache-"))


def _env(bytecode: bool) -> dict[str, str]:
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(_PYCACHE)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


_ENV = _env(True)


def _timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=_ENV)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[1:4])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed


def in_app(settings, rounds: int = 2) -> dict:
    """p50/p95 of a whole question in a warm process (the app's case): every development question, ``rounds``
    times after one round to warm up, logged as the app logs them."""
    from sage.agent import ask

    questions = [json.loads(line)["question"] for line in DEV.read_text().splitlines() if line.strip()]
    for q in questions:
        ask(q, settings, planner="offline")
    wall = []
    for _ in range(rounds):
        for q in questions:
            started = time.perf_counter()
            ask(q, settings, planner="offline")
            wall.append((time.perf_counter() - started) * 1000)
    return {"questions": len(questions), "p50_ms": round(percentile(wall, 50), 1),
            "p95_ms": round(percentile(wall, 95), 1)}


def catalog_times(settings, runs: int) -> dict:
    from sage.planner.offline import catalog

    reload_s, build_s = [], []
    for _ in range(runs):
        catalog._catalogs.clear()
        started = time.perf_counter()
        catalog.load_catalog(settings)  # the stored copy of this generation
        reload_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        catalog._build(settings)  # from the census tables (and stored again)
        build_s.append(time.perf_counter() - started)
    return {"reload_s": round(statistics.median(reload_s), 3), "build_s": round(statistics.median(build_s), 3)}


def run(runs: int) -> dict:
    from sage.census.setup import ensure_set_up
    from sage.settings import load_settings

    settings = load_settings()
    ensure_set_up(settings)
    _timed(COMMANDS["ask"])  # the embedded server started, the stored catalog of this code version written
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(runs):
        for name, cmd in COMMANDS.items():
            times[name].append(_timed(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    app = in_app(settings)
    cat = catalog_times(settings, runs)
    eval_target = 1.2 * med["floor"] + app["questions"] * app["p50_ms"] / 1000
    return {
        "runs": runs,
        "bytecode": "PYTHONDONTWRITEBYTECODE" not in _ENV,
        "floor_s": round(med["floor"], 2),
        "ask_s": round(med["ask"], 2),
        "eval_s": round(med["eval"], 2),
        "all_s": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "in_app": app,
        "catalog": cat,
        "ask_over_floor": round(med["ask"] / med["floor"], 2),
        "eval_target_s": round(eval_target, 2),
        "targets": {
            "ask <= 1.5x floor": med["ask"] <= 1.5 * med["floor"],
            "eval <= 1.2x floor + 45x in-app p50": med["eval"] <= eval_target,
            "catalog reload <= 0.3 s": cat["reload_s"] <= 0.3,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="run the commands with PYTHONDONTWRITEBYTECODE=1 (every module compiled in every process)")
    args = parser.parse_args()
    global _ENV
    _ENV = _env(not args.no_bytecode)
    data = run(args.runs)
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print("modules compiled once and cached (Python's default)" if data["bytecode"] else
          "PYTHONDONTWRITEBYTECODE=1: every module compiled in every process")
    print(f"import floor (pandas, sqlalchemy, psycopg, altair)  median {data['floor_s']:.2f} s  "
          f"{data['all_s']['floor']}")
    print(f"ask \"{QUESTION}\"                         median {data['ask_s']:.2f} s  {data['all_s']['ask']}  "
          f"= {data['ask_over_floor']:.2f}x the floor (target <= 1.5x)")
    print(f"eval of the {data['in_app']['questions']} development questions            median {data['eval_s']:.2f} s  "
          f"{data['all_s']['eval']}  (target <= {data['eval_target_s']:.2f} s = 1.2x floor + "
          f"{data['in_app']['questions']} x {data['in_app']['p50_ms']:.0f} ms)")
    print(f"in-app whole question                               p50 {data['in_app']['p50_ms']:.0f} ms, "
          f"p95 {data['in_app']['p95_ms']:.0f} ms")
    print(f"catalog reload from the store                       median {data['catalog']['reload_s']:.3f} s "
          f"(target <= 0.3 s); built from the census tables {data['catalog']['build_s']:.2f} s")
    for name, met in data["targets"].items():
        print(f"  {'met' if met else 'NOT MET'}: {name}")


if __name__ == "__main__":
    main()
