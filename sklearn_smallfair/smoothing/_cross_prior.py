"""Cross-Prior Smoothing (CPS): shrink a group's matrix toward a reference."""

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from .._params import Number, StrOptions, Whole
from .._references import warn_small_references
from .._validation import check_counts
from ._auto import fit_lam
from ._base import BaseSmoothing, MatrixSource


def _labels(source, shape):
    """Group labels for warnings: the index of a pandas ``reference_counts`` (or
    ``counts``) with one row per reference, else ``None`` (positions)."""
    if source is None or len(shape) != 1:
        return None
    for arg in reversed(source):
        if isinstance(arg, (pd.DataFrame, pd.Series)) and arg.ndim == 2:
            index = arg.index
            if not isinstance(index, pd.RangeIndex) and len(index) == shape[0]:
                return index.to_numpy()
    return None


def _setting(source):
    """The caller's ``reference`` setting (``"rest"``, ``"total"``), when a pandas
    ``reference_counts`` carries it in ``attrs["reference"]`` (as
    :func:`~sklearn_smallfair.metrics.group_metrics` passes it), else None: the
    warnings then do not suggest the setting in use."""
    for arg in reversed(source or ()):
        if isinstance(arg, pd.DataFrame):
            return arg.attrs.get("reference")
    return None


