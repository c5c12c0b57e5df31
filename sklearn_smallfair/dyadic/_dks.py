"""The D_KS non-uniformity of a dyadic data set."""

import numpy as np
import pandas as pd

from .._params import BOOLEAN, validate_params
from . import _eccentricity
from ._curve_areas import _groups
from ._means import _check_dyads, _Codes

__all__ = ["dks_nonuniformity"]

# D_KS uses per-entity histograms over the distinct ratings up to this many cells
# (or 4 per rating), and a sort of the ratings within entity beyond
_KS_HISTOGRAM_CELLS = 1 << 20


def _distinct_sorted(r):
    """The distinct values of ``r``, sorted: hashed block by block (a block's table
    is small), the blocks' distinct values merged."""
    block = _eccentricity._BLOCK
    parts = [pd.unique(r[s : s + block]) for s in range(0, r.shape[0], block)]
    return np.unique(np.concatenate(parts))


def _level_finder(values, n):
    """A function giving the rank among the sorted distinct ``values`` of each
    rating of a block: a table lookup when the values are integers in a short
    range (stars), else a binary search."""
    lo, hi = values[0], values[-1]
    if np.array_equal(values, np.round(values)) and hi - lo < max(4 * n, 1 << 20):
        lut = np.zeros(int(hi - lo) + 1, dtype=np.intp)
        lut[(values - lo).astype(np.intp)] = np.arange(values.shape[0])
        return lambda block: lut[(block - lo).astype(np.intp)]
    return lambda block: np.searchsorted(values, block)


def _ks_histogram(key, size, cdf):
    """KS statistic of each entity with ratings from its histogram over the ``L``
    distinct values; ``key`` is ``code * L + level`` of each rating."""
    L = cdf.shape[0]
    hist = np.bincount(key, minlength=size * L).reshape(size, L)
    cum = np.cumsum(hist, axis=1, dtype=np.float64)
    del hist
    count = cum[:, -1].copy()
    seen = count > 0
    if not seen.all():
        cum, count = cum[seen], count[seen]
    cum /= count[:, None]  # the empirical CDF at each distinct value
    below = np.subtract(cdf[1:], cum[:, :-1])  # F(v) - F_n(v-) beyond the first
    below = np.maximum(below.max(axis=1, initial=-np.inf), cdf[0])
    cum -= cdf
    return np.maximum(cum.max(axis=1), below)


def _ks_by_entity(codes, size, r, level_of, cdf, key):
    """One-sample KS statistic against ``cdf`` of each entity's ratings.

    ``codes`` are entity codes in ``0..size-1``, ``level_of`` gives the rank of
    ratings among the ``L`` distinct ones (see :func:`_level_finder`) and ``cdf``
    the uniform CDF at those; ``key`` is a buffer of ``len(r)`` integers. The
    empirical CDF jumps only at the distinct values, so the supremum is at a
    jump: ``max(F_n(v) - F(v), F(v) - F_n(v-))``. With few
    distinct values the per-entity histogram over them gives it (``key`` filled
    with ``code * L + level`` block by block); otherwise the ratings are sorted
    within entity (one integer sort) and each row's rank gives it.
    """
    block = _eccentricity._BLOCK
    L, n = cdf.shape[0], r.shape[0]
    if size * L <= max(4 * n, _KS_HISTOGRAM_CELLS):
        for start in range(0, n, block):
            part = key[start : start + block]
            np.multiply(codes[start : start + block], L, out=part)
            part += level_of(r[start : start + block])
        return _ks_histogram(key, size, cdf)
    np.multiply(codes, L, out=key)
    key += level_of(r)
    key.sort()
    entity, rank = np.divmod(key, L)
    starts = _groups(entity)
    count = np.diff(np.append(starts, n))
    k = np.arange(n) - np.repeat(starts, count)  # position within the entity
    m = np.repeat(count, count).astype(np.float64)
    f = cdf[rank]
    stat = np.maximum((k + 1) / m - f, f - k / m)
    return np.maximum.reduceat(stat, starts)


@validate_params(
    {
        "y": ["array-like"],
        "users": ["array-like"],
        "items": ["array-like"],
        "return_per_entity": BOOLEAN,
    }
)
def dks_nonuniformity(y, *, users, items, return_per_entity=False):
    """Non-uniformity ``D_KS`` of dyadic ratings.

    The mean, over all users and all items, of the one-sample
    Kolmogorov-Smirnov statistic of the entity's ratings against the uniform
    distribution on ``[min y, max y]`` of the whole data. 0 would mean every
    entity's ratings are spread evenly over the range; values near 1 mean each
    entity's ratings sit in a narrow part of it, where models that predict from
    entity averages do well on typical ratings and badly on eccentric ones.

    Parameters
    ----------
    y : array-like of shape (n_ratings,)
        The ratings.
    users, items : array-like of shape (n_ratings,)
        The user and the item of each rating (any hashable ids).
    return_per_entity : bool, default=False
        Also return the statistic of every user and every item.

    Returns
    -------
    dks : float
        Mean of the per-entity statistics over all users and items together.
    user_stats, item_stats : pandas.Series
        Only with ``return_per_entity=True``: the statistic per user and per
        item, indexed by id.

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import dks_nonuniformity
    >>> y = [1, 5, 1, 5, 3, 3]
    >>> users = [0, 0, 1, 1, 2, 2]
    >>> items = [0, 1, 0, 1, 0, 1]
    >>> round(dks_nonuniformity(y, users=users, items=items), 4)
    0.5667
    """
    r, u, i = _check_dyads(y, users, items, "y")
    lo, hi = float(r.min()), float(r.max())
    if hi == lo:
        raise ValueError(
            f"the ratings are all equal ({lo:g}), so the uniform distribution over "
            f"their range is undefined; D_KS needs at least two distinct values."
        )
    values = _distinct_sorted(r)
    cdf = (values - lo) / (hi - lo)
    key = np.empty(r.shape[0], dtype=np.intp)  # reused for users and items
    level_of = _level_finder(values, r.shape[0])
    stats = []
    for ids in (u, i):
        c = _Codes(ids)
        stats.append((c, _ks_by_entity(c.codes, c.size, r, level_of, cdf, key)))
    del key
    total = sum(float(s.sum()) for _, s in stats)
    dks = total / sum(s.shape[0] for _, s in stats)
    if not return_per_entity:
        return dks
    out = [dks]
    for (c, s), name in zip(stats, ("user", "item")):
        seen = np.bincount(c.codes, minlength=c.size) > 0
        out.append(pd.Series(s, index=pd.Index(c.labels(seen), name=name), name="ks"))
    return tuple(out)
