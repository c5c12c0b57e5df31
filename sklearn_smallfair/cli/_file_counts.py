"""Reading the input table of ``smallfair audit`` and ``smallfair plan``: the
per-group confusion matrices, counted chunk by chunk.

The file is read once (:func:`~._io.read_chunks`); each chunk's rows are
counted by their labels as written (the group labels, the true and the
predicted label), and the labels are interpreted only once the whole file is
read, so that the result does not depend on ``--chunksize``:

- a group label is its text, exactly as written (``01``, ``1`` and ``1.0`` are
  three groups, ``NA`` and ``null`` are groups); an empty field is missing;
- a label column (target or prediction) holds numbers when every value is a
  number (``1`` and ``1.0`` are then one class; a value with a fraction is a
  score, not a class), booleans when every value is ``true`` or ``false``
  (any case), else text; numbers mixed with text are an error naming the odd
  values;
- a column of booleans beside a column of 0 and 1 is read as 1 (``True``) and
  0 (``False``); any other mix of kinds between the two columns is an error.

A source counted by DuckDB (:mod:`._sources`: a folder or a glob of Parquet
files, a SQL query) comes as its table of counts, labels typed by the engine:
its group labels keep their types; its label columns follow the rules above.
"""

import decimal
import shlex

import numpy as np
import pandas as pd

from . import _io
from ._options import CLIError, _one_line, _UsageError

_MAX_CLASSES = 100

_TRUE_WORDS = ("true",)
_FALSE_WORDS = ("false",)


def _where(path, fmt, position):
    """Where row ``position`` (from 0) is: its CSV line (header = line 1) or its
    Parquet row (from 1)."""
    if fmt == "parquet":
        return f"row {position + 1}"
    return f"line {position + 2}"


def _shown(values, limit=10):
    """Up to ``limit`` values, with repr, sorted as text."""
    values = sorted(values, key=str)
    more = ", ..." if len(values) > limit else ""
    return ", ".join(repr(v) for v in values[:limit]) + more


def _check_columns(args):
    """The group columns of the options, checked against the label columns.

    Parameters
    ----------
    args : argparse.Namespace
        The options ``target``, ``prediction`` and ``group``.

    Returns
    -------
    list of str
        The group columns.
    """
    groups = list(args.group)
    twice = sorted({g for g in groups if groups.count(g) > 1})
    if twice:
        raise _UsageError(f"--group lists column(s) {twice} more than once")
    if args.target == args.prediction:
        raise _UsageError(
            f"--target and --prediction both name column {args.target!r}; the "
            f"true and the predicted labels must be two columns"
        )
    return groups


# ---------------------------------------------------------------------------
# the labels of a label column
# ---------------------------------------------------------------------------


def _plain(value):
    """A label as a Python value (numpy scalars unwrapped)."""
    return value.item() if isinstance(value, np.generic) else value


def _as_number(value):
    """The number a label spells (int or finite float), else None."""
    value = _plain(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (float, decimal.Decimal)):
        if not np.isfinite(float(value)):
            return None
        return int(value) if value == int(value) else float(value)
    if not isinstance(value, str) or "_" in value:
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return number if np.isfinite(number) else None


