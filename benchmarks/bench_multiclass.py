"""Benchmark: multiclass per-group, per-class metrics against the straightforward ways.

Ours: :func:`sklearn_smallfair.metrics.group_metrics` with ``labels`` of K = 5
classes and the per-class metrics tpr, ppv, f1, fpr, tnr, npv, fnr, fdr (one row
per group and class): one ``np.bincount`` for every group's K x K matrix, the
one-vs-rest matrices in one vectorized step, then the registry's formulas.

Baselines, timed in the same process on the same data:

* ``pandas groupby + sklearn``: ``DataFrame.groupby`` over the groups and, per
  group, scikit-learn's ``precision_recall_fscore_support(average=None)`` (tpr,
  ppv, f1) and ``multilabel_confusion_matrix`` for the rates scikit-learn lacks
  (fpr, tnr, npv, fnr, fdr);
* ``fairlearn MetricFrame``: ``recall_score``, ``precision_score`` and
  ``f1_score`` with ``average=None`` as callables (array-valued per group),
  skipped with a note when fairlearn is not importable. It computes three of the
  eight metrics, so its ratio understates ours.

Every value of each timed baseline call is compared with ours (``np.allclose``
where ours is defined; scikit-learn's 0.0 for undefined values is left out).
Full mode: 10,000,000 rows, 1,000 groups, fairlearn timed and checked on the
first 1,000,000 rows; ``--quick``: 200,000 rows, 100 groups. Each ratio comes
from interleaved pairs of calls (``_common.interleaved``). Target: ours at least
20x faster than each baseline.

Run ``python benchmarks/bench_multiclass.py [--quick]`` or through ``run.py``.
"""

import sys
import warnings
from functools import partial

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "multiclass"
N_CLASSES = 5
METRICS = ("tpr", "ppv", "f1", "fpr", "tnr", "npv", "fnr", "fdr")
TARGET_RATIO = 20.0
#: fairlearn is timed on the first ``fairlearn_rows`` rows (the same groups): at
#: 10,000,000 rows one call takes it more than ten minutes.
#: ``pairs``: interleaved pairs for the pandas baseline (fairlearn: one).
FULL = {
    "n_rows": 10_000_000,
    "n_groups": 1_000,
    "fairlearn_rows": 1_000_000,
    "pairs": 2,
}
QUICK = {"n_rows": 200_000, "n_groups": 100, "fairlearn_rows": 200_000, "pairs": 3}
SEED = 20261124


