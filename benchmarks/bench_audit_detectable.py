"""Benchmark: the audit's smallest detectable gaps, against one exact search per group.

Ours: ``sklearn_smallfair.audit._detectable.detectable_gaps`` for ``tpr``, ``fpr``
and ``ppv`` at the sizes of 60 groups (``--quick``: 8) from 5 to 300 people, both
directions, at the level of one gap among the 180 tests (24) of a Holm-adjusted
audit: all sizes bisect a geometric grid of gaps (steps of 10 %) together, and
the sizes at the same grid point share one call of
:func:`~sklearn_smallfair.stats.match_power`.

Baseline: :func:`~sklearn_smallfair.stats.match_min_detectable_effect`
called once per metric and distinct size (a cache per ``(metric, n)``), which
bisects the effect 40 times in each direction at one size per call. The two
are timed as one interleaved pair, the baseline and ours back to back
(``_common.interleaved``: the baseline takes seconds), and the row carries the
pair's ratio and the load average.

Correctness, on the results of the timed calls, before the ratio is reported:
for every metric and size, ours is NaN exactly where the exact search finds no
effect reaching 80 % power, and otherwise lies between the exact minimum
detectable effect and 10 % above it (in magnitude). Context row (INFO, no
baseline, timed once): the whole audit (``audit_predictions`` with the MATCH
test) of the 60 groups, to show the detectable gaps' share of it.

Target: at least 5x the per-size exact search at 60 groups.

Groups of millions (second row): the 12 sizes of the race x sex groups of
``bench_cli_io.py``'s file at 10,000,000 rows (20,000 to 2,250,000 people;
``--quick``: 1,000,000 rows; ``--large-rows N``: N rows, e.g. 100000000 for
the 100,000,000-row file, where the exact law takes minutes), whose counts
mostly have a
variance above ``LARGE_VARIANCE`` so their powers come from the Edgeworth law
in O(1) per group. Baseline, in the same run: the same call with the exact law
at every size (``LARGE_VARIANCE`` set to infinity), the windowed sums of
O(sqrt(n)) terms. The two run in 2 interleaved pairs (``--quick``: 1; the
ratio is the median of the pairs' ratios, the times the medians); checked on
the timed calls' results before the ratio is reported: the gaps agree within
one step of the grid (10 %).

Run ``python benchmarks/bench_audit_detectable.py [--quick] [--large-rows N]`` or
through ``run.py``.
"""

import sys
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

_common.ensure_package_importable()

NAME = "audit_detectable"
METRICS = ("tpr", "fpr", "ppv")
TARGET = 5.0
#: COMPAS, all defendants (TP, FN, FP, TN): the planning reference.
REFERENCE = np.array([389, 347, 1597, 4121])


def _sizes(n_groups):
    return np.round(np.geomspace(5, 300, n_groups)).astype(np.int64)


def _ours(sizes, alpha):
    from sklearn_smallfair.audit._detectable import detectable_gaps

    zeros = np.zeros(sizes.size)
    return {
        m: detectable_gaps(m, REFERENCE, sizes, zeros, alpha=alpha) for m in METRICS
    }


def _baseline(sizes, alpha):
    from sklearn_smallfair.stats import match_min_detectable_effect

    out = {}
    for m in METRICS:
        cache = {}
        for n in np.unique(sizes):
            try:
                cache[n] = match_min_detectable_effect(
                    m, REFERENCE, int(n), alpha=alpha
                )
            except ValueError:  # no effect reaches 80 % power at this size
                cache[n] = np.nan
        out[m] = np.array([cache[n] for n in sizes])
    return out


def _check(ours, exact):
    from sklearn_smallfair.audit._detectable import GAP_STEP

    for m in METRICS:
        a, b = np.abs(ours[m]), np.abs(exact[m])
        _common.check(
            (np.isnan(a) == np.isnan(b)).all(),
            f"{m}: ours and the exact search disagree on where no gap is detectable",
        )
        ok = ~np.isnan(b)
        _common.check(
            ((a[ok] >= b[ok] - 1e-9) & (a[ok] <= b[ok] * (1 + GAP_STEP) + 1e-9)).all(),
            f"{m}: a detectable gap off the exact one by more than the grid's step",
        )


