"""Multiclass confusion matrices: counting, one-vs-rest matrices, enumeration and
the readers of per-group K x K counts and their references.

A multiclass confusion matrix is an array of shape ``(..., K, K)`` with rows the true
class and columns the predicted class, in the order of ``labels`` (scikit-learn's
orientation). This module is the bottom layer shared by the multiclass metrics, the
multiclass MATCH test, the audit and the down-sampling engine.
"""

from collections.abc import Mapping
from math import comb
from typing import NamedTuple

import numpy as np
import pandas as pd

from ._confusion import FN, FP, TN, TP
from ._enumeration import MAX_ENUMERATION_BYTES
from ._frames import from_data
from ._groups import check_sensitive_features
from ._params import validate_params
from ._validation import (
    _match_names,
    _numeric_cells,
    _sorted_labels,
    check_paired_targets,
    check_sample_weight,
    format_labels,
    integer_counts,
)

__all__ = [
    "MULTICLASS_METRICS",
    "MulticlassCounts",
    "check_square",
    "enumerate_multiclass_matrices",
    "group_matrices",
    "long_table",
    "multiclass_confusion_counts",
    "n_multiclass_matrices",
    "one_vs_rest",
    "ovr_multiplicity",
    "reference_matrices",
    "whole_matrix_name",
]

#: Metrics defined on the whole K x K matrix (not per class).
MULTICLASS_METRICS = ("accuracy", "balanced_accuracy", "mcc", "kappa")
_MULTICLASS_ALIASES = {
    "accuracy": "accuracy",
    "acc": "accuracy",
    "balanced_accuracy": "balanced_accuracy",
    "bacc": "balanced_accuracy",
    "mcc": "mcc",
    "matthews_corrcoef": "mcc",
    "rk": "mcc",
    "kappa": "kappa",
    "cohen_kappa": "kappa",
    "cohen_kappa_score": "kappa",
}


def whole_matrix_name(metric):
    """The canonical name of a whole-matrix metric named ``metric`` (an alias,
    case-insensitive), or ``None`` for any other name.

    Examples
    --------
    >>> from sklearn_smallfair._multiclass_counts import whole_matrix_name
    >>> whole_matrix_name("Cohen_Kappa"), whole_matrix_name("tpr")
    ('kappa', None)
    """
    if not isinstance(metric, str):
        return None
    return _MULTICLASS_ALIASES.get(metric.lower())


class MulticlassCounts(NamedTuple):
    """Multiclass confusion matrices with their group and class labels.

    A named tuple, so ``groups, labels, counts = multiclass_confusion_counts(...)``
    unpacks it.

    Parameters
    ----------
    groups : ndarray of shape (n_groups,) or None
        Sorted group labels; ``None`` when no ``sensitive_features`` were given.
    labels : ndarray of shape (n_classes,)
        The class order of the matrices' rows and columns.
    counts : ndarray of shape (n_groups, n_classes, n_classes) or \
            (n_classes, n_classes)
        ``counts[..., i, j]``: samples of true class ``labels[i]`` predicted as
        ``labels[j]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import MulticlassCounts
    >>> mc = MulticlassCounts(np.array(["a"]), np.array([0, 1]),
    ...                       np.array([[[3, 1], [0, 2]]]))
    >>> mc.to_frame()
      group  true  predicted  count
    0     a     0          0      3
    1     a     0          1      1
    2     a     1          0      0
    3     a     1          1      2
    """

    groups: np.ndarray | None
    labels: np.ndarray
    counts: np.ndarray

    def to_frame(self):
        """The counts in long format: one row per (group, true class, predicted class).

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``group`` (when there are groups), ``true``, ``predicted`` and
            ``count``, ready for ``pivot_table``.
        """
        counts = self.counts
        k = self.labels.shape[0]
        true = np.repeat(self.labels, k)
        pred = np.tile(self.labels, k)
        if self.groups is None:
            return pd.DataFrame(
                {"true": true, "predicted": pred, "count": counts.reshape(-1)}
            )
        g = self.groups.shape[0]
        return pd.DataFrame(
            {
                "group": np.repeat(self.groups, k * k),
                "true": np.tile(true, g),
                "predicted": np.tile(pred, g),
                "count": counts.reshape(-1),
            }
        )


#: Integer labels spanning at most this many values are coded without hashing.
_MAX_SPAN = 1 << 20


