"""sdckit.masking: perturbative and non-perturbative masking of microdata.

Every method is ``sdckit.masking.<method>(data, columns, ..., seed=...)`` and returns a
:class:`~sdckit.masking.base.MaskResult` (masked copy + publishable record). The names are
exported lazily, so importing one module does not load the others (nor numba). A method's
function has its job-file name (``noise``, ``rounding``, ``rank_swapping``, ...; the variants
that are no job-file name of their own keep theirs: ``mdav``, ``rank_swap_p_buckets``, ...);
no module shares a function's name (additive noise lives in
:mod:`sdckit.masking.noise_addition`, PRAM and randomized response in
:mod:`sdckit.masking.randomization`, local suppression in :mod:`sdckit.masking.suppression`),
so ``sdckit.masking.noise`` is always the function. The former names (:data:`RENAMED`) still
work, with a ``DeprecationWarning``.

The same methods as typed, frozen parameter objects -- the entries of a mask job's
``methods:`` list (``Noise``, ``Microaggregation``, ``Pram``, ...; each has
``.apply(data, rng)``) -- are defined beside their functions on the base class of
:mod:`sdckit.masking.spec`, and composed by the ``Pipeline`` of :mod:`sdckit.masking.pipeline`,
which holds the registry of their names.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from sdckit._lazy import lazy_exports

_EXPORTS = {
    "MaskResult": ".base",
    "noise": ".noise_addition",
    "multiplicative_noise": ".other",
    "rounding": ".other",
    "resampling": ".other",
    "mdav": ".microaggregation",
    "vmdav": ".microaggregation",
    "optimal_univariate": ".microaggregation",
    "individual_ranking": ".microaggregation",
    "categorical_microaggregation": ".microaggregation",
    "kanonymity_microaggregation": ".microaggregation",
    "fuzzy_microaggregation": ".microaggregation",
    "information_loss": ".microaggregation",
    "rank_swapping": ".swapping",
    "rank_swap_p_buckets": ".swapping",
    "rank_swap_p_distribution": ".swapping",
    "data_swapping": ".swapping",
    "record_swapping": ".swapping",
    "pram": ".randomization",
    "pram_estimate": ".randomization",
    "invariant_matrix": ".randomization",
    "randomized_response": ".randomization",
    "rr_estimate": ".randomization",
    "local_suppression": ".suppression",
    "sampling": ".recoding",
    "global_recoding": ".recoding",
    "group_categories": ".recoding",
    "top_bottom_coding": ".recoding",
    # the methods as spec objects (job-file entries), each beside its function, and the
    # pipeline applying them
    "MaskingMethod": ".spec",
    "Pipeline": ".pipeline",
    "Noise": ".noise_addition",
    "MultiplicativeNoise": ".other",
    "Microaggregation": ".microaggregation",
    "RankSwapping": ".swapping",
    "DataSwapping": ".swapping",
    "RecordSwapping": ".swapping",
    "Pram": ".randomization",
    "RandomizedResponse": ".randomization",
    "Rounding": ".other",
    "Resampling": ".other",
    "Sampling": ".recoding",
    "GlobalRecoding": ".recoding",
    "TopBottomCoding": ".recoding",
    "LocalSuppression": ".suppression",
}

#: The former names of the masking functions -> their names now (the job-file name). Each
#: still works, from this package and from the function's module, with a DeprecationWarning.
RENAMED = {
    "additive_noise": "noise",
    "round_to_base": "rounding",
    "resample": "resampling",
    "rank_swap": "rank_swapping",
    "data_swap": "data_swapping",
    "record_swap": "record_swapping",
    "sample": "sampling",
    "global_recode": "global_recoding",
    "top_bottom_code": "top_bottom_coding",
}

__all__ = sorted(_EXPORTS)


_lazy_getattr, __dir__ = lazy_exports(__name__, _EXPORTS)


def renamed_attribute(module: str, name: str) -> Any:
    """``name``, a former function name of :data:`RENAMED`, read from ``module`` (this package
    or the module defining the function): the function under its new name, with a
    ``DeprecationWarning``. ``AttributeError`` for any other name (the modules' and the
    package's ``__getattr__``)."""
    new = RENAMED.get(name)
    if new is None or module not in (__name__, __name__ + _EXPORTS[new]):
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} is deprecated: it is {module}.{new} now (the method's job-file name)",
        DeprecationWarning,
        stacklevel=3,
    )
    return _lazy_getattr(new) if module == __name__ else getattr(sys.modules[module], new)


def __getattr__(name: str) -> Any:
    if name in RENAMED:
        return renamed_attribute(__name__, name)
    return _lazy_getattr(name)
