"""Shared input checks.

Every public function validates its inputs here, before any work, and raises a
``ValueError`` or ``TypeError`` that names the argument and says how to fix it.
"""

import inspect
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_consistent_length, column_or_1d

__all__ = [
    "check_binary_targets",
    "check_bool",
    "check_choice",
    "check_counts",
    "check_non_negative_scalar",
    "check_probability",
    "check_sample_weight",
    "check_sensitive_features",
    "check_zero_division",
    "format_label",
    "format_labels",
    "warn_small_references",
]


#: numpy's warning for ragged nested sequences (an error from numpy 1.24 on)
_VisibleDeprecationWarning = getattr(
    getattr(np, "exceptions", np), "VisibleDeprecationWarning", Warning
)


def _reject_mapping(value, name):
    if isinstance(value, Mapping):
        raise TypeError(
            f"{name} must be array-like, got a {type(value).__name__}. Pass a list, "
            f"a numpy array or a pandas Series/DataFrame (for a dict of columns use "
            f"pandas.DataFrame({name}))."
        )


def _as_1d(y, name):
    """Return ``y`` as a 1-D numpy array, rejecting dicts, scalars and 2-D data."""
    _reject_mapping(y, name)
    if isinstance(y, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D array-like, got {type(y).__name__}.")
    arr = _asarray(y, name)
    if arr.ndim == 0:
        raise TypeError(f"{name} must be a 1-D array-like, got {type(y).__name__}.")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    return column_or_1d(arr, dtype=None)


def _asarray(values, name):
    """``np.asarray`` that keeps NaN or inf in a list of strings detectable.

    numpy turns ``["a", nan]`` into the strings ``['a', 'nan']``; such input is
    returned as an object array instead, so the missing value is reported. Ragged
    nested lists, sets and generators are refused with a message naming ``name``.
    """
    if isinstance(values, (set, frozenset)) or inspect.isgenerator(values):
        raise TypeError(
            f"{name} must be an ordered array-like (list, numpy array, pandas "
            f"Series or DataFrame), got a {type(values).__name__}, whose order is "
            f"undefined or which can be read only once; pass a list."
        )
    if isinstance(values, pd.api.extensions.ExtensionArray) or (
        isinstance(values, (pd.Series, pd.Index))
        and isinstance(values.dtype, pd.api.extensions.ExtensionDtype)
    ):
        # pandas nullable dtypes: missing values become NaN (numbers) or None
        values = np.asarray(values.to_numpy(dtype=object, na_value=None))
    try:
        with warnings.catch_warnings():
            # numpy < 1.24 builds an object array from ragged lists, with a warning
            warnings.simplefilter("error", _VisibleDeprecationWarning)
            arr = np.asarray(values)
    except (ValueError, _VisibleDeprecationWarning) as exc:
        raise ValueError(
            f"{name} is ragged (nested sequences of different lengths) and has no "
            f"array shape; pass a rectangular array-like. ({exc})"
        ) from None
    if arr.dtype.kind == "U" and not isinstance(values, np.ndarray):
        obj = np.asarray(values, dtype=object)
        if obj.shape == arr.shape and _missing_mask(obj).any():
            return obj
    return arr


def _missing_mask(arr):
    """Mask of NaN, None and +-inf entries, vectorized for every dtype."""
    if arr.dtype.kind in "fc":
        return ~np.isfinite(arr)
    if arr.dtype.kind == "O":
        mask = np.asarray(pd.isna(arr), dtype=bool)
        # +-inf stored as Python/numpy floats: look for them among the distinct
        # values only, then mark their positions with one vectorized comparison.
        for v in pd.unique(arr[~mask].ravel()):
            if isinstance(v, (float, np.floating)) and not np.isfinite(v):
                mask |= arr == v
        return mask
    return np.zeros(arr.shape, dtype=bool)


def _check_no_missing(arr, name):
    if isinstance(arr, _Coded):
        bad = arr.codes < 0
    elif arr.dtype.kind in "biu":  # integers and booleans have no missing value
        return
    else:
        bad = _missing_mask(arr)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} missing or non-finite value(s) "
            f"(NaN, None or inf; first at position {first}). Drop those rows or "
            f"fill them before scoring."
        )


