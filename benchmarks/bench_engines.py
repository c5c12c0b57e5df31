"""Benchmark: counting inside dataframe engines (``data=``) against the engine's
own GROUP BY.

With ``data=`` a frame that is not pandas is counted by its own engine in one
grouped aggregation, and only the table of counts (one row per group, true label
and predicted label) comes back to Python. The floor of any such audit is the
engine running that GROUP BY and handing over its rows: this benchmark measures
how close the package comes to it.

DuckDB on Parquet files:

* data: a Parquet dataset written by DuckDB itself (``COPY ... TO``, 8 files;
  ``--quick``: 4 files), 1,000,000,000 rows (``--quick``: 1,000,000) with an
  integer group column ``g`` (12 groups of unequal sizes, 4 % to 29 % of the
  rows) and integer 0/1 labels ``y`` and ``y_hat`` (the predictions 75-88 %
  accurate depending on the group). The values come from a cheap deterministic
  32-bit hash of the row number (:func:`hash_columns`, the same formula in SQL
  and numpy), so generating the data is fast and reproducible. The files are
  cached in a folder of the system temp dir keyed by size and seed
  (``smallfair_bench_engines/parquet_n<N>_s<seed>``), so reruns reuse them;
* ours: ``audit_predictions("y", "y_hat", sensitive_features="g",
  data=duckdb.read_parquet(glob))`` (the whole audit: counting, metrics, MATCH
  tests, detectable gaps, the report object) and, on its own row,
  ``confusion_counts(..., data=duckdb.read_parquet(glob))``;
* baseline (the floor): ``SELECT g, y, y_hat, count(*) FROM read_parquet(glob)
  GROUP BY ALL`` run by DuckDB and fetched to Python (``fetchall``).

The three calls are timed in interleaved rounds (:func:`_common.interleaved_rounds`,
the order rotated each round; ratio = baseline time / our time, median of the
per-round ratios), after a correctness check: the counts of ours (from
``confusion_counts`` and from the audit's table) equal the baseline's GROUP BY,
and in ``--quick`` mode also a numpy count of the same rows read into memory.
A context row times, in the same rounds, the audit of the table of counts alone
(``audit_predictions(counts=...)``): the audit's statistics, which do not depend
on where the rows were. A further row measures the peak resident memory of
the whole audit in a fresh Python process (its ``VmHWM`` from
``/proc/self/status``, else its ``ru_maxrss``, which on Linux may include the
parent's size at ``fork``; imports included) with its cold wall time.

Targets (full mode): the audit in under 60 s, a ratio baseline/ours of at least
1/1.5 (ours within 1.5x of the bare GROUP BY) for the audit and for
``confusion_counts``, and a peak memory of the audit under 1 GB.

PySpark:

* data: ``spark.range(N).selectExpr(...)`` with the same hash formula,
  10,000,000 rows (``--quick``: 100,000), cached and materialized before timing
  so both sides count the same in-memory data (Spark ``local[2]``);
* ours: ``confusion_counts("y", "y_hat", sensitive_features="g", data=sdf)``;
* baseline: ``sdf.groupBy("g", "y", "y_hat").count().collect()``.

Correctness: both give the counts of numpy applied to the same formula.
Target: a ratio baseline/ours of at least 1/1.5 (interleaved pairs).

Engines that are not installed (or, for Spark, that do not start, e.g. without
Java) are skipped with a log line and give no row. Full mode takes about 3 min
once the Parquet files exist (generating the 10^9 rows, 769 MB, took 32 s more,
once, on 2 cores); ``--quick`` about 15 s, most of it Spark's start-up.
Run ``python benchmarks/bench_engines.py [--quick]`` or through ``run.py``.
"""

import importlib.util
import itertools
import json
import os
import shutil
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

_common.ensure_package_importable()

