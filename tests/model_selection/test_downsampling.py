import itertools

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.datasets import load_published_confusion_matrices
from sklearn_smallfair.metrics._registry import get_metric
from sklearn_smallfair.model_selection import downsampling_experiment
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

COUNTS = {"a": (6, 3, 4, 12), "b": (2, 1, 5, 20)}
METRICS = ("tpr", "ppv", "mcc", "pt")
ESTIMATORS = {
    "raw": None,
    "eps_1": AdditiveSmoothing(1.0),
    "cps_5": CrossPriorSmoothing(5),
}
KEYS = ["group", "n", "metric", "estimator"]


def test_columns_and_order():
    res = downsampling_experiment(counts=COUNTS, sizes=[7, 5, 5], metrics="tpr")
    assert list(res.columns) == [
        *KEYS,
        "mse",
        "bias",
        "variance",
        "p_undefined",
    ]
    assert res["n"].tolist() == [5, 5, 7, 7] * 2
    assert res["estimator"].tolist()[:2] == ["raw", "cps_10"]
    mc = downsampling_experiment(
        counts=COUNTS,
        sizes=[5],
        metrics="tpr",
        method="montecarlo",
        n_draws=10,
        random_state=0,
    )
    assert {"mse_se", "n_draws"} <= set(mc.columns)


@pytest.mark.parametrize("sampling", ["multinomial", "hypergeometric"])
def test_exact_matches_montecarlo(sampling):
    kw = dict(
        counts=COUNTS,
        metrics=METRICS,
        estimators=ESTIMATORS,
        sizes=[5, 9, 14, 20],
        sampling=sampling,
    )
    exact = downsampling_experiment(**kw)
    n_draws = 20_000
    mc = downsampling_experiment(
        **kw, method="montecarlo", n_draws=n_draws, random_state=3
    )
    m = exact.merge(mc, on=KEYS, suffixes=("", "_mc"))
    assert len(m) == len(exact) == len(mc)
    ok = m["mse"].notna()
    tiny = 1e-9
    mse_err = (m["mse"] - m["mse_mc"]).abs()[ok]
    assert (mse_err <= 4 * m["mse_se"][ok] + tiny).all()
    n_def = n_draws * (1 - m["p_undefined_mc"])
    bias_se = np.sqrt(m["variance_mc"] / n_def)
    assert ((m["bias"] - m["bias_mc"]).abs()[ok] <= 4 * bias_se[ok] + tiny).all()
    p_se = np.sqrt(m["p_undefined"] * (1 - m["p_undefined"]) / n_draws)
    assert ((m["p_undefined"] - m["p_undefined_mc"]).abs() <= 4 * p_se + tiny).all()
    # mse = bias^2 + variance
    np.testing.assert_allclose(
        exact["mse"], exact["bias"] ** 2 + exact["variance"], rtol=1e-9, atol=1e-12
    )


def test_p_undefined_tpr_closed_form():
    sizes = range(5, 21)
    res = downsampling_experiment(
        counts=COUNTS, metrics="tpr", estimators={"raw": None}, sizes=sizes
    )
    for g, c in COUNTS.items():
        p_pos = (c[0] + c[1]) / sum(c)
        got = res.loc[res["group"] == g, "p_undefined"].to_numpy()
        want = (1 - p_pos) ** np.array(list(sizes))
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_hypergeometric_exact_equals_brute_force():
    cells = (3, 1, 2, 2)  # 8 rows
    rows = np.repeat(np.arange(4), cells)  # the cell of each row
    ests = {
        "raw": None,
        "eps_1": AdditiveSmoothing(1.0),
        "cps_5": CrossPriorSmoothing(5),
    }
    ref = np.array([5, 2, 3, 9])
    res = downsampling_experiment(
        counts={"g": cells},
        metrics=METRICS,
        estimators=ests,
        sizes=range(1, 9),
        sampling="hypergeometric",
        reference=ref,
    )
    for n in range(1, 9):
        subsets = np.array(list(itertools.combinations(range(8), n)))
        cms = np.stack([(rows[subsets] == j).sum(axis=1) for j in range(4)], axis=-1)
        for metric in METRICS:
            func = get_metric(metric).func
            t = func(np.asarray(cells, dtype=float))
            for name, est in ests.items():
                x = cms.astype(float) if est is None else est.transform(cms, ref)
                v = func(x)
                d = np.isfinite(v)
                row = res[
                    (res["n"] == n)
                    & (res["metric"] == metric)
                    & (res["estimator"] == name)
                ].iloc[0]
                assert row["p_undefined"] == pytest.approx(1 - d.mean(), abs=1e-12)
                if d.any():
                    assert row["bias"] == pytest.approx(v[d].mean() - t, abs=1e-12)
                    assert row["variance"] == pytest.approx(v[d].var(), abs=1e-12)
                    assert row["mse"] == pytest.approx(
                        ((v[d] - t) ** 2).mean(), abs=1e-12
                    )
                else:
                    assert np.isnan(row["mse"])


