"""Warnings and errors raised by sklearn-smallfair."""

from sklearn.exceptions import UndefinedMetricWarning

__all__ = [
    "CheckpointWarning",
    "DyadicDataWarning",
    "MetadataRoutingError",
    "MetadataRoutingWarning",
    "ReferenceWarning",
    "SensitiveFeaturesWarning",
    "UndefinedGroupMetricWarning",
]


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


class ReferenceWarning(UserWarning):
    """Warning that a reference matrix is a poor prior for Cross-Prior Smoothing.

    Cross-Prior Smoothing shrinks a group toward its reference's proportions, so
    the reference must be known much better than the group. Raised, naming the
    groups, when a reference has fewer people than ``min_reference`` (100 by
    default: its proportions are then about as noisy as a small group's), or has
    an empty cell, which gets no prior mass at all (a group's count in that cell
    is only shrunk toward 0, and a joint ratio of that cell is pulled toward 0 or
    1 with no uncertainty). The fix is a larger reference (``reference="rest"``
    or ``"total"`` rather than one small group), a smaller ``lam``, or, for an
    empty cell, a pseudo-count added to the reference (``reference + 0.5``).

    Examples
    --------
    >>> import warnings
    >>> from sklearn_smallfair.exceptions import ReferenceWarning
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = CrossPriorSmoothing(lam=10).transform([3, 0, 1, 0], [4, 1, 2, 3])
    >>> issubclass(w[0].category, ReferenceWarning)
    True
    """


class MetadataRoutingError(ValueError):
    """A group scorer did not receive the group labels (``sensitive_features``).

    scikit-learn passes metadata such as ``sensitive_features`` to a scorer only
    when metadata routing is enabled. Raised by the scorers of
    :func:`~sklearn_smallfair.metrics.make_group_scorer` and
    :func:`~sklearn_smallfair.stats.make_comparative_separation_scorer` when
    routing is off, or when it is on but the labels were not passed (or the
    scorer's request for them was turned off); the message says how to enable
    routing (``sklearn.set_config(enable_metadata_routing=True)``) and how to pass
    the labels. A subclass of ``ValueError``.

    Model selection catches a scorer's errors and records a NaN score (its
    default ``error_score=np.nan``); the scorers therefore issue the same message
    as a :class:`MetadataRoutingWarning` first. Pass ``error_score="raise"`` to
    the search to stop at the error instead.

    Examples
    --------
    >>> import warnings
    >>> import sklearn
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn_smallfair.metrics import make_group_scorer
    >>> X, y = [[0], [1], [2], [3]], [0, 1, 0, 1]
    >>> model = DummyClassifier().fit(X, y)
    >>> scorer = make_group_scorer("tpr")
    >>> with sklearn.config_context(enable_metadata_routing=False):
    ...     with warnings.catch_warnings():
    ...         warnings.simplefilter("ignore")
    ...         try:
    ...             scorer(model, X, y)
    ...         except ValueError as error:
    ...             print(type(error).__name__,
    ...                   "enable_metadata_routing=True" in str(error))
    MetadataRoutingError True
    """


class MetadataRoutingWarning(UserWarning):
    """Warning that a group scorer did not receive the group labels.

    Issued, with the message of the :class:`MetadataRoutingError` raised right
    after it, so that the message stays readable when model selection turns the
    error into a NaN score.

    Examples
    --------
    >>> import warnings
    >>> import sklearn
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_smallfair.metrics import make_group_scorer
    >>> X, y = [[i] for i in range(8)], [0, 1] * 4
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     with sklearn.config_context(enable_metadata_routing=True):
    ...         res = cross_validate(DummyClassifier(), X, y, cv=2,
    ...                              scoring=make_group_scorer("tpr"))
    >>> "MetadataRoutingWarning" in {x.category.__name__ for x in w}
    True
    >>> res["test_score"]  # no labels passed: NaN scores
    array([nan, nan])
    """


class SensitiveFeaturesWarning(UserWarning):
    """Warning that the group labels (``sensitive_features``) look mistaken.

    Raised, naming the column, when a column of group labels holds numbers with
    more than 20 distinct values (an age in years, a score): each value then
    makes its own tiny group. The fix is to bin the column first (``pd.cut``);
    numbers that are group codes are passed as a categorical or as text, which
    never warns. Also raised when a categorical column has levels that no row
    holds: those groups have no one and are not in the results.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_smallfair.exceptions import SensitiveFeaturesWarning
    >>> from sklearn_smallfair.metrics import group_metrics
    >>> age = np.arange(200) % 60 + 18
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = group_metrics(np.arange(200) % 2, np.ones(200, int),
    ...                       sensitive_features=age, metrics=["tpr"])
    >>> [x.category is SensitiveFeaturesWarning for x in w][:1]
    [True]
    """
