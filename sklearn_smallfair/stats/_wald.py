"""The two-sample Wald test of proportions shared by the separation tests."""

import numpy as np
from scipy.special import ndtr

__all__ = ["wald_test"]


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
            se = np.sqrt(pp * (1 - pp) * (1 / na + 1 / nb))
        else:
            se = np.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
        diff = pa - pb
        z = np.where(
            se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf)
        )
    z = np.where((na > 0) & (nb > 0), z, np.nan)
    pvalue = 2.0 * ndtr(-np.abs(z))
    if z.ndim == 0:
        return z[()], pvalue[()]
    return z, pvalue
