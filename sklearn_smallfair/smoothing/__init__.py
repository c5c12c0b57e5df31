"""Confusion-matrix smoothing: additive pseudo-counts, Cross-Prior Smoothing and
its intersectional variant."""

from ._additive import AdditiveSmoothing
from ._base import BaseSmoothing
from ._cross_prior import CrossPriorSmoothing
from ._intersectional import IntersectionalSmoothing

__all__ = [
    "AdditiveSmoothing",
    "BaseSmoothing",
    "CrossPriorSmoothing",
    "IntersectionalSmoothing",
]
