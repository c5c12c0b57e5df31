"""Eccentricity, the eccentricity curve, EAUC and the D_KS non-uniformity.

The eccentricity of a rating ``r`` of user ``u`` for item ``i`` is its distance
from the pair's average, ``Ecc = |r - (mean_u + mean_i) / 2|``, with the means of
the training ratings. A model that pulls its predictions toward the pair's
average has errors that grow with the eccentricity; the area under the curve of
error against eccentricity, divided by a power of the rating range, is the EAUC
(lower is better; 0 for perfect predictions).
"""

import sys
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._params import BOOLEAN, StrOptions, Whole, validate_params
from .._validation import format_label
from ..exceptions import DyadicDataWarning
from ._means import (
    EntityMeans,
    _check_dyads,
    _check_ratings,
    _Codes,
    _entity_means,
    _means_of_codes,
    _shared_codes,
)

__all__ = [
    "EccentricityCurve",
    "dks_nonuniformity",
    "eauc_score",
    "eccentricity",
    "eccentricity_curve",
]

ERRORS = ("absolute", "squared")
TAILS = ("both", "upper", "lower")
METHODS = ("ordered", "grouped", "bins", "bins_published")
UNKNOWN = ("drop", "error", "global_mean")
# D_KS uses per-entity histograms over the distinct ratings up to this many cells
# (or 4 per rating), and a sort of the ratings within entity beyond
_KS_HISTOGRAM_CELLS = 1 << 20


#: Constraints of the options of the eccentricity curve and the EAUC.
CURVE_OPTIONS = {
    "error": [StrOptions(set(ERRORS))],
    "tail": [StrOptions(set(TAILS))],
    "method": [StrOptions(set(METHODS))],
    "n_bins": [Whole(1, None, closed="left")],
    "unknown": [StrOptions(set(UNKNOWN))],
}
#: Constraints of the evaluated ratings, their ids and the training data.
RATINGS = {
    "users": ["array-like"],
    "items": ["array-like"],
    "train_ratings": ["array-like", None],
    "train_users": ["array-like", None],
    "train_items": ["array-like", None],
    "means": [EntityMeans, None],
}


#: Modules whose frames a warning skips to reach the user's code: this package and
#: the parameter validation wrapping its public functions.
_INNER_MODULES = ("sklearn_smallfair.", "sklearn.utils._param_validation")


