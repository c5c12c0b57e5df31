"""The exact unconditional test of two proportions and the permutation p-values.

The exact test is checked against scipy's one-table implementation
(:func:`scipy.stats.barnard_exact`), against a brute-force computation of its
definition (the whole two-dimensional rejection region, a dense grid of the
nuisance parameter), and by its size computed exactly over all tables.
"""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import ndtr
from scipy.stats import barnard_exact, beta, binom, hypergeom

from sklearn_smallfair.stats._exact import (
    BERGER_BOOS_GAMMA,
    MAX_EXACT_N,
    TIE_RTOL,
    barnard_exact_pvalues,
    score_statistic,
)
from sklearn_smallfair.stats._permutation import (
    permutation_pvalue,
    two_sample_permutation_pvalues,
)


def _region(xa, na, xb, nb):
    """The rejection region ``|z| >= |z_obs|`` over all tables (with ties)."""
    i = np.arange(na + 1)[:, None]
    j = np.arange(nb + 1)[None, :]
    t = abs(float(score_statistic(xa, na, xb, nb)))
    return np.abs(score_statistic(i, na, j, nb)) >= t * (1 - TIE_RTOL)


def _brute_force(xa, na, xb, nb, n_grid=1001, gamma=0.0):
    """``sup_pi P_pi(region)`` from the 2-D region and a dense grid, refined;
    with ``gamma > 0`` over the Clopper-Pearson interval of the pooled rate
    (not folded), plus ``gamma``."""
    region = _region(xa, na, xb, nb).astype(float)
    s, n = xa + xb, na + nb
    low, high = 0.0, 1.0
    if gamma > 0:
        low = beta.ppf(gamma / 2, s, n - s + 1) if s > 0 else 0.0
        high = beta.ppf(1 - gamma / 2, s + 1, n - s) if s < n else 1.0

    def p_at(pis):
        pis = np.atleast_1d(pis)
        pa = binom.pmf(np.arange(na + 1)[None, :], na, pis[:, None])
        pb = binom.pmf(np.arange(nb + 1)[None, :], nb, pis[:, None])
        return np.einsum("gi,ij,gj->g", pa, region, pb)

    grid = np.linspace(low, high, n_grid)
    values = p_at(grid)
    best = values.max()
    for g in np.argsort(-values)[:5]:
        lo, hi = grid[max(g - 1, 0)], grid[min(g + 1, n_grid - 1)]
        res = minimize_scalar(
            lambda x: -p_at(x)[0],
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-12},
        )
        best = max(best, -res.fun)
    return min(1.0, best + gamma)


