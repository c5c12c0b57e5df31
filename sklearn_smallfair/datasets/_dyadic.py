"""Dyadic regression data: a synthetic (user, item) -> rating generator with a
controllable non-uniformity, and a reader of local MovieLens rating files.

Both return ``(X, y)`` with ``X`` an int64 array of shape ``(n_ratings, 2)``
(column 0 the user id, column 1 the item id) and ``y`` the float64 ratings, or a
DataFrame with the columns ``user``, ``item``, ``rating`` (and ``timestamp`` for
MovieLens).
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr
from sklearn.utils import check_random_state

from .._params import BOOLEAN, Number, Whole, validate_params

__all__ = ["load_movielens", "make_dyadic_regression"]

#: ``random_state`` of the generators: a seed that
#: :func:`sklearn.utils.check_random_state` takes (None, an int in
#: ``[0, 2**32 - 1]``, a RandomState) or a Generator, used as is; bools refused.
SEEDS = [None, Whole(0, 2**32 - 1), np.random.RandomState, np.random.Generator]

# below this number of (user, item) pairs, or when more than a quarter of them are
# rated, pairs are sampled exactly from the enumeration of all pairs
_ENUMERATE_PAIRS = 1 << 23
_MAX_ROUNDS = 200


# -------------------------------------------------------------------------------------
# data checks
# -------------------------------------------------------------------------------------
def _check_range(rating_range, discrete):
    try:
        lo, hi = rating_range
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(
            f"rating_range must be a pair of numbers (low, high), got {rating_range!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"rating_range must be finite, got {rating_range!r}.")
    if hi <= lo:
        raise ValueError(
            f"rating_range must have high > low, got low={lo:g}, high={hi:g}."
        )
    if discrete and (lo != round(lo) or hi != round(hi)):
        raise ValueError(
            "With discrete=True the ratings are the integers of rating_range, so "
            f"both ends must be integers; got {rating_range!r}."
        )
    return lo, hi


def _generator(random_state):
    """A numpy Generator from anything ``check_random_state`` accepts (or a
    Generator, used as is)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(0, 2**31 - 1, size=4, dtype=np.int64))


# -------------------------------------------------------------------------------------
# Zipf-like popularity: density proportional to x**-a on [1, n + 1]; entity of rank
# k (0-based) gets the mass of [k + 1, k + 2]
# -------------------------------------------------------------------------------------
def _zipf_cdf(x, n, a):
    c = 1.0 - a
    log_top = np.log(n + 1.0)
    if abs(c) < 1e-12:
        return np.log(x) / log_top
    return np.expm1(c * np.log(x)) / np.expm1(c * log_top)


def _zipf_ranks(u, n, a):
    """Inverse-cdf draw of 0-based ranks from uniforms ``u``."""
    c = 1.0 - a
    log_top = np.log(n + 1.0)
    if abs(c) < 1e-12:
        x = np.exp(u * log_top)
    else:
        x = np.exp(np.log1p(u * np.expm1(c * log_top)) / c)
    ranks = x.astype(np.int64) - 1
    return np.clip(ranks, 0, n - 1, out=ranks)


def _zipf_weights(n, a):
    edges = _zipf_cdf(np.arange(1, n + 2, dtype=np.float64), n, a)
    return np.diff(edges)


# -------------------------------------------------------------------------------------
# pairs
# -------------------------------------------------------------------------------------
def _cover_codes(n_users, n_items, rng):
    """``max(n_users, n_items)`` distinct pairs in which every user and every item
    appears at least once (pair k joins user k mod n_users and item k mod n_items,
    after a random relabelling)."""
    k = np.arange(max(n_users, n_items), dtype=np.int64)
    users = rng.permutation(n_users)[k % n_users]
    items = rng.permutation(n_items)[k % n_items]
    return np.sort(users * n_items + items)


def _sample_pairs(n_users, n_items, n_ratings, skew, rng):
    """``n_ratings`` distinct pair codes ``user * n_items + item``, in random
    order."""
    n_pairs = n_users * n_items
    user_of_rank = rng.permutation(n_users)
    item_of_rank = rng.permutation(n_items)
    if n_ratings >= max(n_users, n_items):
        cover = _cover_codes(n_users, n_items, rng)
    else:
        cover = np.empty(0, dtype=np.int64)
    need = n_ratings - cover.shape[0]

    if n_pairs <= _ENUMERATE_PAIRS or 4 * n_ratings > n_pairs:
        # weighted sampling without replacement (Efraimidis-Spirakis keys): the
        # n_ratings smallest Exp(1) / weight among all pairs, covering pairs first
        wu = np.empty(n_users)
        wu[user_of_rank] = _zipf_weights(n_users, skew)
        wi = np.empty(n_items)
        wi[item_of_rank] = _zipf_weights(n_items, skew)
        keys = rng.standard_exponential(n_pairs).reshape(n_users, n_items)
        keys /= wu[:, None]
        keys /= wi[None, :]
        keys = keys.ravel()
        keys[cover] = -1.0
        if n_ratings < n_pairs:
            codes = np.argpartition(keys, n_ratings - 1)[:n_ratings]
        else:
            codes = np.arange(n_pairs, dtype=np.int64)
        return rng.permutation(codes.astype(np.int64, copy=False))

    # sparse case: draw pairs with replacement from the popularity law, keep the
    # distinct ones that are not covering pairs, repeat until there are enough; a
    # law too concentrated to give enough new pairs is flattened as it goes
    extra = np.empty(0, dtype=np.int64)
    draw = int(1.1 * need) + 64
    for _ in range(_MAX_ROUNDS):
        if extra.shape[0] >= need:
            break
        users = user_of_rank[_zipf_ranks(rng.random(draw), n_users, skew)]
        items = item_of_rank[_zipf_ranks(rng.random(draw), n_items, skew)]
        codes = users * n_items + items
        del users, items
        codes.sort()
        # merge two sorted runs (timsort) and drop the repeats and covering pairs
        merged = np.concatenate([extra, codes])
        merged.sort(kind="stable")
        keep = np.empty(merged.shape[0], dtype=bool)
        keep[:1] = True
        np.not_equal(merged[1:], merged[:-1], out=keep[1:])
        if cover.shape[0]:
            pos = np.searchsorted(merged, cover)
            inside = pos < merged.shape[0]
            pos = pos[inside]
            keep[pos[merged[pos] == cover[inside]]] = False
        before = extra.shape[0]
        extra = merged[keep]
        gained = extra.shape[0] - before
        missing = need - extra.shape[0]
        rate = gained / draw
        if rate < 0.05:
            skew = 0.0 if skew < 0.01 else skew / 2
            rate = 0.5
        draw = int(min(1.2 * missing / rate, 20 * need + 1024)) + 64
    else:
        raise RuntimeError(
            "Could not sample enough distinct (user, item) pairs; lower "
            "popularity_skew or n_ratings."
        )
    if extra.shape[0] > need:
        extra = extra[rng.choice(extra.shape[0], size=need, replace=False)]
    return rng.permutation(np.concatenate([cover, extra]))


def _unit_rows(n, k, rng):
    v = rng.standard_normal((n, k))
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


# -------------------------------------------------------------------------------------
# generator
# -------------------------------------------------------------------------------------
@validate_params(
    {
        "n_users": [Whole(1, None, closed="left")],
        "n_items": [Whole(1, None, closed="left")],
        "n_ratings": [Whole(0, None, closed="left")],
        "rating_range": ["array-like"],
        "discrete": BOOLEAN,
        "non_uniformity": [Number(0, 1)],
        "n_components": [Whole(1, None, closed="left")],
        "noise": [Number(0, 1)],
        "popularity_skew": [Number(0, None, closed="left")],
        "as_frame": BOOLEAN,
        "random_state": SEEDS,
    }
)
def make_dyadic_regression(
    n_users=200,
    n_items=300,
    n_ratings=10_000,
    *,
    rating_range=(1, 5),
    discrete=True,
    non_uniformity=0.5,
    n_components=5,
    noise=0.1,
    popularity_skew=0.5,
    as_frame=False,
    random_state=0,
):
    """Generate a synthetic dyadic regression data set (user-item ratings).

    Each rating comes from a standardized latent score of the (user, item) pair,

    .. math::

        z_{ui} = \\sqrt{1 - \\eta}\\,\\Big(\\sqrt{\\nu}\\,
        \\frac{a_u + b_i}{\\sqrt{2}} + \\sqrt{1 - \\nu}\\,\\sqrt{k}\\,
        p_u^\\top q_i\\Big) + \\sqrt{\\eta}\\,\\varepsilon_{ui},

    with ``nu = non_uniformity``, ``eta = noise`` and ``k = n_components``:
    ``a_u`` and ``b_i`` are standard normal user and item levels (the biases),
    ``p_u`` and ``q_i`` are user and item factors drawn uniformly on the unit
    sphere of dimension ``k`` (so that the low-rank interaction has variance 1
    both overall and within every user and every item), and ``epsilon`` is
    standard normal noise. The score is mapped to the rating range through the
    standard normal cdf ``Phi``: ``low + (high - low) * Phi(z)``, or with
    ``discrete=True`` the integer ``low + floor((high - low + 1) * Phi(z))``, so
    the ratings of the whole data set are close to uniform over the range.

    ``non_uniformity`` is the share of the explained variance due to the entity
    levels. At 0 the ratings of every user and every item spread over the whole
    range like the ratings of the whole data (a small D_KS non-uniformity, see
    :func:`sklearn_smallfair.dyadic.dks_nonuniformity`), and only the low-rank
    interaction can be learnt. At 1 each user and item has its own level and the
    ratings of an entity concentrate around it (a large D_KS): predictions pulled
    toward the pair's average rating fail on eccentric ratings. As the two levels
    add up, the within-entity spread is at least about half of the total spread.

    Each (user, item) pair is rated at most once. Users and items have Zipf-like
    popularities (the entity of popularity rank ``r`` is drawn with probability
    proportional to the integral of ``x ** -popularity_skew`` over
    ``[r, r + 1]``); when ``n_ratings >= max(n_users, n_items)`` every user and
    every item has at least one rating. Pairs are drawn without replacement with
    probabilities proportional to the product of the two popularities (exactly
    for small or dense data; for large sparse data by drawing with replacement
    and dropping repeats, flattening the law if it is too concentrated to give
    ``n_ratings`` distinct pairs).

    Parameters
    ----------
    n_users : int, default=200
        Number of users; ids ``0 .. n_users - 1``.
    n_items : int, default=300
        Number of items; ids ``0 .. n_items - 1``.
    n_ratings : int, default=10_000
        Number of ratings, at most ``n_users * n_items``.
    rating_range : (float, float), default=(1, 5)
        Lowest and highest rating. Integers when ``discrete=True``.
    discrete : bool, default=True
        Integer ratings (stored as float64) spread evenly over
        ``low, low + 1, ..., high``; otherwise continuous ratings in
        ``[low, high]``.
    non_uniformity : float in [0, 1], default=0.5
        Share of the explained variance of the latent score due to the user and
        item levels; the rest is the low-rank interaction. Larger values give
        more concentrated per-entity ratings (a larger D_KS).
    n_components : int, default=5
        Rank of the user-item interaction.
    noise : float in [0, 1], default=0.1
        Share of the variance of the latent score that is per-rating noise.
    popularity_skew : float, default=0.5
        Exponent of the Zipf-like popularity of users and items (finite,
        ``>= 0``); 0 gives uniform popularity, larger values more ratings for the
        popular entities.
    as_frame : bool, default=False
        Return a DataFrame with columns ``user``, ``item`` (int64) and ``rating``
        (float64) instead of ``(X, y)``.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the draws (an int in ``[0, 2**32 - 1]``); the same seed gives the
        same data. ``None`` draws fresh entropy.

    Returns
    -------
    X : ndarray of int64, shape (n_ratings, 2)
        User ids (column 0) and item ids (column 1), in random order. Only when
        ``as_frame=False``.
    y : ndarray of float64, shape (n_ratings,)
        The ratings. Only when ``as_frame=False``.
    frame : pandas.DataFrame
        Columns ``user``, ``item``, ``rating``. Only when ``as_frame=True``.

    See Also
    --------
    load_movielens : Real ratings in the same layout.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.datasets import make_dyadic_regression
    >>> X, y = make_dyadic_regression(
    ...     n_users=50, n_items=40, n_ratings=1000, random_state=0
    ... )
    >>> X.shape, X.dtype, y.shape
    ((1000, 2), dtype('int64'), (1000,))
    >>> sorted(np.unique(y).tolist())
    [1.0, 2.0, 3.0, 4.0, 5.0]
    >>> len(np.unique(X[:, 0])), len(np.unique(X[:, 1]))
    (50, 40)
    >>> frame = make_dyadic_regression(
    ...     n_users=50, n_items=40, n_ratings=1000, as_frame=True, random_state=0
    ... )
    >>> list(frame.columns), bool((frame["rating"] == y).all())
    (['user', 'item', 'rating'], True)
    """
    n_users, n_items, n_ratings = int(n_users), int(n_items), int(n_ratings)
    n_components = int(n_components)
    if n_ratings > n_users * n_items:
        raise ValueError(
            f"n_ratings={n_ratings} is more than the {n_users * n_items} distinct "
            f"(user, item) pairs of n_users={n_users} and n_items={n_items}; each "
            "pair is rated at most once."
        )
    lo, hi = _check_range(rating_range, discrete)
    nu, eta = float(non_uniformity), float(noise)
    rng = _generator(random_state)

    # entity parameters first, so that they do not depend on n_ratings
    user_level = rng.standard_normal(n_users)
    item_level = rng.standard_normal(n_items)
    user_factors = _unit_rows(n_users, n_components, rng).T.copy()
    item_factors = _unit_rows(n_items, n_components, rng).T.copy()

    codes = _sample_pairs(n_users, n_items, n_ratings, float(popularity_skew), rng)
    users, items = np.divmod(codes, n_items)

    explained = np.sqrt(1.0 - eta)
    z = user_level[users]
    z += item_level[items]
    z *= explained * np.sqrt(nu / 2.0)
    if nu < 1.0:
        inter = user_factors[0][users] * item_factors[0][items]
        for k in range(1, n_components):
            inter += user_factors[k][users] * item_factors[k][items]
        z += inter * (explained * np.sqrt((1.0 - nu) * n_components))
        del inter
    if eta > 0.0:
        z += np.sqrt(eta) * rng.standard_normal(n_ratings)
    quantile = ndtr(z, out=z)
    if discrete:
        n_levels = round(hi - lo) + 1
        y = np.floor(quantile * n_levels)
        np.clip(y, 0, n_levels - 1, out=y)
        y += lo
    else:
        y = lo + (hi - lo) * quantile

    if as_frame:
        return pd.DataFrame({"user": users, "item": items, "rating": y})
    X = np.empty((n_ratings, 2), dtype=np.int64)
    X[:, 0] = users
    X[:, 1] = items
    return X, y


