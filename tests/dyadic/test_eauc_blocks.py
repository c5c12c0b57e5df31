"""The ordered EAUC computed block by block against a straightforward reference.

The rows are read in blocks of ``_eccentricity._BLOCK``; the tests shrink it so
that a few thousand rows span many blocks, chunk boundaries and long runs of equal
eccentricity, and check the result against one global sort by (eccentricity,
error) and a trapezoid, within 1e-12.
"""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_smallfair.dyadic import (
    _curve_areas,
    _eccentricity,
    dks_nonuniformity,
    eauc_score,
    eccentricity,
    entity_means,
)


def _reference(y, pred, users, items, tr_r, tr_u, tr_i, *, error, tail, unknown):
    """EAUC the plain way: dictionary means, a lexsort, a trapezoid."""
    df = pd.DataFrame({"r": tr_r, "u": tr_u, "i": tr_i})
    um = df.groupby("u")["r"].mean().to_dict()
    im = df.groupby("i")["r"].mean().to_dict()
    glob = float(np.mean(tr_r))
    fill = glob if unknown == "global_mean" else np.nan
    mu = np.array([um.get(k, fill) for k in users], dtype=float)
    mi = np.array([im.get(k, fill) for k in items], dtype=float)
    d = y - (mu + mi) / 2
    keep = ~np.isnan(d)
    y, pred, d = y[keep], pred[keep], d[keep]
    span = y.max() - y.min()
    err = np.abs(pred - y) if error == "absolute" else (pred - y) ** 2
    if tail == "upper":
        err, d = err[d >= 0], d[d >= 0]
    elif tail == "lower":
        err, d = err[d <= 0], d[d <= 0]
    ecc = np.abs(d)
    order = np.lexsort((err, ecc))
    x, v = ecc[order], err[order]
    area = np.sum(np.diff(x) * (v[1:] + v[:-1])) / 2
    return area / span ** (2 if error == "absolute" else 3)


def _data(seed, n=3000, n_users=80, n_items=50, levels=None):
    """Integer stars (ties in eccentricity) and predictions with tied errors;
    the evaluated rows hold users and items that have no training rating."""
    rng = np.random.default_rng(seed)

    def draw(size, users, items):
        u = rng.integers(0, users, size)
        i = rng.integers(0, items, size)
        r = 3 + np.sin(u) + 0.7 * np.cos(2 * i) + rng.normal(size=size)
        return np.clip(np.round(r), 1, 5), u, i

    train = draw(2 * n, n_users, n_items)
    y, u, i = draw(n, n_users + 5, n_items + 3)  # a few unseen entities
    pred = np.round(0.4 * y + 1.8 + rng.normal(scale=0.3, size=n), 1)
    return y, pred, u, i, train


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(_eccentricity, "_BLOCK", 16)


