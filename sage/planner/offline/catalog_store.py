"""The offline planner's catalog kept in the database between processes: ``sage.planner_catalog``.

Building the catalog reads the census tables and normalises some 32,000 place names: about 3 s, which every
process paid on its first question (a command-line ``ask`` paid it every time).  The built catalog's data are
stored once per *data generation* (``sage.data_generation``, raised by a trigger in the same transaction as every
write to the census tables) and read back in milliseconds.

A stored copy is used only when everything it was made from is the same:

* the generation: read in the same snapshot as the rows it holds (``REPEATABLE READ``), so a copy never mixes two
  generations; a copy of an older generation is never read again (and is deleted when a newer one is stored);
* the builder: a hash of the code and the semantic layer that shape it (:func:`builder`), so a new version of the
  place-name rules or of ``measures.yaml`` builds it again instead of reading what the old rules made;
* the measures' variable codes it covers, checked against the measures made from the rows it keeps for them (the
  semantic layer's variables and coverage: counting them took a new process another 0.1-0.5 s);
* its bytes: a sha256 is stored beside them; a copy that does not match, does not decompress or does not parse is
  built again (and the good copy stored over it), never used.

Several processes on one database may build the same generation at once: each writes the whole copy in one
``INSERT ... ON CONFLICT DO UPDATE`` (one transaction), so a reader sees one complete copy or none.  The copy is
zlib-compressed JSON, not pickle: reading it can never run code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import sys
import zlib
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from ... import text
from ...census import semantic

log = logging.getLogger(__name__)

#: raise when the layout of the stored JSON changes (2: the places as columns)
FORMAT = 2

T = TypeVar("T")


@functools.cache
def builder() -> str:
    """What the stored catalog was made by: the format and the source of every module that shapes its data (this
    one, the catalog, the text normalisation and the place-name key, the semantic layer) and ``measures.yaml``."""
    from .read import vocabulary

    digest = hashlib.sha256(f"format {FORMAT}".encode())
    files = [__file__, Path(__file__).with_name("catalog.py"), text.__file__,
             sys.modules[vocabulary.geo_key.__module__].__file__, semantic.__file__, semantic.MEASURES_FILE]
    for name in files:
        digest.update(Path(str(name)).read_bytes())
    return digest.hexdigest()[:32]


def read_snapshot(settings, work: Callable[[psycopg.Connection], T]) -> tuple[int | None, T]:
    """``work(conn)`` and the data generation, read in one ``REPEATABLE READ`` snapshot (the generation is None on
    a database set up before generations existed: then nothing is stored)."""
    from ...db import owner

    with owner(settings) as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        found = conn.execute("SELECT to_regclass('sage.data_generation') IS NOT NULL").fetchone()
        generation = None
        if found and found[0]:
            row = conn.execute("SELECT generation FROM sage.data_generation").fetchone()
            generation = int(row[0]) if row else None
        return generation, work(conn)


def read(settings) -> dict[str, Any] | None:
    """The stored catalog data of the current generation (as :func:`write` took them), or None when there is no
    usable copy: none stored yet, stored by other code, or damaged (logged)."""
    from ...db import owner

    try:
        with owner(settings) as conn:
            row = conn.execute(
                "SELECT g.generation, c.payload, c.sha256 FROM sage.data_generation g "
                "LEFT JOIN sage.planner_catalog c ON c.generation = g.generation AND c.builder = %s",
                (builder(),)).fetchone()
    except psycopg.errors.UndefinedTable:  # set up before the store existed (or not at all): build it
        return None
    if row is None or row[1] is None:
        return None
    generation, payload, sha = row
    payload = bytes(payload)
    if hashlib.sha256(payload).hexdigest() != sha:
        log.warning("the stored planner catalog of generation %s is damaged (sha256 differs): building it again",
                    generation)
        return None
    try:
        data = json.loads(zlib.decompress(payload))
        if data.get("format") != FORMAT:
            return None
        return _decode(data)
    except (ValueError, zlib.error, KeyError, IndexError, TypeError, AttributeError) as exc:
        log.warning("the stored planner catalog of generation %s cannot be read (%s): building it again",
                    generation, exc)
        return None


def write(settings, generation: int, parts: dict[str, Any]) -> None:
    """Store the catalog data of ``generation`` (one statement: a reader sees all of it or none), and delete the
    copies of older generations, which nothing reads again.  A failure is logged, never raised: the catalog in
    hand is good, only the next process will build it again."""
    from ...db import owner

    payload = zlib.compress(json.dumps(_encode(parts), separators=(",", ":")).encode(), 6)
    try:
        with owner(settings) as conn, conn.transaction():
            conn.execute(
                "INSERT INTO sage.planner_catalog (generation, builder, payload, sha256) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (generation, builder) DO UPDATE SET payload = EXCLUDED.payload, "
                "sha256 = EXCLUDED.sha256, built_at = now()",
                (generation, builder(), payload, hashlib.sha256(payload).hexdigest()))
            conn.execute("DELETE FROM sage.planner_catalog WHERE generation < %s", (generation,))
    except psycopg.Error as exc:
        log.warning("the planner catalog could not be stored (%s); it is built again by the next process", exc)


# ---------------------------------------------------------------------------------------------------------------
# the JSON: every GEO_ID once, the sets of places as runs of their positions in that list


def _runs(ids: Sequence[str], position: dict[str, int], every: list[str]) -> list[int]:
    """``ids`` as [start, stop, start, stop, ...] of positions in ``every`` (an id it lacks is appended to it)."""
    found = []
    for g in ids:
        i = position.get(g)
        if i is None:
            i = position[g] = len(every)
            every.append(g)
        found.append(i)
    out: list[int] = []
    for i in sorted(found):
        if out and i < out[-1]:  # the same id twice
            continue
        if out and out[-1] == i:
            out[-1] = i + 1
        else:
            out += [i, i + 1]
    return out


def _encode(parts: dict[str, Any]) -> dict[str, Any]:
    every = list(parts["ids"])
    position = {g: i for i, g in enumerate(every)}
    return {
        "format": FORMAT,
        "codes": list(parts["codes"]),
        "listed": parts["listed"],
        "coverage": parts["coverage"],
        "states": parts["states"],
        "counties": parts["counties"],
        # as columns, a place's names joined by "|": a list per place made the JSON four times slower to read
        "localities": {"geo_id": [x[0] for x in parts["localities"]], "name": [x[1] for x in parts["localities"]],
                       "state": [x[2] for x in parts["localities"]],
                       "bases": ["|".join(x[3]) for x in parts["localities"]],
                       "kind": [x[4] for x in parts["localities"]], "pop": [x[5] for x in parts["localities"]]},
        "has_rows": {code: _runs(ids, position, every) for code, ids in parts["has_rows"].items()},
        "levels": parts["levels"],
        "periods": parts["periods"],
        "earlier": [(code, v, _runs(ids, position, every), n) for code, v, ids, n in parts["earlier"]],
        "units": parts["units"],
        "ids": every,  # last: _runs may have appended to it
    }


def _decode(data: dict[str, Any]) -> dict[str, Any]:
    every = data["ids"]

    def ids(runs: list[int]) -> list[str]:
        return list(chain.from_iterable(every[a:b] for a, b in zip(runs[::2], runs[1::2], strict=True)))

    return {
        "codes": data["codes"],
        "listed": data["listed"],
        "coverage": data["coverage"],
        "ids": every,
        "states": data["states"],
        "counties": data["counties"],
        "localities": _rows(data["localities"]),
        "has_rows": {code: ids(runs) for code, runs in data["has_rows"].items()},
        "levels": data["levels"],
        "periods": data["periods"],
        "earlier": [(code, v, ids(runs), n) for code, v, runs, n in data["earlier"]],
        "units": data["units"],
    }


def _rows(cols: dict[str, list]) -> list[tuple]:
    """The places' rows back from their columns (as :func:`_encode` wrote them)."""
    bases = [tuple(b.split("|")) if b else () for b in cols["bases"]]
    return list(zip(cols["geo_id"], cols["name"], cols["state"], bases, cols["kind"], cols["pop"], strict=True))


__all__ = ["FORMAT", "builder", "read", "read_snapshot", "write"]
