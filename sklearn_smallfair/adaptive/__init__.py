"""Dataset-adaptive normalized metric: one score in [0, 1] that accounts for the
number of features per sample, the signal-to-noise ratio and class imbalance."""

from ._normalized import (
    AdaptiveNormalizedReport,
    adaptive_normalized_report,
    adaptive_normalized_score,
)
from ._scorer import make_adaptive_scorer

__all__ = [
    "AdaptiveNormalizedReport",
    "adaptive_normalized_report",
    "adaptive_normalized_score",
    "make_adaptive_scorer",
]
