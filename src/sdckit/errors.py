"""Error types shared by every layer.

Two kinds of failure exist and the CLI maps them to exit codes:

* :class:`SdcInputError` (and subclasses) -- the user's data, configuration or arguments are
  wrong. The message names the file, column, value, row or configuration key at fault and
  says how to fix it. Exit code 2.
* :class:`VerificationError` -- an output failed the independent re-check. That is a bug in
  sdckit, never the user's fault; nothing is written. Exit code 1 (as any other internal error).
"""

from __future__ import annotations

import reprlib


class SdcError(Exception):
    """Base class of every error sdckit raises on purpose.

    Where the raiser knows them, ``key`` is the job or server-config key path at fault
    (``models[0].k_anonymity.k``, ``datasets.adult.bounds.age``) and ``parameter`` the
    parameter's name (``k``), so that a caller can point at the field without reading the
    message; both are None otherwise.
    """

    key: str | None = None
    parameter: str | None = None

    def __init__(self, *args: object, key: str | None = None, parameter: str | None = None):
        super().__init__(*args)
        if key is not None:
            self.key = key
        if parameter is not None:
            self.parameter = parameter


class SdcInputError(SdcError, ValueError):
    """Bad input: data, arguments, configuration. The message says what and how to fix it."""


class ConfigError(SdcInputError):
    """A job/configuration file or key is invalid (the message names the key)."""


class HierarchyError(SdcInputError):
    """A generalization hierarchy is malformed or does not match the data."""


class MissingHierarchyError(HierarchyError):
    """A quasi-identifier needs a hierarchy and has none.

    The message speaks the language of the interface in use: ``str(error)`` names the Python
    builders (the API); :meth:`for_job_file` gives the YAML to write under the attribute in a
    job file, which the job runners raise instead.
    """

    def __init__(self, attribute: str, reason: str, python_hint: str, yaml_hint: str) -> None:
        self.attribute = attribute
        self.reason = reason
        self.python_hint = python_hint
        self.yaml_hint = yaml_hint
        super().__init__(
            f"quasi-identifier {attribute!r} has no generalization hierarchy, {reason}. "
            f"Give it one in the schema's hierarchies: {python_hint}"
        )

    def for_job_file(self, key: str) -> HierarchyError:
        """The same error for a job-file user: ``key`` names the attribute's entry."""
        return HierarchyError(
            f"{key}: quasi-identifier {self.attribute!r} has no hierarchy, {self.reason}. "
            f"Add one to it: {self.yaml_hint}"
        )


class DataError(SdcInputError):
    """The data itself is unusable (unknown column, unparsable number, empty file...)."""


class ParameterError(ConfigError, DataError):
    """A parameter of a method, privacy model, algorithm or job is outside its domain (a
    negative k, a probability above 1, an unknown variant...).

    The one error every validator raises for a bad parameter, whichever interface it came
    through; it is both a :class:`ConfigError` and a :class:`DataError`, so code that caught
    either keeps working.
    """


class NoSolutionError(SdcInputError):
    """No transformation satisfies the privacy models within the given limits."""


class VerificationError(SdcError, RuntimeError):
    """An output failed the independent verification; it is a bug and nothing was written."""


def short_repr(value: object, limit: int = 120) -> str:
    """``repr(value)`` cut to about ``limit`` characters (``...`` and the full length appended),
    so that an error message echoing a user's value stays short whatever the value is.

    Containers are cut before they are rendered (8 items, 3 levels deep, as
    :mod:`reprlib` does), so a huge or self-repeating value costs no more than a small one.
    """
    shortener = reprlib.Repr()
    shortener.maxlevel, shortener.maxstring, shortener.maxother = 3, limit, limit
    shortener.maxlist = shortener.maxtuple = shortener.maxdict = shortener.maxset = 8
    text = shortener.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def preview(values, limit: int = 5, total: int | None = None) -> str:
    """Format the first ``limit`` items of ``values`` for a message: ``a, b, ... (+N more)``
    (``total``: how many values there are when ``values`` holds only the first of them)."""
    items = list(values)
    count = len(items) if total is None else int(total)
    shown = ", ".join(repr(v) for v in items[:limit])
    if count > limit:
        shown += f", ... (+{count - limit} more)"
    return shown
