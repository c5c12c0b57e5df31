"""Reading the input table of ``smallfair audit`` and ``smallfair plan``: the
per-group confusion matrices, counted chunk by chunk."""

import numpy as np
import pandas as pd

from . import _io
from ._options import CLIError, _one_line, _UsageError

_MAX_CLASSES = 100


def _where(path, fmt, position):
    """Where row ``position`` (from 0) is: its CSV line (header = line 1) or its
    Parquet row (from 1)."""
    if fmt == "parquet":
        return f"row {position + 1}"
    return f"line {position + 2}"


def _missing(values):
    """Mask of missing labels (NaN, None) in a chunk's column."""
    from .._groups import _Coded
    from .._validation import _missing_mask

    if isinstance(values, _Coded):
        return values.codes < 0
    if values.dtype.kind in "biu":
        return np.zeros(values.shape[0], dtype=bool)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.asarray(pd.isna(values), dtype=bool) | _missing_mask(values)


def _label_values(values, column, path, fmt, start):
    """A chunk's column of class labels, checked; returns its distinct labels."""
    from .._validation import _distinct

    missing = _missing(values)
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); drop or fill "
            f"those rows"
        )
    labels = _distinct(values)
    return labels


class _Multiclass(Exception):
    """The label columns hold more than two classes: count K x K matrices."""


class _Labels:
    """The distinct labels of a label column over the chunks read so far."""

    def __init__(self, column, path, binary=True):
        self.column, self.path, self.binary = column, path, binary
        self.values = pd.Index([])
        self.kinds = set()

    def add(self, labels, kind):
        self.kinds.add(kind)
        self.values = self.values.append(pd.Index(list(labels))).unique()
        values = self.values
        if any(isinstance(v, (float, np.floating)) for v in values) and not all(
            float(v).is_integer()
            for v in values
            if isinstance(v, (float, np.floating, int, np.integer))
        ):
            raise CLIError(
                f"column {self.column!r} of {self.path} holds continuous values, "
                f"but binary labels are needed; threshold the scores into class "
                f"labels first"
            )
        if len(values) > 2 and self.binary:
            raise _Multiclass
        if len(values) > _MAX_CLASSES:
            shown = ", ".join(repr(v) for v in sorted(values.tolist(), key=str)[:10])
            more = ", ..." if len(values) > 10 else ""
            raise CLIError(
                f"column {self.column!r} of {self.path} must hold class labels, "
                f"but has {len(values)} distinct values ({shown}{more}); an audit "
                f"takes at most {_MAX_CLASSES} classes: bin the values into classes"
            )


def _pos_label(text, true, pred, names):
    """The positive label, converted to the type of the label columns."""
    labels = true.values.append(pred.values).unique()
    kinds = true.kinds | pred.kinds
    shown = ", ".join(repr(v) for v in sorted(labels.tolist(), key=str))
    columns = f"{names[0]!r} and {names[1]!r}"
    if len(labels) > 2:
        raise _Multiclass
    if kinds <= {"b"}:
        if text is None:
            return True
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise _UsageError(f"--pos-label {text!r} is not a label of {columns} ({shown})")
    if kinds <= {"i", "u", "f"}:
        if text is None:
            return 1
        try:
            value = float(text)
        except ValueError:
            raise _UsageError(
                f"--pos-label {text!r} is not a label of {columns} ({shown})"
            ) from None
        value = int(value) if value.is_integer() else value
        if value not in labels.tolist() and len(labels) == 2:
            raise _UsageError(
                f"--pos-label {text!r} is not a label of {columns} ({shown})"
            )
        return value
    # text labels (or a mix, which the audit reports)
    if text is None:
        raise CLIError(
            f"columns {columns} hold text labels ({shown}), so the positive class "
            f"is not known; name it with --pos-label (e.g. --pos-label "
            f"{str(sorted(labels.tolist(), key=str)[-1])!r})"
        )
    if text not in [str(v) for v in labels.tolist()] and len(labels) == 2:
        raise _UsageError(f"--pos-label {text!r} is not a label of {columns} ({shown})")
    return text


def _group_values(values, column, path, fmt, start):
    """A chunk's column of group labels, checked (no missing or blank label)."""
    from .._groups import _Coded

    missing = _missing(values)
    if missing.any():
        first = start + int(np.flatnonzero(missing)[0])
        raise CLIError(
            f"group column {column!r} of {path} has {int(missing.sum())} missing "
            f"value(s) (first on {_where(path, fmt, first)}); fill them "
            f"(e.g. with 'unknown') or drop those rows"
        )
    if isinstance(values, _Coded):
        used = np.bincount(values.codes, minlength=values.categories.shape[0]) > 0
        labels = values.categories[used]
    elif values.dtype.kind == "O":
        labels = pd.unique(values)
    else:
        return values
    blank_labels = [v for v in labels if str(v).strip() == ""]
    if blank_labels:
        rows = values.to_numpy() if isinstance(values, _Coded) else values
        blank = np.isin(rows, np.array(blank_labels, dtype=object))
        first = start + int(np.flatnonzero(blank)[0])
        raise CLIError(
            f"group column {column!r} of {path} has {int(blank.sum())} blank "
            f"label(s) (first on {_where(path, fmt, first)}); fill them "
            f"or drop those rows"
        )
    return values


