"""Model selection for small groups: downsampling splitters."""

from ._split import GroupDownsamplingCV

__all__ = ["GroupDownsamplingCV"]
