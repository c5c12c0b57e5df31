"""Planning and null ranges of the MATCH test at large groups: the Edgeworth law.

For joint ratios and marginal benefit, the exact law of the MATCH statistic is
a sum over ``O(sqrt(n))`` denominators (:func:`._binomial.window`), and its
critical values are searched on a lattice of ``2^(2 log2 n)`` points: at
groups of millions of people a null range or a power costs seconds. There the
law is, to far better than any reported digit, its Edgeworth
expansion, computed in ``O(1)`` per group; :func:`large` says where.

The events of both families are linear in the counts:

* a joint ratio ``S = c_i / (c_i + c_j)`` is at most ``s`` when ``T = (1 - s) c_i
  - s c_j <= 0``, a sum of ``n`` independent units taking ``1 - s`` (probability
  ``p_i``), ``-s`` (``p_j``) and 0;
* marginal benefit ``(FP - FN) / n`` is at most ``x / n`` when ``X = FP - FN <=
  x``, a sum of units taking 1, -1 and 0, on the integers (span 1 when
  ``p_TP + p_TN > 0``), evaluated at ``x + 1/2`` (the continuity correction
  that removes the first lattice term of Esseen's expansion).

``P(T <= t) ~ Phi(z) - phi(z) [gamma He2(z) / 6 + kappa He3(z) / 24 + gamma^2
He5(z) / 72]`` (the two-term Edgeworth expansion) with ``z = (t - E T) /
sd(T)``, ``gamma`` the skewness and ``kappa`` the excess kurtosis of ``T``,
``He2 = z^2 - 1``, ``He3 = z^3 - 3 z``, ``He5 = z^5 - 10 z^3 + 15 z``; the
neglected terms are of order ``sigma^-3`` in probability (``sigma^-2`` for the
lattice of ``mb``), ``sigma^2`` the variance of the counts
(``n p_i p_j / (p_i + p_j)`` for a joint ratio, ``n (p_FP + p_FN - (p_FP -
p_FN)^2)`` for ``mb``), so at ``sigma^2 >= LARGE_VARIANCE`` a quantile moves by
a small fraction of a count. The joint ratio's scores ``c / K`` are
interleaved across denominators, so its law has no lattice term but at scores
``a / b`` of small ``b``, which shift the quantile by at most ``1 / b`` of a
lattice step ``1 / (n (p_i + p_j))``. At the threshold and above it the
tests hold the ranges within a quarter of a lattice step of the exact ranges
(measured: 0.06 of a step at tail levels 0.025 and 0.0005, 0.13 down to 1e-9,
where the one-term expansion was off by a whole step; ``mb``: the same
integers) and the powers within 1e-4 of the exact powers (measured:
1.5e-5). The joint ratio is conditional on
``c_i + c_j >= 1``, whose complement has probability ``(1 - p_i - p_j)^n <=
exp(-4 LARGE_VARIANCE)`` here, and is neglected.
"""

import numpy as np
from scipy.special import ndtr, ndtri

from .._confusion import FN, FP
from ._match_batch import family, joint_cells

__all__ = ["LARGE_VARIANCE", "large", "large_power", "large_range"]

#: Variance of the counts (``sigma^2``, see the module) from which null ranges
#: and powers use the Edgeworth law.
LARGE_VARIANCE = 1e4
_STEPS = 400  # most steps of the search of a quantile (it ends long before)
_SQRT_2PI = np.sqrt(2.0 * np.pi)


def _units(metric, p):
    """``(a, b, c, joint)``: the units' probabilities of ``1 - s`` / ``+1`` (a),
    ``-s`` / ``-1`` (b) and 0 (c), shape (G,) each."""
    if family(metric) == "mb":
        i, j, joint = FP, FN, False
    else:
        (i, j), joint = joint_cells(metric), True
    a, b = p[:, i], p[:, j]
    return a, b, np.clip(1.0 - a - b, 0.0, 1.0), joint


