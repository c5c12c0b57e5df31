"""Tests of NeighborhoodRegressor: against a plain loop on tiny matrices."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone

from sklearn_smallfair.dyadic import NeighborhoodRegressor, _neighbors


def _tiny(random_state, n_users=9, n_items=7, density=0.6):
    """Distinct pairs of a random mask, integer ratings 1..5."""
    rng = np.random.default_rng(random_state)
    mask = rng.random((n_users, n_items)) < density
    users, items = np.nonzero(mask)
    y = rng.integers(1, 6, size=users.size).astype(float)
    return np.column_stack([users, items]), y


def _loop_similarity(col_a, col_b, similarity, shrinkage, min_support):
    """Similarity of two {holder: rating} dicts, one common holder at a time."""
    common = sorted(set(col_a) & set(col_b))
    n = len(common)
    if n == 0 or n < min_support:
        return 0.0
    a = np.array([col_a[h] for h in common])
    b = np.array([col_b[h] for h in common])
    if similarity == "pearson":
        a, b = a - a.mean(), b - b.mean()
    den = np.sqrt(np.sum(a * a) * np.sum(b * b))
    if den < 1e-12:
        return 0.0
    return float(np.sum(a * b) / den) * n / (n + shrinkage)


def _loop_predict(X, y, X_test, kind, similarity, k, shrinkage, min_support):
    """The definition, one query and one candidate at a time."""
    if kind == "user":  # swap the roles: targets are users, holders items
        X, X_test = X[:, ::-1], X_test[:, ::-1]
    holders, targets = X[:, 0], X[:, 1]
    cols = {}  # target -> {holder: rating}
    for h, t, r in zip(holders.tolist(), targets.tolist(), y.tolist()):
        cols.setdefault(t, {})[h] = r
    target_mean = {
        t: np.mean([r for tt, r in zip(targets, y) if tt == t]) for t in cols
    }
    holder_mean = {
        h: np.mean([r for hh, r in zip(holders, y) if hh == h])
        for h in set(holders.tolist())
    }
    out = []
    for h, t in X_test.tolist():
        if t not in cols:
            out.append(holder_mean.get(h, y.mean()))
            continue
        base = target_mean[t]
        rated = sorted(c for c in cols if h in cols[c] and c != t)
        sims = [
            (_loop_similarity(cols[t], cols[c], similarity, shrinkage, min_support), c)
            for c in rated
        ]
        # k largest, ties by entity order (a stable sort by decreasing similarity)
        top = sorted(sims, key=lambda sc: -sc[0])[:k]
        num = sum(s * (cols[c][h] - target_mean[c]) for s, c in top if s > 0)
        den = sum(s for s, c in top if s > 0)
        out.append(base + (num / den if den > 0 else 0.0))
    return np.clip(np.array(out), y.min(), y.max())


@pytest.mark.parametrize("kind", ["item", "user"])
@pytest.mark.parametrize("similarity", ["pearson", "cosine"])
@pytest.mark.parametrize("k, shrinkage, min_support", [(2, 0.0, 1), (3, 5.0, 2)])
def test_matches_plain_loop(kind, similarity, k, shrinkage, min_support):
    X, y = _tiny(random_state=3)
    X_test = np.array([[u, i] for u in range(10) for i in range(8)])  # some unseen
    model = NeighborhoodRegressor(
        n_neighbors=k,
        kind=kind,
        similarity=similarity,
        shrinkage=shrinkage,
        min_support=min_support,
    ).fit(X, y)
    expected = _loop_predict(X, y, X_test, kind, similarity, k, shrinkage, min_support)
    assert_allclose(model.predict(X_test), expected, rtol=0, atol=1e-12)


def test_similarities_match_plain_loop():
    X, y = _tiny(random_state=5, n_users=12, n_items=6)
    model = NeighborhoodRegressor(similarity="pearson", shrinkage=3.0).fit(X, y)
    cols = {}
    for u, i, r in zip(X[:, 0].tolist(), X[:, 1].tolist(), y.tolist()):
        cols.setdefault(i, {})[u] = r
    expected = np.array(
        [
            [
                0.0 if a == b else _loop_similarity(cols[a], cols[b], "pearson", 3.0, 2)
                for b in range(6)
            ]
            for a in range(6)
        ]
    )
    assert_allclose(model.similarities_, expected, rtol=0, atol=1e-12)


def test_repeated_pairs_are_averaged():
    X, y = _tiny(random_state=1)
    X2 = np.vstack([X, X[:5]])
    y2 = np.concatenate([y, y[:5]])
    y2[:5] -= 1.0
    y2[-5:] += 1.0  # the same pair means as y
    model = NeighborhoodRegressor(n_neighbors=3, shrinkage=0).fit(X2, y2)
    ref = NeighborhoodRegressor(n_neighbors=3, shrinkage=0).fit(X, y)
    assert_allclose(model.similarities_, ref.similarities_, atol=1e-12)


def test_chunked_prediction_equals_one_chunk(monkeypatch):
    X, y = _tiny(random_state=7, n_users=30, n_items=20)
    X_test = np.array([[u, i] for u in range(30) for i in range(20)])
    model = NeighborhoodRegressor(n_neighbors=4).fit(X, y)
    whole = model.predict(X_test)
    monkeypatch.setattr(_neighbors, "_CHUNK_ROWS", 7)
    assert_allclose(model.predict(X_test), whole, rtol=0, atol=0)


def test_beats_item_means_on_structured_data():
    # two groups of users with opposite tastes over two groups of items
    rng = np.random.default_rng(0)
    users, items = np.divmod(rng.choice(60 * 40, size=1400, replace=False), 40)
    y = np.where((users < 30) == (items < 20), 4.5, 1.5) + rng.normal(0, 0.3, 1400)
    X = np.column_stack([users, items])
    model = NeighborhoodRegressor(n_neighbors=10, shrinkage=5).fit(X[:1100], y[:1100])
    item_mean = NeighborhoodRegressor(n_neighbors=1, min_support=10**6)
    base = item_mean.fit(X[:1100], y[:1100]).predict(X[1100:])
    err = np.sqrt(np.mean((model.predict(X[1100:]) - y[1100:]) ** 2))
    err_base = np.sqrt(np.mean((base - y[1100:]) ** 2))
    assert err < 0.5 and err_base > 1.2


def test_parameter_errors():
    X, y = _tiny(random_state=0)
    for bad in (
        {"n_neighbors": 0},
        {"kind": "both"},
        {"shrinkage": -1.0},
        {"similarity": "jaccard"},
        {"min_support": 0},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            NeighborhoodRegressor(**bad).fit(X, y)


def test_sklearn_common_checks(sklearn_checks):
    run_sklearn_checks, expected_failed_checks = sklearn_checks
    failed, stale = run_sklearn_checks(NeighborhoodRegressor(), expected_failed_checks)
    assert not failed
    assert not stale


def test_clone_keeps_parameters():
    model = NeighborhoodRegressor(n_neighbors=5, kind="user", shrinkage=2.5)
    assert clone(model).get_params() == model.get_params()
