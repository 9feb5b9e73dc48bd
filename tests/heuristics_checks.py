"""Independent checks of heuristic anonymizer outputs, recomputed from the released rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from sdckit.core.encoding import EncodedColumn, encode
from sdckit.core.frequency import (
    QuasiIdentifier,
    build_frequency_set,
    encode_ordered,
    encode_quasi_identifier,
)
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.schema import Schema


def released_frequency_set(
    out: AlgorithmOutput, data: pd.DataFrame, schema: Schema, models, class_columns=None
):
    """Prepare ``models`` on the original data; frequency set of the released, kept rows.

    Classes are the combinations of the released QI labels (or of ``class_columns``).
    """
    qis = schema.quasi_identifiers
    sens_names: list[str] = []
    for m in models:
        for a in m.sensitive_attributes:
            if a not in sens_names:
                sens_names.append(a)
    sens = {a: encode_ordered(data[a], a) for a in sens_names}
    base = build_frequency_set(
        [encode_quasi_identifier(data[q], q, schema.hierarchy(q)) for q in qis], None, sens
    )
    for m in models:
        m.prepare(base)
    kept = ~np.asarray(out.suppressed, dtype=bool)
    rel = out.data[kept]
    cols = class_columns or qis
    qs = []
    for c in cols:
        enc = encode(rel[c].astype(str), c)
        qs.append(QuasiIdentifier(c, enc.codes, enc.values))
    sub = {a: EncodedColumn(a, e.codes[kept], e.values) for a, e in sens.items()}
    return build_frequency_set(qs, None, sub)


def assert_models_hold(out, data, schema, models, class_columns=None) -> None:
    """Every model holds on the classes recomputed from the released rows."""
    fs = released_frequency_set(out, data, schema, models, class_columns)
    for m in models:
        r = m.evaluate(fs)
        assert r.satisfied, (m.name, r.details)


def assert_contract(
    out: AlgorithmOutput, data: pd.DataFrame, schema: Schema, limit: float, dropped=()
) -> None:
    """Row order/index kept, non-QI columns unchanged, shares in [0,1], suppression rules."""
    n = len(data)
    qis = schema.quasi_identifiers
    json.dumps(out.details)  # JSON-ready
    assert out.data.index.equals(data.index)
    supp = np.asarray(out.suppressed, dtype=bool)
    assert supp.shape == (n,)
    assert supp.sum() <= math.floor(limit * n + 1e-9)
    for c in data.columns:
        if c in qis or c in dropped:
            continue
        pd.testing.assert_series_equal(out.data[c], data[c], check_names=True)
    for q in qis:
        s = np.asarray(out.share[q])
        assert s.shape == (n,)
        assert np.all((s >= 0) & (s <= 1))
        assert np.all(s[supp] == 1)
        assert (out.data[q].to_numpy(dtype=object)[supp] == SUPPRESSED).all()


def parse_range(label: str) -> tuple[float, float]:
    """``"[a, b]"`` -> (a, b); a plain number -> (x, x)."""
    if label.startswith("["):
        a, b = label[1:-1].split(",")
        return float(a), float(b)
    return float(label), float(label)
