"""The exact downsampling sums block by block against the whole-support sums.

``_size_stats(..., method="exact")`` holds every matrix (or block-sum vector) of a
size with its probability for every group, the way the sums were first computed;
the block engine (``_exact_task``) must give the same statistics to 1e-12, for
any block size, memory budget, ``n_jobs`` and set of sizes requested together.
"""

import itertools
from math import comb

import numpy as np
import pytest

from sklearn_smallfair import enumerate_confusion_matrices
from sklearn_smallfair._pmf import _logpmf_by_group
from sklearn_smallfair.datasets import load_published_groups
from sklearn_smallfair.metrics import get_metric, metric_names
from sklearn_smallfair.model_selection import (
    _budget,
    _exact,
    _exact_reference,
    _montecarlo,
    _schedule,
    _sums,
    downsampling_experiment,
)
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

ESTIMATORS = {
    "eps_0": AdditiveSmoothing(0.0),
    "eps_1": AdditiveSmoothing(1.0),
    "cps_5": CrossPriorSmoothing(5),
    "cps_20": CrossPriorSmoothing(20),
    "raw": None,
}
COUNTS = {"a": (6, 3, 4, 12), "b": (2, 0, 5, 20), "c": (90, 70, 10, 30)}


def _inputs(counts, metrics, estimators, sampling):
    groups = list(counts)
    k = np.array([counts[g] for g in groups], dtype=np.int64)
    refs = (k.sum(axis=0) - k).astype(np.float64)
    ms = [get_metric(m) for m in metrics]
    targets = np.stack([m.func(k.astype(float)) for m in ms], axis=1)
    kk = k if sampling == "hypergeometric" else k.astype(np.float64)
    return groups, kk, refs, targets, ms


@pytest.mark.parametrize("sampling", ["multinomial", "hypergeometric"])
def test_blocks_equal_whole_support_sums(sampling):
    metrics = metric_names(n_groups=1)
    groups, counts, refs, targets, ms = _inputs(COUNTS, metrics, ESTIMATORS, sampling)
    sizes = [1, 4, 17, 40]
    blocks = _schedule._run_task(
        sizes,
        groups,
        counts,
        refs,
        targets,
        metrics,
        ESTIMATORS,
        "exact",
        sampling,
        1,
        None,
        1 << 20,
    )
    plan = _sums._plan(ms)
    for n, stats in blocks:
        whole = _montecarlo._size_stats(
            n,
            counts,
            refs,
            targets,
            plan,
            list(ESTIMATORS.values()),
            "exact",
            sampling,
            1,
            None,
        )
        assert np.array_equal(np.isnan(stats), np.isnan(whole))
        np.testing.assert_allclose(stats, whole, rtol=0, atol=1e-12, equal_nan=True)


def test_blocks_equal_whole_support_sums_published_groups():
    counts, reference = load_published_groups()
    metrics = ["tpr", "mcc", "f1", "mb", "acc"]
    full = downsampling_experiment(
        counts=counts,
        reference=reference,
        metrics=metrics,
        estimators=ESTIMATORS,
        sizes=[60],
    )
    groups = list(counts.index)
    k = counts.to_numpy(np.float64)
    refs = reference.to_numpy(np.float64)
    ms = [get_metric(m) for m in metrics]
    targets = np.stack([m.func(k) for m in ms], axis=1)
    whole = _montecarlo._size_stats(
        60,
        k,
        refs,
        targets,
        _sums._plan(ms),
        list(ESTIMATORS.values()),
        "exact",
        "multinomial",
        1,
        None,
    )
    got = full[["mse", "bias", "variance", "p_undefined"]].to_numpy()
    # rows in (group, size, estimator, metric) order
    expected = whole.reshape(len(groups), -1, whole.shape[-1]).reshape(-1, 4)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True)


def test_results_do_not_depend_on_budget_or_other_sizes():
    kw = dict(counts=COUNTS, metrics=["tpr", "mcc", "ppv"], estimators=ESTIMATORS)
    base = downsampling_experiment(sizes=range(5, 41), **kw)
    small = downsampling_experiment(sizes=range(5, 41), memory_budget=1 << 20, **kw)
    alone = downsampling_experiment(sizes=[33], **kw)
    cols = ["mse", "bias", "variance", "p_undefined"]
    # the same blocks: the same bits
    at33 = base[base["n"] == 33].reset_index(drop=True)
    assert at33[cols].equals(alone[cols])
    # other blocks: the same numbers to round-off
    np.testing.assert_allclose(
        small[cols].to_numpy(),
        base[cols].to_numpy(),
        rtol=0,
        atol=1e-13,
        equal_nan=True,
    )


@pytest.mark.slow
def test_results_do_not_depend_on_n_jobs():
    kw = dict(counts=COUNTS, metrics=["tpr", "mcc", "ppv"], estimators=ESTIMATORS)
    base = downsampling_experiment(sizes=range(5, 61), **kw)
    jobs = downsampling_experiment(sizes=range(5, 61), n_jobs=2, **kw)
    cols = ["mse", "bias", "variance", "p_undefined"]
    assert base[cols].equals(jobs[cols])


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_support_rows_by_rank(k):
    for n in (0, 1, 7, 60):
        total = comb(n + k - 1, k - 1)
        whole = (
            enumerate_confusion_matrices(n)
            if k == 4
            else _sums._build_compositions(n, k)
        )
        assert np.array_equal(_exact._support_rows(n, k, 0, total), whole)
        # any slice, without building the other rows
        a, b = total // 3, total - total // 5
        assert np.array_equal(_exact._support_rows(n, k, a, b), whole[a:b])


