"""Options of the ``smallfair`` command: errors, parsers and option types.

User mistakes are :class:`CLIError` (exit code 1, data) or ``_UsageError``
(exit code 2, options); ``main`` prints them as one line with :func:`_fail`.
"""

import argparse
import re

import numpy as np

from .._output import display_label

#: Rows read per chunk of a CSV or Parquet file (``--chunksize``).
CHUNK_ROWS = 1_000_000

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2

_DEBUG_HELP = "let errors raised by the library propagate with a traceback"
_FORCE_HELP = (
    "write through an output file name that is a symbolic link, to the file it "
    "points to (refused by default)"
)


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
    print(f"smallfair: error: {display_label(_one_line(message))}", file=err)
    return code


def _add_command(subparsers, name, **kwargs):
    """Add the parser of a subcommand, with the options every subcommand shares.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of the ``smallfair`` parser.
    name : str
        The subcommand.
    **kwargs
        Passed to ``subparsers.add_parser`` (``help``, ``description``,
        ``epilog``); the description and epilog are printed as written.

    Returns
    -------
    argparse.ArgumentParser
        The parser of the subcommand, to which the caller adds its options.
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help=_DEBUG_HELP,
    )
    return subparsers.add_parser(
        name,
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def _add_force(parser):
    """Add ``--force`` to the parser of a subcommand that writes files."""
    parser.add_argument("--force", action="store_true", default=False, help=_FORCE_HELP)


# ---------------------------------------------------------------------------
# option types
# ---------------------------------------------------------------------------


def _number(text):
    """A finite real number, or an error that argparse reports with the option.

    ``nan`` and ``inf`` are refused: no option of the command takes them, and
    they would reach the results (and their JSON) as values no strict parser
    reads.

    Parameters
    ----------
    text : str
        The value given on the command line.

    Returns
    -------
    float

    Examples
    --------
    >>> _number("2.5"), _probability("0.05"), _whole_number("7"), _jobs("-1")
    (2.5, 0.05, 7, -1)
    >>> _probability("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be in (0, 1), got 1
    >>> _number("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a finite number, got 'nan'
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _non_negative_float(text):
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _positive_float(text):
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
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


# spelled-out delimiters that a shell makes awkward to type
_SEPARATORS = {"\\t": "\t", "tab": "\t", "TAB": "\t"}


def _separator(text):
    r"""A CSV field delimiter: one character, or ``\t`` (or ``tab``) for a tab.

    Parameters
    ----------
    text : str
        The value of ``--sep``.

    Returns
    -------
    str
        The delimiter, one character.

    Examples
    --------
    >>> _separator(";"), _separator("\\t"), _separator("tab")
    (';', '\t', '\t')
    >>> _separator("")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be one character (or \t for a tab), got ''
    """
    value = _SEPARATORS.get(text, text)
    if len(value) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character (or \\t for a tab), got {text!r}"
        )
    if value in '"\n\r' or (not value.isprintable() and value != "\t"):
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot separate CSV fields (it quotes or ends them); use "
            f"e.g. ',', ';', '|' or \\t"
        )
    return value


def _sizes(text):
    """Subgroup sizes: ``N``, ``A:B`` (inclusive) or ``A:B:STEP``; commas allowed.

    Parameters
    ----------
    text : str
        The value of ``--sizes``.

    Returns
    -------
    list of int
        The sizes, in the given order.

    Examples
    --------
    >>> _sizes("5:20:5,50")
    [5, 10, 15, 20, 50]
    >>> _sizes("3:1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: in '3:1' the range A:B[:STEP] needs A <= B and STEP >= 1
    """
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
    from ..metrics import get_metric, metric_names

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
