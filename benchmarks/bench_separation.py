"""Benchmark: the separation tests, against straightforward baselines.

Two parts.

**Labels** (:func:`sklearn_smallfair.stats.separation_test`): 10,000,000 rows
(``--quick``: 200,000) with binary labels and predictions and 1,000 groups
(``--quick``: 100), so 499,500 pairs of groups (4,950) and 999,000 tests (9,900),
timed end to end (validation, one ``np.bincount`` for the per-group counts, the
tests of every pair for TPR and FPR, the Holm adjustment of each family, the result
tables) for ``method="auto"`` (the default: the exact test where a comparison's
smallest expected count is below 10, the score test elsewhere; every group here
is large, so the score test everywhere) and ``method="score"``. Baseline, written
here: a pandas ``groupby`` for the per-group counts, then a Python loop over the
pairs computing the pooled score statistic and its p-value with ``math.erfc``,
and Holm's adjustment of each family in plain Python (a sorted list and a running
maximum). Context rows (INFO): ``method="wald"`` (the published test, the same
vectorized code), and ``method="auto"`` on data where 5 of the groups have 10 to
40 people, so that their comparisons use the exact test.

The baseline and the three methods (``"auto"``, ``"score"``, ``"wald"``) run back to
back in interleaved rounds (3; full mode 2, the baseline taking about 4 s), so one
baseline call per round serves both rows compared with it; each ratio is the median
of the per-round ratios (see :func:`interleaved_rounds` and :func:`versus`), and
the context rows are ratios of the same rounds (``"auto"`` with small groups: one
round). Each method's call is warmed up first, and the baseline on the rows of
the first 10 groups.

Correctness, on the timed calls: the baseline's last result and ours have the
same z, p-values and adjusted p-values (within 1e-9) for ``"auto"`` and
``"score"``; ``"auto"`` used the score test everywhere on the large groups.

Target: 10,000,000 rows and 1,000 groups tested in under 2 s (both methods).

**Comparative judgments**: counting and testing pairs against a per-pair loop.

Ours: :func:`sklearn_smallfair.stats.comparative_separation_test` given explicit
``pairs`` with ``y_true`` and ``y_score`` and a binary group attribute, timed end to
end (validation, then one pass over the pairs in chunks that codes each pair's
true order, predicted order and two groups as one small integer and counts the
codes with one ``np.bincount``; the variances, the Wald tests, the result tables).
Two variance options are timed:

* ``variance="clustered"`` (the default): the dyadic item-clustered variance, which
  needs per-item residual sums (in the same pass, two ``np.add.at`` scatters of
  packed integer totals per chunk, one for each item of a pair);
* ``variance="independent"``: ``mu (1 - mu) / n_ab``, the counts only.

Baseline, written here: the straightforward per-pair Python loop. It orients each
pair by its labels (dropping tied labels), finds its cell ``(group of the higher
item, group of the lower)``, counts it and its correctness (a predicted tie is
incorrect), then computes the Wald tests with ``math.erfc``; for the clustered
variance a second loop over the pairs accumulates the residual sums per item in
dicts. The items are converted to Python lists once (timed, not extrapolated);
the loop runs on the first 200,000 pairs (``--quick``: 20,000) and its time is
extrapolated linearly to the full number of pairs (a per-pair loop is linear in
the pairs).

Timing: 3 interleaved rounds per variance, each running the loop, ours on the
loop's pairs and ours on all the pairs back to back (for ``"independent"`` also the
context loop over numpy arrays); in each round the loop's time is extrapolated and
divided by ours' time of the same round, and the ratio is the median over the
rounds. A second row per variance gives the ratio on the loop's pairs, without
extrapolation.

Data: seeded items (1,000,000; ``--quick``: 100,000) with binary labels and groups
and scores rounded to 0.01 (so some pairs are predicted ties); 10,000,000 pairs
(``--quick``: 1,000,000) drawn with :func:`make_comparative_pairs`, untimed.

Correctness, on the timed calls: on the baseline's pairs, ours and the loop's last
result have the same cell counts (exactly) and the same z and p-values (within
1e-9) for both variance options (and the numpy-array loop for the independent one).

Targets: 10,000,000 pairs counted and tested in under 2 s (default variance), and
at least 100x the extrapolated loop.

All pairs (:func:`run_all_pairs`): the default test, which counts every pair of
items with different labels without forming the pairs (one sort and cumulative
counts), timed end to end on 1,000,000 items (``--quick``: 100,000) with binary
labels and with 8 label values, scores rounded to 0.01 and binary groups. Baselines,
in 3 interleaved rounds with ours: a brute-force Python double loop over the items,
run on the first 1,000 items (``--quick``: 300), its time in each round
extrapolated by the ratio of the numbers of pairs, and its last result checked to
have the cell counts of ours on those items; and the previous default, ``2 n``
random pairs drawn and counted with the clustered variance. Target: all pairs of
1,000,000 items in under 2 s.

Run ``python benchmarks/bench_separation.py [--quick]`` or through ``run.py``.
"""

