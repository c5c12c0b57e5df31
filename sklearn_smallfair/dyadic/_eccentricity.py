"""Eccentricity of dyadic ratings: the distance of each rating from its pair's
average.

The eccentricity of a rating ``r`` of user ``u`` for item ``i`` is its distance
from the pair's average, ``Ecc = |r - (mean_u + mean_i) / 2|``, with the means of
the training ratings. The passes over the evaluated rows run block by block
(:data:`_BLOCK` rows), here and in the curve, EAUC and D_KS modules.
"""

import sys
import warnings
from typing import NamedTuple

import numpy as np

from .._params import BOOLEAN, StrOptions, validate_params
from .._validation import format_label
from ..exceptions import DyadicDataWarning
from ._means import (
    EntityMeans,
    _check_dyads,
    _entity_means,
    _means_of_codes,
    _shared_codes,
)

__all__ = ["eccentricity"]

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
    eccentricity : ndarray of shape (n_ratings,)
        The eccentricity of each rating (signed with ``signed=True``).

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
