"""Per-group metrics, named disparities, undefined-value counts and group scorers."""

from .._confusion import ConfusionCounts, confusion_counts
from .._multiclass_counts import (
    MulticlassCounts,
    multiclass_confusion_counts,
    one_vs_rest,
)
from ..exceptions import UndefinedGroupMetricWarning
from ._disparities import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equal_opportunity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
)
from ._disparity_intervals import disparity_intervals
from ._frame import GroupMetricFrame
from ._group import group_metrics
from ._isep import isep_score
from ._multiclass import multiclass_metric
from ._privileged import average_odds_difference, signed_equal_opportunity_difference
from ._registry import Metric, compute_metric, get_metric, get_metrics, metric_names
from ._scorer import aggregate_group_metric, make_group_scorer
from ._undefined import count_undefined

__all__ = [
    "ConfusionCounts",
    "GroupMetricFrame",
    "Metric",
    "MulticlassCounts",
    "UndefinedGroupMetricWarning",
    "aggregate_group_metric",
    "average_odds_difference",
    "compute_metric",
    "confusion_counts",
    "count_undefined",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "disparity_intervals",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "get_metric",
    "get_metrics",
    "group_metrics",
    "isep_score",
    "make_group_scorer",
    "metric_names",
    "multiclass_confusion_counts",
    "multiclass_metric",
    "one_vs_rest",
    "signed_equal_opportunity_difference",
]
