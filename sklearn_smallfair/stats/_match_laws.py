"""Null laws of the MATCH test: one function per method, all with one signature.

A law takes ``(metric, batch)``: a single-group metric of the registry and a
:class:`Batch`, the groups tested with that metric and that method, each with its
own size and reference. It returns :class:`Tails`: per group ``lower = P(S <= s)``
and ``upper = P(S >= s)`` (conditional on the metric being defined unless
``batch.conditional`` is False; NaN where the group's own score is undefined or the
null law never defines the metric), ``p_undefined`` and the Monte Carlo standard
errors of the two tails (0 for the exact laws, NaN for the approximations).

The laws (DESIGN 5.3):

* :func:`exact` -- binomial metrics by one incomplete beta function per group (any
  ``n``); marginal benefit and joint ratios by the sum over the denominator
  ``K = c_i + c_j``, restricted to the window of ``K`` whose binomial mass outside
  is below ``WINDOW_MASS`` (Bernstein's inequality), each term from the previous
  one by recursion, all the groups of the batch together; with
  ``reference_uncertainty`` the beta-binomial sums over all ``n + 1`` values of
  the denominator (Polya-urn recursion), group by group.
* :func:`saddlepoint` -- Lugannani-Rice with Daniels' second continuity correction
  for the linear form of counts whose sign decides the event (``S <= s`` is
  ``u c_i - v c_j <= r``), vectorized over groups.
* :func:`normal`, :func:`beta` -- the published approximations.
* :func:`enumerate_law` -- every matrix of size ``n``, once per distinct (size,
  reference) and shared by the groups that have it.
* :func:`montecarlo` -- ``n_draws`` matrices per group from the group's own random
  stream.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import betainc, betaincc, betaln, ndtr

from .._confusion import (
    FN,
    FP,
    _log_binomial,
    dirichlet_multinomial_logpmf,
    enumerate_confusion_matrices,
    multinomial_logpmf,
)
from .._random import child_seed

__all__ = [
    "LAWS",
    "WINDOW_MASS",
    "Batch",
    "Tails",
    "exact_terms",
    "family",
    "joint_cells",
    "score",
    "subset",
    "supports",
    "window",
]

#: Largest binomial mass that the windowed exact sums leave out, per group.
WINDOW_MASS = 1e-15
#: ``log(2 / WINDOW_MASS)``: each side of a window leaves out at most half of it.
_LOG_SIDE = math.log(2.0 / WINDOW_MASS)
_CHUNK = 1 << 20  # terms computed at once (bounds the memory of the sums)
_BLOCK = 1 << 16  # terms of a recursion between two anchors
_MC_CHUNK = 250_000  # Monte Carlo draws per block
_TIE_RTOL = 1e-12  # score comparisons in enumerate / montecarlo
_SMOOTH_TOL = 1e-9  # thresholds of smoothed joint ratios (as before)
_FEW = 8  # groups sharing an enumerated law below which masked sums beat a sort
_FAMILIES = {
    "exact": ("binomial", "joint_ratio", "mb"),
    "saddlepoint": ("binomial", "joint_ratio", "mb"),
    "normal": ("binomial", "mb"),
    "beta": ("joint_ratio",),
}


# =====================================================================================
# Metric families and the batch of groups
# =====================================================================================
def family(metric):
    """The closed-form family of a metric: ``"binomial"``, ``"joint_ratio"``,
    ``"mb"`` or None (no closed law: enumeration or Monte Carlo)."""
    if metric.name == "mb":
        return "mb"
    if metric.family in ("binomial", "joint_ratio"):
        return metric.family
    return None


def supports(method, metric):
    """Whether ``method`` computes the law of ``metric``."""
    fams = _FAMILIES.get(method)
    return True if fams is None else family(metric) in fams


def joint_cells(metric):
    """``(i, j)`` of a joint-ratio metric ``c_i / (c_i + c_j)``."""
    (i,) = metric.numerator
    (j,) = [c for c in metric.denominator if c != i]
    return i, j


def score(metric, cms, smoothing=None, ref=None):
    """The metric of ``cms`` (smoothed toward ``ref`` first), NaN where undefined."""
    if smoothing is not None:
        # the affine form of the (fitted) smoother: the same values as transform,
        # without its warnings on every enumerated or drawn matrix
        scale, offset = smoothing.coefficients(np.sum(cms, axis=-1), ref)
        cms = scale * cms + offset
    values = np.asarray(metric.func(cms), dtype=np.float64)
    return np.where(np.isfinite(values), values, np.nan)


@dataclass(frozen=True)
class Batch:
    """Groups tested together with one metric and one method.

    Attributes
    ----------
    counts : ndarray of int64, shape (G, 4)
        The groups' matrices.
    reference : ndarray of float64, shape (G, 4)
        Each group's reference counts.
    score : ndarray of shape (G,)
        Observed (smoothed) scores, NaN where undefined.
    smoothing : BaseSmoothing or None
    dirichlet : ndarray of shape (G, 4) or None
        Dirichlet parameters ``reference + prior`` with ``reference_uncertainty``.
    conditional : bool
    n_draws : int
    labels : sequence of length G
        Group labels (keys of the Monte Carlo streams).
    seed : numpy.random.SeedSequence or None
        Base seed of the Monte Carlo streams.
    """

    counts: np.ndarray
    reference: np.ndarray
    score: np.ndarray
    smoothing: object = None
    dirichlet: np.ndarray | None = None
    conditional: bool = True
    n_draws: int = 100_000
    labels: tuple = ()
    seed: object = None

    @property
    def n(self):
        """Group sizes, shape (G,)."""
        return self.counts.sum(axis=1)

    @property
    def p(self):
        """Reference proportions, shape (G, 4)."""
        return self.reference / self.reference.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Tails:
    """What a law returns: arrays of shape (G,)."""

    lower: np.ndarray
    upper: np.ndarray
    p_undefined: np.ndarray
    se_lower: np.ndarray
    se_upper: np.ndarray


def _tails(lower_u, upper_u, p_def, p_undef, batch, se=0.0):
    """Percentiles from unnormalised tail masses; NaN for undefined observed scores
    and for laws that never define the metric."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if batch.conditional:
            lower = np.minimum(1.0, lower_u / p_def)
            upper = np.minimum(1.0, upper_u / p_def)
        else:
            lower, upper = np.asarray(lower_u, float), np.asarray(upper_u, float)
    bad = (p_def <= 0) | np.isnan(batch.score)
    lower = np.where(bad, np.nan, np.clip(lower, 0.0, 1.0))
    upper = np.where(bad, np.nan, np.clip(upper, 0.0, 1.0))
    se = np.where(bad, np.nan, se)
    p_undef = np.clip(np.broadcast_to(p_undef, lower.shape), 0.0, 1.0)
    return Tails(lower, upper, p_undef.astype(np.float64), se, se)


