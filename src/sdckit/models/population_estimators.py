"""Population uniqueness: how many records of the population are unique on the quasi-identifiers.

A released file is usually a *sample* of a larger population. A record that is unique in the
sample (a class of size 1) need not be unique in the population; the models below estimate
the number of **population uniques** from the sample's class-size distribution and the sampling
fraction ``f = n / N`` (``n`` records in the sample, ``N`` in the population). They are the four
estimates that ARX reports (``org.deidentifier.arx.risk.RiskModelPopulationUniqueness``):

* :func:`pitman` -- Pitman's sampling formula, parameters by maximum likelihood (Hoshino 2001);
* :func:`zayatz` -- Zayatz's (1991) equivalence-class model (Bayes' rule + hypergeometric);
* :func:`snb` -- the slide negative binomial model (Chen & Keller-McNulty 1998);
* :func:`dankar` -- the decision rule of Dankar, El Emam, Neisa & Roffey (2012), which picks one
  of the three from the sampling fraction and the estimates themselves.

(They serve the risk analysis, :mod:`sdckit.risk.analyze`, and the ``population_uniqueness``
privacy model, :class:`sdckit.models.risk_thresholds.PopulationUniquenessThreshold`; the
module is in :mod:`sdckit.models` because the risk package imports the models package.)

**What is returned.** Every function returns, as ARX's ``getFractionOfUniqueTuples(model)``
does, the *estimated number of population uniques divided by the population size*
``N = n / f``: the share of the population's records that are unique in the population,
a value in ``[0, 1]``. (Multiply by ``N`` for the count ARX's ``getNumUniqueTuples`` gives.)

**Conventions shared by all models** (each follows ARX unless noted):

* no sample uniques (``c1 == 0``) -> ``0.0`` for every model (ARX: "no population uniques");
* ``f == 1`` (the sample *is* the population) -> exactly the sample-unique share ``c1 / n``
  (ARX's Zayatz and SNB reach this value by themselves; its Pitman estimate does not, so this
  case is set by definition here);
* a model that cannot be solved (Newton does not converge, no doubletons for SNB, every class
  a singleton for Pitman, an estimate outside ``[0, N]``) -> ``nan``. ARX reports ``0`` there
  and flags the estimate as "not available"; NaN keeps the two cases apart. Dankar's rule
  treats NaN (and, as ARX, an exact 0) as "invalid" and falls back to Zayatz.

**Where this differs from ARX 3.x** (checked by running ARX's estimator code):

* SNB: ARX's code has two slips against Chen & Keller-McNulty / Haas et al. -- the Shlosser
  denominator subtracts 1 per class size instead of per class, and the doubleton equation
  multiplies by ``(1 - x)^(a + 2)`` instead of dividing (ARX's own Jacobian divides). With
  them the SNB equations often have no root (Adult: none for ``f <= 0.5``), so ARX shows no
  SNB estimate and its Dankar rule falls back to Zayatz. The paper's equations are the
  default; ``arx_compat=True`` evaluates ARX's.
* Newton-Raphson: iterates stay where the model is defined and restarts come from a fixed
  list instead of random points, so results are deterministic and spurious roots outside the
  parameter space (which ARX's solver sometimes returns) are never reported. Convergence is
  relative (1e-10) rather than ARX's absolute 1e-6 on the equations; where both find the same
  root the shares agree to about 1e-6.

Notation: ``c_i`` = number of sample classes of size ``i`` (``c1``: sample uniques, ``c2``:
doubletons), ``u = sum c_i`` classes, ``n = sum i c_i`` records.

References: Zayatz, L. (1991) Estimation of the percent of unique population elements on a
microdata file using the sample, US Census Bureau SRD Report 91/08; Chen, G. & Keller-McNulty,
S. (1998) Estimation of identification disclosure risk in microdata, J. Official Statistics
14(1); Hoshino, N. (2001) Applying Pitman's sampling formula to microdata disclosure risk
assessment, J. Official Statistics 17(4); Haas, P., Naughton, J., Seshadri, S. & Stokes, L.
(1995) Sampling-based estimation of the number of distinct values of an attribute, VLDB;
Dankar, F. K., El Emam, K., Neisa, A. & Roffey, T. (2012) Estimating the re-identification
risk of clinical data sets, BMC Medical Informatics and Decision Making 12:66.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from sdckit.errors import DataError, preview

__all__ = [
    "class_size_distribution",
    "pitman",
    "zayatz",
    "snb",
    "dankar",
    "population_uniqueness",
    "population_unique_share",
    "DANKAR_PITMAN_LIMIT",
    "ESTIMATORS",
]

#: The estimators by name, as ARX's ``PopulationUniquenessModel``.
ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")

#: Dankar et al. (2012) / ARX: Pitman's model is used for sampling fractions up to this value.
DANKAR_PITMAN_LIMIT = 0.1

#: Newton iterations per starting point (ARX allows 1000 per try).
_MAX_ITER = 200
#: A start is abandoned when the squared residual has not halved within this many iterations.
_STALL_ITER = 20
#: Convergence: every equation's residual relative to the size of its terms.
_TOL = 1e-10
#: A residual this small counts as converged when rounding stops further descent.
_TOL_FLOOR = 1e-8

# Deterministic restarts (ARX restarts from random points ``Math.random() * start``).
_PITMAN_ALPHA_GRID = (0.5, 0.1, 0.9, -0.5, -2.0)
_SNB_A_GRID = (1.0, 2.0, 0.5, 5.0)
_SNB_B_GRID = (0.5, 0.1, 0.01)


# ----------------------------------------------------------------------------------------
# Input handling
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Histogram:
    """The class-size distribution of the sample and its summary counts."""

    sizes: np.ndarray  # distinct class sizes, ascending (float64)
    counts: np.ndarray  # number of classes of each size (float64)
    n: int  # records
    u: int  # classes
    c1: int  # classes of size 1
    c2: int  # classes of size 2


def class_size_distribution(class_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distribution of class sizes: the distinct sizes ``i`` (ascending) and ``c_i``.

    ``class_sizes`` holds the size ``f_j >= 1`` of every equivalence class of the sample
    (e.g. ``df.groupby(qis).size()``). Returns ``(sizes, counts)`` as ``int64`` arrays, where
    ``counts[k]`` classes have ``sizes[k]`` records -- ARX's ``RiskModelHistogram``.
    Raises :class:`~sdckit.errors.DataError` for an empty, non-integral or non-positive input.
    """
    arr = _as_class_sizes(class_sizes)
    sizes, counts = np.unique(arr, return_counts=True)
    return sizes.astype(np.int64), counts.astype(np.int64)


