"""Comparative TPRs over all pairs of items, in O(n log n), and their variances.

For items with labels ``y``, scores ``s`` and group codes ``g``, the cell ``(a, b)``
holds every pair ``(h, l)`` with ``y_h > y_l``, ``g_h = a`` and ``g_l = b``: about
``n^2 / 2`` pairs, never materialized. For binary labels the share of them ordered
correctly is a cross-group Mann-Whitney count, the "xAUC" of bipartite ranking
fairness; for ordinal or continuous labels it is a dominance count.

Counting
--------
Every item's *placements* are counted: for each group ``b``, the number of items
of ``b`` below it in label and below it in score (its correct pairs as the higher
item) and above it in both (as the lower item), and the same with equal scores.
The counts follow from one sort of the items by score and a wavelet-tree pass
over the bits of the dense label ranks: at the bit level where two labels first
differ, the two items share a node, the higher label has the bit set, and their
order inside the node is their score order. So at each of the ``ceil(log2 L)``
levels (``L`` distinct labels; one level for binary labels) a cumulative count
of the node's items with the bit clear, by group, gives every item's placements
for the pairs first separated at that level, and a stable partition of each node
by the bit builds the next level. Inside a node, ties in score are ordered by
decreasing label, so that only strictly ordered pairs are counted; pairs tied in
score are counted from a second order, by score then label. The cost is one or
two sorts and ``O(n K log L)`` cumulative counts for ``K`` groups.

Variance
--------
``TPR(a, b) = C_ab / n_ab`` is a ratio of U-statistics of the items. Its
first-order (Hajek) projection is a sum of per-item terms: with ``c_i`` and
``m_i`` the correct and counted pairs of item ``i`` in the cell (its structural
components, as in DeLong et al., 1988), ``r_i = c_i - TPR(a, b) m_i``, and

    Var TPR(a, b) = sum_g n_g / (n_g - 1) sum_{i in g} r_i^2 / n_ab^2,

where ``n_g`` counts the items of group ``g`` that take part in the cell. For
binary labels and ``a != b`` this is DeLong's variance of an AUC. The cross test
``TPR(a, b) - TPR(b, a)`` uses the same sum over the per-item terms of the
difference, so the covariance of the two cells (the items of ``a`` are higher in
one and lower in the other) is included; within-group cells share no items.

Permutations
------------
The counts of the cells are linear in each resample's group indicators once the
wavelet levels are fixed (they depend only on labels and scores), so resamples
of the group labels are counted together, a block of resamples at a time, with
the same cumulative counts along a second axis.
"""

from dataclasses import dataclass

import numpy as np

from ._pairs import PairCounts, _clustered_variances, _squared_residuals

__all__ = ["AllPairs", "all_pairs_counts", "count_all_pairs"]

# Resamples of the permutation test counted together: the block's temporaries
# are a few arrays of shape (block, n_items).
_BLOCK_ELEMENTS = 1 << 22


def _index_dtype(n):
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


