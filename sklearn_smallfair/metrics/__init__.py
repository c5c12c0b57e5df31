"""Per-group confusion-matrix metrics, undefined-value counts and group scorers."""

from .._confusion import ConfusionCounts, confusion_counts
from ..exceptions import UndefinedGroupMetricWarning
from ._group import group_metrics
from ._intervals import disparity_intervals
from ._isep import isep_score
from ._multiclass import (
    MulticlassCounts,
    multiclass_confusion_counts,
    multiclass_group_metrics,
    multiclass_metric,
    one_vs_rest,
)
from ._registry import Metric, compute_metric, get_metric, get_metrics, metric_names
from ._scorer import aggregate_group_metric, make_group_scorer
from ._undefined import count_undefined

__all__ = [
    "ConfusionCounts",
    "Metric",
    "MulticlassCounts",
    "UndefinedGroupMetricWarning",
    "aggregate_group_metric",
    "compute_metric",
    "confusion_counts",
    "count_undefined",
    "disparity_intervals",
    "get_metric",
    "get_metrics",
    "group_metrics",
    "isep_score",
    "make_group_scorer",
    "metric_names",
    "multiclass_confusion_counts",
    "multiclass_group_metrics",
    "multiclass_metric",
    "one_vs_rest",
]
