"""The offline planner's catalog kept between processes (issue 22): ``sage.planner_catalog``, one copy per data
generation (``sage.data_generation``), read back equal to a catalog built from the census tables, and rebuilt —
never used — when it is stale or damaged, also with two processes building it at once.

Runs on the session database; a test that changes data puts it back and stores the catalog of the restored data.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from sage import db
from sage.planner.offline import catalog, catalog_store
from sage.planner.offline.catalog import Catalog, load_catalog, refresh_catalog

ROOT = Path(__file__).resolve().parent.parent

#: derived lookups of the catalog (cached properties), compared as well as its fields
DERIVED = ("counties_by_base", "localities_by_full_name", "single_word_bases", "locality_first_words", "state_words",
           "measure_vocab", "unit_by_id", "by_geo_id")


def _fresh_load(settings) -> Catalog:
    """The catalog as a new process gets it: nothing kept in this one."""
    catalog._catalogs.clear()
    return load_catalog(settings)


def _assert_same(a: Catalog, b: Catalog) -> None:
    for f in dataclasses.fields(Catalog):
        if f.name == "generation":  # not data: how many times this process has read the measures (each load counts)
            continue
        assert getattr(a, f.name) == getattr(b, f.name), f.name
    for name in DERIVED:
        assert getattr(a, name) == getattr(b, name), name


def _generation(settings) -> int:
    return db.run(settings, db.OWNER, lambda c: c.execute("SELECT generation FROM sage.data_generation").fetchone()[0])


def _stored(settings) -> list[tuple]:
    """(generation, builder, whether the sha256 matches the bytes) of every stored copy."""
    return db.run(settings, db.OWNER, lambda c: c.execute(
        "SELECT generation, builder, sha256 = encode(sha256(payload), 'hex') FROM sage.planner_catalog "
        "ORDER BY generation, builder").fetchall())


@pytest.fixture
def no_build(monkeypatch):
    """Building from the census tables fails the test: what is loaded must come from the store."""

    def fail(*a, **k):
        raise AssertionError("the catalog was built, not read from the store")

    monkeypatch.setattr(catalog, "_build", fail)


@pytest.fixture
def builds(monkeypatch):
    """Counts the builds from the census tables."""
    calls = []
    real = catalog._build

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(catalog, "_build", counted)
    return calls


@pytest.fixture
def restored(settings):
    """The store as it was, and the catalog of the session's data in it, after the test."""
    yield
    refresh_catalog(settings)
    catalog._catalogs.clear()


def test_setup_stores_the_catalog_of_its_generation(settings):
    assert (_generation(settings), catalog_store.builder(), True) in _stored(settings)


def test_a_catalog_read_from_the_store_equals_one_built_from_the_database(settings, restored, monkeypatch):
    built = refresh_catalog(settings)  # built from the census tables (and stored)
    assert len(built.localities) > 30_000 and built.has_rows and built.counties
    monkeypatch.setattr(catalog, "_build", lambda *a, **k: pytest.fail("built instead of read from the store"))
    loaded = _fresh_load(settings)
    assert loaded is not built
    _assert_same(loaded, built)


def test_a_stale_copy_is_rebuilt_after_the_data_change(settings, restored, builds):
    _fresh_load(settings)
    assert not builds  # the copy of this generation
    before = _generation(settings)
    place = db.run(settings, db.OWNER, lambda c: c.execute(
        "SELECT geo_id, place_name, name FROM public.geography WHERE level = 'place' ORDER BY geo_id LIMIT 1"
    ).fetchone())
    assert place is not None
    geo_id, place_name, name = place
    try:
        db.run(settings, db.OWNER, lambda c: c.execute(
            "UPDATE public.geography SET place_name = 'Qwxzy Renamed CDP', name = 'Qwxzy Renamed CDP, ' || state_name "
            "WHERE geo_id = %s", (geo_id,)))
        assert _generation(settings) > before  # the write raised the generation in its own transaction
        cat = _fresh_load(settings)
        assert builds == [1]
        assert [x.geo_id for x in cat.localities_named("qwxzy renamed")] == [geo_id]
        assert cat.by_geo_id[geo_id].name == "Qwxzy Renamed CDP"
        # only the copy of the new generation is left
        assert [row[0] for row in _stored(settings)] == [_generation(settings)]
    finally:
        db.run(settings, db.OWNER, lambda c: c.execute(
            "UPDATE public.geography SET place_name = %s, name = %s WHERE geo_id = %s", (place_name, name, geo_id)))