def _as_bool(value):
    """The boolean a label spells (``True``, ``"false"``, ...), else None."""
    value = _plain(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


class _Column:
    """How the labels of one label column read: their kind and their values.

    Parameters
    ----------
    raw : dict
        Each distinct label as read (text in a CSV file) and its number of rows.
    column, path : str
        The column and the file, for messages.

    Attributes
    ----------
    kind : {"number", "bool", "text"}
    value : dict
        Each label as read and its value (int, float, bool or str).
    """

    def __init__(self, raw, column, path):
        self.column, self.path = column, path
        numbers = {r: _as_number(r) for r in raw}
        bools = {r: _as_bool(r) for r in raw}
        text = [r for r in raw if numbers[r] is None and bools[r] is None]
        numeric = [r for r in raw if numbers[r] is not None]
        if text and len(text) < len(raw):
            self._mixed(raw, text)
        if text:
            self.kind = "text"
            self.value = {r: _group_text(r) for r in raw}
            return
        if not numeric:
            self.kind = "bool"
            self.value = dict(bools)
            return
        fractions = [r for r in numeric if not float(numbers[r]).is_integer()]
        if fractions:
            raise CLIError(
                f"column {column!r} of {path} holds continuous values (e.g. "
                f"{_shown(fractions, 3)}), but class labels are needed; threshold "
                f"the scores into class labels first"
            )
        value = {r: int(numbers[r]) for r in numeric}
        flags = [r for r in raw if r not in value]
        if flags:  # true/false beside numbers: 1 and 0 when the numbers are 0/1
            if not set(value.values()) <= {0, 1}:
                self._mixed(raw, flags)
            value.update({r: int(bools[r]) for r in flags})
        self.kind = "number"
        self.value = value

    def _mixed(self, raw, odd):
        """Raise the error of a column mixing numbers and text."""
        rows = {r: raw[r] for r in odd}
        rest = [r for r in raw if r not in rows]
        if sum(raw[r] for r in rest) < sum(rows.values()):
            rows, rest = {r: raw[r] for r in rest}, list(rows)
        raise CLIError(
            f"column {self.column!r} of {self.path} mixes numbers and text: "
            f"{sum(rows.values())} row(s) hold {_shown(rows)} among "
            f"{_shown(rest)}; class labels must be all numbers or all text: fix "
            f"or drop those rows"
        )

    @property
    def classes(self):
        """The distinct values."""
        return set(self.value.values())


def _reconcile(true, pred):
    """Make the kinds of the two label columns agree, or raise."""
    kinds = {true.kind, pred.kind}
    if len(kinds) == 1:
        return
    if kinds == {"bool", "number"}:
        flags, numbers = (true, pred) if true.kind == "bool" else (pred, true)
        if numbers.classes <= {0, 1}:
            flags.value = {r: int(v) for r, v in flags.value.items()}
            flags.kind = "number"
            return
    described = {
        "bool": "booleans",
        "number": "numbers",
        "text": "text labels",
    }
    raise CLIError(
        f"column {true.column!r} of {true.path} holds {described[true.kind]} "
        f"({_shown(true.classes)}) but column {pred.column!r} holds "
        f"{described[pred.kind]} ({_shown(pred.classes)}); the true and the "
        f"predicted labels must name the same classes: recode one of the columns"
    )


# ---------------------------------------------------------------------------
# counting
# ---------------------------------------------------------------------------


def _group_text(value):
    """A group label as text (a Parquet column keeps its type until here)."""
    value = _plain(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return repr(value)
    return str(value)


def _check_groups(values, column, path, fmt, start):
    """A chunk's group column as codes and text labels; no missing or blank label."""
    missing = values.codes < 0
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"group column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); fill them "
            f"(e.g. with 'unknown') or drop those rows"
        )
    labels = np.array([_group_text(v) for v in values.categories], dtype=object)
    blank = np.array([v.strip() == "" for v in labels], dtype=bool)
    if blank.any():
        rows = blank[values.codes]
        if rows.any():
            first = start + int(np.flatnonzero(rows)[0])
            raise CLIError(
                f"group column {column!r} of {path} has {int(rows.sum())} blank "
                f"label(s) (first on {_where(path, fmt, first)}); fill them "
                f"or drop those rows"
            )
    return values.codes, labels


def _check_labels(values, column, path, fmt, start):
    """A chunk's label column as codes and labels; no missing value."""
    missing = values.codes < 0
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); drop or fill "
            f"those rows"
        )
    return values.codes, np.array([_plain(v) for v in values.categories], dtype=object)


