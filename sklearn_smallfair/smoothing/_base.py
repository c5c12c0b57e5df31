"""Common base of the confusion-matrix smoothers."""

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_counts


class BaseSmoothing(BaseEstimator):
    """Base class: a stateless transform of confusion matrices ``(..., 4)``.

    Subclasses implement ``_transform(counts, reference_counts)``. Smoothers are
    scikit-learn estimators for the sake of ``get_params``, ``clone`` and ``repr``;
    they learn nothing, so ``fit`` only validates the parameters.
    """

    #: Whether :meth:`transform` needs ``reference_counts``.
    requires_reference = False

    def fit(self, counts=None, reference_counts=None):
        """Validate the parameters; smoothers have no learned state.

        Returns
        -------
        self : object
        """
        self._check_params()
        return self

    def transform(self, counts, reference_counts=None):
        """Smooth confusion matrices.

        Parameters
        ----------
        counts : array-like of shape (..., 4)
            Cells ``(TP, FN, FP, TN)``.
        reference_counts : array-like of shape (..., 4), default=None
            Reference matrices, broadcast against ``counts`` (required by
            :class:`CrossPriorSmoothing`).

        Returns
        -------
        smoothed : ndarray of float64, shape (...broadcast..., 4)
        """
        self._check_params()
        counts = check_counts(counts).astype(np.float64)
        if reference_counts is not None:
            reference_counts = check_counts(
                reference_counts, name="reference_counts"
            ).astype(np.float64)
        elif self.requires_reference:
            raise ValueError(
                f"{type(self).__name__} needs reference_counts (the reference "
                f"group's confusion matrix, e.g. all other groups together)."
            )
        return self._transform(counts, reference_counts)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags
