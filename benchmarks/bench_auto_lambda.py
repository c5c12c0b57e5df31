"""Validation and cost of ``CrossPriorSmoothing(lam="auto")``.

1. **Validation** on the ten published groups (two COMPAS, eight Folktables), with
   the exact downsampling engine and the published protocol (multinomial subgroups
   of ``n = 5 .. 150``, 19 single-group metrics): raw metric, CPS with the fixed
   ``lam`` of 5, 10 and 20, and CPS with ``lam="auto"``. ``lam="auto"`` is fitted
   once per dataset on its whole groups and their leave-one-group-out references
   (what an auditor of that dataset has) before the experiment, then fixed. The
   MSE is pooled over the ten groups with equal weights, per (metric, n) cell.
   Criterion: pooled over groups, metrics and sizes, the MSE of ``"auto"`` is at
   most 1.05 times that of the best fixed ``lam`` chosen in hindsight, and it is
   below the raw metric's in every pooled (metric, n) cell. Also printed: the
   stricter comparison with the best fixed ``lam`` of each cell, per metric, the
   fitted ``lam_``, and per group where ``"auto"`` loses to the raw metric or to
   the best fixed ``lam`` by more than 5 %.
2. **Speed**: ``group_metrics`` with 10 metrics and 1,000 groups (the data of
   ``bench_group_metrics.py``), ``smoothing=CrossPriorSmoothing("auto")`` against
   ``CrossPriorSmoothing(10)``, both timed in the same run (best of 5). Target:
   ``"auto"`` adds under 10 %. Rows at 10,000,000 rows (the full mode of
   ``bench_group_metrics.py``), 1,000,000 and 100,000 rows; the fit alone is
   timed too.

The validation enumerates about 22 million matrices per group: about 75 s with
``--n-jobs 2`` on 2 cores (``--quick``: sizes 5, 10, ..., 150 and the speed rows
at 1,000,000 and 100,000 rows, about 30 s). Not part of ``run.py``.

Measured (2 cores): ``lam_`` 19.24 (COMPAS) and 23.81 (Folktables); pooled MSE
0.995 times that of the best fixed ``lam`` (20), below the raw metric's in all
2,774 cells (worst ratio 0.987); 580 cells (prevalence, positive prediction rate
and complements) more than 5 % above the best fixed ``lam`` of the cell (worst
1.129). The fit takes about 3 ms for 1,000 groups: +9 % on a call of 1,000,000
rows (37 ms), under 1 % at 10,000,000 rows, +80 % at 100,000 rows (6 ms).

Run ``python benchmarks/bench_auto_lambda.py [--quick] [--n-jobs N]
[--speed-only]``.
"""

import argparse
import sys
import time
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common, bench_group_metrics
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common
    import bench_group_metrics

NAME = "auto_lambda"
FIXED = (5, 10, 20)
#: Largest ratio MSE(auto) / MSE(best fixed lam) allowed in a pooled cell.
TOLERANCE = 1.05
#: Largest extra time of ``"auto"`` in ``group_metrics`` (fraction).
TARGET_SLOWDOWN = 0.10
FULL = {"sizes": range(5, 151), "speed_rows": (10_000_000, 1_000_000, 100_000)}
QUICK = {"sizes": range(5, 151, 5), "speed_rows": (1_000_000, 100_000)}
N_GROUPS = 1_000


# --------------------------------------------------------------------------
# 1. Validation
# --------------------------------------------------------------------------


def experiment(sizes, n_jobs=None):
    """The exact downsampling table of the published groups, and ``lam_`` per
    dataset. ``"auto"`` is fitted per dataset by the engine itself."""
    import pandas as pd

    _common.ensure_package_importable()
    from sklearn_smallfair.datasets import load_published_groups
    from sklearn_smallfair.metrics import metric_names
    from sklearn_smallfair.model_selection import downsampling_experiment
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    estimators = {
        "raw": None,
        **{f"cps_{lam}": CrossPriorSmoothing(lam) for lam in FIXED},
        "auto": CrossPriorSmoothing("auto"),
    }
    frames, lams = [], {}
    for dataset in ("COMPAS", "Folktables"):
        counts, reference = load_published_groups(dataset)
        lams[dataset] = CrossPriorSmoothing("auto").fit(counts, reference).lam_
        frames.append(
            downsampling_experiment(
                counts=counts,
                reference=reference,
                metrics=metric_names(n_groups=1),
                estimators=estimators,
                sizes=sizes,
                method="exact",
                n_jobs=n_jobs,
            )
        )
    return pd.concat(frames, ignore_index=True), lams


def pooled_table(res):
    """Pooled MSE per (metric, n) and estimator (each group weighs 1/10)."""
    pooled = res.groupby(["metric", "n", "estimator"])["mse"].mean()
    pooled = pooled.unstack("estimator")
    fixed = [f"cps_{lam}" for lam in FIXED]
    pooled["best_fixed"] = pooled[fixed].min(axis=1)
    pooled["best_lam"] = pooled[fixed].idxmin(axis=1).str.removeprefix("cps_")
    pooled["vs_best"] = pooled["auto"] / pooled["best_fixed"]
    pooled["vs_raw"] = pooled["auto"] / pooled["raw"]
    return pooled