class _Table:
    """The rows of a file counted by (group labels..., true, predicted label).

    Attributes
    ----------
    counts : dict
        ``{(group label, ..., true label, predicted label): rows}``, labels as
        read.
    rows : int
        Rows read.
    true, pred : _Column
        How the labels of the target and the prediction read.
    """

    def __init__(self, args, source, fmt, groups, *, name=None):
        self.args, self.source, self.fmt, self.groups = args, source, fmt, groups
        self.path = _io._input_name(source) if name is None else name
        self.counts = {}
        self.rows = 0
        self.seen = ({}, {})
        # labels of typed sources (DuckDB) keep their types, text otherwise
        self.typed = fmt == "duckdb"

    def add_counts(self, keys, rows):
        """Count a table of counts: ``keys`` ``(group labels..., true label,
        predicted label)`` (distinct, as the engine typed them) and their
        numbers of ``rows``."""
        args = self.args
        for key, count in zip(keys, rows):
            self.counts[key] = self.counts.get(key, 0) + count
            for seen, value in zip(self.seen, key[-2:]):
                seen[value] = seen.get(value, 0) + count
            self.rows += count
        for seen, column in zip(self.seen, (args.target, args.prediction)):
            if len(seen) > _MAX_CLASSES:
                self._check_classes(_Column(seen, column, self.path))

    def add(self, start, chunk):
        """Count a chunk."""
        args, path, fmt = self.args, self.path, self.fmt
        parts = [_check_groups(chunk[g], g, path, fmt, start) for g in self.groups]
        for column in (args.target, args.prediction):
            codes, labels = _check_labels(chunk[column], column, path, fmt, start)
            if len(labels) > _MAX_CLASSES:  # scores, not classes: stop early
                rows = np.bincount(codes, minlength=len(labels)).tolist()
                self._check_classes(_Column(dict(zip(labels, rows)), column, path))
            parts.append((codes, labels))
        codes = [c.astype(np.int64) for c, _ in parts]
        dims = tuple(max(1, len(labels)) for _, labels in parts)
        if float(np.prod(dims, dtype=np.float64)) < 2.0**62:
            keys, n = np.unique(np.ravel_multi_index(codes, dims), return_counts=True)
            combos = np.unravel_index(keys, dims)
        else:  # pragma: no cover - more label combinations than int64 holds
            combos, n = np.unique(np.stack(codes), axis=1, return_counts=True)
        labels = [lab[c] for (_, lab), c in zip(parts, combos)]
        for key, count in zip(zip(*labels), n.tolist()):
            self.counts[key] = self.counts.get(key, 0) + count
        for seen, values in zip(self.seen, labels[-2:]):
            for value, count in zip(values, n.tolist()):
                seen[value] = seen.get(value, 0) + count
        self.rows += codes[0].shape[0]
        for seen, column in zip(self.seen, (args.target, args.prediction)):
            if len(seen) > _MAX_CLASSES:
                self._check_classes(_Column(seen, column, path))

    def _check_classes(self, labels):
        if len(labels.classes) > _MAX_CLASSES:
            raise CLIError(
                f"column {labels.column!r} of {labels.path} must hold class "
                f"labels, but has {len(labels.classes)} or more distinct values "
                f"({_shown(labels.classes)}); an audit takes at most "
                f"{_MAX_CLASSES} classes: bin the values into classes"
            )

    def finish(self):
        """Interpret the labels of the whole file (see the module)."""
        args = self.args
        self.true = _Column(self.seen[0], args.target, self.path)
        self.pred = _Column(self.seen[1], args.prediction, self.path)
        for labels in (self.true, self.pred):
            self._check_classes(labels)
        _reconcile(self.true, self.pred)
        try:
            found = sorted(self.true.classes | self.pred.classes)
        except TypeError:  # pragma: no cover - one kind per column
            found = sorted(self.true.classes | self.pred.classes, key=str)
        self.classes = found
        return self

    def rows_by_group(self):
        """``(group labels sorted, group of each key, true, predicted, rows)``."""
        from .._groups import _joinable

        k = len(self.groups)
        keys = list(self.counts)
        if k == 1:
            label = [key[0] for key in keys]
        else:
            label = ["|".join(_joinable(v) for v in key[:k]) for key in keys]
        names = sorted(set(label))
        true = [self.true.value[key[k]] for key in keys]
        pred = [self.pred.value[key[k + 1]] for key in keys]
        n = np.array([self.counts[key] for key in keys], dtype=np.int64)
        return names, label, true, pred, n