def make_data(n_rows, n_groups, seed=SEED):
    """Seeded labels of 5 classes, predictions right 60 % of the time (otherwise a
    uniform class), and integer group ids; group 0 never has class 4 (its tpr of
    class 4 is undefined)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_groups, n_rows)
    t = rng.integers(0, N_CLASSES, n_rows)
    t[(g == 0) & (t == N_CLASSES - 1)] = 0
    p = np.where(rng.random(n_rows) < 0.6, t, rng.integers(0, N_CLASSES, n_rows))
    return t, p, g


def ours(t, p, g):
    from sklearn_smallfair.metrics import group_metrics

    return group_metrics(
        t,
        p,
        sensitive_features=g,
        labels=np.arange(N_CLASSES),
        metrics=list(METRICS),
        zero_division=np.nan,
    )


def sklearn_baseline(t, p, g):
    import pandas as pd
    from sklearn.metrics import (
        multilabel_confusion_matrix,
        precision_recall_fscore_support,
    )

    labels = np.arange(N_CLASSES)
    frame = pd.DataFrame({"t": t, "p": p, "g": g})
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, part in frame.groupby("g", sort=True):
            yt, yp = part["t"].to_numpy(), part["p"].to_numpy()
            ppv, tpr, f1, _ = precision_recall_fscore_support(
                yt, yp, labels=labels, average=None, zero_division=0.0
            )
            mcm = multilabel_confusion_matrix(yt, yp, labels=labels)
            tn, fp, fn, tp = (mcm[:, i // 2, i % 2] for i in range(4))
            with np.errstate(divide="ignore", invalid="ignore"):
                out[key] = {
                    "tpr": tpr,
                    "ppv": ppv,
                    "f1": f1,
                    "fpr": fp / (fp + tn),
                    "tnr": tn / (fp + tn),
                    "npv": tn / (tn + fn),
                    "fnr": fn / (fn + tp),
                    "fdr": fp / (fp + tp),
                }
    return out


def fairlearn_available():
    try:
        import fairlearn  # noqa: F401
    except ImportError:
        return False
    return True


def fairlearn_baseline(t, p, g):
    from fairlearn.metrics import MetricFrame
    from sklearn.metrics import f1_score, precision_score, recall_score

    labels = np.arange(N_CLASSES)
    kw = {"labels": labels, "average": None, "zero_division": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = MetricFrame(
            metrics={
                "tpr": partial(recall_score, **kw),
                "ppv": partial(precision_score, **kw),
                "f1": partial(f1_score, **kw),
            },
            y_true=t,
            y_pred=p,
            sensitive_features=g,
        )
        by_group = frame.by_group
    return {
        key: {name: np.asarray(by_group.loc[key, name]) for name in by_group.columns}
        for key in by_group.index
    }


def compare(label, table, baseline):
    """Every baseline value equals ours where ours is defined; returns a note."""
    checked = 0
    for key, values in baseline.items():
        for name, expected in values.items():
            got = table.loc[key, name].to_numpy()
            defined = ~np.isnan(got)
            _common.check(
                np.allclose(got[defined], np.asarray(expected)[defined], rtol=1e-9),
                f"{label}: {name} of group {key} differs: {got} vs {expected}",
            )
            checked += int(defined.sum())
    return f"{checked:,} values equal to ours"


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    log(
        f"[{NAME}] {n_rows:,} rows, {n_groups:,} groups, K = {N_CLASSES} classes, "
        f"{len(METRICS)} per-class metrics"
    )
    data = make_data(n_rows, n_groups)
    # (label, function, rows it is timed and checked on, interleaved pairs)
    baselines = [("pandas groupby + sklearn", sklearn_baseline, n_rows, cfg["pairs"])]
    rows, skipped = [], []
    if fairlearn_available():
        baselines.append(
            ("fairlearn MetricFrame", fairlearn_baseline, cfg["fairlearn_rows"], 1)
        )
    else:
        skipped.append("fairlearn MetricFrame")
    table = ours(*data)  # warms imports and caches
    undefined = int(table["tpr_undefined"].sum())
    _common.check(undefined >= 1, "the degenerate group's tpr should be undefined")
    for label, func, rows_used, pairs in baselines:
        sub = data if rows_used >= n_rows else tuple(a[:rows_used] for a in data)
        log(f"[{NAME}] {label} against ours on {rows_used:,} rows ({pairs} pair(s))")
        res = _common.interleaved(
            lambda f=func, sub=sub: f(*sub), lambda sub=sub: ours(*sub), pairs
        )
        note = compare(label, res["ours_result"], res["baseline_result"])
        if sub is not data:
            note += (
                f"; timed and checked on the first {rows_used:,} rows (the full "
                f"{n_rows:,} take it about {n_rows / rows_used:.0f}x as long)"
            )
        log(f"[{NAME}] {label}: {res['baseline_s']:.2f} s, ratio {res['ratio']:.1f}x")
        rows.append(
            _common.make_row(
                f"multiclass group_metrics {rows_used:,} rows x {n_groups:,} groups, "
                f"K={N_CLASSES}",
                res["ours_s"],
                label,
                res["baseline_s"],
                ratio=res["ratio"],
                target=f">= {TARGET_RATIO:g}x",
                status="PASS" if res["ratio"] >= TARGET_RATIO else "MISS",
                notes=note,
                load=res["load"],
                n_rows=rows_used,
                n_groups=n_groups,
                n_classes=N_CLASSES,
                metrics=list(METRICS),
            )
        )
    for label in skipped:
        rows.append(
            _common.make_row(
                f"multiclass group_metrics {cfg['fairlearn_rows']:,} rows x "
                f"{n_groups:,} groups, K={N_CLASSES}",
                None,
                label,
                None,
                target=f">= {TARGET_RATIO:g}x",
                status="SKIP",
                notes=f"{label} not importable (pip install fairlearn)",
            )
        )
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = run(quick="--quick" in argv)
    print(_common.markdown_table(rows))
    return 0


if __name__ == "__main__":
    _common.ensure_package_importable()
    sys.exit(main())
