"""The MATCH test: is a group's score consistent with the reference at its size?

The default law (``null="two-sample"``) compares the group with a reference that
is itself a sample (:mod:`._two_sample`). Under the published law
(``null="fixed-reference"``), for a group of size ``n`` with observed score
``s = M(CM_group)`` and reference proportions ``p = CM_ref / sum(CM_ref)``, the
null law of the group's matrix is ``Multinomial(n, p)`` (or, with
``reference_uncertainty=True``, the Dirichlet-multinomial with ``alpha = CM_ref +
reference_prior``). The test reports the tail probabilities ``p_lower_tail =
P(S <= s)``, ``p_upper_tail = P(S >= s)`` and ``P(undefined)``, conditional on the
metric being defined unless ``conditional=False``, next to the interval of the
group's metric and the range of scores the reference law gives a group of its
size.

:func:`match_test` resolves its options and builds the rows of each metric
(:mod:`._match_rows`: a method for every (metric, group) chosen before any work,
then each method run once on all the groups given to it; the laws live in
:mod:`._match_laws`, one function per method with one signature); the rows are
adjusted for multiplicity into a :class:`MatchResult` (:mod:`._match_result`).
"""

import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._confusion import counts_have_labels, rows_or_counts
from .._frames import from_data
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
from .._random import resolve_seed
from .._references import reference_counts, warn_small_references
from .._validation import MAX_COUNT_TOTAL, check_smoothing
from ..exceptions import ReferenceWarning
from ..metrics import Metric, get_metric, get_metrics
from ..smoothing import BaseSmoothing
from ._match_batch import Batch, supports
from ._match_result import MatchResult, _finish
from ._match_rows import (
    AUTO_ENUMERATE_MAX_N,
    AUTO_EXACT_MAX_TERMS,
    ENUMERATE_MAX_N,
    EXACT_MAX_TERMS,
    _choose_method,
    _test_metric,
    _test_two_sample,
)
from ._multitest import CORRECTION, check_correction

__all__ = [
    "AUTO_ENUMERATE_MAX_N",
    "AUTO_EXACT_MAX_TERMS",
    "ENUMERATE_MAX_N",
    "EXACT_MAX_TERMS",
    "MAX_N_RESAMPLES",
    "MatchResult",
    "match_test",
]

#: Largest ``n_resamples``: 10^8 matrices take about a minute per group.
MAX_N_RESAMPLES = 100_000_000

METHODS = (
    "auto",
    "exact",
    "saddlepoint",
    "asymptotic",
    "beta",
    "enumerate",
    "montecarlo",
)
#: The null laws: the default two-sample law and the published one.
NULLS = ("two-sample", "fixed-reference")
ALTERNATIVES = ("two-sided", "less", "greater")
_HANDLES = {
    "exact": "binomial, joint-ratio metrics and mb",
    "saddlepoint": "binomial, joint-ratio metrics and mb",
    "asymptotic": "binomial metrics and mb",
    "beta": "joint-ratio metrics",
}

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
    "confidence_level": [Number(0, 1, closed="neither"), None],
    "n_resamples": [Whole(1, MAX_N_RESAMPLES)],
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


def _interval_inputs(metrics, cms, refs, smoothing, groups, seed):
    """What the result's ``confidence_interval`` needs, with the metrics by name
    so that the result pickles; None when a metric is not in the registry."""
    names = tuple(m.name for m in metrics)
    try:
        registered = all(get_metric(n) is m for n, m in zip(names, metrics))
    except (KeyError, ValueError):
        registered = False
    if not registered:
        return None
    labels = np.asarray(groups, dtype=object)
    return names, cms, refs, smoothing, labels, seed