def _as_class_sizes(class_sizes) -> np.ndarray:
    try:
        arr = np.asarray(class_sizes)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise DataError(f"class_sizes: cannot read the class sizes ({exc})") from exc
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise DataError(
            f"class_sizes: expected integer class sizes, got dtype {arr.dtype} "
            f"(first values: {preview(arr.ravel())}); pass the size of every equivalence class"
        )
    arr = arr.ravel()
    if arr.size == 0:
        raise DataError("class_sizes: no equivalence classes given; the sample must not be empty")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise DataError(
                f"class_sizes: class sizes must be whole numbers; found {preview(arr[bad])}"
            )
    bad = arr < 1
    if bad.any():
        raise DataError(
            f"class_sizes: every class must hold at least one record; found sizes "
            f"{preview(arr[bad])} (drop empty classes before estimating population uniqueness)"
        )
    return arr.astype(np.int64)


def _histogram(class_sizes, classes=None) -> _Histogram:
    if classes is None:
        sizes, counts = class_size_distribution(class_sizes)
    else:  # already a histogram: distinct sizes and their classes, merged if repeated
        arr = _as_class_sizes(class_sizes)
        sizes, inverse = np.unique(arr, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=np.asarray(classes, dtype=np.float64))
        sizes, counts = sizes.astype(np.int64), counts.astype(np.int64)
    c1 = int(counts[0]) if sizes[0] == 1 else 0
    pos2 = np.searchsorted(sizes, 2)
    c2 = int(counts[pos2]) if pos2 < sizes.size and sizes[pos2] == 2 else 0
    return _Histogram(
        sizes=sizes.astype(np.float64),
        counts=counts.astype(np.float64),
        n=int(np.dot(sizes, counts)),
        u=int(counts.sum()),
        c1=c1,
        c2=c2,
    )


def _check_fraction(sampling_fraction) -> float:
    if isinstance(sampling_fraction, bool | np.bool_):
        raise DataError(
            f"--sampling-fraction: expected a number in (0, 1], got {sampling_fraction!r}"
        )
    try:
        f = float(sampling_fraction)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"--sampling-fraction: expected a number in (0, 1], got {sampling_fraction!r}"
        ) from exc
    if not (math.isfinite(f) and 0.0 < f <= 1.0):
        raise DataError(
            f"--sampling-fraction: must satisfy 0 < F <= 1 (the sample's share of the "
            f"population, e.g. 0.01 for a 1% sample), got {sampling_fraction!r}"
        )
    return f


# ----------------------------------------------------------------------------------------
# Damped Newton-Raphson in two unknowns
# ----------------------------------------------------------------------------------------