def large(metric, n, p):
    """Per group, whether the Edgeworth law is used: a joint ratio or ``mb``
    whose counts have variance at least ``LARGE_VARIANCE`` (``mb`` also needs
    ``p_TP + p_TN > 0``: its lattice then has span 1).

    ``n`` (G,) int, ``p`` (G, 4) or (4,) proportions.
    """
    n = np.asarray(n, np.int64)
    fam = family(metric)
    if fam not in ("joint_ratio", "mb"):
        return np.zeros(n.shape, bool)
    p = np.broadcast_to(np.asarray(p, np.float64), (*n.shape, 4))
    a, b, c, joint = _units(metric, p)
    with np.errstate(invalid="ignore", divide="ignore"):
        if joint:
            unit = np.where(a + b > 0, a * b / (a + b), 0.0)
        else:
            unit = np.where(c > 0, a + b - (a - b) ** 2, 0.0)
    return n.astype(np.float64) * unit >= LARGE_VARIANCE


def _tails(a, b, c, n, up, down, t):
    """``(P(T <= t), P(T >= t))`` for ``T`` the sum of ``n`` units ``up`` (prob.
    a), ``-down`` (b), 0 (c): the two-term Edgeworth expansion, each tail in its
    own form (no cancellation in small tails); arrays broadcast together."""
    m1 = a * up - b * down
    d1, d2, d0 = up - m1, -down - m1, -m1
    k2 = a * d1**2 + b * d2**2 + c * d0**2
    k3 = a * d1**3 + b * d2**3 + c * d0**3
    k4 = a * d1**4 + b * d2**4 + c * d0**4 - 3 * k2**2
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (t - n * m1) / np.sqrt(n * k2)
        gamma = k3 / (k2 * np.sqrt(n * k2))
        kurt = k4 / (k2**2 * n)
        z2 = z * z
        # Hermite polynomials He2, He3 and He5 of the two-term expansion
        poly = (
            gamma * (z2 - 1) / 6
            + kurt * z * (z2 - 3) / 24
            + gamma**2 * z * (z2 * z2 - 10 * z2 + 15) / 72
        )
        term = np.exp(-0.5 * z2) / _SQRT_2PI * poly
        lower, upper = ndtr(z) - term, ndtr(-z) + term
    flat = k2 <= 0  # a constant sum
    lower = np.where(flat, (n * m1 <= t).astype(np.float64), lower)
    upper = np.where(flat, (n * m1 >= t).astype(np.float64), upper)
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _lower(metric, n, p, s):
    """``P(S <= s)`` under the Edgeworth law, per group (``s`` a score; for
    ``mb`` the integer ``x = FP - FN``)."""
    a, b, c, joint = _units(metric, p)
    n = n.astype(np.float64)
    if joint:
        return _tails(a, b, c, n, 1.0 - s, s, 0.0)[0]
    return _tails(a, b, c, n, 1.0, 1.0, s + 0.5)[0]


def _upper(metric, n, p, s):
    """``P(S >= s)`` under the Edgeworth law, as :func:`_lower`."""
    a, b, c, joint = _units(metric, p)
    n = n.astype(np.float64)
    if joint:
        return _tails(a, b, c, n, 1.0 - s, s, 0.0)[1]
    return _tails(a, b, c, n, 1.0, 1.0, s - 0.5)[1]


def _solve(f, lo, hi, level, guess, scale, tol):
    """Per group a bracket ``[L, H]`` of width at most ``tol`` with ``f(L) <=
    level < f(H)`` (``f`` nondecreasing; the ends given need not be evaluated).

    Regula falsi on the probit scale, where ``f`` is close to a line of slope
    ``1 / scale`` (Illinois variant), started at ``guess``; a step that has not
    halved the bracket in two steps bisects it instead, so the search takes at
    most about twice the steps of a bisection, and usually four or five.
    """
    target = float(ndtri(level))
    zlo, zhi = np.full(lo.shape, -np.inf), np.full(lo.shape, np.inf)
    kept = np.zeros(lo.shape, np.int8)  # -1: lo kept last step, +1: hi kept
    widths = [np.inf, np.inf]
    x = guess
    for step in range(_STEPS):
        width = hi - lo
        mid = 0.5 * (lo + hi)
        active = (width > tol) & (mid > lo) & (mid < hi)
        if not active.any():
            break
        if step:
            with np.errstate(invalid="ignore", divide="ignore"):
                chord = lo + (target - zlo) / (zhi - zlo) * width
            x = np.where(
                np.isfinite(zlo) & np.isfinite(zhi),
                chord,
                np.where(
                    np.isfinite(zlo),
                    lo + (target - zlo) * scale * 1.5,
                    hi - (zhi - target) * scale * 1.5,
                ),
            )
        bisect = (step >= 3) & (2 * width > widths[-2])
        inside = np.isfinite(x) & (x > lo) & (x < hi)
        x = np.where(bisect | ~inside, mid, x)
        value = f(x)
        z = ndtri(np.clip(value, 1e-300, 1.0 - 1e-16))
        ok = value <= level
        up_lo, up_hi = active & ok, active & ~ok
        # Illinois: an end that survives twice is pulled halfway to the level
        zlo = np.where(
            up_lo, z, np.where(up_hi & (kept == -1), (zlo + target) / 2, zlo)
        )
        zhi = np.where(up_hi, z, np.where(up_lo & (kept == 1), (zhi + target) / 2, zhi))
        kept = np.where(up_hi, -1, np.where(up_lo, 1, kept)).astype(np.int8)
        widths.append(width)
        lo, hi = np.where(up_lo, x, lo), np.where(up_hi, x, hi)
    return lo, hi


