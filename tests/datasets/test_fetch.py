"""Tests of the COMPAS and German credit fetchers. They never use the network:
downloads are simulated by replacing ``urlopen`` of the module."""

import hashlib
import io
import shutil
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from sklearn_smallfair.datasets import (
    _fetch,
    fetch_compas,
    fetch_german_credit,
    get_data_home,
)

FETCHERS = [
    (fetch_compas, _fetch._COMPAS_FILE, "compas"),
    (fetch_german_credit, _fetch._GERMAN_FILE, "german"),
]


@pytest.fixture
def source(request, shared_file):
    """The shared reference copy of a fetcher's file (skip when absent)."""
    return shared_file(request.param)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a URL fails the test."""

    def forbidden(request, *args, **kwargs):
        pytest.fail(
            f"network access attempted: {getattr(request, 'full_url', request)}"
        )

    monkeypatch.setattr(_fetch, "urlopen", forbidden)


def serve(monkeypatch, content, calls=None):
    """Make ``urlopen`` return ``content`` (bytes, or the bytes of a path)."""
    if isinstance(content, Path):
        content = content.read_bytes()

    def fake_urlopen(request, timeout=None):
        if calls is not None:
            calls.append(request.full_url)
        return io.BytesIO(content)

    monkeypatch.setattr(_fetch, "urlopen", fake_urlopen)


def leftovers(folder):
    return [p.name for p in Path(folder).iterdir() if p.name.endswith(".part")]


# -------------------------------------------------------------------------------------
# data folder
# -------------------------------------------------------------------------------------
def test_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path / "env"))
    assert _fetch._get_data_home(tmp_path / "given") == tmp_path / "given"
    assert _fetch._get_data_home(str(tmp_path)) == tmp_path
    assert _fetch._get_data_home() == tmp_path / "env"
    monkeypatch.delenv("SMALLFAIR_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _fetch._get_data_home() == tmp_path / "home" / "smallfair_data"
    assert _fetch._get_data_home("~/x") == tmp_path / "home" / "x"
    # resolving the folder does not create it
    assert not (tmp_path / "home").exists()


def test_get_data_home_is_the_fetchers_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "given") == tmp_path / "given"
    monkeypatch.delenv("SMALLFAIR_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / "smallfair_data"
    assert not (tmp_path / "home").exists()
    with pytest.raises(ValueError, match="'data_home' parameter of get_data_home"):
        get_data_home(3)
    # the fetchers' error for a missing file names the same folder
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path / "env"))
    with pytest.raises(OSError, match=str(tmp_path / "env")):
        fetch_german_credit(download_if_missing=False)


def test_suite_fixture_follows_the_same_rule(monkeypatch, tmp_path, shared_file):
    """The tests' data fixture looks in get_data_home() first."""
    (tmp_path / "german.data").write_text("placeholder")
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path))
    assert shared_file("german") == tmp_path / "german.data"
    # absent there: the shared folder beside the checkout, else a clean skip
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path / "empty"))
    beside = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    if (beside / "german.data").is_file():
        assert shared_file("german") == beside / "german.data"
    else:
        with pytest.raises(pytest.skip.Exception, match="SMALLFAIR_DATA"):
            shared_file("german")


def test_checksums_are_sha256_hex():
    for remote in (_fetch._COMPAS_FILE, _fetch._GERMAN_FILE):
        assert len(remote.checksum) == 64
        int(remote.checksum, 16)
        assert remote.url.startswith("https://")
        assert remote.url.endswith(remote.filename)


@pytest.mark.parametrize("fetcher, remote, source", FETCHERS, indirect=["source"])
def test_hardcoded_checksum_matches_reference_file(fetcher, remote, source):
    assert hashlib.sha256(source.read_bytes()).hexdigest() == remote.checksum


# -------------------------------------------------------------------------------------
# the download machinery, on a small fake remote file (no shared data needed)
# -------------------------------------------------------------------------------------
CONTENT = b"a,b\n1,2\n"
FAKE = _fetch._RemoteFile(
    "fake.csv", "https://example.org/data/fake.csv", hashlib.sha256(CONTENT).hexdigest()
)


