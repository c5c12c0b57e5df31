"""P-values as every test of the package reports them: floored at the smallest
normal double, and adjusted over a family."""

import numpy as np

__all__ = ["P_VALUE_FLOOR", "adjust_family", "floor_pvalues"]


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


def adjust_family(pvalues, correction):
    """A family of p-values adjusted for multiple comparisons (``correction``:
    ``"holm"``, ``"bonferroni"``, ``"fdr_bh"``, ``"none"`` or None), NaN entries
    kept and left out of the family; the checked core of
    :func:`sklearn_smallfair.stats.adjust_pvalues`."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}.")
    if correction is None or correction == "none":
        return p.copy()
    valid = ~np.isnan(p)
    if ((p[valid] < 0) | (p[valid] > 1)).any():
        raise ValueError("pvalues must lie in [0, 1].")
    out = np.full(p.shape, np.nan)
    q = p[valid]
    m = q.shape[0]
    if m == 0:
        return out
    if correction == "bonferroni":
        adj = np.minimum(1.0, q * m)
    else:
        order = np.argsort(q)  # ties get equal adjusted values whatever their order
        ranked = q[order]
        if correction == "holm":
            steps = ranked * (m - np.arange(m))
            ranked_adj = np.minimum(1.0, np.maximum.accumulate(steps))
        else:  # fdr_bh
            steps = ranked * m / np.arange(1, m + 1)
            ranked_adj = np.minimum(1.0, np.minimum.accumulate(steps[::-1])[::-1])
        adj = np.empty(m)
        adj[order] = ranked_adj
    out[valid] = adj
    return out
