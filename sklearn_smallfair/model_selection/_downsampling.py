"""Downsampling experiments: how well does each estimator score a small subgroup?"""

import hashlib
import json
import math
import os
import warnings
from collections.abc import Mapping
from functools import lru_cache
from math import comb

import numpy as np
import pandas as pd
from scipy.special import xlogy
from sklearn.base import clone
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import threadpool_limits

from .._confusion import (
    _format_bytes,
    _largest_n,
    _log_binomial,
    _log_factorial,
    _logpmf_by_group,
    enumerate_confusion_matrices,
    n_confusion_matrices,
    reference_counts,
    rows_or_counts,
)
from .._params import (
    BOOLEAN,
    COUNTS,
    N_JOBS,
    RANDOM_STATE,
    REFERENCE,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import child_rng, resolve_seed
from .._validation import (
    check_smoothing,
    format_label,
    format_labels,
)
from ..exceptions import CheckpointWarning
from ..metrics import Metric, get_metric, get_metrics
from ..metrics._registry import _values_sharing_sums
from ..smoothing import CrossPriorSmoothing
from ._split import _check_sizes

__all__ = ["downsampling_experiment"]

_METHODS = ("exact", "montecarlo")
_SAMPLINGS = ("multinomial", "hypergeometric")
#: Largest number of Monte Carlo draws held in memory at once (rows of 4 cells).
_MAX_CHUNK = 1_000_000
#: Monte Carlo draws are generated as a histogram over the possible matrices when
#: there are at most this many (and no more than draws).
_HISTOGRAM_MAX = 2_000_000
#: Number of (group, matrix) pairs evaluated at once: bounds the memory of a
#: task and keeps the temporaries of the metric formulas in cache.
_BLOCK = 1 << 16
_KEYS = ["group", "n", "metric", "estimator"]
_STATS = ["mse", "bias", "variance", "p_undefined"]
_CHECKPOINT_FORMAT = 2
#: Default memory budget of one job, in bytes (``memory_budget``).
MEMORY_BUDGET = 1024**3
#: Largest probability the exact sums leave out per group and size: a support row
#: is skipped for a group when its probability is below this over the number of
#: rows of the support.
NEGLECTED_MASS = 1e-16
#: Fewest rows of a support in a block of the exact sums (the smallest block a
#: memory budget must hold).
_ROWS_MIN = 256
_SINGLES = ((0,), (1,), (2,), (3,))
#: Compositions of at most this many rows are kept in memory between calls.
_CACHE_ROWS = 1 << 18
#: Largest total work of one call, in (group, matrix) evaluations summed over the
#: sizes: ``n_draws`` per group and size for Monte Carlo draws made one by one,
#: the number of enumerated matrices (or block-sum vectors) per group and size
#: for ``method="exact"`` and for Monte Carlo histograms. 10^11 evaluations take
#: several hours of one core.
MAX_WORK = 10**11
#: Largest ``n_draws``: the draws of a Monte Carlo histogram are counted in
#: float64, exact up to 2^53.
_MAX_DRAWS = 2**53


def _check_estimators(estimators):
    if estimators is None:
        return {"raw": None, "cps_10": CrossPriorSmoothing(10)}
    if not isinstance(estimators, Mapping):
        raise TypeError(
            "estimators must be a mapping {name: None | smoothing}, e.g. "
            "{'raw': None, 'cps_10': CrossPriorSmoothing(10)}; got "
            f"{type(estimators).__name__}."
        )
    if not estimators:
        raise ValueError("estimators is empty; pass at least one estimator.")
    for name, est in estimators.items():
        if not isinstance(name, str):
            raise TypeError(f"estimator names must be strings; got {name!r}.")
        check_smoothing(est, name=f"estimators[{name!r}]")
    return dict(estimators)


def _fit_estimators(estimators, groups, counts, refs):
    """Smoothers that learn from the data (``CrossPriorSmoothing(lam="auto")``)
    fitted once, on a copy, on the whole groups' matrices and their references:
    what an auditor has. ``lam_`` then stays fixed for every subgroup drawn."""
    learns = [n for n, e in estimators.items() if isinstance(getattr(e, "lam", 0), str)]
    if not learns:
        return estimators
    labelled = pd.DataFrame(refs, index=pd.Index(groups, dtype=object))  # warnings
    return {
        name: clone(est).fit(counts, labelled) if name in learns else est
        for name, est in estimators.items()
    }


# ---------------------------------------------------------------------------
# Support of each metric: the block sums it depends on (see ``Metric.blocks``)
# ---------------------------------------------------------------------------


def _compositions(n, k):
    """All ``(b_0, ..., b_{k-1}) >= 0`` summing to ``n``, ordered by :func:`_rank`.

    Read-only; cached when small (at most ``_CACHE_ROWS`` rows), so that a run
    over large sizes does not keep every size's array alive.
    """
    if k == 4:
        return enumerate_confusion_matrices(n)
    if comb(n + k - 1, k - 1) <= _CACHE_ROWS:
        return _compositions_cached(n, k)
    return _build_compositions(n, k)


@lru_cache(maxsize=64)
def _compositions_cached(n, k):
    return _build_compositions(n, k)


def _build_compositions(n, k):
    if k == 3:
        # (n - s, i, s - i) for s = 0..n, i = 0..s: rank s (s + 1) / 2 + i
        s = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
        i = np.arange(s.shape[0]) - s * (s + 1) // 2
        out = np.stack([n - s, i, s - i], axis=1)
    elif k == 2:
        j = np.arange(n + 1)
        out = np.stack([n - j, j], axis=1)
    else:
        out = np.full((1, 1), n)
    out.flags.writeable = False
    return out


def _rank(block_sums):
    """Row of each block-sum vector in :func:`_compositions` (last axis: blocks)."""
    k = block_sums.shape[-1]
    if k == 3:
        s = block_sums[..., 1] + block_sums[..., 2]
        return s * (s + 1) // 2 + block_sums[..., 1]
    if k == 2:
        return block_sums[..., 1]
    if k == 1:
        return np.zeros(block_sums.shape[:-1], dtype=np.int64)
    raise ValueError("four blocks are ranked by the enumeration itself")


def _collapse(cells, blocks):
    """Put each block's sum in the block's first cell and zeros elsewhere."""
    out = np.zeros_like(cells)
    for block in blocks:
        out[..., block[0]] = cells[..., list(block)].sum(axis=-1)
    return out


class _Support:
    """The matrices of size ``n`` a group of metrics sharing ``blocks`` needs.

    ``cells`` has one row per block-sum vector, the sum of each block in the
    block's first cell (every metric of the group gives the same value on it as
    on any matrix with those block sums).
    """

    def __init__(self, n, blocks):
        self.blocks = blocks
        comps = _compositions(n, len(blocks))
        if len(blocks) == 4:
            self.cells = comps
        else:
            cells = np.zeros((comps.shape[0], 4), dtype=np.int64)
            for j, block in enumerate(blocks):
                cells[:, block[0]] = comps[:, j]
            self.cells = cells

    def from_full(self, weights, n):
        """Weights over all matrices of size ``n`` summed onto this support."""
        if len(self.blocks) == 4:
            return weights
        full = enumerate_confusion_matrices(n)
        sums = np.stack([full[:, list(b)].sum(axis=1) for b in self.blocks], axis=1)
        index = _rank(sums)
        size = self.cells.shape[0]
        return np.stack([np.bincount(index, w, minlength=size) for w in weights])


def _plan(metrics):
    """(index, metric) pairs grouped by their blocks, costliest support first."""
    plan = {}
    for j, m in enumerate(metrics):
        plan.setdefault(tuple(tuple(b) for b in m.blocks), []).append((j, m))
    return sorted(plan.items(), key=lambda kv: -len(kv[0]))


def _coefficients(est, n, refs, blocks):
    """Affine form ``(scale, offset)`` of a smoother at size ``n`` on a support.

    ``None`` for raw counts; ``offset`` holds each block's total offset in the
    block's first cell. Shapes ``(1,), (4,)`` for a reference-free smoother,
    ``(G, 1), (G, 4)`` for one with a reference per group.
    """
    if est is None:
        return None
    if est.requires_reference:
        scale, offset = est.coefficients(np.full(len(refs), float(n)), refs)
    else:
        scale, offset = est.coefficients(float(n))
    return scale, _collapse(offset, blocks)


def _smoothed(columns, coef):
    """Smoothed support matrices from the support's cell columns ``(4, m)``.

    Returns ``(m, 4)`` (shared by all groups) or ``(G, m, 4)`` (one per group),
    laid out so that each cell ``x[..., j]`` is contiguous for the metrics.
    """
    if coef is None:
        return columns.T
    scale, offset = coef
    if offset.ndim == 1:
        return (scale[0] * columns + offset[:, None]).T
    out = scale[None, :, :] * columns[:, None, :] + offset.T[:, :, None]
    return out.transpose(1, 2, 0)


def _power_sums(values, weights, shift, order):
    """``sum w (v - shift)^k`` for ``k = 0..order`` over defined values, and the
    weight of undefined values, per group.

    ``values`` (M,) or (G, M); ``weights`` (G, M); ``shift`` (G,). Plain numpy
    sums and ``einsum`` (no BLAS): the same bits whatever the thread count.
    """
    defined = np.isfinite(values)
    shared = values.ndim == 1
    if shared:
        # one common shift, re-centred per group after the sums
        c = float(np.mean(shift))
        rows = np.empty((order + 2, values.shape[0]))
        rows[0] = defined
        u = np.where(defined, values - c, 0.0)
        for k in range(1, order + 1):
            np.multiply(rows[k - 1], u, out=rows[k])
        np.logical_not(defined, out=rows[order + 1], casting="unsafe")
        sums = np.einsum("gm,km->kg", weights, rows)
        p = sums[: order + 1]  # (order + 1, G)
        delta = shift - c
        out = np.zeros_like(p)
        for k in range(order + 1):
            for j in range(k + 1):
                out[k] += comb(k, j) * (-delta) ** (k - j) * p[j]
        undefined = sums[order + 1]
        return out, undefined
    w = np.where(defined, weights, 0.0)
    d = np.where(defined, values - shift[:, None], 0.0)
    sums = [w.sum(axis=-1)]
    f = d
    for k in range(order):
        sums.append(np.einsum("gm,gm->g", w, f))
        if k + 1 < order:
            f = f * d
    undefined = (
        np.where(defined, 0.0, weights).sum(axis=-1)
        if not defined.all()
        else np.zeros(len(shift))
    )
    return np.stack(sums), undefined


def _weights(cells, group_counts, sampling):
    """Probability of every support matrix for every group, shape (G, M)."""
    return np.exp(_logpmf_by_group(cells, group_counts, sampling))


def _evaluate(acc, cells, weights, n, blocks, metrics, estimators, refs, shift, order):
    """Add the power sums of every (metric, estimator) on one support.

    The support is processed in column blocks of a fixed size (whatever the
    machine or ``n_jobs``, so the sums are always added in the same order) that
    keep the temporaries of the metric formulas in cache.
    """
    n_groups, size = weights.shape
    coefs = [_coefficients(est, n, refs, blocks) for est in estimators]
    step = max(1, _BLOCK // n_groups)
    for e in range(len(coefs)):
        for j, _ in metrics:
            if (j, e) not in acc:
                acc[(j, e)] = (
                    np.zeros((order + 1, n_groups)),
                    np.zeros(n_groups),
                    np.zeros(n_groups),
                )
    for lo in range(0, size, step):
        cols = np.asarray(cells[lo : lo + step].T, dtype=np.float64, order="C")
        w = weights[:, lo : lo + step]
        total = w.sum(axis=1)
        for e, coef in enumerate(coefs):
            x = _smoothed(cols, coef)
            for j, m in metrics:
                sums, undefined = _power_sums(m.func(x), w, shift[:, j], order)
                s, u, t = acc[(j, e)]
                s += sums
                u += undefined
                t += total


# ---------------------------------------------------------------------------
# The exact sums block by block: support rows generated by rank, the groups'
# probabilities, the estimators' values and the power sums fused per block
# ---------------------------------------------------------------------------


def _triangle(t):
    """``(s, i)`` with ``t = s (s + 1) / 2 + i`` and ``0 <= i <= s`` (int64)."""
    s = ((np.sqrt(8.0 * t + 1.0) - 1.0) // 2).astype(np.int64)
    s -= s * (s + 1) // 2 > t
    s += (s + 1) * (s + 2) // 2 <= t
    return s, t - s * (s + 1) // 2


def _support_rows(n, k, start, stop):
    """Rows ``start..stop - 1`` of the compositions of ``n`` into ``k`` parts, in
    the order of :func:`_compositions`, generated from their ranks: shape
    ``(stop - start, k)``, without building the other rows."""
    t = np.arange(start, stop, dtype=np.int64)
    if k == 1:
        return np.full((t.size, 1), n, dtype=np.int64)
    if k == 2:
        return np.stack([n - t, t], axis=1)
    if k == 3:
        s, i = _triangle(t)
        return np.stack([n - s, i, s - i], axis=1)
    # four parts: TP = a first, then the three parts of n - a (as for k = 3)
    a = np.arange(n + 1, dtype=np.int64)
    first = np.concatenate([[0], np.cumsum((n - a + 2) * (n - a + 1) // 2)])
    if comb(n + 2, 2) > _CACHE_ROWS:
        tp = np.searchsorted(first, t, side="right") - 1
        s, i = _triangle(t - first[tp])
        return np.stack([tp, i, s - i, n - tp - s], axis=1)
    # the rows of one TP are consecutive: TP repeated, and the rank within the
    # three parts of n - TP read from the (cached) compositions of n into three
    # parts, whose rank r gives (n - s, i, s - i) whatever the total
    if not t.size:
        return np.empty((0, 4), dtype=np.int64)
    lo = int(np.searchsorted(first, start, side="right")) - 1
    hi = int(np.searchsorted(first, stop - 1, side="right")) - 1
    edges = np.clip(first[lo : hi + 2], start, stop)
    runs = np.diff(edges)
    tp = np.repeat(np.arange(lo, hi + 1, dtype=np.int64), runs)
    rank = t - np.repeat(first[lo : hi + 1], runs)
    three = _compositions(n, 3)[rank]
    out = np.empty((t.size, 4), dtype=np.int64)
    out[:, 0] = tp
    out[:, 1:3] = three[:, 1:]
    np.subtract(three[:, 0], tp, out=out[:, 3])
    return out


def _log_tables(block_counts, top, sampling):
    """Per-part terms of the log-pmf, ``(G, k, top + 1)``: the log-pmf of a row of
    block sums ``b`` of size ``n`` is ``const(n) + sum_j table[g, j, b_j]``."""
    b = np.arange(top + 1, dtype=np.float64)
    if sampling == "multinomial":
        p = block_counts / block_counts.sum(axis=1, keepdims=True)
        return xlogy(b, p[:, :, None]) - _log_factorial(np.arange(top + 1))
    return _log_binomial(block_counts[:, :, None], b)


def _log_const(n, counts, sampling):
    """``const(n)`` of :func:`_log_tables` per group, shape (G,)."""
    if sampling == "multinomial":
        value = float(_log_factorial(np.array([n]))[0])
        return np.full(counts.shape[0], value)
    return -_log_binomial(counts.sum(axis=1), n)


def _row_bytes(n_groups, order, n_estimators=1, n_metrics=1):
    """Memory of one support row in a block: its parts, its smoothed cells,
    metric values and power-sum columns for the estimators shared by all
    groups, and per group its probability and, for the estimators with a
    reference per group, its own smoothed cells, values and power-sum terms."""
    e, m = n_estimators, n_metrics
    shared = 8 + e * (4 + 5 * m)
    per_group = 10 + order + e * (6 + 3 * m)
    return 8 * (shared + n_groups * per_group)


def _plan_metrics(plan):
    """Most metrics sharing one support in ``plan`` (evaluated together)."""
    return max(len(metrics) for _, metrics in plan)


def _block_rows(n_groups, order, memory_budget, n_estimators=1, n_metrics=1):
    """Rows of a block: ``_BLOCK`` (group, row) pairs (they stay in the cache),
    fewer if ``memory_budget`` holds fewer, never fewer than ``_ROWS_MIN``."""
    row = _row_bytes(n_groups, order, n_estimators, n_metrics)
    fit = int(memory_budget) // (2 * row)
    return int(max(_ROWS_MIN, min(max(_BLOCK // n_groups, _ROWS_MIN), fit)))


def _blocks(sizes, k, rows):
    """Blocks of at most ``rows`` support rows over the sizes of a task.

    Each size's rows are cut at multiples of ``rows`` (whatever the other sizes
    of the task), and every piece is a block of its own: a floating-point sum
    over a block (numpy's pairwise summation) then depends on that size's rows
    only, so a size's results are bit for bit the same whichever sizes are
    computed in the same task (as when a checkpointed run resumes with the
    sizes left).
    """
    for pos, n in enumerate(sizes):
        total = comb(int(n) + k - 1, k - 1)
        for start in range(0, total, rows):
            yield [(pos, int(n), start, min(total, start + rows))]


def _pair_sums(key, weight, values, shift, order, n_keys):
    """``sum w (v - shift)^k`` for ``k = 0..order`` over defined values, and the
    weight of undefined values, per key (``np.bincount``: sequential, the same
    bits whatever the thread count)."""
    defined = np.isfinite(values)
    everywhere = bool(defined.all())
    if everywhere:
        w, d = weight, values - shift
    else:
        w = np.where(defined, weight, 0.0)
        d = np.where(defined, values - shift, 0.0)
    out = np.empty((order + 1, n_keys))
    out[0] = np.bincount(key, w, minlength=n_keys)
    f = w
    for j in range(1, order + 1):
        f = f * d
        out[j] = np.bincount(key, f, minlength=n_keys)
    if everywhere:
        undefined = np.zeros(n_keys)
    else:
        undefined = np.bincount(key, np.where(defined, 0.0, weight), minlength=n_keys)
    return out, undefined


def _pairs(keep, weight, pos, part_f):
    """The (group, row) pairs of a block kept for their group: group, size
    position, weight, parts ``(k, P)`` (group-major, rows in order)."""
    width = keep.shape[1]
    flat = np.flatnonzero(keep)
    group = flat // width
    row = flat - group * width
    return group, pos[row], weight.ravel()[flat], part_f[:, row]


def _pair_block(acc, e, scale, offset, firsts, metrics, shift, pairs, order):
    """Power sums of a per-group estimator on a block's pairs, added per (size,
    group) by ``np.bincount`` (sequential: the same bits whatever the threads)."""
    group, pos, weight, parts = pairs
    n_sizes, _, n_groups = acc[(metrics[0][0], e)][0].shape
    key = pos * n_groups + group
    size = n_sizes * n_groups
    x = np.zeros((4, group.size))
    sc = scale[pos, group]
    for j, c in enumerate(firsts):
        x[c] = sc * parts[j] + offset[pos, group, c]
    total = np.bincount(key, weight, minlength=size).reshape(n_sizes, n_groups)
    for j, m in metrics:
        values = np.asarray(m.func(x.T), np.float64)
        defined = np.isfinite(values)
        s, u, t = acc[(j, e)]
        if defined.all():
            w, d = weight, values - shift[group, j]
        else:
            w = np.where(defined, weight, 0.0)
            d = np.where(defined, values - shift[group, j], 0.0)
            lost = np.where(defined, 0.0, weight)
            u += np.bincount(key, lost, minlength=size).reshape(n_sizes, n_groups)
        f = w
        s[:, 0] += np.bincount(key, f, minlength=size).reshape(n_sizes, n_groups)
        for k in range(1, order + 1):
            f = f * d
            s[:, k] += np.bincount(key, f, minlength=size).reshape(n_sizes, n_groups)
        t += total


_SETTLE = True


def _settle_allocator():
    """Free one 16 MiB array: glibc's malloc then serves the blocks' temporaries
    (below 16 MiB) from its heap and keeps up to 32 MiB of it, instead of mapping
    fresh memory (page faults: a third of the time) for every block."""
    np.empty(16 << 20, dtype=np.uint8)


def _affine_forms(estimators, sizes, refs):
    """Each estimator's affine form per size: ``None`` for raw counts, else
    ``(per_group, scale, offset)`` with scale ``(S,)`` and offset ``(S, 4)``
    without a reference, ``(S, G)`` and ``(S, G, 4)`` with one."""
    forms = []
    for est in estimators:
        if est is None:
            forms.append(None)
            continue
        per_size = [_coefficients(est, n, refs, _SINGLES) for n in sizes]
        scale = np.stack([s[..., 0] for s, _ in per_size])
        offset = np.stack([o for _, o in per_size])
        forms.append((bool(est.requires_reference), scale, offset))
    return forms


def _shared_block(
    acc, pos, forms, offsets, chosen, firsts, metrics, part_f, weight, shift
):
    """Power sums of the estimators without a reference on one block: every
    metric's values once for all groups, then all the groups' sums of all
    (estimator, metric) pairs as one product ``weight (G, U) @ rows (U, K)``.

    The values are shifted by one common centre per metric (the mean of the
    groups' targets) and re-centred per group after the sums.
    """
    n_est, n_rows = len(chosen), part_f.shape[1]
    cells = np.zeros((4, n_est, n_rows))
    for i, e in enumerate(chosen):
        form = forms[e]
        for j, c in enumerate(firsts):
            if form is None:
                cells[c, i] = part_f[j]
            else:
                np.multiply(form[1][pos], part_f[j], out=cells[c, i])
                cells[c, i] += offsets[e][pos, c]
    values = _values_sharing_sums([m for _, m in metrics], *cells)
    # columns: the weights' total, then per (metric, estimator) u = v - centre and
    # u^2 over defined values, and where some value is undefined, the defined and
    # undefined indicators
    centres = [float(np.mean(shift[:, j])) for j, _ in metrics]
    u = [v - c for v, c in zip(values, centres, strict=True)]
    u2 = [a * a for a in u]
    finite = [np.isfinite(a.sum(axis=1)) for a in u2]  # every value defined
    n_cols = 1 + sum(int((2 + 2 * ~f).sum()) for f in finite)
    columns = np.empty((n_cols, n_rows))
    columns[0] = 1.0
    layout = []  # (metric position, estimator position, column of u, of flags)
    at = 1
    for a in range(len(metrics)):
        for i in range(n_est):
            if finite[a][i]:
                columns[at] = u[a][i]
                columns[at + 1] = u2[a][i]
                layout.append((a, i, at, 0))
                at += 2
            else:
                defined = np.isfinite(values[a][i])
                np.copyto(columns[at], np.where(defined, u[a][i], 0.0))
                np.multiply(columns[at], columns[at], out=columns[at + 1])
                columns[at + 2] = defined
                np.logical_not(defined, out=columns[at + 3], casting="unsafe")
                layout.append((a, i, at, at + 2))
                at += 4
    sums = columns @ weight.T  # (K, G)
    total = sums[0]
    a_of, _, at_of, flag_of = (np.array(x) for x in zip(*layout, strict=True))
    p = np.stack(
        [
            np.where(flag_of[:, None] > 0, sums[flag_of], total),
            sums[at_of],
            sums[at_of + 1],
        ],
        axis=1,
    )  # (L, 3, G)
    delta = shift[:, [metrics[a][0] for a in a_of]].T - np.array(centres)[a_of, None]
    moments = np.empty_like(p)
    moments[:, 0] = p[:, 0]
    moments[:, 1] = p[:, 1] - delta * p[:, 0]
    moments[:, 2] = p[:, 2] - 2.0 * delta * p[:, 1] + delta * delta * p[:, 0]
    for row, (a, i, _, flags) in enumerate(layout):
        s, und, t = acc[(metrics[a][0], chosen[i])]
        s[pos] += moments[row]
        if flags:
            und[pos] += sums[flags + 1]
        t[pos] += total


def _own_block(
    acc, pos, forms, offsets, chosen, firsts, metrics, part_f, weight, keep, shift
):
    """Power sums of the estimators with a reference per group on one block: each
    group's smoothed matrices on the rows kept for it (the (group, row) pairs of
    ``keep``, group by group), every estimator at once, and the sums per group
    by ``np.add.reduceat`` over the groups' runs of pairs."""
    per_group = np.count_nonzero(keep, axis=1)
    _, row = np.nonzero(keep)  # group-major
    if not row.size:
        return
    w = weight[keep]
    parts = part_f[:, row]
    present = np.flatnonzero(per_group)
    starts = (np.cumsum(per_group) - per_group)[present]
    n_est, n_pairs = len(chosen), row.size
    # x = scale * parts + offset (the smoother's own arithmetic), the offsets
    # of the cells that are not the first of a block being 0
    scale = np.stack([forms[e][1][pos] for e in chosen])  # (E, G)
    scale = np.repeat(scale, per_group, axis=1)
    offset = np.stack([offsets[e][pos].T for e in chosen], axis=1)  # (4, E, G)
    cells = np.repeat(offset, per_group, axis=2)
    product = np.empty((n_est, n_pairs))
    for j, c in enumerate(firsts):
        np.multiply(scale, parts[j], out=product)
        cells[c] += product
    values = _values_sharing_sums([m for _, m in metrics], *cells)
    rows = np.empty((1 + 2 * n_est * len(metrics), n_pairs))
    rows[0] = w
    targets = np.repeat(shift[:, [j for j, _ in metrics]].T, per_group, axis=1)
    for a, v in enumerate(values):
        d = v
        d -= targets[a]
        wd = rows[1 + 2 * a * n_est : 1 + (2 * a + 1) * n_est]
        np.multiply(w, d, out=wd)
        np.multiply(wd, d, out=rows[1 + (2 * a + 1) * n_est : 1 + 2 * (a + 1) * n_est])
    sums = np.add.reduceat(rows, starts, axis=1)  # (K, groups present)
    total = sums[0]
    for a, ((j, _), v) in enumerate(zip(metrics, values, strict=True)):
        for i, e in enumerate(chosen):
            s, u, t = acc[(j, e)]
            one = sums[1 + 2 * a * n_est + i], sums[1 + (2 * a + 1) * n_est + i]
            if np.isfinite(one[0]).all() and np.isfinite(one[1]).all():
                s[pos, 0, present] += total
                s[pos, 1, present] += one[0]
                s[pos, 2, present] += one[1]
            else:  # some value undefined: its weight counted apart
                defined = np.isfinite(v[i])
                wd = np.where(defined, w, 0.0)
                dd = np.where(defined, v[i], 0.0)  # v holds v - target here
                f = wd * dd
                part = np.stack([wd, f, f * dd, np.where(defined, 0.0, w)])
                part = np.add.reduceat(part, starts, axis=1)
                s[pos, :, present] += part[:3].T
                u[pos, present] += part[3]
            t[pos, present] += total


#: Slack of :func:`_row_bound` against the round-off of the log-probabilities
#: (summed in another order): a row is skipped only if its bound is this much
#: below the floor.
_BOUND_MARGIN = 1e-6


def _row_bound(table, const, n):
    """Upper bound of the log-probability of the four-part rows of size ``n``
    over the groups, per ``(TP, FN + FP)``: array ``(n + 1, n + 1)`` (``-inf``
    where ``TP + FN + FP > n``).

    A row's log-probability is ``const + t0[TP] + t1[FN] + t2[FP] + t3[TN]``
    (:func:`_log_tables`); for given ``TP`` and ``s = FN + FP`` (so ``TN``) it is
    at most ``const + t0[TP] + t3[TN] + max_i (t1[i] + t2[s - i])``. Rows of a
    ``(TP, s)`` whose bound is below the floor for every group are dropped
    without computing their probabilities: the same rows are kept.
    """
    m = n + 1
    t = table[:, :, :m]
    pair = np.full((t.shape[0], m), -np.inf)  # max over FN + FP = s
    for i in range(m):
        np.fmax(pair[:, i:], t[:, 1, i : i + 1] + t[:, 2, : m - i], out=pair[:, i:])
    tn = n - np.arange(m)[:, None] - np.arange(m)[None, :]
    valid = tn >= 0
    tn = np.where(valid, tn, 0)
    out = np.full((m, m), -np.inf)
    for g in range(t.shape[0]):
        b = t[g, 3][tn]
        b += t[g, 0][:, None]
        b += pair[g][None, :]
        b += const[g]
        np.fmax(out, b, out=out)  # a group without the row (NaN) keeps none
    out[~valid] = -np.inf
    return out


def _exact_task(sizes, counts, refs, shift, plan, estimators, sampling, budget):
    """Exact power sums of every size of a task, block by block.

    For each support (metrics sharing their blocks) the rows of all the task's
    sizes are generated by rank in blocks (:func:`_blocks`, one size each). Per
    block: every group's log-probabilities from per-part tables; the rows whose
    probability is below ``NEGLECTED_MASS / rows(n)`` for every group are dropped
    (so at most ``NEGLECTED_MASS`` of probability is left out per group and
    size). The estimators without a reference (raw counts, additive smoothing)
    give the same values for every group: each metric is evaluated once per row
    and the groups' power sums of every (metric, estimator) come from one matrix
    product with the groups' probabilities (:func:`_shared_block`). The
    estimators with a reference per group (Cross-Prior Smoothing) are evaluated
    on each group's kept rows (:func:`_own_block`). The metrics of a support are
    evaluated together, their common sums computed once
    (:func:`~sklearn_smallfair.metrics._registry._values_sharing_sums`). Returns
    ``{(metric, estimator): (sums, undefined, total)}`` over ``(size, group)``
    keys, ``sums`` of shape ``(3, S * G)``.
    """
    order = 2
    if _SETTLE:
        _settle_allocator()
    sizes = [int(n) for n in sizes]
    n_groups, n_sizes = counts.shape[0], len(sizes)
    counts = np.asarray(counts, dtype=np.float64)
    top = max(sizes)
    forms = _affine_forms(estimators, sizes, refs)
    shared = [e for e, f in enumerate(forms) if f is None or not f[0]]
    own = [e for e, f in enumerate(forms) if f is not None and f[0]]
    rows = _block_rows(n_groups, order, budget, len(estimators), _plan_metrics(plan))
    acc = {}
    for blocks, metrics in plan:
        k = len(blocks)
        firsts = [b[0] for b in blocks]
        block_counts = np.stack([counts[:, list(b)].sum(axis=1) for b in blocks], 1)
        table = _log_tables(block_counts, top, sampling)
        const = np.stack([_log_const(n, counts, sampling) for n in sizes])  # (S, G)
        floor = np.log(NEGLECTED_MASS) - np.log(
            np.array([float(comb(n + k - 1, k - 1)) for n in sizes])
        )
        offsets = [None if f is None else _collapse(f[2], blocks) for f in forms]
        for j, _ in metrics:
            for e in range(len(estimators)):
                acc[(j, e)] = (
                    np.zeros((n_sizes, order + 1, n_groups)),
                    np.zeros((n_sizes, n_groups)),
                    np.zeros((n_sizes, n_groups)),
                )
        parts_tables = [np.ascontiguousarray(table[:, j]) for j in range(k)]
        bound, bound_pos = None, None
        for block in _blocks(sizes, k, rows):
            ((pos, n, start, stop),) = block
            parts = _support_rows(n, k, start, stop)
            if k == 4 and 40 * (n + 1) ** 2 <= budget // 4:
                # skip the rows that no group keeps, before their probabilities
                if bound_pos != pos:
                    bound, bound_pos = _row_bound(table, const[pos], n), pos
                tp_s = bound[parts[:, 0], parts[:, 1] + parts[:, 2]]
                maybe = tp_s >= floor[pos] - _BOUND_MARGIN
                if not maybe.all():
                    parts = parts[maybe]
                if not parts.shape[0]:
                    continue
            logw = np.take(parts_tables[0], parts[:, 0], axis=1)
            for j in range(1, k):
                logw += np.take(parts_tables[j], parts[:, j], axis=1)
            logw += const[pos][:, None]
            keep = logw >= floor[pos]
            used = np.flatnonzero(keep.any(axis=0))
            if not used.size:
                continue
            if used.size < parts.shape[0]:
                parts, logw, keep = parts[used], logw[:, used], keep[:, used]
            part_f = parts.T.astype(np.float64)
            weight = np.exp(logw)
            if shared:
                _shared_block(
                    acc,
                    pos,
                    forms,
                    offsets,
                    shared,
                    firsts,
                    metrics,
                    part_f,
                    weight,
                    shift,
                )
            if own:
                _own_block(
                    acc,
                    pos,
                    forms,
                    offsets,
                    own,
                    firsts,
                    metrics,
                    part_f,
                    weight,
                    keep,
                    shift,
                )
    return {
        key: (np.moveaxis(s, 0, 1).reshape(order + 1, -1), u.ravel(), t.ravel())
        for key, (s, u, t) in acc.items()
    }


def _exact_task_per_metric(
    sizes, counts, refs, shift, plan, estimators, sampling, budget
):
    """Exact power sums of every size of a task, block by block, each metric's
    formula and power sums evaluated on their own: the reference for
    :func:`_exact_task` (same rows and values, and the same blocks at the default
    ``memory_budget``; the sums are only grouped differently).

    For each support (metrics sharing their blocks) the rows of all the task's
    sizes are generated by rank in blocks (:func:`_blocks`). Per block: every
    group's log-probabilities from per-part tables; the rows whose probability is
    below ``NEGLECTED_MASS / rows(n)`` for every group are dropped (so at most
    ``NEGLECTED_MASS`` of probability is left out per group and size); then each
    estimator's smoothed rows (once for all groups without a reference), each
    metric's values and their power sums, in one pass per block. Returns
    ``{(metric, estimator): (sums, undefined, total)}`` over ``(size, group)``
    keys, ``sums`` of shape ``(3, S * G)``.
    """
    order = 2
    sizes = [int(n) for n in sizes]
    n_groups, n_sizes = counts.shape[0], len(sizes)
    counts = np.asarray(counts, dtype=np.float64)
    top = max(sizes)
    rows = _block_rows(n_groups, order, budget)
    acc = {}
    # the estimators' affine forms per size: scale (S,) and offset (S, 4) without
    # a reference, (S, G) and (S, G, 4) with one
    forms = []
    for est in estimators:
        if est is None:
            forms.append(None)
            continue
        per_size = [_coefficients(est, n, refs, _SINGLES) for n in sizes]
        scale = np.stack([s[..., 0] for s, _ in per_size])
        offset = np.stack([o for _, o in per_size])
        forms.append((bool(est.requires_reference), scale, offset))
    for blocks, metrics in plan:
        k = len(blocks)
        firsts = [b[0] for b in blocks]
        block_counts = np.stack([counts[:, list(b)].sum(axis=1) for b in blocks], 1)
        table = _log_tables(block_counts, top, sampling)
        const = np.stack([_log_const(n, counts, sampling) for n in sizes])  # (S, G)
        floor = np.log(NEGLECTED_MASS) - np.log(
            np.array([float(comb(n + k - 1, k - 1)) for n in sizes])
        )
        offsets = [None if f is None else _collapse(f[2], blocks) for f in forms]
        for j, _ in metrics:
            for e in range(len(estimators)):
                acc[(j, e)] = (
                    np.zeros((n_sizes, order + 1, n_groups)),
                    np.zeros((n_sizes, n_groups)),
                    np.zeros((n_sizes, n_groups)),
                )
        for block in _blocks(sizes, k, rows):
            parts = np.concatenate([_support_rows(n, k, a, b) for _, n, a, b in block])
            pos = np.concatenate(
                [np.full(b - a, p, dtype=np.int64) for p, _, a, b in block]
            )
            logw = np.empty((n_groups, parts.shape[0]))
            cols = [np.ascontiguousarray(parts[:, j]) for j in range(k)]
            for g in range(n_groups):
                row = logw[g]
                np.take(table[g, 0], cols[0], out=row)
                for j in range(1, k):
                    row += np.take(table[g, j], cols[j])
                row += const[pos, g]
            used = np.flatnonzero((logw >= floor[pos]).any(axis=0))
            if used.size < parts.shape[0]:
                parts, pos, logw = parts[used], pos[used], logw[:, used]
            part_f = parts.T.astype(np.float64)
            # the pieces of the block: one size each, in order
            bounds = np.flatnonzero(np.diff(pos)) + 1
            pieces = np.split(np.arange(pos.size), bounds) if pos.size else []
            weight = np.exp(logw)
            pairs = None
            for e, form in enumerate(forms):
                if form is not None and form[0]:  # per group: its own rows only
                    if pairs is None:
                        pairs = _pairs(logw >= floor[pos], weight, pos, part_f)
                    _pair_block(
                        acc,
                        e,
                        form[1],
                        offsets[e],
                        firsts,
                        metrics,
                        shift,
                        pairs,
                        order,
                    )
                    continue
                x = np.zeros((4, pos.size))
                for j, c in enumerate(firsts):
                    if form is None:
                        x[c] = part_f[j]
                    else:
                        x[c] = form[1][pos] * part_f[j] + offsets[e][pos, c]
                for j, m in metrics:
                    values = np.asarray(m.func(x.T), np.float64)
                    s, u, t = acc[(j, e)]
                    for piece in pieces:
                        p = pos[piece[0]]
                        sl = slice(piece[0], piece[-1] + 1)
                        w = weight[:, sl]
                        sums, undefined = _power_sums(values[sl], w, shift[:, j], order)
                        s[p] += sums
                        u[p] += undefined
                        t[p] += w.sum(axis=1)
    return {
        key: (np.moveaxis(s, 0, 1).reshape(order + 1, -1), u.ravel(), t.ravel())
        for key, (s, u, t) in acc.items()
    }


def _size_stats(
    n, counts, refs, targets, plan, estimators, method, sampling, n_draws, rngs
):
    """Statistics of one size: array (G, n_estimators, n_metrics, n_stats)."""
    order = 4 if method == "montecarlo" else 2
    finite = np.isfinite(targets)
    shift = np.where(finite, targets, 0.0)  # (G, n_metrics)
    acc = {}
    histogram = method == "montecarlo" and n_confusion_matrices(n) <= min(
        n_draws, _HISTOGRAM_MAX
    )
    if histogram:
        # the histogram of n_draws matrices over the C(n+3, 3) possible ones: one
        # multinomial draw per group, the same law as n_draws separate draws, and
        # every metric and estimator scored on the same draws
        full = _weights(enumerate_confusion_matrices(n), counts, sampling)
        full /= full.sum(axis=1, keepdims=True)
        hist = np.stack(
            [rng.multinomial(n_draws, p) for rng, p in zip(rngs, full, strict=True)]
        ).astype(np.float64)
    if method == "exact" or histogram:
        for blocks, metrics in plan:
            support = _Support(n, blocks)
            if histogram:
                weights = support.from_full(hist, n)
            else:
                weights = _weights(support.cells, _collapse(counts, blocks), sampling)
            _evaluate(
                acc,
                support.cells,
                weights,
                n,
                blocks,
                metrics,
                estimators,
                refs,
                shift,
                order,
            )
    else:
        singles = ((0,), (1,), (2,), (3,))
        metrics = [jm for _, ms in plan for jm in ms]
        p = counts / counts.sum(axis=1, keepdims=True)
        for g, rng in enumerate(rngs):
            part = slice(g, g + 1)
            one = {}
            for start in range(0, n_draws, _MAX_CHUNK):
                size = min(_MAX_CHUNK, n_draws - start)
                if sampling == "multinomial":
                    cells = rng.multinomial(n, p[g], size=size)
                else:
                    cells = rng.multivariate_hypergeometric(counts[g], n, size=size)
                _evaluate(
                    one,
                    cells,
                    np.ones((1, size)),
                    n,
                    singles,
                    metrics,
                    estimators,
                    None if refs is None else refs[part],
                    shift[part],
                    order,
                )
            for key, (s, u, t) in one.items():
                if key not in acc:
                    acc[key] = (
                        np.zeros((order + 1, len(rngs))),
                        np.zeros(len(rngs)),
                        np.zeros(len(rngs)),
                    )
                acc[key][0][:, g] = s[:, 0]
                acc[key][1][g] = u[0]
                acc[key][2][g] = t[0]
    return _finish(acc, counts.shape[0], len(estimators), targets, method)


def _finish(acc, n_groups, n_estimators, targets, method):
    """Statistics from the power sums: array (G, n_estimators, n_metrics, n_stats)."""
    finite = np.isfinite(targets)
    n_stats = 5 if method == "montecarlo" else 4
    out = np.full((n_groups, n_estimators, targets.shape[1], n_stats), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        for (j, e), (s, undefined, total) in acc.items():
            k = s[0]
            has = k > 0
            m1 = np.where(has, s[1] / k, np.nan)
            m2 = np.where(has, s[2] / k, np.nan)
            ok = has & finite[:, j]
            out[:, e, j, 0] = np.where(ok, m2, np.nan)  # mse
            out[:, e, j, 1] = np.where(ok, m1, np.nan)  # bias
            out[:, e, j, 2] = np.where(has, np.maximum(m2 - m1 * m1, 0.0), np.nan)
            out[:, e, j, 3] = undefined / total  # p_undefined
            if method == "montecarlo":
                m4 = s[4] / k
                out[:, e, j, 4] = np.where(
                    ok, np.sqrt(np.maximum(m4 - m2 * m2, 0.0) / k), np.nan
                )
    return out


def _run_task(
    sizes,
    labels,
    counts,
    refs,
    targets,
    metric_names,
    estimators,
    method,
    sampling,
    n_draws,
    base_seed,
    memory_budget=None,
):
    metrics = [get_metric(name) for name in metric_names]
    plan = _plan(metrics)
    estimators = list(estimators.values())
    if method == "exact":
        finite = np.isfinite(targets)
        shift = np.where(finite, targets, 0.0)
        # one BLAS thread: the groups' sums are matrix products whose bits would
        # otherwise depend on the thread count (and so on n_jobs)
        with np.errstate(all="ignore"), threadpool_limits(limits=1, user_api="blas"):
            acc = _exact_task(
                sizes, counts, refs, shift, plan, estimators, sampling, memory_budget
            )
        n_groups = counts.shape[0]
        out = []
        for pos, n in enumerate(sizes):
            part = slice(pos * n_groups, (pos + 1) * n_groups)
            one = {key: tuple(a[..., part] for a in val) for key, val in acc.items()}
            stats = _finish(one, n_groups, len(estimators), targets, method)
            out.append((int(n), stats))
        return out
    out = []
    for n in sizes:
        rngs = (
            [child_rng(base_seed, label, int(n)) for label in labels]
            if method == "montecarlo"
            else None
        )
        stats = _size_stats(
            n,
            counts,
            refs,
            targets,
            plan,
            estimators,
            method,
            sampling,
            n_draws,
            rngs,
        )
        out.append((int(n), stats))
    return out


def _cost(n, method, n_draws):
    m = n_confusion_matrices(n)
    if method == "montecarlo" and m > min(n_draws, _HISTOGRAM_MAX):
        return n_draws
    return m


def _tasks(sizes, method, n_draws):
    """Sizes bundled into tasks of similar cost, costliest first.

    The bundling never changes a result (each size is computed on its own, with
    its own random streams); it only balances the work between the jobs.
    """
    costs = [_cost(int(n), method, n_draws) for n in sizes]
    target = max(max(costs), sum(costs) / 64)
    tasks, current, acc = [], [], 0
    for n, c in zip(sizes.tolist(), costs, strict=True):
        current.append(n)
        acc += c
        if acc >= target:
            tasks.append((acc, current))
            current, acc = [], 0
    if current:
        tasks.append((acc, current))
    tasks.sort(key=lambda t: -t[0])
    return [t[1] for t in tasks]


# ---------------------------------------------------------------------------
# Bounds on the requested work, checked before any work
# ---------------------------------------------------------------------------


def _size_load(n, plan, method, n_draws):
    """``(work, rows)`` of one size for one group.

    ``work``: matrices evaluated (drawn one by one, or enumerated); ``rows``: the
    largest array of matrices (or block-sum vectors) held with their
    probabilities, 0 for draws made one by one (held ``_MAX_CHUNK`` at a time).
    """
    full = n_confusion_matrices(n)
    if method == "montecarlo":
        if full > min(n_draws, _HISTOGRAM_MAX):
            return n_draws, 0
        return full, full
    supports = [comb(n + len(blocks) - 1, len(blocks) - 1) for blocks, _ in plan]
    return sum(supports), 0


def _size_bytes(rows, n_groups):
    """Memory of a Monte Carlo histogram over ``rows`` matrices (or block-sum
    vectors) with their probabilities for every group."""
    return rows * (12 + 2 * n_groups) * 8


def _exact_bytes(n, n_groups, plan, n_estimators=1):
    """Least memory of the exact sums at size ``n`` in one job: the per-part
    log-probability tables of the largest support and one block of ``_ROWS_MIN``
    rows (see :func:`_block_rows`)."""
    parts = max(len(blocks) for blocks, _ in plan)
    tables = 8 * n_groups * parts * (n + 1) * 2
    row = _row_bytes(n_groups, 2, n_estimators, _plan_metrics(plan))
    return tables + 2 * _ROWS_MIN * row


def _check_work(
    sizes, n_groups, plan, method, n_draws, budget=MEMORY_BUDGET, n_estimators=1
):
    """Refuse a call whose work exceeds ``MAX_WORK`` or one of whose sizes needs
    more memory than ``budget`` (``memory_budget``), saying which parameter to
    change."""
    loads = [_size_load(int(n), plan, method, n_draws) for n in sizes]
    if method == "exact":
        n = int(max(sizes))
        need = _exact_bytes(n, n_groups, plan, n_estimators)
        if need > budget:
            largest = _largest_n(
                lambda m: _exact_bytes(m, n_groups, plan, n_estimators) <= budget
            )
            raise ValueError(
                f"memory_budget: the exact sums of size {n} for {n_groups} group(s) "
                f"need at least {_format_bytes(need)} per job (their probability "
                f"tables and one block of {_ROWS_MIN:,} rows), above memory_budget "
                f"= {_format_bytes(budget)}. Raise memory_budget, use sizes up to "
                f"{largest}, or pass fewer groups per call."
            )
    heavy = [(int(n), rows) for n, (_, rows) in zip(sizes, loads, strict=True) if rows]
    if heavy:
        n, rows = max(heavy, key=lambda t: t[1])
        need = _size_bytes(rows, n_groups)
        if need > budget:
            raise ValueError(
                f"memory_budget: size {n} with method={method!r} draws its "
                f"n_draws={n_draws:,} matrices as a histogram over the {rows:,} "
                f"possible ones with their probabilities for {n_groups} group(s), "
                f"about {_format_bytes(need)} of memory per job, above "
                f"memory_budget = {_format_bytes(budget)}. Raise memory_budget, "
                f"lower n_draws below {n_confusion_matrices(n):,} (the number of "
                f"matrices of size {n}) to draw the matrices one by one, or pass "
                f"fewer groups per call."
            )
    work = n_groups * sum(w for w, _ in loads)
    if work > MAX_WORK:
        direct = sum(1 for _, rows in loads if not rows)
        enumerated = sum(rows for _, rows in loads)
        most = (MAX_WORK // n_groups - enumerated) // max(direct, 1)
        if method == "montecarlo" and direct and most >= 1:
            hint = (
                f"Lower n_draws (at most about {most:,} here), or request fewer "
                f"sizes or groups."
            )
        elif method == "montecarlo":
            hint = "Request fewer sizes or groups per call."
        else:
            hint = (
                "Request fewer or smaller sizes, or use method='montecarlo' (n_draws "
                "matrices per group and size, whatever the size)."
            )
        raise ValueError(
            f"the requested work, {work:,} (group, matrix) evaluations over "
            f"{n_groups} group(s) and {len(loads)} size(s) with method={method!r}"
            + (f" and n_draws={n_draws:,}" if method == "montecarlo" else "")
            + f", is above the bound MAX_WORK = {MAX_WORK:,}. {hint}"
        )


# ---------------------------------------------------------------------------
# Checkpoint: one JSON line per finished size, after a header with the
# fingerprint of the arguments
# ---------------------------------------------------------------------------


def _fingerprint(
    labels, counts, refs, metrics, estimators, method, sampling, n_draws, base_seed
):
    spec = {
        "format": _CHECKPOINT_FORMAT,
        "groups": [format_label(g) for g in labels],
        "counts": np.asarray(counts).tolist(),
        "reference": None if refs is None else np.asarray(refs).tolist(),
        "metrics": [m.name for m in metrics],
        "estimators": [
            [
                name,
                None if est is None else type(est).__name__,
                None if est is None else repr(sorted(est.get_params().items())),
            ]
            for name, est in estimators.items()
        ],
        "method": method,
        "sampling": sampling,
    }
    if method == "montecarlo":
        spec["n_draws"] = int(n_draws)
        spec["seed"] = [
            str(base_seed.entropy),
            list(base_seed.spawn_key),
            base_seed.pool_size,
        ]
    blob = json.dumps(spec, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


_CHECKPOINT_KIND = "sklearn_smallfair.downsampling_experiment"
_HEX = frozenset(b"0123456789abcdef")


def _header(fingerprint):
    return (
        json.dumps(
            {
                "checkpoint": _CHECKPOINT_KIND,
                "format": _CHECKPOINT_FORMAT,
                "fingerprint": fingerprint,
            }
        )
        + "\n"
    )


#: Header lines that a run killed while creating the file may have cut short:
#: this format's and the previous one's (``{"fingerprint": ...}``).
_HEADER_TEMPLATES = (
    _header("0" * 64).encode(),
    (json.dumps({"fingerprint": "0" * 64}) + "\n").encode(),
)


def _is_cut_header(data):
    """Whether ``data`` (no newline) is empty or the start of a header line."""
    for template in _HEADER_TEMPLATES:
        start = template.index(b'"fingerprint": "') + len(b'"fingerprint": "')
        if len(data) < len(template) and all(
            (c in _HEX) if start <= i < start + 64 else c == template[i]
            for i, c in enumerate(data)
        ):
            return True
    return False


def _is_cut_record(data):
    """Whether ``data`` (no newline) can be the start of a record cut by a kill."""
    start = b'{"n": '
    return all(32 <= c < 127 for c in data) and (
        start.startswith(data) or data.startswith(start)
    )


def _nan_to_none(values):
    if isinstance(values, list):
        return [_nan_to_none(v) for v in values]
    return None if values != values else values


def _checksum(fingerprint, n, stats):
    """SHA-256 of a record's canonical content, bound to the run's fingerprint."""
    body = json.dumps({"n": n, "stats": stats}, separators=(",", ":"))
    return hashlib.sha256(f"{fingerprint}\n{body}".encode()).hexdigest()


class _CorruptRecord(Exception):
    def __init__(self, reason, n=None):
        super().__init__(reason)
        self.reason, self.n = reason, n


class _Checkpoint:
    """Append-only record of finished sizes; survives a kill at any point.

    Line 1 is a header with the fingerprint of the arguments; each further line
    records one size: ``{"n": n, "stats": [...], "sha256": checksum}`` with the
    statistics nested as ``(group, estimator, metric, statistic)``, ``null`` for
    an undefined one, and the SHA-256 of the canonical ``{"n", "stats"}`` content
    and of the fingerprint. Lines are appended whole and synced; the header is
    written to a temporary file renamed into place.
    """

    def __init__(self, path, fingerprint, shape, labels, finite_targets):
        self.path = os.fspath(path)
        self.fingerprint = fingerprint
        self.shape = shape
        self.labels = labels  # groups, estimators, metrics, statistics
        self.finite_targets = finite_targets
        self.done = {}
        if os.path.exists(self.path):
            self._load()
        else:
            self._create()

    def _create(self):
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(_header(self.fingerprint))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def _error(self, message):
        return ValueError(f"checkpoint={self.path!r} {message}")

    def _load(self):
        with open(self.path, "rb") as fh:
            data = fh.read()
        if b"\n" not in data:
            if not _is_cut_header(data):
                raise self._error(
                    "is not a downsampling checkpoint file (line 1 is not a "
                    "checkpoint header); pass a new path or delete the file."
                )
            warnings.warn(
                f"checkpoint={self.path!r} is "
                + ("empty" if not data else "cut short inside its header")
                + " (a run killed while creating it?); it records nothing, so it "
                "is started afresh.",
                CheckpointWarning,
                stacklevel=4,
            )
            self._create()
            return
        *lines, tail = data.split(b"\n")
        self._check_header(lines[0])
        seen = {}
        for number, raw in enumerate(lines[1:], start=2):
            try:
                n, stats = self._record(raw)
            except _CorruptRecord as exc:
                size = "" if exc.n is None else f" (size {exc.n})"
                raise self._error(
                    f"has a corrupt record on line {number}{size}: {exc.reason}. The "
                    f"file was modified or damaged: delete that line (its size is "
                    f"then recomputed), or pass a new path (or delete the file) to "
                    f"start afresh."
                ) from None
            if n in seen:
                raise self._error(
                    f"records size {n} twice, on lines {seen[n]} and {number}; a run "
                    f"records each size once, so the file was edited or written by "
                    f"two runs at once. Delete one of the lines (or the file) and "
                    f"rerun."
                )
            seen[n] = number
            self.done[n] = stats
        if tail:
            if not _is_cut_record(tail):
                raise self._error(
                    f"has a corrupt record on line {len(lines) + 1}: an incomplete "
                    f"last line that is not a record cut short. The file was modified "
                    f"or damaged: delete that line, or pass a new path (or delete the "
                    f"file) to start afresh."
                )
            # a record cut short by a kill: drop it before appending
            os.truncate(self.path, len(data) - len(tail))

    def _check_header(self, raw):
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            header = None
        if not isinstance(header, dict) or not isinstance(
            header.get("fingerprint"), str
        ):
            raise self._error(
                "is not a downsampling checkpoint file (line 1 is not a checkpoint "
                "header); pass a new path or delete the file."
            )
        if (
            header.get("checkpoint") != _CHECKPOINT_KIND
            or header.get("format") != _CHECKPOINT_FORMAT
        ):
            raise self._error(
                f"is a downsampling checkpoint in another format "
                f"({header.get('format', 1)!r}, this version writes "
                f"{_CHECKPOINT_FORMAT}); pass a new path or delete the file."
            )
        if header["fingerprint"] != self.fingerprint:
            raise self._error(
                "was written by a run with other arguments (data, metrics, "
                "estimators, method, sampling, n_draws or random_state); rerun "
                "with the same arguments, or pass a new path (or delete the file) "
                "to start afresh."
            )

    def _record(self, raw):
        """``(n, stats)`` of one record line, or :class:`_CorruptRecord`."""
        if not raw.strip():
            raise _CorruptRecord("an empty line")
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _CorruptRecord("it is not a JSON record") from None
        if not isinstance(record, dict) or set(record) != {"n", "stats", "sha256"}:
            raise _CorruptRecord("it is not a checkpoint record")
        n = record["n"]
        if type(n) is not int or n < 1:
            raise _CorruptRecord("its size is not an integer >= 1")
        stats = record["stats"]
        try:
            values = np.array(stats, dtype=object)
            ok = values.shape == self.shape and all(
                v is None or (type(v) in (int, float)) for v in values.flat
            )
        except ValueError:  # ragged nesting
            ok = False
        if not ok:
            raise _CorruptRecord(
                f"its statistics are not numbers of shape {self.shape} (groups, "
                f"estimators, metrics, statistics)",
                n,
            )
        for index, v in np.ndenumerate(values):
            if isinstance(v, float) and not math.isfinite(v):
                raise _CorruptRecord(
                    f"{self._describe(index)} is {v!r}, a non-finite value; a run "
                    f"writes finite numbers, and null for an undefined statistic",
                    n,
                )
        if record["sha256"] != _checksum(self.fingerprint, n, stats):
            raise _CorruptRecord(
                "checksum mismatch (the record was edited, damaged, or copied from "
                "another checkpoint)",
                n,
            )
        try:
            out = np.array(_nan_to_none(stats), dtype=np.float64)
        except OverflowError:
            raise _CorruptRecord("it holds a number too large for a float", n) from None
        self._check_undefined(out, n)
        return n, out

    def _describe(self, index):
        groups, estimators, metrics, stats = self.labels
        g, e, m, k = index
        return (
            f"{stats[k]} of group {format_label(groups[g])}, metric "
            f"{metrics[m]!r}, estimator {estimators[e]!r}"
        )

    def _check_undefined(self, stats, n):
        """The undefined (null) statistics are those a run leaves undefined:
        ``p_undefined`` never; ``variance`` when the score is never defined;
        ``mse``, ``bias`` (and ``mse_se``) also when the target is undefined."""
        undefined = np.isnan(stats)
        expected = np.zeros_like(undefined)
        expected[..., 2] = undefined[..., 2]
        no_target = ~self.finite_targets[:, None, :]
        for k in (0, 1, 4)[: 3 if stats.shape[-1] == 5 else 2]:
            expected[..., k] = undefined[..., 2] | no_target
        wrong = np.argwhere(undefined != expected)
        if wrong.size:
            index = tuple(wrong[0])
            state = "undefined (null)" if undefined[index] else "a number"
            raise _CorruptRecord(
                f"{self._describe(index)} is {state}, which no run writes there",
                n,
            )

    def add(self, n, stats):
        values = _nan_to_none(stats.tolist())
        line = json.dumps(
            {
                "n": int(n),
                "stats": values,
                "sha256": _checksum(self.fingerprint, int(n), values),
            },
            allow_nan=False,
        )
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.done[int(n)] = stats


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "estimators": [Mapping, None],
        "sizes": ["array-like", range],
        "method": [StrOptions(set(_METHODS))],
        "sampling": [StrOptions(set(_SAMPLINGS))],
        # the draws of a Monte Carlo histogram are counted in float64: exact to 2^53
        "n_draws": [Whole(1, _MAX_DRAWS)],
        "reference": REFERENCE,
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
        "progress": BOOLEAN,
        "checkpoint": [str, os.PathLike, None],
        "memory_budget": [Whole(1 << 20, None, closed="left"), None],
    }
)
def downsampling_experiment(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    metrics=("tpr", "fpr", "ppv", "mcc"),
    estimators=None,
    sizes=range(5, 151),
    method="exact",
    sampling="multinomial",
    n_draws=1_000_000,
    reference="rest",
    n_jobs=None,
    random_state=None,
    progress=False,
    checkpoint=None,
    memory_budget=None,
):
    """Error of metric estimators on small subgroups drawn from each group.

    For a group with whole-group matrix ``K`` (size ``N``) the target is the
    unsmoothed score ``t = M(K)``. For each size ``n`` a subgroup matrix is drawn
    from ``Multinomial(n, K / N)`` (``sampling="multinomial"``, the published
    protocol) or by taking ``n`` of the ``N`` rows without replacement
    (``sampling="hypergeometric"``). Each estimator (raw counts or a smoothing)
    scores it; the report gives, conditional on the score being defined, its
    ``bias = E[v] - t``, ``variance = Var[v]`` and ``mse = E[(v - t)^2]``, plus
    the probability ``p_undefined`` that the score is undefined.

    ``method="exact"`` sums over all ``C(n + 3, 3)`` matrices of size ``n`` with
    their probabilities: no Monte Carlo error. The matrices are generated from
    their ranks block by block (never all held at once), each block's
    probabilities, smoothed values, metric values and power sums computed in one
    pass. An estimator without a reference (raw counts, additive smoothing)
    scores a matrix the same for every group, so each metric is evaluated once
    per matrix and the groups' sums come from one matrix product with their
    probabilities; Cross-Prior Smoothing, whose reference differs between groups,
    is evaluated per group. A matrix whose probability is below
    ``NEGLECTED_MASS / C(n + 3, 3)``
    (``NEGLECTED_MASS`` = 1e-16) for a group is skipped for that group, so at
    most 1e-16 of each group's probability is left out (the statistics move by
    less than 1e-15 for metrics in [-1, 1]). A metric that depends on the cells
    only through ``k`` block sums (``Metric.blocks``: ``tpr`` through ``TP``,
    ``FN`` and ``FP + TN``) is summed over the ``C(n + k - 1, k - 1)`` block-sum
    vectors instead, which is the same sum grouped by value. ``method="montecarlo"``
    draws ``n_draws`` matrices per (group, size) and also reports ``mse_se``; when
    there are fewer possible matrices than draws, the draws are generated as their
    histogram over the possible matrices (one multinomial draw of ``n_draws``, the
    same law as ``n_draws`` separate draws), so a million draws cost no more than
    the exact sum. Every metric and estimator is scored on the same draws.

    Work is split into joblib tasks by size (each task computes all groups of its
    sizes, sharing the reference-free estimators' values between groups). Each
    (group, size) has its own random stream, so the results do not depend on
    ``n_jobs``, on the joblib backend (e.g. dask) or on the other sizes requested.

    The requested work is checked before any work is done, against two module
    constants of :mod:`sklearn_smallfair.model_selection._downsampling`:

    - ``MAX_WORK`` (10^11, several hours of one core): the (group, matrix)
      evaluations summed over the sizes, i.e. ``n_draws x groups`` per size whose
      matrices are drawn one by one, and the number of enumerated matrices (or
      block-sum vectors) ``x groups`` per size summed exactly or as a histogram.
      Above it a ``ValueError`` says to lower ``n_draws``, request fewer sizes or
      groups, or use ``method="montecarlo"``;
    - ``memory_budget`` (default ``MEMORY_BUDGET``, 1 GiB, per job): blocks
      of the exact sums hold at most ``_BLOCK`` (65,536) (group, matrix) pairs,
      fewer if the budget is smaller, so the memory of ``method="exact"`` does
      not grow with the number of matrices (size 1,000, ten groups, ``mcc``,
      the two default estimators: 208 MB peak resident memory for the whole
      process). A ``ValueError`` is
      raised before any work when the budget cannot hold the per-size probability tables
      (``16 x groups x blocks x (n + 1)`` bytes) and a block of 256 rows
      (it names the largest size that fits); and when a Monte Carlo histogram,
      which holds every matrix of a size with its probability for every group
      (about ``rows x (12 + 2 n_groups) x 8`` bytes), would exceed the budget
      (it says to raise the budget or to lower ``n_draws`` below the number of
      matrices, so that they are drawn one by one).

    Checkpoints: the file's first line holds the SHA-256 fingerprint of the
    arguments that determine the results (data, reference, metrics, estimators,
    method, sampling, and for Monte Carlo ``n_draws`` and the seed); each further
    line records one finished size with the SHA-256 checksum of its canonical
    content (and of the fingerprint). Records are appended whole and synced, and
    the header is written to a temporary file renamed into place, so a run killed
    at any point leaves at most a last record cut short, which is dropped. On
    resume, a file written with other arguments, a record that is corrupt
    (unparsable, or whose checksum does not match: edited, damaged or copied from
    another file), a size recorded twice, or a record with a non-finite value or
    an undefined (``null``) statistic where a run writes a number raises a
    ``ValueError`` naming the file and the record (line, size, and the group,
    metric, estimator and statistic where it applies); so does a file that is not
    a checkpoint (random bytes included). An empty file, or one cut short inside
    its header (a run killed while creating it), records nothing: it is started
    afresh with a :class:`~sklearn_smallfair.exceptions.CheckpointWarning`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels (positive label 1); or pass ``counts``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, \
            n_features), default=None
        Group label of each sample (required with rows).
    counts : pandas.DataFrame, mapping or array-like of shape (n_groups, 4), \
            default=None
        Per-group counts ``(TP, FN, FP, TN)`` instead of rows, e.g.
        ``load_published_confusion_matrices("COMPAS", include_all=False)``. At
        least one group, and no group with all cells 0.
    metrics : str or sequence of str, default=("tpr", "fpr", "ppv", "mcc")
        Single-group metrics of the registry.
    estimators : mapping of str to None or smoothing, default=None
        ``{name: None}`` scores the raw subgroup matrix, ``{name: smoothing}``
        the smoothed one (:class:`~sklearn_smallfair.smoothing.AdditiveSmoothing`,
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`). ``None`` means
        ``{"raw": None, "cps_10": CrossPriorSmoothing(10)}``. A
        ``CrossPriorSmoothing(lam="auto")`` is fitted (a copy) once, before the
        experiment, on the whole groups' matrices and their references, as an
        auditor would fit it on the groups at hand; its ``lam_`` is then fixed for
        every subgroup drawn.
    sizes : iterable of int, default=range(5, 151)
        Subgroup sizes ``n >= 1`` (sorted and deduplicated in the output). With
        ``sampling="hypergeometric"`` every size must be at most each group's size.
        All together they must fit in ``MAX_WORK``, and each in
        ``memory_budget`` (see above).
    method : {"exact", "montecarlo"}, default="exact"
        Exact enumeration or Monte Carlo draws.
    sampling : {"multinomial", "hypergeometric"}, default="multinomial"
        Draw subgroups with replacement (multinomial) or without (hypergeometric).
    n_draws : int, default=1_000_000
        Draws per (group, size) for ``method="montecarlo"``, at most ``2**53``.
        Sizes with fewer possible matrices than draws (and at most 2,000,000)
        draw them as a histogram, whose cost does not grow with ``n_draws``; at
        the others each draw counts towards ``MAX_WORK``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference of each group for Cross-Prior Smoothing; see
        :func:`sklearn_smallfair.reference_counts`.
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.
    random_state : None, int, numpy Generator or SeedSequence, default=None
        Seed of the Monte Carlo draws. Each (group, size) gets its own stream keyed
        by the group label and the size, so results do not depend on ``n_jobs``
        or on which other groups and sizes are requested.
    progress : bool, default=False
        Show a progress bar over tasks (needs ``tqdm``, extra ``progress``).
    checkpoint : str or path-like, default=None
        File recording each finished size as soon as it is computed. A run that is
        interrupted (killed, out of time) and restarted with the same arguments
        and the same ``checkpoint`` computes only the missing sizes and returns
        exactly the table an uninterrupted run returns. A file written with other
        arguments, or a corrupt, duplicated or non-finite record, raises an error
        instead of being mixed in; an empty file is started afresh (see
        Checkpoints above). With ``method="montecarlo"`` it needs a fixed
        ``random_state``.
    memory_budget : int, default=None
        Bytes of memory each job may use for the exact sums' blocks and the
        Monte Carlo histograms, at least 2^20; None means ``MEMORY_BUDGET``
        (1 GiB). It changes the blocks, not the results (beyond round-off).

    Returns
    -------
    results : pandas.DataFrame
        One row per group, size, metric and estimator, with columns ``group``,
        ``n``, ``metric``, ``estimator``, ``mse``, ``bias``, ``variance``,
        ``p_undefined``; with ``method="montecarlo"`` also ``mse_se`` (standard
        error of ``mse``) and ``n_draws``. Statistics are ``NaN`` when the score is
        never defined (or the target is undefined, for ``mse`` and ``bias``).

    Raises
    ------
    ValueError
        On invalid arguments (each message names the argument): no groups in
        ``counts`` or an empty group, work above ``MAX_WORK`` or a size above
        ``memory_budget``, a checkpoint written with other arguments or holding a
        corrupt, duplicated or non-finite record.

    Warns
    -----
    CheckpointWarning
        When ``checkpoint`` is an empty file or one cut short inside its header.

    See Also
    --------
    GroupDownsamplingCV : Draw the subgroups' rows for a model-based experiment.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> from sklearn_smallfair.model_selection import downsampling_experiment
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> counts = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> res = downsampling_experiment(
    ...     counts=counts, metrics="tpr", sizes=[10, 20],
    ...     estimators={"raw": None, "cps_10": CrossPriorSmoothing(10)})
    >>> res[["group", "n", "estimator", "mse", "variance", "p_undefined"]].round(4)
       group   n estimator     mse  variance  p_undefined
    0  Black  10       raw  0.1643    0.1643       0.2229
    1  Black  10    cps_10  0.0648    0.0494       0.0000
    2  Black  20       raw  0.1073    0.1073       0.0497
    3  Black  20    cps_10  0.0540    0.0484       0.0000
    4  White  10       raw  0.1866    0.1866       0.3854
    5  White  10    cps_10  0.0571    0.0285       0.0000
    6  White  20       raw  0.1426    0.1426       0.1485
    7  White  20    cps_10  0.0518    0.0361       0.0000

    Raw TPR is conditionally unbiased under multinomial sampling but undefined for
    22% of Black subgroups of 10; CPS trades a little bias for a much smaller
    variance.
    """
    # ---- validation, before any work (parameters: the table above) ----
    n_draws = int(n_draws)
    sizes = np.unique(_check_sizes(sizes))
    metrics = get_metrics(metrics, single_group=True)
    estimators = _check_estimators(estimators)
    if checkpoint is not None:
        if method == "montecarlo" and (
            random_state is None
            or isinstance(random_state, (np.random.Generator, np.random.RandomState))
        ):
            raise ValueError(
                "checkpoint with method='montecarlo' needs random_state set to an "
                "int (or SeedSequence), so that a restarted run draws the same "
                "numbers."
            )
    groups, counts, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, None, 1
    )
    if sampling == "hypergeometric":
        if counts.dtype.kind == "f":
            if not np.array_equal(counts, np.round(counts)):
                raise ValueError(
                    "sampling='hypergeometric' draws rows without replacement, so "
                    "it needs integer counts; got fractional counts."
                )
            counts = counts.astype(np.int64)
        too_small = counts.sum(axis=1) < sizes.max()
        if too_small.any():
            raise ValueError(
                f"sampling='hypergeometric' cannot draw {int(sizes.max())} rows "
                f"from group(s) {format_labels(groups[too_small])} of size(s) "
                f"{counts.sum(axis=1)[too_small].tolist()}; use sizes no larger "
                f"than the smallest group, or sampling='multinomial'."
            )
    elif method == "exact" and counts.dtype.kind == "f":
        counts = counts.astype(np.float64)
    if any(est is not None and est.requires_reference for est in estimators.values()):
        refs = reference_counts(counts, reference, groups=groups).astype(np.float64)
    else:
        refs = None
    estimators = _fit_estimators(estimators, groups, counts, refs)
    pkg_tqdm = None
    if progress:
        try:
            from tqdm.auto import tqdm as pkg_tqdm
        except ImportError as exc:
            raise ImportError(
                "progress=True needs tqdm; install it with "
                "`pip install sklearn-smallfair[progress]` (or `pip install tqdm`)."
            ) from exc
    base_seed = resolve_seed(random_state)
    budget = MEMORY_BUDGET if memory_budget is None else int(memory_budget)
    _check_work(
        sizes,
        len(groups),
        _plan(metrics),
        method,
        n_draws,
        budget,
        len(estimators),
    )

    # ---- tasks: chunks of sizes, all groups at once ----
    whole = np.asarray(counts, dtype=np.float64)
    targets = np.stack([m.func(whole) for m in metrics], axis=1)
    columns = list(_STATS) + (["mse_se"] if method == "montecarlo" else [])
    shape = (len(groups), len(estimators), len(metrics), len(columns))
    store = None
    if checkpoint is not None:
        store = _Checkpoint(
            checkpoint,
            _fingerprint(
                groups,
                counts,
                refs,
                metrics,
                estimators,
                method,
                sampling,
                n_draws,
                base_seed,
            ),
            shape,
            (groups, list(estimators), [m.name for m in metrics], columns),
            np.isfinite(targets),
        )
    done = {} if store is None else dict(store.done)
    todo = np.array([n for n in sizes.tolist() if n not in done], dtype=np.int64)
    results = dict(done)
    if todo.size:
        tasks = [
            delayed(_run_task)(
                chunk,
                groups,
                counts,
                refs,
                targets,
                [m.name for m in metrics],
                estimators,
                method,
                sampling,
                int(n_draws),
                base_seed,
                budget,
            )
            for chunk in _tasks(todo, method, n_draws)
        ]
        finished = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
        if progress:
            finished = pkg_tqdm(finished, total=len(tasks), desc="downsampling")
        for task_result in finished:
            for n, stats in task_result:
                if store is not None:
                    store.add(n, stats)
                results[n] = stats

    # ---- assemble in (group, size, estimator, metric) order ----
    table = np.stack([results[n] for n in sizes.tolist()], axis=1)  # (G, S, E, M, k)
    codes = np.indices(table.shape[:4]).reshape(4, -1)
    frame = pd.DataFrame(table.reshape(-1, table.shape[-1]), columns=columns)
    frame.insert(0, "group", np.asarray(groups, dtype=object)[codes[0]])
    frame.insert(1, "n", sizes.astype(np.int64)[codes[1]])
    names = np.array([m.name for m in metrics], dtype=object)
    frame.insert(2, "metric", names[codes[3]])
    frame.insert(3, "estimator", np.array(list(estimators), dtype=object)[codes[2]])
    if method == "montecarlo":
        frame["n_draws"] = np.int64(n_draws)
    return frame
