"""Counting the undefined values ("holes") of a metric by exact enumeration."""

import numpy as np

from .._confusion import _check_size, enumerate_confusion_matrices
from ._registry import get_metric

__all__ = ["count_undefined"]


def _n_defined(metric, n):
    cms = enumerate_confusion_matrices(n)
    return int(np.isfinite(metric.func(cms)).sum()), cms.shape[0]


def count_undefined(metric, n):
    """Number of confusion matrices of size ``n`` on which ``metric`` is undefined.

    Counted by evaluating the registry's function on all ``C(n + 3, 3)`` matrices
    with total ``n`` (see :func:`~sklearn_smallfair.enumerate_confusion_matrices`).
    For a two-group metric the count is over all ordered pairs of matrices of
    sizes ``(n1, n2)``: a pair is undefined when either group's component is, so
    the count ``N1 N2 - D1 D2`` is exact without materialising the pairs.

    Parameters
    ----------
    metric : str or Metric
        A registered metric name or alias.
    n : int or tuple of (int, int)
        Matrix total; for two-group metrics an int (both groups of size ``n``) or
        a pair ``(n1, n2)``.

    Returns
    -------
    count : int

    Examples
    --------
    >>> from sklearn_smallfair.metrics import count_undefined
    >>> count_undefined("tpr", 10)      # joint-ratio metrics: n + 1
    11
    >>> count_undefined("mcc", 10)      # 4 n
    40
    >>> count_undefined("f1_original", 10)   # C(n + 2, 2)
    66
    >>> count_undefined("acc", 10)
    0
    """
    m = get_metric(metric)
    if m.n_groups == 1:
        if isinstance(n, tuple):
            raise TypeError(
                f"n must be an int for the single-group metric {m.name!r}; got {n!r}."
            )
        defined, total = _n_defined(m, _check_size(n))
        return total - defined
    sizes = n if isinstance(n, tuple) else (n, n)
    if len(sizes) != 2:
        raise ValueError(f"n must be an int or a pair (n1, n2); got {n!r}.")
    d1, t1 = _n_defined(m.component, _check_size(sizes[0], "n1"))
    d2, t2 = _n_defined(m.component, _check_size(sizes[1], "n2"))
    return t1 * t2 - d1 * d2
