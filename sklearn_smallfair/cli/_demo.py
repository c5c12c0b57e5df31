"""``smallfair demo``: audit of the published COMPAS tables (embedded data).

Writes an HTML report and shows how small samples make raw metrics jagged or
undefined while smoothed ones stay defined.
"""

import textwrap

from ._options import (
    _add_command,
    _add_force,
    _non_negative_float,
    _seed,
)

NAME = "demo"

_DEMO_METRICS = ("tpr", "fpr", "ppv")

_DEMO_EPILOG = textwrap.dedent(
    """\
    examples:
      smallfair demo
      smallfair demo --out compas.html --lam 20 --random-state 1
      python -m sklearn_smallfair demo
    """
)


def add_parser(subparsers):
    """Add ``smallfair demo`` and its options to the subcommands.

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
        help="audit of the embedded COMPAS tables, with an HTML report",
        description=(
            "Audit the published COMPAS violent-recidivism confusion matrices "
            "(Black and White defendants, each against all other defendants): "
            "print the findings, write an HTML report, and show how small samples "
            "make raw metrics jagged or undefined while smoothed ones stay defined."
        ),
        epilog=_DEMO_EPILOG,
    )
    parser.add_argument(
        "--out",
        default="smallfair_demo_report.html",
        metavar="FILE",
        help="HTML report to write (default: smallfair_demo_report.html)",
    )
    parser.add_argument(
        "--lam",
        type=_non_negative_float,
        default=10.0,
        help="Cross-Prior Smoothing strength (default: 10)",
    )
    parser.add_argument(
        "--random-state",
        type=_seed,
        default=0,
        help="seed of the random draws (default: 0)",
    )
    _add_force(parser)
    return parser
