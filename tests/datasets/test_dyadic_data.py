"""Tests of the synthetic dyadic generator and the MovieLens reader."""

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from sklearn_smallfair import dyadic
from sklearn_smallfair.datasets import load_movielens, make_dyadic_regression

LEVELS = [0.0, 0.25, 0.5, 0.75, 1.0]


def _reference_dks(users, items, y):
    """Mean over all users and items of the one-sample KS statistic of the
    entity's ratings against U[min y, max y] (scipy, one entity at a time)."""
    lo, hi = float(np.min(y)), float(np.max(y))
    uniform = stats.uniform(loc=lo, scale=hi - lo).cdf
    frame = pd.DataFrame({"user": users, "item": items, "rating": y})
    values = [
        stats.kstest(group.to_numpy(), uniform).statistic
        for col in ("user", "item")
        for _, group in frame.groupby(col)["rating"]
    ]
    return float(np.mean(values))


def _sorted_dks(users, items, y):
    """The same statistic from one sort per entity kind (numpy)."""
    lo, hi = float(np.min(y)), float(np.max(y))
    cdf = (np.asarray(y, dtype=float) - lo) / (hi - lo)
    values = []
    for ids in (users, items):
        order = np.lexsort((cdf, ids))
        ids_sorted, f = ids[order], cdf[order]
        starts = np.flatnonzero(np.r_[True, ids_sorted[1:] != ids_sorted[:-1]])
        sizes = np.diff(np.r_[starts, ids_sorted.shape[0]])
        n = np.repeat(sizes, sizes)
        j = np.arange(ids_sorted.shape[0]) - np.repeat(starts, sizes)
        gap = np.maximum((j + 1) / n - f, f - j / n)
        values.append(np.maximum.reduceat(gap, starts))
    return float(np.concatenate(values).mean())


# -------------------------------------------------------------------------------------
# generator: layout
# -------------------------------------------------------------------------------------
@pytest.mark.parametrize("discrete", [True, False])
def test_shapes_dtypes_ranges(discrete):
    X, y = make_dyadic_regression(
        n_users=60,
        n_items=80,
        n_ratings=2000,
        rating_range=(1, 5),
        discrete=discrete,
        random_state=0,
    )
    assert X.shape == (2000, 2) and X.dtype == np.int64
    assert y.shape == (2000,) and y.dtype == np.float64
    assert X[:, 0].min() >= 0 and X[:, 0].max() < 60
    assert X[:, 1].min() >= 0 and X[:, 1].max() < 80
    # every pair at most once, every user and item rated
    assert np.unique(X[:, 0] * 80 + X[:, 1]).shape[0] == 2000
    assert np.unique(X[:, 0]).shape[0] == 60
    assert np.unique(X[:, 1]).shape[0] == 80
    assert y.min() >= 1 and y.max() <= 5
    if discrete:
        assert set(np.unique(y)) == {1.0, 2.0, 3.0, 4.0, 5.0}
        # the levels are used about evenly
        counts = np.bincount(y.astype(int))[1:]
        assert counts.min() > 0.6 * 2000 / 5
    else:
        assert np.unique(y).shape[0] > 1900


def test_other_range_and_frame():
    _, y = make_dyadic_regression(
        n_users=30, n_items=20, n_ratings=300, rating_range=(-2, 2), random_state=1
    )
    assert set(np.unique(y)) == {-2.0, -1.0, 0.0, 1.0, 2.0}
    df = make_dyadic_regression(
        n_users=30,
        n_items=20,
        n_ratings=300,
        rating_range=(0.5, 1.0),
        discrete=False,
        as_frame=True,
        random_state=1,
    )
    assert list(df.columns) == ["user", "item", "rating"]
    assert df["user"].dtype == np.int64 and df["item"].dtype == np.int64
    assert df["rating"].dtype == np.float64
    assert df["rating"].between(0.5, 1.0).all()
    X, y = make_dyadic_regression(
        n_users=30,
        n_items=20,
        n_ratings=300,
        rating_range=(0.5, 1.0),
        discrete=False,
        random_state=1,
    )
    np.testing.assert_array_equal(df[["user", "item"]].to_numpy(), X)
    np.testing.assert_array_equal(df["rating"].to_numpy(), y)