_System = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _newton2d(
    system: _System, start: np.ndarray, in_domain: Callable[[np.ndarray], bool]
) -> np.ndarray | None:
    """Solve ``F(x) = 0`` for ``x`` in R^2 by Newton-Raphson with step halving.

    ``system(x)`` returns ``(F, J, scale)``: the residuals, their Jacobian and a positive size
    per equation; convergence is ``max |F / scale| <= _TOL``. Each full Newton step
    ``x - J^-1 F`` (the update ARX's solver makes) is halved until the new point lies in the
    domain and reduces ``|F / scale|^2`` (Armijo); this keeps the iteration inside the
    parameter space where ARX instead abandons the try. A start is given up when the squared
    residual has not halved within ``_STALL_ITER`` iterations. Returns the root or ``None``.
    """
    x = np.asarray(start, dtype=np.float64)
    if not in_domain(x):
        return None
    try:
        F, J, scale = system(x)
    except (FloatingPointError, OverflowError, ValueError, ZeroDivisionError):
        return None
    checkpoint = math.inf
    for iteration in range(_MAX_ITER):
        if not (np.all(np.isfinite(F)) and np.all(np.isfinite(J)) and np.all(scale > 0)):
            return None
        r = F / scale
        merit = float(r @ r)
        if np.max(np.abs(r)) <= _TOL:
            return x
        if iteration % _STALL_ITER == 0:
            if merit > 0.5 * checkpoint:
                return None  # stalled: no root within reach of this start
            checkpoint = merit
        det = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
        if not np.isfinite(det) or det == 0.0:
            return None
        step = np.array(
            [
                (J[1, 1] * F[0] - J[0, 1] * F[1]) / det,
                (J[0, 0] * F[1] - J[1, 0] * F[0]) / det,
            ]
        )
        lam = 1.0
        accepted = False
        for _ in range(40):
            xn = x - lam * step
            if in_domain(xn):
                try:
                    Fn, Jn, sn = system(xn)
                except (FloatingPointError, OverflowError, ValueError, ZeroDivisionError):
                    Fn = np.array([np.nan, np.nan])
                if np.all(np.isfinite(Fn)):
                    rn = Fn / scale
                    if float(rn @ rn) <= (1.0 - 1e-4 * lam) * merit:
                        x, F, J, scale = xn, Fn, Jn, sn
                        accepted = True
                        break
            lam *= 0.5
        if not accepted:
            # No descent left: rounding floor reached (converged) or a dead end.
            return x if np.max(np.abs(r)) <= _TOL_FLOOR else None
    return None


# ----------------------------------------------------------------------------------------
# Pitman (Hoshino 2001)
# ----------------------------------------------------------------------------------------


def _pitman_start(h: _Histogram) -> np.ndarray:
    """Hoshino's (2001) moment-type starting values ``(theta, alpha)``, as ARX uses them.

    With ``c = c1 (c1 - 1) / c2`` (``c2`` taken as 1 when there are no doubletons)::

        theta = (n u c - c1 (n - 1) (2 u + c)) / (2 c1 u + c1 c - n c)
        alpha = (theta (c1 - n) + (n - 1) c1) / (n u)
    """
    n, u, c1 = np.float64(h.n), np.float64(h.u), np.float64(h.c1)
    c2 = np.float64(h.c2 if h.c2 != 0 else 1)  # numpy scalars: 0/0 gives nan, not an exception
    c = c1 * (c1 - 1.0) / c2
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / (2.0 * c1 * u + c1 * c - n * c)
        alpha = (theta * (c1 - n) + (n - 1.0) * c1) / (n * u)
    return np.array([theta, alpha], dtype=np.float64)