def test_fetch_file_downloads_once_then_uses_cache(monkeypatch, tmp_path):
    calls = []
    serve(monkeypatch, CONTENT, calls)
    home = tmp_path / "new" / "folder"
    path = _fetch._fetch_file(FAKE, home, True)
    assert path == home / "fake.csv"
    assert path.read_bytes() == CONTENT
    assert calls == [FAKE.url]
    assert leftovers(home) == []
    # cached: no second download
    assert _fetch._fetch_file(FAKE, home, True) == path
    assert _fetch._fetch_file(FAKE, home, False) == path
    assert calls == [FAKE.url]


def test_fetch_file_uses_environment_variable(monkeypatch, tmp_path):
    serve(monkeypatch, CONTENT)
    monkeypatch.setenv("SMALLFAIR_DATA", str(tmp_path))
    assert _fetch._fetch_file(FAKE, None, True) == tmp_path / "fake.csv"


def test_network_error_names_url_and_manual_placement(monkeypatch, tmp_path):
    def failing_urlopen(request, timeout=None):
        raise URLError("no route to host")

    monkeypatch.setattr(_fetch, "urlopen", failing_urlopen)
    with pytest.raises(OSError, match="Could not download") as info:
        _fetch._fetch_file(FAKE, tmp_path, True)
    message = str(info.value)
    assert FAKE.url in message
    assert str(tmp_path / "fake.csv") in message
    assert "no route to host" in message
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_interrupted_download_leaves_nothing(monkeypatch, tmp_path):
    class Broken(io.BytesIO):
        def read(self, *args):
            raise TimeoutError("timed out")

    monkeypatch.setattr(_fetch, "urlopen", lambda request, timeout=None: Broken())
    with pytest.raises(OSError, match="timed out"):
        _fetch._fetch_file(FAKE, tmp_path, True)
    assert list(tmp_path.iterdir()) == []


def test_corrupted_download_is_rejected(monkeypatch, tmp_path):
    serve(monkeypatch, b"not the file")
    with pytest.raises(OSError, match="SHA-256 checksum") as info:
        _fetch._fetch_file(FAKE, tmp_path, True)
    assert FAKE.url in str(info.value)
    assert FAKE.checksum in str(info.value)
    assert list(tmp_path.iterdir()) == []  # the bad download was not kept


def test_corrupted_cache_is_rejected(tmp_path):
    (tmp_path / "fake.csv").write_bytes(CONTENT + b"3,4\n")
    with pytest.raises(OSError, match=r"cached file .* Delete it") as info:
        _fetch._fetch_file(FAKE, tmp_path, True)
    assert str(tmp_path / "fake.csv") in str(info.value)


def test_missing_file_without_download(tmp_path):
    home = tmp_path / "absent"
    with pytest.raises(OSError, match="download_if_missing=False") as info:
        _fetch._fetch_file(FAKE, home, False)
    assert str(home / "fake.csv") in str(info.value)
    assert not home.exists()


@pytest.mark.parametrize("fetcher", [fetch_compas, fetch_german_credit])
def test_fetchers_without_file_and_without_download(fetcher, tmp_path):
    with pytest.raises(OSError, match="download_if_missing=False"):
        fetcher(data_home=tmp_path, download_if_missing=False)


@pytest.mark.parametrize("fetcher", [fetch_compas, fetch_german_credit])
def test_fetchers_network_error(fetcher, monkeypatch, tmp_path):
    def failing_urlopen(request, timeout=None):
        raise URLError("offline")

    monkeypatch.setattr(_fetch, "urlopen", failing_urlopen)
    with pytest.raises(OSError, match=r"Could not download https://"):
        fetcher(data_home=tmp_path)


