"""Group-aware scorers for scikit-learn model selection (metadata routing)."""

import warnings
from functools import partial

import numpy as np

from .._confusion import CELLS, _grouped_counts
from .._params import (
    BOOLEAN,
    POS_LABEL,
    REFERENCE,
    ZERO_DIVISION,
    Number,
    StrOptions,
    validate_params,
)
from .._scoring import NAN_POLICY, GroupScorer
from .._validation import (
    check_smoothing,
    check_zero_division,
    format_label,
    format_labels,
)
from ..exceptions import UndefinedGroupMetricWarning
from ..smoothing import BaseSmoothing
from ._disparity import summarize
from ._disparity_intervals import disparity_intervals
from ._group import _GroupCounts
from ._registry import Metric, get_metric

__all__ = ["aggregate_group_metric", "make_group_scorer"]

#: Aggregates of a confidence bound (lower is better for a gap, higher for a ratio).
_BOUNDS = ("difference_upper", "ratio_lower")
_AGGREGATES = ("difference", "ratio", "worst", "max", "min", *_BOUNDS)
_AGGREGATE = [StrOptions(set(_AGGREGATES)), callable]
_RESPONSE_METHODS = {"predict", "predict_proba", "decision_function"}


def _check_aggregate(aggregate, metric, smoothing=None):
    if callable(aggregate):
        return aggregate
    if aggregate in _BOUNDS and smoothing is not None:
        raise ValueError(
            f"aggregate={aggregate!r} bounds the raw gaps to the reference "
            f"(disparity_intervals has no smoothed intervals); pass smoothing=None "
            f"or a point aggregate such as 'difference'."
        )
    if aggregate == "worst" and metric.greater_is_better is None:
        raise ValueError(
            f"aggregate='worst' needs a metric with a direction, but {metric.name!r} "
            f"is neither better high nor low; use 'difference', 'ratio', 'max' or "
            f"'min'."
        )
    return aggregate


def _bound(
    y_true,
    y_pred,
    sensitive_features,
    sample_weight,
    pos_label,
    *,
    metric,
    aggregate,
    reference,
    confidence_level,
):
    """Per group, the confidence bound of its gap (or ratio) to the reference.

    ``"difference_upper"``: the upper bound of ``|group - reference|`` (the range
    of ``|x|`` over Newcombe's interval of the signed difference), whose largest
    value over groups is the aggregate; ``"ratio_lower"``: the lower bound of
    ``min(r, 1 / r)`` for the ratio ``r = group / reference`` (Katz's interval),
    whose smallest value is the aggregate. NaN where a group's or a reference's
    value is undefined.
    """
    table = disparity_intervals(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        metrics=[metric.name],
        reference=reference,
        confidence_level=confidence_level,
        sample_weight=sample_weight,
        pos_label=pos_label,
        random_state=0,  # draws only for metrics without a closed form
    )
    if aggregate == "difference_upper":
        low = table["difference_low"].to_numpy(dtype=float)
        high = table["difference_high"].to_numpy(dtype=float)
        return np.maximum(np.abs(low), np.abs(high))
    low = table["ratio_low"].to_numpy(dtype=float)
    high = table["ratio_high"].to_numpy(dtype=float)
    with np.errstate(divide="ignore"):
        return np.minimum(low, 1.0 / high)


def _aggregate(values, aggregate, metric):
    """:func:`summarize` of the group values; the bound aggregates take the
    largest upper bound of a gap, or the smallest lower bound of a ratio."""
    if aggregate == "difference_upper":
        aggregate = "max"
    elif aggregate == "ratio_lower":
        aggregate = "min"
    value, _ = summarize(values, aggregate, greater_is_better=metric.greater_is_better)
    return value


def _empty_cells(counts):
    """``"TP, FN"``: the names of the cells of one matrix that are zero."""
    names = [CELLS[i] for i in np.flatnonzero(np.asarray(counts) == 0)]
    return ", ".join(names) if names else "none"


