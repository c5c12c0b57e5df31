"""Smoothing K x K confusion matrices cell by cell (transform_matrices)."""

import warnings

import numpy as np
import pytest

from sklearn_smallfair.exceptions import ReferenceWarning
from sklearn_smallfair.metrics import one_vs_rest
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.smoothing._auto import MarginalLikelihood, lam_grid

REF = np.array([[50, 10, 5], [8, 60, 12], [4, 9, 40]])


def _groups(seed, size=20, count=40, lam=30.0):
    """Groups whose own proportions scatter around the reference's:
    Dirichlet(lam p_ref), then Multinomial(size, .)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(lam * (REF / REF.sum()).ravel(), size=count)
    return np.stack([rng.multinomial(size, q) for q in p]).reshape(count, 3, 3)


def test_cross_prior_formula_any_leading_shape():
    groups = _groups(0).reshape(4, 10, 3, 3)
    lam = 7.5
    out = CrossPriorSmoothing(lam=lam).transform_matrices(groups, REF)
    n = groups.sum(axis=(-2, -1), keepdims=True)
    expected = (groups + lam * REF / REF.sum()) / (n + lam) * n
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    np.testing.assert_allclose(out.sum(axis=(-2, -1)), n[..., 0, 0], rtol=1e-14)
    assert out.shape == (4, 10, 3, 3)
    # per-group references broadcast
    refs = np.broadcast_to(REF, (4, 10, 3, 3)) + np.arange(10)[None, :, None, None]
    out = CrossPriorSmoothing(lam=lam).transform_matrices(groups, refs)
    p = refs / refs.sum(axis=(-2, -1), keepdims=True)
    np.testing.assert_allclose(out, (groups + lam * p) / (n + lam) * n, rtol=1e-14)


def test_binary_case_is_the_binary_smoother():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 9, size=(50, 4))
    ref = np.array([40, 10, 20, 30])
    for smoother in (CrossPriorSmoothing(lam=5), AdditiveSmoothing(eps=0.5)):
        binary = smoother.transform(counts, ref)
        as_matrix = smoother.transform_matrices(
            counts.reshape(50, 2, 2), ref.reshape(2, 2)
        )
        np.testing.assert_allclose(as_matrix.reshape(50, 4), binary, rtol=1e-14)


def test_one_vs_rest_commutes_with_fixed_lambda_but_not_additive():
    groups = _groups(2)
    lam = 10.0
    smoothed = CrossPriorSmoothing(lam=lam).transform_matrices(groups, REF)
    n = groups.sum(axis=(-2, -1))[:, None, None]
    q_ref = one_vs_rest(REF) / REF.sum()
    per_class = (one_vs_rest(groups) + lam * q_ref) / (n + lam) * n
    np.testing.assert_allclose(one_vs_rest(smoothed), per_class, rtol=1e-13)
    # additive: eps on the K^2 cells is (eps, 2 eps, 2 eps, 4 eps) one-vs-rest
    eps = 0.5
    add = one_vs_rest(AdditiveSmoothing(eps=eps).transform_matrices(groups))
    np.testing.assert_allclose(
        add - one_vs_rest(groups),
        np.broadcast_to([eps, 2 * eps, 2 * eps, 4 * eps], add.shape),
    )


def test_auto_lambda_maximises_the_multiclass_likelihood():
    groups = _groups(3, size=30, count=60).astype(float)
    ref = np.broadcast_to(REF, groups.shape).astype(float)
    out = CrossPriorSmoothing(lam="auto").transform_matrices(groups, REF)
    n = groups.sum(axis=(-2, -1), keepdims=True)
    # recover lam from one group: out = (c + lam p) / (n + lam) n
    p = REF / REF.sum()
    c, o = groups[0], out[0]
    lam = float(((o - c) * n[0] / (n[0] * p - o)).ravel()[np.argmax(p.ravel())])
    likelihood = MarginalLikelihood(groups.reshape(60, 9), ref.reshape(60, 9))
    grid = np.geomspace(0.5, 5e3, 4001)
    brute = grid[np.argmax(likelihood(grid))]
    assert 3 < lam < 300  # finite: the groups scatter (true lam 30)
    assert lam == pytest.approx(brute, rel=5e-3)
    assert likelihood(lam) >= likelihood(lam_grid()).max() - 1e-9


def test_reference_warnings_name_the_cells():
    small = np.array([[5, 0, 1], [1, 3, 0], [0, 1, 2]])
    with pytest.warns(ReferenceWarning) as caught:
        CrossPriorSmoothing(lam=10).transform_matrices(_groups(4)[0], small)
    text = " ".join(str(w.message) for w in caught)
    assert "fewer than min_reference=100" in text and "C[0, 1] = 0" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CrossPriorSmoothing(lam=10).transform_matrices(_groups(4)[0], REF)


@pytest.mark.parametrize(
    "counts, ref, match",
    [
        (np.ones((3, 2)), REF, "square"),
        (np.ones((2, 2)), REF, "3 classes but counts has 2"),
        (-np.ones((3, 3)), REF, "negative"),
        (np.full((3, 3), np.nan), REF, "NaN"),
        (np.ones((3, 3)), None, "needs reference_counts"),
        (np.ones(4), REF, "transform()"),
    ],
)
def test_bad_input(counts, ref, match):
    with pytest.raises(ValueError, match=match):
        CrossPriorSmoothing(lam=1).transform_matrices(counts, ref)
