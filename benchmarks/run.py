"""Run the sklearn-smallfair benchmarks and print one table of ratios against baselines.

Usage (from the repository root or from ``benchmarks/``)::

    python benchmarks/run.py [--quick] [--only NAME ...] [--json PATH] [--write-readme]

``NAME`` is ``group_metrics``, ``enumeration``, ``match``, ``downsampling``,
``separation``, ``eauc``, ``coverage``, ``counting`` or ``multiclass``.
Results are printed as one table (benchmark, ours, baseline, ratio baseline/ours,
target, PASS/MISS) and written as JSON (default ``benchmarks/results/latest.json``;
the folder is created and is git-ignored). The exit code is 0 when every correctness
check passes, even if a target is missed (benchmarks report, they do not fail CI),
and 1 when a correctness check fails. ``--quick`` finishes in well under a minute and
is what CI runs. ``--write-readme`` regenerates the results section of
``benchmarks/README.md`` (between its markers) from this run.

A benchmark module has ``NAME`` and ``run(quick=False, *, log=print)`` returning
rows made by ``_common.make_row``; it is registered by one line in
``BENCHMARKS`` below (and its import above).
"""

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

try:  # imported as part of the ``benchmarks`` package
    from . import (
        _common,
        bench_audit_counting,
        bench_audit_detectable,
        bench_counting,
        bench_coverage,
        bench_downsampling,
        bench_eauc,
        bench_engines,
        bench_enumeration,
        bench_group_metrics,
        bench_many_groups,
        bench_match,
        bench_multiclass,
        bench_separation,
        bench_startup,
    )
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common
    import bench_audit_counting
    import bench_audit_detectable
    import bench_counting
    import bench_coverage
    import bench_downsampling
    import bench_eauc
    import bench_engines
    import bench_enumeration
    import bench_group_metrics
    import bench_many_groups
    import bench_match
    import bench_multiclass
    import bench_separation
    import bench_startup

BENCHMARKS = {
    bench_group_metrics.NAME: bench_group_metrics,
    bench_enumeration.NAME: bench_enumeration,
    bench_match.NAME: bench_match,
    bench_downsampling.NAME: bench_downsampling,
    bench_separation.NAME: bench_separation,
    bench_eauc.NAME: bench_eauc,
    bench_coverage.NAME: bench_coverage,
    bench_audit_detectable.NAME: bench_audit_detectable,
    bench_many_groups.NAME: bench_many_groups,
    bench_engines.NAME: bench_engines,
    bench_audit_counting.NAME: bench_audit_counting,
    bench_counting.NAME: bench_counting,
    bench_multiclass.NAME: bench_multiclass,
    bench_startup.NAME: bench_startup,
}
DEFAULT_JSON = _common.BENCH_DIR / "results" / "latest.json"
README = _common.BENCH_DIR / "README.md"


def _resolve(name):
    key = name.strip().lower().removeprefix("bench_").removesuffix(".py")
    if key not in BENCHMARKS:
        raise argparse.ArgumentTypeError(
            f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}"
        )
    return key


def run_all(names, *, quick=False, log=print):
    """Run the named benchmarks; return ``(rows, failures)``.

    A failed correctness check of one benchmark, or an error raised by it, is
    recorded in ``failures`` and the others still run.
    """
    rows, failures = [], []
    for name in names:
        try:
            rows.extend(BENCHMARKS[name].run(quick=quick, log=log))
        except _common.CorrectnessError as exc:
            log(f"[{name}] CORRECTNESS CHECK FAILED: {exc}")
            failures.append({"benchmark": name, "error": str(exc)})
        except Exception as exc:  # one broken benchmark does not stop the others
            message = f"{type(exc).__name__}: {exc}"
            log(f"[{name}] FAILED: {message}")
            failures.append({"benchmark": name, "error": message})
    return rows, failures


def write_json(path, payload):
    """Write ``payload`` as indented JSON, creating the parent folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _common.ensure_package_importable()
    from sklearn_smallfair._output import write_atomic

    write_atomic(path, json.dumps(payload, indent=2, allow_nan=False) + "\n")
    return path


def write_readme(payload, path=README):
    """Replace the results section of ``benchmarks/README.md`` (between its
    markers) by the table of ``payload``; the rest of the file is kept."""
    path = Path(path)
    body = _common.readme_section(
        payload["results"],
        mode=payload["mode"],
        seconds=payload["total_seconds"],
        date=payload["date"],
        env=payload["environment"],
        names=payload["benchmarks"],
    )
    text = _common.replace_between_markers(path.read_text(), body)
    _common.ensure_package_importable()
    from sklearn_smallfair._output import write_atomic

    write_atomic(path, text, what="the benchmarks README")
    return path


def main(argv=None):
    """Command line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(
        description="Run the sklearn-smallfair benchmarks against their baselines."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes for CI (well under 60 s in total)",
    )
    parser.add_argument(
        "--only",
        type=_resolve,
        action="append",
        metavar="NAME",
        help=f"run this benchmark (repeat for several): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help="where to write the results (default: benchmarks/results/latest.json)",
    )
    parser.add_argument(
        "--write-readme",
        action="store_true",
        help="regenerate the results table of benchmarks/README.md from this run",
    )
    args = parser.parse_args(argv)

    names = args.only or list(BENCHMARKS)
    started = datetime.datetime.now().astimezone()
    start = time.perf_counter()
    rows, failures = run_all(names, quick=args.quick)
    elapsed = time.perf_counter() - start

    mode = "quick" if args.quick else "full"
    print()
    print(f"sklearn-smallfair benchmarks ({mode} mode, {elapsed:.1f} s in total)")
    print(_common.format_table(rows))
    _common.print_notes(rows)
    payload = {
        "date": started.isoformat(timespec="seconds"),
        "mode": mode,
        "benchmarks": names,
        "total_seconds": elapsed,
        "environment": _common.environment(),
        "results": rows,
        "correctness_failures": failures,
    }
    path = write_json(args.json, payload)
    print(f"results written to {path}")
    if args.write_readme:
        print(f"results table written to {write_readme(payload)}")
    if failures:
        for failure in failures:
            print(
                f"CORRECTNESS CHECK FAILED in {failure['benchmark']}: "
                f"{failure['error']}",
                file=sys.stderr,
            )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
