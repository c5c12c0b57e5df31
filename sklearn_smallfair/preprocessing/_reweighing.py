"""Reweighing sample weights (Kamiran and Calders)."""

import numpy as np

from .._params import validate_params
from ._fairbalance import _group_label_cells

__all__ = ["reweighing_weights"]


@validate_params({"y": ["array-like"], "sensitive_features": ["array-like"]})
def reweighing_weights(y, *, sensitive_features):
    """Reweighing sample weights that make the label independent of the group.

    Each sample of group ``a`` with label ``y`` gets the weight

    .. math::

        w(a, y) = \\frac{|A = a| \\, |Y = y|}{N \\, |A = a, Y = y|},

    the count expected in the cell ``(a, y)`` if ``A`` and ``Y`` were independent
    divided by the count observed in it (Kamiran and Calders, 2012). After
    weighting, the weighted joint distribution of ``(A, Y)`` is the product of its
    marginals, the weighted marginals of ``A`` and of ``Y`` are the unweighted
    ones, and the weights sum to ``N``. Pass them as ``sample_weight`` to the
    ``fit`` of an estimator to train it on data in which the label does not depend
    on the group.

    Any number of groups and of label values is accepted (binary labels are the
    usual case). A cell ``(a, y)`` without samples gets no weight, as there is no
    sample in it; the other weights are unchanged.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels (any hashable values: numbers, booleans or strings).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group label of each sample. Several columns define intersectional groups.

    Returns
    -------
    sample_weight : ndarray of float64, shape (n_samples,)
        The weight ``w(a, y)`` of each sample; positive, summing to ``n_samples``.

    References
    ----------
    F. Kamiran and T. Calders, "Data preprocessing techniques for classification
    without discrimination", Knowledge and Information Systems 33(1), 1-33, 2012.

    Examples
    --------
    Group ``"a"`` has 3 positives out of 4 samples, group ``"b"`` 1 out of 4;
    reweighing up-weights the under-represented cells ``(a, 0)`` and ``(b, 1)``:

    >>> from sklearn_smallfair.preprocessing import reweighing_weights
    >>> y = [1, 1, 1, 0, 1, 0, 0, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> w = reweighing_weights(y, sensitive_features=groups)
    >>> w
    array([0.66666667, 0.66666667, 0.66666667, 2.        , 2.        ,
           0.66666667, 0.66666667, 0.66666667])
    >>> float(w.sum())
    8.0

    The weighted positive rate is now the same in both groups:

    >>> import numpy as np
    >>> pos, a = np.array(y) == 1, np.array(groups) == "a"
    >>> rate_a = w[pos & a].sum() / w[a].sum()
    >>> rate_b = w[pos & ~a].sum() / w[~a].sum()
    >>> round(float(rate_a), 6), round(float(rate_b), 6)
    (0.5, 0.5)
    """
    cell, joint = _group_label_cells(y, sensitive_features)
    n = cell.shape[0]
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0)) / n
    # every sample's cell is non-empty, so the division below is always defined;
    # empty cells (joint == 0) are never looked up
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(joint > 0, expected / joint, 0.0)
    return weights.ravel()[cell].astype(np.float64, copy=False)
