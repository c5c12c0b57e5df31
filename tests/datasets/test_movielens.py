"""Tests of load_movielens_100k (the copy installed with recbole)."""

import importlib.util

import numpy as np
import pytest

from sklearn_smallfair.datasets import _movielens, load_movielens_100k

HAVE_RECBOLE = importlib.util.find_spec("recbole") is not None
HEADER = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"


def _fake_recbole(tmp_path, monkeypatch, lines, header=HEADER):
    """A package named recbole holding only the ratings file, first on the path."""
    folder = tmp_path / "recbole" / "dataset_example" / "ml-100k"
    folder.mkdir(parents=True)
    (tmp_path / "recbole" / "__init__.py").write_text("raise ImportError('unused')\n")
    (folder / "ml-100k.inter").write_text(header + "".join(lines))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()


def test_missing_recbole_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ImportError, match=r"pip install --no-deps recbole"):
        load_movielens_100k()


def test_reads_the_installed_file_without_importing_recbole(tmp_path, monkeypatch):
    lines = ["1\t10\t5\t100\n", "2\t10\t3\t101\n", "2\t11\t1\t102\n"]
    _fake_recbole(tmp_path, monkeypatch, lines)
    monkeypatch.setattr(_movielens, "_SHAPE", (3, 2, 2))
    X, y = load_movielens_100k()
    assert X.tolist() == [[1, 10], [2, 10], [2, 11]]
    assert y.tolist() == [5.0, 3.0, 1.0]
    frame = load_movielens_100k(as_frame=True)
    assert frame.columns.tolist() == ["user", "item", "rating", "timestamp"]
    assert frame["timestamp"].dtype == np.int64


def test_wrong_file_is_refused(tmp_path, monkeypatch):
    _fake_recbole(tmp_path, monkeypatch, ["1\t10\t5\t100\n"])
    with pytest.raises(ValueError, match="MovieLens-100k has 100000 ratings"):
        load_movielens_100k()


def test_wrong_header_is_refused(tmp_path, monkeypatch):
    _fake_recbole(tmp_path, monkeypatch, ["1\t10\t5\t100\n"], header="a\tb\n")
    with pytest.raises(ValueError, match="header"):
        load_movielens_100k()


def test_package_without_the_file(tmp_path, monkeypatch):
    (tmp_path / "recbole").mkdir()
    (tmp_path / "recbole" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(FileNotFoundError, match="--force-reinstall"):
        load_movielens_100k()


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_RECBOLE, reason="recbole (MovieLens-100k) not installed")
def test_real_movielens_100k():
    X, y = load_movielens_100k()
    assert X.shape == (100_000, 2)
    assert np.unique(X[:, 0]).size == 943 and np.unique(X[:, 1]).size == 1682
    assert X[:, 0].min() == 1 and X[:, 1].min() == 1
    assert set(np.unique(y).tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    # no pair is rated twice
    assert np.unique(X[:, 0] * 2000 + X[:, 1]).size == 100_000
