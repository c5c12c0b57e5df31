"""The MATCH test: is a group's score consistent with the reference at its size?

For a group of size ``n`` with observed score ``s = M(CM_group)`` and reference
proportions ``p = CM_ref / sum(CM_ref)``, the null law of the group's matrix is
``Multinomial(n, p)`` (or, with ``reference_uncertainty=True``, the
Dirichlet-multinomial with ``alpha = CM_ref + reference_prior``). The test reports
the tail probabilities ``p_lower_tail = P(S <= s)``, ``p_upper_tail = P(S >= s)``
and ``P(undefined)``, conditional on the metric being defined unless
``conditional=False``, next to the interval of the group's metric
(:mod:`sklearn_smallfair.metrics._intervals`) and the range of scores the
reference law gives a group of its size.

:func:`match_test` resolves its options, chooses a method for every (metric, group)
with :func:`_choose_method` before any work, then runs each method once on all the
groups given to it; the laws themselves live in :mod:`._match_laws`, one function per
method with one signature.
"""

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._confusion import reference_counts, rows_or_counts
from .._params import (
    BOOLEAN,
    COUNTS,
    POS_LABEL,
    RANDOM_STATE,
    REFERENCE,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import child_rng, resolve_seed
from .._validation import check_smoothing, format_label, warn_small_references
from ..exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from ..metrics import Metric, get_metrics
from ..metrics._intervals import DEFAULT_N_DRAWS, column_interval, resolve_ci_method
from ..smoothing import BaseSmoothing
from ._match_laws import (
    LAWS,
    Batch,
    exact_terms,
    family,
    score,
    subset,
    supports,
)
from ._multitest import CORRECTION, adjust_pvalues, check_correction
from ._planning import null_range
from ._results import ResultFrame, TestEstimator, TestResult, floor_pvalues
from ._two_sample import (
    acceptance_range,
    permutation_law,
    proportion_counts,
    tails,
    two_sided,
)

__all__ = [
    "AUTO_ENUMERATE_MAX_N",
    "AUTO_EXACT_MAX_TERMS",
    "ENUMERATE_MAX_N",
    "EXACT_MAX_TERMS",
    "MAX_N_DRAWS",
    "MATCHTest",
    "MatchResult",
    "match_test",
]

#: Largest group size for ``method="enumerate"``: C(403, 3) = 10.8 million
#: matrices, about 0.35 GB of counts and a few seconds of work.
ENUMERATE_MAX_N = 400
#: Largest group size that ``method="auto"`` enumerates (C(203, 3) = 1.4 million
#: matrices, under half a second); Monte Carlo above.
AUTO_ENUMERATE_MAX_N = 200
#: Largest number of terms of an exact sum that ``method="auto"`` computes per
#: group (under half a second); the saddle-point approximation above (Monte Carlo with
#: ``reference_uncertainty=True``).
AUTO_EXACT_MAX_TERMS = 500_000
#: Largest number of terms of an exact sum that ``method="exact"`` accepts per
#: group (about 10 s): the window of ``n = 10^14`` for a rate of 0.1 without
#: reference uncertainty, ``n = 10^7`` with it.
EXACT_MAX_TERMS = 10_000_000
#: Most groups per metric whose reference range (``ci``) is computed: the exact
#: range inverts both tails of the null law (about 10 evaluations each, against
#: one for the test), a few milliseconds per group; beyond, the range is NaN.
RANGE_MAX_GROUPS = 1_000
#: Largest ``n_draws``: 10^8 matrices take about a minute per group.
MAX_N_DRAWS = 100_000_000

METHODS = ("auto", "exact", "saddlepoint", "normal", "beta", "enumerate", "montecarlo")
#: The null laws: the default two-sample law and the published one.
NULLS = ("two-sample", "fixed-reference")
ALTERNATIVES = ("two-sided", "less", "greater")
COLUMNS = [
    "group",
    "n",
    "metric",
    "score",
    "score_ci_low",
    "score_ci_high",
    "reference_score",
    "reference_range_low",
    "reference_range_high",
    "p_lower_tail",
    "p_upper_tail",
    "p_value",
    "p_adjusted",
    "p_undefined",
    "se",
    "method",
]
#: Methods whose p-values are computed without simulation error.
_EXACT_METHODS = ("exact", "enumerate")
_HANDLES = {
    "exact": "binomial, joint-ratio metrics and mb",
    "saddlepoint": "binomial, joint-ratio metrics and mb",
    "normal": "binomial metrics and mb",
    "beta": "joint-ratio metrics",
}

#: Parameters shared by :func:`match_test` and :class:`MATCHTest`.
_OPTIONS = {
    "reference": REFERENCE,
    "metric": [str, Metric, list, tuple],
    "null": [StrOptions(set(NULLS))],
    "method": [StrOptions(set(METHODS))],
    "alternative": [StrOptions(set(ALTERNATIVES))],
    "reference_uncertainty": BOOLEAN,
    "reference_prior": [Number(0, None, closed="left")],
    "correction": CORRECTION,
    "family": [StrOptions({"all", "metric"})],
    "smoothing": [BaseSmoothing, None],
    "conditional": BOOLEAN,
    "alpha": [Number(0, 1, closed="neither")],
    "ci": [Number(0, 1, closed="neither"), None],
    "n_draws": [Whole(1, MAX_N_DRAWS)],
    "random_state": RANDOM_STATE,
    "pos_label": POS_LABEL,
}


# =====================================================================================
# Options (the cross-parameter checks the tables cannot express) and data checks
# =====================================================================================
def _check_options(
    null, method, metrics, reference_uncertainty, conditional, smoothing
):
    if null == "two-sample":
        for name, value, default in (
            ("method", method, "auto"),
            ("reference_uncertainty", reference_uncertainty, False),
            ("conditional", conditional, True),
        ):
            if value != default:
                raise ValueError(
                    f"{name}={value!r} is an option of the published law, "
                    f"null='fixed-reference' (the group's matrix drawn from known "
                    f"reference proportions); the default null='two-sample' law "
                    f"already treats the reference as a sample and conditions on "
                    f"the metric's denominator. Pass null='fixed-reference' with "
                    f"{name}={value!r}, or leave {name} at its default."
                )
    for m in metrics:
        if m.n_groups != 1:
            raise ValueError(
                f"the MATCH test compares one group's matrix with a reference law; "
                f"{m.name!r} is a two-group metric. Test its per-group parts instead "
                f"(e.g. 'mb' for 'ofi')."
            )
        if method in _HANDLES and not supports(method, m):
            raise ValueError(
                f"method={method!r} handles {_HANDLES[method]}, not {m.name!r}; use "
                f"method='enumerate', 'montecarlo' or 'auto'."
            )
    if method in ("beta", "saddlepoint") and reference_uncertainty:
        raise ValueError(
            f"method={method!r} has no reference_uncertainty variant; use "
            f"method='exact' (beta-binomial, exact) instead."
        )
    if method == "beta" and smoothing is not None:
        raise ValueError(
            "method='beta' approximates raw joint-ratio scores; with smoothing use "
            "method='exact'."
        )


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


def _dirichlet(refs, reference_uncertainty, prior):
    if not reference_uncertainty:
        return None
    alpha = refs + float(prior)
    if (alpha <= 0).any():
        raise ValueError(
            "reference_uncertainty=True with reference_prior=0 needs every reference "
            "cell to be positive (a Dirichlet parameter of 0 is degenerate); some "
            "reference has an empty cell. Use reference_prior > 0 (e.g. 0.5)."
        )
    return alpha


def _labels(groups, mask):
    return ", ".join(format_label(v) for v in np.asarray(groups, dtype=object)[mask])


# =====================================================================================
# The choice of method, before any work
# =====================================================================================
def _choose_method(metric, method, batch, groups):
    """The method of every group for ``metric``, an array of names, shape (G,).

    ``"auto"`` chooses by cost (see :func:`match_test`); an explicit method is
    checked against its size limits here, so that nothing runs for a call that
    must fail.
    """
    n = batch.n
    if method == "auto":
        if family(metric) is None:
            return np.where(n <= AUTO_ENUMERATE_MAX_N, "enumerate", "montecarlo")
        cheap = exact_terms(metric, batch) <= AUTO_EXACT_MAX_TERMS
        fallback = "saddlepoint" if batch.dirichlet is None else "montecarlo"
        return np.where(cheap, "exact", fallback)
    if method == "enumerate" and (n > ENUMERATE_MAX_N).any():
        raise ValueError(
            f"method='enumerate' handles groups of size n <= {ENUMERATE_MAX_N} "
            f"(C(n + 3, 3) matrices); group(s) {_labels(groups, n > ENUMERATE_MAX_N)}"
            f" are larger. Use method='montecarlo' (or 'auto', which switches to "
            f"it)."
        )
    if method == "exact":
        terms = exact_terms(metric, batch)
        if (terms > EXACT_MAX_TERMS).any():
            raise ValueError(
                f"method='exact' sums more than EXACT_MAX_TERMS={EXACT_MAX_TERMS:,} "
                f"terms for {metric.name!r} and group(s) "
                f"{_labels(groups, terms > EXACT_MAX_TERMS)} (n up to "
                f"{int(n.max()):,}). Use method='auto', which switches to "
                f"'saddlepoint' (or 'montecarlo' with reference_uncertainty)."
            )
    return np.full(n.shape, method, dtype=object)


def _run_laws(metric, methods, batch):
    """Each method's law once, on the groups it was chosen for."""
    G = methods.shape[0]
    out = {k: np.full(G, np.nan) for k in ("lower", "upper", "p_undefined")}
    out["se_lower"], out["se_upper"] = np.full(G, np.nan), np.full(G, np.nan)
    for name in dict.fromkeys(methods.tolist()):
        index = np.flatnonzero(methods == name)
        part = batch if index.size == G else subset(batch, index)
        tails = LAWS[name](metric, part)
        for key in out:
            out[key][index] = getattr(tails, key)
    return out


def _p_values(tails, alternative):
    """The p-values and their Monte Carlo standard errors."""
    lower, upper = tails["lower"], tails["upper"]
    if alternative == "less":
        return lower, tails["se_lower"]
    if alternative == "greater":
        return upper, tails["se_upper"]
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
        se = np.where(lower <= upper, tails["se_lower"], tails["se_upper"])
    return p, np.minimum(2.0 * se, 1.0)


def _warn_untestable(metric, groups, observed, lower):
    undefined = np.isnan(observed)
    if undefined.any():
        warnings.warn(
            f"{metric.name} is undefined (0/0) for group(s) "
            f"{_labels(groups, undefined)}, so they cannot be tested (p-value NaN). "
            f"Smoothing (smoothing=CrossPriorSmoothing(lam)) makes the score defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )
    impossible = ~undefined & np.isnan(lower)
    if impossible.any():
        warnings.warn(
            f"under the reference law {metric.name} is never defined at these sizes "
            f"(e.g. a reference with no cases in the metric's denominator), so "
            f"group(s) {_labels(groups, impossible)} cannot be tested (p-value NaN). "
            f"Choose a reference that has such cases, or smoothing to make the score "
            f"defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )


def _legacy_se(frame):
    """The old ``se`` column: 0 for exact methods, NaN for approximations."""
    exact = np.isin(frame["method"].to_numpy(dtype=object), _EXACT_METHODS)
    return np.where(exact, 0.0, np.nan)


class MatchFrame(ResultFrame):
    """The MATCH table; the columns ``lower``, ``upper`` (renamed
    ``p_lower_tail``, ``p_upper_tail``) and ``se`` (kept only when a row used Monte
    Carlo) stay readable, with a ``FutureWarning``, for one release."""

    _legacy = {
        "lower": "p_lower_tail",
        "upper": "p_upper_tail",
        "se": ("a standard error exists only for Monte Carlo rows", _legacy_se),
    }


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
        ``smoothing`` is given), ``score_ci_low`` and ``score_ci_high`` (the
        interval of the group's metric at level ``ci``, by the method of
        :func:`~sklearn_smallfair.metrics.group_metrics` with ``ci_method="auto"``:
        Wilson for a proportion, the Dirichlet posterior otherwise and for a
        smoothed score), ``reference_score`` (the metric of the reference matrix),
        ``reference_range_low`` and ``reference_range_high`` (the central ``ci``
        range of the score of a group of the same size drawn from the reference
        law, conditional on the score being defined: exact where the test used
        the exact method on the multinomial law, so that a score outside it has
        a two-sided exact p-value of at most ``1 - ci``; else the quantiles of
        2,000 null matrices, seeded by ``random_state``; NaN when more than
        ``RANGE_MAX_GROUPS`` = 1,000 groups are tested), ``p_lower_tail`` =
        P(S <= score) and ``p_upper_tail`` = P(S >= score) under the reference
        law (tail
        probabilities, not interval bounds), ``p_value``, ``p_adjusted`` (across
        groups, per metric), ``p_undefined``, ``se`` (only when a row used
        Monte Carlo: the standard error of its ``p_value``, NaN on the other
        rows), ``method`` (the method used) and ``reject`` (``p_adjusted <=
        alpha``). Without ``ci`` the four interval columns are absent. P-values
        and tails below 2.2e-308 (``P_VALUE_FLOOR``, the smallest normal double)
        are reported as 2.2e-308. The old names ``lower``, ``upper`` and ``se``
        still read (``frame["lower"]``) with a ``FutureWarning``, until the next
        release.
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
    MatchResult(alpha=0.05, n_tests=3, n_rejected=0)
    >>> res.pvalues.round(4)  # Holm-adjusted across the three groups
    group
    a    0.1049
    b    0.9098
    c    0.1142
    Name: p_adjusted, dtype: float64
    >>> res.reject.tolist()
    [False, False, False]
    >>> res.alpha = 0.01
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'alpha'
    """

    _keys = ("group", "metric")
    _frame_type = MatchFrame

    def _row_keys(self):
        if self.frame["metric"].nunique() <= 1:
            return ["group"]
        return list(self._keys)


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        **_OPTIONS,
    }
)
def match_test(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    reference="rest",
    metric="tpr",
    null="two-sample",
    method="auto",
    alternative="two-sided",
    reference_uncertainty=False,
    reference_prior=0.5,
    correction="holm",
    family="all",
    smoothing=None,
    conditional=True,
    alpha=0.05,
    ci=0.95,
    n_draws=100_000,
    random_state=None,
    pos_label=1,
):
    """MATCH test: is each group's score consistent with the reference at its size?

    **The default law** (``null="two-sample"``) tests the metric it names against
    a reference that is itself a sample. For a proportion -- a binomial metric
    ``(c_i + c_j) / n`` or a joint ratio such as TPR ``= TP / (TP + FN)`` -- the
    group's numerator ``x`` of its denominator ``k`` (its positives for TPR, its
    predicted positives for PPV, its size for accuracy) is compared with the
    reference's ``y`` of ``m``, conditional on both denominators, by the pooled
    score statistic of two proportions: Berger and Boos' exact unconditional test
    (the supremum of the tail over a ``1 - 10^-6`` confidence interval of the
    common rate, plus ``10^-6``) where the smaller sample's count has a variance
    below 100 and at most 1,000 people, the exact law at the pooled rate (the
    E test) otherwise. ``p_lower_tail`` and ``p_upper_tail`` are the one-sided
    p-values and the two-sided p-value is twice the smaller (as
    :func:`scipy.stats.boschloo_exact`). A difference in prevalence or in the
    number of predicted positives is therefore not read as a TPR or PPV gap, and
    the reference's own noise is not read as the group's: the size holds at every
    group and reference size (the user guide's calibration page gives the
    measured sizes and power). Metrics that are not proportions (``f1``,
    ``mcc``, ``pt``, ``mb``, ...) are tested by the exact permutation law of the
    group's matrix within the true classes (the group's positives and negatives
    fixed, its true and false positives drawn without replacement from the
    pooled ones), enumerated, or drawn ``n_draws`` times for large groups. A
    reference that contains the group (``reference="total"``) is replaced by
    the others, the same comparison with an independent sample.

    **The published law** (``null="fixed-reference"``): the group's confusion
    matrix is drawn from the reference group's proportions ``p = CM_ref /
    sum(CM_ref)``, taken as known: ``CM ~ Multinomial(n, p)`` (or the
    Dirichlet-multinomial with ``reference_uncertainty``), with the tails
    ``P(S <= s)``, ``P(S >= s)`` and ``P(undefined)`` of the score's law at the
    group's size; ``method``, ``reference_uncertainty``, ``reference_prior`` and
    ``conditional`` choose among its variants. It reproduces the published
    values; it reads the reference's noise and differences in prevalence as gaps
    (its false-alarm rate is far above ``alpha`` against small references).

    The result also holds the interval of the group's metric and the range of
    scores the test accepts at the group's size. A small p-value says the group's
    score is unlikely to be sample-size noise around the reference; a large one
    does *not* show the groups are alike (small groups have little power).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels (row-level input).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels for row-level input.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group integer matrices instead of rows; see
        :func:`~sklearn_smallfair.check_group_counts`. Any size: the counts of a
        group of 10^12 people are tested in milliseconds.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        The reference of each group; see :func:`~sklearn_smallfair.reference_counts`.
    metric : str, Metric or list or tuple of them, default="tpr"
        Single-group metric name(s) or aliases, or
        :class:`~sklearn_smallfair.metrics.Metric` objects.
    null : {"two-sample", "fixed-reference"}, default="two-sample"
        The null law: the group against a reference that is a sample (the
        default, calibrated), or the group's matrix drawn from known reference
        proportions (the published test). See above.
    method : {"auto", "exact", "saddlepoint", "normal", "beta", "enumerate", \
            "montecarlo"}, default="auto"
        The algorithm of the published law (``null="fixed-reference"``; the
        two-sample law takes only ``"auto"``):

        - ``"exact"``: binomial metrics by the binomial CDF (one regularized
          incomplete beta function, any ``n``); marginal benefit and joint-ratio
          metrics by the sum over the denominator ``K = c_i + c_j`` of binomial
          weights times binomial CDFs at integer thresholds (DESIGN 5.3),
          restricted to the window of ``K`` outside which the binomial mass is
          below ``WINDOW_MASS`` = 1e-15 (Bernstein's inequality: the mean +-
          about 8.4 standard deviations, ``O(sqrt(n))`` terms), each term from
          the previous one by recursion, all groups computed together. With
          ``reference_uncertainty`` the beta-binomial sums run over all ``n + 1``
          values. Refused above ``EXACT_MAX_TERMS`` (10^7) terms per group;
        - ``"saddlepoint"``: the Lugannani-Rice approximation, with Daniels'
          continuity correction, of the linear form of counts that decides the
          event (``S <= a/b`` is ``(b - a) c_i - a c_j <= 0``), for the same
          metrics; no ``reference_uncertainty`` variant;
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
        - ``"auto"``: by cost, per group (the ``method`` column says which).
          Binomial metrics: ``"exact"`` at any size. ``mb`` and joint ratios:
          ``"exact"`` while the window has at most ``AUTO_EXACT_MAX_TERMS``
          (500,000) terms (``n q (1 - q) <= 9e8``: ``n`` up to about 10^10 for
          rates near 0.1), ``"saddlepoint"`` beyond. With
          ``reference_uncertainty`` (sums of ``n + 1`` terms): ``"exact"`` up to
          500,000 people, ``"montecarlo"`` beyond. Other metrics (``f1``,
          ``mcc``, ``pt``, ...): ``"enumerate"`` up to ``AUTO_ENUMERATE_MAX_N``
          (200) people, ``"montecarlo"`` beyond. Every choice returns in under a
          second per metric and group at any size up to 10^12 and beyond
          (Monte Carlo: in proportion to ``n_draws``). Where ``auto`` uses it,
          the saddle-point approximation is within 1e-10 of the exact law for
          ``mb`` and within about 1e-6 for joint ratios, whose discrete law it
          smooths (the user guide lists the errors measured at each size).
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        ``"two-sided"``: ``min(1, 2 min(lower, upper))``; ``"less"``: ``lower``
        (the group scores lower than the reference would); ``"greater"``: ``upper``.
    reference_uncertainty : bool, default=False
        Treat the reference proportions as uncertain:
        ``p ~ Dirichlet(CM_ref + reference_prior)``, so the null law is
        Dirichlet-multinomial (beta-binomial pieces in the exact formulas, exactly).
        Only with ``null="fixed-reference"`` (the default law already treats the
        reference as a sample).
    reference_prior : float, default=0.5
        Dirichlet pseudo-count (finite, >= 0) added to every reference cell (0.5
        is Jeffreys' prior). Only used with ``reference_uncertainty=True``.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison adjustment (see :func:`adjust_pvalues`); ``None`` is
        the same as ``"none"`` (no adjustment). The same values and default as
        every test of the package.
    family : {"all", "metric"}, default="all"
        The family of ``correction``: every group x metric tested (the chance of
        any false "gap" is at most ``alpha``), or each metric's groups on their
        own.
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        Test the smoothed score: the observed and the null matrices are smoothed
        toward the same reference.
    conditional : bool, default=True
        Percentiles conditional on the metric being defined (renormalised). With
        ``False`` they are unnormalised (the published form):
        ``p_lower_tail + p_upper_tail + P(undefined) >= 1``. Only with
        ``null="fixed-reference"``.
    alpha : float in (0, 1), default=0.05
        Level for the ``reject`` column.
    ci : float in (0, 1) or None, default=0.95
        Level of the interval of the group's metric (``score_ci_low``,
        ``score_ci_high``) and of the reference range at the group's size
        (``reference_range_low``, ``reference_range_high``; see
        :class:`MatchResult`). The interval is computed as by
        :func:`~sklearn_smallfair.metrics.group_metrics` with ``ci_method="auto"``
        (Wilson for proportions; the Dirichlet posterior, with the smoothing's
        prior, for a smoothed score and for metrics that are not proportions,
        from 2,000 draws seeded by ``random_state``). A small group's score is
        shown with its uncertainty by default; ``None`` leaves the columns out.
    n_draws : int in [1, MAX_N_DRAWS], default=100_000
        Number of Monte Carlo draws per group; at most ``MAX_N_DRAWS`` (10^8,
        about a minute per group).
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
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
    The Black group's TPR and PPV in the published COMPAS tables, against all
    other defendants (the default law: the group's positives, or predicted
    positives, against the others'):

    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> t = load_published_confusion_matrices("COMPAS").set_index("group")
    >>> cells = ["TP", "FN", "FP", "TN"]
    >>> black = t.loc[["Black"], cells]
    >>> rest = t.loc["ALL", cells] - t.loc["Black", cells]
    >>> res = match_test(counts=black, reference=rest, metric=["tpr", "ppv"])
    >>> res.frame[["metric", "n", "score", "reference_score", "p_value",
    ...            "method"]].round(4)
      metric     n   score  reference_score  p_value       method
    0    tpr  3178  0.6163           0.3959   0.0000  berger-boos
    1    ppv  3178  0.2074           0.1731   0.0673       e-test

    The published law (``null="fixed-reference"``) on its worked example: a
    binomial metric at n = 100 whose reference rate is 0.75, taken as known, and
    whose observed count is 80.

    >>> res = match_test(counts={"g": [40, 40, 10, 10]}, reference=[75, 0, 0, 25],
    ...                  metric="prev", null="fixed-reference")
    >>> round(float(res.frame["p_lower_tail"].iloc[0]), 4)
    0.9005
    >>> res = match_test(counts={"g": [40, 40, 10, 10]}, reference=[75, 0, 0, 25],
    ...                  metric="prev", null="fixed-reference", method="normal",
    ...                  random_state=0)
    >>> round(float(res.frame["p_lower_tail"].iloc[0]), 4)
    0.898

    The group's score with its 95 % interval, and the central 95 % range of the
    scores of groups of 100 drawn from the known reference:

    >>> print(res.frame[["score", "score_ci_low", "score_ci_high",
    ...                  "reference_range_low", "reference_range_high"]]
    ...       .round(3).to_string(index=False))
     score  score_ci_low  score_ci_high  reference_range_low  reference_range_high
       0.8         0.708          0.873                 0.67                  0.83

    Any size: the published law sums the exact law over a window of the
    denominator while that is cheap, and switches to the saddle-point
    approximation beyond.

    >>> big = {"n=10^7": [355_090, 539_293, 1_691_087, 7_414_530],
    ...        "n=10^12": [35_409_235_409, 54_029_104_029, 169_108_669_109,
    ...                    741_452_991_453]}
    >>> res = match_test(counts=big, reference=[116, 177, 554, 2429],
    ...                  null="fixed-reference")
    >>> res.frame[["group", "score", "reference_score", "p_value", "method"]]
         group     score  reference_score   p_value       method
    0   n=10^7  0.397022         0.395904  0.030659        exact
    1  n=10^12  0.395907         0.395904  0.171476  saddlepoint

    Against the same reference as a sample of 3,276 people, neither is a gap:

    >>> match_test(counts=big, reference=[116, 177, 554, 2429]).frame[
    ...     "p_value"].round(3).tolist()
    [0.992, 1.0]
    """
    correction = check_correction(correction)
    metrics = get_metrics(metric, name="metric")
    _check_options(null, method, metrics, reference_uncertainty, conditional, smoothing)
    smoothing = check_smoothing(smoothing)
    groups, cms, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, None, pos_label
    )
    cms = _check_integer_counts(cms)
    seed = resolve_seed(random_state)
    refs = reference_counts(cms, reference, groups=groups).astype(np.float64)
    if null == "fixed-reference":  # the two-sample law counts the reference's noise
        warn_small_references(
            refs,
            groups,
            what="The MATCH test",
            hint="reference_uncertainty=True",
            parameter=None,
        )
    if smoothing is not None:
        # learned once on the groups (lam="auto"), then fixed for every law
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReferenceWarning)
            smoothing = clone(smoothing).fit(cms, refs)
    if null == "two-sample":
        frames = [
            _test_two_sample(
                m,
                cms,
                refs,
                reference,
                groups,
                smoothing,
                alternative,
                ci,
                int(n_draws),
                seed,
            )
            for m in metrics
        ]
        return _finish(frames, correction, family, alpha)
    base = Batch(
        counts=cms,
        reference=refs,
        score=np.full(cms.shape[0], np.nan),
        smoothing=smoothing,
        dirichlet=_dirichlet(refs, reference_uncertainty, reference_prior),
        conditional=bool(conditional),
        n_draws=int(n_draws),
        labels=tuple(groups),
        seed=seed,
    )
    plans = [(m, _choose_method(m, method, base, groups)) for m in metrics]
    frames = [
        _test_metric(m, methods, base, groups, alternative, ci) for m, methods in plans
    ]
    return _finish(frames, correction, family, alpha)


def _finish(frames, correction, family, alpha):
    """The metrics' rows together, adjusted over the family, as a result."""
    frame = pd.concat(frames, ignore_index=True)
    frame["p_adjusted"] = np.nan
    if family == "all":
        frame["p_adjusted"] = adjust_pvalues(
            frame["p_value"].to_numpy(dtype=float), correction
        )
    else:
        for name in frame["metric"].unique():
            sel = (frame["metric"] == name).to_numpy()
            frame.loc[sel, "p_adjusted"] = adjust_pvalues(
                frame.loc[sel, "p_value"].to_numpy(dtype=float), correction
            )
    for column in ("p_lower_tail", "p_upper_tail", "p_value", "p_adjusted"):
        frame[column] = floor_pvalues(frame[column])
    columns = [
        c
        for c in COLUMNS
        if c in frame.columns
        and (c != "se" or frame["method"].isin(["montecarlo", "permutation-mc"]).any())
    ]
    return MatchResult(frame[columns], float(alpha))


def _score_interval(metric, counts, reference, smoothing, labels, seed, ci):
    """The interval of the groups' (smoothed) metric at level ``ci``."""
    smoothed = smoothing is not None
    prior = None
    if smoothed:  # the smoothed score is the metric of c + offset / scale
        scale, offset = smoothing.coefficients(
            counts.sum(axis=-1).astype(np.float64), reference
        )
        prior = np.broadcast_to(offset / scale, counts.shape)
    return column_interval(
        metric,
        counts,
        method=resolve_ci_method(metric, "auto", smoothed=smoothed),
        alpha=1.0 - ci,
        n_draws=DEFAULT_N_DRAWS,
        seed=seed,
        labels=labels,
        prior=prior,
    )


def _intervals(metric, base, groups, observed, methods, ci):
    """The interval of the groups' metric and the reference range at their size."""
    if ci is None:
        return {}
    labels = np.asarray(groups, dtype=object)
    low, high = _score_interval(
        metric, base.counts, base.reference, base.smoothing, labels, base.seed, ci
    )
    undefined = np.isnan(observed)
    ref_low, ref_high = _reference_range(metric, base, labels, methods, ci)
    return {
        "score_ci_low": np.where(undefined, np.nan, low),
        "score_ci_high": np.where(undefined, np.nan, high),
        "reference_range_low": ref_low,
        "reference_range_high": ref_high,
    }


def _reference_range(metric, base, labels, methods, ci):
    """Central ``ci`` range of the score of a group of the same size drawn from
    the reference law (the test's null law), conditional on it being defined.

    Exact (:func:`._planning.null_range`) where the test used ``method="exact"``
    on the plain multinomial law; elsewhere the quantiles of ``DEFAULT_N_DRAWS``
    null matrices (Dirichlet-multinomial with ``reference_uncertainty``, smoothed
    like the group's), each group from its own stream.
    """
    level = (1.0 - ci) / 2.0
    G = base.n.shape[0]
    low, high = np.full(G, np.nan), np.full(G, np.nan)
    if G > RANGE_MAX_GROUPS:
        return low, high
    total = base.reference.sum(axis=1)
    p = base.reference / np.where(total > 0, total, 1.0)[:, None]
    defined = (base.n > 0) & ~np.isnan(score(metric, base.reference))
    exact = (methods == "exact") & defined
    if base.smoothing is not None or base.dirichlet is not None:
        exact[:] = False
    if exact.any():
        low[exact], high[exact] = null_range(metric, base.n[exact], p[exact], level)
    for g in np.flatnonzero(defined & ~exact):  # seeding each group's stream
        rng = child_rng(base.seed, "reference range", labels[g], metric.name)
        probs = p[g]
        if base.dirichlet is not None:
            probs = rng.dirichlet(base.dirichlet[g], size=DEFAULT_N_DRAWS)
        draws = rng.multinomial(
            int(base.n[g]),
            probs,
            size=None if base.dirichlet is not None else DEFAULT_N_DRAWS,
        )
        values = score(
            metric, draws.astype(np.float64), base.smoothing, base.reference[g]
        )
        values = values[~np.isnan(values)]
        if values.size:
            low[g], high[g] = np.quantile(values, [level, 1.0 - level])
    return low, high


def _test_metric(metric, methods, base, groups, alternative, ci):
    """The rows of one metric: its laws on their groups, p-values, warnings."""
    observed = score(
        metric, base.counts.astype(np.float64), base.smoothing, base.reference
    )
    batch = replace(base, score=observed)
    tails = _run_laws(metric, methods, batch)
    _warn_untestable(metric, groups, observed, tails["lower"])
    p, se = _p_values(tails, alternative)
    return pd.DataFrame(
        {
            "group": list(groups),
            "n": base.n,
            "metric": metric.name,
            "score": observed,
            "reference_score": score(metric, base.reference),
            **_intervals(metric, base, groups, observed, methods, ci),
            "p_lower_tail": tails["lower"],
            "p_upper_tail": tails["upper"],
            "p_value": p,
            "p_undefined": tails["p_undefined"],
            "se": np.where(methods == "montecarlo", se, np.nan),
            "method": methods.astype(object),
        }
    )


def _test_two_sample(
    metric, cms, refs, reference, groups, smoothing, alternative, ci, n_draws, seed
):
    """The rows of one metric under the two-sample law (:mod:`._two_sample`)."""
    G = cms.shape[0]
    labels = np.asarray(groups, dtype=object)
    raw = score(metric, cms.astype(np.float64))
    observed = score(metric, cms.astype(np.float64), smoothing, refs)
    # the law compares the group with a sample independent of it: the total
    # holds the group, so the group is compared with the others
    others = cms.sum(axis=0) - cms if _is_total(reference) else refs
    others = np.rint(others).astype(np.int64)
    p_undefined = np.full(G, np.nan)
    se = np.full(G, np.nan)
    if family(metric) in ("binomial", "joint_ratio"):
        x, k = proportion_counts(metric, cms)
        y, m = proportion_counts(metric, others)
        lower, upper, exact = tails(x, k, y, m)
        methods = np.where(exact, "berger-boos", "e-test").astype(object)
        if metric.family == "joint_ratio":
            total = others.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                q = np.where(total > 0, m / np.where(total > 0, total, 1), np.nan)
            p_undefined = np.exp(cms.sum(axis=1) * np.log1p(-np.minimum(q, 1.0)))
        else:
            p_undefined = np.zeros(G)
        if alternative == "less":
            p = lower
        elif alternative == "greater":
            p = upper
        else:
            p = two_sided(lower, upper)
    else:
        ranged = ci is not None and G <= RANGE_MAX_GROUPS
        law = permutation_law(
            metric,
            cms,
            others,
            (1.0 - ci) / 2.0 if ranged else None,
            n_draws=n_draws,
            seed=seed,
            labels=labels,
        )
        lower, upper, p_undefined = law["lower"], law["upper"], law["p_undefined"]
        se, methods = law["se"], law["method"]
        p, se = _p_values(
            {"lower": lower, "upper": upper, "se_lower": se, "se_upper": se},
            alternative,
        )
    undefined = np.isnan(raw)
    lower, upper, p = (np.where(undefined, np.nan, v) for v in (lower, upper, p))
    _warn_untestable(metric, groups, raw, lower)
    columns = {
        "group": list(groups),
        "n": cms.sum(axis=1),
        "metric": metric.name,
        "score": observed,
        "reference_score": score(metric, refs.astype(np.float64)),
    }
    if ci is not None:
        low, high = _score_interval(metric, cms, refs, smoothing, labels, seed, ci)
        columns["score_ci_low"] = np.where(np.isnan(observed), np.nan, low)
        columns["score_ci_high"] = np.where(np.isnan(observed), np.nan, high)
        ref_low, ref_high = np.full(G, np.nan), np.full(G, np.nan)
        if G <= RANGE_MAX_GROUPS:
            if family(metric) in ("binomial", "joint_ratio"):
                ref_low, ref_high = acceptance_range(k, y, m, 1.0 - ci)
            else:
                ref_low, ref_high = law["low"], law["high"]
        columns["reference_range_low"] = ref_low
        columns["reference_range_high"] = ref_high
    columns.update(
        {
            "p_lower_tail": lower,
            "p_upper_tail": upper,
            "p_value": p,
            "p_undefined": p_undefined,
            "se": se,
            "method": methods,
        }
    )
    return pd.DataFrame(columns)


def _is_total(reference):
    return isinstance(reference, str) and reference == "total"


class MATCHTest(TestEstimator):
    """The MATCH test as a scikit-learn estimator.

    Holds the parameters of :func:`match_test`; :meth:`fit` checks them against
    ``_parameter_constraints``, runs the test and stores its results.

    Parameters
    ----------
    metric : str, Metric or list or tuple of them, default="tpr"
    null : {"two-sample", "fixed-reference"}, default="two-sample"
    method : str, default="auto"
    alpha : float in (0, 1), default=0.05
    ci : float in (0, 1) or None, default=0.95
    alternative : str, default="two-sided"
    reference : str, group label or array-like, default="rest"
    reference_uncertainty : bool, default=False
    reference_prior : float, default=0.5
    correction : str or None, default="holm"
    family : {"all", "metric"}, default="all"
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
    conditional : bool, default=True
    n_draws : int in [1, MAX_N_DRAWS], default=100_000
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
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
    >>> MATCHTest(conditional="no").fit(y_true, y_pred, sensitive_features=groups)
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: The 'conditional' ...
    """

    _parameter_constraints: dict = dict(_OPTIONS)

    def __init__(
        self,
        metric="tpr",
        null="two-sample",
        method="auto",
        alpha=0.05,
        alternative="two-sided",
        reference="rest",
        reference_uncertainty=False,
        reference_prior=0.5,
        correction="holm",
        family="all",
        smoothing=None,
        conditional=True,
        ci=0.95,
        n_draws=100_000,
        random_state=None,
        pos_label=1,
    ):
        self.metric = metric
        self.null = null
        self.method = method
        self.alpha = alpha
        self.alternative = alternative
        self.reference = reference
        self.reference_uncertainty = reference_uncertainty
        self.reference_prior = reference_prior
        self.correction = correction
        self.family = family
        self.smoothing = smoothing
        self.conditional = conditional
        self.ci = ci
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
        self._validate_params()
        return self._keep(
            match_test(
                y_true,
                y_pred,
                sensitive_features=sensitive_features,
                counts=counts,
                **self.get_params(deep=False),
            )
        )
