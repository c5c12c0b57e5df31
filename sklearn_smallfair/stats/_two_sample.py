"""The default law of the MATCH test: the group against a reference that is a sample.

The published MATCH test asks whether the group's whole confusion matrix could be a
draw of its size from the reference's proportions, taken as known. Two things make
that law mislead an audit: the reference ("rest", another group) is itself a
sample, so its noise is read as the group's gap, and a difference in prevalence or
in the number of predicted positives moves the law of a rate whose denominator is
not fixed. The default law here removes both.

Proportions (binomial metrics and joint ratios)
-----------------------------------------------
A metric ``x / k`` -- ``k`` the group's denominator of the metric (its positives
for ``tpr``, its predicted positives for ``ppv``, its size for ``acc``) and ``x``
the numerator -- is compared with the reference's ``y / m`` by the pooled score
statistic ``z(x, y)`` of two proportions (:func:`._exact.score_statistic`),
conditional on both denominators. Its law is evaluated exactly at the pooled rate
``pi = (x + y) / (k + m)``:

``P(z(X, Y) >= z_obs)`` with ``X ~ Bin(k, pi)``, ``Y ~ Bin(m, pi)`` independent,

the "E" (estimated) test of Storer and Kim (1990, JASA 85, "Exact properties of
some exact test statistics for comparing two binomial proportions") and
Krishnamoorthy and Thomson (2004). For every ``x`` the set of ``y`` with ``z >=
t`` is ``y <= L_x`` (``z`` is non-increasing in ``y``), so a tail is the sum over
``x`` of ``Bin(x; k, pi)`` times one binomial CDF of ``Y``: ``O(sqrt(k))`` terms on
the window of ``X`` (:func:`._binomial.window`), however large the reference.
Where the group's count has a variance above ``NORMAL_MIN_VARIANCE`` (10^6, a
group of millions of people), or its window holds more than ``MAX_TERMS``
values, the statistic's normal law with a correction for its skewness is used.
The measured size of the test over group sizes 5 to 5,000, references of 5 to
100,000 people and prevalence differences is in the user guide (calibration
page); Berger and Boos' exact unconditional test (the separation test's
default) bounds the size for every common rate but costs about 100 evaluations
of this law per table.

Planning uses the same statistic: the region ``|z| >= c`` whose probability at the
reference's rate is the level (``c`` found by bisection on the exact law), then its
probability when the group's rate differs, with the reference's count random
too, so that the stated power holds over the reference's noise.

Metrics that are not proportions have their own law (:mod:`._permutation_law`).
"""

import functools

import numpy as np
from scipy.special import gammaln, ndtr, ndtri

from ._binomial import _cdf, _sf, window
from ._exact import (
    MAX_EXACT_N,
    TIE_RTOL,
    _nuisance_range,
    barnard_exact_pvalues,
    score_statistic,
)

__all__ = [
    "EXACT_MAX_VARIANCE",
    "GAMMA",
    "MAX_TERMS",
    "NORMAL_MIN_VARIANCE",
    "acceptance_range",
    "critical_values",
    "proportion_counts",
    "region_probability",
    "tails",
    "two_sided",
]

#: Most values of the group's count enumerated per table; the normal law beyond.
MAX_TERMS = 200_000
#: Count variance of the group above which the tails take the normal law with
#: its skewness correction: the exact law's atoms are then below a thousandth of
#: its standard deviation, and the two laws' tails agree to 2 parts in 10^3 of
#: the tail up to z = 4 (absolute differences below 1e-4).
NORMAL_MIN_VARIANCE = 1e6
#: Count variance of the smaller sample below which its atoms are coarse enough
#: that only the exact test keeps the level (the E test splits them by the other
#: sample's noise): Berger and Boos' test below, the E test above.
EXACT_MAX_VARIANCE = 100.0
#: ``gamma`` of Berger and Boos' test here: its p-values are at least ``gamma``,
#: so it must sit far below the per-test levels of corrected families (an audit
#: of 60 groups and 3 metrics tests each at 2.8e-4 under Bonferroni).
GAMMA = 1e-6
_CHUNK = 1 << 20  # enumerated values evaluated at once
_CRITICAL_STEPS = 24  # bisection steps of a critical value
_SUP_POINTS = 9  # common rates across the nuisance interval of a critical value
_THETA_STEPS = 30  # bisection steps of a detectable rate
_RANGE_ROUNDS = 3  # rounds of the ends of an acceptance range


