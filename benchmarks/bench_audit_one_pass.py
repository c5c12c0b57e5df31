"""Benchmark: the whole audit against the per-group table alone.

:func:`sklearn_smallfair.audit.audit_predictions` counts the rows once, then
builds its table, the MATCH tests, the separation test, the margins of
intersectional groups and the verdicts from these counts. This benchmark
measures what the whole audit costs in units of its cheapest part:

* ours: ``audit_predictions`` of the rows (metrics ``tpr``, ``fpr``, ``ppv``,
  default smoothing, both tests, 95 % intervals);
* baseline: ``group_metrics`` of the same rows with the same metrics and
  95 % intervals (``interval_method="auto"``), no tests;

timed interleaved in the same run on the same data (:func:`_common.interleaved`;
the ratio, baseline time / audit time, is the median of per-pair ratios; it is
below 1, and the closer to 1 the less the audit spends beyond its table). Run on
12 and 60 groups. Before timing, the audit's raw metric values are checked equal
to the table's.

Full mode: 20,000 rows; ``--quick``: 3,000 rows, fewer repeats.
Run ``python benchmarks/bench_audit_one_pass.py [--quick]`` or through
``run.py``.
"""

import inspect
import sys
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "audit_one_pass"
METRICS = ("tpr", "fpr", "ppv")
FULL = {"n_rows": 20_000, "groups": (12, 60), "repeats": 5}
QUICK = {"n_rows": 3_000, "groups": (12, 60), "repeats": 3}
SEED = 20261128


def make_data(n_rows, n_groups, seed=SEED):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=n_rows)
    y_true = (rng.random(n_rows) < 0.4).astype(np.int64)
    y_pred = np.where(rng.random(n_rows) < 0.8, y_true, 1 - y_true)
    names = np.array([f"group {k:03d}" for k in range(n_groups)], dtype=object)
    return y_true, y_pred, names[ids]


def _level(func, level=0.95):
    """The interval keywords of ``func``: ``confidence_level`` and, where
    ``func`` takes one, ``interval_method="auto"``."""
    params = inspect.signature(func).parameters
    out = {"confidence_level": level}
    if "interval_method" in params:
        out["interval_method"] = "auto"
    return out


def ours(y_true, y_pred, groups):
    """The whole audit of the rows."""
    from sklearn_smallfair.audit import audit_predictions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_predictions(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics=list(METRICS),
            **_level(audit_predictions),
        )


def baseline(y_true, y_pred, groups):
    """The per-group table alone: ``group_metrics`` of the rows."""
    from sklearn_smallfair.metrics import group_metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return group_metrics(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics=list(METRICS),
            zero_division=np.nan,
            random_state=0,
            **_level(group_metrics),
        )


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    _common.ensure_package_importable()
    cfg = QUICK if quick else FULL
    n_rows = cfg["n_rows"]
    rows = []
    for n_groups in cfg["groups"]:
        log(
            f"[{NAME}] {n_rows:,} rows, {n_groups} groups, metrics {', '.join(METRICS)}"
        )
        y_true, y_pred, groups = make_data(n_rows, n_groups)
        report = ours(y_true, y_pred, groups)
        table = baseline(y_true, y_pred, groups)
        for m in METRICS:
            _common.check(
                np.allclose(
                    report.frame[m].to_numpy(dtype=float),
                    table[m].to_numpy(dtype=float),
                    rtol=0,
                    atol=0,
                    equal_nan=True,
                ),
                f"the audit's {m} differs from group_metrics' on {n_groups} groups",
            )
        data = (y_true, y_pred, groups)
        timing = _common.interleaved(
            lambda data=data: baseline(*data),
            lambda data=data: ours(*data),
            cfg["repeats"],
        )
        ratio = timing["ratio"]
        log(
            f"[{NAME}] {n_groups} groups: audit {timing['ours_s']:.3f} s, "
            f"group_metrics {timing['baseline_s']:.3f} s, ratio {ratio:.3f} "
            f"(the audit costs {1 / ratio:.1f} tables)"
        )
        rows.append(
            _common.make_row(
                f"whole audit, {n_rows:,} rows x {n_groups} groups",
                timing["ours_s"],
                "group_metrics alone (same rows, 95% intervals)",
                timing["baseline_s"],
                ratio=ratio,
                status="INFO",
                notes=f"the audit costs {1 / ratio:.1f} x the table",
                ratios=timing["ratios"],
                load=timing["load"],
                n_rows=n_rows,
                n_groups=n_groups,
            )
        )
    return rows


def main(argv=None):
    return _common.script_main(run, __doc__, "3,000 rows, 3 repeats", argv)


if __name__ == "__main__":
    sys.exit(main())