def _undefined_detail(metric, groups, counts, ref, undefined):
    """Which groups have an undefined value, and which of their cells are empty."""
    parts = []
    for i in np.flatnonzero(undefined)[:10]:
        total = float(counts[i].sum())
        part = (
            f"{format_label(groups[i])} (n={total:g}, empty cells: "
            f"{_empty_cells(counts[i])}"
        )
        if metric.denominator is not None:
            cells = " + ".join(CELLS[c] for c in metric.denominator)
            if counts[i][list(metric.denominator)].sum() == 0:
                part += f"; {cells} = 0"
        if ref is not None and metric.n_groups == 2:
            part += f"; its reference's empty cells: {_empty_cells(ref[i])}"
        parts.append(part + ")")
    more = len(np.flatnonzero(undefined)) - len(parts)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _apply_nan_policy(values, undefined, nan_policy, *, describe, aggregate, what):
    """The group values to aggregate under ``nan_policy`` (warns or raises).

    ``undefined`` marks the groups whose value is NaN; ``describe()`` names them
    and their empty cells. Returns the values to aggregate, or None when the
    score is NaN.
    """
    if not undefined.any():
        return values
    detail = describe()
    fix = (
        "Stratify the folds on the groups and the labels, merge small groups, "
        "or smooth the groups' matrices (smoothing=CrossPriorSmoothing(...))"
    )
    if nan_policy == "raise":
        raise ValueError(
            f"{what} is undefined (0/0) for group(s) {detail} (nan_policy="
            f"'raise'). {fix}, or pass nan_policy='propagate' to score NaN or "
            f"'omit' to aggregate the other groups."
        )
    if nan_policy == "omit":
        kept = values[~undefined]
        if kept.shape[0] >= 2 or callable(aggregate):
            warnings.warn(
                f"{what} is undefined (0/0) for group(s) {detail}; nan_policy="
                f"'omit' leaves them out of the {aggregate!r} aggregate, which "
                f"then says nothing about them. {fix}.",
                UndefinedGroupMetricWarning,
                stacklevel=5,  # the caller of aggregate_group_metric
            )
            return kept
        effect = (
            f"and fewer than two groups are left, so the {aggregate!r} score is NaN"
        )
    else:
        effect = f"so the {aggregate!r} score is NaN (nan_policy='propagate')"
    warnings.warn(
        f"{what} is undefined (0/0) for group(s) {detail}, {effect}; in model "
        f"selection the mean over the folds is NaN too. {fix}, pass "
        f"nan_policy='omit' to aggregate the other groups, or zero_division=0.0 "
        f"or 1.0 to substitute a value.",
        UndefinedGroupMetricWarning,
        stacklevel=5,  # the caller of aggregate_group_metric
    )
    return None


def _is_multiclass(labels, average):
    """Whether the scorer's targets are multiclass (``labels`` of more than two
    classes, or an ``average``)."""
    return average is not None or (labels is not None and len(labels) > 2)


class _MulticlassMetric:
    """The name and direction of a multiclass metric, for the aggregates."""

    def __init__(self, metric, average):
        from ._multiclass import _resolve

        whole, reg = _resolve(metric)
        if whole is None and reg.n_groups != 1:
            raise ValueError(
                f"{reg.name!r} compares two groups and has no multiclass form; use "
                f"a single-group metric."
            )
        if whole is None and average is None:
            raise ValueError(
                f"{reg.name!r} is a per-class metric of multiclass targets; a "
                f"group scorer needs one value per group: pass average='macro', "
                f"'weighted' or 'micro', or a whole-matrix metric ('accuracy', "
                f"'balanced_accuracy', 'mcc', 'kappa')."
            )
        self.whole = whole
        self.name = whole if whole is not None else f"{reg.name}_{average}"
        self.column = whole if whole is not None else reg.name
        self.greater_is_better = True if whole is not None else reg.greater_is_better
        self.n_groups = 1
        self.denominator = None


