"""The masking pipeline, a mask job's ``methods:`` list, and the registry of its method names.

Every method a ``methods:`` list can name is a :class:`~sdckit.masking.spec.MaskingMethod`
class, defined beside the masking function it calls (``Noise`` beside
:func:`~sdckit.masking.noise_addition.noise`, ``Microaggregation`` in
:mod:`~sdckit.masking.microaggregation`, ...); this module imports every method module, so
its :data:`METHODS` (a :class:`~sdckit.core.registry.Registry` of the classes with their
:class:`~sdckit.masking.spec.MaskingTraits`) lists them all. The same object comes from Python
(``Noise(["income"], alpha=0.2)``) and from a job file (``- noise: {columns: [income], alpha:
0.2}``); a bad parameter raises :class:`~sdckit.errors.ParameterError` naming it
(``noise: parameter 'alpha' must be > 0, got -1``; in a job file the key path,
``'job.yaml': methods[0].noise.alpha must be > 0, got -1``). A :class:`Pipeline` is the
``methods:`` list: :meth:`Pipeline.from_entries` parses it, :meth:`Pipeline.to_entries` writes
it back, :meth:`Pipeline.apply` masks a table with every step in turn.

Job-file names (:data:`METHODS`; ``columns`` is always a list of column names, one name is
accepted too) and their classes:

===========================  =================================================================
``noise``                    :class:`Noise` -- additive noise (Brand 2002; Kim 1986):
(``additive_noise``)         ``columns``, ``alpha`` (> 0, noise variance / attribute variance,
                             default 0.1), ``method`` (``uncorrelated`` | ``correlated`` |
                             ``kim``)
``multiplicative_noise``     :class:`MultiplicativeNoise` -- ``columns``, ``sd`` (> 0, default
                             0.1)
``microaggregation``         :class:`Microaggregation` -- ``columns``, ``k`` (default 3),
                             ``method``: ``mdav`` (default; also ``groups`` -- attribute groups
                             aggregated separately, then ``columns`` may be left out --,
                             ``centroid`` (``mean`` | ``median``), ``standardize``), ``vmdav``
                             (+ ``gamma``), ``optimal_univariate`` and ``individual_ranking``
                             (each column on its own), ``categorical`` (+ ``order``),
                             ``kanonymity`` (the columns are the quasi-identifiers), ``fuzzy``
                             (+ ``m``, ``max_iter``, ``tol``); every method within ``strata``
                             or blocks (``block_by`` + ``block_size``)
``rank_swapping``            :class:`RankSwapping` -- ``columns``, ``p_percent`` (a percentage
                             of n in (0, 100], default 5), ``variant`` (``standard`` |
                             ``p_buckets`` | ``p_distribution``)
``data_swapping``            :class:`DataSwapping` -- Dalenius-Reiss: ``columns`` (swapped),
                             ``match_columns``, ``rate``
``record_swapping``          :class:`RecordSwapping` -- sdcMicro ``recordSwap``:
                             ``household``, ``similar``, ``hierarchy``,
                             ``quasi_identifiers`` (sdcMicro's ``riskVars``; the old key
                             ``risk_variables`` is read too), ``swap_rate``,
                             ``k_anonymity``, ``carry_along``
``pram``                     :class:`Pram` -- ``columns``, ``p_diagonal``, ``matrix``,
                             ``invariant``, ``alpha``, ``random_diagonal``
``randomized_response``      :class:`RandomizedResponse` -- ``column``, ``p`` (in (0.5, 1]),
                             ``categories``
``rounding``                 :class:`Rounding` -- ``columns``, ``base``
``resampling``               :class:`Resampling` -- Heer (1993): ``columns``, ``t``
``sampling``                 :class:`Sampling` -- ``fraction`` or ``n``, ``strata``
``global_recoding``          :class:`GlobalRecoding` -- ``columns``, ``method``
                             (``equal_width`` | ``equal_frequency`` | ``log_equidistant`` |
                             ``breaks``), ``bins``, ``breaks``, ``labels``; or ``mapping`` for
                             grouping categories
``top_bottom_coding``        :class:`TopBottomCoding` -- ``columns``, ``top``, ``bottom``,
                             ``top_quantile``, ``bottom_quantile``, ``replace`` (``threshold``
                             | ``mean``)
``local_suppression``        :class:`LocalSuppression` -- sdcMicro ``localSuppression``:
                             ``columns`` (the key variables), ``k``, ``importance``,
                             ``combinations_up_to``
===========================  =================================================================

Every step also takes ``allow_unchanged`` (default false). A perturbative method
(:attr:`~sdckit.masking.spec.MaskingMethod.must_change`: noise, swapping, PRAM, randomized
response, resampling) exists to change values; a step of one that changed none of its columns
(noise on a constant column, swapping one row, ...) would release the data unprotected, so the
pipeline refuses it unless the step says ``allow_unchanged: true``.

Seeds: with a job seed ``s`` step ``i`` gets the seed of the ``i``-th child of
``numpy.random.SeedSequence(s)``, so a method's randomness does not depend on which methods
come before it. A random step that both engines run draws per block of records
(:mod:`sdckit.masking.blocks`), so a seed gives the same release on ``engine: local`` and
``engine: spark``. The pipeline does not publish the seeds in its records (knowing them would let
an intruder undo the noise).

Examples
--------
>>> from sdckit.masking import Rounding
>>> steps = Pipeline.from_entries([{"rounding": {"columns": ["age"], "base": 5}}])
>>> steps.steps[0] == Rounding(["age"], 5)
True
>>> steps.to_entries()
[{'rounding': {'columns': ['age'], 'base': 5.0}}]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from sdckit.core.spec import Spec, named_entry
from sdckit.errors import ConfigError, DataError, SdcInputError, short_repr

# the method modules: defining their classes registers them in METHODS
from sdckit.masking import (  # noqa: F401
    microaggregation,
    noise_addition,
    other,
    randomization,
    recoding,
    suppression,
    swapping,
)
from sdckit.masking.blocks import check_block_rows
from sdckit.masking.spec import METHODS, MaskingMethod

if TYPE_CHECKING:
    import pandas as pd

    from sdckit.masking.base import MaskResult

__all__ = [
    "METHODS",
    "Pipeline",
    "check_unchanged",
    "method_names",
    "planned",
    "step_seeds",
    "unchanged_error",
]


def method_names() -> list[str]:
    """Every accepted method name (aliases included), sorted."""
    return sorted(METHODS.all_names())


# -- the pipeline ------------------------------------------------------------------------------
_EXAMPLE = "noise: {columns: [a, b], alpha: 0.1}"


def _parse_step(item: Any, where: str) -> MaskingMethod:
    """One entry of a ``methods:`` list (a step, ``{name: {params}}``, ``(name, params)`` or
    a bare name) as a step; ConfigError/ParameterError naming ``where`` otherwise."""
    if isinstance(item, MaskingMethod):
        return item
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], Hashable):
        item = {item[0]: item[1]}
    name, params = named_entry(item, where, method_names(), _EXAMPLE)
    return METHODS.load(name).from_dict(params, f"{where}.{name}")


def _parse_steps(entries: Any, where: str) -> list[MaskingMethod]:
    if isinstance(entries, (str, Mapping)) or not isinstance(entries, Sequence):
        raise ConfigError(
            f"{where} must be a list of `- method: {{parameters}}` entries, e.g. "
            f"`[{{{_EXAMPLE}}}]`; got {short_repr(entries)}"
        )
    return [_parse_step(item, f"{where}[{i}]") for i, item in enumerate(entries)]


def step_seeds(seed: int | None, n: int) -> list[int]:
    """One integer seed per step: the ``i``-th child of ``numpy.random.SeedSequence(seed)``
    (fresh entropy when ``seed`` is None)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ConfigError(f"seed: {seed!r} must be an integer (or absent for a random run)")
    if seed is not None and seed < 0:
        raise ConfigError(f"seed: {seed!r} must be a non-negative integer")
    ss = np.random.SeedSequence(None if seed is None else int(seed))
    return [int(c.generate_state(1, dtype=np.uint64)[0]) for c in ss.spawn(n)]