NAME = "engines"
FULL = {
    "parquet_rows": 10**9,
    "parquet_files": 8,
    "parquet_rounds": 5,
    "spark_rows": 10**7,
    "spark_pairs": 5,
}
QUICK = {
    "parquet_rows": 10**6,
    "parquet_files": 4,
    "parquet_rounds": 3,
    "spark_rows": 10**5,
    "spark_pairs": 2,
}
N_GROUPS = 12
SEED = 20261129
TARGET_RATIO = 1 / 1.5
TARGET_AUDIT_S = 60.0
TARGET_PEAK_BYTES = 10**9
MASK = 0xFFFFFFFF
GOLDEN = 2654435761  # Knuth's multiplicative constant
MIX = 0x45D9F3B  # the multiplier of a 32-bit integer hash (two rounds)


# ---------------------------------------------------------------------------
# the data: one formula, in numpy and in the engines' SQL
# ---------------------------------------------------------------------------


def hash_columns(start, stop, seed=SEED):
    """``g``, ``y``, ``y_hat`` of rows ``start..stop-1`` as numpy arrays.

    ``h`` is a 32-bit mix of the row number; group ``g = floor(12 u^2)`` with
    ``u`` uniform from the low 16 bits (unequal groups), ``y`` one bit of ``h``
    and ``y_hat`` equal to ``y`` except where eight further bits fall below
    ``30 + 3 g`` (out of 256). The engines compute the same in SQL.
    """
    i = np.arange(start, stop, dtype=np.uint64)
    m = np.uint64(MASK)
    x = (i * np.uint64(GOLDEN) + np.uint64(seed)) & m
    x = ((x ^ (x >> np.uint64(16))) * np.uint64(MIX)) & m
    x = ((x ^ (x >> np.uint64(16))) * np.uint64(MIX)) & m
    h = x ^ (x >> np.uint64(16))
    u = h & np.uint64(0xFFFF)
    g = ((u * u * np.uint64(N_GROUPS)) >> np.uint64(32)).astype(np.int64)
    y = ((h >> np.uint64(16)) & np.uint64(1)).astype(np.int64)
    flip = ((h >> np.uint64(20)) & np.uint64(255)).astype(np.int64) < 30 + 3 * g
    return g, y, y ^ flip.astype(np.int64)


def _duckdb_select(start, stop, seed=SEED):
    """DuckDB SQL of :func:`hash_columns` (``xor``, ``>>``, ``&``)."""
    step = f"(xor(x, x >> 16) * {MIX}) & {MASK}"
    return f"""
        WITH a AS (SELECT (i * {GOLDEN} + {seed}) & {MASK} AS x
                   FROM range({start}, {stop}) t(i)),
             b AS (SELECT {step} AS x FROM a),
             c AS (SELECT {step} AS x FROM b),
             d AS (SELECT xor(x, x >> 16) AS h FROM c),
             e AS (SELECT ((h & 65535) * (h & 65535) * {N_GROUPS}) >> 32 AS g,
                          (h >> 16) & 1 AS y, (h >> 20) & 255 AS r FROM d)
        SELECT CAST(g AS INTEGER) AS g, CAST(y AS INTEGER) AS y,
               CAST(CASE WHEN r < 30 + 3 * g THEN 1 - y ELSE y END AS INTEGER)
                   AS y_hat
        FROM e
    """


def _spark_frame(spark, n_rows, seed=SEED):
    """The Spark DataFrame of :func:`hash_columns` (``^``, ``shiftright``)."""

    def step(x):
        return f"(({x} ^ shiftright({x}, 16)) * {MIX}) & {MASK}"

    return (
        spark.range(n_rows)
        .selectExpr(f"(id * {GOLDEN} + {seed}) & {MASK} AS x")
        .selectExpr(f"{step('x')} AS x")
        .selectExpr(f"{step('x')} AS x")
        .selectExpr("x ^ shiftright(x, 16) AS h")
        .selectExpr(
            f"shiftright((h & 65535) * (h & 65535) * {N_GROUPS}, 32) AS g",
            "shiftright(h, 16) & 1 AS y",
            "shiftright(h, 20) & 255 AS r",
        )
        .selectExpr(
            "CAST(g AS INT) AS g",
            "CAST(y AS INT) AS y",
            "CAST(CASE WHEN r < 30 + 3 * g THEN 1 - y ELSE y END AS INT) AS y_hat",
        )
    )


