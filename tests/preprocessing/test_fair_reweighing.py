"""Tests of the FairReweighing sample weights for continuous labels."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.preprocessing import fair_reweighing_weights, reweighing_weights


def _published_density_weights(A, y, radius=0.5):
    """The published ``DensityBalance("Neighbor").weight(A, y)`` ("Reweighing"):
    neighbour counts within ``radius`` of the standardized ``(A, y)``, ``A`` and
    ``y`` (all pairwise Euclidean distances), each normalized to mean 1, and
    ``wA * wy / w`` rescaled to sum to ``N``."""

    def density(X):
        X = np.asarray(X, dtype=float).reshape(len(y), -1)
        sd = X.std(axis=0)
        Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        dist = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1))
        count = (dist < radius).sum(axis=1).astype(float)
        return len(count) * count / count.sum()

    w = density(np.column_stack([A, y]))
    ratio = density(A) * density(y) / w
    return len(ratio) * ratio / ratio.sum()


def test_hand_computed():
    # sd(y) = 2, h = 1: neighbours are the samples with |y_j - y_i| < 1
    y = np.array([0.0, 0.5, 4.0, 0.0, 4.0, 4.5])
    groups = [0, 0, 0, 1, 1, 1]
    assert y.std() == pytest.approx(2.0, abs=0.02)
    h = 0.5 * y.std()
    assert 0.5 < h < 3.5
    # neighbours in the data: {0, 0.5, 0} for the small labels, {4, 4, 4.5} for
    # the large ones -> 3 each; in the group: 2, 2, 1 | 1, 2, 2
    n_y = np.array([3, 3, 3, 3, 3, 3])
    n_ay = np.array([2, 2, 1, 1, 2, 2])
    r = 3 * n_y / n_ay
    expected = 6 * r / r.sum()
    w = fair_reweighing_weights(y, sensitive_features=groups)
    np.testing.assert_allclose(w, expected)
    assert w.sum() == pytest.approx(6.0)


@pytest.mark.parametrize("seed", range(3))
def test_matches_published_code(seed):
    rng = np.random.default_rng(seed)
    n = 120
    A = rng.integers(0, 2, n)
    points = rng.choice([1, 2, 3, 5, 8, 13, 20], n) + A * rng.integers(0, 3, n)
    np.testing.assert_allclose(
        fair_reweighing_weights(points, sensitive_features=A),
        _published_density_weights(A, points),
        rtol=1e-12,
    )
    continuous = rng.normal(size=n) + 0.7 * A
    np.testing.assert_allclose(
        fair_reweighing_weights(continuous, sensitive_features=A, radius=0.3),
        _published_density_weights(A, continuous, radius=0.3),
        rtol=1e-12,
    )


def test_discrete_well_separated_labels_give_reweighing():
    # labels 0 and 10 with sd about 5: h = 2.5 puts each label value in its own
    # neighbourhood, and the densities are the cell frequencies
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 3, 200)
    y = 10 * (rng.random(200) < 0.2 + 0.2 * groups)
    np.testing.assert_allclose(
        fair_reweighing_weights(y, sensitive_features=groups),
        reweighing_weights(y, sensitive_features=groups),
    )


def test_constant_label_and_wide_radius():
    np.testing.assert_allclose(
        fair_reweighing_weights([3, 3, 3, 3], sensitive_features=[0, 0, 1, 1]), 1.0
    )
    # a radius wider than the labels' range: every density is the group's size
    # over itself, so every ratio is N and every weight 1
    np.testing.assert_allclose(
        fair_reweighing_weights(
            [1, 2, 3, 9], sensitive_features=[0, 0, 1, 1], radius=10
        ),
        1.0,
    )


def test_sorted_neighbour_counts_many_groups_and_ties():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 6, 300).astype(float)
    groups = pd.DataFrame({"u": rng.integers(0, 3, 300), "v": rng.integers(0, 2, 300)})
    h = 0.37 * y.std()
    close = np.abs(y[:, None] - y[None, :]) < h
    key = groups["u"].to_numpy() * 2 + groups["v"].to_numpy()
    same = key[:, None] == key[None, :]
    r = np.bincount(key)[key] * close.sum(1) / (close & same).sum(1)
    np.testing.assert_allclose(
        fair_reweighing_weights(y, sensitive_features=groups, radius=0.37),
        300 * r / r.sum(),
    )


def test_errors():
    with pytest.raises(ValueError, match="numeric"):
        fair_reweighing_weights(["a", "b"], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="non-finite"):
        fair_reweighing_weights([1.0, np.inf], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="inconsistent lengths"):
        fair_reweighing_weights([1.0, 2.0, 3.0], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="radius"):
        fair_reweighing_weights([1.0, 2.0], sensitive_features=[0, 1], radius=0)


def test_jira_training_items_match_published_code(jira_path):
    items = pd.read_csv(jira_path)
    train = items[items["split_mark"] != "test"]
    A = train["is_internal"].to_numpy()
    y = train["storypoint"].to_numpy()
    w = fair_reweighing_weights(y, sensitive_features=A)
    np.testing.assert_allclose(w, _published_density_weights(A, y), rtol=1e-12)
    assert w.shape == (219,)
