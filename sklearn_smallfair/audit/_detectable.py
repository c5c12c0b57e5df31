"""What the audit could have detected: the smallest detectable gaps, the verdicts."""

import numpy as np

from .._confusion import FN, FP
from ..metrics import compute_metric, get_metric
from ..stats import match_power

__all__ = ["VERDICTS", "detectable_gaps", "plannable", "verdicts"]

#: Power at which the audit states the smallest gap it could have detected.
POWER = 0.8
#: Relative step of the grid of gaps searched by :func:`detectable_gaps`.
GAP_STEP = 0.1
#: The verdicts of a group's metric (``<metric>_verdict``).
GAP, NO_GAP, INCONCLUSIVE, UNDEFINED = (
    "gap",
    "no gap detected",
    "inconclusive",
    "undefined",
)
#: Every verdict, in the order of the report's legend.
VERDICTS = (GAP, INCONCLUSIVE, NO_GAP, UNDEFINED, "not tested")


def plannable(metric):
    """Whether ``metric`` has an exact MATCH law (and so a detectable gap)."""
    m = get_metric(metric)
    return m.family in ("binomial", "joint_ratio") or m.name == "mb"


def _gap_grid(room):
    """Gaps from 0.01 to ``room`` in steps of 10 %, ending at ``room``."""
    if not room > 0.01:
        return np.array([room * (1 - 1e-9)]) if room > 0 else np.empty(0)
    steps = int(np.ceil(np.log(room / 0.01) / np.log(1 + GAP_STEP)))
    # the last gap a hair inside the metric's range (rounding of value + room)
    return np.r_[0.01 * (1 + GAP_STEP) ** np.arange(steps), room * (1 - 1e-9)]


def _room(metric, p, value):
    """How far ``metric`` can move up and down from ``value`` under ``p``."""
    if metric == "mb":  # (FP - FN) / n within [-(p_FP + p_FN), p_FP + p_FN]
        top = p[FP] + p[FN]
        return top - value, value + top
    return 1.0 - value, value  # rates and proportions


def _bisect(grid, sizes, reached):
    """Per size, the first gap of ``grid`` that ``reached(gap, sizes)`` holds at.

    Power grows with the gap, so each size bisects the grid's indices; the
    sizes at the same index share one call. NaN where the last gap fails.
    """
    top = reached(grid[-1], sizes)
    lo = np.full(sizes.shape, -1)  # fails (or the zero gap)
    hi = np.full(sizes.shape, grid.size - 1)  # holds
    while True:
        active = top & (hi - lo > 1)
        if not active.any():
            break
        mid = (lo + hi) // 2
        for index in np.unique(mid[active]):
            at = active & (mid == index)
            ok = reached(grid[index], sizes[at])
            hi[np.flatnonzero(at)[ok]] = index
            lo[np.flatnonzero(at)[~ok]] = index
    return np.where(top, grid[hi], np.nan)


def detectable_gaps(metric, reference, n, direction, *, alpha, power=POWER):
    """The smallest gap the exact MATCH test detects with ``power`` at each size.

    For every size ``n[k]``, the smallest gap ``d`` between a group's metric and
    the reference's, in the direction ``sign(direction[k])`` (both directions
    when it is 0 or NaN, the smaller kept), at which the two-sided exact MATCH
    test at level ``alpha`` rejects with probability at least ``power``
    (:func:`~sklearn_smallfair.stats.match_power`, whose alternative laws are
    those of :func:`~sklearn_smallfair.stats.match_min_detectable_effect`).
    Gaps are searched on a geometric grid (0.01, 0.011, ... in steps of 10 %,
    up to the largest gap the metric allows): the result is at most 10 % (or
    0.01) above the exact minimum detectable effect and never below it. The
    sizes bisect the grid together: the sizes at the same point of the grid
    share one call of ``match_power``, so each size costs about six power
    evaluations and the calls grow with the number of distinct sizes, not of
    groups. At groups of millions (the variance of the metric's counts at
    least 10^4) ``match_power`` uses the law's Edgeworth expansion, ``O(1)``
    per size, and the gaps lie within one step of the grid of those of the
    exact law.

    Returns the signed gaps, NaN where no gap reaches ``power`` at that size or
    the metric has no exact MATCH law (``f1``, ``mcc``, ...).
    """
    reference = np.asarray(reference, dtype=float)
    n = np.asarray(n, dtype=np.int64)
    if reference.ndim == 2:  # one reference per group: search each distinct one
        out = np.full(n.shape, np.nan)
        rows, inverse = np.unique(reference, axis=0, return_inverse=True)
        for k, row in enumerate(rows):
            at = inverse.ravel() == k
            out[at] = detectable_gaps(
                metric, row, n[at], np.asarray(direction)[at], alpha=alpha, power=power
            )
        return out
    direction = np.sign(np.asarray(direction, dtype=float))
    out = np.full(n.shape, np.nan)
    if reference.sum() <= 0 or not n.size:
        return out
    p = reference / reference.sum()
    value = float(compute_metric(metric, reference, zero_division=np.nan))
    if np.isnan(value):
        return out

    def reached(gap, sizes):
        return match_power(metric, reference, sizes, effect=gap, alpha=alpha) >= power

    for sign, room in zip((1, -1), _room(metric, p, value)):
        wanted = np.flatnonzero(
            (direction == sign) | (direction == 0) | np.isnan(direction)
        )
        searched = np.unique(n[wanted])
        found = np.full(searched.shape, np.nan)
        grid = sign * _gap_grid(room)
        if searched.size and grid.size:
            try:
                found = _bisect(grid, searched, reached)
            except ValueError:  # no exact law for this metric, or a degenerate one
                return out
        at = np.searchsorted(searched, n[wanted])
        new = found[at]
        old = out[wanted]
        better = np.isnan(old) | (np.abs(new) < np.abs(old))
        out[wanted] = np.where(better & ~np.isnan(new), new, old)
    return out


def verdicts(frame, metric, gap):
    """Per group: ``gap``, ``no gap detected``, ``inconclusive`` or ``undefined``.

    A group's metric shows ``no gap detected`` only when the test does not
    reject, a gap of the detectable size exists at the group's size, and the
    group's confidence interval holds the reference's value and lies within the
    reference's value plus or minus that gap (it is no wider than the gap on
    either side); a non-rejection otherwise is
    ``inconclusive`` (the data cannot tell a gap the audit would miss from no
    gap).
    """
    reject = frame[f"{metric}_match_reject"].to_numpy(dtype=bool)
    p = frame[f"{metric}_match_p_adjusted"].to_numpy(dtype=float)
    low = frame[f"{metric}_ci_low"].to_numpy(dtype=float)
    high = frame[f"{metric}_ci_high"].to_numpy(dtype=float)
    ref = frame[f"{metric}_reference"].to_numpy(dtype=float)
    d = np.abs(gap)
    with np.errstate(invalid="ignore"):
        inside = (low >= ref - d) & (high <= ref + d)
        inside &= (low <= ref) & (ref <= high)
    out = np.where(inside, NO_GAP, INCONCLUSIVE).astype(object)
    out[reject] = GAP
    out[np.isnan(p) & ~reject] = UNDEFINED
    out[frame[f"{metric}_undefined"].to_numpy(dtype=bool)] = UNDEFINED
    return out