@pytest.mark.parametrize(
    "sizes",
    [
        (200, 300, 10_000),  # enumeration of all pairs
        (3000, 4000, 20_000),  # draws with replacement, repeats dropped
        (20, 30, 600),  # every pair
        (50, 50, 10),  # fewer ratings than users
    ],
)
def test_unique_pairs_and_determinism(sizes):
    n_users, n_items, n_ratings = sizes
    kw = {"n_users": n_users, "n_items": n_items, "n_ratings": n_ratings}
    X, y = make_dyadic_regression(**kw, random_state=42)
    X2, y2 = make_dyadic_regression(**kw, random_state=42)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make_dyadic_regression(**kw, random_state=np.random.RandomState(42))
    assert X3.shape == X.shape
    X4, _ = make_dyadic_regression(**kw, random_state=43)
    assert not np.array_equal(X, X4)
    codes = X[:, 0] * n_items + X[:, 1]
    assert np.unique(codes).shape[0] == n_ratings
    assert X[:, 0].max() < n_users and X[:, 1].max() < n_items
    if n_ratings >= max(n_users, n_items):
        assert np.unique(X[:, 0]).shape[0] == n_users
        assert np.unique(X[:, 1]).shape[0] == n_items


def test_generator_random_state():
    kw = {"n_users": 40, "n_items": 30, "n_ratings": 500}
    X, y = make_dyadic_regression(**kw, random_state=np.random.default_rng(3))
    X2, y2 = make_dyadic_regression(**kw, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_popularity_skew():
    kw = {"n_users": 2000, "n_items": 3000, "n_ratings": 30_000, "random_state": 0}
    flat, _ = make_dyadic_regression(**kw, popularity_skew=0.0)
    skewed, _ = make_dyadic_regression(**kw, popularity_skew=1.0)
    # the most active user has many more ratings under the skewed law
    assert np.bincount(skewed[:, 0]).max() > 5 * np.bincount(flat[:, 0]).max()
    assert np.bincount(skewed[:, 1]).max() > 5 * np.bincount(flat[:, 1]).max()
    # and still everyone is rated
    assert np.unique(skewed[:, 0]).shape[0] == 2000
    assert np.unique(skewed[:, 1]).shape[0] == 3000


@pytest.mark.parametrize("sizes", [(3000, 4000, 20_000), (200, 300, 10_000)])
def test_concentrated_popularity(sizes):
    # a law too concentrated for enough distinct pairs is flattened (large sparse
    # data) or sampled exactly (small data): never stuck, still distinct pairs
    n_users, n_items, n_ratings = sizes
    X, _ = make_dyadic_regression(
        n_users, n_items, n_ratings, popularity_skew=4.0, random_state=0
    )
    assert np.unique(X[:, 0] * n_items + X[:, 1]).shape[0] == n_ratings
    assert np.unique(X[:, 0]).shape[0] == n_users
    assert np.unique(X[:, 1]).shape[0] == n_items


def test_empty():
    X, y = make_dyadic_regression(n_users=3, n_items=4, n_ratings=0, random_state=0)
    assert X.shape == (0, 2) and y.shape == (0,)


# -------------------------------------------------------------------------------------
# generator: statistical behaviour
# -------------------------------------------------------------------------------------
@pytest.mark.parametrize("discrete", [True, False])
def test_dks_increases_with_non_uniformity(discrete):
    values = []
    for nu in LEVELS:
        X, y = make_dyadic_regression(
            non_uniformity=nu, discrete=discrete, random_state=0
        )
        values.append(_sorted_dks(X[:, 0], X[:, 1], y))
        if nu == 0.5:
            assert values[-1] == pytest.approx(_reference_dks(X[:, 0], X[:, 1], y))
    # measured (seed 0, defaults): discrete 0.283, 0.320, 0.353, 0.385, 0.422;
    # continuous 0.152, 0.202, 0.245, 0.288, 0.332
    steps = np.diff(values)
    assert np.all(steps > 0.02), values
    assert values[-1] - values[0] > 0.12, values


def test_dks_agrees_with_package():
    dks = getattr(dyadic, "dks_nonuniformity", None)
    if dks is None:
        pytest.skip("sklearn_smallfair.dyadic.dks_nonuniformity not available")
    X, y = make_dyadic_regression(non_uniformity=0.7, random_state=5)
    expected = _reference_dks(X[:, 0], X[:, 1], y)
    assert dks(y, users=X[:, 0], items=X[:, 1]) == pytest.approx(expected, abs=1e-9)


def _split(X, y, seed=0, test_size=0.2):
    """Held-out rows whose user and item are both seen in training."""
    frame = pd.DataFrame({"user": X[:, 0], "item": X[:, 1], "rating": y})
    test = np.random.default_rng(seed).random(frame.shape[0]) < test_size
    train, held = frame[~test], frame[test]
    user_mean = train.groupby("user")["rating"].mean()
    item_mean = train.groupby("item")["rating"].mean()
    held = held[held["user"].isin(user_mean.index) & held["item"].isin(item_mean.index)]
    pair_mean = (
        user_mean.loc[held["user"]].to_numpy() + item_mean.loc[held["item"]].to_numpy()
    ) / 2
    return train, held, pair_mean


def test_pair_mean_baseline_fails_on_eccentric_ratings():
    X, y = make_dyadic_regression(
        n_users=300, n_items=300, n_ratings=30_000, non_uniformity=1.0, random_state=0
    )
    _, held, pair_mean = _split(X, y)
    r = held["rating"].to_numpy()
    error = np.abs(r - pair_mean)
    # eccentricity of the held-out rating against the means of all the data
    frame = pd.DataFrame({"user": X[:, 0], "item": X[:, 1], "rating": y})
    full_pair = (
        frame.groupby("user")["rating"].mean().loc[held["user"]].to_numpy()
        + frame.groupby("item")["rating"].mean().loc[held["item"]].to_numpy()
    ) / 2
    ecc = np.abs(r - full_pair)
    low, high = np.quantile(ecc, [0.25, 0.75])
    central, eccentric = error[ecc <= low].mean(), error[ecc >= high].mean()
    # measured: about 0.21 (central) and 1.38 (eccentric)
    assert eccentric > 4 * central, (central, eccentric)


def test_entity_levels_inform_the_pair_mean():
    # at non_uniformity=1 the pair mean predicts much better than the global mean;
    # at 0 it does not help
    ratios = []
    for nu in (0.0, 1.0):
        X, y = make_dyadic_regression(
            n_users=300,
            n_items=300,
            n_ratings=30_000,
            non_uniformity=nu,
            random_state=0,
        )
        train, held, pair_mean = _split(X, y)
        r = held["rating"].to_numpy()
        global_err = np.abs(r - train["rating"].mean()).mean()
        ratios.append(np.abs(r - pair_mean).mean() / global_err)
    # measured: 1.01 and 0.64
    assert ratios[0] > 0.95, ratios
    assert ratios[1] < 0.75, ratios


@pytest.mark.parametrize(("nu", "rank"), [(0.0, 3), (0.5, 5), (1.0, 2)])
def test_low_rank_structure(nu, rank):
    # all pairs rated, no noise, continuous: the latent scores Phi^-1 of the
    # rating quantiles form a matrix of rank n_components (+2 for the levels)
    n_users, n_items = 40, 30
    X, y = make_dyadic_regression(
        n_users=n_users,
        n_items=n_items,
        n_ratings=n_users * n_items,
        rating_range=(0, 1),
        discrete=False,
        non_uniformity=nu,
        n_components=3,
        noise=0.0,
        random_state=0,
    )
    z = np.empty((n_users, n_items))
    z[X[:, 0], X[:, 1]] = special.ndtri(y)
    sv = np.linalg.svd(z, compute_uv=False)
    assert sv[rank - 1] > 1e-3 * sv[0]
    assert sv[rank] < 1e-8 * sv[0]


# -------------------------------------------------------------------------------------
# generator: argument checks
# -------------------------------------------------------------------------------------
_PARAM = "parameter of make_dyadic_regression must be"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_users": -1}, ValueError, rf"'n_users' {_PARAM} an int in the range \[1,"),
        ({"n_items": 0}, ValueError, rf"'n_items' {_PARAM} an int in the range \[1,"),
        (
            {"n_ratings": -5},
            ValueError,
            rf"'n_ratings' {_PARAM} an int in the range \[0,",
        ),
        ({"n_users": 2.5}, TypeError, rf"'n_users' {_PARAM} an int"),
        ({"n_users": True}, TypeError, rf"'n_users' {_PARAM} an int"),
        ({"n_users": 10, "n_items": 10, "n_ratings": 101}, ValueError, "at most"),
        ({"rating_range": (5, 1)}, ValueError, "high > low"),
        ({"rating_range": (3, 3)}, ValueError, "high > low"),
        ({"rating_range": (1, 4.5)}, ValueError, "integers"),
        ({"rating_range": 5}, TypeError, rf"'rating_range' {_PARAM} an array-like"),
        ({"rating_range": (1, 2, 3)}, TypeError, "pair of numbers"),
        ({"rating_range": (0, np.inf)}, ValueError, "finite"),
        (
            {"non_uniformity": 1.5},
            ValueError,
            rf"'non_uniformity' {_PARAM} a float in the range \[0.0, 1.0\]",
        ),
        ({"non_uniformity": -0.1}, ValueError, "non_uniformity"),
        ({"non_uniformity": np.nan}, ValueError, "non_uniformity"),
        ({"noise": 2}, ValueError, "noise"),
        ({"n_components": 0}, ValueError, "n_components"),
        ({"popularity_skew": -1}, ValueError, "popularity_skew"),
        ({"popularity_skew": np.inf}, ValueError, f"'popularity_skew' {_PARAM}"),
        ({"discrete": "yes"}, TypeError, f"'discrete' {_PARAM}"),
        ({"random_state": -1}, ValueError, f"'random_state' {_PARAM}"),
        ({"random_state": 2**32}, ValueError, f"'random_state' {_PARAM}"),
    ],
)
def test_generator_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_dyadic_regression(**kwargs)


