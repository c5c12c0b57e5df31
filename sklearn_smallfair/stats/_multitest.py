"""Families of tests: pairwise comparisons of groups and multiple-comparison
adjustments of their p-values."""

import numpy as np

from .._params import StrOptions, validate_params
from .._pvalues import adjust_family
from .._validation import format_labels

__all__ = [
    "CORRECTION",
    "adjust_pvalues",
    "check_correction",
    "group_pairs",
    "smallest_pvalue",
]

#: The names ``correction`` accepts; ``"none"`` is a synonym of ``None`` (the
#: command line's spelling).
_CORRECTIONS = ("bonferroni", "holm", "fdr_bh", "none")
#: The declared constraint of every ``correction`` parameter.
CORRECTION = [StrOptions(set(_CORRECTIONS)), None]


def check_correction(correction):
    """``correction`` as the tests use it: a known name, or None (for ``"none"``).

    For callers without a declared parameter table; raises ``ValueError`` naming
    the valid values.

    Examples
    --------
    >>> from sklearn_smallfair.stats._multitest import check_correction
    >>> check_correction("holm"), check_correction("none"), check_correction(None)
    ('holm', None, None)
    """
    if correction is not None and (
        not isinstance(correction, str) or correction not in _CORRECTIONS
    ):
        raise ValueError(
            f"correction must be one of {_CORRECTIONS} or None; got {correction!r}."
        )
    return None if correction == "none" else correction


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
    lower, higher = np.triu_indices(groups.shape[0], k=1)
    return higher.astype(np.int64), lower.astype(np.int64)


def smallest_pvalue(pvalues):
    """Smallest p-value of a family (NaN when no test of it could be run)."""
    p = np.asarray(pvalues, dtype=np.float64)
    return float(np.nanmin(p)) if (~np.isnan(p)).any() else np.nan


@validate_params({"pvalues": ["array-like"], "correction": CORRECTION})
def adjust_pvalues(pvalues, correction=None):
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        Raw p-values. NaN entries (tests that could not be run) are left NaN and
        do not count toward the family size.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default=None
        ``"bonferroni"``: ``min(1, m p)``; ``"holm"``: Holm's step-down
        family-wise correction; ``"fdr_bh"``: Benjamini-Hochberg false discovery
        rate (step-up). ``None`` (or ``"none"``, the command line's spelling)
        returns the p-values unchanged.

    Returns
    -------
    adjusted : ndarray of shape (m,)
        The adjusted p-values, in the order of ``pvalues``.

    Examples
    --------
    >>> from sklearn_smallfair.stats import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, 0.04, 0.03], "fdr_bh")
    array([0.03, 0.04, 0.04])
    >>> adjust_pvalues([0.01, 0.04, 0.03], "none")
    array([0.01, 0.04, 0.03])
    """
    return adjust_family(pvalues, correction)
