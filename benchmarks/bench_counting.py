"""Benchmark: per-group metrics against the bare counting they are built on.

Ours: :func:`sklearn_smallfair.metrics.group_metrics` with 10 metrics (tpr, fpr,
ppv, npv, tnr, fnr, acc, f1, mcc, ppr) and ``zero_division=np.nan`` on 0/1
``int64`` labels and predictions: the whole call (checks of the labels and the
groups, counting, dropping empty groups, the metrics and the table).

Baselines, timed interleaved with ours in the same run on the same data
(:func:`_common.interleaved`: the ratio is the median of per-pair ratios):

* integer group ids: ``np.bincount(g - g.min())``, a bare count of the ids,
  which checks nothing and does not count the four cells; target: ours within
  1.5x of it (ratio baseline/ours >= 0.67);
* text group labels (an object array of strings) and a pandas ``category``
  Series: ``pandas.factorize(groups)`` followed by ``np.bincount`` of its codes;
  target: ours within 2x (ratio >= 0.5).

Before timing, the counts are checked against a direct count (one
``np.bincount`` of ``4 * code + cell``, the codes from ``pandas.factorize`` with
sorting) for every kind of group column.

Full mode: 10,000,000 rows, 1,000 groups; ``--quick``: 200,000 rows, 100 groups.
Run ``python benchmarks/bench_counting.py [--quick]`` or through ``run.py``.
"""

import sys

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "counting"
METRICS = ("tpr", "fpr", "ppv", "npv", "tnr", "fnr", "acc", "f1", "mcc", "ppr")
FULL = {"n_rows": 10_000_000, "n_groups": 1_000, "repeats": 5}
QUICK = {"n_rows": 200_000, "n_groups": 100, "repeats": 5}
TARGETS = {"int": 1.0 / 1.5, "str": 0.5, "category": 0.5}
SEED = 20261124


def make_data(n_rows, n_groups, seed=SEED):
    """Seeded 0/1 labels and predictions and the group of each row in three
    forms: integer ids (negative, with gaps), text labels, a category Series."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=n_rows)
    y_true = (rng.random(n_rows) < rng.uniform(0.1, 0.6, n_groups)[ids]).astype(
        np.int64
    )
    y_pred = np.where(rng.random(n_rows) < 0.8, y_true, 1 - y_true)
    names = np.array([f"group {k:05d}" for k in range(n_groups)], dtype=object)
    groups = {
        "int": 3 * ids - 1_000,  # negative ids, with gaps
        "str": names[ids],
        "category": pd.Series(pd.Categorical.from_codes(ids, names)),
    }
    return y_true, y_pred, groups


def ours(y_true, y_pred, groups):
    _common.ensure_package_importable()
    from sklearn_smallfair.metrics import group_metrics

    return group_metrics(
        y_true, y_pred, sensitive_features=groups, metrics=METRICS, zero_division=np.nan
    )


def bare_bincount(groups):
    return np.bincount(groups - groups.min())


def factorize_bincount(groups):
    import pandas as pd

    codes, _ = pd.factorize(groups)
    return np.bincount(codes)


def direct_counts(y_true, y_pred, groups):
    import pandas as pd

    codes, labels = pd.factorize(np.asarray(groups), sort=True)
    cell = 2 * (1 - y_true) + (1 - y_pred)
    counts = np.bincount(4 * codes + cell, minlength=4 * len(labels))
    return np.asarray(labels), counts.reshape(-1, 4)


def check_counts(y_true, y_pred, groups):
    """Our counts equal the direct count, for every kind of group column."""
    _common.ensure_package_importable()
    from sklearn_smallfair.metrics import confusion_counts

    for kind, column in groups.items():
        labels, counts = confusion_counts(y_true, y_pred, sensitive_features=column)
        want_labels, want = direct_counts(y_true, y_pred, column)
        _common.check(
            np.array_equal(counts, want), f"{kind}: counts differ from a direct count"
        )
        _common.check(
            labels.tolist() == want_labels.tolist(), f"{kind}: group labels differ"
        )


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    log(f"[{NAME}] {n_rows:,} rows, {n_groups:,} groups, {len(METRICS)} metrics")
    y_true, y_pred, groups = make_data(n_rows, n_groups)
    check_counts(y_true, y_pred, groups)
    rows = []
    for kind, column in groups.items():
        if kind == "int":
            label, base = "np.bincount(g - g.min())", bare_bincount
        else:
            label, base = "pandas.factorize + np.bincount", factorize_bincount
        timing = _common.interleaved(
            lambda base=base, column=column: base(column),
            lambda column=column: ours(y_true, y_pred, column),
            cfg["repeats"],
        )
        ratio = timing["ratio"]
        target = TARGETS[kind]
        log(
            f"[{NAME}] {kind} groups: ours {timing['ours_s']:.3f} s, {label} "
            f"{timing['baseline_s']:.3f} s, ratio {ratio:.2f}"
        )
        rows.append(
            _common.make_row(
                f"group_metrics, {kind} groups, {n_rows:,} rows x {n_groups} groups",
                timing["ours_s"],
                label,
                timing["baseline_s"],
                ratio=ratio,
                target=f">= {target:.2f}x" + (" (full mode)" if quick else ""),
                # at --quick sizes the call's fixed cost (checks, the table) is
                # most of the time: the targets are for the full mode
                status="INFO" if quick else ("PASS" if ratio >= target else "MISS"),
                notes=f"ours within {1 / ratio:.2f}x of the baseline",
                ratios=timing["ratios"],
                load=timing["load"],
                n_rows=n_rows,
                n_groups=n_groups,
            )
        )
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = run(quick="--quick" in argv)
    print(_common.format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
