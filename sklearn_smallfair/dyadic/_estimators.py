"""Dyadic regressors: a value per (user, item) pair, predicted from the pair's ids.

Both estimators take ``X`` of shape ``(n_samples, 2)`` whose column 0 holds the
user id and column 1 the item id, and store the per-entity means of their
training ratings as ``entity_means_`` (an :class:`EntityMeans`), which
:func:`eauc_score` accepts as ``means=``.
"""

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import _fit_context
from .._params import BOOLEAN, Number, StrOptions, Whole
from ._means import _check_ratings, _entity_means, _ids_from_X

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data

    _FINITE_KW = "ensure_all_finite"
except ImportError:  # pragma: no cover - scikit-learn < 1.6

    def _sk_validate_data(estimator, X, y="no_validation", **kwargs):
        return estimator._validate_data(X, y, **kwargs)

    _FINITE_KW = "force_all_finite"

__all__ = ["DyadicMeanRegressor", "MatrixFactorizationRegressor"]

#: ``random_state`` of the dyadic estimators: what
#: :func:`sklearn.utils.check_random_state` seeds from (None, an int that numpy's
#: legacy seeding takes, a RandomState), bools refused.
_SEEDS = [None, Whole(0, 2**32 - 1), np.random.RandomState]

_X_LAYOUT = (
    "X must have exactly 2 columns: column 0 the user id and column 1 the item "
    "id of each rating"
)


_NO_Y = "no_validation"


def _validate_dyadic(estimator, X, y=_NO_Y, *, reset):
    """Check ``X`` (and ``y``) of a dyadic estimator.

    Records ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame) when
    ``reset``, and returns ``(users, items)`` or ``(users, items, y)`` as 1-D
    arrays. DataFrame columns keep their own dtypes (e.g. integer users and
    string items).
    """
    kwargs = {"dtype": None, _FINITE_KW: False, "reset": reset}
    if isinstance(y, str) and y == _NO_Y:
        arr = _sk_validate_data(estimator, X, **kwargs)
    else:
        arr, y = _sk_validate_data(estimator, X, y, y_numeric=True, **kwargs)
    if arr.shape[1] != 2:
        raise ValueError(
            f"{_X_LAYOUT}, got {arr.shape[1]} feature(s) (columns). Pass an array "
            f"or DataFrame of shape (n_samples, 2), e.g. "
            f"numpy.column_stack([users, items])."
        )
    users, items = _ids_from_X(
        X if isinstance(X, pd.DataFrame) else arr,
        names=("X column 0 (user ids)", "X column 1 (item ids)"),
    )
    if isinstance(y, str) and y == _NO_Y:
        return users, items
    return users, items, _check_ratings(y, "y")