def numpy_counts(g, y, y_hat):
    """The ``(12, 4)`` table ``TP, FN, FP, TN`` of the rows, by ``np.bincount``."""
    cell = 4 * np.asarray(g, np.int64) + 2 * (1 - np.asarray(y, np.int64))
    cell += 1 - np.asarray(y_hat, np.int64)
    return np.bincount(cell, minlength=4 * N_GROUPS).reshape(N_GROUPS, 4)


def formula_counts(n_rows, seed=SEED, block=2**24):
    """:func:`numpy_counts` of rows ``0..n_rows-1`` of the formula, by blocks."""
    total = np.zeros((N_GROUPS, 4), np.int64)
    for start in range(0, n_rows, block):
        total += numpy_counts(*hash_columns(start, min(n_rows, start + block), seed))
    return total


def rows_to_counts(rows):
    """The ``(12, 4)`` table of ``(g, y, y_hat, count)`` tuples."""
    table = np.zeros((N_GROUPS, 4), np.int64)
    for g, y, y_hat, n in rows:
        table[int(g), 2 * (1 - int(y)) + (1 - int(y_hat))] += int(n)
    return table


def _check_result(counts, want, what):
    groups, table = counts.groups, counts.counts
    _common.check(
        [int(v) for v in groups] == list(range(N_GROUPS)),
        f"{what}: groups {list(groups)} instead of 0..{N_GROUPS - 1}",
    )
    _common.check(
        table.dtype == np.int64, f"{what}: counts of dtype {table.dtype}, not int64"
    )
    _common.check(np.array_equal(table, want), f"{what}: counts differ")


# ---------------------------------------------------------------------------
# DuckDB on Parquet
# ---------------------------------------------------------------------------


def dataset_dir(n_rows, seed=SEED):
    """The cached dataset's folder (in the system temp dir)."""
    root = Path(tempfile.gettempdir()) / "smallfair_bench_engines"
    return root / f"parquet_n{n_rows}_s{seed}"


def make_parquet(n_rows, n_files, *, seed=SEED, log=print):
    """The Parquet dataset of ``n_rows`` rows (written once, then reused);
    return the glob of its files."""
    import duckdb

    folder = dataset_dir(n_rows, seed)
    glob = str(folder / "*.parquet")
    if (folder / "COMPLETE").is_file():
        log(f"[{NAME}] Parquet dataset of {n_rows:,} rows reused: {folder}")
        return glob
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    start = time.perf_counter()
    con = duckdb.connect()
    try:
        bounds = np.linspace(0, n_rows, n_files + 1).astype(np.int64)
        for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            path = partial / f"part-{k:03d}.parquet"
            con.execute(
                f"COPY ({_duckdb_select(int(lo), int(hi), seed)}) TO '{path}' "
                f"(FORMAT parquet)"
            )
    finally:
        con.close()
    size = sum(p.stat().st_size for p in partial.glob("*.parquet"))
    (partial / "COMPLETE").write_text(f"{n_rows} rows, seed {seed}\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    log(
        f"[{NAME}] Parquet dataset of {n_rows:,} rows in {n_files} files "
        f"({size / 1e6:,.0f} MB) generated by DuckDB in "
        f"{time.perf_counter() - start:.1f} s: {folder}"
    )
    return glob


def _ours_counts(glob):
    import duckdb

    from sklearn_smallfair.metrics import confusion_counts

    return confusion_counts(
        "y", "y_hat", sensitive_features="g", data=duckdb.read_parquet(glob)
    )


