"""Margins of error, reliability and significance tests for ACS estimates, by the Census Bureau's formulas.

Pure Python (standard library only).  Every formula cites the research note ``acs-statistics.md`` and, through it,
the Census Bureau's own documents:

* **[H20]** *Understanding and Using American Community Survey Data: What All Data Users Need to Know* (the ACS
  General Handbook, September 2020), chapters 7 (error and significance) and 8 (derived estimates);
* **[ST]** *Instructions for Applying Statistical Testing to ACS Data*;
* **[WE]** *ACS Worked Examples for Approximating Standard Errors Using ACS Data*.

Conventions, the same in every function:

* A margin of error (MOE) is the **published 90% MOE**; ``SE = MOE / 1.645`` ([H20] ch. 7 formula 1).  MOEs are
  never negative (a negative MOE raises ``ValueError``: it is a bug, not data).
* Inputs may be ``int``, ``float``, ``Decimal`` or ``None``; results are ``float``.  **None in, None out**: when a
  needed input is unknown the result is ``None``, never a made-up number.  A zero denominator also gives ``None``.
* The derived-estimate MOEs are the handbook's approximations: they drop the covariance of the components and can
  over- or under-state the true MOE ([H20] p. 61).  Use the fewest components possible.
* Medians, means, ratios and percentages are never summed or averaged across places: re-derive them from summed
  counts (``moe_proportion``, ``moe_ratio``).  Two published medians may be *compared* (``z_score``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

#: the critical value of the published 90% MOEs: SE = MOE / 1.645 ([H20] ch. 7 formula 1, p. 55)
Z90 = 1.645
#: critical values for the significance test at 90%, 95% and 99% ([H20] ch. 7 step 6; [ST] note 2)
Z_BY_LEVEL = {0.90: 1.645, 0.95: 1.960, 0.99: 2.576}

#: reliability bands on the coefficient of variation, Esri's convention (the Census Bureau sets none, [H20] p. 55)
RELIABILITY_HIGH_MAX_CV = 12.0
RELIABILITY_MEDIUM_MAX_CV = 40.0
RELIABILITY_CONVENTION = "Esri convention"

INTERVAL_KINDS = ("count", "percent", "dollars")

Number = int | float | Decimal


# --------------------------------------------------------------------------------------------------------------
# inputs


def _num(value: Any, what: str = "value") -> float | None:
    """A finite float from int/float/Decimal, or None for None; anything else is a TypeError/ValueError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise TypeError(f"{what} must be a number or None, not {type(value).__name__}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{what} must be a finite number, not {value!r}")
    return out


def _moe(value: Any, what: str = "moe") -> float | None:
    """A margin of error: a number >= 0, or None."""
    out = _num(value, what)
    if out is not None and out < 0:
        raise ValueError(f"{what} must not be negative ({value!r}); a margin of error is a width")
    return out


def _z(level: float) -> float:
    if isinstance(level, (int, float, Decimal)) and not isinstance(level, bool):
        for known, z in Z_BY_LEVEL.items():
            if abs(float(level) - known) < 1e-9:
                return z
    raise ValueError(f"level must be one of 0.9, 0.95, 0.99, not {level!r}")


# --------------------------------------------------------------------------------------------------------------
# standard error, other confidence levels


def se(moe: Number | None) -> float | None:
    """Standard error from a published 90% MOE: ``SE = MOE / 1.645`` ([H20] ch. 7 formula 1, p. 55).

    (ACS data from 2005 and earlier used 1.65; census-sage holds no such data.)
    """
    m = _moe(moe)
    return None if m is None else m / Z90


def moe_at_level(moe: Number | None, level: float) -> float | None:
    """A published 90% MOE re-expressed at ``level`` (0.9, 0.95 or 0.99): ``MOE90 × Z_level / 1.645``.

    acs-statistics.md §1.1: MOE95 = MOE90 × 1.960 / 1.645, MOE99 = MOE90 × 2.576 / 1.645 (the Census constants;
    some libraries use 2.58 or 2.56 for 99%).
    """
    m = _moe(moe)
    return None if m is None else m * _z(level) / Z90


