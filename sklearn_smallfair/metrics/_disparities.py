"""Named one-call disparities with fairlearn's names and arguments: demographic
parity, equalized odds and equal opportunity; NaN where a group's rate is
undefined."""

import warnings

import numpy as np

from .._confusion import confusion_counts
from .._params import POS_LABEL, ZERO_DIVISION, StrOptions, validate_params
from .._validation import check_zero_division, format_labels
from ..exceptions import UndefinedGroupMetricWarning
from ._disparity import METHODS, summarize
from ._registry import get_metric
from ._warn import describe_groups, user_stacklevel

__all__ = [
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
]

_ROWS = {
    "y_true": ["array-like"],
    "y_pred": ["array-like"],
    "sensitive_features": ["array-like"],
    "sample_weight": ["array-like", None],
    "pos_label": POS_LABEL,
}
_METHOD = [StrOptions(set(METHODS))]
_AGG = [StrOptions({"worst_case", "mean"})]


def _counts(y_true, y_pred, sensitive_features, sample_weight, pos_label):
    groups, counts = confusion_counts(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        sample_weight=sample_weight,
        pos_label=pos_label,
    )
    if groups.shape[0] < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; a "
            f"disparity compares at least two groups."
        )
    return groups, counts


def _rates(name, counts, labels, zero_division, what):
    """A registry rate of every matrix of ``counts`` with the undefined-value policy.

    ``"warn"`` keeps NaN and warns, naming the groups with their sizes.
    """
    values = np.asarray(get_metric(name).func(counts), dtype=np.float64)
    undefined = ~np.isfinite(values)
    values = np.where(undefined, np.nan, values)
    if not undefined.any():
        return values
    if zero_division == "warn":
        detail = describe_groups(labels, counts, undefined)
        warnings.warn(
            f"{name} is undefined (0/0) for {detail}, so {what} is undefined; "
            f"returned as NaN. Pass zero_division=np.nan to silence this warning, "
            f"or 0.0 or 1.0 to substitute that rate (0.0 reproduces fairlearn).",
            UndefinedGroupMetricWarning,
            stacklevel=user_stacklevel(),
        )
    elif not np.isnan(zero_division):
        values = np.where(undefined, zero_division, values)
    return values


def _disparity(values, overall, aggregate, method, what):
    """:func:`summarize` of the group rates; a ratio 0/0 warns, naming ``what``."""
    value, reason = summarize(values, aggregate, method=method, overall=overall)
    if reason == "zero":
        warnings.warn(
            f"the {what} ratio is 0/0 (the compared values are 0); returned as NaN.",
            UndefinedGroupMetricWarning,
            stacklevel=user_stacklevel(),
        )
    return value


def _two_rates(counts, groups, zero_division, what):
    total = counts.sum(axis=0)
    labels = np.append(groups.astype(object), "overall")
    stacked = np.vstack([counts, total])
    tpr = _rates("tpr", stacked, labels, zero_division, what)
    fpr = _rates("fpr", stacked, labels, zero_division, what)
    return tpr, fpr


def _combine(values, agg, worst):
    """fairlearn's ``agg`` of the TPR and FPR disparities: the ``worst`` one (the
    larger difference, the smaller ratio) or their mean; NaN if one is NaN."""
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        return np.nan
    return float(values.mean() if agg == "mean" else worst(values))


@validate_params({**_ROWS, "method": _METHOD})
def demographic_parity_difference(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    pos_label=None,
):
    """The largest gap in selection rate (``ppr``) between groups.

    The selection rate ``(TP + FP) / n`` is defined for every non-empty group, so
    this disparity is never undefined. fairlearn's quantity, with its arguments.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels (they only check the labels: the selection rate does
        not use them).
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; several columns define intersectional groups. At least two
        groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        ``"between_groups"``: largest minus smallest group rate;
        ``"to_overall"``: largest ``|group rate - overall rate|``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).

    Returns
    -------
    difference : float
        In [0, 1]; 0 is parity.

    See Also
    --------
    demographic_parity_ratio : The smallest ratio of selection rates.
    GroupMetricFrame : Any metric per group, with ``difference`` and ``ratio``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import demographic_parity_difference
    >>> y_true = [1, 0, 1, 0, 1, 0, 1, 0]
    >>> y_pred = [1, 1, 1, 0, 0, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> demographic_parity_difference(y_true, y_pred, sensitive_features=groups)
    0.5
    """
    _, counts = _counts(y_true, y_pred, sensitive_features, sample_weight, pos_label)
    rates = _rates("ppr", np.vstack([counts, counts.sum(axis=0)]), None, np.nan, "")
    return _disparity(rates[:-1], rates[-1], "difference", method, "selection-rate")


