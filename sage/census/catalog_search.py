"""The ACS table catalog: every 2019-2023 ACS 5-year detailed table, offline, and a search over it
(``python -m sage census tables --search TEXT``).

The catalog is ``data/acs/variables_catalog_acs2023_5yr.csv.gz`` (one row per estimate line: table id, concept,
universe, category, label).  ``census fetch`` also reads a table's universe from it when the API's metadata has none.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ErrorKind, SageError
from ..settings import Settings

CATALOG_FILE = "variables_catalog_acs2023_5yr.csv.gz"
#: the ACS 5-year release the catalog describes (2023 = 2019-2023): the vintage a catalog table is fetched for
CATALOG_YEAR = 2023


@lru_cache(maxsize=4)
def _catalog_cached(path: str, mtime: float) -> dict[str, dict]:
    tables: dict[str, dict] = {}
    with io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            t = tables.get(row["table_id"])
            if t is None:
                t = tables[row["table_id"]] = {
                    "table_id": row["table_id"],
                    "concept": row["concept"],
                    "universe": row["universe"] or None,
                    "category": row["category"],
                    "vintage": row["vintage"],
                    "labels": [],
                }
            t["labels"].append(row["label"])
    for t in tables.values():
        t["variables"] = len(t["labels"])
        t["_text"] = {
            "concept": t["concept"].lower(),
            "universe": (t["universe"] or "").lower(),
            "labels": " ".join(t["labels"]).replace("!!", " ").lower(),
        }
    return tables


def acs_table_catalog(data_path: Path) -> dict[str, dict[str, Any]]:
    """The offline catalog of 2019-2023 ACS 5-year tables in ``data_path`` (``settings.data_path``), by table id
    ({} when the file is missing)."""
    path = data_path / "acs" / CATALOG_FILE
    try:
        return _catalog_cached(str(path), path.stat().st_mtime)
    except OSError:
        return {}


def table_title(data_path: Path, table_id: str) -> str | None:
    """The concept (title) of an ACS table in the offline catalog, e.g. ``B25003`` -> ``Tenure``."""
    path = data_path / "acs" / CATALOG_FILE
    try:
        return _titles_cached(str(path), path.stat().st_mtime).get(table_id)
    except OSError:
        return None


@lru_cache(maxsize=4)
def _titles_cached(path: str, mtime: float) -> dict[str, str]:
    """Every table's concept, read from the first row of each table only: a decline that names the table to fetch
    ("B25003 (Tenure)") needs its title, not the 28,000 labels :func:`acs_table_catalog` reads and indexes (30 ms
    against 200 ms, in a command-line process that asks one question)."""
    with gzip.open(path, "rb") as fh:
        lines = fh.read().decode("utf-8").splitlines()
    if not lines:
        return {}
    header = next(csv.reader(lines[:1]))
    table_col, concept_col = header.index("table_id"), header.index("concept")
    titles: dict[str, str] = {}
    seen = ""
    for line in lines[1:]:
        prefix = line.split("_", 1)[0]  # a row starts with its variable code: <table id>_<line>
        if prefix == seen:
            continue
        seen = prefix
        row = next(csv.reader([line]))
        titles.setdefault(row[table_col], row[concept_col])
    return titles


def _word(token: str) -> re.Pattern:
    stem = token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token
    return re.compile(r"(?<![a-z0-9])" + re.escape(stem))


def search_tables(settings: Settings, text: str | None, limit: int = 50) -> list[dict]:
    """Tables of the offline catalog (``data/acs/variables_catalog_acs2023_5yr.csv.gz``) matching ``text``.

    Every word must occur (as the start of a word) in the table id, concept, universe or a variable label (when no
    table has them all, the tables with the most of them are returned); tables whose concept matches rank first,
    shorter concepts before longer ones.  ``text`` empty or None lists the tables in id order.  Returns
    ``[{"table_id", "concept", "universe", "variables", "category"}]`` — no network, no database.
    """
    catalog = acs_table_catalog(settings.data_path)
    if not catalog:
        raise SageError(f"The ACS catalog {CATALOG_FILE} is missing from data/acs/; restore it from the repository.",
                        kind=ErrorKind.DATA_MISSING)
    limit = max(1, int(limit or 50))
    words = [w for w in re.split(r"[\s,;]+", (text or "").lower()) if w]

    def out(t: dict) -> dict:
        return {k: t[k] for k in ("table_id", "concept", "universe", "variables", "category")}

    if not words:
        return [out(t) for t in sorted(catalog.values(), key=lambda t: t["table_id"])[:limit]]
    patterns = [(w, _word(w)) for w in words]
    phrase = " ".join(words)
    scored = []
    for t in catalog.values():
        tid = t["table_id"].lower()
        fields = t["_text"]
        score = matched = 0
        for w, pat in patterns:
            if w == tid:
                score += 1000
            elif tid.startswith(w) and re.fullmatch(r"[bc]\d*", w):
                score += 100
            elif pat.search(fields["concept"]):
                score += 10
            elif pat.search(fields["universe"]):
                score += 4
            elif pat.search(fields["labels"]):
                score += 1
            else:
                continue
            matched += 1
        if not matched:
            continue
        if fields["concept"] == phrase:
            score += 50
        elif fields["concept"].startswith(phrase):
            score += 5
        if re.fullmatch(r"[bc]\d{5}", tid):  # B19013 before its race iterations B19013A...I
            score += 2
        scored.append((matched, score, t))
    if not scored:
        return []
    # tables that match every word; when none does, the best partial matches (so a word the catalog does not use,
    # such as "burden", still finds the rent tables)
    best = max(m for m, _, _ in scored)
    by_id = all(re.fullmatch(r"[bc]\d*[a-z]{0,2}", w) for w in words)  # "B19": list the B19 tables in order
    ranked = sorted(
        (s for s in scored if s[0] == best),
        key=lambda s: (-s[1], 0 if by_id else len(s[2]["concept"]), s[2]["table_id"]),
    )
    return [out(t) for _, _, t in ranked[:limit]]


__all__ = ["table_title", "CATALOG_FILE", "CATALOG_YEAR", "acs_table_catalog", "search_tables"]