# --------------------------------------------------------------------------------------------------------------
# derived estimates


def moe_sum(estimates: Iterable[Number | None], moes: Iterable[Number | None]) -> float | None:
    """MOE of a sum of estimates: ``sqrt(MOE1² + MOE2² + … + MOEn²)`` ([H20] ch. 8 formula 1, p. 59).

    **Zero-estimate rule** (acs-statistics.md §1.3, from the Census MOE training slides): of the components whose
    estimate is 0, only the **largest** MOE is included, once; every non-zero component's MOE is included.
    Example (§2.11): estimates 0, 0, 0, 41 with MOEs 22, 22, 29, 37 give ``sqrt(29² + 37²) = 47.0106…``.

    Returns None when any estimate or MOE is None (an unknown part makes the sum's MOE unknown; with an unknown
    zero-estimate MOE the largest one cannot be known either) and for an empty list.  A controlled component with
    MOE 0 is fine.  ``estimates`` and ``moes`` must have the same length.
    """
    ests = list(estimates)
    margins = list(moes)
    if len(ests) != len(margins):
        raise ValueError(f"moe_sum needs one MOE per estimate ({len(ests)} estimates, {len(margins)} MOEs)")
    if not ests:
        return None
    squares = 0.0
    largest_zero: float | None = None
    for i, (e, m) in enumerate(zip(ests, margins, strict=True)):
        est = _num(e, f"estimates[{i}]")
        moe = _moe(m, f"moes[{i}]")
        if est is None or moe is None:
            return None
        if est == 0:
            largest_zero = moe if largest_zero is None else max(largest_zero, moe)
        else:
            squares += moe * moe
    if largest_zero is not None:
        squares += largest_zero * largest_zero
    return math.sqrt(squares)


def moe_difference(moe1: Number | None, moe2: Number | None) -> float | None:
    """MOE of a difference X1 − X2: ``sqrt(MOE1² + MOE2²)`` ([H20] ch. 8 formula 1; [WE] formula 2; [ST] item 1).

    The same approximation as a sum of two terms (the zero-estimate rule is about sums of many cells and is not
    applied here).
    """
    a, b = _moe(moe1, "moe1"), _moe(moe2, "moe2")
    if a is None or b is None:
        return None
    return math.hypot(a, b)


def moe_proportion(
    num: Number | None, den: Number | None, moe_num: Number | None, moe_den: Number | None
) -> float | None:
    """MOE of a proportion P = num / den whose numerator is a **subset** of the denominator.

    [H20] ch. 8 formula 6, p. 64: ``MOE(P) = (1/den) · sqrt(MOE(num)² − P² · MOE(den)²)`` (the *minus* form).
    For a percentage multiply the result by 100.

    * **Negative radicand**: [H20] p. 64 and [ST] say to use the *plus* form, i.e. the ratio formula
      (:func:`moe_ratio`).
    * **Radicand exactly 0** (our decision; the handbook's wording only covers "negative"): the ratio form is used
      as well, as tidycensus ``moe_prop`` does.  The minus form would claim a zero MOE whenever
      ``MOE(num) = P · MOE(den)``, an artefact of dropping the covariance, not a measured certainty; the plus form is
      the conservative choice.  When both MOEs are 0 both forms give 0.
    * **P = 1** (num = den): [ST]'s separate formula, ``MOE(P) = MOE(num) / den`` (SE(P) = SE(num)/den).
    * den = 0 gives None.  A numerator outside ``0 ≤ num ≤ den`` is not a subset: ``ValueError`` (use
      :func:`moe_ratio`).

    Example (§2.3): 203,119 ±5,070 never-married women of 630,498 ±831.1 women → P 0.322, MOE 0.0080 (32.2% ±0.8).
    """
    n, d = _num(num, "num"), _num(den, "den")
    mn, md = _moe(moe_num, "moe_num"), _moe(moe_den, "moe_den")
    if n is None or d is None or mn is None or md is None or d == 0:
        return None
    if n < 0 or d < 0 or n > d:
        raise ValueError(
            f"moe_proportion needs 0 <= num <= den (got num={num}, den={den}): the numerator must be a part of the "
            "denominator; use moe_ratio for a ratio"
        )
    if n == d:
        return mn / d
    p = n / d
    radicand = mn * mn - p * p * md * md
    if radicand <= 0:
        radicand = mn * mn + p * p * md * md
    return math.sqrt(radicand) / d


