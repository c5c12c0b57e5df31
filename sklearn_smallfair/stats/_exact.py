"""Exact unconditional test of two binomial proportions, many tables at once.

Barnard's test ordered by the pooled score statistic (the Suissa-Shuster test):
for successes ``x_a`` of ``n_a`` and ``x_b`` of ``n_b``, with

``z(x_a, x_b) = (x_a / n_a - x_b / n_b) / sqrt(p (1 - p) (1 / n_a + 1 / n_b))``,
``p = (x_a + x_b) / (n_a + n_b)`` (and ``z = 0`` when ``p`` is 0 or 1),

the two-sided p-value is

``sup_{pi in C} P_pi(|z(X_a, X_b)| >= |z_obs|) + gamma``,

``X_a ~ Bin(n_a, pi)`` and ``X_b ~ Bin(n_b, pi)`` independent. With ``gamma = 0``
and ``C = [0, 1]`` it is Barnard's test, the one :func:`scipy.stats.barnard_exact`
computes for one table (``pooled=True``, there by a global optimizer on 32
points). With ``gamma > 0`` and ``C`` the Clopper-Pearson ``1 - gamma``
confidence interval of the common rate from the pooled count, it is Berger and
Boos' refinement (R. L. Berger and D. D. Boos, "P values maximised over a
confidence set for the nuisance parameter", JASA 89, 1994). Both are exact:
under equal proportions the test rejects at most ``alpha`` of the time whatever
the common proportion, at every sample size. Barnard's supremum is often reached
at common rates near 0 or 1 that the data exclude (there the statistic is lumpy
and its tail heavy), which makes it conservative when one sample is large; the
refinement removes most of that (see the calibration table of the user guide).

Computation
-----------
Enumerate the counts of the smaller sample only. For a fixed count ``i`` of the
smaller sample, ``z(i, j)`` is non-increasing in the larger sample's count ``j``
(the set ``|z| >= t`` is where a convex quadratic in ``j`` is non-negative,
outside its roots, on either side of ``j = n_b i / n_a``), so the rejection
region is two tails ``j <= L_i`` and ``j >= U_i``, found by a vectorized binary
search on ``j``. Then

``P_pi = sum_i Bin(i; n_s, pi) [F(L_i; n_l, pi) + 1 - F(U_i - 1; n_l, pi)]``

with ``F`` the binomial CDF of the larger sample (a regularized incomplete beta
function): ``n_s + 1`` terms, however large the other sample. A test between 10
people and 5,000 costs about as much as one between 10 and 10.

The supremum is taken on ``pi = sin(theta)^2`` (the variance-stabilising scale,
where every sample's law moves at the same speed) folded onto ``pi <= 1/2``: the
rejection region is symmetric under exchanging successes and failures, so
``P_pi = P_{1 - pi}``. A grid of ``GRID_PER_SD`` points per standard deviation
``1 / (2 sqrt(n_l))`` of the larger sample's proportion (at least ``GRID_MIN``
points) brackets the maxima; the ``REFINE`` highest local maxima of the grid are
refined by golden-section search to a bracket of width ``THETA_TOL``. The result
is a value of ``P_pi``, so a lower bound of the supremum. No bound on what a
grid could miss is proved, so the error is measured (``tests/stats/test_exact.py``
and the figures below):

- against the definition computed by brute force (the whole two-dimensional
  rejection region, 1,001 rates refined by a bounded scalar optimizer), the
  worst difference is ``5e-12`` (Barnard) and ``5e-13`` (Berger and Boos) on
  random tables of up to 30 against 3,000 people;
- against a search 16 times as dense (8 maxima refined to ``1e-9``), the worst
  difference is ``1.4e-10`` on 3,000 random tables of 1 to 60 against 1 to
  20,000 people; grids 2 and 4 times coarser than the default give the same
  values, 8 times coarser misses maxima by up to 0.04: the default grid has a
  margin of 4;
- against :func:`scipy.stats.barnard_exact`, ours is never smaller, and equal
  within ``1e-12`` except where scipy's optimizer (32 points) stops short of the
  supremum, our value being the definition's, or where floating-point noise
  splits a tie. The shortfall can reach the third decimal when one sample is
  much larger than the other: 10 of 10 against 800 of 1,000 gives ``0.147820``
  in scipy, ``0.151194`` here and by brute force over 20,001 common rates
  (``3.4e-3`` short). On ties, scipy compares the statistics with no
  tolerance, so a table whose statistic equals the observed one up to rounding
  can be left out of its region, which gives a smaller p-value (up to 0.09 on
  random tables of up to 25 people).

Ties: tables whose statistic equals ``|z_obs|`` within a relative ``1e-10`` are in
the rejection region (floating-point noise would otherwise split exact ties).

Cost: ``n_s + 1`` binomial pmfs and two CDFs per evaluation of ``P_pi``, and
about ``GRID_PER_SD * 2 sqrt(n_l) * width + 25 * REFINE`` evaluations per
table (``width`` the ``theta`` range, ``pi/4`` for Barnard's test and about
``3.3 / sqrt(n_a + n_b)`` for Berger and Boos' at ``gamma = 0.001``); tables are
processed in blocks of at most ``MAX_BLOCK`` values. The smaller sample is
enumerated only up to ``MAX_EXACT_N`` people; callers decide what to do beyond
(the score test is then accurate).
"""

