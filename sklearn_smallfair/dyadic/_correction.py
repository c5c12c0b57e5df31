"""Post-training corrections of eccentricity bias in dyadic regression.

A dyadic model that shrinks its predictions towards the pair average
``(user mean + item mean) / 2`` fails on eccentric pairs. The corrections here
are the naive post-hoc ones: fit a map from the model's prediction (and the
pair's entity means) to the true rating on a probe split held out from the
model's training data, then apply it to every prediction.
"""

from numbers import Integral

import numpy as np
from scipy.optimize import least_squares
from scipy.special import expit
from sklearn.base import MetaEstimatorMixin, clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import Interval, RealNotInt, _fit_context
from .._params import BOOLEAN, HasMethods, StrOptions, Whole
from ._estimators import _SEEDS, _DyadicRegressor, _fill_unseen, _validate_dyadic
from ._means import EntityMeans, _entity_means

__all__ = ["EccentricityCorrectedRegressor"]

_CORRECTION_MODELS = ("linear", "balanced_linear", "sigmoid", "forest")
# smallest probe on which a correction is fit
_MIN_PROBE = 10
# at most this many distinct ratings are balanced value by value, else in bins
_MAX_LEVELS = 20
_FOREST_DEFAULTS = {"n_estimators": 50, "min_samples_leaf": 5, "max_features": None}