import math
import sys

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "separation"
SEED = 20261121
TOL = 1e-9
TARGET_S = 2.0
TARGET_RATIO = 100.0
FULL = {"n_items": 1_000_000, "n_pairs": 10_000_000, "loop_pairs": 200_000}
QUICK = {"n_items": 100_000, "n_pairs": 1_000_000, "loop_pairs": 20_000}
#: Interleaved pairs of every row whose calls take well under a second.
REPEATS = 3
VARIANCES = ("clustered", "independent")
#: ``pairs``: interleaved rounds of the pandas baseline (about 4 s at 10,000,000
#: rows) and the three methods; the context row of the small groups gets one
#: round (ours, with its exact tests, is the slow side there).
LABELS_FULL = {"n_rows": 10_000_000, "n_groups": 1_000, "pairs": 2}
LABELS_QUICK = {"n_rows": 200_000, "n_groups": 100, "pairs": 3}
#: Groups whose rows make the untimed warm-up call of the pandas baseline (its
#: first call pays for pandas' lazily loaded code paths).
WARMUP_GROUPS = 10
#: Sizes of the small groups of the context row (their comparisons are exact).
SMALL_GROUPS = (10, 17, 25, 32, 40)


def make_data(n_items, n_pairs, seed=SEED):
    """Labels, rounded scores, binary groups and exactly ``n_pairs`` pairs."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import make_comparative_pairs

    rng = np.random.default_rng(seed)
    groups = (rng.random(n_items) < 0.3).astype(np.int64)
    y = (rng.random(n_items) < 0.4 + 0.1 * groups).astype(np.int64)
    score = np.round(y + 0.8 * rng.normal(size=n_items) - 0.1 * groups, 2)
    pairs = make_comparative_pairs(y, n_pairs=int(n_pairs * 2.2), random_state=seed)
    if pairs.shape[0] < n_pairs:  # pragma: no cover - P(y_i != y_j) is about 0.48
        raise _common.CorrectnessError("too few pairs with different labels drawn")
    return y, score, groups, pairs[:n_pairs]


def ours(y, score, groups, pairs, variance="clustered"):
    """Our test: ``(n, correct, z, p)`` with cells and tests as flat arrays."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import comparative_separation_test

    res = comparative_separation_test(
        y, score, sensitive_features=groups, pairs=pairs, variance=variance
    )
    t = res.table
    return (
        t["n"].to_numpy(),
        t["correct"].to_numpy(),
        res.frame["z"].to_numpy(),
        res.frame["p_value"].to_numpy(),
    )


def _z_and_p(diff, var):
    if var > 0:
        z = diff / math.sqrt(var)
    else:
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return z, math.erfc(abs(z) / math.sqrt(2))


def as_lists(y, score, groups):
    """The items as Python lists (once per data set, not per pair)."""
    return y.tolist(), score.tolist(), groups.tolist()


