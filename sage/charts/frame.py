"""A result as a pandas DataFrame, for what plots or shows it as a table: the charts, the answer card's table.

How the result reads (which column names the rows, the measures, their units and margins) is decided once, without
pandas, in :mod:`.shape`; :class:`Shape` is that layout with the frame the charts draw from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd

from .shape import D3_FORMAT, Layout, is_estimate, is_numeric, read_layout, reliability_text, unique_names


@dataclass
class Shape(Layout):
    """A result's :class:`~.shape.Layout` with its rows as a DataFrame (with the built ``place`` column, if any)."""

    frame: pd.DataFrame


def to_frame(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """The result as a DataFrame, with ``Decimal`` turned into ``float`` so that pandas and Arrow see numbers."""
    data = [[float(v) if isinstance(v, Decimal) else v for v in row] for row in rows]
    frame = pd.DataFrame(data, columns=unique_names(list(columns)))
    for col in frame.columns:
        if is_numeric(list(frame[col])):
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def analyse(frame: pd.DataFrame, units: dict[str, str] | None) -> Shape:
    """The layout of a frame's result (:func:`.shape.read_layout`) with a copy of the frame to draw from."""
    frame = frame.copy()
    values = {str(c): frame[c].tolist() for c in frame.columns}
    layout = read_layout(values, units)
    if layout.label == "place" and "place" in values:
        frame["place"] = values["place"]
    return Shape(**vars(layout), frame=frame)


def d3_format(unit: str, values: pd.Series) -> str:
    """The Vega-Lite number format of a unit (a count with fractions below 1,000 keeps one decimal)."""
    if unit == "count":
        clean = values.dropna()
        if len(clean) and not all(float(v).is_integer() for v in clean) and clean.abs().max() < 1000:
            return ",.1f"
    return D3_FORMAT.get(unit, ",.1f")


def table_frame(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """The result as the answer card's table shows it: after each estimate's margin of error, a
    ``<estimate> reliability`` column (``high (CV 1.1%)``; empty where there is no margin).  Changes and
    differences get none (their significance is tested instead)."""
    frame = to_frame(columns, rows)
    if frame.empty:
        return frame
    shape = analyse(frame, None)
    for measure, moe in shape.moe.items():
        if not is_estimate(measure):
            continue
        texts = [reliability_text(x, m) for x, m in zip(frame[measure], frame[moe], strict=True)]
        if not any(texts):
            continue
        at = list(frame.columns).index(moe) + 1
        frame.insert(at, f"{measure} reliability", texts)
    return frame


__all__ = ["Shape", "analyse", "d3_format", "table_frame", "to_frame"]
