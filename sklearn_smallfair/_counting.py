"""Counting confusion matrices per group: one pass of ``np.bincount`` over ids.

Rows are counted by ``(group id, id of the true label, id of the predicted
label)`` in a table of shape ``(n_ids, 4)``, whose column ``2 * i + j`` counts
the rows whose true label is ``true_labels[i]`` and predicted label
``pred_labels[j]``. The ids come from :func:`~._validation._encode_column`:
integers in a short range, booleans and categorical columns are counted as they
are (no hashing), other labels are hashed once. Empty ids are dropped, which
leaves the present groups in sorted order.

A table counted this way (a :class:`_Partial`) still holds the raw labels, so
tables of several parts of the data (chunks of a file, partitions of a dask
collection) are added by label (:func:`_merge`) before the positive class is
resolved and the cells are put in the package's order ``(TP, FN, FP, TN)``
(:func:`_finish`). The in-memory call is the same computation with one part.
"""

from typing import NamedTuple

import numpy as np
import pandas as pd

from ._groups import (
    _encode_column,
    _feature_columns,
    _joinable,
    _offset,
    _Ranked,
    _unique_inverse,
    warn_lookalikes,
)
from ._validation import (
    _check_label_union,
    _label_equal,
    _labels,
    check_paired_targets,
    check_sample_weight,
    format_labels,
    integer_counts,
)

#: Rows per block of the counting loop: the block's ids stay in the CPU cache.
_BLOCK = 1 << 16
#: Largest table (ids x 4 cells) counted block by block; larger ones in one pass.
_MAX_BLOCKED_TABLE = 1 << 16


class _Partial(NamedTuple):
    """Counts of part of the data, keyed by labels.

    Attributes
    ----------
    labels : tuple of ndarray of shape (n_rows,)
        Per group column, the label of each row of the table; the rows are
        distinct and sorted (first column first).
    true_labels, pred_labels : ndarray of shape (2,), dtype object
        The labels of ``y_true`` (``y_pred``) behind ids 0 and 1; an id that
        counts no row may hold ``None``.
    n : ndarray of int64, shape (n_rows, 4)
        Rows counted, column ``2 * i + j`` for true id ``i``, predicted id ``j``.
    weighted : ndarray of float64, shape (n_rows, 4), or None
        The same cells summed with the sample weights (``None`` unweighted).
    """

    labels: tuple
    true_labels: np.ndarray
    pred_labels: np.ndarray
    n: np.ndarray
    weighted: np.ndarray | None


def _encode_target(y, name):
    """``(labels, ids, lo)``: the row ``i`` of ``y`` has ``labels[ids[i] - lo]``.

    ``labels`` (an object array of two, sorted, ``None`` for a missing second
    label) holds the one or two distinct labels; more, or continuous values,
    raise the errors of :func:`~._validation.check_binary_targets`. Booleans and
    integers ``{k, k + 1}`` are used as they are.
    """
    kind = y.dtype.kind
    if kind == "b":
        return np.array([False, True], dtype=object), y.view(np.uint8), 0
    if kind in "iu":
        lo, hi = y.min(), y.max()
        if int(hi) - int(lo) <= 1:
            second = None if hi == lo else hi
            return np.array([lo, second], dtype=object), y, lo
    codes, uniques = pd.factorize(y)
    sorted_labels = _labels(np.asarray(uniques), name)  # binary, not continuous
    labels = np.empty(2, dtype=object)
    labels[: sorted_labels.shape[0]] = list(sorted_labels)
    if (
        sorted_labels.shape[0] == 2
        and np.argsort(np.asarray(uniques), kind="stable")[0] == 1
    ):
        codes = 1 - codes
    return labels, codes, 0