def loop_baseline(items, pairs, variance="clustered"):
    """The straightforward per-pair Python loop, for two groups coded 0 and 1.

    ``items`` is ``as_lists(y, score, groups)``. Returns ``(n, correct, z, p)`` in
    the order of ours: cells (0,0), (0,1), (1,0), (1,1); tests cross
    ``TPR(1, 0) - TPR(0, 1)`` and within ``TPR(1, 1) - TPR(0, 0)``.
    """
    y, score, groups = items
    n = [[0, 0], [0, 0]]
    correct = [[0, 0], [0, 0]]
    kept = []
    for i, j in zip(pairs[:, 0].tolist(), pairs[:, 1].tolist()):
        if y[i] == y[j]:
            continue
        hi, lo = (i, j) if y[i] > y[j] else (j, i)
        a, b = groups[hi], groups[lo]
        ok = 1 if score[hi] > score[lo] else 0
        n[a][b] += 1
        correct[a][b] += ok
        kept.append((hi, lo, a, b, ok))
    tpr = [[correct[a][b] / n[a][b] for b in (0, 1)] for a in (0, 1)]
    cross_cells, within_cells = ((1, 0), (0, 1)), ((1, 1), (0, 0))
    if variance == "independent":
        var = [[tpr[a][b] * (1 - tpr[a][b]) / n[a][b] for b in (0, 1)] for a in (0, 1)]
        tests = []
        for c1, c2 in (cross_cells, within_cells):
            diff = tpr[c1[0]][c1[1]] - tpr[c2[0]][c2[1]]
            tests.append(_z_and_p(diff, var[c1[0]][c1[1]] + var[c2[0]][c2[1]]))
    else:
        # residual sums per (item, cell) and, for the cross test, per item
        cell_sums, cross_sums = {}, {}
        own = [[0.0, 0.0], [0.0, 0.0]]
        for hi, lo, a, b, ok in kept:
            r = ok - tpr[a][b]
            own[a][b] += r * r
            for item in (hi, lo):
                key = (item, a, b)
                cell_sums[key] = cell_sums.get(key, 0.0) + r
            if a != b:
                w = r / n[a][b] if (a, b) == (1, 0) else -r / n[a][b]
                for item in (hi, lo):
                    cross_sums[item] = cross_sums.get(item, 0.0) + w
        ss = [[0.0, 0.0], [0.0, 0.0]]
        for (_, a, b), v in cell_sums.items():
            ss[a][b] += v * v
        var = [
            [max(ss[a][b] - own[a][b], own[a][b]) / n[a][b] ** 2 for b in (0, 1)]
            for a in (0, 1)
        ]
        own_cross = own[1][0] / n[1][0] ** 2 + own[0][1] / n[0][1] ** 2
        var_cross = max(sum(v * v for v in cross_sums.values()) - own_cross, own_cross)
        tests = [
            _z_and_p(tpr[1][0] - tpr[0][1], var_cross),
            _z_and_p(tpr[1][1] - tpr[0][0], var[1][1] + var[0][0]),
        ]
    flat = [(0, 0), (0, 1), (1, 0), (1, 1)]
    return (
        np.array([n[a][b] for a, b in flat]),
        np.array([correct[a][b] for a, b in flat]),
        np.array([t[0] for t in tests]),
        np.array([t[1] for t in tests]),
    )


def numpy_loop_baseline(y, score, groups, pairs):
    """The same per-pair loop reading the numpy arrays directly (no ``tolist``).

    Counts and the independent-pairs tests only; the way a loop is often first
    written, shown for context (each element access creates a numpy scalar).
    """
    n = np.zeros((2, 2), dtype=np.int64)
    correct = np.zeros((2, 2), dtype=np.int64)
    for i, j in pairs:
        if y[i] == y[j]:
            continue
        hi, lo = (i, j) if y[i] > y[j] else (j, i)
        a, b = groups[hi], groups[lo]
        n[a, b] += 1
        if score[hi] > score[lo]:
            correct[a, b] += 1
    tpr = correct / n
    var = tpr * (1 - tpr) / n
    tests = [
        _z_and_p(float(tpr[1, 0] - tpr[0, 1]), float(var[1, 0] + var[0, 1])),
        _z_and_p(float(tpr[1, 1] - tpr[0, 0]), float(var[1, 1] + var[0, 0])),
    ]
    return (
        n.ravel(),
        correct.ravel(),
        np.array([z for z, _ in tests]),
        np.array([p for _, p in tests]),
    )


