"""Confusion-matrix core: cell order, grouped counting, references, enumeration, pmfs.

Confusion matrices are numpy arrays of shape ``(..., 4)`` with cells ordered
``(TP, FN, FP, TN)``, i.e. ``[[TP, FN], [FP, TN]]``. scikit-learn's
``confusion_matrix(...).ravel()`` is ``(TN, FP, FN, TP)``; :func:`from_sklearn_order`
converts, and nothing else in the package does.
"""

from collections.abc import Mapping
from functools import lru_cache
from math import comb
from typing import NamedTuple

import numpy as np
from scipy.special import betaln, gammaln, xlogy

from ._counting import _finish, _partial_counts
from ._dataframes import dask_grouped_counts, is_dask_collection, to_local
from ._params import COUNTS, POS_LABEL, REFERENCE, Whole, validate_params
from ._validation import (
    _asarray,
    check_binary_targets,
    check_counts,
    check_sample_weight,
    format_labels,
)

__all__ = [
    "CELLS",
    "FN",
    "FP",
    "TN",
    "TP",
    "ConfusionCounts",
    "check_group_counts",
    "confusion_counts",
    "dirichlet_multinomial_logpmf",
    "enumerate_confusion_matrices",
    "from_sklearn_order",
    "multinomial_logpmf",
    "multivariate_hypergeometric_logpmf",
    "n_confusion_matrices",
    "reference_counts",
]

#: Cell names in the package's order.
CELLS = ("TP", "FN", "FP", "TN")
TP, FN, FP, TN = range(4)

# scikit-learn's ravel order (TN, FP, FN, TP) -> ours (TP, FN, FP, TN).
_SKLEARN_TO_OURS = np.array([3, 2, 1, 0])


@validate_params({"cm": ["array-like"]})
def from_sklearn_order(cm):
    """Convert scikit-learn confusion matrices to the package's cell order.

    Parameters
    ----------
    cm : array-like of shape (..., 2, 2) or (..., 4)
        Output of :func:`sklearn.metrics.confusion_matrix` for labels
        ``[negative, positive]`` (``[[TN, FP], [FN, TP]]``), or its ``ravel()``.

    Returns
    -------
    counts : ndarray of shape (..., 4)
        The same counts ordered ``(TP, FN, FP, TN)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import from_sklearn_order
    >>> from_sklearn_order(np.array([[5, 1], [2, 7]]))
    array([7, 2, 1, 5])
    """
    cm = np.asarray(cm)
    if cm.shape[-2:] == (2, 2):
        cm = cm.reshape(*cm.shape[:-2], 4)
    cm = check_counts(cm, name="cm")
    return cm[..., _SKLEARN_TO_OURS]


def _grouped_counts(y_true, y_pred, sensitive_features, sample_weight, pos_label):
    """Count cells per group in one pass of ``np.bincount``.

    Returns ``(groups, counts, group_name)``; ``groups`` is ``None`` when
    ``sensitive_features`` is ``None`` (then ``counts`` has shape ``(4,)``).
    dask collections are counted partition by partition and the tables added
    by label; polars and pyarrow columns are read one column at a time
    (:mod:`sklearn_smallfair._dataframes`).
    """
    data = (y_true, y_pred, sensitive_features, sample_weight)
    if any(is_dask_collection(v) for v in data):
        return dask_grouped_counts(*data, pos_label=pos_label)
    y_true, y_pred, sensitive_features, sample_weight = (
        to_local(y_true, "y_true"),
        to_local(y_pred, "y_pred"),
        to_local(sensitive_features, "sensitive_features", frame=True),
        to_local(sample_weight, "sample_weight"),
    )
    if sensitive_features is None:
        t, p = check_binary_targets(y_true, y_pred, pos_label=pos_label)
        w = check_sample_weight(sample_weight, t.shape[0])
        # cell index in (TP, FN, FP, TN): 2 * (not true) + (not predicted)
        cell = (~t).astype(np.int64) * 2 + (~p)
        counts = np.bincount(cell, weights=w, minlength=4)
        if w is not None and counts.sum() == 0:
            raise ValueError("sample_weight sums to zero; no sample carries weight.")
        return None, counts, None
    partial, name = _partial_counts(y_true, y_pred, sensitive_features, sample_weight)
    groups, counts = _finish(partial, pos_label)
    return groups, counts, name


