"""sklearn-smallfair: fair evaluation of models when some groups are small.

Subpackages
-----------
metrics
    Per-group confusion-matrix metrics, undefined-value counts, group scorers.
smoothing
    Additive and Cross-Prior Smoothing of confusion matrices.
stats
    The MATCH test (is a group's score consistent with the reference at its
    size?), separation and comparative separation tests with power analysis,
    and multiple-comparison adjustments.
model_selection
    Group downsampling splitter and the downsampling experiments.
preprocessing
    Reweighing sample weights that make the label independent of the group.
dyadic
    Eccentricity bias of dyadic (user-item) regression: EAUC, D_KS, dyadic
    estimators and corrections.
adaptive
    Dataset-adaptive normalized score.
audit
    FairnessAudit and audit_predictions: per-group metrics, MATCH and separation
    tests, findings, plots and a self-contained HTML report.
datasets
    Embedded published confusion matrices, synthetic generators and loaders.
exceptions
    Warnings such as ``UndefinedGroupMetricWarning``.
"""

from ._confusion import (
    CELLS,
    check_group_counts,
    dirichlet_multinomial_logpmf,
    enumerate_confusion_matrices,
    from_sklearn_order,
    multinomial_logpmf,
    multivariate_hypergeometric_logpmf,
    n_confusion_matrices,
    reference_counts,
)
from .metrics import (
    compute_metric,
    confusion_counts,
    count_undefined,
    group_metrics,
    make_group_scorer,
    metric_names,
)
from .smoothing import AdditiveSmoothing, CrossPriorSmoothing
from .stats import match_test

__version__ = "0.1.0.dev0"

__all__ = [
    "CELLS",
    "AdditiveSmoothing",
    "CrossPriorSmoothing",
    "__version__",
    "check_group_counts",
    "compute_metric",
    "confusion_counts",
    "count_undefined",
    "dirichlet_multinomial_logpmf",
    "enumerate_confusion_matrices",
    "from_sklearn_order",
    "group_metrics",
    "make_group_scorer",
    "match_test",
    "metric_names",
    "multinomial_logpmf",
    "multivariate_hypergeometric_logpmf",
    "n_confusion_matrices",
    "reference_counts",
]
