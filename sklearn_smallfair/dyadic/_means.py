"""Per-entity mean ratings of dyadic data, and the shared checks of dyadic data.

Entity ids (users, items) are any hashable labels. Non-negative integer ids that
are not much larger than the number of ratings are used directly as positions in
dense arrays (the common case of MovieLens-style ids); other ids are encoded with
a hash table. Either way an id maps to one code, and every per-entity quantity is
a ``bincount`` over the codes.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_consistent_length

from .._params import validate_params
from .._validation import _as_1d, _check_no_missing

__all__ = ["EntityMeans", "entity_means"]

# integer ids up to this bound (or 4x the number of ratings) are used as positions
_DENSE_IDS = 1 << 22
# initial size of the hash table coding other ids (it grows with the distinct ids)
_HASH_HINT = 1 << 10


def _check_ratings(values, name):
    """A finite 1-D float array."""
    arr = _as_1d(values, name)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        if arr.dtype.kind == "O":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"{name} must hold numbers (ratings), got non-numeric values."
                ) from None
        else:
            raise TypeError(f"{name} must hold numbers (ratings), got {arr.dtype}.")
    arr = np.asarray(arr, dtype=np.float64)
    _check_no_missing(arr, name)
    return arr


def _check_ids(values, name, n):
    """A 1-D array of entity ids without missing values, of length ``n``."""
    arr = _as_1d(values, name)
    _check_no_missing(arr, name)
    if arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but there are {n} ratings; pass "
            f"one {name[:-1] if name.endswith('s') else name} id per rating."
        )
    if arr.dtype.kind == "f":
        if np.array_equal(arr, np.round(arr)):
            arr = arr.astype(np.int64)
    return arr


def _check_dyads(ratings, users, items, ratings_name="y", prefix=""):
    """Checked ``(ratings, users, items)``, all of the same length."""
    r = _check_ratings(ratings, ratings_name)
    if r.shape[0] == 0:
        raise ValueError(f"{ratings_name} is empty; pass at least one rating.")
    u = _check_ids(users, f"{prefix}users", r.shape[0])
    i = _check_ids(items, f"{prefix}items", r.shape[0])
    check_consistent_length(r, u, i)
    return r, u, i


def _dense_size(ids):
    """``max(ids) + 1`` when the ids are used as positions, else None: non-negative
    integers below ``max(_DENSE_IDS, 4 * len(ids))``."""
    if ids.dtype.kind in "iu" and ids.shape[0]:
        lo, hi = int(ids.min()), int(ids.max())
        if lo >= 0 and hi < max(_DENSE_IDS, 4 * ids.shape[0]):
            return hi + 1
    return None


def _shared_codes(train_ids, ids):
    """``(coding, codes)``: the :class:`_Codes` of the training ids and the codes
    of ``ids`` under it, from one coding of both.

    Ids used as positions need no codes (``codes`` is None: they index the
    per-entity tables themselves). Other ids of one kind in both (strings,
    large or negative integers, objects) are hashed once, training and
    evaluated ids together, so an evaluated id without training ratings gets a
    code of its own with a count of 0. Ids of different kinds in the two (e.g.
    integers and strings) are not mixed in one array; ``codes`` is then None
    and the ids are looked up by :meth:`_Codes.encode`.
    """
    if _dense_size(train_ids) is not None or train_ids.dtype.kind != ids.dtype.kind:
        return _Codes(train_ids), None
    n = train_ids.shape[0]
    codes, uniques = _factorize(np.concatenate([train_ids, ids]))
    return _Codes(None, (codes[:n], uniques)), codes[n:].copy()


def _factorize(ids):
    """``pandas.factorize`` with a hash table grown to the number of distinct ids
    (not sized to the number of rows up front: far less memory, and faster)."""
    return pd.factorize(ids, size_hint=_HASH_HINT)


def _id_family(values):
    """``"numbers"``, ``"text"`` or ``None`` (a mix, or other objects) for ids."""
    kind = values.dtype.kind
    if kind == "O":
        kind = {"string": "U", "integer": "i", "floating": "f"}.get(
            pd.api.types.infer_dtype(values, skipna=False), "O"
        )
    return "numbers" if kind in "biuf" else "text" if kind in "US" else None


def _check_same_kind(before, ids):
    """Refuse ids of another type than the training ids (numbers against text):
    none of them could match, and every pair would be read as unseen."""
    now = _id_family(ids)
    if before is None or now is None or before == now:
        return
    raise ValueError(
        f"the ids to evaluate are {now} but the model was fitted on ids that are "
        f"{before}: no id could match one seen in training, so every pair would be "
        f"read as unseen. Convert the ids to the training type (e.g. "
        f"X.astype(int) or X.astype(str)) before predicting."
    )


class _Codes:
    """Dense integer codes of entity ids seen in training.

    ``encode(ids)`` maps ids to ``0..size-1``, and ids not seen to ``-1``. Made
    from ``factorized`` (``(codes, uniques)`` of the training and evaluated ids
    together, see :func:`_shared_codes`), the codes also cover evaluated ids
    without training ratings, whose count is 0.
    """

    def __init__(self, ids, factorized=None):
        self.dense = False
        self.family = _id_family(ids if ids is not None else factorized[1])
        if factorized is None:
            size = _dense_size(ids)
            if size is not None:
                self.dense = True
                self.size = size
                self.codes = ids.astype(np.intp, copy=False)
                return
            factorized = _factorize(ids)
        codes, uniques = factorized
        self.index = pd.Index(uniques)
        self.size = len(uniques)
        self.codes = codes.astype(np.intp, copy=False)

    def encode(self, ids, seen):
        """Codes of ``ids``; ``-1`` for ids without a training rating."""
        _check_same_kind(self.family, ids)
        if self.dense:
            if ids.dtype.kind not in "iu":
                if ids.dtype.kind == "O":  # e.g. mixed ids
                    return self._lookup_objects(ids, seen)
                return np.full(ids.shape[0], -1, dtype=np.intp)
            codes = ids.astype(np.intp, copy=True)
            out = (codes < 0) | (codes >= self.size)
            codes[out] = 0
            out |= ~seen[codes]
            codes[out] = -1
            return codes
        try:
            codes = self.index.get_indexer(ids)
        except TypeError:  # unorderable or unhashable mixes
            codes = self.index.get_indexer(pd.Index(ids, dtype=object))
        return codes.astype(np.intp, copy=False)

    def gather(self, table, ids, seen):
        """``table`` at the codes of ``ids``; its last entry for unseen ids.

        Dense integer ids within the range index ``table`` directly (no codes are
        made); ``table`` must then hold NaN, not a value, for unseen codes.
        """
        if self.dense and ids.dtype.kind in "iu" and ids.shape[0]:
            if int(ids.min()) >= 0 and int(ids.max()) < self.size:
                return table[ids]
        return table[self.encode(ids, seen)]

    def _lookup_objects(self, ids, seen):
        """Codes of mixed-type ids: one hash lookup among the seen integer ids."""
        known = self.labels(seen)
        pos = pd.Index(known).get_indexer(pd.Index(ids, dtype=object))
        return np.where(pos >= 0, known[np.maximum(pos, 0)], -1).astype(np.intp)

    def labels(self, seen):
        """The ids seen in training, in code order."""
        if self.dense:
            return np.flatnonzero(seen)
        return self.index.to_numpy()


@dataclass(frozen=True, eq=False)
class EntityMeans:
    """Mean training rating of every user and every item.

    Built by :func:`entity_means` (or by a fitted dyadic estimator, which stores
    one as ``entity_means_``); used by :func:`eccentricity` and
    :func:`eauc_score` as the training means of the published protocol.

    Parameters
    ----------
    global_mean : float
        Mean of all training ratings.
    rating_min, rating_max : float
        Range of the training ratings.
    n_ratings : int
        Number of training ratings.
    _users, _items, _user_sum, _user_count, _item_sum, _item_count : object
        The per-entity tables, built by :func:`entity_means` (not to be passed
        by hand).

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import entity_means
    >>> means = entity_means([5, 3, 4, 1], users=[0, 0, 1, 1],
    ...                      items=["a", "b", "a", "b"])
    >>> means
    EntityMeans(n_users=2, n_items=2, n_ratings=4, global_mean=3.25)
    >>> means.rating_min, means.rating_max
    (1.0, 5.0)
    """

    global_mean: float
    rating_min: float
    rating_max: float
    n_ratings: int
    _users: _Codes = field(repr=False)
    _items: _Codes = field(repr=False)
    _user_sum: np.ndarray = field(repr=False)
    _user_count: np.ndarray = field(repr=False)
    _item_sum: np.ndarray = field(repr=False)
    _item_count: np.ndarray = field(repr=False)

    def __repr__(self):
        return (
            f"EntityMeans(n_users={self.n_users}, n_items={self.n_items}, "
            f"n_ratings={self.n_ratings}, global_mean={self.global_mean:.4g})"
        )

    @property
    def n_users(self):
        """Number of users with at least one training rating."""
        return int(np.count_nonzero(self._user_count))

    @property
    def n_items(self):
        """Number of items with at least one training rating."""
        return int(np.count_nonzero(self._item_count))

    def user_mean(self, users):
        """Training mean of each user; NaN for users without training ratings.

        Parameters
        ----------
        users : array-like of shape (n,)
            User ids.

        Returns
        -------
        means : ndarray of shape (n,)
            The mean training rating of each user.
        """
        arr = _check_ids(users, "users", len(users))
        return self._lookup(self._users, self._user_sum, self._user_count, arr)

    def item_mean(self, items):
        """Training mean of each item; NaN for items without training ratings.

        Parameters
        ----------
        items : array-like of shape (n,)
            Item ids.

        Returns
        -------
        means : ndarray of shape (n,)
            The mean training rating of each item.
        """
        arr = _check_ids(items, "items", len(items))
        return self._lookup(self._items, self._item_sum, self._item_count, arr)

    @staticmethod
    def _lookup(codes_of, sums, counts, ids):
        """Mean of each id: NaN for unseen ids (0 / 0 for dense unseen codes)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.append(sums / counts, np.nan)  # code -1 picks the NaN
        return codes_of.gather(means, ids, counts > 0)

    def _pair_means(self, users, items):
        """User and item means of checked id arrays (NaN when unseen)."""
        return (
            self._lookup(self._users, self._user_sum, self._user_count, users),
            self._lookup(self._items, self._item_sum, self._item_count, items),
        )

    def _tables(self, users, items, user_codes=None, item_codes=None):
        """``(user_table, user_index, item_table, item_index)``: the user mean
        of row ``k`` is ``user_table[user_index[k]]``, NaN when the user has no
        training rating (the same for items).

        Each table holds the mean per code and a last NaN entry (code -1); it
        is a new array, so the caller may fill its NaN entries. Ids used as
        positions index their table directly (padded with NaN up to the largest
        evaluated id); ``user_codes`` / ``item_codes``, when given, are the
        codes of the ids already (see :func:`_shared_codes`); other ids are
        encoded.
        """
        return (
            *_table(self._users, self._user_sum, self._user_count, users, user_codes),
            *_table(self._items, self._item_sum, self._item_count, items, item_codes),
        )

    def _codes(self, users, items):
        """Codes of checked id arrays (``-1`` when unseen)."""
        return (
            self._users.encode(users, self._user_count > 0),
            self._items.encode(items, self._item_count > 0),
        )

    @property
    def user_means(self):
        """Mean rating per user as a :class:`pandas.Series` indexed by user id."""
        return self._series(self._users, self._user_sum, self._user_count, "user")

    @property
    def item_means(self):
        """Mean rating per item as a :class:`pandas.Series` indexed by item id."""
        return self._series(self._items, self._item_sum, self._item_count, "item")

    @staticmethod
    def _series(codes_of, sums, counts, name):
        seen = counts > 0
        ids = codes_of.labels(seen)
        values = sums[seen] / counts[seen] if codes_of.dense else sums / counts
        return pd.Series(values, index=pd.Index(ids, name=name), name="mean")


