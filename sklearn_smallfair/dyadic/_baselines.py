"""A uniform random baseline for dyadic regression.

Every prediction is an independent draw from the uniform distribution over the
rating range. It knows nothing about users or items, so its error does not grow
with the eccentricity of a rating: the flat reference curve against which the
eccentricity bias of a model is judged.
"""

import numpy as np
from sklearn.utils import check_random_state

from .._compat import _fit_context
from ._estimators import _SEEDS, _DyadicRegressor

__all__ = ["UniformRandomRegressor"]


def _check_rating_range(rating_range):
    """``(low, high)`` floats with ``low < high``, both finite."""
    try:
        lo, hi = rating_range
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(
            f"rating_range must be None or a pair of numbers (low, high), got "
            f"{rating_range!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise ValueError(
            f"rating_range must be two finite numbers with low < high, got "
            f"{rating_range!r}; pass e.g. rating_range=(1, 5), or None for the "
            f"range of the training ratings."
        )
    return lo, hi


class UniformRandomRegressor(_DyadicRegressor):
    """Predict every rating as a uniform random draw over the rating range.

    The baseline of the published EAUC study: a model with no information has
    the same expected error at every eccentricity, so its eccentricity curve is
    flat, and a model whose curve rises above it on the eccentric ratings does
    worse than chance there.

    Parameters
    ----------
    rating_range : tuple of (float, float) or None, default=None
        ``(low, high)`` of the draws. ``None`` takes the range of the training
        ratings.
    random_state : int, RandomState instance or None, default=0
        Seed of the draws (an int in ``[0, 2**32 - 1]``). With an int every
        call of :meth:`predict` on the same ``X`` returns the same numbers; with
        a RandomState instance the draws continue its stream, and with ``None``
        they come from numpy's global random state.

    Attributes
    ----------
    entity_means_ : EntityMeans
        Per-user and per-item means of the training ratings (for
        :func:`eauc_score`'s ``means=``).
    rating_range_ : tuple of (float, float)
        The range of the draws.
    n_features_in_ : int
        Always 2 (user id, item id).
    feature_names_in_ : ndarray of shape (2,)
        Column names of ``X`` when it was a DataFrame with string column names.

    See Also
    --------
    DyadicMeanRegressor : The pair's average, the other reference model.

    Notes
    -----
    ``X`` is an array-like or DataFrame of shape ``(n_samples, 2)``: column 0
    holds the user id and column 1 the item id of each rating. The ids are not
    used by the predictions, only checked.

    The expected absolute error of a uniform draw on ``[a, b]`` for a rating
    ``r`` in it is ``((r - a)**2 + (b - r)**2) / (2 (b - a))``: it depends on
    where ``r`` sits in the range, not on the rating's eccentricity.

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import UniformRandomRegressor
    >>> X, y = [[0, 0], [0, 1], [1, 0], [1, 1]], [1.0, 5.0, 2.0, 4.0]
    >>> model = UniformRandomRegressor(random_state=0).fit(X, y)
    >>> model.rating_range_
    (1.0, 5.0)
    >>> model.predict(X).round(3)
    array([3.195, 3.861, 3.411, 3.18 ])
    >>> bool((model.predict(X) == model.predict(X)).all())
    True
    """

    _parameter_constraints: dict = {
        "rating_range": ["array-like", tuple, None],
        "random_state": _SEEDS,
    }

    def __init__(self, rating_range=None, *, random_state=0):
        self.rating_range = rating_range
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Record the rating range (and the entity means) of the training data.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            Ratings (finite numbers).

        Returns
        -------
        self : UniformRandomRegressor
            The fitted estimator.
        """
        if self.rating_range is not None:
            lo, hi = _check_rating_range(self.rating_range)
        self._fit_means(X, y)
        if self.rating_range is None:
            lo, hi = self.entity_means_.rating_min, self.entity_means_.rating_max
        self.rating_range_ = (float(lo), float(hi))
        return self

    def predict(self, X):
        """Draw one uniform rating per row of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Independent draws from ``U[low, high]``.
        """
        users, _ = self._check_predict(X)
        rng = check_random_state(self.random_state)
        lo, hi = self.rating_range_
        return rng.uniform(lo, hi, size=users.shape[0])
