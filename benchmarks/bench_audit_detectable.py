"""Benchmark: the audit's smallest detectable gaps, in one call against a loop.

Ours: ``sklearn_smallfair.audit._detectable.detectable_gaps`` for ``tpr``, ``fpr``
and ``ppv`` at the sizes of 60 groups (``--quick``: 8) of 144 to 33,817 people
(the audit of 100,000 rows of the speed target), each against the others and
with its own share of people in the metric's denominator, at the level of one
gap among the 180 tests (24) of a Holm-adjusted audit: one vectorized call of
:func:`~sklearn_smallfair.stats.match_min_detectable_effect` per metric, the
groups' power curves built and bisected together.

Baseline: the same public function called once per (metric, group), the
straightforward loop. The two are timed as one interleaved pair and the row
carries the pair's ratio and the load average.

Correctness, on the results of the timed calls, before the ratio is reported:
the two give the same gaps (relative 1e-9), NaN at the same places. Context row
(INFO, no baseline, timed once): the whole audit (``audit_predictions`` with
the MATCH test, rows in, HTML report with its plot out) of the 60 groups, the
speed target's audit (under 2 s on 2 cores).

Target: at least 3x the per-group loop at 60 groups.

Run ``python benchmarks/bench_audit_detectable.py [--quick]`` or through
``run.py``.
"""

import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

_common.ensure_package_importable()

NAME = "audit_detectable"
METRICS = ("tpr", "fpr", "ppv")
CELLS = {"tpr": [0, 1], "fpr": [2, 3], "ppv": [0, 2]}
TARGET = 3.0
#: The law of every group (TP, FN, FP, TN proportions).
LAW = np.array([0.21, 0.09, 0.14, 0.56])


def _groups(n_groups):
    """Group sizes from 144 to 33,817 (geometric), summing to about 100,000
    people for 60 groups, and their counts (seeded)."""
    sizes = np.unique(np.round(np.geomspace(144, 33_817, n_groups)).astype(int))
    rng = np.random.default_rng(0)
    return rng.multinomial(sizes, LAW)  # (G, 4)


def _ours(cms, alpha):
    from sklearn_smallfair.audit._detectable import detectable_gaps

    n = cms.sum(axis=1)
    others = cms.sum(axis=0) - cms
    return {
        m: detectable_gaps(m, others, n, cms[:, CELLS[m]].sum(axis=1) / n, alpha=alpha)
        for m in METRICS
    }


def _baseline(cms, alpha):
    from sklearn_smallfair.stats import match_min_detectable_effect

    n = cms.sum(axis=1)
    others = cms.sum(axis=0) - cms
    out = {}
    for m in METRICS:
        gaps = []
        for k in range(len(cms)):
            share = cms[k, CELLS[m]].sum() / n[k]
            try:
                gaps.append(
                    abs(
                        match_min_detectable_effect(
                            m, others[k], int(n[k]), share=share, alpha=alpha
                        )
                    )
                )
            except ValueError:
                gaps.append(np.nan)
        out[m] = np.array(gaps)
    return out


def _check(ours, baseline):
    for m in METRICS:
        a, b = ours[m], baseline[m]
        _common.check(
            bool(
                (np.isnan(a) == np.isnan(b)).all()
                and np.allclose(a, b, rtol=1e-9, equal_nan=True)
            ),
            f"{NAME}: the vectorized gaps of {m} equal the per-group ones",
        )


def run(quick=False, *, log=print, large_rows=None):
    """Time ours and the baseline; return the result rows."""
    n_groups = 8 if quick else 60
    cms = _groups(n_groups)
    alpha = 0.05 / (len(cms) * len(METRICS))
    res = _common.interleaved(
        lambda: _baseline(cms, alpha), lambda: _ours(cms, alpha), 1
    )
    _check(res["ours_result"], res["baseline_result"])
    ratio = res["ratio"]
    log(
        f"{NAME}: {len(cms)} groups, 3 metrics: ours {res['ours_s']:.2f} s, "
        f"one call per group {res['baseline_s']:.2f} s (ratio {ratio:.1f})"
    )
    rows = [
        _common.make_row(
            f"detectable gaps, {len(cms)} groups x 3 metrics",
            res["ours_s"],
            "match_min_detectable_effect per (metric, group)",
            res["baseline_s"],
            ratio=ratio,
            load=res["load"],
            pair_ratios=res["ratios"],
            target=f">= {TARGET:g}x",
            status="PASS" if ratio >= TARGET else "MISS",
        )
    ]
    from sklearn_smallfair.audit import audit_predictions

    # rows in, report out: the speed target's audit
    rng = np.random.default_rng(1)
    cells = np.repeat(np.tile(np.arange(4), len(cms)), cms.ravel())
    groups = np.repeat(np.arange(len(cms)), cms.sum(axis=1))
    y = (cells <= 1).astype(int)
    pred = ((cells == 0) | (cells == 2)).astype(int)
    order = rng.permutation(y.size)
    y, pred, groups = y[order], pred[order], groups[order]

    def audit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = audit_predictions(
                y, pred, sensitive_features=groups, metrics=list(METRICS)
            )
            with tempfile.TemporaryDirectory() as tmp:
                report.to_html(Path(tmp) / "report.html")

    audit_s, _, _ = _common.best_of(audit, 1)
    log(f"{NAME}: audit of {y.size:,} rows, {len(cms)} groups: {audit_s:.2f} s")
    rows.append(
        _common.make_row(
            f"audit_predictions, {y.size:,} rows, {len(cms)} groups, HTML out",
            audit_s,
            None,
            None,
            notes="context: target under 2 s on 2 cores",
        )
    )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv[1:]):
        print(row)
