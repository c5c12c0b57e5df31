"""Input adapters: dask collections, polars and pyarrow columns.

Nothing here imports dask, polars or pyarrow at import time: an input is
recognised by the module of its type, and the library is imported only to read
an input that comes from it.

- polars and pyarrow Series, arrays and frames are read one column at a time
  (``to_numpy``, or the codes of a dictionary-encoded column); a frame is never
  converted as a whole.
- dask arrays, Series and DataFrame columns are counted where they are: one task
  per partition runs the in-memory counting kernel
  (:func:`~sklearn_smallfair._counting._partial_counts`), one task adds the
  tables by label (:func:`~sklearn_smallfair._counting._merge`), and only that
  table of at most ``n_groups x 4`` counts is brought back.
"""

import numpy as np

from ._counting import _finish, _merge, _partial_counts
from ._groups import _Coded, _Columns

__all__ = ["dask_grouped_counts", "is_dask_collection", "to_local"]


def _library(value):
    """The top-level module of the type of ``value`` (``"polars"``, ...)."""
    return type(value).__module__.partition(".")[0]


def is_dask_collection(value):
    """Whether ``value`` is a dask array, Series or DataFrame."""
    if value is None or _library(value) not in ("dask", "dask_expr"):
        return False
    from dask.base import is_dask_collection as _is_collection

    return _is_collection(value)


# ---------------------------------------------------------------------------
# polars and pyarrow
# ---------------------------------------------------------------------------


