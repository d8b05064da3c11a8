"""`python -m sage ...`: the command-line contract of docs/design.md.

Every command takes ``--json``: machine-readable output on stdout, progress on stderr.  Errors a user can cause
end with a one-line message on stderr (or an ``error`` object in JSON) and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from .answer import Answer
from .errors import SageError
from .settings import load_settings


def _default(obj: Any):
    if isinstance(obj, Decimal):
        return float(obj)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    return str(obj)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, default=_default, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


class _Progress:
    """Progress lines (or a bar, on a terminal) on stderr."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._last = ""

    def __call__(self, step: str, done: int = 0, total: int = 0) -> None:
        if self.quiet:
            return
        if total and total > 1:
            width = 30
            filled = int(width * done / total) if total else 0
            line = f"{step:<36} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}"
        else:
            line = f"{step}{' ... done' if done and done >= total else ' ...'}"
        if self.tty:
            sys.stderr.write("\r" + line.ljust(len(self._last)) + ("\n" if done >= total else ""))
        elif line != self._last and (done >= total or not total or done == 0):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self._last = line


def _settings(args) -> Any:
    overrides = {}
    if getattr(args, "planner", None):
        overrides["planner"] = args.planner
    return load_settings(**overrides)


def _ready(args) -> Any:
    """The settings, with the database set up: a command that reads the census data on a database never set up
    sets it up first, as the app does on its first start (on a fresh machine `python -m sage eval FILE` otherwise
    failed every question: no tables, no read-only role).  Progress goes to stderr, so ``--json`` output stays
    clean.  On a set-up database this costs one cheap statement: `ask` must start fast."""
    from .census.setup import ensure_set_up

    settings = _settings(args)
    report = ensure_set_up(settings, progress=_Progress(), announce=lambda: print(
        "This database is not set up yet: setting it up first (as `python -m sage setup` does) ...", file=sys.stderr))
    if report is None:
        return settings
    print(f"Set up in {report.seconds:.1f} s.", file=sys.stderr)
    if report.admin_sql:
        print("\nThis login may not create roles. Ask an administrator to run the SQL below, then set SAGE_READER_URL "
              "to the census_reader login:\n\n" + report.admin_sql, file=sys.stderr)
    return settings


# --- commands -------------------------------------------------------------------------------------------------


def cmd_setup(args) -> int:
    from .census.setup import run_setup

    settings = _settings(args)
    report = run_setup(settings, progress=_Progress())
    if args.json:
        _print_json(report.to_dict())
    else:
        rows = ", ".join(f"{t} {n:,}" for t, n in report.rows.items())
        print(f"Ready in {report.seconds:.1f} s: {rows}.")
        if report.data_skipped:
            print("The census extract was already loaded (unchanged).")
        if report.index:
            print(f"Retrieval index: {report.index}")
    if report.admin_sql:
        print(
            "\nThis login may not create roles. Ask an administrator to run the SQL below, then set SAGE_READER_URL "
            "to the census_reader login:\n\n" + report.admin_sql,
            file=sys.stderr,
        )
    return 0


def cmd_status(args) -> int:
    from .status import status

    info = status(_settings(args), check_release=True)
    if args.json:
        _print_json(info.to_dict())
    else:
        d = info.database
        print(f"database: {'embedded' if d.embedded else d.host} (PostgreSQL {d.server_version})")
        for t, n in info.tables.items():
            print(f"  {t}: {n:,} rows")
        print(f"vintages: {', '.join(info.vintages) or 'none'}" + (f" (questions read {info.latest})"
                                                                    if info.latest else ""))
        if info.pending:
            print(f"  loaded but not yet the latest: {', '.join(info.pending)} (a `census update` is running or was "
                  "interrupted: run it again to finish)")
        if info.release is not None and (info.release.newer or info.release.checked):
            print(f"release: {info.release.message}")
        print(f"index: {info.index.chunks:,} chunks ({info.index.model})")
        c = info.catalog
        if c is not None:
            state = f"; being built by {c.builder}" if c.building else ""
            print(f"ACS table catalog: {c.entries:,} of {c.expected:,} tables that are not loaded indexed{state}")
        print(f"planner: {info.planner}")
    return 0