import numpy as np
from scipy.special import betainc, betaincinv, gammaln

__all__ = [
    "BERGER_BOOS_GAMMA",
    "MAX_EXACT_N",
    "barnard_exact_pvalues",
    "score_statistic",
]

#: Largest smaller-sample size enumerated by :func:`barnard_exact_pvalues`.
MAX_EXACT_N = 1000
#: ``gamma`` of Berger and Boos' refinement used by the separation test.
BERGER_BOOS_GAMMA = 1e-3
#: Grid points per standard deviation of the larger sample's proportion.
GRID_PER_SD = 2
#: Fewest grid points on ``theta`` in ``[0, pi/4]``.
GRID_MIN = 32
#: Local maxima of the grid refined by golden-section search.
REFINE = 3
#: Width in ``theta`` at which the golden-section search stops.
THETA_TOL = 1e-6
#: Relative tolerance of ties in the statistic.
TIE_RTOL = 1e-10
#: Largest number of values (entries x grid points) evaluated at once.
MAX_BLOCK = 2_000_000

_QUARTER = np.pi / 4
_GOLD = (np.sqrt(5.0) - 1.0) / 2.0


def score_statistic(x_a, n_a, x_b, n_b):
    """Pooled score statistic of two proportions (0 where the pooled rate is 0 or 1).

    Parameters
    ----------
    x_a, n_a, x_b, n_b : array-like
        Successes and sizes of the two samples (any broadcast shape; sizes > 0).

    Returns
    -------
    z : ndarray
        ``(x_a / n_a - x_b / n_b) / sqrt(p (1 - p) (1 / n_a + 1 / n_b))`` with the
        pooled rate ``p``; 0 when the two rates are equal.

    Examples
    --------
    >>> from sklearn_smallfair.stats._exact import score_statistic
    >>> float(score_statistic(80, 100, 60, 100)).__round__(4)
    3.0861
    >>> score_statistic([0, 5], 5, [0, 100], 100).tolist()
    [0.0, 0.0]
    """
    xa, na, xb, nb = (np.asarray(v, dtype=np.float64) for v in (x_a, n_a, x_b, n_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (xa + xb) / (na + nb)
        d = xa / na - xb / nb
        var = p * (1.0 - p) * (1.0 / na + 1.0 / nb)
        return np.where((var > 0) & (d != 0), d / np.sqrt(var), 0.0)


def _tails(i, ns, nl, t, t_right=None):
    """Bounds ``L`` (last ``j`` with ``z >= t``) and ``U`` (first with ``z <=
    -t_right``, ``t_right`` defaulting to ``t``).

    ``L = -1`` and ``U = nl + 1`` when the tail is empty (a threshold of ``inf``
    empties it). Vectorized binary search over ``j`` in ``[0, nl]`` (``z(i, .)`` is
    non-increasing).
    """
    t_right = t if t_right is None else t_right
    steps = int(np.ceil(np.log2(np.max(nl) + 2))) + 1
    # left tail: predicate z(i, j) >= t holds on [0, L]
    lo = np.full(i.shape, -1, dtype=np.int64)
    hi = nl + 1
    for _ in range(steps):
        mid = (lo + hi) // 2
        ok = score_statistic(i, ns, mid, nl) >= t
        open_ = hi - lo > 1
        lo = np.where(open_ & ok, mid, lo)
        hi = np.where(open_ & ~ok, mid, hi)
    left = lo
    # right tail: predicate z(i, j) <= -t holds on [U, nl]
    lo = np.full(i.shape, -1, dtype=np.int64)
    hi = nl + 1
    for _ in range(steps):
        mid = (lo + hi) // 2
        ok = score_statistic(i, ns, mid, nl) <= -t_right
        open_ = hi - lo > 1
        hi = np.where(open_ & ok, mid, hi)
        lo = np.where(open_ & ~ok, mid, lo)
    return left, hi


class _Block:
    """The enumerated counts of a block of tables, ready to evaluate ``P_pi``."""

    def __init__(self, ns, nl, t, t_right=None):
        self.m = ns.shape[0]
        sizes = ns + 1
        self.table = np.repeat(np.arange(self.m), sizes)
        self.starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        i = np.arange(self.table.shape[0]) - self.starts[self.table]
        e_ns, e_nl = ns[self.table], nl[self.table]
        t_right = t if t_right is None else t_right
        left, right = _tails(i, e_ns, e_nl, t[self.table], t_right[self.table])
        self.i = i.astype(np.float64)[:, None]
        self.ns = e_ns.astype(np.float64)[:, None]
        self.nl = e_nl.astype(np.float64)[:, None]
        self.logc = (
            gammaln(self.ns + 1) - gammaln(self.i + 1) - gammaln(self.ns - self.i + 1)
        )
        # F(L) = I_{1-pi}(n_l - L, L + 1) and P(X >= U) = I_pi(U, n_l - U + 1),
        # both 1 at the ends (L = n_l, U = 0) and 0 for an empty tail
        self.left_a = (e_nl - left).astype(np.float64)[:, None]
        self.left_b = (left + 1).astype(np.float64)[:, None]
        self.left_kind = np.select([left < 0, left >= e_nl], [0, 2], 1)[:, None]
        self.right_a = right.astype(np.float64)[:, None]
        self.right_b = (e_nl - right + 1).astype(np.float64)[:, None]
        self.right_kind = np.select([right > e_nl, right <= 0], [0, 2], 1)[:, None]

    def pvalue(self, theta):
        """``P_pi`` at ``pi = sin(theta)^2``; ``theta`` of shape (m, k)."""
        pi = np.sin(theta) ** 2
        pe = pi[self.table]
        with np.errstate(divide="ignore", invalid="ignore"):
            log_pi, log_1mpi = np.log(pi)[self.table], np.log1p(-pi)[self.table]
            logpmf = (
                self.logc
                + np.where(self.i > 0, self.i * log_pi, 0.0)
                + np.where(self.ns > self.i, (self.ns - self.i) * log_1mpi, 0.0)
            )
            left = betainc(self.left_a, self.left_b, 1.0 - pe)
            right = betainc(self.right_a, self.right_b, pe)
        tails = np.where(self.left_kind == 1, left, self.left_kind / 2.0)
        tails += np.where(self.right_kind == 1, right, self.right_kind / 2.0)
        return np.add.reduceat(np.exp(logpmf) * tails, self.starts, axis=0)


def _golden_max(block, a, b):
    """Golden-section maximization of ``P`` on brackets ``[a, b]`` (shape (m, k))."""
    c = b - _GOLD * (b - a)
    d = a + _GOLD * (b - a)
    fc, fd = block.pvalue(c), block.pvalue(d)
    best = np.maximum(fc, fd)
    while np.max(b - a) > THETA_TOL:
        up = fc < fd  # the maximum is in [c, b]
        a = np.where(up, c, a)
        b = np.where(up, b, d)
        c_new = np.where(up, d, b - _GOLD * (b - a))
        d_new = np.where(up, a + _GOLD * (b - a), c)
        f_new = block.pvalue(np.where(up, d_new, c_new))
        fc, fd = np.where(up, fd, f_new), np.where(up, f_new, fc)
        c, d = c_new, d_new
        best = np.maximum(best, np.maximum(fc, fd))
    return best.max(axis=1)


def _grid_sizes(nl, lo, hi):
    """Grid points of each table: ``GRID_PER_SD`` per standard deviation of the
    larger sample's proportion (``1 / (2 sqrt(n_l))`` in ``theta``) over
    ``[lo, hi]``, at least ``GRID_MIN``."""
    return np.maximum(
        GRID_MIN, np.ceil(GRID_PER_SD * 2.0 * np.sqrt(nl) * (hi - lo))
    ).astype(np.int64)


def _block_pvalues(ns, nl, t, lo, hi, t_right=None):
    """``sup P_pi`` over ``theta`` in ``[lo, hi]`` for a block of tables."""
    block = _Block(ns, nl, t, t_right)
    n_grid = int(_grid_sizes(nl, lo, hi).max())
    step = ((hi - lo) / (n_grid - 1))[:, None]
    theta = lo[:, None] + step * np.arange(n_grid)
    values = block.pvalue(theta)
    # local maxima of the grid, the ends included when they top their neighbour
    edge = np.full((block.m, 1), -np.inf)
    padded = np.concatenate([edge, values, edge], axis=1)
    peak = (values >= padded[:, :-2]) & (values >= padded[:, 2:])
    score = np.where(peak, values, -1.0)
    top = np.argsort(-score, axis=1, kind="stable")[:, :REFINE]
    centre = np.take_along_axis(theta, top, axis=1)
    refined = _golden_max(
        block,
        np.maximum(centre - step, lo[:, None]),
        np.minimum(centre + step, hi[:, None]),
    )
    return np.maximum(values.max(axis=1), refined)


def _nuisance_range(successes, n, gamma, fold=True):
    """``theta`` range of the common rate: all of ``[0, pi/4]`` (``gamma = 0``),
    or the folded Clopper-Pearson ``1 - gamma`` interval of the pooled rate;
    ``fold=False`` (one-sided regions, not symmetric) keeps ``[0, pi/2]``."""
    if gamma == 0:
        zeros = np.zeros(n.shape)
        return zeros, zeros + (_QUARTER if fold else 2 * _QUARTER)
    low = np.where(
        successes > 0, betaincinv(successes, n - successes + 1, gamma / 2), 0.0
    )
    high = np.where(
        successes < n, betaincinv(successes + 1, n - successes, 1 - gamma / 2), 1.0
    )
    if not fold:
        return np.arcsin(np.sqrt(low)), np.arcsin(np.sqrt(high))
    # P_pi = P_{1 - pi}: fold the interval onto [0, 1/2]
    below = high <= 0.5
    above = low >= 0.5
    lo = np.where(below, low, np.where(above, 1 - high, np.minimum(low, 1 - high)))
    hi = np.where(below, high, np.where(above, 1 - low, 0.5))
    return np.arcsin(np.sqrt(lo)), np.arcsin(np.sqrt(hi))


def barnard_exact_pvalues(x_a, n_a, x_b, n_b, *, gamma=0.0, alternative="two-sided"):
    """Exact unconditional (Barnard, score-ordered) p-values.

    Parameters
    ----------
    x_a, n_a, x_b, n_b : array-like of int
        Successes and sizes of the two samples, broadcast to one shape. The
        smaller of ``n_a`` and ``n_b`` must be at most ``MAX_EXACT_N``.
    gamma : float, default=0.0
        ``0``: Barnard's test, the supremum over every common rate in ``[0, 1]``.
        ``gamma > 0``: Berger and Boos' test, the supremum over the
        Clopper-Pearson ``1 - gamma`` confidence interval of the common rate
        (from the pooled count), plus ``gamma``. Both are exact; the second is
        not driven by common rates the data exclude (near 0 or 1 the statistic
        is lumpy and its tail heavier), so it is less conservative.
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        The region: ``|z| >= |z_obs|``, ``z >= z_obs`` (sample ``a``'s rate the
        larger) or ``z <= z_obs``. The one-sided regions are not symmetric in the
        common rate, so their supremum runs over all of it (or the unfolded
        confidence interval).

    Returns
    -------
    pvalue : ndarray
        ``sup_pi P_pi(|z| >= |z_obs|)`` (``+ gamma``, at most 1); NaN where a
        sample is empty.

    Examples
    --------
    >>> from scipy.stats import barnard_exact
    >>> from sklearn_smallfair.stats._exact import barnard_exact_pvalues
    >>> barnard_exact_pvalues([7, 0], [12, 10], [2, 400], [10, 500]).round(4)
    array([0.0746, 0.0074])
    >>> round(float(barnard_exact([[7, 2], [5, 8]]).pvalue), 4)
    0.0746
    >>> barnard_exact_pvalues([7, 0], [12, 10], [2, 400], [10, 500],
    ...                       gamma=0.001).round(4)
    array([0.0756, 0.001 ])
    """
    xa, na, xb, nb = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.int64) for v in (x_a, n_a, x_b, n_b))
    )
    shape = xa.shape
    xa, na, xb, nb = (v.ravel() for v in (xa, na, xb, nb))
    out = np.full(xa.shape, np.nan)
    defined = (na > 0) & (nb > 0)
    z = score_statistic(xa, na, xb, nb)
    t = np.abs(z)
    if alternative == "two-sided":
        out[defined & (t == 0)] = 1.0
        todo = np.flatnonzero(defined & (t > 0))
    else:
        todo = np.flatnonzero(defined)
    swap = na[todo] > nb[todo]
    ns = np.where(swap, nb[todo], na[todo])
    nl = np.where(swap, na[todo], nb[todo])
    if ns.size and ns.max() > MAX_EXACT_N:
        raise ValueError(
            f"the exact test enumerates the smaller sample, at most {MAX_EXACT_N} "
            f"people; got {int(ns.max())}."
        )
    if alternative == "two-sided":
        threshold = t[todo] * (1.0 - TIE_RTOL)
        threshold_right = threshold
    else:
        # the statistic of the enumerated (smaller) sample first, z_s = -z when
        # swapped: "greater" is z_s >= z_s_obs (the left region in j) unswapped,
        # z_s <= z_s_obs (the right region) swapped; "less" the other way
        zs = np.where(swap, -z[todo], z[todo])
        tol = TIE_RTOL * np.abs(zs)
        left = (alternative == "greater") != swap
        threshold = np.where(left, zs - tol, np.inf)
        threshold_right = np.where(left, np.inf, -zs - tol)
    lo, hi = _nuisance_range(
        xa[todo] + xb[todo],
        na[todo] + nb[todo],
        gamma,
        fold=alternative == "two-sided",
    )
    grid = _grid_sizes(nl, lo, hi)
    # blocks of tables with similar grids, at most MAX_BLOCK values each
    order = np.lexsort((ns, grid))
    start = 0
    while start < order.shape[0]:
        stop = start + 1
        entries = ns[order[start]] + 1
        while stop < order.shape[0]:
            k = order[stop]
            if (entries + ns[k] + 1) * grid[k] > MAX_BLOCK:
                break
            entries += ns[k] + 1
            stop += 1
        sel = order[start:stop]
        out[todo[sel]] = gamma + _block_pvalues(
            ns[sel], nl[sel], threshold[sel], lo[sel], hi[sel], threshold_right[sel]
        )
        start = stop
    return np.clip(out, 0.0, 1.0).reshape(shape)