def _ours_audit(glob):
    import duckdb

    from sklearn_smallfair.audit import audit_predictions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_predictions(
            "y", "y_hat", sensitive_features="g", data=duckdb.read_parquet(glob)
        )


def _counts_frame(table):
    """The ``(12, 4)`` counts as the ``counts=`` frame of the audit."""
    import pandas as pd

    return pd.DataFrame(
        table,
        columns=["TP", "FN", "FP", "TN"],
        index=pd.Index(range(N_GROUPS), name="g"),
    )


def _audit_of_counts(frame):
    """The audit of the table of counts alone: its statistics, no rows read."""
    from sklearn_smallfair.audit import audit_predictions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_predictions(counts=frame)


def _duckdb_floor(glob):
    import duckdb

    return duckdb.sql(
        f"SELECT g, y, y_hat, count(*) FROM read_parquet('{glob}') GROUP BY ALL"
    ).fetchall()


def check_audit(report, want):
    """The audit's table (``n``, ``n_pos``, ``n_neg``, and TP and FP recovered
    from its TPR and FPR) agrees with the ``(12, 4)`` counts ``want``."""
    frame = report.frame
    _common.check(
        [int(v) for v in frame.index] == list(range(N_GROUPS)),
        f"the audit's groups are {list(frame.index)}",
    )
    tp, fn, fp, tn = want.T
    for column, expected in (
        ("n", want.sum(1)),
        ("n_pos", tp + fn),
        ("n_neg", fp + tn),
    ):
        _common.check(
            np.array_equal(frame[column].to_numpy(np.int64), expected),
            f"the audit's column {column} differs from the counts",
        )
    for metric, numerator, denominator in (("tpr", tp, tp + fn), ("fpr", fp, fp + tn)):
        got = np.rint(frame[metric].to_numpy(float) * denominator)
        _common.check(
            np.array_equal(got, numerator),
            f"the audit's {metric} differs from the counts",
        )


_CHILD = r"""
import json, resource, sys, time, warnings
if {path!r} not in sys.path and __import__("importlib.util").util.find_spec(
        "sklearn_smallfair") is None:
    sys.path.insert(0, {path!r})
start = time.perf_counter()
import duckdb
from sklearn_smallfair.audit import audit_predictions
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    report = audit_predictions("y", "y_hat", sensitive_features="g",
                               data=duckdb.read_parquet({glob!r}))
seconds = time.perf_counter() - start
hwm = None
try:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
except OSError:
    pass
scale = 1 if sys.platform == "darwin" else 1024
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
print(json.dumps({{"seconds": seconds, "vmhwm": hwm, "ru_maxrss": rss}}))
"""


def peak_memory(glob):
    """Peak resident memory (bytes) and wall time of the audit in a fresh
    process, with the source of the figure."""
    code = _CHILD.format(path=str(_common.REPO_ROOT), glob=glob)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the audit in a fresh process failed:\n{done.stderr}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["vmhwm"] is not None:
        return out["vmhwm"], out["seconds"], "VmHWM of the child"
    return out["ru_maxrss"], out["seconds"], "ru_maxrss of the child"