def _read_table(args, source, fmt, groups, err):
    """Read the file once and count its rows: a finished :class:`_Table`.

    ``source`` is a path (with ``fmt``) or a :class:`~._sources.Source`; a
    source read by DuckDB is counted by one query (see :mod:`._sources`).
    """
    from ._sources import Source, count_duckdb

    if isinstance(source, Source):
        if source.kind == "duckdb":
            table = _Table(args, source.value, "duckdb", groups, name=source.name)
            count_duckdb(args, source, groups, err, table)
            return table.finish()
        source, fmt = source.value, source.kind
    table = _Table(args, source, fmt, groups)
    with _io.read_chunks(
        source,
        [args.target, args.prediction, *groups],
        fmt=fmt,
        sep=args.sep,
        chunksize=args.chunksize,
    ) as (n_rows, chunks):
        progress = _io.Progress(
            n_rows,
            enabled=args.progress
            if args.progress is not None
            else getattr(err, "isatty", lambda: False)(),
            err=err,
        )
        try:
            for start, chunk in chunks:
                table.add(start, chunk)
                progress.update(chunk[args.target].shape[0])
        finally:
            progress.close()
    return table.finish()


# ---------------------------------------------------------------------------
# binary and multiclass tables
# ---------------------------------------------------------------------------


def _suggest(value):
    """``--pos-label VALUE`` as typed in a shell (``--pos-label=-x`` for a value
    that starts with a dash, which would read as an option)."""
    text = str(value)
    if text.startswith("-"):
        return f"--pos-label={shlex.quote(text)}"
    return f"--pos-label {shlex.quote(text)}"


def _pos_label(text, table):
    """The positive class of binary labels, in the type of the labels."""
    labels = table.classes
    kind = table.true.kind
    shown = _shown(labels)
    columns = f"{table.args.target!r} and {table.args.prediction!r}"

    def unknown():
        choices = " or ".join(_suggest(v) for v in labels)
        return _UsageError(
            f"--pos-label {text!r} is not a label of {columns} ({shown}); pass "
            f"{choices}"
        )

    if kind == "bool":
        if text is None:
            return True
        value = _as_bool(text)
        if value is None:
            number = _as_number(text)
            value = bool(number) if number in (0, 1) else None
        if value is None:
            raise unknown()
        return value
    if kind == "number":
        if text is None:
            if set(labels) <= {0, 1} or set(labels) <= {-1, 1}:
                return 1
            raise CLIError(
                f"columns {columns} hold the classes {shown}, so the positive "
                f"class is not known; name it with {_suggest(labels[-1])}"
            )
        value = _as_number(text)
        if value is None:
            flag = _as_bool(text)
            value = None if flag is None else int(flag)
        if value is None or not float(value).is_integer():
            raise unknown()
        value = int(value)
        if value not in labels and len(labels) == 2:
            raise unknown()
        return value
    if text is None:
        raise CLIError(
            f"columns {columns} hold text labels ({shown}), so the positive class "
            f"is not known; name it with {_suggest(labels[-1])}"
        )
    if text not in labels and len(labels) == 2:
        raise unknown()
    return text


def _binary_counts(table):
    """The groups' confusion matrices (columns TP, FN, FP, TN) of binary labels."""
    pos = _pos_label(table.args.pos_label, table)
    names, label, true, pred, n = table.rows_by_group()
    row = pd.Index(names).get_indexer(label)
    cell = np.array(
        [2 * (t != pos) + (p != pos) for t, p in zip(true, pred)], dtype=np.int64
    )
    counts = np.zeros((len(names), 4), dtype=np.int64)
    np.add.at(counts, (row, cell), n)
    index = _group_index(names, table)
    return pd.DataFrame(counts, index=index, columns=["TP", "FN", "FP", "TN"])


def _group_index(names, table):
    """The groups' index: text labels (objects), or the labels in their type
    for a typed source of one group column (integers stay integers)."""
    name = "|".join(table.groups)
    if table.typed and len(table.groups) == 1:
        return pd.Index(names, name=name)
    return pd.Index(np.array(names, dtype=object), name=name)