def _caller_stacklevel():
    """The ``stacklevel`` of a warning, issued by the function calling this one,
    that points at the first frame outside :data:`_INNER_MODULES`."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        _INNER_MODULES
    ):
        frame, level = frame.f_back, level + 1
    return level


# =====================================================================================
# Training means and pair averages
# =====================================================================================
#: Rows per block of the passes over the evaluated rows: a block's temporaries stay
#: in the CPU cache, and only the per-row results are full length.
_BLOCK = 1 << 15


class _PairTables(NamedTuple):
    """The pair average of row ``k``: ``(user_table[users[k]] +
    item_table[items[k]]) / 2``, NaN when the user or item has no training
    rating (see :meth:`EntityMeans._tables`)."""

    user_table: np.ndarray
    users: np.ndarray
    item_table: np.ndarray
    items: np.ndarray

    def average(self, start, stop, out=None):
        """The pair averages of rows ``start:stop`` (into ``out`` if given)."""
        avg = np.take(self.user_table, self.users[start:stop], out=out)
        avg += np.take(self.item_table, self.items[start:stop])
        avg *= 0.5
        return avg


def _pair_tables(y, u, i, train, means, unknown):
    """The :class:`_PairTables` of the evaluated rows (ids ``u``, ``i``).

    The means come from the training data ``train`` (ratings, users, items) when
    given, else from ``means``, else from the evaluated ratings ``y`` (with a
    warning). The training and evaluated ids share one coding. ``unknown``:
    ``"drop"`` leaves NaN for entities without training ratings, ``"error"``
    raises when a row has one, ``"global_mean"`` puts the global training mean in
    their place.
    """
    codes = (None, None)
    if any(v is not None for v in train):
        if means is not None:
            raise ValueError(
                "pass either means (an EntityMeans) or the training ratings "
                "(train_ratings, train_users, train_items), not both."
            )
        if any(v is None for v in train):
            raise ValueError(
                "train_ratings, train_users and train_items go together: pass all "
                "three (the training ratings and the user and item of each)."
            )
        r, tu, ti = _check_dyads(*train, ratings_name="train_ratings", prefix="train_")
        (user_coding, user_codes), (item_coding, item_codes) = (
            _shared_codes(tu, u),
            _shared_codes(ti, i),
        )
        means = _means_of_codes(r, user_coding, item_coding)
        codes = (user_codes, item_codes)
    elif means is None:
        warnings.warn(
            "no training ratings given, so the user and item means come from the "
            "evaluated ratings themselves; pass train_ratings, train_users and "
            "train_items (or means=) for the published protocol.",
            DyadicDataWarning,
            stacklevel=_caller_stacklevel(),
        )
        means = _entity_means(y, u, i)
        codes = tuple(
            None if c.dense else c.codes for c in (means._users, means._items)
        )
    tables = _PairTables(*means._tables(u, i, *codes))
    if unknown == "global_mean":
        for table in (tables.user_table, tables.item_table):
            table[np.isnan(table)] = means.global_mean
    elif unknown == "error":
        parts = []
        for name, ids, table, index in (
            ("user", u, tables.user_table, tables.users),
            ("item", i, tables.item_table, tables.items),
        ):
            miss = np.isnan(table)[index]
            if miss.any():
                parts.append(
                    f"{int(miss.sum())} row(s) with a {name} without training "
                    f"ratings (first: {format_label(ids[np.argmax(miss)])})"
                )
        if parts:
            raise ValueError(
                f"{'; '.join(parts)}. Pass unknown='drop' to leave those rows out "
                f"or unknown='global_mean' to use the global training mean."
            )
    return tables


def _deviations(y, tables):
    """Per block of rows: ``(start, stop, d)`` with ``d = y - (mean_u + mean_i) /
    2`` of rows ``start:stop`` (NaN when the user or item is unknown), in one
    reused block buffer."""
    n = y.shape[0]
    buf = np.empty(min(n, _BLOCK))
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        d = tables.average(start, stop, out=buf[: stop - start])
        yield start, stop, np.subtract(y[start:stop], d, out=d)


# =====================================================================================
# Eccentricity
# =====================================================================================
@validate_params(
    {
        "y_true": ["array-like"],
        **RATINGS,
        "signed": BOOLEAN,
        "unknown": [StrOptions({"nan", "error", "global_mean"})],
    }
)
def eccentricity(
    y_true,
    *,
    users,
    items,
    train_ratings=None,
    train_users=None,
    train_items=None,
    means=None,
    signed=False,
    unknown="nan",
):
    """Eccentricity of each rating: its distance from the pair's average.

    ``Ecc = |r - (mean_u + mean_i) / 2|``, where ``mean_u`` and ``mean_i`` are the
    mean training ratings of the rating's user and item.

    Parameters
    ----------
    y_true : array-like of shape (n_ratings,)
        The ratings.
    users, items : array-like of shape (n_ratings,)
        The user and the item of each rating (any hashable ids).
    train_ratings, train_users, train_items : array-like, default=None
        Training ratings with their users and items; the means come from them.
        Without them (and without ``means``) the means come from ``y_true``
        itself, with a :class:`~sklearn_smallfair.exceptions.DyadicDataWarning`.
    means : EntityMeans, default=None
        Precomputed training means (:func:`entity_means`, or a fitted dyadic
        estimator's ``entity_means_``), instead of the training ratings.
    signed : bool, default=False
        Return ``r - (mean_u + mean_i) / 2`` (positive above the pair's
        average) instead of its absolute value.
    unknown : {"nan", "error", "global_mean"}, default="nan"
        Rows whose user or item has no training rating: NaN (with a
        :class:`~sklearn_smallfair.exceptions.DyadicDataWarning` giving their
        number), an error, or the global training mean in place of the missing
        entity mean.

    Returns
    -------
    ndarray of shape (n_ratings,)

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import eccentricity
    >>> eccentricity([5, 1], users=[0, 1], items=[0, 0],
    ...              train_ratings=[4, 2, 3, 3], train_users=[0, 0, 1, 1],
    ...              train_items=[0, 1, 0, 1])
    array([1.75, 2.25])
    """
    y, u, i = _check_dyads(y_true, users, items, "y_true")
    train = (train_ratings, train_users, train_items)
    tables = _pair_tables(
        y, u, i, train, means, "drop" if unknown == "nan" else unknown
    )
    d = np.empty(y.shape[0])
    n_missing = 0
    for start, stop, block in _deviations(y, tables):
        n_missing += int(np.count_nonzero(np.isnan(block)))
        d[start:stop] = block
    if n_missing:
        warnings.warn(
            f"{n_missing} of {y.shape[0]} rating(s) have a user or item "
            f"without training ratings; their eccentricity is NaN.",
            DyadicDataWarning,
            stacklevel=_caller_stacklevel(),
        )
    return d if signed else np.abs(d, out=d)


# =====================================================================================
# Curves and areas
# =====================================================================================
def _trapezoid(y, x):
    """Trapezoid area of ``y`` over increasing ``x`` (0 for fewer than 2 points)."""
    if x.shape[0] < 2:
        return 0.0
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1])) / 2.0)


def _ecc_order(ecc):
    """``(order, sorted_ecc)``: a permutation sorting ``ecc`` (finite, >= 0)
    ascending, ties by position, and ``ecc[order]``.

    Sorting values is several times faster than an argsort, so the row index is
    packed into the low bits of each eccentricity's bit pattern (non-negative
    doubles order like their bits as unsigned integers), the keys are sorted and
    the indices read back. Eccentricities equal in all but those low bits can come
    out of order, only among themselves; a stable sort of the nearly sorted result
    (linear time on such input) puts them in place.
    """
    n = ecc.shape[0]
    bits = max(1, (n - 1).bit_length())
    if n < 2 or bits > 32:
        order = np.argsort(ecc, kind="stable")
        return order, ecc[order]
    key = ecc.view(np.uint64) >> np.uint64(bits)
    key <<= np.uint64(bits)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64((1 << bits) - 1)
    order = key.view(np.int64)
    e = ecc[order]
    if (e[1:] < e[:-1]).any():  # eccentricities equal in all but the low bits
        fix = np.argsort(e, kind="stable")
        order, e = order[fix], e[fix]
    return order, e


def _groups(e):
    """Start of each run of equal values in sorted ``e``."""
    change = np.flatnonzero(e[1:] != e[:-1]) + 1
    return np.concatenate(([0], change))


def _ordered_area(ecc, err):
    """Area of the per-row curve sorted by (eccentricity, error), via group ends.

    Rows with equal eccentricity add nothing between them; between two distinct
    eccentricities the curve goes from the larger group's largest error to the
    next group's smallest error (the order of a sort by eccentricity then error),
    so only each group's extreme errors are needed.
    """
    order, e = _ecc_order(ecc)
    y = err[order]
    del order
    starts = _groups(e)
    if starts.shape[0] == e.shape[0]:  # no ties
        return _trapezoid(y, e)
    v = e[starts]
    hi = np.maximum.reduceat(y, starts)
    lo = np.minimum.reduceat(y, starts)
    return float(np.sum(np.diff(v) * (hi[:-1] + lo[1:])) / 2.0)


def _extremes(e, hi, lo):
    """``(values, his, los)``: the distinct values of ``e`` ascending, with the
    largest ``hi`` and the smallest ``lo`` of the rows of each (``e`` nearly
    sorted: a stable sort of it runs in about linear time)."""
    if e.shape[0] > 1 and (e[1:] < e[:-1]).any():
        order = np.argsort(e, kind="stable")
        e, hi, lo = e[order], hi[order], lo[order]
    change = e[1:] != e[:-1]
    if change.all():
        return e, hi, lo
    starts = np.flatnonzero(np.concatenate(([True], change)))
    return e[starts], np.maximum.reduceat(hi, starts), np.minimum.reduceat(lo, starts)


def _keys_area(keys):
    """The ordered area of :class:`_SortKeys`, sorting them in place.

    The sorted keys list the rows by eccentricity up to its low ``bits`` bits
    (ties by row). They are read in chunks of whole runs of equal high bits, so
    that every eccentricity of a chunk is above every one of the chunk before;
    a chunk's exact eccentricities and errors are gathered by row, the runs whose
    exact eccentricities are out of order are sorted, and the chunk gives the
    distinct eccentricities with their largest and smallest error (see
    :func:`_ordered_area`). A run of equal high bits longer
    than a few chunks (many rows with one eccentricity) is read in pieces whose
    extremes are merged. Only chunk-sized arrays are made.
    """
    key, m = keys.key, keys.key.shape[0]
    key.sort()
    shift = np.uint64(keys.bits)
    mask = np.uint64((1 << keys.bits) - 1)
    one = np.uint64(1)

    def extremes(start, stop):
        part = key[start:stop]
        rows = (part & mask).view(np.int64)
        e = np.take(keys.ecc, rows)
        err = np.take(keys.p, rows)
        err -= np.take(keys.y, rows)
        if keys.error == "absolute":
            np.abs(err, out=err)
        else:
            err *= err
        down = np.flatnonzero(e[1:] < e[:-1])
        if down.shape[0]:  # out of order within runs of equal high bits: sort those
            top = part >> shift
            bad = top[down]  # sorted, as top is
            size = top.shape[0] + 1
            edge = np.bincount(np.searchsorted(top, bad), minlength=size)
            edge -= np.bincount(np.searchsorted(top, bad, "right"), minlength=size)
            idx = np.flatnonzero(np.cumsum(edge[:-1]) > 0)  # rows of those runs
            order = idx[np.lexsort((e[idx], top[idx]))]
            e[idx], err[idx] = e[order], err[order]
        return _extremes(e, err, err)

    total, last = 0.0, None  # twice the area; the last group's (value, largest)
    start = 0
    while start < m:
        stop = min(start + _BLOCK, m)
        if stop < m:  # end the chunk with the run of high bits of its last key
            top = key[stop - 1] >> shift
            stop = int(np.searchsorted(key, (top + one) << shift))
            if stop - start > 4 * _BLOCK:  # a long run: up to it, or in pieces
                begin = int(np.searchsorted(key, top << shift))
                if begin > start:
                    stop = begin
        if stop - start > 4 * _BLOCK:
            parts = [
                extremes(a, min(a + _BLOCK, stop)) for a in range(start, stop, _BLOCK)
            ]
            v, hi, lo = _extremes(*(np.concatenate(x) for x in zip(*parts)))
        else:
            v, hi, lo = extremes(start, stop)
        if last is not None:
            total += (v[0] - last[0]) * (last[1] + lo[0])
        total += float(np.sum(np.diff(v) * (hi[:-1] + lo[1:])))
        last = (v[-1], hi[-1])
        start = stop
    return float(total) / 2.0


def _grouped_curve(ecc, err):
    order, e = _ecc_order(ecc)
    y = err[order]
    starts = _groups(e)
    counts = np.diff(np.append(starts, e.shape[0]))
    return e[starts], np.add.reduceat(y, starts) / counts


def _binned_curve(ecc, err, n_bins):
    top = float(ecc.max())
    if top == 0.0:
        return np.zeros(1), np.array([err.mean()])
    b = np.minimum((ecc * (n_bins / top)).astype(np.intp), n_bins - 1)
    count = np.bincount(b, minlength=n_bins)
    x = np.bincount(b, weights=ecc, minlength=n_bins)
    y = np.bincount(b, weights=err, minlength=n_bins)
    used = count > 0
    return x[used] / count[used], y[used] / count[used]


def _published_binned_curve(ecc, err, n_bins, span):
    """The binned curve of the published code: ``n_bins`` equally spaced edges
    over ``[0, span]`` (``span`` the range of the evaluated ratings), so
    ``n_bins - 1`` bins, each closed on the right; the mean error per bin at
    the bin's midpoint, empty bins left out. An eccentricity of exactly 0 is in
    no bin and is dropped, as is one above ``span``."""
    edges = np.linspace(0.0, span, max(int(n_bins), 2))
    b = np.searchsorted(edges, ecc, side="left") - 1  # (edge[b], edge[b + 1]]
    inside = (b >= 0) & (b < edges.shape[0] - 1)
    b, e = b[inside], err[inside]
    count = np.bincount(b, minlength=edges.shape[0] - 1)
    y = np.bincount(b, weights=e, minlength=edges.shape[0] - 1)
    used = count > 0
    mid = (edges[:-1] + edges[1:]) / 2
    return mid[used], y[used] / count[used]


@dataclass(frozen=True, eq=False)
class EccentricityCurve:
    """Error against eccentricity, with its normalized area (EAUC).

    Returned by :func:`eccentricity_curve`; plotted by
    :class:`EccentricityDisplay`.

    Attributes
    ----------
    eccentricity : ndarray of shape (n_points,)
        The curve's x values, increasing (one per row for ``"ordered"``).
    error : ndarray of shape (n_points,)
        The curve's y values: absolute or squared errors, or their means per
        distinct eccentricity or per bin.
    eauc : float
        Trapezoid area under the curve divided by ``normalizer``.
    normalizer : float
        ``(max r - min r)^2`` of the evaluated ratings for absolute errors,
        ``(max r - min r)^3`` for squared errors.
    error_kind, tail, method : str
        The options used.
    n_rows : int
        Rows on the curve.
    n_dropped : int
        Rows dropped because their user or item has no training rating.
    """

    eccentricity: np.ndarray
    error: np.ndarray
    eauc: float
    normalizer: float
    error_kind: str
    tail: str
    method: str
    n_rows: int
    n_dropped: int

    def __repr__(self):
        return (
            f"EccentricityCurve(eauc={self.eauc:.6g}, method={self.method!r}, "
            f"error_kind={self.error_kind!r}, tail={self.tail!r}, "
            f"n_points={self.eccentricity.shape[0]}, n_rows={self.n_rows}, "
            f"n_dropped={self.n_dropped})"
        )

    def to_frame(self):
        """The curve's points as a DataFrame with ``eccentricity`` and ``error``."""
        return pd.DataFrame({"eccentricity": self.eccentricity, "error": self.error})


