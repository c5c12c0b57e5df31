"""Counting the undefined values ("holes") of a metric over all matrices of size n."""

from math import comb

import numpy as np

from .._enumeration import (
    _check_enumeration,
    _check_size,
    enumerate_confusion_matrices,
    n_confusion_matrices,
)
from .._multiclass_counts import whole_matrix_name
from .._params import Whole, validate_params
from ._multiclass import count_undefined_multiclass
from ._registry import _REGISTRY, Metric, get_metric

__all__ = ["count_undefined"]

#: Matrices evaluated at once when holes are counted by enumeration: bounds the
#: temporaries of the metric formula (a few hundred bytes a matrix).
_CHUNK = 1 << 18


def _closed_form(m):
    """Hole count of a registry metric among the matrices of size ``n >= 1``, as a
    function of ``n``; ``None`` when there is none (the holes are enumerated).

    - binomial ``(c_i + c_j) / n`` and ``mb``: defined whenever ``n >= 1``;
    - joint ratio ``c_i / (c_i + c_j)``: ``c_i = c_j = 0``, the other two cells any
      split of ``n``: ``n + 1``;
    - ``f1``: only ``TP = FN = FP = 0``: 1;
    - ``f1_original`` (and ``FN / FP``, the component of ``te``): one cell is 0,
      the other three any split of ``n``: ``C(n + 2, 2)``;
    - ``mcc``: a zero margin; each of the four margins is zero on ``n + 1``
      matrices, and the four matrices with a single non-empty cell have two zero
      margins: ``4 (n + 1) - 4 = 4 n``.
    """
    te = _REGISTRY.get("te")
    if te is not None and m is te.component:
        return lambda n: comb(n + 2, 2)
    if _REGISTRY.get(m.name) is not m:
        return None  # a metric built outside the registry: nothing is known
    if m.family == "binomial" or m.name == "mb":
        return lambda n: 0
    if m.family == "joint_ratio":
        return lambda n: n + 1
    return {
        "f1": lambda n: 1,
        "f1_original": lambda n: comb(n + 2, 2),
        "mcc": lambda n: 4 * n,
    }.get(m.name)


def _n_undefined(metric, n, name):
    """Holes of a single-group metric among the ``C(n + 3, 3)`` matrices of size
    ``n``, and that number of matrices."""
    n = _check_size(n, name)
    total = n_confusion_matrices(n)
    if n == 0:
        # the only matrix of size 0 is (0, 0, 0, 0)
        return int(not np.isfinite(metric.func(np.zeros(4)))), total
    formula = _closed_form(metric)
    if formula is not None:
        return formula(n), total
    _check_enumeration(
        n,
        f"count_undefined({metric.name!r}, {name}={n})",
        f"{metric.name!r} has no closed-form hole count, so its holes are counted "
        f"by enumerating the matrices; pass a smaller {name}.",
    )
    cms = enumerate_confusion_matrices(n)
    defined = 0
    for lo in range(0, total, _CHUNK):
        defined += int(np.isfinite(metric.func(cms[lo : lo + _CHUNK])).sum())
    return total - defined, total


def _multiclass_only(metric):
    """A whole-matrix multiclass metric that the binary registry does not have."""
    if whole_matrix_name(metric) is None:
        return False
    try:
        get_metric(metric)
    except ValueError:
        return True
    return False


