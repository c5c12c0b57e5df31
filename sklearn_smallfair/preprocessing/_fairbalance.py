"""FairBalance sample weights (Yu, Chakraborty and Menzies)."""

import numpy as np
from sklearn.utils.validation import check_consistent_length

from .._groups import _unique_inverse, check_sensitive_features
from .._params import validate_params
from .._validation import _as_1d, _check_no_missing

__all__ = ["fairbalance_weights"]


def _group_label_cells(y, sensitive_features):
    """``(cell, joint)``: each sample's (group, label) cell and the cell counts."""
    labels = _as_1d(y, "y")
    if not isinstance(sensitive_features, (str, bytes)) and np.ndim(sensitive_features):
        try:
            check_consistent_length(labels, sensitive_features)
        except ValueError:
            raise ValueError(
                f"y and sensitive_features have inconsistent lengths "
                f"({labels.shape[0]} and {len(sensitive_features)}); pass one group "
                f"label per sample."
            ) from None
    n = labels.shape[0]
    if n == 0:
        raise ValueError("y is empty; at least one sample is needed.")
    _check_no_missing(labels, "y")
    _, group_codes, _ = check_sensitive_features(sensitive_features, n)
    _, label_codes = _unique_inverse(labels)
    n_groups = int(group_codes.max()) + 1
    n_labels = int(label_codes.max()) + 1
    cell = group_codes * n_labels + label_codes
    joint = np.bincount(cell, minlength=n_groups * n_labels).reshape(n_groups, n_labels)
    return cell, joint


@validate_params({"y": ["array-like"], "sensitive_features": ["array-like"]})
def fairbalance_weights(y, *, sensitive_features):
    """FairBalance sample weights: balance the labels within every group.

    Each sample of group ``a`` with label ``y`` gets the weight

    .. math::

        w(a, y) = \\frac{|A = a|}{K \\, |A = a, Y = y|},

    where ``K`` is the number of label values. Every cell ``(a, y)`` then carries
    the total weight ``|A = a| / K``: within each group the labels are balanced
    (equal weighted counts), and each group keeps its size. Reweighing
    (:func:`reweighing_weights`) instead keeps each group's label *rate* equal to
    the overall one; FairBalance makes it ``1 / K`` in every group, the balance
    its authors argue moves a model trained on the weighted data toward
    equalized odds (Yu, Chakraborty and Menzies, 2024).

    With binary labels these are the weights of the comparative-separation
    study's code (``|A = a| / |A = a, Y = y| / 2``, not rescaled). They sum to
    ``n_samples`` when every group has every label value; a cell ``(a, y)``
    without samples gets no weight and the total is then smaller (the code does
    not rescale either).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels (any hashable values: numbers, booleans or strings).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group label of each sample. Several columns define intersectional groups,
        as in the published experiments (COMPAS: sex and race together).

    Returns
    -------
    sample_weight : ndarray of float64, shape (n_samples,)
        The weight ``w(a, y)`` of each sample; positive.

    See Also
    --------
    reweighing_weights : Weights that make the label independent of the group.

    References
    ----------
    Z. Yu, J. Chakraborty and T. Menzies, "FairBalance: How to achieve equalized
    odds with data pre-processing", IEEE Transactions on Software Engineering,
    2024.

    Examples
    --------
    Group ``"a"`` has 3 positives out of 4 samples, group ``"b"`` 1 out of 6:

    >>> from sklearn_smallfair.preprocessing import fairbalance_weights
    >>> y = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    >>> groups = ["a"] * 4 + ["b"] * 6
    >>> w = fairbalance_weights(y, sensitive_features=groups)
    >>> w.round(4)
    array([0.6667, 0.6667, 0.6667, 2.    , 3.    , 0.6   , 0.6   , 0.6   ,
           0.6   , 0.6   ])

    Within each group the positives and the negatives now weigh the same, half
    of the group's size:

    >>> import numpy as np
    >>> pos, a = np.array(y) == 1, np.array(groups) == "a"
    >>> [round(float(w[c].sum()), 6) for c in (pos & a, ~pos & a, pos & ~a, ~pos & ~a)]
    [2.0, 2.0, 3.0, 3.0]
    """
    cell, joint = _group_label_cells(y, sensitive_features)
    n_labels = joint.shape[1]
    group_size = joint.sum(axis=1, keepdims=True)
    # empty cells (joint == 0) are never looked up: every sample's cell is non-empty
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(joint > 0, group_size / (n_labels * joint), 0.0)
    return weights.ravel()[cell].astype(np.float64, copy=False)
