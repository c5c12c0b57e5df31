"""Model selection for small groups: downsampling splitters and experiments."""

from ._downsampling import downsampling_experiment
from ._split import GroupDownsamplingCV

__all__ = ["GroupDownsamplingCV", "downsampling_experiment"]