def _pitman_system(h: _Histogram) -> _System:
    """Score equations of Pitman's sampling formula and their Jacobian (Hoshino 2001).

    The log-likelihood of a sample partition with ``u`` classes of sizes ``f_j`` is::

        log L = sum_{i=1}^{u-1} log(theta + i alpha) - sum_{i=1}^{n-1} log(theta + i)
                + sum_j sum_{k=1}^{f_j - 1} log(k - alpha)

    so the ML equations are ``F1 = A - D = 0`` and ``F2 = B - E = 0`` with
    ``A = sum_{i<u} 1/(theta + i alpha)``, ``B = sum_{i<u} i/(theta + i alpha)``,
    ``D = sum_{i<n} 1/(theta + i)``, ``E = sum_j sum_{k<f_j} 1/(k - alpha)`` (ARX
    ``ModelPitman``). The sums are evaluated through digamma/trigamma differences
    (``sum_{i=1}^{m-1} 1/(x + i) = psi(x + m) - psi(x + 1)``), as ARX's "closed" variant, and
    ``B`` with its derivatives from ``i/(theta + i alpha) = (1 - theta/(theta + i alpha))/alpha``;
    where that identity cancels (``(u - 1)|alpha| << |theta|``) the ``u``-sums are added up
    directly, as ARX's "iterative" variant.
    """
    n, u = float(h.n), float(h.u)
    big = h.sizes > 1
    sizes, counts = h.sizes[big], h.counts[big]

    def u_sums(theta: float, alpha: float):
        if alpha != 0.0 and (u - 1.0) * abs(alpha) >= 1e-2 * abs(theta):
            if alpha > 0.0:
                z = theta / alpha
                A = (special.digamma(z + u) - special.digamma(z + 1.0)) / alpha
                A2 = (special.polygamma(1, z + 1.0) - special.polygamma(1, z + u)) / alpha**2
            else:  # theta - i beta = beta (w - i) with w > u - 1: positive arguments only
                beta = -alpha
                w = theta / beta
                A = (special.digamma(w) - special.digamma(w - u + 1.0)) / beta
                A2 = (special.polygamma(1, w - u + 1.0) - special.polygamma(1, w)) / beta**2
            B = ((u - 1.0) - theta * A) / alpha
            B2 = (A - theta * A2) / alpha
            C2 = (B - theta * B2) / alpha
            return A, A2, B, B2, C2
        sums = np.zeros(5)
        for lo in range(1, int(u), 1 << 20):  # chunks bound the memory for huge u
            i = np.arange(float(lo), min(float(lo + (1 << 20)), u))
            inv = 1.0 / (theta + i * alpha)
            inv2 = inv * inv
            sums += [inv.sum(), inv2.sum(), (i * inv).sum(), (i * inv2).sum(), (i * i * inv2).sum()]
        return tuple(sums)

    def system(x: np.ndarray):
        theta, alpha = float(x[0]), float(x[1])
        A, A2, B, B2, C2 = u_sums(theta, alpha)
        D = special.digamma(theta + n) - special.digamma(theta + 1.0)
        D2 = special.polygamma(1, theta + 1.0) - special.polygamma(1, theta + n)
        E = float(np.dot(counts, special.digamma(sizes - alpha) - special.digamma(1.0 - alpha)))
        E2 = float(
            np.dot(counts, special.polygamma(1, 1.0 - alpha) - special.polygamma(1, sizes - alpha))
        )
        F = np.array([A - D, B - E])
        J = np.array([[D2 - A2, -B2], [-B2, -C2 - E2]])
        scale = np.array([max(A, D), max(B, E)])
        return F, J, scale

    return system


def _pitman_domain(u: int) -> Callable[[np.ndarray], bool]:
    """Where the likelihood is defined: ``alpha < 1`` and ``theta + i alpha > 0``, ``i < u``."""

    def in_domain(x: np.ndarray) -> bool:
        theta, alpha = float(x[0]), float(x[1])
        return (
            math.isfinite(theta)
            and math.isfinite(alpha)
            and alpha < 1.0
            and theta + alpha > 0.0
            and theta + (u - 1) * alpha > 0.0
        )

    return in_domain


def _pitman_parameters(h: _Histogram) -> tuple[float, float] | None:
    """ML estimates ``(theta, alpha)`` of Pitman's model, or ``None`` when not found.

    Newton-Raphson starts from Hoshino's moment values (as ARX) and, if that fails, from a
    fixed list of points (ARX: random restarts). The search covers the whole region where the
    likelihood is defined (``alpha < 1``, ``theta + i alpha > 0`` for ``i < u``): like ARX, a
    root with ``alpha <= 0`` (fewer singletons than a Poisson-Dirichlet partition would show)
    is accepted. ARX additionally abandons iterates with ``theta < 0``.
    """
    if h.c1 == h.u or h.u < 2:
        return None  # all singletons (E = 0 < B) or one class: the ML equations have no root
    system = _pitman_system(h)
    in_domain = _pitman_domain(h.u)
    starts = [_pitman_start(h)]
    for alpha in _PITMAN_ALPHA_GRID:
        if alpha > 0:
            starts += [np.array([t, alpha]) for t in (h.u / 10.0, float(h.u), 10.0)]
        else:
            starts += [np.array([t * (h.u - 1) * -alpha, alpha]) for t in (1.5, 4.0)]
    for start in starts:
        root = _newton2d(system, start, in_domain)
        if root is not None:
            return float(root[0]), float(root[1])
    return None


