"""Tests of the Reweighing sample weights."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.preprocessing import reweighing_weights


def _weighted_table(y, groups, w):
    """Weighted joint distribution of (group, label), rows groups, columns labels."""
    frame = pd.DataFrame({"a": groups, "y": y, "w": w})
    table = frame.pivot_table(
        index="a", columns="y", values="w", aggfunc="sum", fill_value=0.0
    )
    return table.to_numpy() / np.sum(w)


def test_closed_form_hand_computed():
    # group a: 6 samples, 4 positive; group b: 4 samples, 1 positive; N = 10,
    # |Y=1| = 5, |Y=0| = 5
    y = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0]
    groups = ["a"] * 6 + ["b"] * 4
    w = reweighing_weights(y, sensitive_features=groups)
    # w(a, 1) = 6 * 5 / (10 * 4) = 0.75;  w(a, 0) = 6 * 5 / (10 * 2) = 1.5
    # w(b, 1) = 4 * 5 / (10 * 1) = 2.0;   w(b, 0) = 4 * 5 / (10 * 3) = 2 / 3
    expected = [0.75] * 4 + [1.5] * 2 + [2.0] + [2 / 3] * 3
    np.testing.assert_allclose(w, expected)
    assert w.dtype == np.float64
    assert w.shape == (10,)


def test_independent_groups_get_unit_weights():
    y = [1, 0, 1, 0, 1, 0, 1, 0]
    groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    np.testing.assert_allclose(reweighing_weights(y, sensitive_features=groups), 1.0)


@pytest.mark.parametrize("n_groups, n_labels", [(2, 2), (3, 2), (4, 3)])
def test_weighted_label_is_independent_of_group(n_groups, n_labels):
    rng = np.random.default_rng(n_groups * 10 + n_labels)
    n = 500
    groups = rng.integers(0, n_groups, size=n)
    # a label law that depends on the group
    probs = rng.dirichlet(np.ones(n_labels), size=n_groups)
    y = np.array([rng.choice(n_labels, p=probs[g]) for g in groups])
    w = reweighing_weights(y, sensitive_features=groups)
    joint = _weighted_table(y, groups, w)
    raw = _weighted_table(y, groups, np.ones(n))
    assert not np.allclose(raw, np.outer(raw.sum(1), raw.sum(0)))  # dependent
    # weighted joint = product of the weighted marginals
    np.testing.assert_allclose(joint, np.outer(joint.sum(1), joint.sum(0)))
    # the weighted marginals are the unweighted ones
    np.testing.assert_allclose(joint.sum(1), raw.sum(1))
    np.testing.assert_allclose(joint.sum(0), raw.sum(0))
    # total weight is N
    assert w.sum() == pytest.approx(n)
    assert (w > 0).all()


def test_string_labels_and_pandas_input():
    y = pd.Series(["good", "bad", "good", "good", "bad", "bad"])
    groups = pd.Series(["m", "m", "m", "f", "f", "f"], name="sex")
    w = reweighing_weights(y, sensitive_features=groups)
    # w(m, good) = 3 * 3 / (6 * 2) = 0.75, w(m, bad) = 3 * 3 / (6 * 1) = 1.5
    np.testing.assert_allclose(w, [0.75, 1.5, 0.75, 1.5, 0.75, 0.75])


def test_several_columns_define_intersectional_groups():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    frame = pd.DataFrame({"s": [0, 0, 0, 0, 1, 1, 1, 1], "r": [0, 1] * 4})
    w = reweighing_weights(y, sensitive_features=frame)
    combined = frame["s"].astype(str) + "|" + frame["r"].astype(str)
    np.testing.assert_allclose(w, reweighing_weights(y, sensitive_features=combined))


def test_empty_cell_gets_no_weight():
    # group b has no positive: the cell (b, 1) is empty and no sample is in it;
    # the other weights follow the formula
    y = [1, 1, 0, 0, 0, 0]
    groups = ["a", "a", "a", "b", "b", "b"]
    w = reweighing_weights(y, sensitive_features=groups)
    # w(a, 1) = 3 * 2 / (6 * 2) = 0.5, w(a, 0) = 3 * 4 / (6 * 1) = 2,
    # w(b, 0) = 3 * 4 / (6 * 3) = 2 / 3
    np.testing.assert_allclose(w, [0.5, 0.5, 2.0, 2 / 3, 2 / 3, 2 / 3])
    assert np.isfinite(w).all()


def test_single_group_or_single_label_gives_unit_weights():
    np.testing.assert_allclose(
        reweighing_weights([0, 1, 1], sensitive_features=["a", "a", "a"]), 1.0
    )
    np.testing.assert_allclose(
        reweighing_weights([1, 1, 1], sensitive_features=["a", "b", "b"]), 1.0
    )


def test_errors():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        reweighing_weights([0, 1, 1], sensitive_features=["a", "b"])
    with pytest.raises(ValueError, match="y contains 1 missing"):
        reweighing_weights([0, np.nan, 1], sensitive_features=["a", "b", "b"])
    with pytest.raises(ValueError, match="sensitive_features contains 1 missing"):
        reweighing_weights([0, 1, 1], sensitive_features=["a", None, "b"])
    with pytest.raises(ValueError, match="y is empty"):
        reweighing_weights([], sensitive_features=[])
    param = "'sensitive_features' parameter of reweighing_weights must be an array"
    with pytest.raises(ValueError, match=param):
        reweighing_weights([0, 1], sensitive_features=None)
    with pytest.raises(ValueError, match="y must be 1-D"):
        reweighing_weights(np.zeros((3, 2)), sensitive_features=["a", "b", "b"])
    with pytest.raises(TypeError, match=param):
        reweighing_weights([0, 1], sensitive_features="a")
    with pytest.raises(TypeError, match="sensitive_features must be array-like"):
        reweighing_weights([0, 1], sensitive_features={"g": ["a", "b"]})
    with pytest.raises(TypeError, match="'y' parameter of reweighing_weights"):
        reweighing_weights(1, sensitive_features=["a"])
