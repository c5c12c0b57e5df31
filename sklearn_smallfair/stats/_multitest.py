"""Families of tests: pairwise comparisons of groups and multiple-comparison
adjustments of their p-values."""

from itertools import combinations

import numpy as np

from .._validation import format_labels

__all__ = ["adjust_pvalues", "check_correction", "group_pairs", "smallest_pvalue"]

_CORRECTIONS = ("bonferroni", "holm", "fdr_bh")


def check_correction(correction):
    """``correction``, once :func:`adjust_pvalues` knows the name (or it is None)."""
    adjust_pvalues(np.empty(0), correction)
    return correction


def group_pairs(groups):
    """The pairwise comparisons of groups: every group against each earlier one.

    Parameters
    ----------
    groups : ndarray of shape (n_groups,)
        Sorted group labels; at least two.

    Returns
    -------
    a, b : ndarray of int of shape (n_groups * (n_groups - 1) / 2,)
        Positions of the compared groups, ``a > b``; for two groups ``(1, 0)``:
        the second sorted label against the first.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats._multitest import group_pairs
    >>> a, b = group_pairs(np.array(["x", "y", "z"]))
    >>> a.tolist(), b.tolist()
    ([1, 2, 2], [0, 0, 1])
    """
    if groups.shape[0] < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; "
            f"separation compares groups, so at least two are needed."
        )
    lower, higher = np.array(list(combinations(range(groups.shape[0]), 2))).T
    return higher, lower


def smallest_pvalue(pvalues):
    """Smallest p-value of a family (NaN when no test of it could be run)."""
    p = np.asarray(pvalues, dtype=np.float64)
    return float(np.nanmin(p)) if (~np.isnan(p)).any() else np.nan


def adjust_pvalues(pvalues, correction=None):
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        Raw p-values. NaN entries (tests that could not be run) are left NaN and
        do not count toward the family size.
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default=None
        ``"bonferroni"``: ``min(1, m p)``; ``"holm"``: Holm's step-down
        family-wise correction; ``"fdr_bh"``: Benjamini-Hochberg false discovery
        rate (step-up). ``None`` returns the p-values unchanged.

    Returns
    -------
    adjusted : ndarray of shape (m,)

    Examples
    --------
    >>> from sklearn_smallfair.stats import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, 0.04, 0.03], "fdr_bh")
    array([0.03, 0.04, 0.04])
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}.")
    if correction is None:
        return p.copy()
    if correction not in _CORRECTIONS:
        raise ValueError(
            f"correction must be one of {_CORRECTIONS} or None; got {correction!r}."
        )
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
        order = np.argsort(q, kind="stable")
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