def _same(before: pd.Series, after: pd.Series) -> bool:
    """True when two columns hold the same values row by row (missing equals missing)."""
    import pandas as pd

    a, b = before.to_numpy(), after.to_numpy()
    if a.shape != b.shape:
        return False
    equal = pd.Series(a == b, dtype=bool).to_numpy() | (pd.isna(a) & pd.isna(b))
    return bool(equal.all())


def _check_changed(
    before: pd.DataFrame, results: Sequence[MaskResult], step: MaskingMethod, where: str
) -> None:
    """DataError when a perturbative step left every value of its columns as it was."""
    after = results[-1].data
    columns = [c for r in results for c in (r.parameters.get("columns") or [])]
    if not columns:  # the step's own parameters: columns, column, or swapped geography
        columns = step.masked_columns()
    columns = [c for c in dict.fromkeys(columns) if c in before.columns and c in after.columns]
    if not columns or len(after) != len(before):
        return
    if all(_same(before[c], after[c]) for c in columns):
        raise unchanged_error(where, len(before), columns)


def unchanged_error(where: str, n: int, columns: Sequence[str]) -> DataError:
    """The error of a perturbative step that changed none of the ``n`` values of its
    ``columns`` (both engines raise it)."""
    return DataError(
        f"{where} changed none of the {n:,} values of "
        f"{', '.join(map(repr, columns))}, so the release would be the original data: "
        "the method cannot protect this input (a constant column, a single row, too "
        "few records?). Choose another method, or set `allow_unchanged: true` on this "
        "step if an unchanged release is what you want"
    )


