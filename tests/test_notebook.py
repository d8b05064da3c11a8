"""The notebook API (issue 22): ``sage.ask`` / ``sage.run_sql`` / ``sage.connect`` end to end on the session
database, the :class:`~sage.answer.Answer` a notebook gets (``.df``, ``.chart()``, the card as HTML), its errors, and
``import sage`` staying light (a subprocess looks at ``sys.modules``).
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

import sage
from sage import charts, db
from sage.errors import ErrorKind, GuardError, QuestionError, SageError

ROOT = Path(__file__).resolve().parent.parent

TOP_TEXAS = "Which 5 counties in Texas have the highest median household income?"


@pytest.fixture(scope="module")
def nb(settings):
    """``sage`` connected to the session database."""
    assert sage.connect(settings=settings) is settings
    return settings


def _rows(settings, sql: str, params=()) -> list[list]:
    return db.run(settings, db.OWNER, lambda c: [list(r) for r in c.execute(sql, params).fetchall()])


def _texas_counties(settings, order: str) -> list[list]:
    return _rows(settings, f"""
        SELECT g.county_name, e.estimate::float8, e.margin_error::float8
        FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id
        WHERE e.variable_code = 'B19013_001E' AND g.level = 'county' AND g.state_abbr = 'TX'
        ORDER BY e.estimate {order} LIMIT 5""")


def test_import_sage_pulls_in_no_driver_pandas_or_altair():
    code = ("import sys, sage; heavy = [m for m in ('pandas', 'altair', 'sqlalchemy', 'psycopg', 'numpy') "
            "if m in sys.modules]; print(heavy); assert not heavy, heavy; "
            "assert callable(sage.ask) and callable(sage.run_sql) and callable(sage.connect); "
            "assert issubclass(sage.SageError, Exception) and 'pandas' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "[]"


def test_ask_gives_the_rows_the_chart_and_the_card(nb):
    a = sage.ask(TOP_TEXAS, planner="offline")
    assert isinstance(a, sage.Answer) and a.answered and a.id is not None
    expected = _texas_counties(nb, "DESC")
    frame = a.df
    assert isinstance(frame, pd.DataFrame)
    assert frame["county_name"].tolist() == [r[0] for r in expected]
    assert frame["median_household_income"].astype(float).tolist() == [r[1] for r in expected]
    assert a.margins == {"median_household_income": [r[2] for r in expected]}
    assert "B19013_001E" in a.sql and a.assumptions
    assert a.read_as and "Texas" in a.read_as
    chart = a.chart()
    assert isinstance(chart, alt.TopLevelMixin)
    # the chart the app draws for these rows and this hint
    assert chart.to_dict() == charts.build(a.result.columns, a.result.rows, a.display_hint).chart.to_dict()
    page = a._repr_html_()
    assert html.escape(a.read_as) in page and html.escape(expected[0][0]) in page
    assert "vega" in page and "<pre>" in page and "median_household_income" in page
    bundle = a._repr_mimebundle_()
    assert bundle["text/html"].startswith('<div class="sage-answer">') and a.read_as in bundle["text/plain"]


def test_a_follow_up_after_an_answer(nb):
    first = sage.ask(TOP_TEXAS, planner="offline")
    then = sage.ask("and the lowest?", after=first, planner="offline")
    assert then.parent_id == first.id
    assert then.df["county_name"].tolist() == [r[0] for r in _texas_counties(nb, "ASC")]
    assert then.read_as and "bottom" in then.read_as.lower()
    # by its id too
    assert sage.ask("and the lowest?", after=first.id, planner="offline").sql == then.sql


def test_markup_in_a_question_is_shown_as_text(nb):
    question = "population of Ohio <b>now</b> <script>alert(1)</script>"
    a = sage.ask(question, planner="offline")
    page = a._repr_html_()
    assert "<b>now</b>" not in page and "<script>alert(1)" not in page
    assert html.escape(question) in page
    if a.answered:  # the reading is on the card
        assert html.escape(a.read_as or "") in page


def test_markup_in_the_rows_cannot_leave_the_chart_script(nb):
    a = sage.run_sql("SELECT '</script><img src=x onerror=alert(1)>' AS state_name, 5 AS population "
                     "UNION ALL SELECT 'Ohio', 3")
    assert a.df["population"].tolist() == [5, 3]
    a.display_hint = "bar"  # drawn as a bar chart: the name sits in the chart's data, inside a <script>
    assert a.chart() is not None
    page = a._repr_html_()
    assert "<img" not in page and "</script><img" not in page
    assert "\\u003c/script\\u003e\\u003cimg" in page  # still there, as JSON escapes


def test_run_sql_gives_the_rows_of_the_sql(nb):
    sql = "SELECT state_abbr, name FROM public.geography WHERE level = 'state' ORDER BY state_abbr LIMIT 3"
    a = sage.run_sql(sql)
    assert a.df.values.tolist() == _rows(nb, sql)


def test_errors_raise_the_sage_error_family(nb):
    with pytest.raises(GuardError) as refused:
        sage.run_sql("DELETE FROM public.geography")
    assert isinstance(refused.value, SageError) and refused.value.kind == ErrorKind.GUARD
    with pytest.raises(QuestionError):
        sage.ask("   ")
    with pytest.raises(SageError) as missing:
        sage.ask("and Ohio?", after=10**12)
    assert missing.value.kind == ErrorKind.NOT_FOUND
    declined = sage.ask("what is the meaning of life", planner="offline")
    assert declined.declined and declined.decline
    with pytest.raises(SageError) as why:
        _ = declined.df
    assert why.value.kind == declined.decline_kind and why.value.message == declined.decline
    assert "No answer" in declined._repr_html_()


def test_eval_scores_without_pandas_or_altair(settings, tmp_path):
    """``sage eval`` scores the rows: no headline is written (pandas) and no chart drawn (Altair), so a scripted
    evaluation never loads them (issue 22: nothing loaded that the question does not need)."""
    import json

    from sage.evaluate import read_questions

    rows = read_questions(ROOT / "tests" / "data" / "questions" / "dev.jsonl")[:6]
    path = tmp_path / "six.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = ("import sys; from sage import cli; rc = cli.main(['eval', sys.argv[1], '--planner', 'offline', '--json', "
            "'--quiet']); print('HEAVY', [m for m in ('pandas', 'altair') if m in sys.modules]); sys.exit(rc)")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SAGE_READER_URL", "ANTHROPIC_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), SAGE_DATA_DIR=str(settings.data_dir), SAGE_CATALOG_INDEX="off",
               SAGE_EMBEDDED_LINGER_S="0")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout[:proc.stdout.rindex("HEAVY")])
    assert report["n"] == len(rows) and report["correct"] == len(rows), report
    assert proc.stdout.strip().endswith("HEAVY []")


def test_ask_writes_its_headline_without_pandas_or_altair(settings):
    """``sage ask`` prints the headline (a value with its margin, a pair, a change, a threshold list) reading the
    rows as plain columns: a command-line answer loads neither pandas nor Altair (issue 22)."""
    import json

    questions = ["median household income in Travis County, TX",
                 "median household income in Travis County vs Williamson County, TX",
                 "which 3 counties in Texas grew the most in population from 2014-2018 to 2019-2023",
                 "states with a poverty rate above 18%"]
    code = ("import json, sys, sage; out = []\n"
            "for q in sys.argv[1:]:\n"
            "    a = sage.ask(q, planner='offline'); out.append([a.headline, a.result.rows if a.result else None])\n"
            "print(json.dumps(out, default=str))\n"
            "print('HEAVY', [m for m in ('pandas', 'altair') if m in sys.modules])")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SAGE_READER_URL", "ANTHROPIC_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), SAGE_DATA_DIR=str(settings.data_dir), SAGE_CATALOG_INDEX="off",
               SAGE_EMBEDDED_LINGER_S="0")
    proc = subprocess.run([sys.executable, "-c", code, *questions], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    answers = json.loads(proc.stdout[:proc.stdout.rindex("HEAVY")])
    assert all(rows and said for said, rows in answers), answers
    value, pair, change, threshold = (said for said, _ in answers)
    assert "±$" in value and "Travis County" in value
    assert "higher than" in pair and "Williamson County" in pair and "Travis County" in pair
    assert "(2014-2018 to 2019-2023)" in change and "3 counties shown" in change
    assert threshold.startswith(f"{len(answers[3][1])} states have")
    assert proc.stdout.strip().endswith("HEAVY []")
