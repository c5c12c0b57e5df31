"""The ``smallfair`` command (also ``python -m sklearn_smallfair``).

Subcommands:

- ``demo``: audit of the published COMPAS confusion matrices (embedded data),
  written as an HTML report, plus an illustration of small samples;
- ``audit``: audit of a table of predictions (one row per person): a CSV or
  Parquet file, a folder or a glob of Parquet files, or a DuckDB query;
- ``experiment``: downsampling experiment on the published groups or on a CSV of
  per-group confusion matrices;
- ``plan``: the smallest gap a group's size lets the audit detect.

User mistakes (missing files or columns, bad labels, bad option values) end with
one line on stderr, ``smallfair: error: ...``, and exit code 2 (usage) or 1
(data); with ``--debug``, errors raised by the library propagate with their
traceback; a warning is one line, ``smallfair: warning: ...``. The outputs of a
run are written all or none (each to a temporary file, then all renamed), never
over an input file and never through a symbolic link without ``--force``; their
JSON never holds ``NaN`` or ``Infinity`` (``null`` instead); labels are printed
with control and bidirectional characters escaped. An input is read once, so it
may be a pipe or the standard input (``-``); group labels are read as the text
written (the sources counted by DuckDB keep their columns' types). SIGTERM stops a run
like Ctrl-C, worker processes included (exit code 143).

Layout: ``_main`` builds the parser from the subcommand modules (``_demo``,
``_audit``, ``_experiment``, ``_plan``: each holds its options and imports its
work, ``_<command>_run``, only when it runs, so that ``smallfair --help``
imports neither pandas nor scikit-learn); ``_options`` holds the errors, the
parser class and the option types; ``_io`` reads and writes the files;
``_sources`` resolves the input options and counts the sources read by DuckDB.
"""

from ._main import main
from ._options import CLIError

__all__ = ["CLIError", "main", "read_group_counts"]


def __getattr__(name):
    if name == "read_group_counts":  # reads files with pandas: imported on use
        from ._io import read_group_counts

        return read_group_counts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
