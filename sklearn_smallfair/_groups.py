"""Group labels: reading ``sensitive_features`` and encoding its columns.

A grouping is one or several label columns (crossed into intersectional groups
labelled ``"a|b"``). Columns are read without copying a data frame, checked for
length and missing values, and encoded into sorted labels and integer codes,
by counting for short integer ranges, booleans and categoricals and by hashing
otherwise.
"""

import warnings

import numpy as np
import pandas as pd

from ._lookalike import lookalike_sets
from ._stacklevel import user_stacklevel
from ._validation import (
    _asarray,
    _check_no_missing,
    _reject_mapping,
    _report_missing,
)

__all__ = ["check_sensitive_features", "warn_lookalikes"]


class _Columns(tuple):
    """Group columns already taken out of a data frame: ``(columns, name)`` or
    ``(columns, name, column_names)``.

    Made by the input layer (:mod:`sklearn_smallfair._frames`) from a frame,
    one column at a time, without converting the frame.
    """


class _Tallied(_Columns):
    """The group columns of a table of counts (one row per distinct group and
    labels, counted by an engine): its rows are not people, so the checks that
    count rows per label were made on the people counts already."""


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


def _feature_columns(sensitive_features, n_samples, *, warn=True):
    """The group columns of ``sensitive_features`` and a name for the grouping.

    Returns ``(columns, name)``: a list of 1-D numpy arrays (or
    ``pandas.Categorical`` for columns of dtype ``category``, whose codes are
    used as they are), each checked for length and missing values; with
    ``warn``, a column that looks continuous or a categorical one with levels no
    row holds is warned about (a caller that reads the same labels again
    passes ``warn=False``).
    """
    _reject_mapping(sensitive_features, "sensitive_features")
    name = "group"
    if isinstance(sensitive_features, pd.DataFrame):
        duplicated = sensitive_features.columns[sensitive_features.columns.duplicated()]
        if len(duplicated):
            raise ValueError(
                f"sensitive_features has several columns named "
                f"{', '.join(repr(c) for c in duplicated.unique())}; give each group "
                f"column its own name (or pass one of them)."
            )
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
        if arr is not None and arr.dtype.kind == "f":
            arr = _exact_integers(sensitive_features, arr)
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
    names = _column_names(sensitive_features, name, len(columns))
    for col, col_name in zip(columns, names):
        if col.shape[0] != n_samples:
            raise ValueError(
                f"sensitive_features has {col.shape[0]} rows but y_true has "
                f"{n_samples}; pass one group label per sample."
            )
        if isinstance(col, _Coded):
            _report_missing(col.codes < 0, "sensitive_features")
        elif col.dtype.kind != "O":
            _check_no_missing(col, "sensitive_features")
        # text and object labels: checked on their codes when they are encoded
        if warn and not isinstance(sensitive_features, _Tallied):
            _warn_mistaken_labels(col, col_name)
    return columns, name


def _exact_integers(values, arr):
    """Labels as objects when numpy read them as floats that change them.

    A list holding an integer beyond the 64-bit range (``2**63 + 5``) becomes a
    float array, whose value is another number (``9.223372036854776e18``), and
    the other integers of the list become floats: keep such a list's labels as
    they were given.
    """
    if isinstance(values, (np.ndarray, pd.Series, pd.Index)):
        return arr
    given = np.asarray(values, dtype=object)
    flat = given.ravel()
    if any(
        isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53 for v in flat
    ):
        return given
    return arr


#: A numeric group column with more distinct values than this looks continuous
#: (group codes are passed as a categorical or as text); the message counts the
#: values held by fewer than ``_FEW`` rows.
_MAX_LEVELS = 20
_FEW = 5


def _column_names(sensitive_features, name, n_columns):
    """The name of each group column, for messages."""
    if isinstance(sensitive_features, pd.DataFrame):
        return [str(c) for c in sensitive_features.columns]
    if isinstance(sensitive_features, _Columns) and len(sensitive_features) > 2:
        return list(sensitive_features[2])
    if n_columns == 1:
        return [name]
    return [f"column {j}" for j in range(n_columns)]