def criterion(pooled):
    """Per metric: the worst cells against the best fixed lam and the raw metric."""
    import pandas as pd

    rows = {}
    for metric, block in pooled.groupby(level="metric", sort=False):
        block = block.droplevel("metric")
        worst = block["vs_best"].idxmax()
        totals = block[[*(f"cps_{lam}" for lam in FIXED), "auto"]].sum()
        rows[metric] = {
            "auto/best lam, all n": totals["auto"] / totals.drop("auto").min(),
            "raw n=5": block.loc[block.index.min(), "raw"],
            "auto n=5": block.loc[block.index.min(), "auto"],
            "auto n=150": block.loc[block.index.max(), "auto"],
            "max auto/best": block["vs_best"].max(),
            "at n": worst,
            "best lam there": block.loc[worst, "best_lam"],
            "max auto/raw": block["vs_raw"].max(),
        }
    table = pd.DataFrame(rows).T
    table.index.name = "metric"
    return table


def single_lam_totals(pooled):
    """Pooled MSE summed over all cells: auto against each fixed lam (one lam
    chosen in hindsight for everything)."""
    columns = ["raw", *(f"cps_{lam}" for lam in FIXED), "auto"]
    return pooled[columns].sum()


def group_losses(res):
    """Per (group, metric): sizes where auto loses to the raw metric, and where it
    is more than 5 % worse than the group's best fixed lam at that size."""
    import pandas as pd

    wide = res.pivot_table(
        index=["group", "metric", "n"], columns="estimator", values="mse"
    )
    fixed = wide[[f"cps_{lam}" for lam in FIXED]]
    loses_raw = wide["auto"] > wide["raw"]
    loses_best = wide["auto"] > TOLERANCE * fixed.min(axis=1)
    ratio_raw = wide["auto"] / wide["raw"]

    def sizes(mask):
        ns = mask[mask].index.get_level_values("n")
        return f"{ns.min()}-{ns.max()}" if len(ns) else ""

    rows = []
    for (group, metric), mask in loses_raw.groupby(level=["group", "metric"]):
        best_mask = loses_best.loc[(group, metric)]
        if not mask.any() and not best_mask.any():
            continue
        ratio = ratio_raw.loc[(group, metric)]
        rows.append(
            {
                "group": group,
                "metric": metric,
                "sizes lost to raw": sizes(mask.droplevel(["group", "metric"])),
                "n lost to raw": int(mask.sum()),
                "worst auto/raw": float(ratio.max()),
                "at n": int(ratio.idxmax()),
                "n > 1.05 best fixed": int(best_mask.sum()),
            }
        )
    return pd.DataFrame(rows)


def validate(sizes, n_jobs=None, log=print):
    start = time.perf_counter()
    res, lams = experiment(sizes, n_jobs=n_jobs)
    elapsed = time.perf_counter() - start
    pooled = pooled_table(res)
    per_metric = criterion(pooled)
    ok_best = bool((pooled["vs_best"] <= TOLERANCE).all())
    ok_raw = bool((pooled["vs_raw"] < 1).all())
    log(
        "lam_ fitted on the whole groups: "
        + ", ".join(f"{d} {lam:.2f}" for d, lam in lams.items())
    )
    log(
        f"{len(res):,} rows ({res['group'].nunique()} groups, "
        f"{res['metric'].nunique()} metrics, {res['n'].nunique()} sizes) in "
        f"{elapsed:.0f} s"
    )
    log("\nPooled MSE over the ten groups, worst cells per metric:")
    log(per_metric.to_string(float_format=lambda x: f"{x:.4f}"))
    totals = single_lam_totals(pooled)
    log("\nPooled MSE summed over all (metric, n) cells:")
    log(totals.to_string(float_format=lambda x: f"{x:.4f}"))
    best_single = totals.drop(["raw", "auto"]).min()
    ok_total = bool(totals["auto"] <= TOLERANCE * best_single)
    log(
        f"\nCriterion: pooled over groups, metrics and sizes, auto <= {TOLERANCE} x "
        f"the best single fixed lam ({totals.drop(['raw', 'auto']).idxmin()}): "
        f"{ok_total} (ratio {totals['auto'] / best_single:.3f}); auto < raw in "
        f"every pooled (metric, n) cell: {ok_raw} (worst ratio "
        f"{pooled['vs_raw'].max():.3f})."
    )
    log(
        f"Stricter: auto <= {TOLERANCE} x best fixed lam in every pooled cell: "
        f"{ok_best} (worst {pooled['vs_best'].max():.3f}, in "
        f"{int((pooled['vs_best'] > TOLERANCE).sum())} cells); "
        f"cells where auto beats the best fixed lam: "
        f"{int((pooled['vs_best'] <= 1).sum())} of {len(pooled)}"
    )
    losses = group_losses(res)
    log("\nPer group: where auto loses (to raw, or by > 5 % to the best fixed lam):")
    log(
        losses.to_string(index=False, float_format=lambda x: f"{x:.3f}")
        if len(losses)
        else "nowhere"
    )
    return {
        "lams": lams,
        "ok_total": ok_total,
        "total_vs_best": float(totals["auto"] / best_single),
        "ok_best": ok_best,
        "ok_raw": ok_raw,
        "worst_vs_best": float(pooled["vs_best"].max()),
        "worst_vs_raw": float(pooled["vs_raw"].max()),
        "seconds": elapsed,
    }


