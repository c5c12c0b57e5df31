"""Common base of the confusion-matrix smoothers."""

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import check_counts


class BaseSmoothing(BaseEstimator):
    """Base class: a transform of confusion matrices ``(..., 4)``.

    Subclasses implement ``_coefficients(n, reference_counts)``: the affine map
    ``c -> scale * c + offset`` applied to matrices of total ``n``. Smoothers are
    scikit-learn estimators for the sake of ``get_params``, ``clone`` and ``repr``;
    with fixed parameters they learn nothing, so ``fit`` only validates the
    parameters (:class:`CrossPriorSmoothing` with ``lam="auto"`` learns ``lam_``).
    """

    #: Whether :meth:`transform` needs ``reference_counts``.
    requires_reference = False
    _parameter_constraints: dict = {}

    def _check_params(self):
        """Check the parameters against ``_parameter_constraints``."""
        self._validate_params()

    def fit(self, counts=None, reference_counts=None):
        """Validate the parameters; smoothers with fixed parameters learn nothing.

        Parameters
        ----------
        counts : array-like of shape (..., 4), default=None
            Ignored by smoothers with fixed parameters.
        reference_counts : array-like of shape (..., 4), default=None
            Ignored by smoothers with fixed parameters.

        Returns
        -------
        self : object
        """
        return self._fit(counts, reference_counts, stacklevel=3)

    def _fit(self, counts, reference_counts, *, stacklevel):
        """:meth:`fit`; ``stacklevel`` is the one of a warning issued right here
        (each call level adds one, so that warnings point at the user's call)."""
        self._check_params()
        return self

    def _fit_checks_references(self):
        """Whether :meth:`fit` itself checks (and warns about) the references, so
        that :meth:`fit_transform` does not do it twice."""
        return False

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
        return self._smooth(counts, reference_counts, warn=True, stacklevel=3)

    def _smooth(self, counts, reference_counts, *, warn, stacklevel):
        """Validate, then :meth:`_transform` (``stacklevel``: see :meth:`_fit`)."""
        self._check_params()
        checked = check_counts(counts).astype(np.float64)
        ref = self._check_reference(reference_counts)
        return self._transform(
            checked,
            ref,
            warn=warn,
            source=(counts, reference_counts),
            stacklevel=stacklevel + 1,
        )

    def fit_transform(self, counts, reference_counts=None):
        """Fit on ``counts`` (and their references), then smooth them.

        Equivalent to ``fit(counts, reference_counts).transform(counts,
        reference_counts)``, with the references checked (and warned about) once.

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
        self._fit(counts, reference_counts, stacklevel=3)
        return self._smooth(
            counts,
            reference_counts,
            warn=not self._fit_checks_references(),
            stacklevel=3,
        )

    def _transform(self, counts, reference_counts, *, warn, source, stacklevel):
        """Smooth validated float counts.

        ``warn``: whether to check the references (``False`` when :meth:`fit` just
        did); ``source``: the arguments as given, for group labels in warnings;
        ``stacklevel``: see :meth:`_fit`.
        """
        n = counts.sum(axis=-1, keepdims=True)
        scale, offset = self._coefficients(n, reference_counts)
        return scale * counts + offset

    def _check_reference(self, reference_counts):
        if reference_counts is not None:
            return check_counts(reference_counts, name="reference_counts").astype(
                np.float64
            )
        if self.requires_reference:
            raise ValueError(
                f"{type(self).__name__} needs reference_counts (the reference "
                f"group's confusion matrix, e.g. all other groups together)."
            )
        return None

    def coefficients(self, n, reference_counts=None):
        """Affine form of the smoother for matrices of total ``n``.

        Every smoother here is affine in the counts once the total is fixed:
        ``transform(c) == scale * c + offset`` for every matrix ``c`` summing to
        ``n``. Tests and exact distributions use this to map thresholds on smoothed
        scores back to integer counts. A :class:`CrossPriorSmoothing` with
        ``lam="auto"`` must be fitted first (there are no groups here to learn
        ``lam`` from).

        Parameters
        ----------
        n : float or array-like of shape (...)
            Matrix totals.
        reference_counts : array-like of shape (..., 4), default=None
            Reference matrices (required by :class:`CrossPriorSmoothing`).

        Returns
        -------
        scale : ndarray of shape (..., 1)
        offset : ndarray of shape (..., 4)

        Examples
        --------
        >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
        >>> scale, offset = CrossPriorSmoothing(lam=10).coefficients(
        ...     10, reference_counts=[1, 1, 1, 1])
        >>> scale, offset
        (array([0.5]), array([1.25, 1.25, 1.25, 1.25]))
        """
        self._check_params()
        n = np.asarray(n, dtype=np.float64)[..., None]
        reference_counts = self._check_reference(reference_counts)
        return self._coefficients(n, reference_counts)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags
