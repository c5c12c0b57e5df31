"""The eccentricity curve and EAUC.

A model that pulls its predictions toward the pair's average (see
:func:`eccentricity`) has errors that grow with the eccentricity; the area under
the curve of error against eccentricity, divided by a power of the rating range,
is the EAUC (lower is better; 0 for perfect predictions).
"""

import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._params import StrOptions, Whole, validate_params
from ..exceptions import DyadicDataWarning
from . import _eccentricity
from ._curve_areas import (
    _binned_curve,
    _grouped_curve,
    _keys_area,
    _ordered_area,
    _published_binned_curve,
    _SortKeys,
    _trapezoid,
)
from ._eccentricity import RATINGS, _caller_stacklevel, _deviations, _pair_tables
from ._means import _check_dyads, _check_ratings

__all__ = [
    "EccentricityCurve",
    "eauc_score",
    "eccentricity_curve",
]

ERRORS = ("absolute", "squared")
TAILS = ("both", "upper", "lower")
METHODS = ("ordered", "grouped", "bins", "bins_published")
UNKNOWN = ("drop", "error", "global_mean")


#: Constraints of the options of the eccentricity curve and the EAUC.
CURVE_OPTIONS = {
    "error": [StrOptions(set(ERRORS))],
    "tail": [StrOptions(set(TAILS))],
    "method": [StrOptions(set(METHODS))],
    "n_bins": [Whole(1, None, closed="left")],
    "unknown": [StrOptions(set(UNKNOWN))],
}


@dataclass(frozen=True, eq=False)
class EccentricityCurve:
    """Error against eccentricity, with its normalized area (EAUC).

    Returned by :func:`eccentricity_curve`; plotted by
    :class:`EccentricityDisplay`. Its fields are its parameters.

    Parameters
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

    Examples
    --------
    >>> from sklearn_smallfair.dyadic import eccentricity_curve, entity_means
    >>> users, items = [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]
    >>> means = entity_means([5, 3, 4, 1, 2, 5], users=users, items=items)
    >>> curve = eccentricity_curve([5, 3, 4, 1, 2, 5], [4, 3, 3, 2, 3, 4],
    ...                            users=users, items=items, means=means)
    >>> curve.method, curve.n_rows, round(curve.eauc, 4)
    ('ordered', 6, 0.0651)
    >>> curve.to_frame().columns.tolist()
    ['eccentricity', 'error']
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
    rows = np.arange(min(n, _eccentricity._BLOCK), dtype=np.uint64)
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
