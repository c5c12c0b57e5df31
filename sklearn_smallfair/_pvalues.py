"""P-values as every test of the package reports them: floored at the smallest
normal double."""

import numpy as np

__all__ = ["P_VALUE_FLOOR", "floor_pvalues"]


#: Smallest p-value reported: the smallest normal double (2.2e-308). Below it
#: float64 numbers are subnormal and keep no relative precision, so a tail such
#: as 1.6e-316 says only "below 2.2e-308" and is reported as this floor.
P_VALUE_FLOOR = float(np.finfo(np.float64).tiny)


def floor_pvalues(p):
    """``p`` with the values in ``(0, P_VALUE_FLOOR)`` raised to the floor.

    Examples
    --------
    >>> from sklearn_smallfair._pvalues import floor_pvalues
    >>> floor_pvalues([1.6e-316, 0.0, 0.5]).tolist()
    [2.2250738585072014e-308, 0.0, 0.5]
    """
    p = np.asarray(p, dtype=np.float64)
    return np.where((p > 0) & (p < P_VALUE_FLOOR), P_VALUE_FLOOR, p)
