"""One input layer for data frames, lazy queries and database tables.

An audit needs one small table: the number of people of each (group, true
label, predicted label). Inputs reach the counting kernels in three ways.

- **Columns** (``y_true``, ``y_pred``, ``sensitive_features`` as arrays or
  series): numpy arrays, lists and pandas objects go to the counting kernels as
  they are. Any other series or eager frame that Narwhals reads (polars,
  pyarrow, Modin, cuDF) is read one column at a time: text and categorical
  columns as the codes and labels of an Arrow dictionary (no Python string per
  row is hashed), other columns through ``to_numpy``. dask arrays and series
  keep their row order, so they are counted where they are: one task per
  partition runs the in-memory kernel and one task adds the tables by label.
- **A frame and column names** (``data=frame``): a pandas frame gives its
  columns to the kernels (faster than a grouped aggregation in pandas); any
  other frame or lazy query that Narwhals reads (polars DataFrame and
  LazyFrame, pyarrow Table, dask DataFrame, DuckDB relation, PySpark DataFrame,
  Ibis table, ...) is counted by its own engine in one grouped aggregation, and
  only its result comes back: the :class:`Tally`, one row per distinct
  (group columns, true label, predicted label) with the number of rows (and
  the sum of the weights). Missing values, negative weights and labels that
  are scores are found in that table, never by collecting the rows.
- A :class:`Tally` goes on to the kernels as rows weighted by their counts:
  integer weights keep the counts integers, so its table equals the one
  counted from the rows, bit for bit.

Narwhals, dask and the engines are imported only to read an input that comes
from them.
"""

import sys
from typing import NamedTuple

import numpy as np
import pandas as pd

from ._counting import _finish, _merge, _partial_counts
from ._groups import _Coded, _Columns, _Tallied, warn_continuous

__all__ = [
    "Tally",
    "count_dask",
    "from_data",
    "is_dask_collection",
    "lazy_engine",
    "to_local",
]

#: Inputs the counting kernels read as they are.
_PLAIN = (np.ndarray, list, tuple, range, pd.Series, pd.DataFrame, pd.Index)

#: Largest table of counts collected from an engine: more distinct (group,
#: label, label) rows than this means a column holds scores or row ids.
MAX_TALLY_ROWS = 5_000_000


#: The Narwhals API read (its stable version 2).
_NARWHALS = "narwhals.stable.v2"


def _narwhals(what=None):
    """``narwhals.stable.v2``, or None (or an ImportError naming ``what``)."""
    import importlib

    try:
        nw = importlib.import_module(_NARWHALS)
    except ImportError:
        if what is None:
            return None
        raise ImportError(
            f"{what} is read through Narwhals, which is not installed: pip install "
            f"narwhals (or the extra of your engine, e.g. "
            f"pip install 'sklearn-smallfair[duckdb]')."
        ) from None
    return nw


def is_dask_collection(value):
    """Whether ``value`` is a dask array, Series or DataFrame."""
    if value is None or isinstance(value, _PLAIN) or "dask" not in sys.modules:
        return False  # nothing is a dask collection before dask is imported
    from dask.base import is_dask_collection as _is_collection

    return bool(_is_collection(value))


# ---------------------------------------------------------------------------
# columns
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
        if (
            types.is_string(value_type)
            or types.is_large_string(value_type)
            or getattr(types, "is_string_view", lambda t: False)(value_type)
        ):
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


def _series_column(series, nw):
    """A Narwhals Series as a numpy array or a :class:`_Coded`."""
    dtype = series.dtype
    if dtype in (nw.String, nw.Categorical) or isinstance(dtype, nw.Enum):
        return _arrow_column(series.to_arrow())
    return np.asarray(series.to_numpy())


def _engine(frame):
    """The name of the engine of a Narwhals frame (``"duckdb"``, ...)."""
    return str(frame.implementation).rpartition(".")[2].lower()