def _usage_error(args, kind: str, message: str) -> int:
    """A mistake in the command line itself (an id that does not exist): exit 2, like argparse's own errors."""
    if getattr(args, "json", False):
        _print_json({"error": {"kind": kind, "message": message}})
    print(f"error: {message}", file=sys.stderr)
    return 2


def cmd_index(args) -> int:
    from .index import index_schema

    settings = _settings(args)
    progress = _Progress()
    report: dict[str, Any] = {"index": index_schema(settings, progress=progress, rebuild=args.rebuild).to_dict()}
    if args.catalog:
        from .catalog_index import index_catalog

        report["catalog"] = index_catalog(settings, progress=progress, rebuild=args.rebuild).to_dict()
    if args.json:
        _print_json(report)
    else:
        index = report["index"]
        print(f"Retrieval index: {index['upserted']:,} chunks embedded, {index['unchanged']:,} unchanged, "
              f"{index['deleted']:,} deleted in {index['seconds']:.1f} s.")
        catalog = report.get("catalog")
        if catalog:
            print(f"ACS table catalog: {catalog['upserted']:,} tables embedded, {catalog['unchanged']:,} unchanged, "
                  f"{catalog['deleted']:,} deleted; {catalog['entries']:,} indexed, in {catalog['seconds']:.1f} s.")
        else:
            print("The ACS table catalog (the tables that are not loaded) is built with --catalog, or by the app.")
    return 0


def cmd_ask(args) -> int:
    from . import querylog
    from .agent import ask

    settings = _ready(args)
    context = []
    if args.after is not None:
        context = querylog.thread(settings, args.after)
        if not context:
            return _usage_error(args, "not_found", f"There is no logged answer {args.after} to follow: --after takes "
                                "the \"id\" of an earlier `ask --json` answer (or a number from the History page).")
    answer = ask(args.question, settings, planner=args.planner, context=context, parent_id=args.after)
    data = answer.to_dict()
    if args.json:
        _print_json(data)
    else:
        _print_answer(answer)
    return 0 if answer.answered else 1


def cmd_verify(args) -> int:
    from . import verified
    from .roles import Role

    settings = _settings(args)
    if args.remove:
        removed = verified.remove(settings, args.id, role=Role.OPERATOR)
        if args.json:
            _print_json({"question_id": args.id, "removed": removed})
        else:
            print(f"Answer {args.id} {'is no longer' if removed else 'was not'} in the verified-answer library.")
        return 0
    try:
        entry = verified.add(settings, args.id, role=Role.OPERATOR)
    except verified.NotFoundError as exc:
        return _usage_error(args, exc.kind.value, exc.message)
    if args.json:
        _print_json({"question_id": args.id, "verified": True, **entry.to_dict()})
    else:
        print(f"Verified: answer {args.id} (“{entry.standalone}”) is in the library as entry {entry.id}; questions "
              "that mean the same are answered with its SQL, through the guard.")
    return 0