def run(quick=False, *, log=print, large_rows=None):
    """Time ours and the baseline; return the result rows."""
    n_groups = 8 if quick else 60
    sizes = _sizes(n_groups)
    alpha = 0.05 / (n_groups * len(METRICS))
    # one interleaved pair: the baseline takes seconds (about 10x ours)
    res = _common.interleaved(
        lambda: _baseline(sizes, alpha), lambda: _ours(sizes, alpha), 1
    )
    _check(res["ours_result"], res["baseline_result"])
    ratio = res["ratio"]
    log(
        f"{NAME}: {n_groups} groups, 3 metrics: ours {res['ours_s']:.2f} s, "
        f"match_min_detectable_effect per size {res['baseline_s']:.2f} s (ratio "
        f"{ratio:.1f}, one interleaved pair)"
    )
    rows = [
        _common.make_row(
            f"detectable gaps, {n_groups} groups x 3 metrics",
            res["ours_s"],
            "match_min_detectable_effect per (metric, n)",
            res["baseline_s"],
            ratio=ratio,
            load=res["load"],
            pair_ratios=res["ratios"],
            target=f">= {TARGET:g}x",
            status="PASS" if ratio >= TARGET else "MISS",
        )
    ]
    rows.append(_large_row(quick, log, large_rows))
    from sklearn_smallfair.audit import audit_predictions

    rng = np.random.default_rng(0)
    counts = {
        f"g{k:02d}": rng.multinomial(int(n), REFERENCE / REFERENCE.sum())
        for k, n in enumerate(sizes)
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit_s, _, _ = _common.best_of(
            lambda: audit_predictions(
                counts=counts, metrics=list(METRICS), tests=("match",)
            ),
            1,
        )
    rows.append(
        _common.make_row(
            f"audit_predictions, {n_groups} groups (MATCH), end to end",
            audit_s,
            None,
            None,
            notes="context: the detectable gaps are part of this time",
        )
    )
    return rows


def _large_row(quick, log, rows=None):
    """Detectable gaps at groups of millions: Edgeworth law against exact law."""
    from unittest import mock

    from sklearn_smallfair.audit._detectable import GAP_STEP, detectable_gaps
    from sklearn_smallfair.stats import _large_n

    race = np.array([0.06, 0.30, 0.15, 0.004, 0.036, 0.45])  # bench_cli_io
    rows = rows or (10**6 if quick else 10**7)
    sizes = np.round(np.repeat(race, 2) * rows / 2)
    sizes = sizes.astype(np.int64)
    # the file's matrix of everybody (TP, FN, FP, TN): prevalence 0.33, 80 %
    # of the predictions right
    reference = np.array([0.264, 0.066, 0.134, 0.536]) * 10**8
    alpha = 0.05 / (sizes.size * len(METRICS))
    zeros = np.zeros(sizes.size)

    def ours():
        return {
            m: detectable_gaps(m, reference, sizes, zeros, alpha=alpha) for m in METRICS
        }

    def exact():
        with mock.patch.object(_large_n, "LARGE_VARIANCE", np.inf):
            return ours()

    pairs = 1 if quick else 2
    res = _common.interleaved(exact, ours, pairs)
    got, expected = res["ours_result"], res["baseline_result"]
    for m in METRICS:
        ratio = np.abs(got[m]) / np.abs(expected[m])
        _common.check(
            ((ratio <= 1 + GAP_STEP + 1e-9) & (ratio >= 1 / (1 + GAP_STEP))).all(),
            f"{m}: the Edgeworth law's gaps are off the exact law's by a grid step",
        )
    log(
        f"{NAME}: 12 groups of {sizes.min():,} to {sizes.max():,}, 3 metrics: "
        f"ours {res['ours_s']:.3f} s, exact law {res['baseline_s']:.2f} s (ratio "
        f"{res['ratio']:.1f}, median of {pairs} interleaved pair(s))"
    )
    return _common.make_row(
        f"detectable gaps, 12 groups of {sizes.min():,} to {sizes.max():,}",
        res["ours_s"],
        "the exact law at every size",
        res["baseline_s"],
        ratio=res["ratio"],
        load=res["load"],
        pair_ratios=res["ratios"],
        notes="gaps within one grid step of the exact law's",
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    large = (
        int(args[args.index("--large-rows") + 1]) if "--large-rows" in args else None
    )
    for row in run(quick="--quick" in args, large_rows=large):
        print(row)
