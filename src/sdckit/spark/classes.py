"""The base frequency set kept on Spark: the classes as a DataFrame of codes, never collected.

The driver path (:mod:`sdckit.spark.frequency`) collects every distinct combination of the
quasi-identifiers and sensitive attributes and builds the local engine's frequency set. With
near-unique keys -- what real microdata with many quasi-identifiers looks like -- that is
about one item per record, more than a driver should hold. :func:`count_classes` therefore
counts the combinations on Spark and keeps them there when there are more than
:func:`driver_classes` (10^6 by default, Spark setting ``spark.sdckit.driverClasses``):

- Only each column's *distinct values* come to the driver (a domain, bounded by the
  hierarchy's leaves or the attribute's values, not by the records); the driver assigns the
  codes exactly as the local engine does and Spark replaces every text by its code (a
  broadcast join per column), giving the *class table*: one row per distinct combination,
  the QIs' leaf codes ``q0..``, the sensitive codes ``s0..``, the record count ``__n`` and
  the summed weight ``__w``.
- A question about the classes at some generalization levels is answered by *shards*
  (:meth:`ClassTable.shards`): Spark computes each row's generalized key, repartitions the
  table by it -- so every class at those levels lies in one partition whole -- and each
  partition builds the local engine's frequency set of its classes
  (:func:`~sdckit.core.frequency.build_frequency_set` with multiplicities, rolled up to the
  levels) and answers on it with the local code. Only the answer comes back: a few numbers,
  or arrays the size of a domain. Whatever is a sum, minimum or maximum over classes is
  thereby exact (class-local quantities never straddle two shards).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import EncodedColumn
from sdckit.core.frequency import (
    FrequencySet,
    QuasiIdentifier,
    build_frequency_set,
    encode_ordered,
    require_values,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.core.hierarchy import Hierarchy

#: Distinct combinations up to which the classes are collected to the driver (the fast path).
DRIVER_CLASSES = 1_000_000
#: The Spark setting that changes it (``--spark-conf spark.sdckit.driverClasses=0`` keeps
#: every class table on Spark).
DRIVER_CLASSES_CONF = "spark.sdckit.driverClasses"
#: Cuts of a class table cached besides the first (see ``ClassTable._sharded``).
MORE_CUTS = 4
#: Classes per shard the partition count aims at (at least twice the default parallelism).
CLASSES_PER_SHARD = 250_000


def driver_classes(spark: Any) -> int:
    """The most distinct combinations collected to the driver: the session's
    :data:`DRIVER_CLASSES_CONF`, else :data:`DRIVER_CLASSES`."""
    from sdckit.errors import ConfigError

    value = spark.conf.get(DRIVER_CLASSES_CONF, None)
    if value is None:
        return DRIVER_CLASSES
    try:
        out = int(value)
    except ValueError:
        raise ConfigError(
            f"{DRIVER_CLASSES_CONF} must be a whole number of classes, got {value!r}"
        ) from None
    if out < 0:
        raise ConfigError(f"{DRIVER_CLASSES_CONF} must be 0 or more, got {out}")
    return out


def qi_encoding(
    name: str, distinct: np.ndarray, hierarchy: Hierarchy | None
) -> tuple[np.ndarray, np.ndarray]:
    """The codes of the sorted distinct texts ``distinct`` of QI ``name`` and the QI's values,
    as the local engine encodes them: leaf indices with a hierarchy (a text missing from it is
    the local engine's error, naming it), else ranks among the sorted texts."""
    if hierarchy is not None:
        codes = hierarchy.leaf_index(pd.Series(distinct, dtype=object), column=name)
        values = np.asarray(hierarchy.leaves, dtype=object)
    else:
        codes = np.arange(len(distinct))
        values = distinct
    return np.asarray(codes, dtype=np.int32), values


@dataclass
class ClassTable:
    """The base frequency set on Spark (module docstring): ``frame`` holds one row per
    distinct combination -- ``q{i}`` the leaf code of QI ``i``, ``s{j}`` the code of sensitive
    attribute ``j``, ``__n`` the records, ``__w`` the summed weights when weighted.
    ``quasi_identifiers`` and ``sensitive`` carry the encodings (values, hierarchies) with no
    codes; ``n_classes`` is the number of rows, ``n_records`` the records."""

    frame: DataFrame
    quasi_identifiers: tuple[QuasiIdentifier, ...]
    sensitive: dict[str, EncodedColumn]
    n_classes: int
    n_records: int
    weighted: bool = False
    #: the levels of the codes ``q{i}`` (leaf codes, all 0, for the base; a roll-up's else)
    levels: tuple[int, ...] = ()
    #: per QI, its distinct canonical texts in the data (sorted) and their leaf codes
    qi_texts: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    #: the coarsest levels the shards are cut at once (see :meth:`_sharded`); ``None``: one
    #: level below the root of every hierarchy
    cut: tuple[int, ...] | None = None
    _cut_frame: Any = field(default=None, repr=False)
    _shared: Any = field(default=None, repr=False)  # the encodings, broadcast once
    _more_cuts: dict[tuple[int, ...], Any] = field(default_factory=dict, repr=False)
    _marginal: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _joint: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.levels:
            self.levels = (0,) * len(self.quasi_identifiers)

    @property
    def names(self) -> tuple[str, ...]:
        """The quasi-identifiers' names."""
        return tuple(q.name for q in self.quasi_identifiers)

    def skeleton(self) -> FrequencySet:
        """A frequency set with these quasi-identifiers and sensitive encodings but no
        classes: what the lattice search and the metrics read of the base besides counts."""
        from scipy import sparse

        m = len(self.quasi_identifiers)
        return FrequencySet(
            quasi_identifiers=self.quasi_identifiers,
            levels=(0,) * m,
            keys=np.zeros((0, m), dtype=np.int32),
            counts=np.zeros(0, dtype=np.int64),
            sensitive={
                n: sparse.csr_matrix((0, e.cardinality), dtype=np.int64)
                for n, e in self.sensitive.items()
            },
            sensitive_values={n: e.values for n, e in self.sensitive.items()},
            weights=np.zeros(0) if self.weighted else None,
        )

    def overall(self) -> FrequencySet:
        """One class holding every record: the whole data's sensitive distributions (what
        the models' ``prepare`` and the disclosure measures read), counted on Spark."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import to_pandas

        cols = [f"s{j}" for j in range(len(self.sensitive))]
        aggs = [F.sum("__n").alias("__n")]
        if self.weighted:
            aggs.append(F.sum("__w").alias("__w"))
        grouped = self.frame.groupBy(*cols).agg(*aggs) if cols else self.frame.agg(*aggs)
        pdf = to_pandas(grouped)
        sens = {
            name: EncodedColumn(name, pdf[f"s{j}"].to_numpy(np.int32), enc.values)
            for j, (name, enc) in enumerate(self.sensitive.items())
        }
        weights = pdf["__w"].to_numpy(float) if self.weighted else None
        return build_frequency_set(
            [], None, sens, weights, multiplicities=pdf["__n"].to_numpy(np.int64)
        )

    # -- leaf tables (the lattice search's bounds and projection pruning) ------------------
    def prefetch(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Count every QI's leaf marginal and the joint leaf tables of ``pairs`` in one
        aggregation on Spark (one row per non-empty cell comes back: bounded by the
        domains, not the records); :meth:`marginal` and :meth:`joint` then answer from
        them."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import to_pandas

        m = len(self.quasi_identifiers)
        cells = [
            F.struct(F.lit(i).alias("t"), F.col(f"q{i}").cast("long").alias("c")) for i in range(m)
        ]
        for t, (i, j) in enumerate(pairs, start=m):
            dj = self.quasi_identifiers[j].cardinality(self.levels[j])
            code = F.col(f"q{i}").cast("long") * F.lit(dj) + F.col(f"q{j}").cast("long")
            cells.append(F.struct(F.lit(t).alias("t"), code.alias("c")))
        exploded = self.frame.select(F.explode(F.array(*cells)).alias("e"), "__n")
        pdf = to_pandas(
            exploded.groupBy(F.col("e.t").alias("t"), F.col("e.c").alias("c")).agg(
                F.sum("__n").alias("n")
            )
        )
        kind = pdf["t"].to_numpy(np.int64)
        cell = pdf["c"].to_numpy(np.int64)
        count = pdf["n"].to_numpy(float)
        for i in range(m):
            out = np.zeros(self.quasi_identifiers[i].cardinality(self.levels[i]))
            hit = kind == i
            out[cell[hit]] = count[hit]
            self._marginal[i] = out
        for t, (i, j) in enumerate(pairs, start=m):
            di = self.quasi_identifiers[i].cardinality(self.levels[i])
            dj = self.quasi_identifiers[j].cardinality(self.levels[j])
            flat = np.zeros(di * dj)
            hit = kind == t
            flat[cell[hit]] = count[hit]
            self._joint[(i, j)] = flat.reshape(di, dj)

    def marginal(self, i: int) -> np.ndarray:
        """Records per leaf code of QI ``i`` (one aggregation on Spark)."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import to_pandas

        if i not in self._marginal:
            pdf = to_pandas(self.frame.groupBy(f"q{i}").agg(F.sum("__n").alias("n")))
            out = np.zeros(self.quasi_identifiers[i].cardinality(self.levels[i]))
            out[pdf[f"q{i}"].to_numpy(np.int64)] = pdf["n"].to_numpy(float)
            self._marginal[i] = out
        return self._marginal[i]

    def joint(self, i: int, j: int) -> np.ndarray:
        """Records per pair of leaf codes of QIs ``i`` and ``j`` (one aggregation on Spark;
        the search asks only while the table is small)."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import to_pandas

        if (i, j) not in self._joint:
            dj = self.quasi_identifiers[j].cardinality(0)
            di = self.quasi_identifiers[i].cardinality(0)
            pdf = to_pandas(self.frame.groupBy(f"q{i}", f"q{j}").agg(F.sum("__n").alias("n")))
            out = np.zeros((di, dj))
            out[pdf[f"q{i}"].to_numpy(np.int64), pdf[f"q{j}"].to_numpy(np.int64)] = pdf[
                "n"
            ].to_numpy(float)
            self._joint[(i, j)] = out
        return self._joint[(i, j)]

    # -- shards --------------------------------------------------------------------------
    def partitions(self) -> int:
        """How many shards a question is split into."""
        parallel = int(self.frame.sparkSession.sparkContext.defaultParallelism)
        return max(2 * parallel, math.ceil(self.n_classes / CLASSES_PER_SHARD))

    def _sharded(self, levels: tuple[int, ...]) -> DataFrame:
        """The table cut into shards such that every class at ``levels`` lies in one.

        Cutting at levels ``K`` (hash of the codes at ``K``) keeps every class at any
        ``levels <= K`` in one shard -- a class at finer levels lies within one class at
        ``K`` -- so the table is cut once at :attr:`cut` (by default one level below the
        root of every hierarchy, which leaves as many shards as there are classes there),
        cached, and reused by every such node without a shuffle; coarser nodes are cut for
        themselves."""
        top = tuple(
            max(old, q.height - 2)
            for q, old in zip(self.quasi_identifiers, self.levels, strict=True)
        )
        cut = self.cut if self.cut is not None else top
        cut = tuple(max(c, old) for c, old in zip(cut, self.levels, strict=True))
        if all(lv <= c for lv, c in zip(levels, cut, strict=True)):
            if self._cut_frame is None:
                self._cut_frame = self._keyed(cut).persist()
            return self._cut_frame
        # a node above the cut in some QIs: cut at the cut raised to it there, cached too
        # (the search visits many nodes with the same QIs at their top), the oldest of
        # :data:`MORE_CUTS` such cuts released first
        raised = tuple(max(lv, c) for lv, c in zip(levels, cut, strict=True))
        if raised not in self._more_cuts:
            if len(self._more_cuts) >= MORE_CUTS:
                self._more_cuts.pop(next(iter(self._more_cuts))).unpersist()
            self._more_cuts[raised] = self._keyed(raised).persist()
        return self._more_cuts[raised]

    def _keyed(self, levels: Sequence[int]) -> DataFrame:
        """The table with ``__k``: a hash of each row's codes at ``levels`` (equal codes,
        equal key), and repartitioned by it."""
        steps = [
            q.step(old, int(lv))
            for q, old, lv in zip(self.quasi_identifiers, self.levels, levels, strict=True)
        ]
        m = len(steps)

        def keyed(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for pdf in batches:
                key = np.zeros(len(pdf), dtype=np.uint64)
                for i in range(m):
                    code = steps[i][pdf[f"q{i}"].to_numpy(np.int64)].astype(np.uint64)
                    key = key * np.uint64(1_000_003) + code  # wraps: a hash, collisions harmless
                yield pdf.assign(__k=key.view(np.int64))

        from pyspark.sql import types as T

        fields = [*self.frame.schema.fields, T.StructField("__k", T.LongType(), False)]
        schema = T.StructType(fields)  # a new schema: StructType.add would change the frame's
        return self.frame.mapInPandas(keyed, schema).repartition(self.partitions(), "__k")

    def fragment(self, pdf: pd.DataFrame, levels: Sequence[int] | None = None) -> FrequencySet:
        """The frequency set of the classes in ``pdf`` (rows of :attr:`frame`) at this
        table's levels, or grouped at once at coarser ``levels``."""
        at = self.levels if levels is None else tuple(int(x) for x in levels)
        qis = []
        for i, q in enumerate(self.quasi_identifiers):
            codes = pdf[f"q{i}"].to_numpy(np.int32)
            if at[i] != self.levels[i]:
                codes = q.step(self.levels[i], at[i])[codes]
            qis.append(QuasiIdentifier(q.name, codes, q.values, q.hierarchy))
        sens = {
            name: EncodedColumn(name, pdf[f"s{j}"].to_numpy(np.int32), enc.values)
            for j, (name, enc) in enumerate(self.sensitive.items())
        }
        weights = pdf["__w"].to_numpy(float) if self.weighted else None
        return build_frequency_set(
            qis, at, sens, weights, multiplicities=pdf["__n"].to_numpy(np.int64)
        )

    def _encodings(self) -> Any:
        """This table's encodings (:meth:`_bare`) broadcast to the executors once: a Python
        worker keeps a broadcast value for the tasks after the first, so a hierarchy of tens
        of thousands of leaves is not shipped with every task."""
        if self._shared is None:
            self._shared = self.frame.sparkSession.sparkContext.broadcast(self._bare())
        return self._shared

    def _bare(self) -> ClassTable:
        """This table's encodings without the DataFrame: what the executors need."""
        return ClassTable(
            frame=None,  # type: ignore[arg-type]
            quasi_identifiers=self.quasi_identifiers,
            sensitive=self.sensitive,
            n_classes=self.n_classes,
            n_records=self.n_records,
            weighted=self.weighted,
            levels=self.levels,
        )

    def rollup(self, levels: Sequence[int]) -> ClassTable:
        """The table at coarser ``levels`` (each >= this table's), aggregated and cached on
        Spark: the source of the nodes above it, which then shuffle fewer rows."""
        from pyspark.sql import functions as F

        levels = tuple(int(x) for x in levels)
        steps = [
            q.step(old, lv)
            for q, old, lv in zip(self.quasi_identifiers, self.levels, levels, strict=True)
        ]
        m = len(steps)

        def coarser(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for pdf in batches:
                out = pdf.copy()
                for i in range(m):
                    out[f"q{i}"] = steps[i][pdf[f"q{i}"].to_numpy(np.int64)].astype(np.int32)
                yield out

        keys = [f"q{i}" for i in range(m)] + [f"s{j}" for j in range(len(self.sensitive))]
        aggs = [F.sum("__n").alias("__n")]
        if self.weighted:
            aggs.append(F.sum("__w").alias("__w"))
        frame = (
            self.frame.mapInPandas(coarser, self.frame.schema)
            .groupBy(*keys)
            .agg(*aggs)
            .select(*self.frame.columns)
            .persist()
        )
        return ClassTable(
            frame=frame,
            quasi_identifiers=self.quasi_identifiers,
            sensitive=self.sensitive,
            n_classes=int(frame.count()),
            n_records=self.n_records,
            weighted=self.weighted,
            levels=levels,
        )

    def collect(self) -> FrequencySet:
        """The frequency set of this table on the driver (for a table as small as the
        driver takes): the local engine's classes at :attr:`levels`."""
        from sdckit.spark.io import to_pandas

        return self._bare().fragment(to_pandas(self.frame))

    def shards(
        self,
        levels: Sequence[int],
        work: Callable[[FrequencySet, FrequencySet], Any],
        base: bool = False,
    ) -> list[Any]:
        """``work(fragment, classes_at_levels)`` on every shard (module docstring); the
        answers of the non-empty shards, brought to the driver (pickled, so keep them small:
        numbers or domain-sized arrays). With ``base`` the fragment is the shard's classes
        at this table's levels and the classes at ``levels`` are rolled up from it (their
        ``base_map`` maps it); else both are the classes at ``levels``, grouped at once."""
        levels = tuple(int(x) for x in levels)
        shared = self._encodings()  # the executors need the encodings only

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            parts = [b for b in batches if len(b)]
            if not parts:
                return
            bare = shared.value
            pdf = pd.concat(parts, ignore_index=True)
            if base:
                frag = bare.fragment(pdf)
                fs = frag.rollup(levels) if levels != frag.levels else frag
            else:
                frag = fs = bare.fragment(pdf, levels)
            yield pd.DataFrame({"p": [pickle.dumps(work(frag, fs))]})

        rows = self._sharded(levels).mapInPandas(run, "p binary").collect()
        return [pickle.loads(r["p"]) for r in rows]

    def shard_rows(
        self,
        levels: Sequence[int],
        work: Callable[[FrequencySet, FrequencySet], pd.DataFrame],
        schema: str,
    ) -> DataFrame:
        """Like :meth:`shards`, but each shard's answer is rows (a pandas frame with
        ``schema``) that stay on Spark as a DataFrame."""
        levels = tuple(int(x) for x in levels)
        shared = self._encodings()

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            parts = [b for b in batches if len(b)]
            if not parts:
                return
            fs = shared.value.fragment(pd.concat(parts, ignore_index=True), levels)
            yield work(fs, fs)

        return self._sharded(levels).mapInPandas(run, schema)

    def class_sizes(self, levels: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The class-size histogram at ``levels`` (the base by default): the distinct class
        sizes and how many classes have each -- at most about ``sqrt(2 n)`` entries."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import to_pandas

        levels = tuple(levels) if levels is not None else self.levels
        if levels != self.levels:
            parts = self.shards(levels, lambda _frag, fs: _size_histogram(fs.counts))
            sizes = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
            mult = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
            return _size_histogram(sizes, mult)
        cols = [f"q{i}" for i in range(len(self.quasi_identifiers))]
        per_class = self.frame.groupBy(*cols).agg(F.sum("__n").alias("size"))
        pdf = to_pandas(per_class.groupBy("size").agg(F.count(F.lit(1)).alias("classes")))
        order = np.argsort(pdf["size"].to_numpy())
        return (
            pdf["size"].to_numpy(np.int64)[order],
            pdf["classes"].to_numpy(np.int64)[order],
        )

    def unpersist(self) -> None:
        """Release the cached table (and its cached shards and broadcast encodings)."""
        if self._shared is not None:
            self._shared.unpersist()
            self._shared = None
        if self._cut_frame is not None:
            self._cut_frame.unpersist()
            self._cut_frame = None
        for frame in self._more_cuts.values():
            frame.unpersist()
        self._more_cuts = {}
        self.frame.unpersist()


def _size_histogram(
    sizes: np.ndarray, classes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``sizes`` (ascending) and the classes having each (``classes``: multiplicities
    of the given sizes, one each by default)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    mult = np.ones(len(sizes)) if classes is None else np.asarray(classes, dtype=float)
    distinct, inverse = np.unique(sizes, return_inverse=True)
    return distinct, np.bincount(inverse.ravel(), weights=mult).astype(np.int64)


def class_table(
    grouped: DataFrame,
    n_classes: int,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    orders: Mapping[str, Sequence[str]],
    weighted: bool,
) -> ClassTable:
    """The :class:`ClassTable` of ``grouped`` -- the Spark group-by of the canonical texts
    (``c0..`` the quasi-identifiers then the sensitive attributes, ``__n``, ``__w``) made by
    :func:`sdckit.spark.frequency.count_texts` -- with each column's distinct texts encoded
    on the driver as the local engine does and replaced by their codes on Spark."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.spark.io import to_pandas

    spark = grouped.sparkSession
    frame = grouped
    qis: list[QuasiIdentifier] = []
    texts: list[tuple[np.ndarray, np.ndarray]] = []
    sens: dict[str, EncodedColumn] = {}
    columns = [*quasi_identifiers, *sensitive]
    for i, name in enumerate(columns):
        distinct = np.unique(
            to_pandas(grouped.select(f"c{i}").distinct())[f"c{i}"].to_numpy(object)
        )
        if i < len(quasi_identifiers):
            codes, values = qi_encoding(name, distinct, hierarchies.get(name))
            require_values(  # a QI with no value at all: the local engine's error
                build_frequency_set(
                    [QuasiIdentifier(name, codes, values, hierarchies.get(name))],
                    multiplicities=np.ones(len(codes), dtype=np.int64),
                )
            )
            qis.append(QuasiIdentifier(name, np.zeros(0, np.int32), values, hierarchies.get(name)))
            texts.append((distinct, codes))
            target = f"q{i}"
        else:
            enc = encode_ordered(pd.Series(distinct, dtype=object), name, orders.get(name))
            codes = enc.codes.astype(np.int32)
            sens[name] = EncodedColumn(name, np.zeros(0, np.int32), enc.values)
            target = f"s{i - len(quasi_identifiers)}"
        schema = T.StructType(
            [T.StructField(f"c{i}", T.StringType(), False),
             T.StructField(target, T.IntegerType(), False)]
        )  # fmt: skip
        mapping = spark.createDataFrame(
            pd.DataFrame({f"c{i}": distinct.astype(str), target: codes}), schema=schema
        )
        frame = frame.join(F.broadcast(mapping), on=f"c{i}", how="inner").drop(f"c{i}")
    keep = [f"q{i}" for i in range(len(quasi_identifiers))]
    keep += [f"s{j}" for j in range(len(sensitive))]
    keep += ["__n"] + (["__w"] if weighted else [])
    frame = frame.select(*keep).persist()
    total = frame.agg(F.sum("__n")).collect()[0][0]
    return ClassTable(
        frame=frame,
        quasi_identifiers=tuple(qis),
        sensitive=sens,
        n_classes=n_classes,
        n_records=int(total or 0),
        weighted=weighted,
        qi_texts=tuple(texts),
    )
