"""``smallfair audit``: audit of a table of predictions (one row per person).

The CSV or Parquet file is read chunk by chunk, only the columns needed: each
chunk's rows are counted into confusion matrices keyed by the group and class
labels, the chunks' tables are added by label, and the audit runs on the
per-group table. The memory used is bounded by the chunk size and the number of
groups, not by the number of rows. A folder or a glob of Parquet files and a
SQL query (``--sql``) are counted by DuckDB (see :mod:`._sources`).
"""

import argparse
import textwrap

from ._options import (
    CHUNK_ROWS,
    _add_command,
    _add_force,
    _non_negative_float,
    _positive_float,
    _positive_int,
    _probability,
    _seed,
    _separator,
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
    A file is read once, so it may be a pipe (--csv - reads the standard input).

    --parquet also takes a folder (every *.parquet below it; folders named
    key=value are hive partitions, whose key is a column) or a glob of Parquet
    files (quote it for the shell), and --sql takes a DuckDB query over files.
    These are counted by DuckDB (pip install 'sklearn-smallfair[duckdb]') in
    one grouped query; only the counts per group and labels come back. Their
    columns keep their types: a group column of integers gives the groups 3,
    10, 200 (integers, in that order), as the Python API does, where a CSV
    file and a single Parquet file (read chunk by chunk) give group labels as
    text ('10', '200', '3'). A missing value is an error, as in memory.

    How a CSV file is read, the same at any --chunksize: a group label is the
    text written (01, 1 and 1.0 are three groups; NA, null and None are
    groups), and an empty field is missing, an error. A label column holds
    numbers when every value is a number (1 and 1.0 are one class), booleans
    when every value is true or false, else text; a few numbers among text
    (or text among numbers) are an error naming them. Booleans beside a
    column of 0 and 1 read as 1 (true) and 0 (false). A group column named
    like a column of the results (e.g. n) is listed as "n (group)".

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
      smallfair audit --parquet 'preds/*.parquet' --target y \\
          --prediction y_pred --group race --group sex
      smallfair audit --sql "SELECT * FROM 'preds/*.parquet' WHERE year = 2024" \\
          --target y --prediction y_pred --group race
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
    source.add_argument(
        "--csv", metavar="FILE", help="input CSV file (- for the standard input)"
    )
    source.add_argument(
        "--parquet",
        metavar="PATH",
        help="input Parquet file (needs pyarrow; - for the standard input), or a "
        "folder (every *.parquet below it, hive partitions included) or a quoted "
        "glob of Parquet files, read by DuckDB",
    )
    source.add_argument(
        "--sql",
        metavar="QUERY",
        help='a DuckDB query whose rows are audited, e.g. "SELECT * FROM '
        "'preds/*.parquet' WHERE year = 2024\" (needs duckdb)",
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
        "--tolerance",
        type=_positive_float,
        default=0.1,
        help="the largest gap that counts as no gap: a cell is 'no gap detected' "
        "only when the audit detects every gap above a size of at most this "
        "(default: 0.1)",
    )
    parser.add_argument(
        "--separation-pairs",
        choices=("reference", "all"),
        default="reference",
        help="the separation test's comparisons: each group against its "
        "reference, or every pair of groups (default: reference)",
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
        default=CHUNK_ROWS,
        metavar="ROWS",
        help="rows read at a time from a CSV or a single Parquet file; bounds "
        "the memory used (default: 1000000)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the rows read (tqdm when installed) and the audit's stages on "
        "stderr; default: when stderr is a terminal",
    )
    _add_force(parser)
    return parser
