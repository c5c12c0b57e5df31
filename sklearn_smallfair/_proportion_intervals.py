"""Closed-form intervals of proportions and of their differences and ratios,
vectorized over groups: Clopper-Pearson, Wilson, Jeffreys, Beta posteriors, the
MOVER of a mean, Newcombe's interval of a difference and Katz's of a ratio."""

import numpy as np
from scipy.stats import beta, norm

__all__ = [
    "SCORE_FUNCTIONS",
    "beta_interval",
    "clopper_pearson_interval",
    "fold_interval",
    "jeffreys_interval",
    "katz_interval",
    "mover_mean_interval",
    "newcombe_interval",
    "sidak_level",
    "wilson_interval",
]


def _z(alpha):
    return norm.ppf(1.0 - alpha / 2.0)


#: Beyond a Beta parameter of ``2**40``, the quantiles are the normal law's of
#: the same mean and variance (see :func:`_beta_quantile`).
_NORMAL_BETA_EXPONENT = 40


def _beta_quantile(q, a, b):
    """``beta.ppf(q, a, b)`` where ``a, b > 0``; NaN elsewhere (masked by callers).

    Where ``a + b`` exceeds ``2**40`` (a huge pseudo-count, or counts of huge
    weights) the law's spread, about ``(a + b)**-0.5``, is below ``1e-6`` and its
    skewness below ``1e-6`` too, so the normal law of the same mean and variance
    gives the quantile to about ``1e-12``; it is used there, computed from
    ``a / (a + b)`` so that no parameter overflows (scipy's ``beta.ppf`` fails on
    such parameters in some releases).
    """
    q, a, b = np.broadcast_arrays(
        np.asarray(q, dtype=np.float64),
        np.asarray(a, dtype=np.float64),
        np.asarray(b, dtype=np.float64),
    )
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (b > 0)
    top = np.maximum(a, b)
    huge = ok & np.isfinite(top) & (top > 2.0**_NORMAL_BETA_EXPONENT)
    exact = ok & ~huge
    if exact.any():
        out[exact] = beta.ppf(q[exact], a[exact], b[exact])
    if huge.any():
        _, exponent = np.frexp(top[huge])  # scaled: a + b cannot overflow
        ah, bh = np.ldexp(a[huge], -exponent), np.ldexp(b[huge], -exponent)
        total = ah + bh
        mean = ah / total
        sd = np.sqrt(mean * (bh / total)) * np.sqrt(
            np.ldexp(1.0, -exponent) / (total + np.ldexp(1.0, -exponent))
        )
        out[huge] = np.clip(mean + norm.ppf(q[huge]) * sd, 0.0, 1.0)
    return out


def clopper_pearson_interval(k, m, alpha):
    """Exact (Clopper-Pearson) interval for ``k`` successes in ``m`` trials.

    ``beta.ppf(alpha/2, k, m - k + 1)`` and ``beta.ppf(1 - alpha/2, k + 1, m - k)``,
    with 0 and 1 at ``k = 0`` and ``k = m``; NaN where ``m = 0``.
    """
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    low = np.where(k > 0, _beta_quantile(alpha / 2.0, k, m - k + 1.0), 0.0)
    high = np.where(k < m, _beta_quantile(1.0 - alpha / 2.0, k + 1.0, m - k), 1.0)
    return _mask_empty(low, high, m)


def wilson_interval(k, m, alpha):
    """Wilson score interval (without continuity correction); NaN where ``m = 0``."""
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    z = _z(alpha)
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        denom = 1.0 + z2 / m
        center = (p + z2 / (2.0 * m)) / denom
        half = z * np.sqrt(np.maximum(p * (1.0 - p) / m + z2 / (4.0 * m * m), 0.0))
        half = half / denom
    # at k = 0 (k = m) the lower (upper) bound is exactly 0 (1): the formula's
    # difference of two equal terms leaves a rounding residue otherwise
    low = np.where(k > 0, np.clip(center - half, 0.0, 1.0), 0.0)
    high = np.where(k < m, np.clip(center + half, 0.0, 1.0), 1.0)
    return _mask_empty(low, high, m)


def jeffreys_interval(k, m, alpha):
    """Jeffreys interval: the equal-tailed ``Beta(k + 1/2, m - k + 1/2)`` interval.

    With Brown, Cai and DasGupta's (2001) boundary rule: the lower bound is 0 when
    ``k = 0`` and the upper bound 1 when ``k = m``. NaN where ``m = 0``.
    """
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    a, b = k + 0.5, m - k + 0.5
    low = np.where(k > 0, _beta_quantile(alpha / 2.0, a, b), 0.0)
    high = np.where(k < m, _beta_quantile(1.0 - alpha / 2.0, a, b), 1.0)
    return _mask_empty(low, high, m)


