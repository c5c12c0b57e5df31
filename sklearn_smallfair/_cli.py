"""The ``smallfair`` command (also ``python -m sklearn_smallfair``).

Subcommands:

- ``demo``: audit of the published COMPAS confusion matrices (embedded data),
  written as an HTML report, plus an illustration of small samples;
- ``audit``: audit of a CSV table of predictions (one row per person);
- ``experiment``: downsampling experiment on the published groups or on a CSV of
  per-group confusion matrices.

User mistakes (missing files or columns, bad labels, bad option values) end with
one line on stderr, ``smallfair: error: ...``, and exit code 2 (usage) or 1
(data); with ``--debug``, errors raised by the library propagate with their
traceback.
"""

import argparse
import os
import re
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning

from . import __version__
from ._confusion import CELLS

__all__ = ["main"]

_DEMO_METRICS = ("tpr", "fpr", "ppv")
_AUDIT_METRICS = ("tpr", "fpr", "ppv")
_EXPERIMENT_METRICS = ("tpr", "fpr", "ppv")
_TESTS = ("match", "separation")
_PUBLISHED = {"published": None, "compas": "COMPAS", "folktables": "Folktables"}
_STATISTICS = ("mse", "rmse", "bias", "variance", "p_undefined")
_REF_CELLS = tuple(f"ref_{c}" for c in CELLS)

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


class CLIError(Exception):
    """A mistake of the user, reported as one line on stderr.

    Parameters
    ----------
    message : str
        What went wrong and how to fix it.
    code : int, default=1
        Exit code: 1 for data errors, 2 for usage errors.
    """

    def __init__(self, message, code=EXIT_DATA):
        super().__init__(message)
        self.message = message
        self.code = code


class _UsageError(CLIError):
    def __init__(self, message):
        super().__init__(message, EXIT_USAGE)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage dump)."""

    def error(self, message):
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _one_line(text):
    return re.sub(r"\s+", " ", str(text)).strip()


def _fail(message, code, err):
    print(f"smallfair: error: {_one_line(message)}", file=err)
    return code


# ---------------------------------------------------------------------------
# option types
# ---------------------------------------------------------------------------


def _number(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _non_negative_float(text):
    value = _number(text)
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _probability(text):
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def _whole_number(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number, got {text!r}"
        ) from None


def _positive_int(text):
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _seed(text):
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _jobs(text):
    value = _whole_number(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (use 1, N or -1 for all CPUs)")
    return value


def _sizes(text):
    """Subgroup sizes: ``N``, ``A:B`` (inclusive) or ``A:B:STEP``; commas allowed."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        pieces = part.split(":")
        try:
            numbers = [int(p) for p in pieces]
        except ValueError:
            numbers = None
        if numbers is None or len(numbers) > 3:
            raise argparse.ArgumentTypeError(
                f"expected N, A:B or A:B:STEP with whole numbers, got {part!r}"
            )
        if len(numbers) == 1:
            values = numbers
        else:
            step = numbers[2] if len(numbers) == 3 else 1
            if step < 1 or numbers[1] < numbers[0]:
                raise argparse.ArgumentTypeError(
                    f"in {part!r} the range A:B[:STEP] needs A <= B and STEP >= 1"
                )
            values = list(range(numbers[0], numbers[1] + 1, step))
        if min(values) < 1:
            raise argparse.ArgumentTypeError(f"sizes must be >= 1, got {part!r}")
        out.extend(values)
    if not out:
        raise argparse.ArgumentTypeError(f"no size in {text!r}")
    return out


def _check_metrics(names, option="--metrics"):
    """Canonical names of single-group metrics, or a usage error listing them.

    Parameters
    ----------
    names : sequence of str
        Names or aliases (case-insensitive), e.g. ``["tpr", "recall"]``.
    option : str, default="--metrics"
        The option, for the error message.

    Returns
    -------
    list of str
        Canonical names, without duplicates, in the given order.
    """
    from .metrics import get_metric, metric_names

    valid = metric_names(n_groups=1)
    out = []
    for name in names:
        try:
            metric = get_metric(name)
        except (ValueError, TypeError):
            metric = None
        if metric is None or metric.name not in valid:
            raise _UsageError(
                f"{option}: unknown or unsupported metric {name!r}; valid metrics: "
                f"{', '.join(valid)} (aliases such as 'recall' and 'precision' "
                f"are accepted)"
            )
        if metric.name not in out:
            out.append(metric.name)
    return out


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------


