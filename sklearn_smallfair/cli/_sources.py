"""The input table of ``smallfair audit`` and ``smallfair plan``: which source
the options name, and the sources counted by DuckDB.

A CSV file (``--csv``) and a single Parquet file (``--parquet FILE``, or ``-``)
are read chunk by chunk (:func:`~._io.read_chunks`). A folder of Parquet files
(every ``*.parquet`` below it, hive partitions ``key=value`` included), a glob
of Parquet files and a SQL query (``--sql``) are read by DuckDB: the query's
columns are checked before it runs, then one grouped aggregation runs in DuckDB
(:func:`~sklearn_smallfair._frames.from_data`) and only its table of counts,
one row per distinct (group labels, true label, predicted label), comes back.
Missing values are found in that table. The columns keep their types: a group
column of integers gives integer group labels.
"""

import glob
import os
import threading
import time
from pathlib import Path

import numpy as np

from ._options import CLIError, _one_line, _UsageError

_INSTALL = "pip install 'sklearn-smallfair[duckdb]'"

#: Characters that make a --parquet value a glob.
_GLOB = "*?["


class Source:
    """The input of a run, as named by the options.

    Attributes
    ----------
    kind : {"csv", "parquet", "duckdb"}
        How it is read: chunk by chunk (CSV, one Parquet file) or by DuckDB.
    option : str
        The option that names it (``--csv``, ``--parquet``, ``--sql``).
    value : str
        The option's value (a path, a glob or a query).
    name : str
        The source as named in messages.
    title : str
        The source as named in the report's title.
    files : list of str
        The local files read (checked against the outputs).
    hive : bool
        Whether the files' folders are hive partitions (``key=value``).
    """

    def __init__(self, kind, option, value, name, title, files=(), hive=False):
        self.kind, self.option, self.value = kind, option, value
        self.name, self.title = name, title
        self.files, self.hive = list(files), hive

    @property
    def inputs(self):
        """``(option, path)`` pairs of the files read, for ``_check_distinct``."""
        if self.kind != "duckdb":
            return [(self.option, self.value)]
        return [(self.option, f) for f in self.files]


def resolve(args):
    """The :class:`Source` named by ``--csv``, ``--parquet`` or ``--sql``."""
    from ._io import STDIN, _input_name

    sql = getattr(args, "sql", None)
    if sql is not None:
        if not sql.strip():
            raise _UsageError('--sql is empty; give a query, e.g. --sql "SELECT ..."')
        return Source("duckdb", "--sql", sql, "the --sql query", "SQL query")
    if args.csv is not None:
        name = _input_name(args.csv)
        return Source("csv", "--csv", args.csv, name, Path(name).name)
    value = args.parquet
    if value == STDIN or "://" in value:
        if "://" in value:  # read by DuckDB (its httpfs extension)
            return Source("duckdb", "--parquet", value, value, value)
        return Source("parquet", "--parquet", value, "stdin", "stdin")
    path = Path(value)
    if path.is_dir():
        files = sorted(
            f
            for f in glob.glob(
                os.path.join(glob.escape(value), "**", "*.parquet"), recursive=True
            )
            if os.path.isfile(f)
        )
        if not files:
            raise CLIError(
                f"{value} is a folder without Parquet files (no *.parquet file "
                f"below it)"
            )
        hive = _is_hive(files, value)
        return Source(
            "duckdb", "--parquet", value, value, path.name or value, files, hive
        )
    if path.exists() or not any(c in value for c in _GLOB):
        return Source("parquet", "--parquet", value, value, path.name)
    files = sorted(f for f in glob.glob(value, recursive=True) if os.path.isfile(f))
    if not files:
        raise CLIError(f"no file matches {value} (a glob of Parquet files)")
    root = value[: min(value.find(c) for c in _GLOB if c in value)]
    root = root if root.endswith(os.sep) or not root else os.path.dirname(root)
    return Source(
        "duckdb", "--parquet", value, value, value, files, _is_hive(files, root or ".")
    )


def _is_hive(files, root):
    """Whether the folders between ``root`` and the files are ``key=value``."""
    for f in files:
        parts = Path(os.path.relpath(f, root)).parts[:-1]
        if parts and all("=" in p and not p.startswith("=") for p in parts):
            return True
    return False


# ---------------------------------------------------------------------------
# DuckDB
# ---------------------------------------------------------------------------


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise CLIError(
            f"reading a folder or a glob of Parquet files, or a --sql query, "
            f"needs DuckDB: {_INSTALL}"
        ) from None
    return duckdb


def _message(exc):
    """DuckDB's message, its first paragraph on one line (no query excerpt)."""
    text = str(exc).strip().split("\n\n")[0]
    return _one_line(text)


