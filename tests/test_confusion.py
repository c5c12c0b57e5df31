"""Tests of the confusion-matrix core: enumeration, pmfs, counting, references."""

import itertools
from math import comb, log, sqrt

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.special import gammaln
from sklearn.metrics import confusion_matrix

from sklearn_smallfair import (
    CELLS,
    check_group_counts,
    enumerate_confusion_matrices,
    from_sklearn_order,
    multinomial_logpmf,
    multivariate_hypergeometric_logpmf,
    n_confusion_matrices,
    reference_counts,
)
from sklearn_smallfair._confusion import FN, FP, TN, TP
from sklearn_smallfair.metrics import confusion_counts

# --------------------------------------------------------------------------------------
# helpers


def _matrix_index(cms, n):
    """Injective integer code of matrices of total n (TN is implied)."""
    cms = np.asarray(cms, dtype=np.int64)
    return (cms[..., TP] * (n + 1) + cms[..., FN]) * (n + 1) + cms[..., FP]


def _empirical_frequencies(draws, n):
    """Frequencies of the drawn matrices, in the order of the enumeration of size n."""
    cms = enumerate_confusion_matrices(n)
    keys = _matrix_index(cms, n)
    order = np.argsort(keys)
    pos = np.searchsorted(keys[order], _matrix_index(draws, n))
    idx = order[pos]
    assert_array_equal(cms[idx], draws)  # every draw is one of the enumerated matrices
    return np.bincount(idx, minlength=cms.shape[0]) / draws.shape[0]


def _tv_bound(pmf, n_resamples, delta=1e-9):
    """Upper bound for the total-variation distance of an empirical law.

    E[TV] <= 1/2 sum_i sd(f_i) = 1/2 sum_i sqrt(p_i (1 - p_i) / M) (Jensen), and TV
    changes by at most 1/M when one draw changes, so by McDiarmid's inequality
    P(TV > E[TV] + t) <= exp(-2 M t^2) = delta.
    """
    mean_bound = 0.5 * np.sqrt(pmf * (1 - pmf) / n_resamples).sum()
    return mean_bound + sqrt(log(1 / delta) / (2 * n_resamples))


def _pooled_chisquare_pvalue(freq, pmf, n_resamples, min_expected=5.0):
    """Pearson chi-square p-value, pooling cells with expected count < 5."""
    observed = freq * n_resamples
    expected = pmf * n_resamples
    small = expected < min_expected
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    exp = exp[keep] * obs[keep].sum() / exp[keep].sum()
    return stats.chisquare(obs[keep], exp).pvalue


# --------------------------------------------------------------------------------------
# cell order


def test_cell_constants():
    assert CELLS == ("TP", "FN", "FP", "TN")
    assert (TP, FN, FP, TN) == (0, 1, 2, 3)


@pytest.mark.parametrize("as_2x2", [True, False])
def test_from_sklearn_order(as_2x2):
    # scikit-learn: [[TN, FP], [FN, TP]]
    cm = np.array([[5, 1], [2, 7]])
    arg = cm if as_2x2 else cm.ravel()
    assert_array_equal(from_sklearn_order(arg), [7, 2, 1, 5])


def test_from_sklearn_order_stacked():
    rng = np.random.default_rng(0)
    cms = rng.integers(0, 50, size=(3, 5, 2, 2))
    out = from_sklearn_order(cms)
    assert out.shape == (3, 5, 4)
    assert_array_equal(out[..., TP], cms[..., 1, 1])
    assert_array_equal(out[..., FN], cms[..., 1, 0])
    assert_array_equal(out[..., FP], cms[..., 0, 1])
    assert_array_equal(out[..., TN], cms[..., 0, 0])


def test_from_sklearn_order_rejects_bad_input():
    with pytest.raises(ValueError, match="cm must have shape"):
        from_sklearn_order([1, 2, 3])
    with pytest.raises(ValueError, match="cm must be non-negative"):
        from_sklearn_order([[1, -2], [3, 4]])


# --------------------------------------------------------------------------------------
# enumeration of all matrices of size n


