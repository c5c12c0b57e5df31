"""The two-sample Wald test of proportions shared by the separation tests."""

import numpy as np
from scipy.special import ndtr

__all__ = ["wald_test", "z_test"]


def z_test(diff, var, defined=True):
    """Two-sided z-test of a difference ``diff`` with variance ``var``.

    Degenerate cases follow one rule: with zero standard error, a zero difference
    gives ``z = 0`` (p-value 1) and any other ``z = +-inf`` (p-value 0); where
    ``defined`` is False (nothing to test) ``z`` and the p-value are NaN.

    Parameters
    ----------
    diff, var : array-like
        Differences and their variances (any broadcast shape).
    defined : array-like of bool, default=True
        Where the comparison can be made.

    Returns
    -------
    z : ndarray
        ``diff / sqrt(var)``.
    pvalue : ndarray
        Two-sided p-value ``2 (1 - Phi(|z|))``.

    Examples
    --------
    >>> from sklearn_smallfair.stats._wald import z_test
    >>> z, p = z_test([0.2, 0.0, 0.1], [0.01, 0.0, 0.0])
    >>> z.round(4).tolist(), p.round(4).tolist()
    ([2.0, 0.0, inf], [0.0455, 1.0, 0.0])
    """
    diff = np.asarray(diff, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var)
        z = np.where(
            se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf)
        )
    z = np.where(defined, z, np.nan)
    return z, 2.0 * ndtr(-np.abs(z))


def wald_test(successes_a, n_a, successes_b, n_b, *, pooled=False):
    """Two-sided z-test of equal proportions, unpooled (Wald) or pooled (score).

    ``z = (p_a - p_b) / sqrt(p_a (1 - p_a) / n_a + p_b (1 - p_b) / n_b)`` with
    ``p = successes / n``; vectorized over any broadcast shape. With
    ``pooled=True`` the variance is the one under the null hypothesis,
    ``p (1 - p) (1 / n_a + 1 / n_b)`` with the pooled proportion ``p = (s_a +
    s_b) / (n_a + n_b)``: the two-proportion score test, which keeps its size when
    a small sample's proportion is 0 or 1 (the unpooled variance then has no
    contribution from that sample and the test rejects far too often).

    Degenerate cases follow one rule: with zero standard error, equal proportions
    give ``z = 0`` (p-value 1) and different ones ``z = +-inf`` (p-value 0); a
    sample of size 0 gives ``NaN`` (nothing to test).

    Parameters
    ----------
    successes_a, n_a, successes_b, n_b : array-like
        Successes and sample sizes of the two samples (counts, or expected counts
        in power computations).
    pooled : bool, default=False
        Use the pooled (null) variance instead of the unpooled one.

    Returns
    -------
    z : ndarray
        Wald statistic, positive when ``p_a > p_b``.
    pvalue : ndarray
        Two-sided p-value ``2 (1 - Phi(|z|))``.

    Examples
    --------
    >>> from sklearn_smallfair.stats._wald import wald_test
    >>> z, p = wald_test(80, 100, 60, 100)
    >>> round(float(z), 4), round(float(p), 5)
    (3.1623, 0.00157)
    >>> z, p = wald_test(80, 100, 60, 100, pooled=True)
    >>> round(float(z), 4), round(float(p), 5)
    (3.0861, 0.00203)
    """
    sa, na, sb, nb = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (successes_a, n_a, successes_b, n_b))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        pa, pb = sa / na, sb / nb
        if pooled:
            pp = (sa + sb) / (na + nb)
            var = pp * (1 - pp) * (1 / na + 1 / nb)
        else:
            var = pa * (1 - pa) / na + pb * (1 - pb) / nb
    z, pvalue = z_test(pa - pb, var, (na > 0) & (nb > 0))
    if z.ndim == 0:
        return z[()], pvalue[()]
    return z, pvalue