def _count_ids(ids, lo, span, a, lo_a, b, lo_b, weights, *, ranges=False):
    """Rows per ``(ids - lo, a - lo_a, b - lo_b)``: tables ``(span, 4)``.

    ``a - lo_a`` and ``b - lo_b`` should be 0 or 1. Returns ``(n, weighted,
    seen)``; a small table is counted block by block (the ids of a block stay in
    the CPU cache), a large one in a single pass. With ``ranges=True``, ``seen``
    is ``[(min(a), max(a)), (min(b), max(b))]``, read block by block while the
    block is in the cache, so that the caller can check afterwards that ``a`` and
    ``b`` held two values only (else the counts are wrong and must be redone);
    otherwise ``seen`` is None.
    """
    size = 4 * span
    n_rows = ids.shape[0]
    seen = None
    if size > _MAX_BLOCKED_TABLE:
        key = _offset(ids, lo) << 2
        key |= _offset(a, lo_a) << 1
        key |= _offset(b, lo_b)
        n = np.bincount(key, minlength=size)
        w = None if weights is None else np.bincount(key, weights, minlength=size)
        if ranges:
            seen = [(int(a.min()), int(a.max())), (int(b.min()), int(b.max()))]
    else:
        block = min(_BLOCK, n_rows)
        key = np.empty(block, dtype=np.int64)
        bits = np.empty(block, dtype=np.int64)
        n = np.zeros(size, dtype=np.int64)
        w = None if weights is None else np.zeros(size, dtype=np.float64)
        lows, highs = [], []
        for start in range(0, n_rows, block):
            stop = min(start + block, n_rows)
            k, c = key[: stop - start], bits[: stop - start]
            np.subtract(ids[start:stop], lo, out=k, dtype=np.int64, casting="unsafe")
            k <<= 2
            np.subtract(a[start:stop], lo_a, out=c, dtype=np.int64, casting="unsafe")
            if ranges:
                lows.append(c.min())
                highs.append(c.max())
            c <<= 1
            k |= c
            np.subtract(b[start:stop], lo_b, out=c, dtype=np.int64, casting="unsafe")
            if ranges:
                lows.append(c.min())
                highs.append(c.max())
            k |= c
            n += np.bincount(k, minlength=size)
            if w is not None:
                w += np.bincount(k, weights[start:stop], minlength=size)
        if ranges:
            seen = [
                (int(lo_a) + int(min(lows[0::2])), int(lo_a) + int(max(highs[0::2]))),
                (int(lo_b) + int(min(lows[1::2])), int(lo_b) + int(max(highs[1::2]))),
            ]
    if ranges:  # values beyond 0/1 may have counted past the table: checked after
        n = n[:size]
        w = None if w is None else w[:size]
    n = n.reshape(span, 4)
    return n, None if w is None else w.reshape(span, 4), seen


def _zero_one(y):
    """Whether ``y`` may be integer labels ``{0, 1}`` (its first value is 0 or
    1), to be counted as they are and checked while counted."""
    return y.dtype.kind in "iu" and y.shape[0] > 0 and 0 <= y[0] <= 1