def _codes(y):
    """``(uniques, codes)`` with ``uniques[codes] == y``: integers in a short range
    and booleans are their own codes (no hashing), other labels are hashed once;
    ``uniques`` keeps only the values present."""
    kind = y.dtype.kind
    if kind == "b":
        y = y.view(np.uint8)
        kind = "u"
        base = np.array([False, True])
    else:
        base = None
    if kind in "iu" and y.shape[0] > 0:
        lo, hi = int(y.min()), int(y.max())
        if hi - lo < _MAX_SPAN:
            codes = y.astype(np.intp, copy=True)
            if lo:
                codes -= lo
            present = np.flatnonzero(np.bincount(codes, minlength=hi - lo + 1))
            values = (
                base[present]
                if base is not None
                else present.astype(y.dtype) + y.dtype.type(lo)
            )
            if present.shape[0] == hi - lo + 1:  # every value of the range occurs
                return values, codes
            lut = np.full(hi - lo + 1, -1, dtype=np.intp)
            lut[present] = np.arange(present.shape[0])
            return values, lut[codes]
    codes, uniques = pd.factorize(y)
    return np.asarray(uniques), codes.astype(np.intp, copy=False)


def _class_labels(y_true, y_pred, labels):
    """Class order and the class index of every sample, with clear errors.

    Each array is coded once (:func:`_codes`); only its few distinct values are
    compared with ``labels``, then one gather maps every row to its class.
    """
    (u_true, c_true), (u_pred, c_pred) = _codes(y_true), _codes(y_pred)
    if labels is None:
        both = pd.unique(np.concatenate([u_true.astype(object), u_pred.astype(object)]))
        labels = _sorted_labels(both, "y_true and y_pred")
        if labels.dtype.kind == "O":
            try:
                labels = np.asarray(labels.tolist())
            except (TypeError, ValueError):  # pragma: no cover - mixed types refused
                pass
        if labels.dtype.kind == "f" and not np.array_equal(labels, np.round(labels)):
            raise ValueError(
                "y_true or y_pred holds continuous values but class labels are "
                "needed; threshold or round the scores into classes first."
            )
    else:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.shape[0] == 0:
            raise ValueError(
                f"labels must be a non-empty 1-D list of class labels, got shape "
                f"{labels.shape}."
            )
        if pd.unique(labels.astype(object)).shape[0] != labels.shape[0]:
            raise ValueError(f"labels has repeated values: {format_labels(labels)}.")
    index = pd.Index(labels.astype(object), dtype=object)
    codes = []
    for name, uniques, code in (("y_true", u_true, c_true), ("y_pred", u_pred, c_pred)):
        position = index.get_indexer(pd.Index(uniques.astype(object), dtype=object))
        if (position < 0).any():
            raise ValueError(
                f"{name} has class(es) {format_labels(uniques[position < 0])} that "
                f"are not in labels={format_labels(labels)}; add them to labels or "
                f"drop those rows."
            )
        if np.array_equal(position, np.arange(position.shape[0])):
            codes.append(code)  # the labels' order is the codes' order
        else:
            codes.append(position.astype(np.intp)[code])
    if labels.shape[0] < 2:
        raise ValueError(
            f"a confusion matrix needs at least two classes, got "
            f"{format_labels(labels)}; pass labels=[...] with every class."
        )
    return labels, codes[0], codes[1]


