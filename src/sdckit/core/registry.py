"""Named methods of one family, each with its traits, loaded when first used.

One mechanism for every "a named method with parameters" of sdckit -- the privacy models, the
anonymization algorithms, the masking methods, the table methods, the hierarchy builders and
the engines a job runs on: a :class:`Registry` maps each job-file name (and its accepted
aliases) to the object it names and to a small frozen *traits* dataclass that says what the
method needs and where it runs (as scikit-learn's estimator tags: Buitinck et al., "API design
for machine learning software: experiences from the scikit-learn project", ECML PKDD 2013
workshop, and ``sklearn.utils._tags``). Each family declares its own traits class.

An entry's target is the object itself or a ``"package.module:attribute"`` path, imported on
the first :meth:`Registry.load` and kept: listing the names and reading the traits import
nothing, so a command that only validates a job file stays cheap, and a registry in a lower
layer may name an implementation in a higher one (the Spark engine) without importing it.
The contract tests (``tests/test_contracts.py``) loop over the registries, so a method added
to one is checked like the others.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = ["Entry", "NoTraits", "Registry"]

T = TypeVar("T")


@dataclass(frozen=True)
class NoTraits:
    """The traits of a family whose members differ in nothing a caller needs to know."""


@dataclass
class Entry(Generic[T]):
    """One registered method: its job-file ``name``, accepted ``aliases``, ``traits`` and
    ``target`` (the object, or the ``"module:attribute"`` path it is loaded from)."""

    name: str
    target: Any
    traits: T
    aliases: tuple[str, ...] = ()
    _loaded: Any = field(default=None, repr=False)

    def load(self) -> Any:
        """The object the entry names, imported on first use when given as a path."""
        if self._loaded is None:
            target = self.target
            if isinstance(target, str):
                module, _, attribute = target.partition(":")
                if not attribute:
                    raise ValueError(f"registry target {target!r} is not 'module:attribute'")
                target = getattr(importlib.import_module(module), attribute)
            self._loaded = target
        return self._loaded


class Registry(Generic[T]):
    """The methods of one ``family`` (``"algorithm"``, ``"masking method"``, ...) by name.

    ``default_traits`` is what :meth:`add` records for an entry given no traits. Names are
    kept in the order they were added; an alias resolves to its entry everywhere a name is
    accepted, but :meth:`names` and iteration list each entry once, by its own name.
    """

    def __init__(self, family: str, default_traits: T) -> None:
        self.family = family
        self.default_traits = default_traits
        self._entries: dict[str, Entry[T]] = {}
        self._by_name: dict[str, Entry[T]] = {}

    def add(
        self, name: str, target: Any, traits: T | None = None, *, aliases: tuple[str, ...] = ()
    ) -> Entry[T]:
        """Register ``target`` under ``name`` (and ``aliases``); a name already taken by
        another target is a programming error (``TypeError``). Adding the same target again
        (a module re-imported) replaces the entry."""
        entry = Entry(name, target, self.default_traits if traits is None else traits, aliases)
        for key in (name, *aliases):
            other = self._by_name.get(key)
            if other is not None and not _same_target(other.target, target):
                raise TypeError(f"{self.family} name {key!r} is taken by {other.target!r}")
        old = self._entries.pop(name, None)
        if old is not None:
            for key in (old.name, *old.aliases):
                self._by_name.pop(key, None)
        self._entries[name] = entry
        for key in (name, *aliases):
            self._by_name[key] = entry
        return entry

    def names(self) -> tuple[str, ...]:
        """Every entry's own name, in registration order (aliases left out)."""
        return tuple(self._entries)

    def all_names(self) -> tuple[str, ...]:
        """Every accepted name: the entries' names, then the aliases."""
        return tuple(self._entries) + tuple(k for k in self._by_name if k not in self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def entry(self, name: str) -> Entry[T]:
        """The entry ``name`` (or an alias) names; ``KeyError`` with :meth:`unknown` as its
        message for any other name."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(self.unknown(name)) from None

    def canonical(self, name: str) -> str:
        """The entry's own name for ``name`` or one of its aliases."""
        return self.entry(name).name

    def load(self, name: str) -> Any:
        """The object ``name`` names (imported on first use)."""
        return self.entry(name).load()

    def traits(self, name: str) -> T:
        """The traits of the entry ``name`` names (nothing is imported)."""
        return self.entry(name).traits

    def where(self, predicate: Callable[[T], bool]) -> tuple[str, ...]:
        """The names of the entries whose traits satisfy ``predicate``, in order."""
        return tuple(n for n, e in self._entries.items() if predicate(e.traits))

    def unknown(self, name: str) -> str:
        """The message for a name that is no entry: the accepted names, the closest first."""
        close = difflib.get_close_matches(str(name), self.all_names(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {self.family} {name!r}{hint}; choose one of: " + ", ".join(self.names())


def _same_target(a: Any, b: Any) -> bool:
    """Whether two targets name the same object (a class re-defined by a module re-import
    counts as the same: same module and qualified name)."""
    if a is b or a == b:
        return True
    key = lambda t: (getattr(t, "__module__", None), getattr(t, "__qualname__", None))  # noqa: E731
    return not isinstance(a, str) and not isinstance(b, str) and key(a) == key(b) != (None, None)
