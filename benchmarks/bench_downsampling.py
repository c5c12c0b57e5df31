"""Benchmark: the published downsampling experiment, exact and Monte Carlo.

:func:`sklearn_smallfair.model_selection.downsampling_experiment` on the published
groups (``counts, reference = sklearn_smallfair.datasets.load_published_groups()``,
10 groups, passed as ``counts=counts, reference=reference``), multinomial sampling,
against a Monte Carlo baseline written here in numpy the straightforward published
way: for each (group, size), ONE ``np.random.default_rng(seed).multinomial(n, p,
size=1_000_000)`` call, then each estimator applied to every draw (additive
smoothing ``c + eps``, Cross-Prior Smoothing ``(c + lam * p_ref) / (n + lam) * n``),
each metric formula on every draw, and ``mse``, ``bias``, ``variance`` conditional
on the value being defined, against the whole-group (unsmoothed) target.

* **exact, full published experiment**: ``method="exact"``, every single-group
  metric of the registry (``metric_names(n_groups=1)``, 19 today; the published
  target names 15), 6 estimators (``eps_0``, ``eps_1e-10``, ``eps_1``: additive
  smoothing; ``cps_5``, ``cps_10``, ``cps_20``: Cross-Prior Smoothing), 10 groups,
  sizes 5..150, ``n_jobs=2``. Each run is one call in a fresh Python process, so
  that its peak memory can be read: the sum of the peak RSS (``VmHWM``) of that
  process and of its live children (the joblib workers) after the call, an upper
  bound of the process tree's peak (without ``/proc``: ``ru_maxrss`` of the
  process plus ``n_jobs`` times that of its largest reaped child). The time
  includes starting the workers; best of 2 runs (``--quick``: 1), with the CPU
  time of the call and that of other processes meanwhile.
  Baseline: the numpy Monte Carlo at 1,000,000 draws per (group, size) for all
  metrics and estimators, timed on a few cells spread over the groups and sizes
  (full: 6, ``--quick``: 1; after an untimed warm-up call) and extrapolated
  linearly to the 1,460 cells (it would take about 40 minutes); single process.
  ``--quick`` times the exact experiment on sizes 5..30 only (no target).
* **exact engine against the per-metric evaluation**: the same call
  (``method="exact"``, 10 groups, 19 metrics, 6 estimators, ``n_jobs=1``, one
  process) on sizes 5, 10, ..., 150 (``--quick``: 5, 10, ..., 40), with the
  engine (values shared between groups, sums between metrics and estimators)
  and with the per-metric reference swapped in (``_exact_task_per_metric``: the same
  blocks and rows, each metric's formula and power sums evaluated on their own,
  each group's Cross-Prior Smoothing sums by ``bincount``); the ratio is the
  median of per-pair ratios of interleaved repeats (2; ``--quick``: 3), and the
  two tables must agree within 1e-12.
* **Monte Carlo at 1,000,000 draws per size**: ``method="montecarlo"`` for one
  group (COMPAS|Black), ``mcc`` and CPS ``lam=10``, ``n_jobs=1``, sizes 5..150
  (``--quick``: 5, 50, 150), against the numpy baseline for the same group, metric
  and estimator. Reported as draws per second.
* **exact vs Monte Carlo** (informational): ``method="exact"`` for the same group,
  metric, estimator and sizes, against the baseline's 1,000,000 draws per size.

Correctness, before the timings: on the baseline's cells, the exact ``mse`` of
every (metric, estimator) agrees with the baseline's within 5 standard errors, and
``p_undefined`` within 5 binomial standard errors; for the Monte Carlo group the
package's and the baseline's ``mse`` agree within 5 combined standard errors at
every size, and each agrees with ``method="exact"`` within 5 of its standard errors.
The full exact run must then reproduce the exact values of the checked cells
(within 1e-9) and have one row per group, size, metric and estimator.

Targets: the full exact experiment in under 5 s with a peak under 2 GB on the
reference machine (2 cores); the package's Monte Carlo at least 10x as many draws
per second as the baseline, as the median of per-pair ratios of interleaved
repeats (baseline and ours alternating, so that both see the same load).

Run ``python benchmarks/bench_downsampling.py [--quick]`` or through ``run.py``.
"""

