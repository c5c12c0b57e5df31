"""Common base of the confusion-matrix smoothers."""

from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator

from .._references import align_by_label, is_default_index
from .._validation import check_counts


def _row_labels(counts):
    """The group labels of counts given as a DataFrame indexed by them, else
    ``None``."""
    index = getattr(counts, "index", None)
    if index is None or getattr(counts, "ndim", 1) != 2 or is_default_index(index):
        return None
    return np.asarray(index, dtype=object)


class MatrixSource(NamedTuple):
    """Marks K x K matrices flattened to ``K^2`` cells, for the cells' names in
    warnings, and the groups' labels (``None``: named by position)."""

    k: int
    labels: object = None


def _check_square_counts(counts, name):
    """Finite, non-negative K x K count matrices (``K >= 2``) as float64."""
    arr = np.asarray(counts)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 2:
        raise ValueError(
            f"{name} must be square confusion matrices of shape (..., K, K) with "
            f"K >= 2, got shape {arr.shape}; binary matrices of shape (..., 4) go "
            f"to transform()."
        )
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf; counts must be finite.")
    if (arr < 0).any():
        raise ValueError(f"{name} contains negative counts.")
    return arr


class BaseSmoothing(BaseEstimator):
    """Base class: a transform of confusion matrices ``(..., 4)``.

    Subclasses implement ``_coefficients(n, reference_counts, n_cells)``: the affine map
    ``c -> scale * c + offset`` applied to matrices of total ``n``. Smoothers are
    scikit-learn estimators for the sake of ``get_params``, ``clone`` and ``repr``;
    with fixed parameters they learn nothing, so ``fit`` only validates the
    parameters and the counts (:class:`CrossPriorSmoothing` with ``lam="auto"``
    learns ``lam_``).

    A smoother is a transformer of confusion matrices, not of samples: its input
    has shape ``(..., 4)`` (cells ``TP, FN, FP, TN``), ``fit`` takes the
    references instead of a target ``y``, and it has no features. Its tags say
    so (a transformer with float64 output and non-negative input), which lets
    :func:`sklearn.utils.estimator_checks.check_estimator` run: the checks of the
    estimator API (parameters, ``clone``, ``set_params``, nothing set in
    ``__init__``, negative input refused) pass, and those that feed it
    ``(n_samples, n_features)`` data or a ``y`` are expected to fail, each with
    its reason, in ``sklearn_smallfair.smoothing._base.expected_failed_checks``::

        check_estimator(smoother, expected_failed_checks=expected_failed_checks(
            smoother))

    (scikit-learn < 1.6 reads the same list from the ``_xfail_checks`` tag and
    skips those checks.)

    Examples
    --------
    >>> from sklearn_smallfair.smoothing import (AdditiveSmoothing, BaseSmoothing,
    ...     CrossPriorSmoothing)
    >>> issubclass(AdditiveSmoothing, BaseSmoothing)
    True
    >>> AdditiveSmoothing(eps=0.5).transform([3, 0, 1, 6])
    array([3.5, 0.5, 1.5, 6.5])
    >>> CrossPriorSmoothing.requires_reference
    True
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
            The smoothing, fitted.
        """
        return self._fit(counts, reference_counts, stacklevel=3)

    def _fit(self, counts, reference_counts, *, stacklevel):
        """:meth:`fit`; ``stacklevel`` is the one of a warning issued right here
        (each call level adds one, so that warnings point at the user's call)."""
        self._check_params()
        if counts is not None:
            check_counts(counts)
        if reference_counts is not None:
            self._check_reference(reference_counts, counts)
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
            The smoothed counts ``(TP, FN, FP, TN)``.
        """
        return self._smooth(counts, reference_counts, warn=True, stacklevel=3)

    def _smooth(self, counts, reference_counts, *, warn, stacklevel):
        """Validate, then :meth:`_transform` (``stacklevel``: see :meth:`_fit`)."""
        self._check_params()
        checked = check_counts(counts).astype(np.float64)
        ref = self._check_reference(reference_counts, counts)
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
            The smoothed counts ``(TP, FN, FP, TN)``.
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
        scale, offset = self._coefficients(n, reference_counts, counts.shape[-1])
        return scale * counts + offset

    def transform_matrices(self, counts, reference_counts=None):
        """Smooth K x K confusion matrices cell by cell.

        The smoother's formula applied to the ``K^2`` cells of multiclass
        confusion matrices (rows true class, columns predicted, as
        :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts` returns
        them): for :class:`CrossPriorSmoothing`, ``(c + lam p_ref) / (n + lam) n``
        with ``p_ref`` the reference's ``K^2`` proportions, the posterior mean of
        the prior ``Dirichlet(lam p_ref)``; for :class:`AdditiveSmoothing`, ``eps``
        added to every cell. See :ref:`multiclass` for how this relates to
        smoothing each one-vs-rest matrix. A ``CrossPriorSmoothing(lam="auto")``
        that is not fitted learns ``lam`` from these matrices for this call, by
        the Dirichlet-multinomial likelihood over the ``K^2`` cells.

        Parameters
        ----------
        counts : array-like of shape (..., K, K)
            Confusion matrices, ``K >= 2``.
        reference_counts : array-like of shape (..., K, K), default=None
            Reference matrices with the same ``K``, broadcast against ``counts``
            (required by :class:`CrossPriorSmoothing`).

        Returns
        -------
        smoothed : ndarray of float64, shape (...broadcast..., K, K)
            The smoothed ``K x K`` matrices.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
        >>> group = np.array([[3, 1, 0], [0, 2, 0], [1, 0, 1]])
        >>> reference = np.array([[50, 10, 5], [8, 60, 12], [4, 9, 40]])
        >>> smoothed = CrossPriorSmoothing(lam=10).transform_matrices(group, reference)
        >>> smoothed.round(2)
        array([[2.46, 0.67, 0.11],
               [0.18, 2.24, 0.27],
               [0.53, 0.2 , 1.34]])
        >>> float(smoothed.sum())
        8.0
        """
        return self._transform_matrices(counts, reference_counts)

    def _transform_matrices(self, counts, reference_counts=None, labels=None):
        """:meth:`transform_matrices`; ``labels`` name the groups in warnings."""
        self._check_params()
        checked = _check_square_counts(counts, "counts")
        k = checked.shape[-1]
        flat = checked.reshape(*checked.shape[:-2], k * k)
        ref = None
        if reference_counts is not None:
            ref_checked = _check_square_counts(reference_counts, "reference_counts")
            if ref_checked.shape[-1] != k:
                raise ValueError(
                    f"reference_counts has {ref_checked.shape[-1]} classes but counts "
                    f"has {k}; pass references with the same classes, in the same "
                    f"order."
                )
            ref = ref_checked.reshape(*ref_checked.shape[:-2], k * k)
        elif self.requires_reference:
            raise ValueError(
                f"{type(self).__name__} needs reference_counts (the reference "
                f"group's K x K confusion matrix, e.g. all other groups together)."
            )
        out = self._transform(
            flat, ref, warn=True, source=MatrixSource(k, labels), stacklevel=4
        )
        return out.reshape(*out.shape[:-1], k, k)

    def _check_reference(self, reference_counts, counts=None):
        if reference_counts is not None:
            reference_counts = align_by_label(
                reference_counts, _row_labels(counts), name="reference_counts"
            )
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
            The factor applied to the counts.
        offset : ndarray of shape (..., 4)
            The pseudo-counts added to each cell.

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
        return self._coefficients(n, reference_counts, 4)

    # ------------------------------------------------------------------ tags
    # A smoother transforms confusion matrices, so scikit-learn's checks of
    # transformers apply to its API (parameters, clone, fit returning self, the
    # output dtype) but not to the data they feed it; see _EXPECTED_FAILED_CHECKS.

    def _requires_fit(self):
        return False

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.requires_fit = self._requires_fit()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64"])
        tags.input_tags.positive_only = True
        tags.input_tags.allow_nan = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {
            "requires_fit": self._requires_fit(),
            "requires_positive_X": True,
            "preserves_dtype": [np.float64],
            "_xfail_checks": expected_failed_checks(self),
        }


#: Reasons shared by the checks of scikit-learn that a smoother cannot pass.
_SHAPE = (
    "the input is confusion matrices of shape (..., 4) (cells TP, FN, FP, TN), "
    "not samples of shape (n_samples, n_features): data with another number of "
    "columns is refused"
)
_COUNTS = (
    "counts are validated as confusion-matrix counts (numeric, finite, "
    "non-negative, shape (..., 4)) with messages that name the cells, not "
    "scikit-learn's messages about samples and features"
)
_NO_Y = "fit(counts, reference_counts) takes the references, not a target y"
_NO_FEATURES = (
    "a smoother has no features: the 4 cells are fixed, so it sets no "
    "n_features_in_ or feature_names_in_"
)

_EXPECTED_FAILED_CHECKS = {
    "check_fit_score_takes_y": _NO_Y,
    "check_transformer_data_not_an_array": _NO_Y,
    "check_transformer_general": _NO_Y,
    "check_n_features_in_after_fitting": _NO_FEATURES,
    "check_n_features_in": _NO_FEATURES,
    "check_dataframe_column_names_consistency": _NO_FEATURES,
    "check_estimators_dtypes": _SHAPE,
    "check_pipeline_consistency": _SHAPE,
    "check_estimators_pickle": _SHAPE,
    "check_f_contiguous_array_estimator": _SHAPE,
    "check_transformer_preserve_dtypes": _SHAPE,
    "check_transformers_unfitted_stateless": _SHAPE,
    "check_methods_sample_order_invariance": _SHAPE,
    "check_methods_subset_invariance": _SHAPE,
    "check_dict_unchanged": _SHAPE,
    "check_fit_idempotent": _SHAPE,
    "check_fit2d_predict1d": _SHAPE,
    "check_fit2d_1sample": _SHAPE,
    "check_fit2d_1feature": _SHAPE,
    "check_readonly_memmap_input": _SHAPE,
    "check_estimators_overwrite_params": _SHAPE,
    "check_dont_overwrite_parameters": _SHAPE,
    "check_estimators_fit_returns_self": _SHAPE,
    "check_fit_check_is_fitted": _SHAPE,
    "check_complex_data": _COUNTS,
    "check_dtype_object": _COUNTS,
    "check_estimators_empty_data_messages": _COUNTS,
    "check_estimators_nan_inf": _COUNTS,
    "check_estimator_sparse_tag": _COUNTS,
    "check_estimator_sparse_array": _COUNTS,
    "check_estimator_sparse_matrix": _COUNTS,
    "check_estimator_sparse_data": _COUNTS,
    "check_positive_only_tag_during_fit": _COUNTS,
}


def expected_failed_checks(smoother):
    """The checks of ``check_estimator`` a smoother fails, with the reasons.

    For ``check_estimator(smoother, expected_failed_checks=...)`` and
    ``parametrize_with_checks`` (scikit-learn >= 1.6); older releases read them
    from the ``_xfail_checks`` tag. Every check not listed passes.
    """
    return dict(_EXPECTED_FAILED_CHECKS)