# -------------------------------------------------------------------------------------
# MovieLens
# -------------------------------------------------------------------------------------
_ML_FILES = ("u.data", "ratings.dat", "ratings.csv")
_ML_DTYPES = {
    "user": np.int64,
    "item": np.int64,
    "rating": np.float64,
    "timestamp": np.int64,
}
_ML_CSV_HEADER = ["userId", "movieId", "rating", "timestamp"]


def _movielens_file(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist; pass a MovieLens ratings file "
            f"({', '.join(_ML_FILES)}) or the directory holding it."
        )
    if path.is_dir():
        for name in _ML_FILES:
            if (path / name).is_file():
                return path / name
        raise FileNotFoundError(
            f"The directory {path} holds none of the MovieLens ratings files "
            f"{', '.join(_ML_FILES)}."
        )
    return path


def _sniff(path):
    """``"tab"``, ``"colons"`` or ``"csv"`` from the first line of the file."""
    with open(path, "rb") as fh:
        first = fh.readline(4096).strip()
    if not first:
        raise ValueError(f"{path.name} is empty or starts with an empty line.")
    if first.lower().startswith(b"userid,"):
        return "csv"
    if b"::" in first:
        return "colons"
    if b"\t" in first:
        return "tab"
    raise ValueError(
        f"Unrecognized format of {path.name}: expected MovieLens u.data "
        "(tab-separated user, item, rating, timestamp), ratings.dat "
        "('::'-separated) or ratings.csv (header userId,movieId,rating,timestamp); "
        f"the first line is {first[:80].decode(errors='replace')!r}."
    )


def _malformed(path, detail):
    return ValueError(
        f"Malformed line in {path.name}: each line must hold an integer user id, an "
        f"integer item id, a numeric rating and an integer timestamp ({detail})."
    )


