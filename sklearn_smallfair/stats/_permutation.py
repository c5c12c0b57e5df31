"""Permutation p-values.

:func:`permutation_pvalue` turns an observed statistic and its values on
resampled data into the p-value ``(1 + #{T* >= T}) / (1 + B)``, which is exact in
size: under exchangeability the observed statistic is one of ``B + 1`` exchangeable
values, so ``P(p <= alpha) <= alpha`` for every ``alpha`` and every ``B``.

:func:`two_sample_permutation_pvalues` applies it to two samples of binary
outcomes (successes ``x_a`` of ``n_a`` and ``x_b`` of ``n_b``): permuting the
sample labels of the ``n_a + n_b`` outcomes keeps the total of successes and
makes the first sample's successes hypergeometric, so each resample is one draw
``Hypergeometric(x_a + x_b, n - x_a - x_b, n_a)``, whatever ``n``.
"""

import numpy as np

from ._exact import TIE_RTOL, score_statistic

__all__ = ["permutation_pvalue", "two_sample_permutation_pvalues"]

#: Largest number of resampled statistics held at once.
_BLOCK = 2_000_000


def permutation_pvalue(observed, resampled, *, rtol=TIE_RTOL):
    """Permutation p-value ``(1 + #{T* >= T}) / (1 + B)`` along the last axis.

    Parameters
    ----------
    observed : array-like of shape (...)
        Observed statistics (larger is more extreme).
    resampled : array-like of shape (..., B)
        Statistics of ``B`` resamples under the null.
    rtol : float, default=1e-10
        Resampled values within this relative distance below the observed one
        count as ties (floating-point noise must not break exact ties).

    Returns
    -------
    pvalue : ndarray of shape (...)
        In ``[1 / (B + 1), 1]``; NaN where ``observed`` is NaN.

    Examples
    --------
    >>> from sklearn_smallfair.stats._permutation import permutation_pvalue
    >>> float(permutation_pvalue(2.0, [0.5, 2.0, 3.1, 1.0]))
    0.6
    """
    t = np.asarray(observed, dtype=np.float64)
    r = np.asarray(resampled, dtype=np.float64)
    threshold = t - rtol * np.abs(t)
    hits = (r >= threshold[..., None]).sum(axis=-1)
    p = (1.0 + hits) / (1.0 + r.shape[-1])
    return np.where(np.isnan(t), np.nan, p)


def two_sample_permutation_pvalues(x_a, n_a, x_b, n_b, *, n_resamples, rng):
    """Two-sided permutation p-values of equal proportions in two samples.

    The statistic is the absolute pooled score statistic ``|z|``
    (:func:`~sklearn_smallfair.stats._exact.score_statistic`); with the margins
    fixed by the permutation it orders the tables like ``|x_a - n_a (x_a + x_b)
    / (n_a + n_b)|``.

    Parameters
    ----------
    x_a, n_a, x_b, n_b : array-like of int
        Successes and sizes of the two samples, broadcast to one shape.
    n_resamples : int
        Number ``B`` of label permutations per table.
    rng : numpy.random.Generator
        Source of the permutations.

    Returns
    -------
    pvalue : ndarray
        ``(1 + #{|z*| >= |z|}) / (1 + B)``; NaN where a sample is empty.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats._permutation import (
    ...     two_sample_permutation_pvalues)
    >>> rng = np.random.default_rng(0)
    >>> p = two_sample_permutation_pvalues([9, 3], [10, 10], [2, 3], [10, 10],
    ...                                    n_resamples=9999, rng=rng)
    >>> p.round(4).tolist()
    [0.0057, 1.0]
    """
    xa, na, xb, nb = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.int64) for v in (x_a, n_a, x_b, n_b))
    )
    shape = xa.shape
    xa, na, xb, nb = (v.ravel() for v in (xa, na, xb, nb))
    out = np.full(xa.shape, np.nan)
    defined = np.flatnonzero((na > 0) & (nb > 0))
    observed = np.abs(score_statistic(xa, na, xb, nb))
    per_block = max(1, _BLOCK // n_resamples)
    for start in range(0, defined.shape[0], per_block):
        k = defined[start : start + per_block]
        good = xa[k] + xb[k]
        draws = rng.hypergeometric(
            good, na[k] + nb[k] - good, na[k], size=(n_resamples, k.shape[0])
        ).T
        resampled = np.abs(
            score_statistic(draws, na[k, None], good[:, None] - draws, nb[k, None])
        )
        out[k] = permutation_pvalue(observed[k], resampled)
    return out.reshape(shape)