def _check_reference_totals(reference_counts):
    if (reference_counts.sum(axis=-1) <= 0).any():
        raise ValueError(
            "reference_counts has a matrix with zero total, so it has no "
            "proportions to smooth toward; choose another reference."
        )


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

    ``lam="auto"`` chooses ``lam`` from the data by empirical Bayes: if each
    group's cell proportions were drawn from ``Dirichlet(lam * p')`` around its
    reference, CPS with that ``lam`` would be the Bayes estimator of every cell
    proportion, and ``lam`` measures how close groups are to their references.
    :meth:`fit` estimates it by maximum marginal likelihood over all groups
    together, ``max sum_g log DirMult(c_g; lam * p'_g)`` over ``lam`` in
    ``[0, 10^4]`` (a log grid, 2 points per decade from 0.01, and the limit
    ``lam = 0``, refined by bounded scalar minimization to 0.23 %). One ``lam``
    serves all metrics, since the smoothed matrix is shared by all of them. See
    the user guide's section "Choosing lambda" for its validation.

    Parameters
    ----------
    lam : float or "auto", default=10.0
        Total pseudo-count (prior strength), ``lam >= 0``. ``lam=0`` is the identity;
        ``lam -> inf`` gives ``n * p'``. ``"auto"``: learned by :meth:`fit` from
        the groups' matrices and their references (``lam_``).
    min_reference : int, default=100
        Fewest people a reference should hold to serve as a prior: a smaller one
        raises a :class:`~sklearn_smallfair.exceptions.ReferenceWarning` naming
        the groups. ``0`` disables the check (references with an empty cell are
        reported whatever its value).

    Attributes
    ----------
    lam_ : float
        The ``lam`` :meth:`transform` uses: ``lam`` itself when it is a number,
        the maximum marginal-likelihood value for ``"auto"``. Set by :meth:`fit`.
        ``lam_ == 10000`` (the upper bound) means the groups cannot be told apart
        from their references; ``lam_ == 0`` that the references do not help.

    Warns
    -----
    ReferenceWarning
        From :meth:`fit` (``"auto"``) and :meth:`transform` (``lam > 0`` or
        ``"auto"``), when a reference has fewer than ``min_reference`` people or an
        empty cell.

    See Also
    --------
    AdditiveSmoothing : Add the same pseudo-count to every cell.
    sklearn_smallfair.reference_counts : Leave-one-group-out and other references.

    Notes
    -----
    Groups with people in a cell that has no reference mass (an empty reference
    cell) have zero marginal likelihood for every ``lam > 0``: they are left out
    of the choice of ``lam`` (the warning about the empty cell names them). When
    the likelihood does not depend on ``lam`` (no group of two or more people
    left), :meth:`fit` raises a ``ValueError``.

    Examples
    --------
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> cps = CrossPriorSmoothing(lam=10)
    >>> cps.transform([3, 0, 1, 0], reference_counts=[40, 10, 20, 30])
    array([2.        , 0.28571429, 0.85714286, 0.85714286])
    >>> float(cps.transform([3, 0, 1, 0], reference_counts=[40, 10, 20, 30]).sum())
    4.0

    ``lam="auto"`` learns ``lam`` from groups and their references, here the eight
    published Folktables race groups, each against everybody else:

    >>> from sklearn_smallfair.datasets import load_published_groups
    >>> counts, reference = load_published_groups("Folktables")
    >>> auto = CrossPriorSmoothing(lam="auto").fit(counts, reference)
    >>> round(auto.lam_, 1)
    23.8
    >>> auto.transform([3, 0, 1, 8], reference.loc["Folktables|AI and AN"]).round(2)
    array([2.35, 0.83, 1.36, 7.46])
    """

    requires_reference = True
    _parameter_constraints: dict = {
        "lam": [Number(0, None, closed="left"), StrOptions({"auto"})],
        "min_reference": [Whole(0, None, closed="left")],
    }

    def __init__(self, lam=10.0, *, min_reference=100):
        self.lam = lam
        self.min_reference = min_reference

    # ------------------------------------------------------------------ fitting

    def _is_auto(self):
        return isinstance(self.lam, str) and self.lam == "auto"

    def _fitted_lam(self):
        """The ``lam`` in use, or ``None`` for an unfitted ``"auto"``."""
        if not self._is_auto():
            return float(self.lam)
        if getattr(self, "_auto_fitted", False):
            return self.lam_
        return None

    def __sklearn_is_fitted__(self):
        return self._fitted_lam() is not None

    def _requires_fit(self):
        # "auto" learns lam_ (coefficients need it); a number needs no fit
        return self._is_auto()

    @staticmethod
    def _learn(counts, reference_counts):
        """Maximum marginal-likelihood ``lam`` of validated float matrices."""
        _check_reference_totals(reference_counts)
        c, r = np.broadcast_arrays(counts, reference_counts)
        cells = c.shape[-1]
        return fit_lam(c.reshape(-1, cells), r.reshape(-1, cells))[0]

    def _warn_references(self, reference_counts, source, stacklevel):
        """The reference checks (``stacklevel``: see ``BaseSmoothing._fit``)."""
        cells = reference_counts.shape[-1]
        names = labels = None
        if isinstance(source, MatrixSource):  # flattened K x K matrices
            names = [f"C[{i}, {j}]" for i in range(source.k) for j in range(source.k)]
            shape = reference_counts.shape[:-1]
            if source.labels is not None and len(shape) == 1:
                labels = np.asarray(source.labels, dtype=object)
                labels = labels if labels.shape == shape else None
        elif cells != 4:  # pragma: no cover - every caller names its cells
            names = [f"cell {i}" for i in range(cells)]
        else:
            labels = _labels(source, reference_counts.shape[:-1])
        warn_small_references(
            reference_counts,
            labels=labels,
            min_reference=self.min_reference,
            hint="a smaller lam",
            stacklevel=stacklevel + 1,
            cell_names=names,
            reference=_setting(source) if cells == 4 else None,
        )

    def _fit_checks_references(self):
        return self._is_auto()

    def fit(self, counts=None, reference_counts=None):
        """Learn ``lam_``: ``lam`` itself, or for ``"auto"`` its empirical-Bayes value.

        For ``lam="auto"`` every matrix of ``counts`` is a group, shrunk toward the
        matching matrix of ``reference_counts`` (broadcast); ``lam_`` maximizes
        ``sum_g log DirMult(c_g; lam * p'_g)`` over ``lam`` in ``[0, 10^4]``.
        Fractional (weighted) counts are used as they are. For a number,
        ``lam_ = lam`` and the arguments are only validated. Without ``counts``
        only the parameters are checked (an ``"auto"`` smoother then learns
        nothing and keeps the ``lam_`` of an earlier fit, if any).

        Parameters
        ----------
        counts : array-like of shape (..., 4), default=None
            The groups' matrices ``(TP, FN, FP, TN)``, e.g. the whole groups of an
            audit (not enumerated or simulated matrices: those are not groups).
        reference_counts : array-like of shape (..., 4), default=None
            Their references, e.g. :func:`~sklearn_smallfair.reference_counts` of
            ``counts``; required with ``counts`` when ``lam="auto"``.

        Returns
        -------
        self : object
            The smoothing, fitted.

        Raises
        ------
        ValueError
            When ``lam="auto"`` cannot learn ``lam`` from the counts (no group of
            two or more people whose occupied cells have reference mass), or a
            reference has zero total.

        Warns
        -----
        ReferenceWarning
            For ``"auto"``, when a reference has fewer than ``min_reference``
            people or an empty cell.
        """
        return self._fit(counts, reference_counts, stacklevel=3)

    def _fit(self, counts, reference_counts, *, stacklevel):
        self._check_params()
        if not self._is_auto():
            if counts is not None:
                check_counts(counts)
            if reference_counts is not None:
                self._check_reference(reference_counts, counts)
            self.lam_ = float(self.lam)
            self._auto_fitted = False
            return self
        if counts is None:
            if reference_counts is not None:
                raise ValueError(
                    "CrossPriorSmoothing(lam='auto').fit needs the groups' counts "
                    "together with reference_counts."
                )
            return self
        checked = check_counts(counts).astype(np.float64)
        ref = self._check_reference(reference_counts, counts)
        self.lam_ = self._learn(checked, ref)
        self._auto_fitted = True
        self._warn_references(ref, (counts, reference_counts), stacklevel + 1)
        return self

    # ------------------------------------------------------------ transforming

    def transform(self, counts, reference_counts=None):
        """Smooth confusion matrices toward their references.

        Uses ``lam_`` (``lam`` itself when it is a number). An unfitted
        ``lam="auto"`` smoother learns ``lam`` from these ``counts`` and
        ``reference_counts`` as :meth:`fit` would, for this call only (nothing is
        stored: call :meth:`fit` or :meth:`fit_transform` to keep ``lam_``). So
        pass the groups' matrices; to smooth enumerated or simulated matrices,
        fit on the groups first.

        Parameters
        ----------
        counts : array-like of shape (..., 4)
            Cells ``(TP, FN, FP, TN)``.
        reference_counts : array-like of shape (..., 4)
            Reference matrices, broadcast against ``counts``.

        Returns
        -------
        smoothed : ndarray of float64, shape (...broadcast..., 4)
            The smoothed counts ``(TP, FN, FP, TN)``.

        Warns
        -----
        ReferenceWarning
            When ``lam > 0`` (or ``"auto"``) and a reference has fewer than
            ``min_reference`` people or an empty cell.
        """
        return self._smooth(counts, reference_counts, warn=True, stacklevel=3)

    def _transform(self, counts, reference_counts, *, warn, source, stacklevel):
        _check_reference_totals(reference_counts)
        lam = self._fitted_lam()
        if lam is None:
            lam = self._learn(counts, reference_counts)
        if warn and (lam > 0 or self._is_auto()):
            self._warn_references(reference_counts, source, stacklevel + 1)
        n = counts.sum(axis=-1, keepdims=True)
        scale, offset = self._affine(lam, n, reference_counts)
        return scale * counts + offset

    def _coefficients(self, n, reference_counts, n_cells=4):
        lam = self._fitted_lam()
        if lam is None:
            raise NotFittedError(
                "CrossPriorSmoothing(lam='auto') has no lam yet: call "
                "fit(counts, reference_counts) on the groups' matrices first (or "
                "pass a number as lam)."
            )
        return self._affine(lam, n, reference_counts)

    @staticmethod
    def _affine(lam, n, reference_counts):
        _check_reference_totals(reference_counts)
        ref_total = reference_counts.sum(axis=-1, keepdims=True)
        prior = reference_counts / ref_total
        denom = n + lam
        # scale = n / (n + lam) is exactly 1.0 when lam == 0, so lam=0 is the exact
        # identity; n + lam == 0 only for an empty matrix with lam == 0.
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(denom > 0, n / denom, 1.0)
        return scale, lam * prior * scale