def check_same(label, got, expected):
    """Same counts exactly, same z and p within TOL; return the max difference."""
    n, c, z, p = got
    n0, c0, z0, p0 = expected
    _common.check(
        np.array_equal(n, n0) and np.array_equal(c, c0),
        f"{label}: cell counts differ: ours n={n.tolist()}, correct={c.tolist()}; "
        f"loop n={n0.tolist()}, correct={c0.tolist()}",
    )
    err = max(
        float(np.max(np.abs(z - z0) / np.maximum(1.0, np.abs(z0)))),
        float(np.max(np.abs(p - p0))),
    )
    _common.check(
        err <= TOL,
        f"{label}: z/p differ by {err:.3g} > {TOL:g} (ours z={z.tolist()}, "
        f"p={p.tolist()}; loop z={z0.tolist()}, p={p0.tolist()})",
    )
    return err


# =====================================================================================
# All pairs of items (the default of comparative_separation_test)
# =====================================================================================
ALL_PAIRS_FULL = {"n_items": 1_000_000, "loop_items": 1_000}
ALL_PAIRS_QUICK = {"n_items": 100_000, "loop_items": 300}
ALL_PAIRS_LEVELS = (2, 8)


def make_all_pairs_data(n_items, n_levels, seed=SEED):
    """Labels with ``n_levels`` values, scores rounded to 0.01, binary groups."""
    rng = np.random.default_rng(seed)
    groups = (rng.random(n_items) < 0.3).astype(np.int64)
    y = rng.integers(0, n_levels, n_items)
    score = np.round(y + rng.normal(size=n_items) - 0.1 * groups, 2)
    return y, score, groups


def ours_all_pairs(y, score, groups):
    """Our default test, all pairs: ``(n, correct)`` of the four cells, flat."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import comparative_separation_test

    res = comparative_separation_test(y, score, sensitive_features=groups)
    return res.table["n"].to_numpy(), res.table["correct"].to_numpy()


def ours_sampled(y, score, groups):
    """The previous default: ``2 n`` pairs drawn and counted (clustered variance)."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import comparative_separation_test

    n = y.shape[0]
    res = comparative_separation_test(
        y, score, sensitive_features=groups, n_pairs=2 * n, random_state=SEED
    )
    return res.table["n"].to_numpy()


def all_pairs_loop(items):
    """Brute force: a Python double loop over the items, every ordered pair with
    different labels counted in its cell (a predicted tie is incorrect)."""
    y, score, groups = items
    n = [[0, 0], [0, 0]]
    correct = [[0, 0], [0, 0]]
    for h in range(len(y)):
        yh, sh, gh = y[h], score[h], groups[h]
        row_n, row_c = n[gh], correct[gh]
        for low in range(len(y)):
            if yh > y[low]:
                b = groups[low]
                row_n[b] += 1
                if sh > score[low]:
                    row_c[b] += 1
    flat = [(0, 0), (0, 1), (1, 0), (1, 1)]
    return (
        np.array([n[a][b] for a, b in flat]),
        np.array([correct[a][b] for a, b in flat]),
    )