def test_continuous_half_range_allowed():
    _, y = make_dyadic_regression(
        n_ratings=100, rating_range=(0.5, 5.0), discrete=False, random_state=0
    )
    assert y.min() >= 0.5 and y.max() <= 5.0


# -------------------------------------------------------------------------------------
# MovieLens reader
# -------------------------------------------------------------------------------------
ROWS = [
    (1, 1193, 5.0, 978300760),
    (1, 661, 3.0, 978302109),
    (2, 1357, 4.5, 978298709),
    (10, 1, 0.5, 978298413),
    (6040, 3952, 1.0, 956704887),
]


def _write(folder, fmt, rows=ROWS, name=None):
    def rating(r):
        return f"{r:g}"

    if fmt == "tab":
        text = "".join(f"{u}\t{i}\t{rating(r)}\t{t}\n" for u, i, r, t in rows)
        name = name or "u.data"
    elif fmt == "colons":
        text = "".join(f"{u}::{i}::{rating(r)}::{t}\n" for u, i, r, t in rows)
        name = name or "ratings.dat"
    else:
        text = "userId,movieId,rating,timestamp\n" + "".join(
            f"{u},{i},{rating(r)},{t}\n" for u, i, r, t in rows
        )
        name = name or "ratings.csv"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("fmt", ["tab", "colons", "csv"])
