"""Sequential conditional synthesis (synthpop-style): CART, parametric models, sampling.

The joint distribution is factorized along a *visit sequence* ``x_1, ..., x_p``:
``f(x_1) f(x_2 | x_1) ... f(x_p | x_1, ..., x_{p-1})``. Each conditional is fitted on the
original data and the synthetic records are generated variable by variable, each drawn from its
fitted conditional given the *synthetic* values of its predictors (Rubin 1993; Reiter 2005,
"Using CART to generate partially synthetic public use microdata", *J. Official Statistics*
21(3); Nowok, Raab & Dibben 2016, "synthpop: Bespoke creation of synthetic data in R",
*J. Statistical Software* 74(11)). As synthpop:

* the first variable of the sequence is drawn from its observed marginal (``sample``);
* ``cart`` (default): a classification or regression tree (minimum leaf size ``min_leaf``,
  synthpop's ``minbucket`` 5) is grown on the original data; a synthetic record is dropped down
  the tree with its synthetic predictors and its value is drawn at random from the original
  values in the leaf it reaches (Reiter 2005, sec. 3); for numeric variables ``smoothing``
  replaces the donor value by a draw from a Gaussian kernel density around it (bandwidth by
  Silverman's rule on the leaf's donors; synthpop's ``smoothing = "density"``);
* ``parametric``: normal linear regression for a numeric variable (``y = X b + e``,
  ``e ~ N(0, s^2)`` with the least-squares ``b`` and residual ``s``; synthpop's ``norm``),
  logistic / polytomous (multinomial) logistic regression for a categorical one (synthpop's
  ``logreg``/``polyreg``), each drawn from the fitted conditional distribution;
* ``sample``: the observed marginal, ignoring predictors;
* a *predictor matrix* (``predictors``: variable -> the variables its model may use) restricts
  the conditioning (default: every variable earlier in the sequence and every kept one);
* ``proper=True`` fits each copy's models on a bootstrap sample of the original (synthpop's
  ``proper = TRUE``: draws from the posterior predictive distribution, which the combining
  rules for population inference, :mod:`sdckit.synthesis.combining`, assume).

Numeric variables with missing values are synthesized in two steps, as synthpop does: first
whether the value is missing (a classification tree), then the value of the non-missing ones.

*Partial synthesis* keeps some variables as they are (``keep``): they are not synthesized, are
used as predictors of the synthesized ones, and the output has one record per original record
(:class:`Sequential` with ``keep`` and the records' own kept values). Synthesizing only the
records at risk is :class:`sdckit.synthesis.partial.Partial`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.params import column_names, integer_at_least
from sdckit.errors import DataError, ParameterError, short_repr
from sdckit.synthesis.base import ColumnKind, Synthesizer, column_kinds

__all__ = ["METHODS", "Sequential"]

#: The per-variable methods (synthpop's names: ``cart``, ``norm``/``logreg``/``polyreg`` =
#: ``parametric``, ``sample``).
METHODS = ("cart", "parametric", "sample")
#: Below this many donors a leaf's values are not smoothed (no bandwidth can be estimated).
_MIN_SMOOTH = 3
_MISSING = "\x00<missing>"


class _Predictors:
    """The design matrix of a model's predictors, encoded from the original data: numeric
    columns as they are (missing -> the original mean for the parametric models; trees split
    on missing values), categorical columns one-hot over the original's categories (a value
    not seen in the original gets no indicator)."""

    def __init__(self, data: pd.DataFrame, columns: Sequence[str], kinds: Mapping[str, str]):
        self.columns = list(columns)
        self.kinds = {c: kinds[c] for c in columns}
        self.categories: dict[str, pd.Index] = {}
        self.means: dict[str, float] = {}
        self.scales: dict[str, float] = {}
        for c in self.columns:
            if self.kinds[c] == "categorical":
                self.categories[c] = pd.Index(pd.unique(_as_category(data[c])))
            else:
                x = data[c].to_numpy(dtype=np.float64, na_value=np.nan)
                ok = ~np.isnan(x)
                self.means[c] = float(x[ok].mean()) if ok.any() else 0.0
                sd = float(x[ok].std()) if ok.sum() > 1 else 0.0
                self.scales[c] = sd if sd > 0 else 1.0

    def matrix(self, data: pd.DataFrame, *, impute: bool = False) -> np.ndarray:
        """``len(data) x width`` float matrix (``impute``: missing numerics -> mean, numerics
        z-scored, for the regression models)."""
        blocks: list[np.ndarray] = []
        for c in self.columns:
            if self.kinds[c] == "categorical":
                cats = self.categories[c]
                codes = cats.get_indexer(_as_category(data[c]))
                onehot = np.zeros((len(data), len(cats)), dtype=np.float32)
                ok = codes >= 0
                onehot[np.flatnonzero(ok), codes[ok]] = 1.0
                blocks.append(onehot[:, 1:] if impute else onehot)
            else:
                x = data[c].to_numpy(dtype=np.float64, na_value=np.nan)
                if impute:
                    x = np.where(np.isnan(x), self.means[c], x)
                    x = (x - self.means[c]) / self.scales[c]
                blocks.append(x.astype(np.float32)[:, None])
        if not blocks:
            return np.zeros((len(data), 0), dtype=np.float32)
        return np.hstack(blocks)


def _as_category(values: pd.Series) -> np.ndarray:
    """Categorical values as objects, missing as one category of its own."""
    out = values.to_numpy(dtype=object, copy=True)
    out[pd.isna(values).to_numpy()] = _MISSING
    return out


@dataclass
class _Donors:
    """A fitted tree's leaves with the original values in each (sorted by leaf)."""

    tree: Any
    leaves: np.ndarray  # sorted leaf id per donor
    values: np.ndarray  # donor values in the same order
    bandwidth: np.ndarray | None = None  # per donor: its leaf's smoothing bandwidth

    @classmethod
    def grow(
        cls, x: np.ndarray, y: np.ndarray, *, categorical: bool, min_leaf: int, smooth: bool
    ) -> _Donors:
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        if categorical:
            _, target = np.unique(y, return_inverse=True)
            tree = DecisionTreeClassifier(min_samples_leaf=min_leaf, random_state=0)
        else:
            target = y.astype(np.float64)
            tree = DecisionTreeRegressor(min_samples_leaf=min_leaf, random_state=0)
        tree.fit(x, target)
        leaf = tree.apply(x)
        order = np.argsort(leaf, kind="stable")
        donors = cls(tree, leaf[order], y[order])
        if smooth and not categorical:
            donors.bandwidth = _leaf_bandwidths(donors.leaves, donors.values.astype(np.float64))
        return donors

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One donor value per row of ``x``: uniform among the donors of its leaf."""
        leaf = self.tree.apply(x)
        lo = np.searchsorted(self.leaves, leaf, side="left")
        hi = np.searchsorted(self.leaves, leaf, side="right")
        pick = lo + np.floor(rng.random(len(leaf)) * (hi - lo)).astype(np.int64)
        values = self.values[pick]
        if self.bandwidth is not None:
            values = (
                values.astype(np.float64) + rng.standard_normal(len(pick)) * self.bandwidth[pick]
            )
        return values


def _leaf_bandwidths(leaves: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per donor, the Gaussian kernel bandwidth of its leaf: Silverman's rule of thumb
    ``0.9 min(sd, IQR / 1.34) n^(-1/5)`` (Silverman 1986, eq. 3.31; R's ``bw.nrd0``, which
    synthpop's density smoothing uses), 0 for leaves with fewer than 3 donors or no spread."""
    frame = pd.DataFrame({"leaf": leaves, "v": values})
    g = frame.groupby("leaf", sort=False)["v"]
    sd = g.std(ddof=1)
    iqr = g.quantile(0.75) - g.quantile(0.25)
    n = g.size()
    spread = np.minimum(sd, iqr / 1.34)
    spread = spread.where(spread > 0, sd)
    bw = (0.9 * spread * n ** (-0.2)).where(n >= _MIN_SMOOTH, 0.0).fillna(0.0)
    return bw.reindex(leaves).to_numpy(dtype=np.float64)