def test_a_rolled_back_write_leaves_the_generation(settings):
    before = _generation(settings)
    with db.owner(settings, autocommit=False) as conn:
        conn.execute("UPDATE public.variables SET label = label WHERE variable_code = 'B01003_001E'")
        assert conn.execute("SELECT generation FROM sage.data_generation").fetchone()[0] == before + 1
        conn.rollback()
    assert _generation(settings) == before


@pytest.mark.parametrize("damage", ["truncated", "not_json", "other_measures"])
def test_a_damaged_copy_is_rebuilt_and_replaced_never_used(settings, restored, builds, damage):
    good = refresh_catalog(settings)
    builds.clear()
    if damage == "truncated":  # the bytes no longer match their sha256
        sql, params = "UPDATE sage.planner_catalog SET payload = substring(payload from 1 for 1000)", ()
    elif damage == "not_json":  # the sha256 matches, the content is not a catalog
        junk = b"\x78\x9c not a zlib stream"
        sql = "UPDATE sage.planner_catalog SET payload = %s, sha256 = %s"
        params = (junk, hashlib.sha256(junk).hexdigest())
    else:  # a well-formed copy whose catalog was made for other measures' codes than its measure rows give
        data = json.loads(zlib.decompress(db.run(settings, db.OWNER, lambda c: bytes(c.execute(
            "SELECT payload FROM sage.planner_catalog").fetchone()[0]))))
        data["codes"] = data["codes"][:-1]
        payload = zlib.compress(json.dumps(data).encode())
        sql, params = "UPDATE sage.planner_catalog SET payload = %s, sha256 = %s", (
            payload, hashlib.sha256(payload).hexdigest())
    db.run(settings, db.OWNER, lambda c: c.execute(sql, params))
    loaded = _fresh_load(settings)
    assert builds == [1]
    _assert_same(loaded, good)
    assert _stored(settings) == [(_generation(settings), catalog_store.builder(), True)]  # and replaced


def test_a_copy_stored_by_other_code_is_not_read(settings, restored, builds):
    refresh_catalog(settings)
    builds.clear()
    db.run(settings, db.OWNER, lambda c: c.execute(
        "UPDATE sage.planner_catalog SET builder = 'an older version of the rules'"))
    _fresh_load(settings)
    assert builds == [1]
    assert {row[1] for row in _stored(settings)} == {"an older version of the rules", catalog_store.builder()}


_CHILD = """
import hashlib, os, sys
from pathlib import Path
from sage.planner.offline.catalog import load_catalog
from sage.settings import load_settings

cat = load_catalog(load_settings(environ={}, secrets_path=Path(os.devnull), catalog_index="off",
                                 data_dir=Path(sys.argv[1])))
print(hashlib.sha256(repr((cat.states, cat.counties, cat.localities, sorted((k, sorted(v)) for k, v in
      cat.has_rows.items()), sorted(cat.levels), cat.units)).encode()).hexdigest())
"""


def test_two_processes_building_at_once_store_one_good_copy(settings, restored):
    want = refresh_catalog(settings)
    expected = hashlib.sha256(repr((want.states, want.counties, want.localities, sorted(
        (k, sorted(v)) for k, v in want.has_rows.items()), sorted(want.levels), want.units)).encode()).hexdigest()
    db.run(settings, db.OWNER, lambda c: c.execute("DELETE FROM sage.planner_catalog"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    children = [subprocess.Popen([sys.executable, "-c", _CHILD, str(settings.data_dir)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [child.communicate(timeout=300) for child in children]
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
        assert out.strip() == expected
    assert _stored(settings) == [(_generation(settings), catalog_store.builder(), True)]
    # and a third process reads it instead of building it
    loaded = _fresh_load(settings)
    _assert_same(loaded, want)


def test_the_set_up_check_is_one_statement_that_needs_every_part(settings):
    from tests.conftest import make_settings, scratch_database

    assert db.run(settings, db.OWNER, db.is_set_up)
    with scratch_database(settings, "notsetup") as url:
        empty = make_settings(database_url=url)
        try:
            assert not db.run(empty, db.OWNER, db.is_set_up)  # no tables at all
        finally:
            db.dispose(empty)