def run_all_pairs(quick=False, *, log=print):
    """Rows for the all-pairs count: against the brute-force loop (extrapolated
    quadratically from a small number of items) and the sampled pairs."""
    cfg = ALL_PAIRS_QUICK if quick else ALL_PAIRS_FULL
    n, n_loop = cfg["n_items"], cfg["loop_items"]
    scale = (n * (n - 1)) / (n_loop * (n_loop - 1))
    rows = []
    for levels in ALL_PAIRS_LEVELS:
        y, score, groups = make_all_pairs_data(n, levels)
        small = (y[:n_loop], score[:n_loop], groups[:n_loop])
        got = ours_all_pairs(*small)  # what every timed loop call must count
        list_s, _, items = _common.best_of(lambda small=small: as_lists(*small), 1)
        ours_all_pairs(y, score, groups)  # untimed warm-ups
        ours_sampled(y, score, groups)
        rounds = _common.interleaved_rounds(
            {
                "loop": lambda items=items: all_pairs_loop(items),
                "ours": lambda y=y, s=score, g=groups: ours_all_pairs(y, s, g),
                "sampled": lambda y=y, s=score, g=groups: ours_sampled(y, s, g),
            },
            REPEATS,
        )
        res = _common.versus(rounds, "loop", "ours", scale=scale)
        sampled = _common.versus(rounds, "sampled", "ours")
        expected = res["baseline_result"]
        _common.check(
            all(np.array_equal(a, b) for a, b in zip(got, expected)),
            f"all pairs, {levels} label values, {n_loop} items: cell counts differ "
            f"(ours n={got[0].tolist()}, correct={got[1].tolist()}; loop "
            f"n={expected[0].tolist()}, correct={expected[1].tolist()})",
        )
        cells = res["ours_result"][0]
        fast = res["ours_s"] < TARGET_S
        label = "binary labels" if levels == 2 else f"{levels} label values"
        log(
            f"[{NAME}] all pairs, {label}: ours {res['ours_s']:.3f} s for {n:,} items "
            f"({int(cells.sum()):,} pairs); loop {res['part_s']:.3f} s for "
            f"{n_loop:,} items -> {res['baseline_s']:.3g} s extrapolated; "
            f"{2 * n:,} sampled pairs {sampled['baseline_s']:.3f} s (medians of "
            f"{REPEATS} interleaved rounds)"
        )
        rows.append(
            _common.make_row(
                f"comparative all pairs, {label}, {n:,} items",
                res["ours_s"],
                f"all-pairs Python loop (x{scale:.3g} from {n_loop:,} items)",
                res["baseline_s"],
                ratio=res["ratio"],
                target="" if quick else f"< {TARGET_S:g} s",
                status="INFO" if quick else ("PASS" if fast else "MISS"),
                notes=(
                    f"{int(cells.sum()):,} pairs counted without forming them; in "
                    f"each of {REPEATS} interleaved rounds the loop's time on "
                    f"{n_loop:,} items (median {res['part_s']:.3f} s; items as "
                    f"lists in {list_s:.3f} s, not counted) times the ratio of the "
                    f"numbers of pairs, over ours on all {n:,} items; the timed "
                    f"loop's cell counts equal ours on its items"
                ),
                load=res["load"],
                pair_ratios=res["ratios"],
                n_items=n,
                n_pairs=int(cells.sum()),
                loop_items=n_loop,
                loop_seconds=res["part_s"],
            )
        )
        rows.append(
            _common.make_row(
                f"comparative all pairs, {label}, {n:,} items",
                sampled["ours_s"],
                f"{2 * n:,} sampled pairs (previous default)",
                sampled["baseline_s"],
                ratio=sampled["ratio"],
                status="INFO",
                notes=(
                    "context: drawing and counting 2 n random pairs with the "
                    "clustered variance, the previous default, whose verdict "
                    "changed with the draw; a ratio below 1 is the price of "
                    "counting all n (n - 1) / 2 pairs deterministically"
                ),
                load=sampled["load"],
                pair_ratios=sampled["ratios"],
                n_items=n,
            )
        )
    return rows


# =====================================================================================
# Labels: separation_test on many rows and groups
# =====================================================================================
def make_label_data(n_rows, n_groups, seed=SEED, small=()):
    """Labels, predictions and integer groups; every group has its own prevalence,
    TPR and FPR. ``small`` gives the sizes of extra small groups, appended."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_groups, n_rows)
    prevalence = rng.uniform(0.2, 0.6, n_groups)
    tpr = rng.uniform(0.6, 0.9, n_groups)
    fpr = rng.uniform(0.05, 0.3, n_groups)
    if small:
        extra = np.repeat(n_groups + np.arange(len(small)), small)
        groups = np.concatenate([groups[: n_rows - extra.shape[0]], extra])
        prevalence = np.concatenate([prevalence, np.full(len(small), 0.5)])
        tpr = np.concatenate([tpr, np.full(len(small), 0.7)])
        fpr = np.concatenate([fpr, np.full(len(small), 0.2)])
    y = (rng.random(n_rows) < prevalence[groups]).astype(np.int8)
    rate = np.where(y == 1, tpr[groups], fpr[groups])
    pred = (rng.random(n_rows) < rate).astype(np.int8)
    return y, pred, groups


def labels_ours(y, pred, groups, method):
    """Our test with ``method``; returns the table of tests."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import separation_test

    return separation_test(y, pred, sensitive_features=groups, method=method).frame