def _check_integer_counts(counts):
    if counts.dtype.kind == "f":
        if counts.sum() >= MAX_COUNT_TOTAL:  # int64 would wrap around
            raise ValueError(
                f"counts total {counts.sum():.4g} people, at or above the bound "
                f"of 2**62 (about 4.6e18) on the MATCH test's integer counts: "
                f"the sums formed from them would overflow int64. Pass fewer or "
                f"smaller counts."
            )
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


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": [*COUNTS, None],
        **_OPTIONS,
        "data": "no_validation",
    }
)
def match_test(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
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
    confidence_level=0.95,
    n_resamples=100_000,
    random_state=0,
    pos_label=None,
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
    pooled ones), enumerated, or drawn ``n_resamples`` times for large groups. A
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
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        The reference of each group; see :func:`~sklearn_smallfair.reference_counts`.
    metric : str, Metric or list or tuple of them, default="tpr"
        Single-group metric name(s) or aliases, or
        :class:`~sklearn_smallfair.metrics.Metric` objects.
    null : {"two-sample", "fixed-reference"}, default="two-sample"
        The null law: the group against a reference that is a sample (the
        default, calibrated), or the group's matrix drawn from known reference
        proportions (the published test). See above.
    method : {"auto", "exact", "saddlepoint", "asymptotic", "beta", "enumerate", \
            "montecarlo"}, default="auto"
        The algorithm of the published law (``null="fixed-reference"``; the
        two-sample law takes only ``"auto"``):

        - ``"exact"``: binomial metrics by the binomial CDF (one regularized
          incomplete beta function, any ``n``); marginal benefit and joint-ratio
          metrics by the sum over the denominator ``K = c_i + c_j`` of binomial
          weights times binomial CDFs at integer thresholds,
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
        - ``"asymptotic"``: normal approximation with continuity correction for
          binomial metrics and ``mb`` (``z = (x + 0.5 - n mu) / sqrt(n sigma^2)``);
        - ``"beta"``: the published approximation for joint-ratio metrics,
          ``S ~ Beta(k theta + 1, k (1 - theta) + 1)`` with the group's observed
          denominator ``k = c_i + c_j`` and ``theta = p_i / (p_i + p_j)`` from the
          reference (a continuous law for a discrete score);
        - ``"enumerate"``: any metric, summing the pmf over all ``C(n + 3, 3)``
          matrices; refused for ``n > ENUMERATE_MAX_N`` (400);
        - ``"montecarlo"``: any metric and size, ``n_resamples`` simulated matrices;
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
          (Monte Carlo: in proportion to ``n_resamples``). Where ``auto`` uses it,
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
    confidence_level : float in (0, 1) or None, default=0.95
        Level of the interval of the group's metric (``score_low``,
        ``score_high``) and of the reference range at the group's size
        (``reference_range_low``, ``reference_range_high``; see
        :class:`MatchResult`). The interval is computed as by
        :func:`~sklearn_smallfair.metrics.group_metrics` with ``interval_method="auto"``
        (Wilson for proportions; the Dirichlet posterior, with the smoothing's
        prior, for a smoothed score and for metrics that are not proportions,
        from 2,000 draws seeded by ``random_state``). A small group's score is
        shown with its uncertainty by default; ``None`` leaves the columns out.
    n_resamples : int in [1, MAX_N_RESAMPLES], default=100_000
        Number of Monte Carlo draws per group; at most ``MAX_N_RESAMPLES`` (10^8,
        about a minute per group). Where a group's p-value is drawn, fewer than
        ``ceil(1 / alpha) - 1`` draws (``ceil(2 / alpha) - 1`` two-sided), with
        which no p-value can reach ``alpha``, are an error.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed for Monte Carlo; ``None`` for fresh entropy. Each (metric, group)
        draws from its own child seed derived from the group's label, so a
        group's result does not depend on which other groups are tested or in
        what order.
    pos_label : int, float, bool, str or None, default=None
        The positive class of row-level labels. ``None`` means ``1`` when the
        labels are ``{0, 1}`` or ``{-1, 1}`` (scikit-learn's rule); other labels
        need an explicit ``pos_label``.

    Returns
    -------
    result : MatchResult
        ``result.to_frame()``: one row per group (and metric).

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
    ...                  metric="prev", null="fixed-reference", method="asymptotic")
    >>> round(float(res.frame["p_lower_tail"].iloc[0]), 4)
    0.898

    The group's score with its 95 % interval, and the central 95 % range of the
    scores of groups of 100 drawn from the known reference:

    >>> print(res.frame[["score", "score_low", "score_high",
    ...                  "reference_range_low", "reference_range_high"]]
    ...       .round(3).to_string(index=False))
     score  score_low  score_high  reference_range_low  reference_range_high
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
    y_true, y_pred, sensitive_features, row_weight = from_data(
        data, y_true, y_pred, sensitive_features, counts=counts
    )
    correction = check_correction(correction)
    metrics = get_metrics(metric, name="metric")
    _check_options(null, method, metrics, reference_uncertainty, conditional, smoothing)
    smoothing = check_smoothing(smoothing)
    groups, cms, name = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, row_weight, pos_label
    )
    cms = _check_integer_counts(cms)
    seed = resolve_seed(random_state)
    refs = reference_counts(cms, reference, groups=groups).astype(np.float64)
    if null == "fixed-reference":  # the two-sample law counts the reference's noise
        warn_small_references(
            refs,
            # groups named by label; counts without labels by position
            groups if counts_have_labels(counts) else None,
            what="The MATCH test",
            hint="reference_uncertainty=True",
            parameter=None,
            reference=reference,
        )
    if smoothing is not None:
        # learned once on the groups (lam="auto"), then fixed for every law
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReferenceWarning)
            if getattr(smoothing, "requires_attributes", False):
                # intersectional groups' attributes, from their labels "a|b"
                index = pd.Index(groups, dtype=object, name=name)
                smoothing = clone(smoothing).fit(pd.DataFrame(cms, index=index))
            else:
                smoothing = clone(smoothing).fit(cms, refs)
    inputs = _interval_inputs(metrics, cms, refs, smoothing, groups, seed)
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
                confidence_level,
                int(n_resamples),
                seed,
            )
            for m in metrics
        ]
    else:
        base = Batch(
            counts=cms,
            reference=refs,
            score=np.full(cms.shape[0], np.nan),
            smoothing=smoothing,
            dirichlet=_dirichlet(refs, reference_uncertainty, reference_prior),
            conditional=bool(conditional),
            n_resamples=int(n_resamples),
            labels=tuple(groups),
            seed=seed,
        )
        plans = [(m, _choose_method(m, method, base, groups)) for m in metrics]
        frames = [
            _test_metric(m, methods, base, groups, alternative, confidence_level)
            for m, methods in plans
        ]
    return _finish(
        frames,
        correction,
        family,
        alpha,
        inputs,
        n_resamples=int(n_resamples),
        alternative=alternative,
    )
