"""Benchmark: ``smallfair audit`` on large files, wall time and peak memory.

Three runs of the command, each in its own process under ``/usr/bin/time -v``
(wall-clock time and maximum resident set size):

* ``csv, baseline``: a 5,000,000-row CSV file with the command of another
  checkout (``--baseline PATH``, a source tree of the package, e.g. made with
  ``git archive <commit> | tar -x -C PATH``), which reads the whole file into
  memory;
* ``csv``: the same file with this checkout (read chunk by chunk);
* ``parquet``: a 100,000,000-row Parquet file with this checkout.

The ratio of the CSV rows is baseline / ours, both measured in the same run.
Each row also records the CPU time (user + system), which a machine shared with
other work inflates less than the wall time, and the load average.
The Parquet row has no baseline (the baseline reads CSV only); its targets are
the ones the command is built for: under 2 GB of memory and under 2 minutes.

The files are generated once (seeded) in ``--workdir`` (default
``/tmp/smallfair_bench_io``), never in the repository: 5,000,000 rows of
``y, pred, race, sex, score`` (about 120 MB of CSV) and 100,000,000 rows of
``y, pred`` (int8), ``race``, ``sex`` (dictionary-encoded text) in row groups of
1,000,000 (about 0.5 GB of Parquet; pyarrow is needed). The audit reads ``y``,
``pred`` and the intersection ``race x sex``.

The 100,000,000-row file is written one row group of 1,000,000 rows at a
time: the generator never holds more than one row group in memory. ``--quick``
runs the same measurement on 200,000 CSV rows and 2,000,000 Parquet rows (a few
seconds, no targets); ``--csv-rows 0`` leaves the CSV runs out and
``--parquet-rows 0`` the Parquet one.

Not part of ``run.py``: it takes several minutes. Run::

    python benchmarks/bench_cli_io.py [--quick] [--baseline PATH] [--csv-rows N]
        [--parquet-rows N] [--workdir DIR]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "cli_io"
SEED = 20261124
RACES = np.array(["Asian", "Black", "Hispanic", "Native", "Other", "White"])
RACE_P = np.array([0.06, 0.30, 0.15, 0.004, 0.036, 0.45])
SEXES = np.array(["Female", "Male"])
TARGET_MEMORY_GB = 2.0
TARGET_SECONDS = 120.0
QUICK_CSV_ROWS = 200_000
QUICK_PARQUET_ROWS = 2_000_000


def _rows(rng, n):
    race = rng.choice(len(RACES), size=n, p=RACE_P)
    sex = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.1 * (race == 1)).astype(np.int8)
    pred = np.where(rng.random(n) < 0.8, y, 1 - y).astype(np.int8)
    return y, pred, race, sex


def make_csv(path, n_rows, *, chunk=1_000_000):
    """Write the seeded CSV file in chunks (bounded memory)."""
    import pandas as pd

    rng = np.random.default_rng(SEED)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, n_rows, chunk):
            y, pred, race, sex = _rows(rng, min(chunk, n_rows - start))
            frame = pd.DataFrame(
                {
                    "y": y,
                    "pred": pred,
                    "race": RACES[race],
                    "sex": SEXES[sex],
                    "score": np.round(rng.random(y.shape[0]), 4),
                }
            )
            frame.to_csv(f, index=False, header=start == 0)


def make_parquet(path, n_rows, *, chunk=1_000_000):
    """Write the seeded Parquet file one row group at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(SEED + 1)
    schema = pa.schema(
        [
            ("y", pa.int8()),
            ("pred", pa.int8()),
            ("race", pa.dictionary(pa.int8(), pa.string())),
            ("sex", pa.dictionary(pa.int8(), pa.string())),
        ]
    )
    races, sexes = pa.array(RACES), pa.array(SEXES)
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n_rows, chunk):
            y, pred, race, sex = _rows(rng, min(chunk, n_rows - start))
            batch = pa.record_batch(
                [
                    pa.array(y),
                    pa.array(pred),
                    pa.DictionaryArray.from_arrays(pa.array(race, pa.int8()), races),
                    pa.DictionaryArray.from_arrays(pa.array(sex, pa.int8()), sexes),
                ],
                schema=schema,
            )
            writer.write_batch(batch, row_group_size=chunk)