def _read_csv(path, *, sep=","):
    """Read a CSV file into a DataFrame, turning every failure into a CLIError.

    Parameters
    ----------
    path : str
        The file.
    sep : str, default=","
        Field delimiter.

    Returns
    -------
    pandas.DataFrame
    """
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file not found: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a CSV file")
    try:
        frame = pd.read_csv(p, sep=sep)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path} is empty (no header and no rows)") from None
    except UnicodeDecodeError:
        raise CLIError(f"cannot read {path}: it is not a UTF-8 text CSV file") from None
    except pd.errors.ParserError as exc:
        raise CLIError(f"cannot parse {path} as CSV: {_one_line(exc)}") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    if frame.shape[0] == 0:
        raise CLIError(f"{path} has a header but no data rows")
    return frame


def _require_columns(frame, columns, path):
    missing = [c for c in dict.fromkeys(columns) if c not in frame.columns]
    if missing:
        available = [str(c) for c in frame.columns]
        shown = ", ".join(available[:40]) + (" ..." if len(available) > 40 else "")
        names = ", ".join(repr(c) for c in missing)
        hint = ""
        if frame.shape[1] == 1:
            found = [d for d in (";", "\t", "|") if d in str(frame.columns[0])]
            if found:
                hint = f" (is the delimiter {found[0]!r}? pass --sep {found[0]!r})"
        raise CLIError(
            f"column(s) {names} not found in {path}; available columns: {shown}{hint}"
        )


def _check_output(path, option):
    """Fail early (before any work) when ``path`` cannot be written."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise CLIError(f"{option} {path} is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(f"{option}: directory {parent} does not exist")


def _write(writer, path, what):
    """Call ``writer(path)``; return the absolute path written."""
    try:
        writer(path)
    except OSError as exc:
        raise CLIError(
            f"cannot write {what} to {path}: {exc.strerror or exc}"
        ) from None
    return os.path.abspath(path)


def _agg_backend():
    """Select matplotlib's file-only backend when pyplot is not loaded yet."""
    if "matplotlib.pyplot" in sys.modules:
        return
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")


def _has_tqdm():
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def _summary(report):
    return report.summary().replace("(see .frame)", "(see the HTML report)")


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def _cmd_demo(args, out):
    from .audit import audit_predictions
    from .datasets import load_published_groups
    from .metrics import group_metrics
    from .smoothing import CrossPriorSmoothing

    _check_output(args.out, "--out")
    # each group against all other defendants (ALL counts every race)
    groups, reference = load_published_groups("COMPAS")
    groups.index = reference.index = groups.index.str.removeprefix("COMPAS|")
    smoothing = CrossPriorSmoothing(lam=args.lam)
    report = audit_predictions(
        counts=groups,
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=reference.to_numpy(),
        random_state=args.seed,
        title="COMPAS violent-recidivism scores: Black and White defendants",
    )
    report.reference = "rest"  # the explicit matrices are "everyone else"
    _agg_backend()
    path = _write(report.to_html, args.out, "the HTML report")

    print(
        f"sklearn-smallfair {__version__}: audit of the published COMPAS "
        f"violent-recidivism tables (reference: all other defendants; Cross-Prior "
        f"Smoothing lam={args.lam:g})\n",
        file=out,
    )
    print(_summary(report), file=out)

    rng = np.random.default_rng(args.seed)
    white = groups.loc["White"].to_numpy()
    sizes = (8, 12, 25, 50)
    draws = rng.multinomial(sizes, white / white.sum())
    small = pd.DataFrame(
        draws,
        columns=list(CELLS),
        index=pd.Index([f"White, n={n}" for n in sizes], name="sample"),
    )
    sub = group_metrics(
        counts=small,
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=reference.loc["White"].to_numpy(),
        zero_division=np.nan,
    )
    cols = [f"{m}{s}" for m in _DEMO_METRICS for s in ("", "_smoothed")]
    n_undef = int(sub[[f"{m}_undefined" for m in _DEMO_METRICS]].to_numpy().sum())
    print(
        f"\nSmall samples drawn from the White group's proportions (seed "
        f"{args.seed}): raw metrics are jagged or undefined (NaN); smoothed ones "
        f"are always defined and shrink toward the reference, less so as n grows "
        f"({n_undef} raw value(s) undefined, 0 smoothed):",
        file=out,
    )
    with pd.option_context("display.width", 120):
        print(pd.concat([small, sub[cols].round(3)], axis=1).to_string(), file=out)
    print(
        f"\nHTML report: {path}\nNext: smallfair audit --csv predictions.csv "
        "--target y --prediction y_pred --group race (see smallfair audit --help).",
        file=out,
    )
    return EXIT_OK


