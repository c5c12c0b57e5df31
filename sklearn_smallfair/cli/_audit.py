"""``smallfair audit``: audit of a table of predictions (one row per person).

The CSV or Parquet file is read chunk by chunk, only the columns needed: each
chunk's rows are counted into confusion matrices keyed by the group and class
labels, the chunks' tables are added by label, and the audit runs on the
per-group table. The memory used is bounded by the chunk size and the number of
groups, not by the number of rows.
"""

import argparse
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning

from . import _io
from ._io import (
    _agg_backend,
    _check_distinct,
    _check_output,
    _show,
    _summary,
    _write,
)
from ._options import (
    EXIT_OK,
    CLIError,
    _add_command,
    _add_force,
    _check_metrics,
    _non_negative_float,
    _one_line,
    _positive_int,
    _probability,
    _seed,
    _separator,
    _UsageError,
)

NAME = "audit"

_AUDIT_METRICS = ("tpr", "fpr", "ppv")
#: Most classes of a multiclass audit (a column of scores is not classes).
_MAX_CLASSES = 100
_TESTS = ("match", "separation")

_AUDIT_EPILOG = textwrap.dedent(
    """\
    The CSV or Parquet file has one row per person with a column of true labels,
    a column of predicted labels (binary, e.g. 0/1 or yes/no, or multiclass)
    and one or more columns of group labels. Several --group options audit the
    intersections of the groups (e.g. "Black|Female"). The file is read
    --chunksize rows at a time and only these columns, so its size is not
    limited by the memory. With more than two classes (or --labels), each class
    is audited one-vs-rest and the p-values are adjusted over every class.

    examples:
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group race
      smallfair audit --csv loans.csv --target repaid --prediction approved \\
          --pos-label yes --group race --group sex --metrics tpr fpr ppv \\
          --out audit.html --csv-out groups.csv --json-out audit.json
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group age_band --tests none --lam 0
      smallfair audit --parquet predictions.parquet --target y \\
          --prediction y_pred --group race --progress
      smallfair audit --csv triage.csv --target urgency --prediction predicted \\
          --group site --labels low,mid,high
    """
)


def add_parser(subparsers):
    """Add ``smallfair audit`` and its options to the subcommands.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of the ``smallfair`` parser.

    Returns
    -------
    argparse.ArgumentParser
        The parser of the subcommand.
    """
    parser = _add_command(
        subparsers,
        NAME,
        help="audit a CSV or Parquet table of predictions by group",
        description=(
            "Audit the predictions in a CSV or Parquet file group by group: raw "
            "and smoothed "
            "metrics, each group's MATCH test against its reference, and the "
            "separation (equalized odds) test. Prints the findings and writes an "
            "HTML report."
        ),
        epilog=_AUDIT_EPILOG,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--csv", metavar="FILE", help="input CSV file")
    source.add_argument(
        "--parquet", metavar="FILE", help="input Parquet file (needs pyarrow)"
    )
    parser.add_argument(
        "--target", required=True, metavar="COL", help="column of true labels"
    )
    parser.add_argument(
        "--prediction", required=True, metavar="COL", help="column of predicted labels"
    )
    parser.add_argument(
        "--group",
        required=True,
        action="append",
        metavar="COL",
        help="column of group labels; repeat for intersectional groups",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=list(_AUDIT_METRICS),
        metavar="NAME",
        help="metrics to audit (default: tpr fpr ppv)",
    )
    parser.add_argument(
        "--lam",
        type=_non_negative_float,
        default=10.0,
        help="Cross-Prior Smoothing strength; 0 for none (default: 10)",
    )
    parser.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="significance level of the tests (default: 0.05)",
    )
    parser.add_argument(
        "--confidence-level",
        type=_probability,
        default=0.95,
        metavar="LEVEL",
        help="level of each group's confidence intervals (default: 0.95)",
    )
    parser.add_argument(
        "--n-resamples",
        type=_positive_int,
        default=20_000,
        metavar="N",
        help="Monte Carlo draws per group of the MATCH test where its law is too "
        "large to enumerate, at least 100 (default: 20000)",
    )
    parser.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "fdr_bh", "none"),
        default="holm",
        help="multiple-comparison correction (default: holm)",
    )
    parser.add_argument(
        "--family",
        choices=("all", "metric"),
        default="all",
        help="the MATCH tests' correction family: every group x metric of the "
        "audit (all) or each metric's groups (default: all)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        choices=(*_TESTS, "none"),
        default=list(_TESTS),
        metavar="TEST",
        help="tests to run: match, separation, or none (default: both)",
    )
    parser.add_argument(
        "--reference",
        choices=("rest", "total"),
        default="rest",
        help="each group's reference: everyone else (rest) or everyone (total) "
        "(default: rest)",
    )
    parser.add_argument(
        "--pos-label",
        metavar="VALUE",
        default=None,
        help="the positive class (default: 1, or True)",
    )
    parser.add_argument(
        "--labels",
        metavar="A,B,C",
        default=None,
        help="the classes, comma-separated, in the order of the report: audit "
        "each class one-vs-rest (default: the binary audit for two classes, "
        "the sorted classes for more)",
    )
    parser.add_argument(
        "--matrix-metrics",
        nargs="+",
        default=None,
        choices=("accuracy", "balanced_accuracy", "mcc", "kappa"),
        metavar="NAME",
        help="multiclass only: metrics of each group's whole confusion matrix, "
        "tested with the multiclass MATCH test (accuracy, balanced_accuracy, "
        "mcc, kappa)",
    )
    parser.add_argument(
        "--sep",
        type=_separator,
        default=",",
        metavar="CHAR",
        help="CSV field delimiter, one character; \\t for a tab (default: ,)",
    )
    parser.add_argument(
        "--out",
        default="smallfair_audit_report.html",
        metavar="FILE",
        help="HTML report to write (default: smallfair_audit_report.html)",
    )
    parser.add_argument(
        "--csv-out", metavar="FILE", default=None, help="also write the per-group CSV"
    )
    parser.add_argument(
        "--json-out", metavar="FILE", default=None, help="also write the report as JSON"
    )
    parser.add_argument("--title", default=None, help="title of the report")
    parser.add_argument(
        "--seed",
        type=_seed,
        default=0,
        help="seed of the Monte Carlo parts (default: 0)",
    )
    parser.add_argument(
        "--chunksize",
        type=_positive_int,
        default=_io.CHUNK_ROWS,
        metavar="ROWS",
        help="rows read at a time; bounds the memory used (default: 1000000)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the rows read on stderr (tqdm when installed); default: when "
        "stderr is a terminal",
    )
    _add_force(parser)
    return parser


