"""Shared input checks: array-likes, labels, targets, weights, counts, scalars.

Every public function validates its inputs here (group labels in
:mod:`sklearn_smallfair._groups`), before any work, and raises a ``ValueError``
or ``TypeError`` that names the argument and says how to fix it.
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
    "check_zero_division",
    "format_label",
    "format_labels",
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
    if arr.dtype.kind in "biu":  # integers and booleans have no missing value
        return
    _report_missing(_missing_mask(arr), name)


def _report_missing(bad, name):
    """Raise when the boolean mask ``bad`` marks a missing value of ``name``."""
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


def check_binary_targets(y_true, y_pred, *, pos_label=None):
    """Validate binary ``y_true``/``y_pred`` and return boolean positive masks.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Binary labels (numbers, booleans or strings).
    pos_label : int, float, bool, str or None, default=None
        The label of the positive class; ``None`` follows scikit-learn's rule
        (:func:`resolve_pos_label`).

    Returns
    -------
    t, p : ndarray of bool, shape (n_samples,)
        ``y_true == pos_label`` and ``y_pred == pos_label``.
    """
    y_true, y_pred = check_paired_targets(y_true, y_pred)
    true_labels = _labels(_distinct(y_true), "y_true")
    pred_labels = _labels(_distinct(y_pred), "y_pred")
    pos_label = _check_label_union(true_labels, pred_labels, pos_label)
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


def resolve_pos_label(labels, pos_label):
    """The positive class of binary targets with the distinct ``labels``.

    A given ``pos_label`` is returned as it is. ``None`` follows scikit-learn's
    rule: ``1`` when the labels are among ``{0, 1}`` or among ``{-1, 1}``
    (booleans included), otherwise a ``ValueError`` naming the labels.

    Examples
    --------
    >>> from sklearn_smallfair._validation import resolve_pos_label
    >>> resolve_pos_label([0, 1], None)
    1
    >>> resolve_pos_label(["no", "yes"], "yes")
    'yes'
    """
    if pos_label is not None:
        return pos_label
    values = list(labels)
    numeric = all(
        isinstance(v, (Real, np.number, np.bool_)) and not isinstance(v, str)
        for v in values
    )
    if numeric:
        found = {float(v) for v in values}
        if found <= {0.0, 1.0} or found <= {-1.0, 1.0}:
            return 1
    raise ValueError(
        f"y_true and y_pred take the labels {format_labels(values)} and pos_label "
        f"is None, which means 1 only for labels {{0, 1}} or {{-1, 1}} "
        f"(scikit-learn's rule); pass pos_label=<the positive label>."
    )


def _check_label_union(true_labels, pred_labels, pos_label):
    """Check the distinct labels of ``y_true`` and ``y_pred`` together, and
    ``pos_label`` against them; return ``pos_label`` (resolved when None)."""
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
    pos_label = resolve_pos_label(labels, pos_label)
    if not any(_label_equal(v, pos_label) for v in labels):
        str_labels = any(isinstance(v, str) for v in labels)
        if labels.shape[0] == 2 or str_labels != isinstance(pos_label, str):
            raise ValueError(
                f"pos_label={pos_label!r} is not a valid label: the labels are "
                f"{format_labels(labels)}. Pass pos_label=<the positive label>."
            )
    return pos_label


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
    """Validate ``sample_weight``: 1-D, finite, non-negative, of length n_samples,
    with a finite sum (else the weighted counts would overflow).

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
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight sums to more than the largest float64 "
            f"({np.finfo(np.float64).max:.3g}, largest weight {w.max():.3g}), so "
            f"the weighted counts would overflow. Divide sample_weight by a "
            f"common factor (e.g. its maximum): rates do not depend on the scale "
            f"of the weights."
        )
    return w


def integer_counts(counts, sample_weight):
    """Weighted ``counts`` as integers when ``sample_weight`` holds integers.

    Integer (or boolean) weights are frequency weights, so their counts are
    whole numbers of people, int64 as :func:`sklearn.metrics.confusion_matrix`
    gives; float weights leave float counts. ``counts`` were summed in float64,
    exact for integers below ``2**53``.
    """
    if sample_weight is None:
        return counts
    kind = getattr(getattr(sample_weight, "dtype", None), "kind", None)
    if kind is None:
        kind = np.asarray(sample_weight).dtype.kind
    if kind not in "biu":
        return counts
    if counts.size and counts.sum() >= 2.0**53:
        raise ValueError(
            "integer sample_weight totals 2**53 or more, beyond the integers that "
            "float64 sums hold exactly; divide the weights by a common factor."
        )
    return counts.astype(np.int64)


_CELL_NAMES = ("TP", "FN", "FP", "TN")

#: Bound on the total of integer counts: the sums the package forms (a group's
#: total, the total over groups, ``2 TP + FP + FN``) stay within int64.
MAX_COUNT_TOTAL = 2**62