def moe_ratio(num: Number | None, den: Number | None, moe_num: Number | None, moe_den: Number | None) -> float | None:
    """MOE of a ratio R = num / den whose numerator is **not** a subset of the denominator (means, per-capita
    values, persons per household, males per female).

    [H20] ch. 8 formula 7, p. 65: ``MOE(R) = (1/den) · sqrt(MOE(num)² + R² · MOE(den)²)`` (the *plus* form;
    ``|den|`` so the MOE is never negative).  den = 0 gives None.

    Example (§2.4): 226,840 ±5,557 never-married men per 203,119 ±5,070 never-married women → R 1.117, MOE 0.039.
    """
    n, d = _num(num, "num"), _num(den, "den")
    mn, md = _moe(moe_num, "moe_num"), _moe(moe_den, "moe_den")
    if n is None or d is None or mn is None or md is None or d == 0:
        return None
    r = n / d
    return math.sqrt(mn * mn + r * r * md * md) / abs(d)


def moe_product(x: Number | None, y: Number | None, moe_x: Number | None, moe_y: Number | None) -> float | None:
    """MOE of a product X · Y: ``sqrt(X² · MOE(Y)² + Y² · MOE(X)²)`` ([H20] ch. 8 formula 9, p. 66).

    A percentage must be entered as a proportion, and so must its MOE (82.4% ±0.1 is 0.824 ±0.001).
    Example (§2.5): 74,506,512 ±228,238 × 0.824 ±0.001 → 61,393,366 ±202,289.
    """
    a, b = _num(x, "x"), _num(y, "y")
    ma, mb = _moe(moe_x, "moe_x"), _moe(moe_y, "moe_y")
    if a is None or b is None or ma is None or mb is None:
        return None
    return math.sqrt(a * a * mb * mb + b * b * ma * ma)


def pct_change(x1: Number | None, x2: Number | None) -> float | None:
    """Percent change from the earlier estimate ``x1`` to the later ``x2``: ``100 · (x2 − x1) / x1``
    ([H20] ch. 8 formula 8, p. 66).  x1 = 0 gives None.

    Dollar amounts of two periods must first be put in the same dollars (``sage.census.cpi.dollar_factor``).
    """
    a, b = _num(x1, "x1"), _num(x2, "x2")
    if a is None or b is None or a == 0:
        return None
    return 100.0 * (b - a) / a


def moe_pct_change(x1: Number | None, x2: Number | None, moe1: Number | None, moe2: Number | None) -> float | None:
    """MOE of :func:`pct_change` (in percentage points): formula 8 "reduces to a ratio, so the ratio formula (7)
    … should be used" ([H20] p. 66), times 100:

    ``MOE = 100 · (1/x1) · sqrt(MOE(x2)² + (x2/x1)² · MOE(x1)²)``.

    It ignores the correlation of overlapping periods; compare non-overlapping 5-year periods ([H20] pp. 17–18).
    Example (§2.11): 135,173 ±3,860 → 139,301 ±4,047 is +3.0538643% ±4.1980699.
    """
    moe = moe_ratio(x2, x1, moe2, moe1)
    return None if moe is None else 100.0 * moe


# --------------------------------------------------------------------------------------------------------------
# reliability and intervals


