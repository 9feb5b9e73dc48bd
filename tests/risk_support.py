"""Shared test data of the risk measures' tests: seeded near-unique key variables."""

from __future__ import annotations

import numpy as np
import pandas as pd


def near_unique_keys(n: int = 3000, seed: int = 11) -> pd.DataFrame:
    """Census-like keys where most records are unique: age, sex, a long-tailed ZIP code,
    birth month and day (seeded)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(0, 90, n),
            "sex": rng.integers(0, 2, n),
            "zip": np.minimum((rng.pareto(0.8, n) * 20).astype(int), 499),
            "month": rng.integers(1, 13, n),
            "day": rng.integers(1, 29, n),
        }
    ).astype(str)
