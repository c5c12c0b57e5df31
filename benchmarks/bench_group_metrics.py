"""Benchmark: per-group metrics on many rows, against the straightforward ways.

Ours: :func:`sklearn_smallfair.metrics.group_metrics` with 10 metrics (tpr, fpr,
ppv, npv, tnr, fnr, acc, f1, mcc, ppr) and ``zero_division=np.nan``: one
``np.bincount`` for all per-group confusion matrices, then vectorized formulas.

Baselines, timed in the same process on the same data:

* ``pandas groupby + sklearn``: ``DataFrame.groupby`` over the groups and, per
  group, scikit-learn's ``recall_score``, ``precision_score`` (``pos_label=1`` and
  ``0`` for ppv and npv), ``recall_score(pos_label=0)`` (tnr), ``accuracy_score``,
  ``f1_score``, ``matthews_corrcoef``, and one ``confusion_matrix`` for the rates
  scikit-learn lacks (fpr, fnr, ppr);
* ``fairlearn MetricFrame``: the same 10 metrics as callables (fairlearn's
  ``true_positive_rate``, ``false_positive_rate``, ``true_negative_rate``,
  ``false_negative_rate``, ``selection_rate`` and scikit-learn's scorers), skipped
  with a note when fairlearn is not importable.

Every timed baseline call's table is compared with ours (``np.allclose`` wherever
our value is defined); a mismatch stops the benchmark. Full mode: 10,000,000 rows,
1,000 groups; ``--quick``: 200,000 rows, 100 groups. fairlearn is timed and checked
on the first 1,000,000 rows (the same 1,000 groups) so that the full run stays
within minutes: at 10,000,000 rows one call takes it five minutes or more. Each
ratio is the median over interleaved pairs (baseline and ours back to back, see
``_common.interleaved``). Target: ours at least 20x faster than each baseline.

A second row times the same call with 95 % intervals for every column
(``confidence_level=0.95, interval_method="auto"``: Wilson intervals for the eight
rates, the exact Beta posterior for f1, posterior draws for mcc) against the same
call without intervals, both timed in the same run. Target: at most 3x the time without
intervals.

A third part times a callable metric evaluated per group:
:class:`sklearn_smallfair.metrics.GroupMetricFrame` with scikit-learn's
``roc_auc_score`` on scores, 1,000,000 rows and 100 groups (``--quick``: 200,000
rows, 100 groups), against ``DataFrame.groupby`` and ``roc_auc_score`` group by
group, and against fairlearn's ``MetricFrame`` with the same callable when it is
importable; the per-group values and the overall value of each timed call are
compared. Both sides call the same scikit-learn function once per
group, so the ratio measures the cost of splitting the rows into groups and of
the frame's bookkeeping: parity is the expectation, and the target (ratio >= 0.9)
checks that the frame adds no cost beyond the timing noise of a shared machine.

Run ``python benchmarks/bench_group_metrics.py [--quick]`` or through ``run.py``.
"""

import sys
import warnings
from functools import partial

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "group_metrics"
METRICS = ("tpr", "fpr", "ppv", "npv", "tnr", "fnr", "acc", "f1", "mcc", "ppr")
TARGET_RATIO = 20.0
#: Largest slowdown allowed for the call with intervals (confidence_level=0.95,
#: "auto").
TARGET_CI_SLOWDOWN = 3.0
# repeats_ours: interleaved pairs for the call with intervals; pairs: for the
# pandas baseline; fairlearn runs one pair on its first ``fairlearn_rows`` rows
FULL = {
    "n_rows": 10_000_000,
    "n_groups": 1_000,
    "repeats_ours": 3,
    "pairs": 2,
    "fairlearn_rows": 1_000_000,
}
QUICK = {
    "n_rows": 200_000,
    "n_groups": 100,
    "repeats_ours": 3,
    "pairs": 3,
    "fairlearn_rows": 200_000,
}
SEED = 20261121
#: The callable-metric rows: rows and groups, and their target ratio.
CALLABLE_FULL = {"n_rows": 1_000_000, "n_groups": 100, "repeats": 3}
CALLABLE_QUICK = {"n_rows": 200_000, "n_groups": 100, "repeats": 3}
TARGET_CALLABLE_RATIO = 0.9


