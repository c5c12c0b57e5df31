"""Shared helpers of the benchmark scripts: import path, timing, result rows, tables.

Nothing here runs at import time except defining functions and constants.
"""

import gc
import importlib.util
import math
import os
import platform
import statistics
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


def load_average():
    """The machine's 1-minute load average (``os.getloadavg``), or None."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def interleaved(baseline, candidate, repeats, *, setup=None):
    """Time ``baseline`` and ``candidate`` alternately, ``repeats`` pairs.

    Each pair runs the two calls back to back (the baseline first in even pairs,
    the candidate first in odd ones), so both see the same load; the ratio of
    the pair is ``baseline time / candidate time``. A busy machine slows both
    calls of a pair alike, so the median of the per-pair ratios is far steadier
    than a ratio of two best times measured minutes apart. ``setup`` (untimed)
    runs before every call.

    Returns a dict: ``ratio`` (median of the per-pair ratios), ``ours_s`` and
    ``baseline_s`` (median times), ``ratios`` (every pair's), ``load`` (the
    1-minute load average at the end), and the last results ``ours_result`` and
    ``baseline_result``.
    """
    pairs, ours, base = [], [], []
    out = {"ours_result": None, "baseline_result": None}
    for k in range(max(1, int(repeats))):
        order = (("baseline", baseline), ("ours", candidate))
        if k % 2:
            order = order[::-1]
        times = {}
        for name, func in order:
            if setup is not None:
                setup()
            gc.collect()
            start = time.perf_counter()
            out[f"{name}_result"] = func()
            times[name] = time.perf_counter() - start
        base.append(times["baseline"])
        ours.append(times["ours"])
        pairs.append(times["baseline"] / max(times["ours"], 1e-12))
    out.update(
        ratio=statistics.median(pairs),
        ours_s=statistics.median(ours),
        baseline_s=statistics.median(base),
        ratios=pairs,
        load=load_average(),
    )
    return out


def interleaved_rounds(calls, repeats, *, setups=None):
    """Time the callables of ``calls`` (a dict, name -> function) back to back.

    :func:`interleaved` for more than two calls: each of ``repeats`` rounds
    runs every call once, in the order of ``calls`` rotated by one place per round
    (for two calls, the alternation of :func:`interleaved`), so the calls
    of a round see the same load and any two of them give a per-round ratio (see
    :func:`versus`). One baseline call per round thus serves every row compared
    with it. ``setups`` (name -> function, untimed) run before that name's calls.
    The garbage is collected once before each round, not before each call: with
    pandas and scipy loaded a full collection takes 0.05-0.15 s, longer than most
    of the calls timed here.

    Returns ``{"times": {name: [seconds of each round]}, "results": {name: last
    result}, "load": the 1-minute load average at the end}``.
    """
    setups = setups or {}
    names = list(calls)
    times = {name: [] for name in names}
    results = {}
    for k in range(max(1, int(repeats))):
        shift = k % len(names)
        gc.collect()
        for name in names[shift:] + names[:shift]:
            if name in setups:
                setups[name]()
            start = time.perf_counter()
            results[name] = calls[name]()
            times[name].append(time.perf_counter() - start)
    return {"times": times, "results": results, "load": load_average()}


def versus(rounds, baseline, ours, *, scale=1.0, fixed_s=0.0):
    """One row's figures from :func:`interleaved_rounds`, in the form of
    :func:`interleaved`'s result.

    Each round's baseline figure is ``fixed_s + scale * t``: the time ``t`` of the
    ``baseline`` call, which may do a part of the work, extrapolated to the whole
    (``scale``) plus a one-off cost measured once (``fixed_s``). The round's ratio
    is that figure over the time of ``ours`` in the same round; ``ratio`` is the
    median of these per-round ratios, ``baseline_s`` the median figure, ``ours_s``
    the median time of ours and ``part_s`` the median time of the baseline call.
    """
    part, own = rounds["times"][baseline], rounds["times"][ours]
    figures = [fixed_s + scale * t for t in part]
    ratios = [b / max(o, 1e-12) for b, o in zip(figures, own)]
    return {
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "baseline_s": statistics.median(figures),
        "ours_s": statistics.median(own),
        "part_s": statistics.median(part),
        "load": rounds["load"],
        "baseline_result": rounds["results"][baseline],
        "ours_result": rounds["results"][ours],
    }


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
    """One result row.

    ``ratio`` is ``baseline_s / ours_s`` when both are known, unless ``ratio`` is
    passed (the median of interleaved per-pair ratios, see :func:`interleaved`;
    the row's ``ratio_method`` then says ``"interleaved"``). Every row records the
    1-minute load average when it is made (``load``), so that a row measured on
    a busy machine can be told apart.
    """
    ratio = extra.pop("ratio", None)
    method = "interleaved" if ratio is not None else "separate"
    if ratio is None and baseline_s is not None and ours_s:
        ratio = baseline_s / ours_s
    if baseline_s is None:
        method = None
    extra.setdefault("load", load_average())
    extra.setdefault("ratio_method", method)
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


def _fmt_load(x):
    return "-" if x is None else f"{x:.1f}"


def _fmt_ratio_cell(row):
    text = _fmt_ratio(row["ratio"])
    if row.get("ratio_method") == "interleaved":
        text += " (i)"
    return text


def markdown_table(rows):
    """The results as a Markdown table (what ``run.py --write-readme`` writes)."""
    head = (
        "| benchmark | ours (s) | baseline | baseline (s) | ratio base/ours "
        "| target | status | load |"
    )
    lines = [head, "|---|---:|---|---:|---:|---|---|---:|"]
    for r in rows:
        cells = (
            str(r["benchmark"]).strip(),
            _fmt_seconds(r["ours_s"]),
            r["baseline"] or "-",
            _fmt_seconds(r["baseline_s"]),
            _fmt_ratio_cell(r),
            r["target"] or "-",
            r["status"],
            _fmt_load(r.get("load")),
        )
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


README_START = (
    "<!-- results:start (generated by python benchmarks/run.py --write-readme) -->"
)
README_END = "<!-- results:end -->"


def readme_section(rows, *, mode, seconds, date, env, names=None):
    """The generated part of ``benchmarks/README.md``: how and where the run was
    made, the table, and each row's notes."""
    lines = [
        f"Run of {date} ({mode} mode, {seconds:.0f} s in total) on {env['processor']}"
        f" with {env['cpu_count']} CPUs: Python {env['python']}, numpy "
        f"{env['numpy']}, scipy {env['scipy']}, scikit-learn {env['scikit-learn']}, "
        f"pandas {env['pandas']}, fairlearn {env['fairlearn'] or 'not installed'}. "
        f"Benchmarks run: {', '.join(names) if names else 'all'}.",
        "`(i)`: the median of per-pair ratios of interleaved repeats (baseline and "
        "ours alternating); otherwise the ratio of separately timed calls. `load`: "
        "the machine's 1-minute load average when the row was measured.",
        "",
        markdown_table(rows),
        "",
    ]
    for r in rows:
        if r.get("notes"):
            versus = f" vs {r['baseline']}" if r["baseline"] else ""
            lines.append(f"- **{str(r['benchmark']).strip()}**{versus}: {r['notes']}")
    return "\n".join(lines)


def replace_between_markers(text, body):
    """``text`` with the part between :data:`README_START` and
    :data:`README_END` replaced by ``body`` (the markers appended if absent)."""
    block = f"{README_START}\n{body}\n{README_END}"
    if README_START in text and README_END in text:
        head = text.split(README_START, 1)[0]
        tail = text.split(README_END, 1)[1]
        return head + block + tail
    return text.rstrip("\n") + "\n\n## Latest results\n\n" + block + "\n"


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
        "load",
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
            _fmt_load(r.get("load")),
        )
        for r in rows
    ]
    widths = [max(len(str(line[i])) for line in (header, *body)) for i in range(8)]
    right = {1, 3, 4, 7}

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


def cell_probabilities(prevalence, tpr, fpr):
    """``(TP, FN, FP, TN)`` probabilities of a law."""
    import numpy as np

    return np.array(
        [
            prevalence * tpr,
            prevalence * (1 - tpr),
            (1 - prevalence) * fpr,
            (1 - prevalence) * (1 - fpr),
        ]
    )