import json
import os
import subprocess
import sys
import time

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "downsampling"
SEED = 20261121
N_RESAMPLES = 1_000_000
N_JOBS = 2
#: (name, kind, parameter): additive smoothing ``eps`` or Cross-Prior ``lam``
ESTIMATORS = (
    ("eps_0", "additive", 0.0),
    ("eps_1e-10", "additive", 1e-10),
    ("eps_1", "additive", 1.0),
    ("cps_5", "cps", 5.0),
    ("cps_10", "cps", 10.0),
    ("cps_20", "cps", 20.0),
)
MC_GROUP = "COMPAS|Black"
MC_METRIC = "mcc"
MC_ESTIMATOR = ("cps_10", "cps", 10.0)
SE_TOL = 5.0
MATCH_TOL = 1e-9
#: Largest difference allowed between the exact engine and the per-metric
#: evaluation (round-off of sums grouped differently).
ENGINE_TOL = 1e-12
TARGET_EXACT_S = 5.0
TARGET_PEAK_GB = 2.0
TARGET_MC_RATIO = 10.0
FULL = {
    "exact_sizes": range(5, 151),
    "baseline_cells": 6,
    "mc_sizes": range(5, 151),
    "pairs_mc": 2,
    "repeats_exact": 3,
    "repeats_experiment": 2,
    "engine_sizes": range(5, 151, 5),
    "pairs_engine": 2,
}
QUICK = {
    "exact_sizes": range(5, 31),
    "baseline_cells": 1,
    "mc_sizes": (5, 50, 150),
    "pairs_mc": 3,
    "repeats_exact": 3,
    "repeats_experiment": 1,
    "engine_sizes": range(5, 41, 5),
    "pairs_engine": 3,
}


# --- the baseline: metric formulas and one Monte Carlo cell, in plain numpy --------
def _metric_formulas():
    """Every single-group metric as a numpy formula of the cells (NaN if 0/0)."""

    def f1_original(tp, fn, fp, tn):
        return np.where(tp > 0, 2.0 / ((tp + fp) / tp + (tp + fn) / tp), np.nan)

    def pt(tp, fn, fp, tn):
        tpr, fpr = tp / (tp + fn), fp / (fp + tn)
        return (np.sqrt(tpr * fpr) - fpr) / (tpr - fpr)

    return {
        "acc": lambda tp, fn, fp, tn: (tp + tn) / (tp + fn + fp + tn),
        "prev": lambda tp, fn, fp, tn: (tp + fn) / (tp + fn + fp + tn),
        "ppr": lambda tp, fn, fp, tn: (tp + fp) / (tp + fn + fp + tn),
        "inacc": lambda tp, fn, fp, tn: (fp + fn) / (tp + fn + fp + tn),
        "nprev": lambda tp, fn, fp, tn: (tn + fp) / (tp + fn + fp + tn),
        "pnr": lambda tp, fn, fp, tn: (tn + fn) / (tp + fn + fp + tn),
        "tpr": lambda tp, fn, fp, tn: tp / (tp + fn),
        "fnr": lambda tp, fn, fp, tn: fn / (fn + tp),
        "fpr": lambda tp, fn, fp, tn: fp / (fp + tn),
        "tnr": lambda tp, fn, fp, tn: tn / (tn + fp),
        "ppv": lambda tp, fn, fp, tn: tp / (tp + fp),
        "fdr": lambda tp, fn, fp, tn: fp / (fp + tp),
        "npv": lambda tp, fn, fp, tn: tn / (tn + fn),
        "for": lambda tp, fn, fp, tn: fn / (fn + tn),
        "f1": lambda tp, fn, fp, tn: 2 * tp / (2 * tp + fp + fn),
        "f1_original": f1_original,
        "mcc": lambda tp, fn, fp, tn: (
            (tp * tn - fp * fn) / np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        ),
        "pt": pt,
        "mb": lambda tp, fn, fp, tn: (fp - fn) / (tp + fn + fp + tn),
    }


FORMULAS = _metric_formulas()