def test_load_movielens_formats(tmp_path, fmt):
    path = _write(tmp_path / fmt, fmt)
    expected_X = np.array([[u, i] for u, i, _, _ in ROWS], dtype=np.int64)
    expected_y = np.array([r for _, _, r, _ in ROWS])
    for where in (path, path.parent, str(path)):
        X, y = load_movielens(where)
        assert X.dtype == np.int64 and y.dtype == np.float64
        np.testing.assert_array_equal(X, expected_X)
        np.testing.assert_array_equal(y, expected_y)
    frame = load_movielens(path, as_frame=True)
    assert list(frame.columns) == ["user", "item", "rating", "timestamp"]
    assert frame["timestamp"].dtype == np.int64
    assert frame["timestamp"].tolist() == [t for *_, t in ROWS]
    assert frame.index.tolist() == list(range(len(ROWS)))


def test_load_movielens_formats_identical(tmp_path):
    X, y = make_dyadic_regression(n_ratings=500, random_state=0)
    rows = [(u, i, r, 10**9 + k) for k, ((u, i), r) in enumerate(zip(X, y))]
    results = [
        load_movielens(_write(tmp_path / fmt, fmt, rows), as_frame=True)
        for fmt in ("tab", "colons", "csv")
    ]
    for other in results[1:]:
        pd.testing.assert_frame_equal(results[0], other)
    np.testing.assert_array_equal(results[0][["user", "item"]].to_numpy(), X)
    np.testing.assert_array_equal(results[0]["rating"].to_numpy(), y)


