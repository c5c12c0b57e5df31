"""Calibration of the audit's MATCH tests: false alarms under the null, power, size.

Everything is simulated from per-group confusion matrices ``(TP, FN, FP, TN)``
drawn from multinomial laws (no rows are needed: the audit and the MATCH test
take counts), with fixed seeds; every rate is printed with its Monte Carlo
standard error ``sqrt(r (1 - r) / reps)``.

1. **Null family-wise rate of a whole audit**: the fraction of audits of a fair
   model in which any group x metric cell is a "gap" (``<metric>_match_reject``
   of :func:`~sklearn_smallfair.audit.audit_predictions`), for 2, 4, 8, 12 and 60
   groups whose sizes are log-uniform in [5, 5000] (fixed per number of groups by
   the seed), metrics tpr, fpr, ppv, acc (and f1, mcc), under three laws
   (prevalence, TPR, FPR): ``typical`` (0.3, 0.7, 0.2), ``near 0/1`` (0.5, 0.98,
   0.01) and ``prevalence 0.2-0.4`` (TPR 0.8, FPR 0.2 for every group, the
   prevalences spread evenly from 0.2 to 0.4 across the groups: the null holds
   for tpr and fpr, not for ppv and acc, so only the tpr and fpr cells count as
   false alarms there, though the audit's Holm family holds every cell). Columns:
   the default (two-sample law, Holm over every group x metric,
   ``family="all"``), ``family="metric"`` (Holm per metric), and the published
   law (``match_test(..., null="fixed-reference", correction="holm",
   family="metric")``, the old default) on the same counts.
2. **Power**: one group's TPR 0.1 or 0.2 below the others' (typical law), every
   group of size 30, 150 or 1,000, among 4 or 12 groups: the probability that the
   audit (tpr, fpr, ppv, acc) flags that group's tpr, for the same three columns.
3. **Per-test size** of ``match_test`` (default law, ``correction=None``) for
   group sizes 5 to 5,000 against references of 5 to 100,000 people drawn
   independently from the typical law, with the reference's prevalence equal
   (difference 0) or 0.2 higher (same TPR and FPR), for tpr, fpr, ppv, npv,
   acc, ppr, f1, mcc: the largest rejection rate over the metrics whose null
   holds (all eight at difference 0; tpr, fpr, f1, mcc at difference 0.2: the
   permutation law of f1 and mcc is conditional on the true classes, so their
   null is equal TPR and FPR), among the tables where the metric is defined.
   Then ``scipy.stats.boschloo_exact`` on ``[[TP_g, FN_g], [TP_r, FN_r]]`` vs the
   default tpr test at TPR gaps 0 and 0.2 in a few (n, reference) cells.

The audit's decisions are reproduced in bulk: the p-values of all simulated
groups come from one ``match_test`` call (a reference row per group: the rest of
its audit), then each audit's Holm family is adjusted by ``adjust_pvalues``.
The first audits of some cells are also run through ``audit_predictions`` itself
and its ``<metric>_match_reject`` columns must agree (a correctness check);
f1 and mcc use Monte Carlo permutation laws for large groups, seeded per group
label, so they are checked only on the proportion metrics.

Run ``python benchmarks/bench_audit_calibration.py [--quick] [--reps N]
[--seed S] [--jobs J] [--no-f1-mcc] [--json PATH] [--rst]``. ``--reps`` is the
number of simulated audits per cell of parts 1 and 2 (f1/mcc: half of it); part
3 uses twice as many tables per cell and Boschloo a quarter. ``--quick`` runs a
small grid (under a minute on 2 cores). Not registered in ``run.py``.
"""