@pytest.mark.parametrize("n", range(61))
def test_enumerate_confusion_matrices_basic(n):
    cms = enumerate_confusion_matrices(n)
    assert cms.shape == (comb(n + 3, 3), 4)
    assert n_confusion_matrices(n) == comb(n + 3, 3)
    assert cms.dtype == np.int64
    assert (cms >= 0).all()
    assert (cms.sum(axis=1) == n).all()
    assert np.unique(cms, axis=0).shape[0] == cms.shape[0]  # all rows distinct
    # documented order: TP, then FN + FP, then FN (ascending)
    order = np.lexsort((cms[:, FN], cms[:, FN] + cms[:, FP], cms[:, TP]))
    assert_array_equal(order, np.arange(cms.shape[0]))


@pytest.mark.parametrize("n", range(16))
def test_enumerate_confusion_matrices_equals_naive_loop(n):
    naive = set()
    for tp in range(n + 1):
        for fn in range(n + 1):
            for fp in range(n + 1):
                tn = n - tp - fn - fp
                if tn >= 0:
                    naive.add((tp, fn, fp, tn))
    got = {tuple(int(v) for v in row) for row in enumerate_confusion_matrices(n)}
    assert got == naive


def test_enumerate_confusion_matrices_read_only():
    cms = enumerate_confusion_matrices(7)
    assert not cms.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        cms[0, 0] = 99
    # the cached array was not modified
    assert (enumerate_confusion_matrices(7).sum(axis=1) == 7).all()


def test_enumerate_confusion_matrices_numpy_integer():
    assert_array_equal(
        enumerate_confusion_matrices(np.int64(4)), enumerate_confusion_matrices(4)
    )


@pytest.mark.parametrize(
    "n, error",
    [
        (-1, ValueError),
        (2.0, TypeError),
        (True, TypeError),
        ("3", TypeError),
        (None, TypeError),
        (np.float64(3), TypeError),
    ],
)
def test_enumerate_confusion_matrices_bad_n(n, error):
    match = r"'n' parameter of enumerate_confusion_matrices must be an int in the range"
    with pytest.raises(error, match=match):
        enumerate_confusion_matrices(n)


# --------------------------------------------------------------------------------------
# multinomial pmf

PROBS = [
    [0.1, 0.2, 0.3, 0.4],
    [0.25, 0.25, 0.25, 0.25],
    [0.7, 0.0, 0.3, 0.0],  # zeros
    [0.0, 0.0, 0.0, 1.0],  # degenerate
    [1e-3, 0.5, 0.2, 0.299],
]


@pytest.mark.parametrize("p", PROBS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 20, 60])
def test_multinomial_logpmf_sums_to_one(p, n):
    pmf = np.exp(multinomial_logpmf(enumerate_confusion_matrices(n), p))
    assert pmf.shape == (n_confusion_matrices(n),)
    assert_allclose(pmf.sum(), 1.0, rtol=1e-12)


@pytest.mark.parametrize("p", PROBS)
@pytest.mark.parametrize("n", [1, 7, 30])
def test_multinomial_logpmf_matches_scipy(p, n):
    cms = enumerate_confusion_matrices(n)
    expected = stats.multinomial.logpmf(cms, n, p)
    assert_allclose(multinomial_logpmf(cms, p), expected, rtol=1e-11, atol=1e-11)


def test_multinomial_logpmf_unnormalised_weights():
    cms = enumerate_confusion_matrices(6)
    assert_allclose(
        multinomial_logpmf(cms, [1, 2, 3, 4]),
        multinomial_logpmf(cms, [0.1, 0.2, 0.3, 0.4]),
    )


def test_multinomial_logpmf_zero_probability_cells():
    cms = enumerate_confusion_matrices(5)
    p = np.array([0.7, 0.0, 0.3, 0.0])
    logpmf = multinomial_logpmf(cms, p)
    impossible = (cms[:, FN] > 0) | (cms[:, TN] > 0)
    assert np.isneginf(logpmf[impossible]).all()
    assert np.isfinite(logpmf[~impossible]).all()
    # the possible ones are binomial(5, 0.7) in TP
    assert_allclose(
        np.exp(logpmf[~impossible]), stats.binom.pmf(cms[~impossible, TP], 5, 0.7)
    )


