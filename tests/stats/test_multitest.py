"""Tests of adjust_pvalues (Bonferroni, Holm, Benjamini-Hochberg)."""

import numpy as np
import pytest

from sklearn_smallfair._compat import InvalidParameterError
from sklearn_smallfair.stats import adjust_pvalues
from sklearn_smallfair.stats._multitest import check_correction, group_pairs

CORRECTIONS = ["bonferroni", "holm", "fdr_bh"]

# A fixed family with ties (two 0.04) and NaNs (tests that could not be run).
P = np.array([0.01, 0.04, np.nan, 0.03, 0.04, 0.2, np.nan, 0.005])
# Hand-computed with m = 6 valid p-values, sorted 0.005, 0.01, 0.03, 0.04, 0.04, 0.2:
#   Bonferroni: 6 p, capped at 1.
#   Holm: (6, 5, 4, 3, 2, 1) * p = 0.03, 0.05, 0.12, 0.12, 0.08, 0.2; running max
#         0.03, 0.05, 0.12, 0.12, 0.12, 0.2.
#   BH:   6 p / rank = 0.03, 0.03, 0.06, 0.06, 0.048, 0.2; running min from the top
#         0.03, 0.03, 0.048, 0.048, 0.048, 0.2.
EXPECTED = {
    "bonferroni": [0.06, 0.24, np.nan, 0.18, 0.24, 1.0, np.nan, 0.03],
    "holm": [0.05, 0.12, np.nan, 0.12, 0.12, 0.2, np.nan, 0.03],
    "fdr_bh": [0.03, 0.048, np.nan, 0.048, 0.048, 0.2, np.nan, 0.03],
}


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_hand_computed_values_with_ties_and_nans(correction):
    adj = adjust_pvalues(P, correction)
    np.testing.assert_allclose(adj, EXPECTED[correction], rtol=1e-12, atol=0)
    # NaNs stay where they were and do not count toward m
    np.testing.assert_array_equal(np.isnan(adj), np.isnan(P))
    np.testing.assert_allclose(
        adjust_pvalues(P[~np.isnan(P)], correction), adj[~np.isnan(P)], rtol=1e-15
    )
    # tied raw p-values get tied adjusted values
    assert adj[1] == adj[4]


def test_none_returns_an_unchanged_copy():
    out = adjust_pvalues(P, None)
    np.testing.assert_array_equal(out, P)
    out[0] = 0.5
    assert P[0] == 0.01


# ---- independent reference implementations (definitions, written plainly) ------------
def _holm_reference(p):
    """Adjusted p_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)) (1-based ranks)."""
    out = [np.nan] * len(p)
    valid = [(v, idx) for idx, v in enumerate(p) if not np.isnan(v)]
    valid.sort()
    m = len(valid)
    running = 0.0
    for rank, (v, idx) in enumerate(valid, start=1):
        running = max(running, min(1.0, (m - rank + 1) * v))
        out[idx] = running
    return np.array(out)


def _bh_reference(p):
    """Adjusted p_(i) = min_{j >= i} min(1, m p_(j) / j) (1-based ranks)."""
    out = [np.nan] * len(p)
    valid = [(v, idx) for idx, v in enumerate(p) if not np.isnan(v)]
    valid.sort()
    m = len(valid)
    for rank, (_, idx) in enumerate(valid, start=1):
        out[idx] = min(min(1.0, m * valid[j - 1][0] / j) for j in range(rank, m + 1))
    return np.array(out)


def _holm_rejections(p, alpha):
    """Holm's step-down procedure as published: reject p_(1..i-1), where i is the
    first rank with p_(i) > alpha / (m - i + 1)."""
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    m = order.size
    reject = np.zeros(p.shape, dtype=bool)
    for rank, idx in enumerate(order, start=1):
        if p[idx] > alpha / (m - rank + 1):
            break
        reject[idx] = True
    return reject


def _bh_rejections(p, alpha):
    """Benjamini-Hochberg step-up: reject ranks <= max{i : p_(i) <= i alpha / m}."""
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    m = order.size
    ok = [rank for rank, idx in enumerate(order, 1) if p[idx] <= rank * alpha / m]
    reject = np.zeros(p.shape, dtype=bool)
    if ok:
        reject[order[: max(ok)]] = True
    return reject


def _random_family(seed, m=25):
    rng = np.random.default_rng(seed)
    # a mixture of small (signal) and uniform p-values, rounded to force ties
    p = np.where(rng.random(m) < 0.4, rng.random(m) * 0.02, rng.random(m))
    p = np.round(p, 3)
    p[rng.random(m) < 0.15] = np.nan
    return p


