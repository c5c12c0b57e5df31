"""Warnings and errors raised by sklearn-smallfair."""

from sklearn.exceptions import UndefinedMetricWarning

__all__ = ["CheckpointWarning", "DyadicDataWarning", "UndefinedGroupMetricWarning"]


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


class DyadicDataWarning(UserWarning):
    """Warning about the data behind a dyadic (user-item) metric.

    Raised when entity means are taken from the evaluated ratings instead of
    training ratings, and when rows whose user or item has no training rating are
    dropped.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_smallfair.dyadic import eauc_score
    >>> from sklearn_smallfair.exceptions import DyadicDataWarning
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = eauc_score([1, 5, 3], [2, 4, 3], users=[0, 0, 1], items=[0, 1, 1])
    >>> issubclass(w[0].category, DyadicDataWarning)
    True
    """


class CheckpointWarning(UserWarning):
    """Warning about a checkpoint file of
    :func:`~sklearn_smallfair.model_selection.downsampling_experiment`.

    Raised when the file is empty or its header line is cut short (a run killed
    while creating it): nothing was recorded, so the file is started afresh.

    Examples
    --------
    >>> import tempfile, warnings
    >>> from pathlib import Path
    >>> from sklearn_smallfair.exceptions import CheckpointWarning
    >>> from sklearn_smallfair.model_selection import downsampling_experiment
    >>> path = Path(tempfile.mkdtemp()) / "run.ckpt"
    >>> path.write_bytes(b"")
    0
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = downsampling_experiment(
    ...         counts={"a": (6, 3, 4, 12), "b": (2, 1, 5, 20)}, metrics="tpr",
    ...         sizes=[5], estimators={"raw": None}, checkpoint=path)
    >>> issubclass(w[0].category, CheckpointWarning)
    True
    """
