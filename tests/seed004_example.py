"""Seed 004's transparency-attack worked example (Nin, Herranz & Torra 2008), shared by tests.

Values are ranks 1..10; the protected file is rank swapping with a window of 2 ranks.
"""

import pandas as pd

COLS = ["v1", "v2", "v3", "v4"]
ORIGINAL = pd.DataFrame(
    [(8, 9, 1, 3), (6, 7, 10, 2), (10, 3, 4, 1), (7, 1, 2, 6), (9, 4, 6, 4),
     (2, 2, 8, 8), (1, 10, 3, 9), (4, 8, 7, 10), (5, 5, 5, 5), (3, 6, 9, 7)],
    columns=COLS,
)  # fmt: skip
PROTECTED = pd.DataFrame(
    [(10, 10, 3, 5), (5, 5, 8, 1), (8, 4, 2, 2), (9, 2, 4, 4), (7, 3, 5, 6),
     (4, 1, 10, 10), (3, 9, 1, 7), (2, 6, 9, 8), (6, 7, 6, 3), (1, 8, 7, 9)],
    columns=COLS,
)  # fmt: skip