import argparse
import json
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "audit_calibration"
SEED = 20260517
ALPHA = 0.05
CELLS = ("TP", "FN", "FP", "TN")
#: Laws of part 1 as (prevalence, TPR, FPR); a prevalence pair is spread evenly
#: across the groups.
LAWS = {
    "typical": (0.3, 0.7, 0.2),
    "near 0/1": (0.5, 0.98, 0.01),
    "prevalence 0.2-0.4": ((0.2, 0.4), 0.8, 0.2),
}
#: The metrics whose null holds under each law (the false alarms counted).
NULL_METRICS = {"prevalence 0.2-0.4": ("tpr", "fpr", "f1", "mcc")}
METRICS = ("tpr", "fpr", "ppv", "acc")
EXTRA_METRICS = ("f1", "mcc")
GROUP_COUNTS = (2, 4, 8, 12, 60)
SIZE_RANGE = (5, 5000)
POWER_GROUPS = (4, 12)
POWER_SIZES = (30, 150, 1000)
POWER_GAPS = (0.1, 0.2)
SIZE_N = (5, 10, 20, 50, 150, 1000, 5000)
SIZE_REF = (5, 30, 100, 1000, 100_000)
SIZE_METRICS = ("tpr", "fpr", "ppv", "npv", "acc", "ppr", "f1", "mcc")
SIZE_NULL_SHIFTED = ("tpr", "fpr", "f1", "mcc")
PREVALENCE_SHIFT = 0.2
BOSCHLOO_CELLS = ((10, 30), (20, 100), (50, 100), (150, 1000))
REPS = 300
QUICK = {
    "reps": 40,
    "group_counts": (2, 4, 12),
    "power_groups": (4,),
    "power_sizes": (30, 150),
    "size_n": (5, 20, 150),
    "size_ref": (5, 100, 100_000),
    "boschloo_cells": ((20, 100),),
    "extra": False,
    "check": ((4, "typical"),),
}
FULL = {
    "group_counts": GROUP_COUNTS,
    "power_groups": POWER_GROUPS,
    "power_sizes": POWER_SIZES,
    "size_n": SIZE_N,
    "size_ref": SIZE_REF,
    "boschloo_cells": BOSCHLOO_CELLS,
    "extra": True,
    "check": ((4, "typical"), (12, "near 0/1"), (8, "prevalence 0.2-0.4")),
}
#: Audits per checked cell that are also run through audit_predictions.
CHECK_AUDITS = 2
#: Monte Carlo draws of the permutation laws (the audit's default).
N_RESAMPLES = 20_000


def group_sizes(n_groups, seed):
    """Sizes log-uniform in :data:`SIZE_RANGE`, fixed by ``(seed, n_groups)``."""
    rng = np.random.default_rng([seed, 1, n_groups])
    low, high = np.log(SIZE_RANGE)
    return np.rint(np.exp(rng.uniform(low, high, n_groups))).astype(np.int64)


def law_probabilities(law, n_groups):
    """One row of cell probabilities per group, shape (G, 4)."""
    prevalence, tpr, fpr = LAWS[law]
    if isinstance(prevalence, tuple):
        prevalences = np.linspace(*prevalence, n_groups)
    else:
        prevalences = np.full(n_groups, prevalence)
    return np.array([_common.cell_probabilities(p, tpr, fpr) for p in prevalences])


def draw(rng, sizes, probs, reps):
    """Matrices of shape (reps, G, 4): group g of size sizes[g] from probs[g]."""
    out = np.empty((reps, len(sizes), 4), dtype=np.int64)
    for g, (n, p) in enumerate(zip(sizes, probs)):
        out[:, g] = rng.multinomial(int(n), p, size=reps)
    return out


def pvalues(cms, metrics, null, seed):
    """Raw p-values of every group of every audit against the rest of its audit,
    shape (len(metrics), reps, G), from one ``match_test`` call."""
    from sklearn_smallfair.stats import match_test

    reps, G, _ = cms.shape
    refs = cms.sum(axis=1, keepdims=True) - cms
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = match_test(
            counts=cms.reshape(-1, 4),
            reference=refs.reshape(-1, 4),
            metric=list(metrics),
            null=null,
            correction=None,
            confidence_level=None,
            n_resamples=N_RESAMPLES,
            random_state=seed,
        )
    return res.frame["p_value"].to_numpy(dtype=float).reshape(len(metrics), reps, G)


def holm_rejects(p, family):
    """Holm rejections (``p_adjusted <= alpha``) of each audit; ``p`` has shape
    (M, reps, G); ``family`` "all" (one family per audit) or "metric"."""
    from sklearn_smallfair.stats import adjust_pvalues

    M, reps, G = p.shape
    out = np.zeros(p.shape, dtype=bool)
    for r in range(reps):
        if family == "all":
            adj = adjust_pvalues(p[:, r].ravel(), "holm").reshape(M, G)
            out[:, r] = adj <= ALPHA
        else:
            for m in range(M):
                out[m, r] = adjust_pvalues(p[m, r], "holm") <= ALPHA
    return out


