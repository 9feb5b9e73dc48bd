"""Parameters shared by several entry points, validated by one function each.

A parameter that the job files, the Python API and every algorithm accept is checked here
once, so that the same bad value gets the same message wherever it is given; each caller
passes the name under which the user gave it (a job-file key path, or the argument name).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Annotated, Any

from pydantic import BeforeValidator

from sdckit.errors import ParameterError, short_repr

_SHARE = "must be a share of the records between 0 and 1 (e.g. 0.05 for 5%)"


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(_SHARE)
    return float(value)


#: The suppression limit as a spec field type (:mod:`sdckit.core.spec`).
SuppressionLimit = Annotated[float, BeforeValidator(_share)]


def suppression_limit(value: Any, key: str = "suppression_limit") -> float:
    """The share of records that may be suppressed, as a float in [0, 1].

    Raises :class:`~sdckit.errors.ConfigError` naming ``key`` for anything else (booleans,
    text, NaN, negative or above 1), with an example of a valid value.
    """
    try:
        return _share(value)
    except ValueError:
        raise ParameterError(f"{key} {_SHARE}, got {short_repr(value)}") from None


def integer_at_least(value: Any, minimum: int, where: str, name: str) -> int:
    """``value`` as an int when it is an integer (not a bool) ``>= minimum``; otherwise a
    ParameterError ``"{where}: {name} must be an integer >= {minimum}, got {value}"``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ParameterError(
            f"{where}: {name} must be an integer >= {minimum}, got {short_repr(value)}"
        )
    return int(value)


def column_names(value: Any, where: str, name: str) -> list[Any]:
    """``value`` as a list of column names when it is a list (tuple, index, array) of them,
    not one name and not a mapping; otherwise a ParameterError ``"{where}: {name} must be a
    list of column names, got {value}"``."""
    from collections.abc import Iterable, Mapping

    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ParameterError(
            f"{where}: {name} must be a list of column names, e.g. [age, sex], got "
            f"{short_repr(value)}"
        )
    names = list(value)
    bad = [v for v in names if isinstance(v, (bool, float, list, dict, Mapping))]
    if bad:
        raise ParameterError(
            f"{where}: {name} must be a list of column names, got the item {short_repr(bad[0])}"
        )
    return names