# =====================================================================================
# Proportions
# =====================================================================================
def proportion_counts(metric, cms):
    """``(x, k)``: numerator and denominator counts of a proportion metric."""
    cms = np.asarray(cms)
    x = cms[..., list(metric.numerator)].sum(axis=-1)
    k = cms[..., list(metric.denominator)].sum(axis=-1)
    return x, k


def _search(n_b, predicate_of_j, first):
    """Vectorized binary search over ``j`` in ``[0, n_b]``.

    ``predicate_of_j(j)`` is monotone in ``j``: true on a prefix (``first=False``:
    returns the last ``j`` where it holds, -1 if none) or on a suffix
    (``first=True``: the first ``j`` where it holds, ``n_b + 1`` if none).
    """
    steps = int(np.ceil(np.log2(float(np.max(n_b, initial=0)) + 2))) + 1
    lo = np.full(n_b.shape, -1, dtype=np.int64)
    hi = n_b + 1
    for _ in range(steps):
        open_ = hi - lo > 1
        if not open_.any():
            break
        mid = (lo + hi) // 2
        ok = predicate_of_j(mid)
        if first:
            hi = np.where(open_ & ok, mid, hi)
            lo = np.where(open_ & ~ok, mid, lo)
        else:
            lo = np.where(open_ & ok, mid, lo)
            hi = np.where(open_ & ~ok, mid, hi)
    return hi if first else lo


def _log_comb(x, n):
    """``log C(n, x)`` (the rate-free part of :func:`_log_pmf`): from one table
    of ``gammaln(v + 1)`` over ``v`` in ``[0, max n]`` when the counts are whole,
    in range and not too few for it (the same values as computed one by one)."""
    x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n, np.float64))
    top = float(n.max()) if n.size else 0.0
    if 0 < top <= min(_COMB_TABLE_MAX, 4 * n.size + 1024):
        xi, ni = x.astype(np.int64), n.astype(np.int64)
        if (xi == x).all() and (ni == n).all() and (xi >= 0).all() and (xi <= ni).all():
            g = gammaln(np.arange(int(top) + 1) + 1.0)
            return g[ni] - g[xi] - g[ni - xi]
    with np.errstate(divide="ignore", invalid="ignore"):
        return gammaln(n + 1.0) - gammaln(x + 1.0) - gammaln(n - x + 1.0)


_COMB_TABLE_MAX = 1 << 24  # largest size of a table of gammaln


