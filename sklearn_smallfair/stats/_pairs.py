"""Pairs of items for comparative tests: drawing, checking and counting them.

A pair ``(i, j)`` has a true order ``t = sign(y_i - y_j)`` (``+1`` when ``i`` is the
higher item; pairs with tied labels carry no order) or an explicit judgment, and
an outcome ``o = t sign(s_i - s_j)`` from the scores: ``+1`` correctly ordered,
``0`` predicted tie, ``-1`` wrongly ordered. :func:`count_pairs` counts the pairs
of each cell ``(a, b)`` (group of the truly-higher item, of the truly-lower item)
and the variances of the cells' rates of correct order, independent or
item-clustered.
"""

from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from .._params import RANDOM_STATE, Whole, validate_params
from .._random import resolve_seed
from .._validation import _as_1d, _check_no_missing, _reject_mapping, format_labels

__all__ = [
    "MAX_PAIRS",
    "PairCounts",
    "check_judgments",
    "check_numeric",
    "check_pairs",
    "count_pairs",
    "make_comparative_pairs",
]

TIES = ("incorrect", "half", "drop")
#: Most pairs drawn at random (``n_pairs``): their indices take 16 bytes each, and
#: drawing and counting them about 0.2 s per million. All pairs of any number of
#: items are counted without drawing them (``n_pairs=None`` in the tests).
MAX_PAIRS = 50_000_000
LABEL_HINT = (
    "Pass class labels (e.g. 0/1) or regression targets; encode ordered string "
    "categories as numbers first."
)
SCORE_HINT = "Pass one real-valued score per item (e.g. decision_function output)."
# Pairs are counted in chunks of this many: the temporaries of a chunk stay in
# cache and their memory is reused, instead of a dozen arrays as long as the pairs.
_CHUNK = 1 << 20
# The per-item residual sums (items x 2 x groups) cover every item when that array
# is at most 8 times the number of pairs (or this small); otherwise only the items
# that are in pairs.
_DENSE_CLUSTER_MIN = 1 << 16
# np.add.at is as fast as bincount from numpy 1.25 on, and much slower before
_ADD_AT_IS_FAST = np.lib.NumpyVersion(np.__version__) >= "1.25.0"


# =====================================================================================
# Checks
# =====================================================================================
def check_numeric(values, name, hint):
    """A finite 1-D numeric array (booleans become 0/1)."""
    arr = _as_1d(values, name)
    _check_no_missing(arr, name)
    if arr.dtype.kind == "O":
        distinct = pd.unique(arr)
        if all(
            isinstance(v, (Real, np.number, bool, np.bool_)) for v in distinct.tolist()
        ):
            arr = arr.astype(np.float64)
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}. {hint}")
    return arr


def check_pairs(pairs, n_items):
    """Item indices ``(i, j)`` of the pairs, each an int64 array of shape (m,)."""
    _reject_mapping(pairs, "pairs")
    arr = np.asarray(pairs)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"pairs must have shape (n_pairs, 2): one row (i, j) of item indices per "
            f"pair; got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError("pairs is empty; pass at least one pair (i, j).")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or not np.array_equal(arr, np.round(arr)):
            raise ValueError(
                "pairs must hold integer item indices; got non-integer or "
                "non-finite values."
            )
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        raise TypeError(
            f"pairs must hold integer item indices (positions in y_score), got dtype "
            f"{arr.dtype}."
        )
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n_items:
        bad = int(((arr < 0) | (arr >= n_items)).any(axis=1).sum())
        raise ValueError(
            f"pairs holds item indices from {lo} to {hi}, but there are {n_items} "
            f"items (valid indices 0..{n_items - 1}); {bad} pair(s) are out of "
            f"range. Index items by their position in y_score."
        )
    if arr.dtype.kind == "u":
        arr = arr.astype(np.int64)
    i, j = arr[:, 0], arr[:, 1]
    for start in range(0, i.shape[0], _CHUNK):
        same = i[start : start + _CHUNK] == j[start : start + _CHUNK]
        if same.any():
            same = i == j
            raise ValueError(
                f"pairs contains {int(same.sum())} self-pair(s) (i == j; first at "
                f"row {int(np.flatnonzero(same)[0])}); an item cannot be compared "
                f"with itself. Drop those rows."
            )
    return i, j