def _warn_mistaken_labels(col, name):
    """Warn when a group column looks continuous, or a categorical column has
    levels no row holds (see
    :class:`~sklearn_smallfair.exceptions.SensitiveFeaturesWarning`)."""
    from .exceptions import SensitiveFeaturesWarning

    if isinstance(col, _Coded):
        held = np.bincount(col.codes[col.codes >= 0], minlength=len(col.categories))
        unused = col.categories[held == 0]
        if unused.size:
            shown = ", ".join(repr(v) for v in unused[:10].tolist())
            more = f" and {unused.size - 10} more" if unused.size > 10 else ""
            warnings.warn(
                f"sensitive_features column {name!r} is categorical with "
                f"level(s) no row holds: {shown}{more}. Those groups have no one "
                f"and are not in the results; drop them "
                f"(.cat.remove_unused_categories()) or check the data.",
                SensitiveFeaturesWarning,
                stacklevel=user_stacklevel(),
            )
        return
    if col.dtype.kind not in "iuf" or col.size == 0:
        return
    values = col[np.isfinite(col)] if col.dtype.kind == "f" else col
    if values.size == 0:
        return
    lo, hi = values.min(), values.max()
    if values.dtype.kind in "iu" and int(hi) - int(lo) + 1 <= _MAX_LEVELS:
        return  # a short range of codes: never more than 20 levels
    if values.dtype.kind in "iu" and int(hi) - int(lo) < 10_000_000:
        held = np.bincount(values.astype(np.int64) - int(lo))
        held = held[held > 0]
    else:
        held = np.unique(values, return_counts=True)[1]
    warn_continuous(held, name)


def warn_continuous(held, name):
    """Warn that the numeric group column ``name`` looks continuous when it has
    more than ``_MAX_LEVELS`` levels; ``held`` counts the rows of each level."""
    from .exceptions import SensitiveFeaturesWarning

    n_levels = held.size
    if n_levels <= _MAX_LEVELS:
        return
    few = int((held < _FEW).sum())
    warnings.warn(
        f"sensitive_features column {name!r} holds numbers with {n_levels} "
        f"distinct values ({few} of them held by fewer than {_FEW} rows), each its "
        f"own group: it looks continuous (an age, a score). Bin it first, e.g. "
        f"pd.cut(column, bins=[0, 25, 45, 65, 120]); if these numbers are group "
        f"codes, pass them as a categorical or as text.",
        SensitiveFeaturesWarning,
        stacklevel=user_stacklevel(),
    )


def warn_lookalikes(uniques, sensitive_features, name):
    """Warn when distinct text labels of a group column look alike on screen.

    ``uniques`` holds the distinct labels of each column of
    ``sensitive_features`` (as :func:`_feature_columns` read them, ``name`` its
    name for the grouping). Look-alike labels (see
    :mod:`sklearn_smallfair._lookalike`) stay different groups.
    """
    names = _column_names(sensitive_features, name, len(uniques))
    for labels, col_name in zip(uniques, names):
        _warn_lookalike_column(np.asarray(labels), col_name)


def _warn_lookalike_column(labels, name):
    if labels.dtype.kind not in "OU":
        return
    sets = lookalike_sets(labels.tolist())
    if not sets:
        return
    from .exceptions import SensitiveFeaturesWarning

    shown = "; ".join(" and ".join(ascii(v) for v in same) for same in sets[:5])
    more = f"; and {len(sets) - 5} more sets" if len(sets) > 5 else ""
    warnings.warn(
        f"sensitive_features column {name!r} has labels that look alike but are "
        f"different values, so they are different groups: {shown}{more} (written "
        f"with escapes to show how they differ: spaces, invisible characters, "
        f"letters of another alphabet or another Unicode form). If they are one "
        f"group, clean the column first, e.g. "
        f"column.str.strip().str.normalize('NFKC').",
        SensitiveFeaturesWarning,
        stacklevel=user_stacklevel(),
    )


def check_sensitive_features(sensitive_features, n_samples, *, warn=True):
    """Validate group labels and encode them.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels. With several columns the groups are their intersections,
        labelled ``"a|b"``.
    n_samples : int
        Expected number of rows.
    warn : bool, default=True
        Warn about columns that look continuous and categorical levels no row
        holds (:class:`~sklearn_smallfair.exceptions.SensitiveFeaturesWarning`);
        ``False`` when the caller has read the same labels before.

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
    columns, name = _feature_columns(sensitive_features, n_samples, warn=warn)
    uniques, inverses = zip(*(_unique_inverse(c) for c in columns))
    if warn:
        warn_lookalikes(uniques, sensitive_features, name)
    if len(columns) == 1:
        return uniques[0], inverses[0].astype(np.int64), name
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
