"""Reproduction of the Cross-Prior Smoothing study's figures and tables from the
embedded confusion matrices.

Usage (from the repository root)::

    python benchmarks/repro_cross_prior_smoothing.py [--n-resamples 1000000]
        [--n-jobs 2] [--json PATH]

Everything is computed from the published confusion matrices embedded in the
package (:func:`sklearn_smallfair.datasets.load_published_confusion_matrices`,
cells ``(TP, FN, FP, TN)``) and, where a size allows it, by exact enumeration of
the confusion matrices (:func:`sklearn_smallfair.enumerate_confusion_matrices`
with :func:`sklearn_smallfair.multinomial_logpmf` weights); no file is read.
The study's code is https://github.com/jarrenbr/Algorithmic-Accountability-in-Small-Data
(``main.py``, ``cdf.py``, ``generate_cms.py``, ``analyzing_cps.py``,
``smoothing.py``).

**Figure 2.** The distribution (quantile function) of ACC, MCC and TPR over the
confusion matrices of size ``n = 5, 25, 100, 1000``, undefined values left out,
for two laws of the matrices:

* ``multinomial``: each person falls in each cell with probability 1/4, the law
  the study's code samples (``sample_confusion_matrix(n, 1e6,
  p=[[.25, .25], [.25, .25]])``); the scores concentrate at the limits 0.5, 0
  and 0.5 as ``n`` grows;
* ``uniform``: every one of the ``C(n + 3, 3)`` matrices equally likely ("all
  confusion matrices of size n"); the median is at the same limits but the
  spread does not shrink (ACC tends to a Beta(2, 2) law, TPR to a uniform one).

Sizes up to 100 are enumerated exactly; ``n = 1000`` is drawn ``--n-resamples`` times
(the uniform law over matrices is the Dirichlet-multinomial law with parameters
``(1, 1, 1, 1)``).

**Table 2 and Figure 1 (the published matrices).** The COMPAS matrices of the
Black and White defendants and of all defendants, their leave-one-group-out
references, and the same matrices with FN and FP exchanged; the Folktables
Multiracial group's prevalence and positive prediction rate.

**Smoothing against no prior and a uniform prior.** The exact downsampling
experiment (:func:`~sklearn_smallfair.model_selection.downsampling_experiment`,
multinomial subgroups of ``n = 1 .. 150`` of each of the ten published groups,
target the whole group's score) with the raw metric (no prior, ``raw``), a
uniform prior (one pseudo-count per cell, ``uniform_1``; and the study's
``eps = 1e-10``, ``uniform_1e-10``) and Cross-Prior Smoothing toward the rest of
the population (``cps_5``, ``cps_10``, ``cps_20``). Printed: the COMPAS groups'
MSE at a few sizes, the pooled (ten groups, equal weights) MSE ratio
CPS / raw per metric, and the raw TPR's pooled MSE at the smallest sizes.

Results are printed and written as JSON (default
``benchmarks/results/repro_cross_prior_smoothing.json``, written atomically).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from . import _common
except ImportError:
    import _common

_common.ensure_package_importable()

from sklearn_smallfair import (  # noqa: E402
    CELLS,
    enumerate_confusion_matrices,
    multinomial_logpmf,
)
from sklearn_smallfair._output import write_atomic  # noqa: E402
from sklearn_smallfair.datasets import load_published_confusion_matrices  # noqa: E402
from sklearn_smallfair.metrics import compute_metric  # noqa: E402
from sklearn_smallfair.model_selection import downsampling_experiment  # noqa: E402
from sklearn_smallfair.smoothing import (  # noqa: E402
    AdditiveSmoothing,
    CrossPriorSmoothing,
)

NAME = "repro_cross_prior_smoothing"
DEFAULT_JSON = _common.BENCH_DIR / "results" / f"{NAME}.json"
FIGURE2_SIZES = (5, 25, 100, 1000)
FIGURE2_METRICS = {"acc": 0.5, "mcc": 0.0, "tpr": 0.5}  # metric: limit
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
ENUMERATE_UP_TO = 100


def weighted_quantiles(values, weights, q):
    """Quantiles of the discrete law ``(values, weights)``, NaN values left out,
    by the inverse of the weighted ECDF (the smallest value whose cumulative
    weight reaches ``q``)."""
    keep = np.isfinite(values) & (weights > 0)
    values, weights = values[keep], weights[keep]
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    cum /= cum[-1]
    idx = np.searchsorted(cum, np.asarray(q) - 1e-12, side="left")
    return values[order][np.minimum(idx, len(values) - 1)]


def figure2_law(n, law, n_resamples, rng):
    """``(counts, weights)``: all matrices of size ``n`` with their probabilities,
    or ``n_resamples`` drawn matrices with weight 1."""
    if n <= ENUMERATE_UP_TO:
        cms = enumerate_confusion_matrices(n)
        if law == "multinomial":
            w = np.exp(multinomial_logpmf(cms, [0.25] * 4))
        else:
            w = np.ones(cms.shape[0])
        return cms, w
    if law == "multinomial":
        cms = rng.multinomial(n, [0.25] * 4, size=n_resamples)
    else:
        cms = rng.multinomial(n, rng.dirichlet(np.ones(4), size=n_resamples))
    return cms, np.ones(n_resamples)


def figure2(n_resamples, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for law in ("multinomial", "uniform"):
        for n in FIGURE2_SIZES:
            cms, w = figure2_law(n, law, n_resamples, rng)
            for metric, limit in FIGURE2_METRICS.items():
                with np.errstate(all="ignore"):
                    values = compute_metric(metric, cms)
                defined = np.isfinite(values)
                qs = weighted_quantiles(values, w, QUANTILES)
                wd = w[defined] / w[defined].sum()
                rows.append(
                    {
                        "law": law,
                        "n": n,
                        "metric": metric,
                        "limit": limit,
                        "how": "exact"
                        if n <= ENUMERATE_UP_TO
                        else f"{n_resamples} draws",
                        "p_undefined": float(w[~defined].sum() / w.sum()),
                        **{
                            f"q{int(100 * q):02d}": float(v)
                            for q, v in zip(QUANTILES, qs)
                        },
                        "mean_abs_to_limit": float(
                            np.sum(wd * np.abs(values[defined] - limit))
                        ),
                    }
                )
    return pd.DataFrame(rows)


def published_matrices():
    """The COMPAS and Folktables matrices as embedded, with derived rows."""
    compas = load_published_confusion_matrices("COMPAS").set_index("group")[list(CELLS)]
    others = compas.loc["ALL"] - compas.loc["Black"] - compas.loc["White"]
    table = pd.concat(
        [
            compas,
            pd.DataFrame(
                {
                    "ALL - Black": compas.loc["ALL"] - compas.loc["Black"],
                    "ALL - White": compas.loc["ALL"] - compas.loc["White"],
                    "ALL - Black - White": others,
                }
            ).T,
        ]
    )
    table["n"] = table[list(CELLS)].sum(axis=1)
    counts = table[list(CELLS)].to_numpy()
    swapped = counts[:, [0, 2, 1, 3]]  # FN and FP exchanged
    for metric in ("prev", "ppr", "tpr", "fpr", "ppv"):
        table[metric] = compute_metric(metric, counts)
        table[f"{metric}_fn_fp_swapped"] = compute_metric(metric, swapped)
    folk = load_published_confusion_matrices("Folktables").set_index("group")
    multi = folk.loc["Multiracial", list(CELLS)].to_numpy()
    figure1 = {
        "n": int(multi.sum()),
        "positives (TP + FN)": int(multi[0] + multi[1]),
        "predicted positives (TP + FP)": int(multi[0] + multi[2]),
        "prevalence": float(compute_metric("prev", multi)),
        "ppr": float(compute_metric("ppr", multi)),
        "1365 / n": 1365 / float(multi.sum()),
    }
    return table, figure1


SMOOTHING_METRICS = (
    "tpr",
    "fpr",
    "mcc",
    "pt",
    "prev",
    "ppr",
    "npv",
    "for",
    "acc",
    "ppv",
)


def smoothing_experiment(n_jobs):
    counts = load_published_confusion_matrices(include_all=False)
    counts.index = counts["dataset"] + "|" + counts["group"]
    cells = counts[list(CELLS)]
    everyone = load_published_confusion_matrices().query("group == 'ALL'")
    everyone = everyone.set_index("dataset")[list(CELLS)]
    reference = everyone.loc[counts["dataset"]].to_numpy() - cells.to_numpy()
    estimators = {
        "raw": None,
        "uniform_1e-10": AdditiveSmoothing(1e-10),
        "uniform_1": AdditiveSmoothing(1.0),
        "cps_5": CrossPriorSmoothing(5),
        "cps_10": CrossPriorSmoothing(10),
        "cps_20": CrossPriorSmoothing(20),
    }
    return downsampling_experiment(
        counts=cells,
        reference=reference,
        metrics=list(SMOOTHING_METRICS),
        estimators=estimators,
        sizes=range(1, 151),
        method="exact",
        n_jobs=n_jobs,
    )


def summarize_smoothing(res):
    out = {}
    compas = res[
        res["group"].str.startswith("COMPAS") & res["n"].isin([5, 10, 25, 50, 100, 150])
    ]
    table2 = compas.pivot_table(
        index=["group", "metric", "n"], columns="estimator", values="mse"
    )[["raw", "uniform_1e-10", "uniform_1", "cps_5", "cps_10", "cps_20"]]
    out["compas_mse"] = table2
    pooled = (
        res.groupby(["metric", "estimator", "n"])["mse"].mean().unstack("estimator")
    )
    in_range = pooled[pooled.index.get_level_values("n") >= 5]
    ratio = in_range[["uniform_1", "cps_5", "cps_10", "cps_20"]].div(
        in_range["raw"], axis=0
    )
    reduction = in_range[["cps_5", "cps_10"]].rsub(in_range["raw"], axis=0)
    gain = pd.DataFrame(
        {
            "ratio_n5_cps5": ratio.xs(5, level="n")["cps_5"],
            "ratio_n5_cps10": ratio.xs(5, level="n")["cps_10"],
            "mean_ratio_cps5": ratio["cps_5"].groupby(level="metric").mean(),
            "mean_ratio_cps10": ratio["cps_10"].groupby(level="metric").mean(),
            "mean_ratio_uniform_1": ratio["uniform_1"].groupby(level="metric").mean(),
            # absolute improvements: MSE(raw) - MSE(CPS)
            "drop_n5_cps5": reduction.xs(5, level="n")["cps_5"],
            "drop_n5_cps10": reduction.xs(5, level="n")["cps_10"],
            "mean_drop_cps5": reduction["cps_5"].groupby(level="metric").mean(),
        }
    ).sort_values("mean_ratio_cps5")
    out["pooled_ratio"] = gain
    tpr = pooled.xs("tpr", level="metric")
    out["tpr_pooled_mse"] = tpr.loc[[1, 2, 3, 4, 5, 10, 25, 50, 150]]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-resamples", type=int, default=1_000_000)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    results = {"command": " ".join(sys.argv)}
    pd.set_option("display.width", 200)

    start = time.perf_counter()
    fig2 = figure2(args.n_resamples)
    print(f"Figure 2 ({time.perf_counter() - start:.0f} s)")
    print(fig2.round(4).to_string(index=False))
    results["figure2"] = fig2.to_dict(orient="records")

    table, figure1 = published_matrices()
    print("\nTable 2: the embedded COMPAS matrices (cells TP, FN, FP, TN)")
    print(table.round(4).to_string())
    print("\nFigure 1: Folktables Multiracial")
    print(json.dumps(figure1, indent=1))
    results["table2_matrices"] = table.reset_index().to_dict(orient="records")
    results["figure1"] = figure1

    start = time.perf_counter()
    res = smoothing_experiment(args.n_jobs)
    summary = summarize_smoothing(res)
    print(f"\nSmoothing experiment ({time.perf_counter() - start:.0f} s)")
    print("\nCOMPAS groups, MSE against the whole group's score")
    print(summary["compas_mse"].round(4).to_string())
    print(
        "\nPooled over the ten groups (n >= 5): MSE ratio CPS / raw, and the drop "
        "MSE(raw) - MSE(CPS)"
    )
    print(summary["pooled_ratio"].round(4).to_string())
    print("\nRaw and smoothed TPR, pooled MSE at small sizes")
    print(summary["tpr_pooled_mse"].round(4).to_string())
    results["smoothing"] = {
        k: v.reset_index().to_dict(orient="records") for k, v in summary.items()
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(
        args.json, json.dumps(results, indent=1, default=float), what="results"
    )
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
