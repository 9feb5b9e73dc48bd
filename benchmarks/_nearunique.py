"""Near-unique census-like microdata for the Spark benchmark, generated on Spark.

Eight quasi-identifiers with realistic cardinalities -- age (0-99), sex (2), 5-digit ZIP code
(30,000 codes), birth month (12), birth day (1-31), education (16, Adult's values), occupation
(40, eight groups of five) and marital status (6) -- and a sensitive diagnosis (20 ICD-10
chapters). Every column is drawn from ``rand(seed)`` on Spark (``spark.range(n)``), never on
the driver: age from a population pyramid (density falling linearly to a third from 0 to 99),
ZIP codes from a power law over 30,000 ranks (density ``(r+1)^-0.8``, so populous codes hold
many people and rural ones a few), the birth day within its month's length, occupation's
group given education's group, marital status given age. ZIP code, age, sex and birth date
alone make nearly every record unique at full detail -- the well-known result that 87% of the
US population is unique on ZIP code, sex and birth date (Sweeney, "Simple Demographics Often
Identify People Uniquely", Carnegie Mellon University, Data Privacy Working Paper 3, 2000).

Each QI has a generalization hierarchy in ARX's CSV format (``leaf;level1;...;*``), written
beside the data: age in 5-, 10-, 20-year bands; ZIP code as its 4-, 3-, 2-, 1-digit prefix;
birth month as quarter and half year; birth day in 10-day bands; education, occupation and
marital status in groups. The lattice has 5*2*6*4*3*3*3*3 = 19,440 nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

#: Quasi-identifiers, in the job's order, and the sensitive attribute.
QIS = ["age", "sex", "zip", "birth_month", "birth_day", "education", "occupation",
       "marital_status"]  # fmt: skip
SENSITIVE = "diagnosis"

N_ZIPS = 30_000
ZIP_EXPONENT = 0.8  # density of ZIP rank r is proportional to (r + 1) ** -ZIP_EXPONENT
ZIP_STEP = 7919  # rank r -> code (r * ZIP_STEP) mod 100000: one-to-one (7919 is prime)

SEXES = ["female", "male"]

#: Adult's 16 education values, their share (close to Adult's) and their group.
EDUCATION = [
    ("Preschool", 0.002, "Primary"), ("1st-4th", 0.005, "Primary"),
    ("5th-6th", 0.010, "Primary"), ("7th-8th", 0.020, "Primary"),
    ("9th", 0.016, "Secondary"), ("10th", 0.029, "Secondary"),
    ("11th", 0.036, "Secondary"), ("12th", 0.013, "Secondary"),
    ("HS-grad", 0.322, "Secondary"), ("Some-college", 0.223, "Post-secondary"),
    ("Assoc-voc", 0.042, "Post-secondary"), ("Assoc-acdm", 0.033, "Post-secondary"),
    ("Bachelors", 0.165, "Tertiary"), ("Masters", 0.054, "Tertiary"),
    ("Prof-school", 0.017, "Tertiary"), ("Doctorate", 0.013, "Tertiary"),
]  # fmt: skip
EDUCATION_GROUPS = ["Primary", "Secondary", "Post-secondary", "Tertiary"]

#: 40 occupations in 8 groups of 5 (after the SOC major groups); within a group the j-th
#: occupation has weight 1/(j+1).
OCCUPATIONS = {
    "Management": ["Chief executive", "General manager", "Financial manager",
                   "Sales manager", "Administrative manager"],
    "Professional": ["Software developer", "Accountant", "Civil engineer", "Lawyer",
                     "Physician"],
    "Education and health": ["Teacher", "Registered nurse", "Nursing assistant",
                             "Pharmacist", "Therapist"],
    "Service": ["Cook", "Waiter", "Janitor", "Security guard", "Hairdresser"],
    "Sales and office": ["Cashier", "Retail salesperson", "Office clerk",
                         "Customer service representative", "Secretary"],
    "Construction": ["Carpenter", "Electrician", "Plumber", "Construction laborer",
                     "Painter"],
    "Production and repair": ["Machinist", "Assembler", "Mechanic", "Welder", "Inspector"],
    "Transport": ["Truck driver", "Bus driver", "Forklift operator", "Delivery driver",
                  "Material mover"],
}  # fmt: skip
OCCUPATION_GROUPS = list(OCCUPATIONS)
#: Share of each occupation group (columns, in OCCUPATION_GROUPS' order) per education group.
OCCUPATION_GIVEN_EDUCATION = [
    [0.01, 0.00, 0.04, 0.30, 0.15, 0.20, 0.15, 0.15],
    [0.05, 0.02, 0.08, 0.20, 0.22, 0.13, 0.15, 0.15],
    [0.10, 0.08, 0.17, 0.12, 0.25, 0.10, 0.10, 0.08],
    [0.22, 0.38, 0.22, 0.03, 0.10, 0.01, 0.02, 0.02],
]  # fmt: skip

#: Marital status, its group, and its share among people under 18, 18-34, 35-64, 65+.
MARITAL = [
    ("Never-married", "Not in a union", (0.99, 0.55, 0.15, 0.05)),
    ("Married", "In a union", (0.00, 0.30, 0.55, 0.50)),
    ("Civil-partnership", "In a union", (0.01, 0.08, 0.06, 0.03)),
    ("Divorced", "Not in a union", (0.00, 0.04, 0.15, 0.12)),
    ("Separated", "Not in a union", (0.00, 0.03, 0.05, 0.02)),
    ("Widowed", "Not in a union", (0.00, 0.00, 0.04, 0.28)),
]  # fmt: skip
AGE_BOUNDS = (18, 35, 65)

#: ICD-10 chapters (the sensitive attribute), drawn with weights 1/(i+1).
DIAGNOSES = ["A00-B99", "C00-D49", "D50-D89", "E00-E89", "F01-F99", "G00-G99", "H00-H59",
             "H60-H95", "I00-I99", "J00-J99", "K00-K95", "L00-L99", "M00-M99", "N00-N99",
             "O00-O9A", "P00-P96", "Q00-Q99", "R00-R99", "S00-T88", "Z00-Z99"]  # fmt: skip
DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def zip_code(rank: int) -> str:
    """The 5-digit ZIP code of ``rank`` (0 <= rank < N_ZIPS); the same map as on Spark."""
    return f"{rank * ZIP_STEP % 100_000:05d}"


def _pick(u: Column, weights: list[float], labels: list[str]) -> Column:
    """``labels[i]`` where the uniform ``u`` falls in the i-th interval of the normalized
    cumulative ``weights`` (inverse-CDF sampling of a categorical distribution)."""
    from pyspark.sql import functions as F

    total = sum(weights)
    out, acc = None, 0.0
    for w, label in zip(weights[:-1], labels[:-1], strict=True):
        acc += w / total
        out = (F.when(u < acc, F.lit(label)) if out is None
               else out.when(u < acc, F.lit(label)))  # fmt: skip
    last = F.lit(labels[-1])
    return last if out is None else out.otherwise(last)


def generate(spark: object, rows: int, path: Path) -> None:
    """Write ``rows`` near-unique records as Parquet at ``path`` (computed on Spark, seeds
    fixed: the same rows on every run)."""
    from pyspark.sql import functions as F

    r = F.col
    parts = max(2, rows // 1_000_000)
    # The uniform draws first, as columns: a rand() referenced twice would be drawn twice.
    draws = spark.range(rows, numPartitions=parts).select(  # type: ignore[attr-defined]
        *[F.rand(seed=i).alias(f"u{i}") for i in range(10)]
    )
    u = [r(f"u{i}") for i in range(10)]
    # Age: density proportional to 1 - (2/3) x/100 on [0, 100): inverse CDF of a trapezoid.
    a, b = 1.0, -2.0 / 3.0 / 100.0  # f(x) = a + b x, F(x) = (a x + b x^2 / 2) / Z
    z = a * 100 + b * 100 * 100 / 2
    age = F.least(F.floor((-a + F.sqrt(a * a + 2 * b * z * u[0])) / b), F.lit(99)).cast("int")
    s = 1.0 - ZIP_EXPONENT
    top = (N_ZIPS + 1) ** s - 1.0
    rank = F.least(F.floor(F.pow(1.0 + u[2] * top, 1.0 / s) - 1.0), F.lit(N_ZIPS - 1))
    zipc = F.lpad(((rank.cast("long") * ZIP_STEP) % 100_000).cast("string"), 5, "0")
    month = (F.floor(u[3] * 12) + 1).cast("int")
    days = F.element_at(F.array(*[F.lit(d) for d in DAYS_IN_MONTH]), r("birth_month"))
    day = (F.floor(u[4] * days) + 1).cast("int")
    edu_w = [w for _, w, _ in EDUCATION]
    df = draws.select(
        age.alias("age"),
        _pick(u[1], [0.49, 0.51], SEXES).alias("sex"),
        zipc.alias("zip"),
        month.alias("birth_month"),
        u[4].alias("u4"),
        _pick(u[5], edu_w, [e for e, _, _ in EDUCATION]).alias("education"),
        u[6].alias("__u_occ_group"),
        u[7].alias("__u_occ"),
        u[8].alias("__u_marital"),
        _pick(u[9], [1 / (i + 1) for i in range(len(DIAGNOSES))], DIAGNOSES).alias(SENSITIVE),
    )
    df = df.withColumn("birth_day", day)
    group_of = {e: g for e, _, g in EDUCATION}
    edu_group = F.coalesce(*[F.when(r("education") == e, F.lit(EDUCATION_GROUPS.index(g)))
                             for e, g in group_of.items()])  # fmt: skip
    occ_group = F.coalesce(*[
        F.when(edu_group == i, _pick(r("__u_occ_group"), row, OCCUPATION_GROUPS))
        for i, row in enumerate(OCCUPATION_GIVEN_EDUCATION)
    ])  # fmt: skip
    within = [1 / (j + 1) for j in range(5)]
    occupation = F.coalesce(*[
        F.when(occ_group == g, _pick(r("__u_occ"), within, jobs))
        for g, jobs in OCCUPATIONS.items()
    ])  # fmt: skip
    band = (F.when(r("age") < AGE_BOUNDS[0], 0).when(r("age") < AGE_BOUNDS[1], 1)
            .when(r("age") < AGE_BOUNDS[2], 2).otherwise(3))  # fmt: skip
    labels = [m for m, _, _ in MARITAL]
    marital = F.coalesce(*[
        F.when(band == i, _pick(r("__u_marital"), [w[i] for _, _, w in MARITAL], labels))
        for i in range(4)
    ])  # fmt: skip
    out = df.select(
        *[r(c) for c in ("age", "sex", "zip", "birth_month", "birth_day", "education")],
        occupation.alias("occupation"),
        marital.alias("marital_status"),
        r(SENSITIVE),
    )
    out.write.mode("overwrite").parquet(str(path))


def hierarchy_rows() -> dict[str, list[list[str]]]:
    """Each QI's generalization hierarchy: one row per leaf, ``[leaf, level1, ..., "*"]``."""

    def band(x: int, w: int, top: int = 99) -> str:
        lo = x // w * w
        return f"{lo}-{min(lo + w - 1, top)}"

    def zip_row(code: str) -> list[str]:
        return [code, *[code[:k] + "*" * (5 - k) for k in (4, 3, 2, 1)], "*"]

    months = [[str(m), f"Q{(m - 1) // 3 + 1}", f"H{(m - 1) // 6 + 1}", "*"] for m in range(1, 13)]
    days = [[str(d), "1-10" if d <= 10 else "11-20" if d <= 20 else "21-31", "*"]
            for d in range(1, 32)]  # fmt: skip
    return {
        "age": [[str(x), band(x, 5), band(x, 10), band(x, 20), "*"] for x in range(100)],
        "sex": [[s, "*"] for s in SEXES],
        "zip": [zip_row(zip_code(r)) for r in range(N_ZIPS)],
        "birth_month": months,
        "birth_day": days,
        "education": [[e, g, "*"] for e, _, g in EDUCATION],
        "occupation": [[o, g, "*"] for g, jobs in OCCUPATIONS.items() for o in jobs],
        "marital_status": [[m, g, "*"] for m, g, _ in MARITAL],
    }


