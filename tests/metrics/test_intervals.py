"""Tests of the intervals of group_metrics(confidence_level=...) and of
disparity_intervals."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binomtest, norm

from sklearn_smallfair import (
    _column_intervals,
    _draws,
    enumerate_confusion_matrices,
    reference_counts,
)
from sklearn_smallfair._column_intervals import INTERVAL_METHODS
from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair._draws import draw_quantiles
from sklearn_smallfair._proportion_intervals import (
    clopper_pearson_interval,
    jeffreys_interval,
    katz_interval,
    newcombe_interval,
    wilson_interval,
)
from sklearn_smallfair.metrics import (
    _disparity_intervals,
    compute_metric,
    disparity_intervals,
    get_metric,
    group_metrics,
    metric_names,
)
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

ALPHA = 0.05
Z = norm.ppf(1 - ALPHA / 2)
CLOSED = ("clopper-pearson", "wilson", "jeffreys")

# Which interval methods each single-group metric of the registry takes. A metric
# added to the registry fails test_method_table_covers_the_registry until listed.
PROPORTION = set(INTERVAL_METHODS)
DRAWS_ONLY = {"auto", "posterior", "bootstrap"}
METHOD_TABLE = {
    **{m: PROPORTION for m in metric_names(family="binomial")},
    **{m: PROPORTION for m in metric_names(family="joint_ratio")},
    "f1": PROPORTION,
    "f1_original": PROPORTION,
    "mcc": DRAWS_ONLY,
    "pt": DRAWS_ONLY,
    "mb": DRAWS_ONLY,
    "ofi": DRAWS_ONLY,
    "te": DRAWS_ONLY,
}

# Varied small groups (TP, FN, FP, TN), with holes: "d" has no positive, "e" no
# predicted positive, "f" is perfect.
COUNTS = {
    "a": [40, 10, 5, 45],
    "b": [6, 4, 1, 9],
    "c": [2, 1, 1, 3],
    "d": [0, 0, 3, 4],
    "e": [0, 3, 0, 5],
    "f": [4, 0, 0, 6],
}


def _table(**kw):
    kw.setdefault("zero_division", np.nan)
    kw.setdefault("confidence_level", 0.95)
    return group_metrics(counts=COUNTS, **kw)


# ---------------------------------------------------------------------------------
# The method table
# ---------------------------------------------------------------------------------
def test_method_table_covers_the_registry():
    assert sorted(METHOD_TABLE) == sorted(metric_names())


@pytest.mark.parametrize("name", sorted(METHOD_TABLE))
def test_each_metric_takes_exactly_its_methods(name):
    for method in INTERVAL_METHODS:
        kw = dict(metrics=name, interval_method=method, n_resamples=200, random_state=0)
        if method in METHOD_TABLE[name]:
            table = _table(**kw)
            low, high = table[f"{name}_low"], table[f"{name}_high"]
            defined = ~table[f"{name}_undefined"]
            assert low[defined].notna().sum() >= 3
            assert (low[defined] <= high[defined]).all()
        else:
            with pytest.raises(ValueError, match="'auto', 'posterior' or 'bootstrap'"):
                _table(**kw)


def test_f1_is_an_increasing_function_of_one_proportion():
    # f1 = 2x / (1 + x) with x = TP / (TP + FN + FP): checked on every matrix
    # of size <= 12 against the registry's own formula.
    form = _column_intervals.proportion_form(get_metric("f1"))
    for n in range(1, 13):
        cms = enumerate_confusion_matrices(n)
        k, m = form.split(cms)
        with np.errstate(invalid="ignore", divide="ignore"):
            x = k / m
        for name in ("f1", "f1_original"):
            value = compute_metric(name, cms)
            defined = ~np.isnan(value)
            assert defined.sum() > 0
            np.testing.assert_allclose(form.apply(x[defined]), value[defined])


def test_metrics_are_homogeneous_of_degree_zero():
    # The posterior draws are unnormalised gammas: every metric must be unchanged
    # when all cells are scaled.
    cms = enumerate_confusion_matrices(9).astype(float)
    for name in metric_names(n_groups=1):
        a = compute_metric(name, cms)
        b = compute_metric(name, cms * 3.7)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15, equal_nan=True)


# ---------------------------------------------------------------------------------
# Closed-form intervals of one proportion
# ---------------------------------------------------------------------------------
def _all_k_n(max_n=40):
    pairs = [(k, n) for n in range(1, max_n + 1) for k in range(n + 1)]
    k, n = np.array(pairs).T
    return k, n


def test_clopper_pearson_equals_scipy_exact():
    k, n = _all_k_n()
    low, high = clopper_pearson_interval(k, n, ALPHA)
    ref = [
        binomtest(int(a), int(b)).proportion_ci(method="exact") for a, b in zip(k, n)
    ]
    np.testing.assert_allclose(low, [r.low for r in ref], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(high, [r.high for r in ref], rtol=1e-10, atol=1e-14)
    assert len(k) == 860


def test_wilson_equals_scipy_and_the_formula():
    k, n = _all_k_n()
    low, high = wilson_interval(k, n, ALPHA)
    ref = [
        binomtest(int(a), int(b)).proportion_ci(method="wilson") for a, b in zip(k, n)
    ]
    np.testing.assert_allclose(low, [r.low for r in ref], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(high, [r.high for r in ref], rtol=1e-10, atol=1e-14)
    # (p + z^2 / 2n +- z sqrt(p q / n + z^2 / 4n^2)) / (1 + z^2 / n)
    p = k / n
    center = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z * np.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2)) / (1 + Z**2 / n)
    np.testing.assert_allclose(low, center - half, atol=1e-14)
    np.testing.assert_allclose(high, center + half, atol=1e-14)


def test_jeffreys_equals_its_formula():
    k, n = _all_k_n()
    low, high = jeffreys_interval(k, n, ALPHA)
    ppf_low = beta.ppf(ALPHA / 2, k + 0.5, n - k + 0.5)
    ppf_high = beta.ppf(1 - ALPHA / 2, k + 0.5, n - k + 0.5)
    np.testing.assert_allclose(low, np.where(k == 0, 0.0, ppf_low), atol=1e-15)
    np.testing.assert_allclose(high, np.where(k == n, 1.0, ppf_high), atol=1e-15)
    # a published value (Brown, Cai and DasGupta 2001 use it as an example):
    # 0 successes in 10: [0, 0.217]
    assert jeffreys_interval(0, 10, ALPHA)[1] == pytest.approx(0.2172, abs=1e-4)


def test_intervals_are_nan_without_trials():
    for func in (clopper_pearson_interval, wilson_interval, jeffreys_interval):
        low, high = func(np.array([0, 1]), np.array([0, 2]), ALPHA)
        assert np.isnan(low[0]) and np.isnan(high[0])
        assert np.isfinite(low[1]) and np.isfinite(high[1])


@pytest.mark.parametrize("method", CLOSED)
def test_group_metrics_uses_the_right_cells(method):
    func = {
        "clopper-pearson": clopper_pearson_interval,
        "wilson": wilson_interval,
        "jeffreys": jeffreys_interval,
    }[method]
    table = _table(metrics=["tpr", "ppv", "acc", "prev", "f1"], interval_method=method)
    c = np.array(list(COUNTS.values()), dtype=float)
    tp, fn, fp, tn = c.T
    cases = {
        "tpr": (tp, tp + fn),
        "ppv": (tp, tp + fp),
        "acc": (tp + tn, c.sum(1)),
        "prev": (tp + fn, c.sum(1)),
    }
    for name, (k, m) in cases.items():
        low, high = func(k, m, ALPHA)
        defined = m > 0
        np.testing.assert_allclose(table[f"{name}_low"][defined], low[defined])
        np.testing.assert_allclose(table[f"{name}_high"][defined], high[defined])
        assert table[f"{name}_low"][~defined].isna().all()
    low, high = func(tp, tp + fn + fp, ALPHA)
    np.testing.assert_allclose(table["f1_low"], 2 * low / (1 + low))
    np.testing.assert_allclose(table["f1_high"], 2 * high / (1 + high))
    assert table.attrs["interval_method"]["tpr"] == method


# ---------------------------------------------------------------------------------
# Posterior intervals
# ---------------------------------------------------------------------------------
def test_smoothed_value_is_the_posterior_mean():
    lam = 6.0
    table = _table(
        metrics=["tpr", "acc"],
        smoothing=CrossPriorSmoothing(lam),
        interval_method="posterior",
    )
    c = np.array(list(COUNTS.values()), dtype=float)
    a = c + lam * reference_counts(c) / reference_counts(c).sum(1, keepdims=True)
    tpr = beta(a[:, 0], a[:, 1])
    np.testing.assert_allclose(table["tpr_smoothed"], tpr.mean())
    np.testing.assert_allclose(table["tpr_smoothed_low"], tpr.ppf(ALPHA / 2))
    np.testing.assert_allclose(table["tpr_smoothed_high"], tpr.ppf(1 - ALPHA / 2))
    acc = beta(a[:, 0] + a[:, 3], a[:, 1] + a[:, 2])  # aggregation property
    np.testing.assert_allclose(table["acc_smoothed"], acc.mean())
    np.testing.assert_allclose(table["acc_smoothed_low"], acc.ppf(ALPHA / 2))
    assert set(table.attrs["interval_method"].values()) == {"posterior"}


def test_additive_smoothing_prior_is_eps():
    table = _table(
        metrics="ppv", smoothing=AdditiveSmoothing(2.0), interval_method="posterior"
    )
    c = np.array(list(COUNTS.values()), dtype=float)
    ppv = beta(c[:, 0] + 2, c[:, 2] + 2)
    np.testing.assert_allclose(table["ppv_smoothed"], ppv.mean())
    np.testing.assert_allclose(table["ppv_smoothed_low"], ppv.ppf(ALPHA / 2))
    np.testing.assert_allclose(table["ppv_smoothed_high"], ppv.ppf(1 - ALPHA / 2))
    # the default is the hull of that posterior interval and the raw interval
    auto = _table(metrics="ppv", smoothing=AdditiveSmoothing(2.0))
    assert auto.attrs["interval_method"]["ppv_smoothed"] == "posterior-hull"
    np.testing.assert_allclose(
        auto["ppv_smoothed_low"],
        np.fmin(ppv.ppf(ALPHA / 2), auto["ppv_low"]),
    )
    np.testing.assert_allclose(
        auto["ppv_smoothed_high"],
        np.fmax(ppv.ppf(1 - ALPHA / 2), auto["ppv_high"]),
    )


def test_raw_posterior_uses_the_jeffreys_prior():
    table = _table(metrics=["fpr", "acc"], interval_method="posterior")
    c = np.array(list(COUNTS.values()), dtype=float)
    fpr = beta(c[:, 2] + 0.5, c[:, 3] + 0.5)
    acc = beta(c[:, 0] + c[:, 3] + 1.0, c[:, 1] + c[:, 2] + 1.0)
    np.testing.assert_allclose(table["fpr_low"], fpr.ppf(ALPHA / 2))
    np.testing.assert_allclose(table["acc_high"], acc.ppf(1 - ALPHA / 2))


def _quantile_se(sample, q, n):
    """Standard error of the q-quantile estimated from n draws of ``sample``'s law
    (asymptotic: sqrt(q (1 - q) / n) / density, the density from the sample)."""
    h = 0.01
    lo, hi = np.quantile(sample, [q - h, q + h])
    density = 2 * h / max(hi - lo, 1e-12)
    return np.sqrt(q * (1 - q) / n) / density


@pytest.mark.parametrize("name", ["mcc", "pt", "mb"])
def test_drawn_posterior_agrees_with_brute_force_dirichlet(name):
    n_resamples = 20_000
    lam = 8.0
    table = _table(
        metrics=name,
        interval_method="posterior",
        smoothing=CrossPriorSmoothing(lam),
        n_resamples=n_resamples,
        random_state=1,
    )
    c = np.array(list(COUNTS.values()), dtype=float)
    ref = reference_counts(c)
    priors = {
        "": np.full_like(c, 0.5),
        "_smoothed": lam * ref / ref.sum(1, keepdims=True),
    }
    rng = np.random.default_rng(12345)
    checked = 0
    for suffix, prior in priors.items():
        for i, group in enumerate(COUNTS):
            if table.loc[group, f"{name}{suffix}_undefined"]:
                continue
            brute = rng.dirichlet(c[i] + prior[i], size=400_000)
            values = compute_metric(name, brute)
            values = values[~np.isnan(values)]
            for q, col in ((ALPHA / 2, "low"), (1 - ALPHA / 2, "high")):
                got = table.loc[group, f"{name}{suffix}_{col}"]
                want = np.quantile(values, q)
                se = np.hypot(
                    _quantile_se(values, q, n_resamples),
                    _quantile_se(values, q, values.size),
                )
                assert abs(got - want) <= 5 * se + 1e-12, (group, suffix, col)
                checked += 1
    assert checked >= 16


def test_draw_quantiles_matches_numpy_and_skips_undefined_draws():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(5, 301))
    values[1, :50] = np.nan
    values[2, 7] = np.inf
    values[3] = np.nan
    low, high = draw_quantiles(values, 0.1)
    for i in (0, 1, 2, 4):
        row = values[i][np.isfinite(values[i])]
        np.testing.assert_allclose([low[i], high[i]], np.quantile(row, [0.05, 0.95]))
    assert np.isnan(low[3]) and np.isnan(high[3])


def test_chunks_do_not_change_the_draws(monkeypatch):
    kw = dict(
        metrics=["mcc", "tpr"],
        interval_method="bootstrap",
        n_resamples=300,
        random_state=4,
    )
    whole = _table(**kw)
    monkeypatch.setattr(_draws, "_CHUNK_DRAWS", 600)  # two groups per chunk
    pd.testing.assert_frame_equal(_table(**kw), whole)


# ---------------------------------------------------------------------------------
# Stratified bootstrap
# ---------------------------------------------------------------------------------
def _plain_bootstrap(name, counts, labels, n_resamples, random_state, prior=None):
    """The straightforward bootstrap: one replicate at a time, group by group."""
    from sklearn_smallfair._random import child_rng, resolve_seed

    base = resolve_seed(random_state)
    low, high = [], []
    for label, c in zip(labels, counts):
        rng = child_rng(base, label, name)
        n = int(c.sum())
        replicates = []
        for _ in range(n_resamples):
            star = rng.multinomial(n, c / n).astype(float)
            if prior is not None:
                star = star + prior[labels.index(label)]
            replicates.append(compute_metric(name, star))
        replicates = np.array(replicates)
        replicates = replicates[~np.isnan(replicates)]
        q = (
            np.quantile(replicates, [ALPHA / 2, 1 - ALPHA / 2])
            if replicates.size
            else (np.nan, np.nan)
        )
        low.append(q[0])
        high.append(q[1])
    return np.array(low), np.array(high)


@pytest.mark.parametrize("name", ["tpr", "mcc", "acc"])
def test_bootstrap_equals_a_plain_replicate_loop(name):
    table = _table(
        metrics=name, interval_method="bootstrap", n_resamples=200, random_state=7
    )
    c = np.array(list(COUNTS.values()), dtype=float)
    low, high = _plain_bootstrap(name, c, list(COUNTS), 200, 7)
    defined = ~table[f"{name}_undefined"].to_numpy()
    assert defined.sum() >= 4
    np.testing.assert_allclose(table[f"{name}_low"][defined], low[defined])
    np.testing.assert_allclose(table[f"{name}_high"][defined], high[defined])


def test_bootstrap_of_smoothed_values_smooths_each_replicate():
    lam = 5.0
    table = _table(
        metrics="ppv",
        interval_method="bootstrap",
        smoothing=CrossPriorSmoothing(lam),
        n_resamples=200,
        random_state=3,
    )
    c = np.array(list(COUNTS.values()), dtype=float)
    ref = reference_counts(c)
    prior = lam * ref / ref.sum(1, keepdims=True)
    low, high = _plain_bootstrap("ppv", c, list(COUNTS), 200, 3, prior=prior)
    np.testing.assert_allclose(table["ppv_smoothed_low"], low)
    np.testing.assert_allclose(table["ppv_smoothed_high"], high)
    assert table.attrs["interval_method"]["ppv_smoothed"] == "bootstrap"


# ---------------------------------------------------------------------------------
# Randomness keyed by group
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["posterior", "bootstrap"])
def test_same_seed_same_intervals_whatever_the_groups_order(method):
    kw = dict(
        metrics=["mcc", "pt", "tpr"],
        interval_method=method,
        n_resamples=300,
        random_state=11,
        zero_division=np.nan,
        confidence_level=0.9,
    )
    table = group_metrics(counts=COUNTS, **kw)
    shuffled = dict(reversed(list(COUNTS.items())))
    again = group_metrics(counts=shuffled, **kw)
    pd.testing.assert_frame_equal(again.loc[table.index], table)
    fewer = {g: COUNTS[g] for g in ("a", "c", "f")}
    part = group_metrics(counts=fewer, **kw)
    cols = [c for c in table.columns if c.startswith("mcc") or c.startswith("tpr")]
    pd.testing.assert_frame_equal(part[cols], table.loc[list(fewer), cols])
    other_seed = group_metrics(counts=COUNTS, **{**kw, "random_state": 12})
    assert not np.allclose(other_seed["mcc_low"].dropna(), table["mcc_low"].dropna())


# ---------------------------------------------------------------------------------
# Undefined values, parameters, columns
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_undefined_values_have_nan_bounds_and_keep_their_flag(method):
    names = ["tpr", "npv", "ppv"] if method in CLOSED else ["tpr", "mcc", "te"]
    table = _table(
        metrics=names,
        interval_method=method,
        zero_division=0.0,
        n_resamples=200,
        random_state=0,
    )
    undefined = 0
    for name in names:
        flag = table[f"{name}_undefined"]
        assert table.loc[flag, f"{name}_low"].isna().all()
        assert table.loc[flag, f"{name}_high"].isna().all()
        assert (table.loc[flag, name] == 0.0).all()  # the substituted value
        undefined += flag.sum()
    assert undefined >= 2


def test_columns_follow_each_value():
    table = _table(metrics=["tpr", "mcc"], smoothing=CrossPriorSmoothing(3))
    assert list(table.columns) == [
        "n",
        "n_pos",
        "n_neg",
        "lam",
        "tpr",
        "tpr_low",
        "tpr_high",
        "tpr_undefined",
        "tpr_smoothed",
        "tpr_smoothed_low",
        "tpr_smoothed_high",
        "tpr_smoothed_undefined",
        "mcc",
        "mcc_low",
        "mcc_high",
        "mcc_undefined",
        "mcc_smoothed",
        "mcc_smoothed_low",
        "mcc_smoothed_high",
        "mcc_smoothed_undefined",
    ]
    assert table.attrs["confidence_level"] == 0.95
    assert table.attrs["interval_method"] == {
        "tpr": "clopper-pearson",
        "tpr_smoothed": "posterior-hull",
        "mcc": "projection",
        "mcc_smoothed": "posterior-hull",
    }


def test_without_confidence_level_nothing_changes():
    plain = group_metrics(counts=COUNTS, metrics=["tpr", "mcc"], zero_division=np.nan)
    assert not any(c.endswith(("_low", "_high")) for c in plain.columns)
    assert "interval_method" not in plain.attrs


def test_bounds_contain_the_value_for_closed_forms():
    table = _table(metrics=metric_names(family="joint_ratio"), interval_method="wilson")
    for name in metric_names(family="joint_ratio"):
        ok = ~table[f"{name}_undefined"]
        assert (table.loc[ok, f"{name}_low"] <= table.loc[ok, name] + 1e-12).all()
        assert (table.loc[ok, name] <= table.loc[ok, f"{name}_high"] + 1e-12).all()


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"confidence_level": 0.0}, "'confidence_level' parameter"),
        ({"confidence_level": 1.0}, "'confidence_level' parameter"),
        ({"confidence_level": 95}, "'confidence_level' parameter"),
        ({"interval_method": "wald"}, "'interval_method' parameter"),
        ({"n_resamples": 99}, "'n_resamples' parameter"),
        ({"n_resamples": 10**6 + 1}, "'n_resamples' parameter"),
        ({"random_state": -1}, "'random_state' parameter"),
    ],
)
def test_bad_interval_parameters_are_refused(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        group_metrics(counts=COUNTS, **{"confidence_level": 0.95, **kw})


def test_a_closed_form_for_a_metric_without_one_names_the_methods():
    with pytest.raises(ValueError) as info:
        group_metrics(
            counts=COUNTS,
            metrics=["tpr", "mcc", "pt"],
            confidence_level=0.9,
            interval_method="wilson",
        )
    message = str(info.value)
    assert "mcc, pt are not a proportion" in message
    assert "'auto', 'posterior' or 'bootstrap'" in message


def test_errors_come_before_any_work():
    # rows that would fail validation are never read: the method error comes first
    with pytest.raises(ValueError, match="not a proportion"):
        group_metrics(
            [1, 0],
            [1],
            sensitive_features=["a"],
            metrics="mcc",
            confidence_level=0.9,
            interval_method="jeffreys",
        )


def test_two_group_metrics_get_drawn_intervals():
    for method in ("posterior", "bootstrap"):
        for reference in ("rest", "total", "a"):
            table = _table(
                metrics=["ofi", "te"],
                interval_method=method,
                reference=reference,
                smoothing=CrossPriorSmoothing(3.0),
                n_resamples=400,
                random_state=0,
            )
            for name in ("ofi", "te", "ofi_smoothed", "te_smoothed"):
                ok = ~table[f"{name}_undefined"]
                assert ok.sum() >= 2
                assert table.loc[ok, f"{name}_low"].notna().all()
                assert (
                    table.loc[ok, f"{name}_low"] <= table.loc[ok, f"{name}_high"]
                ).all()


def test_weighted_counts_take_intervals():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    p = rng.integers(0, 2, 60)
    g = np.repeat(["x", "y", "z"], 20)
    w = rng.uniform(0.5, 1.5, 60)
    for method in INTERVAL_METHODS:
        table = group_metrics(
            y,
            p,
            sensitive_features=g,
            sample_weight=w,
            metrics="tpr",
            confidence_level=0.9,
            interval_method=method,
            n_resamples=200,
            random_state=0,
        )
        assert table["tpr_low"].notna().all()
        assert (table["tpr_low"] <= table["tpr_high"]).all()


# ---------------------------------------------------------------------------------
# Disparities
# ---------------------------------------------------------------------------------
# Newcombe (1998), Table II, method 10 (score interval for each proportion,
# combined): the paper's eight examples (m/n - m'/n'), rounded to 4 places.
NEWCOMBE_TABLE_II = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
]


@pytest.mark.parametrize("args, expected", NEWCOMBE_TABLE_II)
def test_newcombe_reproduces_the_published_table(args, expected):
    low, high = newcombe_interval(*args, ALPHA)
    assert (round(float(low), 4), round(float(high), 4)) == expected


def test_disparity_intervals_newcombe_on_the_published_example():
    # 56/70 vs 48/80 as two TPRs: the group against explicit reference counts
    table = disparity_intervals(
        counts={"g": [56, 14, 3, 7]}, reference=[48, 32, 5, 5], metrics="tpr"
    )
    row = table.loc[("g", "tpr")]
    assert row["difference"] == pytest.approx(56 / 70 - 48 / 80)
    assert row["difference_low"] == pytest.approx(0.0524, abs=5e-5)
    assert row["difference_high"] == pytest.approx(0.3339, abs=5e-5)
    assert row["difference_method"] == "newcombe"


def test_katz_equals_its_formula():
    k1, m1, k2, m2 = 30, 50, 20, 60
    low, high = katz_interval(k1, m1, k2, m2, ALPHA)
    rr = (k1 / m1) / (k2 / m2)
    se = np.sqrt(1 / k1 - 1 / m1 + 1 / k2 - 1 / m2)
    assert low == pytest.approx(rr * np.exp(-Z * se))
    assert high == pytest.approx(rr * np.exp(Z * se))
    # a zero cell: 1/2 added to each of the four cells
    low0, high0 = katz_interval(0, 10, 4, 10, ALPHA)
    rr0 = (0.5 / 11) / (4.5 / 11)
    se0 = np.sqrt(1 / 0.5 - 1 / 11 + 1 / 4.5 - 1 / 11)
    assert low0 == pytest.approx(rr0 * np.exp(-Z * se0))
    assert high0 == pytest.approx(rr0 * np.exp(Z * se0))


def test_disparity_columns_and_values():
    table = disparity_intervals(
        counts=COUNTS, metrics=["tpr", "acc", "mcc"], confidence_level=0.9
    )
    assert list(table.columns) == list(_disparity_intervals._DISPARITY_COLUMNS)
    assert table.index.names == ["group", "metric"]
    assert list(table.index[:3]) == [("a", "tpr"), ("a", "acc"), ("a", "mcc")]
    c = np.array(list(COUNTS.values()), dtype=float)
    rest = reference_counts(c)
    for name in ("tpr", "acc", "mcc"):
        sub = table.xs(name, level="metric")
        value = compute_metric(name, c)
        ref = compute_metric(name, rest)
        np.testing.assert_allclose(sub["value"], value, equal_nan=True)
        np.testing.assert_allclose(sub["reference_value"], ref)
        ok = ~sub["undefined"]
        np.testing.assert_allclose(sub["difference"][ok], (value - ref)[ok])
        assert sub.loc[~ok, "difference_low"].isna().all()
        assert (sub["difference_low"][ok] <= sub["difference"][ok] + 1e-12).all()
    assert set(table.xs("mcc", level="metric")["difference_method"]) == {"posterior"}
    assert set(table.xs("tpr", level="metric")["ratio_method"]) == {"katz"}
    assert table["undefined"].sum() >= 2


def test_disparity_against_the_total_is_the_mapped_rest_interval():
    rest = disparity_intervals(counts=COUNTS, metrics="fpr")
    total = disparity_intervals(counts=COUNTS, metrics="fpr", reference="total")
    c = np.array(list(COUNTS.values()), dtype=float)
    m_g = c[:, 2] + c[:, 3]
    m_r = m_g.sum() - m_g
    s = m_r / (m_g + m_r)
    np.testing.assert_allclose(
        total["difference_low"], s * rest["difference_low"].to_numpy()
    )
    np.testing.assert_allclose(
        total["difference"], s * rest["difference"].to_numpy(), atol=1e-15
    )


def test_named_reference_group_against_itself():
    table = disparity_intervals(
        counts=COUNTS,
        metrics=["tpr", "eod"],
        reference="a",
        interval_method="posterior",
    )
    row = table.loc[("a", "tpr")]
    assert row["difference"] == 0.0
    assert (row["difference_low"], row["difference_high"]) == (0.0, 0.0)
    assert (row["ratio_low"], row["ratio_high"]) == (1.0, 1.0)


@pytest.mark.parametrize("method", ["auto", "posterior", "bootstrap"])
def test_equalized_odds_is_the_projection_of_the_two_gaps(method):
    kw = dict(counts=COUNTS, interval_method=method, n_resamples=400, random_state=2)
    table = disparity_intervals(metrics=["tpr", "fpr", "equalized_odds"], **kw)
    eod = table.xs("equalized_odds", level="metric")
    tpr = table.xs("tpr", level="metric")
    fpr = table.xs("fpr", level="metric")
    ok = ~eod["undefined"]
    assert ok.sum() >= 4
    np.testing.assert_allclose(
        eod["difference"][ok],
        np.maximum(tpr["difference"].abs(), fpr["difference"].abs())[ok],
    )
    # the gaps' intervals at level sqrt(0.95)
    sidak = disparity_intervals(
        metrics=["tpr", "fpr"], confidence_level=np.sqrt(0.95), **kw
    )
    bounds = []
    for name in ("tpr", "fpr"):
        sub = sidak.xs(name, level="metric")
        lo, hi = sub["difference_low"], sub["difference_high"]
        near = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(lo.abs(), hi.abs()))
        bounds.append((near, np.maximum(lo.abs(), hi.abs())))
    np.testing.assert_allclose(
        eod["difference_low"][ok], np.maximum(bounds[0][0], bounds[1][0])[ok]
    )
    np.testing.assert_allclose(
        eod["difference_high"][ok], np.maximum(bounds[0][1], bounds[1][1])[ok]
    )
    assert (eod["difference_low"][ok] <= eod["difference"][ok]).all()
    assert eod["ratio"].isna().all()


def test_disparity_draws_do_not_depend_on_group_order():
    kw = dict(
        metrics=["mcc", "tpr"],
        interval_method="bootstrap",
        n_resamples=300,
        random_state=5,
    )
    table = disparity_intervals(counts=COUNTS, **kw)
    again = disparity_intervals(counts=dict(reversed(list(COUNTS.items()))), **kw)
    pd.testing.assert_frame_equal(again.loc[table.index], table)


def test_disparity_parameter_errors():
    with pytest.raises(ValueError, match="not a binomial or joint-ratio"):
        disparity_intervals(
            counts=COUNTS, metrics=["tpr", "mcc"], interval_method="newcombe-katz"
        )
    with pytest.raises(ValueError, match="equalized_odds"):
        disparity_intervals(counts=COUNTS, metrics=["tpr", "unknown"])
    with pytest.raises(ValueError, match="two-group"):
        disparity_intervals(counts=COUNTS, metrics="ofi")
    with pytest.raises(InvalidParameterError, match="'interval_method' parameter"):
        disparity_intervals(counts=COUNTS, interval_method="wilson")
    with pytest.raises(InvalidParameterError, match="'confidence_level' parameter"):
        disparity_intervals(counts=COUNTS, confidence_level=1.5)


@pytest.mark.parametrize(
    "y_true, y_pred, groups, name",
    [
        ([1, 0, 1], [1, 0], ["a", "a", "b"], "y_pred"),
        ([1, 0, np.nan], [1, 0, 1], ["a", "a", "b"], "y_true"),
        ([1, 0, 1], [1, 0, 1], {"a": 1}, "sensitive_features"),
    ],
)
def test_disparity_bad_rows_name_the_argument(y_true, y_pred, groups, name):
    with pytest.raises((ValueError, TypeError), match=name):
        disparity_intervals(y_true, y_pred, sensitive_features=groups)


def test_disparity_from_rows_equals_from_counts():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    p = np.where(rng.random(200) < 0.7, y, 1 - y)
    g = rng.choice(["u", "v", "w"], 200)
    from sklearn_smallfair.metrics import confusion_counts

    groups, counts = confusion_counts(y, p, sensitive_features=g)
    a = disparity_intervals(y, p, sensitive_features=g, metrics=["tpr", "eod"])
    b = disparity_intervals(counts=dict(zip(groups, counts)), metrics=["tpr", "eod"])
    pd.testing.assert_frame_equal(a, b)


# ---------------------------------------------------------------------------------
# Coverage (slow): the targets of the user guide on a reduced grid
# ---------------------------------------------------------------------------------
LAWS = {  # (prevalence, TPR, FPR), as in benchmarks/bench_coverage.py
    "balanced": (0.5, 0.8, 0.2),
    "moderate": (0.3, 0.6, 0.1),
    "prevalence 0.05": (0.05, 0.7, 0.1),
    "TPR 0.95": (0.4, 0.95, 0.3),
    "chance": (0.2, 0.5, 0.5),
}
PROPORTION_METRICS = ("acc", "tpr", "fpr", "ppv", "f1")


def _cells(prev, tpr, fpr):
    return np.array(
        [prev * tpr, prev * (1 - tpr), (1 - prev) * fpr, (1 - prev) * (1 - fpr)]
    )


def _coverage(method, law, n, n_groups, seed):
    """Coverage of each proportion metric's interval over n_groups simulated
    groups of size n, among the groups where the metric is defined."""
    p = _cells(*law)
    cms = np.random.default_rng(seed).multinomial(n, p, size=n_groups)
    unique, inverse = np.unique(cms, axis=0, return_inverse=True)
    table = group_metrics(
        counts=unique,
        metrics=PROPORTION_METRICS,
        confidence_level=0.95,
        interval_method=method,
        zero_division=np.nan,
    )
    out = {}
    for name in PROPORTION_METRICS:
        truth = compute_metric(name, p)
        low = table[f"{name}_low"].to_numpy()[inverse.ravel()]
        high = table[f"{name}_high"].to_numpy()[inverse.ravel()]
        defined = ~np.isnan(low)
        covered = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
        out[name] = (covered[defined].mean(), defined.sum())
    return out


@pytest.mark.slow
def test_coverage_targets_on_a_reduced_grid():
    # The targets of the user guide (doc/user_guide/intervals.rst), without the
    # drawn intervals: Clopper-Pearson never under 95 % (3 Monte Carlo standard
    # errors allowed), Wilson, Jeffreys and the posterior within 2 points of 95 %
    # on average over the laws and the proportion metrics at every n >= 10.
    n_groups = 20_000
    checked = 0
    for n in (10, 20, 50):
        for j, method in enumerate(
            ("clopper-pearson", "wilson", "jeffreys", "posterior")
        ):
            coverages = []
            for i, law in enumerate(LAWS.values()):
                seed = 1000 * n + 10 * i + j
                for name, (cov, n_defined) in _coverage(
                    method, law, n, n_groups, seed
                ).items():
                    assert n_defined > 5000, (name, law, n)
                    se = np.sqrt(0.95 * 0.05 / n_defined)
                    if method == "clopper-pearson":
                        assert cov >= 0.95 - 3 * se, (method, name, law, n, cov)
                    coverages.append(cov)
                    checked += 1
            if method != "clopper-pearson":
                assert abs(np.mean(coverages) - 0.95) <= 0.02, (method, n)
    assert checked == 3 * 4 * len(LAWS) * len(PROPORTION_METRICS)