def _where(path, fmt, position):
    """Where row ``position`` (from 0) is: its CSV line (header = line 1) or its
    Parquet row (from 1)."""
    if fmt == "parquet":
        return f"row {position + 1}"
    return f"line {position + 2}"


def _missing(values):
    """Mask of missing labels (NaN, None) in a chunk's column."""
    from .._groups import _Coded
    from .._validation import _missing_mask

    if isinstance(values, _Coded):
        return values.codes < 0
    if values.dtype.kind in "biu":
        return np.zeros(values.shape[0], dtype=bool)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.asarray(pd.isna(values), dtype=bool) | _missing_mask(values)


def _label_values(values, column, path, fmt, start):
    """A chunk's column of class labels, checked; returns its distinct labels."""
    from .._validation import _distinct

    missing = _missing(values)
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); drop or fill "
            f"those rows"
        )
    labels = _distinct(values)
    return labels


class _Multiclass(Exception):
    """The label columns hold more than two classes: count K x K matrices."""


class _Labels:
    """The distinct labels of a label column over the chunks read so far."""

    def __init__(self, column, path, binary=True):
        self.column, self.path, self.binary = column, path, binary
        self.values = pd.Index([])
        self.kinds = set()

    def add(self, labels, kind):
        self.kinds.add(kind)
        self.values = self.values.append(pd.Index(list(labels))).unique()
        values = self.values
        if any(isinstance(v, (float, np.floating)) for v in values) and not all(
            float(v).is_integer()
            for v in values
            if isinstance(v, (float, np.floating, int, np.integer))
        ):
            raise CLIError(
                f"column {self.column!r} of {self.path} holds continuous values, "
                f"but binary labels are needed; threshold the scores into class "
                f"labels first"
            )
        if len(values) > 2 and self.binary:
            raise _Multiclass
        if len(values) > _MAX_CLASSES:
            shown = ", ".join(repr(v) for v in sorted(values.tolist(), key=str)[:10])
            more = ", ..." if len(values) > 10 else ""
            raise CLIError(
                f"column {self.column!r} of {self.path} must hold class labels, "
                f"but has {len(values)} distinct values ({shown}{more}); an audit "
                f"takes at most {_MAX_CLASSES} classes: bin the values into classes"
            )


