"""Multiclass confusion matrices: counting per group, one-vs-rest metrics, averages.

A multiclass confusion matrix is an array of shape ``(..., K, K)`` with rows the true
class and columns the predicted class, in the order of ``labels`` (scikit-learn's
orientation). The class-``k`` one-vs-rest matrix is derived from it in one
vectorized step (:func:`one_vs_rest`), so every binary metric of the registry is
reused, not re-typed, for each class; the averages follow scikit-learn's
``average=`` conventions. Four metrics are defined on the whole matrix: accuracy,
balanced accuracy, the multiclass Matthews correlation (Gorodkin's R_K) and Cohen's
kappa.
"""

import warnings
from collections.abc import Mapping
from math import comb
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._confusion import FN, FP, MAX_ENUMERATION_BYTES, TN, TP
from .._params import (
    RANDOM_STATE,
    REFERENCE,
    ZERO_DIVISION,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import resolve_seed
from .._validation import (
    _sorted_labels,
    check_paired_targets,
    check_sample_weight,
    check_sensitive_features,
    check_zero_division,
    format_labels,
)
from ..exceptions import UndefinedGroupMetricWarning
from ..smoothing import BaseSmoothing
from ._intervals import CI_METHODS as _CI_METHODS
from ._intervals import DEFAULT_N_DRAWS as _DEFAULT_N_DRAWS
from ._intervals import MAX_N_DRAWS as _MAX_N_DRAWS
from ._intervals import mover_mean_interval
from ._registry import _apply_zero_division, get_metric

__all__ = [
    "MULTICLASS_METRICS",
    "MulticlassCounts",
    "multiclass_confusion_counts",
    "multiclass_group_metrics",
    "multiclass_metric",
    "one_vs_rest",
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
_AVERAGES = ("macro", "weighted", "micro")


class MulticlassCounts(NamedTuple):
    """Multiclass confusion matrices with their group and class labels.

    A named tuple, so ``groups, labels, counts = multiclass_confusion_counts(...)``
    unpacks it.

    Attributes
    ----------
    groups : ndarray of shape (n_groups,) or None
        Sorted group labels; ``None`` when no ``sensitive_features`` were given.
    labels : ndarray of shape (n_classes,)
        The class order of the matrices' rows and columns.
    counts : ndarray of shape (n_groups, n_classes, n_classes) or \
            (n_classes, n_classes)
        ``counts[..., i, j]``: samples of true class ``labels[i]`` predicted as
        ``labels[j]``.
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
    index = pd.Index(labels.astype(object))
    codes = []
    for name, uniques, code in (("y_true", u_true, c_true), ("y_pred", u_pred, c_pred)):
        position = index.get_indexer(pd.Index(uniques.astype(object)))
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
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like", None],
        "labels": ["array-like", None],
        "sample_weight": ["array-like", None],
    }
)
def multiclass_confusion_counts(
    y_true, y_pred, *, sensitive_features=None, labels=None, sample_weight=None
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
    if groups is None:
        return MulticlassCounts(None, labels, counts.reshape(k, k))
    return MulticlassCounts(groups, labels, counts.reshape(g, k, k))


def _check_square(counts, name="counts"):
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
    c = _check_square(counts)
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


def _whole_matrix_metric(name, c):
    """accuracy, balanced accuracy, Gorodkin's R_K and Cohen's kappa; NaN if 0/0."""
    c = np.asarray(c, dtype=np.float64)
    diag = np.diagonal(c, axis1=-2, axis2=-1)
    t = c.sum(axis=-1)  # true-class totals
    p = c.sum(axis=-2)  # predicted-class totals
    n = t.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "accuracy":
            return diag.sum(axis=-1) / n
        if name == "balanced_accuracy":
            # mean recall over the classes present in y_true (scikit-learn's rule)
            recall = diag / t
            present = t > 0
            n_present = present.sum(axis=-1)
            total = np.where(present, recall, 0.0).sum(axis=-1)
            return np.where(n_present > 0, total / n_present, np.nan)
        if name == "mcc":
            cov_tp = diag.sum(axis=-1) * n - (t * p).sum(axis=-1)
            cov_pp = n * n - (p * p).sum(axis=-1)
            cov_tt = n * n - (t * t).sum(axis=-1)
            den = np.sqrt(cov_pp * cov_tt)
            return np.where(den > 0, cov_tp / den, np.nan)
        if name == "kappa":
            po = diag.sum(axis=-1) / n
            pe = (t * p).sum(axis=-1) / (n * n)
            return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    raise AssertionError(name)  # pragma: no cover


def _resolve(metric):
    key = metric.lower() if isinstance(metric, str) else metric
    if isinstance(key, str) and key in _MULTICLASS_ALIASES:
        return _MULTICLASS_ALIASES[key], None
    return None, get_metric(metric)


def _substitutes(zero_division):
    return not isinstance(zero_division, str) and not np.isnan(zero_division)


def _nan_average(values, weights, axis=-1):
    """Average ignoring NaN entries; NaN where every entry is NaN or weights sum 0."""
    ok = ~np.isnan(values)
    w = np.where(ok, weights, 0.0)
    total = w.sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (np.where(ok, values, 0.0) * w).sum(axis=axis) / total
    return np.where(total > 0, out, np.nan)


@validate_params(
    {
        "metric": [str],
        "counts": ["array-like"],
        "average": [StrOptions(set(_AVERAGES)), None],
        "zero_division": ZERO_DIVISION,
    }
)
def multiclass_metric(metric, counts, *, average=None, zero_division=np.nan):
    """A metric of K x K confusion matrices: per class, averaged, or whole-matrix.

    Parameters
    ----------
    metric : str
        A registry metric name or alias (``"tpr"``, ``"precision"``, ``"f1"``,
        ...), evaluated one-vs-rest for each class; or one of the multiclass
        metrics ``"accuracy"``, ``"balanced_accuracy"``, ``"mcc"`` (Gorodkin's
        R_K, scikit-learn's :func:`~sklearn.metrics.matthews_corrcoef`) and
        ``"kappa"`` (Cohen's kappa), defined on the whole matrix. ``"mcc"`` and
        ``"accuracy"`` name the multiclass metrics here; their one-vs-rest versions
        are reached with ``average=``.
    counts : array-like of shape (..., K, K)
        Confusion matrices, rows true and columns predicted.
    average : {"macro", "weighted", "micro"} or None, default=None
        For one-vs-rest metrics, as in scikit-learn: ``None`` gives one value per
        class (shape ``(..., K)``); ``"macro"`` the unweighted mean over classes,
        ``"weighted"`` the mean weighted by each class's support (its number of
        true samples), ``"micro"`` the metric of the summed one-vs-rest matrices.
        Undefined per-class values are left out of the macro and weighted means
        when ``zero_division`` is ``nan`` or ``"warn"`` (as scikit-learn does with
        ``zero_division=np.nan``) and enter them as ``zero_division`` otherwise
        (as scikit-learn does with ``0.0`` or ``1.0``).
        Ignored (must be ``None`` or the metric's own) for whole-matrix metrics.
    zero_division : {"warn", nan, 0.0, 1.0}, default=nan
        The value of an undefined metric (0/0), after averaging, with the same
        policy as :func:`~sklearn_smallfair.metrics.compute_metric`.

    Returns
    -------
    values : ndarray
        Shape ``(..., K)`` for a per-class metric without ``average``, else
        ``(...)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import multiclass_metric
    >>> cm = np.array([[5, 1, 0], [2, 3, 1], [0, 1, 4]])
    >>> multiclass_metric("tpr", cm).round(3)
    array([0.833, 0.5  , 0.8  ])
    >>> float(multiclass_metric("tpr", cm, average="macro").round(3))
    0.711
    >>> float(multiclass_metric("kappa", cm).round(3))
    0.557
    """
    zero_division = check_zero_division(zero_division)
    name, reg = _resolve(metric)
    c = _check_square(counts)
    if name is not None:
        if average is not None:
            raise ValueError(
                f"average={average!r} does not apply to {name!r}, which is defined "
                f"on the whole K x K matrix; leave average=None, or name a "
                f"one-vs-rest metric (e.g. 'tpr', 'ppv', 'f1')."
            )
        values = _whole_matrix_metric(name, c)
    else:
        if reg.n_groups != 1:
            raise ValueError(
                f"{reg.name!r} compares two groups and has no per-class form; use a "
                f"single-group metric."
            )
        ovr = one_vs_rest(c)
        if average == "micro":
            values = reg.func(ovr.sum(axis=-2))
        else:
            per_class = np.asarray(reg.func(ovr), dtype=np.float64)
            per_class = np.where(np.isfinite(per_class), per_class, np.nan)
            if average is not None and _substitutes(zero_division):
                # a substituted value enters the mean, as in scikit-learn
                per_class = np.where(np.isnan(per_class), zero_division, per_class)
            if average is None:
                values = per_class
            elif average == "macro":
                values = _nan_average(per_class, np.ones(per_class.shape))
            else:  # weighted by support
                support = np.asarray(c, dtype=np.float64).sum(axis=-1)
                values = _nan_average(per_class, support)
    values = np.asarray(values, dtype=np.float64)
    values = np.where(np.isfinite(values), values, np.nan)
    return _apply_zero_division(values, zero_division, context=f"{metric}: ")


# --------------------------------------------------------------------------
# Enumeration and hole counts of K x K matrices
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
    :mod:`sklearn_smallfair._confusion` (2 GiB), with the largest feasible ``n``.
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


def _ovr_multiplicity(binary, n, k):
    """How many K x K matrices of size ``n`` have each one-vs-rest matrix of
    ``binary`` (cells ``(TP, FN, FP, TN)``) for a fixed class: FN spreads over
    ``K - 1`` cells, FP over ``K - 1`` and TN over ``(K - 1)^2``; exact integers."""
    r = _stars(n, k - 1)
    return r[binary[:, FN]] * r[binary[:, FP]] * _stars(n, (k - 1) ** 2)[binary[:, TN]]


def count_undefined_multiclass(metric, n, n_classes):
    """Holes of a metric among the K x K confusion matrices of size ``n``.

    See :func:`sklearn_smallfair.metrics.count_undefined` (``n_classes=K``).
    """
    k = int(n_classes)
    name, reg = _resolve(metric)
    if n == 0:
        return 1  # the empty matrix: every metric is 0/0
    if name is not None:
        # closed forms, proved in the user guide and tested against enumeration
        return {
            "accuracy": 0,
            "balanced_accuracy": 0,
            # pe = 1 only when all mass sits in one diagonal cell
            "kappa": k,
            # a constant true or predicted class: K C(n + K - 1, K - 1) each,
            # K^2 single-cell matrices counted twice
            "mcc": 2 * k * comb(n + k - 1, k - 1) - k * k,
        }[name]
    if reg.n_groups != 1:
        raise ValueError(
            f"{reg.name!r} compares two groups and has no per-class form; use a "
            f"single-group metric."
        )
    # exact: sum the multiplicities of the undefined one-vs-rest matrices; the
    # C(n + 3, 3) binary matrices are enumerated, never the K x K ones
    from .._confusion import enumerate_confusion_matrices

    cms = enumerate_confusion_matrices(n)
    undefined = ~np.isfinite(np.asarray(reg.func(cms), dtype=np.float64))
    if k == 2:
        return int(undefined.sum())
    return int(_ovr_multiplicity(cms[undefined], n, k).sum())


def _long_table(frame, labels):
    """:class:`MulticlassCounts` from a long table (the layout of ``to_frame``)."""
    lower = {str(c).lower(): c for c in frame.columns}
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
    index = pd.Index(labels.astype(object))
    ti = index.get_indexer(pd.Index(true.astype(object)))
    pi = index.get_indexer(pd.Index(pred.astype(object)))
    unknown = np.concatenate([true[ti < 0], pred[pi < 0]])
    if unknown.shape[0]:
        raise ValueError(
            f"counts has class(es) {format_labels(pd.unique(unknown.astype(object)))} "
            f"that are not in labels={format_labels(labels)}; add them to labels."
        )
    cells = frame[lower["count"]].to_numpy()
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


def _group_counts(y_true, y_pred, sensitive_features, counts, labels, sample_weight):
    """``(groups, class labels, counts (G, K, K))`` from rows or from counts."""
    if counts is None:
        if y_true is None or y_pred is None or sensitive_features is None:
            raise ValueError(
                "pass y_true, y_pred and sensitive_features, or counts=<per-group "
                "K x K matrices> (an array of shape (n_groups, K, K), a mapping "
                "{group: K x K matrix}, a MulticlassCounts or its to_frame() table)."
            )
        res = multiclass_confusion_counts(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            labels=labels,
            sample_weight=sample_weight,
        )
        return res.groups, res.labels, res.counts
    # the forms of the multiclass MATCH test's counts, one reader for both
    from ..stats._match_multiclass import _group_matrices

    if sample_weight is not None:
        raise ValueError(
            "sample_weight weights rows, but counts= was given (its cells already "
            "count people); pass the rows (y_true, y_pred, sensitive_features) with "
            "sample_weight, or counts without sample_weight."
        )
    if isinstance(counts, pd.DataFrame):
        counts = _long_table(counts, labels)
    groups, classes, cms = _group_matrices(
        y_true, y_pred, sensitive_features, counts, labels, integer=False
    )
    if not np.array_equal(cms, np.round(cms)):
        raise ValueError(
            "counts must hold whole numbers of people (cell [i, j]: the people of "
            "true class i predicted as class j); got fractional counts, as smoothed "
            "or weighted matrices have. Pass the raw counts (smoothing= smooths "
            "them), or the rows with sample_weight= for weighted counts."
        )
    return groups, classes, cms.astype(np.int64)


class _Smoothed(NamedTuple):
    """K x K matrices smoothed toward their references, and the smoothing's prior."""

    matrices: np.ndarray  # (G, K, K)
    prior: np.ndarray  # (G, K, K): smoothed = s (counts + prior)
    lam: float | None  # the strength of Cross-Prior Smoothing, else None


def _smooth(smoothing, counts, reference, groups):
    """Smooth every group's K x K matrix (``transform_matrices``) toward its
    reference; ``lam="auto"`` learns one ``lam`` from all the groups' ``K^2``
    cells, used for every column and interval of the call."""
    from sklearn.base import clone

    from ..smoothing import CrossPriorSmoothing
    from ..stats._match_multiclass import _reference_matrices

    g, k = counts.shape[0], counts.shape[-1]
    flat = counts.reshape(g, k * k).astype(np.float64)
    ref = flat_ref = None
    if smoothing.requires_reference:
        ref = _reference_matrices(counts, reference, groups)
        flat_ref = ref.reshape(g, k * k)
    from ._group import user_stacklevel

    est = clone(smoothing)
    lam = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(est, CrossPriorSmoothing):
            if isinstance(est.lam, str):  # "auto": the Dirichlet-multinomial fit
                est.set_params(lam=CrossPriorSmoothing._learn(flat, flat_ref))
            lam = float(est.lam)
        matrices = est._transform_matrices(counts, ref, labels=groups)
    for caught_warning in caught:  # the references' warnings, at the user's call
        warnings.warn(caught_warning.message, stacklevel=user_stacklevel())
    # every smoother is affine, scale * c + offset: the prior is offset / scale
    scale, offset = est._coefficients(flat.sum(axis=1, keepdims=True), flat_ref, k * k)
    prior = np.broadcast_to(offset / scale, flat.shape).reshape(g, k, k)
    return _Smoothed(matrices, prior, lam)


def matrix_prior(n_classes):
    """Pseudo-count per cell of the Dirichlet prior of a raw K x K matrix's
    posterior: ``2 / K^2``, the total of two pseudo-counts of the binary Jeffreys
    prior (``1/2`` on each of four cells), which it equals for ``K = 2``.

    ``1/2`` per cell would put ``K^2 / 2`` pseudo-counts on a small group (4.5
    for ``K = 3``) and pull whole-matrix metrics toward a uniform matrix: at
    ``n = 30``, ``K = 3`` the 95 % posterior intervals of accuracy then covered
    0.887 and 0.925, and of kappa 0.885 and 0.912, in the tests' simulation (two
    laws, 600 groups each), against 0.938 and 0.955, and 0.933 and 0.938, with
    ``2 / K^2``.
    """
    return 2.0 / (n_classes * n_classes)


#: Macro averages (and balanced accuracy, the macro-averaged TPR) give a small
#: class as much weight as a large one, and neither posterior draws nor the
#: bootstrap covered near the level for small groups (at n = 30, K = 3, on three
#: laws: macro F1 0.87 to 0.92 with posterior draws and 0.88 to 0.94 with the
#: bootstrap, macro TPR 0.92 to 0.94 and 0.89 to 0.93;
#: benchmarks/bench_multiclass_coverage.py and the user guide's table). Only the
#: macro means of rates of one row or one column of the matrix get an interval,
#: the MOVER of the classes' binomial intervals (:func:`_mover_metric`).
_NO_INTERVAL = "macro"


def _has_interval(label, avg):
    """Whether a column has posterior and bootstrap intervals."""
    return not (avg == _NO_INTERVAL or label == "balanced_accuracy")


def _mover_metric(label, reg, avg):
    """The per-class rate whose macro mean has a MOVER interval, or ``None``.

    A rate over one row of the matrix (``TP + FN``: TPR, FNR) or one column
    (``TP + FP``: PPV, FDR): given the rows' (columns') totals, the rows
    (columns) of a multinomial matrix are independent, so the classes' rates are
    independent binomial proportions and the MOVER of their intervals applies.
    """
    if label == "balanced_accuracy":
        return get_metric("tpr")
    if avg != _NO_INTERVAL or reg is None or reg.family != "joint_ratio":
        return None
    if set(reg.denominator) in ({TP, FN}, {TP, FP}):
        return reg
    return None


#: ``ci_method`` values that give a macro mean its MOVER interval.
_MOVER_METHODS = ("auto", "wilson", "jeffreys", "clopper-pearson")


def _row_or_column_rates(metric, counts):
    """``(k, m)`` (G, K): each class's diagonal cell and its row (``TP + FN``) or
    column (``TP + FP``) total, the binomial counts of the rate ``metric``."""
    c = np.asarray(counts, dtype=np.float64)
    ovr = one_vs_rest(c)
    return (
        ovr[..., list(metric.numerator)].sum(axis=-1),
        ovr[..., list(metric.denominator)].sum(axis=-1),
    )


def _matrix_ci_methods(name):
    """``ci_method`` values with an interval for an averaged or whole-matrix
    metric: accuracy is a proportion (the trace over ``n``), the others are not."""
    if name == "accuracy":
        return _CI_METHODS
    return ("auto", "posterior", "bootstrap")


def _check_ci_methods(columns, ci_method):
    """Refuse a closed-form method for a column that is not a proportion."""
    from ._intervals import check_ci_method

    per_class = [reg for _, reg, avg in columns if avg is None and reg is not None]
    check_ci_method(per_class, ci_method)
    bad = [
        label
        for label, reg, avg in columns
        if (avg is not None or reg is None)
        and _has_interval(label, avg)
        and ci_method not in _matrix_ci_methods(label)
    ]
    if bad:
        raise ValueError(
            f"ci_method={ci_method!r} is an interval for a proportion; "
            f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not one (an "
            f"average over classes, or a whole-matrix metric other than accuracy), "
            f"so use ci_method='auto', 'posterior' or 'bootstrap'."
        )


def _matrix_column_interval(
    label, func, counts, prior, *, method, alpha, n_draws, seed, groups, key
):
    """``(low, high)`` of an averaged or whole-matrix column; accuracy (the trace
    over ``n``, a binomial proportion) has the binomial intervals."""
    from ._intervals import _SCORE_FUNCTIONS, beta_interval, matrix_interval

    k = counts.shape[-1]
    if prior is None and method == "posterior":
        prior = np.full(counts.shape, matrix_prior(k))
    if label == "accuracy" and method != "bootstrap":
        c = np.asarray(counts, dtype=np.float64)
        if method == "posterior":  # aggregation: the trace's posterior is a Beta
            c = c + prior
            hit = np.trace(c, axis1=-2, axis2=-1)
            return beta_interval(hit, c.sum(axis=(-2, -1)) - hit, alpha)
        hit = np.trace(c, axis1=-2, axis2=-1)
        return _SCORE_FUNCTIONS[method](hit, c.sum(axis=(-2, -1)), alpha)
    return matrix_interval(
        func,
        counts,
        method=method,
        alpha=alpha,
        n_draws=n_draws,
        seed=seed,
        labels=np.asarray(groups, dtype=object),
        key=key,
        prior=prior,
    )


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": ["array-like", Mapping, None],
        "labels": ["array-like", None],
        "metrics": [str, list, tuple],
        "average": [StrOptions(set(_AVERAGES)), None],
        "zero_division": ZERO_DIVISION,
        "sample_weight": ["array-like", None],
        "smoothing": [None, BaseSmoothing],
        "reference": REFERENCE,
        "ci": [None, Number(0, 1, closed="neither")],
        "ci_method": [StrOptions(set(_CI_METHODS))],
        "n_draws": [Whole(100, _MAX_N_DRAWS)],
        "random_state": RANDOM_STATE,
    }
)
def multiclass_group_metrics(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    labels=None,
    metrics=("tpr", "ppv", "f1"),
    average=None,
    zero_division="warn",
    sample_weight=None,
    smoothing=None,
    reference="rest",
    ci=None,
    ci_method="auto",
    n_draws=_DEFAULT_N_DRAWS,
    random_state=None,
):
    """Multiclass metrics for every group: per class, or averaged per group.

    Optionally smoothed toward each group's reference and with intervals, as the
    binary :func:`~sklearn_smallfair.metrics.group_metrics`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted class labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Group labels; several columns define intersectional groups ``"a|b"``.
    counts : array-like of shape (n_groups, K, K), mapping, MulticlassCounts or \
            DataFrame, default=None
        Per-group K x K confusion matrices (rows true class, columns predicted)
        instead of rows: an array (groups labelled ``0 .. n_groups - 1``), a
        mapping ``{group: K x K matrix}``, the
        :class:`~sklearn_smallfair.metrics.MulticlassCounts` of
        :func:`multiclass_confusion_counts`, or its long ``to_frame()`` table
        (columns ``group``, ``true``, ``predicted``, ``count``). Cells are whole
        numbers of people (weighted counts come from rows with
        ``sample_weight``).
    labels : array-like of shape (n_classes,), default=None
        The class order. With rows, the sorted classes of ``y_true`` and
        ``y_pred`` by default; with ``counts``, the names of the ``K`` rows and
        columns (default ``0 .. K - 1``; a ``MulticlassCounts`` keeps its own).
    metrics : str or sequence of str, default=("tpr", "ppv", "f1")
        Registry metrics, taken one-vs-rest for each class; with ``average`` also
        the whole-matrix metrics ``"accuracy"``, ``"balanced_accuracy"``,
        ``"mcc"`` (R_K) and ``"kappa"``.
    average : {"macro", "weighted", "micro"} or None, default=None
        ``None``: one row per (group, class), a ``MultiIndex`` with levels
        ``group`` and ``class``, with the class's ``support`` (true samples) and
        ``predicted`` counts. An average: one row per group (see
        :func:`multiclass_metric`).
    zero_division : {"warn", nan, 0.0, 1.0}, default="warn"
        The value of undefined metrics; ``"warn"`` keeps NaN and warns, naming the
        groups. The ``<metric>_undefined`` columns flag undefined values whatever
        the policy.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        When given, every metric is also reported on the smoothed K x K matrices
        (``transform_matrices``), in ``<metric>_smoothed`` columns: per-class
        metrics on the smoothed matrices' one-vs-rest matrices, averaged and
        whole-matrix metrics on the smoothed matrices. For
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing` with a fixed
        ``lam`` a class's smoothed values equal those of its one-vs-rest matrix
        smoothed toward the reference's one-vs-rest matrix (see :ref:`multiclass`);
        ``lam="auto"`` learns one ``lam`` from the groups' ``K^2`` cells (column
        ``lam``). :class:`~sklearn_smallfair.smoothing.AdditiveSmoothing` adds
        ``eps`` to each of the ``K^2`` cells.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Each group's reference K x K matrix for Cross-Prior Smoothing: all other
        groups together, everybody, a named group, or explicit counts of shape
        ``(K, K)`` or ``(n_groups, K, K)``.
    ci : float or None, default=None
        Level of an interval for every metric column, in (0, 1): adds
        ``<metric>_ci_low`` and ``<metric>_ci_high`` after each value column
        (NaN where the value is undefined); ``table.attrs["ci_method"]`` records
        each column's method. A per-class column's interval is the binary one of
        the class's one-vs-rest matrix: what
        :func:`~sklearn_smallfair.metrics.group_metrics` gives for
        ``counts=`` those matrices (and, smoothed, their one-vs-rest prior).
        Averaged and whole-matrix columns: accuracy (the trace over ``n``) has
        the binomial intervals; the macro TPR, FNR, PPV and FDR and balanced
        accuracy the MOVER of the classes' binomial intervals (method
        ``"mover-wilson"``...; the classes' rates are independent given the rows'
        or columns' totals); the other macro averages none (NaN bounds and one
        warning: no interval covered near its level for small groups); the rest
        posterior or bootstrap intervals of the K x K matrix (see
        ``ci_method``). See :ref:`multiclass_group_options` for their measured
        coverage.
    ci_method : {"auto", "clopper-pearson", "wilson", "jeffreys", "posterior", \
            "bootstrap"}, default="auto"
        As in :func:`~sklearn_smallfair.metrics.group_metrics`. ``"posterior"``
        draws the group's ``K^2`` cell probabilities from ``Dirichlet(c + a)``
        (``a = 1/2`` per cell raw, the smoothing's prior smoothed);
        ``"bootstrap"`` redraws the group's people (multinomial over its ``K^2``
        cells), smoothed like the data for smoothed columns; ``"auto"``: for a
        per-class column the binary ``"auto"`` of its one-vs-rest matrix
        (Clopper-Pearson for a rate, ``"projection"`` for ``mcc``, ``pt`` and
        ``mb``, ``"posterior-hull"`` when smoothed); for accuracy Wilson, for
        the MOVER columns the classes' Wilson intervals, and the posterior for
        the other averaged and whole-matrix columns and for every smoothed one.
        The closed-form methods are refused for the
        weighted and micro averages and for R_K and kappa, which are not
        proportions; for the MOVER columns they choose the classes' intervals,
        and ``"posterior"`` and ``"bootstrap"`` give them none.
    n_draws : int in [100, 10**6], default=2000
        Posterior draws or bootstrap replicates per group and column.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
        Seed of the draws; each group's draws come from a stream keyed by its
        label and the metric, so a group's interval does not depend on the other
        groups.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``n`` (the group's size), then ``support`` and ``predicted`` per
        class (without ``average``), ``lam`` (with Cross-Prior Smoothing), then
        per metric ``<metric>`` (with ``_ci_low`` and ``_ci_high``),
        ``<metric>_undefined`` and, with ``smoothing``, the same for
        ``<metric>_smoothed``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import multiclass_group_metrics
    >>> y_true = ["mid", "mid", "high", "high", "low", "high", "low", "mid"]
    >>> y_pred = ["mid", "high", "high", "low", "mid", "high", "low", "mid"]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> multiclass_group_metrics(
    ...     y_true, y_pred, sensitive_features=groups,
    ...     labels=["low", "mid", "high"], metrics=["tpr"], zero_division=np.nan)
                 n  support  predicted  tpr  tpr_undefined
    group class
    a     low    4        0          1  NaN           True
          mid    4        2          1  0.5          False
          high   4        2          2  0.5          False
    b     low    4        2          1  0.5          False
          mid    4        1          2  1.0          False
          high   4        1          1  1.0          False
    >>> multiclass_group_metrics(
    ...     y_true, y_pred, sensitive_features=groups,
    ...     metrics=["tpr", "kappa"], average="macro").round(3)
           n    tpr  tpr_undefined  kappa  kappa_undefined
    group
    a      4  0.500          False  0.200            False
    b      4  0.833          False  0.636            False

    From per-group K x K matrices, smoothed toward a population matrix, with 95 %
    intervals (Clopper-Pearson for a class's TPR; for the smoothed one the hull
    of its Dirichlet posterior interval and of the raw interval):

    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> counts = {"a": [[3, 1, 0], [0, 2, 0], [1, 0, 1]],
    ...           "b": [[9, 2, 1], [1, 8, 2], [0, 1, 6]]}
    >>> population = [[50, 10, 5], [8, 60, 12], [4, 9, 40]]
    >>> table = multiclass_group_metrics(
    ...     counts=counts, labels=["low", "mid", "high"], metrics=["tpr"],
    ...     smoothing=CrossPriorSmoothing(lam=10), reference=population, ci=0.95)
    >>> table.loc["a", ["tpr", "tpr_ci_low", "tpr_ci_high", "tpr_smoothed"]].round(3)
            tpr  tpr_ci_low  tpr_ci_high  tpr_smoothed
    class
    low    0.75       0.194        0.994         0.759
    mid    1.00       0.158        1.000         0.833
    high   0.50       0.013        0.987         0.646
    >>> table.attrs["ci_method"]
    {'tpr': 'clopper-pearson', 'tpr_smoothed': 'posterior-hull'}
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics is empty; name at least one metric.")
    resolved = [_resolve(m) for m in names]
    whole = [m for m, (name, _) in zip(names, resolved) if name is not None]
    if whole and average is None:
        raise ValueError(
            f"{whole} are defined on the whole K x K matrix, not per class; pass "
            f"average='macro' (any average gives one row per group) or compute them "
            f"in a separate call."
        )
    for _, reg in resolved:
        if reg is not None and reg.n_groups != 1:
            raise ValueError(
                f"{reg.name!r} compares two groups and has no per-class form; use a "
                f"single-group metric."
            )
    # (column label, registry metric or None, the column's average)
    columns_of = [
        (name if name is not None else reg.name, reg, None if name else average)
        for name, reg in resolved
    ]
    if ci is not None:
        _check_ci_methods(columns_of, ci_method)
        seed = resolve_seed(random_state)
    groups, classes, counts = _group_counts(
        y_true, y_pred, sensitive_features, counts, labels, sample_weight
    )
    smoothed = None
    if smoothing is not None:
        smoothed = _smooth(smoothing, counts, reference, groups)
    g, k = counts.shape[0], counts.shape[-1]
    sizes = counts.sum(axis=(1, 2))
    if average is None:
        index = pd.MultiIndex.from_arrays(
            [np.repeat(groups, k), np.tile(classes, g)], names=["group", "class"]
        )
        columns = {
            "n": np.repeat(sizes, k),
            "support": counts.sum(axis=2).reshape(-1),
            "predicted": counts.sum(axis=1).reshape(-1),
        }
    else:
        index = pd.Index(groups, name="group")
        columns = {"n": sizes}
    if smoothed is not None and smoothed.lam is not None:
        columns["lam"] = np.full(len(index), smoothed.lam)
    variants = [(counts, None, "")]
    if smoothed is not None:
        variants.append((smoothed.matrices, smoothed.prior, "_smoothed"))
    methods, withheld = {}, []
    for metric, (label, reg, avg) in zip(names, columns_of):
        for matrices, prior, suffix in variants:
            column = label + suffix
            values = multiclass_metric(
                metric, matrices, average=avg, zero_division=np.nan
            ).reshape(-1)
            undefined = np.isnan(values)
            if undefined.any():
                where = index[undefined].tolist()
                if zero_division == "warn":
                    shown = ", ".join(map(str, where[:10]))
                    more = f" ({len(where)} in all)" if len(where) > 10 else ""
                    warnings.warn(
                        f"{column} is undefined (0/0) for {shown}{more}; reported "
                        f"as NaN and flagged in {column}_undefined.",
                        UndefinedGroupMetricWarning,
                        stacklevel=2,
                    )
                elif not np.isnan(zero_division):
                    values = np.where(undefined, zero_division, values)
            columns[column] = values
            mover = _mover_metric(label, reg, avg)
            if ci is not None and not _has_interval(label, avg):
                if mover is not None and not suffix and ci_method in _MOVER_METHODS:
                    score = "wilson" if ci_method == "auto" else ci_method
                    k, m = _row_or_column_rates(mover, counts)
                    low, high = mover_mean_interval(k, m, 1.0 - ci, score)
                    columns[f"{column}_ci_low"] = np.where(undefined, np.nan, low)
                    columns[f"{column}_ci_high"] = np.where(undefined, np.nan, high)
                    methods[column] = f"mover-{score}"
                else:
                    columns[f"{column}_ci_low"] = np.full(values.shape, np.nan)
                    columns[f"{column}_ci_high"] = np.full(values.shape, np.nan)
                    methods[column] = "none"
                    withheld.append(column)
            elif ci is not None:
                low, high, methods[column] = _column_ci(
                    metric,
                    label,
                    reg,
                    avg,
                    counts,
                    prior,
                    groups,
                    ci_method=ci_method,
                    smoothed=bool(suffix),
                    alpha=1.0 - ci,
                    n_draws=n_draws,
                    seed=seed,
                )
                columns[f"{column}_ci_low"] = np.where(undefined, np.nan, low)
                columns[f"{column}_ci_high"] = np.where(undefined, np.nan, high)
            columns[f"{column}_undefined"] = undefined
    if withheld:
        warnings.warn(
            f"no interval is reported for {', '.join(withheld)} (NaN bounds): a "
            f"macro average (balanced accuracy is the macro-averaged TPR) weighs a "
            f"small class like a large one, and neither posterior draws nor the "
            f"bootstrap covered 95 % intervals near their level for small groups "
            f"(macro F1 0.87 to 0.94, macro TPR 0.89 to 0.94 at n = 30 and K = "
            f"3). Only the raw macro TPR, FNR, PPV and FDR and balanced accuracy "
            f"have one, with ci_method 'auto', 'wilson', 'jeffreys' or "
            f"'clopper-pearson' (the MOVER of the classes' binomial intervals). "
            f"Otherwise use the per-class intervals (average=None), or "
            f"average='weighted' or 'micro'.",
            UserWarning,
            stacklevel=2,
        )
    table = pd.DataFrame(columns, index=index)
    if ci is not None:
        table.attrs["ci"] = float(ci)
        table.attrs["ci_method"] = methods
    return table


def _column_ci(
    metric,
    label,
    reg,
    avg,
    counts,
    prior,
    groups,
    *,
    ci_method,
    smoothed,
    alpha,
    n_draws,
    seed,
):
    """``(low, high, method)`` of one column, flat in the table's row order."""
    from ._intervals import column_interval, resolve_ci_method

    g, k = counts.shape[0], counts.shape[-1]
    if avg is None and reg is not None:
        # per class: the binary interval of the one-vs-rest matrices, each group's
        # draws keyed by its label and the metric as in the binary table
        method = resolve_ci_method(reg, ci_method, smoothed=smoothed)
        low, high = column_interval(
            reg,
            one_vs_rest(counts).reshape(g * k, 4),
            method=method,
            alpha=alpha,
            n_draws=n_draws,
            seed=seed,
            labels=np.repeat(np.asarray(groups, dtype=object), k),
            prior=None if prior is None else one_vs_rest(prior).reshape(g * k, 4),
        )
        return low, high, method
    if ci_method == "bootstrap":
        method = "bootstrap"
    elif smoothed or ci_method == "auto":
        method = "wilson" if label == "accuracy" and not smoothed else "posterior"
    else:
        method = ci_method
    key = label if avg is None else f"{label}_{avg}"

    def func(matrices):
        return multiclass_metric(metric, matrices, average=avg, zero_division=np.nan)

    low, high = _matrix_column_interval(
        label,
        func,
        counts,
        prior,
        method=method,
        alpha=alpha,
        n_draws=n_draws,
        seed=seed,
        groups=groups,
        key=key,
    )
    return low, high, method