def test_blocks_never_hold_two_pieces_of_a_size():
    sizes = [5, 40, 41, 100]
    rows = 500
    seen = []
    for block in _budget._blocks(sizes, 4, rows):
        assert sum(b - a for _, _, a, b in block) <= rows
        positions = [p for p, _, _, _ in block]
        assert len(positions) == len(set(positions))
        seen += [(n, a, b) for _, n, a, b in block]
    for n in sizes:
        pieces = [(a, b) for m, a, b in seen if m == n]
        assert pieces[0][0] == 0 and pieces[-1][1] == comb(n + 3, 3)
        assert all(p[1] == q[0] for p, q in itertools.pairwise(pieces))
        assert all(a % rows == 0 for a, _ in pieces)


def test_neglected_rows_leave_out_at_most_their_bound():
    # the rows skipped for a group carry at most NEGLECTED_MASS of probability
    k = np.array([[19246.0, 10933.0, 12741.0, 54347.0], [13.0, 26.0, 31.0, 275.0]])
    n = 150
    cells = enumerate_confusion_matrices(n)
    logw = _logpmf_by_group(cells, k, "multinomial")
    floor = np.log(_exact.NEGLECTED_MASS) - np.log(cells.shape[0])
    dropped = np.where(logw < floor, np.exp(logw), 0.0).sum(axis=1)
    assert np.all(dropped <= _exact.NEGLECTED_MASS)
    # and the skipped rows are most of the support at this size
    assert np.all((logw < floor).mean(axis=1) > 0.5)


def test_metrics_sharing_sums_equal_their_formulas_bit_for_bit():
    # every single-group metric, on integer and smoothed cells with zeros, ties
    # (TPR == FPR) and tiny offsets, as the engine evaluates them together
    from sklearn_smallfair.model_selection._exact import _values_sharing_sums

    rng = np.random.default_rng(3)
    cells = rng.integers(0, 6, size=(3, 20_000, 4)).astype(np.float64)
    cells[1] += 1e-10
    cells[2] = cells[2] * (7 / 27) + rng.random((20_000, 4)) * 2.5
    cells[:, :50] = 0.0
    metrics = [get_metric(m) for m in metric_names(n_groups=1)]
    for order in (metrics, metrics[::-1], [get_metric("pt")], [get_metric("mcc")]):
        values = _values_sharing_sums(order, *np.moveaxis(cells, -1, 0))
        for m, v in zip(order, values, strict=True):
            assert np.array_equal(v, m.func(cells), equal_nan=True), m.name


def test_engine_equals_per_metric_evaluation(monkeypatch):
    # the published groups, every metric, the published estimators: the engine
    # sharing values between groups and sums between metrics against each
    # metric and estimator evaluated on its own (the reference engine)
    counts, reference = load_published_groups()
    kw = dict(
        counts=counts,
        reference=reference,
        metrics=metric_names(n_groups=1),
        estimators={
            "eps_0": AdditiveSmoothing(0.0),
            "eps_1e-10": AdditiveSmoothing(1e-10),
            "eps_1": AdditiveSmoothing(1.0),
            "cps_5": CrossPriorSmoothing(5),
            "cps_10": CrossPriorSmoothing(10),
            "cps_20": CrossPriorSmoothing(20),
        },
        sizes=[1, 5, 31, 64],
    )
    fast = downsampling_experiment(**kw)
    monkeypatch.setattr(
        _schedule, "_exact_task", _exact_reference._exact_task_per_metric
    )
    reference_run = downsampling_experiment(**kw)
    cols = ["mse", "bias", "variance", "p_undefined"]
    got, want = fast[cols].to_numpy(), reference_run[cols].to_numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert (fast["p_undefined"] > 0).any() and np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("sampling", ["multinomial", "hypergeometric"])
def test_row_bound_never_drops_a_kept_row(sampling):
    # the (TP, FN + FP) bound skips rows before their probabilities: only rows
    # that no group keeps, and at n = 90 a good share of them
    # the last group is smaller than n = 90: without replacement its rows have
    # no probability (NaN log-probabilities), which must not hide the others'
    k = np.array([[273, 170, 1043, 1692], [13, 26, 31, 275], [0, 4, 9, 20]])
    counts = k if sampling == "hypergeometric" else k.astype(np.float64)
    for n in (1, 7, 90):
        table = _exact._log_tables(counts, n, sampling)
        const = _exact._log_const(n, counts, sampling)
        parts = enumerate_confusion_matrices(n)
        bound = _exact._row_bound(table, const, n)[
            parts[:, 0], parts[:, 1] + parts[:, 2]
        ]
        with np.errstate(invalid="ignore"):
            logw = _logpmf_by_group(parts, counts, sampling)
        logw = np.where(np.isnan(logw), -np.inf, logw)
        floor = np.log(_exact.NEGLECTED_MASS) - np.log(parts.shape[0])
        kept = (logw >= floor).any(axis=0)
        assert np.all(bound[kept] >= logw[:, kept].max(axis=0) - 1e-9)
        skipped = bound < floor - _exact._BOUND_MARGIN
        assert not (skipped & kept).any()
        if n == 90:
            assert skipped.mean() > 0.2
