"""Benchmark: the audit's per-group table from rows counted once.

:func:`sklearn_smallfair.audit.audit_predictions` counts the rows into per-group
``(TP, FN, FP, TN)`` matrices and builds its table of metrics and intervals
from these counts (``group_metrics(counts=...)``).

* ours: ``rows_or_counts`` of the rows, then ``group_metrics(counts=...)`` of
  the matrices (the audit's table step);
* baseline: ``rows_or_counts`` of the rows, then ``group_metrics`` of the same
  rows (the rows counted a second time, as the audit did before);

timed interleaved in the same run on the same data (:func:`_common.interleaved`,
the ratio is the median of per-pair ratios); target: ratio >= 1.5 in the full
mode. Before timing, the two tables are checked equal, exactly. The whole audit
(``tests=()``, 100 draws of the reference ranges) is timed once for scale.

Full mode: 5,000,000 rows, 50 text groups; ``--quick``: 200,000 rows.
Run ``python benchmarks/bench_audit_counting.py [--quick]`` or through
``run.py``.
"""

import sys
import time

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "audit_counting"
METRICS = ("tpr", "fpr", "ppv")
FULL = {"n_rows": 5_000_000, "n_groups": 50, "repeats": 5}
QUICK = {"n_rows": 200_000, "n_groups": 50, "repeats": 5}
TARGET = 1.5
SEED = 20261124


def make_data(n_rows, n_groups, seed=SEED):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=n_rows)
    y_true = (rng.random(n_rows) < 0.4).astype(np.int64)
    y_pred = np.where(rng.random(n_rows) < 0.8, y_true, 1 - y_true)
    names = np.array([f"group {k:03d}" for k in range(n_groups)], dtype=object)
    return y_true, y_pred, names[ids]


def _settings():
    return dict(
        metrics=list(METRICS),
        zero_division=np.nan,
        confidence_level=0.95,
        interval_method="auto",
        random_state=0,
    )


def ours(y_true, y_pred, groups):
    """The audit's table step: count once, the table from the counts."""
    import pandas as pd

    from sklearn_smallfair._confusion import CELLS, rows_or_counts
    from sklearn_smallfair.metrics import group_metrics

    labels, cms, name = rows_or_counts(y_true, y_pred, groups, None, None, 1)
    table = pd.DataFrame(cms, columns=list(CELLS), index=pd.Index(labels, name=name))
    return group_metrics(counts=table, **_settings())


def baseline(y_true, y_pred, groups):
    """The former table step: count, then the table from the rows again."""
    from sklearn_smallfair._confusion import rows_or_counts
    from sklearn_smallfair.metrics import group_metrics

    rows_or_counts(y_true, y_pred, groups, None, None, 1)
    return group_metrics(y_true, y_pred, sensitive_features=groups, **_settings())


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    _common.ensure_package_importable()
    import pandas as pd

    from sklearn_smallfair.audit import audit_predictions

    cfg = QUICK if quick else FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    log(f"[{NAME}] {n_rows:,} rows, {n_groups} groups, metrics {', '.join(METRICS)}")
    y_true, y_pred, groups = make_data(n_rows, n_groups)
    try:
        pd.testing.assert_frame_equal(
            ours(y_true, y_pred, groups),
            baseline(y_true, y_pred, groups),
            check_exact=True,
        )
    except AssertionError as exc:
        _common.check(False, f"the tables differ: {exc}")
    timing = _common.interleaved(
        lambda: baseline(y_true, y_pred, groups),
        lambda: ours(y_true, y_pred, groups),
        cfg["repeats"],
    )
    start = time.perf_counter()
    audit_predictions(
        y_true, y_pred, sensitive_features=groups, tests=(), n_resamples=100
    )
    whole = time.perf_counter() - start
    ratio = timing["ratio"]
    log(
        f"[{NAME}] table from counts {timing['ours_s']:.3f} s, rows counted twice "
        f"{timing['baseline_s']:.3f} s, ratio {ratio:.2f}; whole audit {whole:.3f} s"
    )
    return [
        _common.make_row(
            f"audit table, rows counted once, {n_rows:,} rows x {n_groups} groups",
            timing["ours_s"],
            "rows counted twice (group_metrics on the rows)",
            timing["baseline_s"],
            ratio=ratio,
            target=f">= {TARGET:.1f}x" + (" (full mode)" if quick else ""),
            status="INFO" if quick else ("PASS" if ratio >= TARGET else "MISS"),
            notes=f"whole audit (tests=()) {whole:.2f} s",
            ratios=timing["ratios"],
            load=timing["load"],
            n_rows=n_rows,
            n_groups=n_groups,
        )
    ]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = run(quick="--quick" in argv)
    print(_common.format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