def _pitman_share(theta: float, alpha: float, population: float) -> float:
    """Hoshino's (2001) estimate of the population uniques' share under Pitman's model.

    ``E[S_1] = Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha`` population uniques,
    divided by ``N``. An estimate outside ``[0, N]`` is invalid (NaN), as in ARX.
    """
    log_share = (
        special.gammaln(theta + 1.0)
        - special.gammaln(theta + alpha)
        + (alpha - 1.0) * math.log(population)
    )
    share = math.exp(log_share) if log_share < 700 else math.inf
    return share if 0.0 <= share <= 1.0 else math.nan


def pitman(class_sizes: np.ndarray, sampling_fraction: float) -> float:
    """Share of population uniques by Pitman's model (Hoshino 2001), as ARX computes it.

    Pitman's sampling formula with parameters ``theta`` and ``alpha`` describes the partition
    of the sample into classes; ``(theta, alpha)`` are fitted to the sample partition by
    maximum likelihood (Newton-Raphson on the score equations, see ``_pitman_system``; ARX:
    ``ModelPitman``). The number of population uniques is then estimated as
    ``Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha`` with ``N = n / f``.

    Returns that number divided by ``N`` (ARX ``getFractionOfUniqueTuplesPitman``), ``0.0``
    without sample uniques, ``c1 / n`` at ``f == 1``, and ``nan`` when the ML equations have
    no root where the likelihood is defined (``alpha < 1``, ``theta + i alpha > 0`` for
    ``i < u``; e.g. every class is a singleton) or the estimate falls outside ``[0, N]``
    (ARX reports 0 / "not available" there). Unlike ARX's solver, iterates never leave that
    region, so spurious roots of the digamma forms outside it (which ARX can return) are
    never reported.
    """
    return _pitman_of(_histogram(class_sizes), _check_fraction(sampling_fraction))


def _pitman_of(h: _Histogram, f: float) -> float:
    if h.c1 == 0:
        return 0.0
    if f == 1.0:
        return h.c1 / h.n
    params = _pitman_parameters(h)
    if params is None:
        return math.nan
    return _pitman_share(params[0], params[1], h.n / f)


# ----------------------------------------------------------------------------------------
# Zayatz (1991)
# ----------------------------------------------------------------------------------------


def _integral_population(n: int, f: float) -> float:
    """Population size for the hypergeometric model: ``N = n / f`` truncated to an integer.

    ARX casts ``N`` to ``int``; the relative nudge keeps e.g. ``7 / 0.07`` (which is
    ``99.99999999999999`` in floating point) at 100.
    """
    population = n / f
    if population >= 2.0**52:  # no fractional part left to truncate (or infinite)
        return population
    return float(math.floor(population * (1.0 + 1e-12)))


def _hypergeometric_one_ratio(max_size: int, n: float, population: float) -> np.ndarray:
    """``r_i = P(f = 1 | F = i) / P(f = 1 | F = 1)`` for ``i = 1..max_size``.

    ``P(f = 1 | F = i)`` is the hypergeometric probability that a population class of size
    ``i`` leaves exactly one record in a sample of ``n`` drawn without replacement from ``N``:
    ``i C(N - i, n - 1) / C(N, n)``. Divided by ``P(f = 1 | F = 1) = n / N`` it is the product
    ``r_i = i * prod_{j=1}^{i-1} (1 - (n - 1) / (N - j))``, evaluated in logs (exact for an
    integral ``N``; no binomial coefficients of size ``N`` are formed).
    """
    r = np.zeros(max_size, dtype=np.float64)
    r[0] = 1.0
    if max_size > 1:
        j = np.arange(1.0, max_size)
        q = (n - 1.0) / (population - j)
        with np.errstate(divide="ignore"):
            terms = np.where(q < 1.0, np.log1p(-np.minimum(q, 1.0)), -np.inf)
        logs = np.log(np.arange(2.0, max_size + 1.0)) + np.cumsum(terms)
        r[1:] = np.exp(logs)
    return r


def zayatz(class_sizes: np.ndarray, sampling_fraction: float) -> float:
    """Share of population uniques by Zayatz's (1991) equivalence-class model (ARX ``ModelZayatz``).

    Bayes' rule gives the probability that a sample unique is a population unique::

        P(F = 1 | f = 1) = p_1 P(f = 1 | F = 1) / sum_i p_i P(f = 1 | F = i)

    where the share ``p_i`` of population classes of size ``i`` is estimated by the sample's
    ``c_i / u`` and ``P(f = 1 | F = i)`` is hypergeometric (population ``N = n / f`` truncated
    to an integer as in ARX, ``i`` "successes", ``n`` draws). The number of population uniques is
    ``c1 P(F = 1 | f = 1) / f``; divided by ``N`` the returned share is
    ``c1 P(F = 1 | f = 1) / n``. ``0.0`` without sample uniques; ``c1 / n`` at ``f == 1``.
    """
    return _zayatz_of(_histogram(class_sizes), _check_fraction(sampling_fraction))


