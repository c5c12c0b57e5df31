"""Curves of error against eccentricity and their areas.

The ordered curve (every row, sorted by eccentricity then error), the grouped
curve (mean error per distinct eccentricity) and the binned curves, and the
trapezoid areas under them, computed from sorted keys without building the
per-row curve when only the area is needed.
"""

from typing import NamedTuple

import numpy as np

from . import _eccentricity


class _SortKeys(NamedTuple):
    """The evaluated rows as sort keys, for the ordered EAUC: each kept row's
    eccentricity with its low ``bits`` bits replaced by the row's index (see
    :func:`_keys_area`); the errors are recomputed from ``y`` and ``p``."""

    key: np.ndarray  # uint64 of shape (n_kept,)
    bits: int
    ecc: np.ndarray  # eccentricity of every evaluated row, by row
    y: np.ndarray
    p: np.ndarray
    normalizer: float
    error: str


def _trapezoid(y, x):
    """Trapezoid area of ``y`` over increasing ``x`` (0 for fewer than 2 points)."""
    if x.shape[0] < 2:
        return 0.0
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1])) / 2.0)


def _ecc_order(ecc):
    """``(order, sorted_ecc)``: a permutation sorting ``ecc`` (finite, >= 0)
    ascending, ties by position, and ``ecc[order]``.

    Sorting values is several times faster than an argsort, so the row index is
    packed into the low bits of each eccentricity's bit pattern (non-negative
    doubles order like their bits as unsigned integers), the keys are sorted and
    the indices read back. Eccentricities equal in all but those low bits can come
    out of order, only among themselves; a stable sort of the nearly sorted result
    (linear time on such input) puts them in place.
    """
    n = ecc.shape[0]
    bits = max(1, (n - 1).bit_length())
    if n < 2 or bits > 32:
        order = np.argsort(ecc, kind="stable")
        return order, ecc[order]
    key = ecc.view(np.uint64) >> np.uint64(bits)
    key <<= np.uint64(bits)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64((1 << bits) - 1)
    order = key.view(np.int64)
    e = ecc[order]
    if (e[1:] < e[:-1]).any():  # eccentricities equal in all but the low bits
        fix = np.argsort(e, kind="stable")
        order, e = order[fix], e[fix]
    return order, e


def _groups(e):
    """Start of each run of equal values in sorted ``e``."""
    change = np.flatnonzero(e[1:] != e[:-1]) + 1
    return np.concatenate(([0], change))


def _ordered_area(ecc, err):
    """Area of the per-row curve sorted by (eccentricity, error), via group ends.

    Rows with equal eccentricity add nothing between them; between two distinct
    eccentricities the curve goes from the larger group's largest error to the
    next group's smallest error (the order of a sort by eccentricity then error),
    so only each group's extreme errors are needed.
    """
    order, e = _ecc_order(ecc)
    y = err[order]
    del order
    starts = _groups(e)
    if starts.shape[0] == e.shape[0]:  # no ties
        return _trapezoid(y, e)
    v = e[starts]
    hi = np.maximum.reduceat(y, starts)
    lo = np.minimum.reduceat(y, starts)
    return float(np.sum(np.diff(v) * (hi[:-1] + lo[1:])) / 2.0)


def _extremes(e, hi, lo):
    """``(values, his, los)``: the distinct values of ``e`` ascending, with the
    largest ``hi`` and the smallest ``lo`` of the rows of each (``e`` nearly
    sorted: a stable sort of it runs in about linear time)."""
    if e.shape[0] > 1 and (e[1:] < e[:-1]).any():
        order = np.argsort(e, kind="stable")
        e, hi, lo = e[order], hi[order], lo[order]
    change = e[1:] != e[:-1]
    if change.all():
        return e, hi, lo
    starts = np.flatnonzero(np.concatenate(([True], change)))
    return e[starts], np.maximum.reduceat(hi, starts), np.minimum.reduceat(lo, starts)