class EccentricityCorrectedRegressor(MetaEstimatorMixin, _DyadicRegressor):
    """Correct a dyadic regressor's shrinkage towards the pair average.

    The training data are split (``train_test_split``, seeded) into a fit part
    and a probe of ``probe_size``. A clone of ``regressor`` is fitted on the fit
    part; its predictions on the probe, together with the probe pairs' user and
    item means over the fit part, are used to fit a correction ``g``, and::

        predict(X) = clip(g(regressor_.predict(X), user mean, item mean))

    clipped to the range of the training ratings.

    Parameters
    ----------
    regressor : estimator
        A regressor taking the dyadic ``X`` (see Notes), e.g.
        :class:`DyadicMeanRegressor` or :class:`MatrixFactorizationRegressor`.
        It is cloned, never modified.
    correction_model : {"linear", "balanced_linear", "sigmoid", "forest"}, \
            default="linear"
        The model of the correction ``g``:

        - ``"linear"``: the inverse linear map ``y ~ a + b * y_hat`` fitted by
          least squares (``b > 1`` stretches shrunk predictions);
        - ``"balanced_linear"``: the same fit with sample weights that give
          every distinct rating value (or, for more than 20 distinct values,
          every one of ``n_bins`` equal-width rating bins) the same total
          weight, so rare extreme ratings count as much as common ones;
        - ``"sigmoid"``: ``lo + (hi - lo) * sigmoid(a + b * y_hat)`` with
          ``[lo, hi]`` the training rating range and ``a, b`` fitted by least
          squares (:func:`scipy.optimize.least_squares`);
        - ``"forest"``: a seeded :class:`~sklearn.ensemble.RandomForestRegressor`
          on ``(user mean, item mean, y_hat)``.
    probe_size : float or int, default=0.2
        Fraction (a float in ``(0, 1)``) or number (an int ``>= 10``) of
        training ratings held out to fit the correction. The probe must hold at
        least 10 ratings.
    refit : bool, default=False
        Whether to refit the regressor on all training data after fitting the
        correction. By default ``regressor_`` is the model fitted without the
        probe, i.e. the model whose predictions the correction was fitted on.
        With ``refit=True`` the refitted model (which saw more data, so may be
        less shrunk) is corrected by the same map, and the ``"forest"`` inputs
        use the means of all training data.
    n_bins : int, default=10
        Number of equal-width rating bins of ``"balanced_linear"`` when the
        ratings take more than 20 distinct values.
    forest_params : dict, default=None
        Parameters of the ``"forest"`` correction's random forest, overriding
        ``n_estimators=50, min_samples_leaf=5, max_features=None``.
    random_state : int, RandomState instance or None, default=0
        Seeds the probe split and the forest; ``None`` draws fresh entropy. (The
        regressor's own randomness is governed by its own ``random_state``.)

    Attributes
    ----------
    regressor_ : estimator
        The fitted clone of ``regressor``.
    correction_ : object
        The fitted correction: a :class:`~sklearn.linear_model.LinearRegression`
        (``"linear"``, ``"balanced_linear"``), a
        :class:`~sklearn.ensemble.RandomForestRegressor` (``"forest"``), or
        ``None`` (``"sigmoid"``, see ``coef_``).
    coef_ : ndarray of shape (2,) or None
        ``(a, b)`` of the linear and sigmoid corrections; ``None`` for the
        forest.
    entity_means_ : EntityMeans
        Per-user and per-item means of all training ratings (for
        :func:`eauc_score`).
    rating_range_ : tuple of float
        ``(min, max)`` of the training ratings; predictions are clipped to it.
    n_probe_ : int
        Number of probe ratings.
    n_features_in_ : int
        Always 2 (user id, item id).
    feature_names_in_ : ndarray of shape (2,)
        Column names of ``X`` when it was a DataFrame with string column names.

    Notes
    -----
    ``X`` is an array-like or DataFrame of shape ``(n_samples, 2)``: column 0
    holds the user id and column 1 the item id of each rating. Ids are integers
    or, in a DataFrame, any hashable labels (one dtype per column); missing ids
    are rejected.

    A probe or test pair with an unseen user uses the item mean in place of the
    user mean (and conversely), and the global mean when both are unseen.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.dyadic import (
    ...     DyadicMeanRegressor, EccentricityCorrectedRegressor)
    >>> rng = np.random.default_rng(0)
    >>> users, items = np.divmod(np.arange(40 * 30), 30)
    >>> levels = rng.normal(size=40)[users] + rng.normal(size=30)[items]
    >>> y = np.clip(np.round(3 + levels), 1, 5)
    >>> X = np.column_stack([users, items])
    >>> model = EccentricityCorrectedRegressor(
    ...     DyadicMeanRegressor(), correction_model="linear", random_state=0
    ... ).fit(X, y)
    >>> model.coef_.round(2)  # slope > 1: the shrunk predictions are stretched
    array([-3.25,  2.01])
    >>> DyadicMeanRegressor().fit(X, y).predict([[0, 0], [1, 1]]).round(2)
    array([2.62, 3.79])
    >>> model.predict([[0, 0], [1, 1]]).round(2)
    array([2.07, 4.28])
    >>> y[[0, 31]]
    array([2., 4.])
    """

    _parameter_constraints: dict = {
        "regressor": [HasMethods(["fit", "predict"])],
        "correction_model": [StrOptions(set(_CORRECTION_MODELS))],
        "probe_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Whole(_MIN_PROBE, None, closed="left"),
        ],
        "refit": BOOLEAN,
        "n_bins": [Whole(2, None, closed="left")],
        "forest_params": [dict, None],
        "random_state": _SEEDS,
    }

    def __init__(
        self,
        regressor,
        *,
        correction_model="linear",
        probe_size=0.2,
        refit=False,
        n_bins=10,
        forest_params=None,
        random_state=0,
    ):
        self.regressor = regressor
        self.correction_model = correction_model
        self.probe_size = probe_size
        self.refit = refit
        self.n_bins = n_bins
        self.forest_params = forest_params
        self.random_state = random_state

    def _probe_count(self, n):
        size = self.probe_size
        if isinstance(size, Integral):
            n_probe = int(size)
        else:
            n_probe = int(np.ceil(size * n))
        if n_probe < _MIN_PROBE:
            raise ValueError(
                f"The probe holds {n_probe} rating(s) (probe_size={size!r} of "
                f"{n}); a correction needs at least {_MIN_PROBE}. Increase "
                f"probe_size or pass more training ratings."
            )
        if n_probe > n - 1:
            raise ValueError(
                f"probe_size={size!r} leaves no training ratings for the "
                f"regressor ({n} in all); use a smaller probe."
            )
        return n_probe

    # the regressor's own parameters are checked when its clones are fitted
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the regressor without the probe, then the correction on the probe.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            Ratings (finite numbers, not all equal).

        Returns
        -------
        self : EccentricityCorrectedRegressor
            The fitted estimator.
        """
        users, items, r = self._fit_means(X, y)
        lo, hi = float(r.min()), float(r.max())
        if lo == hi:
            raise ValueError(
                f"y is constant (every training rating is {lo:g}); an eccentricity "
                f"correction cannot be fit. Pass ratings that vary."
            )
        n = r.shape[0]
        n_probe = self._probe_count(n)
        rng = check_random_state(self.random_state)
        split_seed, forest_seed = rng.randint(np.iinfo(np.int32).max, size=2)
        fit_idx, probe_idx = train_test_split(
            np.arange(n), test_size=n_probe, random_state=split_seed
        )
        r_probe = r[probe_idx]
        if r_probe.min() == r_probe.max():
            raise ValueError(
                f"The probe's {n_probe} ratings are all equal; a correction cannot "
                f"be fit. Increase probe_size or change random_state."
            )

        base = clone(self.regressor).fit(
            _safe_indexing(X, fit_idx), _safe_indexing(y, fit_idx)
        )
        pred = np.asarray(base.predict(_safe_indexing(X, probe_idx)), dtype=float)
        pred = pred.reshape(-1)
        if not np.all(np.isfinite(pred)):
            raise ValueError(
                "The regressor predicted NaN or inf on the probe; a correction "
                "cannot be fit on such predictions."
            )
        means = getattr(base, "entity_means_", None)
        if not isinstance(means, EntityMeans):
            means = _entity_means(r[fit_idx], users[fit_idx], items[fit_idx])

        self.rating_range_ = (lo, hi)
        self.n_probe_ = n_probe
        self.coef_ = None
        self.correction_ = None
        if self.correction_model == "forest":
            features = _features(means, users[probe_idx], items[probe_idx], pred)
            params = {**_FOREST_DEFAULTS, **(self.forest_params or {})}
            params["random_state"] = forest_seed
            self.correction_ = RandomForestRegressor(**params).fit(features, r_probe)
        else:
            if pred.min() == pred.max():
                raise ValueError(
                    f"The regressor's predictions on the probe are all equal "
                    f"({pred[0]:g}); a {self.correction_model!r} correction of "
                    f"them cannot be fit. Use a larger probe or "
                    f"correction_model='forest'."
                )
            if self.correction_model == "sigmoid":
                self.coef_ = _fit_sigmoid(pred, r_probe, lo, hi)
            else:
                weights = None
                if self.correction_model == "balanced_linear":
                    weights = _balanced_weights(r_probe, lo, hi, self.n_bins)
                self.correction_, self.coef_ = _fit_linear(pred, r_probe, weights)

        if self.refit:
            self.regressor_ = clone(self.regressor).fit(X, y)
            self._feature_means = self.entity_means_
        else:
            self.regressor_ = base
            self._feature_means = means
        return self

    def predict(self, X):
        """Corrected predictions of the regressor.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Within ``rating_range_``.
        """
        check_is_fitted(self, "regressor_")
        users, items = _validate_dyadic(self, X, reset=False)
        pred = np.asarray(self.regressor_.predict(X), dtype=float).reshape(-1)
        lo, hi = self.rating_range_
        if self.correction_model == "forest":
            features = _features(self._feature_means, users, items, pred)
            out = self.correction_.predict(features)
        elif self.correction_model == "sigmoid":
            a, b = self.coef_
            out = lo + (hi - lo) * expit(a + b * pred)
        else:
            out = self.coef_[0] + self.coef_[1] * pred
        return np.clip(out, lo, hi)


def _features(means, users, items, pred):
    """``(user mean, item mean, prediction)``; unseen means filled (see Notes)."""
    um, im = _fill_unseen(*means._pair_means(users, items), means.global_mean)
    return np.column_stack([um, im, pred])


def _fit_linear(pred, y, weights):
    """Weighted least squares ``y ~ a + b * pred``."""
    model = LinearRegression().fit(pred[:, None], y, sample_weight=weights)
    return model, np.array([float(model.intercept_), float(model.coef_[0])])


def _balanced_weights(y, lo, hi, n_bins):
    """Weights giving every rating value (or bin) the same total weight."""
    values, codes = np.unique(y, return_inverse=True)
    if values.shape[0] > _MAX_LEVELS:
        edges = np.linspace(lo, hi, n_bins + 1)[1:-1]
        codes = np.searchsorted(edges, y, side="right")
    counts = np.bincount(codes)
    n_levels = np.count_nonzero(counts)
    return y.shape[0] / (n_levels * counts[codes])


def _fit_sigmoid(pred, y, lo, hi):
    """``(a, b)`` of ``lo + (hi - lo) * sigmoid(a + b * pred)`` by least squares.

    Fitted on the standardized prediction ``z = (pred - mid) / (hi - lo)``,
    starting from the map closest to the identity (``a = 0, b = 4``).
    """
    mid, width = (lo + hi) / 2, hi - lo
    z = (pred - mid) / width
    t = (y - lo) / width

    def resid(theta):
        return expit(theta[0] + theta[1] * z) - t

    def jac(theta):
        s = expit(theta[0] + theta[1] * z)
        d = s * (1 - s)
        return np.column_stack([d, d * z])

    fit = least_squares(resid, x0=[0.0, 4.0], jac=jac, method="lm")
    a, b = fit.x
    return np.array([a - b * mid / width, b / width])
