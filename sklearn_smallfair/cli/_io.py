"""Reading and writing the files of the ``smallfair`` command.

Every failure to read or write becomes a :class:`CLIError` whose message names
the file and the problem. The command never writes over one of its inputs, two
of its outputs are never the same file, and every output is written whole by
:func:`~sklearn_smallfair._output.write_atomic` (a symbolic link is written
through only with ``--force``).
"""

import contextlib
import io
import itertools
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .._confusion import CELLS
from .._groups import _Coded
from .._output import display_label, write_atomic
from ._options import CHUNK_ROWS, CLIError, _one_line, _UsageError

_REF_CELLS = tuple(f"ref_{c}" for c in CELLS)

#: Group labels of a per-group file that name the whole population (any case,
#: spaces around them ignored): the ``ALL`` row of the published tables.
_POPULATION = ("all", "total", "overall", "population")

# ---------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------


def _read_csv(path, *, sep=","):
    """Read a small CSV file into a DataFrame of text, turning every failure
    into a CLIError.

    Every value is read as the text written (``01`` stays ``01``, ``NA`` is the
    text ``NA``); only an empty field is missing (NaN). The columns are the
    names of the header as written, repeated names included.

    Parameters
    ----------
    path : str
        The file, or ``-`` for the standard input.
    sep : str, default=","
        Field delimiter.

    Returns
    -------
    pandas.DataFrame
    """
    name = _input_name(path)
    with _open_input(path, "CSV") as handle:
        _csv_call(name, lambda: pd.read_csv(handle, sep=sep, nrows=0))
        handle.seek(0)
        frame = _csv_call(
            name,
            lambda: pd.read_csv(
                handle,
                sep=sep,
                header=None,
                dtype=str,
                keep_default_na=False,
                na_values=[""],
            ),
        )
    frame.columns = ["" if pd.isna(v) else str(v) for v in frame.iloc[0].tolist()]
    frame = frame.iloc[1:].reset_index(drop=True)
    if frame.shape[0] == 0:
        raise CLIError(f"{name} has a header but no data rows")
    return frame


def _column_name(name):
    """A column name as listed in messages: plain, or with ``repr`` when it has
    spaces at either end, a comma or an invisible character."""
    plain = name and name == name.strip() and "," not in name
    return name if plain and display_label(name) == name else repr(name)