def _pos_label(text, true, pred, names):
    """The positive label, converted to the type of the label columns."""
    labels = true.values.append(pred.values).unique()
    kinds = true.kinds | pred.kinds
    shown = ", ".join(repr(v) for v in sorted(labels.tolist(), key=str))
    columns = f"{names[0]!r} and {names[1]!r}"
    if len(labels) > 2:
        raise _Multiclass
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
        raise CLIError(
            f"columns {columns} hold text labels ({shown}), so the positive class "
            f"is not known; name it with --pos-label (e.g. --pos-label "
            f"{str(sorted(labels.tolist(), key=str)[-1])!r})"
        )
    if text not in [str(v) for v in labels.tolist()] and len(labels) == 2:
        raise _UsageError(f"--pos-label {text!r} is not a label of {columns} ({shown})")
    return text


def _group_values(values, column, path, fmt, start):
    """A chunk's column of group labels, checked (no missing or blank label)."""
    from .._groups import _Coded

    missing = _missing(values)
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"group column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); fill them "
            f"(e.g. with 'unknown') or drop those rows"
        )
    if isinstance(values, _Coded):
        used = np.bincount(values.codes, minlength=values.categories.shape[0]) > 0
        labels = values.categories[used]
    elif values.dtype.kind == "O":
        labels = pd.unique(values)
    else:
        return values
    blank_labels = [v for v in labels if str(v).strip() == ""]
    if blank_labels:
        rows = values.to_numpy() if isinstance(values, _Coded) else values
        blank = np.isin(rows, np.array(blank_labels, dtype=object))
        first = start + int(np.flatnonzero(blank)[0])
        raise CLIError(
            f"group column {column!r} of {path} has {int(blank.sum())} blank "
            f"label(s) (first on {_where(path, fmt, first)}); fill them "
            f"or drop those rows"
        )
    return values


def _chunks_with_progress(args, source, fmt, groups, err):
    """The file's chunks of the target, prediction and group columns, and a
    progress bar over its rows (shown on a terminal unless ``--progress`` says)."""
    n_rows, chunks = _io.read_chunks(
        source,
        [args.target, args.prediction, *groups],
        fmt=fmt,
        sep=args.sep,
        chunksize=args.chunksize,
        categorical=groups,
    )
    progress = _io.Progress(
        n_rows,
        enabled=args.progress
        if args.progress is not None
        else getattr(err, "isatty", lambda: False)(),
        err=err,
    )
    return chunks, progress


def _count_file(args, source, fmt, groups, err):
    """Read the file chunk by chunk and count each group's confusion matrix by
    label; return ``(counts table, pos_label, number of rows)``."""
    from .._counting import _finish, _merge, _partial_counts
    from .._groups import _Coded, _Columns

    target, prediction = args.target, args.prediction
    chunks, progress = _chunks_with_progress(args, source, fmt, groups, err)
    true, pred = _Labels(target, source), _Labels(prediction, source)
    table, total = None, 0
    try:
        for start, chunk in chunks:
            y = {}
            for column, labels in ((target, true), (prediction, pred)):
                values = chunk[column]
                if isinstance(values, _Coded):
                    values = values.to_numpy()
                labels.add(
                    _label_values(values, column, source, fmt, start), values.dtype.kind
                )
                y[column] = values
            columns = [_group_values(chunk[g], g, source, fmt, start) for g in groups]
            try:
                part, _ = _partial_counts(
                    y[target], y[prediction], _Columns((columns, "|".join(groups)))
                )
                table = _merge([table, part])
            except (ValueError, TypeError) as exc:
                raise CLIError(f"{source}: {_one_line(exc)}") from None
            n = y[target].shape[0]
            total += n
            progress.update(n)
    finally:
        progress.close()
    pos_label = _pos_label(args.pos_label, true, pred, (target, prediction))
    try:
        labels, counts = _finish(table, pos_label)
    except ValueError as exc:
        raise CLIError(f"{source}: {_one_line(exc)}") from None
    index = pd.Index(labels, name="|".join(groups))
    return pd.DataFrame(counts, index=index, columns=["TP", "FN", "FP", "TN"]), total


