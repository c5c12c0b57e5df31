"""Tests of the readers of the real datasets (skipped without the shared data)."""

import numpy as np
import pytest

from sklearn_smallfair.datasets._realdata import _read_compas, _read_german


def _check_common(X, y, attrs, n):
    assert X.shape[0] == n and y.shape == (n,) and attrs.shape[0] == n
    assert (X.dtypes == np.float64).all()
    assert not X.isna().any().any() and np.isfinite(X.to_numpy()).all()
    assert y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    assert (attrs.dtypes == np.int64).all() and not attrs.isna().any().any()
    for col in attrs:
        assert set(np.unique(attrs[col])) == {0, 1}


def test_read_compas(compas_path):
    X, y, attrs = _read_compas(compas_path)
    # ProPublica's filters leave 6,172 rows, 3,175 African-American and 2,103
    # Caucasian defendants
    _check_common(X, y, attrs, 3175 + 2103)
    assert list(attrs.columns) == ["sex", "race"]
    assert attrs["race"].sum() == 2103  # 1 = Caucasian
    assert attrs["sex"].sum() == 1031  # 1 = female
    # label 1 = no two-year recidivism
    assert y.sum() == 2795
    assert X.shape[1] == 9
    np.testing.assert_array_equal(X["race"], attrs["race"])
    np.testing.assert_array_equal(X["c_charge_degree_F"] + X["c_charge_degree_M"], 1)
    assert X["age"].between(18, 100).all()


def test_read_german(german_path):
    X, y, attrs = _read_german(german_path)
    _check_common(X, y, attrs, 1000)
    assert list(attrs.columns) == ["age_gt_25", "sex"]
    assert y.sum() == 700  # 1 = good credit
    assert attrs["sex"].sum() == 310  # 1 = female (A92; A95 does not occur)
    assert attrs["age_gt_25"].sum() == 810
    np.testing.assert_array_equal(attrs["age_gt_25"], (X["age"] > 25).astype(int))
    # 7 numeric attributes and the one-hot codes of the 13 qualitative ones
    assert X.shape[1] == 61
    assert X["personal_status_sex_A92"].sum() == 310
    onehot = X.filter(like="checking_status_")
    np.testing.assert_array_equal(onehot.sum(axis=1), 1)


def test_read_german_rejects_other_files(tmp_path):
    bad = tmp_path / "german.data"
    bad.write_text("A11 6 A34\nA12 48 A32\n")
    with pytest.raises(ValueError, match="expected 21 space-separated columns"):
        _read_german(bad)


def test_read_compas_rejects_other_files(tmp_path):
    bad = tmp_path / "compas.csv"
    bad.write_text("id,sex,race\n1,Male,Other\n")
    with pytest.raises(ValueError, match=r"columns .* are missing"):
        _read_compas(bad)
