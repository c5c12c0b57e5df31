"""Tests of the FairBalance sample weights."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.preprocessing import fairbalance_weights, reweighing_weights


def _published_fairbalance(A, y):
    """The published ``FairBalance(X, y, A)``: ``|A = a| / |A = a, Y = y| / 2``
    with the groups the tuples of all the attribute columns, not rescaled."""
    frame = pd.DataFrame(A).astype(str).agg("|".join, axis=1).to_frame("a")
    frame["y"] = y
    size = frame.groupby("a")["y"].transform("size")
    cell = frame.groupby(["a", "y"])["y"].transform("size")
    return (size / cell / 2).to_numpy()


def test_hand_computed():
    # group a: 6 samples, 4 positive; group b: 4 samples, 1 positive
    y = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0]
    groups = ["a"] * 6 + ["b"] * 4
    w = fairbalance_weights(y, sensitive_features=groups)
    # w(a, 1) = 6 / (2 * 4) = 0.75;  w(a, 0) = 6 / (2 * 2) = 1.5
    # w(b, 1) = 4 / (2 * 1) = 2.0;   w(b, 0) = 4 / (2 * 3) = 2 / 3
    expected = [0.75] * 4 + [1.5] * 2 + [2.0] + [2 / 3] * 3
    np.testing.assert_allclose(w, expected)
    assert w.dtype == np.float64
    # with |Y = 1| = N / 2, Reweighing's |A = a| |Y = y| / (N |A = a, Y = y|)
    # is the same weight
    np.testing.assert_allclose(reweighing_weights(y, sensitive_features=groups), w)
    # with an unbalanced overall label they differ: w(a, 1) = 6 / (2 * 5),
    # w(a, 0) = 6 / 2
    y2 = [1, 1, 1, 1, 1, 0, 1, 0, 0, 0]
    w2 = fairbalance_weights(y2, sensitive_features=groups)
    np.testing.assert_allclose(w2, [6 / 10] * 5 + [3.0] + [2.0] + [2 / 3] * 3)
    assert not np.allclose(w2, reweighing_weights(y2, sensitive_features=groups))


@pytest.mark.parametrize("n_groups, n_labels", [(2, 2), (3, 2), (4, 3)])
def test_labels_balanced_within_every_group(n_groups, n_labels):
    rng = np.random.default_rng(n_groups * 10 + n_labels)
    n = 400
    groups = rng.integers(0, n_groups, size=n)
    probs = rng.dirichlet(np.ones(n_labels) * 3, size=n_groups)
    u = rng.random(n)
    y = (u[:, None] > probs[groups].cumsum(axis=1)).sum(axis=1)
    w = fairbalance_weights(y, sensitive_features=groups)
    table = pd.DataFrame({"a": groups, "y": y, "w": w}).pivot_table(
        index="a", columns="y", values="w", aggfunc="sum"
    )
    sizes = np.bincount(groups)
    # every cell (a, y) weighs |A = a| / K
    np.testing.assert_allclose(
        table.to_numpy(), np.outer(sizes, np.ones(n_labels)) / n_labels
    )
    assert w.sum() == pytest.approx(n)


def test_matches_published_code_with_two_attributes():
    rng = np.random.default_rng(3)
    n = 300
    A = pd.DataFrame({"sex": rng.integers(0, 2, n), "race": rng.integers(0, 2, n)})
    y = (rng.random(n) < 0.3 + 0.3 * A["sex"] + 0.2 * A["race"]).astype(int)
    np.testing.assert_allclose(
        fairbalance_weights(y, sensitive_features=A), _published_fairbalance(A, y)
    )


def test_group_without_a_label_keeps_its_weights_unscaled():
    # group b has no negative: its positives weigh |b| / (2 |b, 1|) = 1 / 2 each
    y = [1, 0, 1, 0, 1, 1]
    groups = ["a", "a", "a", "a", "b", "b"]
    w = fairbalance_weights(y, sensitive_features=groups)
    np.testing.assert_allclose(w, [1, 1, 1, 1, 0.5, 0.5])
    assert w.sum() == pytest.approx(5.0)


def test_invariant_to_label_and_group_coding():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    g = rng.integers(0, 3, 50)
    w = fairbalance_weights(y, sensitive_features=g)
    w2 = fairbalance_weights(
        np.where(y == 1, "yes", "no"), sensitive_features=np.array(list("xyz"))[g]
    )
    np.testing.assert_allclose(w, w2)


def test_errors():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        fairbalance_weights([0, 1, 1], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="empty"):
        fairbalance_weights([], sensitive_features=[])
    with pytest.raises(ValueError, match="y"):
        fairbalance_weights([0, np.nan, 1], sensitive_features=[0, 1, 1])


def _published_reweighing(A, y):
    """The published ``Reweighing(X, y, A)``: ``|Y = y| |A = a| / |A = a, Y = y|``
    rescaled to sum to ``N``."""
    frame = pd.DataFrame(A).astype(str).agg("|".join, axis=1).to_frame("a")
    frame["y"] = y
    w = (
        frame.groupby("y")["y"].transform("size")
        * frame.groupby("a")["y"].transform("size")
        / frame.groupby(["a", "y"])["y"].transform("size")
    ).to_numpy()
    return w * len(w) / w.sum()


@pytest.mark.slow
def test_published_cohorts(compas_path, german_path):
    # the cohorts of the comparative-separation study's Table V: all COMPAS rows
    # with race = Caucasian against all others, German credit with age > 25
    raw = pd.read_csv(compas_path)
    compas_A = pd.DataFrame(
        {
            "sex": (raw["sex"] == "Male").astype(int),
            "race": (raw["race"] == "Caucasian").astype(int),
        }
    )
    compas_y = (raw["two_year_recid"] == 0).astype(int).to_numpy()
    german = pd.read_csv(german_path, sep=r"\s+", header=None)
    german_A = pd.DataFrame(
        {
            "age": (german[12] > 25).astype(int),
            "sex": german[8].isin(["A91", "A93", "A94"]),
        }
    ).astype(int)
    german_y = (german[20] == 1).astype(int).to_numpy()
    for A, y, n in [(compas_A, compas_y, 7214), (german_A, german_y, 1000)]:
        assert len(y) == n
        w = fairbalance_weights(y, sensitive_features=A)
        np.testing.assert_allclose(w, _published_fairbalance(A, y), rtol=1e-12)
        np.testing.assert_allclose(
            reweighing_weights(y, sensitive_features=A),
            _published_reweighing(A, y),
            rtol=1e-12,
        )
        # each intersectional group's two labels weigh half the group's size
        key = A.astype(str).agg("|".join, axis=1).to_numpy()
        cells = pd.DataFrame({"a": key, "y": y, "w": w}).groupby(["a", "y"])["w"].sum()
        sizes = pd.Series(key).value_counts()
        for (a, _), total in cells.items():
            assert total == pytest.approx(sizes[a] / 2)
        assert w.sum() == pytest.approx(n)