def _match_names(axis, wanted, name, where="columns"):
    """``{wanted name: the axis entry}`` for the entries of ``axis`` that name one
    of ``wanted`` (upper-case names), ignoring case.

    Two entries that differ only in case (``TP`` and ``tp``) are an error that
    names them: which one holds the counts cannot be guessed. A name repeated
    as it is keeps its first entry (callers refuse repeated names).
    """
    found = {}
    for entry in axis:
        key = str(entry).upper()
        if key in wanted:
            found.setdefault(key, []).append(entry)
    clashes = {k: v for k, v in found.items() if len({str(e) for e in v}) > 1}
    if clashes:
        shown = "; ".join(
            " and ".join(repr(e) for e in dict.fromkeys(str(e) for e in entries))
            for entries in clashes.values()
        )
        raise ValueError(
            f"{name} has {where} that differ only in case ({shown}); names are "
            f"matched ignoring case, so which one holds the counts is ambiguous. "
            f"Drop or rename the extra one."
        )
    return {k: v[0] for k, v in found.items()}


def _numeric_cells(cells, name):
    """The values of a pandas table (or Series) of cells as a NumPy array.

    Pandas nullable columns (``Int64``, ``Float64``, ...) and the object columns
    of a mixed-type table are converted to numbers; a missing or non-finite value
    is an error that names its column and row.
    """
    frame = cells.to_frame().T if isinstance(cells, pd.Series) else cells
    columns = []
    for column in frame.columns:
        values = frame[column]
        extension = isinstance(values.dtype, pd.api.extensions.ExtensionDtype)
        if extension or values.dtype.kind == "O":
            try:
                values = pd.to_numeric(values)
            except (ValueError, TypeError):
                return cells.to_numpy()  # not numbers: reported by the caller
        bad = np.array(values.isna(), dtype=bool)
        if isinstance(values.dtype, pd.api.extensions.ExtensionDtype):
            kind = getattr(values.dtype, "kind", "f")
            values = values.to_numpy(
                dtype=np.int64 if kind in "biu" and not bad.any() else np.float64,
                na_value=np.nan,
            )
        values = np.asarray(values)
        if values.dtype.kind == "f":
            bad |= ~np.isfinite(values)
        if bad.any():
            row = frame.index[int(np.flatnonzero(bad)[0])]
            raise ValueError(
                f"{name} contains {int(bad.sum())} missing or non-finite value(s) "
                f"in column {str(column)!r} (first at row {format_label(row)}); "
                f"confusion-matrix counts must be finite numbers. Fill or drop "
                f"that row."
            )
        columns.append(values)
    if not columns:
        return cells.to_numpy()
    out = np.column_stack(columns)
    return out[0] if isinstance(cells, pd.Series) else out


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
        return _numeric_cells(counts, name)
    where = "columns" if isinstance(counts, pd.DataFrame) else "index"
    keys = _match_names(
        axis, _CELL_NAMES, name, "columns" if where == "columns" else "index entries"
    )
    unknown = [c for c in axis if str(c).upper() not in _CELL_NAMES]
    missing = [c for c in _CELL_NAMES if c not in keys]
    if unknown or missing or len(keys) != len(axis):
        raise ValueError(
            f"{name} is a pandas {type(counts).__name__} whose {where} "
            f"{[str(c) for c in axis]} are not the four cells: named cells must be "
            f"exactly TP, FN, FP, TN (any order and case; unknown: "
            f"{[str(c) for c in unknown]}, missing: {missing}). Rename them, or "
            f"pass a NumPy array ordered (TP, FN, FP, TN)."
        )
    return _numeric_cells(counts[[keys[c] for c in _CELL_NAMES]], name)


def check_counts(counts, *, name="counts", n_groups=None):
    """Validate confusion-matrix counts of shape ``(..., 4)``.

    Counts may be integer or float (smoothed), must be finite and non-negative.
    Integer counts must total less than ``MAX_COUNT_TOTAL`` (``2**62``), so that
    the sums formed from them cannot overflow int64; they are returned as int64.
    With ``n_groups=2`` the shape must be ``(..., 2, 4)``. A pandas DataFrame
    (columns) or Series (index) whose cells are named is read by name (ignoring
    case; two names that differ only in case are an error), and its pandas
    nullable columns are converted, a missing value being an error that names
    its column and row.
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
    if arr.dtype.kind in "iu":
        # summed in float64, which cannot wrap around as int64 does
        total = arr.sum(dtype=np.float64)
        if total >= MAX_COUNT_TOTAL:
            raise ValueError(
                f"{name} total {total:.4g} people, at or above the bound of "
                f"2**62 (about 4.6e18) on integer counts: the sums formed from "
                f"them (a group's size, the total over groups) would overflow "
                f"int64. Pass fewer or smaller counts (or float counts, whose sums "
                f"do not wrap around)."
            )
        arr = arr.astype(np.int64, copy=False)
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


#: Methods an object must have to be accepted as a ``smoothing`` argument.
_SMOOTHING_METHODS = ("fit", "transform", "transform_matrices", "coefficients")


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
    if smoothing is None:
        return None
    # Duck-typed: any object with the smoothing estimators' methods is accepted
    # (this module sits below :mod:`sklearn_smallfair.smoothing`).
    if not all(
        callable(getattr(smoothing, method, None)) for method in _SMOOTHING_METHODS
    ):
        raise TypeError(
            f"{name} must be None, AdditiveSmoothing(eps) or CrossPriorSmoothing(lam);"
            f" got {smoothing!r}."
        )
    # validate the parameters (eps, lam) early, without data
    check = getattr(smoothing, "_check_params", None)
    check() if callable(check) else smoothing.fit()
    return smoothing
