"""Benchmark: the audit in one pass, against the audit before it (same run).

:func:`sklearn_smallfair.audit.audit_predictions` counts the rows once and builds
its table, the MATCH tests, the separation test, the margins of intersectional
groups, the intervals, the detectable gaps and the verdicts from these counts.
Before, the audit re-validated the counts in every function it called, fed the
separation test four fabricated rows per group and counted them again, recounted
the margins from the rows, and computed the reference range twice.

* ours: ``audit_predictions`` of the rows (metrics ``tpr``, ``fpr``, ``ppv``,
  default smoothing, both tests, 95 % intervals), this checkout;
* baseline: the same call on the same rows with the package as it was at commit
  ``BASELINE_COMMIT`` (extracted with ``git archive`` into a temporary folder and
  run in a child process that stays alive, so no import time is counted);

timed interleaved, pair by pair, in the same run (ratio = baseline time / our
time, median of the per-pair ratios; above 1 the one-pass audit is faster).
Before timing, the raw metric values of the two audits are checked equal. Run on
12 and 60 groups. Without ``git`` or the commit (a shallow clone), the rows say
SKIP. Also reported: the audit in units of its cheapest part, ``group_metrics``
of the same rows.

Full mode: 20,000 rows, 5 pairs; ``--quick``: 3,000 rows, 3 pairs.
Run ``python benchmarks/bench_audit_one_pass.py [--quick]`` or through
``run.py``.
"""

import inspect
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "audit_one_pass"
METRICS = ("tpr", "fpr", "ppv")
FULL = {"n_rows": 20_000, "groups": (12, 60), "repeats": 5}
QUICK = {"n_rows": 3_000, "groups": (12, 60), "repeats": 3}
SEED = 20261128
#: The audit before the one-pass change.
BASELINE_COMMIT = "e70bc55f0e149460e1ee26499dcb7e5ca01c5bb5"

#: The child process: the package of ``BASELINE_COMMIT`` on ``sys.path``; reads
#: one line per call ("n_rows n_groups") and answers with a JSON line (seconds
#: and raw metric values).
_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
import sklearn_smallfair
from sklearn_smallfair.audit import audit_predictions
assert sklearn_smallfair.__file__.startswith(sys.argv[1]), sklearn_smallfair.__file__
METRICS = json.loads(sys.argv[2])
SEED = int(sys.argv[3])

def make_data(n_rows, n_groups, seed=SEED):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=n_rows)
    y_true = (rng.random(n_rows) < 0.4).astype(np.int64)
    y_pred = np.where(rng.random(n_rows) < 0.8, y_true, 1 - y_true)
    names = np.array([f"group {k:03d}" for k in range(n_groups)], dtype=object)
    return y_true, y_pred, names[ids]

