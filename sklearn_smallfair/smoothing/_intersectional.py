"""Intersectional smoothing: Cross-Prior Smoothing toward what a group's
attributes predict.

Model (one intersection ``g`` of several attributes, cells ``TP, FN, FP, TN``):

* **Prior mean from main effects.** Three binomial logits, each additive in the
  attributes (no interactions), are fitted on all groups' counts by penalized
  Newton (IRLS): the prevalence ``(TP + FN) / n``, the true positive rate
  ``TP / (TP + FN)`` and the false positive rate ``FP / (FP + TN)``. Their
  predictions give the group's reference proportions
  ``q_g = (pi t, pi (1 - t), (1 - pi) f, (1 - pi) (1 - f))``.
* **Shrinkage from the data.** ``p_g ~ Dirichlet(lam q_g)`` and
  ``c_g ~ Multinomial(n_g, p_g)``; ``lam`` maximizes the Dirichlet-multinomial
  marginal likelihood over all groups (the same search as
  ``CrossPriorSmoothing(lam="auto")``).
* The smoothed matrix is the posterior mean, ``n (c + a_g) / (n + lam)`` with the
  pseudo-counts ``a_g = lam q_g``.
"""

import numbers
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.exceptions import NotFittedError
from threadpoolctl import threadpool_limits

from .._params import Number, StrOptions
from .._pvalues import adjust_family
from .._validation import check_counts
from ._attributes import _attributes_from_index, _blocks, _design, _join_labels
from ._base import BaseSmoothing, _row_labels
from ._main_effects import _logistic_fit, leave_one_out, predictive_two_sided
from ._strength import (
    _LOWER_DROP,
    binomial_strengths,
    dirichlet_multinomial_loglik,
    fit_strength,
    maximize_strength,
    strengths,
)

#: Binomial metrics: (numerator cells, denominator cells), cells TP, FN, FP, TN.
_BINOMIAL = {
    "tpr": ((0,), (0, 1)),
    "fnr": ((1,), (0, 1)),
    "fpr": ((2,), (2, 3)),
    "tnr": ((3,), (2, 3)),
    "ppv": ((0,), (0, 2)),
    "fdr": ((2,), (0, 2)),
    "npv": ((3,), (1, 3)),
    "for": ((1,), (1, 3)),
    "prevalence": ((0, 1), (0, 1, 2, 3)),
    "selection_rate": ((0, 2), (0, 1, 2, 3)),
    "accuracy": ((0, 3), (0, 1, 2, 3)),
    "error_rate": ((1, 2), (0, 1, 2, 3)),
}
_CELLS = ("TP", "FN", "FP", "TN")


def _binomial_metric(metric):
    if not isinstance(metric, str) or metric.lower() not in _BINOMIAL:
        raise ValueError(
            f"metric must be one of the binomial metrics {sorted(_BINOMIAL)}; got "
            f"{metric!r}."
        )
    num, den = _BINOMIAL[metric.lower()]
    return list(num), list(den)


def _proportion_cells(metric):
    """``(numerator, denominator)`` cell tuples of a proportion metric (a
    registry metric whose numerator's cells are some of its denominator's, or
    one of :data:`_BINOMIAL`'s names), else ``None``."""
    if isinstance(metric, str):
        key = metric.lower()
        return tuple(tuple(x) for x in _BINOMIAL[key]) if key in _BINOMIAL else None
    num = getattr(metric, "numerator", None)
    den = getattr(metric, "denominator", None)
    family = getattr(metric, "family", None)
    if family not in ("binomial", "joint_ratio") or not num or not den:
        return None
    num, den = tuple(int(i) for i in num), tuple(int(i) for i in den)
    return (num, den) if set(num) < set(den) else None


#: Level of the interaction test (Holm over the groups) at which an intersection
#: is found to depart from its main effects: it is then left out of their fit and
#: keeps its own value of the proportion. Passes of the search at most.
DEPARTURE_ALPHA = 0.05
_MAX_DEPARTURE_PASSES = 5


#: The three logits of the matrix: prevalence, TPR and TNR.
_LOGITS = ("prevalence", "tpr", "tnr")