@validate_params(
    {
        "y_true": ["array-like", str],
        "y_pred": ["array-like", str],
        "sensitive_features": ["array-like", str, None],
        "labels": ["array-like", None],
        "sample_weight": ["array-like", str, None],
        "data": "no_validation",
    }
)
def multiclass_confusion_counts(
    y_true,
    y_pred,
    *,
    sensitive_features=None,
    data=None,
    labels=None,
    sample_weight=None,
):
    """Multiclass confusion matrices, overall or per group, in one pass.

    All groups and cells are counted with a single :func:`numpy.bincount`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True class labels.
    y_pred : array-like of shape (n_samples,)
        Predicted class labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Group label of each sample (a 2-D array or DataFrame defines intersectional
        groups labelled ``"a|b"``). ``None`` counts all samples together.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    labels : array-like of shape (n_classes,), default=None
        The class order of the rows and columns, as in
        :func:`sklearn.metrics.confusion_matrix`. By default the sorted union of
        the classes in ``y_true`` and ``y_pred``. A class that appears in the data
        but not in ``labels`` is an error (never silently dropped).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; the counts are then weighted sums (float).

    Returns
    -------
    result : MulticlassCounts
        A named tuple ``(groups, labels, counts)``; ``counts`` has shape
        ``(n_groups, n_classes, n_classes)`` (``(n_classes, n_classes)`` without
        groups), rows true and columns predicted.

    See Also
    --------
    sklearn_smallfair.metrics.confusion_counts : The binary counts, cells
        ``(TP, FN, FP, TN)``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import multiclass_confusion_counts
    >>> y_true = ["low", "mid", "high", "mid", "low", "high"]
    >>> y_pred = ["low", "high", "high", "mid", "mid", "high"]
    >>> res = multiclass_confusion_counts(
    ...     y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"],
    ...     labels=["low", "mid", "high"])
    >>> res.groups
    array(['a', 'b'], dtype='<U1')
    >>> res.counts[0]
    array([[1, 0, 0],
           [0, 0, 1],
           [0, 0, 1]])
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight
    )
    t, p = check_paired_targets(y_true, y_pred)
    labels, ti, pi = _class_labels(t, p, labels)
    k = labels.shape[0]
    n_samples = t.shape[0]
    w = check_sample_weight(sample_weight, n_samples)
    if sensitive_features is None:
        groups, g = None, 1
        key = ti * k
    else:
        groups, codes, _ = check_sensitive_features(sensitive_features, n_samples)
        g = groups.shape[0]
        key = codes.astype(np.intp) * (k * k)
        key += ti * k
    key += pi
    counts = np.bincount(key, weights=w, minlength=g * k * k)
    counts = integer_counts(counts, sample_weight)
    if groups is None:
        return MulticlassCounts(None, labels, counts.reshape(k, k))
    return MulticlassCounts(groups, labels, counts.reshape(g, k, k))


def check_square(counts, name="counts"):
    arr = np.asarray(counts)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(
            f"{name} must be square confusion matrices of shape (..., K, K), got "
            f"shape {arr.shape}."
        )
    if arr.shape[-1] < 2:
        raise ValueError(f"{name} needs at least two classes, got shape {arr.shape}.")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf; counts must be finite.")
    if (arr < 0).any():
        raise ValueError(f"{name} contains negative counts.")
    return arr


@validate_params({"counts": ["array-like"]})
def one_vs_rest(counts):
    """The K one-vs-rest binary matrices of K x K confusion matrices.

    Parameters
    ----------
    counts : array-like of shape (..., K, K)
        Rows true class, columns predicted class.

    Returns
    -------
    ovr : ndarray of shape (..., K, 4)
        For each class ``k``, the binary cells ``(TP, FN, FP, TN)`` with class
        ``k`` as the positive class: ``TP = C[k, k]``, ``FN`` the rest of row
        ``k``, ``FP`` the rest of column ``k``, ``TN`` everything else.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import one_vs_rest
    >>> one_vs_rest(np.array([[5, 1, 0], [2, 3, 1], [0, 1, 4]]))
    array([[ 5,  1,  2,  9],
           [ 3,  3,  2,  9],
           [ 4,  1,  1, 11]])
    """
    c = check_square(counts)
    diag = np.diagonal(c, axis1=-2, axis2=-1)
    rows = c.sum(axis=-1)
    cols = c.sum(axis=-2)
    n = rows.sum(axis=-1, keepdims=True)
    out = np.empty((*c.shape[:-1], 4), dtype=np.result_type(c.dtype, np.int64))
    out[..., TP] = diag
    out[..., FN] = rows - diag
    out[..., FP] = cols - diag
    out[..., TN] = n - rows - cols + diag
    return out


# --------------------------------------------------------------------------
# Enumeration of the K x K matrices of one size
# --------------------------------------------------------------------------


def n_multiclass_matrices(n, n_classes):
    """Number of K x K confusion matrices of total ``n``.

    ``C(n + K^2 - 1, K^2 - 1)``.
    """
    d = n_classes * n_classes
    return comb(n + d - 1, d - 1)


def _compositions(n, d):
    """All ``C(n + d - 1, d - 1)`` vectors of ``d`` non-negative integers summing to
    ``n``, as an int64 array, built by blocks over the first part (a loop over
    ``n + 1`` values and ``d`` parts, never over the vectors)."""
    # table[m] = compositions of m into the parts seen so far, for every m <= n
    table = [np.array([[m]], dtype=np.int64) for m in range(n + 1)]
    for _ in range(d - 1):
        new = []
        for m in range(n + 1):
            blocks = [
                np.column_stack(
                    [np.full(table[m - a].shape[0], a, dtype=np.int64), table[m - a]]
                )
                for a in range(m + 1)
            ]
            new.append(np.concatenate(blocks))
        table = new
    return table[n]


def enumerate_multiclass_matrices(n, n_classes):
    """All K x K confusion matrices with total ``n``, shape ``(N, K, K)``.

    ``N = C(n + K^2 - 1, K^2 - 1)``; refused above ``MAX_ENUMERATION_BYTES`` of
    :mod:`sklearn_smallfair._enumeration` (2 GiB), with the largest feasible ``n``.
    """
    k = int(n_classes)
    total = n_multiclass_matrices(n, k)
    n_bytes = total * k * k * 8
    if n_bytes > MAX_ENUMERATION_BYTES:
        largest = n
        while largest > 0 and n_multiclass_matrices(largest, k) * k * k * 8 > (
            MAX_ENUMERATION_BYTES
        ):
            largest -= 1
        raise ValueError(
            f"enumerating the {total:,} {k} x {k} confusion matrices of size n={n} "
            f"needs {n_bytes / 1024**3:.1f} GiB, above the 2 GiB bound "
            f"(n <= {largest} for K = {k}); pass a smaller n."
        )
    return _compositions(n, k * k).reshape(-1, k, k)


def _stars(n, parts):
    """``C(m + parts - 1, parts - 1)`` for ``m = 0..n`` as exact Python integers
    (an object array): the ways to split ``m`` over ``parts`` cells."""
    values = [comb(m + parts - 1, parts - 1) for m in range(n + 1)]
    return np.array(values, dtype=object)


def ovr_multiplicity(binary, n, k):
    """How many K x K matrices of size ``n`` have each one-vs-rest matrix of
    ``binary`` (cells ``(TP, FN, FP, TN)``) for a fixed class: FN spreads over
    ``K - 1`` cells, FP over ``K - 1`` and TN over ``(K - 1)^2``; exact integers."""
    r = _stars(n, k - 1)
    return r[binary[:, FN]] * r[binary[:, FP]] * _stars(n, (k - 1) ** 2)[binary[:, TN]]


# --------------------------------------------------------------------------
# Readers of per-group K x K counts and of their references
# --------------------------------------------------------------------------
def long_table(frame, labels):
    """:class:`MulticlassCounts` from a long table (the layout of ``to_frame``)."""
    found = _match_names(
        frame.columns, ("GROUP", "TRUE", "PREDICTED", "COUNT"), "counts"
    )
    lower = {k.lower(): v for k, v in found.items()}
    missing = [c for c in ("true", "predicted", "count") if c not in lower]
    if missing:
        raise ValueError(
            f"counts is a DataFrame without the column(s) {missing}; a multiclass "
            f"counts table has one row per (group, true class, predicted class) "
            f"with columns 'group', 'true', 'predicted' and 'count', as "
            f"MulticlassCounts.to_frame() gives. Pass an array of shape (n_groups, "
            f"K, K) or a mapping {{group: K x K matrix}} otherwise."
        )
    true = frame[lower["true"]].to_numpy()
    pred = frame[lower["predicted"]].to_numpy()
    if labels is None:
        both = pd.unique(np.concatenate([true, pred]).astype(object))
        labels = _sorted_labels(both, "counts' 'true' and 'predicted' columns")
    labels = np.asarray(labels)
    index = pd.Index(labels.astype(object), dtype=object)
    ti = index.get_indexer(pd.Index(true.astype(object), dtype=object))
    pi = index.get_indexer(pd.Index(pred.astype(object), dtype=object))
    unknown = np.concatenate([true[ti < 0], pred[pi < 0]])
    if unknown.shape[0]:
        raise ValueError(
            f"counts has class(es) {format_labels(pd.unique(unknown.astype(object)))} "
            f"that are not in labels={format_labels(labels)}; add them to labels."
        )
    cells = _numeric_cells(frame[[lower["count"]]], "counts")[:, 0]
    if cells.dtype.kind not in "biuf":
        raise TypeError(f"counts' 'count' column must hold numbers, got {cells.dtype}.")
    cells = cells.astype(np.float64)
    if not np.isfinite(cells).all() or (cells < 0).any():
        raise ValueError(
            "counts' 'count' column must hold finite, non-negative numbers of people."
        )
    k = labels.shape[0]
    if "group" in lower:
        codes, groups = pd.factorize(frame[lower["group"]], sort=False)
        groups = np.asarray(groups)
    else:
        codes, groups = np.zeros(true.shape[0], dtype=np.intp), None
    key = (codes.astype(np.intp) * k + ti) * k + pi
    g = 1 if groups is None else groups.shape[0]
    counts = np.bincount(key, weights=cells, minlength=g * k * k).reshape(g, k, k)
    if groups is None:
        counts = counts[0]
    return MulticlassCounts(groups, labels, counts)


def group_matrices(
    y_true,
    y_pred,
    sensitive_features,
    counts,
    labels,
    integer=True,
    *,
    sample_weight=None,
):
    """``(groups, class labels, counts (G, K, K))`` from rows or counts; int64
    counts (fractional counts refused) when ``integer``, else float64; rows are
    weighted by ``sample_weight``."""
    if counts is not None:
        given = [
            name
            for name, v in (
                ("y_true", y_true),
                ("y_pred", y_pred),
                ("sensitive_features", sensitive_features),
            )
            if v is not None
        ]
        if given:
            raise ValueError(
                f"pass either rows (y_true, y_pred, sensitive_features) or counts, "
                f"not both; got counts and {', '.join(given)}."
            )
        if isinstance(counts, MulticlassCounts):
            groups, found, cms = counts.groups, counts.labels, counts.counts
            if labels is None:
                labels = found
            if groups is None:
                cms = np.asarray(cms)[None]
                groups = np.array([0])
        elif isinstance(counts, Mapping):
            groups = np.array(list(counts.keys()), dtype=object)
            cms = np.asarray([np.asarray(v) for v in counts.values()])
        else:
            cms = np.asarray(counts)
            if cms.ndim == 2:
                cms = cms[None]
            groups = np.arange(cms.shape[0])
        if cms.ndim != 3:
            raise ValueError(
                f"counts must hold one K x K matrix per group, shape (n_groups, K, K) "
                f"(or a mapping {{group: K x K}}); got shape {cms.shape}."
            )
        cms = check_square(cms)
        k = cms.shape[-1]
        if labels is None:
            labels = np.arange(k)
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.shape[0] != k:
            raise ValueError(
                f"labels must name the {k} classes of the {k} x {k} counts in order; "
                f"got {labels.shape[0] if labels.ndim == 1 else labels.shape} "
                f"label(s). Pass labels of length {k} or leave labels=None."
            )
        if len(set(labels.tolist())) != k:
            raise ValueError(f"labels has repeated values: {format_labels(labels)}.")
    else:
        if y_true is None or y_pred is None or sensitive_features is None:
            raise ValueError(
                "pass y_true, y_pred and sensitive_features, or counts=<per-group "
                "K x K matrices>."
            )
        res = multiclass_confusion_counts(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            labels=labels,
            sample_weight=sample_weight,
        )
        groups, labels, cms = res.groups, res.labels, res.counts
    if not integer:
        cms = cms.astype(np.float64)
    elif cms.dtype.kind == "f" and not np.array_equal(cms, np.round(cms)):
        raise ValueError(
            "the MATCH test needs integer confusion-matrix counts (one per "
            "person); got fractional counts (e.g. from sample weights or "
            "smoothing)."
        )
    else:
        cms = cms.astype(np.int64)
    if len(set(np.asarray(groups, dtype=object).tolist())) != len(groups):
        raise ValueError("counts has duplicate group labels.")
    empty = cms.sum(axis=(1, 2)) == 0
    if empty.any():
        raise ValueError(
            f"group(s) {format_labels(np.asarray(groups)[empty])} are empty (all "
            f"cells 0); drop them."
        )
    return np.asarray(groups), labels, cms


def reference_matrices(cms, reference, groups):
    """Reference K x K matrix of each group, shape (G, K, K), float."""
    G, k = cms.shape[0], cms.shape[-1]
    if isinstance(reference, str) and reference == "rest":
        refs = cms.sum(axis=0) - cms
    elif isinstance(reference, str) and reference == "total":
        refs = np.broadcast_to(cms.sum(axis=0), cms.shape)
    elif isinstance(reference, (list, tuple, np.ndarray)) or hasattr(
        reference, "to_numpy"
    ):
        refs = np.asarray(reference)
        if refs.shape not in ((k, k), (G, k, k)):
            raise ValueError(
                f"explicit reference counts must have shape ({k}, {k}) or ({G}, {k}, "
                f"{k}); got {refs.shape}."
            )
        refs = check_square(refs, name="reference")
        refs = np.broadcast_to(refs, cms.shape)
    else:
        match = np.flatnonzero(np.asarray(groups, dtype=object) == reference)
        if match.size == 0:
            raise ValueError(
                f"reference={reference!r} is not 'rest', 'total', a group label "
                f"({format_labels(groups)}) or explicit ({k}, {k}) counts."
            )
        refs = np.broadcast_to(cms[match[0]], cms.shape)
    refs = np.asarray(refs, dtype=np.float64)
    zero = refs.sum(axis=(1, 2)) <= 0
    if zero.any():
        raise ValueError(
            f"the reference of group(s) {format_labels(np.asarray(groups)[zero])} "
            f"is empty (e.g. reference='rest' with a single group); pass "
            f"reference='total' or explicit reference counts."
        )
    return refs
