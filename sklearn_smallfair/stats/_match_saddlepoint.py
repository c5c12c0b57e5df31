"""The saddle-point approximation of the published (fixed-reference) MATCH law.

Lugannani-Rice with Daniels' second continuity correction for the linear form of
counts whose sign decides the event (``S <= s`` is ``u c_i - v c_j <= r``),
vectorized over groups.
"""

import math

import numpy as np
from scipy.special import ndtr

from ._match_batch import _tails, family, subset
from ._match_exact import _linear_form, _smoothing_shift, exact

__all__ = ["saddlepoint"]

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