def _table(codes_of, sums, counts, ids, codes):
    """One entity's part of :meth:`EntityMeans._tables`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        table = np.append(sums / counts, np.nan)  # code -1 picks the NaN
    if codes is not None:
        return table, codes
    if codes_of.dense and ids.dtype.kind in "iu" and ids.shape[0]:
        lo, hi = int(ids.min()), int(ids.max())
        if lo >= 0 and hi < codes_of.size:
            return table, ids
        if lo >= 0 and hi < max(_DENSE_IDS, 4 * ids.shape[0]):
            pad = np.full(hi + 2 - codes_of.size, np.nan)
            return np.concatenate([table[:-1], pad]), ids
    return table, codes_of.encode(ids, counts > 0)


@validate_params(
    {"ratings": ["array-like"], "users": ["array-like"], "items": ["array-like"]}
)
def entity_means(ratings, *, users, items):
    """Mean rating of every user and every item.

    Parameters
    ----------
    ratings : array-like of shape (n_ratings,)
        Training ratings (finite numbers).
    users, items : array-like of shape (n_ratings,)
        The user and the item of each rating (any hashable ids).

    Returns
    -------
    EntityMeans
        Per-user and per-item means with ``user_mean(ids)`` and
        ``item_mean(ids)`` lookups (NaN for unseen ids).

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import entity_means
    >>> means = entity_means([5, 3, 4, 1], users=[0, 0, 1, 1],
    ...                      items=["a", "b", "a", "b"])
    >>> means.user_mean([0, 1, 7])
    array([4. , 2.5, nan])
    >>> means.item_means
    item
    a    4.5
    b    2.0
    Name: mean, dtype: float64
    """
    r, u, i = _check_dyads(ratings, users, items, "ratings")
    return _entity_means(r, u, i)


def _entity_means(r, u, i):
    """:func:`entity_means` on checked arrays."""
    return _means_of_codes(r, _Codes(u), _Codes(i))


def _means_of_codes(r, users, items):
    """The :class:`EntityMeans` of ratings ``r`` whose users and items have the
    :class:`_Codes` ``users`` and ``items``."""
    return EntityMeans(
        global_mean=float(r.mean()),
        rating_min=float(r.min()),
        rating_max=float(r.max()),
        n_ratings=int(r.shape[0]),
        _users=users,
        _items=items,
        _user_sum=np.bincount(users.codes, weights=r, minlength=users.size),
        _user_count=np.bincount(users.codes, minlength=users.size),
        _item_sum=np.bincount(items.codes, weights=r, minlength=items.size),
        _item_count=np.bincount(items.codes, minlength=items.size),
    )


def _ids_from_X(X, names=("users", "items")):
    """``(users, items)`` from the dyadic layout: column 0 users, column 1 items.

    ``names`` name the two columns in error messages. DataFrame columns keep
    their own dtypes (e.g. integer users and string items).
    """
    if isinstance(X, pd.DataFrame):
        if X.shape[1] != 2:
            raise ValueError(
                f"X must have exactly 2 columns (user id, item id), got {X.shape[1]}."
            )
        columns = [X.iloc[:, k].to_numpy() for k in range(2)]
    else:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(
                f"X must have shape (n_samples, 2): column 0 the user id and "
                f"column 1 the item id of each rating; got shape {arr.shape}."
            )
        columns = [arr[:, 0], arr[:, 1]]
    n = columns[0].shape[0]
    return tuple(_check_ids(c, name, n) for c, name in zip(columns, names))