def _require_columns(names, columns, path):
    """Refuse columns that are not among ``names`` (the header), with a hint.

    A name with spaces at either end is shown with ``repr`` (``' p'``) so that
    its spaces are visible, and a column that the header spells with spaces
    around it or in another case is suggested: the header is not stripped.
    """
    names = [str(c) for c in names]
    missing = [c for c in dict.fromkeys(columns) if c not in names]
    if not missing:
        return
    shown = ", ".join(_column_name(c) for c in names[:40])
    shown += " ..." if len(names) > 40 else ""
    hints = []
    for column in missing:
        near = [n for n in names if n.strip().casefold() == column.strip().casefold()]
        if near:
            hints.append(f"did you mean {near[0]!r}?")
    hint = ""
    if hints:
        spaces = any(n != n.strip() for n in names)
        hint = " (" + " ".join(hints)
        hint += (
            " the header has spaces around its names: remove them from the file "
            "or quote the name with its spaces)"
            if spaces
            else ")"
        )
    elif len(names) == 1:
        found = [d for d in (";", "\t", "|") if d in names[0]]
        if found:
            hint = f" (is the delimiter {found[0]!r}? pass --sep {found[0]!r})"
    raise CLIError(
        f"column(s) {', '.join(repr(c) for c in missing)} not found in {path}; "
        f"available columns: {shown}{hint}"
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
      ``Total``, ``Overall`` and ``Population`` name it too, in any case and
      with spaces around them: such a row is never audited as a group;
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
    path = _input_name(path)
    lower = {}
    used = {c.lower() for c in ("group", "dataset", *CELLS, *_REF_CELLS)}
    for column in frame.columns:
        if column.lower() in lower and column.lower() in used:
            raise CLIError(
                f"{path} has two columns named {lower[column.lower()]!r} and "
                f"{column!r} (names are case-insensitive); give each column its "
                f"own name"
            )
        lower[column.lower()] = column
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
    is_all = group.str.strip().str.casefold().isin(_POPULATION).to_numpy()
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

#: The input file name that means the standard input.
STDIN = "-"


def _input_name(path):
    """The input as named in messages and titles (``stdin`` for ``-``)."""
    return "stdin" if path == STDIN else path


def _open_input(path, what):
    """A binary file object over the input, positioned at its start.

    A regular file is opened once and read from it as often as needed (it is
    seekable); the standard input (``-``), a pipe or ``/dev/stdin`` is read
    once into memory, so that it is not found empty on a second read.

    Parameters
    ----------
    path : str
        The file, or ``-`` for the standard input.
    what : str
        The format, for messages (``"CSV"``, ``"Parquet"``).

    Returns
    -------
    file object
        Binary, seekable; the caller closes it.
    """
    if path == STDIN:
        try:
            return io.BytesIO(sys.stdin.buffer.read())
        except (OSError, AttributeError, ValueError) as exc:
            raise CLIError(f"cannot read the standard input: {exc}") from None
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file not found: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a {what} file")
    try:
        handle = open(p, "rb")  # closed by the caller
        if handle.seekable():
            return handle
        with handle:  # a pipe: read it once
            return io.BytesIO(handle.read())
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None


def _check_header(names, columns, path):
    """Refuse a needed column that the header misses or names more than once."""
    for column in dict.fromkeys(columns):
        places = [k + 1 for k, name in enumerate(names) if name == column]
        if len(places) > 1:
            raise CLIError(
                f"column {column!r} appears {len(places)} times in the header of "
                f"{path} (columns {', '.join(map(str, places))}); give each column "
                f"its own name"
            )
    _require_columns(names, columns, path)


def _csv_chunks(handle, path, columns, *, sep, chunksize):
    """``(None, chunks)`` of a CSV file; see :func:`read_chunks`.

    Every column is read as text exactly as written (``01`` stays ``01``, ``NA``
    is the text ``NA``); only an empty field is missing.
    """
    _csv_call(path, lambda: pd.read_csv(handle, sep=sep, nrows=0))
    handle.seek(0)
    first = _csv_call(
        path,
        lambda: pd.read_csv(
            handle,
            sep=sep,
            header=None,
            nrows=1,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=True,
        ),
    )
    names = [str(v) for v in first.iloc[0].tolist()] if len(first) else []
    _check_header(names, columns, path)
    wanted = list(dict.fromkeys(columns))
    positions = sorted(names.index(c) for c in wanted)
    handle.seek(0)

    def chunks():
        reader = _csv_call(
            path,
            lambda: pd.read_csv(
                handle,
                sep=sep,
                header=0,
                usecols=positions,
                dtype=str,
                keep_default_na=False,
                na_values=[""],
                chunksize=chunksize,
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
            values = {}
            for k, position in enumerate(positions):
                values[names[position]] = _coded(frame.iloc[:, k])
            yield start, values
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


def _coded(values):
    """A column of a batch (numpy array or :class:`_Coded`) as :class:`_Coded`;
    missing values (None, NaN) get the code -1."""
    if isinstance(values, _Coded):
        return values
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return _Coded(codes, np.asarray(uniques, dtype=object))


def _parquet_chunks(handle, path, columns, *, chunksize):
    """``(n_rows_total, chunks)`` of a Parquet file, read batch by batch
    (``pyarrow``); see :func:`read_chunks`."""
    from .._frames import _arrow_column

    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise CLIError(
            "reading Parquet files needs pyarrow: pip install "
            "'sklearn-smallfair[parquet]' (or pip install pyarrow)"
        ) from None
    try:
        parquet = pq.ParquetFile(handle)
    except Exception as exc:  # pyarrow's errors: ArrowInvalid, OSError
        raise CLIError(f"cannot read {path} as Parquet: {_one_line(exc)}") from None
    schema = parquet.schema_arrow
    _check_header(list(schema.names), columns, path)
    wanted = list(dict.fromkeys(columns))
    for column in wanted:
        kind = schema.field(column).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_nested(kind):
            raise CLIError(
                f"column {column!r} of {path} holds nested values ({kind}); a "
                f"label or group column needs one plain value (text, number or "
                f"boolean) per row: flatten it into its own column first"
            )
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
                    c: _coded(
                        _arrow_column(batch.column(batch.schema.get_field_index(c)))
                    )
                    for c in wanted
                }
                yield start, values
                start += batch.num_rows
        except (OSError, ValueError, TypeError) as exc:
            raise CLIError(f"cannot read {path}: {_one_line(exc)}") from None

    return n_rows, chunks()


@contextlib.contextmanager
def read_chunks(path, columns, *, fmt, sep=",", chunksize=CHUNK_ROWS):
    """Read the ``columns`` of a CSV or Parquet file, ``chunksize`` rows at a time.

    The one reader of the command's tables: the input is opened once (the
    standard input, ``-``, and pipes are read once into memory), the header is
    checked first (a missing or repeated column is an error), and every column
    comes as codes and labels. In a CSV file every value is the text written
    (``01``, ``1`` and ``1.0`` are three labels; ``NA``, ``null`` and ``None``
    are labels); only an empty field is missing. A Parquet column keeps its
    type; a nested column (list, struct, map) is an error.

    Parameters
    ----------
    path : str
        The file, or ``-`` for the standard input.
    columns : list of str
        The columns to read (checked before any row is read).
    fmt : {"csv", "parquet"}
        The file's format.
    sep : str, default=","
        CSV field delimiter.
    chunksize : int, default=1_000_000
        Rows per chunk.

    Yields
    ------
    n_rows : int or None
        Rows in the file when known without reading it (Parquet), else None.
    chunks : iterator of (int, dict)
        ``(index of the chunk's first row, {column: _Coded})``; missing values
        have the code -1.
    """
    name = _input_name(path)
    handle = _open_input(path, "Parquet" if fmt == "parquet" else "CSV")
    try:
        if fmt == "parquet":
            yield _parquet_chunks(handle, name, columns, chunksize=chunksize)
        else:
            yield _csv_chunks(handle, name, columns, sep=sep, chunksize=chunksize)
    finally:
        handle.close()


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
    if str(path) == "-":
        raise _UsageError(
            f"{option} - would write a file named '-'; the outputs are files: give "
            f"a file name (standard output carries the summary)"
        )
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


def _write_all(outputs, *, force=False):
    """Write every output of a run, or none of them.

    Each output is first written whole to a temporary file of its folder (a
    short hidden name, so that any name the folder takes can be written); only
    when every one is written are they renamed over their destinations. When
    one fails, the temporary files are removed and no destination is touched.
    A destination that is a device or a pipe (``/dev/null``) is written to
    directly, after the others.

    Parameters
    ----------
    outputs : list of (data, str, str)
        ``(content, path, what)``: the content (str, bytes, or a function
        writing to a binary file object, as for
        :func:`~sklearn_smallfair._output.write_atomic`), the file, and what it
        is for messages (e.g. "the CSV").
    force : bool, default=False
        The value of ``--force``.

    Returns
    -------
    list of str
        The absolute paths written, in the order of ``outputs``.
    """
    from .._output import _put, check_destination, stage

    staged, direct = [], []
    try:
        for data, path, what in outputs:
            try:
                dest = check_destination(path, force=force)
            except ValueError as exc:  # a link or a folder that appeared meanwhile
                raise CLIError(f"cannot write {what} to {path}: {exc}") from None
            try:
                info = os.stat(dest)
            except OSError:
                info = None
            if info is not None and not stat.S_ISREG(info.st_mode):
                direct.append((data, dest, path, what))
                continue
            if info is not None and not os.access(dest, os.W_OK):
                raise CLIError(f"cannot write {what} to {path}: the file is read-only")
            try:
                staged.append((stage(dest, data, info), dest, path, what))
            except OSError as exc:
                raise CLIError(
                    f"cannot write {what} to {path}: {exc.strerror or exc}"
                ) from None
        while staged:
            tmp, dest, path, what = staged[0]
            try:
                os.replace(tmp, dest)
            except OSError as exc:
                raise CLIError(
                    f"cannot write {what} to {path}: {exc.strerror or exc}"
                ) from None
            staged.pop(0)
    finally:
        for tmp, *_ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    for data, dest, path, what in direct:
        try:
            with open(dest, "wb") as fh:
                _put(fh, data)
        except OSError as exc:
            raise CLIError(
                f"cannot write {what} to {path}: {exc.strerror or exc}"
            ) from None
    return [os.path.abspath(path) for _, path, _ in outputs]


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
