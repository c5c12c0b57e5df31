"""Reading and writing the files of the ``smallfair`` command.

Every failure to read or write becomes a :class:`CLIError` whose message names
the file and the problem. The command never writes over one of its inputs, two
of its outputs are never the same file, and every output is written whole by
:func:`~sklearn_smallfair._output.write_atomic` (a symbolic link is written
through only with ``--force``).
"""

import itertools
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .._confusion import CELLS
from .._output import display_label, write_atomic
from ._options import CHUNK_ROWS, CLIError, _one_line, _UsageError

_REF_CELLS = tuple(f"ref_{c}" for c in CELLS)

# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------


def _read_csv(path, *, sep=","):
    """Read a CSV file into a DataFrame, turning every failure into a CLIError.

    Parameters
    ----------
    path : str
        The file.
    sep : str, default=","
        Field delimiter.

    Returns
    -------
    pandas.DataFrame
    """
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file not found: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a CSV file")
    try:
        frame = pd.read_csv(p, sep=sep)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path} is empty (no header and no rows)") from None
    except UnicodeDecodeError:
        raise CLIError(f"cannot read {path}: it is not a UTF-8 text CSV file") from None
    except pd.errors.ParserError as exc:
        raise CLIError(f"cannot parse {path} as CSV: {_one_line(exc)}") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    if frame.shape[0] == 0:
        raise CLIError(f"{path} has a header but no data rows")
    return frame


def _require_columns(frame, columns, path):
    missing = [c for c in dict.fromkeys(columns) if c not in frame.columns]
    if missing:
        available = [str(c) for c in frame.columns]
        shown = ", ".join(available[:40]) + (" ..." if len(available) > 40 else "")
        names = ", ".join(repr(c) for c in missing)
        hint = ""
        if frame.shape[1] == 1:
            found = [d for d in (";", "\t", "|") if d in str(frame.columns[0])]
            if found:
                hint = f" (is the delimiter {found[0]!r}? pass --sep {found[0]!r})"
        raise CLIError(
            f"column(s) {names} not found in {path}; available columns: {shown}{hint}"
        )