def _sorted_labels(values, name):
    """Sort a small array of distinct labels, rejecting mixed label types."""
    values = np.asarray(values)
    try:
        return np.sort(values)
    except TypeError:
        types = sorted({type(v).__name__ for v in values.tolist()})
        raise TypeError(
            f"{name} mixes label types {types}; use labels of one type."
        ) from None


def _labels(arr, name):
    """Distinct labels of a 1-D label array (hash-based, O(n)), sorted.

    Raises when the array is not binary or holds continuous values.
    """
    labels = _sorted_labels(pd.unique(arr), name)
    numeric = labels
    if labels.dtype.kind == "O" and all(
        isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_))
        for v in labels.tolist()
    ):
        numeric = labels.astype(np.float64)
    if numeric.dtype.kind == "f" and not np.array_equal(numeric, np.round(numeric)):
        raise ValueError(
            f"{name} holds continuous values but binary labels are needed. "
            f"Threshold scores into class labels first (for a scorer use "
            f"response_method='predict')."
        )
    if labels.shape[0] > 2:
        raise ValueError(
            f"{name} must be binary, but has {labels.shape[0]} distinct labels "
            f"{format_labels(labels)}. Binarize it (e.g. y == positive_class)."
        )
    return labels


def format_label(value):
    """``repr`` of a label without numpy's wrapper (``'a'``, not ``np.str_('a')``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def format_labels(labels, limit=10):
    shown = ", ".join(format_label(v) for v in labels[:limit])
    more = f", ... ({len(labels)} in all)" if len(labels) > limit else ""
    return f"[{shown}{more}]"


def check_paired_targets(y_true, y_pred):
    """One-dimensional ``y_true`` and ``y_pred`` of the same non-zero length,
    without missing values (any label type).

    Returns
    -------
    y_true, y_pred : ndarray of shape (n_samples,)
    """
    y_true = _as_1d(y_true, "y_true")
    y_pred = _as_1d(y_pred, "y_pred")
    try:
        check_consistent_length(y_true, y_pred)
    except ValueError:
        raise ValueError(
            f"y_true and y_pred have inconsistent lengths ({y_true.shape[0]} and "
            f"{y_pred.shape[0]}); pass one prediction per sample."
        ) from None
    if y_true.shape[0] == 0:
        raise ValueError("y_true and y_pred are empty; at least one sample is needed.")
    _check_no_missing(y_true, "y_true")
    _check_no_missing(y_pred, "y_pred")
    return y_true, y_pred


def check_binary_targets(y_true, y_pred, *, pos_label=1):
    """Validate binary ``y_true``/``y_pred`` and return boolean positive masks.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels (numbers, booleans or strings).
    pos_label : int, float, bool or str, default=1
        The label of the positive class.

    Returns
    -------
    t, p : ndarray of bool, shape (n_samples,)
        ``y_true == pos_label`` and ``y_pred == pos_label``.
    """
    y_true, y_pred = check_paired_targets(y_true, y_pred)
    true_labels = _labels(_distinct(y_true), "y_true")
    pred_labels = _labels(_distinct(y_pred), "y_pred")
    _check_label_union(true_labels, pred_labels, pos_label)
    t = _equals(y_true, pos_label)
    p = _equals(y_pred, pos_label)
    return t, p


def _distinct(arr):
    """Distinct values of a 1-D array; booleans and integers in a range of two
    by their minimum and maximum (no hashing)."""
    if arr.dtype.kind in "biu" and arr.shape[0]:
        lo, hi = arr.min(), arr.max()
        if int(hi) - int(lo) <= 1:
            return np.unique(np.array([lo, hi], dtype=arr.dtype))
    return pd.unique(arr)


def _check_label_union(true_labels, pred_labels, pos_label):
    """Check the distinct labels of ``y_true`` and ``y_pred`` together, and
    ``pos_label`` against them."""
    labels = _sorted_labels(
        pd.unique(
            np.concatenate([true_labels.astype(object), pred_labels.astype(object)])
        ),
        "y_true and y_pred",
    )
    if labels.shape[0] > 2:
        raise ValueError(
            f"y_true and y_pred together have {labels.shape[0]} distinct labels "
            f"{format_labels(labels)}; they must share the same two labels."
        )
    if not any(_label_equal(v, pos_label) for v in labels):
        str_labels = any(isinstance(v, str) for v in labels)
        if labels.shape[0] == 2 or str_labels != isinstance(pos_label, str):
            raise ValueError(
                f"pos_label={pos_label!r} is not a valid label: the labels are "
                f"{format_labels(labels)}. Pass pos_label=<the positive label>."
            )


def _label_equal(value, pos_label):
    if isinstance(value, str) != isinstance(pos_label, str):
        return False
    return bool(value == pos_label)


def _equals(arr, pos_label):
    """Vectorized ``arr == pos_label`` that never matches a string to a number."""
    if arr.dtype.kind == "O":
        # object arrays may hold numbers (e.g. a pandas Series of dtype object):
        # match each distinct label with the rule of the label check, then mark
        # its rows with one vectorized comparison.
        out = np.zeros(arr.shape, dtype=bool)
        for v in pd.unique(arr):
            if _label_equal(v, pos_label):
                out |= np.asarray(arr == v, dtype=bool)
        return out
    if isinstance(pos_label, str) != (arr.dtype.kind in "US"):
        return np.zeros(arr.shape, dtype=bool)
    return np.asarray(arr == pos_label, dtype=bool)


def check_sample_weight(sample_weight, n_samples):
    """Validate ``sample_weight``: 1-D, finite, non-negative, of length n_samples.

    Returns ``None`` when ``sample_weight`` is ``None``, else a float64 array.
    """
    if sample_weight is None:
        return None
    _reject_mapping(sample_weight, "sample_weight")
    if np.ndim(sample_weight) == 0:
        raise TypeError(
            "sample_weight must be an array-like of shape (n_samples,), not a scalar."
        )
    w = _as_1d(sample_weight, "sample_weight")
    _check_no_missing(w, "sample_weight")  # before the dtype check: None is missing
    if w.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be numeric, got dtype {w.dtype}.")
    w = w.astype(np.float64)
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {w.shape[0]} entries but there are {n_samples} samples."
        )
    if (w < 0).any():
        raise ValueError("sample_weight must be non-negative.")
    return w


class _Columns(tuple):
    """Group columns already taken out of a data frame: ``(columns, name)``.

    Made by the input adapters (:mod:`sklearn_smallfair._dataframes`) from a
    polars or pyarrow frame, one column at a time, without converting the frame.
    """


class _Coded:
    """A categorical column: integer codes (``-1`` missing) and the label of each
    code. Its codes are counted as they are, without hashing the labels."""

    __slots__ = ("categories", "codes")

    def __init__(self, codes, categories):
        self.codes = np.asarray(codes)
        self.categories = np.asarray(categories)

    @property
    def shape(self):
        return self.codes.shape

    def to_numpy(self):
        """The labels, one per row (missing rows as ``None``)."""
        labels = self.categories.astype(object)[self.codes]
        labels[self.codes < 0] = None
        return labels


def _category_column(values, *, as_object):
    """A pandas Series or array of dtype ``category`` as :class:`_Coded`, else
    ``None``. ``as_object``: labels as an object array (as ``_asarray`` reads a
    Series), else in the dtype of the categories (as ``Series.to_numpy``)."""
    if isinstance(values, (pd.Series, pd.Index)) and isinstance(
        values.dtype, pd.CategoricalDtype
    ):
        values = values.array
    if not isinstance(values, pd.Categorical):
        return None
    categories = np.asarray(values.categories, dtype=object if as_object else None)
    return _Coded(values.codes, categories)


def _feature_columns(sensitive_features, n_samples):
    """The group columns of ``sensitive_features`` and a name for the grouping.

    Returns ``(columns, name)``: a list of 1-D numpy arrays (or
    ``pandas.Categorical`` for columns of dtype ``category``, whose codes are
    used as they are), each checked for length and missing values.
    """
    _reject_mapping(sensitive_features, "sensitive_features")
    name = "group"
    if isinstance(sensitive_features, pd.DataFrame):
        name = "|".join(str(c) for c in sensitive_features.columns)
        columns = [
            _category_column(sensitive_features[c], as_object=False)
            if isinstance(sensitive_features[c].dtype, pd.CategoricalDtype)
            else sensitive_features[c].to_numpy()
            for c in sensitive_features.columns
        ]
    elif isinstance(sensitive_features, _Columns):
        columns, name = list(sensitive_features[0]), sensitive_features[1]
    elif _category_column(sensitive_features, as_object=True) is not None:
        if isinstance(sensitive_features, pd.Series) and sensitive_features.name:
            name = str(sensitive_features.name)
        columns = [_category_column(sensitive_features, as_object=True)]
    else:
        if isinstance(sensitive_features, pd.Series) and sensitive_features.name:
            name = str(sensitive_features.name)
        arr = (
            None
            if isinstance(sensitive_features, (str, bytes))
            else _asarray(sensitive_features, "sensitive_features")
        )
        if arr is None or arr.ndim == 0:
            raise TypeError(
                "sensitive_features must be array-like with one label per sample, "
                f"got {type(sensitive_features).__name__}."
            )
        if arr.ndim == 1:
            columns = [arr]
        elif arr.ndim == 2:
            columns = [arr[:, j] for j in range(arr.shape[1])]
        else:
            raise ValueError(
                f"sensitive_features must be 1-D or 2-D, got shape {arr.shape}."
            )
    if len(columns) == 0:
        raise ValueError("sensitive_features has no columns.")
    for col in columns:
        if col.shape[0] != n_samples:
            raise ValueError(
                f"sensitive_features has {col.shape[0]} rows but y_true has "
                f"{n_samples}; pass one group label per sample."
            )
        if isinstance(col, _Coded) or col.dtype.kind != "O":
            _check_no_missing(col, "sensitive_features")
        # text and object labels: checked on their codes when they are encoded
    return columns, name


def check_sensitive_features(sensitive_features, n_samples):
    """Validate group labels and encode them.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels. With several columns the groups are their intersections,
        labelled ``"a|b"``.
    n_samples : int
        Expected number of rows.

    Returns
    -------
    groups : ndarray of shape (n_groups,)
        Sorted distinct group labels.
    codes : ndarray of int64, shape (n_samples,)
        Index of each row's group in ``groups``.
    name : str
        A name for the grouping (Series name, joined column names or ``"group"``).
    """
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    columns, name = _feature_columns(sensitive_features, n_samples)
    if len(columns) == 1:
        groups, codes = _unique_inverse(columns[0])
        return groups, codes.astype(np.int64), name
    uniques, inverses = zip(*(_unique_inverse(c) for c in columns))
    combined = np.ravel_multi_index(inverses, tuple(len(u) for u in uniques))
    present, codes = np.unique(combined, return_inverse=True)
    parts = np.unravel_index(present, tuple(len(u) for u in uniques))
    groups = np.array(
        [
            "|".join(_joinable(u[i]) for u, i in zip(uniques, idx))
            for idx in zip(*parts)
        ],
        dtype=object,
    )
    return groups, codes.astype(np.int64).ravel(), name


def _joinable(label):
    """A label as a part of an intersectional label ``"a|b"``.

    A ``|`` inside a part is escaped as ``\\|`` (and a backslash as ``\\\\``), so
    ``("A|B", "C")`` and ``("A", "B|C")`` stay two labels, ``A\\|B|C`` and
    ``A|B\\|C``.
    """
    return str(label).replace("\\", "\\\\").replace("|", "\\|")


def _check_missing_codes(col, codes, uniques, name):
    """The missing-value check of :func:`_check_no_missing` on hashed labels:
    NaN and None have code -1, an infinity is one of the distinct labels."""
    bad = None
    if (codes < 0).any():
        bad = codes < 0
    infinite = [
        v for v in uniques if isinstance(v, (float, np.floating)) and not np.isfinite(v)
    ]
    if infinite:
        for v in infinite:
            bad = (col == v) if bad is None else bad | (col == v)
    if bad is not None:
        _check_no_missing(np.where(bad, np.nan, 0.0), name)


def _check_one_label_type(col):
    """Refuse a column mixing text and non-text labels (``1`` and ``"1"``)."""
    if col.dtype.kind != "O":
        return
    is_text = np.fromiter(
        (isinstance(v, (str, bytes)) for v in col), dtype=bool, count=len(col)
    )
    if is_text.any() and not is_text.all():
        text = col[is_text][0]
        other = col[~is_text][0]
        raise ValueError(
            f"sensitive_features mixes text and non-text labels (e.g. {text!r} of "
            f"type {type(text).__name__} and {other!r} of type "
            f"{type(other).__name__}), which would print alike or sort "
            f"arbitrarily; convert the column to one type, e.g. "
            f"pandas.Series(...).astype(str)."
        )


def _unique_inverse(col):
    """Sorted distinct labels and codes.

    Integers in a short range, booleans and categorical columns are encoded by
    counting (:func:`_encode_column`); other labels are hashed
    (``pandas.factorize``). Both give the same labels and codes.
    """
    labels, ids, lo, span = _encode_column(col)
    if isinstance(ids, _Ranked):
        ids = ids.sorted()
    if span is None:  # hashed: ids are the codes
        return labels, ids
    seen = np.bincount(_offset(ids, lo), minlength=span) > 0
    if seen.all():
        return labels, _offset(ids, lo)
    lut = np.cumsum(seen) - 1
    return labels[seen], lut[_offset(ids, lo)]


class _Ranked:
    """Codes (in order of appearance, or of the categories) with the rank of
    each code's label among the sorted labels: counted as they are, then the
    counted table's rows are put in the order of the labels."""

    __slots__ = ("codes", "rank")

    def __init__(self, codes, rank):
        self.codes, self.rank = codes, rank

    def sorted(self):
        """The codes of the sorted labels (one pass)."""
        return self.rank[self.codes]