class ConfusionCounts(NamedTuple):
    """Confusion-matrix counts with their group labels (see :func:`confusion_counts`).

    A named tuple, so ``groups, counts = confusion_counts(...)`` unpacks it.

    Attributes
    ----------
    groups : ndarray of shape (n_groups,) or None
        Sorted group labels; ``None`` when no ``sensitive_features`` were given.
    counts : ndarray of shape (n_groups, 4) or (4,)
        Cells ``(TP, FN, FP, TN)``; shape ``(4,)`` when ``groups`` is ``None``.
    """

    groups: np.ndarray | None
    counts: np.ndarray

    def to_frame(self):
        """The counts as a DataFrame: one row per group, columns ``TP, FN, FP, TN``.

        Returns
        -------
        frame : pandas.DataFrame
            Indexed by group (a single row labelled ``"all"`` without groups).
        """
        import pandas as pd

        counts = np.atleast_2d(self.counts)
        index = pd.Index(
            ["all"] if self.groups is None else list(self.groups), name="group"
        )
        return pd.DataFrame(counts, index=index, columns=list(CELLS))


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like", None],
        "sample_weight": ["array-like", None],
        "pos_label": POS_LABEL,
    }
)
def confusion_counts(
    y_true, y_pred, *, sensitive_features=None, sample_weight=None, pos_label=1
):
    """Binary confusion-matrix counts, overall or per group.

    All groups are counted in one pass (a single :func:`numpy.bincount`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Group label of each sample. A 2-D array or DataFrame defines intersectional
        groups labelled ``"a|b"``. ``None`` counts all samples together.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; counts are then weighted sums (float).
    pos_label : int, float, bool or str, default=1
        The positive class.

    Returns
    -------
    result : ConfusionCounts
        A named tuple ``(groups, counts)``, whatever the arguments: ``groups`` are
        the sorted group labels (``None`` without ``sensitive_features``);
        ``counts`` has cells ``(TP, FN, FP, TN)``, shape ``(n_groups, 4)`` (or
        ``(4,)`` without groups), int64 without weights and float64 with them.

    Notes
    -----
    Up to version 0.1.0.dev0 the call without ``sensitive_features`` returned the
    bare ``(4,)`` array; it is now ``result.counts``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import confusion_counts
    >>> y_true = [1, 1, 0, 0, 1, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 0]
    >>> confusion_counts(y_true, y_pred).counts
    array([2, 1, 1, 2])
    >>> groups, counts = confusion_counts(
    ...     y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"])
    >>> groups
    array(['a', 'b'], dtype='<U1')
    >>> counts
    array([[1, 1, 0, 1],
           [1, 0, 1, 1]])
    >>> confusion_counts(
    ...     y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]
    ... ).to_frame()
           TP  FN  FP  TN
    group
    a       1   1   0   1
    b       1   0   1   1
    """
    groups, counts, _ = _grouped_counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    return ConfusionCounts(groups, counts)


@validate_params({"counts": COUNTS})
def check_group_counts(counts):
    """Validate per-group counts given as a table instead of rows.

    Parameters
    ----------
    counts : pandas.DataFrame, mapping or array-like of shape (n_groups, 4)
        - a DataFrame with columns ``TP, FN, FP, TN`` (any case); group labels from
          a ``group`` column if present, else from the index;
        - a mapping ``{group: (TP, FN, FP, TN)}``;
        - an array of shape (n_groups, 4), groups labelled ``0 .. n_groups - 1``.

    Returns
    -------
    groups : ndarray of shape (n_groups,)
    counts : ndarray of shape (n_groups, 4)
    name : str
        Name of the grouping (``"group"`` unless the DataFrame index is named).

    Examples
    --------
    >>> from sklearn_smallfair import check_group_counts
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> table = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> groups, counts, name = check_group_counts(table)
    >>> groups, counts
    (array(['Black', 'White'], dtype=object), array([[ 273,  170, 1043, 1692],
           [  77,  129,  380, 1679]]))
    """
    import pandas as pd

    name = "group"
    if isinstance(counts, pd.DataFrame):
        lower = {str(c).lower(): c for c in counts.columns}
        missing = [c for c in CELLS if c.lower() not in lower]
        if missing:
            raise ValueError(
                f"counts is a DataFrame without the column(s) {missing}; it needs "
                f"columns {list(CELLS)} (one row per group)."
            )
        if "group" in lower:
            groups = counts[lower["group"]].to_numpy()
        else:
            groups = counts.index.to_numpy()
            if counts.index.name is not None:
                name = str(counts.index.name)
        values = counts[[lower[c.lower()] for c in CELLS]].to_numpy()
    elif isinstance(counts, Mapping):
        groups = np.array(list(counts.keys()), dtype=object)
        values = _asarray(list(counts.values()), "counts")
    else:
        values = _asarray(counts, "counts")
        groups = np.arange(values.shape[0]) if values.ndim == 2 else None
    values = check_counts(values)
    if values.ndim != 2:
        raise ValueError(
            f"counts must hold one (TP, FN, FP, TN) row per group, shape "
            f"(n_groups, 4); "
            f"got {values.shape}."
        )
    if values.shape[0] == 0:
        raise ValueError(
            "counts has no groups (shape (0, 4)); pass one (TP, FN, FP, TN) row per "
            "group."
        )
    if len(groups) != len(set(groups.tolist())):
        raise ValueError("counts has duplicate group labels.")
    empty = values.sum(axis=1) == 0
    if empty.any():
        raise ValueError(
            f"group(s) {format_labels(groups[empty])} in counts are empty "
            f"(all cells 0); drop "
            f"them."
        )
    return groups, values, name


def rows_or_counts(
    y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
):
    """Per-group counts from rows (y_true, y_pred, groups) or from a counts table.

    Returns ``(groups, counts, group_name)``; exactly one of the two inputs must be
    given.
    """
    if counts is not None:
        given = [
            n
            for n, v in (
                ("y_true", y_true),
                ("y_pred", y_pred),
                ("sensitive_features", sensitive_features),
                ("sample_weight", sample_weight),
            )
            if v is not None
        ]
        if given:
            raise ValueError(
                f"pass either rows (y_true, y_pred, sensitive_features) or counts, "
                f"not both; got counts and {', '.join(given)}."
            )
        return check_group_counts(counts)
    if y_true is None or y_pred is None:
        raise ValueError(
            "pass y_true, y_pred and sensitive_features, or counts=<per-group table>."
        )
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    return _grouped_counts(y_true, y_pred, sensitive_features, sample_weight, pos_label)


def _is_explicit_counts(reference):
    return isinstance(reference, (list, tuple, np.ndarray)) or hasattr(
        reference, "to_numpy"
    )


