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

The most used names are also available here, e.g.
``from sklearn_smallfair import group_metrics, match_test``. ``import
sklearn_smallfair`` loads nothing else: each name and subpackage is imported on
first use.
"""

import importlib

__version__ = "0.1.0.dev0"

#: Public name -> module (relative to the package) that defines it.
_LAZY = {
    "CELLS": "._confusion",
    "check_group_counts": "._confusion",
    "from_sklearn_order": "._confusion",
    "enumerate_confusion_matrices": "._enumeration",
    "n_confusion_matrices": "._enumeration",
    "dirichlet_multinomial_logpmf": "._pmf",
    "multinomial_logpmf": "._pmf",
    "multivariate_hypergeometric_logpmf": "._pmf",
    "reference_counts": "._references",
    "compute_metric": ".metrics",
    "confusion_counts": ".metrics",
    "count_undefined": ".metrics",
    "group_metrics": ".metrics",
    "make_group_scorer": ".metrics",
    "metric_names": ".metrics",
    "AdditiveSmoothing": ".smoothing",
    "CrossPriorSmoothing": ".smoothing",
    "match_test": ".stats",
    "FairnessAudit": ".audit",
    "audit_predictions": ".audit",
}

_SUBPACKAGES = (
    "adaptive",
    "audit",
    "cli",
    "datasets",
    "dyadic",
    "exceptions",
    "metrics",
    "model_selection",
    "preprocessing",
    "smoothing",
    "stats",
)

__all__ = ["__version__", *sorted(_LAZY, key=str.lower)]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY, *_SUBPACKAGES})