# --------------------------------------------------------------------------
# 2. Speed
# --------------------------------------------------------------------------


def speed(n_rows, repeats=5, log=print):
    """``group_metrics`` with ``"auto"`` against ``lam=10``, same data and run."""
    _common.ensure_package_importable()
    from sklearn_smallfair import confusion_counts, reference_counts
    from sklearn_smallfair.metrics import group_metrics
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    y_true, y_pred, groups = bench_group_metrics.make_data(n_rows, N_GROUPS)

    def call(lam):
        return group_metrics(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics=bench_group_metrics.METRICS,
            zero_division=np.nan,
            smoothing=CrossPriorSmoothing(lam),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined raw metrics of groups 0 and 1
        fixed_table, auto_table = call(10), call("auto")
        _common.check(
            fixed_table.shape == auto_table.shape, "auto: table of another shape"
        )
        _, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
        refs = reference_counts(counts)
        lam = CrossPriorSmoothing("auto").fit(counts, refs).lam_
        expected = CrossPriorSmoothing(lam).transform(counts, refs)
        smoothed = CrossPriorSmoothing("auto").transform(counts, refs)
        _common.check(
            np.allclose(smoothed, expected, rtol=1e-12), "auto: not CPS with lam_"
        )
        # interleaved repeats: both calls see the same machine state
        t_fixed, t_auto = [], []
        for _ in range(repeats):
            t_fixed.append(_common.best_of(lambda: call(10), 1)[0])
            t_auto.append(_common.best_of(lambda: call("auto"), 1)[0])
        t_fit = _common.best_of(
            lambda: CrossPriorSmoothing("auto").fit(counts, refs), repeats
        )[0]
    ours, base = min(t_auto), min(t_fixed)
    extra = ours / base - 1.0
    status = "PASS" if extra < TARGET_SLOWDOWN else "MISS"
    log(
        f"{n_rows:,} rows, {N_GROUPS:,} groups: lam=10 {base * 1e3:.1f} ms, "
        f"'auto' {ours * 1e3:.1f} ms (+{100 * extra:.1f} %, lam_ = {lam:.2f}); "
        f"the fit alone {t_fit * 1e3:.2f} ms ({100 * t_fit / base:.1f} %) {status}"
    )
    return _common.make_row(
        f"auto lambda: group_metrics, {N_GROUPS:,} groups, {n_rows:,} rows",
        ours,
        "CrossPriorSmoothing(10)",
        base,
        target=f"auto adds < {100 * TARGET_SLOWDOWN:.0f} %",
        status=status,
        notes=(
            f"auto adds {100 * extra:.1f} % (fit alone {t_fit * 1e3:.2f} ms, "
            f"{100 * t_fit / base:.1f} % of the call)"
        ),
        extra=extra,
        fit_s=t_fit,
    )


def run(quick=False, log=print, n_jobs=None, validation=True):
    """Speed rows, then (unless ``validation=False``) the validation table."""
    config = QUICK if quick else FULL
    rows = [speed(n, log=log) for n in config["speed_rows"]]
    if validation:
        result = validate(config["sizes"], n_jobs=n_jobs, log=log)
        rows.append(
            _common.make_row(
                "auto lambda: published groups, exact downsampling",
                result["seconds"],
                "best fixed lam in {5, 10, 20}",
                None,
                target=f"pooled <= {TOLERANCE} x best lam; < raw in every cell",
                status="PASS" if result["ok_total"] and result["ok_raw"] else "MISS",
                notes=(
                    f"pooled auto/best lam {result['total_vs_best']:.3f}; per cell: "
                    f"worst auto/best fixed {result['worst_vs_best']:.3f}, worst "
                    f"auto/raw {result['worst_vs_raw']:.3f}; lam_ "
                    + ", ".join(f"{d} {v:.2f}" for d, v in result["lams"].items())
                ),
            )
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="sizes 5, 10, ..., 150; fewer speed rows"
    )
    parser.add_argument("--n-jobs", type=int, default=None, help="joblib jobs")
    parser.add_argument("--speed-only", action="store_true", help="skip the validation")
    args = parser.parse_args(argv)
    try:
        rows = run(quick=args.quick, n_jobs=args.n_jobs, validation=not args.speed_only)
    except _common.CorrectnessError as exc:
        print(f"CORRECTNESS CHECK FAILED: {exc}", file=sys.stderr)
        return 1
    print()
    print(_common.format_table(rows))
    _common.print_notes(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