@dataclass
class _Model:
    """One variable's fitted conditional model."""

    column: str
    kind: ColumnKind
    method: str
    predictors: list[str]
    design: _Predictors | None = None
    donors: _Donors | None = None  # cart
    missing: _Donors | None = None  # cart/parametric numeric with missing values
    marginal: np.ndarray | None = None  # sample (and the first variable)
    coef: np.ndarray | None = None  # parametric numeric
    sigma: float = 0.0
    classifier: Any = None  # parametric categorical
    classes: np.ndarray | None = None

    def describe(self) -> dict[str, Any]:
        """JSON-ready: the variable's method and predictors."""
        return {"column": self.column, "method": self.method, "predictors": self.predictors}


class Sequential(Synthesizer):
    """Sequential conditional synthesis (module docstring; synthpop's ``syn``).

    Parameters
    ----------
    method:
        ``cart`` (default), ``parametric`` or ``sample`` for every variable, or a mapping
        variable -> method (variables not named get ``cart``).
    visit_sequence:
        The order in which variables are synthesized (default: the data's column order, kept
        variables excluded). Variables left out of a given sequence are kept as they are.
    predictors:
        Predictor matrix: variable -> the variables its model may condition on (each must be
        earlier in the sequence or kept). Default: all earlier and all kept variables.
    keep:
        Variables kept as they are (partial synthesis); the output then has one record per
        original record, in the original order, and ``n`` must equal the original size.
    min_leaf:
        Minimum number of original records in a tree leaf (synthpop's ``minbucket``, 5).
    smoothing:
        Kernel-density smoothing of the numeric values a tree draws (default False).
    proper:
        Fit every sampled copy on a bootstrap sample of the original (default False).
    categorical, numeric:
        Force a column's kind (default: by dtype, :func:`~sdckit.synthesis.base.column_kinds`).
    """

    name = "cart"

    def __init__(
        self,
        *,
        method: str | Mapping[str, str] = "cart",
        visit_sequence: Sequence[str] | None = None,
        predictors: Mapping[str, Sequence[str]] | None = None,
        keep: Sequence[str] = (),
        min_leaf: int = 5,
        smoothing: bool = False,
        proper: bool = False,
        categorical: Sequence[str] = (),
        numeric: Sequence[str] = (),
    ) -> None:
        super().__init__()
        if isinstance(method, str):
            _check_method(method, "method")
        elif isinstance(method, Mapping):
            for col, m in method.items():
                _check_method(m, f"method[{col!r}]")
        else:
            raise ParameterError(
                f"{self.name}: method must be one of {', '.join(METHODS)} or a mapping column -> "
                f"method, got {method!r}"
            )
        integer_at_least(min_leaf, 1, self.name, "min_leaf")
        for flag, value in (("smoothing", smoothing), ("proper", proper)):
            if not isinstance(value, bool):
                raise ParameterError(f"{self.name}: {flag} must be true or false, got {value!r}")
        self.method = method
        if method == "parametric":
            self.name = "parametric"
        self.visit_sequence = (
            column_names(visit_sequence, self.name, "visit_sequence")
            if visit_sequence is not None
            else None
        )
        if predictors is not None and not isinstance(predictors, Mapping):
            raise ParameterError(
                f"{self.name}: predictors must map each variable to the variables its model "
                f"may condition on, e.g. {{income: [age, sex]}}, got {short_repr(predictors)}"
            )
        self.predictors = {
            k: column_names(v, self.name, f"predictors[{k!r}]")
            for k, v in (predictors or {}).items()
        }
        self.keep = column_names(keep, self.name, "keep")
        self.min_leaf = int(min_leaf)
        self.smoothing = smoothing
        self.proper = proper
        self.categorical = column_names(categorical, self.name, "categorical")
        self.numeric = column_names(numeric, self.name, "numeric")
        self._data: pd.DataFrame | None = None
        self._models: list[_Model] = []
        self._kinds: dict[str, ColumnKind] = {}
        self._sequence: list[str] = []

    # -- fitting ---------------------------------------------------------------------------
    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        cols = list(data.columns)
        for name, given in (
            ("keep", self.keep),
            ("categorical", self.categorical),
            ("numeric", self.numeric),
            ("visit_sequence", self.visit_sequence or []),
            ("predictors", list(self.predictors)),
            ("method", list(self.method) if isinstance(self.method, Mapping) else []),
        ):
            _check_columns(given, cols, f"{self.name}: {name}")
        for col, preds in self.predictors.items():
            _check_columns(preds, cols, f"{self.name}: predictors[{col!r}]")
        self._kinds = column_kinds(data, self.categorical, self.numeric)
        kept = set(self.keep)
        if self.visit_sequence is not None:
            seq = list(self.visit_sequence)
            clash = [c for c in seq if c in kept]
            if clash:
                raise ParameterError(
                    f"{self.name}: {clash[0]!r} is both kept and in the visit sequence; a kept "
                    "variable is not synthesized"
                )
            if len(set(seq)) != len(seq):
                raise ParameterError(f"{self.name}: visit_sequence names a variable twice")
            self.keep = [c for c in cols if c in kept or c not in seq]
            kept = set(self.keep)
        else:
            seq = [c for c in cols if c not in kept]
        if not seq:
            raise ParameterError(f"{self.name}: nothing to synthesize (every variable is kept)")
        self._sequence = seq
        self._data = data.reset_index(drop=True)
        self._models = self._fit_models(self._data, rng if self.proper else None)
        self.details = {
            "visit_sequence": seq,
            "kept": self.keep,
            "models": [m.describe() for m in self._models],
            "min_leaf": self.min_leaf,
            "smoothing": self.smoothing,
            "proper": self.proper,
            "kinds": dict(self._kinds),
        }

    def _fit_models(self, data: pd.DataFrame, bootstrap: np.random.Generator | None) -> list:
        if bootstrap is not None:
            data = data.iloc[bootstrap.integers(0, len(data), len(data))].reset_index(drop=True)
        models = []
        done = list(self.keep)
        for col in self._sequence:
            method = self._method_of(col)
            if col in self.predictors:
                preds = self.predictors[col]
                late = [p for p in preds if p not in done]
                if late:
                    raise ParameterError(
                        f"{self.name}: predictors[{col!r}] names {late[0]!r}, which is "
                        "synthesized after it; reorder visit_sequence or drop that predictor"
                    )
            else:
                preds = list(done)
            if not preds:
                method = "sample"
            models.append(self._fit_one(data, col, method, preds))
            done.append(col)
        return models

    def _method_of(self, col: str) -> str:
        if isinstance(self.method, Mapping):
            return self.method.get(col, "cart")
        return self.method

    def _fit_one(self, data: pd.DataFrame, col: str, method: str, preds: list[str]) -> _Model:
        kind = self._kinds[col]
        model = _Model(col, kind, method, preds)
        y = data[col]
        if method == "sample":
            model.marginal = y.to_numpy(dtype=object if kind == "categorical" else np.float64)
            return model
        design = _Predictors(data, preds, self._kinds)
        model.design = design
        if kind == "numeric":
            values = y.to_numpy(dtype=np.float64, na_value=np.nan)
            present = ~np.isnan(values)
            if not present.any():
                model.marginal = values
                model.method = "sample"
                return model
            if not present.all():
                x_all = design.matrix(data)
                model.missing = _Donors.grow(
                    x_all, present, categorical=True, min_leaf=self.min_leaf, smooth=False
                )
            sub = data.loc[present]
            values = values[present]
        else:
            sub = data
            values = _as_category(y)
        if method == "cart":
            model.donors = _Donors.grow(
                design.matrix(sub),
                values,
                categorical=kind == "categorical",
                min_leaf=self.min_leaf,
                smooth=self.smoothing,
            )
        elif kind == "numeric":
            x = _with_intercept(design.matrix(sub, impute=True))
            coef, *_ = np.linalg.lstsq(x, values, rcond=None)
            resid = values - x @ coef
            dof = max(len(values) - x.shape[1], 1)
            model.coef, model.sigma = coef, float(np.sqrt(resid @ resid / dof))
        else:
            model.classifier, model.classes = _fit_logistic(design.matrix(sub, impute=True), values)
        return model

    # -- sampling --------------------------------------------------------------------------
    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        assert self._data is not None
        models = self._models
        if self.proper:
            models = self._fit_models(self._data, rng)
        if self.keep:
            if n != len(self._data):
                raise ParameterError(
                    f"{self.name}: partial synthesis keeps {', '.join(self.keep)} of each "
                    f"original record, so it makes {len(self._data):,} records, not {n:,}"
                )
            out = self._data[self.keep].copy()
        else:
            out = pd.DataFrame(index=pd.RangeIndex(n))
        for model in models:
            out[model.column] = _draw(model, out, n, rng)
        return out[list(self._data.columns)]


