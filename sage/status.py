"""What `python -m sage status` and the Status page report: database, tables, vintages, index, planner.

Never a secret: the server is named by host only, keys are reported as set or not set.
"""

from __future__ import annotations

import psycopg

from . import db
from .census.schema import TABLES
from .settings import Settings


def status(settings: Settings) -> dict:
    """The DESIGN.md ``status`` JSON, plus a few extra keys (``host``, ``vintage_detail``, ``ready``)."""
    info = db.server_info(settings)
    out: dict = {
        "database": {"embedded": info["embedded"], "server_version": info["server_version"], "host": info["host"]},
        "tables": {},
        "vintages": [],
        "index": {"chunks": 0, "model": None},
        "planner": settings.effective_planner,
        "model": settings.model if settings.effective_planner == "claude" else None,
    }
    with db.owner(settings) as conn:
        for table in TABLES:
            exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0]
            out["tables"][table] = (
                conn.execute(psycopg.sql.SQL("SELECT count(*) FROM {}").format(
                    psycopg.sql.Identifier(*table.split(".")))).fetchone()[0]
                if exists
                else 0
            )
        if out["tables"]["public.variables"]:
            rows = conn.execute(
                """SELECT v.vintage, count(DISTINCT v.variable_code), count(e.*)
                   FROM public.variables v LEFT JOIN public.estimates e USING (variable_code)
                   GROUP BY v.vintage ORDER BY v.vintage DESC"""
            ).fetchall()
            out["vintages"] = [r[0] for r in rows]
            out["vintage_detail"] = [{"vintage": r[0], "variables": r[1], "estimates": r[2]} for r in rows]
        if conn.execute("SELECT to_regclass('sage.schema_embeddings')").fetchone()[0]:
            row = conn.execute(
                "SELECT count(*), min(model) FROM sage.schema_embeddings"
            ).fetchone()
            out["index"] = {"chunks": row[0], "model": row[1]}
    out["ready"] = bool(out["tables"]["public.estimates"]) and bool(out["index"]["chunks"])
    return out
