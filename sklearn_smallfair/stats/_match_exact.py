"""The exact law of the published (fixed-reference) MATCH test.

Binomial metrics by one incomplete beta function per group (any ``n``); marginal
benefit and joint ratios by the sum over the denominator ``K = c_i + c_j``,
restricted to the window of ``K`` whose binomial mass outside is below
``WINDOW_MASS`` (Bernstein's inequality), each term from the previous one by
recursion, all the groups of the batch together; with ``reference_uncertainty``
the beta-binomial sums over all ``n + 1`` values of the denominator (Polya-urn
recursion), group by group.
"""

import numpy as np
from scipy import stats
from scipy.special import betaln

from .._confusion import FN, FP
from .._pmf import _log_binomial
from ._binomial import _cdf, _floor_div, _sf, window
from ._match_batch import _tails, family, joint_cells

__all__ = ["exact", "exact_terms"]

_CHUNK = 1 << 20  # terms computed at once (bounds the memory of the sums)
_BLOCK = 1 << 16  # terms of a recursion between two anchors
_SMOOTH_TOL = 1e-9  # thresholds of smoothed joint ratios


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
    """The exact law, to ``WINDOW_MASS`` for the windowed sums.

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
    >>> from sklearn_smallfair.stats._match_batch import Batch, score
    >>> from sklearn_smallfair.stats._match_exact import exact
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