def test_multinomial_logpmf_broadcasts_over_p():
    rng = np.random.default_rng(1)
    cms = enumerate_confusion_matrices(6)
    p = rng.dirichlet(np.ones(4), size=(2, 3))  # (2, 3, 4)
    out = multinomial_logpmf(cms, p[:, :, None, :])
    assert out.shape == (2, 3, cms.shape[0])
    for i, j in itertools.product(range(2), range(3)):
        assert_allclose(out[i, j], multinomial_logpmf(cms, p[i, j]), rtol=1e-14)
    # one p per matrix
    p_rows = rng.dirichlet(np.ones(4), size=cms.shape[0])
    out = multinomial_logpmf(cms, p_rows)
    expected = [stats.multinomial.logpmf(c, 6, q) for c, q in zip(cms, p_rows)]
    assert_allclose(out, expected, rtol=1e-11)


def test_multinomial_logpmf_float_counts_and_varying_n():
    cms = np.array([[1, 2, 3, 4], [0, 0, 0, 0], [5, 0, 0, 0]])
    p = [0.1, 0.2, 0.3, 0.4]
    # closed form (scipy < 1.10 returns NaN for n = 0)
    expected = (
        gammaln(cms.sum(axis=1) + 1)
        - gammaln(cms + 1).sum(axis=1)
        + (cms * np.log(p)).sum(axis=1)
    )
    assert expected[1] == 0.0
    assert_allclose(
        expected[[0, 2]],
        [stats.multinomial.logpmf(c, c.sum(), p) for c in cms[[0, 2]]],
        rtol=1e-12,
    )
    assert_allclose(multinomial_logpmf(cms, p), expected, rtol=1e-12)
    assert_allclose(multinomial_logpmf(cms.astype(float), p), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "p, match",
    [
        ([0.1, -0.2, 0.5, 0.6], "p must be non-negative"),
        ([0, 0, 0, 0], "positive sum"),
        ([0.5, 0.5, 0.0], r"shape \(\.\.\., 4\)"),
    ],
)
def test_multinomial_logpmf_bad_p(p, match):
    with pytest.raises(ValueError, match=match):
        multinomial_logpmf([1, 1, 1, 1], p)


@pytest.mark.parametrize(
    "n, p",
    [
        (4, [0.1, 0.2, 0.3, 0.4]),
        (6, [0.6, 0.05, 0.15, 0.2]),
        (5, [0.5, 0.0, 0.25, 0.25]),
    ],
)
def test_multinomial_logpmf_against_simulation(n, p):
    n_resamples = 200_000
    rng = np.random.default_rng(20240501 + n)
    draws = rng.multinomial(n, p, size=n_resamples)
    freq = _empirical_frequencies(draws, n)
    pmf = np.exp(multinomial_logpmf(enumerate_confusion_matrices(n), p))
    tv = 0.5 * np.abs(freq - pmf).sum()
    assert tv <= _tv_bound(pmf, n_resamples)
    assert _pooled_chisquare_pvalue(freq, pmf, n_resamples) > 1e-6
    # a wrong law is detected by the same bound: the check has power
    wrong = np.exp(multinomial_logpmf(enumerate_confusion_matrices(n), [0.25] * 4))
    assert 0.5 * np.abs(freq - wrong).sum() > _tv_bound(wrong, n_resamples)


# --------------------------------------------------------------------------------------
# multivariate hypergeometric pmf

POPULATIONS = [[3, 4, 5, 6], [0, 5, 2, 7], [10, 0, 0, 1], [1, 1, 1, 1]]


@pytest.mark.parametrize("population", POPULATIONS)
def test_multivariate_hypergeometric_logpmf_sums_to_one(population):
    big_n = sum(population)
    for n in range(big_n + 1):
        cms = enumerate_confusion_matrices(n)
        pmf = np.exp(multivariate_hypergeometric_logpmf(cms, population))
        assert_allclose(pmf.sum(), 1.0, rtol=1e-12)
    # more draws than the population holds: impossible
    cms = enumerate_confusion_matrices(big_n + 1)
    assert np.isneginf(multivariate_hypergeometric_logpmf(cms, population)).all()