def test_load_movielens_any_file_name(tmp_path):
    # e.g. the u1.base / u1.test splits of MovieLens 100K
    path = _write(tmp_path, "tab", name="u1.base")
    X, _ = load_movielens(path)
    assert X.shape == (len(ROWS), 2)


def test_load_movielens_directory_order(tmp_path):
    _write(tmp_path, "csv", rows=ROWS[:2])
    _write(tmp_path, "tab", rows=ROWS[:3])
    assert load_movielens(tmp_path)[0].shape == (3, 2)  # u.data first


def test_load_movielens_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_movielens(tmp_path / "nothing.dat")
    with pytest.raises(FileNotFoundError, match="none of the MovieLens"):
        load_movielens(tmp_path)


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("u.data", "", "empty"),
        ("u.data", "1 2 3 4\n", "Unrecognized format"),
        ("ratings.csv", "user,item,rating\n1,2,3\n", "Unrecognized format"),
        ("ratings.csv", "userId,movieId,rating\n1,2,3\n", "header"),
        ("ratings.csv", "userId,movieId,rating,timestamp\n", "no ratings"),
        ("u.data", "1\t2\t3\t4\n5\t6\tx\t8\n", "Malformed"),
        ("u.data", "1\t2\t3\t4\n5\t6\t7\n", "Malformed"),
        ("u.data", "1\t2\t3\t4\n5\t6\t7\t8\t9\n", "Malformed"),
        ("u.data", "1\t2\t3\t4\t9\n5\t6\t7\t8\t9\n", "Malformed"),
        ("u.data", "1\t2\t3\n5\t6\t7\n", "Malformed"),
        ("u.data", "1.5\t2\t3\t4\n", "Malformed"),
        ("ratings.dat", "1::2::3::4\n1::2::3\n", "Malformed"),
        ("ratings.dat", "1::2::3::4\n1:2::3::4::\n", "Malformed"),
        ("ratings.dat", "1::2::3::4::5\n", "Malformed"),
        ("ratings.csv", "userId,movieId,rating,timestamp\n1,2,3,4,5\n", "Malformed"),
        ("ratings.csv", "userId,movieId,rating,timestamp\n1,2,a,4\n", "Malformed"),
    ],
)
def test_load_movielens_bad_files(tmp_path, name, text, match):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_movielens(path)
