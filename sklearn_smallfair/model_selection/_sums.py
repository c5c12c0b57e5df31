"""Supports and power sums of the downsampling experiments.

A metric that depends on the cells only through some block sums
(``Metric.blocks``) is summed over the block-sum vectors of size ``n`` (its
*support*) instead of every matrix. On a support, each estimator's smoothed
matrices, each metric's values and the weighted power sums of ``value - target``
per group are computed in column blocks of a fixed size.
"""

from functools import lru_cache
from math import comb

import numpy as np

from .._enumeration import enumerate_confusion_matrices
from .._pmf import _logpmf_by_group
from ._budget import _BLOCK

#: The four cells, each a block of its own.
_SINGLES = ((0,), (1,), (2,), (3,))
#: Compositions of at most this many rows are kept in memory between calls.
_CACHE_ROWS = 1 << 18


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