def _count_classes(args, source, fmt, groups, err):
    """Read the file chunk by chunk and count each group's K x K matrix (rows
    true, columns predicted); return ``(MulticlassCounts, number of rows)``.

    Each chunk's table of (group, true class, predicted class) counts is added
    to the others' by label.
    """
    from .._groups import _Coded, _joinable
    from .._validation import _sorted_labels
    from ..metrics import MulticlassCounts

    target, prediction = args.target, args.prediction
    chunks, progress = _chunks_with_progress(args, source, fmt, groups, err)
    true = _Labels(target, source, binary=False)
    pred = _Labels(prediction, source, binary=False)
    keys = [f"g{k}" for k in range(len(groups))] + ["true", "pred"]
    table, total = None, 0
    try:
        for start, chunk in chunks:
            columns = {}
            for key, g in zip(keys, groups):
                values = _group_values(chunk[g], g, source, fmt, start)
                if isinstance(values, _Coded):
                    values = pd.Categorical.from_codes(values.codes, values.categories)
                columns[key] = values
            for key, column, labels in (
                ("true", target, true),
                ("pred", prediction, pred),
            ):
                values = chunk[column]
                if isinstance(values, _Coded):
                    values = values.to_numpy()
                labels.add(
                    _label_values(values, column, source, fmt, start), values.dtype.kind
                )
                columns[key] = values
            part = pd.DataFrame(columns).groupby(keys, observed=True).size()
            # the chunks' categories come in different orders: index by labels
            # (pandas < 2 misaligns categorical levels of different orders)
            part.index = pd.MultiIndex.from_arrays(
                [
                    np.asarray(v, dtype=object)
                    if isinstance(v.dtype, pd.CategoricalDtype)
                    else v
                    for v in map(part.index.get_level_values, range(len(keys)))
                ],
                names=keys,
            )
            table = part if table is None else table.add(part, fill_value=0)
            n = len(columns["true"])
            total += n
            progress.update(n)
    finally:
        progress.close()
    found = true.values.append(pred.values).unique()
    try:
        found = _sorted_labels(np.asarray(found.tolist()), "the label columns")
    except TypeError as exc:
        raise CLIError(f"{source}: {_one_line(exc)}") from None
    classes = _class_order(args.labels, found, (target, prediction), source)
    flat = table.reset_index()
    if len(groups) == 1:
        label = flat["g0"].to_numpy()
    else:
        label = np.array(
            [
                "|".join(_joinable(v) for v in row)
                for row in zip(*(flat[k] for k in keys[:-2]))
            ],
            dtype=object,
        )
    names = _sorted_labels(pd.unique(label), "the groups")
    counts = np.zeros((names.shape[0], len(classes), len(classes)), dtype=np.int64)
    index = pd.Index(classes)
    np.add.at(
        counts,
        (
            pd.Index(names).get_indexer(label),
            index.get_indexer(flat["true"]),
            index.get_indexer(flat["pred"]),
        ),
        flat[0].to_numpy(dtype=np.int64),
    )
    groups_index = pd.Index(names, name="|".join(groups))
    return MulticlassCounts(groups_index, np.asarray(classes), counts), total


def _class_order(text, found, names, source):
    """The classes of ``--labels`` (matched to the columns' values), else the
    sorted classes found."""
    if text is None:
        return found.tolist()
    given = [t.strip() for t in text.split(",")]
    if len(given) < 2 or any(not t for t in given):
        raise _UsageError(
            f"--labels {text!r} must list at least two classes separated by "
            f"commas, e.g. --labels low,mid,high"
        )
    if len(set(given)) != len(given):
        raise _UsageError(f"--labels {text!r} lists a class more than once")
    spelled = {}
    for v in found.tolist():
        spelled[str(v)] = v
        if isinstance(v, float) and v.is_integer():
            spelled[str(int(v))] = v
        if isinstance(v, (bool, np.bool_)):
            spelled[str(v).lower()] = v
    named = [spelled[t] for t in given if t in spelled]
    missing = [str(v) for v in found.tolist() if not any(v == w for w in named)]
    if missing:
        raise CLIError(
            f"columns {names[0]!r} and {names[1]!r} of {source} have class(es) "
            f"{', '.join(repr(m) for m in missing)} that are not in --labels "
            f"{text!r}; add them to --labels or drop those rows"
        )
    kinds = {type(v) for v in found.tolist()}
    out = []
    for t in given:
        if t in spelled:
            out.append(spelled[t])
        elif kinds <= {int, float, np.int64, np.float64}:  # a class nobody has
            try:
                value = float(t)
            except ValueError:
                raise _UsageError(
                    f"--labels names class {t!r}, but the label columns hold numbers"
                ) from None
            out.append(int(value) if value.is_integer() else value)
        else:
            out.append(t)
    return out