def rate(hits):
    """``(rate, Monte Carlo standard error, count)`` of a boolean array."""
    hits = np.asarray(hits, dtype=bool).ravel()
    k = hits.size
    if k == 0:
        return float("nan"), float("nan"), 0
    r = float(hits.mean())
    return r, float(np.sqrt(max(r * (1 - r), 1.0 / k) / k)), k


def _rate_dict(hits):
    r, se, k = rate(hits)
    return {"rate": r, "se": se, "reps": k}


def check_against_audit(cms, metrics, rejects, family):
    """Run the first audits through ``audit_predictions``; their reject columns
    must equal ``rejects`` (shape (M, reps, G)) on the proportion metrics."""
    import pandas as pd

    from sklearn_smallfair.audit import audit_predictions

    G = cms.shape[1]
    index = pd.Index([f"g{g:02d}" for g in range(G)], name="group")
    checked = 0
    for r in range(min(CHECK_AUDITS, cms.shape[0])):
        frame = pd.DataFrame(cms[r], columns=list(CELLS), index=index)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = audit_predictions(
                counts=frame, metrics=list(metrics), tests=("match",), family=family
            )
        for m, name in enumerate(metrics):
            if name in EXTRA_METRICS:
                continue
            got = report.frame[f"{name}_match_reject"].to_numpy(dtype=bool)
            _common.check(
                np.array_equal(got, rejects[m, r]),
                f"audit {r} ({G} groups, family={family!r}): {name}_match_reject "
                f"{got.tolist()} != the bulk computation {rejects[m, r].tolist()}",
            )
            checked += 1
    return checked


def null_cell(task):
    """Part 1: one (metric set, law, number of groups) cell."""
    metrics, law, G, reps, seed, check, old = task
    start = time.perf_counter()
    sizes = group_sizes(G, seed)
    probs = law_probabilities(law, G)
    rng = np.random.default_rng([seed, 2, G, list(LAWS).index(law), len(metrics)])
    cms = draw(rng, sizes, probs, reps)
    p_new = pvalues(cms, metrics, "two-sample", seed)
    null_ok = np.array(
        [m in NULL_METRICS.get(law, SIZE_METRICS) for m in metrics], dtype=bool
    )
    out = {
        "part": "null",
        "metrics": list(metrics),
        "law": law,
        "groups": G,
        "sizes": sizes.tolist(),
        "null_metrics": [m for m, ok in zip(metrics, null_ok) if ok],
    }
    checked = 0
    for family in ("all", "metric"):
        rej = holm_rejects(p_new, family)
        out[f"new_{family}"] = _rate_dict(rej[null_ok].any(axis=(0, 2)))
        if check:
            checked += check_against_audit(cms, metrics, rej, family)
    if old:
        p_old = pvalues(cms, metrics, "fixed-reference", seed)
        rej = holm_rejects(p_old, "metric")
        out["old_metric"] = _rate_dict(rej[null_ok].any(axis=(0, 2)))
    out["checked_cells"] = checked
    out["seconds"] = time.perf_counter() - start
    return out


def power_cell(task):
    """Part 2: one (groups, size, gap) cell; group 0's TPR is ``gap`` lower."""
    G, n, gap, reps, seed = task
    start = time.perf_counter()
    prevalence, tpr, fpr = LAWS["typical"]
    probs = np.array([_common.cell_probabilities(prevalence, tpr, fpr)] * G)
    probs[0] = _common.cell_probabilities(prevalence, tpr - gap, fpr)
    rng = np.random.default_rng([seed, 3, G, n, round(100 * gap)])
    cms = draw(rng, np.full(G, n), probs, reps)
    out = {"part": "power", "groups": G, "n": n, "gap": gap}
    p_new = pvalues(cms, METRICS, "two-sample", seed)
    for family in ("all", "metric"):
        out[f"new_{family}"] = _rate_dict(holm_rejects(p_new, family)[0, :, 0])
    p_old = pvalues(cms, METRICS, "fixed-reference", seed)
    out["old_metric"] = _rate_dict(holm_rejects(p_old, "metric")[0, :, 0])
    out["seconds"] = time.perf_counter() - start
    return out


