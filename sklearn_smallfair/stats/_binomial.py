"""Binomial kernels of the exact laws, at any size.

``P(Y <= m)`` and ``P(Y >= m)`` of ``Y ~ Bin(size, prob)`` by boost's incomplete
beta function through :mod:`scipy.special` (exact for sizes beyond 2^31), the
window of values outside which a binomial law has less than ``WINDOW_MASS``, and
``floor((a + c x) / d)`` in exact integer arithmetic for the thresholds of sums
over a denominator.
"""

import math

import numpy as np
from scipy.special import betainc, betaincc

__all__ = ["WINDOW_MASS", "window"]

#: Largest binomial mass that the windowed exact sums leave out, per group.
WINDOW_MASS = 1e-15
#: ``log(2 / WINDOW_MASS)``: each side of a window leaves out at most half of it.
_LOG_SIDE = math.log(2.0 / WINDOW_MASS)


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
    >>> from sklearn_smallfair.stats._binomial import window
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