def make_data(n_rows, n_groups, seed=SEED):
    """Seeded synthetic binary labels, predictions and integer group ids.

    Groups are drawn uniformly; each group has its own prevalence (0.1-0.6) and
    accuracy (0.6-0.95). Two groups are made degenerate so undefined values are
    exercised: group 0 has no true positives (tpr, fnr, mcc undefined) and group 1
    predicts every row positive (npv, mcc undefined).
    """
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_groups, size=n_rows)
    prevalence = rng.uniform(0.1, 0.6, size=n_groups)
    accuracy = rng.uniform(0.6, 0.95, size=n_groups)
    y_true = (rng.random(n_rows) < prevalence[groups]).astype(np.int64)
    correct = rng.random(n_rows) < accuracy[groups]
    y_pred = np.where(correct, y_true, 1 - y_true)
    y_true[groups == 0] = 0
    y_pred[groups == 1] = 1
    return y_true, y_pred, groups


def ours(y_true, y_pred, groups):
    """Our per-group table: ``(group labels, values of shape (n_groups, 10))``."""
    _common.ensure_package_importable()
    from sklearn_smallfair.metrics import group_metrics

    table = group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=METRICS,
        zero_division=np.nan,
    )
    return table.index.to_numpy(), table[list(METRICS)].to_numpy(dtype=np.float64)


def ours_with_intervals(y_true, y_pred, groups):
    """Our table with 95 % intervals (``interval_method="auto"``, seeded)."""
    _common.ensure_package_importable()
    from sklearn_smallfair.metrics import group_metrics

    return group_metrics(
        y_true,
        y_pred,
        sensitive_features=groups,
        metrics=METRICS,
        zero_division=np.nan,
        confidence_level=0.95,
        random_state=0,
    )


def check_intervals(table, ours_result):
    """The table with intervals has our values, and bounds that make sense."""
    labels, values = ours_result
    _common.check(
        np.array_equal(table.index.to_numpy(), labels), "intervals: group labels"
    )
    _common.check(
        np.allclose(
            table[list(METRICS)].to_numpy(dtype=np.float64), values, equal_nan=True
        ),
        "intervals: the values differ from the call without intervals",
    )
    for metric in METRICS:
        low = table[f"{metric}_low"].to_numpy()
        high = table[f"{metric}_high"].to_numpy()
        undefined = table[f"{metric}_undefined"].to_numpy()
        _common.check(
            np.isnan(low[undefined]).all() and np.isnan(high[undefined]).all(),
            f"intervals: {metric} has bounds where it is undefined",
        )
        _common.check(
            (low[~undefined] <= high[~undefined]).all(),
            f"intervals: {metric} has a lower bound above its upper bound",
        )
        if metric != "mcc":  # closed-form intervals contain the estimate
            value = table[metric].to_numpy()[~undefined]
            _common.check(
                (
                    (low[~undefined] <= value + 1e-12)
                    & (value <= high[~undefined] + 1e-12)
                ).all(),
                f"intervals: a {metric} interval misses its estimate",
            )
    methods = table.attrs["interval_method"]
    return ", ".join(f"{m}: {methods[m]}" for m in ("tpr", "f1", "mcc"))


def _rate(num, den):
    return num / den if den else np.nan


def sklearn_baseline(y_true, y_pred, groups):
    """pandas groupby, then scikit-learn's metric functions group by group."""
    import pandas as pd
    from sklearn.metrics import (
        accuracy_score,
        confusion_matrix,
        f1_score,
        matthews_corrcoef,
        precision_score,
        recall_score,
    )

    frame = pd.DataFrame({"group": groups, "y_true": y_true, "y_pred": y_pred})
    labels, rows = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, sub in frame.groupby("group", sort=True):
            t = sub["y_true"].to_numpy()
            p = sub["y_pred"].to_numpy()
            tn, fp, fn, tp = confusion_matrix(t, p, labels=[0, 1]).ravel()
            values = {
                "tpr": recall_score(t, p, zero_division=np.nan),
                "fpr": _rate(fp, fp + tn),
                "ppv": precision_score(t, p, zero_division=np.nan),
                "npv": precision_score(t, p, pos_label=0, zero_division=np.nan),
                "tnr": recall_score(t, p, pos_label=0, zero_division=np.nan),
                "fnr": _rate(fn, fn + tp),
                "acc": accuracy_score(t, p),
                "f1": f1_score(t, p, zero_division=np.nan),
                "mcc": matthews_corrcoef(t, p),
                "ppr": (tp + fp) / len(t),
            }
            labels.append(label)
            rows.append([values[m] for m in METRICS])
    return np.asarray(labels), np.asarray(rows, dtype=np.float64)