def _zayatz_of(h: _Histogram, f: float) -> float:
    if h.c1 == 0:
        return 0.0
    population = _integral_population(h.n, f)
    r = _hypergeometric_one_ratio(int(h.sizes[-1]), float(h.n), population)
    conditional = h.c1 / float(np.dot(h.counts, r[h.sizes.astype(np.int64) - 1]))
    return h.c1 * conditional / h.n


# ----------------------------------------------------------------------------------------
# SNB (Chen & Keller-McNulty 1998)
# ----------------------------------------------------------------------------------------


def _shlosser_classes(h: _Histogram, f: float, *, arx_compat: bool = False) -> float:
    """Estimated number ``K`` of non-empty population classes (Shlosser-type estimator).

    The estimator of Haas, Naughton, Seshadri & Stokes (1995) built on Shlosser's, as ARX uses
    it for the SNB model (``q = f``)::

        K = u + c1 * [sum_i i q^2 (1-q^2)^(i-1) c_i / sum_i (1-q)^i ((1+q)^i - 1) c_i]
                   * [sum_i (1-q)^i c_i / sum_i i q (1-q)^(i-1) c_i]^2

    ``arx_compat=True`` reproduces ARX 3.x, whose code evaluates the second denominator as
    ``sum_i ((1-q)^i (1+q)^i c_i - 1)`` (an operator-precedence slip; ARX's earlier
    ``SNBModel`` had the formula above).
    """
    i, c = h.sizes, h.counts
    q = f
    with np.errstate(all="ignore"):  # a non-finite K (e.g. q = 1) is reported by the caller
        num1 = np.sum(i * q * q * (1.0 - q * q) ** (i - 1.0) * c)
        if arx_compat:
            den1 = np.sum((1.0 - q * q) ** i * c - 1.0)
        else:
            # (1-q)^i ((1+q)^i - 1) = (1-q^2)^i (1 - (1+q)^-i): factors in [0, 1], no overflow
            den1 = np.sum((1.0 - q * q) ** i * -np.expm1(-i * np.log1p(q)) * c)
        num2 = np.sum((1.0 - q) ** i * c)
        den2 = np.sum(i * q * (1.0 - q) ** (i - 1.0) * c)
        return float(h.u + h.c1 * (num1 / den1) * (num2 / den2) ** 2)


def _snb_expected(a: float, b: float, k: float, f: float, *, arx_compat: bool = False):
    """Expected numbers of sample uniques and doubletons under the SNB model.

    Population class sizes are ``1 + NegBin(a, b)`` over ``K`` non-empty classes and each
    record enters the sample with probability ``f``. With ``x = (1 - f)(1 - b)``::

        E[c1] = K f (b / (1 - x))^a (1 + a x / (1 - x))
        E[c2] = K a f^2 b^a (1 - b) (2 - (1 - a) x) / (2 (1 - x)^(a + 2))

    (Chen & Keller-McNulty 1998). ``arx_compat=True`` multiplies by ``(1 - x)^(a + 2)``
    instead of dividing, as ARX's ``ModelSNB`` object function does (its Jacobian divides).
    """
    x = (1.0 - f) * (1.0 - b)
    e1 = k * f * (b / (1.0 - x)) ** a * (1.0 + a * x / (1.0 - x))
    power = (1.0 - x) ** (a + 2.0)
    e2 = k * a * f * f * b**a * (1.0 - b) * (2.0 - (1.0 - a) * x) / 2.0
    e2 = e2 * power if arx_compat else e2 / power
    return e1, e2