def _log_pmf(x, n, p, comb=None):
    """``log Bin(x; n, p)``; ``comb``: ``_log_comb(x, n)`` if already known."""
    if comb is None:
        comb = _log_comb(x, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (
            comb
            + np.where(x > 0, x * np.log(p), 0.0)
            + np.where(n > x, (n - x) * np.log1p(-p), 0.0)
        )
    return np.where(np.isnan(out), -np.inf, out)


def _normal_region(n_a, n_b, t_hi, t_lo, pi_a, pi_b):
    """``P(z >= t_hi)`` and ``P(z <= -t_lo)`` by the normal law of the difference
    of the two rates with a Cornish-Fisher correction for its skewness.

    ``D = X / n_a - Y / n_b`` has mean ``d``, variance ``v`` and third cumulant
    ``k3 = pi_a (1 - pi_a) (1 - 2 pi_a) / n_a^2 - pi_b (1 - pi_b) (1 - 2 pi_b) /
    n_b^2``; ``z >= t`` is ``D >= t s0`` with ``s0`` the pooled standard error at
    the common rate the test would estimate. With ``u`` the standardized bound
    and ``g = k3 / v^1.5``, the tail is ``Phi(-(u - g (u^2 - 1) / 6))``.
    """
    d = pi_a - pi_b
    pooled = (n_a * pi_a + n_b * pi_b) / (n_a + n_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
        va, vb = pi_a * (1 - pi_a) / n_a, pi_b * (1 - pi_b) / n_b
        sd = np.sqrt(va + vb)
        g = (va * (1 - 2 * pi_a) / n_a - vb * (1 - 2 * pi_b) / n_b) / sd**3
        u_hi = (t_hi * s0 - d) / sd
        u_lo = (-t_lo * s0 - d) / sd
        upper = ndtr(-(u_hi - g * (u_hi**2 - 1) / 6))
        lower = ndtr(u_lo - g * (u_lo**2 - 1) / 6)
        upper = np.where(np.isposinf(t_hi), 0.0, upper)
        lower = np.where(np.isposinf(t_lo), 0.0, lower)
    degenerate = ~(sd > 0) | ~(s0 > 0)
    upper = np.where(degenerate, ((t_hi <= 0) | (d > 0)).astype(float), upper)
    lower = np.where(degenerate, ((t_lo <= 0) | (d < 0)).astype(float), lower)
    return np.nan_to_num(upper, nan=0.0), np.nan_to_num(lower, nan=0.0)


def _normal_critical(k, m, pi, level):
    """One-sided critical values ``(c_hi, c_lo)`` of the normal law with the
    Cornish-Fisher correction (:func:`_normal_region`) at the common rate."""
    z = -ndtri(np.minimum(level, 0.5))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = pi * (1 - pi) * (1 / k + 1 / m)
        g = pi * (1 - pi) * (1 - 2 * pi) * (1 / k**2 - 1 / m**2) / v**1.5
    g = np.nan_to_num(g)
    return z + g * (z**2 - 1) / 6, z - g * (z**2 - 1) / 6


class _Region:
    """The region ``z >= t_hi`` or ``z <= -t_lo`` of tables ``(n_a, n_b)``, on the
    values ``x`` of the first sample: per ``x`` the last ``y`` with ``z >= t_hi``
    (``L``) and the first with ``z <= -t_lo`` (``U``); ``inf`` empties a side.

    ``x`` runs over ``[x_lo, x_hi]`` per table (the window of the laws that will
    be evaluated). Its probability under any pair of rates is then one binomial
    pmf of ``x`` and two binomial CDFs of ``y`` per value.
    """

    def __init__(self, n_a, n_b, t_hi, t_lo, x_lo, x_hi):
        sizes = x_hi - x_lo + 1
        self.table = np.repeat(np.arange(n_a.shape[0]), sizes)
        self.starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        x = np.arange(self.table.shape[0]) - self.starts[self.table] + x_lo[self.table]
        self.x = x.astype(np.float64)
        self.na = n_a[self.table].astype(np.float64)
        self.nb = n_b[self.table].astype(np.float64)
        nb = n_b[self.table].astype(np.int64)
        th, tl = t_hi[self.table], t_lo[self.table]
        xs, na, nbf = self.x, self.na, self.nb
        self.L = _search(nb, lambda j: score_statistic(xs, na, j, nbf) >= th, False)
        self.U = _search(nb, lambda j: score_statistic(xs, na, j, nbf) <= -tl, True)
        self.L = np.where(np.isposinf(th), -1, self.L)
        self.U = np.where(np.isposinf(tl), nb + 1, self.U)

    def probability(self, pi_a, pi_b):
        """``(P(z >= t_hi), P(z <= -t_lo))`` per table; rates of shape (T,)."""
        w = np.exp(_log_pmf(self.x, self.na, pi_a[self.table]))
        pb = pi_b[self.table]
        up = np.add.reduceat(w * _cdf(self.L, self.nb, pb), self.starts)
        down = np.add.reduceat(w * _sf(self.U, self.nb, pb), self.starts)
        return up, down


def _chunks(sizes):
    """Slices of consecutive tables holding at most ``_CHUNK`` values each."""
    start, T = 0, sizes.shape[0]
    cum = np.cumsum(sizes)
    while start < T:
        base = cum[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(cum, base + _CHUNK, side="right")))
        yield slice(start, stop)
        start = stop


def region_probability(n_a, n_b, t_hi, t_lo, pi_a, pi_b):
    """``P(z >= t_hi)`` and ``P(z <= -t_lo)`` for ``z = z(X, Y)`` (score statistic),
    ``X ~ Bin(n_a, pi_a)``, ``Y ~ Bin(n_b, pi_b)`` independent.

    All arguments broadcast to one shape (T,); a threshold of ``inf`` empties its
    side. Sizes must be positive. Exact on the window of ``X`` (mass left out at
    most ``WINDOW_MASS``) while it holds at most ``MAX_TERMS`` values, the normal
    law of ``z`` beyond.
    """
    n_a, n_b, t_hi, t_lo, pi_a, pi_b = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(n_a, n_b, t_hi, t_lo, pi_a, pi_b)
    )
    T = n_a.shape[0]
    upper, lower = np.zeros(T), np.zeros(T)
    if T == 0:
        return upper, lower
    lo, hi = window(n_a, pi_a)
    sizes = hi - lo + 1
    big = (sizes > MAX_TERMS) | (n_a * pi_a * (1 - pi_a) > NORMAL_MIN_VARIANCE)
    if big.any():
        upper[big], lower[big] = _normal_region(
            n_a[big], n_b[big], t_hi[big], t_lo[big], pi_a[big], pi_b[big]
        )
    todo = np.flatnonzero(~big)
    for part in _chunks(sizes[todo]):
        sel = todo[part]
        region = _Region(n_a[sel], n_b[sel], t_hi[sel], t_lo[sel], lo[sel], hi[sel])
        upper[sel], lower[sel] = region.probability(pi_a[sel], pi_b[sel])
    return np.clip(upper, 0.0, 1.0), np.clip(lower, 0.0, 1.0)