def run(args, out, err=None):
    """Run ``smallfair audit``.

    Read the table, print the findings and write the reports.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.
    out : file-like
        Where to print the results.
    err : file-like, default=None
        Where to show the progress of the reading (``sys.stderr``).

    Returns
    -------
    int
        The exit code, 0; user mistakes raise :class:`CLIError`.
    """
    from ..audit import audit_predictions
    from ..smoothing import CrossPriorSmoothing

    err = sys.stderr if err is None else err
    metrics = _check_metrics(args.metrics)
    groups = list(args.group)
    twice = sorted({g for g in groups if groups.count(g) > 1})
    if twice:
        raise _UsageError(f"--group lists column(s) {twice} more than once")
    outputs = [
        ("--out", args.out),
        ("--csv-out", args.csv_out),
        ("--json-out", args.json_out),
    ]
    for option, path in outputs:
        _check_output(path, option, force=args.force)
    fmt = "csv" if args.csv is not None else "parquet"
    source = args.csv if fmt == "csv" else args.parquet
    _check_distinct([(f"--{fmt}", source)], outputs)
    tests = () if args.tests == ["none"] else tuple(dict.fromkeys(args.tests))
    if "none" in tests:
        raise _UsageError("--tests none cannot be combined with other tests")
    if args.n_resamples < 100:
        raise _UsageError(f"--n-resamples must be at least 100, got {args.n_resamples}")
    if args.labels is not None and args.pos_label is not None:
        raise _UsageError(
            "--pos-label names the positive class of binary labels; --labels "
            "audits each class in turn as the positive one, so drop --pos-label"
        )
    counts = None
    matrix_metrics = getattr(args, "matrix_metrics", None)
    if args.labels is None:
        try:
            counts, _ = _count_file(args, source, fmt, groups, err)
        except _Multiclass:  # more than two classes: read again, K x K
            if args.pos_label is not None:
                raise _UsageError(
                    f"--pos-label {args.pos_label!r} names the positive class of "
                    f"binary labels, but {args.target!r} and {args.prediction!r} "
                    f"hold more than two classes, each audited in turn as the "
                    f"positive one: drop --pos-label (--labels a,b,c fixes the "
                    f"classes' order)"
                ) from None
    if counts is None:
        counts, _ = _count_classes(args, source, fmt, groups, err)
    elif matrix_metrics:
        raise _UsageError(
            f"--matrix-metrics are metrics of multiclass confusion matrices, but "
            f"{args.target!r} and {args.prediction!r} hold two classes; pass "
            f"--labels to audit each class, or drop --matrix-metrics"
        )
    title = args.title or (
        f"Fairness audit of {args.prediction!r} by {' x '.join(groups)} "
        f"({Path(source).name})"
    )
    names = counts.groups if isinstance(counts, tuple) else counts.index
    if len(names) < 2 and args.reference == "rest":
        raise CLIError(
            f"the group column(s) {', '.join(repr(g) for g in groups)} of "
            f"{source} hold a single group ({str(names[0])!r}); an audit "
            f"compares each group with the others, so it needs at least two groups"
        )
    with warnings.catch_warnings():
        # undefined (0/0) values are reported in the summary and the tables
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        report = audit_predictions(
            counts=counts,
            metrics=metrics,
            smoothing=CrossPriorSmoothing(lam=args.lam),
            reference=args.reference,
            tests=tests,
            alpha=args.alpha,
            confidence_level=args.confidence_level,
            correction=None if args.correction == "none" else args.correction,
            family=args.family,
            n_resamples=args.n_resamples,
            random_state=args.seed,
            title=title,
            matrix_metrics=matrix_metrics,
        )
    _agg_backend()
    force = args.force
    path = _write(report.to_html(), args.out, "the HTML report", force=force)
    written = [("HTML report", path)]
    if args.csv_out:
        path = _write(report.to_csv(), args.csv_out, "the CSV", force=force)
        written.append(("CSV table", path))
    if args.json_out:
        path = _write(report.to_json(), args.json_out, "the JSON", force=force)
        written.append(("JSON", path))
    print(_summary(report), file=out)
    print(file=out)
    for what, path in written:
        print(f"{what}: {_show(path)}", file=out)
    return EXIT_OK