def fairlearn_available():
    """Whether ``fairlearn.metrics.MetricFrame`` can be imported."""
    try:
        from fairlearn.metrics import MetricFrame  # noqa: F401
    except ImportError:
        return False
    return True


def fairlearn_baseline(y_true, y_pred, groups):
    """fairlearn's ``MetricFrame`` with the 10 metrics as callables."""
    from fairlearn.metrics import (
        MetricFrame,
        false_negative_rate,
        false_positive_rate,
        selection_rate,
        true_negative_rate,
        true_positive_rate,
    )
    from sklearn.metrics import (
        accuracy_score,
        f1_score,
        matthews_corrcoef,
        precision_score,
    )

    callables = {
        "tpr": true_positive_rate,
        "fpr": false_positive_rate,
        "ppv": partial(precision_score, zero_division=np.nan),
        "npv": partial(precision_score, pos_label=0, zero_division=np.nan),
        "tnr": true_negative_rate,
        "fnr": false_negative_rate,
        "acc": accuracy_score,
        "f1": partial(f1_score, zero_division=np.nan),
        "mcc": matthews_corrcoef,
        "ppr": selection_rate,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = MetricFrame(
            metrics=callables, y_true=y_true, y_pred=y_pred, sensitive_features=groups
        )
        by_group = frame.by_group
    return by_group.index.to_numpy(), by_group[list(METRICS)].to_numpy(dtype=np.float64)


def make_scores(n_rows, n_groups, seed=SEED):
    """Seeded labels, scores (higher for positives) and group ids."""
    y_true, _, groups = make_data(n_rows, n_groups, seed)
    rng = np.random.default_rng(seed + 1)
    y_score = np.clip(0.25 * y_true + rng.uniform(0.0, 0.75, n_rows), 0.0, 1.0)
    return y_true, y_score, groups


def ours_callable(y_true, y_score, groups):
    """``GroupMetricFrame`` with ``roc_auc_score``: per-group values and overall."""
    _common.ensure_package_importable()
    from sklearn.metrics import roc_auc_score

    from sklearn_smallfair.metrics import GroupMetricFrame

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # group 0 has one class: no AUC
        frame = GroupMetricFrame(
            metrics={"auc": roc_auc_score},
            y_true=y_true,
            y_score=y_score,
            sensitive_features=groups,
        )
    return (
        frame.by_group.index.to_numpy(),
        frame.by_group["auc"].to_numpy(),
        float(frame.overall["auc"]),
    )


def pandas_callable_baseline(y_true, y_score, groups):
    """``DataFrame.groupby`` and ``roc_auc_score`` on each group."""
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    frame = pd.DataFrame({"group": groups, "y_true": y_true, "y_score": y_score})
    labels, values = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, sub in frame.groupby("group", sort=True):
            labels.append(label)
            values.append(
                roc_auc_score(sub["y_true"].to_numpy(), sub["y_score"].to_numpy())
            )
        overall = roc_auc_score(y_true, y_score)
    return np.asarray(labels), np.asarray(values, dtype=np.float64), float(overall)


def fairlearn_callable_baseline(y_true, y_score, groups):
    """fairlearn's ``MetricFrame`` with ``roc_auc_score``."""
    from fairlearn.metrics import MetricFrame
    from sklearn.metrics import roc_auc_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = MetricFrame(
            metrics={"auc": roc_auc_score},
            y_true=y_true,
            y_pred=y_score,
            sensitive_features=groups,
        )
        by_group = frame.by_group
    return (
        by_group.index.to_numpy(),
        by_group["auc"].to_numpy(dtype=np.float64),
        float(frame.overall["auc"]),
    )


def compare_callable(name, ours_result, base_result):
    """Equal labels, equal values where both are defined, equal overall value."""
    labels, values, overall = ours_result
    base_labels, base_values, base_overall = base_result
    _common.check(np.array_equal(labels, base_labels), f"{name}: group labels differ")
    defined = np.isfinite(values)
    _common.check(defined.sum() >= len(values) - 1, f"{name}: too few defined values")
    _common.check(
        np.allclose(values[defined], base_values[defined], rtol=1e-12, atol=0),
        f"{name}: per-group AUCs differ from ours",
    )
    _common.check(
        np.isclose(overall, base_overall, rtol=1e-12), f"{name}: overall AUC differs"
    )
    shown = ", ".join(
        "NaN" if np.isnan(v) else f"{v:g}" for v in np.unique(base_values[~defined])
    )
    note = f"{int(defined.sum())} per-group AUCs and the overall AUC equal"
    if (~defined).any():
        note += f"; at our {int((~defined).sum())} undefined AUC it returns {shown}"
    return note


def run_callable(quick, log):
    """The callable-metric rows: ours against pandas (and fairlearn)."""
    cfg = CALLABLE_QUICK if quick else CALLABLE_FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    log(
        f"[{NAME}] callable roc_auc_score per group: {n_rows:,} rows, {n_groups} groups"
    )
    data = make_scores(n_rows, n_groups)
    baselines = [("pandas groupby + roc_auc_score", pandas_callable_baseline)]
    if fairlearn_available():
        baselines.append(("fairlearn MetricFrame", fairlearn_callable_baseline))
    ours_result = ours_callable(*data)  # warms imports and caches
    rows = []
    for label, func in baselines:
        res = _common.interleaved(
            lambda func=func: func(*data),
            lambda: ours_callable(*data),
            cfg["repeats"],
        )
        note = compare_callable(label, ours_result, res["baseline_result"])
        log(
            f"[{NAME}] {label}: {res['baseline_s']:.3f} s against ours "
            f"{res['ours_s']:.3f} s (median of {cfg['repeats']} interleaved pairs)"
        )
        rows.append(
            _common.make_row(
                f"GroupMetricFrame roc_auc_score {n_rows:,} rows x {n_groups} groups",
                res["ours_s"],
                label,
                res["baseline_s"],
                ratio=res["ratio"],
                target=f">= {TARGET_CALLABLE_RATIO:g}x",
                status="PASS" if res["ratio"] >= TARGET_CALLABLE_RATIO else "MISS",
                notes=note,
                load=res["load"],
                pair_ratios=res["ratios"],
                n_rows=n_rows,
                n_groups=n_groups,
                metrics=["roc_auc_score"],
            )
        )
    return rows


def compare(name, ours_result, base_result):
    """Assert the baseline equals ours wherever ours is defined; describe the rest.

    Returns a note on what the baseline reports where our value is undefined.
    """
    labels, values = ours_result
    base_labels, base_values = base_result
    _common.check(
        np.array_equal(labels, base_labels),
        f"{name}: group labels differ from ours",
    )
    _common.check(base_values.shape == values.shape, f"{name}: shape differs")
    defined = np.isfinite(values)
    _common.check(
        np.isfinite(base_values[defined]).all(),
        f"{name}: undefined where ours is defined",
    )
    close = np.isclose(base_values, values, rtol=1e-9, atol=1e-12)
    bad = defined & ~close
    if bad.any():
        g, m = np.argwhere(bad)[0]
        raise _common.CorrectnessError(
            f"{name}: {int(bad.sum())} value(s) differ from ours, e.g. group "
            f"{labels[g]!r} {METRICS[m]}: baseline {base_values[g, m]!r}, ours "
            f"{values[g, m]!r}"
        )
    _common.check(
        defined.sum() > 0.9 * defined.size, "too few defined values to compare"
    )
    # What the baseline reports where the metric is undefined (0/0).
    parts = []
    for j, metric in enumerate(METRICS):
        undefined = ~defined[:, j]
        if undefined.any():
            got = np.unique(np.round(base_values[undefined, j], 12))
            shown = ", ".join("NaN" if np.isnan(v) else f"{v:g}" for v in got)
            parts.append(f"{metric} -> {shown}")
    n_undef = int((~defined).sum())
    note = f"{int(defined.sum())} defined values equal (rtol 1e-9)"
    if n_undef:
        note += f"; at our {n_undef} undefined values it returns " + ", ".join(parts)
    return note


def _subset(data, n_rows):
    """The first ``n_rows`` rows of ``data`` (all of it when ``n_rows`` is None)."""
    if n_rows is None or n_rows >= len(data[0]):
        return data
    return tuple(a[:n_rows] for a in data)


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    n_rows, n_groups = cfg["n_rows"], cfg["n_groups"]
    log(
        f"[{NAME}] {n_rows:,} rows, {n_groups:,} groups, {len(METRICS)} metrics "
        f"({', '.join(METRICS)})"
    )
    data = make_data(n_rows, n_groups)

    # (label, function, rows it is timed and checked on, interleaved pairs)
    baselines = [("pandas groupby + sklearn", sklearn_baseline, None, cfg["pairs"])]
    skipped = []
    if fairlearn_available():
        baselines.append(
            ("fairlearn MetricFrame", fairlearn_baseline, cfg["fairlearn_rows"], 1)
        )
    else:
        skipped.append("fairlearn MetricFrame")

    ours_result = ours(*data)  # warms imports and caches
    ci_note = check_intervals(ours_with_intervals(*data), ours_result)
    params = {"n_groups": n_groups, "metrics": list(METRICS)}
    rows = []
    for label, func, rows_used, pairs in baselines:
        sub = _subset(data, rows_used)
        n_sub = len(sub[0])
        log(f"[{NAME}] {label} against ours on {n_sub:,} rows ({pairs} pair(s)) ...")
        res = _common.interleaved(
            lambda func=func, sub=sub: func(*sub), lambda sub=sub: ours(*sub), pairs
        )
        # every value of the timed baseline call is checked against ours
        reference = ours_result if sub is data else ours(*sub)
        note = compare(label, reference, res["baseline_result"])
        if sub is not data:
            note += (
                f"; timed and checked on the first {n_sub:,} rows (the full "
                f"{n_rows:,} would take it about {n_rows / n_sub:.0f}x as long)"
            )
        log(
            f"[{NAME}] {label}: {res['baseline_s']:.3f} s, ours {res['ours_s']:.3f} s,"
            f" ratio {res['ratio']:.1f}"
        )
        rows.append(
            _common.make_row(
                f"group_metrics {n_sub:,} rows x {n_groups:,} groups",
                res["ours_s"],
                label,
                res["baseline_s"],
                ratio=res["ratio"],
                target=f">= {TARGET_RATIO:g}x",
                status="PASS" if res["ratio"] >= TARGET_RATIO else "MISS",
                notes=note,
                load=res["load"],
                pair_ratios=res["ratios"],
                n_rows=n_sub,
                **params,
            )
        )
    res = _common.interleaved(
        lambda: ours(*data), lambda: ours_with_intervals(*data), cfg["repeats_ours"]
    )
    slowdown = 1.0 / res["ratio"]
    log(f"[{NAME}] with intervals: {res['ours_s']:.3f} s, slowdown {slowdown:.2f}x")
    rows.append(
        _common.make_row(
            f"group_metrics confidence_level=0.95 auto {n_rows:,} rows x "
            f"{n_groups:,} groups",
            res["ours_s"],
            "same call without intervals",
            res["baseline_s"],
            ratio=res["ratio"],
            target=f"slowdown <= {TARGET_CI_SLOWDOWN:g}x",
            # the target is set for the full size (10,000 rows per group); in
            # --quick the groups are 5x smaller, so the draws weigh 5x more
            status="INFO"
            if quick
            else ("PASS" if slowdown <= TARGET_CI_SLOWDOWN else "MISS"),
            notes=f"slowdown {slowdown:.2f}x ({ci_note}; n_resamples=2000)",
            load=res["load"],
            pair_ratios=res["ratios"],
            slowdown=slowdown,
            n_rows=n_rows,
            **params,
        )
    )
    rows.extend(run_callable(quick, log))
    for label in skipped:
        rows.append(
            _common.make_row(
                f"group_metrics {cfg['fairlearn_rows']:,} rows x {n_groups:,} groups",
                None,
                label,
                None,
                target=f">= {TARGET_RATIO:g}x",
                status="SKIP",
                notes="fairlearn is not importable; install it to run this baseline",
                n_rows=cfg["fairlearn_rows"],
                **params,
            )
        )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_group_metrics.py [--quick]``."""
    return _common.script_main(
        run, __doc__, "200,000 rows and 100 groups instead of 10M and 1,000", argv
    )


if __name__ == "__main__":
    sys.exit(main())