@pytest.mark.parametrize("population", POPULATIONS)
@pytest.mark.parametrize("n", [1, 3, 4])
def test_multivariate_hypergeometric_logpmf_matches_scipy(population, n):
    cms = enumerate_confusion_matrices(n)
    ours = multivariate_hypergeometric_logpmf(cms, population)
    feasible = (cms <= np.asarray(population)).all(axis=1)
    assert np.isneginf(ours[~feasible]).all()
    expected = stats.multivariate_hypergeom.logpmf(cms[feasible], m=population, n=n)
    assert_allclose(ours[feasible], expected, rtol=1e-11, atol=1e-12)


def test_multivariate_hypergeometric_logpmf_broadcasts():
    cms = enumerate_confusion_matrices(3)
    pops = np.array(POPULATIONS)[:, None, :]
    out = multivariate_hypergeometric_logpmf(cms, pops)
    assert out.shape == (len(POPULATIONS), cms.shape[0])
    for i, pop in enumerate(POPULATIONS):
        assert_array_equal(out[i], multivariate_hypergeometric_logpmf(cms, pop))


def test_multivariate_hypergeometric_logpmf_rejects_fractional_counts():
    with pytest.raises(ValueError, match="counts must hold integer counts"):
        multivariate_hypergeometric_logpmf([0.5, 0.5, 0, 0], [3, 4, 5, 6])
    with pytest.raises(ValueError, match="population must hold integer counts"):
        multivariate_hypergeometric_logpmf([1, 0, 0, 0], [3.5, 4, 5, 6])
    # integral floats are fine
    assert_allclose(
        multivariate_hypergeometric_logpmf([1.0, 0, 0, 0], [3.0, 4, 5, 6]),
        log(3 / 18),
    )


def test_multivariate_hypergeometric_logpmf_against_simulation():
    population = np.array([6, 3, 5, 10])
    n, n_resamples = 5, 200_000
    rng = np.random.default_rng(7)
    draws = rng.multivariate_hypergeometric(population, n, size=n_resamples)
    freq = _empirical_frequencies(draws, n)
    pmf = np.exp(
        multivariate_hypergeometric_logpmf(enumerate_confusion_matrices(n), population)
    )
    assert 0.5 * np.abs(freq - pmf).sum() <= _tv_bound(pmf, n_resamples)
    assert _pooled_chisquare_pvalue(freq, pmf, n_resamples) > 1e-6


# --------------------------------------------------------------------------------------
# confusion_counts


def _random_rows(seed, n_samples, n_groups=5, weighted=False):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 2, n_samples)
    y_pred = np.where(rng.random(n_samples) < 0.3, 1 - y_true, y_true)
    groups = rng.choice([f"g{i}" for i in range(n_groups)], n_samples)
    w = rng.uniform(0.1, 3.0, n_samples) if weighted else None
    return y_true, y_pred, groups, w


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_confusion_counts_matches_sklearn_per_group(seed, weighted):
    y_true, y_pred, groups, w = _random_rows(seed, 300, weighted=weighted)
    labels, counts = confusion_counts(
        y_true, y_pred, sensitive_features=groups, sample_weight=w
    )
    assert_array_equal(labels, np.unique(groups))
    assert counts.shape == (labels.shape[0], 4)
    assert counts.dtype == (np.float64 if weighted else np.int64)
    for g, row in zip(labels, counts):
        mask = groups == g
        expected = confusion_matrix(
            y_true[mask],
            y_pred[mask],
            labels=[0, 1],
            sample_weight=None if w is None else w[mask],
        )
        assert_allclose(row, from_sklearn_order(expected), rtol=1e-12)
    overall = confusion_counts(y_true, y_pred, sample_weight=w).counts
    assert overall.shape == (4,)
    expected = confusion_matrix(y_true, y_pred, labels=[0, 1], sample_weight=w)
    assert_allclose(overall, from_sklearn_order(expected.ravel()), rtol=1e-12)
    assert_allclose(counts.sum(axis=0), overall, rtol=1e-12)


def test_confusion_counts_docstring_example():
    y_true = [1, 1, 0, 0, 1, 0]
    y_pred = [1, 0, 0, 1, 1, 0]
    assert_array_equal(confusion_counts(y_true, y_pred).counts, [2, 1, 1, 2])
    groups, counts = confusion_counts(
        y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]
    )
    assert_array_equal(groups, ["a", "b"])
    assert_array_equal(counts, [[1, 1, 0, 1], [1, 0, 1, 1]])


