"""sdckit.core.solver: HiGHS never writes to our standard output."""

from __future__ import annotations


def test_solver_output_never_reaches_stdout(capfd) -> None:
    """What HiGHS writes to descriptor 1 during a MILP is dropped; Python's own output
    written before and after survives, in order."""
    import os

    import numpy as np
    from scipy.optimize import LinearConstraint

    from sdckit.core.solver import c_stdout_silenced, milp

    print("before", flush=True)
    with c_stdout_silenced():
        os.write(1, b"solver noise\n")
    res = milp(
        np.array([1.0, 1.0]),
        integrality=np.ones(2),
        constraints=LinearConstraint(np.array([[1.0, 1.0]]), 1.0, np.inf),
        options={"disp": True},
    )
    print("after", flush=True)
    out = capfd.readouterr().out
    assert res.status == 0 and abs(res.fun - 1.0) < 1e-9
    assert out == "before\nafter\n"