class _Rows(NamedTuple):
    """The evaluated rows, checked: what the curve and the EAUC are made of."""

    ecc: np.ndarray  # eccentricity of each row kept, finite and >= 0
    err: np.ndarray  # its absolute or squared error
    normalizer: float
    n_dropped: int
    error: str
    tail: str
    method: str
    n_bins: int


class _SortKeys(NamedTuple):
    """The evaluated rows as sort keys, for the ordered EAUC: each kept row's
    eccentricity with its low ``bits`` bits replaced by the row's index (see
    :func:`_keys_area`); the errors are recomputed from ``y`` and ``p``."""

    key: np.ndarray  # uint64 of shape (n_kept,)
    bits: int
    ecc: np.ndarray  # eccentricity of every evaluated row, by row
    y: np.ndarray
    p: np.ndarray
    normalizer: float
    error: str


def _scan(y, p, tables, error, tail, keys):
    """One pass over the evaluated rows, block by block.

    Returns ``(first, second, n_known, lo, hi, bits)``: the number of rows whose
    user and item are known and the range of their ratings; ``first`` the
    eccentricities and ``second`` the errors of the rows kept (known, and on the
    tail), or with ``keys`` the sort keys of the rows kept (``first``) and the
    eccentricity of every row (``second``, by row), ``bits`` the bits of a row
    index. Either way two arrays of ``len(y)`` are allocated, nothing else of
    that length.
    """
    n = y.shape[0]
    first = np.empty(n, dtype=np.uint64 if keys else np.float64)
    second = np.empty(n)
    bits = max(1, (n - 1).bit_length())
    shift = np.uint64(bits)
    rows = np.arange(min(n, _BLOCK), dtype=np.uint64)
    m = n_known = 0
    lo, hi = np.inf, -np.inf
    for start, stop, d in _deviations(y, tables):
        yb = y[start:stop]
        known = ~np.isnan(d)
        count = int(np.count_nonzero(known))
        if count == stop - start:
            known = None
            lo, hi = min(lo, float(yb.min())), max(hi, float(yb.max()))
        elif count:
            lo = min(lo, float(np.min(yb, where=known, initial=np.inf)))
            hi = max(hi, float(np.max(yb, where=known, initial=-np.inf)))
        n_known += count
        side = known if tail == "both" else d >= 0 if tail == "upper" else d <= 0
        ecc = np.abs(d, out=d)
        if keys:
            second[start:stop] = ecc
            k = ecc.view(np.uint64) >> shift
            k <<= shift
            k |= rows[: stop - start]
            k += np.uint64(start)  # the low bits hold the row index
            if side is not None:
                k = k[side]
            first[m : m + k.shape[0]] = k
            m += k.shape[0]
            continue
        err = np.subtract(p[start:stop], yb)
        if error == "absolute":
            np.abs(err, out=err)
        else:
            err *= err
        if side is not None:
            ecc, err = ecc[side], err[side]
        first[m : m + ecc.shape[0]] = ecc
        second[m : m + ecc.shape[0]] = err
        m += ecc.shape[0]
    return first[:m], second if keys else second[:m], n_known, lo, hi, bits


def _prepare(
    y_true,
    y_pred,
    *,
    users,
    items,
    train=(None,) * 3,
    means=None,
    keys=False,
    **options,
):
    """Check the data of :func:`eccentricity_curve` and :func:`eauc_score`.

    ``train`` holds the training ratings, users and items; ``options`` are
    ``error``, ``tail``, ``method``, ``n_bins`` and ``unknown``, already checked
    against :data:`CURVE_OPTIONS` by the public function. Returns the
    :class:`_Rows` of the evaluation, or with ``keys`` its :class:`_SortKeys`.
    Warnings point at the user's code.
    """
    y, u, i = _check_dyads(y_true, users, items, "y_true")
    p = _check_ratings(y_pred, "y_pred")
    if p.shape[0] != y.shape[0]:
        raise ValueError(
            f"y_true and y_pred have inconsistent lengths ({y.shape[0]} and "
            f"{p.shape[0]}); pass one prediction per rating."
        )
    tables = _pair_tables(y, u, i, train, means, options["unknown"])
    error, tail = options["error"], options["tail"]
    first, second, n_known, lo, hi, bits = _scan(y, p, tables, error, tail, keys)
    del tables
    n_dropped = y.shape[0] - n_known
    if n_dropped:
        if not n_known:
            raise ValueError(
                f"no row is left: all {n_dropped} rows have a user or item without "
                f"training ratings. Check that users and items use the training "
                f"ids, or pass unknown='global_mean'."
            )
        warnings.warn(
            f"{n_dropped} of {y.shape[0]} rating(s) dropped: their user or item has "
            f"no training rating (pass unknown='global_mean' to keep them).",
            DyadicDataWarning,
            stacklevel=_caller_stacklevel(),
        )
    if hi == lo:
        raise ValueError(
            f"the evaluated ratings are all equal ({lo:g}), so the rating range "
            f"that normalizes EAUC is zero; evaluate on ratings with at least two "
            f"distinct values."
        )
    normalizer = (hi - lo) ** (2 if error == "absolute" else 3)
    if not first.shape[0]:
        where = "above" if tail == "upper" else "below"
        raise ValueError(
            f"no rating is {where} its pair's average, so the {tail!r} tail is "
            f"empty; use tail='both'."
        )
    if keys:
        return _SortKeys(first, bits, second, y, p, normalizer, error)
    return _Rows(
        ecc=first,
        err=second,
        normalizer=normalizer,
        n_dropped=n_dropped,
        error=error,
        tail=tail,
        method=options["method"],
        n_bins=int(options["n_bins"]),
    )