def size_cell(task):
    """Part 3: rejection rates of every metric for one (n, reference, shift)."""
    from sklearn_smallfair.stats import match_test

    n, ref_n, shift, reps, seed = task
    start = time.perf_counter()
    prevalence, tpr, fpr = LAWS["typical"]
    rng = np.random.default_rng([seed, 4, n, ref_n, round(100 * shift)])
    group = rng.multinomial(
        n, _common.cell_probabilities(prevalence, tpr, fpr), size=reps
    )
    ref = rng.multinomial(
        ref_n, _common.cell_probabilities(prevalence + shift, tpr, fpr), size=reps
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = match_test(
            counts=group,
            reference=ref,
            metric=list(SIZE_METRICS),
            correction=None,
            confidence_level=None,
            n_resamples=N_RESAMPLES,
            random_state=seed,
        )
    p = res.frame["p_value"].to_numpy(dtype=float).reshape(len(SIZE_METRICS), reps)
    out = {"part": "size", "n": n, "reference_n": ref_n, "shift": shift}
    for m, name in enumerate(SIZE_METRICS):
        defined = ~np.isnan(p[m])
        out[name] = _rate_dict(p[m][defined] <= ALPHA)
    out["seconds"] = time.perf_counter() - start
    return out


def boschloo_cell(task):
    """Part 3b: Boschloo's test vs the default tpr test, TPR gap ``gap``."""
    from scipy.stats import boschloo_exact

    from sklearn_smallfair.stats import match_test

    n, ref_n, gap, reps, seed = task
    start = time.perf_counter()
    prevalence, tpr, fpr = LAWS["typical"]
    rng = np.random.default_rng([seed, 5, n, ref_n, round(100 * gap)])
    group = rng.multinomial(
        n, _common.cell_probabilities(prevalence, tpr - gap, fpr), size=reps
    )
    ref = rng.multinomial(
        ref_n, _common.cell_probabilities(prevalence, tpr, fpr), size=reps
    )
    keep = (group[:, :2].sum(axis=1) > 0) & (ref[:, :2].sum(axis=1) > 0)
    group, ref = group[keep], ref[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = match_test(
            counts=group,
            reference=ref,
            metric="tpr",
            correction=None,
            confidence_level=None,
        )
        p_default = res.frame["p_value"].to_numpy(dtype=float)
        p_boschloo = np.array(
            [
                boschloo_exact(
                    [[g[0], g[1]], [r[0], r[1]]], alternative="two-sided"
                ).pvalue
                for g, r in zip(group, ref)
            ]
        )
    return {
        "part": "boschloo",
        "n": n,
        "reference_n": ref_n,
        "gap": gap,
        "default": _rate_dict(p_default <= ALPHA),
        "boschloo": _rate_dict(p_boschloo <= ALPHA),
        "seconds": time.perf_counter() - start,
    }


def _run_task(item):
    kind, task = item
    _common.ensure_package_importable()
    return {
        "null": null_cell,
        "power": power_cell,
        "size": size_cell,
        "boschloo": boschloo_cell,
    }[kind](task)


def tasks(quick, reps, seed, extra):
    """Every cell of the study as ``(kind, arguments)``."""
    grid = dict(FULL, **(QUICK if quick else {}))
    extra = grid["extra"] if extra is None else extra
    checks = set(grid["check"])
    out = []
    for G in grid["group_counts"]:
        for law in LAWS:
            out.append(
                ("null", (METRICS, law, G, reps, seed, (G, law) in checks, True))
            )
            if extra:
                out.append(
                    (
                        "null",
                        (EXTRA_METRICS, law, G, max(reps // 2, 1), seed, False, False),
                    )
                )
    for G in grid["power_groups"]:
        for n in grid["power_sizes"]:
            for gap in POWER_GAPS:
                out.append(("power", (G, n, gap, reps, seed)))
    for n in grid["size_n"]:
        for ref_n in grid["size_ref"]:
            for shift in (0.0, PREVALENCE_SHIFT):
                out.append(("size", (n, ref_n, shift, 2 * reps, seed)))
    for n, ref_n in grid["boschloo_cells"]:
        for gap in (0.0, 0.2):
            out.append(("boschloo", (n, ref_n, gap, max(reps // 4, 10), seed)))
    return out


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def run_study(quick=False, *, reps=None, seed=SEED, jobs=1, extra=None, log=_progress):
    """All cells; returns a dict with the cells of each part and the timings."""
    _common.ensure_package_importable()
    reps = reps or (QUICK["reps"] if quick else REPS)
    todo = tasks(quick, reps, seed, extra)
    start = time.perf_counter()
    results = []
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for res in pool.map(_run_task, todo):
                results.append(res)
                _log_cell(res, start, log)
    else:
        for item in todo:
            results.append(_run_task(item))
            _log_cell(results[-1], start, log)
    return {
        "alpha": ALPHA,
        "reps": reps,
        "seed": seed,
        "mode": "quick" if quick else "full",
        "laws": {
            k: list(v) if not isinstance(v[0], tuple) else [list(v[0]), *v[1:]]
            for k, v in LAWS.items()
        },
        "cells": results,
        "checked_audit_cells": sum(r.get("checked_cells", 0) for r in results),
        "seconds": time.perf_counter() - start,
    }


def _log_cell(res, start, log):
    keys = [
        k
        for k in ("metrics", "law", "groups", "n", "reference_n", "shift", "gap")
        if k in res
    ]
    what = ", ".join(f"{k}={res[k]}" for k in keys)
    log(
        f"[{NAME}] {res['part']} {what}: {res['seconds']:.1f} s "
        f"(total {time.perf_counter() - start:.0f} s)"
    )


def _pct(d):
    if d is None or d["reps"] == 0:
        return "-"
    return f"{100 * d['rate']:.1f} ± {100 * d['se']:.1f}"


def _list_table(header, rows):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in (header, *rows):
        lines.append(f"   * - {row[0]}")
        lines += [f"     - {cell}" for cell in row[1:]]
    return [*lines, ""]


def _excess(d):
    """``P(X >= observed)`` for ``X ~ Bin(reps, alpha)``: how surprising a rate
    above ``alpha`` is for a test of exact size ``alpha``."""
    from scipy.stats import binom

    k = round(d["rate"] * d["reps"])
    tail = binom.sf(k - 1, d["reps"], ALPHA)
    return f"binomial P(>= {k}/{d['reps']} | {ALPHA:g}) = {tail:.2g}"


def flagged(result, margin=0.015):
    """Null cells whose rate exceeds ``alpha + margin``: a list of strings (each
    with the binomial tail of its count under a rate of exactly ``alpha``)."""
    out = []
    for c in result["cells"]:
        if c["part"] == "null":
            for key in ("new_all", "new_metric", "old_metric"):
                if key in c and c[key]["rate"] > ALPHA + margin:
                    out.append(
                        f"null {key} {'/'.join(c['metrics'])}, {c['law']}, "
                        f"{c['groups']} groups (sizes {c['sizes']}): {_pct(c[key])} %; "
                        f"{_excess(c[key])}"
                    )
        elif c["part"] == "size":
            names = SIZE_METRICS if c["shift"] == 0 else SIZE_NULL_SHIFTED
            for name in names:
                if c[name]["rate"] > ALPHA + margin:
                    out.append(
                        f"size {name}, n={c['n']}, reference={c['reference_n']}, "
                        f"prevalence shift {c['shift']}: {_pct(c[name])} % "
                        f"({c[name]['reps']} defined tables); {_excess(c[name])}"
                    )
        elif c["part"] == "boschloo" and c["gap"] == 0:
            for key in ("default", "boschloo"):
                if c[key]["rate"] > ALPHA + margin:
                    out.append(
                        f"boschloo cell {key}, n={c['n']}, reference="
                        f"{c['reference_n']}, gap 0: {_pct(c[key])} %; "
                        f"{_excess(c[key])}"
                    )
    return out


def format_rst(result):
    """The tables as reStructuredText; rates in % with their MC standard errors."""
    cells = result["cells"]
    lines = []
    null = [c for c in cells if c["part"] == "null"]
    if null:
        rows = [
            [
                ", ".join(c["metrics"])
                + (
                    f" (false alarms: {', '.join(c['null_metrics'])})"
                    if c["null_metrics"] != c["metrics"]
                    else ""
                ),
                c["law"],
                str(c["groups"]),
                _pct(c["new_all"]),
                _pct(c["new_metric"]),
                _pct(c.get("old_metric")),
                str(c["new_all"]["reps"]),
            ]
            for c in null
        ]
        lines += [
            f"**Null family-wise rate of a whole audit** (% of audits with any "
            f'"gap", alpha = {100 * ALPHA:g} %; group sizes log-uniform in '
            f"[{SIZE_RANGE[0]}, {SIZE_RANGE[1]}])",
            "",
            *_list_table(
                [
                    "metrics",
                    "law",
                    "groups",
                    "default (family=all)",
                    "family=metric",
                    "fixed-reference, Holm per metric",
                    "audits",
                ],
                rows,
            ),
        ]
    power = [c for c in cells if c["part"] == "power"]
    if power:
        rows = [
            [
                str(c["groups"]),
                str(c["n"]),
                f"{c['gap']:g}",
                _pct(c["new_all"]),
                _pct(c["new_metric"]),
                _pct(c["old_metric"]),
            ]
            for c in power
        ]
        lines += [
            "**Power**: % of audits (tpr, fpr, ppv, acc) flagging the tpr of the one "
            "group whose TPR is lower (typical law, every group of size n)",
            "",
            *_list_table(
                [
                    "groups",
                    "n",
                    "TPR gap",
                    "default (family=all)",
                    "family=metric",
                    "fixed-reference, Holm per metric",
                ],
                rows,
            ),
        ]
    size = [c for c in cells if c["part"] == "size"]
    if size:
        refs = sorted({c["reference_n"] for c in size})
        sizes = sorted({c["n"] for c in size})
        index = {(c["n"], c["reference_n"], c["shift"]): c for c in size}
        shifts = ((0.0, SIZE_METRICS), (PREVALENCE_SHIFT, SIZE_NULL_SHIFTED))
        for shift, names in shifts:
            rows = []
            for n in sizes:
                row = [str(n)]
                for ref_n in refs:
                    c = index.get((n, ref_n, shift))
                    if c is None:
                        row.append("")
                        continue
                    worst = max(
                        (name for name in names if c[name]["reps"]),
                        key=lambda name: c[name]["rate"],
                        default=None,
                    )
                    row.append(f"{_pct(c[worst])} ({worst})" if worst else "undefined")
                rows.append(row)
            lines += [
                f"**Per-test size of match_test** (default law), prevalence "
                f"difference {shift:g}: largest rejection % over "
                f"{', '.join(names)} (its metric), {2 * result['reps']} tables "
                f"per cell (rates among those where the metric is defined)",
                "",
                *_list_table(
                    ["group n / reference n"] + [f"{r:,}" for r in refs], rows
                ),
            ]
    bos = [c for c in cells if c["part"] == "boschloo"]
    if bos:
        rows = [
            [
                str(c["n"]),
                f"{c['reference_n']:,}",
                f"{c['gap']:g}",
                _pct(c["default"]),
                _pct(c["boschloo"]),
                str(c["default"]["reps"]),
            ]
            for c in bos
        ]
        lines += [
            "**tpr: default law vs scipy.stats.boschloo_exact** (rejection %, "
            "group TPR lower by the gap)",
            "",
            *_list_table(
                ["n", "reference", "TPR gap", "default", "Boschloo", "tables"], rows
            ),
        ]
    return "\n".join(lines)


def main(argv=None):
    """Command line: ``python benchmarks/bench_audit_calibration.py [--quick] ...``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid (< 1 min)")
    parser.add_argument(
        "--reps", type=int, default=None, help=f"audits per cell (default {REPS})"
    )
    parser.add_argument("--seed", type=int, default=SEED, help="base seed")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--no-f1-mcc", action="store_true", help="skip the f1/mcc rows of part 1"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results")
    parser.add_argument("--rst", action="store_true", help="print RST tables")
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
        try:
            result = run_study(
                quick=args.quick,
                reps=args.reps,
                seed=args.seed,
                jobs=args.jobs,
                extra=False if args.no_f1_mcc else None,
            )
        except _common.CorrectnessError as exc:
            print(f"CORRECTNESS CHECK FAILED: {exc}", file=sys.stderr)
            return 1
        result["environment"] = _common.environment()
    print(
        f"audit_predictions agreed with the bulk computation on "
        f"{result['checked_audit_cells']} audited metric columns"
    )
    high = flagged(result)
    print(f"cells above alpha + 1.5 points: {len(high)}")
    for line in high:
        print(f"  {line}")
    if args.rst:
        print(format_rst(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"total {result['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