def metric_value(name, cells):
    """The metric on ``(..., 4)`` cells; NaN where it is undefined (non-finite)."""
    cells = np.asarray(cells, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        v = FORMULAS[name](*(cells[..., i] for i in range(4)))
    return np.where(np.isfinite(v), v, np.nan)


def numpy_montecarlo(counts, ref, n, metrics, estimators, *, n_resamples, seed):
    """One (group, size) of the published experiment, the straightforward way.

    ONE ``default_rng(seed).multinomial(n, p, size=n_resamples)`` call, each estimator
    on every draw, each metric formula on every smoothed draw, then the statistics
    conditional on the value being defined. Returns ``{(metric, estimator): (mse,
    bias, variance, p_undefined, mse_se)}``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    p = counts / counts.sum()
    p_ref = np.asarray(ref, dtype=np.float64) / np.sum(ref)
    targets = {metric: float(metric_value(metric, counts)) for metric in metrics}
    draws = np.random.default_rng(seed).multinomial(n, p, size=n_resamples)
    out = {}
    for est_name, kind, param in estimators:
        if kind == "additive":
            smoothed = draws + param
        else:
            smoothed = (draws + param * p_ref) / (n + param) * n
        cols = [smoothed[:, i] for i in range(4)]
        for metric in metrics:
            target = targets[metric]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                v = FORMULAS[metric](*cols)
            v = v[np.isfinite(v)]
            k = v.size
            if k:
                d = v - target
                d2 = d * d
                mse = float(d2.mean())
                mse_se = float(d2.std() / np.sqrt(k))
                bias = float(d.mean())
                variance = float(v.var())
            else:
                mse = mse_se = bias = variance = np.nan
            out[(metric, est_name)] = (mse, bias, variance, 1 - k / n_resamples, mse_se)
    return out


# --- the package ------------------------------------------------------------------
def _estimators(specs=ESTIMATORS):
    _common.ensure_package_importable()
    from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

    return {
        name: AdditiveSmoothing(param)
        if kind == "additive"
        else CrossPriorSmoothing(param)
        for name, kind, param in specs
    }


def published_groups():
    """``(counts, reference)`` of the 10 published groups (pandas DataFrames)."""
    _common.ensure_package_importable()
    from sklearn_smallfair.datasets import load_published_groups

    return load_published_groups()


def all_metrics():
    """The registry's single-group metrics: what the full experiment scores."""
    _common.ensure_package_importable()
    from sklearn_smallfair.metrics import metric_names

    return list(metric_names(n_groups=1))


def ours(counts, reference, sizes, metrics, specs, method, n_jobs=1, **kwargs):
    """:func:`downsampling_experiment` with the benchmark's inputs; the frame."""
    _common.ensure_package_importable()
    from sklearn_smallfair.model_selection import downsampling_experiment

    return downsampling_experiment(
        counts=counts,
        reference=reference,
        metrics=metrics,
        estimators=_estimators(specs),
        sizes=sizes,
        method=method,
        n_jobs=n_jobs,
        **kwargs,
    )


def _lookup(frame):
    """``{(group, n, metric, estimator): row}`` of a result frame."""
    return {
        (str(r.group), int(r.n), r.metric, r.estimator): r
        for r in frame.itertuples(index=False)
    }


# --- the full exact experiment in a fresh process -----------------------------------
_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import bench_downsampling
print(json.dumps(bench_downsampling.child_exact(json.loads(sys.argv[2]))))
"""


def _maxrss_mb(who):
    import resource

    kb = resource.getrusage(who).ru_maxrss
    return kb / (1024**2 if sys.platform == "darwin" else 1024)


def _hwm_mb(pid="self"):
    """Peak RSS (``VmHWM``) of a live process since its exec, in MB; else None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _descendants():
    """PIDs of the live descendants of this process (Linux ``/proc``)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [k for k, v in parent.items() if v == pid]
        found += kids
        todo += kids
    return found


def _machine_busy_s():
    """CPU seconds spent so far by the whole machine (Linux ``/proc/stat``)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _cpu_s(who):
    import resource

    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def child_exact(params):
    """Run (in the child process) the exact experiment once; time, memory, rows.

    Returns the wall time, the parent's and the largest reaped child's peak RSS
    (MB), the CPU time of the call (parent and workers), the CPU time other
    processes took meanwhile (``None`` without ``/proc/stat``), the number of rows
    and the rows of ``cells``.
    """
    import resource

    counts, reference = published_groups()
    metrics, sizes = params["metrics"], params["sizes"]
    cpu_before, busy_before = _cpu_s(resource.RUSAGE_SELF), _machine_busy_s()
    start = time.perf_counter()
    frame = ours(
        counts, reference, sizes, metrics, ESTIMATORS, "exact", params["n_jobs"]
    )
    seconds = time.perf_counter() - start
    busy_after = _machine_busy_s()
    cpu_self = _cpu_s(resource.RUSAGE_SELF) - cpu_before
    # peaks since exec of this process and of its live workers; ru_maxrss would
    # also count the memory of the benchmark process this one was spawned from
    peak_self = _hwm_mb()
    try:
        peak_children = [_hwm_mb(pid) for pid in _descendants()]
    except OSError:
        peak_children = [None]
    try:  # reap the joblib workers so that RUSAGE_CHILDREN covers them
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    except Exception:  # the workers' memory is then unknown (reported as 0)
        pass
    cpu = cpu_self + _cpu_s(resource.RUSAGE_CHILDREN)
    others = None
    if busy_before is not None and busy_after is not None:
        others = max(busy_after - busy_before - cpu, 0.0)
    wanted = {(g, n) for g, n in params["cells"]}
    cells = [
        [r.group, int(r.n), r.metric, r.estimator, r.mse, r.bias, r.variance]
        for r in frame.itertuples(index=False)
        if (str(r.group), int(r.n)) in wanted
    ]
    if peak_self is None or not peak_children or None in peak_children:
        # no /proc: upper bounds from getrusage (n_jobs x the largest child)
        peak_self = _maxrss_mb(resource.RUSAGE_SELF)
        peak_children = [_maxrss_mb(resource.RUSAGE_CHILDREN)] * params["n_jobs"]
    return {
        "seconds": seconds,
        "peak_self_mb": peak_self,
        "peak_children_mb": peak_children,
        "cpu_s": cpu,
        "others_cpu_s": others,
        "n_rows": len(frame),
        "cells": cells,
    }


def run_exact_in_child(sizes, metrics, cells, n_jobs=N_JOBS):
    """The exact experiment in a fresh Python process (see :func:`child_exact`)."""
    params = {
        "sizes": list(sizes),
        "metrics": list(metrics),
        "cells": [list(c) for c in cells],
        "n_jobs": n_jobs,
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(_common.BENCH_DIR), json.dumps(params)],
        capture_output=True,
        text=True,
        cwd=_common.BENCH_DIR,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"the exact experiment failed in its subprocess:\n{proc.stderr[-4000:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- checks -----------------------------------------------------------------------
def _z(a, b, se):
    """``|a - b| / se`` (0 when equal, inf when se is 0 and they differ)."""
    if np.isnan(a) and np.isnan(b):
        return 0.0
    diff = abs(a - b)
    if diff <= 1e-12 * max(1.0, abs(b)):
        return 0.0
    return diff / se if se > 0 else np.inf


def check_exact_vs_baseline(label, n, exact_rows, base):
    """Exact ``mse`` and ``p_undefined`` within 5 SE of the baseline's; worst z."""
    worst = 0.0
    for (metric, est), (mse, _, _, p_undef, mse_se) in base.items():
        row = exact_rows[(label, n, metric, est)]
        z = _z(mse, float(row.mse), mse_se)
        _common.check(
            z <= SE_TOL,
            f"{label} n={n} {metric} {est}: exact mse {float(row.mse)!r} vs numpy "
            f"Monte Carlo {mse!r} (SE {mse_se:.3g}): {z:.1f} SE apart",
        )
        p = float(row.p_undefined)
        se_p = np.sqrt(max(p * (1 - p), 1 / N_RESAMPLES) / N_RESAMPLES)
        zp = _z(p_undef, p, se_p)
        _common.check(
            zp <= SE_TOL,
            f"{label} n={n} {metric} {est}: exact p_undefined {p!r} vs numpy Monte "
            f"Carlo {p_undef!r}: {zp:.1f} SE apart",
        )
        worst = max(worst, z, zp)
    return worst


def _others(child):
    """``"; other processes X s CPU meanwhile"``, if the machine's CPU time is known."""
    if child.get("others_cpu_s") is None:
        return ""
    return f"; other processes {child['others_cpu_s']:.1f} s CPU meanwhile"


def check_full_run(child, expected_rows, exact_cells):
    """The full exact run has every row and reproduces the cells computed alone."""
    _common.check(
        child["n_rows"] == expected_rows,
        f"exact experiment: {child['n_rows']} rows, expected {expected_rows}",
    )
    for group, n, metric, est, *values in child["cells"]:
        row = exact_cells[(group, n, metric, est)]
        for got, want in zip(values, (row.mse, row.bias, row.variance)):
            _common.check(
                (np.isnan(got) and np.isnan(want))
                or abs(got - want) <= MATCH_TOL * max(1.0, abs(want)),
                f"exact {group} n={n} {metric} {est}: {got!r} in the full run vs "
                f"{want!r} alone",
            )


def _fmt_sizes(sizes):
    sizes = list(sizes)
    if len(sizes) > 3 and sizes == list(range(sizes[0], sizes[-1] + 1)):
        return f"n={sizes[0]}..{sizes[-1]}"
    if len(sizes) > 3:
        step = sizes[1] - sizes[0]
        if sizes == list(range(sizes[0], sizes[-1] + 1, step)):
            return f"n={sizes[0]}..{sizes[-1]} step {step}"
    return "n=" + ",".join(str(n) for n in sizes)


def baseline_cells(labels, sizes, k):
    """``k`` (group, size) cells spread over the groups and (midpoints of) sizes."""
    sizes = list(sizes)
    return [
        (
            str(labels[(i * len(labels)) // k]),
            int(sizes[int((i + 0.5) * len(sizes) / k)]),
        )
        for i in range(k)
    ]


def per_metric_engine():
    """A context in which ``downsampling_experiment`` runs the reference exact
    engine: each metric's formula and power sums evaluated on their own, for
    each group separately with a reference-per-group estimator."""
    import contextlib

    _common.ensure_package_importable()
    from sklearn_smallfair.model_selection import _exact_reference, _schedule

    @contextlib.contextmanager
    def swapped():
        fast = _schedule._exact_task
        _schedule._exact_task = _exact_reference._exact_task_per_metric
        try:
            yield
        finally:
            _schedule._exact_task = fast

    return swapped()


def engine_row(counts, reference, metrics, cfg, log):
    """The exact engine (values shared between groups, sums between metrics and
    estimators) against the per-metric evaluation, interleaved, one process."""
    sizes = list(cfg["engine_sizes"])

    def ours_engine():
        return ours(counts, reference, sizes, metrics, ESTIMATORS, "exact")

    def per_metric():
        with per_metric_engine():
            return ours_engine()

    timed = _common.interleaved(per_metric, ours_engine, cfg["pairs_engine"])
    cols = ["mse", "bias", "variance", "p_undefined"]
    got = timed["ours_result"][cols].to_numpy()
    want = timed["baseline_result"][cols].to_numpy()
    diff = float(np.nanmax(np.abs(got - want)))
    _common.check(
        np.array_equal(np.isnan(got), np.isnan(want)) and diff <= ENGINE_TOL,
        f"exact engine vs per-metric evaluation: largest difference {diff:.3g} "
        f"(allowed {ENGINE_TOL:g})",
    )
    log(
        f"[{NAME}] exact engine {_fmt_sizes(sizes)}, n_jobs=1: {timed['ours_s']:.2f} "
        f"s vs per-metric evaluation {timed['baseline_s']:.2f} s, "
        f"{timed['ratio']:.2f}x (median of {len(timed['ratios'])} interleaved "
        f"pairs, load {timed['load']}); largest difference {diff:.2g}"
    )
    return _common.make_row(
        f"downsampling exact engine {len(counts)} groups x {_fmt_sizes(sizes)} x "
        f"{len(metrics)} metrics x {len(ESTIMATORS)} est.",
        timed["ours_s"],
        "reference engine: per-metric evaluation",
        timed["baseline_s"],
        ratio=timed["ratio"],
        status="INFO",
        notes=(
            "n_jobs=1, one process; baseline: the same blocks and rows, each "
            "metric's formula and power sums evaluated on their own and each "
            "group's Cross-Prior Smoothing sums by bincount "
            "(_exact_task_per_metric); median of "
            f"{len(timed['ratios'])} interleaved pairs; results equal within "
            f"{diff:.2g}"
        ),
        ours_times=timed["ours_s"],
        pair_ratios=timed["ratios"],
        sizes=sizes,
        max_abs_difference=diff,
    )


# --- the benchmark ----------------------------------------------------------------
def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    _common.ensure_package_importable()
    counts, reference = published_groups()
    labels = [str(g) for g in counts.index]
    metrics = all_metrics()
    missing = sorted(set(metrics) - set(FORMULAS))
    _common.check(
        not missing, f"no baseline formula for the registry metric(s) {missing}"
    )
    n_est = len(ESTIMATORS)
    full_sizes = list(FULL["exact_sizes"])
    n_cells = len(labels) * len(full_sizes)
    log(
        f"[{NAME}] {len(labels)} published groups, {len(metrics)} single-group "
        f"metrics, {n_est} estimators; full experiment: {n_cells:,} (group, size) "
        f"cells"
    )
    rows = []

    # (1) baseline cells: numpy Monte Carlo (timed) vs exact (correctness)
    cells = baseline_cells(labels, full_sizes, cfg["baseline_cells"])
    # untimed warm-up (first allocations of the 1,000,000-draw arrays)
    numpy_montecarlo(
        counts.iloc[0].to_numpy(),
        reference.iloc[0].to_numpy(),
        cells[0][1],
        metrics[:1],
        ESTIMATORS[-1:],
        n_resamples=N_RESAMPLES,
        seed=SEED,
    )
    cell_times, exact_cells, worst_z = [], {}, 0.0
    for label, n in cells:
        g = labels.index(label)
        exact = _lookup(
            ours(
                counts.loc[[label]],
                reference.loc[[label]],
                [n],
                metrics,
                ESTIMATORS,
                "exact",
            )
        )
        exact_cells.update(exact)
        secs, _, base = _common.best_of(
            lambda g=g, n=n: numpy_montecarlo(
                counts.iloc[g].to_numpy(),
                reference.iloc[g].to_numpy(),
                n,
                metrics,
                ESTIMATORS,
                n_resamples=N_RESAMPLES,
                seed=[SEED, g, n],
            ),
            1,
        )
        cell_times.append(secs)
        worst_z = max(worst_z, check_exact_vs_baseline(label, n, exact, base))
        log(
            f"[{NAME}] numpy Monte Carlo {label} n={n} ({len(metrics)} metrics x "
            f"{n_est} estimators, {N_RESAMPLES:,} draws): {secs:.2f} s"
        )
    per_cell = float(np.mean(cell_times))
    base_total = per_cell * n_cells
    log(
        f"[{NAME}] exact vs numpy Monte Carlo on {len(cells)} cell(s): within "
        f"{worst_z:.2f} SE; baseline extrapolated to {n_cells:,} cells: "
        f"{base_total:,.0f} s"
    )

    # (1) the exact experiment, each run in a fresh process
    sizes = list(cfg["exact_sizes"])
    check_cells = [c for c in cells if c[1] in sizes]
    runs = []
    for _ in range(cfg["repeats_experiment"]):
        child = run_exact_in_child(sizes, metrics, check_cells)
        check_full_run(
            child, len(labels) * len(sizes) * len(metrics) * n_est, exact_cells
        )
        runs.append(child)
        log(
            f"[{NAME}] exact experiment {len(labels)} groups x {_fmt_sizes(sizes)}, "
            f"n_jobs={N_JOBS}: {child['seconds']:.1f} s wall, "
            f"{child['cpu_s']:.1f} s CPU{_others(child)}; peak RSS main "
            f"{child['peak_self_mb']:.0f} MB, children "
            + " + ".join(f"{m:.0f}" for m in child["peak_children_mb"])
            + " MB"
        )
    child = min(runs, key=lambda r: r["seconds"])
    exact_s = child["seconds"]
    cpu_s = child["cpu_s"]
    tree = max(runs, key=lambda r: r["peak_self_mb"] + sum(r["peak_children_mb"]))
    peak_mb = tree["peak_self_mb"] + sum(tree["peak_children_mb"])
    peak_detail = (
        f"main {tree['peak_self_mb']:.0f} MB + children "
        + " + ".join(f"{m:.0f}" for m in tree["peak_children_mb"])
        + " MB"
    )
    is_full = sizes == full_sizes
    met = exact_s < TARGET_EXACT_S and peak_mb < TARGET_PEAK_GB * 1024
    extrapolation = (
        f"baseline extrapolated linearly in cells: {per_cell:.2f} s per cell (mean "
        f"of {len(cells)} measured: "
        + ", ".join(f"{g} n={n}" for g, n in cells)
        + f") x {n_cells:,} cells, single process"
    )
    if is_full:
        base_s, base_name = base_total, "numpy MC 1e6 draws/cell (extrapolated)"
    else:
        base_s, base_name = None, None
    rows.append(
        _common.make_row(
            f"downsampling exact {len(labels)} groups x {_fmt_sizes(sizes)} x "
            f"{len(metrics)} metrics x {n_est} est.",
            exact_s,
            base_name,
            base_s,
            target=(
                f"< {TARGET_EXACT_S:g} s, < {TARGET_PEAK_GB:g} GB" if is_full else "-"
            ),
            status=("PASS" if met else "MISS") if is_full else "INFO",
            notes=(
                f"best of {len(runs)} cold run(s), each in a fresh process, "
                f"n_jobs={N_JOBS} (in the best: {cpu_s:.0f} s CPU{_others(child)}); "
                f"peak RSS <= {peak_mb:,.0f} MB (sum of the processes' peaks: "
                f"{peak_detail}); {len(metrics)} metrics (the "
                f"target names 15); "
                + (
                    extrapolation
                    if is_full
                    else f"quick mode (subset of sizes; the {TARGET_EXACT_S:g} s "
                    f"target is for n=5..150); full baseline would be "
                    f"{base_total:,.0f} s ({extrapolation})"
                )
                + f"; exact within {worst_z:.1f} SE of the baseline's mse on "
                f"those cells"
            ),
            n_groups=len(labels),
            sizes=[sizes[0], sizes[-1]],
            n_metrics=len(metrics),
            n_estimators=n_est,
            n_jobs=N_JOBS,
            cpu_s=cpu_s,
            peak_rss_mb=peak_mb,
            peak_main_mb=tree["peak_self_mb"],
            peak_children_mb=tree["peak_children_mb"],
            ours_times=[r["seconds"] for r in runs],
            cpu_times=[r["cpu_s"] for r in runs],
            others_cpu_times=[r["others_cpu_s"] for r in runs],
            baseline_cells=[list(c) for c in cells],
            baseline_cell_s=cell_times,
            baseline_extrapolated_s=base_total,
        )
    )

    # (1b) the exact engine against the per-metric evaluation it replaced
    rows.append(engine_row(counts, reference, metrics, cfg, log))

    # (2) Monte Carlo at 1e6 draws per size: one group, mcc, CPS lam=10
    mc_sizes = list(cfg["mc_sizes"])
    g = labels.index(MC_GROUP)
    group_counts, group_ref = counts.loc[[MC_GROUP]], reference.loc[[MC_GROUP]]
    est_name = MC_ESTIMATOR[0]

    def ours_mc():
        return ours(
            group_counts,
            group_ref,
            mc_sizes,
            [MC_METRIC],
            [MC_ESTIMATOR],
            "montecarlo",
            n_resamples=N_RESAMPLES,
            random_state=SEED,
        )

    def ours_exact():
        return ours(
            group_counts, group_ref, mc_sizes, [MC_METRIC], [MC_ESTIMATOR], "exact"
        )

    def baseline_mc():
        return {
            n: numpy_montecarlo(
                counts.iloc[g].to_numpy(),
                reference.iloc[g].to_numpy(),
                n,
                [MC_METRIC],
                [MC_ESTIMATOR],
                n_resamples=N_RESAMPLES,
                seed=[SEED, g, n],
            )[(MC_METRIC, est_name)]
            for n in mc_sizes
        }

    timed = _common.interleaved(baseline_mc, ours_mc, cfg["pairs_mc"])
    mc = _lookup(timed["ours_result"])
    base = timed["baseline_result"]
    base_mc_s = timed["baseline_s"]
    exact = _lookup(ours_exact())
    worst = {"ours-baseline": 0.0, "ours-exact": 0.0, "baseline-exact": 0.0}
    for n in mc_sizes:
        key = (MC_GROUP, n, MC_METRIC, est_name)
        m_ours, se_ours = float(mc[key].mse), float(mc[key].mse_se)
        m_base, se_base = base[n][0], base[n][4]
        m_exact = float(exact[key].mse)
        for pair, z in (
            ("ours-baseline", _z(m_ours, m_base, np.hypot(se_ours, se_base))),
            ("ours-exact", _z(m_ours, m_exact, se_ours)),
            ("baseline-exact", _z(m_base, m_exact, se_base)),
        ):
            _common.check(
                z <= SE_TOL,
                f"Monte Carlo {MC_GROUP} n={n} {MC_METRIC} {est_name}: {pair} mse "
                f"{z:.1f} SE apart (ours {m_ours!r} +- {se_ours:.3g}, baseline "
                f"{m_base!r} +- {se_base:.3g}, exact {m_exact!r})",
            )
            worst[pair] = max(worst[pair], z)
    mc_s = timed["ours_s"]
    ex_s, ex_times, _ = _common.best_of(ours_exact, cfg["repeats_exact"])
    total_draws = len(mc_sizes) * N_RESAMPLES
    ours_rate, base_rate = total_draws / mc_s, total_draws / base_mc_s
    log(
        f"[{NAME}] Monte Carlo {MC_GROUP} {MC_METRIC} {est_name} "
        f"{_fmt_sizes(mc_sizes)}, {N_RESAMPLES:,} draws/size: ours {mc_s:.2f} s "
        f"({ours_rate:,.0f} draws/s), numpy {base_mc_s:.2f} s ({base_rate:,.0f} "
        f"draws/s); exact {ex_s:.3f} s; worst |z|: "
        + ", ".join(f"{k} {v:.2f}" for k, v in worst.items())
    )
    ratio = timed["ratio"]
    rows.append(
        _common.make_row(
            f"downsampling montecarlo {MC_METRIC} {est_name} {_fmt_sizes(mc_sizes)}",
            mc_s,
            "numpy: one rng.multinomial + CPS + MCC per size",
            base_mc_s,
            ratio=ratio,
            target=f">= {TARGET_MC_RATIO:g}x",
            status="PASS" if ratio >= TARGET_MC_RATIO else "MISS",
            notes=(
                f"{MC_GROUP}, {N_RESAMPLES:,} draws per size, n_jobs=1: "
                f"{ours_rate:,.0f} vs {base_rate:,.0f} draws/s; mse within "
                f"{worst['ours-baseline']:.1f} combined SE of the baseline's, "
                f"{worst['ours-exact']:.1f} (ours) and {worst['baseline-exact']:.1f} "
                f"(baseline) SE of the exact mse; median of "
                f"{len(timed['ratios'])} interleaved pairs"
            ),
            ours_times=mc_s,
            pair_ratios=timed["ratios"],
            sizes=mc_sizes,
            n_resamples=N_RESAMPLES,
            draws_per_s=ours_rate,
            baseline_draws_per_s=base_rate,
        )
    )

    # (3) exact for the same group, metric, estimator and sizes
    rows.append(
        _common.make_row(
            f"downsampling exact {MC_METRIC} {est_name} {_fmt_sizes(mc_sizes)}",
            ex_s,
            "numpy: one rng.multinomial + CPS + MCC per size",
            base_mc_s,
            status="INFO",
            notes=(
                f"{MC_GROUP}, n_jobs=1; no Monte Carlo error, vs "
                f"{N_RESAMPLES:,} draws per size"
            ),
            ours_times=ex_times,
            sizes=mc_sizes,
        )
    )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_downsampling.py [--quick]``."""
    return _common.script_main(
        run,
        __doc__,
        "exact experiment on n=5..30 only, one baseline cell, Monte Carlo at "
        "n=5,50,150",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
