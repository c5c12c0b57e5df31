"""The MATCH test: is a group's score consistent with the reference at its size?

For a group of size ``n`` with observed score ``s = M(CM_group)`` and reference
proportions ``p = CM_ref / sum(CM_ref)``, the null law of the group's matrix is
``Multinomial(n, p)`` (or, with ``reference_uncertainty=True``, the
Dirichlet-multinomial with ``alpha = CM_ref + reference_prior``). The test reports
``lower = P(S <= s)``, ``upper = P(S >= s)`` and ``P(undefined)``, conditional on the
metric being defined unless ``conditional=False``.
"""

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import betaln
from sklearn.base import BaseEstimator

from .._confusion import (
    FN,
    FP,
    _log_binomial,
    dirichlet_multinomial_logpmf,
    enumerate_confusion_matrices,
    multinomial_logpmf,
    reference_counts,
    rows_or_counts,
)
from .._random import child_seed, resolve_seed
from .._validation import (
    check_choice,
    check_non_negative_scalar,
    check_probability,
    check_smoothing,
    format_label,
)
from ..exceptions import UndefinedGroupMetricWarning
from ..metrics import get_metrics
from ._multitest import adjust_pvalues
from ._results import TestResult

__all__ = ["ENUMERATE_MAX_N", "MATCHTest", "MatchResult", "match_test"]

#: Largest group size for ``method="enumerate"``: C(403, 3) = 10.8 million
#: matrices, about 0.35 GB of counts and a few seconds of work.
ENUMERATE_MAX_N = 400

METHODS = ("auto", "exact", "normal", "beta", "enumerate", "montecarlo")
ALTERNATIVES = ("two-sided", "less", "greater")
_MC_CHUNK = 250_000
_TIE_RTOL = 1e-12  # score comparisons in enumerate / montecarlo


def _family(metric):
    """The closed-form family of a metric, or None."""
    if metric.name == "mb":
        return "mb"
    if metric.family in ("binomial", "joint_ratio"):
        return metric.family
    return None


def _supports(method, metric):
    family = _family(metric)
    return {
        "exact": family is not None,
        "normal": family in ("binomial", "mb"),
        "beta": family == "joint_ratio",
        "enumerate": True,
        "montecarlo": True,
    }[method]


class _NullLaw:
    """Law of a confusion matrix of size ``n`` under the reference."""

    def __init__(self, n, ref, reference_uncertainty, prior):
        self.n = int(n)
        self.ref = ref.astype(np.float64)
        self.p = self.ref / self.ref.sum()
        self.alpha = self.ref + prior if reference_uncertainty else None

    # --- marginal and conditional binomial pieces -------------------------------
    def sum_law(self, cells):
        """Law of ``k = sum of cells`` (binomial or beta-binomial)."""
        cells = list(cells)
        if self.alpha is None:
            return stats.binom(self.n, self.p[cells].sum())
        a = self.alpha[cells].sum()
        return stats.betabinom(self.n, a, self.alpha.sum() - a)

    def split_cdf(self, m, k, i, j, upper=False):
        """``P(c_i <= m | c_i + c_j = k)`` (or ``P(c_i >= m)`` with ``upper``)."""
        if self.alpha is None:
            pij = self.p[i] + self.p[j]
            theta = self.p[i] / pij if pij > 0 else 0.0
            law = stats.binom(k, theta)
            return law.sf(m - 1) if upper else law.cdf(m)
        a, b = self.alpha[i], self.alpha[j]
        if upper:
            return 1.0 - _betabinom_threshold_cdf(np.asarray(m) - 1, k, a, b)
        return _betabinom_threshold_cdf(m, k, a, b)

    def inflation(self):
        """Variance inflation of the Dirichlet-multinomial over the multinomial."""
        if self.alpha is None:
            return 1.0
        total = self.alpha.sum()
        return (total + self.n) / (total + 1.0)

    # --- whole-matrix law ---------------------------------------------------------
    def logpmf(self, cms):
        if self.alpha is None:
            return multinomial_logpmf(cms, self.p)
        return dirichlet_multinomial_logpmf(cms, self.alpha)

    def draw(self, size, rng):
        if self.alpha is None:
            return rng.multinomial(self.n, self.p, size=size)
        return rng.multinomial(self.n, rng.dirichlet(self.alpha, size=size))


