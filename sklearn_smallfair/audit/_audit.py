"""FairnessAudit and audit_predictions: per-group metrics, tests and a report."""

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._confusion import rows_or_counts
from .._frames import from_data, lazy_engine
from .._params import (
    BOOLEAN,
    COUNTS,
    POS_LABEL,
    RANDOM_STATE,
    REFERENCE,
    HasMethods,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import resolve_seed
from .._scoring import _routing_enabled
from .._validation import check_smoothing, format_labels
from ..metrics import Metric, get_metrics
from ..smoothing import BaseSmoothing, CrossPriorSmoothing
from ._binary import audit_counts, warn_undefined
from ._detectable import TOLERANCE
from ._multiclass import (
    audit_multiclass,
    check_matrix_metrics,
    check_same_coding,
    is_multiclass_counts,
    more_than_two,
    multiclass_counts,
)

__all__ = ["FairnessAudit", "audit_predictions"]

DEFAULT_METRICS = ("tpr", "fpr", "ppv")
TESTS = ("match", "separation")
_DEFAULT_SMOOTHING = "default"  # CrossPriorSmoothing(lam=10)
#: Largest ``n_resamples`` of the MATCH test's Monte Carlo laws per group.
MAX_N_RESAMPLES = 1_000_000

#: Parameters shared by :func:`audit_predictions` and :class:`FairnessAudit`.
_AUDIT_PARAMETERS = {
    "metrics": [str, Metric, list, tuple],
    "smoothing": [StrOptions({_DEFAULT_SMOOTHING}), None, BaseSmoothing],
    "reference": REFERENCE,
    "tests": [StrOptions(set(TESTS)), list, tuple, None],
    "alpha": [Number(0, 1, closed="neither")],
    "confidence_level": [Number(0, 1, closed="neither")],
    "correction": [StrOptions({"holm", "bonferroni", "fdr_bh", "none"}), None],
    "family": [StrOptions({"all", "metric"})],
    "separation_pairs": [StrOptions({"reference", "all"})],
    "tolerance": [Number(0, None, closed="neither")],
    "n_resamples": [Whole(100, MAX_N_RESAMPLES)],
    "random_state": RANDOM_STATE,
    "pos_label": [*POS_LABEL, None],
}


def _check_tests(tests):
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests or ())
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise ValueError(
            f"tests must be a subset of {TESTS}; got unknown {unknown}. Pass e.g. "
            f"tests=('match',) or tests=() for metrics only."
        )
    return tests