@validate_params({**_ROWS, "method": _METHOD})
def demographic_parity_ratio(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    pos_label=None,
):
    """The smallest ratio of selection rates (``ppr``) between groups.

    fairlearn's quantity, with its arguments.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        ``"between_groups"``: smallest over largest group rate; ``"to_overall"``:
        smallest ``min(group, overall) / max(group, overall)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).

    Returns
    -------
    ratio : float
        In [0, 1]; 1 is parity. NaN, with an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning`, when
        the rates compared are 0 (0/0).

    Examples
    --------
    >>> from sklearn_smallfair.metrics import demographic_parity_ratio
    >>> y_true = [1, 0, 1, 0, 1, 0, 1, 0]
    >>> y_pred = [1, 1, 1, 0, 0, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> demographic_parity_ratio(y_true, y_pred, sensitive_features=groups)
    0.3333333333333333
    """
    _, counts = _counts(y_true, y_pred, sensitive_features, sample_weight, pos_label)
    rates = _rates("ppr", np.vstack([counts, counts.sum(axis=0)]), None, np.nan, "")
    return _disparity(rates[:-1], rates[-1], "ratio", method, "selection-rate")


@validate_params(
    {**_ROWS, "method": _METHOD, "agg": _AGG, "zero_division": ZERO_DIVISION}
)
def equalized_odds_difference(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    agg="worst_case",
    pos_label=None,
    zero_division="warn",
):
    """The larger of the true- and false-positive-rate differences between groups.

    ``agg="worst_case"``: ``max(TPR difference, FPR difference)``;
    ``agg="mean"``: their mean. Each difference is the largest minus the
    smallest group rate (``"between_groups"``) or the largest ``|group rate -
    overall rate|`` (``"to_overall"``). fairlearn's quantity, with its arguments.

    A group without positives has no TPR (0/0) and a group without negatives no
    FPR; the difference is then NaN with a warning naming the groups, where
    fairlearn counts the missing rate as 0 and returns a number that can be as
    large as 1 for a perfect classifier (``zero_division=0.0`` reproduces it).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        What each group's rates are compared with.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    agg : {"worst_case", "mean"}, default="worst_case"
        How the two differences are combined.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined group rate. ``"warn"`` returns NaN and warns;
        ``np.nan`` returns NaN silently; ``0.0`` or ``1.0`` substitute the rate.
        fairlearn counts an undefined rate as 0: ``0.0`` reproduces it.

    Returns
    -------
    difference : float
        In [0, 1]; 0 is equalized odds. NaN when a rate is undefined.

    See Also
    --------
    equalized_odds_ratio : The smaller of the TPR and FPR ratios.
    disparity_intervals : The equalized-odds difference to a reference, with an
        interval (metric ``"equalized_odds"``).

    Examples
    --------
    >>> from sklearn_smallfair.metrics import equalized_odds_difference
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 0, 1, 1, 0, 0, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> equalized_odds_difference(y_true, y_pred, sensitive_features=groups)
    0.5

    A group without positives has no TPR:

    >>> import numpy as np
    >>> y_true = [1, 1, 0, 0, 0, 0, 0, 0]
    >>> equalized_odds_difference(y_true, y_pred, sensitive_features=groups,
    ...                           zero_division=np.nan)
    nan
    >>> equalized_odds_difference(y_true, y_pred, sensitive_features=groups,
    ...                           zero_division=0.0)
    1.0
    """
    zero_division = check_zero_division(zero_division)
    groups, counts = _counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    tpr, fpr = _two_rates(
        counts, groups, zero_division, "the equalized-odds difference"
    )
    differences = [
        _disparity(r[:-1], r[-1], "difference", method, name)
        for r, name in ((tpr, "TPR"), (fpr, "FPR"))
    ]
    return _combine(differences, agg, np.max)


