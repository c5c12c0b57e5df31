"""``smallfair audit``: audit of a CSV table of predictions (one row per person)."""

import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning

from ._io import (
    _agg_backend,
    _check_distinct,
    _check_output,
    _line_of,
    _read_csv,
    _require_columns,
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
    _probability,
    _seed,
    _separator,
    _UsageError,
)

NAME = "audit"

_AUDIT_METRICS = ("tpr", "fpr", "ppv")
_TESTS = ("match", "separation")

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
        help="audit a CSV table of predictions by group",
        description=(
            "Audit the predictions in a CSV file group by group: raw and smoothed "
            "metrics, each group's MATCH test against its reference, and the "
            "separation (equalized odds) test. Prints the findings and writes an "
            "HTML report."
        ),
        epilog=_AUDIT_EPILOG,
    )
    parser.add_argument("--csv", required=True, metavar="FILE", help="input CSV file")
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
        "--correction",
        choices=("holm", "bonferroni", "fdr_bh", "none"),
        default="holm",
        help="multiple-comparison correction (default: holm)",
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
    _add_force(parser)
    return parser


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


def run(args, out):
    """Run ``smallfair audit``.

    Read the table, print the findings and write the reports.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.
    out : file-like
        Where to print the results.

    Returns
    -------
    int
        The exit code, 0; user mistakes raise :class:`CLIError`.
    """
    from ..audit import audit_predictions
    from ..smoothing import CrossPriorSmoothing

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
    _check_distinct([("--csv", args.csv)], outputs)
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