def _offset(ids, lo):
    """``ids - lo`` as int64 (``ids`` may be unsigned or narrow)."""
    if lo == 0 and ids.dtype == np.int64:
        return ids
    return np.subtract(ids, lo, dtype=np.int64, casting="unsafe")


#: Largest span of integer labels (``max - min + 1``) counted directly, beyond
#: the number of rows: a wider span is hashed.
_MAX_EXTRA_SPAN = 1 << 16


def _encode_column(col):
    """Encode a label column for counting: ``(labels, ids, lo, span)``.

    Row ``i`` has the label ``labels[ids[i] - lo]``, and ``labels`` is sorted.
    For integers in a short range (``span = max - min + 1`` at most the number of
    rows plus 65,536), booleans and categorical columns, ``ids`` are the values
    or the codes themselves and ``labels`` holds every label of the range or
    every category, present or not (``span`` entries): counting rows by id and
    dropping the empty ids gives the distinct labels without hashing. Other
    columns are hashed once (``pandas.factorize``, the label types checked on
    the distinct labels only): ``span`` is then ``None`` and ``ids`` a
    :class:`_Ranked` (codes in order of appearance, and the rank of each code's
    label, to sort the counted table rather than the rows), or sorted codes
    when labels of several types are compared as text.
    """
    if isinstance(col, _Coded):
        _check_one_label_type(col.categories)
        try:
            order = np.argsort(col.categories, kind="stable")
        except TypeError:  # labels of several types: compared as text
            return _encode_column(col.to_numpy())
        rank = np.empty(order.shape[0], dtype=np.int64)
        rank[order] = np.arange(order.shape[0])
        if (order == np.arange(order.shape[0])).all():  # categories in order
            return col.categories, col.codes, 0, order.shape[0]
        return col.categories[order], _Ranked(col.codes, rank), 0, order.shape[0]
    kind = col.dtype.kind
    if kind == "b":
        return np.array([False, True]), col.view(np.uint8), 0, 2
    if kind in "iu" and col.shape[0] > 0:
        lo, hi = col.min(), col.max()
        span = int(hi) - int(lo) + 1
        if span <= col.shape[0] + _MAX_EXTRA_SPAN:
            return np.arange(span, dtype=col.dtype) + lo, col, lo, span
    codes, uniques = pd.factorize(col)  # hashed, in order of appearance
    uniques = np.asarray(uniques)
    if col.dtype.kind == "O":
        _check_missing_codes(col, codes, uniques, "sensitive_features")
    _check_one_label_type(uniques)
    try:
        order = np.argsort(uniques, kind="stable")
    except TypeError:  # labels of several types: compared as text
        codes, uniques = pd.factorize(col.astype(str).astype(object), sort=True)
        return np.asarray(uniques), np.asarray(codes).ravel(), 0, None
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0])
    return uniques[order], _Ranked(np.asarray(codes).ravel(), rank), 0, None


