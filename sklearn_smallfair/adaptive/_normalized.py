"""Dataset-adaptive normalized metric.

``score = clip(raw * f(d, N) * g(SNR) / h, 0, 1)`` where

* ``f(d, N) = 1 + max(0, sigma(d / (0.05 N) - 1) - sigma(0))`` rewards a score
  obtained with many features per sample (from the published method);
* ``g(SNR)`` discounts a score obtained on noisy data (the form of ``g`` and the
  SNR definitions are this package's choices: the method leaves them open);
* ``h = 1 + log(CI)`` (binary) or ``1 + log(1 / ACIR)`` (multiclass) discounts a
  score obtained on imbalanced classes (the formulas of ``h`` and ``CI`` are from
  the published method, the definition of ``ACIR`` is this package's choice).
"""

import math
from dataclasses import asdict, dataclass
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    adjusted_mutual_info_score,
    adjusted_rand_score,
    balanced_accuracy_score,
    f1_score,
    normalized_mutual_info_score,
    r2_score,
)
from sklearn.utils.multiclass import type_of_target

from .._params import Number, StrOptions, Whole, validate_params
from .._validation import _reject_mapping, check_paired_targets, resolve_pos_label
from ._factors import (
    _classification_snr,
    _clustering_snr,
    _codes,
    _default_snr_factor,
    _dimensionality_factor,
    _imbalance,
    _regression_snr,
)

__all__ = [
    "AdaptiveNormalizedReport",
    "adaptive_normalized_report",
    "adaptive_normalized_score",
]

_TASKS = ("auto", "binary", "multiclass", "regression", "clustering")


def _f1_binary(y_true, y_pred, pos_label=None):
    labels = pd.unique(np.concatenate([y_true.astype(object), y_pred.astype(object)]))
    return f1_score(y_true, y_pred, pos_label=resolve_pos_label(labels, pos_label))


def _f1_macro(y_true, y_pred, pos_label=None):
    return f1_score(y_true, y_pred, average="macro")


_CLASSIFICATION_METRICS = {
    "accuracy": lambda t, p, pos_label=None: accuracy_score(t, p),
    "balanced_accuracy": lambda t, p, pos_label=None: balanced_accuracy_score(t, p),
    "f1": None,  # binary F1 of pos_label, or macro F1 for multiclass
    "f1_macro": _f1_macro,
}
_METRICS = {
    "binary": ("accuracy", ("accuracy", "balanced_accuracy", "f1", "f1_macro")),
    "multiclass": ("accuracy", ("accuracy", "balanced_accuracy", "f1", "f1_macro")),
    "regression": ("r2", ("r2",)),
    "clustering": ("nmi", ("nmi", "ami", "ari")),
}
_OTHER_METRICS = {
    "r2": r2_score,
    "nmi": normalized_mutual_info_score,
    "ami": adjusted_mutual_info_score,
    "ari": adjusted_rand_score,
}
#: Constraints of the options shared by the score, the report and the scorer;
#: which base metric fits which task is checked once the task is known.
_OPTIONS = {
    "task": [StrOptions(set(_TASKS))],
    "base_metric": [
        StrOptions({m for _, names in _METRICS.values() for m in names}),
        callable,
        None,
    ],
    "snr_scale": [Number(0, None, closed="neither")],
    "snr_transform": [callable, None],
    "pos_label": [Real, str, "boolean", None],
}
_COUNT = [Whole(1, None, closed="left"), None]
_SCORE_PARAMS = {
    "y_true": ["array-like"],
    "y_pred": ["array-like"],
    "X": ["array-like", None],
    "n_features": _COUNT,
    "n_samples": _COUNT,
    **_OPTIONS,
}