def _partial_counts(y_true, y_pred, sensitive_features, sample_weight=None):
    """Count rows (numpy, pandas or group columns) into a :class:`_Partial`.

    Validates as the in-memory functions do: lengths, missing values, binary
    labels (of this part), weights.

    Returns
    -------
    partial : _Partial
    name : str
        The name of the grouping.
    """
    y_true, y_pred = check_paired_targets(y_true, y_pred)
    n_samples = y_true.shape[0]
    w = check_sample_weight(sample_weight, n_samples)
    zero_one = _zero_one(y_true) and _zero_one(y_pred)
    if zero_one:  # checked while counted
        a, lo_a, b, lo_b = y_true, 0, y_pred, 0
    else:
        true_labels, a, lo_a = _encode_target(y_true, "y_true")
        pred_labels, b, lo_b = _encode_target(y_pred, "y_pred")
    columns, name = _feature_columns(sensitive_features, n_samples)
    encoded = []
    for column in columns:
        labels, ids, lo, span = _encode_column(column)
        rank = None
        if isinstance(ids, _Ranked):  # counted by code, the table sorted after
            ids, rank = ids.codes, ids.rank
        encoded.append(
            (labels, ids, lo, labels.shape[0] if span is None else span, rank)
        )
    warn_lookalikes([e[0] for e in encoded], sensitive_features, name)
    spans = [e[3] for e in encoded]
    if len(encoded) == 1:
        _, ids, lo, span, _ = encoded[0]
        combined = None
    else:
        if np.prod([float(s) for s in spans]) >= 2.0**62:
            # too many combinations to index: the present labels of each column
            encoded = [(*_unique_inverse(c), 0, None, None) for c in columns]
            encoded = [(e[0], e[1], 0, e[0].shape[0], None) for e in encoded]
            spans = [e[3] for e in encoded]
        ids = np.zeros(n_samples, dtype=np.int64)
        for _, col_ids, col_lo, col_span, _ in encoded:
            ids *= col_span
            ids += _offset(col_ids, col_lo)
        lo, span = 0, int(np.prod(spans))
        combined = None
        if span > n_samples + (1 << 16):  # sparse combinations: index the present
            combined, ids = np.unique(ids, return_inverse=True)
            ids = ids.ravel()
            span = combined.shape[0]
    try:
        n, weighted, seen = _count_ids(
            ids, lo, span, a, lo_a, b, lo_b, w, ranges=zero_one
        )
    except ValueError:  # a negative label made a negative key
        if not zero_one:
            raise
        seen = [(-1, -1)]
    if zero_one:
        if all(0 <= low and high <= 1 for low, high in seen):
            true_labels = np.array([y_true.dtype.type(v) for v in (0, 1)], object)
            pred_labels = np.array([y_pred.dtype.type(v) for v in (0, 1)], object)
        else:  # other labels: their own checks, and counted again
            true_labels, a, lo_a = _encode_target(y_true, "y_true")
            pred_labels, b, lo_b = _encode_target(y_pred, "y_pred")
            n, weighted, _ = _count_ids(ids, lo, span, a, lo_a, b, lo_b, w)
    present = np.flatnonzero(n.any(axis=1))
    index = present if combined is None else combined[present]
    # each present row: its code in every column, then its label's rank
    parts = np.unravel_index(index, spans)
    ranks = [p if e[4] is None else e[4][p] for e, p in zip(encoded, parts)]
    if any(e[4] is not None for e in encoded):
        order = np.lexsort(ranks[::-1])  # first column first
        present = present[order]
        ranks = [r[order] for r in ranks]
    n = n[present]
    weighted = None if weighted is None else weighted[present]
    weighted = integer_counts(weighted, sample_weight)
    group_labels = tuple(e[0][r] for e, r in zip(encoded, ranks))
    return _Partial(group_labels, true_labels, pred_labels, n, weighted), name


def _present_labels(labels, n, side):
    """The labels of ``y_true`` (side 0) or ``y_pred`` (side 1) that count rows."""
    totals = n.sum(axis=0)
    counted = (
        [totals[0] + totals[1] > 0, totals[2] + totals[3] > 0]
        if side == 0
        else [totals[0] + totals[2] > 0, totals[1] + totals[3] > 0]
    )
    return [labels[i] for i in range(2) if counted[i]]