class Pipeline(Spec):
    """Masking steps applied in order: a mask job's ``methods:`` list.

    Parameters
    ----------
    steps : list of MaskingMethod
        The steps (method objects; job-file entries ``{name: {parameters}}`` or
        ``(name, parameters)`` pairs are parsed as by :meth:`from_entries`).

    Examples
    --------
    >>> from sdckit.masking import Microaggregation, Noise
    >>> p = Pipeline([Microaggregation(["a", "b"], k=4), Noise(["c"], alpha=0.05)])
    >>> Pipeline.from_entries(p.to_entries()) == p
    True
    """

    spec_label: ClassVar[str] = "pipeline"

    steps: list[MaskingMethod]

    def __init__(self, steps: Any = (), **kwargs: Any) -> None:
        super().__init__(steps=_parse_steps(steps, "steps"), **kwargs)

    @classmethod
    def from_entries(cls, entries: Any, where: str = "methods") -> Self:
        """Parse a ``methods:`` list: ``{name: {parameters}}`` entries (a bare name for a
        method with its defaults) or ``(name, parameters)`` pairs.

        Every entry is validated; an error names its key path under ``where``
        (``methods[1].noise.alpha must be > 0, got -1``; a job passes
        ``"'job.yaml': methods"``).
        """
        return cls(_parse_steps(entries, where))

    @classmethod
    def from_dict(cls, params: Mapping[str, Any] | None, where: str | None = None) -> Self:
        """``{steps: [entries]}`` (the form :meth:`to_dict` writes) as a pipeline."""
        if not isinstance(params, Mapping) or set(params) != {"steps"}:
            raise ConfigError(
                f"{where or 'pipeline'} must be `{{steps: [{{{_EXAMPLE}}}]}}`, got "
                f"{short_repr(params)}"
            )
        return cls(_parse_steps(params["steps"], f"{where or 'pipeline'}.steps"))

    def to_entries(self) -> list[dict[str, Any]]:
        """The ``methods:`` list of a job file: one ``{name: {parameters}}`` per step."""
        return [step.to_entry() for step in self.steps]

    def to_dict(self) -> dict[str, Any]:
        """``{"steps": to_entries()}``."""
        return {"steps": self.to_entries()}

    def apply(
        self,
        data: pd.DataFrame,
        seed: int | None = None,
        *,
        where: str = "methods",
        block_rows: int | None = None,
    ) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
        """Mask ``data`` with every step in order; returns the masked table and the records.

        Before any step runs, every step checks its parameters against ``data`` (a
        microaggregation ``k`` larger than the number of records is refused). Step ``i`` gets
        its own seed, the ``i``-th of :func:`step_seeds` (``seed``): the same seed gives the
        same output, and a step's randomness does not depend on the steps before it. A step
        that both engines run (:func:`planned`) is planned from the whole table and released
        as the Spark engine releases it, a random one by blocks of ``block_rows`` records
        (default :data:`~sdckit.masking.blocks.BLOCK_ROWS`) with a generator per block
        (:mod:`sdckit.masking.blocks`): the same seed gives the same bytes as ``engine:
        spark``. Its draws therefore differ from those of the step's
        own :meth:`~MaskingMethod.apply`, which draws from one generator. An error raised by a
        step keeps its type and is prefixed with ``<where>[i].<name>:``; a step of a
        :attr:`~MaskingMethod.must_change` method that changed none of its columns is a
        DataError unless it says ``allow_unchanged``. The input is not modified.

        Each record is :meth:`~sdckit.masking.base.MaskResult.record` plus ``step`` (the index
        ``i``); a method applied column by column gives one record per column.
        """
        import pandas as pd

        from sdckit.masking import blocks as _blocks

        if not isinstance(data, pd.DataFrame):
            raise DataError(f"pipeline: data must be a pandas DataFrame, got {type(data).__name__}")
        keys = [f"{where}[{i}].{step.spec_name}" for i, step in enumerate(self.steps)]
        for step, key in zip(self.steps, keys, strict=True):
            step.check_data(data, key)
        seeds = step_seeds(seed, len(self.steps))
        rows = check_block_rows(_blocks.BLOCK_ROWS if block_rows is None else block_rows)
        records: list[dict[str, Any]] = []
        current = data
        for i, (step, key, s) in enumerate(zip(self.steps, keys, seeds, strict=True)):
            if planned(step):
                current, recs = _planned_step(step, current, s, key, rows)
                records += [{**r, "step": i} for r in recs]
                continue
            try:
                with np.errstate(all="ignore"):
                    results = step.apply(current, s)
            except SdcInputError as exc:
                raise type(exc)(f"{key}: {exc}") from exc
            if step.must_change and not step.allow_unchanged:
                _check_changed(current, results, step, key)
            for r in results:
                records.append({**r.record(), "step": i})
            current = results[-1].data
        return (current.copy() if current is data else current), records