def _aggregate_multiclass(
    y_true,
    y_pred,
    sensitive_features,
    sample_weight,
    *,
    metric,
    aggregate,
    smoothing,
    reference,
    zero_division,
    pos_label,
    nan_policy,
    labels,
    average,
):
    """:func:`aggregate_group_metric` for multiclass targets: the groups' values
    from :func:`group_metrics` (smoothed on the ``K x K`` matrices when
    ``smoothing`` is given)."""
    from ._group import group_metrics

    refused = {
        "pos_label": pos_label is not None,
        f"aggregate={aggregate!r}": aggregate in _BOUNDS,
    }
    bad = [name for name, given in refused.items() if given]
    if bad:
        raise ValueError(
            f"{', '.join(bad)} do(es) not apply to multiclass targets (labels= "
            f"with more than two classes, or average=): the bounds come from "
            f"binary disparity intervals; use a point aggregate such as "
            f"'difference', or binarize the targets (y == class)."
        )
    m = _MulticlassMetric(metric, average)
    aggregate = _check_aggregate(aggregate, m)
    smoothing = check_smoothing(smoothing)
    zero_division = check_zero_division(zero_division)
    if zero_division == "warn":
        zero_division = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        table = group_metrics(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            labels=labels,
            metrics=[metric],
            # a whole-matrix metric gives one row per group with any average
            average=average if average is not None else "macro",
            smoothing=smoothing,
            reference=reference,
            zero_division=zero_division,
            sample_weight=sample_weight,
        )
    column = m.column + ("_smoothed" if smoothing is not None else "")
    values = table[column].to_numpy(dtype=float)
    groups, sizes = table.index.to_numpy(), table["n"].to_numpy(dtype=float)
    if len(groups) < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; an "
            f"aggregate over groups compares at least two."
        )
    undefined = np.isnan(values)

    def describe():
        shown = [
            f"{format_label(groups[i])} (n={sizes[i]:g})"
            for i in np.flatnonzero(undefined)[:10]
        ]
        more = int(undefined.sum()) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")

    kept = _apply_nan_policy(
        values,
        undefined,
        nan_policy,
        describe=describe,
        aggregate=getattr(aggregate, "__name__", "callable")
        if callable(aggregate)
        else aggregate,
        what=m.name,
    )
    if kept is None:
        return np.nan
    return _aggregate(kept, aggregate, m)