def exact_tables(x_a, n_a, x_b, n_b):
    """Which tables take the exact test: the smaller sample has at most
    ``MAX_EXACT_N`` people and a count variance below ``EXACT_MAX_VARIANCE``."""
    small = np.minimum(n_a, n_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        pi = (x_a + x_b) / (n_a + n_b)
    return (small <= MAX_EXACT_N) & (small * pi * (1 - pi) < EXACT_MAX_VARIANCE)


def tails(x_a, n_a, x_b, n_b):
    """One-sided p-values of the group's rate against the reference's.

    Parameters
    ----------
    x_a, n_a : array-like of int, shape (T,)
        The group's numerator and denominator counts.
    x_b, n_b : array-like of int, shape (T,)
        The reference's.

    Returns
    -------
    lower, upper : ndarray of shape (T,)
        The p-values of ``z <= z_obs`` (the group's rate lower) and ``z >=
        z_obs``; NaN where a denominator is 0.
    exact : ndarray of bool, shape (T,)
        Where Berger and Boos' exact unconditional test was used (else the
        E test at the pooled rate).

    Examples
    --------
    >>> from sklearn_smallfair.stats._two_sample import tails
    >>> lower, upper, exact = tails([2, 300], [10, 1000], [60, 600], [100, 2000])
    >>> lower.round(4), exact
    (array([0.0135, 0.5064]), array([ True, False]))
    """
    xa, na, xb, nb = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(x_a, n_a, x_b, n_b)
    )
    T = xa.shape[0]
    lower, upper = np.full(T, np.nan), np.full(T, np.nan)
    ok = (na > 0) & (nb > 0)
    exact = ok & exact_tables(xa, na, xb, nb)
    if exact.any():
        args = [v[exact].astype(np.int64) for v in (xa, na, xb, nb)]
        for side, out in (("less", lower), ("greater", upper)):
            out[exact] = barnard_exact_pvalues(*args, gamma=GAMMA, alternative=side)
    rest = ok & ~exact
    if rest.any():
        a, n1, b, n2 = xa[rest], na[rest], xb[rest], nb[rest]
        pi = (a + b) / (n1 + n2)
        z = score_statistic(a, n1, b, n2)
        tol = TIE_RTOL * np.abs(z)
        upper[rest], lower[rest] = region_probability(n1, n2, z - tol, -z - tol, pi, pi)
    return np.minimum(lower, 1.0), np.minimum(upper, 1.0), exact


def two_sided(lower, upper):
    """``min(1, 2 min(lower, upper))``."""
    with np.errstate(invalid="ignore"):
        return np.minimum(1.0, 2.0 * np.minimum(lower, upper))


# =====================================================================================
# Critical values, ranges, power and detectable gaps of proportions
# =====================================================================================
def _rate_grid(s, N, exact):
    """Common rates over which a critical value is maximized, shape (T, R): the
    pooled rate ``s / N`` for the E test; for the exact test ``_SUP_POINTS``
    rates across the Clopper-Pearson ``1 - gamma`` interval of ``s`` of ``N``
    (unfolded: the regions are one-sided)."""
    pi = s / N
    grid = np.repeat(pi[:, None], _SUP_POINTS, axis=1)
    if exact.any():
        lo, hi = _nuisance_range(
            s[exact].astype(np.int64),
            N[exact].astype(np.int64),
            GAMMA,
            fold=False,
        )
        theta = lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, _SUP_POINTS)
        grid[exact] = np.sin(theta) ** 2
    return grid