def _relation(source, con, duckdb):
    """The DuckDB relation of ``source`` (nothing is read but the schema)."""
    try:
        if source.option == "--sql":
            statements = con.extract_statements(source.value)
            if len(statements) != 1 or statements[0].type != (
                duckdb.StatementType.SELECT
            ):
                raise _UsageError(
                    "--sql takes one query (SELECT ... or FROM ...) whose rows are "
                    "audited, e.g. --sql \"SELECT * FROM 'preds/*.parquet' WHERE "
                    'year = 2024"'
                )
            return con.sql(source.value)
        paths = source.files or source.value
        if source.files:
            return con.read_parquet(paths, hive_partitioning=source.hive)
        return con.read_parquet(paths)
    except duckdb.Error as exc:
        raise CLIError(
            f"DuckDB cannot read {source.name}: {type(exc).__name__}: {_message(exc)}"
        ) from None


def _check_types(relation, columns, name):
    """Refuse a nested column (list, struct, map) among the ones read."""
    types = dict(zip(relation.columns, relation.types))
    for column in dict.fromkeys(columns):
        kind = types[column]
        if str(getattr(kind, "id", "")) in ("list", "struct", "map", "array", "union"):
            raise CLIError(
                f"column {column!r} of {name} holds nested values ({kind}); a "
                f"label or group column needs one plain value (text, number or "
                f"boolean) per row: flatten it into its own column first"
            )


class _QueryProgress:
    """DuckDB's progress of the running query, polled from a thread and shown
    on ``err``: one line rewritten in place on a terminal, a line per tenth
    otherwise; then the rows counted and the time taken."""

    def __init__(self, con, enabled, err):
        self.con, self.enabled, self.err = con, enabled, err
        self.tty = getattr(err, "isatty", lambda: False)()
        self.stop = threading.Event()
        self.thread = None
        self.shown = False

    def __enter__(self):
        self.start = time.perf_counter()
        if not self.enabled:
            return self
        self.con.execute(
            "SET enable_progress_bar = true; SET enable_progress_bar_print = false; "
            "SET progress_bar_time = 0"
        )
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def _poll(self):
        last = -1
        while not self.stop.wait(0.2):
            try:
                done = float(self.con.query_progress())
            except Exception:  # the query ended meanwhile
                continue
            if done < 0:
                continue
            step = int(done) if self.tty else int(done // 10) * 10
            if step <= last:
                continue
            last = step
            self.shown = True
            if self.tty:
                print(
                    f"\rsmallfair: counting in DuckDB: {step}%",
                    end="",
                    file=self.err,
                    flush=True,
                )
            else:
                print(
                    f"smallfair: counting in DuckDB: {step}%", file=self.err, flush=True
                )

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        if self.enabled and self.shown and self.tty:  # erase the line
            print("\r" + " " * 40 + "\r", end="", file=self.err, flush=True)
        return False

    def done(self, rows):
        if self.enabled:
            print(
                f"smallfair: {rows:,} rows counted by DuckDB in "
                f"{time.perf_counter() - self.start:.1f} s",
                file=self.err,
                flush=True,
            )


def count_duckdb(args, source, groups, err, table):
    """Count the rows of ``source`` in DuckDB into ``table`` (a ``_Table``).

    Parameters
    ----------
    args : argparse.Namespace
        The options (``target``, ``prediction``, ``progress``).
    source : Source
        A source read by DuckDB.
    groups : list of str
        The group columns.
    err : file-like
        Where the progress is shown.
    table : _file_counts._Table
        Filled with the counts.
    """
    from .._frames import from_data
    from ._io import _check_header

    duckdb = _duckdb()
    columns = [args.target, args.prediction, *groups]
    con = duckdb.connect(":memory:")
    try:
        relation = _relation(source, con, duckdb)
        _check_header(list(relation.columns), columns, source.name)
        _check_types(relation, columns, source.name)
        enabled = (
            args.progress
            if args.progress is not None
            else getattr(err, "isatty", lambda: False)()
        )
        with _QueryProgress(con, enabled, err) as progress:
            try:
                tally = from_data(relation, args.target, args.prediction, groups)
            except RuntimeError as exc:
                cause = exc.__cause__ if exc.__cause__ is not None else exc
                raise CLIError(
                    f"DuckDB failed to count the rows of {source.name}: "
                    f"{type(cause).__name__}: {_message(cause)}"
                ) from None
            except duckdb.Error as exc:
                raise CLIError(
                    f"DuckDB failed to count the rows of {source.name}: "
                    f"{type(exc).__name__}: {_message(exc)}"
                ) from None
            except ValueError as exc:  # missing values, too many label combinations
                raise CLIError(f"{source.name}: {_one_line(exc)}") from None
        rows = np.asarray(tally.sample_weight, dtype=np.int64)
        progress.done(int(rows.sum()))
    finally:
        con.close()
    features = tally.sensitive_features[0]
    keys = [np.asarray(f).tolist() for f in features]
    keys += [np.asarray(tally.y_true).tolist(), np.asarray(tally.y_pred).tolist()]
    for column, values in zip(groups, keys):
        blank = [
            n
            for v, n in zip(values, rows.tolist())
            if isinstance(v, str) and not v.strip()
        ]
        if blank:
            raise CLIError(
                f"group column {column!r} of {source.name} has {sum(blank)} blank "
                f"label(s); fill them or drop those rows"
            )
    table.add_counts(list(zip(*keys)), rows.tolist())
