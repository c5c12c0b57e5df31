"""The MATCH test's default law for metrics that are not proportions.

Metrics that are not proportions (``f1``, ``mcc``, ``pt``, ``mb``, ...) are tested by
the exact permutation law of the group's matrix within the true classes: given
the pooled counts of the group and the reference, and the group's positives and
negatives, ``TP ~ Hypergeom`` among the pooled positives and ``FP ~ Hypergeom``
among the pooled negatives, independently. Under the hypothesis that the model's
true- and false-positive rates are those of the reference, whatever the group's
prevalence, the law is exact (a test of level at most ``alpha`` at every size).
It is enumerated while the two windows hold at most ``MAX_PAIRS`` matrices, drawn
``n_resamples`` times beyond.
"""

import numpy as np
from scipy.special import gammaln

from .._confusion import FN, FP, TN, TP
from .._random import child_rng
from ._binomial import window

__all__ = ["MAX_PAIRS", "permutation_law"]

#: Most matrices of a group's permutation law enumerated; drawn beyond.
MAX_PAIRS = 1_000_000


def _hypergeom_logpmf(x, total, good, draws):
    """``log P(X = x)``, ``X`` the good items among ``draws`` of ``total``."""

    def logc(a, b):
        return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)

    with np.errstate(invalid="ignore"):
        out = logc(good, x) + logc(total - good, draws - x) - logc(total, draws)
    valid = (x >= np.maximum(0, draws - (total - good))) & (
        x <= np.minimum(good, draws)
    )
    return np.where(valid, out, -np.inf)


def _hypergeom_window(total, good, draws):
    """Values of a hypergeometric count with mass outside below 1e-15."""
    lo = max(0, int(draws - (total - good)))
    hi = int(min(good, draws))
    if hi - lo <= 64:
        return np.arange(lo, hi + 1)
    p = good / total if total else 0.0
    # the hypergeometric is more concentrated than the binomial of its draws
    w_lo, w_hi = window(int(draws), p)
    return np.arange(max(lo, int(w_lo)), min(hi, int(w_hi)) + 1)


def _one_law(metric, c, r, n_resamples, seed, label):
    """The permutation law of one group's matrix: its values (of ``metric``) and
    weights, and whether it was enumerated (else ``n_resamples`` equal draws)."""
    pos, neg = c[TP] + c[FN], c[FP] + c[TN]
    pos_total, neg_total = pos + r[TP] + r[FN], neg + r[FP] + r[TN]
    tp_total, fp_total = c[TP] + r[TP], c[FP] + r[FP]
    tp = _hypergeom_window(pos_total, tp_total, pos)
    fp = _hypergeom_window(neg_total, fp_total, neg)
    if tp.size * fp.size <= MAX_PAIRS:
        TPv, FPv = np.meshgrid(tp, fp, indexing="ij")
        weight = np.exp(
            _hypergeom_logpmf(TPv, pos_total, tp_total, pos)
            + _hypergeom_logpmf(FPv, neg_total, fp_total, neg)
        ).ravel()
        TPv, FPv, enumerated = TPv.ravel(), FPv.ravel(), True
    else:
        rng = child_rng(seed, "permutation law", label, metric.name)
        TPv = rng.hypergeometric(tp_total, pos_total - tp_total, pos, n_resamples)
        FPv = rng.hypergeometric(fp_total, neg_total - fp_total, neg, n_resamples)
        weight, enumerated = np.full(n_resamples, 1.0 / n_resamples), False
    mats = np.stack([TPv, pos - TPv, FPv, neg - FPv], axis=-1).astype(np.float64)
    return np.asarray(metric.func(mats), dtype=np.float64), weight, enumerated


def permutation_law(metric, cms, refs, level, *, n_resamples, seed, labels):
    """Tails and central range of ``metric`` under the permutation law.

    Parameters
    ----------
    metric : Metric
        A single-group metric of the registry.
    cms, refs : ndarray of shape (G, 4)
        The groups' and their references' integer counts.
    level : float or None
        Each side's level of the range: the smallest ``lo`` with ``P(S <= lo) >
        level`` and the largest ``hi`` with ``P(S >= hi) > level``; None leaves
        the range out (NaN).
    n_resamples : int
        Draws per group where the law is not enumerated.
    seed : numpy.random.SeedSequence
        Base seed of the draws (one stream per group label).
    labels : sequence of length G

    Returns
    -------
    dict of ndarray of shape (G,)
        ``lower`` = ``P(S <= s)`` and ``upper`` = ``P(S >= s)`` conditional on
        the metric being defined (with draws: ``(count + 1) / (draws + 1)``),
        ``p_undefined``, ``se`` (the Monte Carlo standard error of the smaller
        tail, NaN when enumerated), ``method`` (``"permutation"`` or
        ``"permutation-montecarlo"``), ``low`` and ``high`` (the range).
    """
    G = cms.shape[0]
    out = {k: np.full(G, np.nan) for k in ("lower", "upper", "p_undefined", "se")}
    out.update(low=np.full(G, np.nan), high=np.full(G, np.nan))
    out["method"] = np.full(G, "permutation", dtype=object)
    observed = np.asarray(metric.func(cms.astype(np.float64)), dtype=np.float64)
    for g in range(G):  # each group's own law (sizes differ)
        values, weight, enumerated = _one_law(
            metric, cms[g], refs[g], n_resamples, seed, labels[g]
        )
        defined = np.isfinite(values)
        mass = weight[defined].sum()
        out["p_undefined"][g] = weight[~defined].sum() / weight.sum()
        if mass <= 0:
            continue
        v, w = values[defined], weight[defined]
        if level is not None:
            order = np.argsort(v, kind="stable")
            vs, ws = v[order], w[order] / mass
            cum = np.cumsum(ws)
            at = min(int(np.searchsorted(cum, level, side="right")), vs.size - 1)
            out["low"][g] = vs[at]
            above = np.flatnonzero(np.cumsum(ws[::-1])[::-1] > level)
            out["high"][g] = vs[above[-1]] if above.size else vs[-1]
        s = observed[g]
        if not np.isfinite(s):
            continue
        tol = 1e-12 * max(abs(s), 1.0)
        if enumerated:
            out["lower"][g] = min(1.0, w[v <= s + tol].sum() / mass)
            out["upper"][g] = min(1.0, w[v >= s - tol].sum() / mass)
        else:
            out["method"][g] = "permutation-montecarlo"
            m = defined.sum()
            out["lower"][g] = (np.sum(v <= s + tol) + 1) / (m + 1)
            out["upper"][g] = (np.sum(v >= s - tol) + 1) / (m + 1)
            small = min(out["lower"][g], out["upper"][g])
            out["se"][g] = np.sqrt(small * (1 - small) / m)
    return out