# =====================================================================================
# Binomial kernels (boost's incomplete beta through scipy.special; any size)
# =====================================================================================
def _cdf(m, size, prob):
    """``P(Y <= m)`` for ``Y ~ Bin(size, prob)``, elementwise.

    ``betaincc(m + 1, size - m, prob)``: scipy's ``bdtr`` takes ``size`` as a C
    ``int`` and returns NaN (or wrong values) from ``size = 2^31`` on.
    """
    m, size, prob = np.broadcast_arrays(
        np.asarray(m, np.float64), np.asarray(size, np.float64), np.asarray(prob)
    )
    out = (m >= size).astype(np.float64)
    inside = (m >= 0) & (m < size)
    if inside.any():
        mi = m[inside]
        out[inside] = betaincc(mi + 1.0, size[inside] - mi, prob[inside])
    return out


def _sf(m, size, prob):
    """``P(Y >= m)`` for ``Y ~ Bin(size, prob)``, elementwise."""
    m, size, prob = np.broadcast_arrays(
        np.asarray(m, np.float64), np.asarray(size, np.float64), np.asarray(prob)
    )
    out = (m <= 0).astype(np.float64)
    inside = (m >= 1) & (m <= size)
    if inside.any():
        mi = m[inside]
        out[inside] = betainc(mi, size[inside] - mi + 1.0, prob[inside])
    return out


def window(n, prob):
    """The values kept by the windowed exact sums of ``X ~ Bin(n, prob)``.

    Bernstein's inequality for a sum of ``n`` independent variables in [0, 1] with
    variance ``sigma^2 = n prob (1 - prob)`` gives ``P(X - n prob >= t) <=
    exp(-t^2 / (2 (sigma^2 + t / 3)))``, and the same for the lower tail. With
    ``L = log(2 / WINDOW_MASS)`` the half-width ``t = L / 3 + sqrt(L^2 / 9 + 2 L
    sigma^2)`` (about ``8.4 sigma + 12``) leaves out at most ``WINDOW_MASS / 2`` on
    each side.

    Parameters
    ----------
    n : array-like of int
    prob : array-like of float

    Returns
    -------
    lo, hi : ndarray of int64
        ``P(X < lo) + P(X > hi) <= WINDOW_MASS``.

    Examples
    --------
    >>> from sklearn_smallfair.stats._match_laws import window
    >>> lo, hi = window([10, 10**6, 10**12], [0.3, 0.3, 0.3])
    >>> lo.tolist(), hi.tolist()
    ([0, 296142, 299996153249], [10, 303858, 300003846751])
    """
    n = np.asarray(n, np.float64)
    prob = np.asarray(prob, np.float64)
    mean = n * prob
    t = _LOG_SIDE / 3.0 + np.sqrt(
        _LOG_SIDE**2 / 9.0 + 2.0 * _LOG_SIDE * mean * (1 - prob)
    )
    lo = np.where(prob >= 1, n, np.maximum(0.0, np.ceil(mean - t)))
    hi = np.where(prob <= 0, 0.0, np.minimum(n, np.floor(mean + t)))
    return lo.astype(np.int64), hi.astype(np.int64)


