"""Disparities of a metric over groups, computed in one place.

:func:`summarize` turns the per-group values of one metric into one number (the
largest difference, the smallest ratio, the extremes, the worst value), between
the groups or to the overall value; :func:`to_reference` gives each group's
difference and ratio to its reference. The frame's ``difference``/``ratio``, the
functions named like fairlearn's, :func:`aggregate_group_metric`, the group
scorers and :func:`disparity_intervals` all call them.
"""

import numpy as np

#: ``method`` of a difference or ratio, in fairlearn's vocabulary.
METHODS = ("between_groups", "to_overall")
#: Aggregates of :func:`summarize`.
AGGREGATES = ("difference", "ratio", "max", "min", "worst")


def summarize(
    values,
    aggregate,
    *,
    method="between_groups",
    overall=np.nan,
    greater_is_better=None,
):
    """One number from the per-group values of a metric, and why it is NaN.

    Parameters
    ----------
    values : array-like of shape (n_groups,)
        The groups' values; NaN where undefined.
    aggregate : {"difference", "ratio", "max", "min", "worst"} or callable
        ``"difference"``: the largest gap, ``max - min`` between groups or the
        largest ``|group - overall|``; ``"ratio"``: the smallest ratio,
        ``min / max`` between groups or the smallest ``min(group, overall) /
        max(group, overall)``; ``"max"``, ``"min"``; ``"worst"``: the minimum of
        a greater-is-better metric, the maximum otherwise; a callable maps the
        values to a float.
    method : {"between_groups", "to_overall"}, default="between_groups"
        What a difference or ratio compares each group with.
    overall : float, default=nan
        The metric on all rows together, for ``method="to_overall"``.
    greater_is_better : bool or None, default=None
        The metric's direction, for ``"worst"``.

    Returns
    -------
    value : float
        NaN when a value compared is undefined or the ratio is undefined.
    reason : str or None
        Why ``value`` is NaN: ``"undefined"`` (a group's or the overall value is
        NaN), ``"zero"`` (a ratio 0/0), ``"negative"`` (a ratio of values that
        take negative values); ``None`` otherwise.

    Examples
    --------
    >>> from sklearn_smallfair.metrics._disparity import summarize
    >>> summarize([0.25, 0.75, 0.5], "difference")
    (0.5, None)
    >>> summarize([0.25, 0.75], "ratio", method="to_overall", overall=0.5)
    (0.5, None)
    >>> summarize([0.0, 0.0], "ratio")
    (nan, 'zero')
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    if callable(aggregate):
        return float(aggregate(values)), None
    to_overall = method == "to_overall" and aggregate in ("difference", "ratio")
    if values.size == 0 or np.isnan(values).any() or (to_overall and np.isnan(overall)):
        return np.nan, "undefined"
    if aggregate == "max":
        return float(values.max()), None
    if aggregate == "min":
        return float(values.min()), None
    if aggregate == "worst":
        return float(values.min() if greater_is_better else values.max()), None
    if aggregate == "difference":
        if to_overall:
            return float(np.abs(values - overall).max()), None
        return float(values.max() - values.min()), None
    # ratio
    if (values < 0).any() or (to_overall and overall < 0):
        return np.nan, "negative"
    if to_overall:
        low, high = np.minimum(values, overall), np.maximum(values, overall)
    else:
        low, high = values.min(), values.max()
    if np.any(high == 0):
        return np.nan, "zero"
    return float(np.min(low / high)), None


def to_reference(values, reference_values):
    """Each group's ``difference`` (``group - reference``) and ``ratio``
    (``group / reference``, NaN where the reference value is not positive).

    Examples
    --------
    >>> from sklearn_smallfair.metrics._disparity import to_reference
    >>> to_reference([0.5, 0.75], [0.25, 0.0])
    (array([0.25, 0.75]), array([ 2., nan]))
    """
    values = np.asarray(values, dtype=np.float64)
    reference_values = np.asarray(reference_values, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(reference_values > 0, values / reference_values, np.nan)
    return values - reference_values, ratio