@pytest.mark.parametrize("fetcher", [fetch_compas, fetch_german_credit])
def test_fetchers_reject_corrupted_cache(fetcher, tmp_path):
    remote = _fetch._COMPAS_FILE if fetcher is fetch_compas else _fetch._GERMAN_FILE
    (tmp_path / remote.filename).write_text("garbage\n")
    with pytest.raises(OSError, match="Delete it"):
        fetcher(data_home=tmp_path)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"data_home": 3}, "'data_home' parameter of fetch_compas must be None, "),
        ({"as_frame": "yes"}, "'as_frame' parameter of fetch_compas must be an in"),
        ({"return_X_y": 1}, "'return_X_y' parameter of fetch_compas must be an"),
        ({"download_if_missing": None}, "'download_if_missing' parameter of fetch"),
    ],
)
def test_fetchers_bad_arguments(kwargs, match, tmp_path):
    kwargs = {"data_home": tmp_path, **kwargs}
    with pytest.raises(TypeError, match=match):
        fetch_compas(**kwargs)


# -------------------------------------------------------------------------------------
# the real files (copied from the shared data folder)
# -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fetcher, remote, source", FETCHERS, indirect=["source"])
def test_fetch_from_cache(fetcher, remote, source, tmp_path):
    shutil.copy(source, tmp_path / remote.filename)
    bunch = fetcher(data_home=tmp_path, download_if_missing=False)
    assert isinstance(bunch, Bunch)
    n = len(bunch.target)
    assert isinstance(bunch.data, pd.DataFrame) and bunch.data.shape[0] == n
    assert list(bunch.data.columns) == bunch.feature_names
    assert isinstance(bunch.target, pd.Series)
    assert bunch.target.dtype == np.int64 and set(bunch.target.unique()) == {0, 1}
    assert isinstance(bunch.sensitive, pd.DataFrame)
    assert list(bunch.sensitive.columns) == bunch.sensitive_names
    if fetcher is fetch_german_credit:
        for col in bunch.sensitive:
            assert set(bunch.sensitive[col].unique()) == {0, 1}
    assert bunch.frame.shape[0] == n
    assert bunch.frame.columns.is_unique
    assert set(bunch.feature_names) <= set(bunch.frame.columns)
    assert set(bunch.sensitive_names) <= set(bunch.frame.columns)
    assert bunch.target.name in bunch.frame.columns
    assert len(bunch.target_names) == 2
    assert bunch.filename == str(tmp_path / remote.filename)
    assert remote.url in bunch.DESCR

    X, y = fetcher(data_home=tmp_path, return_X_y=True)
    pd.testing.assert_frame_equal(X, bunch.data)
    pd.testing.assert_series_equal(y, bunch.target)

    arrays = fetcher(data_home=tmp_path, as_frame=False)
    assert isinstance(arrays.data, np.ndarray) and arrays.frame is None
    np.testing.assert_array_equal(arrays.data, bunch.data.to_numpy())
    np.testing.assert_array_equal(arrays.target, bunch.target.to_numpy())
    np.testing.assert_array_equal(arrays.sensitive, bunch.sensitive.to_numpy())