def _read_movielens(path, fmt):
    """The four columns of a MovieLens ratings file, checked."""
    names = list(_ML_DTYPES)
    skiprows = 0
    if fmt == "tab":
        sep, fields = "\t", [0, 1, 2, 3]
    elif fmt == "colons":
        # '::' read as the one-character separator ':' (the fast C parser): the odd
        # fields are the empty strings between the two colons
        sep, fields = ":", [0, 2, 4, 6]
    else:
        header = pd.read_csv(path, nrows=0).columns.tolist()
        if header != _ML_CSV_HEADER:
            raise ValueError(
                f"{path.name} is not a MovieLens ratings.csv: the header is "
                f"{','.join(header)}, expected {','.join(_ML_CSV_HEADER)}."
            )
        sep, fields, skiprows = ",", [0, 1, 2, 3], 1
    n_fields = fields[-1] + 1
    try:
        # no names: the number of fields of the first line sets the width, longer
        # lines raise and shorter ones leave missing values, both reported
        frame = pd.read_csv(
            path,
            sep=sep,
            header=None,
            skiprows=skiprows,
            dtype=dict(zip(fields, _ML_DTYPES.values(), strict=True)),
            engine="c",
            on_bad_lines="error",
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path.name} holds no ratings.") from None
    except (ValueError, pd.errors.ParserError) as exc:
        raise _malformed(path, str(exc).strip()) from None
    if frame.shape[1] != n_fields:
        raise _malformed(path, f"the first line has {frame.shape[1]} fields")
    if fmt == "colons" and not frame[[1, 3, 5]].isna().all(axis=None):
        raise _malformed(path, "fields must be separated by '::'")
    frame = frame[fields]
    frame.columns = names
    if frame.isna().to_numpy().any():
        raise _malformed(path, "some lines have fewer than four fields")
    return frame


@validate_params({"path": [str, os.PathLike], "as_frame": BOOLEAN})
def load_movielens(path, *, as_frame=False):
    """Read a local copy of MovieLens ratings.

    Nothing is downloaded: ``path`` is a file in one of the MovieLens formats, or
    the directory holding one (looked for in the order ``u.data``,
    ``ratings.dat``, ``ratings.csv``):

    - ``u.data`` (MovieLens 100K; also its ``u1.base`` ... splits):
      tab-separated ``user item rating timestamp``, no header;
    - ``ratings.dat`` (MovieLens 1M, 10M): ``user::item::rating::timestamp``;
    - ``ratings.csv`` (newer MovieLens releases): header
      ``userId,movieId,rating,timestamp``.

    The format of a file is recognized from its first line, whatever its name.

    Parameters
    ----------
    path : str or path-like
        A ratings file or a directory holding one.
    as_frame : bool, default=False
        Return a DataFrame with columns ``user``, ``item``, ``timestamp`` (int64)
        and ``rating`` (float64) instead of ``(X, y)``.

    Returns
    -------
    X : ndarray of int64, shape (n_ratings, 2)
        User ids (column 0) and movie ids (column 1), as in the file (MovieLens
        ids start at 1). Only when ``as_frame=False``.
    y : ndarray of float64, shape (n_ratings,)
        The ratings. Only when ``as_frame=False``.
    frame : pandas.DataFrame
        Columns ``user``, ``item``, ``rating``, ``timestamp``, in file order.
        Only when ``as_frame=True``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist, or is a directory without a ratings file.
    ValueError
        If the format is not recognized or a line is malformed.

    See Also
    --------
    make_dyadic_regression : Synthetic ratings in the same layout.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_smallfair.datasets import load_movielens
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "ratings.dat").write_text(
    ...     "1::1193::5::978300760\\n1::661::3::978302109\\n2::1193::4::978298413\\n"
    ... )
    >>> X, y = load_movielens(folder)
    >>> X.tolist(), y.tolist()
    ([[1, 1193], [1, 661], [2, 1193]], [5.0, 3.0, 4.0])
    >>> load_movielens(folder, as_frame=True)
       user  item  rating  timestamp
    0     1  1193     5.0  978300760
    1     1   661     3.0  978302109
    2     2  1193     4.0  978298413
    """
    file = _movielens_file(path)
    frame = _read_movielens(file, _sniff(file))
    if frame.shape[0] == 0:
        raise ValueError(f"{file.name} holds no ratings.")
    if as_frame:
        return frame.reset_index(drop=True)
    X = np.empty((frame.shape[0], 2), dtype=np.int64)
    X[:, 0] = frame["user"].to_numpy()
    X[:, 1] = frame["item"].to_numpy()
    return X, frame["rating"].to_numpy(dtype=np.float64)
