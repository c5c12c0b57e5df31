"""Planning under the two-sample MATCH law (the default of :func:`match_test`).

Groups of sizes ``n`` against references that are samples: the power curves of
the two-sample test (:mod:`._two_sample`) averaged over the group's random
denominator ``K ~ Bin(n, share)`` give the power (:func:`size_power`) and the
detectable gaps (:func:`size_detectable`) at a group size; this module also
checks the inputs and finds the smallest size that reaches a power.
"""

import numpy as np

from ..metrics import get_metric
from ._binomial import window
from ._planning_fixed import _sizes
from ._two_sample import _curve, _log_pmf, _solve_theta, proportion_counts

__all__ = ["size_detectable", "size_power"]

_GRID_POINTS = 64  # geometric grid of sizes searched by match_sample_size
_GRID_CHUNK = 4  # grid sizes evaluated at once


class _TwoSample:
    """Groups of sizes ``n`` against references that are samples: per group the
    reference's numerator ``y`` and denominator ``m`` of the metric, the group's
    share ``share`` of people in the denominator and the reference's value."""

    def __init__(self, metric, reference, n, share):
        m = get_metric(metric)
        if m.family not in ("binomial", "joint_ratio"):
            raise ValueError(
                f"metric={metric!r}: planning with null='two-sample' supports "
                f"binomial metrics (acc, prev, ppr, inacc, nprev, pnr) and joint "
                f"ratios (tpr, fnr, fpr, tnr, ppv, fdr, npv, for); other metrics "
                f"are tested by a permutation law without a closed-form power. Use "
                f"null='fixed-reference' for mb, or simulate match_test."
            )
        self.metric = m
        sizes = np.atleast_1d(np.asarray(n))
        self.scalar = np.ndim(n) == 0
        self.n = _sizes(sizes)
        ref = np.asarray(reference)
        if ref.dtype.kind not in "biuf":
            raise TypeError(
                f"reference must hold numeric counts, got dtype {ref.dtype}."
            )
        ref = ref.astype(np.float64)
        if ref.shape == (4,):
            ref = np.broadcast_to(ref, (self.n.size, 4))
        if ref.shape != (self.n.size, 4):
            raise ValueError(
                f"reference must be 4 counts (TP, FN, FP, TN), or one row of 4 per "
                f"size of n; got shape {np.shape(reference)} for {self.n.size} "
                f"size(s)."
            )
        if not np.isfinite(ref).all() or (ref < 0).any():
            raise ValueError("reference must hold finite non-negative counts.")
        if not np.array_equal(ref, np.round(ref)):
            raise ValueError(
                "with null='two-sample' the reference is a sample of people: give "
                "its whole counts (TP, FN, FP, TN), not proportions; for known "
                "proportions use null='fixed-reference'."
            )
        y, mm = proportion_counts(m, ref)
        if (mm <= 0).any():
            raise ValueError(
                f"reference has no one in the denominator of {m.name}: the test "
                f"has nothing to compare with."
            )
        self.y, self.m = y, mm
        self.value = y / mm
        if m.family == "binomial":
            self.share = np.ones(self.n.size)
        elif share is None:
            self.share = mm / ref.sum(axis=1)
        else:
            sh = np.broadcast_to(np.asarray(share, dtype=np.float64), self.n.shape)
            if not np.isfinite(sh).all() or (sh < 0).any() or (sh > 1).any():
                raise ValueError(f"share must be in [0, 1]; got {share!r}.")
            self.share = np.array(sh)

    def targets(self, effect, target, alternative):
        if (effect is None) == (target is None):
            raise ValueError(
                "give exactly one of effect (a difference on the metric's scale) "
                f"and target (a value of the metric); got effect={effect!r}, "
                f"target={target!r}."
            )
        value = (
            self.value + effect
            if target is None
            else np.full(self.n.shape, float(target))
        )
        name, given = ("effect", effect) if target is None else ("target", target)
        if ((value < -1e-12) | (value > 1 + 1e-12)).any():
            raise ValueError(
                f"{name}={given!r} puts {self.metric.name} outside [0, 1] under this "
                f"reference (reference value {self.value[0]:.6g})."
            )
        diff = value - self.value
        if (alternative == "greater" and (diff < 0).any()) or (
            alternative == "less" and (diff > 0).any()
        ):
            raise ValueError(
                f"{name}={given!r} moves {self.metric.name} against "
                f"alternative={alternative!r}: use a "
                f"{'non-negative' if alternative == 'greater' else 'non-positive'} "
                "effect or the other alternative."
            )
        return np.clip(value, 0.0, 1.0)

    def power(self, theta1, alpha, alternative, n=None):
        n = self.n if n is None else n
        return size_power(n, self.share, self.y, self.m, theta1, alpha, alternative)