def _resolve_smoothing(smoothing):
    if isinstance(smoothing, str) and smoothing == _DEFAULT_SMOOTHING:
        return CrossPriorSmoothing(lam=10.0)
    return check_smoothing(smoothing)  # checks its own parameters


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": [*COUNTS, None],
        **_AUDIT_PARAMETERS,
        "sample_weight": ["array-like", str, None],
        "labels": ["array-like", None],
        "matrix_metrics": [str, list, tuple, None],
        "title": [str],
        "data": "no_validation",
    }
)
def audit_predictions(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
    metrics=DEFAULT_METRICS,
    smoothing=_DEFAULT_SMOOTHING,
    reference="rest",
    tests=TESTS,
    alpha=0.05,
    confidence_level=0.95,
    correction="holm",
    family="all",
    tolerance=TOLERANCE,
    separation_pairs="reference",
    sample_weight=None,
    pos_label=None,
    labels=None,
    matrix_metrics=None,
    n_resamples=20_000,
    random_state=0,
    title="Fairness audit",
):
    """Audit predictions (or per-group confusion matrices) group by group.

    Computes, for every group: its size and class counts; the raw and smoothed
    value of each metric with its undefined flag and the group's confidence
    interval of each (``interval_method="auto"`` of
    :func:`~sklearn_smallfair.metrics.group_metrics`); the reference's value and the
    range of values the reference's proportions give at the group's size; the
    MATCH test of each value against the reference; and the separation
    (equalized odds) test between groups with the calibrated default of
    :func:`~sklearn_smallfair.stats.separation_test` (``method="auto"``: an exact
    unconditional test for small cells, the score test for large ones), which
    keeps its size when a small group's rate is 0 or 1.

    Targets with more than two classes (or any ``labels``) are audited one
    class at a time: class ``k``'s one-vs-rest matrices
    (:func:`~sklearn_smallfair.metrics.one_vs_rest` of the groups' ``K x K``
    counts) go through the binary audit above, and the correction runs over
    the tests of every class; the result is a :class:`MulticlassAuditReport`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted labels: binary, or multiclass (see ``labels``).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
        Group labels; several columns give intersectional groups.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group confusion matrices ``(TP, FN, FP, TN)`` instead of rows; see
        :func:`~sklearn_smallfair.check_group_counts`. Multiclass matrices are
        a :class:`~sklearn_smallfair.metrics.MulticlassCounts` (of
        :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`), a
        mapping from group to ``K x K`` matrix or an array of shape
        ``(n_groups, K, K)``, rows true and columns predicted in the order of
        ``labels``.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    metrics : str, Metric or list of them, default=("tpr", "fpr", "ppv")
        The audited metrics: names of
        :func:`~sklearn_smallfair.metrics.metric_names` or
        :class:`~sklearn_smallfair.metrics.Metric` objects.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing, \
            IntersectionalSmoothing, None or "default"
        Smoothing of the ``*_smoothed`` columns; ``"default"`` is
        ``CrossPriorSmoothing(lam=10)``. Every audit of intersectional groups
        (several columns of ``sensitive_features``) of binary targets has the
        structured estimates of
        :class:`~sklearn_smallfair.smoothing.IntersectionalSmoothing`, which
        smooths each intersection toward what its attributes' main effects
        predict, and the test of whether each intersection departs from its
        main effects (:attr:`AuditReport.intersections`), shown in the report's
        drill-down beside the raw and the smoothed values.
        ``smoothing=IntersectionalSmoothing()`` makes the structured estimates
        the report's smoothed values.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        The reference of each group (see
        :func:`~sklearn_smallfair.reference_counts`). For multiclass targets,
        counts are the reference's ``K x K`` matrix (or one per group, shape
        ``(n_groups, K, K)``), whose one-vs-rest matrices are the classes'
        references.
    tests : sequence of {"match", "separation"}, default=("match", "separation")
        Tests to run.
    alpha : float, default=0.05
        Significance level, also the reference ranges' ``1 - alpha`` coverage.
    confidence_level : float, default=0.95
        Level of each group's confidence intervals (``<metric>_low``,
        ``<metric>_high`` and their ``_smoothed`` counterparts), in (0, 1).
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison correction of the tests' p-values (``"none"`` is
        ``None``: no correction).
    family : {"all", "metric"}, default="all"
        The family over which ``correction`` controls the MATCH tests:
        ``"all"``, every group x metric (x class) of the audit, so that the
        chance that a fair model gets a "gap" anywhere in the audit is at most
        ``alpha``; ``"metric"``, each metric on its own (each metric's chance is
        at most ``alpha``, the audit's up to the number of metrics times that).
        The separation test is its own family (its comparisons, per rate).
    tolerance : float, default=0.1
        The largest gap that counts as no gap: a non-rejected metric is ``"no
        gap detected"`` only when the audit detects, at the group's size, every
        gap above a size at most ``tolerance`` (and the group's interval lies
        within it); when the smallest detectable gap is larger (a group too
        small to exclude a gap of ``tolerance``), the verdict is
        ``"inconclusive"``, never a reassuring one. On the metric's scale (a
        difference of proportions for a rate).
    separation_pairs : {"reference", "all"}, default="reference"
        The comparisons of the separation test, per rate: ``"reference"``, each
        group against its reference (``K`` comparisons; everyone else for
        ``reference="rest"``, ``"total"`` or a table of counts, since a two-sample
        test needs disjoint samples; the named group for a group label);
        ``"all"``, every pair of groups (``K (K - 1) / 2`` comparisons: 1,770 per
        rate at 60 groups, each with less power after the correction). With two
        groups both are the one comparison of the two.
    sample_weight : array-like of shape (n_samples,), default=None
        Integer frequency weights of the rows.
    pos_label : int, float, bool or str, default=None
        The positive class of binary targets. ``None`` follows scikit-learn's
        rule: ``1`` when the labels are ``{0, 1}`` or ``{-1, 1}`` (booleans
        included), otherwise a ``ValueError`` naming the labels and asking for
        ``pos_label``. Multiclass targets have no positive class: each class is
        audited in turn, so ``pos_label`` is then an error.
    labels : array-like of shape (n_classes,), default=None
        The classes, in the order of the report, at least two; a class of the
        data missing from ``labels`` is an error. Given, the audit is per class
        (also for two classes: one audit per class as the positive one). By
        default binary targets get the binary audit and targets with more than
        two classes the per-class audit over their sorted classes.
    matrix_metrics : sequence of {"accuracy", "balanced_accuracy", "mcc", \
"kappa"}, default=None
        Multiclass targets only: metrics of each group's whole ``K x K`` matrix
        (:func:`~sklearn_smallfair.metrics.multiclass_metric`), raw and
        smoothed, against the reference's, with the multiclass MATCH test
        (:func:`~sklearn_smallfair.stats.multiclass_match_test`, one family of
        the groups per metric), in :attr:`MulticlassAuditReport.matrix`.
    n_resamples : int, default=20_000
        Monte Carlo draws per group of the MATCH test's permutation law where it
        is too large to enumerate (metrics that are not proportions, groups of
        thousands).
    random_state : int, numpy Generator, RandomState, SeedSequence or None, \
default=0
        Seed of the posterior draws of the intervals of metrics without a closed
        form and of Monte Carlo MATCH tests.
    title : str, default="Fairness audit"
        Title of the report.

    Returns
    -------
    AuditReport or MulticlassAuditReport
        A :class:`MulticlassAuditReport` for multiclass targets.

    Examples
    --------
    >>> from sklearn_smallfair.audit import audit_predictions
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> table = load_published_confusion_matrices("COMPAS")
    >>> counts = table[table["group"] != "ALL"].set_index("group")[
    ...     ["TP", "FN", "FP", "TN"]]
    >>> report = audit_predictions(counts=counts, metrics=["tpr", "fpr"])
    >>> report.frame[["n", "tpr", "tpr_match_reject", "fpr"]].round(3)
              n    tpr  tpr_match_reject    fpr
    group
    Black  3178  0.616              True  0.381
    White  2265  0.374              True  0.185
    >>> report.separation_violated
    True
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight, counts=counts
    )
    resolved = [m.name for m in get_metrics(metrics)]
    settings = dict(
        resolved=resolved,
        smoothing=_resolve_smoothing(smoothing),
        tests=_check_tests(tests),
        alpha=float(alpha),
        confidence_level=float(confidence_level),
        correction=None if correction == "none" else correction,
        family=family,
        tolerance=float(tolerance),
        separation_pairs=separation_pairs,
        reference=reference,
        n_resamples=n_resamples,
        seed=resolve_seed(random_state),
        matrix_metrics=check_matrix_metrics(matrix_metrics),
    )
    data = dict(
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=sensitive_features,
        counts=counts,
        sample_weight=sample_weight,
        pos_label=pos_label,
    )
    kind, counted = _count(data, labels)
    if kind == "multiclass":
        return audit_multiclass(counted, data, settings, title)
    if settings["matrix_metrics"]:
        raise ValueError(
            f"matrix_metrics={list(settings['matrix_metrics'])} are metrics of "
            f"multiclass confusion matrices, but these targets are binary; pass "
            f"labels=[...] to audit each class, or drop matrix_metrics."
        )
    groups, cms, name = counted
    report = audit_counts(groups, cms, name, data, settings, title)
    warn_undefined(report.frame, resolved)
    return report


def _count(data, labels):
    """``("binary", (groups, cms, name))`` or ``("multiclass", (counts, name))``.

    Binary targets without ``labels`` are counted as they always were (one pass,
    the ``(TP, FN, FP, TN)`` cells); targets with more than two classes, or any
    ``labels``, are counted into ``K x K`` matrices
    (:func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`).
    """
    counts, pos_label = data["counts"], data["pos_label"]
    if labels is None and not is_multiclass_counts(counts):
        try:
            return "binary", rows_or_counts(
                data["y_true"],
                data["y_pred"],
                data["sensitive_features"],
                counts,
                data["sample_weight"],
                pos_label,
            )
        except ValueError:
            if counts is not None or not more_than_two(data["y_true"], data["y_pred"]):
                raise
            check_same_coding(data["y_true"], data["y_pred"])
    return "multiclass", multiclass_counts(data, labels)


def _estimator_type(estimator):
    """scikit-learn's type of ``estimator`` ("classifier", "clusterer", ...)."""
    try:
        from sklearn.utils import get_tags
    except ImportError:  # scikit-learn < 1.6
        return getattr(estimator, "_estimator_type", None)
    try:
        return get_tags(estimator).estimator_type
    except (AttributeError, TypeError):
        return getattr(estimator, "_estimator_type", None)


def _check_classifier(estimator):
    """Refuse a model whose predictions are not class labels."""
    kind = _estimator_type(estimator)
    if kind in (None, "classifier"):
        return
    raise TypeError(
        f"FairnessAudit audits a classifier, but {_model_name(estimator)} is a "
        f"{kind}: its predictions are not class labels to compare with y. Wrap a "
        f"classifier, or audit labels you computed with audit_predictions(y_true, "
        f"y_pred, sensitive_features=...)."
    )


def _check_known_classes(estimator, y):
    """Refuse audit labels the model was never trained on."""
    classes = getattr(estimator, "classes_", None)
    if classes is None or y is None:
        return
    classes = np.asarray(classes)
    if classes.ndim != 1:
        return
    truth = pd.unique(np.asarray(y).ravel().astype(object))
    unknown = [v for v in truth if not (classes.astype(object) == v).any()]
    if unknown:
        raise ValueError(
            f"y holds the class(es) {format_labels(np.asarray(unknown, dtype=object))}"
            f" that {_model_name(estimator)} was not trained on (its classes_ are "
            f"{format_labels(classes)}): the model and the audit code the target "
            f"differently, or the audit data has a class the model never saw. "
            f"Recode y to the model's classes, or, to audit a class the model cannot "
            f"predict, call audit_predictions(y, model.predict(X), ...)."
        )


def _estimator_has(attr):
    def check(self):
        est = getattr(self, "estimator_", self.estimator)
        return hasattr(est, attr)

    return check


class FairnessAudit(MetaEstimatorMixin, BaseEstimator):
    """A classifier wrapped with a fairness audit.

    :meth:`fit` fits a clone of ``estimator`` (or, with ``prefit=True``, uses the
    already fitted estimator as it is); ``predict``, ``predict_proba``,
    ``decision_function`` and ``score`` delegate to it. :meth:`audit` predicts on
    audit data and returns an :class:`AuditReport` with per-group metrics, raw
    and smoothed, MATCH tests against each group's reference, and the separation
    test.

    Parameters
    ----------
    estimator : classifier
        A binary or multiclass classifier. A multiclass one is audited class by
        class (see :func:`audit_predictions`), giving a
        :class:`MulticlassAuditReport`.
    metrics : sequence of str, default=("tpr", "fpr", "ppv")
        Audited metrics.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing, \
            IntersectionalSmoothing, None or "default"
        Smoothing of the report's ``*_smoothed`` columns; ``"default"`` is
        ``CrossPriorSmoothing(lam=10)``. Every audit of intersectional groups
        of binary targets has the structured estimates and interaction tests of
        :class:`~sklearn_smallfair.smoothing.IntersectionalSmoothing`
        (:attr:`AuditReport.intersections`);
        ``smoothing=IntersectionalSmoothing()`` makes the structured estimates
        the report's smoothed values (see :func:`audit_predictions`).
    tests : sequence of {"match", "separation"}, default=("match", "separation")
        Tests to run.
    alpha : float, default=0.05
        Significance level.
    confidence_level : float, default=0.95
        Level of each group's confidence intervals, in (0, 1).
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison correction (``"none"`` is ``None``).
    family : {"all", "metric"}, default="all"
        The MATCH tests' correction family: the whole audit, or each metric (see
        :func:`audit_predictions`).
    tolerance : float, default=0.1
        The largest gap that counts as no gap (see :func:`audit_predictions`).
    separation_pairs : {"reference", "all"}, default="reference"
        The separation test's comparisons: each group against its reference, or
        every pair of groups (see :func:`audit_predictions`).
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Each group's reference.
    pos_label : int, float, bool or str, default=None
        The positive class of binary targets; ``None`` follows scikit-learn's
        rule (see :func:`audit_predictions`).
    labels : array-like of shape (n_classes,), default=None
        The classes of a per-class audit, in order (see
        :func:`audit_predictions`); default: the classes of the audit data,
        binary targets getting the binary audit.
    matrix_metrics : sequence of str, default=None
        Multiclass only: metrics of each group's whole confusion matrix
        (``"accuracy"``, ``"balanced_accuracy"``, ``"mcc"``, ``"kappa"``), see
        :func:`audit_predictions`.
    prefit : bool, default=False
        ``estimator`` is already fitted: :meth:`fit` does not refit it. Without
        a call to :meth:`fit`, :meth:`audit` uses a fitted ``estimator`` as it
        is, whatever ``prefit``.
    n_resamples : int, default=20_000
        Monte Carlo draws per group of the MATCH test's permutation law where it
        is too large to enumerate.
    random_state : int, RandomState instance or None, default=0
        Seed of the posterior draws of intervals and of Monte Carlo MATCH tests.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier (a clone of ``estimator``, or ``estimator`` itself
        with ``prefit=True``).
    classes_ : ndarray
        Class labels of ``estimator_``.
    n_features_in_ : int
        Number of features seen by ``estimator_``, when it records it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_smallfair.audit import FairnessAudit
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> groups = np.where(rng.random(400) < 0.1, "small", "large")
    >>> audit = FairnessAudit(LogisticRegression()).fit(X, y)
    >>> report = audit.audit(X, y, sensitive_features=groups)
    >>> report.frame[["n", "tpr", "tpr_smoothed"]].round(3)
             n    tpr  tpr_smoothed
    group
    large  352  0.757         0.758
    small   48  0.783         0.778
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        **_AUDIT_PARAMETERS,
        "labels": ["array-like", None],
        "matrix_metrics": [str, list, tuple, None],
        "prefit": BOOLEAN,
    }

    def __init__(
        self,
        estimator,
        *,
        metrics=DEFAULT_METRICS,
        smoothing=_DEFAULT_SMOOTHING,
        tests=TESTS,
        alpha=0.05,
        confidence_level=0.95,
        correction="holm",
        family="all",
        tolerance=TOLERANCE,
        separation_pairs="reference",
        reference="rest",
        pos_label=None,
        labels=None,
        matrix_metrics=None,
        prefit=False,
        n_resamples=20_000,
        random_state=0,
    ):
        self.estimator = estimator
        self.metrics = metrics
        self.smoothing = smoothing
        self.tests = tests
        self.alpha = alpha
        self.confidence_level = confidence_level
        self.correction = correction
        self.family = family
        self.separation_pairs = separation_pairs
        self.tolerance = tolerance
        self.reference = reference
        self.pos_label = pos_label
        self.labels = labels
        self.matrix_metrics = matrix_metrics
        self.prefit = prefit
        self.n_resamples = n_resamples
        self.random_state = random_state

    def fit(self, X, y, **fit_params):
        """Fit a clone of the estimator (or take the prefitted one).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.
        **fit_params
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : FairnessAudit
            This audit, with the fitted ``estimator_``.
        """
        self._validate_params()
        _check_classifier(self.estimator)
        if _routing_enabled():
            fit_params = process_routing(self, "fit", **fit_params).estimator.fit
        if self.prefit:
            check_is_fitted(self.estimator)
            self.estimator_ = self.estimator
        else:
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        self._copy_fitted_attributes()
        return self

    def get_metadata_routing(self):
        """How :meth:`fit` routes metadata to the wrapped estimator.

        With ``sklearn.set_config(enable_metadata_routing=True)``, ``fit`` passes
        the estimator only what it requests (``estimator.set_fit_request(
        sample_weight=True)``) and raises scikit-learn's error for metadata that
        nothing requests; without routing, every ``fit`` parameter reaches the
        estimator's ``fit``.

        Returns
        -------
        routing : MetadataRouter
            The routing of :meth:`fit` to ``estimator.fit``.
        """
        return MetadataRouter(owner=self.__class__.__name__).add(
            estimator=self.estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )

    def _copy_fitted_attributes(self):
        for attr in ("classes_", "n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))

    def _fitted(self):
        """The model to audit: the one :meth:`fit` fitted, else a fitted wrapped one.

        An audit of an already fitted model needs no call to :meth:`fit` (nor
        ``prefit=True``): the wrapped estimator is used as it is.
        """
        if hasattr(self, "estimator_"):
            return self.estimator_
        try:
            check_is_fitted(self.estimator)
        except NotFittedError:
            raise NotFittedError(
                f"This FairnessAudit is not fitted and its estimator "
                f"{type(self.estimator).__name__} is not fitted either: call "
                f"fit(X, y) first, or wrap an already fitted estimator."
            ) from None
        return self.estimator

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the fitted estimator."""
        return self._fitted().predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the fitted estimator."""
        return self._fitted().predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted estimator."""
        return self._fitted().decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y, sample_weight=None):
        """The fitted estimator's ``score`` (accuracy for classifiers)."""
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self._fitted().score(X, y, **kw)

    def audit(self, X, y, *, sensitive_features, sample_weight=None, title=None):
        """Predict on ``X`` and audit the predictions against ``y`` by group.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Audit data, in memory: the model predicts on it. A lazy table
            (DuckDB, Spark, a polars LazyFrame) is refused; store the
            predictions in the table and call :meth:`audit_predictions` with
            ``data=`` instead.
        y : array-like of shape (n_samples,)
            True labels.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
            Group labels; several columns give intersectional groups.
        sample_weight : array-like of shape (n_samples,), default=None
            Integer frequency weights.
        title : str, default=None
            Title of the report; default names the estimator.

        Returns
        -------
        AuditReport or MulticlassAuditReport
            The report of the audit: a :class:`MulticlassAuditReport` for
            multiclass targets (or given ``labels``), an :class:`AuditReport`
            otherwise.
        """
        engine = lazy_engine(X)
        if engine is not None:
            raise TypeError(
                f"X is a {engine} table; FairnessAudit.audit predicts with the "
                f"model in memory, so it needs X in memory (numpy, pandas, "
                f"polars). To audit a table where it lives, store the model's "
                f"predictions in it and audit them there: "
                f"audit_predictions('y', 'y_pred', sensitive_features=[...], "
                f"data=table)."
            )
        est = self._fitted()
        _check_classifier(est)
        y_pred = est.predict(X)
        _check_known_classes(est, y)
        return self.audit_predictions(
            y,
            y_pred,
            sensitive_features=sensitive_features,
            sample_weight=sample_weight,
            title=title or f"Fairness audit of {_model_name(est)}",
        )

    def audit_predictions(
        self,
        y_true,
        y_pred,
        *,
        sensitive_features,
        data=None,
        sample_weight=None,
        title=None,
    ):
        """Audit given predictions with this audit's settings.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,)
            True and predicted labels.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
            Group labels.
        data : DataFrame or table, default=None
            A table whose columns ``y_true``, ``y_pred``,
            ``sensitive_features`` and ``sample_weight`` then name, counted by
            its own engine (see :func:`audit_predictions`): predictions
            already stored beside the labels, in a pandas, polars, dask,
            DuckDB or Spark table.
        sample_weight : array-like of shape (n_samples,), default=None
            Integer frequency weights.
        title : str, default=None
            Title of the report.

        Returns
        -------
        AuditReport or MulticlassAuditReport
            The report of the audit: a :class:`MulticlassAuditReport` for
            multiclass targets (or given ``labels``), an :class:`AuditReport`
            otherwise.
        """
        self._validate_params()
        return audit_predictions(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            data=data,
            sample_weight=sample_weight,
            metrics=self.metrics,
            smoothing=self.smoothing,
            reference=self.reference,
            tests=self.tests,
            alpha=self.alpha,
            confidence_level=self.confidence_level,
            correction=self.correction,
            family=self.family,
            separation_pairs=self.separation_pairs,
            tolerance=self.tolerance,
            pos_label=self.pos_label,
            labels=self.labels,
            matrix_metrics=self.matrix_metrics,
            n_resamples=self.n_resamples,
            random_state=self.random_state,
            title=title or "Fairness audit",
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        from sklearn.utils import get_tags

        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.input_tags = inner.input_tags
        tags.target_tags = inner.target_tags
        return tags

    @property
    def _estimator_type(self):  # scikit-learn < 1.6
        return getattr(self.estimator, "_estimator_type", None)


def _model_name(estimator, depth=0):
    """The name of the model that makes the predictions: the last step of a
    pipeline, the best estimator of a search, the estimator a meta-estimator
    wraps (``Pipeline(LogisticRegression)`` is named ``LogisticRegression``)."""
    if depth < 5:
        steps = getattr(estimator, "steps", None)
        if isinstance(steps, list) and steps and isinstance(steps[-1], tuple):
            return _model_name(steps[-1][1], depth + 1)
        for attr in ("best_estimator_", "estimator_", "estimator", "base_estimator"):
            inner = getattr(estimator, attr, None)
            if inner is not None and hasattr(inner, "fit") and inner is not estimator:
                return _model_name(inner, depth + 1)
    return type(estimator).__name__
