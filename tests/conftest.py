"""Fixtures shared by the whole test suite.

The reference data of the studies (``compas-scores-two-years.csv``, ``german.data``,
...) are not shipped with the package. The tests look for them in the folder named
by the environment variable ``SMALLFAIR_SHARED_DATA``, else in ``../shared/data``
beside the checkout, and skip cleanly when a file is missing.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn

SHARED_FILES = {
    "compas": "compas-scores-two-years.csv",
    "german": "german.data",
    "jira": "jirasoftware_filtered.csv",
    "published": "published_group_confusion_matrices.csv",
}


def shared_data_dir():
    """The folder of the shared reference data (it may not exist)."""
    env = os.environ.get("SMALLFAIR_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_file():
    """``shared_file(name)``: the path of a shared data file, or skip the test.

    ``name`` is one of ``"compas"``, ``"german"``, ``"jira"``, ``"published"``.
    """

    def locate(name):
        path = shared_data_dir() / SHARED_FILES[name]
        if not path.is_file():
            pytest.skip(f"shared {name} data not available ({path})")
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
