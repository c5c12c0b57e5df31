"""Cross-Prior Smoothing (CPS): shrink a group's matrix toward a reference."""

import numpy as np

from .._params import Number
from ._base import BaseSmoothing


class CrossPriorSmoothing(BaseSmoothing):
    """Cross-Prior Smoothing of a group's confusion matrix toward a reference.

    With reference proportions ``p' = r / sum(r)`` and a group matrix ``c`` of size
    ``n``, the smoothed matrix is ``(c + lam * p') / (n + lam) * n``: the Dirichlet
    posterior mean with prior ``alpha = lam * p'`` (``alpha_c = c + lam * p'_c``),
    renormalised to the group's size. Cells stay fractional, sum to ``n``, and are
    all positive when every reference cell is positive, so joint-ratio metrics of
    small groups become defined and shrink toward the reference's values.

    Per cell proportion the estimator has bias ``lam / (n + lam) * (p'_c - p_c)``
    and variance ``n p_c (1 - p_c) / (n + lam)^2`` under multinomial sampling.

    Parameters
    ----------
    lam : float, default=10.0
        Total pseudo-count (prior strength), ``lam >= 0``. ``lam=0`` is the identity;
        ``lam -> inf`` gives ``n * p'``.

    See Also
    --------
    AdditiveSmoothing : Add the same pseudo-count to every cell.
    sklearn_smallfair.reference_counts : Leave-one-group-out and other references.

    Examples
    --------
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> cps = CrossPriorSmoothing(lam=10)
    >>> cps.transform([3, 0, 1, 0], reference_counts=[40, 10, 20, 30])
    array([2.        , 0.28571429, 0.85714286, 0.85714286])
    >>> float(cps.transform([3, 0, 1, 0], reference_counts=[40, 10, 20, 30]).sum())
    4.0
    """

    requires_reference = True
    _parameter_constraints: dict = {"lam": [Number(0, None, closed="left")]}

    def __init__(self, lam=10.0):
        self.lam = lam

    def _coefficients(self, n, reference_counts):
        lam = float(self.lam)
        ref_total = reference_counts.sum(axis=-1, keepdims=True)
        if (ref_total <= 0).any():
            raise ValueError(
                "reference_counts has a matrix with zero total, so it has no "
                "proportions to smooth toward; choose another reference."
            )
        prior = reference_counts / ref_total
        denom = n + lam
        # scale = n / (n + lam) is exactly 1.0 when lam == 0, so lam=0 is the exact
        # identity; n + lam == 0 only for an empty matrix with lam == 0.
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(denom > 0, n / denom, 1.0)
        return scale, lam * prior * scale