def _small_codes(g, n_groups):
    """Group codes in the smallest integer type (faster to gather)."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_groups <= np.iinfo(dtype).max:
            return g.astype(dtype, copy=False)
    return g.astype(np.int64, copy=False)


def _exclusive_cumsum(mask, axis=-1):
    """Cumulative counts of ``mask`` before each position, with one more at the end.

    Shape ``(..., n + 1)``: entry ``t`` counts the True values at positions
    ``< t``.
    """
    shape = list(mask.shape)
    shape[axis] += 1
    dtype = np.int32 if mask.shape[axis] < np.iinfo(np.int32).max else np.int64
    out = np.zeros(shape, dtype=dtype)
    index = [slice(None)] * mask.ndim
    index[axis] = slice(1, None)
    np.cumsum(mask, axis=axis, out=out[tuple(index)])
    return out


@dataclass(frozen=True, eq=False)
class _Level:
    """One level of the wavelet tree: the item at each position, its bit, the
    first and one-past-last positions of its node, and the number of clear bits
    before each position (``zeros``, of length ``n + 1``)."""

    items: np.ndarray
    bit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    zeros: np.ndarray


class AllPairs:
    """The orders of the items that all-pairs counts need (labels and scores only).

    Parameters
    ----------
    y : ndarray of shape (n_items,)
        Numeric labels.
    s : ndarray of shape (n_items,)
        Numeric scores.

    Attributes
    ----------
    n_items : int
    label_rank : ndarray of int
        Dense rank of each item's label, ``0 .. n_levels - 1``.
    n_levels : int
        Distinct labels.
    has_score_ties : bool
        Whether two items have equal scores.
    """

    def __init__(self, y, s):
        n = y.shape[0]
        idx = _index_dtype(n + 1)
        self.n_items = n
        levels_, label_rank = np.unique(y, return_inverse=True)
        self.n_levels = L = levels_.shape[0]
        self.label_rank = label_rank.astype(idx, copy=False).reshape(-1)
        by_score = np.argsort(s, kind="stable").astype(idx, copy=False)
        s_sorted = s[by_score]
        new_score = np.empty(n, dtype=bool)
        new_score[:1] = True
        np.not_equal(s_sorted[1:], s_sorted[:-1], out=new_score[1:])
        self.has_score_ties = bool(n > 1 and not new_score.all())
        if self.has_score_ties:
            # ties in score by increasing label (for the tied pairs): a stable sort
            # of the score-sorted items, which are already in runs of equal score
            rank_sorted = np.cumsum(new_score) - 1
            key = rank_sorted * L + self.label_rank[by_score]
            within = np.argsort(key, kind="stable")
            self._by_key = by_score[within]
            sorted_key = key[within]
            self._tie_bounds = _run_bounds(sorted_key, rank_sorted)
            # and by decreasing label (strictly ordered pairs only, see the
            # module's docstring): each run of equal score reversed
            _, _, score_start, score_end = self._tie_bounds
            reverse = score_start + score_end - 1 - np.arange(n)
            self._order = self._by_key[reverse]
        else:
            self._order = by_score
        self._levels = None

    # ---------------------------------------------------------------- levels
    def levels(self, keep=False):
        """The wavelet levels, top bit first (kept for reuse when ``keep``)."""
        if self._levels is not None:
            return iter(self._levels)
        if keep:
            self._levels = list(self._make_levels())
            return iter(self._levels)
        return self._make_levels()

    def _make_levels(self):
        n, yr = self.n_items, self.label_rank
        idx = yr.dtype
        n_bits = max(1, int(self.n_levels - 1).bit_length())
        items = self._order
        start = np.zeros(n, dtype=idx)
        end = np.full(n, n, dtype=idx)
        pos = np.arange(n, dtype=idx)
        for k in range(n_bits - 1, -1, -1):
            bit = ((yr[items] >> k) & 1).astype(bool)
            zeros = _exclusive_cumsum(~bit)
            yield _Level(items, bit, start, end, zeros)
            if k == 0:
                return
            zeros_before = zeros[pos] - zeros[start]
            split = (start + (zeros[end] - zeros[start])).astype(idx)
            new_pos = np.where(
                bit, split + (pos - start - zeros_before), start + zeros_before
            )
            nxt = np.empty_like(items)
            nxt[new_pos] = items
            new_start = np.empty_like(start)
            new_start[new_pos] = np.where(bit, split, start)
            new_end = np.empty_like(end)
            new_end[new_pos] = np.where(bit, end, split)
            items, start, end = nxt, new_start, new_end

    # ------------------------------------------------------- per-item counts
    def placements(self, g, n_groups):
        """Every item's strictly ordered pairs with each group, both roles.

        Returns ``(above, below)``, int64 arrays of shape (n_items, n_groups):
        ``above[i, b]`` counts the items ``l`` of group ``b`` with ``y_l < y_i``
        and ``s_l < s_i`` (item ``i`` correctly ordered as the higher item);
        ``below[i, a]`` the items ``h`` of group ``a`` with ``y_h > y_i`` and
        ``s_h > s_i``.
        """
        n, K = self.n_items, n_groups
        g = _small_codes(g, K)
        # one row per group: the items' counts against the group are contiguous;
        # an item's count is at most n
        above = np.zeros((K, n), dtype=self.label_rank.dtype)
        below = np.zeros((K, n), dtype=self.label_rank.dtype)
        for level in self.levels():
            hi = level.bit
            pos_hi = np.flatnonzero(hi)
            pos_lo = np.flatnonzero(~hi)
            items_hi, items_lo = level.items[pos_hi], level.items[pos_lo]
            zeros = level.zeros
            # for a set bit: the clear bits before it, and before its node's start,
            # as positions in the subsequence of clear bits (and vice versa)
            lo_before = pos_hi - np.arange(pos_hi.shape[0])
            lo_start = zeros[level.start[pos_hi]]
            end_lo = level.end[pos_lo]
            hi_after = pos_lo - np.arange(pos_lo.shape[0])
            hi_end = end_lo - zeros[end_lo]
            g_lo, g_hi = g[items_lo], g[items_hi]
            rest_above = lo_before - lo_start
            rest_below = hi_end - hi_after
            for b in range(K - 1):
                count = _exclusive_cumsum(g_lo == b)
                part = count[lo_before] - count[lo_start]
                above[b, items_hi] += part
                rest_above -= part
                count = _exclusive_cumsum(g_hi == b)
                part = count[hi_end] - count[hi_after]
                below[b, items_lo] += part
                rest_below -= part
            above[K - 1, items_hi] += rest_above
            below[K - 1, items_lo] += rest_below
        return above.T, below.T

    def tied_placements(self, g, n_groups):
        """Every item's pairs with different labels and equal scores, by group.

        Returns ``(above, below)`` like :meth:`placements`, with ``s_l = s_i``
        (resp. ``s_h = s_i``) instead of the strict inequalities; zeros without
        ties in the scores.
        """
        n, K = self.n_items, n_groups
        above = np.zeros((K, n), dtype=self.label_rank.dtype)
        below = np.zeros((K, n), dtype=self.label_rank.dtype)
        if not self.has_score_ties:
            return above.T, below.T
        key_start, key_end, score_start, score_end = self._tie_bounds
        gk = _small_codes(g, K)[self._by_key]
        for b in range(K):
            count = _exclusive_cumsum(gk == b)
            above[b, self._by_key] = count[key_start] - count[score_start]
            below[b, self._by_key] = count[score_end] - count[key_end]
        return above.T, below.T

    def label_placements(self, g, n_groups):
        """Every item's pairs with different labels, by group (scores ignored).

        Returns ``(above, below)``: ``above[i, b]`` counts the items of group ``b``
        with a lower label than item ``i``; ``below[i, a]`` those of ``a`` with a
        higher label.
        """
        L, yr = self.n_levels, self.label_rank
        above = np.empty((n_groups, self.n_items), dtype=yr.dtype)
        below = np.empty_like(above)
        for b in range(n_groups):
            per_level = np.bincount(yr[g == b], minlength=L)
            cum = np.concatenate(([0], np.cumsum(per_level)))
            above[b] = cum[yr]
            below[b] = cum[-1] - cum[yr + 1]
        return above.T, below.T

    # ------------------------------------------------- counts of resamples
    def resampled_counts(self, G, n_groups, *, ties=False):
        """Cell counts of many group assignments at once.

        Parameters
        ----------
        G : ndarray of int of shape (n_resamples, n_items)
            Group code of every item in each resample.
        n_groups : int
        ties : bool, default=False
            Also count the pairs tied in score.

        Returns
        -------
        strict : ndarray of int64 of shape (n_resamples, K, K)
            Strictly correctly ordered pairs of each cell ``(a, b)``.
        tied : ndarray of int64 of shape (n_resamples, K, K) or None
            Pairs tied in score (None unless ``ties``).
        """
        B, n = G.shape
        K = n_groups
        strict = np.zeros((B, K, K), dtype=np.int64)
        pos = np.arange(n)
        for level in self.levels(keep=True):
            gl = G[:, level.items]
            hi = level.bit
            lo_cols = ~hi
            for b in range(K):
                zeros = _exclusive_cumsum((gl == b) & lo_cols)
                before = zeros[:, pos[hi]] - zeros[:, level.start[hi]]
                g_hi = gl[:, hi]
                for a in range(K):
                    strict[:, a, b] += np.einsum(
                        "ij,ij->i", before, (g_hi == a).astype(np.int64)
                    )
        if not (ties and self.has_score_ties):
            return strict, None
        tied = np.zeros((B, K, K), dtype=np.int64)
        key_start, _, score_start, _ = self._tie_bounds
        gk = G[:, self._by_key]
        for b in range(K):
            count = _exclusive_cumsum(gk == b)
            lower = count[:, key_start] - count[:, score_start]
            for a in range(K):
                tied[:, a, b] = np.einsum("ij,ij->i", lower, (gk == a).astype(np.int64))
        return strict, tied


def _run_bounds(sorted_key, sorted_score_rank):
    """First and one-past-last positions of each position's run of equal keys and
    of equal scores, in the order sorted by key."""
    n = sorted_key.shape[0]
    out = []
    for values in (sorted_key, sorted_score_rank):
        change = np.empty(n, dtype=bool)
        change[:1] = True
        np.not_equal(values[1:], values[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        run = np.cumsum(change) - 1
        ends = np.append(starts[1:], n)
        out.append((starts[run], ends[run]))
    (key_start, key_end), (score_start, score_end) = out
    return key_start, key_end, score_start, score_end


# =====================================================================================
# Cells, per-item terms and variances
# =====================================================================================
@dataclass(frozen=True, eq=False)
class ItemTerms:
    """Correct and counted pairs of every item in every cell, both roles.

    Arrays of shape (K, n_items), one row per group: ``c_hi[b, i]``/``m_hi[b,
    i]``: the correct (half-integers with ``tie="half"``) and counted pairs of item
    ``i`` as the higher item against the items of group ``b`` (cell ``(g_i,
    b)``); ``c_lo[a, i]``/``m_lo[a, i]`` as the lower item against group ``a``
    (cell ``(a, g_i)``). ``strict_hi``, ``tied_hi`` and ``pairs_hi``: the strictly
    correct, the tied in score and all the pairs with a lower label of item ``i``
    against group ``b``.
    """

    c_hi: np.ndarray
    m_hi: np.ndarray
    c_lo: np.ndarray
    m_lo: np.ndarray
    strict_hi: np.ndarray
    tied_hi: np.ndarray
    pairs_hi: np.ndarray


def item_terms(plan, g, n_groups, tie):
    """The per-item counts of :class:`ItemTerms` for one group assignment."""
    # the methods return (n_items, K) views of (K, n_items) arrays: take the rows
    strict_hi, strict_lo = (x.T for x in plan.placements(g, n_groups))
    pairs_hi, pairs_lo = (x.T for x in plan.label_placements(g, n_groups))
    tied_hi, tied_lo = (x.T for x in plan.tied_placements(g, n_groups))
    if tie == "drop":
        m_hi, m_lo = pairs_hi - tied_hi, pairs_lo - tied_lo
    else:
        m_hi, m_lo = pairs_hi, pairs_lo
    if tie == "half":
        c_hi = strict_hi + 0.5 * tied_hi
        c_lo = strict_lo + 0.5 * tied_lo
    else:
        c_hi, c_lo = strict_hi, strict_lo
    return ItemTerms(c_hi, m_hi, c_lo, m_lo, strict_hi, tied_hi, pairs_hi)


def _by_group(values, g, n_groups):
    """Row sums of ``values`` (K, n_items) over the items of each group: ``out[a,
    b]`` sums row ``b`` over the items of group ``a``."""
    out = np.empty((n_groups, values.shape[0]))
    for row in range(values.shape[0]):
        out[:, row] = np.bincount(g, weights=values[row], minlength=n_groups)
    return out


@dataclass(frozen=True, eq=False)
class AllPairCounts(PairCounts):
    """:class:`PairCounts` of all pairs, with the t reference of the U-statistic.

    Attributes
    ----------
    df : ndarray of shape (K, K) or None
        Welch-Satterthwaite degrees of freedom of each cell's variance (None unless
        ``variance="u_statistic"``).
    df_cross : ndarray of shape (K, K) or None
        Those of the variance of ``TPR(a, b) - TPR(b, a)``.
    components : ndarray of shape (K, K, 8) or None
        The cell variances' components (times ``n_ab^2``): by the side of the pair
        (higher item's group, lower item's group) and the role of the items (higher
        only, lower only, both).
    component_sizes : ndarray of shape (K, K, 8) or None
        The items behind each component.
    """

    df: np.ndarray | None = None
    df_cross: np.ndarray | None = None
    components: np.ndarray | None = None
    component_sizes: np.ndarray | None = None

    def within(self, a, b):
        """Variance and degrees of freedom of ``TPR(a, a) - TPR(b, b)``."""
        with np.errstate(divide="ignore"):
            inv = np.where(self.n > 0, self.n.astype(np.float64) ** -2.0, 0.0)
        v = np.concatenate(
            [self.components[a, a] * inv[a, a], self.components[b, b] * inv[b, b]]
        )
        m = np.concatenate([self.component_sizes[a, a], self.component_sizes[b, b]])
        return v.sum(), _welch_df(v, m)


def count_all_pairs(plan, g, n_groups, *, tie, variance):
    """Count all pairs by cell and compute the variances of the cell rates.

    Parameters
    ----------
    plan : AllPairs
        The items' labels and scores.
    g : ndarray of int of shape (n_items,)
        Group codes ``0 .. n_groups - 1``.
    n_groups : int
    tie : {"incorrect", "half", "drop"}
    variance : {"u_statistic", "clustered", "independent"}

    Returns
    -------
    counts : AllPairCounts
    """
    K = n_groups
    terms = item_terms(plan, g, K, tie)
    right = _by_group(terms.strict_hi, g, K).astype(np.int64)
    ties = _by_group(terms.tied_hi, g, K).astype(np.int64)
    pairs = _by_group(terms.pairs_hi, g, K).astype(np.int64)
    wrong = pairs - right - ties
    n = pairs - ties if tie == "drop" else pairs
    correct = right + 0.5 * ties if tie == "half" else right
    n_label_ties = plan.n_items * (plan.n_items - 1) // 2 - int(pairs.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n > 0, correct / n, np.nan)
    extra = {}
    if variance == "independent":
        with np.errstate(divide="ignore", invalid="ignore"):
            V = tpr * (1 - tpr) / n
        VD = None
    elif variance == "clustered":
        T = _residual_sums(terms, g, tpr, K)
        P = _squared_residuals((wrong, ties, right), tpr, tie)
        V, VD = _clustered_variances(T, g, n, P, K)
    else:
        V, VD, extra = _u_statistic_variances(terms, g, n, tpr, K)
    return AllPairCounts(
        n=n,
        correct=correct,
        tpr=tpr,
        var=np.where(n > 0, V, np.nan),
        var_cross=VD,
        n_label_ties=n_label_ties,
        n_predicted_ties=int(ties.sum()),
        **extra,
    )


def _residual_sums(terms, g, tpr, K):
    """Per-item residual sums ``c - tpr m`` in the layout of ``_clustered_variances``.

    Shape (2 K, n_items): row ``b`` is the item's residual sum as the higher item
    against group ``b`` (with, for ``b`` its own group, its lower-item sum in the
    same cell added), row ``K + b`` as the lower item against ``b != g_i``.
    """
    r_hi, r_lo = _residuals(terms, g, tpr)
    own = np.arange(g.shape[0])
    T = np.empty((2 * K, g.shape[0]))
    T[:K] = r_hi
    lo = r_lo
    T[g, own] += lo[g, own]
    lo[g, own] = 0.0
    T[K:] = lo
    return T


def _residuals(terms, g, tpr):
    """``r_hi[b, i] = c_hi - TPR(g_i, b) m_hi`` and ``r_lo[a, i] = c_lo - TPR(a,
    g_i) m_lo``: each item's residual sums in the cells, as higher and lower item,
    shape (K, n_items)."""
    mu = np.nan_to_num(tpr)
    r_hi = terms.m_hi * mu.T[:, g]
    np.subtract(terms.c_hi, r_hi, out=r_hi)
    r_lo = terms.m_lo * mu[:, g]
    np.subtract(terms.c_lo, r_lo, out=r_lo)
    return r_hi, r_lo


# roles of an item in a cell or a pair of cells: 1 higher only, 2 lower only, 3 both
_N_ROLES = 4


def _components(x, code, K):
    """Per (group, role): ``m / (m - 1) sum x^2`` and ``m``, the items taking part.

    ``code`` is ``group * 4 + role``. Returns two arrays of shape (K, 4) (role 0,
    items taking no part, is zero).
    """
    squares = np.bincount(code, weights=x * x, minlength=K * _N_ROLES)
    m = np.bincount(code, minlength=K * _N_ROLES).astype(np.float64)
    squares, m = squares.reshape(K, _N_ROLES), m.reshape(K, _N_ROLES)
    squares[:, 0] = 0.0
    m[:, 0] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(m > 1, m / (m - 1), 1.0)
    return squares * scale, m


def _welch_df(v, m):
    """Welch-Satterthwaite degrees of freedom of ``sum v``, the components ``v``
    estimated from ``m`` items each (``m - 1`` degrees of freedom, at least 1)."""
    v, m = np.asarray(v, dtype=np.float64), np.asarray(m, dtype=np.float64)
    keep = m > 0
    v, m = v[keep], m[keep]
    total = v.sum()
    if not total > 0:
        return np.inf
    return float(total**2 / np.sum(v**2 / np.maximum(m - 1, 1)))


def _u_statistic_variances(terms, g, n, tpr, K):
    """Hajek/DeLong variances of the cell rates and of the cross differences.

    ``V[a, b]`` is the variance of ``TPR(a, b)``: the sum over the items of their
    squared residual sums in the cell, divided by ``n_ab^2``. The items are split
    by group and by role in the cell (higher item only, lower item only, both),
    and each part's sum is scaled by ``m / (m - 1)`` for its ``m`` items, as
    DeLong's estimator scales the variances of the placement values of the
    positives and of the negatives; the parts' sizes give Welch-Satterthwaite
    degrees of freedom. ``VD[a, b]`` is the variance of ``TPR(a, b) - TPR(b, a)``
    in the same way, from each item's residual sums in both cells, so their
    covariance is included.
    """
    r_hi, r_lo = _residuals(terms, g, tpr)
    has_hi = terms.m_hi > 0
    has_lo = terms.m_lo > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(n > 0, 1.0 / n, 0.0)
    comp = np.zeros((K, K, 2, _N_ROLES))
    size = np.zeros((K, K, 2, _N_ROLES))
    cross = np.zeros((K, K, _N_ROLES))
    cross_size = np.zeros((K, K, _N_ROLES))
    code = g.astype(np.int64) * _N_ROLES
    for b in range(K):
        mine = g == b
        # cells (g_i, b): item i higher (and, for its own group, also lower)
        x = r_hi[b].copy()
        x[mine] += r_lo[b, mine]
        role = has_hi[b] * 1 + (has_lo[b] & mine) * 2
        comp[:, b, 0], size[:, b, 0] = _components(x, code + role, K)
        # cells (b, g_i), g_i != b: item i lower
        x = np.where(mine, 0.0, r_lo[b])
        role = (has_lo[b] & ~mine) * 2
        comp[b, :, 1], size[b, :, 1] = _components(x, code + role, K)
        # TPR(g_i, b) - TPR(b, g_i): item i higher in the first, lower in the second
        x = r_hi[b] * inv[:, b][g]
        x -= r_lo[b] * inv[b][g]
        x[mine] = 0.0
        role = has_hi[b] * 1 + has_lo[b] * 2
        cross[:, b], cross_size[:, b] = _components(x, code + role, K)
    comp = comp.reshape(K, K, 2 * _N_ROLES)
    size = size.reshape(K, K, 2 * _N_ROLES)
    V = comp.sum(axis=2) * inv**2
    # the items of group a and of group b both enter TPR(a, b) - TPR(b, a)
    cross_parts = np.concatenate([cross, cross.transpose(1, 0, 2)], axis=2)
    cross_sizes = np.concatenate([cross_size, cross_size.transpose(1, 0, 2)], axis=2)
    VD = cross_parts.sum(axis=2)
    df = np.full((K, K), np.inf)
    df_cross = np.full((K, K), np.inf)
    for a in range(K):
        for b in range(K):
            df[a, b] = _welch_df(comp[a, b] * inv[a, b] ** 2, size[a, b])
            df_cross[a, b] = _welch_df(cross_parts[a, b], cross_sizes[a, b])
    extra = {
        "df": df,
        "df_cross": df_cross,
        "components": comp,
        "component_sizes": size,
    }
    return V, VD, extra


def all_pairs_counts(plan, g, n_groups, *, tie):
    """Counts ``(n, correct)`` of the cells, shape (K, K), without variances."""
    terms = item_terms(plan, g, n_groups, tie)
    return _by_group(terms.m_hi, g, n_groups), _by_group(terms.c_hi, g, n_groups)


# =====================================================================================
# Permutations of the group labels within label strata
# =====================================================================================
def log_assignments(plan, g, n_groups):
    """Natural log of the number of distinct within-label-strata assignments of
    the group labels (the permutations that change something)."""
    from scipy.special import gammaln

    counts = np.zeros((plan.n_levels, n_groups))
    np.add.at(counts, (plan.label_rank, g), 1)
    return float(np.sum(gammaln(counts.sum(axis=1) + 1)) - np.sum(gammaln(counts + 1)))


def permutation_differences(plan, g, n_groups, first, second, *, tie, n_resamples, rng):
    """Differences of cell rates on the data and on permuted group labels.

    The group labels are permuted within the strata of equal labels, so every
    resample keeps the labels and scores and the number of items of each group at
    each label (and so, unless ``tie="drop"``, the number of pairs of every cell).

    Parameters
    ----------
    plan : AllPairs
    g : ndarray of int of shape (n_items,)
    n_groups : int
    first, second : tuple of two ndarrays of int
        The compared cells: ``(higher, lower)`` group codes of each comparison.
    tie : {"incorrect", "half", "drop"}
    n_resamples : int
    rng : numpy.random.Generator

    Returns
    -------
    observed : ndarray of shape (n_tests,)
        ``TPR(first) - TPR(second)`` of the data.
    null : ndarray of shape (n_resamples, n_tests)
        The same for each resample.
    """
    n = plan.n_items
    by_label = np.argsort(plan.label_rank, kind="stable")
    strata = plan.label_rank[by_label].astype(np.float64)
    g_sorted = g[by_label]
    observed = _differences(plan, g[None, :], n_groups, first, second, tie)[0]
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    null = np.empty((n_resamples, observed.shape[0]))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        keys = rng.random((size, n))
        keys += strata
        shuffled = np.argsort(keys, axis=1)
        G = np.empty((size, n), dtype=g.dtype)
        G[:, by_label] = g_sorted[shuffled]
        null[start : start + size] = _differences(plan, G, n_groups, first, second, tie)
    return observed, null


def _differences(plan, G, K, first, second, tie):
    """``TPR(first) - TPR(second)`` for each row of group assignments ``G``."""
    strict, tied = plan.resampled_counts(G, K, ties=tie != "incorrect")
    # the pairs of each cell: the same in every resample (the groups' labels are
    # kept)
    pairs = _by_group(plan.label_placements(G[0], K)[0].T, G[0], K)[None]
    if tie == "drop" and tied is not None:
        n = pairs - tied
    else:
        n = np.broadcast_to(pairs, strict.shape)
    correct = strict + 0.5 * tied if (tie == "half" and tied is not None) else strict
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n > 0, correct / n, np.nan)
    return tpr[:, first[0], first[1]] - tpr[:, second[0], second[1]]