print("ready", flush=True)
for line in sys.stdin:
    n_rows, n_groups = map(int, line.split())
    y_true, y_pred, groups = make_data(n_rows, n_groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        report = audit_predictions(y_true, y_pred, sensitive_features=groups,
                                   metrics=list(METRICS), ci=0.95)
        seconds = time.perf_counter() - start
    values = {m: [None if v != v else float(v) for v in report.frame[m]]
              for m in METRICS}
    print(json.dumps({"seconds": seconds, "values": values}), flush=True)
"""


class _Before:
    """The audit at ``BASELINE_COMMIT``, in a child process; ``None`` if unavailable."""

    def __init__(self):
        self.folder = tempfile.TemporaryDirectory()
        root = Path(__file__).resolve().parents[1]
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", BASELINE_COMMIT, "sklearn_smallfair"],
            capture_output=True,
            check=True,
        )
        subprocess.run(
            ["tar", "-x", "-C", self.folder.name], input=archive.stdout, check=True
        )
        self.child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CHILD,
                self.folder.name,
                json.dumps(METRICS),
                str(SEED),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=self.folder.name,
        )
        ready = self.child.stdout.readline().strip()
        if ready != "ready":
            self.close()
            raise RuntimeError("the baseline's child process did not start")

    def __call__(self, n_rows, n_groups):
        self.child.stdin.write(f"{n_rows} {n_groups}\n")
        self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def close(self):
        if self.child.poll() is None:
            self.child.stdin.close()
            self.child.wait(timeout=60)
        self.folder.cleanup()


def _start_before(log):
    try:
        return _Before()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as error:
        log(f"[{NAME}] no baseline (git archive of {BASELINE_COMMIT[:7]}): {error}")
        return None


def make_data(n_rows, n_groups, seed=SEED):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=n_rows)
    y_true = (rng.random(n_rows) < 0.4).astype(np.int64)
    y_pred = np.where(rng.random(n_rows) < 0.8, y_true, 1 - y_true)
    names = np.array([f"group {k:03d}" for k in range(n_groups)], dtype=object)
    return y_true, y_pred, names[ids]


def _level(func, level=0.95):
    """The interval keywords of ``func``: ``confidence_level`` and, where
    ``func`` takes one, ``interval_method="auto"``."""
    params = inspect.signature(func).parameters
    out = {"confidence_level": level}
    if "interval_method" in params:
        out["interval_method"] = "auto"
    return out


def _forget():
    """Empty the memo of the two-sample critical values, so that every timed
    audit computes its laws as a first audit of these counts would."""
    from sklearn_smallfair.stats import _two_sample

    _two_sample._critical_cached.cache_clear()


def ours(y_true, y_pred, groups):
    """The whole audit of the rows, as a first audit of these counts."""
    from sklearn_smallfair.audit import audit_predictions

    _forget()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_predictions(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics=list(METRICS),
            **_level(audit_predictions),
        )


def baseline(y_true, y_pred, groups):
    """The per-group table alone: ``group_metrics`` of the rows."""
    from sklearn_smallfair.metrics import group_metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return group_metrics(
            y_true,
            y_pred,
            sensitive_features=groups,
            metrics=list(METRICS),
            zero_division=np.nan,
            random_state=0,
            **_level(group_metrics),
        )


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    _common.ensure_package_importable()
    cfg = QUICK if quick else FULL
    n_rows = cfg["n_rows"]
    rows = []
    before = _start_before(log)
    try:
        for n_groups in cfg["groups"]:
            log(
                f"[{NAME}] {n_rows:,} rows, {n_groups} groups, "
                f"metrics {', '.join(METRICS)}"
            )
            rows.extend(_one_size(n_rows, n_groups, cfg["repeats"], before, log))
    finally:
        if before is not None:
            before.close()
    return rows


def _one_size(n_rows, n_groups, repeats, before, log):
    y_true, y_pred, groups = make_data(n_rows, n_groups)
    data = (y_true, y_pred, groups)
    report = ours(*data)
    table = baseline(*data)
    for m in METRICS:
        _common.check(
            np.array_equal(
                report.frame[m].to_numpy(dtype=float),
                table[m].to_numpy(dtype=float),
                equal_nan=True,
            ),
            f"the audit's {m} differs from group_metrics' on {n_groups} groups",
        )
    rows = []
    label = f"whole audit, {n_rows:,} rows x {n_groups} groups"
    if before is None:
        rows.append(
            _common.make_row(
                label,
                None,
                f"the audit at {BASELINE_COMMIT[:7]}",
                None,
                status="SKIP",
                notes="git or the baseline commit is not available",
            )
        )
    else:
        old = before(n_rows, n_groups)  # warm-up, and the values to compare
        for m in METRICS:
            values = np.array([np.nan if v is None else v for v in old["values"][m]])
            _common.check(
                np.array_equal(
                    values, report.frame[m].to_numpy(dtype=float), equal_nan=True
                ),
                f"the audits before and after differ in {m} on {n_groups} groups",
            )
        pairs, ours_s, base_s = [], [], []
        for k in range(repeats):
            first_ours = bool(k % 2)
            if first_ours:
                start = time.perf_counter()
                ours(*data)
                t_ours = time.perf_counter() - start
            t_base = before(n_rows, n_groups)["seconds"]
            if not first_ours:
                start = time.perf_counter()
                ours(*data)
                t_ours = time.perf_counter() - start
            pairs.append(t_base / t_ours)
            ours_s.append(t_ours)
            base_s.append(t_base)
        ratio = float(np.median(pairs))
        log(
            f"[{NAME}] {n_groups} groups: audit {np.median(ours_s):.3f} s, before "
            f"{np.median(base_s):.3f} s, ratio {ratio:.2f}"
        )
        rows.append(
            _common.make_row(
                label,
                float(np.median(ours_s)),
                f"the audit at {BASELINE_COMMIT[:7]} (same rows, same run)",
                float(np.median(base_s)),
                ratio=ratio,
                status="INFO",
                notes=f"one pass: {ratio:.2f}x the speed of the audit before",
                ratios=pairs,
                n_rows=n_rows,
                n_groups=n_groups,
            )
        )
    timing = _common.interleaved(
        lambda data=data: baseline(*data), lambda data=data: ours(*data), repeats
    )
    rows.append(
        _common.make_row(
            f"{label}, in tables",
            timing["ours_s"],
            "group_metrics alone (same rows, 95% intervals)",
            timing["baseline_s"],
            ratio=timing["ratio"],
            status="INFO",
            notes=f"the audit costs {1 / timing['ratio']:.1f} x the table",
            ratios=timing["ratios"],
            load=timing["load"],
            n_rows=n_rows,
            n_groups=n_groups,
        )
    )
    return rows


def main(argv=None):
    return _common.script_main(run, __doc__, "3,000 rows, 3 repeats", argv)


if __name__ == "__main__":
    sys.exit(main())
