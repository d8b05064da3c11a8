"""What the chart builders hand back and the ground every display starts from.

:class:`ChartSpec` (what to draw, and why it is not what was asked for) and :class:`Metric` (one number for
``st.metric``) are the results of :func:`sage.charts.build`; :func:`_metric` reads one cell into a metric, and
:func:`_plot_frame` turns a result into the frame every chart plots, with field names Vega-Lite cannot misread.
They live apart from :mod:`.builders` (which display fits a result) and from the drawings (:mod:`.bars`,
:mod:`.change`, :mod:`.maps`) because all of those share them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd

from .. import stats
from .frame import Shape
from .shape import format_value, is_estimate, reliability_text

#: a tooltip's name for :func:`~sage.charts.shape.reliability_text` (``high (CV 1.1%)``)
RELIABILITY_TITLE: Final = "Reliability (CV, Esri bands)"


@dataclass(frozen=True)
class Metric:
    """One number for ``st.metric``: a label, the formatted value, the margin of error text (or None) and, for an
    estimate with a margin, its reliability (``"high reliability (CV 1.1%, Esri convention)"``)."""

    label: str
    value: str
    moe: str | None = None
    raw: float | None = None
    reliability: str | None = None


@dataclass(frozen=True)
class ChartSpec:
    """What to draw for a result.

    ``kind`` is what will be drawn (one of :data:`~sage.types.DISPLAY_HINTS`), ``hint`` what the planner asked
    for; when they differ, ``fallback_reason`` says why in words a user can read.  ``chart`` is an Altair chart for
    bar/grouped/map, ``metrics`` the numbers for big/statrow.  ``note`` carries remarks that are not a fallback (a
    measure left out of a map, places the map cannot draw).  ``alternate`` is another view of the same rows worth
    offering beside it (the point map of the Census places a bar chart ranks).  ``wide`` says the chart is panels
    side by side that need the card's full width.
    """

    kind: str
    hint: str
    chart: Any = None
    metrics: list[Metric] = field(default_factory=list)
    fallback_reason: str | None = None
    note: str | None = None
    alternate: ChartSpec | None = None
    wide: bool = False


def _metric(shape: Shape, m: str, i: int, label: str, *, signed: bool = False) -> Metric:
    raw = shape.frame[m].iloc[i]
    raw = None if raw is None or (isinstance(raw, float) and math.isnan(raw)) else float(raw)
    unit, fraction = shape.units[m], shape.fractions[m]
    moe_text = reliability = None
    if m in shape.moe:
        moe = shape.frame[shape.moe[m]].iloc[i]
        if moe is not None and not (isinstance(moe, float) and math.isnan(moe)):
            moe_text = "± " + format_value(float(moe), unit, fraction=fraction)
            if is_estimate(m) and not signed:
                reliability = stats.reliability_label(raw, float(moe))
    value = format_value(raw, unit, fraction=fraction)
    if signed and raw is not None and raw > 0:
        value = "+" + value
    return Metric(label=label, value=value, moe=moe_text, raw=raw, reliability=reliability)


def _place_of_row(shape: Shape, i: int) -> str | None:
    if shape.label is None or shape.label in shape.measures:
        return None
    value = shape.frame[shape.label].iloc[i]
    return str(value) if value is not None else None


def _plot_frame(shape: Shape, measures: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """A frame with safe field names (``place``, ``v0``, ``v0_low``...) for Vega-Lite, percentages as fractions.

    Vega-Lite reads dots and brackets in field names as paths, so result column names never reach the spec.
    """
    frame = shape.frame
    labels = [str(v) if v is not None else "(none)" for v in frame[shape.label]]
    labels = _dedupe_labels(labels)
    out = pd.DataFrame({"place": labels})
    fields: dict[str, str] = {}
    for i, m in enumerate(measures):
        f = f"v{i}"
        fields[m] = f
        scale = 0.01 if shape.units[m] == "percent" and not shape.fractions[m] else 1.0
        out[f] = frame[m].astype(float) * scale
        if m in shape.moe:
            moe = frame[shape.moe[m]].astype(float) * scale
            out[f + "_moe"] = moe
            out[f + "_low"] = out[f] - moe
            out[f + "_high"] = out[f] + moe
            if is_estimate(m):
                out[f + "_rel"] = [reliability_text(x, e) for x, e in zip(frame[m], frame[shape.moe[m]], strict=True)]
    if shape.series:
        out["series"] = [str(v) for v in frame[shape.series]]
    return out, fields


def _dedupe_labels(labels: list[str]) -> list[str]:
    """Two rows with one label would draw as one bar: number the repeats."""
    if len(set(labels)) == len(labels):
        return labels
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


__all__ = ["RELIABILITY_TITLE", "ChartSpec", "Metric"]