def test_confusion_counts_each_cell():
    # one row per cell, in the order TP, FN, FP, TN
    y_true = [1, 1, 0, 0]
    y_pred = [1, 0, 1, 0]
    groups, counts = confusion_counts(y_true, y_pred, sensitive_features=[0, 1, 2, 3])
    assert_array_equal(groups, [0, 1, 2, 3])
    assert_array_equal(counts, np.eye(4, dtype=int))


@pytest.mark.parametrize("as_frame", [False, True])
def test_confusion_counts_intersectional_groups(as_frame):
    rng = np.random.default_rng(3)
    n = 400
    race = rng.choice(["Black", "White", "Asian"], n)
    sex = rng.choice(["Female", "Male"], n)
    # drop one combination entirely: absent intersections are not groups
    keep = ~((race == "Asian") & (sex == "Male"))
    race, sex = race[keep], sex[keep]
    y_true = rng.integers(0, 2, race.shape[0])
    y_pred = rng.integers(0, 2, race.shape[0])
    sf = (
        pd.DataFrame({"race": race, "sex": sex})
        if as_frame
        else np.column_stack([race, sex])
    )
    groups, counts = confusion_counts(y_true, y_pred, sensitive_features=sf)
    joined = np.char.add(np.char.add(race, "|"), sex)
    assert sorted(groups.tolist()) == sorted(set(joined.tolist()))
    assert "Asian|Male" not in groups.tolist()
    assert len(groups) == 5
    for g, row in zip(groups, counts):
        mask = joined == g
        expected = confusion_matrix(y_true[mask], y_pred[mask], labels=[0, 1])
        assert_array_equal(row, from_sklearn_order(expected))


def test_confusion_counts_intersectional_mixed_types():
    sf = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "x"]})
    groups, counts = confusion_counts([1, 0, 1, 0], [1, 0, 0, 0], sensitive_features=sf)
    assert groups.tolist() == ["1|x", "1|y", "2|x"]
    assert_array_equal(counts, [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 1]])


def test_confusion_counts_weights_give_float_sums():
    y_true = [1, 1, 0, 0, 1]
    y_pred = [1, 0, 0, 1, 1]
    w = [0.5, 2.0, 1.5, 0.25, 1.0]
    counts = confusion_counts(y_true, y_pred, sample_weight=w).counts
    assert counts.dtype == np.float64
    assert_allclose(counts, [1.5, 2.0, 0.25, 1.5])


def test_confusion_counts_zero_weight_group_raises():
    with pytest.raises(ValueError, match=r"group\(s\) \['b'\] have zero total"):
        confusion_counts(
            [1, 0, 1, 0],
            [1, 0, 0, 0],
            sensitive_features=["a", "a", "b", "b"],
            sample_weight=[1.0, 1.0, 0.0, 0.0],
        )
    with pytest.raises(ValueError, match="sample_weight sums to zero"):
        confusion_counts([1, 0], [1, 0], sample_weight=[0, 0])


@pytest.mark.parametrize("weighted", [False, True])
def test_confusion_counts_many_groups_against_loop(weighted):
    rng = np.random.default_rng(11)
    n_groups, n = 1000, 20_000
    groups = rng.permutation(
        np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, n - n_groups)])
    )
    y_true = rng.integers(0, 2, n)
    y_pred = rng.integers(0, 2, n)
    w = rng.exponential(size=n) if weighted else np.ones(n)
    labels, counts = confusion_counts(
        y_true, y_pred, sensitive_features=groups, sample_weight=w if weighted else None
    )
    assert_array_equal(labels, np.arange(n_groups))
    expected = np.empty((n_groups, 4))
    for g in range(n_groups):
        m = groups == g
        t, p, wg = y_true[m] == 1, y_pred[m] == 1, w[m]
        expected[g] = [
            wg[t & p].sum(),
            wg[t & ~p].sum(),
            wg[~t & p].sum(),
            wg[~t & ~p].sum(),
        ]
    assert_allclose(counts, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "y_true, y_pred, pos_label, expected",
    [
        (["a", "b", "b"], ["b", "b", "a"], "b", [1, 1, 1, 0]),
        (["a", "b", "b"], ["b", "b", "a"], "a", [0, 1, 1, 1]),
        ([True, False, True], [True, True, False], True, [1, 1, 1, 0]),
        ([-1, 1, 1], [1, 1, -1], 1, [1, 1, 1, 0]),
        ([0, 0, 0], [0, 1, 0], 1, [0, 0, 1, 2]),  # single class in y_true
        ([1, 1, 1], [1, 1, 1], 1, [3, 0, 0, 0]),  # a single label overall
        (["no", "no"], ["no", "no"], "yes", [0, 0, 0, 2]),
    ],
)
def test_confusion_counts_labels(y_true, y_pred, pos_label, expected):
    assert_array_equal(
        confusion_counts(y_true, y_pred, pos_label=pos_label).counts, expected
    )