@validate_params(
    {"counts": ["array-like"], "reference": REFERENCE, "groups": ["array-like", None]}
)
def reference_counts(counts, reference="rest", *, groups=None):
    """Reference confusion matrix for each group.

    Parameters
    ----------
    counts : array-like of shape (n_groups, 4)
        Per-group counts ``(TP, FN, FP, TN)``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        - ``"rest"``: leave-one-group-out, ``total - counts[g]``;
        - ``"total"``: all groups together (including the group itself);
        - a label in ``groups``: that group's matrix for every group;
        - array-like of shape (4,) or (n_groups, 4): explicit reference counts.

        The strings ``"rest"`` and ``"total"`` take precedence over group labels.
    groups : array-like of shape (n_groups,), default=None
        Group labels, needed when ``reference`` names a group.

    Returns
    -------
    reference_counts : ndarray of shape (n_groups, 4)

    Raises
    ------
    ValueError
        If a reference matrix has zero total (e.g. ``"rest"`` with a single group).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import reference_counts
    >>> counts = np.array([[1, 2, 3, 4], [10, 20, 30, 40]])
    >>> reference_counts(counts)
    array([[10, 20, 30, 40],
           [ 1,  2,  3,  4]])
    >>> reference_counts(counts, "b", groups=["a", "b"])
    array([[10, 20, 30, 40],
           [10, 20, 30, 40]])
    """
    counts = check_counts(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must have shape (n_groups, 4), got {counts.shape}.")
    n_groups = counts.shape[0]
    labels = None if groups is None else np.asarray(groups)
    if labels is not None and labels.shape != (n_groups,):
        raise ValueError(
            f"groups must hold one label per row of counts ({n_groups}); got shape "
            f"{labels.shape}."
        )
    if isinstance(reference, str) and reference == "rest":
        ref = counts.sum(axis=0) - counts
        if ref.dtype.kind == "f":
            ref = np.maximum(ref, 0.0)  # rounding of weighted sums
    elif isinstance(reference, str) and reference == "total":
        ref = np.broadcast_to(counts.sum(axis=0), counts.shape).copy()
    elif _is_explicit_counts(reference):
        ref = check_counts(reference, name="reference")
        if ref.shape not in ((4,), (n_groups, 4)):
            raise ValueError(
                f"explicit reference counts must have shape (4,) or ({n_groups}, 4); "
                f"got {ref.shape}."
            )
        ref = np.broadcast_to(ref, counts.shape).copy()
    else:
        if labels is None:
            raise ValueError(
                f"reference={reference!r} names a group, so pass groups=..."
            )
        match = np.flatnonzero(labels == reference) if labels.size else []
        if len(match) != 1:
            raise ValueError(
                f"reference={reference!r} is not 'rest', 'total', a group label or "
                f"explicit counts; the groups are {format_labels(labels)}."
            )
        ref = np.broadcast_to(counts[match[0]], counts.shape).copy()
    zero = ref.sum(axis=1) <= 0
    if zero.any():
        which = format_labels(
            labels[zero] if labels is not None else np.flatnonzero(zero)
        )
        hint = (
            " With reference='rest' this happens when there is only one group or "
            "every other group is empty."
            if isinstance(reference, str) and reference == "rest"
            else ""
        )
        raise ValueError(
            f"the reference matrix of group(s) {which} has zero total, so it has no "
            f"proportions to smooth or test against.{hint}"
        )
    return ref


#: Largest array :func:`enumerate_confusion_matrices` builds: ``C(n + 3, 3)`` rows
#: of 4 int64 cells (32 bytes a row) may take at most this many bytes (2 GiB, i.e.
#: ``n <= 736``).
MAX_ENUMERATION_BYTES = 2 * 1024**3
#: Enumerations of at most this many rows (32 MiB, ``n <= 182``) are cached.
_ENUMERATION_CACHE_ROWS = 1 << 20


def _format_bytes(n_bytes):
    """``n_bytes`` in the largest binary unit that keeps the number >= 1."""
    value = float(n_bytes)
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB")
    for unit in units:
        if value < 1024 or unit == units[-1]:
            break
        value /= 1024
    if unit == "bytes":
        return f"{int(value)} bytes"
    return f"{value:.4g} {unit}"


def _enumeration_bytes(n):
    """Bytes of the array of all matrices of size ``n`` (4 int64 cells a row)."""
    return n_confusion_matrices(n) * 4 * 8


def _largest_n(fits):
    """Largest ``n >= 0`` with ``fits(n)``, for ``fits`` true at 0 and decreasing."""
    lo, hi = 0, 1
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _check_enumeration(n, what, hint):
    """Raise before building the ``C(n + 3, 3)`` matrices of size ``n`` when their
    array would exceed ``MAX_ENUMERATION_BYTES``: ``what`` (the caller) would build
    them, ``hint`` says what to use instead."""
    n_bytes = _enumeration_bytes(n)
    if n_bytes > MAX_ENUMERATION_BYTES:
        largest = _largest_n(lambda m: _enumeration_bytes(m) <= MAX_ENUMERATION_BYTES)
        raise ValueError(
            f"{what} would build all C(n + 3, 3) = {n_confusion_matrices(n):,} "
            f"confusion matrices of size n={n}, {_format_bytes(n_bytes)} of memory, "
            f"above the bound MAX_ENUMERATION_BYTES = "
            f"{_format_bytes(MAX_ENUMERATION_BYTES)} (n <= {largest}). {hint}"
        )


@validate_params({"n": [Whole(0, None, closed="left")]})
def n_confusion_matrices(n):
    """Number of 2x2 confusion matrices with total ``n``: ``C(n + 3, 3)``.

    Parameters
    ----------
    n : int
        Total count (group size), a whole number ``n >= 0``.

    Returns
    -------
    count : int
        An exact Python integer, computed without enumerating anything.

    Examples
    --------
    >>> from sklearn_smallfair import n_confusion_matrices
    >>> n_confusion_matrices(150)
    585276
    >>> n_confusion_matrices(10**6)
    166667666668500001
    """
    return comb(_check_size(n) + 3, 3)


def _check_size(n, name="n"):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be a non-negative integer, got {n!r}.")
    if n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n}.")
    return int(n)


