"""Benchmark: start-up time of the package and of the ``smallfair`` command.

Each command runs in a fresh Python process (``subprocess``), best of
``repeats``, so that nothing is cached in the process; the operating system's
file cache is warmed by one untimed run of each first. The named baseline is
``python -c "import sklearn"``, measured in the same run: the package cannot
start faster than scikit-learn when it needs it, and ``smallfair --help`` or a
usage error needs neither scikit-learn nor pandas. Ratios are
baseline / ours (above 1: faster than importing scikit-learn).

Rows:

* ``import sklearn_smallfair``: loads no subpackage (lazy names);
* ``import sklearn_smallfair.audit``: the audit (pandas, scipy, scikit-learn;
  no matplotlib until a plot is drawn);
* ``smallfair --help`` and ``smallfair audit --help``: argparse only, target
  under 1 s and faster than ``import sklearn``.

Run::

    python benchmarks/bench_startup.py [--quick]
"""

import argparse
import subprocess
import sys
import time

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "startup"
TARGET_SECONDS = 1.0
BASELINE = ("import sklearn", [sys.executable, "-c", "import sklearn"])
COMMANDS = [
    ("import sklearn_smallfair", [sys.executable, "-c", "import sklearn_smallfair"]),
    (
        "import sklearn_smallfair.audit",
        [sys.executable, "-c", "import sklearn_smallfair.audit"],
    ),
    ("smallfair --help", [sys.executable, "-m", "sklearn_smallfair", "--help"]),
    (
        "smallfair audit --help",
        [sys.executable, "-m", "sklearn_smallfair", "audit", "--help"],
    ),
]


def _time(command, repeats):
    """Best wall-clock seconds of ``repeats`` runs of ``command``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    _common.ensure_package_importable()
    repeats = 3 if quick else 7
    for _, command in [BASELINE, *COMMANDS]:  # warm the file cache
        subprocess.run(command, check=True, capture_output=True)
    base_s = _time(BASELINE[1], repeats)
    log(f"[{NAME}] {BASELINE[0]}: {base_s:.3f} s (best of {repeats})")
    rows = []
    for label, command in COMMANDS:
        ours_s = _time(command, repeats)
        cli = "--help" in command
        status = "INFO"
        if cli:
            status = "PASS" if ours_s < min(TARGET_SECONDS, base_s) else "FAIL"
        log(f"[{NAME}] {label}: {ours_s:.3f} s ({base_s / ours_s:.2f}x)")
        rows.append(
            _common.make_row(
                label,
                ours_s,
                BASELINE[0],
                base_s,
                target=f"< {TARGET_SECONDS:g} s and < import sklearn" if cli else "",
                status=status,
                notes=f"fresh process, best of {repeats}",
            )
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs per command")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