_CELL_NAMES = ("TP", "FN", "FP", "TN")


def _cells_by_name(counts, name):
    """Reorder a pandas table or Series whose cells are named to ``(TP, FN, FP, TN)``.

    Named cells are read by name, whatever their order (``TN, FP, FN, TP`` as in
    scikit-learn's ``ravel`` included); a name that is not a cell is an error. A
    table or Series with a default integer axis is read by position.
    """
    if isinstance(counts, pd.DataFrame):
        axis = counts.columns
    elif isinstance(counts, pd.Series):
        axis = counts.index
    else:
        return counts
    if isinstance(axis, pd.RangeIndex):
        return counts.to_numpy()
    keys = {str(c).upper(): c for c in axis}
    unknown = [c for c in axis if str(c).upper() not in _CELL_NAMES]
    missing = [c for c in _CELL_NAMES if c not in keys]
    if unknown or missing or len(keys) != len(axis):
        where = "columns" if isinstance(counts, pd.DataFrame) else "index"
        raise ValueError(
            f"{name} is a pandas {type(counts).__name__} whose {where} "
            f"{[str(c) for c in axis]} are not the four cells: named cells must be "
            f"exactly TP, FN, FP, TN (any order and case; unknown: "
            f"{[str(c) for c in unknown]}, missing: {missing}). Rename them, or "
            f"pass a NumPy array ordered (TP, FN, FP, TN)."
        )
    cells = counts[[keys[c] for c in _CELL_NAMES]]
    try:  # a row of a mixed-type table is an object Series of numbers
        cells = (
            cells.apply(pd.to_numeric)
            if isinstance(cells, pd.DataFrame)
            else pd.to_numeric(cells)
        )
    except (ValueError, TypeError):
        pass  # not numbers: reported by the caller
    return cells.to_numpy()