def run_duckdb(config, quick, log):
    try:
        import duckdb
    except ImportError:
        log(f"[{NAME}] duckdb is not installed: DuckDB rows skipped")
        return []
    n_rows = config["parquet_rows"]
    glob = make_parquet(n_rows, config["parquet_files"], log=log)

    # correctness, before timing (also warms the page cache)
    floor = rows_to_counts(_duckdb_floor(glob))
    _common.check(int(floor.sum()) == n_rows, f"GROUP BY counted {floor.sum():,} rows")
    _check_result(_ours_counts(glob), floor, "confusion_counts(data=DuckDB)")
    check_audit(_ours_audit(glob), floor)
    checked = "the GROUP BY's"
    if quick:
        arrays = duckdb.sql(f"SELECT g, y, y_hat FROM read_parquet('{glob}')")
        arrays = arrays.fetchnumpy()
        _common.check(
            np.array_equal(
                numpy_counts(arrays["g"], arrays["y"], arrays["y_hat"]), floor
            ),
            "GROUP BY counts differ from numpy's of the rows read into memory",
        )
        _common.check(
            np.array_equal(formula_counts(n_rows), floor),
            "the Parquet rows differ from the formula",
        )
        checked += ", numpy's on the rows read into memory and on the formula"

    table = _counts_frame(floor)
    rounds = _common.interleaved_rounds(
        {
            "floor": lambda: _duckdb_floor(glob),
            "counts": lambda: _ours_counts(glob),
            "audit": lambda: _ours_audit(glob),
            "statistics": lambda: _audit_of_counts(table),
        },
        config["parquet_rounds"],
    )
    _check_result(
        rounds["results"]["counts"],
        rows_to_counts(rounds["results"]["floor"]),
        "timed confusion_counts",
    )
    mode = " (full mode)" if quick else ""
    rows = []
    floor_label = "DuckDB SELECT g, y, y_hat, count(*) ... GROUP BY ALL, fetchall"
    for key, label in (
        ("audit", "audit_predictions"),
        ("counts", "confusion_counts"),
    ):
        timed = _common.versus(rounds, "floor", key)
        ratio = timed["ratio"]
        met = ratio >= TARGET_RATIO
        target = f">= {TARGET_RATIO:.2f}x"
        if key == "audit":
            target += f", < {TARGET_AUDIT_S:.0f} s"
            met = met and timed["ours_s"] < TARGET_AUDIT_S
        status = "INFO" if quick else ("PASS" if met else "MISS")
        log(
            f"[{NAME}] DuckDB Parquet {n_rows:,} rows: {label} {timed['ours_s']:.2f} s,"
            f" GROUP BY {timed['baseline_s']:.2f} s, ratio {ratio:.2f}"
        )
        rows.append(
            _common.make_row(
                f"{label}(data=duckdb.read_parquet), {n_rows:,} rows x "
                f"{N_GROUPS} groups",
                timed["ours_s"],
                floor_label,
                timed["baseline_s"],
                ratio=ratio,
                target=target + mode,
                status=status,
                notes=(
                    f"{config['parquet_files']} Parquet files written by DuckDB; "
                    f"median of {config['parquet_rounds']} interleaved rounds "
                    f"(per-round ratios "
                    f"{', '.join(f'{r:.2f}' for r in timed['ratios'])}); ours "
                    f"within {1 / ratio:.2f}x of the GROUP BY; counts equal to "
                    f"{checked}"
                ),
                ratios=timed["ratios"],
                load=timed["load"],
                n_rows=n_rows,
            )
        )

    statistics_median = float(np.median(rounds["times"]["statistics"]))
    log(
        f"[{NAME}] the same audit of the table of counts alone (counts=): "
        f"{statistics_median:.2f} s"
    )
    rows.append(
        _common.make_row(
            f"audit_predictions(counts=), the same {N_GROUPS} groups' counts",
            statistics_median,
            None,
            None,
            notes=(
                "context: the audit's statistics (metrics, intervals, MATCH and "
                "separation tests, detectable gaps) on the table of counts the "
                "engine returns, no rows read; timed in the same rounds; the "
                "audit with data= costs about the GROUP BY plus this"
            ),
        )
    )

    peak, seconds, source = peak_memory(glob)
    ok = peak < TARGET_PEAK_BYTES
    log(
        f"[{NAME}] audit in a fresh process: peak {peak / 1e6:,.0f} MB, "
        f"{seconds:.2f} s with imports"
    )
    rows.append(
        _common.make_row(
            f"audit_predictions(data=duckdb.read_parquet), {n_rows:,} rows, memory",
            None,
            None,
            None,
            target=f"< {TARGET_PEAK_BYTES / 1e9:.0f} GB",
            status="INFO" if quick else ("PASS" if ok else "MISS"),
            notes=(
                f"peak resident memory {peak / 1e6:,.0f} MB ({source}, a fresh "
                f"Python process: imports, DuckDB and the audit); its cold wall "
                f"time {seconds:.1f} s, imports included"
            ),
            peak_bytes=peak,
            cold_seconds=seconds,
        )
    )
    return rows