def cv(estimate: Number | None, moe: Number | None) -> float | None:
    """Coefficient of variation in percent: ``CV = SE / |X| × 100`` ([H20] ch. 7 formula 2, ch. 8 formula 4).

    An estimate of 0 has no CV (None).  Example (§2.6): 564,757 ±10,127 → CV 1.09%.
    """
    x = _num(estimate, "estimate")
    s = se(moe)
    if x is None or s is None or x == 0:
        return None
    return s / abs(x) * 100.0


def reliability(estimate: Number | None, moe: Number | None) -> str | None:
    """``"high"``, ``"medium"`` or ``"low"`` from the CV, **Esri convention**: CV ≤ 12% high, ≤ 40% medium,
    > 40% low (Esri's ACS reliability symbols; acs-statistics.md §1.2).

    The Census Bureau sets no thresholds ("There are no hard-and-fast rules", [H20] p. 55), so wherever the label is
    shown it must say it follows the Esri convention (:func:`reliability_label` does).  None when the CV is
    unknown (no MOE, or an estimate of 0).
    """
    c = cv(estimate, moe)
    if c is None:
        return None
    if c <= RELIABILITY_HIGH_MAX_CV:
        return "high"
    if c <= RELIABILITY_MEDIUM_MAX_CV:
        return "medium"
    return "low"


def reliability_label(estimate: Number | None, moe: Number | None) -> str | None:
    """The reliability band as text to show, naming the convention: ``"high reliability (CV 1.1%, Esri
    convention)"``; None when it cannot be assessed."""
    band = reliability(estimate, moe)
    if band is None:
        return None
    return f"{band} reliability (CV {cv(estimate, moe):.1f}%, {RELIABILITY_CONVENTION})"


def confidence_interval(x: Number | None, moe: Number | None, kind: str = "count") -> tuple[float, float] | None:
    """The 90% confidence interval ``X ± MOE`` ([H20] p. 53), clipped to natural limits ([H20] p. 54, TIP).

    * ``count``: the lower bound is not below 0;
    * ``percent``: the bounds stay within 0–100;
    * ``dollars``: not clipped (incomes may be negative).

    Example (§2.6): 564,757 ±10,127 → 554,630 to 574,884.
    """
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(INTERVAL_KINDS)}, not {kind!r}")
    v, m = _num(x, "x"), _moe(moe)
    if v is None or m is None:
        return None
    low, high = v - m, v + m
    if kind in ("count", "percent"):
        low = max(low, 0.0)
    if kind == "percent":
        high = min(high, 100.0)
    return low, high


# --------------------------------------------------------------------------------------------------------------
# significance


def z_score(x1: Number | None, moe1: Number | None, x2: Number | None, moe2: Number | None) -> float | None:
    """``Z = (X1 − X2) / sqrt(SE1² + SE2²)`` with ``SE = MOE / 1.645`` ([H20] ch. 7 formula 3, pp. 56–57).

    None when an input is None, or when both MOEs are 0 (Z is undefined: two exact values, see
    :func:`significant`).  Example (§2.7): Florida 12.6 ±0.2 vs Arizona 10.5 ±0.3 → Z 9.581.
    """
    a, b = _num(x1, "x1"), _num(x2, "x2")
    s1, s2 = se(moe1), se(moe2)
    if a is None or b is None or s1 is None or s2 is None:
        return None
    denominator = math.hypot(s1, s2)
    if denominator == 0:
        return None
    return (a - b) / denominator


def _verdict(
    difference: float | None, moe_of_difference: float | None, level: float
) -> tuple[float | None, bool | None]:
    """(Z, significant) for a difference and its 90% MOE: |Z| strictly greater than the critical value."""
    critical = _z(level)
    if difference is None or moe_of_difference is None:
        return None, None
    if moe_of_difference == 0:
        # both sides exact (census counts, controlled estimates: SE = 0, [ST] note 3): any difference is real
        return None, difference != 0
    z = difference / (moe_of_difference / Z90)
    return z, abs(z) > critical