def check_counts(counts, *, name="counts", n_groups=None):
    """Validate confusion-matrix counts of shape ``(..., 4)``.

    Counts may be integer or float (smoothed), must be finite and non-negative.
    With ``n_groups=2`` the shape must be ``(..., 2, 4)``. A pandas DataFrame
    (columns) or Series (index) whose cells are named is read by name.
    """
    _reject_mapping(counts, name)
    counts = _cells_by_name(counts, name)
    arr = _asarray(counts, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be numeric confusion-matrix counts, got dtype {arr.dtype}."
        )
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValueError(
            f"{name} must have shape (..., 4) with cells ordered (TP, FN, FP, TN); "
            f"got shape {arr.shape}."
        )
    if n_groups is not None and (arr.ndim < 2 or arr.shape[-2] != n_groups):
        raise ValueError(
            f"{name} must have shape (..., {n_groups}, 4) for a {n_groups}-group "
            f"metric (one confusion matrix per group); got shape {arr.shape}."
        )
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf.")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative.")
    return arr


def check_non_negative_scalar(value, name):
    """Validate a finite real scalar >= 0 and return it as a float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number >= 0, got {value!r}.")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return value


def check_probability(value, name):
    """Validate a real number strictly between 0 and 1 (a significance level, a
    power) and return it as a float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number in (0, 1); got {value!r}.")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.")
    return float(value)