def _holm(pvalues):
    """Holm's step-down adjustment in plain Python."""
    m = len(pvalues)
    order = sorted(range(m), key=pvalues.__getitem__)
    out = [0.0] * m
    running = 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[k]))
        out[k] = running
    return out


def labels_baseline(y, pred, groups):
    """pandas groupby for the counts, a Python loop over the pairs for the score
    tests, Holm in plain Python; ``(z, p, p_adjusted)`` in the order of ours."""
    import pandas as pd

    frame = pd.DataFrame({"g": groups, "y": y, "p": pred})
    frame["tp"] = (frame["y"] == 1) & (frame["p"] == 1)
    frame["pos"] = frame["y"] == 1
    frame["fp"] = (frame["y"] == 0) & (frame["p"] == 1)
    frame["neg"] = frame["y"] == 0
    cells = frame.groupby("g")[["tp", "pos", "fp", "neg"]].sum()
    counts = cells.to_numpy().tolist()
    n_groups = len(counts)
    zs, ps, adjusted = [], [], []
    for hit, size in ((0, 1), (2, 3)):
        z_family, p_family = [], []
        for b in range(n_groups):
            xb, nb = counts[b][hit], counts[b][size]
            for a in range(b + 1, n_groups):
                xa, na = counts[a][hit], counts[a][size]
                pooled = (xa + xb) / (na + nb)
                var = pooled * (1 - pooled) * (1 / na + 1 / nb)
                diff = xa / na - xb / nb
                z = diff / math.sqrt(var) if var > 0 and diff != 0 else 0.0
                z_family.append(z)
                p_family.append(math.erfc(abs(z) / math.sqrt(2)))
        zs += z_family
        ps += p_family
        adjusted += _holm(p_family)
    return np.array(zs), np.array(ps), np.array(adjusted)


def _check_labels(frame, expected, label):
    z0, p0, a0 = expected
    z = frame["z"].to_numpy()
    err = max(
        float(np.max(np.abs(z - z0) / np.maximum(1.0, np.abs(z0)))),
        float(np.max(np.abs(frame["p_value"].to_numpy() - p0))),
        float(np.max(np.abs(frame["p_adjusted"].to_numpy() - a0))),
    )
    _common.check(err <= TOL, f"{label}: z/p differ from the baseline by {err:.3g}")
    return err


