"""The Spark engine (extra ``spark``): the same jobs on data that does not fit one machine.

Design (docs/getting-started/spark.md): Spark computes and applies, the driver decides. The engine
only produces frequency sets (:mod:`sdckit.spark.frequency`, one group-by over integer codes
assigned with broadcast maps) and applies transformations (:mod:`sdckit.spark.anonymize`,
:mod:`sdckit.spark.mask`); the privacy models, metrics, risk measures and the lattice search
are the local engine's own code running on the driver over the collected frequency set, so
both engines give the same numbers. PySpark is imported only here and only when a job says
``engine: spark`` (or ``--engine spark``).
"""

import warnings

# PySpark announces on every pandas conversion that it "does not yet fully support" the
# installed pandas; sdckit's conversions (integer codes and counts) are covered by its tests.
warnings.filterwarnings(
    "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
)