class _DyadicRegressor(RegressorMixin, BaseEstimator):
    """Shared input handling, tags and ``score`` of the dyadic regressors."""

    def _fit_means(self, X, y):
        """Check ``X`` and ``y``, set ``entity_means_``; ``(users, items, y)``."""
        users, items, r = _validate_dyadic(self, X, y, reset=True)
        self.entity_means_ = _entity_means(r, users, items)
        return users, items, r

    def _check_predict(self, X):
        check_is_fitted(self, "entity_means_")
        return _validate_dyadic(self, X, reset=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True
        tags.input_tags.allow_nan = False
        return tags

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R^2 of the predictions on ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            True ratings.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            :func:`sklearn.metrics.r2_score` of ``self.predict(X)``; for the
            eccentricity bias use :func:`eauc_score` or :func:`make_eauc_scorer`.
        """
        return super().score(X, y, sample_weight=sample_weight)


class DyadicMeanRegressor(_DyadicRegressor):
    """Predict a rating as the average of the user's and the item's mean rating.

    The prediction for the pair ``(u, i)`` is ``(mean(u) + mean(i)) / 2``, the
    means taken over the training ratings. This is the "pair average" that
    defines eccentricity, so the model has no eccentricity of its own: it is the
    reference point that shrunk models drift towards.

    Parameters
    ----------
    fallback : {"global", "error"}, default="global"
        What to predict for an unseen entity. With ``"global"`` a pair with one
        unseen entity gets the other entity's mean, and a pair with both unseen
        gets the global training mean. With ``"error"`` any unseen user or item
        raises a ``ValueError``.

    Attributes
    ----------
    entity_means_ : EntityMeans
        Per-user and per-item means of the training ratings.
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

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import DyadicMeanRegressor
    >>> X = [[0, 0], [0, 1], [1, 0], [1, 1]]
    >>> y = [5.0, 3.0, 4.0, 1.0]
    >>> model = DyadicMeanRegressor().fit(X, y)
    >>> model.predict([[0, 0], [1, 1], [0, 9], [9, 9]])
    array([4.25, 2.25, 4.  , 3.25])
    """

    _parameter_constraints: dict = {"fallback": [StrOptions({"global", "error"})]}

    def __init__(self, fallback="global"):
        self.fallback = fallback

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Compute the per-user and per-item training means.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            Ratings (finite numbers).

        Returns
        -------
        self : DyadicMeanRegressor
            The fitted estimator.
        """
        self._fit_means(X, y)
        return self

    def predict(self, X):
        """Predict ``(user mean + item mean) / 2`` for each pair.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted rating of each pair.
        """
        users, items = self._check_predict(X)
        means = self.entity_means_
        um, im = means._pair_means(users, items)
        if self.fallback == "error":
            unseen_u, unseen_i = np.isnan(um), np.isnan(im)
            if unseen_u.any() or unseen_i.any():
                raise ValueError(
                    f"X holds {int(unseen_u.sum())} rating(s) of unseen users and "
                    f"{int(unseen_i.sum())} of unseen items, which have no training "
                    f"mean; use fallback='global' to predict them from the other "
                    f"entity's mean or the global mean."
                )
        um, im = _fill_unseen(um, im, means.global_mean)
        return (um + im) / 2


def _fill_unseen(um, im, global_mean):
    """User and item means with NaN filled: one NaN side takes the other's mean,
    two take the global mean."""
    both = np.isnan(um) & np.isnan(im)
    um, im = np.where(np.isnan(um), im, um), np.where(np.isnan(im), um, im)
    um[both] = im[both] = global_mean
    return um, im


#: The most memory one alternating step may take (its batched normal equations).
MAX_STEP_BYTES = 2 * 1024**3


def _check_components(k, n_users, n_items):
    """Refuse, before allocating, more factors than the data can identify or
    than one step's normal equations fit in memory."""
    if k > min(n_users, n_items):
        raise ValueError(
            f"n_components={k:,} is more than the number of users ({n_users:,}) or "
            f"items ({n_items:,}) seen in training: the ratings matrix has rank at "
            f"most {min(n_users, n_items):,}, so the extra factors are not "
            f"identified. Use n_components <= {min(n_users, n_items):,} (typically "
            f"5 to 50)."
        )
    # the step solves one (k + 1) x (k + 1) system per user (item), all at once,
    # from (k + 1)(k + 2) / 2 products per rating pair's counterpart
    step = 8 * (k + 1) * (k + 1) * max(n_users, n_items) * 2
    if step > MAX_STEP_BYTES:
        raise ValueError(
            f"n_components={k:,} needs about {step / 1024**3:,.1f} GiB per step for "
            f"{max(n_users, n_items):,} users or items (the limit is "
            f"{MAX_STEP_BYTES / 1024**3:.0f} GiB); use fewer components."
        )


class MatrixFactorizationRegressor(_DyadicRegressor):
    """Biased matrix factorization fitted by alternating least squares.

    The model is ``r_ui = mu + b_u + b_i + p_u . q_i`` with ``mu`` the global
    training mean, biases ``b_u, b_i`` and ``n_components``-dimensional factors
    ``p_u, q_i``. It minimizes the ridge-penalized squared error

    ``sum_(u,i) (r_ui - mu - b_u - b_i - p_u . q_i)**2
    + alpha * (sum_u (b_u**2 + |p_u|**2) + sum_i (b_i**2 + |q_i|**2))``

    by alternating exact minimizations: given the items, every user's
    ``(b_u, p_u)`` solves a ridge problem whose normal equations, sparse
    products of the user-item rating matrix with per-item arrays, are solved
    for all users in one batched ``numpy.linalg.solve``; then the same for the
    items. Each half-step can only lower the objective, which is recorded in
    ``loss_curve_``.

    Parameters
    ----------
    n_components : int, default=10
        Number of latent factors (0 fits the biases only).
    alpha : float, default=1.0
        Ridge penalty on biases and factors (finite, > 0).
    n_iter : int, default=20
        Maximum number of sweeps (a sweep updates the users, then the items).
    tol : float, default=1e-6
        Stop when a sweep lowers the objective by less than ``tol`` times its
        value (finite, >= 0). ``0`` runs all ``n_iter`` sweeps.
    init_scale : float, default=0.1
        Standard deviation of the random initial factors (finite, >= 0).
    clip : bool, default=True
        Clip predictions to the range of the training ratings.
    random_state : int, RandomState instance or None, default=0
        Seed of the initial factors (an int in ``[0, 2**32 - 1]``). The fit is
        deterministic given the seed; ``None`` draws fresh entropy.

    Attributes
    ----------
    entity_means_ : EntityMeans
        Per-user and per-item means of the training ratings.
    global_mean_ : float
        ``mu``, the mean training rating.
    user_bias_, item_bias_ : ndarray of shape (n_users,), (n_items,)
        Biases of the users and items seen in training, in the order of
        ``entity_means_.user_means.index`` and ``entity_means_.item_means.index``.
    user_factors_, item_factors_ : ndarray of shape (n_users, n_components), \
(n_items, n_components)
        Latent factors in the same order.
    loss_curve_ : list of float
        Objective after the initialization and after each sweep
        (non-increasing).
    n_iter_ : int
        Number of sweeps run.
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

    A user without training ratings has zero bias and factors, so its
    prediction falls back to ``mu + b_i``; an unseen item to ``mu + b_u``; a pair
    with both unseen to ``mu``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.dyadic import MatrixFactorizationRegressor
    >>> rng = np.random.default_rng(0)
    >>> users, items = np.divmod(np.arange(30 * 20), 20)
    >>> taste = rng.normal(size=(30, 2))[users] * rng.normal(size=(20, 2))[items]
    >>> y = 3 + taste.sum(axis=1) + rng.normal(scale=0.1, size=users.size)
    >>> X = np.column_stack([users, items])
    >>> model = MatrixFactorizationRegressor(n_components=2, alpha=0.1, random_state=0)
    >>> model.fit(X, y).predict(X[:3]).round(2)
    array([3.12, 3.28, 3.12])
    >>> y[:3].round(2)
    array([3.15, 3.38, 3.06])
    >>> bool(model.loss_curve_[-1] < model.loss_curve_[0])
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Whole(0, None, closed="left")],
        "alpha": [Number(0, None, closed="neither")],
        "n_iter": [Whole(1, None, closed="left")],
        "tol": [Number(0, None, closed="left")],
        "init_scale": [Number(0, None, closed="left")],
        "clip": BOOLEAN,
        "random_state": _SEEDS,
    }

    def __init__(
        self,
        n_components=10,
        *,
        alpha=1.0,
        n_iter=20,
        tol=1e-6,
        init_scale=0.1,
        clip=True,
        random_state=0,
    ):
        self.n_components = n_components
        self.alpha = alpha
        self.n_iter = n_iter
        self.tol = tol
        self.init_scale = init_scale
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit biases and factors by alternating least squares.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            Ratings (finite numbers).

        Returns
        -------
        self : MatrixFactorizationRegressor
            The fitted estimator.
        """
        rng = check_random_state(self.random_state)
        _, _, r = self._fit_means(X, y)
        means = self.entity_means_
        # compact codes 0..n-1 of the users and items seen in training
        ucodes, self._user_map = _compact(means._users.codes, means._user_count)
        icodes, self._item_map = _compact(means._items.codes, means._item_count)
        n_users, n_items = int(ucodes.max()) + 1, int(icodes.max()) + 1
        k, alpha = int(self.n_components), float(self.alpha)
        _check_components(k, n_users, n_items)
        mu = means.global_mean
        resid = r - mu

        # row 0: bias, rows 1..k: factors; one column per entity
        U = np.zeros((k + 1, n_users))
        V = np.zeros((k + 1, n_items))
        U[1:] = rng.normal(scale=self.init_scale, size=(k, n_users))
        V[1:] = rng.normal(scale=self.init_scale, size=(k, n_items))

        # incidence (count) and residual-sum matrices, users x items; a repeated
        # pair counts once per rating
        shape = (n_users, n_items)
        count = sp.csr_matrix((np.ones_like(resid), (ucodes, icodes)), shape=shape)
        total = sp.csr_matrix((resid, (ucodes, icodes)), shape=shape)
        by_user = _Side(count, total, resid)
        by_item = _Side(count.T.tocsr(), total.T.tocsr(), resid)

        loss = [_objective(U, V, ucodes, icodes, resid, alpha)]
        self.n_iter_ = 0
        for _ in range(self.n_iter):
            U, _ = by_user.ridge_step(V, alpha)
            V, fit_value = by_item.ridge_step(U, alpha)
            loss.append(fit_value + alpha * float(np.sum(U * U)))
            self.n_iter_ += 1
            if loss[-2] - loss[-1] <= self.tol * abs(loss[-2]):
                break

        self.global_mean_ = mu
        self.user_bias_, self.user_factors_ = U[0].copy(), np.ascontiguousarray(U[1:].T)
        self.item_bias_, self.item_factors_ = V[0].copy(), np.ascontiguousarray(V[1:].T)
        self.loss_curve_ = [float(v) for v in loss]
        return self

    def predict(self, X):
        """Predict ``mu + b_u + b_i + dot(p_u, q_i)`` for each pair.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Clipped to the training rating range when ``clip=True``.
        """
        users, items = self._check_predict(X)
        means = self.entity_means_
        uc, ic = means._codes(users, items)
        u_seen, i_seen = uc >= 0, ic >= 0
        uc = np.where(u_seen, self._user_map[np.maximum(uc, 0)], 0)
        ic = np.where(i_seen, self._item_map[np.maximum(ic, 0)], 0)
        pred = np.full(uc.shape[0], self.global_mean_)
        pred += np.where(u_seen, self.user_bias_[uc], 0.0)
        pred += np.where(i_seen, self.item_bias_[ic], 0.0)
        both = u_seen & i_seen
        pred[both] += np.einsum(
            "nk,nk->n", self.user_factors_[uc[both]], self.item_factors_[ic[both]]
        )
        if self.clip:
            np.clip(pred, means.rating_min, means.rating_max, out=pred)
        return pred


def _compact(codes, counts):
    """Codes renumbered ``0..n_seen-1``, and the map from old codes to new."""
    remap = np.cumsum(counts > 0) - 1
    return remap[codes], remap


def _objective(U, V, ucodes, icodes, resid, alpha):
    err = resid - U[0, ucodes] - V[0, icodes]
    err -= np.einsum("kn,kn->n", U[1:, ucodes], V[1:, icodes])
    return float(err @ err + alpha * (np.sum(U * U) + np.sum(V * V)))


class _Side:
    """The ratings seen from one side (users or items) for the ridge steps.

    ``count`` and ``total`` are sparse ``(n_self, n_other)`` matrices holding
    the number of ratings of each pair and the sum of their residuals
    ``r - mu``.
    """

    def __init__(self, count, total, resid):
        self.count, self.total = count, total
        self.sq_total = float(resid @ resid)
        # per entity of the other side: number of ratings and residual sum
        self.other_count = np.asarray(count.sum(axis=0)).ravel()
        self.other_total = np.asarray(total.sum(axis=0)).ravel()

    def ridge_step(self, other, alpha):
        """Exact ridge update of this side given the other side.

        ``other`` holds the other side's ``(bias, factors)`` in columns. The
        features of a rating are ``z = (1, q)`` of its counterpart and its
        target ``t = r - mu - b`` (the counterpart's bias ``b``), so the normal
        equations of entity ``s`` are
        ``(sum_o n_so z_o z_o^T + alpha I) x_s = sum_o (R_so - n_so b_o) z_o``
        (``n_so`` ratings of the pair with residual sum ``R_so``): two sparse
        products with per-entity arrays, then one batched solve for all
        entities.

        Returns the new ``(bias, factors)`` in columns and the minimized value
        ``sum t**2 - c . x`` (squared error plus this side's penalty).
        """
        k1 = other.shape[0]
        z = other.T.copy()  # (n_other, k + 1)
        bias = z[:, 0].copy()
        z[:, 0] = 1.0
        rows, cols = np.triu_indices(k1)
        upper = self.count @ (z[:, rows] * z[:, cols])
        gram = np.empty((upper.shape[0], k1, k1))
        gram[:, rows, cols] = upper
        gram[:, cols, rows] = upper
        gram += alpha * np.eye(k1)
        rhs = self.total @ z - self.count @ (bias[:, None] * z)
        x = np.linalg.solve(gram, rhs[:, :, None])[:, :, 0]
        sq_target = (
            self.sq_total
            - 2 * float(bias @ self.other_total)
            + float((bias * bias) @ self.other_count)
        )
        return x.T.copy(), sq_target - float(np.sum(rhs * x))