# ---------------------------------------------------------------------------
# audit
# ---------------------------------------------------------------------------


def _line_of(frame, mask):
    """CSV line number (header = line 1) of the first True in ``mask``."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 2


def _label_column(frame, column, path):
    values = frame[column]
    missing = values.isna()
    if missing.any():
        raise CLIError(
            f"column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on line {_line_of(frame, missing)}); drop or fill "
            f"those rows"
        )
    if values.dtype.kind == "f" and not np.array_equal(values, np.round(values)):
        raise CLIError(
            f"column {column!r} of {path} holds continuous values, but binary "
            f"labels are needed; threshold the scores into class labels first"
        )
    labels = pd.unique(values)
    if len(labels) > 2:
        shown = ", ".join(repr(v) for v in sorted(labels.tolist(), key=str)[:10])
        more = ", ..." if len(labels) > 10 else ""
        raise CLIError(
            f"column {column!r} of {path} must hold binary labels, but has "
            f"{len(labels)} distinct values ({shown}{more})"
        )
    return values


def _pos_label(text, y_true, y_pred, names):
    """The positive label, converted to the type of the label columns."""
    labels = pd.unique(pd.concat([y_true, y_pred], ignore_index=True))
    kinds = {y_true.dtype.kind, y_pred.dtype.kind}
    shown = ", ".join(repr(v) for v in sorted(labels.tolist(), key=str))
    columns = f"{names[0]!r} and {names[1]!r}"
    if len(labels) > 2:
        raise CLIError(
            f"columns {columns} must share the same two labels; together they have "
            f"{len(labels)} ({shown})"
        )
    if kinds <= {"b"}:
        if text is None:
            return True
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise _UsageError(f"--pos-label {text!r} is not a label of {columns} ({shown})")
    if kinds <= {"i", "u", "f"}:
        if text is None:
            return 1
        try:
            value = float(text)
        except ValueError:
            raise _UsageError(
                f"--pos-label {text!r} is not a label of {columns} ({shown})"
            ) from None
        value = int(value) if value.is_integer() else value
        if value not in labels.tolist() and len(labels) == 2:
            raise _UsageError(
                f"--pos-label {text!r} is not a label of {columns} ({shown})"
            )
        return value
    # text labels (or a mix, which the audit reports)
    if text is None:
        raise _UsageError(
            f"columns {columns} hold text labels ({shown}); name the positive class "
            f"with --pos-label"
        )
    if text not in [str(v) for v in labels.tolist()] and len(labels) == 2:
        raise _UsageError(f"--pos-label {text!r} is not a label of {columns} ({shown})")
    return text


def _group_columns(frame, columns, path):
    for column in columns:
        missing = frame[column].isna()
        if missing.any():
            raise CLIError(
                f"group column {column!r} of {path} has {int(missing.sum())} missing "
                f"value(s) (first on line {_line_of(frame, missing)}); fill them "
                f"(e.g. with 'unknown') or drop those rows"
            )
        if frame[column].dtype.kind == "O":
            blank = frame[column].astype(str).str.strip() == ""
            if blank.any():
                raise CLIError(
                    f"group column {column!r} of {path} has {int(blank.sum())} blank "
                    f"label(s) (first on line {_line_of(frame, blank)}); fill them "
                    f"or drop those rows"
                )
    if len(columns) == 1:
        return frame[columns[0]]
    return frame[list(columns)]


def _cmd_audit(args, out):
    from .audit import audit_predictions
    from .smoothing import CrossPriorSmoothing

    metrics = _check_metrics(args.metrics)
    groups = list(args.group)
    twice = sorted({g for g in groups if groups.count(g) > 1})
    if twice:
        raise _UsageError(f"--group lists column(s) {twice} more than once")
    for option, path in (
        ("--out", args.out),
        ("--csv-out", args.csv_out),
        ("--json-out", args.json_out),
    ):
        _check_output(path, option)
    frame = _read_csv(args.csv, sep=args.sep)
    _require_columns(frame, [args.target, args.prediction, *groups], args.csv)
    y_true = _label_column(frame, args.target, args.csv)
    y_pred = _label_column(frame, args.prediction, args.csv)
    pos_label = _pos_label(
        args.pos_label, y_true, y_pred, (args.target, args.prediction)
    )
    sensitive = _group_columns(frame, groups, args.csv)
    tests = () if args.tests == ["none"] else tuple(dict.fromkeys(args.tests))
    if "none" in tests:
        raise _UsageError("--tests none cannot be combined with other tests")
    title = args.title or (
        f"Fairness audit of {args.prediction!r} by {' x '.join(groups)} "
        f"({Path(args.csv).name})"
    )
    n_groups = len(sensitive.drop_duplicates())
    if n_groups < 2 and args.reference == "rest":
        label = "|".join(str(v) for v in np.ravel(sensitive.iloc[0]))
        raise CLIError(
            f"the group column(s) {', '.join(repr(g) for g in groups)} of "
            f"{args.csv} hold a single group ({label!r}); an audit compares each "
            f"group with the others, so it needs at least two groups"
        )
    with warnings.catch_warnings():
        # undefined (0/0) values are reported in the summary and the tables
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        report = audit_predictions(
            y_true.to_numpy(),
            y_pred.to_numpy(),
            sensitive_features=sensitive,
            metrics=metrics,
            smoothing=CrossPriorSmoothing(lam=args.lam),
            reference=args.reference,
            tests=tests,
            alpha=args.alpha,
            correction=None if args.correction == "none" else args.correction,
            pos_label=pos_label,
            random_state=args.seed,
            title=title,
        )
    _agg_backend()
    written = [("HTML report", _write(report.to_html, args.out, "the HTML report"))]
    if args.csv_out:
        written.append(("CSV table", _write(report.to_csv, args.csv_out, "the CSV")))
    if args.json_out:
        written.append(("JSON", _write(report.to_json, args.json_out, "the JSON")))
    print(_summary(report), file=out)
    print(file=out)
    for what, path in written:
        print(f"{what}: {path}", file=out)
    return EXIT_OK


# ---------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------


def read_group_counts(path):
    """Read per-group confusion matrices (and references) from a CSV file.

    The format of ``smallfair experiment --dataset FILE``: one row per group with
    the columns ``group``, ``TP``, ``FN``, ``FP``, ``TN`` (column names are
    case-insensitive) and optionally

    - ``ref_TP``, ``ref_FN``, ``ref_FP``, ``ref_TN``: each group's reference
      matrix (e.g. everyone else in the population); or
    - rows whose group is ``ALL``: the whole population, so that each group's
      reference is ``ALL`` minus the group (the layout of the published tables);
    - a ``dataset`` column: several populations in one file, each with its own
      ``ALL`` row; groups are then labelled ``"dataset|group"``.

    Without references or ``ALL`` rows, each group's reference is the sum of the
    other rows (leave-one-group-out).

    Parameters
    ----------
    path : str
        The CSV file.

    Returns
    -------
    counts : pandas.DataFrame
        Columns ``TP``, ``FN``, ``FP``, ``TN``, one row per group (index
        ``group``).
    reference : pandas.DataFrame or str
        The reference matrices (same layout), or ``"rest"``.

    Raises
    ------
    CLIError
        When the file is missing or malformed; the message names the problem.
    """
    frame = _read_csv(path)
    lower = {str(c).lower(): c for c in frame.columns}
    wanted = ["group", *CELLS]
    missing = [c for c in wanted if c.lower() not in lower]
    if missing:
        available = ", ".join(str(c) for c in frame.columns)
        raise CLIError(
            f"column(s) {', '.join(repr(c) for c in missing)} not found in {path}; "
            f"a per-group file needs columns group, TP, FN, FP, TN (optionally "
            f"ref_TP, ref_FN, ref_FP, ref_TN); available columns: {available}"
        )
    ref_present = [c for c in _REF_CELLS if c.lower() in lower]
    if ref_present and len(ref_present) < 4:
        absent = [c for c in _REF_CELLS if c not in ref_present]
        raise CLIError(
            f"{path} has reference column(s) {ref_present} but not {absent}; give "
            f"all four ref_ columns or none"
        )
    cell_cols = [lower[c.lower()] for c in CELLS]
    ref_cols = [lower[c.lower()] for c in _REF_CELLS] if ref_present else []
    for column in cell_cols + ref_cols:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | ~np.isfinite(values) | (values < 0)
        if bad.any():
            first = frame[column].iloc[int(np.argmax(bad.to_numpy()))]
            raise CLIError(
                f"column {column!r} of {path} must hold counts (numbers >= 0); line "
                f"{_line_of(frame, bad)} has {str(first)!r}"
            )
        frame[column] = values
    group = frame[lower["group"]]
    if group.isna().any():
        raise CLIError(
            f"column 'group' of {path} has missing label(s) (first on line "
            f"{_line_of(frame, group.isna())})"
        )
    group = group.astype(str)
    dataset = frame[lower["dataset"]].astype(str) if "dataset" in lower else None
    labels = group if dataset is None else dataset + "|" + group
    is_all = (group == "ALL").to_numpy()
    keep = ~is_all
    if not keep.any():
        raise CLIError(f"{path} has no group rows besides ALL")
    dup = labels[keep].duplicated()
    if dup.any():
        raise CLIError(
            f"group {labels[keep][dup].iloc[0]!r} appears more than once in {path}"
        )
    index = pd.Index(labels[keep].to_numpy(), name="group")
    counts = pd.DataFrame(
        frame.loc[keep, cell_cols].to_numpy(), index=index, columns=list(CELLS)
    )
    if is_all.any():
        if ref_cols:
            raise CLIError(
                f"{path} has both ALL rows and ref_ columns; give one kind of reference"
            )
        key = dataset if dataset is not None else pd.Series("", index=frame.index)
        totals = frame.loc[is_all, cell_cols].set_axis(list(CELLS), axis=1)
        totals.index = key[is_all].to_numpy()
        if totals.index.duplicated().any():
            raise CLIError(f"{path} has more than one ALL row for the same dataset")
        own = key[keep].to_numpy()
        lacking = sorted(set(own) - set(totals.index))
        if lacking:
            raise CLIError(
                f"{path} has ALL rows but none for dataset(s) {lacking}; add them or "
                f"drop the ALL rows"
            )
        ref = totals.loc[own].to_numpy() - counts.to_numpy()
        if (ref < 0).any():
            bad = index[(ref < 0).any(axis=1)][0]
            raise CLIError(
                f"in {path} the ALL row is smaller than group {bad!r} in some cell; "
                f"ALL must count the whole population"
            )
        return counts, pd.DataFrame(ref, index=index, columns=list(CELLS))
    if ref_cols:
        ref = frame.loc[keep, ref_cols].to_numpy()
        return counts, pd.DataFrame(ref, index=index, columns=list(CELLS))
    if len(counts) < 2:
        raise CLIError(
            f"{path} has a single group and no reference; add other groups, an ALL "
            f"row or ref_TP, ref_FN, ref_FP, ref_TN columns"
        )
    return counts, "rest"


def _experiment_data(dataset):
    from .datasets import load_published_groups

    key = dataset.lower()
    if key in _PUBLISHED:
        counts, reference = load_published_groups(_PUBLISHED[key])
        name = "published groups" if _PUBLISHED[key] is None else _PUBLISHED[key]
        return counts, reference, name
    counts, reference = read_group_counts(dataset)
    return counts, reference, dataset


def _plot_experiment(results, metrics, statistic, path):
    import matplotlib.pyplot as plt

    from .model_selection import DownsamplingDisplay

    k = len(metrics)
    ncols = min(k, 3)
    nrows = -(-k // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(4.6 * ncols, 3.6 * nrows),
        squeeze=False,
        layout="constrained",
    )
    try:
        for ax, metric in zip(axes.ravel(), metrics):
            DownsamplingDisplay.from_results(
                results,
                metric=metric,
                statistic=statistic,
                ax=ax,
                logy=statistic in ("mse", "rmse", "variance"),
            )
        for ax in axes.ravel()[k:]:
            ax.set_visible(False)
        return _write(lambda p: fig.savefig(p, dpi=120), path, "the plot")
    finally:
        plt.close(fig)


def _overview(results, out):
    """Mean of the statistics over groups at a few sizes."""
    sizes = np.unique(results["n"])
    picks = sorted({int(sizes[0]), int(sizes[len(sizes) // 2]), int(sizes[-1])})
    sub = results[results["n"].isin(picks)]
    table = sub.pivot_table(
        index=["metric", "estimator"],
        columns="n",
        values="mse",
        aggfunc="mean",
        sort=False,
    )
    table.columns = [f"mse n={n}" for n in table.columns]
    raw = sub[sub["estimator"] == "raw"].pivot_table(
        index="metric", columns="n", values="p_undefined", aggfunc="mean", sort=False
    )
    print("Mean over groups (statistics conditional on a defined score):", file=out)
    with pd.option_context("display.width", 120):
        print(table.to_string(float_format=lambda v: f"{v:.4g}"), file=out)
        if len(raw):
            raw.columns = [f"P(undefined) n={n}" for n in raw.columns]
            print("\nRaw scores undefined (0/0):", file=out)
            print(raw.to_string(float_format=lambda v: f"{v:.3f}"), file=out)


def _cmd_experiment(args, out):
    from .model_selection import downsampling_experiment
    from .smoothing import CrossPriorSmoothing

    metrics = _check_metrics(args.metrics)
    sizes = sorted({n for part in args.sizes for n in part})
    estimators = {"raw": None}
    for lam in args.lam:
        estimators.setdefault(f"cps_{lam:g}", CrossPriorSmoothing(lam=lam))
    _check_output(args.out, "--out")
    _check_output(args.plot, "--plot")
    if args.plot:
        _agg_backend()
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise CLIError(
                "--plot needs matplotlib; install it with `pip install "
                "sklearn-smallfair[plot]` (or `pip install matplotlib`), or drop "
                "--plot"
            ) from None
        formats = plt.figure().canvas.get_supported_filetypes()
        plt.close("all")
        ext = Path(args.plot).suffix.lower().lstrip(".")
        if ext not in formats:
            raise _UsageError(
                f"--plot {args.plot}: unsupported image format {ext or '(none)'!r}; "
                f"use one of {', '.join(sorted(formats))}"
            )
    counts, reference, source = _experiment_data(args.dataset)
    progress = not args.no_progress and _has_tqdm()
    print(
        f"Downsampling experiment on {source}: {len(counts)} group(s), sizes "
        f"{sizes[0]}..{sizes[-1]} ({len(sizes)}), metrics {', '.join(metrics)}, "
        f"estimators {', '.join(estimators)}, method {args.method}"
        + (f" ({args.draws:,} draws)" if args.method == "montecarlo" else ""),
        file=out,
        flush=True,
    )
    results = downsampling_experiment(
        counts=counts,
        metrics=metrics,
        estimators=estimators,
        sizes=sizes,
        method=args.method,
        sampling=args.sampling,
        n_draws=args.draws,
        reference=reference,
        n_jobs=args.jobs,
        random_state=args.seed,
        progress=progress,
    )
    path = _write(lambda p: results.to_csv(p, index=False), args.out, "the results CSV")
    print(file=out)
    _overview(results, out)
    print(f"\nResults ({len(results):,} rows): {path}", file=out)
    if args.plot:
        plot = _plot_experiment(results, metrics, args.statistic, args.plot)
        print(f"Plot: {plot}", file=out)
    return EXIT_OK


# ---------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------

_EPILOG = textwrap.dedent(
    """\
    examples:
      smallfair                      run the demo (same as: smallfair demo)
      smallfair --out compas.html    the demo, with demo options
      smallfair demo --out compas.html --lam 20
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group race --group sex --metrics tpr fpr --out audit.html
      smallfair experiment --sizes 5:50 --lam 5 10 20 --plot curves.png

    exit codes: 0 success, 1 data error (files, columns, labels),
    2 usage error (options). --debug lets errors raised by the library
    propagate with a traceback.
    """
)

_DEMO_EPILOG = textwrap.dedent(
    """\
    examples:
      smallfair demo
      smallfair demo --out compas.html --lam 20 --seed 1
      python -m sklearn_smallfair demo
    """
)

_AUDIT_EPILOG = textwrap.dedent(
    """\
    The CSV has one row per person with a column of true labels, a column of
    predicted labels (binary, e.g. 0/1 or yes/no) and one or more columns of group
    labels. Several --group options audit the intersections of the groups
    (e.g. "Black|Female").

    examples:
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group race
      smallfair audit --csv loans.csv --target repaid --prediction approved \\
          --pos-label yes --group race --group sex --metrics tpr fpr ppv \\
          --out audit.html --csv-out groups.csv --json-out audit.json
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group age_band --tests none --lam 0
    """
)

_EXPERIMENT_EPILOG = textwrap.dedent(
    """\
    --dataset FILE: a CSV of per-group confusion matrices, one row per group,
    with columns group,TP,FN,FP,TN (case-insensitive), and optionally
      - ref_TP,ref_FN,ref_FP,ref_TN: each group's reference matrix; or
      - rows whose group is ALL: the whole population (reference = ALL - group);
      - a dataset column: several populations, each with its own ALL row.
    Without references each group's reference is the sum of the other rows.
    Example:
      group,TP,FN,FP,TN
      A,273,170,1043,1692
      B,77,129,380,1679
      ALL,389,347,1597,4121

    The results CSV has one row per group, size n, metric and estimator ("raw"
    or "cps_<lam>"), with columns group,n,metric,estimator,mse,bias,variance,
    p_undefined (and mse_se,n_draws with --method montecarlo).

    examples:
      smallfair experiment
      smallfair experiment --dataset compas --sizes 5:50 --metrics tpr \\
          --plot curves.png
      smallfair experiment --dataset my_groups.csv --method montecarlo \\
          --draws 100000 --jobs -1 --seed 1 --out results.csv
    """
)


def _build_parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="let errors raised by the library propagate with a traceback",
    )
    parser = _Parser(
        prog="smallfair",
        description=(
            "Fairness audits when some groups are small: per-group metrics, raw "
            "and smoothed (Cross-Prior Smoothing), MATCH and separation tests, "
            "HTML reports and downsampling experiments. Without a command, runs "
            "the demo."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False,
        help="let errors raised by the library propagate with a traceback",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # ---- demo ----
    demo = sub.add_parser(
        "demo",
        parents=[common],
        help="audit of the embedded COMPAS tables, with an HTML report",
        description=(
            "Audit the published COMPAS violent-recidivism confusion matrices "
            "(Black and White defendants, each against all other defendants): "
            "print the findings, write an HTML report, and show how small samples "
            "make raw metrics jagged or undefined while smoothed ones stay defined."
        ),
        epilog=_DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--out",
        default="smallfair_demo_report.html",
        metavar="FILE",
        help="HTML report to write (default: smallfair_demo_report.html)",
    )
    demo.add_argument(
        "--lam",
        type=_non_negative_float,
        default=10.0,
        help="Cross-Prior Smoothing strength (default: 10)",
    )
    demo.add_argument(
        "--seed",
        type=_seed,
        default=0,
        help="seed of the random draws (default: 0)",
    )
    demo.set_defaults(func=_cmd_demo)

    # ---- audit ----
    audit = sub.add_parser(
        "audit",
        parents=[common],
        help="audit a CSV table of predictions by group",
        description=(
            "Audit the predictions in a CSV file group by group: raw and smoothed "
            "metrics, each group's MATCH test against its reference, and the "
            "separation (equalized odds) test. Prints the findings and writes an "
            "HTML report."
        ),
        epilog=_AUDIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    audit.add_argument("--csv", required=True, metavar="FILE", help="input CSV file")
    audit.add_argument(
        "--target", required=True, metavar="COL", help="column of true labels"
    )
    audit.add_argument(
        "--prediction", required=True, metavar="COL", help="column of predicted labels"
    )
    audit.add_argument(
        "--group",
        required=True,
        action="append",
        metavar="COL",
        help="column of group labels; repeat for intersectional groups",
    )
    audit.add_argument(
        "--metrics",
        nargs="+",
        default=list(_AUDIT_METRICS),
        metavar="NAME",
        help="metrics to audit (default: tpr fpr ppv)",
    )
    audit.add_argument(
        "--lam",
        type=_non_negative_float,
        default=10.0,
        help="Cross-Prior Smoothing strength; 0 for none (default: 10)",
    )
    audit.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="significance level of the tests (default: 0.05)",
    )
    audit.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "fdr_bh", "none"),
        default="holm",
        help="multiple-comparison correction (default: holm)",
    )
    audit.add_argument(
        "--tests",
        nargs="+",
        choices=(*_TESTS, "none"),
        default=list(_TESTS),
        metavar="TEST",
        help="tests to run: match, separation, or none (default: both)",
    )
    audit.add_argument(
        "--reference",
        choices=("rest", "total"),
        default="rest",
        help="each group's reference: everyone else (rest) or everyone (total) "
        "(default: rest)",
    )
    audit.add_argument(
        "--pos-label",
        metavar="VALUE",
        default=None,
        help="the positive class (default: 1, or True)",
    )
    audit.add_argument(
        "--sep", default=",", metavar="CHAR", help="CSV field delimiter (default: ,)"
    )
    audit.add_argument(
        "--out",
        default="smallfair_audit_report.html",
        metavar="FILE",
        help="HTML report to write (default: smallfair_audit_report.html)",
    )
    audit.add_argument(
        "--csv-out", metavar="FILE", default=None, help="also write the per-group CSV"
    )
    audit.add_argument(
        "--json-out", metavar="FILE", default=None, help="also write the report as JSON"
    )
    audit.add_argument("--title", default=None, help="title of the report")
    audit.add_argument(
        "--seed",
        type=_seed,
        default=0,
        help="seed of the Monte Carlo parts (default: 0)",
    )
    audit.set_defaults(func=_cmd_audit)

    # ---- experiment ----
    exp = sub.add_parser(
        "experiment",
        parents=[common],
        help="downsampling experiment: error of raw vs smoothed metrics by size",
        description=(
            "For subgroups of each size drawn from each group, compute the error "
            "(MSE, bias, variance) of the raw and the smoothed metrics against the "
            "whole group's value, and how often the raw metric is undefined. Writes "
            "a tidy CSV and, with --plot, a figure."
        ),
        epilog=_EXPERIMENT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exp.add_argument(
        "--dataset",
        default="published",
        metavar="published|compas|folktables|FILE",
        help="the embedded published groups (all, COMPAS or Folktables) or a CSV "
        "of per-group confusion matrices (default: published)",
    )
    exp.add_argument(
        "--metrics",
        nargs="+",
        default=list(_EXPERIMENT_METRICS),
        metavar="NAME",
        help="metrics (default: tpr fpr ppv)",
    )
    exp.add_argument(
        "--lam",
        nargs="+",
        type=_non_negative_float,
        default=[5.0, 10.0, 20.0],
        metavar="LAM",
        help="Cross-Prior Smoothing strengths compared with raw (default: 5 10 20)",
    )
    exp.add_argument(
        "--sizes",
        nargs="+",
        type=_sizes,
        default=[list(range(5, 151))],
        metavar="SIZES",
        help="subgroup sizes: N, A:B (inclusive) or A:B:STEP (default: 5:150)",
    )
    exp.add_argument(
        "--method",
        choices=("exact", "montecarlo"),
        default="exact",
        help="exact enumeration or Monte Carlo draws (default: exact)",
    )
    exp.add_argument(
        "--sampling",
        choices=("multinomial", "hypergeometric"),
        default="multinomial",
        help="draw subgroups with or without replacement (default: multinomial)",
    )
    exp.add_argument(
        "--draws",
        type=_positive_int,
        default=100_000,
        metavar="N",
        help="Monte Carlo draws per group and size (default: 100000)",
    )
    exp.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="parallel jobs; -1 for all CPUs (default: 1)",
    )
    exp.add_argument(
        "--seed", type=_seed, default=0, help="seed of the draws (default: 0)"
    )
    exp.add_argument(
        "--out",
        default="smallfair_experiment.csv",
        metavar="FILE",
        help="results CSV to write (default: smallfair_experiment.csv)",
    )
    exp.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="also draw the curves to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    exp.add_argument(
        "--statistic",
        choices=_STATISTICS,
        default="mse",
        help="statistic of the plot (default: mse)",
    )
    exp.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (shown on stderr when tqdm is installed)",
    )
    exp.set_defaults(func=_cmd_experiment)
    return parser


def main(argv=None, out=None):
    """Run the ``smallfair`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments without the program name; default
        ``sys.argv[1:]``. No command runs the demo.
    out : file-like, default=None
        Where to print results; default ``sys.stdout``. Errors go to
        ``sys.stderr``.

    Returns
    -------
    int
        Exit code: 0 on success, 1 for data errors, 2 for usage errors.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser = _build_parser()
    commands = {"demo", "audit", "experiment", "-h", "--help", "--version"}
    if not argv or (argv[0].startswith("-") and not commands.intersection(argv)):
        argv = ["demo", *argv]  # no command: the demo, with its options
    try:
        args = parser.parse_args(argv)
    except CLIError as exc:
        return _fail(exc.message, exc.code, err)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    debug = getattr(args, "debug", False)
    try:
        return args.func(args, out)
    except BrokenPipeError:
        # the reader of our output went away (e.g. `smallfair demo | head`)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_DATA
    except CLIError as exc:
        return _fail(exc.message, exc.code, err)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if debug:
            raise
        return _fail(exc, EXIT_DATA, err)
    except KeyboardInterrupt:
        print("smallfair: interrupted", file=err)
        return 130