def check_judgments(judgments, m):
    """Judgments of ``m`` pairs as booleans: True when the first item is higher."""
    arr = _as_1d(judgments, "judgments")
    _check_no_missing(arr, "judgments")
    if arr.shape[0] != m:
        raise ValueError(
            f"judgments has {arr.shape[0]} entries but pairs has {m} rows; pass one "
            f"judgment per pair."
        )
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                "judgments must be +1/-1 (or booleans), got non-numeric values."
            ) from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"judgments must be +1/-1 (or booleans), got dtype {arr.dtype}."
        )
    ok = (arr == 1) | (arr == -1)
    if not ok.all():
        bad = np.unique(arr[~ok])
        raise ValueError(
            f"judgments must be +1 (the first item of the pair is higher) or -1 (the "
            f"second is higher); got {format_labels(bad)}. Pairs judged equal carry "
            f"no order: drop them."
        )
    return arr > 0


# =====================================================================================
# Drawing
# =====================================================================================
@validate_params(
    {
        "y_true": ["array-like"],
        "n_pairs": [Whole(1, MAX_PAIRS), None],
        "random_state": RANDOM_STATE,
    }
)
def make_comparative_pairs(y_true, *, n_pairs=None, random_state=0):
    """Draw random pairs of items with different labels for comparative tests.

    Two independent index draws with replacement, ``i`` and ``j``, each of
    ``n_pairs`` items; the pairs whose labels are tied (``y_i == y_j``, including
    every self-pair ``i == j``) carry no order and are dropped. So the number of
    pairs returned, ``m``, is at most ``n_pairs`` (about ``n_pairs * P(y_i !=
    y_j)``).

    Parameters
    ----------
    y_true : array-like of shape (n_items,)
        Numeric labels (class labels or regression targets) of the items.
    n_pairs : int, default=None
        Number of pairs drawn before ties are dropped, at most ``MAX_PAIRS`` =
        50,000,000 (a larger value is an error before anything is drawn);
        ``None`` draws ``2 * n_items``. To compare every pair of items, do not
        draw them: :func:`comparative_separation_test` counts all pairs when
        given no ``pairs`` and no ``n_pairs``.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the draws; ``None`` for fresh entropy.

    Returns
    -------
    pairs : ndarray of int64, shape (m, 2)
        Item indices ``(i, j)`` with ``y_true[i] != y_true[j]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import make_comparative_pairs
    >>> y = [0, 1, 1, 0, 2]
    >>> pairs = make_comparative_pairs(y, n_pairs=10, random_state=0)
    >>> pairs.shape[1], pairs.shape[0] <= 10
    (2, True)
    >>> bool((np.take(y, pairs[:, 0]) != np.take(y, pairs[:, 1])).all())
    True
    """
    y = check_numeric(y_true, "y_true", LABEL_HINT)
    n = y.shape[0]
    if n < 2 or (y == y[0]).all():
        raise ValueError(
            f"y_true must hold at least two different values to form ordered pairs; "
            f"got {n} item(s) with {len(np.unique(y))} distinct value(s)."
        )
    size = 2 * n if n_pairs is None else n_pairs
    if size > MAX_PAIRS:
        raise ValueError(
            f"n_pairs=None draws 2 x n_items = {size:,} pairs, more than MAX_PAIRS = "
            f"{MAX_PAIRS:,}; pass a smaller n_pairs, or count all pairs without "
            f"drawing them (comparative_separation_test without pairs and n_pairs)."
        )
    rng = np.random.default_rng(resolve_seed(random_state))
    i = rng.integers(0, n, size=size)
    j = rng.integers(0, n, size=size)
    keep = y[i] != y[j]
    return np.column_stack((i[keep], j[keep])).astype(np.int64, copy=False)


