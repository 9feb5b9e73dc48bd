"""Test data shared by the table tests: a perturbation table (p-table) of the cell key method
in tau-Argus' format (``i;j;p;v;p_int_ub``: original value i, perturbed by v with
probability p; ``p_int_ub`` the upper end of v's interval of the cumulated probabilities),
with rows for i = 0..3 and a deviation of at most 1."""

PTABLE = """i;j;p;v;p_int_ub
0;0;1;0;1
1;0;0.5;-1;0.5
1;2;0.5;1;1
2;1;0.25;-1;0.25
2;2;0.5;0;0.75
2;3;0.25;1;1
3;2;0.25;-1;0.25
3;3;0.5;0;0.75
3;4;0.25;1;1
"""
