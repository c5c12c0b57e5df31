"""EAUC as a scikit-learn scorer for dyadic estimators."""

from .._params import validate_params
from ._eauc import CURVE_OPTIONS, eauc_score
from ._means import EntityMeans, _ids_from_X

__all__ = ["make_eauc_scorer"]

# where meta-estimators keep the fitted estimator that holds ``entity_means_``
_INNER = ("best_estimator_", "regressor_", "estimator_")


def _fitted_means(estimator):
    """The training means of a fitted dyadic estimator, or None."""
    seen = set()
    while estimator is not None and id(estimator) not in seen:
        seen.add(id(estimator))
        means = getattr(estimator, "entity_means_", None)
        if isinstance(means, EntityMeans):
            return means
        if hasattr(estimator, "steps"):  # Pipeline: the final step
            estimator = estimator.steps[-1][1]
            continue
        estimator = next(
            (getattr(estimator, a) for a in _INNER if hasattr(estimator, a)), None
        )
    return None


class _EAUCScorer:
    """Callable ``scorer(estimator, X, y)`` returning ``-EAUC``."""

    def __init__(self, kwargs):
        self._kwargs = kwargs
        self._sign = -1

    def __call__(self, estimator, X, y_true):
        users, items = _ids_from_X(X)
        y_pred = estimator.predict(X)
        return -eauc_score(
            y_true,
            y_pred,
            users=users,
            items=items,
            means=_fitted_means(estimator),
            **self._kwargs,
        )

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"make_eauc_scorer({args})"


@validate_params(CURVE_OPTIONS)
def make_eauc_scorer(
    *, error="absolute", tail="both", method="ordered", n_bins=20, unknown="drop"
):
    """EAUC as a scorer for ``GridSearchCV``, ``cross_validate`` and friends.

    The scorer is called as ``scorer(estimator, X, y)`` with ``X`` in the dyadic
    layout (column 0 the user id, column 1 the item id) and returns ``-EAUC``, so
    that greater is better, like scikit-learn's ``neg_*`` scorers.

    The per-entity means are the fitted estimator's training means: its
    ``entity_means_`` (set by :class:`DyadicMeanRegressor`,
    :class:`MatrixFactorizationRegressor` and
    :class:`EccentricityCorrectedRegressor`), also found on the final step of a
    :class:`~sklearn.pipeline.Pipeline` and inside fitted meta-estimators
    (``best_estimator_``, ``regressor_``, ``estimator_``). For other estimators
    the means come from the evaluated fold itself, with a
    :class:`~sklearn_smallfair.exceptions.DyadicDataWarning`.

    Parameters
    ----------
    error : {"absolute", "squared"}, default="absolute"
        ``|r - r_hat|`` or ``(r - r_hat)^2``, as in :func:`eauc_score`.
    tail : {"both", "upper", "lower"}, default="both"
        Two-tailed eccentricity, or only the ratings above or below their pair's
        average, as in :func:`eauc_score`.
    method : {"ordered", "grouped", "bins", "bins_published"}, default="ordered"
        The curve whose area is taken, as in :func:`eauc_score`.
    n_bins : int, default=20
        Number of bins of the binned curves, as in :func:`eauc_score`.
    unknown : {"drop", "error", "global_mean"}, default="drop"
        Rows whose user or item has no training rating, as in
        :func:`eauc_score`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> -EAUC``.

    Examples
    --------
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_smallfair.datasets import make_dyadic_regression
    >>> from sklearn_smallfair.dyadic import DyadicMeanRegressor, make_eauc_scorer
    >>> X, y = make_dyadic_regression(n_users=50, n_items=40, n_ratings=1500,
    ...                               random_state=0)
    >>> scores = cross_validate(DyadicMeanRegressor(), X, y, cv=3,
    ...                         scoring={"eauc": make_eauc_scorer(),
    ...                                  "rmse": "neg_root_mean_squared_error"})
    >>> bool((scores["test_eauc"] < 0).all())
    True
    """
    return _EAUCScorer(
        {
            "error": error,
            "tail": tail,
            "method": method,
            "n_bins": int(n_bins),
            "unknown": unknown,
        }
    )
