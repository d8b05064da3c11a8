"""One typed settings object for the whole product.

Every tunable is read from, in order: an environment variable, ``.streamlit/secrets.toml`` (the file Streamlit users
already keep their keys in), then the default below.  The table in README.md mirrors ``SETTINGS``; keep them in step.

``sage`` never imports streamlit, so the secrets file is read with ``tomllib`` here rather than through
``st.secrets``.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

import platformdirs

from .errors import SettingsError

#: the project root (the folder holding ``sage/``, ``data/`` and ``.streamlit/``)
PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: the newest Claude Sonnet model id known to the pinned SDK; override with SAGE_MODEL
DEFAULT_MODEL = "claude-sonnet-5-5"

#: which planner answers: ``auto`` is Claude when a key is set, else offline
PlannerName = Literal["auto", "claude", "offline"]
PLANNERS: tuple[PlannerName, ...] = get_args(PlannerName)
#: whether the app builds the catalog part of the retrieval index in the background (``off``: only
#: ``python -m sage index --catalog`` does)
CatalogIndexMode = Literal["background", "off"]
CATALOG_INDEX_MODES: tuple[CatalogIndexMode, ...] = get_args(CatalogIndexMode)
#: whether the app may load ACS tables from the Census Data API: ``auto`` is on for the embedded database and off
#: for a DATABASE_URL (a shared server is changed by its administrator, with ``python -m sage census fetch``)
AllowFetch = Literal["auto", "on", "off"]
ALLOW_FETCH: tuple[AllowFetch, ...] = get_args(AllowFetch)
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Settings:
    """Configuration of one running product (app, CLI or test).

    Secrets (API keys, passwords inside URLs) are kept here but never printed: use :meth:`public` for anything
    shown to a user or written to a log.
    """

    database_url: str | None = None
    data_dir: Path = field(default_factory=lambda: Path(platformdirs.user_data_dir("census-sage")) / "pgdata")
    reader_url: str | None = None
    anthropic_api_key: str | None = None
    planner: PlannerName = "auto"
    model: str = DEFAULT_MODEL
    max_attempts: int = 3
    statement_timeout_ms: int = 5000
    max_rows: int = 1000
    embedding_model: str | None = None
    census_api_key: str | None = None
    census_api_url: str = "https://api.census.gov/data"
    max_question_chars: int = 2000
    claude_timeout_s: float = 60.0
    #: retries of one Claude request after a 429, 529, 5xx, time-out or dropped connection (the SDK's max_retries)
    claude_max_retries: int = 2
    #: connections kept open per role (owner, reader) in one process; see sage/db/pool.py and the README
    pool_size: int = 5
    #: connections opened beyond pool_size under a burst, per role, closed again when returned
    pool_max_overflow: int = 5
    #: how long a question waits for a free connection before it fails with "busy"
    pool_timeout_s: float = 10.0
    catalog_index: CatalogIndexMode = "background"
    allow_fetch: AllowFetch = "auto"
    #: the password that makes a session a curator (sidebar "Curator sign-in"); unset: no password sign-in
    curator_password: str | None = field(default=None, repr=False)
    #: the curators among the users signed in with Streamlit's own authentication (``[auth]``), by email,
    #: comma-separated
    curators: str | None = None
    #: questions (and edited SQL runs) one session may ask in a minute
    max_questions_per_minute: int = 20
    #: Claude tokens (input, output and cache) all sessions may spend in a day (UTC); unset: no cap. Past it the
    #: offline planner answers
    claude_daily_tokens: int | None = None
    #: how long the embedded server a command (or the notebook API) used keeps running after the last such process
    #: has exited, so that the next command joins it instead of starting it (0: it stops with the last process)
    embedded_linger_s: float = 300.0
    data_path: Path = PROJECT_ROOT / "data"

    def __post_init__(self) -> None:
        if self.planner not in PLANNERS:
            raise SettingsError(
                f"SAGE_PLANNER must be one of {', '.join(PLANNERS)}, not {self.planner!r}.", setting="SAGE_PLANNER"
            )
        if self.catalog_index not in CATALOG_INDEX_MODES:
            raise SettingsError(f"SAGE_CATALOG_INDEX must be background or off, not {self.catalog_index!r}.",
                                setting="SAGE_CATALOG_INDEX")
        if self.allow_fetch not in ALLOW_FETCH:
            raise SettingsError(f"SAGE_ALLOW_FETCH must be auto, 1 or 0, not {self.allow_fetch!r}.",
                                setting="SAGE_ALLOW_FETCH")
        for name, low in (("max_attempts", 1), ("statement_timeout_ms", 100), ("max_rows", 1),
                          ("claude_max_retries", 0), ("pool_size", 1), ("pool_max_overflow", 0),
                          ("pool_timeout_s", 0.1), ("max_questions_per_minute", 1), ("claude_daily_tokens", 0),
                          ("embedded_linger_s", 0)):
            if getattr(self, name) is not None and getattr(self, name) < low:
                env = _ENV_FOR[name]
                raise SettingsError(f"{env} must be at least {low}.", setting=env)

    @property
    def embedded(self) -> bool:
        """True when the product runs its own PostgreSQL in ``data_dir`` (no DATABASE_URL given)."""
        return not self.database_url

    @property
    def fetch_allowed(self) -> bool:
        """Whether the app may load ACS tables (SAGE_ALLOW_FETCH; ``auto``: only into the embedded database)."""
        return self.allow_fetch == "on" or (self.allow_fetch == "auto" and self.embedded)

    @property
    def curator_emails(self) -> frozenset[str]:
        """The curators' emails (SAGE_CURATORS), lower-case."""
        return frozenset(e.strip().lower() for e in (self.curators or "").split(",") if e.strip())

    @property
    def effective_planner(self) -> Literal["claude", "offline"]:
        """``claude`` or ``offline``: what ``auto`` resolves to with the keys at hand."""
        if self.planner == "auto":
            return "claude" if self.anthropic_api_key else "offline"
        return self.planner

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def public(self) -> dict[str, Any]:
        """The settings a user may see: no keys, no passwords."""
        return {
            "database": redact_url(self.database_url) if self.database_url else "embedded",
            "data_dir": str(self.data_dir) if self.embedded else None,
            "reader_login": "configured" if self.reader_url else "managed by setup",
            "planner": self.planner,
            "effective_planner": self.effective_planner,
            "model": self.model,
            "anthropic_api_key": "set" if self.anthropic_api_key else "not set",
            "max_attempts": self.max_attempts,
            "statement_timeout_ms": self.statement_timeout_ms,
            "max_rows": self.max_rows,
            "embedding_model": self.embedding_model or "bundled all-MiniLM-L6-v2 (int8 ONNX, offline)",
            "census_api_key": "set" if self.census_api_key else "not set",
            "claude_max_retries": self.claude_max_retries,
            "pool_size": self.pool_size,
            "pool_max_overflow": self.pool_max_overflow,
            "pool_timeout_s": self.pool_timeout_s,
            "allow_fetch": f"{self.allow_fetch} ({'on' if self.fetch_allowed else 'off'})",
            "catalog_index": self.catalog_index,
            "curator_password": "set" if self.curator_password else "not set",
            "curators": len(self.curator_emails),
            "max_questions_per_minute": self.max_questions_per_minute,
            "claude_daily_tokens": self.claude_daily_tokens if self.claude_daily_tokens is not None else "no cap",
            "embedded_linger_s": self.embedded_linger_s,
        }