def beta_interval(a, b, alpha):
    """Equal-tailed interval of ``Beta(a, b)``; a zero parameter is a point mass.

    ``a = 0`` (no numerator mass) gives ``[0, 0]``, ``b = 0`` gives ``[1, 1]``,
    both zero NaN.
    """
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    low = _beta_quantile(alpha / 2.0, a, b)
    high = _beta_quantile(1.0 - alpha / 2.0, a, b)
    low = np.where(a == 0, 0.0, np.where(b == 0, 1.0, low))
    high = np.where(a == 0, 0.0, np.where(b == 0, 1.0, high))
    both = (a == 0) & (b == 0)
    return np.where(both, np.nan, low), np.where(both, np.nan, high)


def _mask_empty(low, high, m):
    empty = ~(m > 0)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


SCORE_FUNCTIONS = {
    "clopper-pearson": clopper_pearson_interval,
    "wilson": wilson_interval,
    "jeffreys": jeffreys_interval,
}


def mover_mean_interval(k, m, alpha, method="wilson", fill=np.nan):
    """Interval of the mean of independent proportions ``k / m`` over the last axis.

    Zou and Donner's MOVER (method of variance estimates recovery, the
    construction of Newcombe's interval for a difference): with each
    proportion's own interval ``(l_i, u_i)`` (``method``: Wilson, Clopper-Pearson
    or Jeffreys) and weights ``w = 1 / K'`` over the ``K'`` proportions with
    ``m > 0``, ``mean - sqrt(sum w^2 (p_i - l_i)^2)`` to ``mean + sqrt(sum w^2
    (u_i - p_i)^2)``. NaN where no proportion has ``m > 0``.

    With a number ``fill``, a proportion with ``m = 0`` is the constant ``fill``
    instead (the value an undefined rate takes in a macro average under
    ``zero_division``): the mean is over all ``K`` entries, and the constants
    add no width.
    """
    k = np.asarray(k, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    low, high = SCORE_FUNCTIONS[method](k, m, alpha)
    present = m > 0
    count = present.sum(axis=-1)
    constant = 0.0 if np.isnan(fill) else float(fill)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(present, k / np.where(present, m, 1.0), constant)
        if np.isnan(fill):
            w = present / count[..., None]
        else:
            w = np.full(p.shape, 1.0 / p.shape[-1])
        mean = (w * p).sum(axis=-1)
        down = np.sqrt((np.where(present, w * (p - low), 0.0) ** 2).sum(axis=-1))
        up = np.sqrt((np.where(present, w * (high - p), 0.0) ** 2).sum(axis=-1))
    lo = np.clip(mean - down, 0.0, 1.0)
    hi = np.clip(mean + up, 0.0, 1.0)
    return np.where(count > 0, lo, np.nan), np.where(count > 0, hi, np.nan)


def newcombe_interval(k1, m1, k2, m2, alpha):
    """Newcombe's hybrid score interval for ``k1/m1 - k2/m2`` (method 10, 1998).

    From the Wilson intervals ``(l_i, u_i)`` of the two proportions:
    ``d - sqrt((p1 - l1)^2 + (u2 - p2)^2)`` to ``d + sqrt((u1 - p1)^2 + (p2 - l2)^2)``.
    """
    l1, u1 = wilson_interval(k1, m1, alpha)
    l2, u2 = wilson_interval(k2, m2, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1 = np.asarray(k1, float) / np.asarray(m1, float)
        p2 = np.asarray(k2, float) / np.asarray(m2, float)
    d = p1 - p2
    low = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return low, high


def katz_interval(k1, m1, k2, m2, alpha):
    """Katz's log interval for the ratio ``(k1/m1) / (k2/m2)``.

    ``exp(log(RR) -/+ z sqrt(1/k1 - 1/m1 + 1/k2 - 1/m2))``. When a cell of the
    2 x 2 table (``k1``, ``m1 - k1``, ``k2``, ``m2 - k2``) is 0, 1/2 is added to each
    cell (Haldane's correction) for the interval; it is NaN where ``m1`` or ``m2``
    is 0.
    """
    k1, m1, k2, m2 = (np.asarray(x, dtype=np.float64) for x in (k1, m1, k2, m2))
    zero = (k1 == 0) | (k1 == m1) | (k2 == 0) | (k2 == m2)
    c = np.where(zero, 0.5, 0.0)
    a1, n1, a2, n2 = k1 + c, m1 + 2 * c, k2 + c, m2 + 2 * c
    z = _z(alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_rr = np.log(a1 / n1) - np.log(a2 / n2)
        se = np.sqrt(np.maximum(1 / a1 - 1 / n1 + 1 / a2 - 1 / n2, 0.0))
        low, high = np.exp(log_rr - z * se), np.exp(log_rr + z * se)
    bad = ~((m1 > 0) & (m2 > 0))
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def sidak_level(alpha, k=2):
    """Per-component level so that ``k`` independent intervals hold jointly."""
    return 1.0 - (1.0 - alpha) ** (1.0 / k)


def fold_interval(low, high):
    """The range of ``|x|`` for ``x`` in ``[low, high]``."""
    straddles = (low <= 0) & (high >= 0)
    near = np.where(straddles, 0.0, np.minimum(np.abs(low), np.abs(high)))
    far = np.maximum(np.abs(low), np.abs(high))
    return near, far
