"""Additive (Laplace-style) smoothing of confusion matrices."""

import numpy as np

from .._params import Number
from ._base import BaseSmoothing


class AdditiveSmoothing(BaseSmoothing):
    """Add a pseudo-count ``eps`` to every confusion-matrix cell.

    ``eps=1`` is add-one (Laplace) smoothing; a tiny ``eps`` such as ``1e-10``
    ("bashful" smoothing) only makes 0/0 ratios defined. Metrics are then computed
    on the smoothed cells. Unlike :class:`CrossPriorSmoothing` the total grows by
    ``4 * eps`` and every cell is pulled toward the same value, whatever the
    reference group looks like.

    Parameters
    ----------
    eps : float, default=1.0
        Pseudo-count added to each cell, ``eps >= 0``.

    See Also
    --------
    CrossPriorSmoothing : Shrink toward a reference group's proportions.

    Examples
    --------
    >>> from sklearn_smallfair.smoothing import AdditiveSmoothing
    >>> AdditiveSmoothing(eps=1.0).transform([3, 0, 1, 0])
    array([4., 1., 2., 1.])
    """

    _parameter_constraints: dict = {"eps": [Number(0, None, closed="left")]}

    def __init__(self, eps=1.0):
        self.eps = eps

    def _coefficients(self, n, reference_counts, n_cells=4):
        eps = float(self.eps)
        return np.ones_like(n), np.full((*n.shape[:-1], n_cells), eps)
