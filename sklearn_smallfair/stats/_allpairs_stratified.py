"""Comparative TPR differences stratified by the label pair, over all pairs.

The cells of the stratified comparative separation test are compared within the
strata of pairs with equal labels ``(y_h, y_l)``: each difference is a weighted
sum of the strata's differences, with the weights of the two compared cells'
pair counts, and its variance comes from the per-item terms of the strata
(:mod:`._allpairs`) or from the pooled residuals.
"""

from dataclasses import dataclass

import numpy as np

from ._allpairs import _by_group, _residuals, _welch_df, item_terms

__all__ = ["StratifiedDifferences", "class_differences"]


# =====================================================================================
# Differences stratified by the label pair
# =====================================================================================
@dataclass(frozen=True, eq=False)
class StratifiedDifferences:
    """Differences of two cells' rates standardized over the label-pair strata.

    Arrays of shape (n_tests,). ``rate_first`` and ``rate_second`` are the two
    cells' rates standardized to the common stratum weights, ``difference`` their
    difference, ``var`` and ``df`` its U-statistic variance and the
    Welch-Satterthwaite degrees of freedom, ``n_strata`` the strata in which both
    cells have pairs.
    """

    rate_first: np.ndarray
    rate_second: np.ndarray
    difference: np.ndarray
    var: np.ndarray
    df: np.ndarray
    n_strata: np.ndarray


def stratum_codes(plan, g):
    """Class of every item: ``group * n_levels + label rank``."""
    return g.astype(np.int64) * plan.n_levels + plan.label_rank


