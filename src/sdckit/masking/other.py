"""Rounding, resampling and multiplicative noise for numeric attributes.

* Rounding to a base (Hundepool et al., *Statistical Disclosure Control*, Wiley 2012,
  sec. 3.4.5; mu-Argus "rounding").
* Resampling (Heer 1993, "A bootstrap procedure to preserve statistical confidentiality in
  contingency tables", Proc. Int. Seminar on Statistical Confidentiality, Eurostat; described
  for microdata by Domingo-Ferrer & Mateo-Sanz 1999 and Hundepool et al. 2012, sec. 3.4.6).
* Multiplicative noise ``x * (1 + e)`` (Kim & Winkler 2003, "Multiplicative noise for masking
  continuous data", US Census Bureau RRS2003/01, first approach: noise with mean one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from sdckit.core.spec import (
    ColumnList,
)
from sdckit.errors import ParameterError
from sdckit.masking.base import (
    MaskResult,
    accepts_series,
    check_columns,
    integer_like,
    numeric_matrix,
)
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    Count,
    MaskingMethod,
    Positive,
    Rng,
)
from sdckit.masking.stats import ColumnStats, PandasStats


def _positive(value: float, name: str, method: str, example: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{method}: {name}={value!r} is not a number; give e.g. {example}"
        ) from None
    if not (np.isfinite(v) and v > 0):
        raise ParameterError(
            f"{method}: {name}={value!r} must be a finite number > 0, e.g. {example}"
        )
    return v


@accepts_series
def rounding(data: pd.DataFrame, columns: Sequence[str] | str | None, base: float) -> MaskResult:
    """Round every value to the nearest multiple of ``base`` (halves round up).

    ``y = base * floor(x / base + 1/2)`` -- deterministic rounding as in mu-Argus
    (Hundepool et al. 2012, sec. 3.4.5); ties go towards +infinity so that, e.g., with base 5
    the value 12.5 becomes 15 and -12.5 becomes -10. Integer columns stay integer when
    ``base`` is an integer. Missing values stay missing.
    """
    return rounding_release(data, rounding_plan(PandasStats(data), columns, base), None)


@dataclass(frozen=True)
class RoundingPlan:
    """The columns and base of :func:`round_to_base` (deterministic: no statistic of the
    data)."""

    columns: list[str]
    base: float
    random: ClassVar[bool] = False

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`rounding_release`."""
        return rounding_release(data, self, rng)

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """Integer columns stay integer under a whole base; the others become doubles."""
        whole = float(self.base).is_integer()
        return {c: "long" if kinds[c] == "long" and whole else "double" for c in self.columns}

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record, with the number of values changed per column."""
        params = {"columns": self.columns, "base": self.base}
        details = {"n_changed": dict(zip(self.columns, map(int, changed), strict=True))}
        return [MaskResult(pd.DataFrame(), "round_to_base", params, details).record()]


def rounding_plan(
    stats: ColumnStats, columns: Sequence[str] | str | None, base: float
) -> RoundingPlan:
    """The plan of :func:`round_to_base`: the base checked, the columns numeric and finite."""
    cols = stats.check_columns(columns)
    b = _positive(base, "base", "round_to_base", "base=10")
    stats.check_numeric(cols, "round_to_base")
    return RoundingPlan(cols, b)


def rounding_release(
    data: pd.DataFrame, plan: RoundingPlan, rng: np.random.Generator | None = None
) -> MaskResult:
    """Round the columns of ``data`` (all records or one block) by the plan; ``rng`` unused."""
    cols, b = plan.columns, plan.base
    x = numeric_matrix(data, cols, "round_to_base")
    # q is rounded to 9 decimals first so that representation error (0.15 / 0.1 =
    # 1.4999999999999998) does not turn a tie into a round-down.
    k = np.floor(np.round(x / b, 9) + 0.5)
    inv = 1.0 / b
    # for decimal bases (0.1, 0.25, ...) divide by the integer 1/base: 3 / 10 == 0.3 exactly
    y = k / round(inv) if b < 1 and abs(inv - round(inv)) < 1e-9 else k * b
    out = data.copy()
    changed = {}
    for j, c in enumerate(cols):
        col = y[:, j]
        changed[c] = int(np.sum((col != x[:, j]) & ~np.isnan(x[:, j])))
        out[c] = integer_like(data[c], col) if float(b).is_integer() else col
    return MaskResult(out, "round_to_base", {"columns": cols, "base": b}, {"n_changed": changed})


@accepts_series
def resampling(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    t: int = 10,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Heer's (1993) resampling, column by column.

    For each column with ``n`` non-missing values: draw ``t`` bootstrap samples of size ``n``
    (with replacement) from its values, sort each sample, and average the ``j``-th smallest
    values across the ``t`` samples; the record whose value has rank ``j`` in the original
    column (ties by row order) receives that average. Means are preserved in expectation and
    the rank order of the records is kept. Missing values stay missing.
    """
    cols = check_columns(data, columns)
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
        raise ParameterError(
            f"resample: t={t!r} must be a positive integer (the number of "
            "bootstrap samples), e.g. t=10"
        )
    x = numeric_matrix(data, cols, "resample")
    rng = np.random.default_rng(seed)
    out = data.copy()
    for j, c in enumerate(cols):
        col = x[:, j]
        ok = np.flatnonzero(~np.isnan(col))
        vals = col[ok]
        n = len(vals)
        res = col.copy()
        if n:
            acc = np.zeros(n)
            for _ in range(int(t)):  # loop over samples, not rows
                acc += np.sort(vals[rng.integers(0, n, n)])
            order = np.argsort(vals, kind="stable")
            res[ok[order]] = acc / t
        out[c] = res
    return MaskResult(out, "resample", {"columns": cols, "t": int(t)}, {})


