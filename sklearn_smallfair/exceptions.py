"""Warnings and errors raised by sklearn-smallfair."""

from sklearn.exceptions import UndefinedMetricWarning

__all__ = ["UndefinedGroupMetricWarning"]


class UndefinedGroupMetricWarning(UndefinedMetricWarning):
    """Warning that a metric is undefined (0/0) for some groups or matrices.

    Subclass of :class:`sklearn.exceptions.UndefinedMetricWarning`, so filters
    written for scikit-learn's warning also catch it.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
    >>> from sklearn_smallfair.metrics import compute_metric
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = compute_metric("tpr", [0, 0, 1, 1], zero_division="warn")
    >>> issubclass(w[0].category, UndefinedGroupMetricWarning)
    True
    """