class _Laws:
    """The laws of tables ``(k, m)`` at several common rates each (``rates``,
    shape (T, R)), computed once for a search over regions: per rate the pmf of
    the first sample on ``[x_lo, x_hi]`` and the CDF of the second on its window
    (a cumulative sum of its pmf), so that the probability of a region is
    lookups and sums, not incomplete beta functions.

    A bisection over the thresholds (:meth:`sup` then :meth:`narrow`) keeps, per
    value of the first sample, the bounds of ``L`` and ``U`` at the ends of each
    table's bracket of thresholds, so that each step searches only between them.
    """

    def __init__(self, k, m, rates, x_lo, x_hi):
        self.k, self.m, self.R = k, m, rates.shape[1]
        sizes = x_hi - x_lo + 1
        self.table = np.repeat(np.arange(k.shape[0]), sizes)
        self.starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        x = np.arange(self.table.shape[0]) - self.starts[self.table] + x_lo[self.table]
        self.x = x.astype(np.float64)
        self.na, self.nb = k[self.table], m[self.table]
        self.rows = None
        comb = _log_comb(self.x, self.na)
        self.pmf = np.stack(
            [
                np.exp(_log_pmf(self.x, self.na, rates[self.table, r], comb))
                for r in range(self.R)
            ]
        )  # (R, values)
        y_lo, y_hi = window(m[:, None], rates)  # (T, R)
        self.y_lo, self.y_hi = y_lo, y_hi
        lengths = (y_hi - y_lo + 1).ravel()
        self.offsets = np.concatenate(([0], np.cumsum(lengths)[:-1])).reshape(
            y_lo.shape
        )
        total = int(lengths.sum())
        offsets = self.offsets.ravel()
        y = np.arange(total) + np.repeat(y_lo.ravel() - offsets, lengths)
        yf = y.astype(np.float64)
        mt = np.repeat(np.broadcast_to(m[:, None], y_lo.shape).ravel(), lengths)
        with np.errstate(divide="ignore", invalid="ignore"):
            # the terms of _log_pmf, each rate's logarithms taken once
            log_p = np.repeat(np.log(rates).ravel(), lengths)
            log_q = np.repeat(np.log1p(-rates).ravel(), lengths)
            log_y = (
                _log_comb(yf, mt)
                + np.where(yf > 0, yf * log_p, 0.0)
                + np.where(mt > yf, (mt - yf) * log_q, 0.0)
            )
        pmf_y = np.exp(np.where(np.isnan(log_y), -np.inf, log_y))
        # cumulative sums per (table, rate): F(y) on the window
        cum = np.cumsum(pmf_y)
        base = np.concatenate(([0.0], cum))[offsets]
        self.cdf = cum - np.repeat(base, lengths)
        # per (table, rate) the CDF padded: 0 below the window, F(y_lo) ...
        # F(y_hi - 1), then 1 from y_hi on (lengths + 1 values)
        off_ext = offsets + np.arange(lengths.size)
        ext = np.zeros(total + lengths.size)
        ext[np.arange(total) + np.repeat(np.arange(1, lengths.size + 1), lengths)] = (
            self.cdf
        )
        ext[off_ext + lengths] = 1.0
        self.cdf_ext, self.sf_ext = ext, 1.0 - ext
        # per rate and value of the first sample: its table's window of y
        self.lo2 = np.ascontiguousarray(y_lo[self.table].T) - 1
        self.span2 = np.ascontiguousarray((y_hi - y_lo)[self.table].T) + 1
        self.off2 = np.ascontiguousarray(off_ext.reshape(y_lo.shape)[self.table].T)
        # bounds of L (last y with z >= c) and U (first y with z <= -c) at the
        # ends of each table's bracket of thresholds (c = 0 and c = top first)
        nb_int = self.nb.astype(np.int64)
        self.nb_int = nb_int
        self.L_lo, self.L_hi = np.full(nb_int.shape, -1, np.int64), nb_int.copy()
        self.U_lo, self.U_hi = np.zeros(nb_int.shape, np.int64), nb_int + 1

    def _cdf_at(self, L, table):
        """``P(Y <= L)`` (``table = self.cdf_ext``) or ``1 - P(Y <= L)``
        (``self.sf_ext``) at every rate (rows) for every value of the first
        sample."""
        return table[self.off2 + np.clip(L - self.lo2, 0, self.span2)]

    def sup(self, c_hi, c_lo):
        """The largest probabilities over the rates of ``z >= c_hi`` and of
        ``z <= -c_lo``, per table (thresholds within the brackets of
        :meth:`narrow`)."""
        th, tl = c_hi[self.table], c_lo[self.table]
        x, na, nb = self.x, self.na.astype(np.float64), self.nb.astype(np.float64)

        def upper(i, j):
            return score_statistic(x[i], na[i], j, nb[i]) >= th[i]

        def lower(i, j):
            return score_statistic(x[i], na[i], j, nb[i]) <= -tl[i]

        # L: the last j with z >= th, in [L_lo, L_hi]; U: the first j with
        # z <= -tl, in [U_lo, U_hi]
        def guess_L(i):
            return _root_guess(x[i], na[i], nb[i], th[i], -1.0)

        def guess_U(i):
            return _root_guess(x[i], na[i], nb[i], tl[i], 1.0)

        self.L = _bracket_search(self.L_lo, self.L_hi + 1, upper, False, guess_L)
        self.U = _bracket_search(self.U_lo - 1, self.U_hi, lower, True, guess_U)
        w = self.pmf
        u = np.add.reduceat(w * self._cdf_at(self.L, self.cdf_ext), self.starts, axis=1)
        d = np.add.reduceat(
            w * self._cdf_at(self.U - 1, self.sf_ext), self.starts, axis=1
        )
        zero = np.zeros(self.k.shape)
        return np.maximum(zero, u.max(axis=0)), np.maximum(zero, d.max(axis=0))

    def narrow(self, ok_hi, ok_lo):
        """After :meth:`sup`: per table, whether its last thresholds became the
        upper ends of their brackets (else the lower ends)."""
        oh, ol = ok_hi[self.table], ok_lo[self.table]
        self.L_lo = np.where(oh, self.L, self.L_lo)
        self.L_hi = np.where(oh, self.L_hi, self.L)
        self.U_hi = np.where(ol, self.U, self.U_hi)
        self.U_lo = np.where(ol, self.U_lo, self.U)


