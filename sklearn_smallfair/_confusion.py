"""Confusion-matrix cells and grouped counting.

Confusion matrices are numpy arrays of shape ``(..., 4)`` with cells ordered
``(TP, FN, FP, TN)``, i.e. ``[[TP, FN], [FP, TN]]``. scikit-learn's
``confusion_matrix(...).ravel()`` is ``(TN, FP, FN, TP)``; :func:`from_sklearn_order`
converts, and nothing else in the package does.
"""

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ._counting import _finish, _partial_counts
from ._frames import count_dask, from_data, is_dask_collection, to_local
from ._params import COUNTS, POS_LABEL, validate_params
from ._validation import (
    _asarray,
    _match_names,
    _numeric_cells,
    check_binary_targets,
    check_counts,
    check_sample_weight,
    format_labels,
    integer_counts,
)

__all__ = [
    "CELLS",
    "FN",
    "FP",
    "TN",
    "TP",
    "ConfusionCounts",
    "check_group_counts",
    "confusion_counts",
    "counts_have_labels",
    "from_sklearn_order",
    "rows_or_counts",
]

#: Cell names in the package's order.
CELLS = ("TP", "FN", "FP", "TN")
TP, FN, FP, TN = range(4)

# scikit-learn's ravel order (TN, FP, FN, TP) -> ours (TP, FN, FP, TN).
_SKLEARN_TO_OURS = np.array([3, 2, 1, 0])


@validate_params({"cm": ["array-like"]})
def from_sklearn_order(cm):
    """Convert scikit-learn confusion matrices to the package's cell order.

    Parameters
    ----------
    cm : array-like of shape (..., 2, 2) or (..., 4)
        Output of :func:`sklearn.metrics.confusion_matrix` for labels
        ``[negative, positive]`` (``[[TN, FP], [FN, TP]]``), or its ``ravel()``.

    Returns
    -------
    counts : ndarray of shape (..., 4)
        The same counts ordered ``(TP, FN, FP, TN)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import from_sklearn_order
    >>> from_sklearn_order(np.array([[5, 1], [2, 7]]))
    array([7, 2, 1, 5])
    """
    cm = np.asarray(cm)
    if cm.shape[-2:] == (2, 2):
        cm = cm.reshape(*cm.shape[:-2], 4)
    cm = check_counts(cm, name="cm")
    return cm[..., _SKLEARN_TO_OURS]


def _grouped_counts(y_true, y_pred, sensitive_features, sample_weight, pos_label):
    """Count cells per group in one pass of ``np.bincount``.

    Returns ``(groups, counts, group_name)``; ``groups`` is ``None`` when
    ``sensitive_features`` is ``None`` (then ``counts`` has shape ``(4,)``).
    dask collections are counted partition by partition and the tables added
    by label; polars and pyarrow columns are read one column at a time
    (:mod:`sklearn_smallfair._frames`).
    """
    data = (y_true, y_pred, sensitive_features, sample_weight)
    if any(is_dask_collection(v) for v in data):
        return count_dask(*data, pos_label=pos_label)
    y_true, y_pred, sensitive_features, sample_weight = (
        to_local(y_true, "y_true"),
        to_local(y_pred, "y_pred"),
        to_local(sensitive_features, "sensitive_features", frame=True),
        to_local(sample_weight, "sample_weight"),
    )
    if sensitive_features is None:
        t, p = check_binary_targets(y_true, y_pred, pos_label=pos_label)
        w = check_sample_weight(sample_weight, t.shape[0])
        # cell index in (TP, FN, FP, TN): 2 * (not true) + (not predicted)
        cell = (~t).astype(np.int64) * 2 + (~p)
        counts = np.bincount(cell, weights=w, minlength=4)
        if w is not None and counts.sum() == 0:
            raise ValueError("sample_weight sums to zero; no sample carries weight.")
        counts = integer_counts(counts, sample_weight)
        return None, counts, None
    partial, name = _partial_counts(y_true, y_pred, sensitive_features, sample_weight)
    groups, counts = _finish(partial, pos_label)
    return groups, counts, name