def _class_counts(table):
    """The groups' K x K matrices (rows true, columns predicted) as
    :class:`~sklearn_smallfair.metrics.MulticlassCounts`."""
    from ..metrics import MulticlassCounts

    args = table.args
    classes = _class_order(
        args.labels, np.array(table.classes), (args.target, args.prediction), table.path
    )
    names, label, true, pred, n = table.rows_by_group()
    index = pd.Index(classes, dtype=object)
    counts = np.zeros((len(names), len(classes), len(classes)), dtype=np.int64)
    np.add.at(
        counts,
        (
            pd.Index(names).get_indexer(label),
            index.get_indexer(true),
            index.get_indexer(pred),
        ),
        n,
    )
    groups_index = _group_index(names, table)
    return MulticlassCounts(groups_index, np.asarray(classes), counts)


def _count_file(args, source, fmt, groups, err, *, multiclass=None):
    """Read the file once and count each group's confusion matrix.

    Parameters
    ----------
    args : argparse.Namespace
        The options (``target``, ``prediction``, ``pos_label``, ``labels``,
        ``sep``, ``chunksize``, ``progress``).
    source : str or Source
        The file, or ``-`` for the standard input; or the
        :class:`~._sources.Source` of the options (then ``fmt`` is its own).
    fmt : {"csv", "parquet"}
        The file's format.
    groups : list of str
        The group columns.
    err : file-like
        Where the progress is shown.
    multiclass : bool, default=None
        None: binary counts for two classes (unless ``--labels``), K x K
        matrices for more; False: binary counts, or an error for more than two
        classes.

    Returns
    -------
    counts : pandas.DataFrame or MulticlassCounts
        Columns TP, FN, FP, TN, one row per group; or the K x K matrices.
    rows : int
        Rows read.
    """
    table = _read_table(args, source, fmt, groups, err)
    binary = len(table.classes) <= 2 and getattr(args, "labels", None) is None
    if binary:
        return _binary_counts(table), table.rows
    if multiclass is False:
        raise CLIError(
            f"columns {args.target!r} and {args.prediction!r} of {table.path} hold "
            f"{len(table.classes)} classes ({_shown(table.classes)}); this command "
            f"takes binary labels: recode them into two classes"
        )
    if args.pos_label is not None:
        raise _UsageError(
            f"--pos-label {args.pos_label!r} names the positive class of "
            f"binary labels, but {args.target!r} and {args.prediction!r} "
            f"hold more than two classes, each audited in turn as the "
            f"positive one: drop --pos-label (--labels a,b,c fixes the "
            f"classes' order)"
        )
    try:
        return _class_counts(table), table.rows
    except TypeError as exc:  # pragma: no cover - one kind per column
        raise CLIError(f"{table.path}: {_one_line(exc)}") from None


def _class_order(text, found, names, source):
    """The classes of ``--labels`` (matched to the columns' values), else the
    sorted classes found."""
    if text is None:
        return found.tolist()
    given = [t.strip() for t in text.split(",")]
    if len(given) < 2 or any(not t for t in given):
        raise _UsageError(
            f"--labels {text!r} must list at least two classes separated by "
            f"commas, e.g. --labels low,mid,high"
        )
    if len(set(given)) != len(given):
        raise _UsageError(f"--labels {text!r} lists a class more than once")
    spelled = {}
    for v in found.tolist():
        spelled[str(v)] = v
        if isinstance(v, float) and v.is_integer():
            spelled[str(int(v))] = v
        if isinstance(v, (bool, np.bool_)):
            spelled[str(v).lower()] = v
    named = [spelled[t] for t in given if t in spelled]
    missing = [str(v) for v in found.tolist() if not any(v == w for w in named)]
    if missing:
        raise CLIError(
            f"columns {names[0]!r} and {names[1]!r} of {source} have class(es) "
            f"{', '.join(repr(m) for m in missing)} that are not in --labels "
            f"{text!r}; add them to --labels or drop those rows"
        )
    kinds = {type(v) for v in found.tolist()}
    out = []
    for t in given:
        if t in spelled:
            out.append(spelled[t])
        elif kinds <= {int, float, np.int64, np.float64}:  # a class nobody has
            try:
                value = float(t)
            except ValueError:
                raise _UsageError(
                    f"--labels names class {t!r}, but the label columns hold numbers"
                ) from None
            out.append(int(value) if value.is_integer() else value)
        else:
            out.append(t)
    return out