def _root_guess(x, na, nb, t, sign):
    """Estimate of ``L`` (``sign = -1``: the last ``j`` with ``z(x, j) >= t``) or
    ``U`` (``sign = 1``: the first ``j`` with ``z(x, j) <= -t``): a root of the
    quadratic in ``j`` of ``d^2 = t^2 p (1 - p) (1 / na + 1 / nb)``, rounded. Only
    a starting point of :func:`_bracket_search` (NaN where there is none)."""
    N = na + nb
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        K = t * t * (1.0 / na + 1.0 / nb)
        A = 1.0 / nb**2 + K / N**2
        B = -2.0 * x / (na * nb) - K / N + 2.0 * K * x / N**2
        C = x**2 / na**2 - K * x / N + K * x**2 / N**2
        root = (-B + sign * np.sqrt(B * B - 4.0 * A * C)) / (2.0 * A)
    return np.floor(root) if sign < 0 else np.ceil(root)


def _bracket_search(lo, hi, predicate, first, guess=None):
    """Binary search of a monotone predicate between per-element bounds.

    ``predicate(i, j)`` for elements ``i`` at values ``j``: true on a prefix
    (``first=False``: returns the last ``j`` where it holds; true at ``lo`` or
    ``lo`` a sentinel below, false at ``hi`` or ``hi`` a sentinel above) or on a
    suffix (``first=True``: the first ``j`` where it holds; false at ``lo``,
    true at ``hi``, or sentinels). Only the elements whose bounds are still
    apart are evaluated. ``guess(i)`` (floats, NaN for none): the predicate is first
    evaluated there and next to it, which settles most elements when it is
    close; the answer is the same whatever the guess.
    """
    lo, hi = lo.copy(), hi.copy()
    act = np.flatnonzero(hi - lo > 1)
    if guess is not None and act.size:
        g = guess(act)
        for _ in range(2):
            a, b = lo[act], hi[act]
            g = np.where(np.isfinite(g), np.clip(g, a + 1, b - 1), (a + b) // 2)
            j = g.astype(np.int64)
            ok = predicate(act, j)
            if first:
                hi[act], lo[act] = np.where(ok, j, b), np.where(ok, a, j)
                g = np.where(ok, j - 1, j + 1).astype(np.float64)
            else:
                lo[act], hi[act] = np.where(ok, j, a), np.where(ok, b, j)
                g = np.where(ok, j + 1, j - 1).astype(np.float64)
            keep = hi[act] - lo[act] > 1
            act, g = act[keep], g[keep]
            if not act.size:
                break
    while act.size:
        a, b = lo[act], hi[act]
        mid = (a + b) // 2
        ok = predicate(act, mid)
        if first:
            hi[act], lo[act] = np.where(ok, mid, b), np.where(ok, a, mid)
        else:
            lo[act], hi[act] = np.where(ok, mid, a), np.where(ok, b, mid)
        act = act[hi[act] - lo[act] > 1]
    return hi if first else lo


def critical_values(k, m, s, level):
    """One-sided critical values ``(c_hi, c_lo)`` of tables ``k`` against ``m``
    whose pooled count is ``s``: the smallest ``c`` with ``P(z >= c) <= level``
    (``P(z <= -c) <= level``), the probability at the pooled rate for the E test
    and its largest value across the nuisance interval plus ``gamma`` for the
    exact test. ``inf`` where only the empty region qualifies.

    The rejection regions of one-sided tests at ``level`` (of the two-sided test
    at ``2 level``) when the pooled count is ``s``; bisection on ``c``. Results
    are memoized per exact arguments (a bounded cache): the rounds of
    :func:`acceptance_range` ask for the same regions again, and so does a
    second audit of the same counts; repeated tables within one call (groups of
    one size) are computed once.
    """
    k, m, s, level = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(k, m, s, level)
    )
    rows = np.stack([k, m, s, level], axis=1)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    if distinct.shape[0] < k.size:  # many groups of one size share their tables
        c_hi, c_lo = critical_values(*distinct.T)
        inverse = inverse.ravel()
        return c_hi[inverse], c_lo[inverse]
    if k.size > _CACHE_MAX_TABLES:
        return _critical_values(k, m, s, level)
    c_hi, c_lo = _critical_cached(
        k.tobytes(), m.tobytes(), s.tobytes(), level.tobytes()
    )
    return c_hi.copy(), c_lo.copy()