def _keys_area(keys):
    """The ordered area of :class:`_SortKeys`, sorting them in place.

    The sorted keys list the rows by eccentricity up to its low ``bits`` bits
    (ties by row). They are read in chunks of whole runs of equal high bits, so
    that every eccentricity of a chunk is above every one of the chunk before;
    a chunk's exact eccentricities and errors are gathered by row, the runs whose
    exact eccentricities are out of order are sorted, and the chunk gives the
    distinct eccentricities with their largest and smallest error (see
    :func:`_ordered_area`). A run of equal high bits longer
    than a few chunks (many rows with one eccentricity) is read in pieces whose
    extremes are merged. Only chunk-sized arrays are made.
    """
    block = _eccentricity._BLOCK
    key, m = keys.key, keys.key.shape[0]
    key.sort()
    shift = np.uint64(keys.bits)
    mask = np.uint64((1 << keys.bits) - 1)
    one = np.uint64(1)

    def extremes(start, stop):
        part = key[start:stop]
        rows = (part & mask).view(np.int64)
        e = np.take(keys.ecc, rows)
        err = np.take(keys.p, rows)
        err -= np.take(keys.y, rows)
        if keys.error == "absolute":
            np.abs(err, out=err)
        else:
            err *= err
        down = np.flatnonzero(e[1:] < e[:-1])
        if down.shape[0]:  # out of order within runs of equal high bits: sort those
            top = part >> shift
            bad = top[down]  # sorted, as top is
            size = top.shape[0] + 1
            edge = np.bincount(np.searchsorted(top, bad), minlength=size)
            edge -= np.bincount(np.searchsorted(top, bad, "right"), minlength=size)
            idx = np.flatnonzero(np.cumsum(edge[:-1]) > 0)  # rows of those runs
            order = idx[np.lexsort((e[idx], top[idx]))]
            e[idx], err[idx] = e[order], err[order]
        return _extremes(e, err, err)

    total, last = 0.0, None  # twice the area; the last group's (value, largest)
    start = 0
    while start < m:
        stop = min(start + block, m)
        if stop < m:  # end the chunk with the run of high bits of its last key
            top = key[stop - 1] >> shift
            stop = int(np.searchsorted(key, (top + one) << shift))
            if stop - start > 4 * block:  # a long run: up to it, or in pieces
                begin = int(np.searchsorted(key, top << shift))
                if begin > start:
                    stop = begin
        if stop - start > 4 * block:
            parts = [
                extremes(a, min(a + block, stop)) for a in range(start, stop, block)
            ]
            v, hi, lo = _extremes(*(np.concatenate(x) for x in zip(*parts)))
        else:
            v, hi, lo = extremes(start, stop)
        if last is not None:
            total += (v[0] - last[0]) * (last[1] + lo[0])
        total += float(np.sum(np.diff(v) * (hi[:-1] + lo[1:])))
        last = (v[-1], hi[-1])
        start = stop
    return float(total) / 2.0


def _grouped_curve(ecc, err):
    order, e = _ecc_order(ecc)
    y = err[order]
    starts = _groups(e)
    counts = np.diff(np.append(starts, e.shape[0]))
    return e[starts], np.add.reduceat(y, starts) / counts


def _binned_curve(ecc, err, n_bins):
    top = float(ecc.max())
    if top == 0.0:
        return np.zeros(1), np.array([err.mean()])
    b = np.minimum((ecc * (n_bins / top)).astype(np.intp), n_bins - 1)
    count = np.bincount(b, minlength=n_bins)
    x = np.bincount(b, weights=ecc, minlength=n_bins)
    y = np.bincount(b, weights=err, minlength=n_bins)
    used = count > 0
    return x[used] / count[used], y[used] / count[used]


def _published_binned_curve(ecc, err, n_bins, span):
    """The binned curve of the published code: ``n_bins`` equally spaced edges
    over ``[0, span]`` (``span`` the range of the evaluated ratings), so
    ``n_bins - 1`` bins, each closed on the right; the mean error per bin at
    the bin's midpoint, empty bins left out. An eccentricity of exactly 0 is in
    no bin and is dropped, as is one above ``span``."""
    edges = np.linspace(0.0, span, max(int(n_bins), 2))
    b = np.searchsorted(edges, ecc, side="left") - 1  # (edge[b], edge[b + 1]]
    inside = (b >= 0) & (b < edges.shape[0] - 1)
    b, e = b[inside], err[inside]
    count = np.bincount(b, minlength=edges.shape[0] - 1)
    y = np.bincount(b, weights=e, minlength=edges.shape[0] - 1)
    used = count > 0
    mid = (edges[:-1] + edges[1:]) / 2
    return mid[used], y[used] / count[used]