def significant(
    x1: Number | None, moe1: Number | None, x2: Number | None, moe2: Number | None, level: float = 0.9
) -> bool | None:
    """Whether X1 and X2 differ significantly: ``|Z| > Z_level``, **strictly** greater ([H20] ch. 7 step 7;
    [WE] p. 9), with Z_level 1.645 (90%), 1.960 (95%) or 2.576 (99%).

    The SEs always come from the published 90% MOEs (SE = MOE / 1.645) whatever the level (acs-statistics.md
    §1.8).  None when an input is None: significance cannot be assessed.  When both MOEs are 0 the values are
    exact and any non-zero difference is significant.  Do not judge by overlapping intervals ([WE] p. 10).
    """
    a, b = _num(x1, "x1"), _num(x2, "x2")
    diff = None if a is None or b is None else a - b
    return _verdict(diff, moe_difference(moe1, moe2), level)[1]


@dataclass(frozen=True)
class Significance:
    """One tested difference ``a − b``: what ``ask --json`` lists under ``"significance"``.

    ``moe`` is the 90% MOE of the difference (``sqrt(MOE_a² + MOE_b²)``, or the change's own MOE), ``z`` the
    test statistic (None when it cannot be computed), ``significant`` True / False, or **None when significance
    cannot be assessed** (a margin or a value is missing).  ``level`` is the confidence level of the test.
    """

    a: str
    b: str
    difference: float | None
    moe: float | None
    z: float | None
    significant: bool | None
    level: float = 0.9

    def to_dict(self) -> dict[str, Any]:
        """``{"a", "b", "difference", "moe", "z", "significant", "level"}``, ready for JSON.

        Numbers are written with 12 significant digits, which drops binary floating-point noise (12.6 − 10.5 is
        2.0999999999999996 in a float; 2.1 here) and keeps far more precision than any ACS estimate has.
        """
        return {
            "a": self.a,
            "b": self.b,
            "difference": _clean(self.difference),
            "moe": _clean(self.moe),
            "z": _clean(self.z),
            "significant": self.significant,
            "level": self.level,
        }


def _clean(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.12g}")


def compare(
    a: str, x1: Number | None, moe1: Number | None, b: str, x2: Number | None, moe2: Number | None, level: float = 0.9
) -> Significance:
    """Test ``a`` (value ``x1`` ±``moe1``) against ``b`` (``x2`` ±``moe2``): the :class:`Significance` of
    X1 − X2."""
    v1, v2 = _num(x1, "x1"), _num(x2, "x2")
    diff = None if v1 is None or v2 is None else v1 - v2
    moe = moe_difference(moe1, moe2)
    z, verdict = _verdict(diff, moe, level)
    return Significance(a, b, diff, moe, z, verdict, float(level))


def assess_change(
    a: str, b: str, change: Number | None, change_moe: Number | None, level: float = 0.9
) -> Significance:
    """Test a change already computed with its MOE (``a`` the later period, ``b`` the earlier): significant when
    ``|change / SE(change)| > Z_level``, SE = MOE / 1.645 (the test of [H20] ch. 7 formula 3 with the difference's
    MOE from ch. 8 formula 1)."""
    diff = _num(change, "change")
    moe = _moe(change_moe, "change_moe")
    z, verdict = _verdict(diff, moe, level)
    return Significance(a, b, diff, moe, z, verdict, float(level))


__all__ = [
    "INTERVAL_KINDS",
    "RELIABILITY_CONVENTION",
    "Significance",
    "Z90",
    "Z_BY_LEVEL",
    "assess_change",
    "compare",
    "confidence_interval",
    "cv",
    "moe_at_level",
    "moe_difference",
    "moe_pct_change",
    "moe_product",
    "moe_proportion",
    "moe_ratio",
    "moe_sum",
    "pct_change",
    "reliability",
    "reliability_label",
    "se",
    "significant",
    "z_score",
]