# =====================================================================================
# Counting
# =====================================================================================
@dataclass(frozen=True, eq=False)
class PairCounts:
    """The pairs counted by cell ``(a, b)``, and the variances of the cells' rates.

    Attributes
    ----------
    n : ndarray of shape (K, K)
        Usable pairs of each cell (distinct true order; with ``tie="drop"`` also
        distinct predicted order).
    correct : ndarray of shape (K, K)
        Correctly ordered pairs (half-integers with ``tie="half"``).
    tpr : ndarray of shape (K, K)
        ``correct / n``, NaN when ``n = 0``.
    var : ndarray of shape (K, K)
        Variance of each cell's rate (NaN when ``n = 0``).
    var_cross : ndarray of shape (K, K) or None
        With the clustered variance, the variance of ``TPR(a, b) - TPR(b, a)``,
        covariance included; None with independent pairs.
    n_label_ties : int
        Pairs whose labels are tied (not counted).
    n_predicted_ties : int
        Usable pairs whose two scores are equal (before ``tie`` is applied).
    """

    n: np.ndarray
    correct: np.ndarray
    tpr: np.ndarray
    var: np.ndarray
    var_cross: np.ndarray | None
    n_label_ties: int
    n_predicted_ties: int


def count_pairs(i, j, first_higher, y, s, g, n_groups, *, tie, variance):
    """Count the pairs by cell and compute the variances of the cell rates.

    Parameters
    ----------
    i, j : ndarray of int64 of shape (m,)
        Item indices of the pairs.
    first_higher : ndarray of bool of shape (m,) or None
        Explicit judgments (True when ``i`` is higher); None to order the pairs by
        ``y``.
    y : ndarray of shape (n_items,) or None
        Numeric labels (None with ``first_higher``).
    s : ndarray of shape (n_items,)
        Scores.
    g : ndarray of int of shape (n_items,)
        Group codes ``0 .. n_groups - 1``.
    n_groups : int
    tie : {"incorrect", "half", "drop"}
        How a predicted tie counts.
    variance : {"clustered", "independent"}
        Item-clustered (dyadic cluster-robust) or independent-pairs variances.

    Returns
    -------
    counts : PairCounts
    """
    K = n_groups
    clustered = variance == "clustered"
    g = _small_int(g, K)
    if y is not None:
        y = _compact_labels(y)
    totals = _ItemTotals(i, j, g, K, tie) if clustered else None
    by_outcome, n_label_ties = _count_states(i, j, first_higher, y, s, g, K, totals)
    wrong, ties, right = by_outcome
    n = right + wrong + (0 if tie == "drop" else ties)
    correct = right + 0.5 * ties if tie == "half" else right
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n > 0, correct / n, np.nan)
    if clustered:
        residual_sums, g_used = totals.residual_sums(tpr)
        del totals
        P = _squared_residuals(by_outcome, tpr, tie)
        V, VD = _clustered_variances(residual_sums, g_used, n, P, K)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            V = tpr * (1 - tpr) / n
        VD = None
    return PairCounts(
        n=n,
        correct=correct,
        tpr=tpr,
        var=np.where(n > 0, V, np.nan),
        var_cross=VD,
        n_label_ties=n_label_ties,
        n_predicted_ties=int(ties.sum()),
    )


def _small_int(codes, bound):
    """``codes`` in the smallest signed integer type holding values up to bound."""
    for dtype in (np.int8, np.int16, np.int32):
        if bound <= np.iinfo(dtype).max:
            return codes.astype(dtype)
    return codes.astype(np.int64)


def _compact_labels(y):
    """Integer-valued labels as small integers (same order): faster to gather."""
    if y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):
        return y
    lo, hi = y.min(), y.max()
    span = float(hi) - float(lo) if y.dtype.kind == "f" else int(hi) - int(lo)
    if span > np.iinfo(np.int32).max:
        return y
    return _small_int(y - lo, span)


def _sign_of_difference(a, b):
    """``sign(a - b)`` as int8, by comparisons (no overflow, any numeric dtype)."""
    out = np.greater(a, b).view(np.int8)
    out -= np.less(a, b).view(np.int8)
    return out