def _scipy_region_is_ours(xa, na, xb, nb):
    """Whether scipy's exact comparison selects the same tables as ours.

    scipy compares the statistics with ``>=`` and no tolerance, so tables whose
    statistic equals the observed one mathematically but is a few ulps smaller
    in floating point are left out of its region (and its p-value is smaller).
    """
    x1 = np.arange(na + 1)[:, None]
    x2 = np.arange(nb + 1)[None, :]
    p1, p2, p = x1 / na, x2 / nb, (x1 + x2) / (na + nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (p1 - p2) / np.sqrt(p * (1 - p) * (1 / na + 1 / nb))
    w[p1 == p2] = 0
    return np.array_equal(np.abs(w) >= abs(w[xa, xb]), _region(xa, na, xb, nb))


def _random_tables(rng, m, n_max):
    na = rng.integers(1, n_max + 1, m)
    nb = rng.integers(1, n_max + 1, m)
    xa = rng.binomial(na, rng.random(m))
    xb = rng.binomial(nb, rng.random(m))
    return xa, na, xb, nb


# =====================================================================================
# 1. The statistic and the shape of the rejection region
# =====================================================================================
def test_score_statistic_closed_form_and_degenerate_tables():
    pp = 140 / 200
    z = (0.8 - 0.6) / np.sqrt(pp * (1 - pp) * (2 / 100))
    assert float(score_statistic(80, 100, 60, 100)) == pytest.approx(z, rel=1e-14)
    # pooled rate 0 or 1, and equal rates: 0
    np.testing.assert_array_equal(
        score_statistic([0, 7, 3], [7, 7, 10], [0, 9, 6], [9, 9, 20]), [0, 0, 0]
    )
    # antisymmetric in the two samples
    assert float(score_statistic(3, 10, 40, 50)) == -float(
        score_statistic(40, 50, 3, 10)
    )


@pytest.mark.parametrize("seed", range(5))
def test_statistic_is_non_increasing_in_the_other_count(seed):
    # the computation rests on it: for a fixed count of one sample, |z| >= t is
    # two tails of the other sample's count
    rng = np.random.default_rng(seed)
    for na, nb in zip(rng.integers(1, 60, 20), rng.integers(1, 3000, 20)):
        i = np.arange(na + 1)[:, None]
        j = np.arange(nb + 1)[None, :]
        z = score_statistic(i, na, j, nb)
        assert (np.diff(z, axis=1) <= 1e-12).all(), (na, nb)


# =====================================================================================
# 2. Agreement with scipy and with the definition
# =====================================================================================
def test_agrees_with_scipy_barnard_exact_on_random_small_tables():
    rng = np.random.default_rng(20261124)
    xa, na, xb, nb = _random_tables(rng, 400, 30)
    ours = barnard_exact_pvalues(xa, na, xb, nb)
    same = np.array([_scipy_region_is_ours(*t) for t in zip(xa, na, xb, nb)])
    assert same.sum() >= 250  # not vacuous
    worst = 0.0
    for k in np.flatnonzero(same):
        table = [[xa[k], xb[k]], [na[k] - xa[k], nb[k] - xb[k]]]
        theirs = barnard_exact(table, pooled=True).pvalue
        worst = max(worst, abs(ours[k] - theirs))
    assert worst < 1e-9
    # where floating-point ties split scipy's region, ours is the larger p-value
    # and equals the definition computed by brute force
    ties = np.flatnonzero(~same)[:40]
    assert ties.size >= 20
    for k in ties:
        table = [[xa[k], xb[k]], [na[k] - xa[k], nb[k] - xb[k]]]
        assert ours[k] >= barnard_exact(table, pooled=True).pvalue - 1e-12
        assert ours[k] == pytest.approx(
            _brute_force(xa[k], na[k], xb[k], nb[k]), abs=1e-9
        )


@pytest.mark.parametrize(
    "xa, na, xb, nb",
    [
        (0, 10, 400, 5000),
        (10, 10, 4000, 5000),
        (3, 10, 1000, 5000),
        (1, 5, 4500, 5000),
        (2, 5, 50, 200),
        (5, 10, 120, 200),
        (45, 50, 950, 1000),
        (4, 5, 2, 40),
        (0, 5, 3, 200),
        (17, 40, 21, 35),
    ],
)
def test_agrees_with_the_definition_on_unbalanced_tables(xa, na, xb, nb):
    ours = float(barnard_exact_pvalues(xa, na, xb, nb))
    assert ours == pytest.approx(_brute_force(xa, na, xb, nb), abs=1e-9, rel=1e-9)
    # the order of the samples and of the outcomes does not matter
    assert float(barnard_exact_pvalues(xb, nb, xa, na)) == pytest.approx(ours)
    assert float(barnard_exact_pvalues(na - xa, na, nb - xb, nb)) == pytest.approx(ours)


@pytest.mark.parametrize(
    "xa, na, xb, nb",
    [
        (0, 10, 400, 5000),
        (3, 10, 1000, 5000),
        (5, 5, 400, 500),
        (17, 50, 500, 1000),
        (4, 5, 2, 40),
        (2, 5, 8, 10),
        (0, 5, 0, 7),
        (30, 40, 5, 35),
    ],
)
def test_berger_boos_agrees_with_its_definition(xa, na, xb, nb):
    gamma = BERGER_BOOS_GAMMA
    ours = float(barnard_exact_pvalues(xa, na, xb, nb, gamma=gamma))
    if xa + xb == 0:
        assert ours == 1.0
        return
    assert ours == pytest.approx(
        _brute_force(xa, na, xb, nb, gamma=gamma), abs=1e-9, rel=1e-9
    )
    # at most Barnard's p-value plus gamma
    assert ours <= float(barnard_exact_pvalues(xa, na, xb, nb)) + gamma + 1e-12


def test_berger_boos_is_less_conservative_with_a_large_group():
    # Barnard's supremum for 17/50 against 500/1000 is reached at a common rate
    # near 0.003 that the data exclude; restricted to the 99.9 % interval of the
    # pooled rate, the p-value is close to the score test's
    barnard = float(barnard_exact_pvalues(17, 50, 500, 1000))
    restricted = float(barnard_exact_pvalues(17, 50, 500, 1000, gamma=1e-3))
    score = float(2 * ndtr(-abs(score_statistic(17, 50, 500, 1000))))
    assert barnard > 0.06 and restricted < 0.035
    assert restricted == pytest.approx(score, abs=0.005)


def test_vectorized_equals_one_table_at_a_time():
    rng = np.random.default_rng(7)
    xa, na, xb, nb = _random_tables(rng, 60, 80)
    together = barnard_exact_pvalues(xa, na, xb, nb)
    alone = [float(barnard_exact_pvalues(*t)) for t in zip(xa, na, xb, nb)]
    np.testing.assert_allclose(together, alone, rtol=1e-12, atol=1e-14)
    assert together.shape == (60,)
    assert barnard_exact_pvalues(xa.reshape(6, 10), 80, xb.reshape(6, 10), 80).shape
    assert np.ndim(barnard_exact_pvalues(3, 10, 5, 10)) == 0


def test_degenerate_tables():
    p = barnard_exact_pvalues([0, 5, 0, 6, 2], [5, 5, 0, 14, 4], [0, 7, 3, 3, 1], 7)
    np.testing.assert_array_equal(p[:2], [1.0, 1.0])  # pooled rate 0 or 1
    assert np.isnan(p[2])  # an empty sample: nothing to test
    assert p[3] == 1.0  # equal rates: z = 0
    assert 0 < p[4] <= 1
    with pytest.raises(ValueError, match=f"at most {MAX_EXACT_N} people"):
        barnard_exact_pvalues(600, MAX_EXACT_N + 1, 700, MAX_EXACT_N + 5)


# =====================================================================================
# 3. Exactness and cost
# =====================================================================================
@pytest.mark.parametrize("gamma", [0.0, BERGER_BOOS_GAMMA])
@pytest.mark.parametrize("na, nb", [(5, 30), (10, 10), (8, 60)])
def test_size_is_at_most_alpha_for_every_common_rate(na, nb, gamma):
    # the p-value of every table, then the exact rejection probability at alpha
    # on a grid of common rates: never above alpha
    i, j = np.meshgrid(np.arange(na + 1), np.arange(nb + 1), indexing="ij")
    p = barnard_exact_pvalues(i, na, j, nb, gamma=gamma)
    pis = np.linspace(0.001, 0.999, 999)
    mass = binom.pmf(i[..., None], na, pis) * binom.pmf(j[..., None], nb, pis)
    for alpha in (0.01, 0.05, 0.1):
        size = (mass * (p <= alpha)[..., None]).sum(axis=(0, 1))
        assert size.max() <= alpha + 1e-12
        assert size.max() > alpha / 4  # not vacuous: the test does reject


def test_small_against_large_group():
    # A group of 10 against one of 5000 (the speed is in bench_separation.py)
    p = barnard_exact_pvalues(np.arange(11), 10, 4000, 5000)
    assert p.shape == (11,) and (np.diff(p[:8]) >= 0).all()


# =====================================================================================
# 4. Permutation p-values
# =====================================================================================
def test_permutation_pvalue_counts_the_observed_value_and_ties():
    assert float(permutation_pvalue(2.0, [0.5, 2.0, 3.1, 1.0])) == 3 / 5
    assert float(permutation_pvalue(9.0, [0.5, 2.0, 3.1, 1.0])) == 1 / 5
    # a tie lost to rounding is still a tie
    assert float(permutation_pvalue(0.3, [0.1 + 0.2 - 1e-16])) == 1.0
    p = permutation_pvalue([1.0, np.nan], [[0.0, 2.0], [1.0, 1.0]])
    assert p[0] == 2 / 3 and np.isnan(p[1])


def test_two_sample_permutation_matches_the_conditional_law():
    # the permutation law of x_a is hypergeometric: the p-value converges to the
    # exact conditional p-value P(|z*| >= |z|) computed from hypergeom
    rng = np.random.default_rng(1)
    tables = [(9, 10, 2, 10), (3, 8, 40, 50), (1, 5, 180, 200), (4, 12, 4, 12)]
    b = 20_000
    for xa, na, xb, nb in tables:
        p = float(
            two_sample_permutation_pvalues(xa, na, xb, nb, n_resamples=b, rng=rng)
        )
        k = np.arange(max(0, xa + xb - nb), min(na, xa + xb) + 1)
        z = np.abs(score_statistic(k, na, xa + xb - k, nb))
        t = abs(float(score_statistic(xa, na, xb, nb)))
        exact = hypergeom.pmf(k, na + nb, xa + xb, na)[z >= t * (1 - TIE_RTOL)].sum()
        se = np.sqrt(exact * (1 - exact) / b)
        assert abs(p - exact) <= 4 * se + 1 / b, (xa, na, xb, nb)
    # empty samples give NaN, the smallest p-value is 1 / (B + 1)
    p = two_sample_permutation_pvalues(
        [3, 20], [0, 20], [1, 0], [5, 20], n_resamples=99, rng=rng
    )
    assert np.isnan(p[0]) and p[1] == pytest.approx(1 / 100)


def test_two_sample_permutation_is_reproducible():
    args = ([3, 7], [10, 12], [8, 2], [11, 9])
    one = two_sample_permutation_pvalues(
        *args, n_resamples=999, rng=np.random.default_rng(5)
    )
    two = two_sample_permutation_pvalues(
        *args, n_resamples=999, rng=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(one, two)


@pytest.mark.slow
def test_agreement_on_many_random_tables():
    # small tables against scipy (where floating-point ties do not split scipy's
    # region), unbalanced ones against the brute-force definition, both forms
    rng = np.random.default_rng(11)
    xa, na, xb, nb = _random_tables(rng, 1000, 40)
    ours = barnard_exact_pvalues(xa, na, xb, nb)
    diff = []
    for k in range(xa.shape[0]):
        if _scipy_region_is_ours(xa[k], na[k], xb[k], nb[k]):
            table = [[xa[k], xb[k]], [na[k] - xa[k], nb[k] - xb[k]]]
            diff.append((ours[k] - barnard_exact(table).pvalue, k))
    worst = max(abs(d) for d, _ in diff)
    print(f"{len(diff)} tables; worst difference from scipy: {worst:.2e}")
    assert len(diff) > 600 and worst < 1e-6
    # where they differ, scipy's optimizer (32 points) stopped short of the
    # supremum: ours is larger, and is the definition's value
    for d, k in diff:
        assert d > -1e-12
        if d > 1e-9:
            assert ours[k] == pytest.approx(
                _brute_force(xa[k], na[k], xb[k], nb[k], n_grid=20001), abs=1e-9
            )
    m = 30
    na = rng.integers(1, 30, m)
    nb = rng.integers(100, 3000, m)
    rate = rng.random(m) ** 2
    xa = rng.binomial(na, rate)
    xb = rng.binomial(nb, np.clip(rate + rng.normal(0, 0.05, m), 0, 1))
    for gamma in (0.0, BERGER_BOOS_GAMMA):
        ours = barnard_exact_pvalues(xa, na, xb, nb, gamma=gamma)
        brute = [
            _brute_force(*t, gamma=gamma) if t[0] + t[2] > 0 else 1.0
            for t in zip(xa, na, xb, nb)
        ]
        worst = float(np.max(np.abs(ours - brute)))
        print(f"gamma={gamma}: worst difference from the definition: {worst:.2e}")
        assert worst < 1e-9
