"""The exact sums of a downsampling experiment, block by block.

The support rows of every size are generated from their ranks in blocks; per
block, the groups' probabilities, the estimators' smoothed values, the metrics'
values and the power sums are computed in one pass.
"""

from math import comb

import numpy as np
from scipy.special import xlogy

from .._pmf import _log_binomial, _log_factorial
from ..metrics import get_metric
from ._budget import _block_rows, _blocks, _plan_metrics
from ._sums import _CACHE_ROWS, _SINGLES, _coefficients, _collapse, _compositions

#: Largest probability the exact sums leave out per group and size: a support row
#: is skipped for a group when its probability is below this over the number of
#: rows of the support.
NEGLECTED_MASS = 1e-16
#: The formulas of the metrics whose common sums are shared
#: (:func:`_values_sharing_sums`).
_MCC = get_metric("mcc").func
_PT = get_metric("pt").func


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


def _values_sharing_sums(metrics, tp, fn, fp, tn):
    """Values of several single-group metrics on the same cells, each sum shared
    by their formulas computed once.

    ``tp, fn, fp, tn`` are float64 arrays of one shape; returns one array of that
    shape per metric, bit for bit equal to ``metric.func`` on the stacked cells
    (the same operations in the same order: ``mcc`` and ``pt`` share ``TP + FN``
    and ``TN + FP``). Metrics without a shared form are evaluated by their
    ``func``. Undefined values are non-finite, as in the registry. (Only the
    exact sums evaluate several metrics on the same cells.)
    """
    funcs = [m.func for m in metrics]
    out = [None] * len(metrics)
    b = c = None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if _MCC in funcs or _PT in funcs:
            b = tp + fn
            c = tn + fp  # == fp + tn: addition is commutative in floating point
        if _MCC in funcs:
            den = tp + fp
            den *= b
            np.sqrt(den, out=den)
            d = tn + fn
            d *= c
            np.sqrt(d, out=d)
            den *= d
            num = tp * tn
            np.multiply(fp, fn, out=d)
            num -= d
            num /= den
            mcc = num
        if _PT in funcs:
            tpr = tp / b
            fpr = fp / c
            pt = tpr * fpr
            np.sqrt(pt, out=pt)
            pt -= fpr
            tpr -= fpr
            pt /= tpr
        stacked = None
        for i, f in enumerate(funcs):
            if f is _MCC:
                out[i] = mcc
            elif f is _PT:
                out[i] = pt
            else:
                if stacked is None:
                    stacked = np.stack([tp, fn, fp, tn], axis=-1)
                out[i] = np.asarray(f(stacked), dtype=np.float64)
    return out


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
    (:func:`_values_sharing_sums`). Returns
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