def _betabinom_logpmf(c, k, a, b):
    c = np.asarray(c, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    # log C(k, c) is -inf outside 0 <= c <= k; the clipped arguments keep betaln
    # finite there
    cc = np.clip(c, 0, None)
    kc = np.clip(k - c, 0, None)
    return _log_binomial(k, c) + betaln(cc + a, kc + b) - betaln(a, b)


def _betabinom_threshold_cdf(m, k, a, b):
    """``P(X_k <= m_k)`` for ``X_k ~ BetaBinomial(k, a, b)``, ``k = 0, 1, ..., n``.

    scipy's beta-binomial CDF sums the pmf (O(k) per value, O(n^2) in all). The
    thresholds of the MATCH sums step by 0 or 1 as k grows, so the Polya-urn
    recursion ``P(X_k <= m) = P(X_{k-1} <= m) - P(X_{k-1} = m) (a + m) /
    (a + b + k - 1)`` gives every value from the previous one: a cumulative sum of
    closed-form increments, O(n) and vectorized.
    """
    k = np.asarray(k)
    m = np.clip(np.asarray(m, dtype=np.int64), -1, k)
    steps = np.diff(m)
    if (
        k.shape[0] == 0
        or k[0] != 0
        or np.any(np.diff(k) != 1)
        or (steps.size and (steps.min() < 0 or steps.max() > 1))
    ):  # pragma: no cover - the MATCH sums always satisfy this
        return stats.betabinom.cdf(m, k, a, b)
    prev_m, prev_k = m[:-1], k[:-1]
    leave = (
        np.exp(_betabinom_logpmf(prev_m, prev_k, a, b))
        * (a + prev_m)
        / (a + b + prev_k)
    )
    enter = np.where(steps == 1, np.exp(_betabinom_logpmf(m[1:], k[1:], a, b)), 0.0)
    first = 1.0 if m[0] >= 0 else 0.0
    out = np.concatenate([[first], first + np.cumsum(enter - leave)])
    return np.clip(out, 0.0, 1.0)


def _joint_cells(metric):
    """``(i, j)`` of a joint-ratio metric ``c_i / (c_i + c_j)``."""
    (i,) = metric.numerator
    (j,) = [c for c in metric.denominator if c != i]
    return i, j


def _conditional(lower, upper, p_defined, conditional):
    if p_defined <= 0:
        return np.nan, np.nan
    if conditional:
        return min(1.0, lower / p_defined), min(1.0, upper / p_defined)
    return lower, upper


def _exact(metric, obs, law, smoothing, ref, conditional):
    family = _family(metric)
    n = law.n
    if family == "binomial":
        # smoothers are increasing affine maps of k = c_i + c_j: same percentiles
        dist = law.sum_law(metric.numerator)
        k_obs = int(obs[list(metric.numerator)].sum())
        return float(dist.cdf(k_obs)), float(dist.sf(k_obs - 1)), 0.0
    if family == "mb":
        # S = FP - FN = 2 FP - t with t = FP + FN; smoothing is increasing in S
        s_obs = int(obs[FP] - obs[FN])
        t = np.arange(n + 1)
        w = law.sum_law((FP, FN)).pmf(t)
        lo = law.split_cdf((s_obs + t) // 2, t, FP, FN)
        up = law.split_cdf(-((-(s_obs + t)) // 2), t, FP, FN, upper=True)
        return float(w @ lo), float(w @ up), 0.0
    # joint ratio c_i / (c_i + c_j): sum over the denominator k
    i, j = _joint_cells(metric)
    k = np.arange(n + 1)
    w = law.sum_law((i, j)).pmf(k)
    num, den = int(obs[i]), int(obs[i] + obs[j])
    if smoothing is None:
        defined = k >= 1
        kd = np.maximum(k, 1)
        m_lo = (num * kd) // den  # integer floor of s * k
        m_up = -((-num * kd) // den)  # integer ceil of s * k
    else:
        scale, offset = smoothing.coefficients(n, ref)
        a = offset[i] / scale[0]
        b = (offset[i] + offset[j]) / scale[0]
        s_obs = (num + a) / (den + b)
        defined = (k + b) > 0
        x = s_obs * (k + b) - a
        tol = 1e-9 * np.maximum(1.0, np.abs(x))
        m_lo = np.floor(x + tol)
        m_up = np.ceil(x - tol)
    lo = np.where(defined, law.split_cdf(m_lo, k, i, j), 0.0)
    up = np.where(defined, law.split_cdf(m_up, k, i, j, upper=True), 0.0)
    p_def = float(w[defined].sum())
    lower, upper = _conditional(float(w @ lo), float(w @ up), p_def, conditional)
    return lower, upper, min(max(float(w[~defined].sum()), 0.0), 1.0)


def _normal(metric, obs, law):
    n = law.n
    # moments of the null law: with reference uncertainty the Dirichlet-multinomial
    # has mean n alpha / sum(alpha) and the multinomial covariance times inflation()
    p = law.p if law.alpha is None else law.alpha / law.alpha.sum()
    if _family(metric) == "binomial":
        cells = list(metric.numerator)
        q = p[cells].sum()
        x = float(obs[cells].sum())
        mean, var = n * q, n * q * (1 - q)
    else:  # mb
        mu = p[FP] - p[FN]
        x = float(obs[FP] - obs[FN])
        mean, var = n * mu, n * (p[FP] + p[FN] - mu**2)
    sd = np.sqrt(var * law.inflation())
    if sd == 0:
        return float(x >= mean), float(x <= mean), 0.0
    lower = stats.norm.cdf((x + 0.5 - mean) / sd)
    upper = stats.norm.cdf((mean - x + 0.5) / sd)
    return float(lower), float(upper), 0.0


def _beta(metric, obs, law, conditional):
    # Published approximation: S ~ Beta(k theta + 1, k (1 - theta) + 1) with the
    # group's observed denominator k = c_i + c_j and theta = p_i / (p_i + p_j) from
    # the reference (no continuity correction).
    i, j = _joint_cells(metric)
    num, den = obs[i], obs[i] + obs[j]
    s = num / den
    pij = law.p[i] + law.p[j]
    if pij <= 0:  # the reference never defines the metric (as in the exact method)
        return np.nan, np.nan, 1.0
    theta = law.p[i] / pij
    a, b = den * theta + 1.0, den * (1.0 - theta) + 1.0
    lower = float(stats.beta.cdf(s, a, b))
    upper = float(stats.beta.sf(s, a, b))
    p_undef = float((1 - pij) ** law.n)
    if not conditional:
        lower, upper = lower * (1 - p_undef), upper * (1 - p_undef)
    return lower, upper, p_undef


def _score(metric, cms, smoothing, ref):
    if smoothing is not None:
        cms = smoothing.transform(cms, ref)
    values = np.asarray(metric.func(cms), dtype=np.float64)
    return np.where(np.isfinite(values), values, np.nan)


def _tail_masses(values, weights, s_obs):
    tol = _TIE_RTOL * max(1.0, abs(s_obs))
    defined = ~np.isnan(values)
    w = np.where(defined, weights, 0.0)
    lower = w[values <= s_obs + tol].sum()
    upper = w[values >= s_obs - tol].sum()
    undefined = np.where(defined, 0.0, weights).sum()
    return float(lower), float(upper), float(w.sum()), float(undefined)


def _enumerate(metric, law, smoothing, ref, s_obs, conditional):
    if law.n > ENUMERATE_MAX_N:
        raise ValueError(
            f"method='enumerate' handles groups of size n <= {ENUMERATE_MAX_N} "
            f"(C(n + 3, 3) matrices); this group has n={law.n}. Use "
            f"method='montecarlo' (or 'auto', which switches to it)."
        )
    cms = enumerate_confusion_matrices(law.n)
    pmf = np.exp(law.logpmf(cms))
    lower, upper, p_def, p_undef = _tail_masses(
        _score(metric, cms, smoothing, ref), pmf, s_obs
    )
    lower, upper = _conditional(lower, upper, p_def, conditional)
    return lower, upper, min(max(p_undef, 0.0), 1.0)


def _montecarlo(metric, law, smoothing, ref, s_obs, conditional, n_draws, rng):
    lower = upper = defined = 0.0
    for start in range(0, n_draws, _MC_CHUNK):
        cms = law.draw(min(_MC_CHUNK, n_draws - start), rng)
        lo, up, d, _ = _tail_masses(
            _score(metric, cms, smoothing, ref), np.ones(cms.shape[0]), s_obs
        )
        lower, upper, defined = lower + lo, upper + up, defined + d
    # standard errors of the two tail estimates (binomial proportions)
    base = defined if conditional else float(n_draws)
    p_def = defined / n_draws
    if base == 0:
        return np.nan, np.nan, 1.0 - p_def, (np.nan, np.nan)
    # (count + 1) / (base + 1): a Monte Carlo tail is never reported as exactly 0
    # (a p-value of 0 would claim more than n_draws draws can show)
    lo, up = (lower + 1) / (base + 1), (upper + 1) / (base + 1)
    se = (np.sqrt(lo * (1 - lo) / base), np.sqrt(up * (1 - up) / base))
    return min(lo, 1.0), min(up, 1.0), 1.0 - p_def, se


def _p_value(lower, upper, alternative):
    if alternative == "less":
        return lower
    if alternative == "greater":
        return upper
    return min(1.0, 2.0 * min(lower, upper))


def _p_value_se(lower, upper, se, alternative):
    if alternative == "less":
        return se[0]
    if alternative == "greater":
        return se[1]
    return min(2.0 * (se[0] if lower <= upper else se[1]), 1.0)


def _check_options(
    method, alternative, n_draws, alpha, reference_prior, correction, metrics
):
    check_choice(method, "method", METHODS)
    check_choice(alternative, "alternative", ALTERNATIVES)
    if isinstance(n_draws, bool) or not isinstance(n_draws, Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1; got {n_draws!r}.")
    check_probability(alpha, "alpha")
    prior = check_non_negative_scalar(reference_prior, "reference_prior")
    adjust_pvalues(np.empty(0), correction)  # validates the name before any work
    for m in metrics:
        if m.n_groups != 1:
            raise ValueError(
                f"the MATCH test compares one group's matrix with a reference law; "
                f"{m.name!r} is a two-group metric. Test its per-group parts instead "
                f"(e.g. 'mb' for 'ofi')."
            )
        if method not in ("auto", "enumerate", "montecarlo") and not _supports(
            method, m
        ):
            fams = {
                "exact": "binomial, joint-ratio metrics and mb",
                "normal": "binomial metrics and mb",
                "beta": "joint-ratio metrics",
            }[method]
            raise ValueError(
                f"method={method!r} handles {fams}, not {m.name!r}; use "
                f"method='enumerate', 'montecarlo' or 'auto'."
            )
    return prior


def _check_integer_counts(counts):
    if counts.dtype.kind == "f":
        if not np.array_equal(counts, np.round(counts)):
            raise ValueError(
                "the MATCH test needs integer confusion-matrix counts (one per "
                "person); got fractional counts (e.g. from sample weights or "
                "smoothing)."
            )
        counts = counts.astype(np.int64)
    return counts


@dataclass(frozen=True, repr=False, eq=False)
class MatchResult(TestResult):
    """Result of :func:`match_test`: one row per group (and metric).

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one test per
    row, the p-values that decide them (``pvalues``) and one rejection rule,
    ``reject = pvalues <= alpha``.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``group``, ``n``, ``metric``, ``score`` (observed, smoothed when
        ``smoothing`` is given), ``reference_score`` (the metric of the
        reference matrix), ``lower`` = P(S <= score), ``upper`` = P(S >= score),
        ``p_value``, ``p_adjusted`` (across groups, per metric; equal to
        ``p_value`` without ``correction``), ``p_undefined``, ``se`` (Monte Carlo
        standard error of ``p_value``; 0 for exact methods, NaN for
        approximations), ``method`` (the method used) and ``reject``
        (``p_adjusted <= alpha``).
    alpha : float
        The significance level of ``reject``.
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``group`` (by ``(group, metric)`` when several metrics are
        tested) in the order of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.

    Examples
    --------
    >>> from sklearn_smallfair.stats import match_test
    >>> res = match_test(counts={"a": [8, 2, 1, 9], "b": [3, 3, 4, 10],
    ...                          "c": [1, 5, 2, 12]}, metric="tpr")
    >>> res
    MatchResult(alpha=0.05, n_tests=3, n_rejected=2)
    >>> res.pvalues.round(4)
    group
    a    0.0456
    b    0.8578
    c    0.0085
    Name: p_adjusted, dtype: float64
    >>> res.reject.tolist()
    [True, False, True]
    >>> res.alpha = 0.01
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'alpha'
    """

    _keys = ("group", "metric")

    def _row_keys(self):
        if self.frame["metric"].nunique() <= 1:
            return ["group"]
        return list(self._keys)


def match_test(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    reference="rest",
    metric="tpr",
    method="auto",
    alternative="two-sided",
    reference_uncertainty=False,
    reference_prior=0.5,
    correction=None,
    smoothing=None,
    conditional=True,
    alpha=0.05,
    n_draws=100_000,
    random_state=None,
    pos_label=1,
):
    """MATCH test: is each group's score consistent with the reference at its size?

    For each group of size ``n`` with observed score ``s``, the null hypothesis is
    that its confusion matrix was drawn from the reference group's proportions
    ``p = CM_ref / sum(CM_ref)``: ``CM ~ Multinomial(n, p)``. The test reports the
    lower percentile ``P(S <= s)``, the upper ``P(S >= s)``, a p-value and the
    probability ``P(undefined)`` that the metric is undefined at this size. A
    small p-value says the group's score is unlikely to be sample-size noise around
    the reference; a large one does *not* show the groups are alike (small groups
    have little power).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels (row-level input).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels for row-level input.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group integer matrices instead of rows; see
        :func:`~sklearn_smallfair.check_group_counts`.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        The reference of each group; see :func:`~sklearn_smallfair.reference_counts`.
    metric : str or list of str, default="tpr"
        Single-group metric name(s) or aliases. With several metrics each is a
        separate family for ``correction``.
    method : {"auto", "exact", "normal", "beta", "enumerate", "montecarlo"}, \
            default="auto"
        - ``"exact"``: closed forms for binomial metrics (binomial CDF), marginal
          benefit (conditioning on FP + FN) and joint-ratio metrics (a sum over the
          denominator with integer floors), O(n) vectorized work;
        - ``"normal"``: normal approximation with continuity correction for
          binomial metrics and ``mb`` (``z = (x + 0.5 - n mu) / sqrt(n sigma^2)``);
        - ``"beta"``: the published approximation for joint-ratio metrics,
          ``S ~ Beta(k theta + 1, k (1 - theta) + 1)`` with the group's observed
          denominator ``k = c_i + c_j`` and ``theta = p_i / (p_i + p_j)`` from the
          reference (a continuous law for a discrete score);
        - ``"enumerate"``: any metric, summing the pmf over all ``C(n + 3, 3)``
          matrices; refused for ``n > ENUMERATE_MAX_N`` (400);
        - ``"montecarlo"``: any metric and size, ``n_draws`` simulated matrices;
          each tail is estimated as ``(count + 1) / (defined draws + 1)``, so it
          is never exactly 0, and its standard error is in the ``se`` column;
        - ``"auto"``: exact where a closed form exists, else enumerate up to
          ``ENUMERATE_MAX_N``, else Monte Carlo.
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        ``"two-sided"``: ``min(1, 2 min(lower, upper))``; ``"less"``: ``lower``
        (the group scores lower than the reference would); ``"greater"``: ``upper``.
    reference_uncertainty : bool, default=False
        Treat the reference proportions as uncertain:
        ``p ~ Dirichlet(CM_ref + reference_prior)``, so the null law is
        Dirichlet-multinomial (beta-binomial pieces in the exact formulas, exactly).
        Use it when the reference is itself small.
    reference_prior : float, default=0.5
        Dirichlet pseudo-count added to every reference cell (0.5 is Jeffreys'
        prior). Only used with ``reference_uncertainty=True``.
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default=None
        Multiple-comparison adjustment across groups (see :func:`adjust_pvalues`).
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        Test the smoothed score: the observed and the null matrices are smoothed
        toward the same reference.
    conditional : bool, default=True
        Percentiles conditional on the metric being defined (renormalised). With
        ``False`` they are unnormalised (the published form):
        ``lower + upper + P(undefined) >= 1``.
    alpha : float, default=0.05
        Level for the ``reject`` column.
    n_draws : int, default=100_000
        Number of Monte Carlo draws per group.
    random_state : None, int, numpy Generator or SeedSequence, default=None
        Seed for Monte Carlo. Each (metric, group) draws from its own child seed
        derived from the group's label, so a group's result does not depend on
        which other groups are tested or in what order.
    pos_label : int, float, bool or str, default=1
        The positive class of row-level labels.

    Returns
    -------
    result : MatchResult
        ``result.to_frame()``: one row per group (and metric).

    See Also
    --------
    MATCHTest : The same test as a scikit-learn estimator.

    Examples
    --------
    The worked example: a binomial metric at n = 100 whose reference rate is 0.75
    and whose observed count is 80.

    >>> from sklearn_smallfair.stats import match_test
    >>> res = match_test(counts={"g": [40, 40, 10, 10]}, reference=[75, 0, 0, 25],
    ...                  metric="prev")
    >>> round(float(res.frame["lower"].iloc[0]), 4)
    0.9005
    >>> res = match_test(counts={"g": [40, 40, 10, 10]}, reference=[75, 0, 0, 25],
    ...                  metric="prev", method="normal")
    >>> round(float(res.frame["lower"].iloc[0]), 4)
    0.898

    The Black group's TPR in the published COMPAS tables, against all other
    defendants:

    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> t = load_published_confusion_matrices("COMPAS").set_index("group")
    >>> cells = ["TP", "FN", "FP", "TN"]
    >>> black = t.loc[["Black"], cells]
    >>> rest = t.loc["ALL", cells] - t.loc["Black", cells]
    >>> res = match_test(counts=black, reference=rest)
    >>> res.frame[["group", "n", "score", "p_value", "method"]].round(4)
       group     n   score  p_value method
    0  Black  3178  0.6163      0.0  exact
    """
    metrics = get_metrics(metric, name="metric")
    prior = _check_options(
        method, alternative, n_draws, alpha, reference_prior, correction, metrics
    )
    smoothing = check_smoothing(smoothing)
    groups, cms, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, None, pos_label
    )
    cms = _check_integer_counts(cms)
    refs = reference_counts(cms, reference, groups=groups)
    if method == "enumerate" and cms.sum(axis=1).max() > ENUMERATE_MAX_N:
        big = groups[cms.sum(axis=1) > ENUMERATE_MAX_N]
        raise ValueError(
            f"method='enumerate' handles groups of size n <= {ENUMERATE_MAX_N} "
            f"(C(n + 3, 3) matrices); group(s) "
            f"{', '.join(format_label(v) for v in big)} are larger. Use "
            f"method='montecarlo' (or 'auto', which switches to it)."
        )
    if reference_uncertainty and ((refs + prior) <= 0).any():
        raise ValueError(
            "reference_uncertainty=True with reference_prior=0 needs every reference "
            "cell to be positive (a Dirichlet parameter of 0 is degenerate); some "
            "reference has an empty cell. Use reference_prior > 0 (e.g. 0.5)."
        )
    base_seed = resolve_seed(random_state)
    rows = []
    for m in metrics:
        undefined_groups, impossible_groups = [], []
        for label, obs, ref in zip(groups, cms, refs):
            law = _NullLaw(obs.sum(), ref, reference_uncertainty, prior)
            s_obs = float(_score(m, obs.astype(np.float64), smoothing, ref))
            used = method
            if method == "auto":
                if _supports("exact", m):
                    used = "exact"
                elif law.n <= ENUMERATE_MAX_N:
                    used = "enumerate"
                else:
                    used = "montecarlo"
            if used == "beta" and reference_uncertainty:
                raise ValueError(
                    "method='beta' has no reference_uncertainty variant; use "
                    "method='exact' (beta-binomial, exact) instead."
                )
            if used == "beta" and smoothing is not None:
                raise ValueError(
                    "method='beta' approximates raw joint-ratio scores; with "
                    "smoothing use method='exact'."
                )
            se = 0.0
            seed = child_seed(base_seed, m.name, label)
            if np.isnan(s_obs):
                undefined_groups.append(label)
                lower = upper = se = np.nan
                p_undef = _p_undefined(m, law, smoothing, ref, used, seed, n_draws)
            elif used == "exact":
                lower, upper, p_undef = _exact(m, obs, law, smoothing, ref, conditional)
            elif used == "normal":
                lower, upper, p_undef = _normal(m, obs, law)
                se = np.nan
            elif used == "beta":
                lower, upper, p_undef = _beta(m, obs, law, conditional)
                se = np.nan
            elif used == "enumerate":
                lower, upper, p_undef = _enumerate(
                    m, law, smoothing, ref, s_obs, conditional
                )
            else:
                rng = np.random.default_rng(seed)
                lower, upper, p_undef, tails = _montecarlo(
                    m, law, smoothing, ref, s_obs, conditional, n_draws, rng
                )
                se = _p_value_se(lower, upper, tails, alternative)
            if not np.isnan(s_obs) and np.isnan(lower):
                impossible_groups.append(label)
            p = np.nan if np.isnan(lower) else _p_value(lower, upper, alternative)
            rows.append(
                {
                    "group": label,
                    "n": law.n,
                    "metric": m.name,
                    "score": s_obs,
                    "reference_score": float(_score(m, ref, None, None)),
                    "lower": lower,
                    "upper": upper,
                    "p_value": p,
                    "p_undefined": p_undef,
                    "se": se,
                    "method": used,
                }
            )
        if undefined_groups:
            warnings.warn(
                f"{m.name} is undefined (0/0) for group(s) "
                f"{', '.join(format_label(v) for v in undefined_groups)}, so they "
                f"cannot be tested (p-value NaN). Smoothing (smoothing="
                f"CrossPriorSmoothing(lam)) makes the score defined.",
                UndefinedGroupMetricWarning,
                stacklevel=2,
            )
        if impossible_groups:
            warnings.warn(
                f"under the reference law {m.name} is never defined at these sizes "
                f"(e.g. a reference with no cases in the metric's denominator), so "
                f"group(s) {', '.join(format_label(v) for v in impossible_groups)} "
                f"cannot be tested (p-value NaN). Choose a reference that has such "
                f"cases, or smoothing to make the score defined.",
                UndefinedGroupMetricWarning,
                stacklevel=2,
            )
    frame = pd.DataFrame(rows)
    frame["p_adjusted"] = np.nan
    for name in frame["metric"].unique():
        sel = (frame["metric"] == name).to_numpy()
        frame.loc[sel, "p_adjusted"] = adjust_pvalues(
            frame.loc[sel, "p_value"].to_numpy(dtype=float), correction
        )
    frame["reject"] = (frame["p_adjusted"] <= alpha).to_numpy()
    order = [
        "group",
        "n",
        "metric",
        "score",
        "reference_score",
        "lower",
        "upper",
        "p_value",
        "p_adjusted",
        "p_undefined",
        "se",
        "method",
        "reject",
    ]
    return MatchResult(frame[order], float(alpha))


def _p_undefined(metric, law, smoothing, ref, method, seed, n_draws):
    """P(undefined) for a group whose own score is undefined."""
    if method == "montecarlo" or (method != "exact" and law.n > ENUMERATE_MAX_N):
        rng = np.random.default_rng(seed)
        undefined = 0
        for start in range(0, n_draws, _MC_CHUNK):
            cms = law.draw(min(_MC_CHUNK, n_draws - start), rng)
            undefined += int(np.isnan(_score(metric, cms, smoothing, ref)).sum())
        return undefined / n_draws
    if method == "exact" and _family(metric) == "joint_ratio":
        # The group's own (smoothed) denominator is 0, so the smoother adds nothing
        # to c_i + c_j (offsets 0): undefined exactly when c_i + c_j = 0.
        return float(law.sum_law(_joint_cells(metric)).pmf(0))
    if law.n > ENUMERATE_MAX_N:
        return np.nan
    cms = enumerate_confusion_matrices(law.n)
    pmf = np.exp(law.logpmf(cms))
    return float(pmf[np.isnan(_score(metric, cms, smoothing, ref))].sum())


class MATCHTest(BaseEstimator):
    """The MATCH test as a scikit-learn estimator.

    Holds the parameters of :func:`match_test`; :meth:`fit` runs the test and
    stores its results.

    Parameters
    ----------
    metric : str or list of str, default="tpr"
    method : str, default="auto"
    alpha : float, default=0.05
    alternative : str, default="two-sided"
    reference : str, group label or array-like, default="rest"
    reference_uncertainty : bool, default=False
    reference_prior : float, default=0.5
    correction : str or None, default=None
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
    conditional : bool, default=True
    n_draws : int, default=100_000
    random_state : None, int or Generator, default=None
    pos_label : int, float, bool or str, default=1
        See :func:`match_test` for each parameter.

    Attributes
    ----------
    result_ : MatchResult
        The full result.
    results_ : pandas.DataFrame
        ``result_.to_frame()``.
    pvalues_ : pandas.Series
        Adjusted p-values by group.
    reject_ : pandas.Series
        Rejections at ``alpha`` by group.

    Examples
    --------
    >>> from sklearn_smallfair.stats import MATCHTest
    >>> y_true = [1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0]
    >>> y_pred = [1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> test = MATCHTest(metric="tpr").fit(y_true, y_pred, sensitive_features=groups)
    >>> test.pvalues_.round(3)
    group
    a    1.0
    b    1.0
    Name: p_adjusted, dtype: float64
    """

    def __init__(
        self,
        metric="tpr",
        method="auto",
        alpha=0.05,
        alternative="two-sided",
        reference="rest",
        reference_uncertainty=False,
        reference_prior=0.5,
        correction=None,
        smoothing=None,
        conditional=True,
        n_draws=100_000,
        random_state=None,
        pos_label=1,
    ):
        self.metric = metric
        self.method = method
        self.alpha = alpha
        self.alternative = alternative
        self.reference = reference
        self.reference_uncertainty = reference_uncertainty
        self.reference_prior = reference_prior
        self.correction = correction
        self.smoothing = smoothing
        self.conditional = conditional
        self.n_draws = n_draws
        self.random_state = random_state
        self.pos_label = pos_label

    def fit(self, y_true=None, y_pred=None, *, sensitive_features=None, counts=None):
        """Run the test on rows or on per-group counts.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,), default=None
        sensitive_features : array-like, default=None
        counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None

        Returns
        -------
        self : MATCHTest
        """
        self.result_ = match_test(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            counts=counts,
            reference=self.reference,
            metric=self.metric,
            method=self.method,
            alternative=self.alternative,
            reference_uncertainty=self.reference_uncertainty,
            reference_prior=self.reference_prior,
            correction=self.correction,
            smoothing=self.smoothing,
            conditional=self.conditional,
            alpha=self.alpha,
            n_draws=self.n_draws,
            random_state=self.random_state,
            pos_label=self.pos_label,
        )
        self.results_ = self.result_.to_frame()
        self.pvalues_ = self.result_.pvalues
        self.reject_ = self.result_.reject
        return self