def _curve_of(rows):
    """The :class:`EccentricityCurve` of checked rows."""
    ecc, err = rows.ecc, rows.err
    if rows.method == "ordered":
        order = np.lexsort((err, ecc))
        x, y = ecc[order], err[order]
    elif rows.method == "grouped":
        x, y = _grouped_curve(ecc, err)
    elif rows.method == "bins":
        x, y = _binned_curve(ecc, err, rows.n_bins)
    else:  # the span of the ratings, back from the normalizer of the error kind
        power = 2.0 if rows.error == "absolute" else 3.0
        span = float(np.round(rows.normalizer ** (1.0 / power), 12))
        x, y = _published_binned_curve(ecc, err, rows.n_bins, span)
    return EccentricityCurve(
        eccentricity=x,
        error=y,
        eauc=_trapezoid(y, x) / rows.normalizer,
        normalizer=rows.normalizer,
        error_kind=rows.error,
        tail=rows.tail,
        method=rows.method,
        n_rows=int(ecc.shape[0]),
        n_dropped=rows.n_dropped,
    )


def _eauc_of(rows):
    """The EAUC of checked rows; the ordered area without building the curve."""
    if rows.method == "ordered":
        return _ordered_area(rows.ecc, rows.err) / rows.normalizer
    return _curve_of(rows).eauc


