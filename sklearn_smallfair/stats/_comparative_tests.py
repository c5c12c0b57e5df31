"""The tests of the comparative separation test from its cell counts.

Per family (cross and within) and pair of groups, the difference of two
comparative TPRs with its z statistic (normal or Student's t reference) and
p-value, adjusted within the family; the rows of the stratified test (the cells
compared within the strata of equal label pairs) and of the permutation test.
"""

import warnings

import numpy as np
import pandas as pd
from scipy.special import stdtr

from .._random import resolve_seed
from ._allpairs import log_assignments, permutation_differences
from ._allpairs_stratified import class_differences
from ._multitest import adjust_pvalues, group_pairs
from ._permutation import permutation_pvalue
from ._wald import wald_test, z_test


def _t_pvalue(z, df):
    """Two-sided p-value of ``z`` under Student's t with ``df`` degrees of freedom
    (the normal law where ``df`` is infinite)."""
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return 2.0 * stdtr(np.asarray(df, dtype=np.float64), -np.abs(z))


def _comparisons(counts, groups, correction, variance):
    """The tests of each family (cross and within), one row per pair of groups."""
    n, correct, tpr, V = counts.n, counts.correct, counts.tpr, counts.var
    qa, pb = group_pairs(groups)
    frames = []
    for test, (ha, la), (hb, lb) in (
        ("cross", (qa, pb), (pb, qa)),
        ("within", (qa, qa), (pb, pb)),
    ):
        diff = tpr[ha, la] - tpr[hb, lb]
        df = np.full(diff.shape, np.inf)
        defined = (n[ha, la] > 0) & (n[hb, lb] > 0)
        if variance == "independent":
            z, p = wald_test(correct[ha, la], n[ha, la], correct[hb, lb], n[hb, lb])
            var = V[ha, la] + V[hb, lb]
        elif variance == "clustered":
            var = counts.var_cross[ha, la] if test == "cross" else V[ha, la] + V[hb, lb]
            z, p = z_test(diff, var, defined)
        else:
            if test == "cross":
                var, df = counts.var_cross[ha, la], counts.df_cross[ha, la]
            else:
                var, df = map(np.array, zip(*map(counts.within, qa, pb)))
            z, _ = z_test(diff, var, defined)
            p = _t_pvalue(z, df)
        frames.append(
            pd.DataFrame(
                {
                    "test": test,
                    "higher_a": groups[ha],
                    "lower_a": groups[la],
                    "higher_b": groups[hb],
                    "lower_b": groups[lb],
                    "n_a": n[ha, la],
                    "n_b": n[hb, lb],
                    "tpr_a": tpr[ha, la],
                    "tpr_b": tpr[hb, lb],
                    "difference": diff,
                    "se": np.sqrt(var),
                    "z": z,
                    "df": df,
                    "p_value": p,
                    "p_adjusted": adjust_pvalues(np.atleast_1d(p), correction),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _class_frame(frame, plan, codes, groups, tie, correction, stratified, variance):
    """``frame`` with the rates, differences and tests of :func:`class_differences`
    (stratified by the label pair, or with the variance pooled under separation)."""
    qa, pb = group_pairs(groups)
    first = (np.concatenate([qa, qa]), np.concatenate([pb, qa]))
    second = (np.concatenate([pb, pb]), np.concatenate([qa, pb]))
    res = class_differences(
        plan,
        codes,
        groups.shape[0],
        first,
        second,
        tie=tie,
        stratify=stratified,
        variance=variance,
    )
    frame = frame.copy()
    defined = (frame["n_a"].to_numpy() > 0) & (frame["n_b"].to_numpy() > 0)
    defined &= ~np.isnan(res.difference)
    z, _ = z_test(res.difference, res.var, defined)
    frame["tpr_a"] = res.rate_first
    frame["tpr_b"] = res.rate_second
    frame["difference"] = res.difference
    frame["se"] = np.sqrt(res.var)
    frame["z"] = z
    frame["df"] = res.df
    frame["p_value"] = _t_pvalue(z, res.df)
    frame["p_adjusted"] = np.concatenate(
        [
            adjust_pvalues(
                frame.loc[frame["test"] == t, "p_value"].to_numpy(), correction
            )
            for t in ("cross", "within")
        ]
    )
    return frame


def _permutation_frame(
    frame, plan, codes, groups, tie, correction, n_resamples, random_state, alpha
):
    """``frame`` with the permutation p-values of its differences."""
    K = groups.shape[0]
    log_count = log_assignments(plan, codes, K)
    if log_count < np.log(1.0 / alpha):
        warnings.warn(
            f"the group labels can be permuted within the strata of equal labels in "
            f"only {np.exp(log_count):.0f} distinct way(s), too few for a "
            f"permutation p-value to reach alpha={alpha:g}: labels with many "
            f"distinct values leave nothing to permute. Use method='asymptotic', or "
            f"pass coarser labels (e.g. binned).",
            UserWarning,
            stacklevel=5,  # the caller of the decorated comparative_separation_test
        )
    # the rows of _comparisons: cross TPR(a, b) - TPR(b, a), within TPR(a, a) -
    # TPR(b, b)
    qa, pb = group_pairs(groups)
    first = (np.concatenate([qa, qa]), np.concatenate([pb, qa]))
    second = (np.concatenate([pb, pb]), np.concatenate([qa, pb]))
    rng = np.random.default_rng(resolve_seed(random_state))
    observed, null = permutation_differences(
        plan, codes, K, first, second, tie=tie, n_resamples=n_resamples, rng=rng
    )
    frame = frame.copy()
    # two-sided: p = (1 + #{|D*| >= |D|}) / (1 + B)
    frame["p_value"] = permutation_pvalue(np.abs(observed), np.abs(null).T)
    frame["p_adjusted"] = np.concatenate(
        [
            adjust_pvalues(
                frame.loc[frame["test"] == t, "p_value"].to_numpy(), correction
            )
            for t in ("cross", "within")
        ]
    )
    return frame
