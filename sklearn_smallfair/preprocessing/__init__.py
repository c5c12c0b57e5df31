"""Pre-processing for fairness: sample weights that make the label independent of
the group (Reweighing)."""

from ._reweighing import reweighing_weights

__all__ = ["reweighing_weights"]