_ROUTING_HINT = (
    "Group scorers need the group labels. In model selection enable metadata "
    "routing with sklearn.set_config(enable_metadata_routing=True) and pass them "
    "as GridSearchCV(...).fit(X, y, sensitive_features=A) or cross_validate(..., "
    "params={'sensitive_features': A}). Outside model selection call "
    "aggregate_group_metric(y, estimator.predict(X), sensitive_features=A), or "
    "scorer(estimator, X, y, sensitive_features=A) with routing enabled."
)


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like", None],
        "metric": [str, Metric],
        "aggregate": _AGGREGATE,
        "smoothing": [None, BaseSmoothing],
        "reference": REFERENCE,
        "zero_division": ZERO_DIVISION,
        "sample_weight": ["array-like", None],
        "pos_label": POS_LABEL,
        "confidence_level": [Number(0, 1, closed="neither")],
        "nan_policy": NAN_POLICY,
        "labels": ["array-like", None],
        "average": [StrOptions({"macro", "weighted", "micro"}), None],
    }
)
def aggregate_group_metric(
    y_true,
    y_pred,
    *,
    sensitive_features=None,
    metric="tpr",
    aggregate="difference",
    smoothing=None,
    reference="rest",
    zero_division=np.nan,
    sample_weight=None,
    pos_label=None,
    confidence_level=0.95,
    nan_policy="propagate",
    labels=None,
    average=None,
):
    """One number summarising a metric across groups (the scorers' score function).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels (required; ``None`` raises an error explaining metadata routing).
    metric : str, default="tpr"
        A single-group or two-group metric of :func:`metric_names`.
    aggregate : {"difference", "ratio", "worst", "max", "min", \
            "difference_upper", "ratio_lower"} or callable, default="difference"
        ``"difference"``: max minus min over groups; ``"ratio"``: min over max;
        ``"worst"``: the group value furthest from the best (min for
        greater-is-better metrics, max otherwise); ``"max"``, ``"min"``; or a
        callable mapping the 1-D array of group values to a float.

        Confidence bounds of the gap of each group to its ``reference``, from
        :func:`disparity_intervals` at level ``confidence_level`` (Newcombe's
        interval of a difference and Katz's of a ratio for proportions such as
        ``tpr``; posterior draws with a fixed seed for the other metrics):
        ``"difference_upper"``, the largest over groups of the upper bound of
        ``|group - reference|`` (a model scores low only if every gap is small
        *with confidence*: a small group with a wide interval keeps the bound
        high); ``"ratio_lower"``, the
        smallest over groups of the lower bound of ``min(r, 1/r)``, ``r = group /
        reference``. Raw values only (``smoothing`` must be None); an undefined
        group or reference value makes the bound NaN whatever ``zero_division``.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        Score the smoothed matrices instead of the raw ones (with multiclass
        targets, the smoothed ``K x K`` matrices, as :func:`group_metrics`).
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference for Cross-Prior Smoothing and two-group metrics.
    zero_division : {np.nan, "warn", 0.0, 1.0}, default=np.nan
        Value of an undefined group metric before aggregating: ``np.nan`` (and
        ``"warn"``, the same here) leaves it undefined, for ``nan_policy`` to
        handle; ``0.0``/``1.0`` substitute that value.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    confidence_level : float, default=0.95
        Confidence level of the ``"difference_upper"`` and ``"ratio_lower"``
        aggregates, in (0, 1); unused by the others.
    nan_policy : {"propagate", "omit", "raise"}, default="propagate"
        What an undefined group value (a group with an empty denominator, such
        as no positives for ``tpr``, and no ``zero_division`` substitute) does to
        the aggregate. ``"propagate"``: the score is NaN. ``"omit"``: the
        aggregate is taken over the other groups (NaN if fewer than two are
        left; a callable ``aggregate`` receives the defined values only).
        ``"raise"``: a ``ValueError``. The first two issue an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning`
        naming the groups, their sizes and their empty cells, so a NaN score is
        never silent. The default keeps the undefined group visible: a score
        computed without the smallest groups, which ``"omit"`` gives, can look
        fair precisely because the group at risk was left out.
    labels : array-like of shape (n_classes,), default=None
        Multiclass targets: the class order. With more than two ``labels``, or
        with ``average``, each group's value is its multiclass metric (see
        :ref:`multiclass`): a one-vs-rest metric averaged over the classes
        (``average`` is then required) or a whole-matrix metric (``"accuracy"``,
        ``"balanced_accuracy"``, ``"mcc"`` as Gorodkin's R_K, ``"kappa"``).
        ``smoothing``, ``pos_label``, two-group metrics and the bound aggregates
        do not apply to them.
    average : {"macro", "weighted", "micro"} or None, default=None
        Multiclass targets: how a one-vs-rest metric is averaged over the
        classes, as in scikit-learn.

    Returns
    -------
    score : float
        The aggregate; NaN when an undefined group value reaches it (see
        ``nan_policy``).

    Warns
    -----
    UndefinedGroupMetricWarning
        When a group's value is undefined (see ``nan_policy``), or when the
        ``"ratio"`` aggregate is NaN because every group's value is 0 or some
        are negative.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import aggregate_group_metric
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 1, 0, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> aggregate_group_metric(y_true, y_pred, sensitive_features=groups,
    ...                        metric="tpr", aggregate="difference")
    0.5
    >>> round(aggregate_group_metric(y_true, y_pred, sensitive_features=groups,
    ...                              metric="tpr", aggregate="difference_upper"), 3)
    0.905
    """
    if sensitive_features is None:
        raise ValueError(_ROUTING_HINT)
    if _is_multiclass(labels, average):
        return _aggregate_multiclass(
            y_true,
            y_pred,
            sensitive_features,
            sample_weight,
            metric=metric,
            aggregate=aggregate,
            smoothing=smoothing,
            reference=reference,
            zero_division=zero_division,
            pos_label=pos_label,
            nan_policy=nan_policy,
            labels=labels,
            average=average,
        )
    m = get_metric(metric)
    aggregate = _check_aggregate(aggregate, m, smoothing)
    zero_division = check_zero_division(zero_division)
    if zero_division == "warn":  # the NaN warning below names the groups
        zero_division = np.nan
    smoothing = check_smoothing(smoothing)
    groups, counts, name = _grouped_counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    if len(groups) < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; an "
            f"aggregate over groups compares at least two (a single group is not "
            f"'perfectly fair')."
        )
    gc = _GroupCounts(groups, counts, reference, smoothing, name=name)
    values, _ = gc.values(
        m, smoothed=smoothing is not None, zero_division=zero_division
    )
    what = f"{m.name}{' (smoothed)' if smoothing is not None else ''}"
    if aggregate in _BOUNDS:
        values = _bound(
            y_true,
            y_pred,
            sensitive_features,
            sample_weight,
            pos_label,
            metric=m,
            aggregate=aggregate,
            reference=reference,
            confidence_level=confidence_level,
        )
        what = f"the {confidence_level:.0%} bound of the {m.name} gap to the reference"
    undefined = np.isnan(values)
    ref = gc.ref if m.n_groups == 2 or aggregate in _BOUNDS else None
    policy = partial(
        _apply_nan_policy,
        values,
        undefined,
        describe=lambda: _undefined_detail(m, groups, counts, ref, undefined),
        aggregate=getattr(aggregate, "__name__", "callable")
        if callable(aggregate)
        else aggregate,
        what=what,
    )
    if callable(aggregate) and nan_policy == "propagate":
        # the callable sees the NaN values (it may handle them itself)
        score = _aggregate(values, aggregate, m)
        if np.isnan(score):
            policy(nan_policy)
        return score
    kept = policy(nan_policy)
    if kept is None:
        return np.nan
    score = _aggregate(kept, aggregate, m)
    if np.isnan(score) and not np.isnan(kept).any():
        reason = (
            "the values take negative signs, and a ratio of values of opposite "
            "signs means nothing"
            if (np.asarray(kept) < 0).any()
            else "every group's value is 0, so their ratio is 0/0"
        )
        warnings.warn(
            f"The {aggregate!r} aggregate of {what} is NaN: {reason}. Use "
            f"aggregate='difference'.",
            UndefinedGroupMetricWarning,
            stacklevel=4,  # the caller of the decorated function
        )
    return score