def _chunks_with_progress(args, source, fmt, groups, err):
    """The file's chunks of the target, prediction and group columns, and a
    progress bar over its rows (shown on a terminal unless ``--progress`` says)."""
    n_rows, chunks = _io.read_chunks(
        source,
        [args.target, args.prediction, *groups],
        fmt=fmt,
        sep=args.sep,
        chunksize=args.chunksize,
        categorical=groups,
    )
    progress = _io.Progress(
        n_rows,
        enabled=args.progress
        if args.progress is not None
        else getattr(err, "isatty", lambda: False)(),
        err=err,
    )
    return chunks, progress


def _count_file(args, source, fmt, groups, err):
    """Read the file chunk by chunk and count each group's confusion matrix by
    label; return ``(counts table, pos_label, number of rows)``."""
    from .._counting import _finish, _merge, _partial_counts
    from .._groups import _Coded, _Columns

    target, prediction = args.target, args.prediction
    chunks, progress = _chunks_with_progress(args, source, fmt, groups, err)
    true, pred = _Labels(target, source), _Labels(prediction, source)
    table, total = None, 0
    try:
        for start, chunk in chunks:
            y = {}
            for column, labels in ((target, true), (prediction, pred)):
                values = chunk[column]
                if isinstance(values, _Coded):
                    values = values.to_numpy()
                labels.add(
                    _label_values(values, column, source, fmt, start), values.dtype.kind
                )
                y[column] = values
            columns = [_group_values(chunk[g], g, source, fmt, start) for g in groups]
            try:
                part, _ = _partial_counts(
                    y[target], y[prediction], _Columns((columns, "|".join(groups)))
                )
                table = _merge([table, part])
            except (ValueError, TypeError) as exc:
                raise CLIError(f"{source}: {_one_line(exc)}") from None
            n = y[target].shape[0]
            total += n
            progress.update(n)
    finally:
        progress.close()
    pos_label = _pos_label(args.pos_label, true, pred, (target, prediction))
    try:
        labels, counts = _finish(table, pos_label)
    except ValueError as exc:
        raise CLIError(f"{source}: {_one_line(exc)}") from None
    index = pd.Index(labels, name="|".join(groups))
    return pd.DataFrame(counts, index=index, columns=["TP", "FN", "FP", "TN"]), total


def _count_classes(args, source, fmt, groups, err):
    """Read the file chunk by chunk and count each group's K x K matrix (rows
    true, columns predicted); return ``(MulticlassCounts, number of rows)``.

    Each chunk's table of (group, true class, predicted class) counts is added
    to the others' by label.
    """
    from .._groups import _Coded, _joinable
    from .._validation import _sorted_labels
    from ..metrics import MulticlassCounts

    target, prediction = args.target, args.prediction
    chunks, progress = _chunks_with_progress(args, source, fmt, groups, err)
    true = _Labels(target, source, binary=False)
    pred = _Labels(prediction, source, binary=False)
    keys = [f"g{k}" for k in range(len(groups))] + ["true", "pred"]
    table, total = None, 0
    try:
        for start, chunk in chunks:
            columns = {}
            for key, g in zip(keys, groups):
                values = _group_values(chunk[g], g, source, fmt, start)
                if isinstance(values, _Coded):
                    values = pd.Categorical.from_codes(values.codes, values.categories)
                columns[key] = values
            for key, column, labels in (
                ("true", target, true),
                ("pred", prediction, pred),
            ):
                values = chunk[column]
                if isinstance(values, _Coded):
                    values = values.to_numpy()
                labels.add(
                    _label_values(values, column, source, fmt, start), values.dtype.kind
                )
                columns[key] = values
            part = pd.DataFrame(columns).groupby(keys, observed=True).size()
            # the chunks' categories come in different orders: index by labels
            # (pandas < 2 misaligns categorical levels of different orders)
            part.index = pd.MultiIndex.from_arrays(
                [
                    np.asarray(v, dtype=object)
                    if isinstance(v.dtype, pd.CategoricalDtype)
                    else v
                    for v in map(part.index.get_level_values, range(len(keys)))
                ],
                names=keys,
            )
            table = part if table is None else table.add(part, fill_value=0)
            n = len(columns["true"])
            total += n
            progress.update(n)
    finally:
        progress.close()
    found = true.values.append(pred.values).unique()
    try:
        found = _sorted_labels(np.asarray(found.tolist()), "the label columns")
    except TypeError as exc:
        raise CLIError(f"{source}: {_one_line(exc)}") from None
    classes = _class_order(args.labels, found, (target, prediction), source)
    flat = table.reset_index()
    if len(groups) == 1:
        label = flat["g0"].to_numpy()
    else:
        label = np.array(
            [
                "|".join(_joinable(v) for v in row)
                for row in zip(*(flat[k] for k in keys[:-2]))
            ],
            dtype=object,
        )
    names = _sorted_labels(pd.unique(label), "the groups")
    counts = np.zeros((names.shape[0], len(classes), len(classes)), dtype=np.int64)
    index = pd.Index(classes)
    np.add.at(
        counts,
        (
            pd.Index(names).get_indexer(label),
            index.get_indexer(flat["true"]),
            index.get_indexer(flat["pred"]),
        ),
        flat[0].to_numpy(dtype=np.int64),
    )
    groups_index = pd.Index(names, name="|".join(groups))
    return MulticlassCounts(groups_index, np.asarray(classes), counts), total


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