def _two_sample_size(
    metric, reference, effect, target, goal, alpha, alternative, max_n, share
):
    """:func:`match_sample_size` under the two-sample law: the power at a
    geometric grid of sizes, then a bisection of the first crossing (the power
    of the two-sample law, averaged over the group's denominator, grows with the
    size)."""
    law = _TwoSample(metric, reference, 1, share)
    theta1 = float(law.targets(effect, target, alternative)[0])
    grid = np.unique(np.round(np.geomspace(1, max_n, _GRID_POINTS)).astype(np.int64))

    def at(sizes):
        sizes = np.asarray(sizes, dtype=np.int64)
        return size_power(
            sizes, law.share[0], law.y[0], law.m[0], theta1, alpha, alternative
        )

    values = np.full(grid.shape, np.nan)
    for start in range(0, grid.size, _GRID_CHUNK * 2):  # up the grid, in chunks
        part = slice(start, start + _GRID_CHUNK * 2)
        values[part] = at(grid[part])
        if (values[part] >= goal).any():
            break
    above = np.flatnonzero(values >= goal)
    if not above.size:
        raise ValueError(
            f"power={goal} is not reached up to max_n={max_n}: the largest power "
            f"on the sizes searched is {np.nanmax(values):.4f}. Increase max_n or "
            "the effect."
        )
    hi = int(grid[above[0]])
    lo = int(grid[above[0] - 1]) if above[0] else 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at([mid])[0] >= goal:
            hi = mid
        else:
            lo = mid
    return hi


# =====================================================================================
# Planning at a group size: the denominator is random
# =====================================================================================
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(5)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()
_ENUMERATED_SIZES = 16  # denominators enumerated below this many; quadrature above


def _denominators(n, share):
    """Per table, the group's denominators and their weights: ``K ~ Bin(n,
    share)`` enumerated on its window when that holds at most
    ``_ENUMERATED_SIZES`` values, else 5 Gauss-Hermite nodes of its normal
    approximation (rounded to whole counts). Returns ``(table, k, weight)``."""
    n = np.asarray(n, dtype=np.float64)
    share = np.asarray(share, dtype=np.float64)
    lo, hi = window(n, share)
    few = (hi - lo + 1) <= _ENUMERATED_SIZES
    tables, ks, weights = [], [], []
    f = np.flatnonzero(few)
    if f.size:
        sizes = hi[f] - lo[f] + 1
        t = np.repeat(f, sizes)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        k = np.arange(t.shape[0]) - np.repeat(starts, sizes) + lo[t]
        tables.append(t)
        ks.append(k.astype(np.float64))
        weights.append(np.exp(_log_pmf(k.astype(np.float64), n[t], share[t])))
    q = np.flatnonzero(~few)
    if q.size:
        sd = np.sqrt(n[q] * share[q] * (1 - share[q]))
        k = np.rint(n[q, None] * share[q, None] + sd[:, None] * _GH_NODES)
        k = np.clip(k, 0, n[q, None])
        tables.append(np.repeat(q, _GH_NODES.size))
        ks.append(k.ravel())
        weights.append(np.tile(_GH_WEIGHTS, q.size))
    return np.concatenate(tables), np.concatenate(ks), np.concatenate(weights)


class _SizeCurve:
    """Power at group sizes ``n`` (the denominator ``K ~ Bin(n, share)``) as a
    function of the group's rate: the weighted power curves of the denominators,
    each with the test's region at the pooled count expected at ``theta_region``."""

    def __init__(self, n, share, m, theta0, theta_region, level, alternative):
        self.T = n.shape[0]
        self.table, k, self.weight = _denominators(n, share)
        self.defined = k > 0
        t, kd = self.table[self.defined], k[self.defined]
        self.curve = _curve(kd, m[t], theta0[t], theta_region[t], level[t], alternative)
        self.t = t

    def __call__(self, theta):
        theta = np.broadcast_to(np.asarray(theta, dtype=np.float64), (self.T,))
        values = np.zeros(self.table.shape)
        values[self.defined] = self.curve(theta[self.t])
        return np.bincount(self.table, self.weight * values, minlength=self.T)


def size_power(n, share, y, m, theta1, level, alternative="two-sided"):
    """Power of the test at ``level`` for groups of ``n`` people, a share
    ``share`` of them in the metric's denominator, whose rate is ``theta1``,
    against references with ``y`` of ``m`` (rate ``y / m``, count random)."""
    n, share, y, m, theta1, level = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(n, share, y, m, theta1, level)
    )
    theta0 = y / m
    return _SizeCurve(n, share, m, theta0, theta1, level, alternative)(theta1)


def size_detectable(n, share, y, m, level, target=0.8, alternative="two-sided"):
    """The smallest gaps of the group's rate from the reference's ``y / m`` that
    the test at ``level`` detects with probability ``target``, at group sizes
    ``n`` with random denominators (``K ~ Bin(n, share)``).

    Returns ``{side: absolute gaps}`` for the sides the alternative tests (``1``
    up, ``-1`` down), NaN where not reached. The power counts the reference's
    noise (its count is random at its observed rate). The test's region depends
    a little on the pooled count, so two stages: the region at the reference's
    rate gives a first gap, then the region at the pooled count expected at that
    gap gives the stated one.
    """
    n, share, y, m, level = (
        np.asarray(v, dtype=np.float64).ravel()
        for v in np.broadcast_arrays(n, share, y, m, level)
    )
    sides = {"greater": (1,), "less": (-1,)}.get(alternative, (1, -1))
    theta0 = y / m
    out = {}
    first = _SizeCurve(n, share, m, theta0, theta0, level, alternative)
    for s in sides:
        side = np.full(n.shape, float(s))
        theta = _solve_theta(first, theta0, side, target)
        f = np.flatnonzero(~np.isnan(theta))
        if f.size:
            again = _SizeCurve(
                n[f], share[f], m[f], theta0[f], theta[f], level[f], alternative
            )
            theta[f] = _solve_theta(again, theta0[f], side[f], target)
        out[s] = np.abs(theta - theta0)
    return out
