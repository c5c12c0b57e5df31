"""The ``smallfair`` parser and its entry point, :func:`main`.

Each subcommand is a module with ``NAME`` and ``add_parser(subparsers)`` (which
returns the subcommand's parser), and a module ``_<command>_run`` with
``run(args, out)`` (which returns the exit code), imported when the command
runs; listing the module in ``_COMMANDS`` and its ``run`` in
:func:`_run_command` adds the subcommand.
"""

import argparse
import contextlib
import os
import signal
import sys
import textwrap
import warnings

from .. import __version__
from .._output import display_label
from . import _audit, _demo, _experiment, _plan
from ._options import (
    _DEBUG_HELP,
    EXIT_DATA,
    EXIT_OK,
    CLIError,
    _fail,
    _one_line,
    _Parser,
)

# the subcommands, in the order of ``smallfair --help``
_COMMANDS = (
    _demo,
    _audit,
    _experiment,
    _plan,
)
# the subcommand run when none is given
_DEFAULT = _demo.NAME

_EPILOG = textwrap.dedent(
    """\
    examples:
      smallfair                      run the demo (same as: smallfair demo)
      smallfair --out compas.html    the demo, with demo options
      smallfair demo --out compas.html --lam 20
      smallfair audit --csv predictions.csv --target y --prediction y_pred \\
          --group race --group sex --metrics tpr fpr --out audit.html
      smallfair experiment --sizes 5:50 --lam 5 10 20 --plot curves.png
      smallfair plan --counts 389,347,1597,4121 --n 30 100 300 --effect -0.1

    exit codes: 0 success, 1 data error (files, columns, labels),
    2 usage error (options). --debug lets errors raised by the library
    propagate with a traceback.
    """
)


# exit code of a run stopped by SIGTERM, as a shell reports it (128 + 15)
EXIT_TERMINATED = 128 + 15
EXIT_INTERRUPTED = 130


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised as an interruption so that it is cleaned up like Ctrl-C.

    joblib stops its worker processes when the loop that waits for them is
    interrupted; a plain SIGTERM would end this process and leave them running.
    """


def _raise_terminated(signum, frame):
    raise _Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`_Terminated`; restored after.

    Does nothing outside the main thread, where signal handlers cannot be set.
    """
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError, AttributeError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        # None: a handler not set from Python; the default is the closest
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _build_parser():
    parser = _Parser(
        prog="smallfair",
        description=(
            "Fairness audits when some groups are small: per-group metrics, raw "
            "and smoothed (Cross-Prior Smoothing), MATCH and separation tests, "
            "HTML reports, downsampling experiments and audit planning (the "
            "smallest gap a group's size lets a test detect). Without a command, runs "
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
        help=_DEBUG_HELP,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.add_parser(subparsers).set_defaults(func=_run_command)
    return parser


def _run_command(args, out):
    """Run ``args.command``, importing its work (pandas, scikit-learn) only now:
    ``smallfair --help`` and a usage error import neither."""
    if args.command == _audit.NAME:
        from ._audit_run import run
    elif args.command == _experiment.NAME:
        from ._experiment_run import run
    elif args.command == _plan.NAME:
        from ._plan_run import run
    else:
        from ._demo_run import run
    return run(args, out)


@contextlib.contextmanager
def _tidy_warnings(err, debug):
    """Within the block, a warning is shown as one line on ``err``,
    ``smallfair: warning: <message>``, without the file and source line of
    the code that raised it; with ``debug``, warnings are shown as Python
    shows them."""
    if debug:
        yield
        return

    def show(message, category, filename, lineno, file=None, line=None):
        text = display_label(_one_line(message))
        print(f"smallfair: warning: {category.__name__}: {text}", file=err)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


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
        Exit code: 0 on success, 1 for data errors, 2 for usage errors, 130
        when interrupted (Ctrl-C), 143 when terminated (SIGTERM). An
        interruption or a SIGTERM stops the worker processes of ``--jobs``
        before returning.

    Examples
    --------
    >>> main(["--version"])
    smallfair ...
    0
    """
    out = sys.stdout if out is None else out
    err = sys.stderr
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser = _build_parser()
    commands = {*(command.NAME for command in _COMMANDS), "-h", "--help", "--version"}
    if not argv or (argv[0].startswith("-") and not commands.intersection(argv)):
        argv = [_DEFAULT, *argv]  # no command: the demo, with its options
    try:
        args = parser.parse_args(argv)
    except CLIError as exc:
        return _fail(exc.message, exc.code, err)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    debug = getattr(args, "debug", False)
    try:
        with _sigterm_as_interrupt(), _tidy_warnings(err, debug):
            return args.func(args, out)
    except _Terminated:
        print("smallfair: terminated", file=err)
        return EXIT_TERMINATED
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
        return EXIT_INTERRUPTED