def write_hierarchies(folder: Path) -> dict[str, Path]:
    """Write every QI's hierarchy as ``hierarchy_<qi>.csv`` (ARX format, ``;``) in
    ``folder``; return the paths by QI."""
    out = {}
    for name, rows in hierarchy_rows().items():
        path = folder / f"hierarchy_{name}.csv"
        path.write_text("".join(";".join(row) + "\n" for row in rows))
        out[name] = path
    return out


def _pick_np(u: np.ndarray, weights: Sequence[float], labels: Sequence[str]) -> np.ndarray:
    """:func:`_pick` on numpy: ``labels[i]`` where ``u`` falls in the i-th interval of the
    normalized cumulative ``weights``."""
    cum = np.cumsum(np.asarray(weights, dtype=float))
    index = np.minimum(np.searchsorted(cum / cum[-1], u, side="right"), len(labels) - 1)
    return np.asarray(labels, dtype=object)[index]


def generate_local(rows: int, seed: int = 0) -> pd.DataFrame:
    """The same distributions as :func:`generate`, drawn with numpy (``default_rng(seed)``)
    instead of Spark: ``rows`` near-unique records, the QIs and the sensitive attribute."""
    rng = np.random.default_rng(seed)
    u = rng.random((10, rows))
    a, b = 1.0, -2.0 / 3.0 / 100.0
    z = a * 100 + b * 100 * 100 / 2
    age = np.minimum(np.floor((-a + np.sqrt(a * a + 2 * b * z * u[0])) / b), 99).astype(int)
    s = 1.0 - ZIP_EXPONENT
    top = (N_ZIPS + 1) ** s - 1.0
    rank = np.minimum(np.floor((1.0 + u[2] * top) ** (1.0 / s) - 1.0), N_ZIPS - 1).astype(int)
    zips = np.array([zip_code(r) for r in range(N_ZIPS)], dtype=object)[rank]
    month = np.floor(u[3] * 12).astype(int) + 1
    day = np.floor(u[4] * np.asarray(DAYS_IN_MONTH)[month - 1]).astype(int) + 1
    education = _pick_np(u[5], [w for _, w, _ in EDUCATION], [e for e, _, _ in EDUCATION])
    group_of = {e: EDUCATION_GROUPS.index(g) for e, _, g in EDUCATION}
    edu_group = np.array([group_of[e] for e in education])
    occ_group = np.empty(rows, dtype=object)
    for i, weights in enumerate(OCCUPATION_GIVEN_EDUCATION):
        at = edu_group == i
        occ_group[at] = _pick_np(u[6][at], weights, OCCUPATION_GROUPS)
    occupation = np.empty(rows, dtype=object)
    within = [1 / (j + 1) for j in range(5)]
    for g, jobs in OCCUPATIONS.items():
        at = occ_group == g
        occupation[at] = _pick_np(u[7][at], within, jobs)
    band = np.searchsorted(np.asarray(AGE_BOUNDS), age, side="right")
    marital = np.empty(rows, dtype=object)
    labels = [m for m, _, _ in MARITAL]
    for i in range(4):
        at = band == i
        marital[at] = _pick_np(u[8][at], [w[i] for _, _, w in MARITAL], labels)
    diagnosis = _pick_np(u[9], [1 / (i + 1) for i in range(len(DIAGNOSES))], DIAGNOSES)
    return pd.DataFrame(
        {
            "age": age,
            "sex": _pick_np(u[1], [0.49, 0.51], SEXES),
            "zip": zips,
            "birth_month": month,
            "birth_day": day,
            "education": education,
            "occupation": occupation,
            "marital_status": marital,
            SENSITIVE: diagnosis,
        }
    )