def stratum_weights(n_first, n_second):
    """Common weight of each stratum: the harmonic-mean weight ``n1 n2 / (n1 +
    n2)`` (zero where a cell has no pair), normalized to sum 1 (over the last two
    axes)."""
    n1 = np.asarray(n_first, dtype=np.float64)
    n2 = np.asarray(n_second, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where((n1 > 0) & (n2 > 0), n1 * n2 / (n1 + n2), 0.0)
        total = w.sum(axis=(-2, -1), keepdims=True)
        return np.where(total > 0, w / total, 0.0)


def class_differences(
    plan, g, n_groups, first, second, *, tie, stratify=True, variance="pooled"
):
    """Differences ``TPR(first) - TPR(second)``, stratified or not, and variances.

    A pair ``(h, l)`` of the cell ``(a, b)`` belongs to the stratum ``(u, v)`` of
    its labels (``y_h = u > y_l = v``). In each stratum both cells estimate the
    same probability under separation, ``P(S > S' | Y = u, Y' = v)``, whatever the
    groups' label mixes. With ``stratify`` the statistic is ``D = sum_uv w_uv
    (TPR_uv(first) - TPR_uv(second))`` with the weights of
    :func:`stratum_weights`; without it, the pooled cells' rates ``TPR(first) -
    TPR(second)`` (each stratum weighted by its own cell's share of pairs).

    The counts come from :meth:`AllPairs.placements` with the items' classes
    ``(group, label)`` as groups, so each item's correct and counted pairs against
    every class are at hand. ``D`` is a linear combination of two-sample
    U-statistics of the classes; its first-order projection is a sum of per-item
    terms ``x_i`` (each item's residual sums ``c - TPR m`` in the class cells,
    times the cell's coefficient in ``D``).

    ``variance="u_statistic"``: ``sum_c m_c / (m_c - 1) sum_{i in c} x_i^2`` over
    the classes ``c`` (``m_c`` of its items take part), DeLong's estimator with the
    classes as samples; the class sizes give Welch-Satterthwaite degrees of
    freedom. ``variance="pooled"``: the same projection's variance under
    separation, where the scores of the items with label ``u`` are one sample
    whatever their group: each item's residuals against the items of every label
    (all groups pooled) are formed once, ``x_i`` is computed from them for every
    group the item could belong to, and their sample variance over all the items
    of label ``u`` (``n_u - 1`` degrees of freedom) is multiplied by each class's
    size. No class's variance is estimated from its own few items, so a group of
    a handful of items does not make the variance small by chance.

    Parameters
    ----------
    plan : AllPairs
    g : ndarray of int of shape (n_items,)
    n_groups : int
    first, second : tuple of two ndarrays of int
        ``(higher, lower)`` group codes of the compared cells.
    tie : {"incorrect", "half", "drop"}
    stratify : bool, default=True
    variance : {"pooled", "u_statistic"}, default="pooled"

    Returns
    -------
    result : StratifiedDifferences
    """
    K, L = n_groups, plan.n_levels
    code = stratum_codes(plan, g)
    C = K * L
    terms = item_terms(plan, code, C, tie)
    n = _by_group(terms.m_hi, code, C)
    correct = _by_group(terms.c_hi, code, C)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n > 0, correct / n, np.nan)
    n4 = n.reshape(K, L, K, L)
    tpr4 = tpr.reshape(K, L, K, L)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv4 = np.where(n4 > 0, 1.0 / n4, 0.0)
    if variance == "pooled":
        pooled = _pooled_residuals(plan, tie)
        size = np.bincount(code, minlength=C).astype(np.float64).reshape(K, L)
    else:
        r_hi, r_lo = _residuals(terms, code, tpr)
    n_tests = len(first[0])
    out = {
        key: np.full(n_tests, np.nan)
        for key in ("rate_first", "rate_second", "difference", "var", "df")
    }
    n_strata = np.zeros(n_tests, dtype=np.int64)
    for t, (ha, la, hb, lb) in enumerate(zip(*first, *second)):
        n1, n2 = n4[ha, :, la, :], n4[hb, :, lb, :]
        if stratify:
            w = stratum_weights(n1, n2)
            w1 = w2 = w
            if not (w > 0).any():
                continue
        else:
            if not (n1.sum() > 0 and n2.sum() > 0):
                continue
            w1, w2 = n1 / n1.sum(), n2 / n2.sum()
        n_strata[t] = int(((n1 > 0) & (n2 > 0)).sum())
        r1 = float(np.sum(w1 * np.nan_to_num(tpr4[ha, :, la, :])))
        r2 = float(np.sum(w2 * np.nan_to_num(tpr4[hb, :, lb, :])))
        out["rate_first"][t], out["rate_second"][t] = r1, r2
        out["difference"][t] = r1 - r2
        # coefficient of each class cell's correct-minus-expected count in D
        coef = np.zeros((K, L, K, L))
        coef[ha, :, la, :] += w1 * inv4[ha, :, la, :]
        coef[hb, :, lb, :] -= w2 * inv4[hb, :, lb, :]
        if variance == "pooled":
            out["var"][t], out["df"][t] = _pooled_variance(
                coef, size, plan.label_rank, *pooled
            )
            continue
        coef = coef.reshape(C, C)
        as_hi, as_lo = coef.T[:, code], coef[:, code]
        x = np.einsum("ij,ij->j", as_hi, r_hi) + np.einsum("ij,ij->j", as_lo, r_lo)
        takes_part = (
            np.einsum("ij,ij->j", np.abs(as_hi), terms.m_hi)
            + np.einsum("ij,ij->j", np.abs(as_lo), terms.m_lo)
        ) > 0
        part = code[takes_part]
        squares = np.bincount(part, weights=x[takes_part] ** 2, minlength=C)
        m = np.bincount(part, minlength=C).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(m > 1, m / (m - 1), 1.0)
        v = squares * scale
        out["var"][t] = v.sum()
        out["df"][t] = _welch_df(v, m)
    return StratifiedDifferences(n_strata=n_strata, **out)


def _pooled_residuals(plan, tie):
    """Every item's residual sums against the items of each label, all groups
    pooled, per item of that label: shape (n_levels, n_items), and the label
    counts."""
    L, yr = plan.n_levels, plan.label_rank
    terms = item_terms(plan, yr, L, tie)
    n = _by_group(terms.m_hi, yr, L)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(n > 0, _by_group(terms.c_hi, yr, L) / n, 0.0)
    r_hi, r_lo = _residuals(terms, yr, theta)
    per_label = np.bincount(yr, minlength=L).astype(np.float64)
    return (r_hi + r_lo) / per_label[:, None], per_label


def _pooled_variance(coef, size, label_rank, residuals, per_label):
    """Variance and degrees of freedom of ``sum coef (C - TPR n)`` over the class
    cells under separation (see :func:`class_differences`)."""
    # beta[a, u, v]: the weight of an item of class (a, u) on its residual against
    # the items of label v, as the higher item (v < u) and as the lower (v > u)
    beta = np.einsum("aubv,bv->auv", coef, size) + np.einsum("bvau,bv->auv", coef, size)
    x = np.einsum("aiv,vi->ai", beta[:, label_rank, :], residuals)
    L = per_label.shape[0]
    squares = np.stack(
        [np.bincount(label_rank, weights=row**2, minlength=L) for row in x]
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(per_label > 1, squares / (per_label - 1), 0.0)
    v = np.sum(s2 * size, axis=0)
    return float(v.sum()), _welch_df(v, per_label)
