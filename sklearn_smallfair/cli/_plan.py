"""``smallfair plan``: what the exact MATCH test can detect at each group's size.

For every group and metric: the group's size, the minimum detectable effect at
the target power (:func:`~sklearn_smallfair.stats.match_min_detectable_effect`),
the power against a given effect (:func:`~sklearn_smallfair.stats.match_power`),
and the size from which the test keeps the target power against that effect
(:func:`~sklearn_smallfair.stats.match_sample_size`) with the records still
needed. The groups come from a table of predictions (read as by ``smallfair
audit``, each group against the rest or the total) or from reference counts and
planned sizes.
"""

import textwrap

from ._options import (
    _add_command,
    _add_force,
    _number,
    _positive_int,
    _probability,
    _separator,
)

NAME = "plan"

_PLAN_METRICS = ("tpr", "fpr", "ppv")

_CELL_NAMES = ("TP", "FN", "FP", "TN")

#: The columns of the planning table, in order.
COLUMNS = (
    "group",
    "metric",
    "n",
    "reference_value",
    "min_detectable_effect",
    "effect",
    "power",
    "n_needed",
    "extra_records",
    "note",
)

_PLAN_EPILOG = textwrap.dedent(
    """\
    The groups come either from a table of predictions (one row per person, as
    for 'smallfair audit'; each group is compared with the others, or with
    everyone with --reference total) or from the counts of a reference
    population (--counts, cells in the order TP,FN,FP,TN or named, e.g.
    TP=389,FN=347,FP=1597,TN=4121) and planned group sizes (--n). The table
    is a CSV or Parquet file, a folder or a quoted glob of Parquet files, or
    a DuckDB query (--sql), read as by 'smallfair audit'.

    examples:
      smallfair plan --counts 389,347,1597,4121 --n 30 100 300 --effect -0.1
      smallfair plan --csv predictions.csv --target y --prediction y_pred \\
          --group race --metrics tpr fpr --effect -0.15 --csv-out plan.csv
      smallfair plan --parquet preds/ --target y --prediction y_pred \\
          --group race
    """
)


def add_parser(subparsers):
    """Add ``smallfair plan`` and its options to the subcommands.

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
        help="what the MATCH test can detect at each group's size",
        description=(
            "Plan a MATCH audit: for each group and metric, the smallest effect "
            "the exact test detects with the target power at the group's size, "
            "its power against a given effect, and the group size (and the "
            "records still needed) from which it keeps the target power."
        ),
        epilog=_PLAN_EPILOG,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--csv",
        metavar="FILE",
        help="input CSV file of predictions (- for the standard input)",
    )
    source.add_argument(
        "--parquet",
        metavar="PATH",
        help="input Parquet file (needs pyarrow; - for the standard input), or a "
        "folder or a quoted glob of Parquet files, read by DuckDB",
    )
    source.add_argument(
        "--sql",
        metavar="QUERY",
        help="a DuckDB query whose rows are the table of predictions (needs duckdb)",
    )
    source.add_argument(
        "--counts",
        metavar="TP,FN,FP,TN",
        help="reference counts, in the order TP,FN,FP,TN or named "
        "(TP=..,FN=..,FP=..,TN=..); use with --n",
    )
    parser.add_argument(
        "--target", "--y-true", metavar="COL", help="column of true labels"
    )
    parser.add_argument(
        "--prediction", "--y-pred", metavar="COL", help="column of predicted labels"
    )
    parser.add_argument(
        "--group",
        action="append",
        metavar="COL",
        help="column of group labels; repeat for intersectional groups",
    )
    parser.add_argument(
        "--n",
        nargs="+",
        type=_positive_int,
        metavar="SIZE",
        help="planned group sizes (with --counts)",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=list(_PLAN_METRICS),
        metavar="NAME",
        help="binomial metrics or joint ratios (tpr, fpr, ppv, ...) "
        "(default: tpr fpr ppv)",
    )
    parser.add_argument(
        "--effect",
        type=_number,
        default=-0.1,
        help="signed difference between a group's metric and its reference's to "
        "detect (default: -0.1, a value lower by 0.1)",
    )
    parser.add_argument(
        "--power",
        type=_probability,
        default=0.8,
        help="target power (default: 0.8)",
    )
    parser.add_argument(
        "--alpha",
        type=_probability,
        default=0.05,
        help="level: with a table, of the whole audit of its groups x metrics "
        "(see --family), as 'smallfair audit' corrects it; with --counts, of "
        "each test (default: 0.05)",
    )
    parser.add_argument(
        "--family",
        choices=("all", "metric"),
        default="all",
        help="with a table: the correction family of the audit whose detectable "
        "effects are planned, every group x metric (all) or each metric's groups "
        "(default: all, as 'smallfair audit')",
    )
    parser.add_argument(
        "--alternative",
        choices=("two-sided", "less", "greater"),
        default="two-sided",
        help="alternative of the test (default: two-sided)",
    )
    parser.add_argument(
        "--max-n",
        type=_positive_int,
        default=100_000,
        metavar="SIZE",
        help="largest group size searched for n_needed (default: 100000)",
    )
    parser.add_argument(
        "--reference",
        choices=("rest", "total"),
        default="rest",
        help="with a table: each group's reference, everyone else (rest) or "
        "everyone (total) (default: rest)",
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
        "--csv-out", metavar="FILE", default=None, help="also write the table as CSV"
    )
    parser.add_argument(
        "--json-out", metavar="FILE", default=None, help="also write the table as JSON"
    )
    _add_force(parser)
    parser.set_defaults(chunksize=1_000_000, progress=False)
    return parser