def _snb_system(k: float, f: float, c1: float, c2: float, *, arx_compat: bool) -> _System:
    """SNB moment equations ``log E[c1] = log c1``, ``log E[c2] = log c2`` in ``(a, b)``.

    Taking logs makes the equations scale-free; the Jacobian is analytic (with ``x`` as in
    :func:`_snb_expected`, ``dx/db = -(1 - f)``).
    """
    sign = 1.0 if arx_compat else -1.0  # exponent sign of (1 - x)^(a + 2) in E[c2]
    log_k, log_f = math.log(k), math.log(f)

    def system(p: np.ndarray):
        a, b = float(p[0]), float(p[1])
        x = (1.0 - f) * (1.0 - b)
        w = 1.0 - x + a * x  # 1 - x + a x > 0
        g = 2.0 - (1.0 - a) * x  # > 0
        log1mx = math.log1p(-x)
        log_b = math.log(b)
        g1 = log_k + log_f + a * log_b - (a + 1.0) * log1mx + math.log(w) - math.log(c1)
        g2 = (
            log_k
            + math.log(a)
            + 2.0 * log_f
            + a * log_b
            + math.log1p(-b)
            + math.log(g)
            - math.log(2.0)
            + sign * (a + 2.0) * log1mx
            - math.log(c2)
        )
        dx_db = -(1.0 - f)
        d1a = log_b - log1mx + x / w
        d1b = a / b + ((a + 1.0) / (1.0 - x) + (a - 1.0) / w) * dx_db
        d2a = 1.0 / a + log_b + x / g + sign * log1mx
        d2b = a / b - 1.0 / (1.0 - b) + (-(1.0 - a) / g - sign * (a + 2.0) / (1.0 - x)) * dx_db
        return np.array([g1, g2]), np.array([[d1a, d1b], [d2a, d2b]]), np.ones(2)

    return system


def _snb_in_domain(p: np.ndarray) -> bool:
    a, b = p
    return bool(np.isfinite(a) and a > 0.0 and 0.0 < b < 1.0)


def _snb_parameters(
    k: float, f: float, c1: float, c2: float, *, arx_compat: bool = False
) -> tuple[float, float] | None:
    """Solve the SNB equations for ``(a, b)`` (``a > 0``, ``0 < b < 1``); ``None`` if no root.

    Newton-Raphson from a fixed grid of starting points (ARX starts at ``(1, 1)``, on the
    boundary, and then restarts at random points).
    """
    if not (k > 0 and c1 > 0 and c2 > 0 and 0.0 < f < 1.0):
        return None
    system = _snb_system(k, f, c1, c2, arx_compat=arx_compat)
    for a0 in _SNB_A_GRID:
        for b0 in _SNB_B_GRID:
            root = _newton2d(system, np.array([a0, b0]), _snb_in_domain)
            if root is not None:
                return float(root[0]), float(root[1])
    return None


def snb(class_sizes: np.ndarray, sampling_fraction: float, *, arx_compat: bool = False) -> float:
    """Share of population uniques by the slide negative binomial model (ARX ``ModelSNB``).

    Chen & Keller-McNulty (1998): the ``K`` non-empty population classes have sizes
    ``1 + NegBin(a, b)``, so ``K b^a`` of them are unique; the sample is a Bernoulli(``f``)
    thinning. ``K`` is estimated with the Shlosser-type estimator of Haas et al. (1995)
    (:func:`_shlosser_classes`), and ``(a, b)`` by matching the expected numbers of sample
    uniques and doubletons to ``c1`` and ``c2`` (:func:`_snb_expected`; Newton-Raphson).

    Returns ``K b^a / N`` (ARX ``getFractionOfUniqueTuplesSNB``); ``0.0`` without sample
    uniques; ``c1 / n`` at ``f == 1``; ``nan`` without doubletons (``c2 == 0``: the second
    equation has no root in the parameter space), when Newton finds no root, or when
    ``K b^a > N``. ``arx_compat=True`` evaluates ARX 3.x's equations, which differ from the
    paper's in two places (see :func:`_shlosser_classes` and :func:`_snb_expected`).
    """
    return _snb_of(_histogram(class_sizes), _check_fraction(sampling_fraction), arx_compat)


def _snb_of(h: _Histogram, f: float, arx_compat: bool) -> float:
    if h.c1 == 0:
        return 0.0
    if f == 1.0:
        return h.c1 / h.n
    k = _shlosser_classes(h, f, arx_compat=arx_compat)
    if not (math.isfinite(k) and k > 0):
        return math.nan
    params = _snb_parameters(k, f, float(h.c1), float(h.c2), arx_compat=arx_compat)
    if params is None:
        return math.nan
    a, b = params
    share = k * b**a * f / h.n
    return share if 0.0 <= share <= 1.0 else math.nan


# ----------------------------------------------------------------------------------------
# Dankar et al. (2012)
# ----------------------------------------------------------------------------------------


def _valid(value: float) -> bool:
    """ARX's ``isValid``: an estimate counts if it is a number other than 0."""
    return not math.isnan(value) and value != 0.0