def test_fetch_compas_content(tmp_path, compas_path):
    shutil.copy(compas_path, tmp_path)
    bunch = fetch_compas(data_home=tmp_path)
    # ProPublica's filter, all races, ProPublica's target coding
    assert bunch.data.shape == (6172, 7)
    assert not {"sex", "race", "age_cat"} & set(bunch.data.columns)
    assert bunch.target.name == "two_year_recid"
    assert int(bunch.target.sum()) == 2809
    assert list(bunch.target_names) == ["did_not_reoffend", "reoffended"]
    assert bunch.sensitive_names == ["race", "sex", "age_cat"]
    assert bunch.sensitive["race"].value_counts().to_dict() == {
        "African-American": 3175,
        "Caucasian": 2103,
        "Hispanic": 509,
        "Other": 343,
        "Asian": 31,
        "Native American": 11,
    }
    assert set(bunch.sensitive["sex"]) == {"Female", "Male"}
    assert set(bunch.sensitive["age_cat"]) == {
        "Less than 25",
        "25 - 45",
        "Greater than 45",
    }
    assert bunch.frame.shape == (6172, 11)  # features, race, sex, age_cat, target
    raw = pd.read_csv(bunch.filename)
    assert raw["two_year_recid"].isin([0, 1]).all()

    # the comparative-separation study's subset and coding
    study = fetch_compas(
        data_home=tmp_path,
        races=("African-American", "Caucasian"),
        target="no_recid",
        sensitive_in_data=True,
    )
    assert study.data.shape == (5278, 9)
    assert study.target.name == "no_recid" and int(study.target.sum()) == 2795
    assert list(study.target_names) == ["reoffended", "did_not_reoffend"]
    assert int(study.data["race"].sum()) == 2103
    assert int(study.data["sex"].sum()) == int(
        (study.sensitive["sex"] == "Female").sum()
    )
    # the same rows, features and labels as the study's reader
    from sklearn_smallfair.datasets._realdata import _read_compas

    X_ref, y_ref, _ = _read_compas(compas_path)
    pd.testing.assert_frame_equal(study.data, X_ref)
    np.testing.assert_array_equal(study.target, y_ref)
    two = fetch_compas(data_home=tmp_path, races=["Caucasian", "African-American"])
    np.testing.assert_array_equal(two.target, 1 - study.target)
    pd.testing.assert_frame_equal(two.data, study.data[two.feature_names])

    X, y = fetch_compas(data_home=tmp_path, return_X_y=True)
    assert X.shape == (6172, 7) and y.name == "two_year_recid"
    arrays = fetch_compas(data_home=tmp_path, as_frame=False)
    assert arrays.sensitive.shape == (6172, 3) and arrays.sensitive.dtype == object
    for word in ("ProPublica", "two_year_recid", "no_recid", "Hispanic", "licence"):
        assert word in bunch.DESCR


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"target": "recid"}, "'target' parameter of fetch_compas must be a str"),
        ({"races": 3}, "'races' parameter of fetch_compas must be a str"),
        ({"races": ("Black", "White")}, r"unknown labels \['Black', 'White'\]"),
        ({"races": ()}, "races=\\('African-American', 'Caucasian'\\)"),
    ],
)
def test_fetch_compas_rejects_bad_options(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fetch_compas(data_home=tmp_path, download_if_missing=False, **kwargs)


def test_fetch_german_credit_content(tmp_path, german_path):
    shutil.copy(german_path, tmp_path)
    bunch = fetch_german_credit(data_home=tmp_path)
    assert bunch.data.shape == (1000, 61)
    assert int(bunch.target.sum()) == 700
    assert bunch.sensitive_names == ["age_gt_25", "sex"]
    assert list(bunch.target_names) == ["bad", "good"]
    assert bunch.frame.shape == (1000, 64)
    for word in ("UCI", "CC BY 4.0", "A92", "older than 25"):
        assert word in bunch.DESCR


@pytest.mark.parametrize("fetcher, remote, source", FETCHERS, indirect=["source"])
def test_fetch_downloads_when_missing(fetcher, remote, source, monkeypatch, tmp_path):
    calls = []
    serve(monkeypatch, source, calls)
    home = tmp_path / "cache"
    bunch = fetcher(data_home=home)
    assert calls == [remote.url]
    cached = home / remote.filename
    assert cached.read_bytes() == source.read_bytes()
    assert bunch.filename == str(cached)
    assert leftovers(home) == []
    again = fetcher(data_home=home)  # from the cache
    assert calls == [remote.url]
    pd.testing.assert_frame_equal(again.frame, bunch.frame)


@pytest.mark.parametrize("fetcher, remote, source", FETCHERS, indirect=["source"])
def test_fetch_rejects_changed_remote_file(
    fetcher, remote, source, monkeypatch, tmp_path
):
    serve(monkeypatch, source.read_bytes() + b"\n")
    with pytest.raises(OSError, match="remote file has changed"):
        fetcher(data_home=tmp_path)
    assert list(tmp_path.iterdir()) == []
