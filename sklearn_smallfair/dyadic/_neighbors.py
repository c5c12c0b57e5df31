"""A k-nearest-neighbour regressor on the user-item rating matrix.

Item-based (or user-based) collaborative filtering with mean-centred ratings:
the prediction for user ``u`` and item ``i`` is the item's mean plus the
similarity-weighted mean deviation of the user's ratings of the ``k`` items most
similar to ``i``. The similarities (cosine or Pearson over the users who rated
both items, shrunk towards 0 when few users did) come from sparse products of
the rating matrix; the neighbour search of a batch of predictions is one sort.
"""

import numpy as np
import scipy.sparse as sp

from .._compat import _fit_context
from .._params import BOOLEAN, Number, StrOptions, Whole
from ._estimators import _compact, _DyadicRegressor

__all__ = ["NeighborhoodRegressor"]

# candidate (query, neighbour) rows handled at once by predict
_CHUNK_ROWS = 1 << 22


def _pair_matrix(hold, target, r, shape):
    """CSR ``(n_holders, n_targets)`` of the mean rating of every rated pair
    (repeated ratings of a pair averaged), with sorted indices."""
    code = hold.astype(np.int64) * shape[1] + target
    pairs, inverse = np.unique(code, return_inverse=True)
    total = np.bincount(inverse, weights=r)
    count = np.bincount(inverse)
    rows, cols = np.divmod(pairs, shape[1])
    return sp.csr_matrix((total / count, (rows, cols)), shape=shape)


def _similarities(M, similarity, shrinkage, min_support):
    """Dense ``(n_targets, n_targets)`` similarities of the columns of ``M``.

    Every statistic is a sum over the holders who rated both columns ``a`` and
    ``b`` (``B`` the 0/1 pattern of ``M``): their number ``n = (B^T B)_ab``, the
    cross products ``(M^T M)_ab``, the sums of squares ``((M*M)^T B)_ab`` and
    ``(B^T (M*M))_ab`` and, for Pearson, the sums ``(M^T B)_ab`` and
    ``(B^T M)_ab``. Pairs with fewer than ``min_support`` common holders, or
    with a zero denominator, get similarity 0; the others are multiplied by
    ``n / (n + shrinkage)``.
    """
    B = M.copy()
    B.data = np.ones_like(B.data)
    M2 = M.multiply(M).tocsr()
    Bt, Mt = B.T.tocsr(), M.T.tocsr()
    n = (Bt @ B).toarray()
    cross = (Mt @ M).toarray()
    sq_a = (M2.T.tocsr() @ B).toarray()
    sq_b = sq_a.T  # (B^T (M*M))_ab = ((M*M)^T B)_ba
    if similarity == "pearson":
        with np.errstate(divide="ignore", invalid="ignore"):
            s_a = (Mt @ B).toarray()
            s_b = s_a.T
            cross = cross - s_a * s_b / n
            sq_a = sq_a - s_a * s_a / n
            sq_b = sq_b - s_b * s_b / n
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = cross / np.sqrt(sq_a * sq_b)
    # a denominator that is 0 up to rounding (constant ratings) gives no similarity
    tiny = np.sqrt(np.abs(sq_a * sq_b)) <= 1e-12 * np.maximum(1.0, np.abs(cross))
    bad = (n < min_support) | tiny | ~np.isfinite(sim)
    sim[bad] = 0.0
    np.clip(sim, -1.0, 1.0, out=sim)
    if shrinkage > 0:
        sim *= n / (n + shrinkage)
    np.fill_diagonal(sim, 0.0)
    return sim


