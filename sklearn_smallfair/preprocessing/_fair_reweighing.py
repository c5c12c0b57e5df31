"""FairReweighing: Reweighing for continuous labels by neighbour-count densities."""

import numbers

import numpy as np

from .._compat import Interval
from .._params import validate_params
from .._validation import _as_1d, _check_no_missing
from ._fairbalance import _group_label_cells

__all__ = ["fair_reweighing_weights"]


def _neighbour_counts(values, keys, width):
    """Per sample ``i``: ``#{j : keys_j == keys_i, |values_j - values_i| < width}``.

    Sorted once by ``(keys, values)``; each count is the difference of two binary
    searches within the sample's own key block (no pairwise distances).
    """
    order = np.lexsort((values, keys))
    sorted_keys, sorted_values = keys[order], values[order]
    # block k of sorted_keys starts at starts[k] and ends before ends[k]
    uniq, starts = np.unique(sorted_keys, return_index=True)
    ends = np.append(starts[1:], len(keys))
    block = np.searchsorted(uniq, keys)
    # shift every block so that blocks are disjoint and ordered: the searches on
    # the whole array then never leave the sample's own block
    span = np.ptp(values) + 2.0 * width + 1.0
    shift = np.searchsorted(uniq, sorted_keys) * span
    shifted = sorted_values + shift
    own = values + block * span
    upper = np.searchsorted(shifted, own + width, side="left")
    lower = np.searchsorted(shifted, own - width, side="right")
    upper = np.minimum(upper, ends[block])
    lower = np.maximum(lower, starts[block])
    return (upper - lower).astype(np.float64)


@validate_params(
    {
        "y": ["array-like"],
        "sensitive_features": ["array-like"],
        "radius": [Interval(numbers.Real, 0, None, closed="neither")],
    }
)
def fair_reweighing_weights(y, *, sensitive_features, radius=0.5):
    """FairReweighing sample weights: Reweighing for continuous labels.

    Reweighing (:func:`reweighing_weights`) gives the cell ``(a, y)`` the weight
    ``P(a) P(y) / P(a, y)``; with a continuous label (story points, prices) every
    label value is its own cell and the weights carry no information. FairReweighing
    replaces the probabilities by densities estimated by counting neighbours: with
    ``h = radius * sd(y)`` (``sd`` the standard deviation with ``ddof=0``),

    .. math::

        r_i = \\frac{|A = a_i| \\; \\#\\{j : |y_j - y_i| < h\\}}
                   {\\#\\{j : a_j = a_i, \\; |y_j - y_i| < h\\}},
        \\qquad w_i = N \\, \\frac{r_i}{\\sum_k r_k},

    so the weights sum to ``N``. Each count includes the sample itself, so every
    ratio is defined. Samples whose label is frequent in the whole data but rare
    in their own group are up-weighted, which makes the weighted label
    distribution closer to being the same in every group.

    This is the ``"Neighbor"`` density and ``"Reweighing"`` treatment of the
    published code (``DensityBalance.weight``), which counts the neighbours within
    Euclidean distance ``radius`` of the standardized ``(A, y)``, of ``A`` and of
    ``y``. For a binary attribute the standardized groups are at least
    ``1 / sd(A) >= 2`` apart, so with ``radius < 2`` the neighbours of ``(A, y)``
    are exactly the neighbours of ``y`` in the same group and the two definitions
    give the same weights. Here the groups are always matched exactly, whatever
    their number or coding.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Numeric labels (continuous or ordinal).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group label of each sample. Several columns define intersectional groups.
    radius : float, default=0.5
        Neighbourhood half-width in standard deviations of ``y`` (the published
        code's 0.5). When ``y`` is constant every sample is a neighbour of every
        other and the weights are those of Reweighing (all 1).

    Returns
    -------
    sample_weight : ndarray of float64, shape (n_samples,)
        The weight of each sample; positive, summing to ``n_samples``.

    See Also
    --------
    reweighing_weights : The same idea for discrete labels, with exact counts.

    References
    ----------
    The comparative-separation study's code, ``real/src/density_balance.py`` and
    ``real/src/density_est.py``, https://github.com/hil-se/Comparative_Separation.

    Examples
    --------
    Group ``1`` has the large labels, group ``0`` the small ones:

    >>> from sklearn_smallfair.preprocessing import fair_reweighing_weights
    >>> y = [1, 2, 3, 5, 8, 2, 3, 5, 8, 13]
    >>> groups = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    >>> w = fair_reweighing_weights(y, sensitive_features=groups)
    >>> w.round(3)
    array([0.804, 0.893, 1.071, 1.071, 1.071, 1.339, 1.071, 1.071, 1.071,
           0.536])
    >>> round(float(w.sum()), 10)
    10.0

    With ``h = 0.5 sd(y) = 1.76``, the label 2 of group 1 has 5 neighbours in the
    data (1, 2, 2, 3, 3, itself included) and 2 in its group (2, 3): ``r = 5 x 5 /
    2 = 12.5``, the largest ratio. The label 13 is its own only neighbour:
    ``r = 5 x 1 / 1 = 5``, the smallest.
    """
    labels = _as_1d(y, "y")
    _check_no_missing(labels, "y")
    try:
        values = labels.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "y must be numeric (continuous or ordinal labels); for class labels "
            "use reweighing_weights."
        ) from None
    if not np.isfinite(values).all():
        raise ValueError("y contains infinite values; pass finite numeric labels.")
    cell, joint = _group_label_cells(labels, sensitive_features)
    n = values.shape[0]
    group = cell // joint.shape[1]
    sd = values.std()
    width = radius * sd if sd > 0 else np.inf
    if not np.isfinite(width):  # constant y: every sample is everyone's neighbour
        return np.ones(n, dtype=np.float64)
    n_y = _neighbour_counts(values, np.zeros(n, dtype=np.int64), width)
    n_ay = _neighbour_counts(values, group, width)
    ratio = joint.sum(axis=1)[group] * n_y / n_ay
    return n * ratio / ratio.sum()