@validate_params(
    {
        "metric": [str, Metric],
        # a pair (n1, n2) for the two-group metrics, checked in the body
        "n": [Whole(0, None, closed="left"), tuple, list],
        "n_classes": [Whole(2, None, closed="left")],
    }
)
def count_undefined(metric, n, *, n_classes=2):
    """Number of confusion matrices of size ``n`` on which ``metric`` is undefined.

    Among the ``C(n + 3, 3)`` matrices with total ``n`` (see
    :func:`~sklearn_smallfair.enumerate_confusion_matrices`). Metrics of the
    registry with a closed-form count use it for every ``n``, instantly:

    - binomial metrics (``acc``, ``prev``, ...) and ``mb``: 0 for ``n >= 1``;
    - joint-ratio metrics ``c_i / (c_i + c_j)`` (``tpr``, ``ppv``, ...): ``n + 1``;
    - ``f1``: 1; ``f1_original``: ``C(n + 2, 2)``; ``mcc``: ``4 n`` (``n >= 1``);
    - at ``n = 0`` the only matrix is ``(0, 0, 0, 0)``, on which every registry
      metric is undefined.

    The others (``pt``, or a :class:`~sklearn_smallfair.metrics.Metric` built
    outside the registry) are counted by evaluating the metric's function on all
    the matrices, which holds them in memory: ``C(n + 3, 3) x 4 x 8`` bytes. Above
    ``MAX_ENUMERATION_BYTES`` of :mod:`sklearn_smallfair._enumeration` (2 GiB, so
    ``n <= 736``) a ``ValueError`` is raised instead.

    For a two-group metric the count is over all ordered pairs of matrices of
    sizes ``(n1, n2)``: a pair is undefined when either group's component is, so
    the count ``N1 N2 - D1 D2`` is exact without materialising the pairs (the
    components of ``te`` and ``ofi`` have closed forms).

    With ``n_classes=K > 2`` the count is over the ``C(n + K^2 - 1, K^2 - 1)``
    K x K matrices of size ``n`` (see :ref:`multiclass`): a registry metric is
    taken one-vs-rest for one class (the count is the same for every class), and
    ``"accuracy"``, ``"balanced_accuracy"``, ``"mcc"`` (Gorodkin's R_K) and
    ``"kappa"`` are the whole-matrix metrics. The one-vs-rest count is exact for
    every ``n`` whose ``C(n + 3, 3)`` binary matrices can be enumerated: each
    undefined binary matrix is weighted by the number of K x K matrices that map
    to it; the whole-matrix metrics have closed forms: 0 (accuracy, balanced
    accuracy), ``K`` (kappa: all of the mass in one diagonal cell) and
    ``2 K C(n + K - 1, K - 1) - K^2`` (R_K: a constant true or a constant predicted
    class).

    Parameters
    ----------
    metric : str or Metric
        A registered metric name or alias.
    n : int or tuple of (int, int)
        Matrix total, a whole number ``>= 0``; for two-group metrics an int (both
        groups of size ``n``) or a pair ``(n1, n2)``.
    n_classes : int, default=2
        Number of classes ``K`` of the confusion matrices.

    Returns
    -------
    count : int
        The number of confusion matrices of size ``n`` (``K x K`` with
        ``n_classes=K``; pairs of matrices for a two-group metric) on which
        ``metric`` is undefined (0/0).

    Raises
    ------
    TypeError
        If ``n`` (or ``n1``, ``n2``) is not an integer.
    ValueError
        If it is negative, or if a metric without a closed form would need more
        than ``MAX_ENUMERATION_BYTES`` of matrices.

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
    >>> count_undefined("tpr", 10**7)   # closed form: no enumeration
    10000001
    >>> count_undefined("pt", 10)       # no closed form: enumerated
    48
    >>> count_undefined("tpr", 10, n_classes=3)  # row of the class empty: C(15, 5)
    3003
    >>> count_undefined("kappa", 10, n_classes=3)
    3
    """
    if n_classes != 2 or _multiclass_only(metric):
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"n must be an int with n_classes={n_classes}; got {n!r}.")
        return count_undefined_multiclass(metric, _check_size(n, "n"), n_classes)
    m = get_metric(metric)
    if m.n_groups == 1:
        if isinstance(n, tuple):
            raise TypeError(
                f"n must be an int for the single-group metric {m.name!r}; got {n!r}."
            )
        undefined, _ = _n_undefined(m, n, "n")
        return undefined
    sizes = n if isinstance(n, tuple) else (n, n)
    if len(sizes) != 2:
        raise ValueError(f"n must be an int or a pair (n1, n2); got {n!r}.")
    h1, t1 = _n_undefined(m.component, sizes[0], "n1")
    h2, t2 = _n_undefined(m.component, sizes[1], "n2")
    return t1 * t2 - (t1 - h1) * (t2 - h2)