def to_local(value, name, *, frame=False):
    """A series or eager frame of another library as numpy columns.

    numpy arrays, lists and pandas objects, and anything Narwhals does not
    read, are returned unchanged.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        Its name, for messages.
    frame : bool, default=False
        Whether a frame (several columns) is accepted: it is returned as
        group columns with their names.
    """
    if value is None or isinstance(value, _PLAIN) or is_dask_collection(value):
        return value
    nw = _narwhals()
    if nw is None:
        return value
    native = nw.from_native(value, pass_through=True, allow_series=True)
    if native is value:
        return value
    if isinstance(native, nw.LazyFrame):
        raise TypeError(
            f"{name} is a {_engine(native)} table, whose rows have no order to "
            f"align with the other arguments; pass it as data= with column "
            f"names, e.g. group_metrics('y', 'y_hat', sensitive_features='group', "
            f"data=table)."
        )
    if isinstance(native, nw.Series):
        column = _series_column(native, nw)
        if frame:
            return _Columns(([column], native.name or "group"))
        return column.to_numpy() if isinstance(column, _Coded) else column
    names = list(native.columns)
    columns = [_series_column(native.get_column(c), nw) for c in names]
    if frame:
        return _Columns((columns, "|".join(str(c) for c in names), names))
    if len(columns) != 1:
        raise ValueError(
            f"{name} must be 1-D, got a table of {len(columns)} columns; pass one "
            f"column."
        )
    column = columns[0]
    return column.to_numpy() if isinstance(column, _Coded) else column


def lazy_engine(value):
    """The engine of a lazy table or database relation (``"duckdb"``,
    ``"pyspark"``, ...), or None for anything held in memory (and dask)."""
    if value is None or isinstance(value, _PLAIN) or is_dask_collection(value):
        return None
    nw = _narwhals()
    if nw is None:
        return None
    native = nw.from_native(value, pass_through=True)
    return _engine(native) if isinstance(native, nw.LazyFrame) else None


# ---------------------------------------------------------------------------
# a frame and column names
# ---------------------------------------------------------------------------


class Tally(NamedTuple):
    """A table of counts: the rows of ``data`` grouped by their labels.

    Attributes
    ----------
    y_true, y_pred : ndarray of shape (n_rows,)
        The labels of each row of the table.
    sensitive_features : _Tallied
        The group columns, with their names.
    sample_weight : ndarray of shape (n_rows,)
        The number of rows of ``data`` behind each row (int64), or the sum of
        their weights (float64).
    """

    y_true: np.ndarray
    y_pred: np.ndarray
    sensitive_features: object
    sample_weight: np.ndarray


def _is_name(value):
    return isinstance(value, str)


def _names(value, role, data):
    """The column names of one argument given with ``data=`` (a list)."""
    if value is None:
        return []
    if _is_name(value):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(map(_is_name, value)):
        return list(value)
    raise TypeError(
        f"with data=, {role} names a column of data (a string"
        f"{', or a list of strings' if role == 'sensitive_features' else ''}); got "
        f"{type(value).__name__}. Pass the column's name, e.g. "
        f"group_metrics('y', 'y_hat', sensitive_features='group', data=frame), or "
        f"leave data=None to pass the values themselves."
    )


def _check_names(columns, wanted):
    """Refuse names that are not columns of the frame, listing its columns."""
    missing = [(role, c) for role, c in wanted if c not in columns]
    if missing:
        shown = ", ".join(repr(c) for c in columns[:50])
        more = f" and {len(columns) - 50} more" if len(columns) > 50 else ""
        what = "; ".join(f"{role}={c!r}" for role, c in missing)
        raise ValueError(f"data has no column {what}; its columns are {shown}{more}.")
    for i, (role, c) in enumerate(wanted):
        for other, d in wanted[:i]:
            if c == d and role != other and {role, other} == {"y_true", "y_pred"}:
                raise ValueError(
                    f"y_true and y_pred both name the column {c!r}; the "
                    f"predictions are compared with the true labels, so pass "
                    f"two columns."
                )


def _missing_error(column, role, count):
    return ValueError(
        f"data's column {column!r} ({role}) holds {int(count):,} missing value(s) "
        f"(null or NaN); drop or fill those rows first (e.g. filter them out of "
        f"the query)."
    )


def _negative_error(column):
    return ValueError(
        f"data's column {column!r} (sample_weight) holds negative weights; "
        f"sample_weight must be non-negative."
    )