def _count_states(i, j, first_higher, y, s, g, K, totals):
    """Counts of the pairs by state, from one pass over the pairs in chunks.

    A pair's code ``(3 t + o + 4) K^2 + g_i K + g_j`` takes ``9 K^2`` values, and one
    ``bincount`` per chunk (see ``_CHUNK``) counts them. The cell counts, correct
    counts, ties and the cells' sums of squared residuals all follow from those
    ``9 K^2`` counts, so every total is an exact integer count.

    Labels and groups are packed into one small integer per item (``y << bits |
    g``) when the labels are integers, so a pair needs two gathers for them and two
    for the scores. With per-item ``totals`` the same pass adds each pair to them.

    Returns ``(by_outcome, n_label_ties)``: the counts of shape (3, K, K) of the
    wrongly ordered pairs, the predicted ties and the correctly ordered pairs of
    each cell ``(a, b)``, and the number of pairs with tied labels.
    """
    kk = K * K
    m = i.shape[0]
    code_dtype = _small_int(np.zeros(0), 9 * kk).dtype
    gbits = max(1, (K - 1).bit_length())
    # compact labels (see _compact_labels) are small non-negative integers
    packed = y is not None and y.dtype.kind in "iu" and y.dtype.itemsize <= 4
    if packed:
        u = _small_int(y, int(y.max()) << gbits)
        u <<= gbits
        u |= g
        gmask = u.dtype.type((1 << gbits) - 1)
    else:
        u = g
    counts = np.zeros(9 * kk, dtype=np.int64)
    for start in range(0, m, _CHUNK):
        sl = slice(start, start + _CHUNK)
        ic, jc = i[sl], j[sl]
        ui, uj = u[ic], u[jc]
        if y is None:
            t = first_higher[sl].view(np.int8) * np.int8(2)
            t -= np.int8(1)
        elif packed:
            t = _sign_of_difference(ui >> gbits, uj >> gbits)
            ui &= gmask
            uj &= gmask
        else:
            t = _sign_of_difference(y[ic], y[jc])
        o = _sign_of_difference(s[ic], s[jc])
        o *= t
        code = t.astype(code_dtype)
        code *= code_dtype.type(3)
        code += o
        code += code_dtype.type(4)
        code *= code_dtype.type(kk)
        code += ui.astype(code_dtype) * code_dtype.type(K)
        code += uj
        counts += np.bincount(code, minlength=9 * kk)
        if totals is not None:
            totals.add(code, ic, jc)
    counts = counts.reshape(3, 3, K, K)  # (t + 1, o + 1, g_i, g_j)
    # cell (a, b) of the pairs with outcome o: i higher (t = +1) in (g_i, g_j),
    # j higher (t = -1) in (g_j, g_i)
    by_outcome = counts[2] + counts[0].transpose(0, 2, 1)  # (o + 1, a, b)
    return by_outcome, int(counts[1].sum())


def _squared_residuals(by_outcome, tpr, tie):
    """Per-cell sums of squared residuals ``(outcome - tpr)^2``, shape (K, K)."""
    mu = np.nan_to_num(tpr)
    wrong, ties, right = by_outcome
    tie_value = {"incorrect": 0.0, "half": 0.5, "drop": None}[tie]
    P = right * (1.0 - mu) ** 2 + wrong * mu**2
    if tie_value is not None:
        P = P + ties * (tie_value - mu) ** 2
    return P