@validate_params(
    {**_ROWS, "method": _METHOD, "agg": _AGG, "zero_division": ZERO_DIVISION}
)
def equalized_odds_ratio(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    agg="worst_case",
    pos_label=None,
    zero_division="warn",
):
    """The smaller of the true- and false-positive-rate ratios between groups.

    ``agg="worst_case"``: ``min(TPR ratio, FPR ratio)``; ``agg="mean"``: their
    mean. Each ratio is the smallest over the largest group rate
    (``"between_groups"``) or the smallest ``min(group, overall) / max(group,
    overall)`` (``"to_overall"``). fairlearn's quantity, with its arguments,
    except where a ratio is 0/0 (a rate 0 in every group compared): it is then
    NaN with a warning, where fairlearn's ``"worst_case"`` skips it.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        What each group's rates are compared with.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    agg : {"worst_case", "mean"}, default="worst_case"
        How the two ratios are combined.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined group rate. ``"warn"`` returns NaN and warns;
        ``np.nan`` returns NaN silently; ``0.0`` or ``1.0`` substitute the rate.
        fairlearn counts an undefined rate as 0: ``0.0`` reproduces it.

    Returns
    -------
    ratio : float
        In [0, 1]; 1 is equalized odds. NaN when a rate is undefined or a ratio
        is 0/0 (a rate 0 in every group compared, e.g. no false positives at all).

    Examples
    --------
    >>> from sklearn_smallfair.metrics import equalized_odds_ratio
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 1, 0, 1, 0, 1, 1]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> equalized_odds_ratio(y_true, y_pred, sensitive_features=groups)
    0.5
    """
    zero_division = check_zero_division(zero_division)
    groups, counts = _counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    tpr, fpr = _two_rates(counts, groups, zero_division, "the equalized-odds ratio")
    ratios = [
        _disparity(r[:-1], r[-1], "ratio", method, name)
        for r, name in ((tpr, "TPR"), (fpr, "FPR"))
    ]
    return _combine(ratios, agg, np.min)


def _tpr_disparity(
    y_true,
    y_pred,
    sensitive_features,
    method,
    sample_weight,
    pos_label,
    zero_division,
    aggregate,
):
    zero_division = check_zero_division(zero_division)
    groups, counts = _counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    what = f"the equal-opportunity {aggregate}"
    labels = np.append(groups.astype(object), "overall")
    tpr = _rates(
        "tpr", np.vstack([counts, counts.sum(axis=0)]), labels, zero_division, what
    )
    return _disparity(tpr[:-1], tpr[-1], aggregate, method, "TPR")


@validate_params({**_ROWS, "method": _METHOD, "zero_division": ZERO_DIVISION})
def equal_opportunity_difference(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    pos_label=None,
    zero_division="warn",
):
    """The largest gap in true positive rate between groups.

    Largest minus smallest group TPR (``"between_groups"``) or the largest
    ``|group TPR - overall TPR|`` (``"to_overall"``): fairlearn's quantity,
    with its arguments. Unsigned; for AIF360's signed ``TPR_unprivileged -
    TPR_privileged`` see :func:`signed_equal_opportunity_difference`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        What each group's TPR is compared with.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined group rate. ``"warn"`` returns NaN and warns;
        ``np.nan`` returns NaN silently; ``0.0`` or ``1.0`` substitute the rate.
        fairlearn counts an undefined rate as 0: ``0.0`` reproduces it.

    Returns
    -------
    difference : float
        In [0, 1]; 0 is equal opportunity. NaN when a group has no positives
        (unless ``zero_division`` substitutes its TPR).

    See Also
    --------
    equal_opportunity_ratio : The smallest ratio of true positive rates.
    signed_equal_opportunity_difference : The signed difference between a
        privileged and an unprivileged side.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import equal_opportunity_difference
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 0, 1, 1, 0, 0, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> equal_opportunity_difference(y_true, y_pred, sensitive_features=groups)
    0.5
    """
    return _tpr_disparity(
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        pos_label,
        zero_division,
        "difference",
    )


@validate_params({**_ROWS, "method": _METHOD, "zero_division": ZERO_DIVISION})
def equal_opportunity_ratio(
    y_true,
    y_pred,
    *,
    sensitive_features,
    method="between_groups",
    sample_weight=None,
    pos_label=None,
    zero_division="warn",
):
    """The smallest ratio of true positive rates between groups.

    Smallest over largest group TPR (``"between_groups"``) or the smallest
    ``min(group, overall) / max(group, overall)`` (``"to_overall"``):
    fairlearn's quantity, with its arguments.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups.
    method : {"between_groups", "to_overall"}, default="between_groups"
        What each group's TPR is compared with.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined group rate. ``"warn"`` returns NaN and warns;
        ``np.nan`` returns NaN silently; ``0.0`` or ``1.0`` substitute the rate.
        fairlearn counts an undefined rate as 0: ``0.0`` reproduces it.

    Returns
    -------
    ratio : float
        In [0, 1]; 1 is equal opportunity. NaN when a group has no positives or
        the ratio is 0/0 (no true positive at all).

    Examples
    --------
    >>> from sklearn_smallfair.metrics import equal_opportunity_ratio
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 0, 1, 1, 0, 0, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> equal_opportunity_ratio(y_true, y_pred, sensitive_features=groups)
    0.5
    """
    return _tpr_disparity(
        y_true,
        y_pred,
        sensitive_features,
        method,
        sample_weight,
        pos_label,
        zero_division,
        "ratio",
    )
