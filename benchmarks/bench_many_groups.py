"""Benchmark: an audit of many small groups, its critical regions computed once
per distinct table.

The audit's smallest detectable gaps need, for every group, the critical regions
of the two-sample test at each size its denominator can take (a binomial over
the group's size) against its reference (everyone else). Groups of one size
share most of these tables: with 1,500 groups of about 30 people, about one
table in three is distinct. :func:`~sklearn_smallfair.stats._two_sample.critical_values`
computes each distinct table once and gives every group its own.

* ours: the detectable gaps of ``tpr``, ``fpr`` and ``ppv``
  (``audit._detectable.detectable_gaps``) of ``K`` groups of 10 to 50 people
  against everyone else, this checkout;
* baseline: the same call with every table computed, repeated ones included (the
  regions as they were computed before), patched in for the call.

Timed as interleaved pairs in the same run (ratio = baseline time / our time,
median of the per-pair ratios). Before the ratio, the two must give the same
gaps (relative 1e-12, NaN at the same places). Context rows (INFO, timed once):
the whole audit of the ``K`` groups (rows in, report out) with the size of its
HTML page.

Full mode: 1,500 groups, 3 pairs; ``--quick``: 200 groups, 2 pairs.
Run ``python benchmarks/bench_many_groups.py [--quick]`` or through ``run.py``.
"""

import sys
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common, bench_audit_detectable
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common
    import bench_audit_detectable

_common.ensure_package_importable()

NAME = "many_groups"
METRICS = ("tpr", "fpr", "ppv")
FULL = {"groups": 1_500, "repeats": 3}
QUICK = {"groups": 200, "repeats": 2}
SEED = 20261129


def _rows(n_groups):
    """Rows of ``n_groups`` groups of 10 to 50 people, 80 % accurate predictions."""
    rng = np.random.default_rng(SEED)
    sizes = rng.integers(10, 51, n_groups)
    groups = np.repeat([f"g{i:05d}" for i in range(n_groups)], sizes)
    y = rng.integers(0, 2, groups.size)
    pred = np.where(rng.random(groups.size) < 0.8, y, 1 - y)
    return y, pred, groups


def _gaps(cms, alpha):
    """The audit's detectable gaps of the three metrics (the same call as
    ``bench_audit_detectable``'s)."""
    return bench_audit_detectable._ours(cms, alpha)


def _every_table(k, m, s, level):
    """Critical values with every table computed, repeated ones included."""
    from sklearn_smallfair.stats import _two_sample

    k, m, s, level = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(k, m, s, level)
    )
    return _two_sample._critical_values(k, m, s, level)


def _baseline(cms, alpha):
    from sklearn_smallfair.stats import _two_sample

    shared = _two_sample.critical_values
    _two_sample.critical_values = _every_table
    try:
        return _gaps(cms, alpha)
    finally:
        _two_sample.critical_values = shared


def _clear():
    from sklearn_smallfair.stats import _two_sample

    _two_sample._critical_cached.cache_clear()


def _check(ours, baseline):
    for m in METRICS:
        a, b = np.asarray(ours[m], float), np.asarray(baseline[m], float)
        _common.check(
            np.array_equal(np.isnan(a), np.isnan(b)),
            f"{m}: the detectable gaps are NaN at different groups",
        )
        ok = ~np.isnan(a)
        _common.check(
            np.allclose(a[ok], b[ok], rtol=1e-12, atol=0),
            f"{m}: the detectable gaps differ from every table's "
            f"(largest difference {np.max(np.abs(a[ok] - b[ok])):.3g})",
        )


def run(quick=False, *, log=print):
    """Time ours and the baseline; return the result rows."""
    from sklearn_smallfair.metrics import confusion_counts

    config = QUICK if quick else FULL
    y, pred, groups = _rows(config["groups"])
    cms = confusion_counts(y, pred, sensitive_features=groups).counts
    alpha = 0.05 / (len(cms) * len(METRICS))
    res = _common.interleaved(
        lambda: _baseline(cms, alpha),
        lambda: _gaps(cms, alpha),
        config["repeats"],
        setup=_clear,
    )
    _check(res["ours_result"], res["baseline_result"])
    log(
        f"{NAME}: {len(cms)} groups x 3 metrics: ours {res['ours_s']:.2f} s, "
        f"every table {res['baseline_s']:.2f} s (ratio {res['ratio']:.1f})"
    )
    rows = [
        _common.make_row(
            f"detectable gaps, {len(cms):,} groups of 10-50 x 3 metrics",
            res["ours_s"],
            "every table's critical region computed (repeats included)",
            res["baseline_s"],
            ratio=res["ratio"],
            load=res["load"],
            pair_ratios=res["ratios"],
        )
    ]

    from sklearn_smallfair.audit import audit_predictions

    def audit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return audit_predictions(y, pred, sensitive_features=groups).to_html()

    _clear()
    seconds, _, page = _common.best_of(audit, 1)
    log(f"{NAME}: audit of {y.size:,} rows, {len(cms):,} groups: {seconds:.2f} s")
    rows.append(
        _common.make_row(
            f"audit_predictions, {y.size:,} rows, {len(cms):,} groups, HTML out",
            seconds,
            None,
            None,
            notes=f"context: HTML page {len(page) / 1e6:.1f} MB",
        )
    )
    return rows


if __name__ == "__main__":
    sys.exit(_common.script_main(run, __doc__, "200 groups, 2 pairs"))