class NeighborhoodRegressor(_DyadicRegressor):
    """k-nearest-neighbour collaborative filtering on the rating matrix.

    With ``kind="item"`` the prediction for user ``u`` and item ``i`` is

    ``r_hat = m_i + sum_j s_ij (r_uj - m_j) / sum_j s_ij``

    over the items ``j`` that ``u`` rated among the ``n_neighbors`` most similar
    to ``i`` (ties broken by item order), keeping only those with ``s_ij > 0``;
    ``m`` are the training means of the items. ``kind="user"`` exchanges the
    roles of users and items. Without a neighbour the prediction is ``m_i``.

    Parameters
    ----------
    n_neighbors : int, default=40
        Number of most similar rated entities considered (``k``).
    kind : {"item", "user"}, default="item"
        Neighbours among the items the user rated (item-item), or among the
        users who rated the item (user-user).
    similarity : {"pearson", "cosine"}, default="pearson"
        Pearson correlation of the two entities' ratings by their common
        raters (centred on their means over those raters), or the cosine of
        the raw ratings over the common raters.
    shrinkage : float, default=100.0
        Similarities are multiplied by ``n / (n + shrinkage)``, ``n`` the number
        of common raters, so that a similarity computed from a handful of
        ratings counts less (finite, >= 0; 0 turns it off).
    min_support : int, default=2
        Entities with fewer common raters than this have similarity 0.
    clip : bool, default=True
        Clip predictions to the range of the training ratings.

    Attributes
    ----------
    entity_means_ : EntityMeans
        Per-user and per-item means of the training ratings.
    similarities_ : ndarray of shape (n_entities, n_entities)
        Shrunk similarities between the items (``kind="item"``) or the users
        seen in training, in the order of ``entity_means_.item_means.index``
        (or ``user_means.index``); 0 on the diagonal.
    n_features_in_ : int
        Always 2 (user id, item id).
    feature_names_in_ : ndarray of shape (2,)
        Column names of ``X`` when it was a DataFrame with string column names.

    See Also
    --------
    MatrixFactorizationRegressor : Biased matrix factorization (ALS).
    DyadicMeanRegressor : The pair's average.

    Notes
    -----
    ``X`` is an array-like or DataFrame of shape ``(n_samples, 2)``: column 0
    holds the user id and column 1 the item id of each rating. Repeated
    ratings of a pair are averaged in the rating matrix.

    The similarity matrix is dense: ``8 n^2`` bytes for ``n`` items (or users),
    22 MB for MovieLens-100k's 1,682 items; computing it holds about six such
    arrays at once. An unseen item (user, for
    ``kind="user"``) is predicted by the user's (item's) mean, a pair with
    both unseen by the global mean. With ``kind="item"`` a user rating an item
    in training is not its own neighbour: training predictions are not
    interpolations of the rating itself.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.dyadic import NeighborhoodRegressor
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [3, 0]])
    >>> y = np.array([5.0, 4.0, 2.0, 1.0, 4.0, 4.0, 1.0])
    >>> model = NeighborhoodRegressor(similarity="cosine", shrinkage=0).fit(X, y)
    >>> model.similarities_.round(3)
    array([[0.   , 0.986],
           [0.986, 0.   ]])

    User 3 rated item 0 two points below its mean, so item 1 (mean 3) is
    predicted two points below its own mean:

    >>> model.predict([[3, 1]])
    array([1.])
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Whole(1, None, closed="left")],
        "kind": [StrOptions({"item", "user"})],
        "similarity": [StrOptions({"pearson", "cosine"})],
        "shrinkage": [Number(0, None, closed="left")],
        "min_support": [Whole(1, None, closed="left")],
        "clip": BOOLEAN,
    }

    def __init__(
        self,
        n_neighbors=40,
        *,
        kind="item",
        similarity="pearson",
        shrinkage=100.0,
        min_support=2,
        clip=True,
    ):
        self.n_neighbors = n_neighbors
        self.kind = kind
        self.similarity = similarity
        self.shrinkage = shrinkage
        self.min_support = min_support
        self.clip = clip

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Build the rating matrix and the similarities.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, 2)
            Column 0 the user id, column 1 the item id.
        y : array-like of shape (n_samples,)
            Ratings (finite numbers).

        Returns
        -------
        self : NeighborhoodRegressor
            The fitted estimator.
        """
        _, _, r = self._fit_means(X, y)
        means = self.entity_means_
        ucodes, self._user_map = _compact(means._users.codes, means._user_count)
        icodes, self._item_map = _compact(means._items.codes, means._item_count)
        n_users, n_items = int(ucodes.max()) + 1, int(icodes.max()) + 1
        seen_u, seen_i = means._user_count > 0, means._item_count > 0
        self._user_mean = means._user_sum[seen_u] / means._user_count[seen_u]
        self._item_mean = means._item_sum[seen_i] / means._item_count[seen_i]
        if self.kind == "item":
            hold, target, shape = ucodes, icodes, (n_users, n_items)
        else:
            hold, target, shape = icodes, ucodes, (n_items, n_users)
        self._matrix = _pair_matrix(hold, target, r, shape)
        self.similarities_ = _similarities(
            self._matrix,
            self.similarity,
            float(self.shrinkage),
            int(self.min_support),
        )
        return self

    def predict(self, X):
        """Predict each pair from its ``n_neighbors`` most similar rated entities.

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
        um = np.where(u_seen, self._user_mean[uc], np.nan)
        im = np.where(i_seen, self._item_mean[ic], np.nan)
        if self.kind == "item":
            hold, target, base, other = uc, ic, im, um
            target_mean = self._item_mean
        else:
            hold, target, base, other = ic, uc, um, im
            target_mean = self._user_mean
        pred = np.where(np.isnan(base), other, base)
        pred[np.isnan(pred)] = means.global_mean
        both = np.flatnonzero(u_seen & i_seen)
        if both.size:
            pred[both] += self._deviation(hold[both], target[both], target_mean)
        if self.clip:
            np.clip(pred, means.rating_min, means.rating_max, out=pred)
        return pred

    def _deviation(self, hold, target, target_mean):
        """Weighted mean deviation of the ``k`` nearest rated neighbours, for
        seen (holder, target) codes, in chunks of bounded size."""
        M, sim, k = self._matrix, self.similarities_, int(self.n_neighbors)
        counts = np.diff(M.indptr)[hold]
        out = np.zeros(hold.shape[0])
        ends = np.cumsum(counts)
        start = 0
        while start < hold.shape[0]:
            # queries [start, stop) with at most _CHUNK_ROWS candidates (at least one)
            base = ends[start - 1] if start else 0
            stop = int(np.searchsorted(ends, base + _CHUNK_ROWS, side="right"))
            stop = max(stop, start + 1)
            out[start:stop] = _chunk_deviation(
                M, sim, target_mean, hold[start:stop], target[start:stop], k
            )
            start = stop
        return out


def _chunk_deviation(M, sim, target_mean, hold, target, k):
    counts = np.diff(M.indptr)[hold]
    total = int(counts.sum())
    n = hold.shape[0]
    if total == 0:
        return np.zeros(n)
    query = np.repeat(np.arange(n), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.repeat(M.indptr[hold], counts) + (np.arange(total) - first)
    cand = M.indices[pos]
    dev = M.data[pos] - target_mean[cand]
    s = sim[target[query], cand]
    s[cand == target[query]] = -np.inf  # an entity is not its own neighbour
    # rank the candidates of each query by decreasing similarity (stable: ties
    # keep the order of the entity codes)
    order = np.lexsort((-s, query))
    rank = np.arange(total) - first  # `first` is per query, same after the sort
    keep = order[(rank < k) & (s[order] > 0)]
    num = np.bincount(query[keep], weights=s[keep] * dev[keep], minlength=n)
    den = np.bincount(query[keep], weights=s[keep], minlength=n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, 0.0)
