"""The two-sample Wald test of proportions shared by the separation tests."""

import numpy as np
from scipy.special import ndtr

__all__ = ["wald_test"]


def wald_test(successes_a, n_a, successes_b, n_b):
    """Two-sided Wald z-test of equal proportions with unpooled variances.

    ``z = (p_a - p_b) / sqrt(p_a (1 - p_a) / n_a + p_b (1 - p_b) / n_b)`` with
    ``p = successes / n``; vectorized over any broadcast shape.

    Degenerate cases follow one rule: with zero standard error, equal proportions
    give ``z = 0`` (p-value 1) and different ones ``z = +-inf`` (p-value 0); a
    sample of size 0 gives ``NaN`` (nothing to test).

    Parameters
    ----------
    successes_a, n_a, successes_b, n_b : array-like
        Successes and sample sizes of the two samples (counts, or expected counts
        in power computations).

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
    """
    sa, na, sb, nb = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (successes_a, n_a, successes_b, n_b))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        pa, pb = sa / na, sb / nb
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
