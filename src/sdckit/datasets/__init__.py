"""Bundled demo data: the Adult census extract with ARX's generalization hierarchies.

Adult (UCI, CC BY 4.0), 30,162 records, 9 columns, as distributed with ARX (Apache-2.0) and
used throughout the k-anonymity literature (Kohlmayer et al. 2012, Prasser et al. 2014).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from sdckit.core.hierarchy import Hierarchy, read_hierarchy
from sdckit.core.io import read_table

ADULT_COLUMNS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)


@dataclass(frozen=True)
class DemoData:
    """A bundled data set: its rows, hierarchies and the file paths they came from."""

    data: pd.DataFrame
    hierarchies: dict[str, Hierarchy]
    path: Path
    hierarchy_paths: dict[str, Path]

    def __iter__(self):
        """Allow ``df, hierarchies = load_adult()``."""
        return iter((self.data, self.hierarchies))


def data_dir() -> Path:
    """Directory holding the bundled data files."""
    return Path(str(resources.files("sdckit.datasets") / "data"))


def load_adult() -> DemoData:
    """Load Adult (30,162 x 9, all text) and its 9 ARX hierarchies.

    ``df, hierarchies = sdckit.datasets.load_adult()`` works, as does ``.data``/``.hierarchies``.
    """
    base = data_dir()
    path = base / "adult.csv"
    df = read_table(path, delimiter=";")
    paths = {c: base / f"adult_hierarchy_{c}.csv" for c in ADULT_COLUMNS}
    hierarchies = {c: read_hierarchy(p, name=c) for c, p in paths.items()}
    return DemoData(df, hierarchies, path, paths)