def test_confusion_counts_object_dtype_numbers():
    # a pandas Series of dtype object holding numbers must count like ints
    y_true = pd.Series([1, 0, 1, 1], dtype=object)
    y_pred = np.array([1, 1, 0, 1], dtype=object)
    expected = confusion_counts([1, 0, 1, 1], [1, 1, 0, 1]).counts
    assert_array_equal(confusion_counts(y_true, y_pred).counts, expected)
    assert_array_equal(confusion_counts(y_true, [1, 1, 0, 1]).counts, expected)


# --------------------------------------------------------------------------------------
# reference_counts

COUNTS = np.array([[1, 2, 3, 4], [10, 20, 30, 40], [0, 5, 0, 5]])


def test_reference_counts_rest():
    ref = reference_counts(COUNTS)
    assert_array_equal(ref, [[10, 25, 30, 45], [1, 7, 3, 9], [11, 22, 33, 44]])
    assert_array_equal(ref, COUNTS.sum(axis=0) - COUNTS)
    assert_array_equal(reference_counts(COUNTS, "rest"), ref)


def test_reference_counts_rest_float_clipped():
    counts = np.array([[0.1, 0.2, 0.0, 0.3], [0.2, 0.1, 0.7, 0.3]])
    ref = reference_counts(counts)
    assert (ref >= 0).all()
    assert_allclose(ref, [[0.2, 0.1, 0.7, 0.3], [0.1, 0.2, 0.0, 0.3]], atol=1e-15)


def test_reference_counts_total():
    ref = reference_counts(COUNTS, "total")
    assert_array_equal(ref, np.tile([11, 27, 33, 49], (3, 1)))
    ref[0, 0] = -1  # a writable copy, not a view of anything shared
    assert_array_equal(reference_counts(COUNTS, "total")[0], [11, 27, 33, 49])


def test_reference_counts_named_group():
    ref = reference_counts(COUNTS, "b", groups=["a", "b", "c"])
    assert_array_equal(ref, np.tile([10, 20, 30, 40], (3, 1)))
    ref = reference_counts(COUNTS, 2, groups=[0, 1, 2])
    assert_array_equal(ref, np.tile([0, 5, 0, 5], (3, 1)))


def test_reference_counts_keywords_take_precedence_over_labels():
    ref = reference_counts(COUNTS, "total", groups=["total", "rest", "x"])
    assert_array_equal(ref, np.tile([11, 27, 33, 49], (3, 1)))


@pytest.mark.parametrize("kind", [list, tuple, np.array, pd.Series])
def test_reference_counts_explicit_vector(kind):
    ref = reference_counts(COUNTS, kind([4, 3, 2, 1]))
    assert ref.shape == (3, 4)
    assert_array_equal(ref, np.tile([4, 3, 2, 1], (3, 1)))


def test_reference_counts_explicit_per_group():
    explicit = np.arange(1, 13).reshape(3, 4)
    assert_array_equal(reference_counts(COUNTS, explicit), explicit)


def test_reference_counts_explicit_bad_shape():
    with pytest.raises(ValueError, match=r"shape \(4,\) or \(3, 4\)"):
        reference_counts(COUNTS, np.ones((2, 4)))
    with pytest.raises(ValueError, match="reference must be non-negative"):
        reference_counts(COUNTS, [1, -1, 1, 1])