def from_data(
    data, y_true, y_pred, sensitive_features, sample_weight=None, *, counts=None
):
    """The rows of ``data``: ``(y_true, y_pred, sensitive_features, sample_weight)``.

    Without ``data`` the arguments are returned unchanged (a string among them
    is refused: it names a column only with ``data``). With ``data`` they name
    its columns: a pandas frame gives its columns; any other frame is counted
    by its engine into a :class:`Tally`, returned as its rows (labels, group
    columns and the counts as integer weights, or the weight sums).
    """
    given = (
        ("y_true", y_true),
        ("y_pred", y_pred),
        ("sensitive_features", sensitive_features),
        ("sample_weight", sample_weight),
    )
    if data is None:
        for role, value in given:
            if isinstance(value, str):
                raise TypeError(
                    f"{role}={value!r} is a string; to name a column, pass the "
                    f"table as data=, e.g. group_metrics('y', 'y_hat', "
                    f"sensitive_features='group', data=frame)."
                )
        return y_true, y_pred, sensitive_features, sample_weight
    if counts is not None:
        raise ValueError(
            "pass either data= (a table of rows, with column names) or counts= "
            "(a table of counts), not both."
        )
    roles = [
        ("y_true", _names(y_true, "y_true", data)),
        ("y_pred", _names(y_pred, "y_pred", data)),
        ("sensitive_features", _names(sensitive_features, "sensitive_features", data)),
        ("sample_weight", _names(sample_weight, "sample_weight", data)),
    ]
    for role, names in roles[:2] + roles[3:]:
        if len(names) > 1:
            raise TypeError(f"with data=, {role} names one column; got {names}.")
    for role, names in roles[:2]:
        if not names:
            raise ValueError(f"{role} is required: name its column of data.")
    wanted = [(role, c) for role, names in roles for c in names]
    if isinstance(data, pd.DataFrame):
        _check_names(list(data.columns), wanted)
        nw = _narwhals() if _has_text(data, wanted) else None
        if nw is None:
            return _pandas_rows(data, roles, wanted)
        # pandas groups text labels faster than they are hashed one by one
        return _tally(nw.from_native(data, eager_only=True), roles, wanted, nw)
    if isinstance(data, (np.ndarray, list, tuple, dict)):
        raise TypeError(
            f"data must be a data frame or table (pandas, polars, pyarrow, dask, "
            f"DuckDB, PySpark, ...), got {type(data).__name__}; pass arrays as "
            f"y_true, y_pred and sensitive_features instead."
        )
    nw = _narwhals(f"data of type {type(data).__name__}")
    if is_dask_collection(data):
        if not hasattr(data, "columns"):
            raise TypeError(
                "data must be a dask DataFrame (with named columns), not a dask "
                "array or Series; pass arrays as y_true, y_pred and "
                "sensitive_features instead."
            )
        return _tally_dask(data, roles, wanted, nw)
    frame = nw.from_native(data, pass_through=True)
    if frame is data:
        raise TypeError(
            f"data must be a data frame or table that Narwhals reads (pandas, "
            f"polars, pyarrow, dask, DuckDB, PySpark, Ibis, ...), got "
            f"{type(data).__module__}.{type(data).__name__}."
        )
    if isinstance(frame, nw.DataFrame):
        return _eager_rows(frame, roles, wanted, nw)
    return _tally(frame, roles, wanted, nw)


def _has_text(data, wanted):
    """Whether a named column of a pandas frame holds text (or objects)."""
    return any(
        pd.api.types.is_object_dtype(data[c].dtype)
        or (
            pd.api.types.is_string_dtype(data[c].dtype)
            and not isinstance(data[c].dtype, pd.CategoricalDtype)
        )
        for _, c in wanted
    )


def _eager_rows(frame, roles, wanted, nw):
    """The named columns of an eager frame (polars, pyarrow, ...), checked for
    missing values and negative weights by one query of the frame; read one
    column at a time, which is faster than their grouped aggregation."""
    schema = frame.collect_schema()
    _check_names(list(schema.names()), wanted)
    checks = []
    for i, (_, c) in enumerate(wanted):
        missing = nw.col(c).is_null()
        if schema[c].is_float():
            missing = missing | nw.col(c).is_nan()
        checks.append(missing.sum().alias(f"__m{i}"))
    get = dict(roles)
    weight = get["sample_weight"][0] if get["sample_weight"] else None
    if weight is not None and schema[weight].is_numeric():
        checks.append((nw.col(weight) < 0).sum().alias("__neg"))
    found = frame.select(*checks).row(0)
    for (role, c), count in zip(wanted, found):
        if count:
            raise _missing_error(c, role, count)
    if weight is not None and schema[weight].is_numeric() and found[-1]:
        raise _negative_error(weight)
    groups = get["sensitive_features"]
    features = None
    if groups:
        features = to_local(frame.select(*groups).to_native(), "data", frame=True)
    return (
        to_local(frame.get_column(get["y_true"][0]).to_native(), "y_true"),
        to_local(frame.get_column(get["y_pred"][0]).to_native(), "y_pred"),
        features,
        None
        if weight is None
        else to_local(frame.get_column(weight).to_native(), "sample_weight"),
    )


