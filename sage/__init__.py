"""census-sage: plain-English questions about ACS 5-year estimates, answered with SQL you can check.

The pipeline, one module per stage: ``retrieve`` -> ``planner`` -> ``guard`` -> ``execute`` -> ``agent``.
This package never imports streamlit; ``app.py`` and ``app_pages/`` draw what it returns.

The notebook API (:mod:`sage.notebook`) is exported here: ``sage.ask(question)``, ``sage.run_sql(sql)``,
``sage.connect(database_url)``, and the :class:`~sage.answer.Answer` and :class:`~sage.errors.SageError` they
return and raise.  They are imported on first use (module ``__getattr__``), so ``import sage`` stays instant and
pulls in neither the database drivers nor pandas or Altair: a command-line ``ask`` starts with it.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: the names ``sage`` exports, and the module each lives in (imported when first used)
_LAZY = {
    "ask": "sage.notebook",
    "run_sql": "sage.notebook",
    "connect": "sage.notebook",
    "Answer": "sage.answer",
    "SageError": "sage.errors",
    "ErrorKind": "sage.errors",
}

__all__ = ["Answer", "ErrorKind", "SageError", "__version__", "ask", "connect", "run_sql"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