def _build_enumeration(n):
    # Pairs (FN, FP) with FN + FP <= m, ordered by s = FN + FP, so the pairs with
    # FN + FP <= m are the first T(m) = (m + 1)(m + 2) / 2 entries for every m.
    s = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    tri = np.arange(s.shape[0]) - s * (s + 1) // 2
    fn_tri, fp_tri = tri, s - tri
    tp = np.arange(n + 1)
    sizes = (n - tp + 1) * (n - tp + 2) // 2  # T(n - TP) completions per TP
    starts = np.cumsum(sizes) - sizes
    tp_col = np.repeat(tp, sizes)
    idx = np.arange(tp_col.shape[0]) - np.repeat(starts, sizes)
    out = np.empty((tp_col.shape[0], 4), dtype=np.int64)
    out[:, TP] = tp_col
    out[:, FN] = fn_tri[idx]
    out[:, FP] = fp_tri[idx]
    out[:, TN] = n - tp_col - out[:, FN] - out[:, FP]
    out.flags.writeable = False
    return out


@lru_cache(maxsize=16)
def _enumerate_cached(n):
    return _build_enumeration(n)


@validate_params({"n": [Whole(0, None, closed="left")]})
def enumerate_confusion_matrices(n):
    """All ``C(n + 3, 3)`` confusion matrices with total ``n``.

    Built directly (no masking of an ``(n + 1)^3`` grid); the result is read-only,
    and cached for ``n <= 182`` (at most 2^20 rows).

    The array takes ``C(n + 3, 3) x 4 x 8`` bytes, about ``5.3 n^3`` bytes: 1.7
    GiB for ``n = 700``, 4.9 TiB for ``n = 10^4``. Sizes whose array would exceed
    ``MAX_ENUMERATION_BYTES`` (2 GiB, so ``n <= 736``) raise a ``ValueError``
    before anything is allocated; :func:`n_confusion_matrices` gives the count for
    any ``n`` without enumerating.

    Parameters
    ----------
    n : int
        Total count (group size), a whole number ``0 <= n <= 736``.

    Returns
    -------
    counts : ndarray of int64, shape (C(n + 3, 3), 4)
        Every non-negative integer matrix ``(TP, FN, FP, TN)`` summing to ``n``,
        ordered by ``TP``, then ``FN + FP``, then ``FN`` (all ascending).

    Raises
    ------
    TypeError
        If ``n`` is not an integer (``bool`` and floats such as ``2.0`` included).
    ValueError
        If ``n`` is negative, or if the array would take more than
        ``MAX_ENUMERATION_BYTES``.

    Examples
    --------
    >>> from sklearn_smallfair import enumerate_confusion_matrices
    >>> enumerate_confusion_matrices(1)
    array([[0, 0, 0, 1],
           [0, 0, 1, 0],
           [0, 1, 0, 0],
           [1, 0, 0, 0]])
    >>> enumerate_confusion_matrices(150).shape
    (585276, 4)
    """
    n = _check_size(n)
    _check_enumeration(
        n,
        "enumerate_confusion_matrices(n)",
        "Use n_confusion_matrices(n) for their number, or draw matrices at random "
        "(e.g. numpy's Generator.multinomial) instead of enumerating them all.",
    )
    if n_confusion_matrices(n) <= _ENUMERATION_CACHE_ROWS:
        return _enumerate_cached(n)
    return _build_enumeration(n)


_LOG_FACTORIAL_TABLE_MAX = 1 << 20


@lru_cache(maxsize=1)
def _log_factorial_table(size):
    return gammaln(np.arange(size + 1, dtype=np.float64) + 1.0)


