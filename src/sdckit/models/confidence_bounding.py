"""Confidence bounding with privacy templates (Wang, Fung & Yu 2005).

K. Wang, B. C. M. Fung, P. S. Yu, "Template-based privacy preservation in classification
problems", ICDM 2005, 466-473 (extended as "Handicapping attacker's confidence: an
alternative to k-anonymization", Knowledge and Information Systems 11(3), 2007, 345-368).

A privacy template ``<X -> s, h>`` names a set ``X`` of quasi-identifiers, a sensitive value
``s`` and a threshold ``h``. For a group ``x`` of records sharing their (generalized) values
of ``X``, the confidence of inferring ``s`` is ``conf(x -> s) = |T[x and s]| / |T[x]|``; the
template holds when ``Conf(X -> s) = max_x conf(x -> s) <= h``.

Evaluation: the frequency set is projected onto each template's ``X``
(:meth:`~sdckit.core.frequency.FrequencySet.project`, as LKC-privacy does for its subsets),
the confidences of all groups are computed from the projected histogram at once, and a class
violates when the group it belongs to violates a template (mapped back with ``parent_map``),
so suppression removes whole violating groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import Field, PrivateAttr, field_validator

from sdckit.core.encoding import as_text
from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Number, Spec
from sdckit.errors import ConfigError
from sdckit.models._histograms import histogram
from sdckit.models._shares import BOUND_SLACK, SLACK, value_columns
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["ConfidenceBounding", "PrivacyTemplate"]


class PrivacyTemplate(Spec):
    """One privacy template ``<quasi_identifiers -> value, h>`` (Wang, Fung & Yu 2005).

    Parameters
    ----------
    value : str
        The sensitive value whose inference is bounded (matched as text).
    h : float
        The largest confidence allowed, in [0, 1].
    quasi_identifiers : list of str, optional
        The quasi-identifiers that form the groups; default: all of them (the groups are
        then the equivalence classes).
    """

    spec_label: ClassVar[str] = "privacy template"

    value: str
    h: Annotated[Number, Field(ge=0, le=1)]
    quasi_identifiers: list[str] | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError(f"must be one sensitive value (text or a number), got {value!r}")
        return str(as_text([value])[0])

    @field_validator("quasi_identifiers", mode="before")
    @classmethod
    def _quasi_identifiers(cls, value: Any) -> list[str] | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if (
            not isinstance(value, Sequence)
            or not value
            or not all(isinstance(c, str) and c for c in value)
        ):
            raise ValueError("must be a non-empty list of quasi-identifier names, e.g. [age, sex]")
        if len(set(value)) != len(value):
            raise ValueError(f"names a quasi-identifier twice: {list(value)!r}")
        return list(value)

    def describe(self) -> str:
        """``<age, sex -> HIV, 0.3>`` (all QIs: ``<* -> HIV, 0.3>``)."""
        x = ", ".join(self.quasi_identifiers) if self.quasi_identifiers else "all QIs"
        return f"<{x} -> {self.value}, {self.h:g}>"


def _templates(value: Any) -> Any:
    if isinstance(value, (Mapping, PrivacyTemplate)):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str) or not value:
        raise ValueError(
            "must be a non-empty list of templates, e.g. "
            "[{quasi_identifiers: [age, sex], value: HIV, h: 0.3}]"
        )
    return list(value)


class ConfidenceBounding(PrivacyModel):
    """Confidence bounding of one sensitive ``attribute`` by privacy ``templates``.

    Monotonicity: with generalization (Wang, Fung & Yu 2005: specializing can only raise
    ``Conf(X -> s)``): generalizing merges groups, and a merged group's confidence is the
    size-weighted average of its parts'. Not with suppression: a group that satisfies a
    template can violate once a suppressed (violating) group is merged into it. No class
    size bound: a one-record class without ``s`` satisfies every template. A class's verdict
    depends on the other classes of its groups (``class_local`` is false): once classes are
    suppressed the groups left are judged again
    (:func:`~sdckit.models.base.settle_group_models`).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    templates : list of PrivacyTemplate
        The templates (job file: mappings with ``value``, ``h`` and optional
        ``quasi_identifiers``).

    Examples
    --------
    >>> template = {"quasi_identifiers": ["age"], "value": "HIV", "h": 0.3}
    >>> m = ConfidenceBounding("disease", [template])
    >>> m.templates[0].describe()
    '<age -> HIV, 0.3>'
    """

    spec_name: ClassVar[str] = "confidence_bounding"
    spec_label: ClassVar[str] = "confidence bounding"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    bounds_finer_violations: ClassVar[bool] = True
    class_local: ClassVar[bool] = False

    attribute: ColumnName
    templates: list[PrivacyTemplate]

    _columns: list[int] | None = PrivateAttr(default=None)

    @field_validator("templates", mode="before")
    @classmethod
    def _templates(cls, value: Any) -> Any:
        return _templates(value)

    @property
    def name(self) -> str:
        shown = "; ".join(t.describe() for t in self.templates[:3])
        more = f"; +{len(self.templates) - 3} more" if len(self.templates) > 3 else ""
        return f"confidence bounding ({self.attribute}: {shown}{more})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    # -- preparation ---------------------------------------------------------------------
    def _check(self, fs: FrequencySet) -> list[int]:
        """Each template's histogram column (and its QIs checked against ``fs``)."""
        names = set(fs.names)
        for i, t in enumerate(self.templates):
            unknown = [q for q in t.quasi_identifiers or () if q not in names]
            if unknown:
                raise ConfigError(
                    f"{self.name}: templates[{i}] names {unknown} as quasi-identifiers, but the "
                    f"quasi-identifiers are {list(fs.names)}; name only quasi-identifiers"
                )
        cols = value_columns(
            fs, self.attribute, [t.value for t in self.templates], self.name, "template value(s)"
        )
        return [int(c) for c in cols]

    def prepare(self, base: FrequencySet) -> None:
        """Check the templates' quasi-identifiers and values against the data."""
        self._columns = self._check(base)

    def unreachable(self, base: FrequencySet) -> str | None:
        """A template with ``h < 1`` on a value that every record holds: every non-empty
        group then has confidence 1."""
        cols = self._check(base)
        counts = np.asarray(histogram(base, self.attribute, self.name).sum(axis=0)).ravel()
        total = counts.sum()
        for t, col in zip(self.templates, cols, strict=True):
            if total and counts[col] == total and t.h < 1:
                return (
                    f"{self.name}: every record has {self.attribute}={t.value!r}, so every group "
                    f"infers it with confidence 1 > h={t.h:g}; raise h to 1 or drop the template"
                )
        return None

    # -- evaluation ----------------------------------------------------------------------
    def _groups(self, fs: FrequencySet) -> list[tuple[FrequencySet, np.ndarray, list[int]]]:
        """Per distinct QI set of the templates: the projection, the class -> group map and
        the templates on it."""
        by_set: dict[tuple[str, ...], list[int]] = {}
        for i, t in enumerate(self.templates):
            x = tuple(
                q for q in fs.names if t.quasi_identifiers is None or q in t.quasi_identifiers
            )
            by_set.setdefault(x, []).append(i)
        out = []
        for x, which in by_set.items():
            if x == fs.names:
                out.append((fs, np.arange(fs.n_classes), which))
            else:
                proj = fs.project(list(x))
                assert proj.parent_map is not None
                out.append((proj, proj.parent_map, which))
        return out

    def _confidences(
        self, fs: FrequencySet
    ) -> list[tuple[int, FrequencySet, np.ndarray, np.ndarray, np.ndarray]]:
        """Per template: its index, the group frequency set, class -> group map, the groups'
        counts of the template's value and their sizes."""
        cols = self._columns if self._columns is not None else self._check(fs)
        out = []
        for groups, to_group, which in self._groups(fs):
            h = histogram(groups, self.attribute, self.name)
            for i in which:
                c = np.asarray(h[:, cols[i]].todense()).ravel().astype(np.int64)
                out.append((i, groups, to_group, c, groups.counts))
        return out

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes whose group violates a template (``conf > h``; equal to ``h``
        satisfies)."""
        violating = np.zeros(fs.n_classes, dtype=bool)
        per_template = []
        worst = 0.0
        for i, _, to_group, c, n in self._confidences(fs):
            t = self.templates[i]
            bad = c > t.h * n * (1.0 + SLACK)
            conf = c / np.maximum(n, 1)
            top = float(conf.max()) if conf.size else 0.0
            worst = max(worst, top)
            violating |= bad[to_group]
            per_template.append(
                {
                    "template": t.describe(),
                    "max_confidence": top,
                    "violating_groups": int(np.count_nonzero(bad)),
                }
            )
        details = {
            "attribute": self.attribute,
            "templates": per_template,
            "max_confidence": worst,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details)

    def finer_violations(self, fs: FrequencySet, result: ModelResult | None = None) -> float:
        """Lower bound on the violating records at every finer transformation.

        At a finer transformation each group of a template splits into groups (the QIs of
        ``X`` are at most as generalized). A group of ``n`` records, ``c`` of them with
        ``s``, keeps at least ``(c - h n) / (1 - h)`` records in violating parts: the parts
        that hold, ``W`` records, hold at most ``h W`` of ``s`` and the violating ones at
        most all of theirs (:func:`~sdckit.models._shares.finer_violations_under_caps`). A
        class violates when its group violates, so every template's sum over its groups
        bounds the violating records; the largest over the templates is returned.
        """
        best = 0.0
        for i, _, _, c, n in self._confidences(fs):
            h = self.templates[i].h
            if h >= 1:
                continue
            excess = c - h * n * (1.0 + BOUND_SLACK)
            need = np.maximum(excess, 0.0) / (1.0 - h) * (1.0 - BOUND_SLACK)
            best = max(best, float(np.minimum(need, n).sum()))
        return best
