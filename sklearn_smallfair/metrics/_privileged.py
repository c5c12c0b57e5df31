"""AIF360's signed disparities between a privileged and an unprivileged side:
the equal opportunity and average odds differences."""

from numbers import Real

import numpy as np

from .._confusion import confusion_counts
from .._params import ZERO_DIVISION, validate_params
from .._validation import check_zero_division, format_labels
from ._disparities import _ROWS, _rates
from ._disparity import to_reference

__all__ = ["average_odds_difference", "signed_equal_opportunity_difference"]

_LABELS = ["array-like", str, Real, None]


def _as_labels(value, name):
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or np.ndim(value) == 0:
        return [value]
    return list(np.asarray(value, dtype=object).ravel())


def _mask(groups, labels, name):
    """Which groups are among ``labels``; unknown labels are an error."""
    mask = np.zeros(groups.shape[0], dtype=bool)
    for label in labels:
        hit = np.array(
            [
                isinstance(g, str) == isinstance(label, str) and g == label
                for g in groups.tolist()
            ],
            dtype=bool,
        )
        if not hit.any():
            raise ValueError(
                f"{name}={label!r} is not a group; the groups are "
                f"{format_labels(groups)}."
            )
        mask |= hit
    return mask


def _privileged_rates(
    y_true,
    y_pred,
    sensitive_features,
    privileged_group,
    unprivileged_group,
    sample_weight,
    pos_label,
    zero_division,
    what,
):
    """TPR and FPR of the pooled unprivileged and privileged groups."""
    zero_division = check_zero_division(zero_division)
    groups, counts = confusion_counts(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        sample_weight=sample_weight,
        pos_label=pos_label,
    )
    privileged = _mask(groups, _as_labels(privileged_group, ""), "privileged_group")
    if unprivileged_group is None:
        unprivileged = ~privileged
    else:
        unprivileged = _mask(
            groups, _as_labels(unprivileged_group, ""), "unprivileged_group"
        )
        if (privileged & unprivileged).any():
            raise ValueError(
                f"the group(s) {format_labels(groups[privileged & unprivileged])} "
                f"are both privileged_group and unprivileged_group; a group belongs "
                f"to one side."
            )
    if not unprivileged.any():
        raise ValueError(
            f"every group {format_labels(groups)} is privileged; an unprivileged "
            f"group is needed."
        )
    pooled = np.stack([counts[unprivileged].sum(0), counts[privileged].sum(0)])
    labels = np.array(["unprivileged", "privileged"], dtype=object)
    tpr = _rates("tpr", pooled, labels, zero_division, what)
    fpr = _rates("fpr", pooled, labels, zero_division, what)
    return tpr, fpr


_PRIVILEGED = {
    **_ROWS,
    "privileged_group": _LABELS[:-1],
    "unprivileged_group": _LABELS,
    "zero_division": ZERO_DIVISION,
}


@validate_params(_PRIVILEGED)
def signed_equal_opportunity_difference(
    y_true,
    y_pred,
    *,
    sensitive_features,
    privileged_group=1,
    unprivileged_group=None,
    sample_weight=None,
    pos_label=None,
    zero_division="warn",
):
    """AIF360's equal opportunity difference: ``TPR_unprivileged - TPR_privileged``.

    The privileged side is the rows of the group(s) ``privileged_group`` (by
    default the group labelled 1); the unprivileged side the rows of
    ``unprivileged_group`` (by default every other group), pooled. The value is
    signed: negative when the unprivileged side's true positive rate is the
    lower, 0 at equal opportunity. Studies that report it as a size take its
    absolute value. :func:`equal_opportunity_difference` is fairlearn's unsigned
    largest gap over all groups.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels (intersectional groups are labelled ``"a|b"``).
    privileged_group : label or array-like of labels, default=1
        The privileged group(s). The default follows the encoding of the
        fairness-testing data sets, a protected attribute that is 1 for the
        privileged group and 0 for the unprivileged one; name the group for any
        other labels.
    unprivileged_group : label, array-like of labels or None, default=None
        The unprivileged group(s); ``None`` takes every group not privileged.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined TPR (a side without positives): ``"warn"``
        returns NaN and warns, ``np.nan`` returns NaN silently, ``0.0`` or
        ``1.0`` substitute the rate.

    Returns
    -------
    difference : float
        In [-1, 1]; NaN when a side has no positives.

    See Also
    --------
    average_odds_difference : The mean of the TPR and FPR differences.
    equal_opportunity_difference : The unsigned largest TPR gap over all groups.

    Notes
    -----
    The sign follows AIF360 and the fairness-testing literature, unprivileged
    minus privileged. Code that reports group 1 minus group 0 for a binary
    attribute, as the comparative-separation study's does, gives
    ``-signed_equal_opportunity_difference(..., privileged_group=1)``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import signed_equal_opportunity_difference
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 0, 1, 1, 0, 0, 0]
    >>> sex = ["m", "m", "m", "m", "f", "f", "f", "f"]
    >>> signed_equal_opportunity_difference(y_true, y_pred, sensitive_features=sex,
    ...                                     privileged_group="m")
    -0.5
    """
    tpr, _ = _privileged_rates(
        y_true,
        y_pred,
        sensitive_features,
        privileged_group,
        unprivileged_group,
        sample_weight,
        pos_label,
        zero_division,
        "the equal opportunity difference",
    )
    return float(to_reference(tpr[0], tpr[1])[0])


@validate_params(_PRIVILEGED)
def average_odds_difference(
    y_true,
    y_pred,
    *,
    sensitive_features,
    privileged_group=1,
    unprivileged_group=None,
    sample_weight=None,
    pos_label=None,
    zero_division="warn",
):
    """Average odds difference (AOD): the mean of the TPR and FPR differences.

    ``AOD = ((TPR_u - TPR_p) + (FPR_u - FPR_p)) / 2`` between the unprivileged
    (``u``) and privileged (``p``) sides, defined as in
    :func:`signed_equal_opportunity_difference`. Signed; 0 when both rates are equal,
    but also when the two differences cancel (use
    :func:`equalized_odds_difference` for the larger gap).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels.
    privileged_group : label or array-like of labels, default=1
        The privileged group(s). The default follows the encoding of the
        fairness-testing data sets, a protected attribute that is 1 for the
        privileged group and 0 for the unprivileged one; name the group for any
        other labels.
    unprivileged_group : label, array-like of labels or None, default=None
        The unprivileged group(s); ``None`` takes every group not privileged.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        The value of an undefined TPR (a side without positives) or FPR (without
        negatives); see :func:`signed_equal_opportunity_difference`.

    Returns
    -------
    difference : float
        In [-1, 1]; NaN when a rate is undefined.

    Notes
    -----
    Signed unprivileged minus privileged, as
    :func:`signed_equal_opportunity_difference`; group 1 minus group 0 is
    ``-average_odds_difference(..., privileged_group=1)``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import average_odds_difference
    >>> y_true = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> y_pred = [1, 1, 0, 1, 1, 0, 0, 0]
    >>> sex = ["m", "m", "m", "m", "f", "f", "f", "f"]
    >>> average_odds_difference(y_true, y_pred, sensitive_features=sex,
    ...                         privileged_group="m")
    -0.5
    """
    tpr, fpr = _privileged_rates(
        y_true,
        y_pred,
        sensitive_features,
        privileged_group,
        unprivileged_group,
        sample_weight,
        pos_label,
        zero_division,
        "the average odds difference",
    )
    differences = [to_reference(rate[0], rate[1])[0] for rate in (tpr, fpr)]
    return float(np.mean(differences))