@validate_params(
    {"y_true": ["array-like"], "y_pred": ["array-like"], **RATINGS, **CURVE_OPTIONS}
)
def eccentricity_curve(
    y_true,
    y_pred,
    *,
    users,
    items,
    train_ratings=None,
    train_users=None,
    train_items=None,
    means=None,
    error="absolute",
    tail="both",
    method="ordered",
    n_bins=20,
    unknown="drop",
):
    """Error against eccentricity, and the normalized area under it (EAUC).

    Parameters
    ----------
    y_true : array-like of shape (n_ratings,)
        True ratings.
    y_pred : array-like of shape (n_ratings,)
        Predicted ratings.
    users, items : array-like of shape (n_ratings,)
        The user and the item of each rating (any hashable ids).
    train_ratings, train_users, train_items : array-like, default=None
        Training ratings with their users and items: the per-entity means come
        from them (the published protocol). Without them (and without
        ``means``) the means come from ``y_true``, with a
        :class:`~sklearn_smallfair.exceptions.DyadicDataWarning`.
    means : EntityMeans, default=None
        Precomputed training means instead of the training ratings.
    error : {"absolute", "squared"}, default="absolute"
        ``|r - r_hat|`` or ``(r - r_hat)^2``.
    tail : {"both", "upper", "lower"}, default="both"
        Two-tailed eccentricity ``|r - avg|`` over all rows, or one tail: only
        the ratings at or above (``"upper"``) or at or below (``"lower"``) their
        pair's average, with eccentricity their distance from it.
    method : {"ordered", "grouped", "bins", "bins_published"}, default="ordered"
        The curve: one point per row sorted by eccentricity (ties in
        eccentricity sorted by error, so the curve does not depend on the row
        order); the mean error per distinct eccentricity; the mean error and
        mean eccentricity in ``n_bins`` equal-width bins over ``[0, max Ecc]``
        (empty bins left out); or the published code's binning:
        ``n_bins`` edges over ``[0, max r - min r]`` (so ``n_bins - 1`` bins,
        closed on the right), the mean error per bin at the bin's midpoint,
        rows with eccentricity exactly 0 dropped.
    n_bins : int, default=20
        Number of bins for ``method="bins"`` (of edges for
        ``"bins_published"``).
    unknown : {"drop", "error", "global_mean"}, default="drop"
        Rows whose user or item has no training rating: dropped (their number is
        ``n_dropped``, and a warning says it), an error, or kept with the global
        training mean in place of the missing entity mean.

    Returns
    -------
    EccentricityCurve
        The points, the EAUC and the number of rows used and dropped.

    See Also
    --------
    eauc_score : The EAUC alone, without building the curve's points.
    EccentricityDisplay : Plot of the curve.

    Notes
    -----
    The EAUC is the trapezoid area under the curve divided by ``(max r - min
    r)^2`` of the evaluated ratings for absolute errors (``^3`` for squared
    errors), so it does not change when all ratings and predictions are shifted
    or scaled by the same positive factor.

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import eccentricity_curve
    >>> curve = eccentricity_curve(
    ...     [5, 1, 3, 4], [4, 2, 3, 4], users=[0, 1, 0, 1], items=[0, 0, 1, 1],
    ...     train_ratings=[4, 2, 3, 3], train_users=[0, 0, 1, 1],
    ...     train_items=[0, 1, 0, 1])
    >>> curve.to_frame()
       eccentricity  error
    0          0.25    0.0
    1          1.25    0.0
    2          1.75    1.0
    3          2.25    1.0
    >>> curve.eauc
    0.046875
    """
    rows = _prepare(
        y_true,
        y_pred,
        users=users,
        items=items,
        train=(train_ratings, train_users, train_items),
        means=means,
        error=error,
        tail=tail,
        method=method,
        n_bins=n_bins,
        unknown=unknown,
    )
    return _curve_of(rows)


