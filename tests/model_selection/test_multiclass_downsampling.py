"""Multiclass downsampling experiments against a brute-force sum over all K x K
matrices, Monte Carlo against the exact sums, and reproducibility."""

import itertools
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_smallfair.exceptions import ReferenceWarning
from sklearn_smallfair.metrics import multiclass_metric
from sklearn_smallfair.model_selection import multiclass_downsampling_experiment

COUNTS = {
    "a": [[50, 10, 5], [8, 40, 12], [4, 9, 60]],
    "b": [[12, 4, 3], [3, 9, 4], [1, 2, 15]],
    "c": [[7, 0, 2], [1, 3, 0], [0, 2, 9]],
}


def _all_matrices(n, k):
    d = k * k
    rows = []
    for bars in itertools.combinations(range(n + d - 1), d - 1):
        edges = (-1, *bars, n + d - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(d)])
    return np.array(rows).reshape(-1, k, k)


@pytest.mark.parametrize(
    "metric, average", [("kappa", None), ("tpr", "macro"), ("f1", None)]
)
def test_exact_equals_brute_force(metric, average):
    n, lam = 4, 6.0
    res = multiclass_downsampling_experiment(
        COUNTS,
        sizes=[n],
        metrics=[metric],
        average=average,
        lam=[0, lam],
        method="exact",
    )
    total = np.sum(list(COUNTS.values()), axis=0).astype(float)
    cms = _all_matrices(n, 3)
    checked = 0
    for g, c in COUNTS.items():
        c = np.asarray(c, dtype=float)
        ref = total - c
        p_ref = ref / ref.sum()
        pmf = stats.multinomial.pmf(
            cms.reshape(len(cms), -1), n, (c / c.sum()).reshape(-1)
        )
        target = multiclass_metric(metric, c, average=average)
        for estimator, smoothed in (
            ("raw", cms.astype(float)),
            (f"cps_{lam:g}", (cms + lam * p_ref) / (n + lam) * n),
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values = multiclass_metric(metric, smoothed, average=average)
            values = values.reshape(len(cms), -1)
            target_cols = np.atleast_1d(target)
            rows = res[(res["group"] == g) & (res["estimator"] == estimator)]
            assert len(rows) == values.shape[1]
            for j in range(values.shape[1]):
                v = values[:, j]
                ok = ~np.isnan(v)
                w = pmf[ok] / pmf[ok].sum()
                mean = (w * v[ok]).sum()
                row = rows.iloc[j]
                assert row["p_undefined"] == pytest.approx(pmf[~ok].sum(), abs=1e-12)
                assert row["bias"] == pytest.approx(mean - target_cols[j], abs=1e-10)
                assert row["mse"] == pytest.approx(
                    (w * (v[ok] - target_cols[j]) ** 2).sum(), abs=1e-10
                )
                assert row["variance"] == pytest.approx(
                    (w * (v[ok] - mean) ** 2).sum(), abs=1e-10
                )
                checked += 1
    assert checked >= 6


def test_montecarlo_within_its_error_of_exact():
    kw = {
        "sizes": [6, 9],
        "metrics": ["kappa", "tpr", "balanced_accuracy"],
        "lam": [0, 10],
    }
    exact = multiclass_downsampling_experiment(COUNTS, method="exact", **kw)
    mc = multiclass_downsampling_experiment(
        COUNTS, method="montecarlo", n_resamples=20_000, random_state=0, **kw
    )
    keys = ["group", "n", "metric", "estimator"]
    assert exact[keys].equals(mc[keys])
    ok = exact["mse"].notna()
    assert ok.sum() >= 20
    gap = (mc["mse"] - exact["mse"]).abs()[ok]
    assert (gap <= 4 * mc["mse_se"][ok] + 1e-12).all()
    # bias: the mean of the defined draws, standard error sqrt(variance / draws)
    se_bias = np.sqrt(exact["variance"] / (20_000 * (1 - exact["p_undefined"])))
    assert ((mc["bias"] - exact["bias"]).abs()[ok] <= 4 * se_bias[ok] + 1e-12).all()
    np.testing.assert_allclose(
        mc["p_undefined"], exact["p_undefined"], atol=4 * np.sqrt(0.25 / 20_000)
    )


def test_same_numbers_for_any_n_jobs_and_other_groups():
    kw = {
        "sizes": [5, 12],
        "metrics": ["mcc", "ppv"],
        "lam": [0, 5],
        "n_resamples": 3000,
        "random_state": 7,
    }
    one = multiclass_downsampling_experiment(COUNTS, n_jobs=1, **kw)
    with joblib.parallel_config(backend="threading"):  # no process start-up
        two = multiclass_downsampling_experiment(COUNTS, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(one, two)
    total = np.sum(list(COUNTS.values()), axis=0)
    alone = multiclass_downsampling_experiment(
        {"b": COUNTS["b"]}, reference=total - np.asarray(COUNTS["b"]), **kw
    )
    pd.testing.assert_frame_equal(
        one[one["group"] == "b"].reset_index(drop=True), alone
    )


def test_output_layout_and_smoothing_defines_scores():
    res = multiclass_downsampling_experiment(
        COUNTS,
        sizes=[5],
        metrics=["tpr", "kappa"],
        average=None,
        lam=[10, 0],
        labels=["low", "mid", "high"],
        n_resamples=2000,
        random_state=0,
    )
    assert list(res.columns[:6]) == [
        "group",
        "n",
        "metric",
        "class",
        "estimator",
        "lam",
    ]
    assert len(res) == 3 * (3 + 1) * 2
    tpr = res[res["metric"] == "tpr"]
    assert set(tpr["class"]) == {"low", "mid", "high"}
    assert res.loc[res["metric"] == "kappa", "class"].isna().all()
    raw = tpr[tpr["estimator"] == "raw"]
    cps = tpr[tpr["estimator"] == "cps_10"]
    assert (raw["p_undefined"] > 0).all()  # raw TPR of a class often 0/0 at n = 5
    assert (cps["p_undefined"] == 0).all()
    # the raw mean is conditionally unbiased for ratios only on average; the
    # smoothed variance is far smaller
    assert (cps["variance"].to_numpy() < raw["variance"].to_numpy()).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sizes": [40], "method": "exact"}, "n <= 16 for K = 3"),
        ({"lam": [-1]}, "lam must be"),
        ({"lam": [np.nan]}, "lam must be"),
        ({"metrics": ["ofi"]}, "two groups"),
        ({"metrics": []}, "empty"),
        ({"sizes": [0]}, "sizes must be"),
        ({"reference": "zzz"}, "not 'rest'"),
        ({"labels": ["x", "y"]}, "labels must name the 3 classes"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        multiclass_downsampling_experiment(COUNTS, n_resamples=10, **kwargs)


def test_non_square_counts():
    with pytest.raises(ValueError, match="square"):
        multiclass_downsampling_experiment(np.ones((2, 3, 4)))


def test_empty_reference_cell_warns():
    counts = {
        "a": [[5, 1, 0], [1, 5, 1], [0, 1, 5]],
        "b": [[6, 2, 0], [1, 4, 2], [0, 1, 7]],
    }
    with pytest.warns(ReferenceWarning, match="empty cells"):
        multiclass_downsampling_experiment(
            counts, sizes=[5], metrics="kappa", n_resamples=10, random_state=0
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferenceWarning)
        multiclass_downsampling_experiment(  # raw scores only: no prior
            counts, sizes=[5], metrics="kappa", lam=0, n_resamples=10, random_state=0
        )


def test_four_classes_exact_equals_brute_force():
    n, lam = 4, 5.0
    rng = np.random.default_rng(2)
    counts = rng.integers(1, 15, size=(2, 4, 4)) + 10 * np.eye(4, dtype=int)
    res = multiclass_downsampling_experiment(
        counts, sizes=[n], metrics="kappa", lam=[0, lam], method="exact"
    )
    cms = _all_matrices(n, 4)
    for g in range(2):
        c = counts[g].astype(float)
        ref = counts[1 - g].astype(float)
        pmf = stats.multinomial.pmf(
            cms.reshape(len(cms), -1), n, (c / c.sum()).reshape(-1)
        )
        target = float(multiclass_metric("kappa", c))
        smoothed = (cms + lam * ref / ref.sum()) / (n + lam) * n
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = multiclass_metric("kappa", smoothed)
        assert not np.isnan(v).any()  # the prior defines every smoothed kappa
        row = res[(res["group"] == g) & (res["estimator"] == "cps_5")].iloc[0]
        assert row["mse"] == pytest.approx((pmf * (v - target) ** 2).sum(), rel=1e-9)
        assert row["bias"] == pytest.approx((pmf * v).sum() - target, abs=1e-10)


def test_default_seed_repeats():
    kw = dict(sizes=[10], metrics="kappa", lam=[0, 10], n_resamples=300)
    first = multiclass_downsampling_experiment(COUNTS, **kw)
    pd.testing.assert_frame_equal(
        multiclass_downsampling_experiment(COUNTS, **kw), first
    )