_CACHE_MAX_TABLES = 10_000  # larger calls are not remembered


@functools.lru_cache(maxsize=64)
def _critical_cached(k, m, s, level):
    """:func:`_critical_values` of the arrays whose float64 bytes are given,
    remembered (read-only results)."""
    args = (np.frombuffer(v, dtype=np.float64) for v in (k, m, s, level))
    out = _critical_values(*args)
    for v in out:
        v.flags.writeable = False
    return out


def _critical_values(k, m, s, level):
    """:func:`critical_values` of float64 arrays of one shape (T,)."""
    N = k + m
    exact = _exact_regime(k, m, s / N)
    grid = _rate_grid(s, N, exact)  # (T, R)
    gamma = np.where(exact, GAMMA, 0.0)
    top = np.sqrt(N) + 1.0  # |z| <= sqrt(N)
    # the E test's regime: the normal law of z (its critical values, ranges and
    # power agree with the exact law's within the tolerances of the user guide)
    lo_w, hi_w = window(k[:, None], grid)
    x_lo, x_hi = lo_w.min(axis=1), hi_w.max(axis=1)
    big = ~exact | ((x_hi - x_lo + 1) > MAX_TERMS)
    lo_hi, hi_hi = np.zeros(k.shape), top.copy()
    lo_lo, hi_lo = np.zeros(k.shape), top.copy()
    todo = np.flatnonzero(~big)
    laws = []
    for part in _chunks(x_hi[todo] - x_lo[todo] + 1):
        sel = todo[part]
        laws.append(_Laws(k[sel], m[sel], grid[sel], x_lo[sel], x_hi[sel]))
        laws[-1].rows = sel
    for _ in range(_CRITICAL_STEPS if todo.size else 0):
        c_hi, c_lo = (lo_hi + hi_hi) / 2, (lo_lo + hi_lo) / 2
        up, down = np.zeros(k.shape), np.zeros(k.shape)
        for law in laws:
            up[law.rows], down[law.rows] = law.sup(c_hi[law.rows], c_lo[law.rows])
        up, down = up + gamma, down + gamma
        ok_hi, ok_lo = up <= level, down <= level
        for law in laws:
            law.narrow(ok_hi[law.rows], ok_lo[law.rows])
        hi_hi, lo_hi = np.where(ok_hi, c_hi, hi_hi), np.where(ok_hi, lo_hi, c_hi)
        hi_lo, lo_lo = np.where(ok_lo, c_lo, hi_lo), np.where(ok_lo, lo_lo, c_lo)
    c_hi = np.where(hi_hi >= top - 1e-9, np.inf, hi_hi)
    c_lo = np.where(hi_lo >= top - 1e-9, np.inf, hi_lo)
    n_hi, n_lo = _normal_critical(k, m, s / N, level)
    return np.where(big, n_hi, c_hi), np.where(big, n_lo, c_lo)


def _exact_regime(k, m, pi):
    """Tables whose smaller sample is small enough for the exact test and whose
    count variance is below ``EXACT_MAX_VARIANCE`` (see :func:`exact_tables`)."""
    small = np.minimum(k, m)
    return (small <= MAX_EXACT_N) & (small * pi * (1 - pi) < EXACT_MAX_VARIANCE)