class ConfusionCounts(NamedTuple):
    """Confusion-matrix counts with their group labels (see :func:`confusion_counts`).

    A named tuple, so ``groups, counts = confusion_counts(...)`` unpacks it; its
    fields are its parameters.

    Parameters
    ----------
    groups : ndarray of shape (n_groups,) or None
        Sorted group labels; ``None`` when no ``sensitive_features`` were given.
    counts : ndarray of shape (n_groups, 4) or (4,)
        Cells ``(TP, FN, FP, TN)``; shape ``(4,)`` when ``groups`` is ``None``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import confusion_counts
    >>> result = confusion_counts([1, 0, 1, 0], [1, 1, 0, 0],
    ...                           sensitive_features=["a", "a", "b", "b"])
    >>> result.groups
    array(['a', 'b'], dtype='<U1')
    >>> result.counts
    array([[1, 0, 1, 0],
           [0, 1, 0, 1]])
    """

    groups: np.ndarray | None
    counts: np.ndarray

    def to_frame(self):
        """The counts as a DataFrame: one row per group, columns ``TP, FN, FP, TN``.

        Returns
        -------
        frame : pandas.DataFrame
            Indexed by group (a single row labelled ``"all"`` without groups).

        Examples
        --------
        >>> from sklearn_smallfair.metrics import confusion_counts
        >>> confusion_counts([1, 0, 1, 0], [1, 1, 0, 0]).to_frame()
               TP  FN  FP  TN
        group
        all     1   1   1   1
        """
        import pandas as pd

        counts = np.atleast_2d(self.counts)
        index = pd.Index(
            ["all"] if self.groups is None else list(self.groups), name="group"
        )
        return pd.DataFrame(counts, index=index, columns=list(CELLS))