def _draw(model: _Model, synthetic: pd.DataFrame, n: int, rng: np.random.Generator) -> Any:
    """Synthetic values of ``model.column`` given the synthetic predictors so far."""
    if model.method == "sample":
        assert model.marginal is not None
        values = model.marginal[rng.integers(0, len(model.marginal), n)]
        return _from_category(values) if model.kind == "categorical" else values
    assert model.design is not None
    if model.kind == "categorical":
        x = model.design.matrix(synthetic, impute=model.method == "parametric")
        return _from_category(_draw_values(model, x, rng))
    out = np.full(n, np.nan)
    present = np.ones(n, dtype=bool)
    if model.missing is not None:
        present = model.missing.draw(model.design.matrix(synthetic), rng).astype(bool)
    if present.any():
        sub = synthetic.loc[present] if not present.all() else synthetic
        x = model.design.matrix(sub, impute=model.method == "parametric")
        out[present] = _draw_values(model, x, rng)
    return out


def _draw_values(model: _Model, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if model.method == "cart":
        assert model.donors is not None
        return model.donors.draw(x, rng)
    if model.kind == "numeric":
        assert model.coef is not None
        mean = _with_intercept(x) @ model.coef
        return mean + rng.standard_normal(len(mean)) * model.sigma
    assert model.classes is not None
    if model.classifier is None:  # one class only
        return np.repeat(model.classes, len(x))
    proba = model.classifier.predict_proba(x)
    cum = np.cumsum(proba, axis=1)
    u = rng.random(len(x))[:, None] * cum[:, -1:]
    pick = np.minimum((u >= cum).sum(axis=1), len(model.classes) - 1)
    return model.classes[pick]


def _fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
    """Polytomous (multinomial) logistic regression of ``y`` on ``x`` (logistic for two
    classes; synthpop's ``logreg``/``polyreg``), lightly penalized so that separable data
    still gives finite coefficients."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    classes = np.unique(y)
    if len(classes) == 1:
        return None, classes
    clf = LogisticRegression(C=1.0, max_iter=200, tol=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x, y)
    return clf, clf.classes_


def _with_intercept(x: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(x), 1)), x.astype(np.float64)])


def _from_category(values: np.ndarray) -> np.ndarray:
    out = np.asarray(values, dtype=object).copy()
    out[out == _MISSING] = None
    return out


def _check_method(method: Any, where: str) -> None:
    if method not in METHODS:
        raise ParameterError(
            f"cart: {where} must be one of {', '.join(METHODS)}, got {method!r} (cart: trees, "
            "parametric: regression models, sample: the observed marginal)"
        )


def _check_columns(given: Sequence[str], columns: Sequence[str], where: str) -> None:
    from sdckit.core.spec import did_you_mean

    for c in given:
        if c not in columns:
            names = ", ".join(map(str, columns))
            raise DataError(
                f"{where}: column {c!r} is not in the data (columns: {names})"
                f"{did_you_mean(c, columns)}"
            )
