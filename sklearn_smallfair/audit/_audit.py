"""FairnessAudit and audit_predictions: per-group metrics, tests and a report."""

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._confusion import CELLS, reference_counts, rows_or_counts
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
from .._random import child_seed, resolve_seed
from .._validation import (
    _feature_columns,
    check_sensitive_features,
    check_smoothing,
    format_labels,
)
from ..exceptions import UndefinedGroupMetricWarning
from ..metrics import Metric, compute_metric, get_metrics, group_metrics
from ..smoothing import BaseSmoothing, CrossPriorSmoothing
from ..stats import match_test, separation_test
from ._detectable import detectable_gaps, verdicts
from ._multiclass import check_matrix_metrics
from ._report import AuditReport

__all__ = ["FairnessAudit", "audit_predictions"]

DEFAULT_METRICS = ("tpr", "fpr", "ppv")
TESTS = ("match", "separation")
_DEFAULT_SMOOTHING = "default"  # CrossPriorSmoothing(lam=10)
#: Largest ``n_draws`` of the MATCH test's Monte Carlo permutation laws per group.
MAX_N_DRAWS = 1_000_000

#: Parameters shared by :func:`audit_predictions` and :class:`FairnessAudit`.
_AUDIT_PARAMETERS = {
    "metrics": [str, Metric, list, tuple],
    "smoothing": [StrOptions({_DEFAULT_SMOOTHING}), None, BaseSmoothing],
    "reference": REFERENCE,
    "tests": [StrOptions(set(TESTS)), list, tuple, None],
    "alpha": [Number(0, 1, closed="neither")],
    "ci": [Number(0, 1, closed="neither"), None],
    "correction": [StrOptions({"holm", "bonferroni", "fdr_bh", "none"}), None],
    "family": [StrOptions({"all", "metric"})],
    "n_draws": [Whole(100, MAX_N_DRAWS)],
    "random_state": RANDOM_STATE,
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


def _describe(smoothing):
    """``CrossPriorSmoothing(lam=10)``: the smoothing with all its parameters."""
    if smoothing is None:
        return "none"
    params = ", ".join(f"{k}={v!r}" for k, v in smoothing.get_params().items())
    return f"{type(smoothing).__name__}({params})"


def _is_total(reference):
    return isinstance(reference, str) and reference == "total"


def _marginals(data, metrics, level, seed):
    """Per attribute of intersectional groups: its groups' metrics, and the parts.

    Returns ``(marginals, parts)``: a dict from attribute name to the frame of
    :func:`group_metrics` over that attribute alone (``n``, each metric with its
    confidence interval), and a frame indexed by the intersectional groups with
    one column per attribute (the group's level of it); ``(None, None)`` for a
    single attribute or counts.
    """
    features = data["sensitive_features"]
    if data["y_true"] is None or features is None:
        return None, None
    n_samples = len(data["y_pred"])
    columns, name = _feature_columns(features, n_samples)
    if len(columns) < 2:
        return None, None
    names = name.split("|")
    if len(names) != len(columns) or len(set(names)) != len(names):
        names = [f"attribute {k + 1}" for k in range(len(columns))]
    groups, codes, _ = check_sensitive_features(features, n_samples)
    first = np.unique(codes, return_index=True)[1]
    parts = pd.DataFrame(
        {a: np.asarray(col)[first] for a, col in zip(names, columns)}, index=groups
    )
    marginals = {}
    for a, col in zip(names, columns):
        with warnings.catch_warnings():  # the intersections' warning says it
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            table = group_metrics(
                data["y_true"],
                data["y_pred"],
                sensitive_features=np.asarray(col),
                sample_weight=data["sample_weight"],
                pos_label=data["pos_label"],
                metrics=metrics,
                smoothing=None,
                zero_division=np.nan,
                ci=level,
                ci_method="auto",
                random_state=child_seed(seed, "marginal", a),
            )
        keep = ["n"] + [f"{m}{s}" for m in metrics for s in ("", "_ci_low", "_ci_high")]
        marginals[a] = table[keep]
    return marginals, parts


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        **_AUDIT_PARAMETERS,
        "sample_weight": ["array-like", None],
        "pos_label": [*POS_LABEL, None],
        "labels": ["array-like", None],
        "matrix_metrics": [str, list, tuple, None],
        "title": [str],
    }
)
def audit_predictions(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    metrics=DEFAULT_METRICS,
    smoothing=_DEFAULT_SMOOTHING,
    reference="rest",
    tests=TESTS,
    alpha=0.05,
    ci=None,
    correction="holm",
    family="all",
    sample_weight=None,
    pos_label=None,
    labels=None,
    matrix_metrics=None,
    n_draws=20_000,
    random_state=0,
    title="Fairness audit",
):
    """Audit predictions (or per-group confusion matrices) group by group.

    Computes, for every group: its size and class counts; the raw and smoothed
    value of each metric with its undefined flag and the group's confidence
    interval of each (``ci_method="auto"`` of
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
        Metric names (:func:`~sklearn_smallfair.metrics.metric_names`).
    smoothing : AdditiveSmoothing, CrossPriorSmoothing, None or "default"
        Smoothing of the ``*_smoothed`` columns; ``"default"`` is
        ``CrossPriorSmoothing(lam=10)``.
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
    ci : float or None, default=None
        Level of each group's confidence intervals (``<metric>_ci_low``,
        ``<metric>_ci_high`` and their ``_smoothed`` counterparts), in (0, 1);
        ``None`` uses ``1 - alpha``.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison correction of the tests' p-values (``"none"`` is
        ``None``: no correction).
    family : {"all", "metric"}, default="all"
        The family over which ``correction`` controls the MATCH tests:
        ``"all"``, every group x metric (x class) of the audit, so that the
        chance that a fair model gets a "gap" anywhere in the audit is at most
        ``alpha``; ``"metric"``, each metric on its own (each metric's chance is
        at most ``alpha``, the audit's up to the number of metrics times that).
        The separation test is its own family (its pairs of groups, per rate).
    sample_weight : array-like of shape (n_samples,), default=None
        Integer frequency weights of the rows.
    pos_label : int, float, bool or str, default=None
        The positive class of binary targets; ``None`` is 1 (or ``True``).
        Multiclass targets have no positive class: each class is audited in turn,
        so ``pos_label`` is then an error.
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
    n_draws : int, default=20_000
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
    resolved = [m.name for m in get_metrics(metrics)]
    settings = dict(
        resolved=resolved,
        smoothing=_resolve_smoothing(smoothing),
        tests=_check_tests(tests),
        alpha=float(alpha),
        level=1.0 - float(alpha) if ci is None else float(ci),
        correction=None if correction == "none" else correction,
        family=family,
        reference=reference,
        n_draws=n_draws,
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
        from ._multiclass import audit_multiclass

        return audit_multiclass(counted, data, settings, title)
    if settings["matrix_metrics"]:
        raise ValueError(
            f"matrix_metrics={list(settings['matrix_metrics'])} are metrics of "
            f"multiclass confusion matrices, but these targets are binary; pass "
            f"labels=[...] to audit each class, or drop matrix_metrics."
        )
    groups, cms, name = counted
    data["pos_label"] = _BINARY_POS_LABEL if pos_label is None else pos_label
    report = _audit_counts(groups, cms, name, data, settings, title)
    _warn_undefined(report.frame, resolved)
    return report


#: The positive class of binary targets when ``pos_label`` is not given.
_BINARY_POS_LABEL = 1


def _count(data, labels):
    """``("binary", (groups, cms, name))`` or ``("multiclass", (counts, name))``.

    Binary targets without ``labels`` are counted as they always were (one pass,
    the ``(TP, FN, FP, TN)`` cells); targets with more than two classes, or any
    ``labels``, are counted into ``K x K`` matrices
    (:func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`).
    """
    from ._multiclass import is_multiclass_counts, more_than_two, multiclass_counts

    counts, pos_label = data["counts"], data["pos_label"]
    if labels is None and not is_multiclass_counts(counts):
        try:
            return "binary", rows_or_counts(
                data["y_true"],
                data["y_pred"],
                data["sensitive_features"],
                counts,
                data["sample_weight"],
                _BINARY_POS_LABEL if pos_label is None else pos_label,
            )
        except ValueError:
            if counts is not None or not more_than_two(data["y_true"], data["y_pred"]):
                raise
    return "multiclass", multiclass_counts(data, labels)


def _audit_counts(groups, cms, name, data, settings, title, *, decide=True):
    """The binary audit of the per-group ``(TP, FN, FP, TN)`` matrices ``cms``.

    ``data`` holds the rows (for the margins of intersectional groups) or the
    counts; the matrices are counted once, by the caller. ``decide=False``
    leaves out the MATCH verdicts and detectable gaps (:func:`decide_match`),
    for a caller that adjusts the p-values over a larger family first.
    """
    resolved = settings["resolved"]
    smoothing = settings["smoothing"]
    tests = settings["tests"]
    alpha, level = settings["alpha"], settings["level"]
    correction, reference = settings["correction"], settings["reference"]
    seed = settings["seed"]
    table = group_metrics(
        counts=pd.DataFrame(
            cms, columns=list(CELLS), index=pd.Index(groups, name=name)
        ),
        metrics=resolved,
        smoothing=smoothing,
        reference=reference,
        zero_division=np.nan,
        ci=level,
        ci_method="auto",
        random_state=child_seed(seed, "ci"),
    )
    ref = reference_counts(cms, reference, groups=groups)
    frame = table[["n", "n_pos", "n_neg"]].copy()
    for m in resolved:
        frame[m] = table[m]
        frame[f"{m}_ci_low"] = table[f"{m}_ci_low"]
        frame[f"{m}_ci_high"] = table[f"{m}_ci_high"]
        frame[f"{m}_undefined"] = table[f"{m}_undefined"]
        source = f"{m}_smoothed" if smoothing is not None else m
        frame[f"{m}_smoothed"] = table[source]
        frame[f"{m}_smoothed_ci_low"] = table[f"{source}_ci_low"]
        frame[f"{m}_smoothed_ci_high"] = table[f"{source}_ci_high"]
        frame[f"{m}_reference"] = compute_metric(m, ref, zero_division=np.nan)
        # the range of the group's value that the MATCH test accepts (below)
        frame[f"{m}_interval_low"] = np.nan
        frame[f"{m}_interval_high"] = np.nan

    match = None
    if "match" in tests:
        # by position: the counts of group k under the key k; the test compares
        # each group with a sample independent of it (the others for "total")
        others = cms.sum(axis=0) - cms if _is_total(reference) else ref
        with warnings.catch_warnings():  # one warning by label, below
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            result = match_test(
                counts={k: row for k, row in enumerate(cms)},
                metric=resolved,
                reference=others,
                correction=correction,
                family=settings["family"],
                alpha=alpha,
                ci=1.0 - alpha,
                n_draws=settings["n_draws"],
                random_state=child_seed(seed, "match"),
            )
        match = result.to_frame()
        position = match["group"].to_numpy(dtype=np.int64)
        match["group"] = groups[position]
        for m in resolved:
            rows = match[match["metric"] == m]
            at = position[(match["metric"] == m).to_numpy()]
            for cols, col_name in (
                (("p_lower_tail", "lower"), "match_lower"),
                (("p_upper_tail", "upper"), "match_upper"),
                (("p_value",), "match_p"),
                (("p_adjusted",), "match_p_adjusted"),
            ):
                values = np.full(len(frame), np.nan)
                col = next((c for c in cols if c in rows), None)
                if col is not None:  # the tails' names, before and after 0.3
                    values[at] = rows[col].to_numpy(dtype=float)
                frame[f"{m}_{col_name}"] = values
            for end in ("low", "high"):
                values = np.full(len(frame), np.nan)
                values[at] = rows[f"reference_range_{end}"].to_numpy(dtype=float)
                frame[f"{m}_interval_{end}"] = values
            reject = np.zeros(len(frame), dtype=bool)
            reject[at] = rows["reject"].to_numpy(dtype=bool)
            frame[f"{m}_match_reject"] = reject
        if decide:
            decide_match(
                frame, resolved, cms, others, settings, _family_sizes(match, settings)
            )

    separation = violated = None
    if "separation" in tests:
        # the test depends on the counts only: four rows per group, weighted
        codes = np.repeat(np.arange(groups.shape[0]), 4)
        with warnings.catch_warnings():  # one warning by label, below
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            res = separation_test(
                np.tile([1, 1, 0, 0], groups.shape[0]),
                np.tile([1, 0, 1, 0], groups.shape[0]),
                sensitive_features=codes,
                sample_weight=cms.ravel(),
                alpha=alpha,
                correction=correction,
                method="auto",  # exact test for small cells, score test otherwise
            )
        separation = res.to_frame()
        for col in ("group_a", "group_b"):
            separation[col] = groups[separation[col].to_numpy(dtype=np.int64)]
        violated = bool(res.violated)
        separation_columns(frame, separation)

    marginals, parts = _marginals(data, resolved, level, seed)
    return AuditReport(
        frame=frame,
        marginals=marginals,
        parts=parts,
        overall={
            m: float(compute_metric(m, cms.sum(axis=0), zero_division=np.nan))
            for m in resolved
        },
        match=match,
        separation=separation,
        separation_violated=violated,
        metrics=resolved,
        alpha=alpha,
        ci=level,
        correction=correction,
        smoothing=_describe(smoothing),
        reference=reference if isinstance(reference, str) else "given",
        title=title,
        family=settings["family"],
    )


def _family_sizes(match, settings):
    """Per metric, the number of MATCH tests in its correction family."""
    counts = match.groupby("metric")["p_value"].count()
    if settings["family"] == "all":
        return dict.fromkeys(counts.index, int(counts.sum()))
    return counts.to_dict()


def decide_match(frame, resolved, cms, others, settings, n_tests):
    """Per metric: ``<m>_detectable_gap`` and ``<m>_verdict`` of ``frame``.

    ``others`` are the samples the MATCH test compared each group with;
    ``n_tests`` maps each metric to the number of tests of its correction
    family.
    """
    alpha, correction = settings["alpha"], settings["correction"]
    n = cms.sum(axis=1)
    n_int = np.rint(n).astype(np.int64)
    for m in resolved:
        # one gap among the family's tests is rejected at alpha / n_tests by
        # holm, bonferroni and fdr_bh alike
        single = alpha / max(n_tests.get(m, 0), 1) if correction else alpha
        metric = get_metrics(m)[0]
        gap = np.full(len(frame), np.nan)
        if metric.family in ("binomial", "joint_ratio"):
            k = cms[:, list(metric.denominator)].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(n > 0, k / np.where(n > 0, n, 1), 0.0)
            gap = detectable_gaps(m, others, n_int, share, alpha=single)
        frame[f"{m}_detectable_gap"] = gap
        frame[f"{m}_verdict"] = verdicts(frame, m, gap)


def separation_columns(frame, separation):
    """``separation_p_tpr`` and ``separation_p_fpr``: per group, the smallest
    adjusted p-value of the comparisons involving it."""
    for m in ("tpr", "fpr"):
        rows = separation[separation["metric"] == m]
        best = []
        for g in frame.index:
            involved = (rows["group_a"] == g) | (rows["group_b"] == g)
            best.append(rows.loc[involved, "p_adjusted"].min())
        frame[f"separation_p_{m}"] = np.asarray(best, dtype=float)


def _warn_undefined(frame, resolved, where=""):
    """One warning naming every undefined (0/0) metric and its groups."""
    undefined = [
        f"{m} for {format_labels(frame.index[frame[f'{m}_undefined'].to_numpy()])}"
        for m in resolved
        if frame[f"{m}_undefined"].any()
    ]
    if undefined:
        warnings.warn(
            f"undefined (0/0) metrics{where}: {'; '.join(undefined)}. The report "
            f"marks them (<metric>_undefined), their tests are NaN, and their "
            f"smoothed values are defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
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
    smoothing : AdditiveSmoothing, CrossPriorSmoothing, None or "default"
        ``"default"`` is ``CrossPriorSmoothing(lam=10)``.
    tests : sequence of {"match", "separation"}, default=("match", "separation")
        Tests to run.
    alpha : float, default=0.05
        Significance level.
    ci : float or None, default=None
        Level of each group's confidence intervals; ``None`` uses ``1 - alpha``.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison correction (``"none"`` is ``None``).
    family : {"all", "metric"}, default="all"
        The MATCH tests' correction family: the whole audit, or each metric (see
        :func:`audit_predictions`).
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Each group's reference.
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
    n_draws : int, default=20_000
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
        ci=None,
        correction="holm",
        family="all",
        reference="rest",
        labels=None,
        matrix_metrics=None,
        prefit=False,
        n_draws=20_000,
        random_state=0,
    ):
        self.estimator = estimator
        self.metrics = metrics
        self.smoothing = smoothing
        self.tests = tests
        self.alpha = alpha
        self.ci = ci
        self.correction = correction
        self.family = family
        self.reference = reference
        self.labels = labels
        self.matrix_metrics = matrix_metrics
        self.prefit = prefit
        self.n_draws = n_draws
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
        """
        self._validate_params()
        if self.prefit:
            check_is_fitted(self.estimator)
            self.estimator_ = self.estimator
        else:
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        self._copy_fitted_attributes()
        return self

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
            Audit data.
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
        """
        est = self._fitted()
        return self.audit_predictions(
            y,
            est.predict(X),
            sensitive_features=sensitive_features,
            sample_weight=sample_weight,
            title=title or f"Fairness audit of {type(est).__name__}",
        )

    def audit_predictions(
        self, y_true, y_pred, *, sensitive_features, sample_weight=None, title=None
    ):
        """Audit given predictions with this audit's settings.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,)
            True and predicted labels.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
            Group labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Integer frequency weights.
        title : str, default=None
            Title of the report.

        Returns
        -------
        AuditReport or MulticlassAuditReport
        """
        self._validate_params()
        return audit_predictions(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            sample_weight=sample_weight,
            metrics=self.metrics,
            smoothing=self.smoothing,
            reference=self.reference,
            tests=self.tests,
            alpha=self.alpha,
            ci=self.ci,
            correction=self.correction,
            family=self.family,
            labels=self.labels,
            matrix_metrics=self.matrix_metrics,
            n_draws=self.n_draws,
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