@validate_params(
    {"y_true": ["array-like"], "y_pred": ["array-like"], **RATINGS, **CURVE_OPTIONS}
)
def eauc_score(
    y_true,
    y_pred,
    *,
    users,
    items,
    train_ratings=None,
    train_users=None,
    train_items=None,
    means=None,
    error="absolute",
    tail="both",
    method="ordered",
    n_bins=20,
    unknown="drop",
):
    """Eccentricity area under the curve (EAUC) of dyadic predictions.

    The area under the curve of the error against the eccentricity ``|r -
    (mean_u + mean_i) / 2|`` of each rating, divided by the squared rating range.
    A model that predicts close to the pair's average and misses eccentric
    ratings has a large EAUC even when its RMSE is small. Lower is better; perfect
    predictions score 0.

    Parameters
    ----------
    y_true : array-like of shape (n_ratings,)
        True ratings.
    y_pred : array-like of shape (n_ratings,)
        Predicted ratings.
    users, items : array-like of shape (n_ratings,)
        The user and the item of each rating (any hashable ids).
    train_ratings, train_users, train_items : array-like, default=None
        Training ratings with their users and items, for the per-entity means
        (the published protocol). Without them (and without ``means``) the means
        come from ``y_true``, with a
        :class:`~sklearn_smallfair.exceptions.DyadicDataWarning`.
    means : EntityMeans, default=None
        Precomputed training means (:func:`entity_means`, or a fitted dyadic
        estimator's ``entity_means_``) instead of the training ratings.
    error : {"absolute", "squared"}, default="absolute"
        ``|r - r_hat|`` or ``(r - r_hat)^2``; squared errors are divided by the
        cubed rating range.
    tail : {"both", "upper", "lower"}, default="both"
        Two-tailed eccentricity, or only the ratings above or below their pair's
        average (see :func:`eccentricity_curve`).
    method : {"ordered", "grouped", "bins", "bins_published"}, default="ordered"
        The curve whose area is taken (see :func:`eccentricity_curve`).
    n_bins : int, default=20
        Number of bins for ``method="bins"`` (of edges for
        ``"bins_published"``).
    unknown : {"drop", "error", "global_mean"}, default="drop"
        Rows whose user or item has no training rating: dropped with a
        :class:`~sklearn_smallfair.exceptions.DyadicDataWarning` giving their
        number (``eccentricity_curve(...).n_dropped``), an error, or kept with
        the global training mean.

    Returns
    -------
    float
        The EAUC, ``>= 0``.

    See Also
    --------
    eccentricity_curve : The curve's points, the EAUC and the rows dropped.
    make_eauc_scorer : EAUC as a scorer for model selection.

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import eauc_score
    >>> train = dict(train_ratings=[4, 2, 3, 3], train_users=[0, 0, 1, 1],
    ...              train_items=[0, 1, 0, 1])
    >>> y, users, items = [5, 1, 3, 4], [0, 1, 0, 1], [0, 0, 1, 1]
    >>> eauc_score(y, [4, 2, 3, 4], users=users, items=items, **train)
    0.046875
    >>> eauc_score(y, y, users=users, items=items, **train)
    0.0
    """
    rows = _prepare(
        y_true,
        y_pred,
        users=users,
        items=items,
        train=(train_ratings, train_users, train_items),
        means=means,
        error=error,
        tail=tail,
        method=method,
        n_bins=n_bins,
        unknown=unknown,
        keys=method == "ordered",
    )
    if method == "ordered":
        return _keys_area(rows) / rows.normalizer
    return _eauc_of(rows)


# =====================================================================================
# D_KS
# =====================================================================================
def _distinct_sorted(r):
    """The distinct values of ``r``, sorted: hashed block by block (a block's table
    is small), the blocks' distinct values merged."""
    parts = [pd.unique(r[s : s + _BLOCK]) for s in range(0, r.shape[0], _BLOCK)]
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
    L, n = cdf.shape[0], r.shape[0]
    if size * L <= max(4 * n, _KS_HISTOGRAM_CELLS):
        for start in range(0, n, _BLOCK):
            part = key[start : start + _BLOCK]
            np.multiply(codes[start : start + _BLOCK], L, out=part)
            part += level_of(r[start : start + _BLOCK])
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