@validate_params(
    {
        "y_true": ["array-like", str],
        "y_pred": ["array-like", str],
        "sensitive_features": ["array-like", str, None],
        "sample_weight": ["array-like", str, None],
        "pos_label": POS_LABEL,
        "data": "no_validation",
    }
)
def confusion_counts(
    y_true,
    y_pred,
    *,
    sensitive_features=None,
    data=None,
    sample_weight=None,
    pos_label=None,
):
    """Binary confusion-matrix counts, overall or per group.

    All groups are counted in one pass (a single :func:`numpy.bincount`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Group label of each sample. A 2-D array or DataFrame defines intersectional
        groups labelled ``"a|b"``. ``None`` counts all samples together.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; counts are then weighted sums (float).
    pos_label : int, float, bool, str or None, default=None
        The positive class. ``None`` follows scikit-learn's rule: ``1`` when the
        labels are ``{0, 1}`` or ``{-1, 1}``, otherwise a ``ValueError`` naming
        the labels.

    Returns
    -------
    result : ConfusionCounts
        A named tuple ``(groups, counts)``, whatever the arguments: ``groups`` are
        the sorted group labels (``None`` without ``sensitive_features``);
        ``counts`` has cells ``(TP, FN, FP, TN)``, shape ``(n_groups, 4)`` (or
        ``(4,)`` without groups), int64 without weights and float64 with them.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import confusion_counts
    >>> y_true = [1, 1, 0, 0, 1, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 0]
    >>> confusion_counts(y_true, y_pred).counts
    array([2, 1, 1, 2])
    >>> groups, counts = confusion_counts(
    ...     y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"])
    >>> groups
    array(['a', 'b'], dtype='<U1')
    >>> counts
    array([[1, 1, 0, 1],
           [1, 0, 1, 1]])
    >>> confusion_counts(
    ...     y_true, y_pred, sensitive_features=["a", "a", "a", "b", "b", "b"]
    ... ).to_frame()
           TP  FN  FP  TN
    group
    a       1   1   0   1
    b       1   0   1   1
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight
    )
    groups, counts, _ = _grouped_counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    return ConfusionCounts(groups, counts)


def _check_labels_not_in_columns(counts, found):
    """Refuse a counts frame whose group labels sit in a column (a frame after
    ``reset_index()``): its groups would silently be the row numbers."""
    import pandas as pd

    index = counts.index
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        return
    cells = {str(c) for c in found.values()}
    text = [
        c
        for c in counts.columns
        if str(c) not in cells
        and not pd.api.types.is_numeric_dtype(counts[c].dtype)
        and not pd.api.types.is_bool_dtype(counts[c].dtype)
    ]
    if text:
        raise ValueError(
            f"counts has the label column(s) {[str(c) for c in text]} besides the "
            f"cells, and no labels in its index, so its groups would be the row "
            f"numbers 0 .. {len(counts) - 1}. Set the group column as the index, "
            f"e.g. counts.set_index({str(text[0])!r}), or name it 'group'."
        )


@validate_params({"counts": COUNTS})
def check_group_counts(counts):
    """Validate per-group counts given as a table instead of rows.

    Parameters
    ----------
    counts : pandas.DataFrame, mapping or array-like of shape (n_groups, 4)
        - a DataFrame with columns ``TP, FN, FP, TN`` (any case, but two columns
          that differ only in case, such as ``TP`` and ``tp``, are an error);
          group labels from a ``group`` column if present, else from the index.
          pandas nullable columns (``Int64``, ``Float64``) are accepted; a
          missing count is an error naming its column and row;
        - a mapping ``{group: (TP, FN, FP, TN)}``;
        - an array of shape (n_groups, 4), groups labelled ``0 .. n_groups - 1``.

        Integer counts must total less than ``2**62`` (their sums are formed
        in int64), float counts less than the largest float64.

    Returns
    -------
    groups : ndarray of shape (n_groups,)
        The group labels, in the order of the rows of ``counts``.
    counts : ndarray of shape (n_groups, 4)
        The checked counts ``(TP, FN, FP, TN)``, one row per group.
    name : str
        Name of the grouping (``"group"`` unless the DataFrame index is named).

    Examples
    --------
    >>> from sklearn_smallfair import check_group_counts
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> table = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> groups, counts, name = check_group_counts(table)
    >>> groups, counts
    (array(['Black', 'White'], dtype=object), array([[ 273,  170, 1043, 1692],
           [  77,  129,  380, 1679]]))
    """
    import pandas as pd

    name = "group"
    if isinstance(counts, pd.DataFrame):
        found = _match_names(counts.columns, (*CELLS, "GROUP"), "counts")
        repeated = counts.columns[counts.columns.duplicated()]
        repeated = sorted({str(c) for c in repeated if str(c).upper() in found})
        if repeated:
            raise ValueError(
                f"counts has the column(s) {repeated} more than once; pass one "
                f"column per cell (TP, FN, FP, TN)."
            )
        missing = [c for c in CELLS if c not in found]
        if missing:
            raise ValueError(
                f"counts is a DataFrame without the column(s) {missing}; it needs "
                f"columns {list(CELLS)} (one row per group)."
            )
        if "GROUP" in found:
            groups = counts[found["GROUP"]].to_numpy()
        else:
            _check_labels_not_in_columns(counts, found)
            groups = counts.index.to_numpy()
            if counts.index.name is not None:
                name = str(counts.index.name)
        cells = counts[[found[c] for c in CELLS]]
        if "GROUP" in found:  # name the rows by their group in messages
            cells = cells.set_axis(pd.Index(groups, dtype=object), axis=0)
        values = _numeric_cells(cells, "counts")
    elif isinstance(counts, Mapping):
        groups = np.array(list(counts.keys()), dtype=object)
        values = _asarray(list(counts.values()), "counts")
    else:
        values = _asarray(counts, "counts")
        groups = np.arange(values.shape[0]) if values.ndim == 2 else None
    values = check_counts(values)
    with np.errstate(over="ignore"):
        total = values.sum(dtype=np.float64)
    if values.dtype.kind == "f" and not np.isfinite(total):
        raise ValueError(
            "counts total more than the largest float64 "
            f"({np.finfo(np.float64).max:.3g}), so the groups' sizes and the "
            "references summed from them would overflow. Divide the counts by a "
            "common factor (rates do not depend on their scale)."
        )
    if values.ndim != 2:
        raise ValueError(
            f"counts must hold one (TP, FN, FP, TN) row per group, shape "
            f"(n_groups, 4); "
            f"got {values.shape}."
        )
    if values.shape[0] == 0:
        raise ValueError(
            "counts has no groups (shape (0, 4)); pass one (TP, FN, FP, TN) row per "
            "group."
        )
    if len(groups) != len(set(groups.tolist())):
        raise ValueError("counts has duplicate group labels.")
    empty = values.sum(axis=1) == 0
    if empty.any():
        raise ValueError(
            f"group(s) {format_labels(groups[empty])} in counts are empty "
            f"(all cells 0); drop "
            f"them."
        )
    if len(groups) > 1:
        _warn_population_rows(groups)
    return groups, values, name


#: Labels that name everyone in a table of counts rather than a group.
POPULATION_LABELS = ("all", "total", "overall", "population", "everyone")


def _warn_population_rows(groups):
    """Warn when a row of a counts table is labelled like the whole population
    (``"All"``, ``"Total"``): audited as a group, it would also be counted in
    every other group's reference."""
    rows = [
        g
        for g in groups.tolist()
        if isinstance(g, str) and g.strip().casefold() in POPULATION_LABELS
    ]
    if not rows:
        return
    import warnings

    from ._stacklevel import user_stacklevel
    from .exceptions import SensitiveFeaturesWarning

    warnings.warn(
        f"counts has the row(s) {format_labels(np.asarray(rows, dtype=object))}, "
        f"labelled like everyone rather than a group: it is audited as a group "
        f"and its people are counted again in every other group's reference. If "
        f"it is a population total, drop it from the groups (and pass it as "
        f"reference= if it is the reference).",
        SensitiveFeaturesWarning,
        stacklevel=user_stacklevel(),
    )