def _cells_from_coef(X, coef):
    """Cell proportions ``TP, FN, FP, TN`` of the three logits' coefficients."""
    pi, t, tn = (expit(X @ coef[name]) for name in _LOGITS)
    return np.stack(
        [pi * t, pi * (1.0 - t), (1.0 - pi) * (1.0 - tn), (1.0 - pi) * tn], -1
    )


class IntersectionalSmoothing(BaseSmoothing):
    """Cross-Prior Smoothing toward what a group's attributes predict.

    Intersectional groups (say race x sex x age band) are small, but each shares
    its attributes with many others. This smoother shrinks each group's
    confusion matrix toward a reference built from the **main effects** of its
    attributes, in the spirit of the structured regression of Herlihy, Truong,
    Chouldechova and Dudik (FAccT 2024): a group's metric is an intercept plus
    the effects of its attributes plus an interaction, and only the interaction
    is shrunk.

    **Prior mean.** Three binomial logits, additive in the attributes, are
    fitted on all groups' counts (penalized Newton, a ridge ``ridge`` on the
    attributes' coefficients, the intercept weakly tied to the overall rate):
    prevalence
    ``logit pi_g = b0 + sum_k b_k[level]``, true positive rate
    ``logit t_g = ...`` among the positives and false positive rate
    ``logit f_g = ...`` among the negatives. They give the group's reference
    proportions ``q_g = (pi t, pi (1 - t), (1 - pi) f, (1 - pi) (1 - f))``
    (``prior_mean_``).

    **Strength.** ``p_g ~ Dirichlet(s_g q_g)``, ``c_g ~ Multinomial(n_g, p_g)``.
    ``lam`` is the between-group precision (how far true intersections stray
    from their main effects: a cell's variance is ``q (1 - q) / (lam + 1)``).
    With ``prior_uncertainty=True`` each group's strength ``s_g`` also accounts
    for the estimation error of its fitted ``q_g`` (the delta-method variance
    of the three fitted logits, from the penalized information): for each of
    prevalence, TPR and FPR the prior variance is the between-group one plus
    the estimation one, and ``s_g`` is the smallest of the three strengths
    this implies, so a group whose main effects rest on few people is shrunk
    less. ``lam="auto"`` maximizes the Dirichlet-multinomial marginal
    likelihood ``sum_g log DirMult(c_g; s_g(lam) q_g)`` over ``[0, 10^6]``;
    ``lam="auto-lower"`` takes the lower end of its 95 % profile-likelihood
    interval instead (wider, better-covering intervals, a little less
    shrinkage). The smoothed matrix is the posterior mean
    ``n (c + a_g) / (n + s_g)`` with pseudo-counts ``a_g = s_g q_g``
    (``pseudo_counts_``): ``lam = 0`` is the identity and, with
    ``prior_uncertainty=False``, ``lam -> inf`` gives the main-effects
    prediction ``n q_g``. :meth:`interaction_test` asks whether a group departs
    from its main-effects prediction. Intervals come from
    :func:`~sklearn_smallfair.metrics.group_metrics` with
    ``smoothing=IntersectionalSmoothing()`` and ``confidence_level``: by default
    (``interval_method="auto"``) the hull of the posterior interval
    ``Dirichlet(c + a_g)`` and the raw value's own interval, which covers the
    group's value where the posterior alone does not (see the user guide);
    ``interval_method="posterior"`` gives the posterior interval alone.

    **Each proportion its own prior.** A metric that is a proportion ``k / m``
    of the matrix's cells (TPR, FPR, PPV, NPV, selection rate, accuracy, ...)
    is not smoothed through the prior of the whole matrix but through its own
    (:meth:`metric_pseudo_counts`): an additive logit of the metric itself and
    a between-group strength of its own, by maximum beta-binomial marginal
    likelihood, so that a PPV that hardly varies across groups is shrunk hard
    even when the prevalence varies a lot. Its posterior interval takes the
    strength at the lower end of its profile-likelihood interval
    (:meth:`interval_pseudo_counts`), widened to hold the smoothed value.
    Other metrics (F1, MCC, ...) take the prior of the whole matrix.

    **Main effects shrunk by the data.** With ``ridge="auto"`` each attribute's
    level effects get the penalty that maximizes the (Laplace) marginal
    likelihood of the fit: an attribute whose levels do not differ is pulled
    to 0, so that a rare level's effect, which rests on few people, is not
    read from noise.

    Parameters
    ----------
    lam : float, "auto" or "auto-lower", default="auto"
        Between-group prior strength. ``"auto"``: maximum marginal likelihood;
        ``"auto-lower"``: the lower end of its 95 % profile-likelihood interval
        (the log-likelihood 1.92 below its maximum). Learnt as ``lam_``.
    ridge : float or "auto", default="auto"
        Ridge penalty on the attribute coefficients of the logits (on the
        log-odds scale; a normal prior of standard deviation ``ridge**-0.5``),
        the intercepts free; ``"auto"``: one penalty per attribute and logit,
        by maximum (Laplace) marginal likelihood, between 4 (a prior standard
        deviation of 0.5 on the log-odds scale) and ``10^6``. It keeps the
        coefficients finite when a level's groups are all in one cell,
        identifies the one-hot coding, and pulls the effects of levels with
        few people toward the overall rate; with hundreds of people per level
        it is negligible.
    prior_uncertainty : bool, default=True
        Whether the groups' strengths account for the estimation error of the
        main-effects fit (see above). ``False``: every group has strength
        ``lam``.

    Attributes
    ----------
    lam_ : float
        The between-group strength in use (``10^6`` when the groups cannot be
        told from their main effects beyond the fit's own error).
    strength_ : ndarray of shape (n_groups,)
        Each group's total pseudo-count ``s_g``.
    prior_mean_ : ndarray of shape (n_groups, 4)
        Main-effects reference proportions ``q_g`` of the fitted groups.
    pseudo_counts_ : ndarray of shape (n_groups, 4)
        ``a_g = s_g * q_g``.
    counts_ : ndarray of shape (n_groups, 4)
        The fitted groups' counts.
    groups_ : ndarray of shape (n_groups,)
        The fitted groups' labels (joined ``"a|b|c"`` levels when the counts had
        none).
    attributes_ : DataFrame of shape (n_groups, n_attributes)
        The fitted groups' levels.
    attribute_names_ : list of str
        The attributes.
    categories_ : list of ndarray
        The levels of each attribute.
    coef_ : dict of ndarray
        Coefficients of the ``"prevalence"``, ``"tpr"`` and ``"tnr"`` logits
        (``logit FPR = -logit TNR``), intercept first, then one per level of
        each attribute.

    See Also
    --------
    CrossPriorSmoothing : Shrinks toward one reference (everybody else).

    Notes
    -----
    ``fit`` needs the groups' attributes: pass ``attributes`` (one row per
    group, one column per attribute), or counts indexed by a
    :class:`pandas.MultiIndex`, or by labels ``"a|b|c"`` (one level per
    attribute, split on ``|``; ``\\|`` is a bar inside a level, as
    :func:`~sklearn_smallfair.metrics.group_metrics` joins several sensitive
    features).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_smallfair.smoothing import IntersectionalSmoothing
    >>> counts = pd.DataFrame(
    ...     [[30, 10, 8, 52], [3, 1, 0, 2], [25, 15, 10, 50], [20, 5, 6, 70],
    ...      [4, 4, 1, 9], [18, 12, 9, 61]],
    ...     columns=["TP", "FN", "FP", "TN"],
    ...     index=pd.Index(["A|F|young", "A|M|young", "B|F|young", "A|F|old",
    ...                     "A|M|old", "B|M|old"], name="race|sex|age"))
    >>> smoother = IntersectionalSmoothing(lam=20).fit(counts)
    >>> smoother.attribute_names_
    ['race', 'sex', 'age']
    >>> smoother.transform(counts).round(2)[1]
    array([2.16, 0.85, 0.3 , 2.69])
    """

    requires_reference = False
    #: Whether :meth:`fit` needs the groups' attributes (their labels).
    requires_attributes = True
    _parameter_constraints: dict = {
        "lam": [Number(0, None, closed="left"), StrOptions({"auto", "auto-lower"})],
        "ridge": [Number(0, None, closed="neither"), StrOptions({"auto"})],
        "prior_uncertainty": ["boolean"],
    }

    def __init__(self, lam="auto", *, ridge="auto", prior_uncertainty=True):
        self.lam = lam
        self.ridge = ridge
        self.prior_uncertainty = prior_uncertainty

    def __sklearn_is_fitted__(self):
        return hasattr(self, "pseudo_counts_")

    def _requires_fit(self):
        return True

    def _check_fitted(self):
        if not hasattr(self, "pseudo_counts_"):
            raise NotFittedError(
                "IntersectionalSmoothing is not fitted: call fit(counts, "
                "attributes=...) on the intersections' matrices first."
            )

    # ------------------------------------------------------------------ fitting

    def fit(self, counts=None, reference_counts=None, *, attributes=None):
        """Fit the main-effects prior and (for ``lam="auto"``) its strength.

        Parameters
        ----------
        counts : DataFrame or array-like of shape (n_groups, 4)
            One confusion matrix ``(TP, FN, FP, TN)`` per intersection, every
            one with at least one person. Without ``attributes``, a DataFrame
            indexed by a MultiIndex (one level per attribute) or by ``"a|b|c"``
            labels.
        reference_counts : None
            Not used (the references are the main-effects predictions); must be
            None.
        attributes : DataFrame of shape (n_groups, n_attributes), default=None
            The level of each attribute for each group, in the order of
            ``counts``; at least two attributes, each with two levels or more.

        Returns
        -------
        self : object
            The fitted smoother.

        Raises
        ------
        ValueError
            With fewer than two attributes, an attribute with a single level, a
            missing level, a label with the wrong number of ``|`` parts, two
            rows for one intersection, a group of 0 people, or no positives (or
            no negatives) in any group.
        """
        self._check_params()
        if counts is None:
            raise ValueError(
                "IntersectionalSmoothing.fit needs the intersections' counts."
            )
        if reference_counts is not None:
            raise ValueError(
                "IntersectionalSmoothing takes no reference_counts: each group's "
                "reference is what its attributes' main effects predict."
            )
        c = check_counts(counts).astype(np.float64)
        if c.ndim != 2:
            raise ValueError(
                f"counts must have shape (n_groups, 4), one matrix per "
                f"intersection; got shape {c.shape}."
            )
        labels = _row_labels(counts)
        attrs = self._attributes(counts, attributes, c.shape[0])
        groups = (
            labels
            if labels is not None
            else (
                _join_labels(attrs) if attributes is not None else np.arange(c.shape[0])
            )
        )
        n = c.sum(axis=1)
        empty = n <= 0
        if empty.any():
            raise ValueError(
                f"group(s) {list(groups[empty][:10])} have 0 people: an empty "
                f"intersection has no matrix to smooth; drop it from counts and "
                f"use predict() for its main-effects prediction."
            )
        pos = c[:, 0] + c[:, 1]
        neg = c[:, 2] + c[:, 3]
        for total, what in ((pos, "positives"), (neg, "negatives")):
            if total.sum() <= 0:
                raise ValueError(
                    f"no group has {what} (true class), so the main-effects model "
                    f"has no data for the rates among them; IntersectionalSmoothing "
                    f"needs both classes somewhere."
                )
        self.attribute_names_ = [str(a) for a in attrs.columns]
        self.categories_ = [
            np.asarray(pd.unique(attrs[a].sort_values())) for a in attrs.columns
        ]
        X = _design(attrs, self.categories_)
        self._X = X
        self._blocks = _blocks(self.categories_)
        self._metric_fits = {}
        # small dense products (G x p, p ~ tens): BLAS threads only add
        # overhead (measured: 0.75 s with 2 threads, 0.02 s with one, for
        # 1,000 groups)
        with threadpool_limits(limits=1, user_api="blas"):
            coef, q, lam, strength = self._fit_matrix(c, X)
        self.coef_ = coef
        self.counts_ = c
        self.groups_ = np.asarray(groups, dtype=object)
        self.attributes_ = attrs
        self.prior_mean_ = q
        self.lam_ = lam
        self.strength_ = strength
        self.pseudo_counts_ = strength[:, None] * q
        self._labelled = labels is not None
        return self

    def _fit_matrix(self, c, X):
        """The three logits' main effects, the prior of the whole matrix and its
        strengths."""
        pos = c[:, 0] + c[:, 1]
        neg = c[:, 2] + c[:, 3]
        fits = {
            "prevalence": _logistic_fit(
                X, pos, c.sum(axis=1), self.ridge, self._blocks
            ),
            "tpr": _logistic_fit(X, c[:, 0], pos, self.ridge, self._blocks),
            "tnr": _logistic_fit(X, c[:, 3], neg, self.ridge, self._blocks),
        }
        coef = {name: fit[0] for name, fit in fits.items()}
        q = _cells_from_coef(X, coef)
        pi = q[:, 0] + q[:, 1]
        rates = (pi, q[:, 0] / pi, q[:, 3] / (1.0 - pi))
        if self.prior_uncertainty:
            rel_var = tuple(
                r * (1.0 - r) * fits[name][1] for r, name in zip(rates, _LOGITS)
            )
        else:
            rel_var = (np.zeros(len(c)),) * 3
        if isinstance(self.lam, str):
            drop = _LOWER_DROP if self.lam == "auto-lower" else 0.0
            lam = fit_strength(c, q, rel_var, drop=drop)
        else:
            lam = float(self.lam)
        return coef, q, lam, strengths(lam, pi, rel_var)

    def fit_transform(self, counts, reference_counts=None, *, attributes=None):
        """Fit on the intersections, then smooth them.

        Parameters
        ----------
        counts : DataFrame or array-like of shape (n_groups, 4)
            As in :meth:`fit`.
        reference_counts : None
            Not used; must be None.
        attributes : DataFrame of shape (n_groups, n_attributes), default=None
            As in :meth:`fit`.

        Returns
        -------
        smoothed : ndarray of shape (n_groups, 4)
            ``n (c + a_g) / (n + lam_)``.
        """
        return self.fit(counts, reference_counts, attributes=attributes).transform(
            counts
        )

    @staticmethod
    def _attributes(counts, attributes, n_groups):
        if attributes is None:
            index = getattr(counts, "index", None)
            if index is None or _row_labels(counts) is None:
                raise ValueError(
                    "IntersectionalSmoothing needs the groups' attributes: pass "
                    "attributes= (a DataFrame, one row per group, one column per "
                    "attribute), or counts as a DataFrame indexed by a MultiIndex "
                    "or by 'a|b|c' labels."
                )
            attrs = _attributes_from_index(index)
        else:
            attrs = pd.DataFrame(attributes).reset_index(drop=True)
            if len(attrs) != n_groups:
                raise ValueError(
                    f"attributes has {len(attrs)} rows but counts has {n_groups} "
                    f"groups; pass one row per group, in the same order."
                )
        attrs.columns = [str(col) for col in attrs.columns]
        if attrs.shape[1] < 2:
            raise ValueError(
                f"IntersectionalSmoothing needs at least two attributes, got "
                f"{attrs.shape[1]} ({list(attrs.columns)}): with one attribute "
                f"every group is its own level and there is nothing to borrow "
                f"across attributes. Use CrossPriorSmoothing(lam='auto') instead."
            )
        for col in attrs.columns:
            if attrs[col].isna().any():
                raise ValueError(f"attribute {col!r} has missing levels.")
            if attrs[col].nunique() < 2:
                raise ValueError(
                    f"attribute {col!r} has a single level "
                    f"{attrs[col].iloc[0]!r}: it cannot separate groups; drop it."
                )
        dup = attrs.duplicated(keep=False)
        if dup.any():
            raise ValueError(
                f"rows {list(np.flatnonzero(dup)[:10])} name the same intersection "
                f"of attributes; pass one matrix per intersection."
            )
        return attrs

    # ------------------------------------------------------------ transforming

    def _pseudo_counts_for(self, source, shape):
        """The fitted ``a_g`` aligned with counts: by label for a labelled
        DataFrame, else by position (broadcast over leading axes)."""
        self._check_fitted()
        counts = source[0] if isinstance(source, tuple) and source else None
        labels = _row_labels(counts) if counts is not None else None
        a = self.pseudo_counts_
        if labels is not None and self._labelled:
            where = pd.Index(self.groups_).get_indexer(labels)
            if (where < 0).any():
                raise ValueError(
                    f"group(s) {list(labels[where < 0][:10])} were not among the "
                    f"groups the smoother was fitted on; fit on them (or use "
                    f"predict() for the main-effects prediction)."
                )
            return a[where]
        if len(shape) < 2 or shape[-2] != a.shape[0]:
            raise ValueError(
                f"counts must have shape (..., {a.shape[0]}, 4), the fitted groups "
                f"in the order of fit; got shape {tuple(shape)}."
            )
        return a

    def _transform(self, counts, reference_counts, *, warn, source, stacklevel):
        a = self._pseudo_counts_for(source, counts.shape)
        n = counts.sum(axis=-1, keepdims=True)
        s = a.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(n + s > 0, n / (n + s), 1.0)
        return scale * counts + scale * a

    def _coefficients(self, n, reference_counts, n_cells=4):
        self._check_fitted()
        a = self.pseudo_counts_
        s = a.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(n + s > 0, n / (n + s), 1.0)
        return scale, scale * a

    def metric_pseudo_counts(self, metric):
        """Pseudo-counts of one metric's own prior, aligned with the fitted groups.

        A proportion ``k / m`` (TPR, FPR, PPV, NPV, selection rate, ...; a
        numerator out of a denominator of cells) gets its own model: an
        additive logit of the metric over the attributes (the same penalized
        fit as the three logits of the matrix) and its own between-group
        strength, by maximum beta-binomial marginal likelihood (the lower end
        of its profile interval with ``lam="auto-lower"``, ``lam`` itself when
        it is a number), each group's strength reduced by the estimation error
        of its fitted rate as in :attr:`strength_`. The group's posterior of the
        metric is then ``Beta(k + s q, m - k + s (1 - q))``, returned as
        pseudo-counts ``s q`` spread over the numerator's cells and
        ``s (1 - q)`` over the rest of the denominator's (in the proportions of
        :attr:`prior_mean_`); the other cells keep :attr:`pseudo_counts_`.
        Other metrics (F1, MCC, ...) use :attr:`pseudo_counts_`.

        A metric such as PPV is a ratio of the matrix's cells, and the prior of
        the whole matrix gives it a strength and a mean fitted for prevalence,
        TPR and FPR; its own model fits both to the PPV of the groups.

        Parameters
        ----------
        metric : str or Metric
            A metric of the package's registry (or its name).

        Returns
        -------
        pseudo_counts : ndarray of shape (n_groups, 4)
            ``a_g`` such that the smoothed metric is the metric of ``c_g + a_g``.
        """
        return self._metric_prior(metric, "pseudo_counts")

    def interval_pseudo_counts(self, metric):
        """Pseudo-counts of the posterior interval of one metric.

        As :meth:`metric_pseudo_counts`, with the between-group strength at the
        lower end of its 95 % profile-likelihood interval (the log-likelihood
        1.92 below its maximum) when ``lam="auto"``: the interval then allows
        for the uncertainty of the strength itself, which the maximum alone
        would neglect (see the user guide for the measured coverage).

        Parameters
        ----------
        metric : str or Metric
            A metric of the package's registry (or its name).

        Returns
        -------
        pseudo_counts : ndarray of shape (n_groups, 4)
            The prior of the metric's posterior interval.
        """
        return self._metric_prior(metric, "interval_pseudo_counts")

    def _metric_prior(self, metric, what):
        self._check_fitted()
        cells = _proportion_cells(metric)
        if cells is None:
            return self.pseudo_counts_
        fit = self._metric_fit(*cells)
        return self.pseudo_counts_ if fit is None else fit[what]

    def _metric_fit(self, num, den):
        """The main effects, strength and pseudo-counts of one proportion
        (cached; ``None`` when no group has a denominator)."""
        key = (num, den)
        if key in self._metric_fits:
            return self._metric_fits[key]
        c = self.counts_
        k, m = c[:, list(num)].sum(axis=1), c[:, list(den)].sum(axis=1)
        if m.sum() <= 0:
            self._metric_fits[key] = None
            return None
        # main effects fitted without the intersections that depart from them:
        # each group is tested against the prediction of the others (its
        # leave-one-out fit, with that fit's own uncertainty), and those found
        # to depart (Holm over the groups at DEPARTURE_ALPHA) are left out of
        # the fit and the test repeated, until no other departs
        departs = np.zeros(len(k), dtype=bool)
        full = None
        with threadpool_limits(limits=1, user_api="blas"):
            for _ in range(_MAX_DEPARTURE_PASSES):
                kk, mm = np.where(departs, 0.0, k), np.where(departs, 0.0, m)
                coef, leverage = _logistic_fit(
                    self._X, kk, mm, self.ridge, self._blocks
                )
                if full is None:
                    full = coef, leverage
                eta_out, var_out = leave_one_out(self._X, coef, leverage, kk, mm)
                q_out = expit(eta_out)
                v_out = q_out * (1.0 - q_out) * var_out
                pvalue = predictive_two_sided(k, m, q_out, v_out)
                found = np.nan_to_num(adjust_family(pvalue, "holm"), nan=1.0)
                found = found <= DEPARTURE_ALPHA
                if not (found & ~departs).any():
                    break
                departs |= found
        coef, leverage = full
        q = expit(self._X @ coef)
        v = q * (1.0 - q) * leverage if self.prior_uncertainty else np.zeros_like(q)
        if isinstance(self.lam, str):
            two = np.stack([k, m - k], axis=1)
            prop = np.stack([q, 1.0 - q], axis=1)

            def loglik(lam):
                return dirichlet_multinomial_loglik(
                    two, prop, binomial_strengths(lam, v)
                )

            lam = maximize_strength(
                loglik, _LOWER_DROP if self.lam == "auto-lower" else 0.0
            )
            # intervals: the lower end of lam's profile-likelihood interval
            lower = (
                lam
                if self.lam == "auto-lower"
                else maximize_strength(loglik, _LOWER_DROP)
            )
        else:
            lam = lower = float(self.lam)
        rest = tuple(i for i in den if i not in num)

        def pseudo_counts(strength):
            a = self.pseudo_counts_.copy()
            for cells, mass in ((num, q), (rest, 1.0 - q)):
                share = self.prior_mean_[:, list(cells)]
                share = share / share.sum(axis=1, keepdims=True)
                a[:, list(cells)] = (strength * mass)[:, None] * share
            return a

        # a departing intersection keeps its own value
        strength = np.where(departs, 0.0, binomial_strengths(lam, v))
        fit = {
            "departs": departs,
            "pvalue": pvalue,
            "lam": lam,
            "coef": coef,
            "strength": strength,
            "predicted": q,
            "predicted_without": q_out,
            "pseudo_counts": pseudo_counts(strength),
            "interval_pseudo_counts": pseudo_counts(
                np.where(departs, 0.0, binomial_strengths(lower, v))
            ),
        }
        self._metric_fits[key] = fit
        return fit

    def transform_matrices(self, counts, reference_counts=None):
        """Not available: the main-effects prior is of binary matrices.

        Parameters
        ----------
        counts : array-like of shape (..., K, K)
            Ignored.
        reference_counts : array-like, default=None
            Ignored.

        Returns
        -------
        None
            Always raises.

        Raises
        ------
        NotImplementedError
            Always.
        """
        raise NotImplementedError(
            "IntersectionalSmoothing smooths binary matrices (TP, FN, FP, TN) "
            "only; for K x K matrices use CrossPriorSmoothing."
        )

    # --------------------------------------------------------------- prediction

    def predict(self, attributes):
        """Main-effects prediction of intersections, observed or not.

        Parameters
        ----------
        attributes : DataFrame of shape (n_intersections, n_attributes)
            Levels of the fitted attributes (columns named as
            ``attribute_names_``), each level seen in :meth:`fit`.

        Returns
        -------
        prediction : DataFrame
            Indexed like ``attributes``: the predicted cell proportions
            ``TP, FN, FP, TN``, ``prevalence``, ``tpr``, ``fpr``, ``ppv``,
            ``observed`` (whether the intersection was among the fitted groups)
            and ``source``, always ``"main-effects prediction"``: these are
            predictions of the additive model, not estimates from data of the
            intersection.
        """
        self._check_fitted()
        frame = pd.DataFrame(attributes)
        frame.columns = [str(col) for col in frame.columns]
        missing = [a for a in self.attribute_names_ if a not in frame.columns]
        if missing:
            raise ValueError(
                f"attributes lacks the fitted attribute(s) {missing}; it has "
                f"{list(frame.columns)}."
            )
        frame = frame[self.attribute_names_]
        X = _design(frame.reset_index(drop=True), self.categories_)
        q = _cells_from_coef(X, self.coef_)
        seen = pd.MultiIndex.from_frame(self.attributes_.astype(str))
        asked = pd.MultiIndex.from_frame(frame.astype(str).reset_index(drop=True))
        out = pd.DataFrame(q, columns=list(_CELLS), index=frame.index)
        out["prevalence"] = q[:, 0] + q[:, 1]
        out["tpr"] = q[:, 0] / (q[:, 0] + q[:, 1])
        out["fpr"] = q[:, 2] / (q[:, 2] + q[:, 3])
        out["ppv"] = q[:, 0] / (q[:, 0] + q[:, 2])
        out["observed"] = asked.isin(seen)
        out["source"] = "main-effects prediction"
        return out

    # ---------------------------------------------------------------- inference

    def interaction_test(self, metric="tpr", *, alpha=0.05, correction="holm"):
        """Does a group's metric depart from its main-effects prediction?

        For each group, a two-sided test of its numerator ``k`` out of its
        denominator ``m`` (e.g. its true positives out of its positives for
        TPR) against ``predicted``, the rate the metric's additive logit
        predicts for it when fitted **without** the group (one Newton step from
        the full fit), under the beta-binomial law that carries the
        prediction's own uncertainty (twice the smaller tail, at most 1). The
        groups found to depart at 0.05 (Holm) are left out of the fit and the
        others tested again until no other departs; those groups keep their
        own value in :meth:`metric_pseudo_counts`. The family is every group
        with ``m > 0``; ``correction`` adjusts for it (see the user guide for
        the measured size and power).

        Parameters
        ----------
        metric : str, default="tpr"
            One of ``tpr, fnr, fpr, tnr, ppv, fdr, npv, for, prevalence,
            selection_rate, accuracy, error_rate``.
        alpha : float, default=0.05
            Level of each (adjusted) test.
        correction : {"holm", "bonferroni", "none"} or None, default="holm"
            Family-wise adjustment over the tested groups.

        Returns
        -------
        table : DataFrame
            Indexed by the groups: ``denominator``, ``observed``, ``predicted``
            (main effects), ``pvalue``, ``pvalue_adjusted``, ``reject``.
        """
        self._check_fitted()
        if correction not in (None, "none", "holm", "bonferroni"):
            raise ValueError(
                f"correction must be 'holm', 'bonferroni', 'none' or None; got "
                f"{correction!r}."
            )
        if not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
        num, den = _binomial_metric(metric)
        c = self.counts_
        k, m = c[:, num].sum(axis=1), c[:, den].sum(axis=1)
        fit = self._metric_fit(tuple(num), tuple(den))
        if fit is None:
            p0 = p = np.full(len(c), np.nan)
        else:
            p0, p = fit["predicted_without"], fit["pvalue"]
        if np.any(np.abs(c - np.round(c)) > 1e-9):
            warnings.warn(
                "the counts are not whole numbers (weighted?): the beta-binomial "
                "test rounds them.",
                UserWarning,
                stacklevel=2,
            )
        adjusted = adjust_family(p, correction)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(m > 0, k / m, np.nan)
        return pd.DataFrame(
            {
                "denominator": m,
                "observed": observed,
                "predicted": p0,
                "pvalue": p,
                "pvalue_adjusted": adjusted,
                "reject": np.nan_to_num(adjusted, nan=1.0) <= alpha,
            },
            index=pd.Index(self.groups_, name="group"),
        )