def cmd_review(args) -> int:
    """The operator's review of visitors' proposals: list them, or accept / reject one."""
    from . import review, verified
    from .roles import Role

    settings = _settings(args)
    if args.accept is not None:
        try:
            entry = review.accept(settings, args.accept, role=Role.OPERATOR, reviewer="the command line")
        except verified.NotFoundError as exc:
            return _usage_error(args, exc.kind.value, exc.message)
        if args.json:
            _print_json({"question_id": args.accept, "accepted": True, **entry.to_dict()})
        else:
            print(f"Accepted: answer {args.accept} (“{entry.standalone}”) is in the verified-answer library as entry "
                  f"{entry.id}.")
        return 0
    if args.reject is not None:
        rejected = review.reject(settings, args.reject, role=Role.OPERATOR, reviewer="the command line")
        if args.json:
            _print_json({"question_id": args.reject, "rejected": rejected})
        else:
            print(f"Answer {args.reject} {'is rejected' if rejected else 'was not an open proposal'}.")
        return 0 if rejected else 2
    found = review.proposals(settings, role=Role.OPERATOR, limit=args.limit)
    if args.json:
        _print_json([p.to_dict() for p in found])
        return 0
    if not found:
        print("Nothing to review: no open proposals.")
    for p in found:
        guard_note = f"  ! the guard refuses it now: {p.guard_error}" if p.guard_error else ""
        print(f"#{p.question_id}  {p.proposed_at:%Y-%m-%d %H:%M}  {p.who}\n  question: {p.question}\n"
              f"  reading:  {p.reading}\n  sql: {' '.join(p.sql.split())}" + (f"\n{guard_note}" if guard_note else ""))
    return 0


def _print_answer(answer: Answer) -> None:
    r = answer.result
    if not answer.answered or r is None:
        info = answer.error_info() or {"kind": "error", "message": "No answer."}
        print(f"No answer ({info['kind']}): {info['message']}", file=sys.stderr)
        for a in answer.assumptions[1:]:
            print(f"  - {a}", file=sys.stderr)
        for s in answer.suggestions:
            print(f"  try: {s}", file=sys.stderr)
        for n in answer.notices:
            print(f"  note: {n}", file=sys.stderr)
        if answer.id is not None:
            print(f"  [id {answer.id}]", file=sys.stderr)
        return
    print(answer.sql)
    print()
    widths = [max(len(str(c)), *(len(_fmt(row[i])) for row in r.rows[:50])) for i, c in enumerate(r.columns)]
    print("  ".join(str(c).ljust(w) for c, w in zip(r.columns, widths, strict=True)))
    for row in r.rows[:50]:
        print("  ".join(_fmt(v).ljust(w) for v, w in zip(row, widths, strict=True)))
    if r.row_count > 50 or r.truncated:
        print(f"... {r.row_count} rows{' (truncated)' if r.truncated else ''}")
    print()
    for a in answer.assumptions:
        print(f"- {a}")
    for n in answer.notices:
        print(f"note: {n}")
    tries = f"{answer.tries} tr{'y' if answer.tries == 1 else 'ies'}"
    logged = f", id {answer.id}" if answer.id is not None else ""
    print(f"[{answer.planner}, {tries}, {answer.timings_ms.get('total', 0):.0f} ms{logged}]")


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return "" if v is None else str(v)


def _read_sql(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


def cmd_check_sql(args) -> int:
    from . import guard

    settings = _settings(args)
    data, code = guard.check_json(_read_sql(args.sql), max_rows=settings.max_rows)
    if args.json:
        _print_json(data)
    else:
        print(data["sql"] if data["allowed"] else f"rejected: {data['reason']}")
    return code


def cmd_run_sql(args) -> int:
    from .agent import run_sql

    answer = run_sql(_read_sql(args.sql), _ready(args))
    data = answer.to_dict()
    for k in ("question", "planner", "parent_id", "standalone"):
        data.pop(k, None)
    if args.json:
        _print_json(data)
    else:
        _print_answer(answer)
    return 0 if answer.answered else 1


def cmd_retrieve(args) -> int:
    from .retrieve import retrieve

    types = [t.strip() for t in args.types.split(",")] if args.types else None
    chunks = retrieve(_ready(args), args.question, top_k=args.top_k, object_types=types)
    if args.json:
        _print_json([c.to_dict() for c in chunks])
    else:
        for c in chunks:
            print(f"{c.score:.3f}  {c.object_type:<9} {c.object_ref:<40} {c.content[:80]!r}")
    return 0


def cmd_eval(args) -> int:
    from .evaluate import evaluate_file

    settings = _ready(args)
    report = evaluate_file(settings, Path(args.file), planner=args.planner, progress=_Progress(quiet=args.quiet))
    if args.json:
        _print_json(report)
    else:
        for r in report["results"]:
            mark = "ok " if r["correct"] else "BAD"
            print(f"{mark} {r['id']:<10} {r['question'][:70]}" + (f"  [{r['error']}]" if r.get("error") else ""))
        print(f"\naccuracy {report['correct']}/{report['n']} = {report['accuracy']:.3f}; wrong: "
              f"{report['wrong_answered']} answered wrongly, {report['wrong_declined']} declined or failed")
    return 0


def cmd_census(args) -> int:
    from .census import fetch_rules
    from .census.catalog_search import search_tables

    settings = _settings(args)
    if args.census_command == "tables":
        found = search_tables(settings, args.search, limit=args.limit)
        if args.json:
            _print_json(found)
        else:
            for t in found:
                print(f"{t['table_id']:<10} {t['concept']}  ({t['universe']}; {t['variables']} variables)")
        return 0
    if args.census_command == "update":
        from .census.update import UpdateError, update

        try:
            # one job at a time per database, fetches included: refused at once (naming who) when another runs
            done = update(settings, args.vintage, progress=_Progress(), dry_run=args.dry_run)
        except UpdateError as exc:
            if args.json:
                _print_json({"error": exc.to_dict(), "report": exc.report.to_dict()})
            print(f"error: {exc.message}", file=sys.stderr)
            return 1
        if args.json:
            _print_json(done)
        else:
            print(done.summary())
        return 0
    if not (args.preset or args.tables):
        print("Name the tables (--tables B25003,B08301) or a preset (--preset core).", file=sys.stderr)
        return 2
    from .census.fetch_job import locked_fetch

    tables = fetch_rules.resolve_tables(args.tables or [], preset=args.preset)
    geos = tuple(g.strip() for g in args.geographies.split(",") if g.strip())
    states = [s.strip() for s in (args.states or "").split(",") if s.strip()] or None
    # one fetch at a time per database, the app's included: refused at once (naming who) when another runs
    report = locked_fetch(settings, tables, args.vintage, geos, progress=_Progress(), who="the command line",
                          states=states)
    if args.json:
        _print_json(report)
    else:
        print(report.summary() if hasattr(report, "summary") else report)
    return 0


def cmd_bench(args) -> int:
    from .bench import run_bench

    data = run_bench(_settings(args), Path(args.file) if args.file else None, repeat=args.repeat)
    if args.json:
        _print_json(data)
    else:
        from .bench import format_table

        print(format_table(data))
    return 0


# --- parser ---------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sage", description="census-sage: ask the ACS in plain English.")
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens (to stderr)")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, fn, help):
        sp = sub.add_parser(name, help=help, description=help)
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        sp.set_defaults(fn=fn)
        return sp

    add("setup", cmd_setup, "prepare the database: tables, census data, read-only role, retrieval index")
    add("status", cmd_status, "database, tables, vintages, index and planner")
    sp = add("ask", cmd_ask, "answer a question")
    sp.add_argument("question")
    sp.add_argument("--planner", choices=["auto", "claude", "offline"])
    sp.add_argument("--after", type=int, metavar="ID",
                    help="ask it as a follow-up of logged answer ID (the \"id\" of an earlier `ask --json` answer)")
    sp = add("review", cmd_review, "list visitors' proposals for the verified answers; --accept ID / --reject ID")
    group = sp.add_mutually_exclusive_group()
    group.add_argument("--accept", type=int, metavar="ID", help="verify proposed answer ID")
    group.add_argument("--reject", type=int, metavar="ID", help="take proposed answer ID off the list")
    sp.add_argument("--limit", type=int, default=50)
    sp = add("verify", cmd_verify, "put a logged answer in the verified-answer library (--remove takes it out)")
    sp.add_argument("id", type=int, metavar="ID", help="the \"id\" of an `ask --json` answer")
    sp.add_argument("--remove", action="store_true", help="take it out of the library")
    sp = add("check-sql", cmd_check_sql, "run the SQL guard alone (SQL '-' reads stdin)")
    sp.add_argument("sql")
    sp = add("run-sql", cmd_run_sql, "guard and run SQL as the read-only role (SQL '-' reads stdin)")
    sp.add_argument("sql")
    sp = add("retrieve", cmd_retrieve, "the schema pieces and variables retrieved for a question")
    sp.add_argument("question")
    sp.add_argument("--top-k", type=int, default=10)
    sp.add_argument("--types", help="comma-separated: table,column,variable,acs_table (ACS tables not loaded)")
    sp = add("index", cmd_index, "bring the retrieval index up to date (--catalog: also the ACS tables not loaded)")
    sp.add_argument("--catalog", action="store_true",
                    help="also embed the ACS table catalog's tables that are not loaded (about 1,100; a minute or two)")
    sp.add_argument("--rebuild", action="store_true", help="re-embed everything, not only what changed")
    sp = add("eval", cmd_eval, "run a JSON Lines question set with gold SQL and score the answers")
    sp.add_argument("file")
    sp.add_argument("--planner", choices=["auto", "claude", "offline"])
    sp.add_argument("--quiet", action="store_true")
    sp = add("bench", cmd_bench, "stage latencies (p50/p95), cold start and setup times")
    sp.add_argument("file", nargs="?", help="JSON Lines question set (default: the built-in sample)")
    sp.add_argument("--repeat", type=int, default=3)

    census = sub.add_parser("census", help="add ACS tables from the Census Data API, or browse the catalog")
    csub = census.add_subparsers(dest="census_command", required=True)
    f = csub.add_parser("fetch", help="fetch ACS 5-year tables (estimates and margins of error)")
    f.add_argument("--json", action="store_true")
    f.add_argument("--vintage", type=int, default=2023, help="ACS 5-year release year, e.g. 2023 (= 2019-2023); "
                   "an earlier one (2018 = 2014-2018) is loaded beside the periods already there")
    group = f.add_mutually_exclusive_group()
    group.add_argument("--tables", help="comma-separated table ids, e.g. B25003,B08301")
    group.add_argument("--preset", choices=["core"], help="core: the tables the semantic layer and examples use")
    f.add_argument("--geographies", default="state,county",
                   help="comma-separated levels: nation, state, county, place, cbsa (metro and micro areas), cd "
                   "(congressional districts), tract, zcta (default: state,county)")
    f.add_argument("--states", help="comma-separated USPS abbreviations (e.g. TX,CA): only places in these states "
                   "(state, county, place, cd and tract levels; tracts of every state otherwise)")
    f.set_defaults(fn=cmd_census)
    u = csub.add_parser("update", help="bring every loaded table and level to the newest ACS 5-year release",
                        description="Find the newest ACS 5-year release the Census Data API offers (or --vintage), "
                        "fetch every table and geography level loaded now for it (one table per transaction, "
                        "resumable), then make it the latest period of every table at once; earlier periods stay.")
    u.add_argument("--json", action="store_true")
    u.add_argument("--vintage", type=int,
                   help="the release year (2024 = 2020-2024); default: the newest published")
    u.add_argument("--dry-run", action="store_true",
                   help="list what would be fetched, with row estimates; load nothing")
    u.set_defaults(fn=cmd_census)
    t = csub.add_parser("tables", help="search the offline ACS table catalog")
    t.add_argument("--json", action="store_true")
    t.add_argument("--search")
    t.add_argument("--limit", type=int, default=50)
    t.set_defaults(fn=cmd_census)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        from .db.embedded import keep_running_after_exit

        keep_running_after_exit(load_settings())  # the next command joins the embedded server: no restart
        return args.fn(args)
    except SageError as exc:
        if getattr(args, "json", False):
            _print_json({"error": exc.to_dict()})
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