def test_reference_counts_single_group_rest_raises():
    with pytest.raises(ValueError, match=r"zero total.*only one group"):
        reference_counts([[1, 2, 3, 4]], "rest", groups=["only"])
    # group "a"'s rest is the empty group "b"
    with pytest.raises(ValueError, match=r"group\(s\) \['a'\] has zero total"):
        reference_counts([[1, 2, 3, 4], [0, 0, 0, 0]], "rest", groups=["a", "b"])


def test_reference_counts_zero_explicit_or_named_reference_raises():
    with pytest.raises(ValueError, match="zero total"):
        reference_counts(COUNTS, [0, 0, 0, 0])
    with pytest.raises(ValueError, match="zero total"):
        reference_counts([[1, 2, 3, 4], [0, 0, 0, 0]], "b", groups=["a", "b"])


def test_reference_counts_unknown_label():
    with pytest.raises(ValueError, match=r"reference='z' is not 'rest'.*'a', 'b'"):
        reference_counts(COUNTS, "z", groups=["a", "b", "c"])
    with pytest.raises(ValueError, match="names a group, so pass groups"):
        reference_counts(COUNTS, "a")


def test_reference_counts_bad_counts_or_groups():
    with pytest.raises(ValueError, match=r"shape \(n_groups, 4\)"):
        reference_counts([1, 2, 3, 4])
    with pytest.raises(ValueError, match="groups must hold one label per row"):
        reference_counts(COUNTS, "rest", groups=["a", "b"])


# --------------------------------------------------------------------------------------
# check_group_counts


def test_check_group_counts_frame_with_group_column():
    frame = pd.DataFrame(
        {
            "Group": ["x", "y"],
            "tn": [4, 40],
            "fp": [3, 30],
            "TP": [1, 10],
            "Fn": [2, 20],
        }
    )
    groups, counts, name = check_group_counts(frame)
    assert groups.tolist() == ["x", "y"]
    assert_array_equal(counts, [[1, 2, 3, 4], [10, 20, 30, 40]])
    assert name == "group"


def test_check_group_counts_frame_with_index():
    frame = pd.DataFrame(
        {"TP": [1, 10], "FN": [2, 20], "FP": [3, 30], "TN": [4, 40]},
        index=pd.Index(["Black", "White"], name="race"),
    )
    groups, counts, name = check_group_counts(frame)
    assert groups.tolist() == ["Black", "White"]
    assert_array_equal(counts, [[1, 2, 3, 4], [10, 20, 30, 40]])
    assert name == "race"
    _, _, name = check_group_counts(frame.rename_axis(None))
    assert name == "group"


def test_check_group_counts_mapping_and_array():
    groups, counts, name = check_group_counts({"a": (1, 2, 3, 4), "b": [0, 0, 0, 7]})
    assert groups.tolist() == ["a", "b"]
    assert name == "group"
    assert_array_equal(counts, [[1, 2, 3, 4], [0, 0, 0, 7]])
    groups, counts, _ = check_group_counts(np.array([[1, 2, 3, 4], [5, 6, 7, 8.5]]))
    assert groups.tolist() == [0, 1]
    assert counts.dtype == np.float64


def test_check_group_counts_missing_columns():
    frame = pd.DataFrame({"TP": [1], "FN": [2], "TN": [4]})
    with pytest.raises(ValueError, match=r"without the column\(s\) \['FP'\]"):
        check_group_counts(frame)


def test_check_group_counts_duplicate_labels():
    frame = pd.DataFrame(
        {"group": ["a", "a"], "TP": [1, 1], "FN": [1, 1], "FP": [1, 1], "TN": [1, 1]}
    )
    with pytest.raises(ValueError, match="duplicate group labels"):
        check_group_counts(frame)
    frame = pd.DataFrame(
        {"TP": [1, 1], "FN": [1, 1], "FP": [1, 1], "TN": [1, 1]}, index=["a", "a"]
    )
    with pytest.raises(ValueError, match="duplicate group labels"):
        check_group_counts(frame)


def test_check_group_counts_empty_group():
    with pytest.raises(ValueError, match=r"group\(s\) \['b'\] in counts are empty"):
        check_group_counts({"a": (1, 2, 3, 4), "b": (0, 0, 0, 0)})