def test_rows_input_equals_counts_input():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, 60)
    y_pred = rng.integers(0, 2, 60)
    sf = np.where(rng.random(60) < 0.4, "x", "y")
    a = downsampling_experiment(y_true, y_pred, sensitive_features=sf, sizes=[5, 6])
    tab = pd.DataFrame(
        {
            "group": ["x", "y"],
            **{
                c: [
                    int(((sf == g) & (y_true == t) & (y_pred == p)).sum())
                    for g in ["x", "y"]
                ]
                for c, t, p in [("TP", 1, 1), ("FN", 1, 0), ("FP", 0, 1), ("TN", 0, 0)]
            },
        }
    )
    b = downsampling_experiment(counts=tab, sizes=[5, 6])
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("sampling", ["multinomial", "hypergeometric"])
def test_montecarlo_reproducible_and_n_jobs_invariant(sampling):
    kw = dict(
        counts=COUNTS,
        metrics=("tpr", "mcc"),
        estimators=ESTIMATORS,
        sizes=range(5, 13),
        method="montecarlo",
        sampling=sampling,
        n_draws=2_000,
    )
    r1 = downsampling_experiment(**kw, random_state=7, n_jobs=1)
    r2 = downsampling_experiment(**kw, random_state=7, n_jobs=2)
    pd.testing.assert_frame_equal(r1, r2, check_exact=True)
    r3 = downsampling_experiment(**kw, random_state=7)
    pd.testing.assert_frame_equal(r1, r3, check_exact=True)
    # a (group, size) does not depend on the other sizes requested
    sub = downsampling_experiment(**{**kw, "sizes": [9]}, random_state=7)
    pd.testing.assert_frame_equal(
        r1[r1["n"] == 9].reset_index(drop=True), sub, check_exact=True
    )
    r4 = downsampling_experiment(**kw, random_state=8)
    assert not r1["mse"].equals(r4["mse"])


def test_published_counts_and_progress():
    counts = load_published_confusion_matrices("Folktables", include_all=False)
    res = downsampling_experiment(
        counts=counts, sizes=[5, 6], metrics=("fpr",), progress=True
    )
    assert res["group"].nunique() == counts.shape[0]
    assert res["p_undefined"].between(0, 1).all()


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"method": "bootstrap"}, ValueError, "method must be one of"),
        ({"sampling": "poisson"}, ValueError, "sampling must be one of"),
        ({"sizes": []}, ValueError, "sizes is empty"),
        ({"sizes": [0, 5]}, ValueError, "sizes must be integers >= 1"),
        ({"n_draws": 0}, ValueError, "n_draws must be an integer >= 1"),
        ({"metrics": ("tpr", "ofi")}, ValueError, "two-group metric"),
        ({"metrics": ("nope",)}, ValueError, "unknown metric"),
        ({"estimators": [None]}, TypeError, "must be a mapping"),
        ({"estimators": {}}, ValueError, "estimators is empty"),
        ({"estimators": {1: None}}, TypeError, "names must be strings"),
        ({"estimators": {"x": "cps"}}, TypeError, "must be None"),
        ({"estimators": {"x": CrossPriorSmoothing(-1)}}, ValueError, "lam"),
        (
            {"sampling": "hypergeometric", "sizes": [5, 30]},
            ValueError,
            "cannot draw 30 rows",
        ),
        ({"random_state": "seed"}, TypeError, "random_state"),
    ],
)
def test_bad_inputs(kwargs, err, match):
    with pytest.raises(err, match=match):
        downsampling_experiment(counts=COUNTS, **{"sizes": [5], **kwargs})


def test_needs_inputs():
    with pytest.raises(ValueError, match="pass y_true"):
        downsampling_experiment(sizes=[5])