@pytest.mark.parametrize("seed", range(6))
def test_against_reference_implementations(seed):
    p = _random_family(seed)
    np.testing.assert_allclose(
        adjust_pvalues(p, "holm"), _holm_reference(p), rtol=1e-13, equal_nan=True
    )
    np.testing.assert_allclose(
        adjust_pvalues(p, "fdr_bh"), _bh_reference(p), rtol=1e-13, equal_nan=True
    )
    m = np.count_nonzero(~np.isnan(p))
    np.testing.assert_allclose(
        adjust_pvalues(p, "bonferroni"), np.minimum(1, m * p), equal_nan=True
    )


@pytest.mark.parametrize("seed", range(6))
def test_adjusted_pvalues_reproduce_the_published_procedures(seed):
    # "adjusted p <= alpha" must be exactly the set the step-down / step-up procedure
    # rejects at alpha, for every alpha (grid includes values equal to thresholds).
    p = _random_family(seed)
    holm = adjust_pvalues(p, "holm")
    bh = adjust_pvalues(p, "fdr_bh")
    for alpha in [0.001, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5]:
        np.testing.assert_array_equal(holm <= alpha, _holm_rejections(p, alpha))
        np.testing.assert_array_equal(bh <= alpha, _bh_rejections(p, alpha))


@pytest.mark.parametrize("seed", range(6))
def test_monotonicity_properties(seed):
    p = _random_family(seed)
    valid = ~np.isnan(p)
    adj = {c: adjust_pvalues(p, c) for c in CORRECTIONS}
    eps = 1e-15
    for c in CORRECTIONS:
        a = adj[c][valid]
        assert np.all(a >= p[valid] - eps)  # never smaller than the raw p-value
        assert np.all(a <= 1.0)
        # order preserving: p_i <= p_j implies adj_i <= adj_j
        order = np.argsort(p[valid], kind="stable")
        assert np.all(np.diff(a[order]) >= -eps)
        # permutation equivariant
        perm = np.random.default_rng(seed).permutation(p.size)
        np.testing.assert_allclose(adjust_pvalues(p[perm], c), adj[c][perm])
    # Benjamini-Hochberg <= Holm <= Bonferroni
    assert np.all(adj["fdr_bh"][valid] <= adj["holm"][valid] + eps)
    assert np.all(adj["holm"][valid] <= adj["bonferroni"][valid] + eps)
    # a single p-value is never changed
    for c in CORRECTIONS:
        assert adjust_pvalues([0.3], c)[0] == 0.3


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_all_nan_and_empty(correction):
    out = adjust_pvalues([np.nan, np.nan], correction)
    assert out.shape == (2,) and np.isnan(out).all()
    assert adjust_pvalues([], correction).shape == (0,)


def test_none_spelled_as_text_is_none():
    # the command line's ``--correction none`` and the API agree
    np.testing.assert_array_equal(adjust_pvalues(P, "none"), adjust_pvalues(P, None))
    assert check_correction("none") is None
    assert check_correction(None) is None
    assert check_correction("holm") == "holm"


@pytest.mark.parametrize("bad", ["Holm", "bh", "fdr", "sidak", "", "None", 1])
def test_bad_correction_name_raises(bad):
    with pytest.raises(
        InvalidParameterError, match="'correction' parameter of adjust_pvalues"
    ):
        adjust_pvalues([0.1, 0.2], bad)
    with pytest.raises(ValueError, match="correction must be one of"):
        check_correction(bad)


def test_bad_pvalues_raise():
    with pytest.raises(ValueError, match="pvalues must be 1-D"):
        adjust_pvalues([[0.1, 0.2]], "holm")
    with pytest.raises(ValueError, match=r"pvalues must lie in \[0, 1\]"):
        adjust_pvalues([0.1, 1.2], "holm")
    with pytest.raises(ValueError, match=r"pvalues must lie in \[0, 1\]"):
        adjust_pvalues([-0.1, 0.2], "fdr_bh")


def test_group_pairs_every_group_against_each_earlier_one():
    a, b = group_pairs(np.array(["w", "x", "y", "z"]))
    assert list(zip(a.tolist(), b.tolist())) == [
        (1, 0), (2, 0), (3, 0), (2, 1), (3, 1), (3, 2),
    ]  # fmt: skip
    assert a.dtype == np.int64
    with pytest.raises(ValueError, match="at least two are needed"):
        group_pairs(np.array(["only"]))