def _line_of(frame, mask):
    """CSV line number (header = line 1) of the first True in ``mask``."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 2


def read_group_counts(path):
    """Read per-group confusion matrices (and references) from a CSV file.

    The format of ``smallfair experiment --dataset FILE``: one row per group with
    the columns ``group``, ``TP``, ``FN``, ``FP``, ``TN`` (column names are
    case-insensitive) and optionally

    - ``ref_TP``, ``ref_FN``, ``ref_FP``, ``ref_TN``: each group's reference
      matrix (e.g. everyone else in the population); or
    - rows whose group is ``ALL``: the whole population, so that each group's
      reference is ``ALL`` minus the group (the layout of the published tables);
    - a ``dataset`` column: several populations in one file, each with its own
      ``ALL`` row; groups are then labelled ``"dataset|group"``.

    Without references or ``ALL`` rows, each group's reference is the sum of the
    other rows (leave-one-group-out).

    Parameters
    ----------
    path : str
        The CSV file.

    Returns
    -------
    counts : pandas.DataFrame
        Columns ``TP``, ``FN``, ``FP``, ``TN``, one row per group (index
        ``group``).
    reference : pandas.DataFrame or str
        The reference matrices (same layout), or ``"rest"``.

    Raises
    ------
    CLIError
        When the file is missing or malformed; the message names the problem.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "groups.csv"
    >>> _ = path.write_text(
    ...     "group,TP,FN,FP,TN\\nA,27,17,104,169\\nB,7,12,38,167\\nALL,39,34,159,412\\n"
    ... )
    >>> counts, reference = read_group_counts(str(path))
    >>> reference
           TP  FN   FP   TN
    group
    A      12  17   55  243
    B      32  22  121  245
    """
    frame = _read_csv(path)
    lower = {str(c).lower(): c for c in frame.columns}
    wanted = ["group", *CELLS]
    missing = [c for c in wanted if c.lower() not in lower]
    if missing:
        available = ", ".join(str(c) for c in frame.columns)
        raise CLIError(
            f"column(s) {', '.join(repr(c) for c in missing)} not found in {path}; "
            f"a per-group file needs columns group, TP, FN, FP, TN (optionally "
            f"ref_TP, ref_FN, ref_FP, ref_TN); available columns: {available}"
        )
    ref_present = [c for c in _REF_CELLS if c.lower() in lower]
    if ref_present and len(ref_present) < 4:
        absent = [c for c in _REF_CELLS if c not in ref_present]
        raise CLIError(
            f"{path} has reference column(s) {ref_present} but not {absent}; give "
            f"all four ref_ columns or none"
        )
    cell_cols = [lower[c.lower()] for c in CELLS]
    ref_cols = [lower[c.lower()] for c in _REF_CELLS] if ref_present else []
    for column in cell_cols + ref_cols:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() | ~np.isfinite(values) | (values < 0)
        if bad.any():
            first = frame[column].iloc[int(np.argmax(bad.to_numpy()))]
            raise CLIError(
                f"column {column!r} of {path} must hold counts (numbers >= 0); line "
                f"{_line_of(frame, bad)} has {str(first)!r}"
            )
        frame[column] = values
    group = frame[lower["group"]]
    if group.isna().any():
        raise CLIError(
            f"column 'group' of {path} has missing label(s) (first on line "
            f"{_line_of(frame, group.isna())})"
        )
    group = group.astype(str)
    dataset = frame[lower["dataset"]].astype(str) if "dataset" in lower else None
    labels = group if dataset is None else dataset + "|" + group
    is_all = (group == "ALL").to_numpy()
    keep = ~is_all
    if not keep.any():
        raise CLIError(f"{path} has no group rows besides ALL")
    dup = labels[keep].duplicated()
    if dup.any():
        raise CLIError(
            f"group {labels[keep][dup].iloc[0]!r} appears more than once in {path}"
        )
    index = pd.Index(labels[keep].to_numpy(), name="group")
    counts = pd.DataFrame(
        frame.loc[keep, cell_cols].to_numpy(), index=index, columns=list(CELLS)
    )
    if is_all.any():
        if ref_cols:
            raise CLIError(
                f"{path} has both ALL rows and ref_ columns; give one kind of reference"
            )
        key = dataset if dataset is not None else pd.Series("", index=frame.index)
        totals = frame.loc[is_all, cell_cols].set_axis(list(CELLS), axis=1)
        totals.index = key[is_all].to_numpy()
        if totals.index.duplicated().any():
            raise CLIError(f"{path} has more than one ALL row for the same dataset")
        own = key[keep].to_numpy()
        lacking = sorted(set(own) - set(totals.index))
        if lacking:
            raise CLIError(
                f"{path} has ALL rows but none for dataset(s) {lacking}; add them or "
                f"drop the ALL rows"
            )
        ref = totals.loc[own].to_numpy() - counts.to_numpy()
        if (ref < 0).any():
            bad = index[(ref < 0).any(axis=1)][0]
            raise CLIError(
                f"in {path} the ALL row is smaller than group {bad!r} in some cell; "
                f"ALL must count the whole population"
            )
        return counts, pd.DataFrame(ref, index=index, columns=list(CELLS))
    if ref_cols:
        ref = frame.loc[keep, ref_cols].to_numpy()
        return counts, pd.DataFrame(ref, index=index, columns=list(CELLS))
    if len(counts) < 2:
        raise CLIError(
            f"{path} has a single group and no reference; add other groups, an ALL "
            f"row or ref_TP, ref_FN, ref_FP, ref_TN columns"
        )
    return counts, "rest"


# ---------------------------------------------------------------------------
# rows, chunk by chunk
# ---------------------------------------------------------------------------

#: Rows read at a time by ``smallfair audit`` (bounds its memory).


def _check_file(path, what):
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file not found: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a {what} file")


def _chunk_column(values):
    """A column of a chunk as a numpy array, or codes and labels (categorical)."""
    from .._groups import _category_column

    coded = _category_column(values, as_object=False)
    return coded if coded is not None else values.to_numpy()


#: Rows read first to tell text columns from numbers.
_SNIFF_ROWS = 10_000


def _csv_chunks(path, columns, *, sep, chunksize, categorical=()):
    """``(n_rows_total, chunks)``; chunks are ``(first_row, {column: values})``.

    The ``categorical`` columns that hold text in the first rows are parsed as
    categories (codes and labels: no Python string per row), the others as
    pandas infers them.
    """
    _check_file(path, "CSV")
    header = _csv_call(path, lambda: pd.read_csv(path, sep=sep, nrows=0))
    _require_columns(header, columns, path)
    wanted = list(dict.fromkeys(columns))
    dtype = {}
    if categorical:
        first = _csv_call(
            path, lambda: pd.read_csv(path, sep=sep, usecols=wanted, nrows=_SNIFF_ROWS)
        )
        dtype = {
            c: "category"
            for c in dict.fromkeys(categorical)
            if first[c].dtype.kind == "O" or pd.api.types.is_string_dtype(first[c])
        }

    def chunks():
        reader = _csv_call(
            path,
            lambda: pd.read_csv(
                path, sep=sep, usecols=wanted, chunksize=chunksize, dtype=dtype
            ),
        )
        start = 0
        iterator = iter(reader)
        while True:
            frame = _csv_call(path, lambda: next(iterator, None))
            if frame is None:
                break
            if frame.shape[0] == 0:
                continue
            yield start, {c: _chunk_column(frame[c]) for c in columns}
            start += frame.shape[0]
        if start == 0:
            raise CLIError(f"{path} has a header but no data rows")

    return None, chunks()


def _csv_call(path, read):
    """Run ``read`` (a step of reading the CSV file), turning failures into
    CLIError."""
    try:
        return read()
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path} is empty (no header and no rows)") from None
    except UnicodeDecodeError:
        raise CLIError(f"cannot read {path}: it is not a UTF-8 text CSV file") from None
    except pd.errors.ParserError as exc:
        raise CLIError(f"cannot parse {path} as CSV: {_one_line(exc)}") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None


def _parquet_chunks(path, columns, *, chunksize):
    """``(n_rows_total, chunks)`` of a Parquet file, read batch by batch
    (``pyarrow``); only ``columns`` are read, text as codes and labels."""
    from .._dataframes import _arrow_column

    _check_file(path, "Parquet")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CLIError(
            "reading Parquet files needs pyarrow: pip install "
            "'sklearn-smallfair[parquet]' (or pip install pyarrow)"
        ) from None
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow's errors: ArrowInvalid, OSError
        raise CLIError(f"cannot read {path} as Parquet: {_one_line(exc)}") from None
    names = parquet.schema_arrow.names
    _require_columns(pd.DataFrame(columns=names), columns, path)
    wanted = list(dict.fromkeys(columns))
    n_rows = parquet.metadata.num_rows
    if n_rows == 0:
        raise CLIError(f"{path} has columns but no data rows")

    def chunks():
        start = 0
        try:
            for batch in parquet.iter_batches(batch_size=chunksize, columns=wanted):
                if batch.num_rows == 0:
                    continue
                values = {
                    c: _arrow_column(batch.column(batch.schema.get_field_index(c)))
                    for c in wanted
                }
                yield start, values
                start += batch.num_rows
        except (OSError, ValueError) as exc:
            raise CLIError(f"cannot read {path}: {_one_line(exc)}") from None

    return n_rows, chunks()


def read_chunks(path, columns, *, fmt, sep=",", chunksize=CHUNK_ROWS, categorical=()):
    """Read the ``columns`` of a CSV or Parquet file, ``chunksize`` rows at a time.

    Parameters
    ----------
    path : str
        The file.
    columns : list of str
        The columns to read (checked before any row is read).
    fmt : {"csv", "parquet"}
        The file's format.
    sep : str, default=","
        CSV field delimiter.
    chunksize : int, default=1_000_000
        Rows per chunk.
    categorical : sequence of str, default=()
        Columns of labels (groups): text in a CSV file is read as categories.

    Returns
    -------
    n_rows : int or None
        Rows in the file when known without reading it (Parquet), else None.
    chunks : iterator of (int, dict)
        ``(index of the chunk's first row, {column: values})``; values are numpy
        arrays, or codes and labels for categorical and text Parquet columns.
    """
    if fmt == "parquet":
        return _parquet_chunks(path, columns, chunksize=chunksize)
    return _csv_chunks(
        path, columns, sep=sep, chunksize=chunksize, categorical=categorical
    )


class Progress:
    """Rows read so far, on stderr: a tqdm bar when tqdm is installed, else one
    line rewritten in place.

    Parameters
    ----------
    total : int or None
        Rows expected, when known.
    enabled : bool
        Whether anything is shown.
    err : file-like, default=None
        Where to show it (``sys.stderr``).
    """

    def __init__(self, total, enabled, err=None):
        self.total = total
        self.err = sys.stderr if err is None else err
        self.done = 0
        self.bar = None
        self.enabled = enabled
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self.bar = tqdm(
            total=total, unit=" rows", unit_scale=True, desc="reading", file=self.err
        )

    def update(self, rows):
        """Count ``rows`` more rows read."""
        self.done += rows
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(rows)
            return
        of = f" of {self.total:,}" if self.total else ""
        print(f"\rsmallfair: {self.done:,}{of} rows read", end="", file=self.err)
        self.err.flush()

    def close(self):
        """End the bar (or the line)."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
        elif self.done:
            print(file=self.err)


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------


def _check_output(path, option, *, force=False):
    """Fail early (before any work) when ``path`` cannot be written.

    Parameters
    ----------
    path : str or None
        The value of the option; None when the option is not given.
    option : str
        The option, for the message (e.g. ``"--out"``).
    force : bool, default=False
        The value of ``--force``: accept a symbolic link.
    """
    if path is None:
        return
    if not str(path):
        raise _UsageError(f"{option} is empty; give the name of the file to write")
    p = Path(path)
    if p.is_symlink():
        if not force:
            raise _UsageError(
                f"{option} {path} is a symbolic link (to {os.readlink(p)}); "
                f"refusing to write through it: remove the link, choose another "
                f"file, or pass --force to write to the file it points to"
            )
        p = Path(os.path.realpath(p))
    if p.is_dir():
        raise CLIError(f"{option} {path} is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(f"{option}: directory {parent} does not exist")


def _same_file(a, b):
    """Whether the paths ``a`` and ``b`` name the same file (links resolved)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def _check_distinct(inputs, outputs):
    """Usage error when an output is an input or two outputs are one file.

    Parameters
    ----------
    inputs, outputs : list of (str, str or None)
        ``(option, path)`` pairs; options not given have path None.
    """
    inputs = [(o, p) for o, p in inputs if p]
    outputs = [(o, p) for o, p in outputs if p]
    for out_option, out_path in outputs:
        for in_option, in_path in inputs:
            if _same_file(out_path, in_path):
                raise _UsageError(
                    f"{out_option} {out_path} is the input file of {in_option} "
                    f"{in_path}; smallfair never writes over its input: choose "
                    f"another file for {out_option}"
                )
    for (first, first_path), (second, second_path) in itertools.combinations(
        outputs, 2
    ):
        if _same_file(first_path, second_path):
            raise _UsageError(
                f"{first} {first_path} and {second} {second_path} name the same "
                f"file; give each output its own file"
            )


def _write(data, path, what, *, force=False):
    """Write ``data`` to ``path`` whole; return the absolute path written.

    Parameters
    ----------
    data : str, bytes or callable
        The content, or a function writing it to a binary file object
        (:func:`~sklearn_smallfair._output.write_atomic`).
    path : str
        The file.
    what : str
        What is written, for the message of a failure (e.g. "the CSV").
    force : bool, default=False
        The value of ``--force``.
    """
    try:
        write_atomic(path, data, what=what, force=force)
    except ValueError as exc:  # a link or a folder that appeared meanwhile
        raise CLIError(f"cannot write {what} to {path}: {exc}") from None
    except OSError as exc:
        raise CLIError(
            f"cannot write {what} to {path}: {exc.strerror or exc}"
        ) from None
    return os.path.abspath(path)


def _show(text):
    """Text (a path, a label) as printed on the terminal."""
    return display_label(text)


def _agg_backend():
    """Select matplotlib's file-only backend when pyplot is not loaded yet."""
    if "matplotlib.pyplot" in sys.modules:
        return
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")


def _summary(report):
    return report.summary().replace("(see .frame)", "(see the HTML report)")