def _pandas_rows(data, roles, wanted):
    """The named columns of a pandas frame, checked for missing values."""
    for role, column in wanted:
        count = int(data[column].isna().sum())
        if count:
            raise _missing_error(column, role, count)
    get = dict(roles)
    weight = get["sample_weight"]
    if weight and pd.api.types.is_numeric_dtype(data[weight[0]].dtype):
        if (data[weight[0]] < 0).any():
            raise _negative_error(weight[0])
    groups = get["sensitive_features"]
    features = None
    if groups:
        features = data[groups[0]] if len(groups) == 1 else data[groups]
    return (
        data[get["y_true"][0]],
        data[get["y_pred"][0]],
        features,
        data[weight[0]] if weight else None,
    )


def _tally(frame, roles, wanted, nw):
    """One grouped aggregation of ``frame``, run by its engine."""
    engine = _engine(frame)
    try:
        schema = frame.collect_schema()
        columns = list(schema.names())
    except Exception as exc:
        raise RuntimeError(
            f"the {engine} query of data failed before counting: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    _check_names(columns, wanted)
    keys, sources, groups, weight = _layout(roles)
    select = [nw.col(c).alias(k) for c, k in zip(sources, keys)]
    aggregate = [nw.len().alias("__n")]
    integer = False
    if weight:
        dtype = schema[weight]
        if not (dtype.is_numeric() or dtype == nw.Boolean):
            raise TypeError(
                f"sample_weight must be numeric, got {dtype} in column {weight!r}."
            )
        integer = dtype.is_integer() or dtype == nw.Boolean
        w = nw.col(weight)
        if dtype == nw.Boolean:  # 0/1 weights, summed as integers
            w = w.cast(nw.Int64)
        select += [w.alias("__w"), w.is_null().cast(nw.Int64).alias("__wn")]
        aggregate += [
            nw.col("__w").sum().alias("__ws"),
            nw.col("__w").min().alias("__wmin"),
            nw.col("__wn").sum().alias("__wnull"),
        ]
    query = (
        frame.select(*select)
        .group_by(*keys, drop_null_keys=False)
        .agg(*aggregate)
        .head(MAX_TALLY_ROWS + 1)
    )
    try:
        table = query.collect() if isinstance(query, nw.LazyFrame) else query
        table = {k: table.get_column(k) for k in table.columns}
    except Exception as exc:
        raise RuntimeError(
            f"the {engine} query that counts the rows of data by group and labels "
            f"failed: {type(exc).__name__}: {exc}"
        ) from exc
    return _read_table(table, keys, sources, groups, weight, integer, nw)


def _layout(roles):
    """``(keys, sources, groups, weight)``: the table's key columns, the data's
    columns behind them, the group columns and the weight column (or None)."""
    get = dict(roles)
    groups = get["sensitive_features"]
    keys = [f"__g{i}" for i in range(len(groups))] + ["__t", "__p"]
    sources = groups + get["y_true"] + get["y_pred"]
    weight = get["sample_weight"][0] if get["sample_weight"] else None
    return keys, sources, groups, weight


def _tally_dask(data, roles, wanted, nw):
    """The grouped aggregation of a dask DataFrame, run by dask."""
    import dask

    _check_names(list(data.columns), wanted)
    keys, sources, groups, weight = _layout(roles)
    frame = data.assign(**{k: data[c] for k, c in zip(keys, sources)})
    integer = False
    if weight:
        dtype = data.dtypes[weight]
        types = pd.api.types
        kind = (
            "b"
            if types.is_bool_dtype(dtype)
            else "i"
            if types.is_integer_dtype(dtype)
            else "f"
            if types.is_float_dtype(dtype)
            else "O"
        )
        if kind == "O":
            raise TypeError(
                f"sample_weight must be numeric, got {data.dtypes[weight]} in "
                f"column {weight!r}."
            )
        integer = kind in "biu"
        w = data[weight].astype(np.int64) if kind == "b" else data[weight]
        frame = frame.assign(__w=w, __wn=data[weight].isna().astype(np.int64))
    grouped = frame[keys + (["__w", "__wn"] if weight else [])].groupby(
        keys, dropna=False, observed=True
    )
    parts = [grouped.size().rename("__n")]
    if weight:
        parts += [
            grouped["__w"].sum().rename("__ws"),
            grouped["__w"].min().rename("__wmin"),
            grouped["__wn"].sum().rename("__wnull"),
        ]
    try:
        computed = dask.compute(*parts)
    except Exception as exc:
        raise RuntimeError(
            f"the dask computation that counts the rows of data by group and "
            f"labels failed: {type(exc).__name__}: {exc}"
        ) from exc
    result = pd.concat(computed, axis=1).reset_index()
    table = nw.from_native(result, eager_only=True)
    table = {k: table.get_column(k) for k in table.columns}
    return _read_table(table, keys, sources, groups, weight, integer, nw)


def _read_table(table, keys, sources, groups, weight, integer, nw):
    """The :class:`Tally` of a collected table of counts, checked."""
    n = np.asarray(table["__n"].to_numpy(), dtype=np.int64)
    if n.shape[0] > MAX_TALLY_ROWS:
        raise ValueError(
            f"data has more than {MAX_TALLY_ROWS:,} distinct combinations of "
            f"{', '.join(repr(c) for c in sources)}: a label or group column "
            f"holds scores or ids rather than labels. Threshold the scores into "
            f"labels and bin numeric groups first."
        )
    if n.shape[0] == 0:
        raise ValueError("data has no rows; at least one sample is needed.")
    values = {}
    for key, column, role in zip(keys, sources, _key_roles(groups)):
        series = table[key]
        missing = series.is_null()
        if series.dtype.is_float():
            missing = missing | series.is_nan()
        missing = np.asarray(missing.to_numpy(), dtype=bool)
        if missing.any():
            raise _missing_error(column, role, n[missing].sum())
        values[key] = _as_labels(series, nw)
    weights = _checked_weights(table, weight, integer) if weight else n
    features = [values[k] for k in keys[: len(groups)]]
    for column, name in zip(features, groups):
        if column.dtype.kind in "iuf":
            held = pd.Series(n).groupby(column).sum().to_numpy()
            warn_continuous(held, name)
    tallied = _Tallied((features, "|".join(groups), list(groups))) if groups else None
    return Tally(values["__t"], values["__p"], tallied, weights)


def _key_roles(groups):
    return ["sensitive_features"] * len(groups) + ["y_true", "y_pred"]


def _as_labels(series, nw):
    """A column of the table of counts as labels: integers as int64 (as
    pandas and numpy read them), floats as float64, text as objects."""
    values = np.asarray(series.to_numpy())
    dtype = series.dtype
    if dtype.is_signed_integer():
        return values.astype(np.int64, copy=False)
    if dtype.is_unsigned_integer():
        return values.astype(np.uint64, copy=False)
    if dtype.is_float():
        return values.astype(np.float64, copy=False)
    if values.dtype.kind in "OUS" or dtype in (nw.String, nw.Categorical):
        return values.astype(object)
    return values


def _checked_weights(table, column, integer):
    """The weight sums of a table of counts, with the rules of sample_weight;
    integer weights give integer sums."""
    nulls = int(np.asarray(table["__wnull"].to_numpy(), dtype=np.float64).sum())
    if nulls:
        raise _missing_error(column, "sample_weight", nulls)
    lowest = np.asarray(table["__wmin"].to_numpy(), dtype=np.float64)
    if (lowest < 0).any():
        raise _negative_error(column)
    values = np.asarray(table["__ws"].to_numpy())
    if integer:
        if values.astype(np.float64).sum() >= 2.0**62:
            raise ValueError(
                f"data's column {column!r} (sample_weight) totals 2**62 or more; "
                f"divide the weights by a common factor."
            )
        return values.astype(np.int64)
    values = values.astype(np.float64)
    if not np.isfinite(values).all():
        raise ValueError(
            f"data's column {column!r} (sample_weight) holds NaN or infinite "
            f"weights, or weights whose sum overflows; drop or fix them."
        )
    return values


# ---------------------------------------------------------------------------
# dask columns
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


def count_dask(y_true, y_pred, sensitive_features, sample_weight, *, pos_label):
    """Per-group counts of dask columns: ``(groups, counts, group_name)``.

    One task per partition counts it; one task adds the tables by label; only
    that table is computed here. numpy inputs mixed with dask ones are chunked
    like them.
    """
    import dask

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
