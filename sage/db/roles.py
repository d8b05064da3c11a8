"""The two roles that connect, owner and reader (:mod:`sage.db` says what each may do), and the libpq URL each
logs in with.

Apart from the pools (:mod:`sage.db.pool`) so that who logs in, and where (``DATABASE_URL``, the embedded server,
``SAGE_READER_URL``), reads in one place; the reader's stored password is looked up by the pool, which needs an
owner connection for it.
"""

from __future__ import annotations

from typing import Literal

from ..settings import Settings, with_user
from .embedded import _start_embedded

READER_ROLE = "census_reader"

Role = Literal["owner", "reader"]
OWNER: Role = "owner"
READER: Role = "reader"


def admin_url(settings: Settings) -> str:
    """The owner's libpq URL: DATABASE_URL, or the embedded server's superuser over its Unix socket."""
    if settings.database_url:
        url = settings.database_url
        # SQLAlchemy-style URLs (postgresql+psycopg://) are accepted for convenience
        scheme, rest = url.split("://", 1) if "://" in url else ("", url)
        if scheme.startswith("postgresql+") or scheme.startswith("postgres+"):
            url = "postgresql://" + rest
        return url
    return _start_embedded(settings.data_dir).get_uri()


def reader_url(settings: Settings, password: str | None = None) -> str:
    """The reader role's URL: SAGE_READER_URL, or the owner's URL with the user swapped for ``census_reader``."""
    if settings.reader_url:
        return settings.reader_url
    return with_user(admin_url(settings), READER_ROLE, password)