def _criticals(metric, n, p, level):
    """``(x_L, x_U)``: reject when ``S <= x_L`` or ``S >= x_U`` (each tail at
    most ``level``); joint ratios: scores, ``mb``: integers ``FP - FN``.

    Both tails are searched together: the lower one on ``x``, the upper one on
    ``y = -x`` (where ``P(S >= -y)`` is nondecreasing).
    """
    n = np.asarray(n, np.int64)
    a, b, _c, joint = _units(metric, p)
    nf = n.astype(np.float64)
    nn, pp = np.r_[n, n], np.concatenate([p, p])
    G = n.shape[0]

    def f(x):
        return np.r_[
            _lower(metric, nn[:G], pp[:G], x[:G]),
            _upper(metric, nn[G:], pp[G:], -x[G:]),
        ]

    if joint:
        theta = a / (a + b)
        sd = np.sqrt(theta * (1 - theta) / (nf * (a + b)))
        guess = theta + float(ndtri(level)) * sd
        lo, hi = np.r_[np.zeros(G), -np.ones(G)], np.r_[np.ones(G), np.zeros(G)]
        tol = 1e-6 / (nf * (a + b))  # a millionth of a lattice step
        x_lo, y = _solve(
            f,
            lo,
            hi,
            level,
            np.r_[guess, -2 * theta + guess],
            np.r_[sd, sd],
            np.r_[tol, tol],
        )
        return x_lo[:G], -y[G:]
    mean, sd = nf * (a - b), np.sqrt(nf * (a + b - (a - b) ** 2))
    guess = mean + float(ndtri(level)) * sd
    lo, hi = np.r_[-nf - 1, -nf - 1], np.r_[nf, nf]
    x_lo, y = _solve(
        f,
        lo,
        hi,
        level,
        np.r_[guess, -2 * mean + guess],
        np.r_[sd, sd],
        np.full(2 * G, 1e-6),
    )
    # lower: the largest integer x with P(X <= x) <= level; upper: the smallest
    # with P(X >= x) <= level
    return np.floor(x_lo[:G]), np.ceil(-y[G:])


def large_range(metric, n, p, level):
    """Central range of the Edgeworth law of the MATCH statistic, as
    :func:`._planning.null_range` (``n`` (G,) int64, ``p`` (G, 4)): the scores
    where each tail probability crosses ``level``."""
    n = np.asarray(n, np.int64)
    p = np.broadcast_to(np.asarray(p, np.float64), (*n.shape, 4))
    x_lo, x_up = _criticals(metric, n, p, level)
    if family(metric) == "mb":
        nf = n.astype(np.float64)
        return (x_lo + 1) / nf, (x_up - 1) / nf
    return x_lo, x_up


def large_power(metric, n, p0, p1, level, sides):
    """Power of the MATCH test under the Edgeworth laws, as
    :func:`._planning._power`: the critical values of the null law ``p0`` at
    ``level`` per tail, their probability under ``p1`` (both (4,))."""
    n = np.asarray(n, np.int64)
    p0 = np.broadcast_to(np.asarray(p0, np.float64), (*n.shape, 4))
    p1 = np.broadcast_to(np.asarray(p1, np.float64), (*n.shape, 4))
    x_lo, x_up = _criticals(metric, n, p0, level)
    power = np.zeros(n.shape)
    if "lower" in sides:
        power += _lower(metric, n, p1, x_lo)
    if "upper" in sides:
        power += _upper(metric, n, p1, x_up)
    return np.clip(power, 0.0, 1.0)
