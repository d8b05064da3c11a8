"""Shared fixtures: one real PostgreSQL (embedded pgserver + pgvector) per test session, set up from the shipped data.

Tests never read the developer's environment or ``.streamlit/secrets.toml``: settings are built from an explicit,
empty environment plus the values a test needs.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may download during tests
# commands run by tests stop their temporary embedded servers when they exit, as before (no lingering server)
os.environ.setdefault("SAGE_EMBEDDED_LINGER_S", "0")

from sage import db  # noqa: E402
from sage.census.setup import run_setup  # noqa: E402
from sage.settings import load_settings  # noqa: E402

NO_SECRETS = Path(os.devnull)


def make_settings(**overrides):
    """Settings from an empty environment (no keys, no DATABASE_URL) plus ``overrides``.

    The app does not index the ACS table catalog in the background here (``catalog_index="off"``): such a thread
    would outlive the test that started the app, compete for the cores and change a shared database's index;
    tests of the background build ask for it.  Nor does an embedded server outlive its test
    (``embedded_linger_s=0``).
    """
    return load_settings(environ={}, secrets_path=NO_SECRETS,
                         **{"catalog_index": "off", "embedded_linger_s": 0, **overrides})


@pytest.fixture(scope="session")
def settings(tmp_path_factory):
    """A set-up embedded database (census tables, reader role, retrieval index) shared by the whole session.

    Tests that change data must restore it (or build their own database with ``fresh_settings``).
    """
    data_dir = tmp_path_factory.mktemp("sage-db") / "pgdata"
    s = make_settings(data_dir=data_dir)
    run_setup(s)
    return s


@pytest.fixture(scope="session")
def setup_report(settings):
    """The report of a second setup on the session database (the first ran in ``settings``)."""
    return run_setup(settings)


@pytest.fixture
def fresh_settings(tmp_path):
    """Settings on a brand-new, empty data directory (nothing set up yet)."""
    return make_settings(data_dir=tmp_path / "pgdata")


def database_url(url: str, name: str) -> str:
    """The same server, another database."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextmanager
def scratch_database(settings, prefix: str):
    """A new, empty database on the session's server (its URL), dropped afterwards even with open connections."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = db.admin_url(settings)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def planner(settings):
    """The offline planner on the session database (one per test module)."""
    from sage.planner.offline.planner import OfflinePlanner

    return OfflinePlanner(settings)