class _PowerCurve:
    """Power of the two-sided test of tables ``(k, m)`` as a function of the
    group's rate: the region ``z >= c_hi`` or ``z <= -c_lo``, the reference's count
    ``Y ~ Bin(m, theta0)`` random too. The region is found once; each evaluation
    is one binomial pmf per value of the group's count (all of ``[0, k]``; the
    normal law of ``z`` where ``k + 1`` exceeds ``MAX_TERMS``)."""

    def __init__(self, k, m, theta0, c_hi, c_lo):
        self.k, self.m = k.astype(np.float64), m.astype(np.float64)
        self.theta0, self.c_hi, self.c_lo = theta0, c_hi, c_lo
        self.big = ((k + 1) > MAX_TERMS) | ~_exact_regime(k, m, theta0)
        self.small = np.flatnonzero(~self.big)
        self.parts = []
        sizes = k[self.small] + 1
        for part in _chunks(sizes):
            sel = self.small[part]
            region = _Region(
                k[sel],
                m[sel],
                c_hi[sel],
                c_lo[sel],
                np.zeros(sel.shape, np.int64),
                k[sel].astype(np.int64),
            )
            pb = theta0[sel][region.table]
            bracket = _cdf(region.L, region.nb, pb) + _sf(region.U, region.nb, pb)
            comb = _log_comb(region.x, region.na)
            self.parts.append((sel, region, bracket, comb))

    def __call__(self, theta):
        theta = np.broadcast_to(np.asarray(theta, dtype=np.float64), self.k.shape)
        out = np.zeros(self.k.shape)
        if self.big.any():
            b = self.big
            up, down = _normal_region(
                self.k[b],
                self.m[b],
                self.c_hi[b],
                self.c_lo[b],
                theta[b],
                self.theta0[b],
            )
            out[b] = up + down
        for sel, region, bracket, comb in self.parts:
            pa = theta[sel][region.table]
            w = np.exp(_log_pmf(region.x, region.na, pa, comb))
            out[sel] = np.add.reduceat(w * bracket, region.starts)
        return np.clip(out, 0.0, 1.0)


def _curve(k, m, theta0, theta1, level, alternative="two-sided"):
    """The power curve whose region is the test's at the pooled count expected
    when the group's rate is ``theta1``: both tails at ``level / 2``, or one tail
    at ``level`` (``"greater"``: the group's rate higher; ``"less"``)."""
    s = np.rint(k * theta1 + m * theta0)
    one = level if alternative != "two-sided" else level / 2.0
    c_hi, c_lo = critical_values(k, m, s, one)
    if alternative == "greater":
        c_lo = np.full(c_lo.shape, np.inf)
    elif alternative == "less":
        c_hi = np.full(c_hi.shape, np.inf)
    return _PowerCurve(k, m, theta0, c_hi, c_lo)


def _solve_theta(curve, theta0, side, target, steps=_THETA_STEPS):
    """Per table, the group rate on ``side`` (+1 up, -1 down) of ``theta0`` at
    which ``curve`` reaches ``target``; NaN where it never does."""
    end = np.where(side > 0, 1.0, 0.0)
    reach = curve(end) >= target
    lo, hi = theta0.copy(), end.copy()  # lo: below target, hi: at or above
    for _ in range(steps):
        mid = (lo + hi) / 2
        ok = curve(mid) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(reach, hi, np.nan)


def acceptance_range(k, y, m, level):
    """The group's scores ``x / k`` that the two-sided test at ``level`` accepts
    against the reference's ``y`` of ``m``: the region of the test at the pooled
    count at each end (found in ``_RANGE_ROUNDS`` rounds from the reference's
    rate).

    Per table ``(x_lo / k, x_hi / k)`` with ``x_lo`` the first count whose
    statistic is above ``-c_lo`` and ``x_hi`` the last below ``c_hi``, the
    critical values of :func:`critical_values` at ``level / 2`` per side. The
    test's own p-values use the observed pooled count, so a score within one
    count of an end can fall on either side of it. NaN where ``k`` or ``m`` is
    0.
    """
    k, y, m = (
        np.asarray(v, dtype=np.int64).ravel() for v in np.broadcast_arrays(k, y, m)
    )
    T = k.shape[0]
    low, high = np.full(T, np.nan), np.full(T, np.nan)
    ok = np.flatnonzero((k > 0) & (m > 0))
    if ok.size == 0:
        return low, high
    k, y, m = k[ok], y[ok], m[ok]
    kf, mf = k.astype(np.float64), m.astype(np.float64)
    x_lo = x_hi = np.rint(kf * (y / mf))
    for _ in range(_RANGE_ROUNDS):  # the region at the pooled count of each end
        c_hi = critical_values(kf, mf, x_hi + y, level / 2.0)[0]
        c_lo = critical_values(kf, mf, x_lo + y, level / 2.0)[1]
        x_hi = _search(k, lambda x, c=c_hi: score_statistic(x, kf, y, mf) < c, False)
        x_lo = (
            _search(k, lambda x, c=c_lo: score_statistic(x, kf, y, mf) <= -c, False) + 1
        )
    low[ok], high[ok] = x_lo / k, x_hi / k
    return low, high
