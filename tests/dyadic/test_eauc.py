"""EAUC, the eccentricity curve and D_KS against straightforward references."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_smallfair.dyadic import (
    EccentricityCurve,
    _curve_areas,
    _dks,
    dks_nonuniformity,
    eauc_score,
    eccentricity,
    eccentricity_curve,
    entity_means,
)
from sklearn_smallfair.exceptions import DyadicDataWarning

METHODS = ["ordered", "grouped", "bins"]


def _data(seed=0, n_train=3000, n_test=1000, n_users=60, n_items=40, discrete=True):
    """Ratings with user and item levels: eccentric ratings exist, ties too."""
    rng = np.random.default_rng(seed)

    def draw(n):
        u = rng.integers(0, n_users, n)
        i = rng.integers(0, n_items, n)
        r = 3 + 0.8 * np.sin(u) + 0.6 * np.cos(3 * i) + rng.normal(scale=1.0, size=n)
        r = np.clip(r, 1, 5)
        return (np.round(r) if discrete else r), u, i

    r, u, i = draw(n_train)
    y, tu, ti = draw(n_test)
    # a prediction shrunk toward the pair's average, with noise: eccentricity bias
    avg = entity_means(r, users=u, items=i)
    pair = (avg.user_mean(tu) + avg.item_mean(ti)) / 2
    pred = 0.3 * y + 0.7 * pair + rng.normal(scale=0.2, size=n_test)
    train = dict(train_ratings=r, train_users=u, train_items=i)
    return y, pred, tu, ti, train


def _reference(y, pred, users, items, train, *, error="absolute", tail="both",
               method="ordered", n_bins=20):  # fmt: skip
    """EAUC the straightforward pandas way."""
    tr = pd.DataFrame(
        {"r": train["train_ratings"], "u": train["train_users"],
         "i": train["train_items"]}
    )  # fmt: skip
    um = tr.groupby("u")["r"].mean().rename("um")
    im = tr.groupby("i")["r"].mean().rename("im")
    df = pd.DataFrame({"y": y, "p": pred, "u": users, "i": items})
    df = df.join(um, on="u").join(im, on="i").dropna()
    d = df["y"] - (df["um"] + df["im"]) / 2
    df["err"] = (
        (df["y"] - df["p"]).abs() if error == "absolute" else ((df["y"] - df["p"]) ** 2)
    )
    rng_ = df["y"].max() - df["y"].min()
    if tail == "upper":
        df, d = df[d >= 0], d[d >= 0]
    elif tail == "lower":
        df, d = df[d <= 0], d[d <= 0]
    df = df.assign(ecc=d.abs())
    if method == "ordered":
        cur = df.sort_values(["ecc", "err"])
        x, v = cur["ecc"].to_numpy(), cur["err"].to_numpy()
    elif method == "grouped":
        g = df.groupby("ecc")["err"].mean()
        x, v = g.index.to_numpy(), g.to_numpy()
    else:
        top = df["ecc"].max()
        b = np.minimum((df["ecc"] * (n_bins / top)).astype(int), n_bins - 1)
        g = df.groupby(b)[["ecc", "err"]].mean()
        x, v = g["ecc"].to_numpy(), g["err"].to_numpy()
    area = np.sum(np.diff(x) * (v[1:] + v[:-1])) / 2
    return area / rng_ ** (2 if error == "absolute" else 3)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("error", ["absolute", "squared"])
@pytest.mark.parametrize("tail", ["both", "upper", "lower"])
def test_eauc_matches_pandas_reference(method, error, tail):
    y, pred, u, i, train = _data(1)
    kw = dict(users=u, items=i, error=error, tail=tail, method=method, **train)
    got = eauc_score(y, pred, **kw)
    ref = _reference(y, pred, u, i, train, error=error, tail=tail, method=method)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-15)
    curve = eccentricity_curve(y, pred, **kw)
    assert curve.eauc == pytest.approx(got, rel=1e-12)
    assert np.all(np.diff(curve.eccentricity) >= 0)
    assert 0 < got < 1


@pytest.mark.parametrize("discrete", [True, False])
def test_ordered_area_without_and_with_ties(discrete):
    y, pred, u, i, train = _data(2, discrete=discrete)
    pred = np.round(pred, 1)  # equal errors as well
    got = eauc_score(y, pred, users=u, items=i, **train)
    assert got == pytest.approx(_reference(y, pred, u, i, train), rel=1e-12)


def test_perfect_predictions_score_zero():
    y, _, u, i, train = _data(3)
    for method in METHODS:
        assert eauc_score(y, y, users=u, items=i, method=method, **train) == 0.0


@pytest.mark.parametrize("error", ["absolute", "squared"])
@pytest.mark.parametrize("method", METHODS)
def test_invariant_to_shift_and_positive_scale(error, method):
    y, pred, u, i, train = _data(4)
    kw = dict(users=u, items=i, error=error, method=method)
    base = eauc_score(y, pred, **kw, **train)
    for a, b in [(2.0, -7.0), (0.1, 100.0), (13.0, 0.5)]:
        moved = dict(train, train_ratings=a * train["train_ratings"] + b)
        other = eauc_score(a * y + b, a * pred + b, **kw, **moved)
        assert other == pytest.approx(base, rel=1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_invariant_to_row_order(method):
    y, pred, u, i, train = _data(5)
    base = eauc_score(y, pred, users=u, items=i, method=method, **train)
    rng = np.random.default_rng(0)
    for _ in range(3):
        p = rng.permutation(y.shape[0])
        q = rng.permutation(train["train_ratings"].shape[0])
        tr = {k: v[q] for k, v in train.items()}
        other = eauc_score(y[p], pred[p], users=u[p], items=i[p], method=method, **tr)
        assert other == pytest.approx(base, rel=1e-13, abs=0)


def test_ecc_order_puts_values_equal_in_high_bits_in_place():
    n = 1024  # 10 low bits hold the row index
    ecc = np.full(n, 1.0)
    ecc[0] = np.nextafter(1.0, 2.0)  # equal to 1.0 in all but the lowest bit
    ecc[5] = 0.5
    order, e = _curve_areas._ecc_order(ecc)
    np.testing.assert_array_equal(order, np.argsort(ecc, kind="stable"))
    np.testing.assert_array_equal(e, np.sort(ecc))
    rng = np.random.default_rng(0)
    for e in (rng.random(5000), np.round(rng.random(5000), 2), np.zeros(3)):
        order, _ = _curve_areas._ecc_order(e)
        np.testing.assert_array_equal(order, np.argsort(e, kind="stable"))


def test_eccentricity_values_and_options():
    train = dict(train_ratings=[4, 2, 3, 3], train_users=[0, 0, 1, 1],
                 train_items=[0, 1, 0, 1])  # fmt: skip
    ecc = eccentricity([5, 1, 3], users=[0, 1, 0], items=[0, 0, 1], **train)
    np.testing.assert_allclose(ecc, [1.75, 2.25, 0.25])
    signed = eccentricity(
        [5, 1, 3], users=[0, 1, 0], items=[0, 0, 1], signed=True, **train
    )
    np.testing.assert_allclose(signed, [1.75, -2.25, 0.25])
    with pytest.warns(DyadicDataWarning, match="1 of 2 rating"):
        ecc = eccentricity([5, 1], users=[0, 9], items=[0, 0], **train)
    assert np.isnan(ecc[1]) and ecc[0] == 1.75
    ecc = eccentricity(
        [5, 1], users=[0, 9], items=[0, 0], unknown="global_mean", **train
    )
    np.testing.assert_allclose(ecc, [1.75, abs(1 - (3 + 3.5) / 2)])
    means = entity_means(
        **{k[6:]: v for k, v in train.items()} | {"ratings": [4, 2, 3, 3]}
    )
    np.testing.assert_allclose(
        eccentricity([5, 1], users=[0, 1], items=[0, 0], means=means), [1.75, 2.25]
    )


def test_unknown_entities_drop_error_global_mean():
    y, pred, u, i, train = _data(6)
    u = u.copy()
    u[:7] = 10_000  # users never seen in training
    with pytest.warns(DyadicDataWarning, match="7 of 1000 rating"):
        curve = eccentricity_curve(y, pred, users=u, items=i, **train)
    assert curve.n_dropped == 7 and curve.n_rows == 993
    with pytest.warns(DyadicDataWarning):
        dropped = eauc_score(y, pred, users=u, items=i, **train)
    kept = eauc_score(y[7:], pred[7:], users=u[7:], items=i[7:], **train)
    assert dropped == kept
    with pytest.raises(ValueError, match=r"7 row.*user without training.*10000"):
        eauc_score(y, pred, users=u, items=i, unknown="error", **train)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filled = eccentricity_curve(
            y, pred, users=u, items=i, unknown="global_mean", **train
        )
    assert filled.n_dropped == 0 and filled.n_rows == 1000
    with pytest.raises(ValueError, match="no row is left"):
        eauc_score(y, pred, users=u + 50_000, items=i, **train)


def test_string_ids_and_means_argument():
    y, pred, u, i, train = _data(7)
    names = np.array([f"user-{k}" for k in range(100)], dtype=object)
    su, tu = names[u], names[train["train_users"]]
    base = eauc_score(y, pred, users=u, items=i, **train)
    other = eauc_score(y, pred, users=su, items=i, **dict(train, train_users=tu))
    assert other == base
    means = entity_means(
        train["train_ratings"], users=train["train_users"], items=train["train_items"]
    )
    assert eauc_score(y, pred, users=u, items=i, means=means) == base


def test_means_from_evaluated_data_warns():
    y, pred, u, i, _ = _data(8)
    with pytest.warns(DyadicDataWarning, match="no training ratings given"):
        got = eauc_score(y, pred, users=u, items=i)
    own = dict(train_ratings=y, train_users=u, train_items=i)
    assert got == eauc_score(y, pred, users=u, items=i, **own)


def test_curve_object():
    y, pred, u, i, train = _data(9)
    curve = eccentricity_curve(y, pred, users=u, items=i, method="bins", n_bins=8,
                               **train)  # fmt: skip
    assert isinstance(curve, EccentricityCurve)
    assert curve.eccentricity.shape[0] <= 8
    frame = curve.to_frame()
    assert list(frame.columns) == ["eccentricity", "error"]
    assert "eauc=" in repr(curve) and "n_dropped=0" in repr(curve)
    ordered = eccentricity_curve(y, pred, users=u, items=i, **train)
    assert ordered.eccentricity.shape[0] == y.shape[0]
    assert ordered.normalizer == (y.max() - y.min()) ** 2


def test_bad_input():
    y, pred, u, i, train = _data(10, n_test=50)
    kw = dict(users=u, items=i, **train)
    with pytest.raises(ValueError, match="inconsistent lengths"):
        eauc_score(y, pred[:-1], **kw)
    with pytest.raises(ValueError, match="users has 49 entries"):
        eauc_score(y, pred, **dict(kw, users=u[:-1]))
    bad = y.astype(float).copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="y_true contains 1 missing"):
        eauc_score(bad, pred, **kw)
    with pytest.raises(ValueError, match="y_pred contains 1 missing"):
        eauc_score(y, bad, **kw)
    tr = dict(train, train_ratings=train["train_ratings"].astype(float))
    tr["train_ratings"][0] = np.inf
    with pytest.raises(ValueError, match="train_ratings contains 1 missing"):
        eauc_score(y, pred, users=u, items=i, **tr)
    with pytest.raises(ValueError, match=r"rating range.*is zero"):
        eauc_score(np.full(50, 3.0), pred, **kw)
    for name, value in [
        ("error", "huber"),
        ("method", "auc"),
        ("tail", "left"),
        ("unknown", "ignore"),
    ]:
        with pytest.raises(
            ValueError, match=f"'{name}' parameter of eauc_score must be a str among"
        ):
            eauc_score(y, pred, **{name: value}, **kw)
    with pytest.raises(
        ValueError,
        match=r"'n_bins' parameter of eauc_score must be an int in the range \[1,",
    ):
        eauc_score(y, pred, method="bins", n_bins=0, **kw)
    with pytest.raises(ValueError, match="go together"):
        eauc_score(y, pred, users=u, items=i, train_ratings=train["train_ratings"])
    means = entity_means(y, users=u, items=i)
    with pytest.raises(ValueError, match="not both"):
        eauc_score(y, pred, means=means, **kw)
    with pytest.raises(
        TypeError, match="'means' parameter of eauc_score must be an instance of"
    ):
        eauc_score(y, pred, users=u, items=i, means={"a": 1})
    with pytest.raises(TypeError, match="y_true must hold numbers"):
        eauc_score(np.array(["a"] * 50), pred, **kw)
    with pytest.raises(TypeError, match="must be array-like"):
        eauc_score(y, pred, users={"a": 1}, items=i, **train)
    # every training rating is 5, so every evaluated rating is below its pair's
    # average and the upper tail is empty
    high = dict(train, train_ratings=np.full(train["train_ratings"].shape, 5.0))
    low = np.where(np.arange(50) % 2, 1.0, 2.0)
    with pytest.raises(ValueError, match="'upper' tail is empty"):
        eauc_score(low, low, users=u, items=i, tail="upper", **high)


# =====================================================================================
# D_KS
# =====================================================================================
def _dks_reference(y, users, items):
    lo, hi = np.min(y), np.max(y)
    uniform = stats.uniform(loc=lo, scale=hi - lo).cdf
    df = pd.DataFrame({"y": y, "u": users, "i": items})
    per = []
    for key in ("u", "i"):
        ks = df.groupby(key)["y"].apply(lambda v: stats.kstest(v, uniform).statistic)
        per.append(ks)
    return float(pd.concat(per).mean()), per


@pytest.mark.parametrize("discrete", [True, False])
@pytest.mark.parametrize("force_sort", [False, True])
def test_dks_matches_scipy_kstest(monkeypatch, discrete, force_sort):
    if force_sort:
        monkeypatch.setattr(_dks, "_KS_HISTOGRAM_CELLS", 0)
    y, _, u, i, _ = _data(11, n_test=3000, discrete=discrete)
    if force_sort and discrete:
        u = u * 1000  # sparse ids: many entity cells, so the sort path is taken
    ref, (ref_u, ref_i) = _dks_reference(y, u, i)
    got, got_u, got_i = dks_nonuniformity(y, users=u, items=i, return_per_entity=True)
    assert got == pytest.approx(ref, rel=1e-12)
    np.testing.assert_allclose(got_u.to_numpy(), ref_u.to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(got_i.to_numpy(), ref_i.to_numpy(), rtol=1e-12)
    np.testing.assert_array_equal(got_u.index.to_numpy(), ref_u.index.to_numpy())
    assert dks_nonuniformity(y, users=u, items=i) == got


def test_dks_closed_forms_and_errors():
    # each entity rates only one extreme value: the statistic of a point mass at
    # an end of the range is 1
    y = [1, 1, 5, 5]
    assert dks_nonuniformity(y, users=[0, 0, 1, 1], items=[0, 0, 1, 1]) == 1.0
    # a single rating at the middle of the range: max(1 - 1/2, 1/2) = 1/2
    assert dks_nonuniformity(
        [1, 3, 5], users=[0, 1, 2], items=[0, 1, 2]
    ) == pytest.approx((1 + 0.5 + 1) / 3)
    # string ids give the same as integer ids
    y, _, u, i, _ = _data(12)
    names = np.array([f"u{k}" for k in range(100)], dtype=object)
    assert dks_nonuniformity(y, users=names[u], items=i) == pytest.approx(
        dks_nonuniformity(y, users=u, items=i), rel=1e-14
    )
    with pytest.raises(ValueError, match="ratings are all equal"):
        dks_nonuniformity([2, 2], users=[0, 1], items=[0, 1])
    with pytest.raises(ValueError, match="items has 1 entries"):
        dks_nonuniformity([2, 3], users=[0, 1], items=[0])
    with pytest.raises(ValueError, match="y contains 1 missing"):
        dks_nonuniformity([2, np.nan], users=[0, 1], items=[0, 1])
    with pytest.raises(ValueError, match="users contains 1 missing"):
        dks_nonuniformity([2, 3], users=[0, None], items=[0, 1])


def test_pair_average_model_has_much_larger_eauc_than_an_oracle():
    from sklearn_smallfair.datasets import make_dyadic_regression
    from sklearn_smallfair.dyadic import DyadicMeanRegressor

    X, y = make_dyadic_regression(
        n_users=200, n_items=150, n_ratings=12_000, non_uniformity=0.9, random_state=3
    )
    tr, te = slice(0, 9000), slice(9000, None)
    model = DyadicMeanRegressor().fit(X[tr], y[tr])
    oracle = y[te] + np.random.default_rng(0).normal(scale=0.3, size=3000)
    kw = dict(users=X[te, 0], items=X[te, 1], means=model.entity_means_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DyadicDataWarning)
        biased = eauc_score(y[te], model.predict(X[te]), **kw)
        good = eauc_score(y[te], oracle, **kw)
    # measured: 0.154 against 0.033
    assert biased > 3 * good
    # the pair average's error is its eccentricity: the curve is the diagonal
    curve = eccentricity_curve(y[te], model.predict(X[te]), **kw)
    np.testing.assert_allclose(curve.error, curve.eccentricity, atol=1e-12)


def test_mixed_type_ids_against_integer_training_ids():
    means = entity_means([1, 2, 3, 4], users=[0, 0, 5, 5], items=[1, 1, 2, 2])
    mixed = np.array([0, "x", 5, 3, 7.5, "5"], dtype=object)
    np.testing.assert_array_equal(
        means.user_mean(mixed), [1.5, np.nan, 3.5, np.nan, np.nan, np.nan]
    )


@pytest.mark.parametrize("function", [eauc_score, eccentricity_curve, eccentricity])
def test_warnings_point_at_the_caller(function):
    y, pred, u, i, train = _data(11, n_test=200)
    args = (y,) if function is eccentricity else (y, pred)
    with pytest.warns(DyadicDataWarning, match="no training ratings given") as rec:
        function(*args, users=u, items=i)
    assert [w.filename for w in rec] == [__file__]
    u = u.copy()
    u[:3] = 10_000  # users never seen in training
    with pytest.warns(DyadicDataWarning, match="3 of 200 rating") as rec:
        function(*args, users=u, items=i, **train)
    assert [w.filename for w in rec] == [__file__]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_bins", [1, 7])
def test_curve_eauc_equals_score(method, n_bins):
    y, pred, u, i, train = _data(12)
    kw = dict(users=u, items=i, method=method, n_bins=n_bins, **train)
    curve = eccentricity_curve(y, pred, **kw)
    assert curve.method == method and curve.n_dropped == 0
    assert curve.eauc == pytest.approx(eauc_score(y, pred, **kw), rel=1e-12)
    if method == "bins":
        assert curve.eccentricity.shape[0] <= n_bins


def test_option_types():
    y, pred, u, i, train = _data(13, n_test=50)
    kw = dict(users=u, items=i, **train)
    for bad in (2.0, True, "3"):
        with pytest.raises(
            TypeError, match="'n_bins' parameter of eccentricity_curve must be an int"
        ):
            eccentricity_curve(y, pred, method="bins", n_bins=bad, **kw)
    assert eccentricity_curve(y, pred, n_bins=np.int64(3), **kw).n_rows == 50
