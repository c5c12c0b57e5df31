"""Coverage study: how often each interval method covers the true value, and how wide.

For each group size n in 5, 10, 20, 50, 150, each true confusion-matrix law (cell
probabilities of TP, FN, FP, TN) and each metric, ``--groups`` groups of size n
(20,000 by default) are drawn at once with one ``multinomial`` call. Their
intervals come from the package itself:
``group_metrics(counts=..., confidence_level=0.95, interval_method=method)``. A
metric's interval depends on a matrix only through the sums of the metric's cell
blocks (the registry's ``Metric.blocks``: TPR through TP, FN and FP + TN), so the
groups are collapsed to their block sums and each distinct block sum is scored once (its
interval, or its distribution for the random methods, is that of every group with
those sums). Coverage is the fraction of groups whose interval contains the law's
true value, among the groups where the metric is defined (a group of 5 with a
prevalence of 0.05 has no positive, so no TPR, 77 % of the time); the Monte Carlo
standard error of a coverage near 95 % over 20,000 groups is 0.15 points.

A second study measures the intervals of disparities: a group of size n against
an independent reference of size 4n, drawn from the same law (every gap is 0) or
from a law with a TPR 0.15 higher, for the difference and the ratio of TPRs and
the equalized-odds difference (``disparity_intervals``); the equalized-odds row
also reports the naive percentile interval of the drawn ``max(|TPR gap|, |FPR
gap|)``, computed here from the posterior draws.

fairlearn's ``MetricFrame`` bootstrap (``n_boot=200``, which resamples the whole
data set: the group of n plus 20n other rows of the same law) is a further column,
for the TPR and the accuracy, on ``FAIRLEARN_GROUPS`` groups per cell (one
``MetricFrame`` per simulated group); it is run in full mode only (minutes per
cell), when fairlearn is importable, and is otherwise skipped with a note.

Run ``python benchmarks/bench_coverage.py [--quick] [--groups N] [--json PATH]
[--plot PATH] [--rst]``: ``--quick`` uses 2,000 groups, sizes 5, 10, 20 and 50 and
three laws; ``--rst`` prints the tables as reStructuredText for the user guide.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "coverage"
LEVEL = 0.95
SIZES = (5, 10, 20, 50, 150)
QUICK_SIZES = (5, 10, 20, 50)
#: True laws as (prevalence, TPR, FPR).
LAWS = {
    "balanced": (0.5, 0.8, 0.2),
    "moderate": (0.3, 0.6, 0.1),
    "prevalence 0.05": (0.05, 0.7, 0.1),
    "TPR 0.95": (0.4, 0.95, 0.3),
    "chance (MCC 0)": (0.2, 0.5, 0.5),
}
QUICK_LAWS = ("balanced", "prevalence 0.05", "TPR 0.95")
CLOSED = ("clopper-pearson", "wilson", "jeffreys")
#: Every method of the tables; "auto" (the default) is run for MCC only, where it
#: is the projection interval (for the proportion metrics it is Clopper-Pearson).
METHODS = (*CLOSED, "posterior", "bootstrap", "auto")
PROPORTION_METHODS = (*CLOSED, "posterior", "bootstrap")
#: Metrics studied and the methods that apply to each.
METRICS = {
    "acc": PROPORTION_METHODS,
    "tpr": PROPORTION_METHODS,
    "fpr": PROPORTION_METHODS,
    "ppv": PROPORTION_METHODS,
    "f1": PROPORTION_METHODS,
    "mcc": ("auto", "posterior", "bootstrap"),
}
N_GROUPS = 20_000
QUICK_GROUPS = 2_000
SEED = 20261124
DISPARITY_SIZES = (10, 20, 50)
DISPARITY_GROUPS = 20_000
DISPARITY_DRAWN_GROUPS = 4_000
#: Simulated groups per cell for fairlearn's MetricFrame (one call per group).
FAIRLEARN_GROUPS = 500


def collapse(cms, metric):
    """Each matrix reduced to its block sums (in the first cell of each block)."""
    out = np.zeros_like(cms)
    for block in metric.blocks:
        out[:, block[0]] = cms[:, list(block)].sum(axis=1)
    return out


def cell_coverage(metric_name, method, law, n, n_groups, seed):
    """Coverage, mean width and defined fraction of one (law, n, metric, method)."""
    from sklearn_smallfair.metrics import compute_metric, get_metric, group_metrics

    metric = get_metric(metric_name)
    p = _common.cell_probabilities(*LAWS[law])
    truth = float(compute_metric(metric, p))
    rng = np.random.default_rng([seed, n, list(LAWS).index(law)])
    cms = rng.multinomial(n, p, size=n_groups)
    unique, inverse = np.unique(collapse(cms, metric), axis=0, return_inverse=True)
    start = time.perf_counter()
    table = group_metrics(
        counts=unique,
        metrics=metric_name,
        confidence_level=LEVEL,
        interval_method=method,
        zero_division=np.nan,
        random_state=seed,
    )
    seconds = time.perf_counter() - start
    inverse = inverse.ravel()
    low = table[f"{metric_name}_low"].to_numpy()[inverse]
    high = table[f"{metric_name}_high"].to_numpy()[inverse]
    defined = ~table[f"{metric_name}_undefined"].to_numpy()[inverse]
    has_interval = defined & ~np.isnan(low)
    covered = (low <= truth + 1e-12) & (truth - 1e-12 <= high)
    n_def = int(has_interval.sum())
    return {
        "law": law,
        "n": n,
        "metric": metric_name,
        "method": method,
        "truth": truth,
        "coverage": float(covered[has_interval].mean()) if n_def else float("nan"),
        "mean_width": float((high - low)[has_interval].mean())
        if n_def
        else float("nan"),
        "n_defined": n_def,
        "defined_fraction": float(defined.mean()),
        "n_groups": n_groups,
        "n_distinct": int(unique.shape[0]),
        "seconds": seconds,
    }


def fairlearn_available():
    """Whether ``fairlearn.metrics.MetricFrame`` can be imported."""
    try:
        from fairlearn.metrics import MetricFrame  # noqa: F401
    except ImportError:
        return False
    return True


def fairlearn_cell(metric_name, law, n, n_groups, seed, n_boot=200):
    """Coverage of fairlearn's MetricFrame bootstrap for one group of size n among
    a population, the way MetricFrame resamples: the whole data set at once."""
    from fairlearn.metrics import MetricFrame, true_positive_rate
    from sklearn.metrics import accuracy_score

    funcs = {"tpr": true_positive_rate, "acc": accuracy_score}
    if metric_name not in funcs:
        return None
    p = _common.cell_probabilities(*LAWS[law])
    truth = p[0] / (p[0] + p[1]) if metric_name == "tpr" else p[0] + p[3]
    rng = np.random.default_rng([seed, n, 7])
    covered = []
    for _ in range(n_groups):
        cells = rng.multinomial(n, p)
        y_true = np.repeat([1, 1, 0, 0], cells)
        y_pred = np.repeat([1, 0, 1, 0], cells)
        big = rng.multinomial(20 * n, p)
        y_true = np.concatenate([y_true, np.repeat([1, 1, 0, 0], big)])
        y_pred = np.concatenate([y_pred, np.repeat([1, 0, 1, 0], big)])
        groups = np.r_[np.zeros(n, int), np.ones(20 * n, int)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = MetricFrame(
                metrics=funcs[metric_name],
                y_true=y_true,
                y_pred=y_pred,
                sensitive_features=groups,
                n_boot=n_boot,
                ci_quantiles=[(1 - LEVEL) / 2, (1 + LEVEL) / 2],
                random_state=int(rng.integers(2**31)),
            )
            low, high = (q.loc[0] for q in frame.by_group_ci)
        covered.append(low <= truth <= high)
    return float(np.mean(covered))


def disparity_cells(n, same_law, n_groups, n_drawn, seed):
    """Coverage of TPR difference and ratio intervals and of the equalized-odds
    difference, for a group of n against an independent reference of 4n."""
    from sklearn_smallfair.metrics import disparity_intervals

    law = LAWS["balanced"]
    ref_law = law if same_law else (law[0], law[1] - 0.15, law[2])
    p, q = _common.cell_probabilities(*law), _common.cell_probabilities(*ref_law)
    truth = {
        "difference": (p[0] / (p[0] + p[1])) - (q[0] / (q[0] + q[1])),
        "ratio": (p[0] / (p[0] + p[1])) / (q[0] / (q[0] + q[1])),
        "eod": max(
            abs(p[0] / (p[0] + p[1]) - q[0] / (q[0] + q[1])),
            abs(p[2] / (p[2] + p[3]) - q[2] / (q[2] + q[3])),
        ),
    }
    rng = np.random.default_rng([seed, n, int(same_law)])
    rows = []
    for method, size in (
        ("newcombe-katz", n_groups),
        ("posterior", n_drawn),
        ("bootstrap", n_drawn),
    ):
        groups = rng.multinomial(n, p, size=size)
        refs = rng.multinomial(4 * n, q, size=size)
        table = disparity_intervals(
            counts=groups,
            reference=refs,
            metrics=["tpr", "equalized_odds"],
            interval_method=method,
            random_state=seed,
        )
        tpr = table.xs("tpr", level="metric")
        eod = table.xs("equalized_odds", level="metric")
        for what, frame, lo, hi, t in (
            (
                "TPR difference",
                tpr,
                "difference_low",
                "difference_high",
                "difference",
            ),
            ("TPR ratio", tpr, "ratio_low", "ratio_high", "ratio"),
            ("equalized odds", eod, "difference_low", "difference_high", "eod"),
        ):
            low, high = frame[lo].to_numpy(), frame[hi].to_numpy()
            ok = ~np.isnan(low)
            cov = (low <= truth[t] + 1e-12) & (truth[t] - 1e-12 <= high)
            rows.append(
                {
                    "n": n,
                    "reference_n": 4 * n,
                    "same_law": same_law,
                    "quantity": what,
                    "method": method,
                    "coverage": float(cov[ok].mean()),
                    "mean_width": float((high - low)[ok].mean()),
                    "n_defined": int(ok.sum()),
                }
            )
        if method == "posterior":
            rows.append(_naive_eod(groups, refs, truth["eod"], n, same_law, seed))
    return rows


def _naive_eod(groups, refs, truth, n, same_law, seed, n_resamples=2000):
    """Percentile interval of posterior draws of max(|TPR gap|, |FPR gap|)."""
    rng = np.random.default_rng([seed, n, 99])
    keep = (groups[:, 0] + groups[:, 1] > 0) & (groups[:, 2] + groups[:, 3] > 0)
    covered, widths = [], []
    for start in range(0, int(keep.sum()), 500):
        g = groups[keep][start : start + 500]
        r = refs[keep][start : start + 500]
        a = rng.standard_gamma(g[:, None, :] + 0.5, size=(len(g), n_resamples, 4))
        b = rng.standard_gamma(r[:, None, :] + 0.5, size=(len(r), n_resamples, 4))
        gap_t = a[..., 0] / (a[..., 0] + a[..., 1]) - b[..., 0] / (
            b[..., 0] + b[..., 1]
        )
        gap_f = a[..., 2] / (a[..., 2] + a[..., 3]) - b[..., 2] / (
            b[..., 2] + b[..., 3]
        )
        eod = np.maximum(np.abs(gap_t), np.abs(gap_f))
        lo, hi = np.quantile(eod, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=1)
        covered.append((lo <= truth) & (truth <= hi))
        widths.append(hi - lo)
    covered, widths = np.concatenate(covered), np.concatenate(widths)
    return {
        "n": n,
        "reference_n": 4 * n,
        "same_law": same_law,
        "quantity": "equalized odds",
        "method": "naive posterior percentile",
        "coverage": float(covered.mean()),
        "mean_width": float(widths.mean()),
        "n_defined": int(covered.size),
    }


def run_study(quick=False, *, n_groups=None, log=print, disparities=True):
    """All cells of the study; returns a dict with ``cells`` and ``disparities``."""
    _common.ensure_package_importable()
    sizes = QUICK_SIZES if quick else SIZES
    laws = QUICK_LAWS if quick else tuple(LAWS)
    n_groups = n_groups or (QUICK_GROUPS if quick else N_GROUPS)
    cells = []
    start = time.perf_counter()
    for n in sizes:
        for law in laws:
            for metric, methods in METRICS.items():
                for method in methods:
                    cells.append(cell_coverage(metric, method, law, n, n_groups, SEED))
        log(f"[{NAME}] n = {n} done ({time.perf_counter() - start:.1f} s)")
    fairlearn = None
    if fairlearn_available() and not quick:  # minutes per cell: the full study only
        fairlearn = [
            {
                "law": law,
                "n": n,
                "metric": metric,
                "coverage": fairlearn_cell(
                    metric, law, n, min(n_groups, FAIRLEARN_GROUPS), SEED
                ),
            }
            for n in sizes
            for law in laws
            for metric in ("tpr", "acc")
        ]
    disparity = []
    if disparities:
        for n in DISPARITY_SIZES[:1] if quick else DISPARITY_SIZES:
            for same in (True, False):
                disparity += disparity_cells(
                    n,
                    same,
                    QUICK_GROUPS if quick else DISPARITY_GROUPS,
                    500 if quick else DISPARITY_DRAWN_GROUPS,
                    SEED,
                )
        log(f"[{NAME}] disparities done ({time.perf_counter() - start:.1f} s)")
    return {
        "level": LEVEL,
        "n_groups": n_groups,
        "sizes": list(sizes),
        "laws": {k: LAWS[k] for k in laws},
        "cells": cells,
        "fairlearn": fairlearn,
        "disparities": disparity,
        "seconds": time.perf_counter() - start,
    }


def summary(cells, metrics):
    """Per (n, method): coverage averaged over laws and metrics, its minimum over
    the (law, metric) cells, and the mean width."""
    out = {}
    for cell in cells:
        if cell["metric"] not in metrics or np.isnan(cell["coverage"]):
            continue
        out.setdefault((cell["n"], cell["method"]), []).append(cell)
    return {
        key: {
            "mean": float(np.mean([c["coverage"] for c in group])),
            "min": float(np.min([c["coverage"] for c in group])),
            "width": float(np.mean([c["mean_width"] for c in group])),
            "cells": len(group),
        }
        for key, group in out.items()
    }


PROPORTION_METRICS = ("acc", "tpr", "fpr", "ppv", "f1")


def check_targets(result):
    """The user guide's targets: a list of (what, target, passed, detail).

    Clopper-Pearson: no (law, n, metric) cell under 95 % by more than 3 Monte
    Carlo standard errors. Wilson, Jeffreys and posterior: at every n >= 10, the
    coverage averaged over the laws and the five proportion metrics is within 2
    points of 95 % (and, for the posterior, MCC's average over the laws too); the
    detail lists the single metrics whose own average is outside.
    """
    checks = []
    cells = result["cells"]
    cp = [c for c in cells if c["method"] == "clopper-pearson"]
    worst = min(c["coverage"] for c in cp)
    low_cp = [
        c
        for c in cp
        if c["coverage"] < LEVEL - 3 * np.sqrt(LEVEL * (1 - LEVEL) / c["n_defined"])
    ]
    checks.append(
        (
            "clopper-pearson, every cell",
            ">= 95 %",
            not low_cp,
            f"lowest cell {100 * worst:.2f} %",
        )
    )
    pooled = summary(cells, PROPORTION_METRICS)
    mcc = summary(cells, ("mcc",))
    per_metric = {}
    for c in cells:
        key = (c["metric"], c["n"], c["method"])
        per_metric.setdefault(key, []).append(c["coverage"])
    for method in ("wilson", "jeffreys", "posterior"):
        means = {
            n: s["mean"] for (n, m), s in pooled.items() if m == method and n >= 10
        }
        if method == "posterior":
            means.update(
                {
                    f"{n} (mcc)": s["mean"]
                    for (n, m), s in mcc.items()
                    if m == method and n >= 10
                }
            )
        misses = {n: v for n, v in means.items() if abs(v - LEVEL) > 0.02}
        outside = [
            f"{metric} n={n}: {100 * np.mean(v):.1f} %"
            for (metric, n, m), v in per_metric.items()
            if m == method and n >= 10 and abs(np.mean(v) - LEVEL) > 0.02
        ]
        detail = "means " + ", ".join(
            f"n={n}: {100 * v:.1f} %" for n, v in means.items()
        )
        if outside:
            detail += "; single metrics outside: " + "; ".join(outside)
        checks.append(
            (
                f"{method}, mean over laws, n >= 10",
                "95 +/- 2 %",
                not misses,
                detail,
            )
        )
    return checks


def _list_table(header, rows, widths=None):
    lines = [".. list-table::", "   :header-rows: 1"]
    if widths:
        lines.append(f"   :widths: {' '.join(map(str, widths))}")
    lines.append("")
    for row in (header, *rows):
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return [*lines, ""]


def format_rst(result):
    """The tables of the user guide, as reStructuredText.

    Each coverage cell reads ``mean (lowest); width``: the coverage in % averaged
    over the laws (and metrics), the lowest single cell, and the mean width.
    """
    lines = []
    sizes = result["sizes"]
    for title, metrics in (
        ("TPR", ("tpr",)),
        ("The five proportion metrics (acc, tpr, fpr, ppv, f1)", PROPORTION_METRICS),
        ("MCC (auto: the projection interval)", ("mcc",)),
    ):
        stats = summary(result["cells"], metrics)
        methods = [m for m in METHODS if any((n, m) in stats for n in sizes)]
        rows = []
        for n in sizes:
            row = [str(n)]
            for m in methods:
                s = stats.get((n, m))
                row.append(
                    f"{100 * s['mean']:.1f} ({100 * s['min']:.1f}); {s['width']:.2f}"
                    if s
                    else ""
                )
            rows.append(row)
        lines += [f"**{title}**", "", *_list_table(["n", *methods], rows)]
    if result.get("fairlearn"):
        rows = []
        for n in sizes:
            row = [str(n)]
            for metric in ("tpr", "acc"):
                covs = [
                    r["coverage"]
                    for r in result["fairlearn"]
                    if r["n"] == n and r["metric"] == metric
                ]
                row.append(f"{100 * np.mean(covs):.1f} ({100 * np.min(covs):.1f})")
            rows.append(row)
        lines += [
            "**fairlearn MetricFrame bootstrap** (whole data set resampled)",
            "",
            *_list_table(["n", "tpr", "acc"], rows),
        ]
    if result["disparities"]:
        sizes_d = sorted({r["n"] for r in result["disparities"]})
        keys = []
        for r in result["disparities"]:
            if (r["quantity"], r["method"]) not in keys:
                keys.append((r["quantity"], r["method"]))
        index = {
            (r["quantity"], r["method"], r["n"], r["same_law"]): r
            for r in result["disparities"]
        }
        header = ["quantity", "method"]
        header += [f"gaps 0, n={n}" for n in sizes_d]
        header += [f"TPR gap 0.15, n={n}" for n in sizes_d]
        rows = []
        for quantity, method in keys:
            row = [quantity, method]
            for same in (True, False):
                for n in sizes_d:
                    r = index.get((quantity, method, n, same))
                    row.append(f"{100 * r['coverage']:.1f}" if r else "")
            rows.append(row)
        lines += ["**Disparities** (coverage %)", "", *_list_table(header, rows)]
    return "\n".join(lines)


COLORS = {
    "clopper-pearson": "tab:blue",
    "wilson": "tab:orange",
    "jeffreys": "tab:green",
    "posterior": "tab:red",
    "bootstrap": "tab:purple",
    "auto": "black",
}


def plot(result, path):
    """Coverage (logit scale) and mean width against n, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (
        ("tpr", "TPR (joint ratio)"),
        ("acc", "accuracy (binomial)"),
        ("mcc", "MCC (posterior, bootstrap, auto = projection)"),
    )
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), sharex=True, height_ratios=(2, 1))
    sizes = result["sizes"]
    for col, (metric, title) in enumerate(panels):
        cov_ax, width_ax = axes[0, col], axes[1, col]
        stats = summary(result["cells"], (metric,))
        for method in METHODS:
            ys = [stats.get((n, method)) for n in sizes]
            if not any(ys):
                continue
            color = COLORS[method]
            cov_ax.plot(
                sizes,
                [s["mean"] for s in ys],
                marker="o",
                color=color,
                label=method,
            )
            cov_ax.plot(sizes, [s["min"] for s in ys], ls=":", color=color)
            width_ax.plot(sizes, [s["width"] for s in ys], marker="o", color=color)
        cov_ax.axhspan(LEVEL - 0.02, LEVEL + 0.02, color="grey", alpha=0.15)
        cov_ax.axhline(LEVEL, color="grey", lw=1)
        cov_ax.set_yscale("logit")
        cov_ax.set_ylim(0.03, 0.9985)
        ticks = [0.05, 0.2, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995]
        cov_ax.set_yticks(ticks, [f"{100 * t:g}" for t in ticks])
        cov_ax.minorticks_off()
        cov_ax.set_title(title)
        width_ax.set_xscale("log")
        width_ax.set_xticks(sizes, [str(n) for n in sizes])
        width_ax.minorticks_off()
        width_ax.set_xlabel("group size n")
    axes[0, 0].set_ylabel(
        "coverage (%), logit scale\nsolid: mean over laws, dotted: lowest"
    )
    axes[1, 0].set_ylabel("mean width")
    axes[0, 0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def run(quick=True, *, log=print):
    """Rows for ``run.py``: the targets as PASS/MISS rows (quick grid)."""
    result = run_study(quick=quick, log=log, disparities=False)
    rows = []
    grid = (
        f"{result['n_groups']:,} groups, {len(result['laws'])} laws, "
        f"n={','.join(map(str, result['sizes']))}"
    )
    for what, target, passed, detail in check_targets(result):
        rows.append(
            _common.make_row(
                f"coverage {what} ({grid})",
                result["seconds"],
                None,
                None,
                target=target,
                status="PASS" if passed else "MISS",
                notes=detail,
            )
        )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_coverage.py [--quick] ...``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid")
    parser.add_argument("--groups", type=int, default=None, help="groups per cell")
    parser.add_argument("--json", type=Path, default=None, help="write the results")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG plot")
    parser.add_argument("--rst", action="store_true", help="print RST tables")
    parser.add_argument(
        "--no-disparities", action="store_true", help="skip the disparity study"
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="show the results of an earlier --json run instead of running",
    )
    args = parser.parse_args(argv)
    if args.from_json:
        result = json.loads(args.from_json.read_text())
    else:
        result = run_study(
            quick=args.quick, n_groups=args.groups, disparities=not args.no_disparities
        )
        result["environment"] = _common.environment()
    for what, target, passed, detail in check_targets(result):
        print(f"{'PASS' if passed else 'MISS'}  {what} {target}: {detail}")
    if result["fairlearn"] is None:
        print(
            "fairlearn is not importable: its MetricFrame bootstrap column is skipped"
        )
    if args.rst:
        print(format_rst(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n")
    if args.plot:
        print(f"plot written to {plot(result, args.plot)}")
    print(f"total {result['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