def counts_have_labels(counts):
    """Whether per-group ``counts`` name their groups (a mapping's keys, a
    DataFrame's ``group`` column or labelled index), so that messages name the
    groups by label; an array, or a DataFrame with a default index
    (``0, 1, ...``) and no ``group`` column, has positions only. Rows
    (``counts=None``) are labelled by ``sensitive_features``."""
    import pandas as pd

    if counts is None or isinstance(counts, Mapping):
        return True
    if isinstance(counts, pd.DataFrame):
        if any(str(c).lower() == "group" for c in counts.columns):
            return True
        index = counts.index
        return not (
            isinstance(index, pd.RangeIndex)
            and index.start == 0
            and index.step == 1
            and index.name is None
        )
    return False


def rows_or_counts(
    y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
):
    """Per-group counts from rows (y_true, y_pred, groups) or from a counts table.

    Returns ``(groups, counts, group_name)``; exactly one of the two inputs must be
    given.
    """
    if counts is not None:
        given = [
            n
            for n, v in (
                ("y_true", y_true),
                ("y_pred", y_pred),
                ("sensitive_features", sensitive_features),
                ("sample_weight", sample_weight),
            )
            if v is not None
        ]
        if given:
            raise ValueError(
                f"pass either rows (y_true, y_pred, sensitive_features) or counts, "
                f"not both; got counts and {', '.join(given)}."
            )
        return check_group_counts(counts)
    if y_true is None or y_pred is None:
        raise ValueError(
            "pass y_true, y_pred and sensitive_features, or counts=<per-group table>."
        )
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    return _grouped_counts(y_true, y_pred, sensitive_features, sample_weight, pos_label)
