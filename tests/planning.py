"""What the planner tests share: a plan run through the guard and the read-only executor, and rows read from the
session database as the owner (expected values always come from SQL, never written in a test)."""

from __future__ import annotations

from sage import execute, guard
from sage.db import owner


def run(plan, settings):
    """The result of ``plan``, which must not be a decline (its reasons are the failure message)."""
    assert not plan.declined, plan.assumptions
    return execute.run(guard.check(plan.sql, max_rows=settings.max_rows), settings)


def rows(settings, sql, *params):
    """Every row of ``sql`` on the session database."""
    with owner(settings) as conn:
        return conn.execute(sql, params).fetchall()
