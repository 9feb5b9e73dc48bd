"""The peer synthesizers of ``bench_synthesis.py``, run in the peers' own virtual environments.

Each ``worker_*`` function reads the Adult CSV (``;``-separated), fits the peer's synthesizer and
samples as many records as the original once per seed, writes each synthetic file as a
comma-separated CSV into ``out_dir`` and returns ``{"versions": {...}, "runs": [{"seed",
"seconds", "cpu", "path"}, ...]}``. ``seconds`` is the wall time (``cpu`` the CPU time, all
threads) of fit + sample of that seed in the worker's process (reading the CSV, importing the
library and writing the output are not timed; the first seed pays the process's one-time
costs, e.g. JIT compilation).

This module imports only numpy, pandas and the standard library at module level: the peers'
environments have nothing of sdckit.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The only numeric column of the Adult extract (an integer); the others are categorical.
NUMERIC = ("age",)
EPSILON = 1.0
DELTA = 1e-6


def read_adult(path: Path) -> pd.DataFrame:
    """The Adult extract as the benchmark reads it everywhere (``;``-separated, age int)."""
    return pd.read_csv(path, sep=";")


def versions(*packages: str) -> dict[str, str]:
    """Installed version of each package ("missing" when not installed)."""
    found = {}
    for name in packages:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def _seed_everything(seed: int) -> None:
    """Seed the global generators that the peers draw from (numpy, random, torch if present)."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the peers draw from numpy's global generator
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)


def _runs(
    data: pd.DataFrame,
    seeds: Sequence[int],
    out_dir: Path,
    tag: str,
    synthesize: Callable[[pd.DataFrame, int], pd.DataFrame],
) -> list[dict[str, Any]]:
    """Time ``synthesize(data, seed)`` for every seed; write each output; the runs' records."""
    runs = []
    for seed in seeds:
        _seed_everything(seed)
        t0, c0 = time.perf_counter(), time.process_time()
        synthetic = synthesize(data, seed)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        path = out_dir / f"{tag}-seed{seed}.csv"
        synthetic.to_csv(path, index=False)
        runs.append({"seed": seed, "seconds": seconds, "cpu": cpu, "path": str(path)})
    return runs


# -- python-synthpop (Algorithm Audit's Python port of R synthpop's CART) -------------------------