@dataclass(frozen=True)
class AdaptiveNormalizedReport:
    """Every factor of :func:`adaptive_normalized_score`.

    Returned by :func:`adaptive_normalized_report`; its fields are its
    parameters.

    Parameters
    ----------
    task : str
        The task used (``"auto"`` resolved).
    base_metric : str
        Name of the base metric (``"callable"`` for a user function).
    raw_score : float
        The base metric on ``y_true``, ``y_pred``.
    n_features : int
        ``d``, the number of features.
    n_samples : int
        ``N``, the number of samples.
    dimensionality_factor : float
        ``f(d, N) = 1 + max(0, sigma(d / (0.05 N) - 1) - sigma(0))``, in ``[1, 1.5)``.
    snr : float
        The signal-to-noise ratio (may be ``inf``).
    snr_factor : float
        ``g(SNR)``.
    imbalance_name : str or None
        ``"CI"`` (binary), ``"ACIR"`` (multiclass) or ``None`` (no imbalance
        factor for regression and clustering).
    imbalance : float
        The value of CI or ACIR (``nan`` when there is none).
    imbalance_factor : float
        ``h``: ``1 + log(CI)``, ``1 + log(1 / ACIR)`` or ``1``.
    unclipped_score : float
        ``raw_score * f * g / h`` before clipping.
    score : float
        ``unclipped_score`` clipped to ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_smallfair.adaptive import adaptive_normalized_report
    >>> report = adaptive_normalized_report([0, 0, 0, 1, 1, 1],
    ...                                     [0, 0, 1, 1, 1, 1], n_features=2)
    >>> report.task, report.base_metric, report.imbalance_name
    ('binary', 'accuracy', 'CI')
    >>> round(report.raw_score, 4), round(report.score, 4)
    (0.8333, 1.0)
    """

    task: str
    base_metric: str
    raw_score: float
    n_features: int
    n_samples: int
    dimensionality_factor: float
    snr: float
    snr_factor: float
    imbalance_name: str | None
    imbalance: float
    imbalance_factor: float
    unclipped_score: float
    score: float

    def to_dict(self):
        """The factors as a ``dict`` (field name -> value)."""
        return asdict(self)

    def to_series(self):
        """The factors as a :class:`pandas.Series` indexed by field name."""
        return pd.Series(self.to_dict(), dtype=object, name="adaptive_normalized")


# --------------------------------------------------------------------------
# validation


def _check_task(task, y_true):
    if task != "auto":
        return task
    kind = type_of_target(y_true, input_name="y_true")
    if kind in ("binary", "multiclass"):
        return kind
    if kind == "continuous":
        return "regression"
    raise ValueError(
        f"task='auto' cannot infer the task: y_true is of type {kind!r}. Pass "
        f"task='binary', 'multiclass', 'regression' or 'clustering'."
    )


def _check_base_metric(base_metric, task):
    default, allowed = _METRICS[task]
    if base_metric is None:
        base_metric = default
    if callable(base_metric):
        user_metric = base_metric

        def call_user(t, p, pos_label=None):
            return user_metric(t, p)

        return "callable", call_user
    if not isinstance(base_metric, str) or base_metric not in allowed:
        raise ValueError(
            f"base_metric={base_metric!r} is not available for task={task!r}; use "
            f"one of {allowed} or a callable base_metric(y_true, y_pred) -> float."
        )
    if base_metric == "f1":
        fn = _f1_binary if task == "binary" else _f1_macro
    elif base_metric in _CLASSIFICATION_METRICS:
        fn = _CLASSIFICATION_METRICS[base_metric]
    else:
        metric = _OTHER_METRICS[base_metric]

        def fn(t, p, pos_label=None):
            return metric(t, p)

    return base_metric, fn


def _check_class_labels(y_true, y_pred, task, inferred):
    """Refuse continuous values in a classification task, naming the array."""
    how = " (inferred from y_true)" if inferred else ""
    for arr, name, what in (
        (y_true, "y_true", "true class labels"),
        (
            y_pred,
            "y_pred",
            "predicted class labels (for example from predict, not "
            "predict_proba, or scores thresholded into classes)",
        ),
    ):
        if type_of_target(arr, input_name=name) == "continuous":
            raise ValueError(
                f"{name} holds continuous values, but task={task!r}{how} compares "
                f"class labels. Pass {what}, or task='regression' to score "
                f"continuous targets."
            )


def _check_X(X, n_rows, need_values):
    _reject_mapping(X, "X")
    if isinstance(X, pd.DataFrame):
        shape = X.shape
        values = X.to_numpy() if need_values else None
    else:
        values = np.asarray(X) if need_values else None
        shape = values.shape if need_values else np.shape(X)
    if len(shape) != 2:
        raise ValueError(
            f"X must be 2-D of shape (n_samples, n_features), got shape {shape}."
        )
    if shape[0] != n_rows:
        raise ValueError(
            f"X has {shape[0]} rows but y_true has {n_rows}; pass the features of "
            f"the scored samples."
        )
    if need_values:
        if values.dtype.kind not in "biuf":
            try:
                values = values.astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"X must be numeric for the clustering SNR, got dtype "
                    f"{values.dtype}."
                ) from None
        values = values.astype(np.float64)
        if not np.isfinite(values).all():
            raise ValueError(
                "X contains NaN or inf; drop or impute those rows before scoring."
            )
    return shape, values


