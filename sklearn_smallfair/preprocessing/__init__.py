"""Pre-processing for fairness: sample weights that make the label independent of
the group (Reweighing, FairReweighing for continuous labels) or balance the labels
within every group (FairBalance)."""

from ._fair_reweighing import fair_reweighing_weights
from ._fairbalance import fairbalance_weights
from ._reweighing import reweighing_weights

__all__ = ["fair_reweighing_weights", "fairbalance_weights", "reweighing_weights"]