def worker_synthpop_cart(data_path: Path, seeds: Sequence[int], out_dir: Path) -> dict[str, Any]:
    """``synthpop.CARTMethod`` of python-synthpop with its defaults (``minibucket=5``, no
    smoothing, not ``proper``).

    The package's own ``DataProcessor`` cannot encode this data: for a column of 10 or more
    categories it builds ``OneHotEncoder(sparse=False)`` (an argument scikit-learn 1.4 removed),
    and its one-hot path then drops the encoded columns. So every categorical column is
    label-encoded here, as ``DataProcessor`` does for its columns of fewer than 10 categories
    (integer codes of the sorted categories, ``categorical`` in the metadata, so that the column
    gets a ``DecisionTreeClassifier``), and decoded back after sampling; age stays numeric.
    Encoding and decoding are inside the timed region.
    """
    from synthpop import CARTMethod

    def synthesize(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
        metadata, categories, coded = {}, {}, {}
        for c in frame.columns:
            if c in NUMERIC:
                metadata[c] = "numerical"
                coded[c] = frame[c]
            else:
                metadata[c] = "categorical"
                codes, uniques = pd.factorize(frame[c], sort=True)
                categories[c] = np.asarray(uniques, dtype=object)
                coded[c] = codes
        model = CARTMethod(metadata, smoothing=False, proper=False, minibucket=5, random_state=seed)
        model.fit(pd.DataFrame(coded))
        out = model.sample(len(frame))
        return pd.DataFrame(
            {
                c: categories[c][out[c].astype(np.int64).to_numpy()]
                if c in categories
                else np.round(out[c].astype(np.float64)).astype(np.int64)
                for c in frame.columns
            }
        )

    data = read_adult(data_path)
    runs = _runs(data, seeds, out_dir, "synthpop-cart", synthesize)
    return {"versions": versions("python-synthpop", "scikit-learn"), "runs": runs}


# -- SDV -------------------------------------------------------------------------------------------


def worker_sdv_gaussian_copula(
    data_path: Path, seeds: Sequence[int], out_dir: Path
) -> dict[str, Any]:
    """SDV's ``GaussianCopulaSynthesizer`` with its defaults (beta marginals for numerical
    columns, its categorical encoding), metadata declared (age numerical, the rest
    categorical) rather than detected. Seeded through numpy's, random's and torch's global
    generators (SDV has no seed argument)."""
    import warnings

    from sdv.metadata import Metadata
    from sdv.single_table import GaussianCopulaSynthesizer

    warnings.filterwarnings("ignore", category=FutureWarning)
    data = read_adult(data_path)
    columns = {c: {"sdtype": "numerical" if c in NUMERIC else "categorical"} for c in data}
    metadata = Metadata.load_from_dict(
        {"tables": {"adult": {"columns": columns}}, "relationships": [],
         "METADATA_SPEC_VERSION": "V1"}
    )  # fmt: skip

    def synthesize(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
        model = GaussianCopulaSynthesizer(metadata)
        try:
            model.fit({"adult": frame})  # SDV 2: a dict of tables, even for one table
        except Exception:  # noqa: BLE001 - SDV 1.x takes the DataFrame itself
            model = GaussianCopulaSynthesizer(metadata)
            model.fit(frame)
        out = model.sample(len(frame))
        return out["adult"] if isinstance(out, dict) else out

    runs = _runs(data, seeds, out_dir, "sdv-gaussiancopula", synthesize)
    return {"versions": versions("sdv", "copulas", "rdt", "torch"), "runs": runs}


# -- MST on mbi (private-pgm) ----------------------------------------------------------------------


def cdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP implies (epsilon, delta)-DP by the conversion of Canonne,
    Kamath & Steinke 2020 ("The discrete Gaussian for differential privacy", Prop. 12):
    ``delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a`` (the
    conversion MST's reference implementation and smartnoise-synth use)."""
    from scipy.optimize import minimize_scalar

    def log_delta(rho: float) -> float:
        def f(log_a1: float) -> float:  # a = 1 + exp(log_a1) > 1
            a = 1.0 + np.exp(log_a1)
            return (a - 1) * (a * rho - epsilon) + a * np.log1p(-1 / a) - np.log(a - 1)

        return float(minimize_scalar(f, bounds=(-20.0, 20.0), method="bounded").fun)

    lo, hi = 0.0, epsilon + 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if log_delta(mid) <= np.log(delta):
            lo = mid
        else:
            hi = mid
    return lo


def mst_mbi(frame: pd.DataFrame, seed: int, epsilon: float, delta: float) -> pd.DataFrame:
    """MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest: a scalable and general
    approach to differentially private synthetic data", JPC 11(3)) on mbi's estimator.

    rho = :func:`cdp_rho` (epsilon, delta), a third each for: (1) all 1-way marginals with
    Gaussian noise; values whose noisy count is below 3 standard deviations are merged into one
    value per column (domain compression); (2) the maximum spanning tree of the 2-way marginals,
    edge weight the L1 distance between the true 2-way marginal and that of the model fitted to
    the 1-way measurements, chosen edge by edge (Kruskal) with the exponential mechanism at
    ``sqrt(8 (rho/3) / (d - 1))`` per edge; (3) the d - 1 chosen 2-way marginals with Gaussian
    noise. mbi's ``MirrorDescent`` then fits a graphical model to all the measurements, and
    ``synthetic_data`` draws the records, decompressed uniformly within the merged values.
    Mirror descent runs 1000 iterations for the model of step (2) and 5000 for the final one
    (smartnoise-synth's choice; MST's reference code runs 2500 and 10000); the number of
    records is estimated from the measurements (mbi's default).

    The domain of each column is public: the sorted categories of the data, and for age every
    integer from its minimum to its maximum.
    """
    from mbi import Dataset, Domain, LinearMeasurement
    from mbi.estimation import MirrorDescent
    from scipy.special import logsumexp

    rng = np.random.default_rng(seed)
    attrs = list(frame.columns)
    labels: dict[str, np.ndarray] = {}
    codes: dict[str, np.ndarray] = {}
    for c in attrs:
        if c in NUMERIC:
            lo, hi = int(frame[c].min()), int(frame[c].max())
            labels[c] = np.arange(lo, hi + 1)
            codes[c] = frame[c].to_numpy(dtype=np.int64) - lo
        else:
            values, uniques = pd.factorize(frame[c], sort=True)
            labels[c] = np.asarray(uniques, dtype=object)
            codes[c] = values.astype(np.int64)
    domain = Domain(attrs, [len(labels[c]) for c in attrs])
    data = Dataset(codes, domain)
    rho = cdp_rho(epsilon, delta)
    sigma = np.sqrt(3.0 / (2.0 * rho))  # rho / 3 for each of the three steps
    d = len(attrs)

    def measure(dataset: Any, cliques: list[tuple[str, ...]]) -> list[Any]:
        # equal weights normalized to unit L2 norm: each marginal gets sigma * sqrt(k)
        scale = sigma * np.sqrt(len(cliques))
        out = []
        for clique in cliques:
            x = np.asarray(dataset.project(clique).datavector(), dtype=np.float64)
            y = x + rng.normal(0.0, scale, size=x.size)
            out.append(LinearMeasurement(y, clique, stddev=scale))
        return out

    # (1) one-way marginals, then domain compression
    one_way = measure(data, [(c,) for c in attrs])
    mapping: dict[str, np.ndarray] = {}
    for m in one_way:
        y = np.asarray(m.noisy_measurement)
        keep = y >= 3 * m.stddev
        if keep.all() or not keep.any():
            continue
        new = np.full(y.size, int(keep.sum()), dtype=np.int64)
        new[keep] = np.arange(int(keep.sum()))
        mapping[m.clique[0]] = new
    small = data.compress(mapping) if mapping else data
    one_way = [m.compress(mapping, domain) for m in one_way]

    # (2) the spanning tree, edge by edge with the exponential mechanism
    # the number of records is estimated from the noisy measurements (mbi's default), as in
    # MST's reference code: the exact count is not public under add/remove-one neighbours
    model = MirrorDescent().estimate(small.domain, one_way, iters=1000)
    pairs = [(a, b) for i, a in enumerate(attrs) for b in attrs[i + 1 :]]
    score = {}
    for a, b in pairs:
        x = np.asarray(small.project((a, b)).datavector(), dtype=np.float64)
        xhat = np.asarray(model.project((a, b)).datavector(), dtype=np.float64)
        score[a, b] = float(np.abs(x - xhat).sum())
    component = {c: c for c in attrs}

    def root(c: str) -> str:
        while component[c] != c:
            c = component[c]
        return c

    eps_edge = np.sqrt(8.0 * (rho / 3.0) / (d - 1))
    tree: list[tuple[str, ...]] = []
    for _ in range(d - 1):
        candidates = [e for e in pairs if root(e[0]) != root(e[1])]
        q = np.array([score[e] for e in candidates])
        logits = 0.5 * eps_edge * q  # sensitivity 1
        chosen = candidates[rng.choice(len(candidates), p=np.exp(logits - logsumexp(logits)))]
        component[root(chosen[0])] = root(chosen[1])
        tree.append(chosen)

    # (3) the tree's two-way marginals; fit; sample
    two_way = measure(small, tree)
    model = MirrorDescent().estimate(small.domain, one_way + two_way, iters=5000)
    synthetic = model.synthetic_data(rows=len(frame))
    if mapping:
        synthetic = synthetic.decompress(mapping)
    return pd.DataFrame(
        {c: labels[c][np.asarray(synthetic.data[c], dtype=np.int64)] for c in attrs}
    )


def worker_mbi_mst(data_path: Path, seeds: Sequence[int], out_dir: Path) -> dict[str, Any]:
    """MST on mbi (:func:`mst_mbi`) at epsilon 1, delta 1e-6, jax in float64."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)  # no cache shared across runs
    data = read_adult(data_path)
    runs = _runs(
        data, seeds, out_dir, "mbi-mst", lambda frame, seed: mst_mbi(frame, seed, EPSILON, DELTA)
    )
    out = {"versions": versions("mbi", "jax", "jaxlib"), "runs": runs}
    out["rho"] = cdp_rho(EPSILON, DELTA)
    return out


# -- smartnoise-synth ------------------------------------------------------------------------------


def worker_smartnoise(
    name: str, data_path: Path, seeds: Sequence[int], out_dir: Path
) -> dict[str, Any]:
    """smartnoise-synth's ``Synthesizer.create(name, epsilon=1.0, delta=1e-6)`` (``mst`` or
    ``aim``, their other parameters at the defaults), fitted with the 8 text columns declared
    categorical and age ordinal, so that no budget goes to preprocessing
    (``preprocessor_eps=0``; the transformer takes each column's domain from the data). The
    noise comes from OpenDP's samplers and cannot be seeded: the seed only fixes numpy's global
    generator."""
    import warnings

    from snsynth import Synthesizer

    warnings.filterwarnings("ignore", category=UserWarning)
    data = read_adult(data_path)
    categorical = [c for c in data.columns if c not in NUMERIC]

    def synthesize(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
        model = Synthesizer.create(name, epsilon=EPSILON, delta=DELTA)
        model.fit(
            frame,
            categorical_columns=categorical,
            ordinal_columns=list(NUMERIC),
            preprocessor_eps=0.0,
        )
        out = model.sample(len(frame))
        return pd.DataFrame(out, columns=frame.columns)

    runs = _runs(data, seeds, out_dir, f"smartnoise-{name}", synthesize)
    return {"versions": versions("smartnoise-synth", "mbi", "opendp", "jax"), "runs": runs}


WORKERS: dict[str, Callable[[Path, Sequence[int], Path], dict[str, Any]]] = {
    "synthpop-cart": worker_synthpop_cart,
    "sdv-gaussiancopula": worker_sdv_gaussian_copula,
    "mbi-mst": worker_mbi_mst,
    "smartnoise-mst": lambda p, s, o: worker_smartnoise("mst", p, s, o),
    "smartnoise-aim": lambda p, s, o: worker_smartnoise("aim", p, s, o),
}
