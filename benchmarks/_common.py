"""Shared helpers of the benchmark scripts: import path, timing, result rows, tables.

Nothing here runs at import time except defining functions and constants.
"""

import gc
import importlib.util
import math
import os
import platform
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent


class CorrectnessError(AssertionError):
    """Our result and a baseline's disagree (or a sanity check failed)."""


def ensure_package_importable():
    """Put the repository root on ``sys.path`` unless ``sklearn_smallfair`` imports.

    Lets the scripts run from a source checkout without installation, and leaves
    ``sys.path`` alone when the package is installed (or already on the path).
    """
    if importlib.util.find_spec("sklearn_smallfair") is None:
        sys.path.insert(0, str(REPO_ROOT))


def check(condition, message):
    """Raise :class:`CorrectnessError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CorrectnessError(message)


def best_of(func, repeats, *, setup=None):
    """Best wall-clock time of ``repeats`` calls of ``func`` (``time.perf_counter``).

    ``setup`` (untimed) runs before every call. Returns ``(best_seconds, times,
    last_result)``.
    """
    times = []
    result = None
    for _ in range(max(1, int(repeats))):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), times, result


def make_row(
    benchmark,
    ours_s,
    baseline,
    baseline_s,
    *,
    target="",
    status="INFO",
    notes="",
    **extra,
):
    """One result row; ``ratio`` is ``baseline_s / ours_s`` when both are known."""
    ratio = None
    if baseline_s is not None and ours_s:
        ratio = baseline_s / ours_s
    row = {
        "benchmark": benchmark,
        "ours_s": ours_s,
        "baseline": baseline,
        "baseline_s": baseline_s,
        "ratio": ratio,
        "target": target,
        "status": status,
        "notes": notes,
    }
    row.update(extra)
    return row


def _fmt_seconds(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.1:
        return f"{x:.2f}"
    return f"{x:.4f}"


def _fmt_ratio(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def format_table(rows):
    """The results as a fixed-width text table (one line per row)."""
    header = (
        "benchmark",
        "ours (s)",
        "baseline",
        "baseline (s)",
        "ratio base/ours",
        "target",
        "status",
    )
    body = [
        (
            r["benchmark"],
            _fmt_seconds(r["ours_s"]),
            r["baseline"] or "-",
            _fmt_seconds(r["baseline_s"]),
            _fmt_ratio(r["ratio"]),
            r["target"] or "-",
            r["status"],
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in (header, *body)) for i in range(7)]
    right = {1, 3, 4}

    def fmt(line):
        cells = [
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(line, widths))
        ]
        return "  ".join(cells).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(header), sep, *(fmt(line) for line in body)])


def print_notes(rows):
    """Print each row's notes, if any, under the table."""
    for r in rows:
        if r.get("notes"):
            versus = f" vs {r['baseline']}" if r["baseline"] else ""
            print(f"  * {r['benchmark'].strip()}{versus}: {r['notes']}")


def environment():
    """A description of the machine and library versions, for the JSON output."""
    import numpy
    import pandas
    import scipy
    import sklearn

    env = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "pandas": pandas.__version__,
    }
    try:
        import fairlearn

        env["fairlearn"] = fairlearn.__version__
    except ImportError:
        env["fairlearn"] = None
    ensure_package_importable()
    import sklearn_smallfair

    env["sklearn_smallfair"] = sklearn_smallfair.__version__
    return env


def script_main(run, doc, quick_help, argv=None):
    """Command line of one benchmark script: ``[--quick]``, table, notes, exit code.

    Returns 1 when a correctness check fails, else 0 (a missed target is reported,
    not a failure).
    """
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    try:
        rows = run(quick=args.quick)
    except CorrectnessError as exc:
        print(f"CORRECTNESS CHECK FAILED: {exc}", file=sys.stderr)
        return 1
    print(format_table(rows))
    print_notes(rows)
    return 0
