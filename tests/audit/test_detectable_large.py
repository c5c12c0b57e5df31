"""Detectable gaps at groups of millions: the Edgeworth law against the exact law."""

import numpy as np
import pytest

from sklearn_smallfair.audit._detectable import GAP_STEP, detectable_gaps
from sklearn_smallfair.stats import _large_n, _planning

EVEN = np.array([10.0, 10.0, 10.0, 10.0])
COMPAS = np.array([389.0, 347.0, 1597.0, 4121.0])


def _threshold(ref, i, j):
    p = ref / ref.sum()
    return int(np.ceil(_large_n.LARGE_VARIANCE * (p[i] + p[j]) / (p[i] * p[j])))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("metric", "ref", "cells"),
    [("tpr", EVEN, (0, 1)), ("fpr", COMPAS, (2, 3)), ("ppv", COMPAS, (0, 2))],
)
def test_gaps_within_one_grid_step_of_the_exact_search(metric, ref, cells):
    n0 = _threshold(ref, *cells)
    sizes = np.array([n0 - 1, n0, n0 + 1, int(1.3 * n0)], np.int64)
    # a tiny level puts the gaps above the grid's first point (0.01)
    alpha = 1e-14
    ours = detectable_gaps(metric, ref, sizes, np.zeros(sizes.size), alpha=alpha)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_large_n, "LARGE_VARIANCE", np.inf)
        exact = detectable_gaps(metric, ref, sizes, np.zeros(sizes.size), alpha=alpha)
    assert not np.isnan(ours).any() and (np.abs(exact) > 0.0105).all()
    assert ours[0] == exact[0]  # below the threshold: the exact search itself
    ratio = np.abs(ours) / np.abs(exact)
    assert (ratio <= 1 + GAP_STEP + 1e-9).all() and (ratio >= 1 / (1 + GAP_STEP)).all()
    assert (np.sign(ours) == np.sign(exact)).all()


def test_audit_sizes_stay_off_the_exact_law(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the exact law was built")

    monkeypatch.setattr(_planning, "_Law", refuse)
    sizes = np.array([2 * 10**5, 3 * 10**6, 22_500_000, 10**9], np.int64)
    ref = np.array([0.276, 0.069, 0.131, 0.524]) * 10**8
    for metric in ("tpr", "fpr", "ppv", "mb"):
        gaps = detectable_gaps(metric, ref, sizes, np.zeros(sizes.size), alpha=1e-3)
        assert (np.abs(gaps) >= 0.01).all()  # the grid's first point at most
    # at 10^9 and a level of 1e-12 the gap is still the grid's first point
    gaps = detectable_gaps("tpr", ref, sizes[-1:], np.zeros(1), alpha=1e-12)
    assert np.abs(gaps[0]) == pytest.approx(0.01)
