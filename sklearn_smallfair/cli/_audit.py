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

from sklearn.exceptions import UndefinedMetricWarning

from . import _io
from ._file_counts import _count_classes, _count_file, _Multiclass
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
    _positive_int,
    _probability,
    _seed,
    _separator,
    _UsageError,
)

NAME = "audit"

_AUDIT_METRICS = ("tpr", "fpr", "ppv")
#: Most classes of a multiclass audit (a column of scores is not classes).
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
        "--random-state",
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
            random_state=args.random_state,
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