def planned(step: MaskingMethod) -> bool:
    """Whether both engines run ``step`` as a plan released record by record (its class lists
    ``"spark"`` in ``engines`` and has no Spark step of its own): the pipeline then releases
    it as the Spark engine does (:func:`~sdckit.masking.blocks.release_plan`)."""
    cls = type(step)
    return "spark" in cls.engines and cls.spark_hook is None


def _planned_step(
    step: MaskingMethod, data: pd.DataFrame, seed: int, key: str, block_rows: int
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One step the Spark engine's way: its plan from the whole table, its release (a random
    one block by block), the unchanged-release rule, the records from the released table."""
    from sdckit.masking.blocks import release_plan
    from sdckit.masking.stats import PandasStats

    try:
        with np.errstate(all="ignore"):
            plan = step.plan(PandasStats(data), seed)
            released, changed = release_plan(plan, data, seed, block_rows)
    except SdcInputError as exc:
        raise type(exc)(f"{key}: {exc}") from exc
    check_unchanged(step, key, len(data), plan.columns, changed)
    try:
        return released, plan.records(PandasStats(released), changed)
    except SdcInputError as exc:
        raise type(exc)(f"{key}: {exc}") from exc


def check_unchanged(
    step: MaskingMethod, key: str, n: int, columns: Sequence[str], changed: Sequence[int]
) -> None:
    """The unchanged-release rule on per-column change counts (both engines): a step of a
    :attr:`~MaskingMethod.must_change` method that changed none of the ``n`` values of its
    ``columns`` is a DataError unless it says ``allow_unchanged``."""
    if step.must_change and not step.allow_unchanged and n and not any(changed):
        raise unchanged_error(key, n, columns)
