"""Metrics of multiclass confusion matrices: one-vs-rest metrics, their averages
and the whole-matrix metrics.

A multiclass confusion matrix is an array of shape ``(..., K, K)`` with rows the true
class and columns the predicted class (scikit-learn's orientation). The class-``k``
one-vs-rest matrix is derived from it in one vectorized step
(:func:`~sklearn_smallfair.metrics.one_vs_rest`), so every binary metric of the
registry is reused, not re-typed, for each class; the averages follow
scikit-learn's ``average=`` conventions. Four metrics are defined on the whole
matrix: accuracy, balanced accuracy, the multiclass Matthews correlation
(Gorodkin's R_K) and Cohen's kappa.
"""

import warnings
from math import comb

import numpy as np

from .._multiclass_counts import (
    check_square,
    one_vs_rest,
    ovr_multiplicity,
    whole_matrix_name,
)
from .._params import ZERO_DIVISION, StrOptions, validate_params
from .._validation import check_zero_division
from ..exceptions import UndefinedGroupMetricWarning
from ._registry import _apply_zero_division, get_metric, scale_cells
from ._warn import user_stacklevel

__all__ = ["multiclass_metric"]

_AVERAGES = ("macro", "weighted", "micro")


def _whole_matrix_metric(name, c):
    """accuracy, balanced accuracy, Gorodkin's R_K and Cohen's kappa; NaN if 0/0."""
    c = np.asarray(c, dtype=np.float64)
    if c.size:
        # each metric is a ratio of forms of one degree: an exact power-of-2
        # scale keeps its sums and products finite and the value unchanged
        c = scale_cells(c, axis=(-2, -1))
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
            den = np.sqrt(cov_pp) * np.sqrt(cov_tt)
            return np.where(den > 0, cov_tp / den, np.nan)
        if name == "kappa":
            po = diag.sum(axis=-1) / n
            pe = (t * p).sum(axis=-1) / (n * n)
            return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    raise AssertionError(name)  # pragma: no cover


def _resolve(metric):
    """``(whole-matrix name, None)`` or ``(None, registry metric)``."""
    name = whole_matrix_name(metric)
    if name is not None:
        return name, None
    return None, get_metric(metric)


def _nan_average(values, weights, axis=-1):
    """Average ignoring NaN entries, as scikit-learn's ``_nanaverage``: NaN where
    every entry is NaN, the plain mean of the defined entries where their weights
    sum to 0."""
    ok = ~np.isnan(values)
    w = np.where(ok, weights, 0.0)
    total = w.sum(axis=axis)
    count = ok.sum(axis=axis)
    kept = np.where(ok, values, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (kept * w).sum(axis=axis) / total
        plain = kept.sum(axis=axis) / count
    return np.where(total > 0, out, np.where(count > 0, plain, np.nan))


def average_fill(zero_division):
    """The value an undefined per-class metric takes in a macro or weighted
    average: ``zero_division``, 0 under ``"warn"`` (scikit-learn's rule), NaN
    (left out of the average) under ``nan``."""
    return 0.0 if isinstance(zero_division, str) else zero_division


def warn_undefined_classes(metric, undefined, classes, *, where=""):
    """Warn that per-class values undefined under ``undefined`` (``(..., K)``)
    entered an average as 0 (``zero_division="warn"``, scikit-learn's rule)."""
    undefined = np.asarray(undefined, dtype=bool)
    if not undefined.any():
        return
    absent = np.asarray(classes, dtype=object)[
        undefined.reshape(-1, len(classes)).any(0)
    ]
    shown = ", ".join(
        repr(c.item() if isinstance(c, np.generic) else c) for c in absent
    )
    warnings.warn(
        f"{metric} is undefined (0/0) for class(es) {shown}{where}; they enter the "
        f"average as 0, as in scikit-learn with zero_division='warn'. Pass "
        f"zero_division=np.nan to leave them out of the average, or 0.0/1.0 to "
        f"choose their value.",
        UndefinedGroupMetricWarning,
        stacklevel=user_stacklevel(),
    )


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
        Undefined per-class values enter the macro and weighted means as
        scikit-learn's :func:`~sklearn.metrics.precision_recall_fscore_support`
        has them: left out with ``zero_division=np.nan``, as ``zero_division``
        with ``0.0`` or ``1.0``, and as 0 with ``"warn"`` (with an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning`
        naming the classes, by position).
        Ignored (must be ``None`` or the metric's own) for whole-matrix metrics.
    zero_division : {"warn", nan, 0.0, 1.0}, default=nan
        The value of an undefined metric (0/0), with the same policy as
        :func:`~sklearn_smallfair.metrics.compute_metric`; for the macro and
        weighted averages, of each undefined per-class value (see ``average``).

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
    c = check_square(counts)
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
            if average is not None:
                # a substituted value enters the mean, as in scikit-learn
                if zero_division == "warn":
                    warn_undefined_classes(
                        reg.name,
                        np.isnan(per_class),
                        list(range(per_class.shape[-1])),
                        where=" (positions in the matrix)",
                    )
                per_class = np.where(
                    np.isnan(per_class), average_fill(zero_division), per_class
                )
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
    from .._enumeration import enumerate_confusion_matrices

    cms = enumerate_confusion_matrices(n)
    undefined = ~np.isfinite(np.asarray(reg.func(cms), dtype=np.float64))
    if k == 2:
        return int(undefined.sum())
    return int(ovr_multiplicity(cms[undefined], n, k).sum())
