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
        n_resamples=10,
        random_state=0,
    )
    assert {"mse_se", "n_resamples"} <= set(mc.columns)


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
    n_resamples = 20_000
    mc = downsampling_experiment(
        **kw, method="montecarlo", n_resamples=n_resamples, random_state=3
    )
    m = exact.merge(mc, on=KEYS, suffixes=("", "_mc"))
    assert len(m) == len(exact) == len(mc)
    ok = m["mse"].notna()
    tiny = 1e-9
    mse_err = (m["mse"] - m["mse_mc"]).abs()[ok]
    assert (mse_err <= 4 * m["mse_se"][ok] + tiny).all()
    n_def = n_resamples * (1 - m["p_undefined_mc"])
    bias_se = np.sqrt(m["variance_mc"] / n_def)
    assert ((m["bias"] - m["bias_mc"]).abs()[ok] <= 4 * bias_se[ok] + tiny).all()
    p_se = np.sqrt(m["p_undefined"] * (1 - m["p_undefined"]) / n_resamples)
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
        n_resamples=2_000,
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
        (
            {"method": "bootstrap"},
            ValueError,
            "'method' parameter of downsampling_experiment must be",
        ),
        (
            {"sampling": "poisson"},
            ValueError,
            "'sampling' parameter of downsampling_experiment must be",
        ),
        ({"sizes": []}, ValueError, "sizes is empty"),
        ({"sizes": [0, 5]}, ValueError, "sizes must be integers >= 1"),
        (
            {"n_resamples": 0},
            ValueError,
            "'n_resamples' parameter of downsampling_experiment must be",
        ),
        ({"metrics": ("tpr", "ofi")}, ValueError, "two-group metric"),
        ({"metrics": ("nope",)}, ValueError, "unknown metric"),
        (
            {"estimators": [None]},
            TypeError,
            "'estimators' parameter of downsampling_experiment must be an .*Mapping",
        ),
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


# ---------------------------------------------------------------------------
# no groups, empty groups
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "counts",
    [
        np.zeros((0, 4)),
        np.zeros((0, 4), dtype=np.int64),
        pd.DataFrame({"TP": [], "FN": [], "FP": [], "TN": []}),
    ],
    ids=["float", "int", "frame"],
)
@pytest.mark.parametrize("method", ["exact", "montecarlo"])
def test_counts_without_groups(counts, method):
    with pytest.raises(ValueError, match="counts has no groups"):
        downsampling_experiment(counts=counts, sizes=[5], method=method, random_state=0)


@pytest.mark.parametrize(
    "counts",
    [
        {"a": (6, 3, 4, 12), "b": (0, 0, 0, 0)},
        np.array([[0, 0, 0, 0]]),
        pd.DataFrame({"TP": [3, 0], "FN": [1, 0], "FP": [2, 0], "TN": [5, 0]}),
    ],
)
def test_group_with_zero_people(counts):
    with pytest.raises(ValueError, match=r"group\(s\) .* in counts are empty"):
        downsampling_experiment(counts=counts, sizes=[5])


# ---------------------------------------------------------------------------
# bounds on the requested work, checked before any work
# ---------------------------------------------------------------------------


@pytest.fixture
def no_work(monkeypatch, tmp_path):
    """Fail if any size is computed; return a checkpoint path that must stay absent."""
    from sklearn_smallfair.model_selection import _downsampling

    def refuse(*args, **kwargs):  # pragma: no cover - reached only on failure
        raise AssertionError("work started before the bounds were checked")

    monkeypatch.setattr(_downsampling, "_run_task", refuse)
    return tmp_path / "never.ckpt"


def test_montecarlo_draws_above_the_work_bound(no_work):
    # C(n + 3, 3) > 2,000,000 from n = 226: each of the 10^12 draws is made
    with pytest.raises(ValueError) as exc:
        downsampling_experiment(
            counts=COUNTS,
            sizes=[300, 400],
            method="montecarlo",
            n_resamples=10**12,
            random_state=0,
            checkpoint=no_work,
        )
    message = str(exc.value)
    assert "MAX_WORK = 100,000,000,000" in message
    assert "4,000,000,000,000 (group, matrix) evaluations" in message
    assert "Lower n_resamples (at most about 25,000,000,000 here)" in message
    assert not no_work.exists()


def test_montecarlo_histograms_cost_no_more_with_more_draws():
    # at small sizes the draws are a histogram over the C(n + 3, 3) matrices:
    # many draws are accepted, and cost what the exact sum costs
    res = downsampling_experiment(
        counts=COUNTS,
        sizes=[5, 20],
        metrics="tpr",
        method="montecarlo",
        n_resamples=10**12,
        random_state=0,
    )
    assert (res["n_resamples"] == 10**12).all()