def _apply_snr_transform(snr_transform, snr, snr_scale):
    if snr_transform is None:
        return _default_snr_factor(snr, snr_scale)
    value = snr_transform(snr)
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"snr_transform must return a real number, got {value!r}."
        ) from None
    if not np.isfinite(value) or value < 0:
        raise ValueError(
            f"snr_transform returned {value!r} for SNR={snr!r}; it must return a "
            f"finite number >= 0."
        )
    return value


# --------------------------------------------------------------------------
# public functions


@validate_params(_SCORE_PARAMS)
def adaptive_normalized_report(
    y_true,
    y_pred,
    *,
    X=None,
    n_features=None,
    n_samples=None,
    task="auto",
    base_metric=None,
    snr_scale=1.0,
    snr_transform=None,
    pos_label=None,
):
    r"""Compute the dataset-adaptive normalized score and report every factor.

    The factors are those of :func:`adaptive_normalized_score`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels or targets (for clustering: the true labels).
    y_pred : array-like of shape (n_samples,)
        Predicted labels or targets (for clustering: the cluster labels).
    X : array-like of shape (n_samples, n_features), default=None
        The scored samples' features: ``d = X.shape[1]`` and ``N = X.shape[0]``.
        Required for clustering (its SNR uses the values of ``X``); otherwise
        only its shape is used.
    n_features : int >= 1, default=None
        ``d``; takes precedence over ``X.shape[1]``. Needed when ``X`` is None.
    n_samples : int >= 1, default=None
        ``N``; takes precedence over ``X.shape[0]``. Defaults to the number of
        rows of ``X``, else to ``len(y_true)``.
    task : {"auto", "binary", "multiclass", "regression", "clustering"}, default="auto"
        ``"auto"`` uses :func:`sklearn.utils.multiclass.type_of_target` of
        ``y_true``: binary, multiclass, or continuous (regression). Integer
        regression targets look multiclass: pass ``task="regression"``. A
        classification task needs class labels in ``y_pred`` too: continuous
        predictions raise a ``ValueError``.
    base_metric : str or callable, default=None
        The raw score. Classification: ``"accuracy"`` (default),
        ``"balanced_accuracy"``, ``"f1"`` (of ``pos_label`` for binary, macro
        for multiclass) or ``"f1_macro"``. Regression: ``"r2"`` (default; a
        negative :math:`R^2` gives a score of 0 after clipping). Clustering:
        ``"nmi"`` (default), ``"ami"`` or ``"ari"``. Or a callable
        ``base_metric(y_true, y_pred) -> float``, higher is better.
    snr_scale : finite float > 0, default=1.0
        Scale of the default :math:`g(s) = 1 - e^{-s / \text{snr\_scale}}`;
        larger values discount noisy data more.
    snr_transform : callable, default=None
        A replacement for ``g``: ``snr_transform(snr) -> float >= 0``
        (``snr`` may be ``inf``).
    pos_label : int, float, bool, str or None, default=None
        Positive class of the binary ``"f1"`` base metric. ``None`` follows
        scikit-learn's rule: ``1`` when the labels are ``{0, 1}`` or
        ``{-1, 1}``, otherwise a ``ValueError`` naming the labels.

    Returns
    -------
    report : AdaptiveNormalizedReport
        The raw score, ``d``, ``N``, ``f(d, N)``, the SNR, ``g(SNR)``, CI or
        ACIR, ``h``, the product before clipping and the final score;
        ``.to_dict()`` and ``.to_series()`` convert it.

    Examples
    --------
    >>> from sklearn_smallfair.adaptive import adaptive_normalized_report
    >>> y_true = [0, 0, 0, 1, 1, 1]
    >>> y_pred = [0, 0, 1, 1, 1, 1]
    >>> rep = adaptive_normalized_report(y_true, y_pred, n_features=2)
    >>> rep.raw_score, rep.snr, rep.imbalance, rep.imbalance_factor
    (0.833..., 5.0, 1.0, 1.0)
    >>> round(rep.dimensionality_factor, 4), round(rep.score, 4)
    (1.4966, 1.0)
    """
    y_true, y_pred = check_paired_targets(y_true, y_pred)
    inferred = task == "auto"
    task = _check_task(task, y_true)
    name, metric = _check_base_metric(base_metric, task)
    if task in ("binary", "multiclass"):
        _check_class_labels(y_true, y_pred, task, inferred)
    snr_scale = float(snr_scale)
    n_features = None if n_features is None else int(n_features)
    n_samples = None if n_samples is None else int(n_samples)

    if task == "clustering" and X is None:
        raise ValueError(
            "task='clustering' needs X: the SNR is the between-cluster over the "
            "within-cluster dispersion of X. Pass X=<the clustered data>."
        )
    values = None
    if X is not None:
        shape, values = _check_X(X, y_true.shape[0], task == "clustering")
        if n_features is None:
            n_features = int(shape[1])
            if n_features < 1:
                raise ValueError(
                    "X.shape[1] (n_features) must be a positive integer, got 0; "
                    "f(d, N) needs at least one feature and one sample."
                )
        if n_samples is None:
            n_samples = int(shape[0])
    if n_features is None:
        raise ValueError(
            "The number of features d is unknown: pass X=<features> or "
            "n_features=<int>."
        )
    if n_samples is None:
        n_samples = int(y_true.shape[0])

    if task == "regression":
        for arr, arg in ((y_true, "y_true"), (y_pred, "y_pred")):
            if arr.dtype.kind not in "biuf":
                raise TypeError(
                    f"{arg} must be numeric for task='regression', got dtype "
                    f"{arr.dtype}."
                )
        y_true = y_true.astype(np.float64)
        y_pred = y_pred.astype(np.float64)
        if y_true.shape[0] < 2:
            raise ValueError("task='regression' needs at least two samples for R^2.")

    raw = metric(y_true, y_pred, pos_label=pos_label)
    try:
        raw = float(raw)
    except (TypeError, ValueError):
        raise TypeError(
            f"base_metric must return a real number, got {raw!r}."
        ) from None
    if not np.isfinite(raw):
        raise ValueError(
            f"base_metric {name!r} returned {raw!r}; the score is undefined for "
            f"these labels."
        )

    if task == "regression":
        snr = _regression_snr(y_true, y_pred)
    elif task == "clustering":
        snr = _clustering_snr(values, _codes(y_pred))
    else:
        snr = _classification_snr(y_true, y_pred)
    g = _apply_snr_transform(snr_transform, snr, snr_scale)

    if task in ("binary", "multiclass"):
        imb_name, imbalance, h = _imbalance(y_true, task)
    else:
        imb_name, imbalance, h = None, math.nan, 1.0

    f = _dimensionality_factor(n_features, n_samples)
    unclipped = raw * f * g / h
    return AdaptiveNormalizedReport(
        task=task,
        base_metric=name,
        raw_score=raw,
        n_features=n_features,
        n_samples=n_samples,
        dimensionality_factor=f,
        snr=snr,
        snr_factor=g,
        imbalance_name=imb_name,
        imbalance=imbalance,
        imbalance_factor=h,
        unclipped_score=unclipped,
        score=float(min(1.0, max(0.0, unclipped))),
    )