# ---------------------------------------------------------------------------
# PySpark
# ---------------------------------------------------------------------------


def _start_spark(log):
    """``(spark, created)``, or ``(None, False)`` when Spark is unavailable."""
    if importlib.util.find_spec("pyspark") is None:
        log(f"[{NAME}] pyspark is not installed: Spark rows skipped")
        return None, False
    try:
        from pyspark.sql import SparkSession

        created = SparkSession.getActiveSession() is None
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("smallfair-bench-engines")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
    except Exception as exc:  # no Java, a broken installation, ...
        log(f"[{NAME}] Spark did not start ({type(exc).__name__}: {exc}): skipped")
        return None, False
    return spark, created


def run_spark(config, quick, log):
    start = time.perf_counter()
    spark, created = _start_spark(log)
    if spark is None:
        return []
    started = time.perf_counter() - start
    try:
        from sklearn_smallfair.metrics import confusion_counts

        n_rows = config["spark_rows"]
        sdf = _spark_frame(spark, n_rows).cache()
        _common.check(sdf.count() == n_rows, "the cached Spark frame lost rows")

        def ours():
            return confusion_counts("y", "y_hat", sensitive_features="g", data=sdf)

        def baseline():
            return sdf.groupBy("g", "y", "y_hat").count().collect()

        want = formula_counts(n_rows)
        _check_result(ours(), want, "confusion_counts(data=Spark)")
        _common.check(
            np.array_equal(rows_to_counts(baseline()), want),
            "Spark's groupBy counts differ from numpy's",
        )
        timed = _common.interleaved(baseline, ours, config["spark_pairs"])
        _check_result(timed["ours_result"], want, "timed confusion_counts(Spark)")
        _common.check(
            np.array_equal(rows_to_counts(timed["baseline_result"]), want),
            "timed groupBy counts differ",
        )
        sdf.unpersist()
    finally:
        if created:
            spark.stop()
    ratio = timed["ratio"]
    log(
        f"[{NAME}] Spark {n_rows:,} rows: confusion_counts {timed['ours_s']:.2f} s, "
        f"groupBy().count().collect() {timed['baseline_s']:.2f} s, ratio {ratio:.2f}"
        f" (Spark started in {started:.1f} s)"
    )
    return [
        _common.make_row(
            f"confusion_counts(data=Spark DataFrame), {n_rows:,} rows x "
            f"{N_GROUPS} groups",
            timed["ours_s"],
            'sdf.groupBy("g", "y", "y_hat").count().collect()',
            timed["baseline_s"],
            ratio=ratio,
            target=f">= {TARGET_RATIO:.2f}x" + (" (full mode)" if quick else ""),
            status="INFO" if quick else ("PASS" if ratio >= TARGET_RATIO else "MISS"),
            notes=(
                f"Spark local[2], the frame cached and materialized before timing; "
                f"median of {config['spark_pairs']} interleaved pairs (ratios "
                f"{', '.join(f'{r:.2f}' for r in timed['ratios'])}); counts equal "
                f"to numpy's of the same formula; Spark's start-up ({started:.1f} s) "
                f"not timed"
            ),
            ratios=timed["ratios"],
            load=timed["load"],
            n_rows=n_rows,
        )
    ]


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    config = QUICK if quick else FULL
    return run_duckdb(config, quick, log) + run_spark(config, quick, log)


if __name__ == "__main__":
    sys.exit(
        _common.script_main(
            run, __doc__, "10**6 Parquet rows, 10**5 Spark rows, no targets"
        )
    )
