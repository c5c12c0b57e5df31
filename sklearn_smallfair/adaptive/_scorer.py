"""The dataset-adaptive normalized score as a scikit-learn scorer."""

import numpy as np

from .._params import validate_params
from ._normalized import (
    _COUNT,
    _OPTIONS,
    _check_base_metric,
    adaptive_normalized_score,
)

__all__ = ["make_adaptive_scorer"]


class _AdaptiveScorer:
    """``scorer(estimator, X, y)`` for scikit-learn model selection."""

    def __init__(self, kwargs, n_samples, response_method):
        self._kwargs = kwargs
        self._n_samples = n_samples
        self._response_method = response_method

    def __call__(self, estimator, X, y_true, sample_weight=None):
        if sample_weight is not None:
            raise ValueError(
                "The adaptive normalized scorer does not support sample_weight."
            )
        method = getattr(estimator, self._response_method, None)
        if method is None:
            raise AttributeError(
                f"{type(estimator).__name__} has no method "
                f"{self._response_method!r}; pass response_method=<its method>."
            )
        y_pred = method(X)
        n_features = None
        if len(np.shape(X)) != 2:
            n_features = getattr(estimator, "n_features_in_", None)
        return adaptive_normalized_score(
            y_true,
            y_pred,
            X=X if n_features is None else None,
            n_features=n_features,
            n_samples=self._n_samples,
            **self._kwargs,
        )

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return (
            f"make_adaptive_scorer({args}, n_samples={self._n_samples!r}, "
            f"response_method={self._response_method!r})"
        )


@validate_params(
    {**_OPTIONS, "n_samples": _COUNT, "response_method": [str]},
)
def make_adaptive_scorer(
    *,
    task="auto",
    base_metric=None,
    snr_scale=1.0,
    snr_transform=None,
    pos_label=None,
    n_samples=None,
    response_method="predict",
):
    """Make a scorer of :func:`adaptive_normalized_score` for model selection.

    The scorer is called as ``scorer(estimator, X, y)`` (the ``scoring=``
    protocol of :func:`~sklearn.model_selection.cross_validate` and
    :class:`~sklearn.model_selection.GridSearchCV`) and scores
    ``estimator.<response_method>(X)`` against ``y``. ``d`` is ``X.shape[1]``
    (``estimator.n_features_in_`` when ``X`` is not 2-D). ``N`` is, by default,
    the number of rows of the *evaluated* split, so a test fold of 50 samples
    out of 250 gets ``N = 50``; pass ``n_samples`` to fix ``N`` (for example to
    the training size) for every fold. The classes, SNR and imbalance are those
    of the evaluated split. Higher is better.

    Parameters
    ----------
    task : {"auto", "binary", "multiclass", "regression", "clustering"}, \
            default="auto"
        The task, as in :func:`adaptive_normalized_score`. ``task="clustering"``
        scores the cluster labels predicted for ``X`` against ``y`` and uses
        ``X`` for the SNR.
    base_metric : str or callable, default=None
        The raw score, as in :func:`adaptive_normalized_score`.
    snr_scale : finite float > 0, default=1.0
        Scale of the SNR factor, as in :func:`adaptive_normalized_score`.
    snr_transform : callable, default=None
        A replacement for the SNR factor, as in
        :func:`adaptive_normalized_score`.
    pos_label : int, float, bool, str or None, default=None
        Positive class of the binary ``"f1"`` base metric, as in
        :func:`adaptive_normalized_score`.
    n_samples : int, default=None
        A fixed ``N``; ``None`` uses the size of the evaluated split.
    response_method : str, default="predict"
        Estimator method giving the predictions (labels, targets or clusters).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float`` in ``[0, 1]``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_smallfair.adaptive import make_adaptive_scorer
    >>> X, y = load_iris(return_X_y=True)
    >>> scoring = {"adaptive": make_adaptive_scorer(n_samples=100),
    ...            "accuracy": "accuracy"}
    >>> cv = cross_validate(LogisticRegression(max_iter=1000), X, y, cv=3,
    ...                     scoring=scoring)
    >>> cv["test_accuracy"].round(3), cv["test_adaptive"].round(3)
    (array([0.98, 0.96, 0.98]), array([0.961, 0.941, 0.961]))
    """
    if task != "auto":
        _check_base_metric(base_metric, task)
    if n_samples is not None:
        n_samples = int(n_samples)
    kwargs = dict(
        task=task,
        base_metric=base_metric,
        snr_scale=snr_scale,
        snr_transform=snr_transform,
        pos_label=pos_label,
    )
    return _AdaptiveScorer(kwargs, n_samples, response_method)
