"""Fixtures shared by the whole test suite.

The reference data of the studies (``compas-scores-two-years.csv``, ``german.data``,
...) are not shipped with the package. The tests look for them where the package's
loaders do, in :func:`sklearn_smallfair.datasets.get_data_home` (the folder named
by the environment variable ``SMALLFAIR_DATA``, else ``~/smallfair_data``), then
in ``../shared/data`` beside the checkout, and skip cleanly when a file is missing.
Nothing is downloaded.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn

from sklearn_smallfair.datasets import get_data_home

SHARED_FILES = {
    "compas": "compas-scores-two-years.csv",
    "german": "german.data",
    "jira": "jirasoftware_filtered.csv",
    "published": "published_group_confusion_matrices.csv",
}


def shared_data_dirs():
    """The folders searched for a data file, in order (they may not exist)."""
    checkout = Path(__file__).resolve().parents[1]
    return [get_data_home(), checkout.parent / "shared" / "data"]


def find_shared_file(name):
    """The path of the data file ``SHARED_FILES[name]``, or None when absent."""
    for folder in shared_data_dirs():
        path = folder / SHARED_FILES[name]
        if path.is_file():
            return path
    return None


@pytest.fixture(scope="session")
def shared_file():
    """``shared_file(name)``: the path of a shared data file, or skip the test.

    ``name`` is one of ``"compas"``, ``"german"``, ``"jira"``, ``"published"``.
    """

    def locate(name):
        path = find_shared_file(name)
        if path is None:
            where = " or ".join(str(d) for d in shared_data_dirs())
            pytest.skip(
                f"{SHARED_FILES[name]} not found in {where} (set SMALLFAIR_DATA "
                f"to a folder holding it)"
            )
        return path

    return locate


@pytest.fixture(scope="session")
def compas_path(shared_file):
    """Path of ProPublica's ``compas-scores-two-years.csv`` (skip when absent)."""
    return shared_file("compas")


@pytest.fixture(scope="session")
def german_path(shared_file):
    """Path of the UCI ``german.data`` file (skip when absent)."""
    return shared_file("german")


@pytest.fixture(scope="session")
def jira_path(shared_file):
    """Path of the Jira story-point table (skip when absent)."""
    return shared_file("jira")


@pytest.fixture(scope="session")
def published_path(shared_file):
    """Path of the published per-group confusion matrices (skip when absent)."""
    return shared_file("published")


@pytest.fixture
def routing():
    """Metadata routing on for one test (restored afterwards)."""
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.fixture
def scored_data():
    """``(X, y, A)``: 600 rows, 4 features, groups a/b/c of 60/30/10 %."""
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["x0", "x1", "x2", "x3"])
    A = pd.Series(rng.choice(["a", "b", "c"], size=n, p=[0.6, 0.3, 0.1]), name="grp")
    logit = X["x0"] + 0.5 * X["x1"] + (A == "c") * 0.8
    y = pd.Series((logit + rng.normal(size=n) > 0).astype(int), name="y")
    return X, y, A