@pytest.mark.parametrize("ids", ["int", "str", "large_int", "mixed"])
@pytest.mark.parametrize("unknown", ["drop", "global_mean"])
@pytest.mark.parametrize(
    "error, tail", [("absolute", "both"), ("squared", "upper"), ("absolute", "lower")]
)
def test_blocks_match_the_plain_computation(small_blocks, ids, unknown, error, tail):
    y, pred, u, i, (r, tu, ti) = _data(0)
    convert = {
        "int": lambda a: a,
        "str": lambda a: np.array([f"e{k}" for k in a]),
        "large_int": lambda a: a * 10**12 - 7,  # hashed, not positions
        "mixed": lambda a: a.astype(object),  # training ids stay integers
    }[ids]
    tu_, ti_ = (tu, ti) if ids == "mixed" else (convert(tu), convert(ti))
    u_, i_ = convert(u), convert(i)
    ref = _reference(
        y, pred, u_, i_, r, tu_, ti_, error=error, tail=tail, unknown=unknown
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows dropped
        got = eauc_score(
            y, pred, users=u_, items=i_, train_ratings=r, train_users=tu_,
            train_items=ti_, error=error, tail=tail, unknown=unknown,
        )  # fmt: skip
    assert got == pytest.approx(ref, rel=1e-12, abs=0)


def test_block_size_does_not_change_the_result(monkeypatch):
    y, pred, u, i, (r, tu, ti) = _data(1, n=2000)
    kw = dict(users=u, items=i, train_ratings=r, train_users=tu, train_items=ti)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = []
        for block in (1, 7, 64, 1 << 15):
            monkeypatch.setattr(_eccentricity, "_BLOCK", block)
            values.append(eauc_score(y, pred, **kw))
            ecc = eccentricity(y, **kw)
            assert np.isnan(ecc).sum() == (~np.isin(u, tu) | ~np.isin(i, ti)).sum()
    assert max(values) - min(values) <= 1e-12 * values[0]


def _plain_area(ecc, err):
    order = np.lexsort((err, ecc))
    x, v = ecc[order], err[order]
    return np.sum(np.diff(x) * (v[1:] + v[:-1])) / 2


@pytest.mark.parametrize("block", [4, 16, 1 << 15])
def test_keys_area_with_values_equal_in_the_high_bits(monkeypatch, block):
    """Eccentricities a few ulps apart share their high bits (one run of the
    sorted keys, in row order); exact ties and long runs of one value too."""
    monkeypatch.setattr(_eccentricity, "_BLOCK", block)
    rng = np.random.default_rng(3)
    n = 4000
    base = rng.choice([0.0, 0.5, 1.0, 1.25, 2.0], n)
    ulps = rng.integers(0, 4, n) * (rng.random(n) < 0.3)
    ecc = base.copy()
    for k in range(1, 4):  # up to 3 ulps above the base value
        ecc[ulps >= k] = np.nextafter(ecc[ulps >= k], 3.0)
    y = rng.integers(1, 6, n).astype(float)
    p = y + np.round(rng.normal(size=n), 1)
    for error in ("absolute", "squared"):
        err = np.abs(p - y) if error == "absolute" else (p - y) ** 2
        key = ecc.view(np.uint64) >> np.uint64(12) << np.uint64(12)
        key |= np.arange(n, dtype=np.uint64)
        keys = _curve_areas._SortKeys(key, 12, ecc, y, p, 1.0, error)
        got = _curve_areas._keys_area(keys)
        assert got == pytest.approx(_plain_area(ecc, err), rel=1e-12, abs=0)


def test_one_eccentricity_and_one_row():
    keys = _curve_areas._SortKeys(
        np.zeros(1, np.uint64), 1, np.ones(1), np.ones(1), np.ones(1) * 2, 1.0,
        "absolute",
    )  # fmt: skip
    assert _curve_areas._keys_area(keys) == 0.0
    y = np.array([1.0, 5.0, 1.0, 5.0])
    # every user and item mean 3, so every eccentricity is 2: zero area
    means = entity_means(y, users=[0, 0, 1, 1], items=[0, 1, 1, 0])
    pred = y + np.array([1.0, 0.0, 2.0, 0.0])
    got = eauc_score(y, pred, users=[0, 0, 1, 1], items=[0, 1, 1, 0], means=means)
    assert got == 0.0


def test_temporaries_are_two_arrays_of_the_rows():
    """Besides the inputs, the ordered EAUC allocates two arrays as long as the
    evaluated rows (sort keys and eccentricities); the rest is block-sized (a few
    MB) or per entity. A third array of the rows would add 8 bytes per row."""
    rng = np.random.default_rng(4)
    n = 1_500_000
    tu, ti = rng.integers(0, 2000, n), rng.integers(0, 300, n)
    r = np.clip(np.round(3 + rng.normal(size=n)), 1, 5)
    u, i = rng.integers(0, 2000, n), rng.integers(0, 300, n)
    y = np.clip(np.round(3 + rng.normal(size=n)), 1, 5)
    p = y + rng.normal(scale=0.5, size=n)
    kw = dict(users=u, items=i, train_ratings=r, train_users=tu, train_items=ti)
    tracemalloc.start()
    try:
        eauc_score(y, p, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    full = 8 * n
    assert 2 * full <= peak < 2.5 * full, peak / full


def _dks_plain(y, users, items):
    """D_KS entity by entity with scipy's one-sample KS test."""
    lo, hi = y.min(), y.max()
    uniform = stats.uniform(loc=lo, scale=hi - lo).cdf
    values = [
        stats.kstest(y[ids == k], uniform).statistic
        for ids in (users, items)
        for k in np.unique(ids)
    ]
    return float(np.mean(values))


@pytest.mark.parametrize("kind", ["stars", "half_stars", "continuous"])
@pytest.mark.parametrize("block", [16, 1 << 15])
def test_dks_in_blocks_matches_scipy(monkeypatch, kind, block):
    monkeypatch.setattr(_eccentricity, "_BLOCK", block)
    rng = np.random.default_rng(5)
    n = 1500
    u, i = rng.integers(0, 40, n), rng.integers(0, 25, n)
    r = 3 + np.sin(u) + rng.normal(size=n)
    r = {
        "stars": np.clip(np.round(r), 1, 5),
        "half_stars": np.clip(np.round(2 * r) / 2, 0.5, 5),
        "continuous": r,
    }[kind]
    got = dks_nonuniformity(r, users=u, items=i)
    assert got == pytest.approx(_dks_plain(r, u, i), rel=1e-12)


def test_dks_temporaries_are_one_array_of_the_rows():
    """D_KS fills one integer key per rating (reused for users and items); the
    per-entity histograms are small here (2000 users x 5 stars)."""
    rng = np.random.default_rng(6)
    n = 1_500_000
    u, i = rng.integers(0, 2000, n), rng.integers(0, 300, n)
    r = np.clip(np.round(3 + rng.normal(size=n)), 1, 5)
    tracemalloc.start()
    try:
        dks_nonuniformity(r, users=u, items=i)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 8 * n <= peak < 1.5 * 8 * n, peak / (8 * n)
