"""sdckit.masking: perturbative and non-perturbative masking of microdata.

Every method is ``sdckit.masking.<method>(data, columns, ..., seed=...)`` and returns a
:class:`~sdckit.masking.base.MaskResult` (masked copy + publishable record). The names are
exported lazily, so importing one module does not load the others (nor numba). PRAM and
randomized response live in :mod:`sdckit.masking.randomization`, local suppression in
:mod:`sdckit.masking.suppression` (no module shares a method's name, so
``sdckit.masking.pram`` is always the function).

The same methods as typed, frozen parameter objects -- the entries of a mask job's
``methods:`` list -- are the classes of :mod:`sdckit.masking.methods` (``Noise``,
``Microaggregation``, ``Pram``, ...; each has ``.apply(data, rng)``), composed by its
``Pipeline``.
"""

from __future__ import annotations

from sdckit._lazy import lazy_exports

_EXPORTS = {
    "MaskResult": ".base",
    "additive_noise": ".noise",
    "multiplicative_noise": ".other",
    "round_to_base": ".other",
    "resample": ".other",
    "mdav": ".microaggregation",
    "vmdav": ".microaggregation",
    "optimal_univariate": ".microaggregation",
    "individual_ranking": ".microaggregation",
    "categorical_microaggregation": ".microaggregation",
    "kanonymity_microaggregation": ".microaggregation",
    "fuzzy_microaggregation": ".microaggregation",
    "information_loss": ".microaggregation",
    "rank_swap": ".swapping",
    "rank_swap_p_buckets": ".swapping",
    "rank_swap_p_distribution": ".swapping",
    "data_swap": ".swapping",
    "record_swap": ".swapping",
    "pram": ".randomization",
    "pram_estimate": ".randomization",
    "invariant_matrix": ".randomization",
    "randomized_response": ".randomization",
    "rr_estimate": ".randomization",
    "local_suppression": ".suppression",
    "sample": ".recoding",
    "global_recode": ".recoding",
    "group_categories": ".recoding",
    "top_bottom_code": ".recoding",
    # the methods as spec objects (job-file entries) and the pipeline applying them
    "MaskingMethod": ".methods",
    "Pipeline": ".methods",
    "Noise": ".methods",
    "MultiplicativeNoise": ".methods",
    "Microaggregation": ".methods",
    "RankSwapping": ".methods",
    "DataSwapping": ".methods",
    "RecordSwapping": ".methods",
    "Pram": ".methods",
    "RandomizedResponse": ".methods",
    "Rounding": ".methods",
    "Resampling": ".methods",
    "Sampling": ".methods",
    "GlobalRecoding": ".methods",
    "TopBottomCoding": ".methods",
    "LocalSuppression": ".methods",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