class _ItemTotals:
    """Per-(slot, item) integer totals of the pairs, for the clustered variance.

    Each counted pair adds to a total of both of its items, packed as ``count <<
    32 | 2 x outcome`` (see :meth:`residual_sums` for the slots); the residual
    sums follow once the rates are known. Items in no pair are left out when the
    dense array would be large.
    """

    def __init__(self, i, j, g, K, tie):
        self.K = K
        self.lut = _state_tables(K, tie)
        n_items = g.shape[0]
        self.remap = None
        if n_items * 2 * K > max(8 * i.shape[0], _DENSE_CLUSTER_MIN):
            used = np.zeros(n_items, dtype=bool)
            used[i] = True
            used[j] = True
            self.remap = np.cumsum(used) - 1
            self.g_used = g[used]
        else:
            self.g_used = g
        self.n_used = self.g_used.shape[0]
        self.T = np.zeros(2 * K * self.n_used, dtype=np.int64)

    def add(self, code, ic, jc):
        """Add a chunk of pairs (their codes and items) to the totals."""
        if self.remap is not None:
            ic, jc = self.remap[ic], self.remap[jc]
        value = self.lut["value"][code]
        for slots, items in ((self.lut["slot_i"], ic), (self.lut["slot_j"], jc)):
            key = slots[code]
            key *= self.n_used
            key += items
            if _ADD_AT_IS_FAST:
                np.add.at(self.T, key, value)
            else:  # pragma: no cover - numpy < 1.25
                size = self.T.shape[0]
                counts = np.bincount(key, weights=value >> 32, minlength=size)
                twice = np.bincount(key, weights=value & 0xFFFFFFFF, minlength=size)
                self.T += (counts.astype(np.int64) << 32) + twice.astype(np.int64)

    def residual_sums(self, tpr):
        """Residual sums per item and slot, for the item-clustered variance.

        Returns ``(T, g)``. ``T`` has shape (2 K, n_used): row ``b < K`` holds
        each item's residual sum over the pairs where it is the higher item and the
        other item is in group ``b``; row ``K + b`` the pairs where it is the lower
        item and the other is in group ``b != own group`` (the lower-item sums of
        the item's own-group cell ``(g, g)`` are added to row ``g``, the same
        cell). ``g`` is the group of each used item.
        """
        K, g = self.K, self.g_used
        totals = self.T.reshape(2 * K, self.n_used)
        counts = (totals >> 32).astype(np.float64)
        outcome = (totals & 0xFFFFFFFF).astype(np.float64)
        outcome *= 0.5
        mu = np.nan_to_num(tpr)
        # the cell of each (slot, item): (own group, b) as the higher item, (b, own
        # group) as the lower item
        counts[:K] *= mu[g].T
        counts[K:] *= mu[:, g]
        outcome -= counts
        return outcome, g


def _state_tables(K, tie):
    """By pair code: the rows of the per-item totals and the pair's packed value.

    ``slot_i``/``slot_j`` give the row of the per-item totals that item ``i``/``j``
    of the pair adds to; ``value`` is ``1 << 32 | 2 x outcome`` for counted pairs
    (``2`` correct, ``1`` a predicted tie with ``tie="half"``, ``0`` otherwise) and
    ``0`` for pairs not counted (tied labels; predicted ties with ``tie="drop"``).
    """
    kk = K * K
    code = np.arange(9 * kk)
    state, cell = np.divmod(code, kk)
    t = state // 3 - 1
    o = state % 3 - 1
    gi, gj = np.divmod(cell, K)
    same = gi == gj
    i_higher = t == 1
    slot_i = np.where(i_higher, gj, np.where(same, gj, K + gj))
    slot_j = np.where(i_higher, np.where(same, gi, K + gi), gi)
    counted = (t != 0) & ~((o == 0) & (tie == "drop"))
    twice = np.where(o == 1, 2, np.where((o == 0) & (tie == "half"), 1, 0))
    value = np.where(counted, (np.int64(1) << 32) + twice, 0).astype(np.int64)
    return {
        "slot_i": slot_i.astype(np.int64),
        "slot_j": slot_j.astype(np.int64),
        "value": value,
    }


def _clustered_variances(T, g, n, P, n_groups):
    """Item-clustered variances of the cell rates and of cross differences.

    ``V[a, b]`` is the variance of ``TPR(a, b)``; ``VD[a, b]`` that of
    ``TPR(a, b) - TPR(b, a)``, covariance included. Both are floored at the
    independent-pairs value (``P / n^2``, sum of squared residuals). Dyadic
    cluster-robust form: the sum over items of the squared per-item residual sum,
    minus each pair's own square (counted once for each of its two items).
    """
    K = n_groups
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(n > 0, 1.0 / n, 0.0)
    indep = P * inv**2
    SS = np.zeros((K, K))
    Q = np.zeros((K, K))
    for b in range(K):
        hi_sums, lo_sums = T[b], T[K + b]
        # an item of group a: higher item of cell (a, b), lower item of (b, a)
        SS[:, b] += np.bincount(g, weights=hi_sums * hi_sums, minlength=K)
        SS[b, :] += np.bincount(g, weights=lo_sums * lo_sums, minlength=K)
        # its part of TPR(a, b) - TPR(b, a) (b != a; the diagonal is not used)
        x = hi_sums * inv[:, b][g]
        x -= lo_sums * inv[b, :][g]
        Q[:, b] = np.bincount(g, weights=x * x, minlength=K)
    V = np.maximum(SS - P, P) * inv**2
    VD = np.maximum(Q + Q.T - indep - indep.T, indep + indep.T)
    return V, VD
