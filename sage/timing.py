"""One definition of a latency percentile for every figure the project reports (``sage bench``, ``sage eval``'s
``plan_ms``, the scripts in ``benchmarks/``).

Example:
    >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([1.0, 2.0, 3.0, 4.0], 95)
    (2.5, 3.85)
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def percentile(values: Iterable[float], q: int) -> float:
    """The ``q``-th percentile (1-99) of ``values``, interpolating between the closest ranks.

    This is :func:`statistics.quantiles` with ``method="inclusive"`` (the definition of NumPy's default and of
    spreadsheets' PERCENTILE.INC), so ``percentile(v, 50)`` is the median.  0.0 for no values; the value itself for
    one.
    """
    if not 1 <= q <= 99:
        raise ValueError(f"q must be a whole percentile from 1 to 99, not {q!r}")
    data = sorted(values)
    if len(data) < 2:
        return float(data[0]) if data else 0.0
    return statistics.quantiles(data, n=100, method="inclusive")[q - 1]


__all__ = ["percentile"]
