"""Model selection for small groups: downsampling splitters and experiments."""

from ._downsampling import downsampling_experiment
from ._multiclass_downsampling import multiclass_downsampling_experiment
from ._plot import DownsamplingDisplay
from ._split import GroupDownsamplingCV

__all__ = [
    "DownsamplingDisplay",
    "GroupDownsamplingCV",
    "downsampling_experiment",
    "multiclass_downsampling_experiment",
]