def timed_audit(source_flag, path, pythonpath, workdir, label):
    """Run ``smallfair audit`` under ``/usr/bin/time -v``; return the row."""
    out = Path(workdir) / f"{label}.html"
    table = Path(workdir) / f"{label}.csv"
    command = [
        "/usr/bin/time",
        "-v",
        sys.executable,
        "-m",
        "sklearn_smallfair",
        "audit",
        source_flag,
        str(path),
        "--target",
        "y",
        "--prediction",
        "pred",
        "--group",
        "race",
        "--group",
        "sex",
        "--out",
        str(out),
        "--csv-out",
        str(table),
    ]
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=workdir, check=False
    )
    _common.check(
        done.returncode == 0, f"{label}: the command failed:\n{done.stderr[-2000:]}"
    )
    wall = re.search(
        r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr
    )
    hours = int(wall.group(1) or 0)
    seconds = hours * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    rss_kb = int(
        re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1]
    )
    cpu = sum(
        float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", done.stderr)[1])
        for kind in ("User", "System")
    )
    return {
        "label": label,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_rss_mb": rss_kb / 1024,
        "load": _common.load_average(),
    }, table


def run(
    *,
    baseline=None,
    csv_rows=5_000_000,
    parquet_rows=100_000_000,
    workdir=None,
    log=print,
):
    """Generate the files if needed, time the runs; return result rows."""
    import pandas as pd

    workdir = Path(workdir or Path(tempfile.gettempdir()) / "smallfair_bench_io")
    workdir.mkdir(parents=True, exist_ok=True)
    repo = _common.REPO_ROOT
    rows = []
    csv = workdir / f"predictions_{csv_rows}.csv"
    if csv_rows:
        if not csv.exists():
            log(f"[{NAME}] writing {csv}")
            make_csv(csv, csv_rows)
        ours, ours_table = timed_audit("--csv", csv, repo, workdir, "csv_ours")
        log(f"[{NAME}] csv, ours: {ours}")
        base = None
        if baseline:
            base, base_table = timed_audit(
                "--csv", csv, baseline, workdir, "csv_baseline"
            )
            log(f"[{NAME}] csv, baseline: {base}")
            a = pd.read_csv(ours_table, index_col=0)
            b = pd.read_csv(base_table, index_col=0)
            _common.check(a.index.equals(b.index), "csv: the groups differ")
            _common.check(
                (a["n"] == b["n"]).all() and np.allclose(a["tpr"], b["tpr"]),
                "csv: the counts differ from the baseline's",
            )
        rows.append(
            _common.make_row(
                f"audit {csv_rows:,}-row CSV (time)",
                ours["seconds"],
                "whole-file read" if base else None,
                base["seconds"] if base else None,
                notes=f"peak RSS {ours['peak_rss_mb']:.0f} MB, CPU "
                f"{ours['cpu_seconds']:.0f} s"
                + (
                    f" (baseline {base['peak_rss_mb']:.0f} MB, CPU "
                    f"{base['cpu_seconds']:.0f} s)"
                    if base
                    else ""
                ),
                cpu_s=ours["cpu_seconds"],
                baseline_cpu_s=base["cpu_seconds"] if base else None,
                peak_rss_mb=ours["peak_rss_mb"],
                baseline_peak_rss_mb=base["peak_rss_mb"] if base else None,
            )
        )
    if parquet_rows:
        parquet = workdir / f"predictions_{parquet_rows}.parquet"
        if not parquet.exists():
            log(f"[{NAME}] writing {parquet}")
            make_parquet(parquet, parquet_rows)
        ours, _ = timed_audit("--parquet", parquet, repo, workdir, "parquet_ours")
        log(f"[{NAME}] parquet, ours: {ours}")
        ok = (
            ours["seconds"] < TARGET_SECONDS
            and ours["peak_rss_mb"] < TARGET_MEMORY_GB * 1024
        )
        full = parquet_rows >= 100_000_000  # the size the targets are set for
        rows.append(
            _common.make_row(
                f"audit {parquet_rows:,}-row Parquet",
                ours["seconds"],
                None,
                None,
                target=(
                    f"< {TARGET_SECONDS:.0f} s, < {TARGET_MEMORY_GB:.0f} GB"
                    if full
                    else ""
                ),
                status=("PASS" if ok else "MISS") if full else "INFO",
                notes=f"peak RSS {ours['peak_rss_mb']:.0f} MB, CPU "
                f"{ours['cpu_seconds']:.0f} s",
                cpu_s=ours["cpu_seconds"],
                peak_rss_mb=ours["peak_rss_mb"],
            )
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="PATH", help="source tree to compare")
    parser.add_argument("--csv-rows", type=int, default=5_000_000)
    parser.add_argument("--parquet-rows", type=int, default=100_000_000)
    parser.add_argument("--workdir", default=None)
    parser.add_argument(
        "--quick", action="store_true", help="200,000 CSV and 2,000,000 Parquet rows"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.csv_rows = min(args.csv_rows, QUICK_CSV_ROWS)
        args.parquet_rows = min(args.parquet_rows, QUICK_PARQUET_ROWS)
    rows = run(
        baseline=args.baseline,
        csv_rows=args.csv_rows,
        parquet_rows=args.parquet_rows,
        workdir=args.workdir,
    )
    print(_common.format_table(rows))
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
