"""Power and sample sizes of the separation tests: closed forms, simulation, solvers."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.stats import (
    comparative_separation_power,
    comparative_separation_sample_size,
    separation_power,
    separation_sample_size,
    simulate_separation_power,
)

# cell order (C, Y, A): (1,1,1), (0,1,1), (1,0,1), (0,0,1), then the same with A=0
NULL_LAW = [0.22, 0.055, 0.09, 0.135, 0.18, 0.045, 0.11, 0.165]  # TPR .8, FPR .4
LAWS = {
    "null": NULL_LAW,
    "fpr_gap": [0.22, 0.055, 0.081, 0.144, 0.18, 0.045, 0.121, 0.154],
    "both_gaps": [0.231, 0.044, 0.081, 0.144, 0.171, 0.054, 0.121, 0.154],
    "opposite_gaps": [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175],
}
VIOLATING = {k: v for k, v in LAWS.items() if k != "null"}
CELLS = [(1, 1, 1), (0, 1, 1), (1, 0, 1), (0, 0, 1)]
CELLS += [(c, y, 0) for c, y, _ in CELLS]

# The closed forms use expected group sizes and the normal law of the Wald
# statistic. Against 400,000 simulated data sets per case their error was at most
# 0.005 at n >= 1000 (and 0.0096 at n = 500, for TPRs near 0.9 with about 110
# positives per group), so agreement is asserted within 4 Monte Carlo standard
# errors plus this allowance.
APPROX = 0.01


def _beta_by_hand(w, v, n_w, n_v, alpha):
    z = norm.ppf(1 - alpha / 2)
    sigma = np.sqrt(w * (1 - w) / n_w + v * (1 - v) / n_v)
    return norm.cdf(z - (w - v) / sigma) - norm.cdf(-z - (w - v) / sigma)


# --- closed forms ---------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_separation_power_by_hand(alpha):
    # group A=1: TP .23 FN .045 FP .105 TN .12; group A=0: TP .2 FN .025 FP .1 TN .175
    law, n = LAWS["opposite_gaps"], 1000
    n_pos1, n_pos0 = n * 0.275, n * 0.225
    n_neg1, n_neg0 = n * 0.225, n * 0.275
    tpr1, tpr0 = 0.23 / 0.275, 0.20 / 0.225
    fpr1, fpr0 = 0.105 / 0.225, 0.10 / 0.275
    beta_t = _beta_by_hand(tpr1, tpr0, n_pos1, n_pos0, alpha)
    beta_f = _beta_by_hand(fpr1, fpr0, n_neg1, n_neg0, alpha)
    res = separation_power(law, n, alpha=alpha)
    assert isinstance(res, pd.Series)
    assert res.name == n
    assert list(res.index) == ["power_tpr", "power_fpr", "power"]
    assert res["power_tpr"] == pytest.approx(1 - beta_t, rel=1e-12)
    assert res["power_fpr"] == pytest.approx(1 - beta_f, rel=1e-12)
    assert res["power"] == pytest.approx(1 - beta_t * beta_f, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_comparative_power_by_hand(alpha):
    law, n_pairs = LAWS["opposite_gaps"], 2000
    pos = {1: 0.275, 0: 0.225}  # P(Y=1, A=a)
    neg = {1: 0.225, 0: 0.275}  # P(Y=0, A=b)
    tpr = {1: 0.23 / 0.275, 0: 0.20 / 0.225}
    tnr = {1: 1 - 0.105 / 0.225, 0: 1 - 0.10 / 0.275}

    def ctpr(a, b):
        return tpr[a] * tnr[b]

    def size(a, b):
        return 2 * n_pairs * pos[a] * neg[b]

    beta_c = _beta_by_hand(ctpr(1, 0), ctpr(0, 1), size(1, 0), size(0, 1), alpha)
    beta_w = _beta_by_hand(ctpr(1, 1), ctpr(0, 0), size(1, 1), size(0, 0), alpha)
    res = comparative_separation_power(law, n_pairs, alpha=alpha)
    assert res.name == n_pairs
    assert list(res.index) == ["power_cross", "power_within", "power"]
    assert res["power_cross"] == pytest.approx(1 - beta_c, rel=1e-12)
    assert res["power_within"] == pytest.approx(1 - beta_w, rel=1e-12)
    assert res["power"] == pytest.approx(1 - beta_c * beta_w, rel=1e-12)


def test_vectorized_over_sizes():
    law = LAWS["both_gaps"]
    sizes = [100, 250.5, 1000, 4000]
    res = separation_power(law, sizes)
    assert isinstance(res, pd.DataFrame)
    assert res.index.name == "n"
    assert list(res.index) == sizes
    for n in sizes:
        pd.testing.assert_series_equal(
            res.loc[n], separation_power(law, n), check_names=False
        )
    comp = comparative_separation_power(law, np.array([200, 2000]))
    assert comp.index.name == "n_pairs"
    assert comp.loc[2000, "power"] == comparative_separation_power(law, 2000)["power"]


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_null_law_power_is_the_false_positive_rate(alpha):
    n = np.array([10, 100, 1000, 10**6])
    for res, tests in (
        (separation_power(NULL_LAW, n, alpha=alpha), ["power_tpr", "power_fpr"]),
        (
            comparative_separation_power(NULL_LAW, n, alpha=alpha),
            ["power_cross", "power_within"],
        ),
    ):
        np.testing.assert_allclose(res[tests], alpha, rtol=1e-12)
        np.testing.assert_allclose(res["power"], 1 - (1 - alpha) ** 2, rtol=1e-12)


def test_table_input_matches_array():
    law = LAWS["opposite_gaps"]
    table = pd.DataFrame(CELLS, columns=["C", "Y", "A"]).assign(p=law)
    shuffled = table.sample(frac=1.0, random_state=0)
    expected = separation_power(law, 500)
    pd.testing.assert_series_equal(separation_power(shuffled, 500), expected)
    as_mapping = {c: shuffled[c].tolist() for c in shuffled.columns}
    pd.testing.assert_series_equal(separation_power(as_mapping, 500), expected)


def test_probabilities_are_rescaled_within_tolerance():
    law = np.asarray(LAWS["fpr_gap"])
    res = separation_power(law * (1 + 5e-7), 800)
    pd.testing.assert_series_equal(res, separation_power(law, 800))


def test_degenerate_rates():
    # TPR = 1 in both groups: every data set has observed TPRs of 1, the Wald
    # test never rejects H0t, so its power is 0 (not alpha)
    law = [0.25, 0.0, 0.1, 0.15, 0.25, 0.0, 0.1, 0.15]
    res = separation_power(law, 1000)
    assert res["power_tpr"] == 0.0
    assert res["power_fpr"] == pytest.approx(0.05)
    assert res["power"] == pytest.approx(0.05)
    sim = simulate_separation_power(law, 1000, n_repeats=500, random_state=0)
    assert sim["power_tpr"] == 0.0
    # TPR 1 against 0: always rejected
    law = [0.25, 0.0, 0.1, 0.15, 0.0, 0.25, 0.1, 0.15]
    assert separation_power(law, 50)["power_tpr"] == 1.0
    assert separation_sample_size(law) == 1


# --- simulation -----------------------------------------------------------------
@pytest.mark.parametrize("comparative", [False, True])
def test_null_law_simulated_rejection_rate(comparative):
    # the Wald test is approximate; at n = 2000 its joint false-positive rate is
    # within Monte Carlo error of 1 - (1 - alpha)^2 = 0.0975
    size = {"n_pairs": 4000} if comparative else {"n": 2000}
    sim = simulate_separation_power(
        NULL_LAW, comparative=comparative, n_repeats=20_000, random_state=0, **size
    )
    target = 1 - 0.95**2
    assert abs(sim["power"] - target) <= 4 * sim["power_se"]
    assert sim["power_se"] == pytest.approx(
        np.sqrt(target * (1 - target) / 20_000), 0.1
    )


@pytest.mark.parametrize("law", LAWS, ids=list(LAWS))
@pytest.mark.parametrize("comparative", [False, True], ids=["separation", "pairs"])
def test_analytic_power_matches_simulation(law, comparative):
    sizes = np.array([1000, 2000])
    if comparative:
        analytic = comparative_separation_power(LAWS[law], 2 * sizes)
        sim = simulate_separation_power(
            LAWS[law],
            comparative=True,
            n_pairs=2 * sizes,
            n_repeats=20_000,
            random_state=1,
        )
        tests = ["power_cross", "power_within", "power"]
    else:
        analytic = separation_power(LAWS[law], sizes)
        sim = simulate_separation_power(
            LAWS[law], sizes, n_repeats=20_000, random_state=1
        )
        tests = ["power_tpr", "power_fpr", "power"]
    assert list(sim.columns) == [c for t in tests for c in (t, f"{t}_se")]
    for t in tests:
        gap = (sim[t] - analytic[t]).abs()
        assert (gap <= 4 * sim[f"{t}_se"] + APPROX).all(), (t, gap)


@pytest.mark.slow
@pytest.mark.parametrize("law", list(VIOLATING), ids=list(VIOLATING))
def test_analytic_power_matches_simulation_many_sizes(law):
    sizes = np.array([500, 1000, 2000, 4000])
    for comparative in (False, True):
        kw = {"n_pairs": 2 * sizes} if comparative else {"n": sizes}
        analytic = (
            comparative_separation_power(LAWS[law], 2 * sizes)
            if comparative
            else separation_power(LAWS[law], sizes)
        )
        sim = simulate_separation_power(
            LAWS[law],
            comparative=comparative,
            n_repeats=50_000,
            random_state=2,
            **kw,
        )
        gap = (sim["power"] - analytic["power"]).abs()
        assert (gap <= 4 * sim["power_se"] + APPROX).all(), gap


def test_simulation_is_reproducible_per_size():
    law = LAWS["fpr_gap"]
    both = simulate_separation_power(law, [300, 600], n_repeats=300, random_state=3)
    alone = simulate_separation_power(law, 600, n_repeats=300, random_state=3)
    pd.testing.assert_series_equal(both.loc[600], alone, check_names=False)
    gen = simulate_separation_power(
        law, 600, n_repeats=300, random_state=np.random.default_rng(3)
    )
    assert gen.shape == alone.shape
    pairs = simulate_separation_power(
        law, comparative=True, n_pairs=500.0, n_repeats=300, random_state=3
    )
    assert list(pairs.index[:2]) == ["power_cross", "power_cross_se"]


def test_simulation_chunks_agree(monkeypatch):
    # more repeats than one block: the blocks draw from one stream
    law = LAWS["both_gaps"]
    sim = simulate_separation_power(law, 200, n_repeats=60_001, random_state=0)
    analytic = separation_power(law, 200)
    assert abs(sim["power"] - analytic["power"]) <= 4 * sim["power_se"] + APPROX
    # the block size does not change the draws: blocks of 7 give the same result
    from sklearn_smallfair.stats import _power_simulation

    whole = simulate_separation_power(law, 200, n_repeats=101, random_state=0)
    monkeypatch.setattr(_power_simulation, "_SIM_CHUNK", 7)
    blocks = simulate_separation_power(law, 200, n_repeats=101, random_state=0)
    pd.testing.assert_series_equal(blocks, whole)


# --- the "about twice as many pairs as people" rule ------------------------------
def test_about_twice_as_many_pairs_as_people():
    # Measured for the four laws of the user guide and the example:
    # n_pairs(80%) / n(80%) = 1.89, 2.28 and 1.82 for the three violating laws,
    # and the comparative power at 2n pairs is within 0.06 of the separation
    # power at n people for n = 500..4000 (largest gap 0.053: "both_gaps" at
    # n = 1000, 0.727 against 0.780). At the null law both are 1 - (1 - alpha)^2.
    ratios = []
    for law in VIOLATING.values():
        ratios.append(
            comparative_separation_sample_size(law) / separation_sample_size(law)
        )
        n = np.array([500, 1000, 2000, 4000])
        gap = (
            comparative_separation_power(law, 2 * n)["power"].to_numpy()
            - separation_power(law, n)["power"].to_numpy()
        )
        assert np.abs(gap).max() <= 0.06
    np.testing.assert_allclose(ratios, [1.893, 2.279, 1.822], atol=1e-3)
    # The rule depends on the law: with balanced groups and labels, TPRs of 0.8
    # and FPRs of 0.1 against 0.2, pairs need about three times as many.
    low_fpr = np.array([0.2, 0.05, 0.025, 0.225, 0.2, 0.05, 0.05, 0.2])
    ratio = comparative_separation_sample_size(low_fpr) / separation_sample_size(
        low_fpr
    )
    assert ratio == pytest.approx(2365 / 765)
    n = np.array([500, 1000])
    gap = (
        separation_power(low_fpr, n)["power"].to_numpy()
        - comparative_separation_power(low_fpr, 2 * n)["power"].to_numpy()
    )
    assert (gap > 0.15).all()  # 0.154 and 0.155
    assert comparative_separation_power(NULL_LAW, 2000)["power"] == pytest.approx(
        separation_power(NULL_LAW, 1000)["power"], rel=1e-12
    )


# --- sample sizes ---------------------------------------------------------------
@pytest.mark.parametrize("law", list(VIOLATING), ids=list(VIOLATING))
@pytest.mark.parametrize("target", [0.1, 0.5, 0.8, 0.9, 0.99])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_sample_size_is_the_smallest(law, target, alpha):
    cells = VIOLATING[law]
    n = separation_sample_size(cells, target, alpha=alpha)
    assert isinstance(n, int)
    powers = separation_power(cells, [n - 1, n], alpha=alpha)["power"]
    assert powers.iloc[1] >= target > powers.iloc[0]
    m = comparative_separation_sample_size(cells, target, alpha=alpha)
    assert isinstance(m, int)
    powers = comparative_separation_power(cells, [m - 1, m], alpha=alpha)["power"]
    assert powers.iloc[1] >= target > powers.iloc[0]


def test_sample_size_of_one():
    # a target at or below the power at size 1 is reached by size 1
    law = LAWS["opposite_gaps"]
    target = float(separation_power(law, 1)["power"])
    assert target > 1 - 0.95**2
    assert separation_sample_size(law, target) == 1
    assert separation_sample_size(law, target + 1e-6) == 2
    target = float(comparative_separation_power(law, 1)["power"])
    assert comparative_separation_sample_size(law, target) == 1


@pytest.mark.parametrize("law", list(VIOLATING), ids=list(VIOLATING))
def test_power_increases_with_size(law):
    n = np.arange(1, 20_001)
    for res in (
        separation_power(VIOLATING[law], n),
        comparative_separation_power(VIOLATING[law], n),
    ):
        assert (np.diff(res["power"].to_numpy()) >= 0).all()
        assert (res["power"] >= 1 - 0.95**2 - 1e-12).all()
    n = separation_sample_size(VIOLATING[law], 0.8)
    assert n < separation_sample_size(VIOLATING[law], 0.9)
    assert separation_sample_size(VIOLATING[law], 0.8, alpha=0.01) > n


def test_sample_size_null_law_raises():
    with pytest.raises(ValueError, match=r"satisfies separation.*0\.0975"):
        separation_sample_size(NULL_LAW)
    with pytest.raises(ValueError, match=r"satisfies comparative separation"):
        comparative_separation_sample_size(NULL_LAW, 0.5)


def test_sample_size_beyond_max_n_raises():
    with pytest.raises(ValueError, match="max_n=1000"):
        separation_sample_size(LAWS["fpr_gap"], max_n=1000)
    assert separation_sample_size(LAWS["fpr_gap"], max_n=2293) == 2293
    for bad in (0, 10.5, True, "1000"):
        with pytest.raises(InvalidParameterError, match="'max_n' parameter"):
            comparative_separation_sample_size(LAWS["fpr_gap"], max_n=bad)


# --- validation -----------------------------------------------------------------
@pytest.mark.parametrize(
    "cells, error, match",
    [
        ([0.5, 0.5], ValueError, "8 entries"),
        (np.full((2, 4), 1 / 8), ValueError, "8 entries"),
        ([0.25, 0.0, 0.1, 0.15, 0.25, 0.0, 0.1, -0.15], ValueError, "non-negative"),
        ([np.nan, 0.0, 0.1, 0.15, 0.25, 0.0, 0.1, 0.15], ValueError, "NaN"),
        ([0.2] * 8, ValueError, "sum to 1"),
        ([0.3, 0.2, 0.0, 0.0, 0.1, 0.1, 0.1, 0.2], ValueError, r"P\(Y=0, A=1\) = 0"),
        ([0.2, 0.2, 0.1, 0.1, 0.0, 0.0, 0.2, 0.2], ValueError, r"P\(Y=1, A=0\) = 0"),
        (["a"] * 8, TypeError, "numeric"),
        ("abcdefgh", InvalidParameterError, "'cell_probs' parameter"),
        (3, InvalidParameterError, "'cell_probs' parameter"),
    ],
)
def test_bad_cell_probs(cells, error, match):
    for func in (
        lambda c: separation_power(c, 100),
        lambda c: comparative_separation_power(c, 100),
        separation_sample_size,
        comparative_separation_sample_size,
        lambda c: simulate_separation_power(c, 100, n_repeats=10),
    ):
        with pytest.raises(error, match=match):
            func(cells)


def test_bad_cell_table():
    table = pd.DataFrame(CELLS, columns=["C", "Y", "A"]).assign(p=NULL_LAW)
    with pytest.raises(ValueError, match="columns 'C', 'Y', 'A' and 'p'"):
        separation_power(table.drop(columns="p"), 100)
    with pytest.raises(ValueError, match="8 rows"):
        separation_power(table.iloc[:7], 100)
    with pytest.raises(ValueError, match="exactly once"):
        separation_power(table.assign(C=1), 100)
    with pytest.raises(ValueError, match="'Y' must hold the values 0 and 1"):
        separation_power(table.assign(Y=table["Y"] * 2), 100)
    with pytest.raises(ValueError, match="as a mapping must map the columns"):
        separation_power({"C": 1, "Y": 1, "A": 1, "p": 1.0}, 100)


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1, np.nan, "0.05", True, None])
def test_bad_alpha(alpha):
    calls = {
        "separation_power": lambda: separation_power(NULL_LAW, 100, alpha=alpha),
        "comparative_separation_power": lambda: comparative_separation_power(
            NULL_LAW, 100, alpha=alpha
        ),
        "comparative_separation_sample_size": lambda: (
            comparative_separation_sample_size(LAWS["fpr_gap"], alpha=alpha)
        ),
        "simulate_separation_power": lambda: simulate_separation_power(
            NULL_LAW, 100, alpha=alpha
        ),
    }
    for name, call in calls.items():
        with pytest.raises(
            InvalidParameterError, match=f"'alpha' parameter of {name} must be"
        ):
            call()


@pytest.mark.parametrize("power", [0, 1, 1.2, np.nan, "0.8"])
def test_bad_power(power):
    for func in (separation_sample_size, comparative_separation_sample_size):
        with pytest.raises(InvalidParameterError, match="'power' parameter"):
            func(LAWS["fpr_gap"], power)


@pytest.mark.parametrize("n", [0, -5, np.inf, np.nan, "100", True, None])
def test_bad_scalar_sizes(n):
    # a refused value raises before any work, naming the parameter
    with pytest.raises(InvalidParameterError, match="'n' parameter"):
        separation_power(NULL_LAW, n)
    with pytest.raises(InvalidParameterError, match="'n_pairs' parameter"):
        comparative_separation_power(NULL_LAW, n)


@pytest.mark.parametrize(
    "n, error, match",
    [
        ([0, 100], ValueError, "> 0"),
        ([-5], ValueError, "> 0"),
        ([100, np.nan], ValueError, "finite"),
        ([100, np.inf], ValueError, "finite"),
        ([[100, 200]], ValueError, "scalar or 1-D"),
        ([], ValueError, "empty"),
        (["100"], TypeError, "numeric"),
        ([True, False], TypeError, "numeric"),
    ],
)
def test_bad_size_arrays(n, error, match):
    with pytest.raises(error, match=match):
        separation_power(NULL_LAW, n)
    with pytest.raises(error, match="n_pairs"):
        comparative_separation_power(NULL_LAW, n)


def test_bad_simulation_arguments():
    law = LAWS["fpr_gap"]
    with pytest.raises(ValueError, match="pass n_pairs"):
        simulate_separation_power(law, comparative=True)
    with pytest.raises(ValueError, match="does not use n"):
        simulate_separation_power(law, 100, comparative=True, n_pairs=200)
    with pytest.raises(ValueError, match="only used with comparative=True"):
        simulate_separation_power(law, 100, n_pairs=200)
    with pytest.raises(ValueError, match="n is required"):
        simulate_separation_power(law)
    with pytest.raises(ValueError, match="integers to simulate"):
        simulate_separation_power(law, 100.5)
    with pytest.raises(ValueError, match="integers to simulate"):
        simulate_separation_power(law, [100, 100.5])
    bad = [
        ({"n_repeats": 0}, "n_repeats"),
        ({"n_repeats": 10.0}, "n_repeats"),
        ({"comparative": "yes"}, "comparative"),
        ({"comparative": 1}, "comparative"),
        ({"random_state": "seed"}, "random_state"),
        ({"random_state": -1}, "random_state"),
        ({"n": 0}, "n"),
    ]
    for kwargs, name in bad:
        with pytest.raises(
            InvalidParameterError,
            match=f"'{name}' parameter of simulate_separation_power must be",
        ):
            simulate_separation_power(law, **{"n": 100, **kwargs})