#: field name -> environment variable
_ENV_FOR = {
    "database_url": "DATABASE_URL",
    "data_dir": "SAGE_DATA_DIR",
    "reader_url": "SAGE_READER_URL",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "planner": "SAGE_PLANNER",
    "model": "SAGE_MODEL",
    "max_attempts": "SAGE_MAX_ATTEMPTS",
    "statement_timeout_ms": "SAGE_STATEMENT_TIMEOUT_MS",
    "max_rows": "SAGE_MAX_ROWS",
    "embedding_model": "SAGE_EMBEDDING_MODEL",
    "census_api_key": "CENSUS_API_KEY",
    "census_api_url": "SAGE_CENSUS_API_URL",
    "max_question_chars": "SAGE_MAX_QUESTION_CHARS",
    "claude_timeout_s": "SAGE_CLAUDE_TIMEOUT_S",
    "claude_max_retries": "SAGE_CLAUDE_MAX_RETRIES",
    "pool_size": "SAGE_POOL_SIZE",
    "pool_max_overflow": "SAGE_POOL_MAX_OVERFLOW",
    "pool_timeout_s": "SAGE_POOL_TIMEOUT_S",
    "catalog_index": "SAGE_CATALOG_INDEX",
    "allow_fetch": "SAGE_ALLOW_FETCH",
    "curator_password": "SAGE_CURATOR_PASSWORD",
    "curators": "SAGE_CURATORS",
    "max_questions_per_minute": "SAGE_MAX_QUESTIONS_PER_MINUTE",
    "claude_daily_tokens": "SAGE_CLAUDE_DAILY_TOKENS",
    "embedded_linger_s": "SAGE_EMBEDDED_LINGER_S",
}