def test_work_bound_counts_groups_sizes_and_draws(monkeypatch, no_work):
    from sklearn_smallfair.model_selection import _budget, _sums

    # 2 groups x 2 sizes x 3,000,000 draws (sizes beyond the histogram)
    kw = dict(
        counts=COUNTS,
        sizes=[300, 301],
        metrics="tpr",
        method="montecarlo",
        n_resamples=3_000_000,
        random_state=0,
    )
    monkeypatch.setattr(_budget, "MAX_WORK", 12_000_000 - 1)
    with pytest.raises(ValueError, match=r"12,000,000 .* above the bound MAX_WORK"):
        downsampling_experiment(**kw)
    with pytest.raises(ValueError, match="MAX_WORK"):
        downsampling_experiment(**{**kw, "counts": {**COUNTS, "c": (1, 2, 3, 4)}})
    # exactly at the bound: accepted
    monkeypatch.setattr(_budget, "MAX_WORK", 12_000_000)
    plan = _sums._plan([get_metric("tpr")])
    _budget._check_work(np.array([300, 301]), 2, plan, "montecarlo", 3_000_000)


def test_exact_work_bound_suggests_montecarlo(monkeypatch, no_work):
    from sklearn_smallfair.model_selection import _budget

    monkeypatch.setattr(_budget, "MAX_WORK", 10**6)
    # tpr, fpr, ppv: three blocks, C(n + 2, 2) vectors; mcc: C(n + 3, 3) matrices
    with pytest.raises(ValueError) as exc:
        downsampling_experiment(counts=COUNTS, sizes=range(5, 151), checkpoint=no_work)
    message = str(exc.value)
    assert "above the bound MAX_WORK = 1,000,000" in message
    assert "method='montecarlo'" in message and "sizes" in message
    assert not no_work.exists()


@pytest.mark.parametrize("metrics", ["mcc", "tpr", ("tpr", "ppv", "mcc")])
def test_exact_memory_budget_too_small(no_work, metrics):
    # block by block, the exact sums need their probability tables and one block
    with pytest.raises(ValueError) as exc:
        downsampling_experiment(
            counts=COUNTS,
            metrics=metrics,
            sizes=[10, 10**6],
            memory_budget=1 << 20,
            checkpoint=no_work,
        )
    message = str(exc.value)
    assert message.startswith("memory_budget: the exact sums of size 1000000")
    assert "above memory_budget = 1 MiB" in message
    assert "Raise memory_budget, use sizes up to" in message
    assert not no_work.exists()
    # the largest size it names fits in the budget, the next one does not
    from sklearn_smallfair.metrics import get_metrics
    from sklearn_smallfair.model_selection import _budget, _sums

    largest = int(message.split("use sizes up to ")[1].split(",")[0])
    plan = _sums._plan(get_metrics(metrics, single_group=True))
    # two groups, the two default estimators
    assert _budget._exact_bytes(largest, 2, plan, 2) <= 1 << 20
    assert _budget._exact_bytes(largest + 1, 2, plan, 2) > 1 << 20
    with pytest.raises(ValueError, match="memory_budget"):
        _budget._check_work(np.array([largest + 1]), 2, plan, "exact", 1, 1 << 20, 2)


def test_exact_large_size_is_bounded_by_work_not_memory(no_work):
    # the exact sums never hold a size's matrices: only MAX_WORK refuses
    with pytest.raises(ValueError, match="above the bound MAX_WORK"):
        downsampling_experiment(
            counts=COUNTS, metrics="mcc", sizes=[10**5], checkpoint=no_work
        )
    assert not no_work.exists()


def test_memory_budget_bad_value():
    with pytest.raises(ValueError, match="'memory_budget' parameter"):
        downsampling_experiment(counts=COUNTS, sizes=[5], memory_budget=1000)


def test_montecarlo_histogram_above_the_memory_bound_names_n_resamples(no_work):
    counts = {f"g{i}": (1 + i, 2, 3, 4) for i in range(1000)}
    with pytest.raises(ValueError) as exc:
        downsampling_experiment(
            counts=counts,
            sizes=[150],
            method="montecarlo",
            random_state=0,
            estimators={"raw": None},
            checkpoint=no_work,
        )
    message = str(exc.value)
    assert message.startswith("memory_budget: size 150 with method='montecarlo'")
    assert "1000 group(s)" in message
    assert "lower n_resamples below 585,276" in message


def test_n_resamples_bound():
    with pytest.raises(
        ValueError,
        match=r"'n_resamples' parameter .* in the range \[1, 9007199254740992\]",
    ):
        downsampling_experiment(
            counts=COUNTS, sizes=[5], method="montecarlo", n_resamples=2**63
        )


def test_pos_label_follows_scikit_learn():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    groups = np.where(rng.random(200) < 0.5, "a", "b")
    kw = dict(sensitive_features=groups, sizes=[5], metrics="tpr")
    numeric = downsampling_experiment(y, p, **kw)
    words = np.array(["no", "yes"])
    named = downsampling_experiment(words[y], words[p], pos_label="yes", **kw)
    pd.testing.assert_frame_equal(named, numeric)
    with pytest.raises(ValueError, match=r"labels \['no', 'yes'\].*pos_label"):
        downsampling_experiment(words[y], words[p], **kw)


def test_default_seed_repeats_and_none_draws_afresh():
    kw = dict(counts=COUNTS, sizes=[40], metrics="tpr", method="montecarlo")
    kw["n_resamples"] = 500
    first = downsampling_experiment(**kw)
    pd.testing.assert_frame_equal(downsampling_experiment(**kw), first)
    pd.testing.assert_frame_equal(downsampling_experiment(**kw, random_state=0), first)
    fresh = downsampling_experiment(**kw, random_state=None)
    assert not fresh["mse"].equals(first["mse"])
