"""Embedded published data, synthetic generators and loaders of local data."""

from ._dyadic import load_movielens, make_dyadic_regression
from ._published import load_published_confusion_matrices, load_published_groups

__all__ = [
    "load_movielens",
    "load_published_confusion_matrices",
    "load_published_groups",
    "make_dyadic_regression",
]
