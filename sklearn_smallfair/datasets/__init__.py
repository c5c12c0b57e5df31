"""Embedded published data, synthetic generators and loaders of local data."""

from ._dyadic import load_movielens, make_dyadic_regression
from ._fetch import fetch_compas, fetch_german_credit, get_data_home
from ._movielens import load_movielens_100k
from ._published import load_published_confusion_matrices, load_published_groups
from ._synthetic import make_small_group_classification

__all__ = [
    "fetch_compas",
    "fetch_german_credit",
    "get_data_home",
    "load_movielens",
    "load_movielens_100k",
    "load_published_confusion_matrices",
    "load_published_groups",
    "make_dyadic_regression",
    "make_small_group_classification",
]