def _floor_div(a, c, x, d, lo, hi):
    """``floor((a + c x) / d)`` in exact integer arithmetic, clipped to
    ``[lo - 1, hi + 1]`` (int64 arrays, ``d > 0``).

    ``c x`` may exceed 2^63 (``10^12 * 10^12``): the quotient is estimated in
    floating point, and where it lies in range its remainder ``a + c x - d q``,
    a small number, is computed modulo 2^64 (exactly) and corrected.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        est = np.floor((a + c.astype(np.float64) * x) / d)
        inside = (est >= lo - 2) & (est <= hi + 2)
        q = np.where(inside, est, 0.0).astype(np.int64)
        rem = a + c * x - d * q
        for _ in range(3):
            down = inside & (rem < 0)
            q, rem = q - down, rem + d * down
            up = inside & (rem >= d)
            q, rem = q + up, rem - d * up
    q = np.where(inside, q, np.where(est < lo, lo - 1, hi + 1))
    return np.clip(q, lo - 1, hi + 1)


# =====================================================================================
# exact
# =====================================================================================
def _linear_form(metric, batch):
    """``(i, j, u, v, r, joint)``: ``S <= s`` is ``u c_i - v c_j <= r`` (and
    ``S >= s`` is ``>= r``) for the observed score ``s`` of each group, in integers.

    Joint ratios ``c_i / (c_i + c_j) = a / b`` (in lowest terms): ``u = b - a``,
    ``v = a``, ``r = 0``, ``joint`` (the metric is undefined at ``c_i + c_j = 0``).
    Marginal benefit: ``FP - FN <= d`` (smoothing is increasing in it).
    """
    obs = batch.counts
    if family(metric) == "mb":
        ones = np.ones(obs.shape[0], np.int64)
        return FP, FN, ones, ones, obs[:, FP] - obs[:, FN], False
    i, j = joint_cells(metric)
    a, b = obs[:, i], obs[:, i] + obs[:, j]
    g = np.maximum(np.gcd(a, b), 1)
    return i, j, (b - a) // g, a // g, np.zeros_like(a), True


def exact_terms(metric, batch):
    """Number of terms of the exact sum of each group (its cost), shape (G,)."""
    n = batch.n
    fam = family(metric)
    if batch.dirichlet is not None:  # beta-binomial pmfs summed over 0..n
        return n + 1
    if fam == "binomial":
        return np.ones_like(n)
    i, j = (FP, FN) if fam == "mb" else joint_cells(metric)
    lo, hi = window(n, batch.p[:, i] + batch.p[:, j])
    return hi - lo + 1


def exact(metric, batch):
    """The exact law (DESIGN 5.3), to ``WINDOW_MASS`` for the windowed sums.

    Parameters
    ----------
    metric : Metric
        A single-group metric of the registry (binomial, joint ratio or ``mb``).
    batch : Batch
        The groups tested.

    Returns
    -------
    Tails
        Lower and upper tails, ``P(undefined)`` and standard errors (0) per group.

    Notes
    -----
    Joint ratios ``c_i / (c_i + c_j)`` and marginal benefit are sums over the
    denominator ``K = c_i + c_j ~ Bin(n, q)``, ``q = p_i + p_j``, of the weight
    ``Bin(K; n, q)`` times a binomial tail of the numerator given ``K``. Only the
    window ``lo <= K <= hi`` of :func:`window` is summed: Bernstein's inequality
    for the ``n`` independent indicators of the two cells, with ``sigma^2 = n q
    (1 - q)`` and ``L = log(2 / WINDOW_MASS)``, bounds each tail outside
    ``n q +- t``, ``t = L / 3 + sqrt(L^2 / 9 + 2 L sigma^2)``, by ``WINDOW_MASS /
    2``. The binomial mass left out is therefore at most ``WINDOW_MASS = 1e-15``
    per group, and since every term is a probability times a weight, each tail is
    at most ``1e-15`` below the full sum. The window holds about ``16.8 sigma +
    25 = O(sqrt(n))`` terms: 8,417 of the 1,000,001 denominators at ``n =
    10^6`` and 26,569 of the 10,000,001 at ``n = 10^7`` for ``q = 1/2``
    (``match_test`` of ``tpr`` for two groups of ``10^7`` took 17 ms on a quiet
    2-core machine, where the full sum took minutes). Each term follows from the
    previous one by the binomial recursions along the path of integer thresholds
    (:func:`_path_tail`, :func:`_binomial_run`), anchored every ``2^16`` terms
    by one incomplete beta function; all groups are summed together.
    :func:`_exact_full` is the plain sum over all ``n + 1`` denominators, one
    ``scipy.special`` incomplete beta per term, kept as the reference of the
    window in the tests.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import get_metric
    >>> from sklearn_smallfair.stats._match_laws import Batch, exact, score
    >>> tpr = get_metric("tpr")
    >>> counts = np.array([[30, 20, 10, 40]])
    >>> reference = np.array([[300.0, 100.0, 100.0, 500.0]])
    >>> tails = exact(tpr, Batch(counts, reference, score(tpr, counts)))
    >>> round(float(tails.lower[0]), 6), round(float(tails.upper[0]), 6)
    (0.020576, 0.982533)
    """
    if family(metric) == "binomial":
        return _exact_binomial(metric, batch)
    if batch.dirichlet is not None:
        return _exact_dirichlet(metric, batch)
    return _exact_windowed(metric, batch)


def _exact_binomial(metric, batch):
    cells = list(metric.numerator)
    n = batch.n
    k = batch.counts[:, cells].sum(axis=1)
    if batch.dirichlet is None:
        q = batch.p[:, cells].sum(axis=1)
        lower, upper = _cdf(k, n, q), _sf(k, n, q)
    else:
        a = batch.dirichlet[:, cells].sum(axis=1)
        b = batch.dirichlet.sum(axis=1) - a
        lower = stats.betabinom.cdf(k, n, a, b)
        upper = stats.betabinom.sf(k - 1, n, a, b)
    ones = np.ones(n.shape)
    return _tails(lower, upper, ones, 0.0, batch)


def _smoothing_shift(metric, batch):
    """``(alpha, beta)``: the smoothed joint ratio is ``(c_i + alpha) / (K + beta)``."""
    i, j = joint_cells(metric)
    scale, offset = batch.smoothing.coefficients(batch.n, batch.reference)
    return offset[:, i] / scale[:, 0], (offset[:, i] + offset[:, j]) / scale[:, 0]


def _exact_windowed(metric, batch):
    """Marginal benefit and joint ratios under the multinomial law.

    ``lower = sum_K Bin(K; n, q) P(X_K <= m_K)`` and ``upper = sum_K Bin(K; n, q)
    P(X_K >= m'_K)`` over the window of ``K = c_i + c_j`` (:func:`window`), with
    ``X_K ~ Bin(K, theta)`` the numerator given ``K`` and integer thresholds
    ``m_K``, ``m'_K`` (floor and ceiling of the observed score times ``K``). The
    thresholds step by 0 or 1 as ``K`` grows, so every term follows from the
    previous one (:func:`_path_tail`); all groups are computed together, their
    windows cut in rows of at most ``_BLOCK`` terms, each anchored by one
    evaluation of the incomplete beta function.
    """
    n, p = batch.n, batch.p
    G = n.shape[0]
    fam = family(metric)
    smoothed = fam == "joint_ratio" and batch.smoothing is not None
    i, j, u, v, r, joint = _linear_form(metric, batch)
    if smoothed:
        alpha, beta = _smoothing_shift(metric, batch)
    q = p[:, i] + p[:, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(q > 0, p[:, i] / np.where(q > 0, q, 1.0), 0.0)
    # joint ratios are undefined at c_i + c_j = 0 unless smoothing adds to it
    zero = joint & (beta <= 0) if smoothed else np.full(G, joint)
    lo, hi = window(n, q)
    lo = np.where(zero, np.maximum(lo, 1), lo)
    active = ~np.isnan(batch.score) & (hi >= lo)
    # rows: blocks of at most _BLOCK consecutive K of one group
    length = np.where(active, hi - lo + 1, 0)
    blocks = -(-length // _BLOCK)
    row_group = np.repeat(np.arange(G), blocks)
    first_row = np.cumsum(blocks) - blocks
    offset = (np.arange(row_group.size) - first_row[row_group]) * _BLOCK
    row_start = lo[row_group] + offset
    row_len = np.minimum(length[row_group] - offset, _BLOCK)
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    width = 1 << np.ceil(np.log2(np.maximum(row_len, 1))).astype(np.int64)
    for w in np.unique(width):
        rows = np.flatnonzero(width == w)
        per_chunk = max(1, _CHUNK // int(w))
        for c0 in range(0, rows.size, per_chunk):
            sel = rows[c0 : c0 + per_chunk]
            g = row_group[sel]
            K = row_start[sel, None] + np.arange(w)[None, :]
            valid = np.arange(w)[None, :] < row_len[sel, None]
            K = np.where(valid, K, row_start[sel, None])
            if smoothed:
                y = batch.score[g, None] * (K + beta[g, None]) - alpha[g, None]
                tol = _SMOOTH_TOL * np.maximum(1.0, np.abs(y))
                bound = np.clip(np.floor(y + tol), -2, K + 2).astype(np.int64)
                path_lo = bound
                path_up = np.clip(np.ceil(y - tol), -1, K + 2).astype(np.int64) - 1
            else:
                a_, c_ = r[g, None], v[g, None]
                d_ = (u + v)[g, None]
                zeros = np.zeros_like(K)
                path_lo = _floor_div(a_, c_, K, d_, zeros, K)
                path_up = -_floor_div(-a_, -c_, K, d_, -K, zeros) - 1
            weight = _binomial_run(K, valid, n[g], q[g])
            th = theta[g]
            below = _path_tail(path_lo, K, valid, th, lower=True)
            above = _path_tail(path_up, K, valid, th, lower=False)
            lower_u += np.bincount(g, (weight * below).sum(axis=1), minlength=G)
            upper_u += np.bincount(g, (weight * above).sum(axis=1), minlength=G)
    with np.errstate(divide="ignore"):
        log_empty = n * np.log1p(-np.minimum(q, 1.0))
    p_undef = np.where(zero, np.exp(log_empty), 0.0)
    p_def = np.where(zero, -np.expm1(log_empty), 1.0)
    return _tails(lower_u, upper_u, p_def, p_undef, batch)


def _exact_full(metric, batch):
    """The exact law of joint ratios and marginal benefit by the plain sum over
    all ``n + 1`` denominators ``K``: one binomial pmf and one incomplete beta
    function per term, no window and no recursion (the reference of
    :func:`_exact_windowed`; ``O(n)`` per group)."""
    G = batch.counts.shape[0]
    n, p = batch.n, batch.p
    fam = family(metric)
    smoothed = fam == "joint_ratio" and batch.smoothing is not None
    i, j, u, v, r, joint = _linear_form(metric, batch)
    if smoothed:
        alpha, beta = _smoothing_shift(metric, batch)
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    p_def, p_undef = np.ones(G), np.zeros(G)
    for g in range(G):
        q = p[g, i] + p[g, j]
        theta = p[g, i] / q if q > 0 else 0.0
        zero = joint and (not smoothed or beta[g] <= 0)
        K = np.arange(1 if zero else 0, int(n[g]) + 1, dtype=np.int64)
        weight = stats.binom.pmf(K, int(n[g]), q)
        if zero:
            p_undef[g] = (1.0 - q) ** int(n[g])
            p_def[g] = 1.0 - p_undef[g]
        if np.isnan(batch.score[g]):
            continue
        if smoothed:
            y = batch.score[g] * (K + beta[g]) - alpha[g]
            tol = _SMOOTH_TOL * np.maximum(1.0, np.abs(y))
            below, above = np.floor(y + tol), np.ceil(y - tol)
        else:
            num = int(r[g]) + int(v[g]) * K
            den = int(u[g]) + int(v[g])
            below, above = num // den, -((-num) // den)
        lower_u[g] = weight @ _cdf(below, K, theta)
        upper_u[g] = weight @ _sf(above, K, theta)
    return _tails(lower_u, upper_u, p_def, p_undef, batch)


def _log_pmf(x, size, prob):
    """``log P(Y = x)``, ``Y ~ Bin(size, prob)``: the log of boost's pmf, accurate
    to 1e-15 (scipy's ``logpmf`` goes through ``gammaln`` and loses 1e-12 from
    ``size = 1000``), or the log-pmf where the pmf underflows."""
    pmf = stats.binom.pmf(x, size, prob)
    with np.errstate(divide="ignore"):
        return np.where(pmf > 0, np.log(pmf), stats.binom.logpmf(x, size, prob))


def _binomial_run(K, valid, n, q):
    """``Bin(K; n, q)`` along each row of consecutive ``K`` (0 outside ``valid``):
    the first by boost's log-pmf, the others by the ratio ``(n - K + 1) q / (K (1 -
    q))``, written as ``log1p`` of a small number near the mode."""
    n = n[:, None].astype(np.float64)
    q = q[:, None]
    Kf = K.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log1p(((n + 1 - Kf) * q - Kf * (1 - q)) / (Kf * (1 - q)))
    step[:, 0] = _log_pmf(K[:, 0], n[:, 0], q[:, 0])
    step = np.where(valid, step, 0.0)
    out = np.exp(np.cumsum(step, axis=1))
    return np.where(valid, np.nan_to_num(out), 0.0)


def _path_tail(path, K, valid, theta, lower):
    """Binomial tails along a path of thresholds stepping by 0 or 1 in ``K``.

    ``lower``: ``F_K = P(X_K <= path_K)``; else ``S_K = P(X_K >= path_K + 1)``,
    for ``X_K ~ Bin(K, theta)`` and consecutive ``K`` along each row. Adding one
    trial, ``P(X_K <= m) = P(X_{K-1} <= m) - theta b_{K-1}(m)`` and a step of the
    path adds ``b_K(m_K)``: ``F_K = F_{K-1} - theta b_{K-1}(m_{K-1}) + s_K
    b_K(m_K)`` (``S`` with the opposite sign), and the pmf ``b`` along the path
    follows from the ratios ``K (1 - theta) / (K - m)`` (step 0) and ``K theta /
    (m + 1)`` (step 1). The path lies in ``[0, K]`` from some ``K`` on (a prefix
    of the row has the trivial values 0 or 1); the recursion starts there from
    one incomplete beta function and one log-pmf.
    """
    width = K.shape[1]
    inside = valid & (path >= 0) & (path <= K)
    if lower:
        trivial = (path >= K).astype(np.float64)
    else:
        trivial = (path < 0).astype(np.float64)
    th = theta[:, None]
    degenerate = (theta <= 0) | (theta >= 1)
    has = inside.any(axis=1) & ~degenerate
    out = trivial
    if degenerate.any():  # X_K is 0 or K: the kernels are exact and cheap
        d = degenerate[:, None] & valid
        Kd, Pd, td = K[d], path[d], np.broadcast_to(th, K.shape)[d]
        out = out.copy()
        out[d] = _cdf(Pd, Kd, td) if lower else _sf(Pd + 1, Kd, td)
    if not has.any():
        return np.where(valid, out, 0.0)
    sub = np.flatnonzero(has)
    P, Kr, ins, t = path[sub], K[sub], inside[sub], th[sub]
    j0 = np.argmax(ins, axis=1)
    take = np.arange(sub.size)
    Ka, Pa = Kr[take, j0], P[take, j0]
    log_b0 = _log_pmf(Pa, Ka, t[:, 0])
    start = _cdf(Pa, Ka, t[:, 0]) if lower else _sf(Pa + 1, Ka, t[:, 0])
    col = np.arange(1, width)[None, :]
    rec = ins[:, 1:] & (col > j0[:, None])
    prev = P[:, :-1].astype(np.float64)
    Kc = Kr[:, 1:].astype(np.float64)
    step = P[:, 1:] - P[:, :-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            step == 1,
            np.log1p((Kc * t - prev - 1) / (prev + 1)),
            np.log1p((prev - Kc * t) / (Kc - prev)),
        )
    ratio = np.where(rec, ratio, 0.0)
    log_b = log_b0[:, None] + np.concatenate(
        [np.zeros((sub.size, 1)), np.cumsum(ratio, axis=1)], axis=1
    )
    b = np.exp(log_b)
    inc = t * b[:, :-1] - np.where(step == 1, b[:, 1:], 0.0)
    inc = np.where(rec, -inc if lower else inc, 0.0)
    run = start[:, None] + np.concatenate(
        [np.zeros((sub.size, 1)), np.cumsum(inc, axis=1)], axis=1
    )
    out = out.copy() if out is trivial else out
    out[sub] = np.where(ins, np.clip(run, 0.0, 1.0), out[sub])
    return np.where(valid, out, 0.0)


# ---- reference uncertainty: beta-binomial pieces, Polya-urn recursion ---------------
def _betabinom_logpmf(c, k, a, b):
    c = np.asarray(c, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    # log C(k, c) is -inf outside 0 <= c <= k; the clipped arguments keep betaln
    # finite there
    cc = np.clip(c, 0, None)
    kc = np.clip(k - c, 0, None)
    return _log_binomial(k, c) + betaln(cc + a, kc + b) - betaln(a, b)


def _polya_cdf(m, k, a, b, state):
    """``P(X_k <= m_k)`` for ``X_k ~ BetaBinomial(k, a, b)`` on consecutive ``k``.

    scipy's beta-binomial CDF sums the pmf (O(k) per value, O(n^2) in all). The
    thresholds of the MATCH sums step by 0 or 1 as k grows, so the Polya-urn
    recursion ``P(X_k <= m) = P(X_{k-1} <= m) - P(X_{k-1} = m) (a + m) /
    (a + b + k - 1)`` gives every value from the previous one: a cumulative sum of
    closed-form increments, O(n) and vectorized. ``state`` carries ``(value, m,
    k)`` of the previous block (None for the block starting at ``k = 0``).
    """
    m = np.clip(np.asarray(m, dtype=np.int64), -1, k)
    if state is None:
        first = 1.0 if m[0] >= 0 else 0.0
        prev_m, prev_k, m_rest, k_rest, start = m[:-1], k[:-1], m[1:], k[1:], first
    else:
        start, pm, pk = state
        prev_m = np.concatenate([[pm], m[:-1]])
        prev_k = np.concatenate([[pk], k[:-1]])
        m_rest, k_rest = m, k
    steps = m_rest - prev_m
    if steps.size and (
        steps.min() < 0 or steps.max() > 1
    ):  # pragma: no cover - the MATCH sums always satisfy this
        out = stats.betabinom.cdf(m, k, a, b)
        return out, (float(out[-1]), int(m[-1]), int(k[-1]))
    leave = (
        np.exp(_betabinom_logpmf(prev_m, prev_k, a, b))
        * (a + prev_m)
        / (a + b + prev_k)
    )
    enter = np.where(steps == 1, np.exp(_betabinom_logpmf(m_rest, k_rest, a, b)), 0.0)
    run = start + np.cumsum(enter - leave)
    out = np.concatenate([[start], run]) if state is None else run
    state = (float(out[-1]), int(m[-1]), int(k[-1]))
    return np.clip(out, 0.0, 1.0), state


def _exact_dirichlet(metric, batch):
    """Marginal benefit and joint ratios under the Dirichlet-multinomial law: the
    sum over all ``n + 1`` values of the conditioning count, group by group."""
    G = batch.counts.shape[0]
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    p_def, p_undef = np.ones(G), np.zeros(G)
    fam = family(metric)
    smoothed = fam == "joint_ratio" and batch.smoothing is not None
    if smoothed:
        alphas, betas = _smoothing_shift(metric, batch)
    for g in range(G):
        obs, al = batch.counts[g], batch.dirichlet[g]
        n = int(obs.sum())
        if fam == "mb":
            i, j = FP, FN
            d = int(obs[FP] - obs[FN])

            def thresholds(k, d=d):
                return (d + k) // 2, -((-(d + k)) // 2)

            def defined(k):
                return np.ones(k.shape, bool)

        else:
            i, j = joint_cells(metric)
            num, den = int(obs[i]), int(obs[i] + obs[j])
            if np.isnan(batch.score[g]):
                wa = al[i] + al[j]
                p_undef[g] = stats.betabinom.pmf(0, n, wa, al.sum() - wa)
                continue
            if smoothed:
                s_obs, sa, sb = batch.score[g], alphas[g], betas[g]

                def thresholds(k, s_obs=s_obs, sa=sa, sb=sb):
                    y = s_obs * (k + sb) - sa
                    tol = _SMOOTH_TOL * np.maximum(1.0, np.abs(y))
                    return np.floor(y + tol), np.ceil(y - tol)

                def defined(k, sb=sb):
                    return (k + sb) > 0

            else:

                def thresholds(k, num=num, den=den):
                    kd = np.maximum(k, 1)
                    return (num * kd) // den, -((-num * kd) // den)

                def defined(k):
                    return k >= 1

        wa = al[i] + al[j]
        wb = al.sum() - wa
        lo_state = up_state = None
        lo_sum = up_sum = def_sum = 0.0
        for start in range(0, n + 1, _CHUNK):
            k = np.arange(start, min(n, start + _CHUNK - 1) + 1, dtype=np.int64)
            w = stats.betabinom.pmf(k, n, wa, wb)
            m_lo, m_up = thresholds(k)
            lo, lo_state = _polya_cdf(m_lo, k, al[i], al[j], lo_state)
            below, up_state = _polya_cdf(
                np.asarray(m_up) - 1, k, al[i], al[j], up_state
            )
            ok = defined(k)
            wd = np.where(ok, w, 0.0)
            lo_sum += float(wd @ lo)
            up_sum += float(wd @ (1.0 - below))
            def_sum += float(wd.sum())
            if start == 0:
                p_undef[g] = float(w[~ok].sum())
        lower_u[g], upper_u[g] = lo_sum, up_sum
        p_def[g] = 1.0 if fam == "mb" else def_sum
    p_undef = np.minimum(np.maximum(p_undef, 0.0), 1.0)
    return _tails(lower_u, upper_u, p_def, p_undef, batch)


# =====================================================================================
# saddlepoint
# =====================================================================================
_SERIES_SPAN = 1e-2  # |s| * spread below which w and u come from cumulant series


def _cumulants(values, probs):
    """Mean and cumulants 2..7 of one unit, and the centred values."""
    mean = (probs * values).sum(axis=1)
    dev = values - mean[:, None]
    mom = [None, None] + [(probs * dev**r).sum(axis=1) for r in range(2, 8)]
    m2, m3, m4, m5, m6, m7 = mom[2:]
    kappa = {
        2: m2,
        3: m3,
        4: m4 - 3 * m2**2,
        5: m5 - 10 * m3 * m2,
        6: m6 - 15 * m4 * m2 - 10 * m3**2 + 30 * m2**3,
        7: m7 - 21 * m5 * m2 - 35 * m4 * m3 + 210 * m3 * m2**2,
    }
    return mean, dev, kappa


def _tilt(dev, probs, on, s):
    """Mean and variance of the centred unit under the law tilted by ``exp(s v)``,
    and ``log E exp(s (v - tilted mean))`` (minus the rate ``h(s)``)."""
    z = np.where(on, s[:, None] * dev, -np.inf)
    zmax = z.max(axis=1, keepdims=True)
    e = np.where(on, probs * np.exp(z - zmax), 0.0)
    pi = e / e.sum(axis=1, keepdims=True)
    mean = (pi * dev).sum(axis=1)
    var = (pi * (dev - mean[:, None]) ** 2).sum(axis=1)
    return mean, var


def _rate(dev, probs, on, s, mean):
    """``h(s) = s K'(s) - K(s) = -log E exp(s (v - K'(s)))`` per unit (>= 0)."""
    z = np.where(on, s[:, None] * (dev - mean[:, None]), -np.inf)
    small = np.abs(np.where(on, z, 0.0)).max(axis=1) < 0.5
    out = np.empty(s.shape)
    if small.any():
        zz = np.where(on[small], z[small], 0.0)
        out[small] = -np.log1p((probs[small] * np.expm1(zz)).sum(axis=1))
    if (~small).any():
        zz = z[~small]
        zmax = zz.max(axis=1, keepdims=True)
        tot = np.where(on[~small], probs[~small] * np.exp(zz - zmax), 0.0).sum(axis=1)
        out[~small] = -(zmax[:, 0] + np.log(tot))
    return np.maximum(out, 0.0)


def _solve_saddle(dev, probs, on, delta, kappa2):
    """``s`` with tilted mean ``delta`` (centred), by safeguarded Newton steps."""
    s = delta / kappa2
    lo = np.full(s.shape, -np.inf)
    hi = np.full(s.shape, np.inf)
    for _ in range(200):
        mean, var = _tilt(dev, probs, on, s)
        f = mean - delta
        lo = np.where(f < 0, s, lo)
        hi = np.where(f > 0, s, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = s - f / var
            ok = np.isfinite(step) & (step > lo) & (step < hi)
            both = np.isfinite(lo) & np.isfinite(hi)
            widen = np.maximum(1.0, np.abs(s))
            fallback = np.where(
                both, 0.5 * (lo + hi), np.where(np.isfinite(lo), s + widen, s - widen)
            )
        new = np.where(f == 0, s, np.where(ok, step, fallback))
        done = np.abs(new - s) <= 1e-15 * np.maximum(np.abs(s), 1e-300)
        s = new
        if done.all():
            break
    return s


def _upper_saddlepoint(values, probs, n, x, span):
    """``P(X >= x)`` for ``X`` the sum of ``n`` independent copies of a unit taking
    ``values[g]`` with ``probs[g]``; Lugannani-Rice, with Daniels' second
    continuity correction on a lattice of span ``span`` (0: none; ``x`` must then
    be a lattice point).

    ``P ~ 1 - Phi(w) - phi(w) (1/w - 1/u)`` at the saddle point ``s`` of the target
    ``x - span / 2``: ``w = sgn(s) sqrt(2 n h(s))``, ``u = (2/span) sinh(s span/2)
    sqrt(n K''(s))``. Near the mean (``|s| * spread < 0.01``) ``w``, ``u`` and
    ``1/w - 1/u`` come from series in the cumulants (no cancellation; the limit at
    the mean is ``lambda_3 / 6``).
    """
    n = np.asarray(n, np.float64)
    on = probs > 0
    vmax = np.where(on, values, -np.inf).max(axis=1)
    vmin = np.where(on, values, np.inf).min(axis=1)
    out = np.zeros(n.shape)
    top, bottom = n * vmax, n * vmin
    tol = np.maximum(span / 2, 1e-12 * np.maximum(np.abs(top), np.abs(bottom)))
    certain = x <= bottom + tol * (span > 0)
    at_top = ~certain & (np.abs(x - top) <= tol)
    if at_top.any():  # every unit at the largest value
        others = np.where(on & (values < vmax[:, None]), probs, 0.0).sum(axis=1)
        out[at_top] = np.exp(n[at_top] * np.log1p(-others[at_top]))
    out[certain] = 1.0
    inner = ~certain & ~at_top & (x < top) & (vmax > vmin)
    if not inner.any():
        return out
    v, p, o, nn = values[inner], probs[inner], on[inner], n[inner]
    h = np.broadcast_to(span, n.shape)[inner]
    mean, dev, kappa = _cumulants(np.where(o, v, 0.0), p)
    delta = (x[inner] - h / 2) / nn - mean
    s = _solve_saddle(dev, p, o, delta, kappa[2])
    spread = np.abs(np.where(o, dev, 0.0)).max(axis=1)
    series = np.abs(s) * spread < _SERIES_SPAN
    A = np.sqrt(nn * kappa[2])
    # direct forms
    tmean, tvar = _tilt(dev, p, o, s)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w_dir = np.sign(s) * np.sqrt(2 * nn * _rate(dev, p, o, s, tmean))
        y = s * h / 2
        sinhc = np.where(h > 0, np.sinh(y) / np.where(y == 0, 1.0, y), 1.0)
        sinhc = np.where(y == 0, 1.0, sinhc)
        u_dir = s * sinhc * np.sqrt(nn * tvar)
        corr = 1.0 / w_dir - 1.0 / u_dir
    w = w_dir
    if series.any():
        k = {r: kappa[r][series] for r in kappa}
        ss, hh = s[series], h[series]
        h_over = (
            k[2] / 2
            + k[3] * ss / 3
            + k[4] * ss**2 / 8
            + k[5] * ss**3 / 30
            + k[6] * ss**4 / 144
            + k[7] * ss**5 / 840
        )
        k2s = (
            k[2]
            + k[3] * ss
            + k[4] * ss**2 / 2
            + k[5] * ss**3 / 6
            + k[6] * ss**4 / 24
            + k[7] * ss**5 / 120
        )
        d_over = (
            k[3] / 3
            + k[4] * ss / 4
            + k[5] * ss**2 / 10
            + k[6] * ss**3 / 36
            + k[7] * ss**4 / 168
        )
        W = np.sqrt(2 * h_over / k[2])
        U = np.sqrt(k2s / k[2])
        yy = ss * hh / 2
        sinhc_s = 1 + yy**2 / 6 + yy**4 / 120
        sinhc_m1_over_s = (hh / 2) * (yy / 6 + yy**3 / 120 + yy**5 / 5040)
        Ul = U * sinhc_s
        diff_over_s = d_over / (k[2] * (U + W)) + U * sinhc_m1_over_s
        AA = A[series]
        w[series] = ss * AA * W
        corr[series] = diff_over_s / (AA * Ul * W)
    phi = np.exp(-0.5 * w**2) / math.sqrt(2 * math.pi)
    out[inner] = np.clip(ndtr(-w) - phi * corr, 0.0, 1.0)
    return out


def _two_sided_saddlepoint(values, probs, n, x, span):
    """``(P(X <= x), P(X >= x))``."""
    lower = _upper_saddlepoint(-values, probs, n, -x, span)
    upper = _upper_saddlepoint(values, probs, n, x, span)
    return lower, upper


def saddlepoint(metric, batch):
    """Saddle-point approximation of the multinomial law (no reference uncertainty).

    The event ``S <= s`` is ``L <= r`` for a linear form ``L = u c_i - v c_j`` of
    two cells (``c_i + c_j`` for binomial metrics), a sum of ``n`` independent
    three-point units (values ``u``, ``-v``, 0): Lugannani-Rice with Daniels'
    second continuity correction on its lattice. Smoothed joint ratios use the
    continuous form (their thresholds are not lattice points). Laws on fewer than
    three points (a reference cell at 0) and the scores 0 and 1 of a joint ratio
    have closed forms, used instead.
    """
    n, p = batch.n, batch.p
    G = n.shape[0]
    fam = family(metric)
    obs = batch.counts
    if fam == "binomial":
        cells = list(metric.numerator)
        q = p[:, cells].sum(axis=1)
        values = np.tile([1.0, 0.0, 0.0], (G, 1))
        probs = np.stack([q, 1 - q, np.zeros(G)], axis=1)
        k = obs[:, cells].sum(axis=1).astype(np.float64)
        lower, upper = _two_sided_saddlepoint(values, probs, n, k, np.ones(G))
        return _tails(lower, upper, np.ones(G), 0.0, batch, se=np.nan)
    i, j, u, v, r, joint = _linear_form(metric, batch)
    p0 = np.clip(1.0 - p[:, i] - p[:, j], 0.0, 1.0)
    probs = np.stack([p[:, i], p[:, j], p0], axis=1)
    smoothed = joint and batch.smoothing is not None
    if smoothed:
        alpha, beta = _smoothing_shift(metric, batch)
        s_obs = batch.score
        values = np.stack([1 - s_obs, -s_obs, np.zeros(G)], axis=1)
        x = s_obs * beta - alpha
        span = np.zeros(G)
        degenerate = p0 <= 0
        zero = beta <= 0
    else:
        big = np.maximum(np.maximum(u, v), 1).astype(np.float64)
        values = np.stack([u / big, -v / big, np.zeros(G)], axis=1)
        x = r / big
        span = 1.0 / big
        degenerate = (probs <= 0).any(axis=1)
        zero = np.full(G, joint)
    with np.errstate(divide="ignore"):
        log_empty = n * np.log1p(-np.minimum(p[:, i] + p[:, j], 1.0))
    p_undef = np.where(zero, np.exp(log_empty), 0.0)
    p_def = np.where(zero, -np.expm1(log_empty), 1.0)
    active = ~np.isnan(batch.score) & ~degenerate
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    if active.any():
        lo, up = _two_sided_saddlepoint(
            values[active], probs[active], n[active], x[active], span[active]
        )
        lower_u[active] = lo - p_undef[active]
        upper_u[active] = up - p_undef[active]
    tails = _tails(
        np.maximum(lower_u, 0.0),
        np.maximum(upper_u, 0.0),
        p_def,
        p_undef,
        batch,
        se=np.nan,
    )
    if degenerate.any():  # the exact law is a single term here
        sub = np.flatnonzero(degenerate)
        part = exact(metric, subset(batch, sub))
        for name in ("lower", "upper", "p_undefined"):
            getattr(tails, name)[sub] = getattr(part, name)
    return tails


def subset(batch, index):
    """The batch restricted to the groups at ``index``."""
    return Batch(
        counts=batch.counts[index],
        reference=batch.reference[index],
        score=batch.score[index],
        smoothing=batch.smoothing,
        dirichlet=None if batch.dirichlet is None else batch.dirichlet[index],
        conditional=batch.conditional,
        n_draws=batch.n_draws,
        labels=tuple(batch.labels[t] for t in index) if len(batch.labels) else (),
        seed=batch.seed,
    )


# =====================================================================================
# normal and beta (the published approximations)
# =====================================================================================
def normal(metric, batch):
    """Normal approximation with continuity correction (binomial metrics and mb);
    with reference uncertainty the Dirichlet-multinomial moments."""
    n = batch.n.astype(np.float64)
    obs = batch.counts
    if batch.dirichlet is None:
        p, inflation = batch.p, 1.0
    else:
        total = batch.dirichlet.sum(axis=1)
        p = batch.dirichlet / total[:, None]
        inflation = (total + n) / (total + 1.0)
    if family(metric) == "binomial":
        cells = list(metric.numerator)
        q = p[:, cells].sum(axis=1)
        x = obs[:, cells].sum(axis=1).astype(np.float64)
        mean, var = n * q, n * q * (1 - q)
    else:  # mb
        mu = p[:, FP] - p[:, FN]
        x = (obs[:, FP] - obs[:, FN]).astype(np.float64)
        mean, var = n * mu, n * (p[:, FP] + p[:, FN] - mu**2)
    sd = np.sqrt(var * inflation)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(sd > 0, ndtr((x + 0.5 - mean) / sd), x >= mean)
        upper = np.where(sd > 0, ndtr((mean - x + 0.5) / sd), x <= mean)
    G = n.shape[0]
    return _tails(lower, upper, np.ones(G), 0.0, batch, se=np.nan)


def beta(metric, batch):
    """The published approximation for joint ratios: ``S ~ Beta(k theta + 1,
    k (1 - theta) + 1)`` with the group's observed denominator ``k = c_i + c_j``
    and ``theta = p_i / (p_i + p_j)`` from the reference (no continuity
    correction)."""
    i, j = joint_cells(metric)
    obs, p = batch.counts, batch.p
    num = obs[:, i].astype(np.float64)
    den = (obs[:, i] + obs[:, j]).astype(np.float64)
    pij = p[:, i] + p[:, j]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = num / den
        theta = p[:, i] / pij
    a, b = den * theta + 1.0, den * (1.0 - theta) + 1.0
    ok = pij > 0
    lower = np.where(ok, stats.beta.cdf(s, a, b), np.nan)
    upper = np.where(ok, stats.beta.sf(s, a, b), np.nan)
    p_undef = np.where(ok, (1 - pij) ** batch.n, 1.0)
    if not batch.conditional:
        lower, upper = lower * (1 - p_undef), upper * (1 - p_undef)
    lower = np.where(np.isnan(batch.score), np.nan, lower)
    upper = np.where(np.isnan(batch.score), np.nan, upper)
    nan = np.full(lower.shape, np.nan)
    return Tails(lower, upper, p_undef, nan, nan.copy())


# =====================================================================================
# enumerate and montecarlo (any metric)
# =====================================================================================
def enumerate_law(metric, batch):
    """Sum of the pmf over all ``C(n + 3, 3)`` matrices of size ``n``: once per
    distinct (size, reference), shared by the groups that have it (sorted scores
    and cumulative masses from both ends, so tiny tails keep their precision)."""
    G = batch.counts.shape[0]
    n = batch.n
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    p_def, p_undef = np.zeros(G), np.zeros(G)
    keys = np.concatenate([n[:, None].astype(np.float64), batch.reference], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    for law, g0 in enumerate(first):
        members = np.flatnonzero(inverse == law)
        cms = enumerate_confusion_matrices(int(n[g0]))
        if batch.dirichlet is None:
            pmf = np.exp(multinomial_logpmf(cms, batch.p[g0]))
        else:
            pmf = np.exp(dirichlet_multinomial_logpmf(cms, batch.dirichlet[g0]))
        values = score(metric, cms, batch.smoothing, batch.reference[g0])
        defined = ~np.isnan(values)
        p_def[members] = pmf[defined].sum()
        p_undef[members] = pmf[~defined].sum()
        s = batch.score[members]
        tol = _TIE_RTOL * np.maximum(1.0, np.abs(s))
        if members.size <= _FEW:  # masked sums: no sort
            mass = np.where(defined, pmf, 0.0)
            for k, g in enumerate(members):
                lower_u[g] = mass[values <= s[k] + tol[k]].sum()
                upper_u[g] = mass[values >= s[k] - tol[k]].sum()
            continue
        order = np.argsort(values[defined], kind="stable")
        sorted_values = values[defined][order]
        mass = pmf[defined][order]
        from_below = np.concatenate([[0.0], np.cumsum(mass)])
        from_above = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
        with np.errstate(invalid="ignore"):
            below = np.searchsorted(sorted_values, s + tol, side="right")
            above = np.searchsorted(sorted_values, s - tol, side="left")
        lower_u[members] = from_below[below]
        upper_u[members] = from_above[above]
    return _tails(lower_u, upper_u, p_def, p_undef, batch)


def montecarlo(metric, batch):
    """``n_draws`` matrices per group from its own random stream (keyed by the
    metric and the group's label); each tail is ``(count + 1) / (base + 1)`` with
    base the defined draws (all draws with ``conditional=False``), so it is never
    exactly 0, and its binomial standard error."""
    G = batch.counts.shape[0]
    n_draws = batch.n_draws
    out = {k: np.full(G, np.nan) for k in ("lower", "upper", "se_l", "se_u", "und")}
    for g in range(G):
        n = int(batch.counts[g].sum())
        rng = np.random.default_rng(
            child_seed(batch.seed, metric.name, batch.labels[g])
        )
        s_obs = batch.score[g]
        tol = _TIE_RTOL * max(1.0, abs(s_obs)) if not np.isnan(s_obs) else 0.0
        lower = upper = defined = 0
        for start in range(0, n_draws, _MC_CHUNK):
            size = min(_MC_CHUNK, n_draws - start)
            if batch.dirichlet is None:
                cms = rng.multinomial(n, batch.p[g], size=size)
            else:
                cms = rng.multinomial(n, rng.dirichlet(batch.dirichlet[g], size=size))
            values = score(metric, cms, batch.smoothing, batch.reference[g])
            ok = ~np.isnan(values)
            defined += int(ok.sum())
            if not np.isnan(s_obs):
                lower += int((ok & (values <= s_obs + tol)).sum())
                upper += int((ok & (values >= s_obs - tol)).sum())
        out["und"][g] = 1.0 - defined / n_draws
        base = defined if batch.conditional else n_draws
        if np.isnan(s_obs) or base == 0:
            continue
        lo, up = (lower + 1) / (base + 1), (upper + 1) / (base + 1)
        out["lower"][g], out["upper"][g] = min(lo, 1.0), min(up, 1.0)
        out["se_l"][g] = math.sqrt(lo * (1 - lo) / base)
        out["se_u"][g] = math.sqrt(up * (1 - up) / base)
    return Tails(out["lower"], out["upper"], out["und"], out["se_l"], out["se_u"])


#: The law of each method, all called as ``law(metric, batch) -> Tails``.
LAWS = {
    "exact": exact,
    "saddlepoint": saddlepoint,
    "normal": normal,
    "beta": beta,
    "enumerate": enumerate_law,
    "montecarlo": montecarlo,
}