def _dankar_rule(f: float, c1: int, pitman_share, zayatz_share, snb_share) -> tuple[float, str]:
    """Dankar et al.'s (2012) rule over lazily evaluated estimates (callables)."""
    if c1 == 0:
        return 0.0, "none"
    if f <= DANKAR_PITMAN_LIMIT:
        p = pitman_share()
        if _valid(p):
            return p, "pitman"
        return zayatz_share(), "zayatz"
    s, z = snb_share(), zayatz_share()
    if _valid(s) and not z < s:
        return s, "snb"
    return z, "zayatz"


def dankar(
    class_sizes: np.ndarray, sampling_fraction: float, *, arx_compat: bool = False
) -> tuple[float, str]:
    """Population-unique share by the decision rule of Dankar, El Emam, Neisa & Roffey (2012).

    As implemented by ARX (``RiskModelPopulationUniqueness.getNumUniqueTuplesDankar``):

    * ``f <= 0.1``: Pitman's estimate; if it is invalid (NaN or 0), Zayatz's;
    * ``f > 0.1``: the smaller of the Zayatz and SNB estimates (SNB on a tie); Zayatz's when
      the SNB estimate is invalid.

    Returns ``(share, model)`` with ``model`` one of ``"pitman"``, ``"zayatz"``, ``"snb"``, or
    ``"none"`` when the sample has no uniques (share 0; ARX reports its DANKAR placeholder).
    """
    f = _check_fraction(sampling_fraction)
    h = _histogram(class_sizes)
    return _dankar_rule(
        f,
        h.c1,
        lambda: _pitman_of(h, f),
        lambda: _zayatz_of(h, f),
        lambda: _snb_of(h, f, arx_compat),
    )


def population_uniqueness(
    class_sizes: np.ndarray,
    sampling_fraction: float,
    *,
    arx_compat: bool = False,
    classes: np.ndarray | None = None,
) -> dict[str, float | str]:
    """All four estimates of the population-unique share (ARX's "population uniques" view).

    Returns ``{"pitman", "zayatz", "snb", "dankar": share, "dankar_model": name}``; every
    share is *estimated population uniques / population size* (``N = n / f``), NaN where the
    model cannot be solved. See :func:`pitman`, :func:`zayatz`, :func:`snb`, :func:`dankar`.
    ``classes``: how many classes have each size in ``class_sizes`` (a class-size
    histogram, as the Spark engine counts it), by default one each.
    """
    f = _check_fraction(sampling_fraction)
    h = _histogram(class_sizes, classes)
    p = _pitman_of(h, f)
    z = _zayatz_of(h, f)
    s = _snb_of(h, f, arx_compat)
    d, model = _dankar_rule(f, h.c1, lambda: p, lambda: z, lambda: s)
    return {"pitman": p, "zayatz": z, "snb": s, "dankar": d, "dankar_model": model}


def population_unique_share(
    class_sizes: np.ndarray,
    sampling_fraction: float,
    estimator: str = "dankar",
    *,
    classes: np.ndarray | None = None,
    dankar_fallback: bool = True,
    arx_compat: bool = False,
) -> tuple[float, str]:
    """One estimate of the population-unique share, by name (one of :data:`ESTIMATORS`).

    Computes only the estimator asked for (Dankar's rule: only the models it consults), so
    it is the cheap call for repeated evaluation, e.g. once per lattice node. Returns
    ``(share, model)``: the share as :func:`pitman`, :func:`zayatz`, :func:`snb` or
    :func:`dankar` give it, and the model that produced it (the estimator itself, or for
    ``"dankar"`` the one its rule picked, ``"none"`` without sample uniques).

    ``classes``: how many classes have each size in ``class_sizes`` (a class-size histogram),
    by default one each. ``dankar_fallback=False`` leaves out Dankar's Zayatz fallback for
    ``f <= 0.1``: an invalid Pitman estimate gives NaN instead, as ARX's
    ``PopulationUniqueness`` privacy model evaluates the rule
    (``getFractionOfUniqueTuplesDankar(false)``).
    """
    if estimator not in ESTIMATORS:
        raise DataError(f"estimator: expected one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    f = _check_fraction(sampling_fraction)
    h = _histogram(class_sizes, classes)
    if estimator == "pitman":
        return _pitman_of(h, f), "pitman"
    if estimator == "zayatz":
        return _zayatz_of(h, f), "zayatz"
    if estimator == "snb":
        return _snb_of(h, f, arx_compat), "snb"
    if not dankar_fallback and h.c1 and f <= DANKAR_PITMAN_LIMIT:
        p = _pitman_of(h, f)
        return (p, "pitman") if _valid(p) else (math.nan, "pitman")
    return _dankar_rule(
        f,
        h.c1,
        lambda: _pitman_of(h, f),
        lambda: _zayatz_of(h, f),
        lambda: _snb_of(h, f, arx_compat),
    )