def _merge(partials):
    """Add tables of parts of the data by label; return one :class:`_Partial`.

    Raises the errors of a single call when the parts together have more than
    two labels, or labels of several types.
    """
    partials = [p for p in partials if p is not None]
    if len(partials) == 1:
        return partials[0]
    n_columns = {len(p.labels) for p in partials}
    if len(n_columns) != 1:
        raise ValueError(
            "the parts of sensitive_features have different numbers of columns."
        )
    unified = []
    for side, name in ((0, "y_true"), (1, "y_pred")):
        seen = [
            v
            for p in partials
            for v in _present_labels(
                p.true_labels if side == 0 else p.pred_labels, p.n, side
            )
        ]
        union = _labels(pd.unique(np.array(seen, dtype=object)), name)
        labels = np.empty(2, dtype=object)
        labels[: union.shape[0]] = list(union)
        unified.append(labels)
    index = pd.Index(unified[0][unified[0] != None], dtype=object)  # noqa: E711
    pred_index = pd.Index(unified[1][unified[1] != None], dtype=object)  # noqa: E711
    n_parts, w_parts = [], []
    weighted = any(p.weighted is not None for p in partials)
    for p in partials:
        # column 2 * i + j of the part moves to 2 * I + J of the merged table
        ti = np.maximum(index.get_indexer(p.true_labels), 0)
        pj = np.maximum(pred_index.get_indexer(p.pred_labels), 0)
        dest = (2 * ti[:, None] + pj[None, :]).ravel()
        n_new = np.zeros_like(p.n)
        for src in range(4):
            n_new[:, dest[src]] += p.n[:, src]
        n_parts.append(n_new)
        if weighted:
            w_new = np.zeros(p.n.shape, dtype=p.weighted.dtype)
            for src in range(4):
                w_new[:, dest[src]] += p.weighted[:, src]
            w_parts.append(w_new)
    columns = [
        np.concatenate([np.asarray(p.labels[k]) for p in partials])
        for k in range(n_columns.pop())
    ]
    uniques, codes = zip(*(_unique_inverse(c) for c in columns))
    shape = tuple(u.shape[0] for u in uniques)
    combined = np.ravel_multi_index(codes, shape)
    present, row = np.unique(combined, return_inverse=True)
    row = row.ravel()
    n = np.zeros((present.shape[0], 4), dtype=np.int64)
    np.add.at(n, row, np.concatenate(n_parts))
    w = None
    if weighted:
        w = np.zeros((present.shape[0], 4), dtype=np.result_type(*w_parts))
        np.add.at(w, row, np.concatenate(w_parts))
    parts = np.unravel_index(present, shape)
    labels = tuple(u[p] for u, p in zip(uniques, parts))
    return _Partial(labels, unified[0], unified[1], n, w)


def _finish(partial, pos_label):
    """Per-group ``(groups, counts)`` of a table, cells ``(TP, FN, FP, TN)``.

    Checks the labels of ``y_true`` and ``y_pred`` together and ``pos_label``
    (the errors of :func:`~._validation.check_binary_targets`), and refuses
    groups of zero total weight.
    """
    true_present = _present_labels(partial.true_labels, partial.n, 0)
    pred_present = _present_labels(partial.pred_labels, partial.n, 1)
    pos_label = _check_label_union(
        np.array(true_present, dtype=object),
        np.array(pred_present, dtype=object),
        pos_label,
    )
    pos_t = [v is not None and _label_equal(v, pos_label) for v in partial.true_labels]
    pos_p = [v is not None and _label_equal(v, pos_label) for v in partial.pred_labels]
    source = partial.n if partial.weighted is None else partial.weighted
    if source.shape[0] and pos_t == [False, True] and pos_p == [False, True]:
        counts = source[:, ::-1].copy()  # ids (1, 1) -> TP, ..., (0, 0) -> TN
    else:
        counts = np.zeros_like(source)
        for i in range(2):
            for j in range(2):
                cell = 2 * (not pos_t[i]) + (not pos_p[j])
                counts[:, cell] += source[:, 2 * i + j]
    if len(partial.labels) == 1:
        groups = partial.labels[0]
    else:
        groups = np.array(
            ["|".join(_joinable(v) for v in row) for row in zip(*partial.labels)],
            dtype=object,
        )
    if partial.weighted is not None:
        empty = counts.sum(axis=1) == 0
        if empty.any():
            raise ValueError(
                f"group(s) {format_labels(groups[empty])} have zero total "
                f"sample_weight, so their metrics are empty; drop those rows or "
                f"give them positive weight."
            )
    return groups, counts
