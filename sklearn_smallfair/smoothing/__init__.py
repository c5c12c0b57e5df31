"""Confusion-matrix smoothing: additive pseudo-counts and Cross-Prior Smoothing."""

from ._additive import AdditiveSmoothing
from ._base import BaseSmoothing
from ._cross_prior import CrossPriorSmoothing

__all__ = ["AdditiveSmoothing", "BaseSmoothing", "CrossPriorSmoothing"]