@accepts_series
def multiplicative_noise(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    sd: float = 0.1,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Multiply every value by ``1 + e`` with ``e ~ N(0, sd^2)`` drawn independently.

    Kim & Winkler (2003), first approach (noise with mean 1 and small variance): means are
    preserved in expectation, ``E[y^2] = (1 + sd^2) E[x^2]``. Missing values stay missing.
    """
    plan = multiplicative_plan(PandasStats(data), columns, sd)
    return multiplicative_release(data, plan, np.random.default_rng(seed))


@dataclass(frozen=True)
class MultiplicativePlan:
    """The columns and noise standard deviation of :func:`multiplicative_noise` (no
    statistic of the data)."""

    columns: list[str]
    sd: float
    random: ClassVar[bool] = True

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`multiplicative_release`."""
        return multiplicative_release(data, self, np.random.default_rng(rng))

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """Noisy values are doubles."""
        return dict.fromkeys(self.columns, "double")

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record (the parameters)."""
        params = {"columns": self.columns, "sd": self.sd}
        return [MaskResult(pd.DataFrame(), "multiplicative_noise", params, {}).record()]


def multiplicative_plan(
    stats: ColumnStats, columns: Sequence[str] | str | None, sd: float
) -> MultiplicativePlan:
    """The plan of :func:`multiplicative_noise`: ``sd`` checked, the columns numeric."""
    cols = stats.check_columns(columns)
    s = _positive(sd, "sd", "multiplicative_noise", "sd=0.1")
    stats.check_numeric(cols, "multiplicative_noise")
    return MultiplicativePlan(cols, s)


def multiplicative_release(
    data: pd.DataFrame, plan: MultiplicativePlan, rng: np.random.Generator
) -> MaskResult:
    """Multiply the columns of ``data`` (all records or one block) by ``1 + e``: one standard
    normal draw per value, row by row."""
    cols, s = plan.columns, plan.sd
    x = numeric_matrix(data, cols, "multiplicative_noise")
    y = x * (1.0 + s * rng.standard_normal(x.shape))
    out = data.copy()
    for j, c in enumerate(cols):
        out[c] = y[:, j]
    return MaskResult(out, "multiplicative_noise", {"columns": cols, "sd": s}, {})


# -- the method as a job-file step -----------------------------------------------------------------
class MultiplicativeNoise(MaskingMethod):
    """Multiplicative noise ``x (1 + e)`` (:func:`sdckit.masking.other.multiplicative_noise`).

    Parameters
    ----------
    columns : list of str
        The numeric columns to mask.
    sd : float, default 0.1
        Standard deviation of the noise ``e`` (> 0).

    References
    ----------
    Kim, J. J. & Winkler, W. E. (2003). Multiplicative noise for masking continuous data. US
    Census Bureau, Research Report RRS2003/01.
    """

    spec_name: ClassVar[str] = "multiplicative_noise"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    columns: ColumnList
    sd: Positive = 0.1

    def plan(self, stats: ColumnStats, seed: int | None = None) -> MultiplicativePlan:
        """:func:`multiplicative_plan`."""
        return multiplicative_plan(stats, self.columns, self.sd)

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Multiply by the noise (see :meth:`MaskingMethod.apply`)."""
        return [multiplicative_noise(data, self.columns, self.sd, seed=rng)]


class Rounding(MaskingMethod):
    """Rounding of numeric columns to a base (:func:`sdckit.masking.other.rounding`).

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    base : float
        The rounding base (> 0).

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley, sec. 3.4.5.
    """

    spec_name: ClassVar[str] = "rounding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    base: Positive

    def plan(self, stats: ColumnStats, seed: int | None = None) -> RoundingPlan:
        """:func:`rounding_plan`."""
        return rounding_plan(stats, self.columns, self.base)

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Round (see :meth:`MaskingMethod.apply`; deterministic)."""
        return [rounding(data, self.columns, self.base)]


class Resampling(MaskingMethod):
    """Resampling of numeric columns (:func:`sdckit.masking.other.resampling`).

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    t : int, default 10
        Number of bootstrap samples averaged (>= 1).

    References
    ----------
    Heer, G. R. (1993). A bootstrap procedure to preserve statistical confidentiality in
    contingency tables. Proc. Int. Seminar on Statistical Confidentiality, Eurostat.
    """

    spec_name: ClassVar[str] = "resampling"
    spark_refusal: ClassVar[str | None] = "averages bootstrap samples of whole columns"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    t: Count = 10

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Resample (see :meth:`MaskingMethod.apply`)."""
        return [resampling(data, self.columns, self.t, seed=rng)]


def __getattr__(name: str) -> Any:
    """The former names of this module's functions (deprecated; :data:`sdckit.masking.RENAMED`)."""
    from sdckit.masking import renamed_attribute

    return renamed_attribute(__name__, name)
