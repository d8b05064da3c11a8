"""Charts for answers: from a result's columns and rows plus the planner's display hint to an Altair chart or metrics.

The planner only *names* a display hint (docs/design.md "Display hints"); this package decides what can really be drawn
from the columns that came back, and says so when it cannot (``ChartSpec.fallback_reason``): a bar chart without a
numeric column becomes a table, a map without FIPS codes becomes a bar chart, "one number" with fifty rows becomes a
ranking.  Everything here is pure (no Streamlit, no database): charts are data, tested through ``chart.to_dict()``.

The package: :mod:`.shape` reads what a result holds (units, formats, labels, margins) without pandas,
:mod:`.frame` puts it in a DataFrame for plotting, :mod:`.geo` places it on the shipped maps, :mod:`.builders`
decides what to draw, :mod:`.bars`, :mod:`.change` and :mod:`.maps` draw it, and :mod:`.spec` holds what they hand
back (``ChartSpec``, ``Metric``) and the frame they all plot.

Example:
    >>> spec = build(["state_name", "population"], [["Texas", 30_000_000], ["Ohio", 11_800_000]], "bar")
    >>> spec.kind, spec.chart.to_dict()["layer"][0]["mark"]["type"]
    ('bar', 'bar')
"""

import importlib
from typing import TYPE_CHECKING, Any

from .shape import (
    RELIABILITY_NOTE,
    change_of,
    dollar_basis,
    format_value,
    humanize,
    reliability_text,
    unit_for_variable,
    unit_of,
)

if TYPE_CHECKING:
    from .builders import build
    from .frame import table_frame, to_frame
    from .spec import ChartSpec, Metric

#: names loaded when first used: Altair (about 1.5 s to import) with ``build``, pandas (0.4 s) with the rest
_LAZY = {"build": ".builders", "table_frame": ".frame", "to_frame": ".frame", "ChartSpec": ".spec", "Metric": ".spec"}


def __getattr__(name: str) -> Any:
    """A chart, a frame or a spec is loaded when first drawn, not when a headline or a number's format is: a
    command-line answer draws none, so it imports neither pandas nor Altair."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["RELIABILITY_NOTE", "ChartSpec", "Metric", "build", "change_of", "dollar_basis", "format_value", "humanize",
           "reliability_text", "table_frame", "to_frame", "unit_for_variable", "unit_of"]
