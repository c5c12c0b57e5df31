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
from math import comb
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._confusion import FN, FP, MAX_ENUMERATION_BYTES, TN, TP
from .._params import ZERO_DIVISION, StrOptions, validate_params
from .._validation import (
    _sorted_labels,
    check_paired_targets,
    check_sample_weight,
    check_sensitive_features,
    check_zero_division,
    format_labels,
)
from ..exceptions import UndefinedGroupMetricWarning
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


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like"],
        "labels": ["array-like", None],
        "metrics": [str, list, tuple],
        "average": [StrOptions(set(_AVERAGES)), None],
        "zero_division": ZERO_DIVISION,
        "sample_weight": ["array-like", None],
    }
)
def multiclass_group_metrics(
    y_true,
    y_pred,
    *,
    sensitive_features,
    labels=None,
    metrics=("tpr", "ppv", "f1"),
    average=None,
    zero_division="warn",
    sample_weight=None,
):
    """Multiclass metrics for every group: per class, or averaged per group.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted class labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; several columns define intersectional groups ``"a|b"``.
    labels : array-like of shape (n_classes,), default=None
        The class order (default: the sorted classes of ``y_true`` and ``y_pred``).
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

    Returns
    -------
    table : pandas.DataFrame
        Columns ``n`` (the group's size), then ``support`` and ``predicted`` per
        class (without ``average``), then each metric and ``<metric>_undefined``.

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
    res = multiclass_confusion_counts(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        labels=labels,
        sample_weight=sample_weight,
    )
    counts, groups, classes = res.counts, res.groups, res.labels
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
    for metric, (name, reg) in zip(names, resolved):
        label = name if name is not None else reg.name
        values = multiclass_metric(
            metric,
            counts,
            average=average if name is None else None,
            zero_division=np.nan,
        ).reshape(-1)
        undefined = np.isnan(values)
        if undefined.any():
            where = index[undefined].tolist()
            if zero_division == "warn":
                shown = ", ".join(map(str, where[:10]))
                more = f" ({len(where)} in all)" if len(where) > 10 else ""
                warnings.warn(
                    f"{label} is undefined (0/0) for {shown}{more}; reported as NaN "
                    f"and flagged in {label}_undefined.",
                    UndefinedGroupMetricWarning,
                    stacklevel=2,
                )
            elif not np.isnan(zero_division):
                values = np.where(undefined, zero_division, values)
        columns[label] = values
        columns[f"{label}_undefined"] = undefined
    return pd.DataFrame(columns, index=index)