def run_labels(quick=False, *, log=print):
    """The rows of :func:`separation_test` on many rows and groups."""
    cfg = LABELS_QUICK if quick else LABELS_FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    y, pred, groups = make_label_data(n_rows, n_groups)
    n_tests = n_groups * (n_groups - 1)
    name = f"{n_rows:,} rows x {n_groups:,} groups"
    log(f"[{NAME}] separation_test: {name}, {n_tests:,} tests")
    part = groups < WARMUP_GROUPS
    labels_baseline(y[part], pred[part], groups[part])  # untimed warm-ups
    calls = {"baseline": lambda: labels_baseline(y, pred, groups)}
    for method in ("auto", "score", "wald"):
        labels_ours(y, pred, groups, method)
        calls[method] = lambda m=method: labels_ours(y, pred, groups, m)
    # one baseline call per round serves the rows of both methods
    rounds = _common.interleaved_rounds(calls, cfg["pairs"])
    rows = []
    for method in ("auto", "score"):
        res = _common.versus(rounds, "baseline", method)
        # the last timed baseline call's z, p and adjusted p against ours
        err = _check_labels(res["ours_result"], res["baseline_result"], method)
        fast = res["ours_s"] < TARGET_S
        log(
            f"[{NAME}] separation_test method={method!r}: {res['ours_s']:.3f} s; "
            f"baseline {res['baseline_s']:.3g} s ({res['ratio']:.1f}x, median of "
            f"{cfg['pairs']} interleaved rounds); z/p within {err:.1e}"
        )
        rows.append(
            _common.make_row(
                f"separation_test {method} {name}",
                res["ours_s"],
                "pandas groupby + per-pair Python loop (score test, Holm)",
                res["baseline_s"],
                ratio=res["ratio"],
                target=f"< {TARGET_S:g} s",
                status="PASS" if fast or quick else "MISS",
                notes=(
                    f"{n_tests:,} tests (every pair of groups, TPR and FPR), Holm "
                    f"within each family; every group large, so auto uses the "
                    f"score test everywhere; z/p within {err:.1e} of the baseline"
                    + ("" if quick else f"; time {'met' if fast else 'missed'}")
                ),
                load=res["load"],
                pair_ratios=res["ratios"],
                n_rows=n_rows,
                n_groups=n_groups,
            )
        )
    _common.check(
        set(rounds["results"]["auto"]["method"]) == {"score"},
        "auto used the exact test on large groups",
    )
    res = _common.versus(rounds, "wald", "auto")
    rows.append(
        _common.make_row(
            f"separation_test auto {name}",
            res["ours_s"],
            "method='wald' (the published test, same code)",
            res["baseline_s"],
            ratio=res["ratio"],
            status="INFO",
            notes="the cost of the calibrated default over the published test",
            load=res["load"],
            pair_ratios=res["ratios"],
        )
    )
    # context: 5 small groups, whose comparisons use the exact test
    y, pred, groups = make_label_data(n_rows, n_groups, small=SMALL_GROUPS)
    res = _common.versus(
        _common.interleaved_rounds(
            {
                "score": lambda: labels_ours(y, pred, groups, "score"),
                "auto": lambda: labels_ours(y, pred, groups, "auto"),
            },
            1,
        ),
        "score",
        "auto",
    )
    frame = res["ours_result"]
    n_exact = int((frame["method"] == "exact").sum())
    log(
        f"[{NAME}] auto with {len(SMALL_GROUPS)} small groups: {res['ours_s']:.3f} s "
        f"({n_exact:,} exact tests); score only {res['baseline_s']:.3f} s"
    )
    rows.append(
        _common.make_row(
            f"separation_test auto, {len(SMALL_GROUPS)} small groups",
            res["ours_s"],
            "method='score' (same data)",
            res["baseline_s"],
            ratio=res["ratio"],
            status="INFO",
            notes=(
                f"{n_groups:,} large groups and {len(SMALL_GROUPS)} of "
                f"{', '.join(map(str, SMALL_GROUPS))} people: {n_exact:,} of "
                f"{len(frame):,} tests use the exact test; one pair of calls"
            ),
            load=res["load"],
            n_exact=n_exact,
        )
    )
    return rows


# =====================================================================================
# Comparative judgments
# =====================================================================================
def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    return run_labels(quick, log=log) + run_comparative(quick, log=log)