def _arrow_column(array):
    """A pyarrow Array or ChunkedArray as a numpy array or a :class:`_Coded`.

    Text and dictionary-encoded text without nulls are read as codes and
    labels (``dictionary_encode``: no Python string per row is hashed); other
    types through ``to_numpy`` (nulls become ``None`` or NaN, reported as
    missing by the checks).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray) and array.num_chunks == 0:
        array = pa.array([], type=array.type)
    types = pa.types
    if array.null_count == 0:
        value_type = (
            array.type.value_type if types.is_dictionary(array.type) else array.type
        )
        if types.is_string(value_type) or types.is_large_string(value_type):
            if not types.is_dictionary(array.type):
                array = pc.dictionary_encode(array)
            if isinstance(array, pa.ChunkedArray):
                array = array.unify_dictionaries().combine_chunks()
            return _Coded(
                array.indices.to_numpy(zero_copy_only=False),
                array.dictionary.to_numpy(zero_copy_only=False).astype(object),
            )
    if types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    return np.asarray(array.to_numpy(zero_copy_only=False))


def _polars_column(series):
    """A polars Series as a numpy array or a :class:`_Coded`."""
    import polars as pl

    if series.dtype in (pl.String, pl.Categorical) or isinstance(series.dtype, pl.Enum):
        return _arrow_column(series.to_arrow())
    return np.asarray(series.to_numpy())


def to_local(value, name, *, frame=False):
    """A polars or pyarrow input as numpy columns; anything else unchanged.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        Its name, for messages.
    frame : bool, default=False
        Whether a frame (several columns) is accepted: it is returned as
        group columns with their joined names.
    """
    library = _library(value)
    if library == "polars":
        import polars as pl

        if isinstance(value, pl.LazyFrame):
            raise TypeError(
                f"{name} is a polars LazyFrame; collect it first "
                f"({name}.collect()) or select the column(s) you mean."
            )
        if isinstance(value, pl.Series):
            column = _polars_column(value)
            if frame:
                return _Columns(([column], value.name or "group"))
            return column.to_numpy() if isinstance(column, _Coded) else column
        if isinstance(value, pl.DataFrame):
            columns = [_polars_column(value[c]) for c in value.columns]
            return _frame(columns, value.columns, name, frame)
        return value
    if library == "pyarrow":
        import pyarrow as pa

        if isinstance(value, (pa.Array, pa.ChunkedArray)):
            column = _arrow_column(value)
            if frame:
                return _Columns(([column], "group"))
            return column.to_numpy() if isinstance(column, _Coded) else column
        if isinstance(value, (pa.Table, pa.RecordBatch)):
            columns = [_arrow_column(value.column(i)) for i in range(value.num_columns)]
            return _frame(columns, value.column_names, name, frame)
    return value


def _frame(columns, names, name, frame):
    if frame:
        return _Columns((columns, "|".join(str(c) for c in names)))
    if len(columns) != 1:
        raise ValueError(
            f"{name} must be 1-D, got a table of {len(columns)} columns; pass one "
            f"column."
        )
    column = columns[0]
    return column.to_numpy() if isinstance(column, _Coded) else column


# ---------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------


def _is_frame_like(value):
    """A dask Series or DataFrame (partitioned by rows, not chunked arrays)."""
    return hasattr(value, "divisions") and hasattr(value, "to_delayed")


def _grouping_name(sensitive_features):
    columns = getattr(sensitive_features, "columns", None)
    if columns is not None and getattr(sensitive_features, "ndim", 1) == 2:
        return "|".join(str(c) for c in columns)
    series_name = getattr(sensitive_features, "name", None)
    return str(series_name) if series_name else "group"


def _row_blocks(values):
    """Aligned row blocks of several inputs, as lists of delayed objects.

    Columns of one dask DataFrame keep their partitions; otherwise every input
    becomes a dask array chunked like the first.
    """
    import dask.array as da

    given = [v for v in values if v is not None]
    if all(is_dask_collection(v) and _is_frame_like(v) for v in given) and (
        len({v.npartitions for v in given}) == 1
    ):
        blocks = [None if v is None else v.to_delayed() for v in values]
        count = given[0].npartitions
        return [[None] * count if b is None else b for b in blocks]
    arrays = []
    for v in values:
        if v is None or not is_dask_collection(v):
            arrays.append(v)
        elif _is_frame_like(v):
            arrays.append(v.to_dask_array(lengths=True))
        else:
            arrays.append(v)
    first = next(a for a in arrays if a is not None and is_dask_collection(a))
    rows = first.chunks[0]
    n_rows = sum(rows)
    blocks = []
    for v, name in zip(
        arrays, ("y_true", "y_pred", "sensitive_features", "sample_weight")
    ):
        if v is None:
            blocks.append([None] * len(rows))
            continue
        if not is_dask_collection(v):
            v = da.from_array(np.asarray(v), chunks=(rows, *np.shape(v)[1:]))
        if v.shape[0] != n_rows:
            raise ValueError(
                f"{name} has {v.shape[0]} rows but y_true has {n_rows}; pass one "
                f"value per sample."
            )
        v = v.rechunk((rows, *v.shape[1:]))
        blocks.append(list(v.to_delayed().reshape(len(rows), -1)[:, 0]))
    return blocks


def _block_partial(y_true, y_pred, sensitive_features, sample_weight):
    """The counting kernel on one partition (``None`` for an empty one)."""
    if len(y_true) == 0 and len(y_pred) == 0:
        return None
    partial, _ = _partial_counts(y_true, y_pred, sensitive_features, sample_weight)
    return partial


def _merge_blocks(partials):
    partials = [p for p in partials if p is not None]
    if not partials:
        raise ValueError("y_true and y_pred are empty; at least one sample is needed.")
    return _merge(partials)


def dask_grouped_counts(
    y_true, y_pred, sensitive_features, sample_weight, *, pos_label
):
    """Per-group counts of dask inputs: ``(groups, counts, group_name)``.

    One task per partition counts it; one task adds the tables by label; only
    that table is computed here. numpy inputs mixed with dask ones are chunked
    like them.
    """
    try:
        import dask
    except ImportError:  # pragma: no cover - a dask object implies dask
        raise ImportError(
            "counting dask inputs needs dask: pip install 'sklearn-smallfair[dask]'"
        ) from None
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required with dask inputs: pass the group label "
            "of every sample (a dask Series, DataFrame columns or array)."
        )
    for value, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        if value is None:
            raise ValueError(f"{name} is required.")
    blocks = _row_blocks([y_true, y_pred, sensitive_features, sample_weight])
    task = dask.delayed(_block_partial, pure=True)
    partials = [task(*parts) for parts in zip(*blocks)]
    merged = dask.delayed(_merge_blocks, pure=True)(partials)
    (partial,) = dask.compute(merged)
    groups, counts = _finish(partial, pos_label)
    return groups, counts, _grouping_name(sensitive_features)