def check_bool(value, name):
    """Validate ``True`` or ``False`` (numpy booleans too); return a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def check_choice(value, name, choices):
    """Validate that ``value`` is one of the strings ``choices``; return it."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}.")
    return value


def check_zero_division(zero_division):
    """Validate ``zero_division``: ``"warn"``, ``np.nan``, ``0.0`` or ``1.0``."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return zero_division
    elif isinstance(zero_division, (Real, Integral)) and not isinstance(
        zero_division, bool
    ):
        value = float(zero_division)
        if np.isnan(value) or value in (0.0, 1.0):
            return value
    raise ValueError(
        f"zero_division must be 'warn', np.nan, 0.0 or 1.0; got {zero_division!r}."
    )


def check_smoothing(smoothing, name="smoothing"):
    """Check a smoothing argument: ``None`` or a fitted-on-demand smoothing.

    Parameters
    ----------
    smoothing : None, AdditiveSmoothing or CrossPriorSmoothing
    name : str, default="smoothing"
        The argument's name in error messages.

    Returns
    -------
    smoothing : the same object, after its parameters (``eps``, ``lam``) were
        validated.
    """
    from .smoothing import BaseSmoothing  # smoothing builds on this module

    if smoothing is None:
        return None
    if not isinstance(smoothing, BaseSmoothing):
        raise TypeError(
            f"{name} must be None, AdditiveSmoothing(eps) or CrossPriorSmoothing(lam);"
            f" got {smoothing!r}."
        )
    smoothing.fit()  # validates eps / lam early
    return smoothing


def _reference_names(shape, labels):
    """Names of the references of leading shape ``shape``, as shown in warnings."""
    if labels is not None:
        labels = np.asarray(labels, dtype=object)
        if labels.shape != shape:
            raise ValueError(
                f"labels must hold one label per reference matrix, shape {shape}; "
                f"got shape {labels.shape}."
            )
        return lambda index: f"group {format_label(labels[index])}"
    if len(shape) == 1:
        return lambda index: f"group at position {index[0]}"
    return lambda index: f"reference at position {index}"


def _people(total):
    """A number of people as shown in messages: ``1,234``, ``12.5`` or ``0.004``
    (weighted counts)."""
    if float(total).is_integer():
        return f"{int(total):,}"
    return f"{total:,.1f}" if total >= 1 else f"{total:.3g}"


def warn_small_references(
    reference_counts,
    labels=None,
    min_reference=100,
    *,
    what="Cross-Prior Smoothing",
    hint="",
    parameter="min_reference",
    stacklevel=2,
    cell_names=None,
):
    """Warn when reference matrices are too small, or degenerate, to be a prior.

    A reference used as a prior (Cross-Prior Smoothing) or as a null law (the
    MATCH test) should be known much better than the small group it serves. Two
    :class:`~sklearn_smallfair.exceptions.ReferenceWarning` are possible, each
    naming the references concerned (by group label, else by position) and the
    fix:

    - a reference with fewer than ``min_reference`` people: its proportions are
      almost as noisy as a small group's;
    - a reference with an empty cell: that cell has zero prior mass, so a
      group's count in it can only be shrunk toward 0, and a rate built on it is
      pulled toward 0 or 1 with no uncertainty.

    Parameters
    ----------
    reference_counts : array-like of shape (..., 4)
        Reference matrices ``(TP, FN, FP, TN)``, one per group (or a single one).
    labels : array-like of shape (...), default=None
        Group label of each reference matrix (the leading shape of
        ``reference_counts``); references are named by position when ``None``.
    min_reference : int, default=100
        Fewest people a reference should hold; ``0`` disables the size check
        (empty cells are still reported).
    what : str, default="Cross-Prior Smoothing"
        What the reference is used for, to start the message.
    hint : str, default=""
        One more remedy specific to the caller (e.g. ``"a smaller lam"``).
    parameter : str or None, default="min_reference"
        The caller's parameter that sets ``min_reference``, named in the message
        (with how to silence it); ``None`` when the caller has none.
    stacklevel : int, default=2
        Passed to :func:`warnings.warn` (2: the function calling this one is
        shown).
    cell_names : sequence of str, default=None
        Names of the cells of other matrices than the binary ``(TP, FN, FP, TN)``
        (e.g. the ``K^2`` cells of flattened K x K matrices); the last axis of
        ``reference_counts`` then has ``len(cell_names)`` cells.

    Returns
    -------
    flagged : ndarray of bool, shape (...)
        References that were reported (too small or with an empty cell).

    Examples
    --------
    >>> import warnings
    >>> from sklearn_smallfair._validation import warn_small_references
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_small_references([[30, 10, 5, 15], [500, 0, 200, 300]],
    ...                           labels=["a", "b"])
    array([ True,  True])
    >>> for w in caught:
    ...     print(str(w.message)[:72], "...")
    Cross-Prior Smoothing: the reference of group 'a' (60 people) has fewer ...
    Cross-Prior Smoothing: the reference of group 'b' (FN = 0) has an empty ...
    """
    import warnings

    from .exceptions import ReferenceWarning

    if cell_names is None:
        ref = check_counts(reference_counts, name="reference_counts").astype(
            np.float64
        )
        cell_names = _CELL_NAMES
    else:
        ref = np.asarray(reference_counts, dtype=np.float64)
    shape = ref.shape[:-1]
    name = _reference_names(shape, labels)
    totals = ref.sum(axis=-1)
    small = totals < min_reference
    empty = (ref == 0).any(axis=-1)
    remedies = [
        "a larger reference (reference='rest' or 'total' rather than one group, "
        "or a published population table)"
    ]
    if hint:
        remedies.append(hint)

    def listing(mask, describe):
        """``(subject, verb)``: the references in ``mask``, described."""
        where = [tuple(int(i) for i in index) for index in np.argwhere(mask)]
        if not shape:  # a single reference matrix
            return f"the reference{describe(())}", "has"
        parts = [f"{name(index)}{describe(index)}" for index in where[:10]]
        more = f", ... ({len(where)} in all)" if len(where) > 10 else ""
        if len(where) == 1:
            return f"the reference of {parts[0]}", "has"
        return f"the references of {', '.join(parts)}{more}", "have"

    if small.any():
        which, verb = listing(
            small, lambda index: f" ({_people(totals[index])} people)"
        )
        threshold = f"{parameter}={min_reference}" if parameter else min_reference
        silence = (
            f"; set {parameter}=0 if this reference is known to be reliable"
            if parameter
            else ""
        )
        warnings.warn(
            f"{what}: {which} {verb} fewer than {threshold} people, so "
            f"{'its' if verb == 'has' else 'their'} proportions are almost as "
            f"noisy as a small group's and make a poor prior. Use "
            f"{' or '.join(remedies)}{silence}.",
            ReferenceWarning,
            stacklevel=stacklevel,
        )
    if empty.any():

        def cells(index):
            zero = [c for c, v in zip(cell_names, ref[index]) if v == 0]
            return f" ({', '.join(f'{c} = 0' for c in zero)})"

        which, verb = listing(empty, cells)
        warnings.warn(
            f"{what}: {which} {verb} an empty cell, which gets no prior mass: a "
            f"group's count in that cell is only shrunk toward 0, and a rate built "
            f"on it (e.g. TPR = TP / (TP + FN) when FN = 0) is pulled toward 0 or "
            f"1 with no uncertainty. Use {' or '.join(remedies)}, or add a "
            f"pseudo-count to the reference (reference_counts + 0.5).",
            ReferenceWarning,
            stacklevel=stacklevel,
        )
    return small | empty