@pytest.mark.parametrize(
    "counts, error, match",
    [
        ([1, 2, 3, 4], ValueError, r"shape \(n_groups, 4\)"),
        (np.ones((2, 2, 4)), ValueError, r"shape \(n_groups, 4\)"),
        ([[1, 2, 3]], ValueError, r"shape \(\.\.\., 4\)"),
        ([[1, -2, 3, 4]], ValueError, "non-negative"),
        ([[1, np.nan, 3, 4]], ValueError, "NaN or inf"),
        ([["a", "b", "c", "d"]], TypeError, "numeric"),
    ],
)
def test_check_group_counts_bad_arrays(counts, error, match):
    with pytest.raises(error, match=match):
        check_group_counts(counts)


def test_confusion_counts_returns_one_type_whatever_its_arguments():
    from sklearn_smallfair.metrics import ConfusionCounts

    y_true, y_pred = [1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]
    overall = confusion_counts(y_true, y_pred)
    grouped = confusion_counts(y_true, y_pred, sensitive_features=list("aaabbb"))
    weighted = confusion_counts(y_true, y_pred, sample_weight=np.full(6, 0.5))
    for result in (overall, grouped, weighted):
        assert type(result) is ConfusionCounts
    assert overall.groups is None
    assert_array_equal(overall.counts, [2, 1, 1, 2])
    assert_array_equal(weighted.counts, [1.0, 0.5, 0.5, 1.0])
    groups, counts = grouped
    assert_array_equal(groups, ["a", "b"])
    assert_array_equal(counts.sum(axis=0), overall.counts)
    frame = grouped.to_frame()
    assert list(frame.columns) == ["TP", "FN", "FP", "TN"]
    assert list(frame.index) == ["a", "b"] and frame.index.name == "group"
    assert_array_equal(frame.to_numpy(), counts)
    assert list(overall.to_frame().index) == ["all"]


# ---------------------------------------------------------------------------
# n_confusion_matrices and enumerate_confusion_matrices: checked n, bounded memory


@pytest.mark.parametrize(
    "n, error",
    [
        (-1, ValueError),
        (-(10**9), ValueError),
        (1.5, TypeError),
        (2.0, TypeError),
        (np.float64(3), TypeError),
        (True, TypeError),
        (np.True_, TypeError),
        ("3", TypeError),
        (None, TypeError),
    ],
)
def test_n_confusion_matrices_bad_n(n, error):
    match = r"'n' parameter of n_confusion_matrices must be an int in the range"
    with pytest.raises(error, match=match):
        n_confusion_matrices(n)


def test_n_confusion_matrices_any_size():
    assert n_confusion_matrices(0) == 1
    assert n_confusion_matrices(np.int64(150)) == 585276
    assert n_confusion_matrices(10**6) == comb(10**6 + 3, 3)
    assert n_confusion_matrices(10**30) == comb(10**30 + 3, 3)


@pytest.mark.parametrize("n", [737, 10**4, 10**6, 10**18])
def test_enumerate_confusion_matrices_above_the_bound(n):
    with pytest.raises(ValueError) as exc:
        enumerate_confusion_matrices(n)
    message = str(exc.value)
    assert f"size n={n}" in message
    assert f"C(n + 3, 3) = {comb(n + 3, 3):,}" in message
    assert "MAX_ENUMERATION_BYTES = 2 GiB (n <= 736)" in message
    assert "n_confusion_matrices(n)" in message  # what to use instead


def test_enumerate_confusion_matrices_bound_edge(monkeypatch):
    from sklearn_smallfair import _enumeration

    monkeypatch.setattr(_enumeration, "MAX_ENUMERATION_BYTES", comb(33, 3) * 4 * 8)
    assert enumerate_confusion_matrices(30).shape == (comb(33, 3), 4)
    with pytest.raises(ValueError, match=r"of memory, above the bound .*\(n <= 30\)"):
        enumerate_confusion_matrices(31)


def test_large_enumerations_are_not_cached():
    from sklearn_smallfair._enumeration import _ENUMERATION_CACHE_ROWS

    assert enumerate_confusion_matrices(182) is enumerate_confusion_matrices(182)
    assert comb(186, 3) > _ENUMERATION_CACHE_ROWS
    a, b = enumerate_confusion_matrices(183), enumerate_confusion_matrices(183)
    assert a is not b and not a.flags.writeable
    assert_array_equal(a, b)
