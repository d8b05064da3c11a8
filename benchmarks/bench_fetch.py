"""How fast does `census fetch` download and load a table?  Against the local fake Census API, on a throwaway database.

For each table it runs ``sage.census.fetch.fetch_tables`` (the code path of ``python -m sage census fetch``) for all
counties (``--geographies county``, the default here) or for states and counties, ``--repeat`` times, and reports:

* **fetch s** — metadata + every data request (``get=`` chunks of at most 50 items) over real HTTP on 127.0.0.1,
  JSON decoding and parsing into rows;
* **load s** — the one transaction: delete the table's old rows of that period and level, upsert its variables, COPY
  the new rows into ``public.estimates_by_vintage`` (with its foreign keys and two indexes), record
  ``sage.census_tables``;
* **rows/s loaded** — rows / load s; **rows/s end to end** — rows / (fetch s + load s).

The fake generates each (year, table) once; the benchmark warms it first, so the figures measure the client and the
loader, not the fake.  Against api.census.gov the download is bound by the network and the Bureau's servers
instead.  The retrieval-index refresh is left out (``refresh_index=False``): it is measured by the retrieval
benchmarks.

    python benchmarks/bench_fetch.py [--tables B19013,B25003,B01001,B27010] [--geographies county] [--repeat 3]
                                     [--json]

Starts its own embedded PostgreSQL in a temporary directory (about 3 s of setup) and removes it afterwards.
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

from sage.census import fetch, fetch_rules  # noqa: E402
from sage.census.api import CensusClient  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.settings import load_settings  # noqa: E402
from tests.fake_census_api import FakeCensusApi  # noqa: E402

DEFAULT_TABLES = "B19013,B25003,B01001,B27010"


def run(tables: list[str], geographies: tuple[str, ...], repeat: int, year: int) -> dict:
    results = []
    with tempfile.TemporaryDirectory(prefix="sage-bench-fetch-") as tmp:
        settings = load_settings(environ={}, secrets_path=Path(os.devnull), data_dir=Path(tmp) / "pgdata")
        t = time.perf_counter()
        run_setup(settings, build_index=False)
        setup_s = time.perf_counter() - t
        with FakeCensusApi() as fake:
            settings = settings.replace(census_api_url=fake.base_url, census_api_key=None)
            for table in tables:
                for level in geographies:  # warm the fake's generator (not part of the measurement)
                    fake.values(year, table, level)
                runs = []
                for _ in range(repeat):
                    client = CensusClient.from_settings(settings, timeout=60)
                    report = fetch.fetch_tables(settings, [table], year, geographies=geographies, client=client,
                                                refresh_index=False)
                    runs.append(report.tables[0])
                rows = runs[0].rows
                fetch_s = statistics.median(r.fetch_seconds for r in runs)
                load_s = statistics.median(r.load_seconds for r in runs)
                results.append({
                    "table": table,
                    "variables": runs[0].variables,
                    "rows": rows,
                    "requests": runs[0].requests,
                    "fetch_s": round(fetch_s, 3),
                    "load_s": round(load_s, 3),
                    "total_s": round(fetch_s + load_s, 3),
                    "rows_per_s_loaded": round(rows / load_s) if load_s else None,
                    "rows_per_s_end_to_end": round(rows / (fetch_s + load_s)) if fetch_s + load_s else None,
                })
    return {"year": year, "geographies": list(geographies), "repeat": repeat, "setup_s": round(setup_s, 2),
            "tables": results}


def format_table(data: dict) -> str:
    head = (f"ACS 5-year {data['year']}, {'+'.join(data['geographies'])}, median of {data['repeat']} runs "
            f"(throwaway database set up in {data['setup_s']} s)")
    cols = ("table", "variables", "rows", "requests", "fetch_s", "load_s", "total_s", "rows_per_s_loaded",
            "rows_per_s_end_to_end")
    lines = [head, "  ".join(f"{c:>21}" if i > 0 else f"{c:<7}" for i, c in enumerate(cols))]
    for r in data["tables"]:
        lines.append("  ".join(f"{r[c]!s:>21}" if i > 0 else f"{r[c]:<7}" for i, c in enumerate(cols)))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", default=DEFAULT_TABLES)
    ap.add_argument("--geographies", default="county")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--year", type=int, default=2023)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tables = fetch_rules.resolve_tables(args.tables)
    geographies = tuple(g.strip() for g in args.geographies.split(",") if g.strip())
    data = run(tables, geographies, max(1, args.repeat), args.year)
    print(json.dumps(data, indent=2) if args.json else format_table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