# ---------------------------------------------------------------------------------------------------------------
# database URLs: shown without secrets, and with another login


def with_user(url: str, user: str, password: str | None) -> str:
    """``url`` logging in as ``user`` (with ``password``, URL-quoted) instead of whoever it named."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = quote(user, safe="")
    if password:
        netloc += ":" + quote(password, safe="")
    netloc += "@" + host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def redact_url(url: str | None) -> str:
    """``host:port/dbname`` of a URL, with no user or password, for status pages and logs."""
    if not url:
        return "embedded"
    try:
        parts = urlsplit(url)
        host = parts.hostname or parse_qs(parts.query).get("host", ["local socket"])[0]
        port = f":{parts.port}" if parts.port else ""
        return f"{host}{port}{parts.path or ''}"
    except ValueError:
        return "(unparseable DATABASE_URL)"


def _read_secrets(path: Path) -> Mapping[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path.name} could not be read ({exc}); fix or remove it.", setting=str(path)) from exc


def load_settings(
    environ: Mapping[str, str] | None = None, secrets_path: Path | None = None, **overrides: Any
) -> Settings:
    """Build :class:`Settings` from the environment, then the secrets file, then defaults.

    ``overrides`` win over everything (tests and the CLI's flags use them).
    """
    environ = os.environ if environ is None else environ
    secrets = _read_secrets(secrets_path or PROJECT_ROOT / ".streamlit" / "secrets.toml")
    hints = {f.name: str(f.type) for f in dataclasses.fields(Settings)}  # annotations are strings here
    values: dict[str, Any] = {}
    for name, env in _ENV_FOR.items():
        raw = environ.get(env)
        if raw is None or raw == "":
            raw = secrets.get(env)
        if raw is None or raw == "":
            continue
        values[name] = _coerce(name, env, raw, hints[name])
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)


def _coerce(name: str, env: str, raw: Any, hint: str) -> Any:
    try:
        if "int" in hint:
            return int(raw)
        if "float" in hint:
            return float(raw)
        if "Path" in hint:
            return Path(str(raw)).expanduser()
    except ValueError as exc:
        raise SettingsError(f"{env} must be a number, not {raw!r}.", setting=env) from exc
    value = str(raw).strip()
    if name == "allow_fetch":
        low = value.lower()
        return "on" if low in _TRUE else "off" if low in _FALSE else low
    return value.lower() if name in ("planner", "catalog_index") else value