def _log_factorial(x):
    """``log(x!)`` for an array; a table lookup for small non-negative integers."""
    x = np.asarray(x)
    if x.dtype.kind in "iu" and x.size:
        top = int(x.max())
        if top <= _LOG_FACTORIAL_TABLE_MAX and int(x.min()) >= 0:
            size = 1 << max(top, 1).bit_length()  # power of two: few table sizes
            return _log_factorial_table(size)[x]
    return gammaln(np.asarray(x, dtype=np.float64) + 1.0)


def _check_probabilities(p, name="p"):
    p = check_counts(p, name=name).astype(np.float64)
    total = p.sum(axis=-1, keepdims=True)
    if (total <= 0).any():
        raise ValueError(f"{name} must have a positive sum along its last axis.")
    return p / total


@validate_params({"counts": ["array-like"], "p": ["array-like"]})
def multinomial_logpmf(counts, p):
    """Log-pmf of the multinomial law of confusion matrices.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts; ``n`` is their sum along the last axis.
    p : array-like of shape (..., 4)
        Cell probabilities (or any non-negative weights, normalised to sum to 1
        along the last axis), broadcast against ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``log n! - sum log c_i! + sum c_i log p_i`` (``-inf`` where a cell with
        probability zero is non-empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf
    >>> cms = enumerate_confusion_matrices(10)
    >>> round(float(np.exp(multinomial_logpmf(cms, [0.1, 0.2, 0.3, 0.4])).sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    p = _check_probabilities(p)
    n, cells = _totals_and_cells(counts)
    # per cell: k log p_j - log k!
    return _log_factorial(n) + _sum_cell_terms(
        counts, cells, n, p, lambda k, j: xlogy(k, p[..., j]) - _log_factorial(k)
    )


def _totals_and_cells(counts):
    """Matrix totals and the four cell columns (int64 for integer counts)."""
    if counts.dtype.kind in "iu":
        counts = counts.astype(np.int64, copy=False)  # no overflow in the sums
    # Explicit additions over the 4 cells: numpy reductions along a length-4 last
    # axis are several times slower than three elementwise additions.
    cells = [counts[..., j] for j in range(4)]
    return cells[0] + cells[1] + cells[2] + cells[3], cells


def _sum_cell_terms(counts, cells, n, params, term):
    """``sum_j term(c_j, j)`` over the four cells of every matrix.

    For integer counts and one parameter vector, ``term`` is tabulated once per
    cell for ``k = 0..max(n)`` and looked up: no per-matrix special function.
    """
    top = int(n.max()) if counts.dtype.kind in "iu" and counts.size else -1
    if 0 <= top <= _LOG_FACTORIAL_TABLE_MAX and params.ndim == 1:
        k = np.arange(top + 1)
        out = 0.0
        for j in range(4):
            out = out + term(k, j)[cells[j]]
        return out
    return term(cells[0], 0) + term(cells[1], 1) + term(cells[2], 2) + term(cells[3], 3)


@validate_params({"counts": ["array-like"], "alpha": ["array-like"]})
def dirichlet_multinomial_logpmf(counts, alpha):
    """Log-pmf of the Dirichlet-multinomial law of confusion matrices.

    The law of a matrix of size ``n`` whose cell probabilities are themselves
    uncertain, ``p ~ Dirichlet(alpha)``: for example the reference proportions
    estimated from reference counts ``r`` with a prior ``a0``, ``alpha = r + a0``.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts; ``n`` is their sum along the last axis.
    alpha : array-like of shape (..., 4)
        Positive Dirichlet concentration parameters, broadcast against ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``log n! - sum log c_i! + log G(A) - log G(n + A)
        + sum [log G(c_i + alpha_i) - log G(alpha_i)]`` with ``A = sum alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import (dirichlet_multinomial_logpmf,
    ...     enumerate_confusion_matrices)
    >>> cms = enumerate_confusion_matrices(8)
    >>> pmf = np.exp(dirichlet_multinomial_logpmf(cms, [2.5, 0.5, 1.0, 7.0]))
    >>> round(float(pmf.sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    alpha = check_counts(alpha, name="alpha").astype(np.float64)
    if (alpha <= 0).any():
        raise ValueError("alpha must be strictly positive.")
    n, cells = _totals_and_cells(counts)
    total = alpha[..., 0] + alpha[..., 1] + alpha[..., 2] + alpha[..., 3]
    # per cell: log G(k + a_j) - log G(a_j) - log k!
    return (
        _log_factorial(n)
        + gammaln(total)
        - gammaln(n + total)
        + _sum_cell_terms(
            counts,
            cells,
            n,
            alpha,
            lambda k, j: (
                gammaln(k + alpha[..., j]) - gammaln(alpha[..., j]) - _log_factorial(k)
            ),
        )
    )


@validate_params({"counts": ["array-like"], "population": ["array-like"]})
def multivariate_hypergeometric_logpmf(counts, population):
    """Log-pmf of drawing ``counts`` without replacement from ``population``.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts of the sample (size ``n`` = their sum).
    population : array-like of shape (..., 4)
        Integer cell counts of the population (size ``N``), broadcast against
        ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``sum log C(K_i, c_i) - log C(N, n)``; ``-inf`` where ``c_i > K_i`` or
        ``n > N``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import (enumerate_confusion_matrices,
    ...     multivariate_hypergeometric_logpmf)
    >>> cms = enumerate_confusion_matrices(5)
    >>> pmf = np.exp(multivariate_hypergeometric_logpmf(cms, [3, 4, 5, 6]))
    >>> round(float(pmf.sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    population = check_counts(population, name="population")
    for arr, name in ((counts, "counts"), (population, "population")):
        if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"{name} must hold integer counts.")
    counts = counts.astype(np.int64)
    population = population.astype(np.int64)
    counts, population = np.broadcast_arrays(counts, population)
    feasible = (counts <= population).all(axis=-1)
    rest = np.where(feasible[..., None], population - counts, 0)
    log_num = (
        _log_factorial(population) - _log_factorial(counts) - _log_factorial(rest)
    ).sum(axis=-1)
    n = counts.sum(axis=-1)
    big_n = population.sum(axis=-1)
    log_den = (
        _log_factorial(big_n)
        - _log_factorial(n)
        - _log_factorial(np.maximum(big_n - n, 0))
    )
    return np.where(feasible, log_num - log_den, -np.inf)


def _log_binomial(total, k):
    """``log C(total, k)`` for ``0 <= k <= total`` (``-inf`` elsewhere), accurate
    for large totals (no difference of huge log-factorials)."""
    total, k = np.broadcast_arrays(
        np.asarray(total, dtype=np.float64), np.asarray(k, dtype=np.float64)
    )
    ok = (k >= 0) & (k <= total)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = -np.log1p(total) - betaln(total - k + 1.0, k + 1.0)
    return np.where(ok, out, -np.inf)


def _logpmf_by_group(cells, group_counts, law):
    """Log-pmf of every matrix under every group's sampling law, shape (G, M).

    ``cells`` (M, 4) are integer matrices of one size ``n``; ``group_counts``
    (G, 4) the groups' whole matrices. ``law="multinomial"`` draws with
    replacement from the proportions ``K / N``, ``"hypergeometric"`` draws ``n``
    of the ``N`` rows. The per-cell terms are tabulated once per (group, cell)
    for ``k = 0..n`` and gathered, so the cost is four lookups per matrix and
    group.
    """
    cells = np.asarray(cells)
    group_counts = np.asarray(group_counts)
    n = int(cells[0].sum()) if cells.shape[0] else 0
    k = np.arange(n + 1, dtype=np.float64)
    big_n = group_counts.sum(axis=1)
    if law == "multinomial":
        p = group_counts / big_n[:, None]
        table = xlogy(k, p[:, :, None]) - _log_factorial(np.arange(n + 1))
        const = np.full(len(group_counts), float(_log_factorial(np.array([n]))[0]))
    else:
        table = _log_binomial(group_counts[:, :, None], k)
        const = -_log_binomial(big_n, n)
    columns = [np.ascontiguousarray(cells[:, j]) for j in range(4)]
    out = np.empty((len(group_counts), cells.shape[0]))
    for g, row in enumerate(out):  # one-dimensional takes: the fast gathers
        np.take(table[g, 0], columns[0], out=row)
        for j in (1, 2, 3):
            row += np.take(table[g, j], columns[j])
        row += const[g]
    return out