@validate_params(
    {
        "metric": [str, Metric],
        "smoothing": [None, BaseSmoothing],
        "aggregate": _AGGREGATE,
        "reference": REFERENCE,
        "zero_division": ZERO_DIVISION,
        "greater_is_better": [*BOOLEAN, None],
        "response_method": [StrOptions(_RESPONSE_METHODS), list, tuple],
        "pos_label": POS_LABEL,
        "confidence_level": [Number(0, 1, closed="neither")],
        "nan_policy": NAN_POLICY,
        "labels": ["array-like", None],
        "average": [StrOptions({"macro", "weighted", "micro"}), None],
    }
)
def make_group_scorer(
    metric,
    *,
    smoothing=None,
    aggregate="difference",
    reference="rest",
    zero_division=np.nan,
    greater_is_better=None,
    response_method="predict",
    pos_label=None,
    confidence_level=0.95,
    nan_policy="propagate",
    labels=None,
    average=None,
):
    """Make a scikit-learn scorer from a group metric and an aggregate.

    The scorer is a :func:`sklearn.metrics.make_scorer` object whose score function,
    :func:`aggregate_group_metric`, takes ``sensitive_features`` (and
    ``sample_weight``) by keyword. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``) model selection routes
    ``sensitive_features`` to it: the scorer requests it by default. Library code
    never changes scikit-learn's configuration for you.

    Parameters
    ----------
    metric : str
        A metric name or alias of :func:`metric_names`.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        Score smoothed group matrices (references are computed on each test fold).
    aggregate : {"difference", "ratio", "worst", "max", "min", \
            "difference_upper", "ratio_lower"} or callable, default="difference"
        How group values become one score; see :func:`aggregate_group_metric`.
        ``"difference_upper"`` scores a model by the ``confidence_level`` upper
        confidence bound of its largest gap to the reference, so that model
        selection prefers a model whose gap is small with confidence, not one
        whose small groups happen to look alike.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference for Cross-Prior Smoothing and two-group metrics.
    zero_division : {np.nan, "warn", 0.0, 1.0}, default=np.nan
        Value of an undefined group metric; ``np.nan`` (and ``"warn"``, the
        same here) leaves it to ``nan_policy``.
    greater_is_better : bool or None, default=None
        ``None`` infers it: ``False`` for ``"difference"`` and
        ``"difference_upper"``, ``True`` for ``"ratio"`` and ``"ratio_lower"``,
        and the metric's own direction for ``"worst"``, ``"max"`` and
        ``"min"`` (an error for descriptive metrics and callables, which need it
        explicitly).
    response_method : str, default="predict"
        Estimator method giving the predictions; group metrics need class labels.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    confidence_level : float, default=0.95
        Confidence level of the ``"difference_upper"`` and ``"ratio_lower"``
        aggregates.
    nan_policy : {"propagate", "omit", "raise"}, default="propagate"
        What a group whose metric is undefined on a test fold (say, no positives
        for ``tpr``) does to the fold's score: ``"propagate"`` scores NaN (and
        scikit-learn's mean over the folds is NaN, so the candidate ranks last),
        ``"omit"`` aggregates the other groups, ``"raise"`` raises (in model
        selection the fold's score is then ``error_score``). Either of the first
        two warns, naming the fold's groups and their empty cells; see
        :func:`aggregate_group_metric`.
    labels : array-like of shape (n_classes,), default=None
        Multiclass targets: the class order; see :func:`aggregate_group_metric`.
        Pass every class, so that a fold missing a class is scored on the same
        classes.
    average : {"macro", "weighted", "micro"} or None, default=None
        Multiclass targets: the average of a one-vs-rest metric over the
        classes.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sensitive_features=..., sample_weight=None)``;
        passing ``sensitive_features`` to it needs metadata routing enabled (a
        scikit-learn rule for all scorers). Without routing, use
        :func:`aggregate_group_metric` on ``estimator.predict(X)``.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_smallfair.metrics import make_group_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> A = rng.choice(["a", "b"], size=200)
    >>> scorer = make_group_scorer("tpr", aggregate="difference")
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]},
    ...                           scoring=scorer, cv=3)
    ...     search = search.fit(X, y, sensitive_features=A)
    >>> sorted(search.cv_results_)[:2]
    ['mean_fit_time', 'mean_score_time']
    """
    multiclass = _is_multiclass(labels, average)
    m = _MulticlassMetric(metric, average) if multiclass else get_metric(metric)
    aggregate = _check_aggregate(aggregate, m, smoothing)
    zero_division = check_zero_division(zero_division)
    check_smoothing(smoothing)
    if greater_is_better is None:
        if aggregate in ("difference", "difference_upper"):
            greater_is_better = False
        elif aggregate in ("ratio", "ratio_lower"):
            greater_is_better = True
        elif callable(aggregate) or m.greater_is_better is None:
            raise ValueError(
                f"greater_is_better cannot be inferred for metric {m.name!r} with "
                f"aggregate={aggregate!r}; pass greater_is_better=True or False."
            )
        else:
            greater_is_better = m.greater_is_better
    kwargs = dict(
        metric=metric if multiclass else m.name,
        aggregate=aggregate,
        smoothing=smoothing,
        reference=reference,
        zero_division=zero_division,
        pos_label=pos_label,
        confidence_level=confidence_level,
        nan_policy=nan_policy,
    )
    if multiclass:
        kwargs.update(labels=labels, average=average)
    sign = 1 if greater_is_better else -1
    return GroupScorer(aggregate_group_metric, sign, kwargs, response_method)