def run_comparative(quick=False, *, log=print):
    """The rows of :func:`comparative_separation_test` on many pairs."""
    cfg = QUICK if quick else FULL
    _common.ensure_package_importable()
    y, score, groups, pairs = make_data(cfg["n_items"], cfg["n_pairs"])
    m, m_loop = pairs.shape[0], cfg["loop_pairs"]
    small = pairs[:m_loop]
    scale = m / m_loop
    log(
        f"[{NAME}] {cfg['n_items']:,} items, {m:,} pairs; loop on {m_loop:,} pairs "
        f"extrapolated x{scale:g}"
    )
    rows = []
    prep_s, _, items = _common.best_of(lambda: as_lists(y, score, groups), 1)
    on_small, all_rounds = {}, {}
    for variance in VARIANCES:
        ours(y, score, groups, small, variance)  # untimed warm-up
        ours(y, score, groups, pairs, variance)  # untimed warm-up
        # one loop call per round serves both rows: ours on the loop's pairs
        # and ours on all the pairs (the loop's time extrapolated in each round);
        # the context loop over numpy arrays joins the rounds of "independent"
        calls = {
            "loop": lambda v=variance: loop_baseline(items, small, v),
            "small": lambda v=variance: ours(y, score, groups, small, v),
            "all": lambda v=variance: ours(y, score, groups, pairs, v),
        }
        if variance == "independent":
            calls["numpy loop"] = lambda: numpy_loop_baseline(y, score, groups, small)
        rounds = all_rounds[variance] = _common.interleaved_rounds(calls, REPEATS)
        same = _common.versus(rounds, "loop", "small", fixed_s=prep_s)
        res = _common.versus(rounds, "loop", "all", scale=scale, fixed_s=prep_s)
        on_small[variance] = same["ours_result"]
        # the last timed loop call against ours on the same pairs
        err = check_same(
            f"{variance} variance, {m_loop:,} pairs",
            same["ours_result"],
            same["baseline_result"],
        )
        ours_s, ratio = res["ours_s"], res["ratio"]
        fast = ours_s < TARGET_S
        if quick:
            target = f">= {TARGET_RATIO:g}x"
            ok = ratio >= TARGET_RATIO
        else:
            target = f"< {TARGET_S:g} s, >= {TARGET_RATIO:g}x"
            ok = fast and ratio >= TARGET_RATIO
        log(
            f"[{NAME}] {variance}: ours {ours_s:.3f} s for {m:,} pairs; loop "
            f"{res['part_s']:.3f} s for {m_loop:,} (+ {prep_s:.3f} s for the item "
            f"lists) -> {res['baseline_s']:.1f} s extrapolated ({ratio:.0f}x, median "
            f"of {REPEATS} interleaved rounds); same counts, z/p within {err:.1e}"
        )
        rows.append(
            _common.make_row(
                f"comparative {variance} {m:,} pairs",
                ours_s,
                f"per-pair Python loop (x{scale:g} from {m_loop:,} pairs)",
                res["baseline_s"],
                ratio=ratio,
                target=target,
                status="PASS" if ok else "MISS",
                notes=(
                    (
                        ""
                        if quick
                        else f"time {'met' if fast else 'missed'} (< {TARGET_S:g} "
                        f"s), ratio {'met' if ratio >= TARGET_RATIO else 'missed'} "
                        f"(>= {TARGET_RATIO:g}x); "
                    )
                    + f"binary groups, {cfg['n_items']:,} items; in each of "
                    f"{REPEATS} interleaved rounds the loop's time on {m_loop:,} "
                    f"pairs (median {res['part_s']:.3f} s) times {scale:g}, plus "
                    f"{prep_s:.3f} s once for the item lists, over ours on all "
                    f"{m:,}; same counts, z/p within {err:.1e}"
                ),
                load=res["load"],
                pair_ratios=res["ratios"],
                n_pairs=m,
                loop_pairs=m_loop,
                loop_seconds=res["part_s"],
                list_seconds=prep_s,
            )
        )
        rows.append(
            _common.make_row(
                f"comparative {variance} {m_loop:,} pairs",
                same["ours_s"],
                "per-pair Python loop (same pairs)",
                same["baseline_s"],
                ratio=same["ratio"],
                status="INFO",
                notes=(
                    "no extrapolation: both on the loop's pairs (the loop's time "
                    f"plus {prep_s:.3f} s for the item lists)"
                ),
                load=same["load"],
                pair_ratios=same["ratios"],
                n_pairs=m_loop,
            )
        )
    # context: the loop over numpy arrays, on the loop's pairs, extrapolated too
    res = _common.versus(all_rounds["independent"], "numpy loop", "all", scale=scale)
    err = check_same(
        f"numpy-array loop, {m_loop:,} pairs",
        on_small["independent"],
        res["baseline_result"],
    )
    log(
        f"[{NAME}] numpy-array loop: {res['part_s']:.3f} s for {m_loop:,} pairs -> "
        f"{res['baseline_s']:.1f} s extrapolated ({res['ratio']:.0f}x ours)"
    )
    rows.append(
        _common.make_row(
            f"comparative independent {m:,} pairs",
            res["ours_s"],
            f"loop over numpy arrays (x{scale:g} from {m_loop:,} pairs)",
            res["baseline_s"],
            ratio=res["ratio"],
            status="INFO",
            notes=(
                "context: the same loop without tolist (numpy scalar per access); "
                f"same counts, z/p within {err:.1e}"
            ),
            load=res["load"],
            pair_ratios=res["ratios"],
            n_pairs=m,
            loop_pairs=m_loop,
            loop_seconds=res["part_s"],
        )
    )
    rows.extend(run_all_pairs(quick, log=log))
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_separation.py [--quick]``."""
    return _common.script_main(
        run,
        __doc__,
        "200,000 rows x 100 groups; 100,000 items, 1,000,000 pairs, the loop on "
        "20,000 pairs",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