@validate_params(_SCORE_PARAMS)
def adaptive_normalized_score(
    y_true,
    y_pred,
    *,
    X=None,
    n_features=None,
    n_samples=None,
    task="auto",
    base_metric=None,
    snr_scale=1.0,
    snr_transform=None,
    pos_label=None,
):
    r"""Dataset-adaptive normalized score, in ``[0, 1]``.

    .. math::

        \mathrm{score} = \operatorname{clip}\left(
            \frac{\mathrm{raw} \cdot f(d, N) \cdot g(\mathrm{SNR})}{h}, 0, 1\right)

    **From the published method**: the product form and the clipping; the
    dimensionality factor
    :math:`f(d, N) = 1 + \max(0, \sigma(d / (0.05 N) - 1) - \sigma(0))`
    (:math:`\sigma` logistic, so :math:`f = 1` while :math:`d \le 0.05 N` and
    :math:`f < 1.5`); the imbalance factor :math:`h = 1 + \log \mathrm{CI}` for
    binary tasks with :math:`\mathrm{CI}` = majority count / minority count of
    ``y_true``, and :math:`h = 1 + \log(1 / \mathrm{ACIR})` for multiclass tasks.

    **This package's choices** (the method leaves them open):

    * :math:`g(s) = 1 - e^{-s / \text{snr\_scale}}` (``snr_scale=1``): 0 at
      :math:`s = 0`, increasing, 1 as :math:`s \to \infty`; at ``snr_scale=1``
      it is above 0.95 once :math:`s \ge 3`. ``snr_transform`` replaces it.
    * SNR, regression: :math:`\sum y^2 / \sum (y - \hat y)^2`, with the squared
      targets *not centred* (so it depends on the origin of ``y``).
    * SNR, classification: correct over incorrect predictions,
      :math:`\operatorname{tr}(C) / (\sum C - \operatorname{tr}(C))` for the
      confusion matrix :math:`C`; the classification analogue of signal energy
      over residual energy (``inf``, so :math:`g = 1`, with no error).
    * SNR, clustering: between-cluster over within-cluster dispersion of ``X``
      for the clusters ``y_pred`` (the Calinski-Harabasz index without its
      degrees-of-freedom factor).
    * :math:`\mathrm{ACIR} = \frac{1}{K}\sum_c n_c / n_{\max}` over the ``K``
      classes present in ``y_true`` (1 when balanced, so :math:`h = 1`).
    * No imbalance factor (:math:`h = 1`) for regression and clustering.
    * ``x / 0 = inf`` for ``x > 0`` and ``0 / 0 = 0`` in the SNRs, except in
      regression, where a perfect prediction has SNR ``inf``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels or targets (for clustering: the true labels).
    y_pred : array-like of shape (n_samples,)
        Predicted labels or targets (for clustering: the cluster labels).
    X : array-like of shape (n_samples, n_features), default=None
        The scored samples' features: ``d = X.shape[1]`` and ``N = X.shape[0]``.
        Required for clustering (its SNR uses the values of ``X``); otherwise
        only its shape is used.
    n_features : int >= 1, default=None
        ``d``; takes precedence over ``X.shape[1]``. Needed when ``X`` is None.
    n_samples : int >= 1, default=None
        ``N``; takes precedence over ``X.shape[0]``. Defaults to the number of
        rows of ``X``, else to ``len(y_true)``.
    task : {"auto", "binary", "multiclass", "regression", "clustering"}, default="auto"
        ``"auto"`` uses :func:`sklearn.utils.multiclass.type_of_target` of
        ``y_true``: binary, multiclass, or continuous (regression). Integer
        regression targets look multiclass: pass ``task="regression"``. A
        classification task needs class labels in ``y_pred`` too: continuous
        predictions raise a ``ValueError``.
    base_metric : str or callable, default=None
        The raw score. Classification: ``"accuracy"`` (default),
        ``"balanced_accuracy"``, ``"f1"`` (of ``pos_label`` for binary, macro
        for multiclass) or ``"f1_macro"``. Regression: ``"r2"`` (default; a
        negative :math:`R^2` gives a score of 0 after clipping). Clustering:
        ``"nmi"`` (default), ``"ami"`` or ``"ari"``. Or a callable
        ``base_metric(y_true, y_pred) -> float``, higher is better.
    snr_scale : finite float > 0, default=1.0
        Scale of the default :math:`g(s) = 1 - e^{-s / \text{snr\_scale}}`;
        larger values discount noisy data more.
    snr_transform : callable, default=None
        A replacement for ``g``: ``snr_transform(snr) -> float >= 0``
        (``snr`` may be ``inf``).
    pos_label : int, float, bool, str or None, default=None
        Positive class of the binary ``"f1"`` base metric. ``None`` follows
        scikit-learn's rule: ``1`` when the labels are ``{0, 1}`` or
        ``{-1, 1}``, otherwise a ``ValueError`` naming the labels.

    Returns
    -------
    score : float
        In ``[0, 1]``. :func:`adaptive_normalized_report` gives every factor.

    Examples
    --------
    >>> from sklearn_smallfair.adaptive import adaptive_normalized_score
    >>> y_true = [0, 0, 0, 0, 0, 0, 1, 1]
    >>> y_pred = [0, 0, 0, 0, 0, 1, 1, 1]
    >>> round(adaptive_normalized_score(y_true, y_pred, n_features=1), 4)
    0.5489
    """
    return adaptive_normalized_report(
        y_true,
        y_pred,
        X=X,
        n_features=n_features,
        n_samples=n_samples,
        task=task,
        base_metric=base_metric,
        snr_scale=snr_scale,
        snr_transform=snr_transform,
        pos_label=pos_label,
    ).score
