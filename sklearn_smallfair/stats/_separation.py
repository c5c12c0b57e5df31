"""The separation test: equal true- and false-positive rates across groups.

*Separation* (equalized odds) asks whether the true- and false-positive rates of a
binary classifier are equal across groups. Comparative judgments, the same
question asked of ordered pairs, are tested in ``_comparative.py``.
"""

import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd
from scipy.special import ndtr

from .._confusion import rows_or_counts
from .._frames import from_data
from .._params import (
    COUNTS,
    POS_LABEL,
    RANDOM_STATE,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._proportion_intervals import fold_interval, newcombe_interval, sidak_level
from .._pvalues import adjust_family, floor_pvalues
from .._random import child_rng, resolve_seed
from .._stacklevel import user_stacklevel
from .._validation import format_label, format_labels
from ..exceptions import UndefinedGroupMetricWarning
from ._exact import (
    BERGER_BOOS_GAMMA,
    MAX_EXACT_N,
    barnard_exact_pvalues,
    score_statistic,
)
from ._match_result import check_draws_can_reject
from ._multitest import CORRECTION, check_correction, group_pairs
from ._permutation import two_sample_permutation_pvalues
from ._results import (
    ConfidenceInterval,
    PairwiseResult,
    family_pvalue,
    family_z,
)
from ._wald import wald_test

__all__ = ["SeparationResult", "separation_test"]

#: The tests of two rates ``method`` accepts.
METHODS = ("auto", "exact", "score", "wald", "permutation")
#: ``method="auto"`` uses the exact test when the smallest expected count of the
#: comparison under equal rates, ``min(n_a, n_b) min(p, 1 - p)`` with the pooled
#: rate ``p``, is below this (and the score test otherwise).
AUTO_MIN_EXPECTED = 10
#: Most label permutations of ``method="permutation"``.
MAX_RESAMPLES = 1_000_000

_PARAMS = {
    "alpha": [Number(0, 1, closed="neither")],
    "confidence_level": [Number(0, 1, closed="neither"), None],
    "correction": CORRECTION,
    "pos_label": POS_LABEL,
    "method": [StrOptions(set(METHODS))],
    "n_resamples": [Whole(100, MAX_RESAMPLES)],
    "random_state": RANDOM_STATE,
}


@dataclass(frozen=True, repr=False, eq=False)
class SeparationResult(PairwiseResult):
    """Result of :func:`separation_test`.

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one row per
    comparison of two groups on TPR or FPR, the p-values that decide it
    (``pvalues``) and one rejection rule, ``reject = pvalues <= alpha``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per test: ``metric`` (``"tpr"`` or ``"fpr"``), ``group_a``,
        ``group_b`` (the compared groups; ``a`` is the later of the sorted labels),
        ``n_a``, ``n_b`` (positives for TPR, negatives for FPR), ``value_a``,
        ``value_b``, ``difference`` (``value_a - value_b``), ``difference_low`` and
        ``difference_high`` (Newcombe's hybrid score interval of the difference at
        level ``confidence_level``; absent with ``confidence_level=None``),
        ``method`` (the test used for the row: ``"exact"``, ``"score"``, ``"wald"``
        or ``"permutation"``), ``z`` (the test statistic: the pooled score
        statistic, or the unpooled Wald statistic for ``"wald"``), ``p_value``,
        ``p_adjusted`` (within the metric's family of pairwise tests; equal to
        ``p_value`` with two groups) and ``reject`` (``p_adjusted <= alpha``).
    alpha : float
        Significance level.
    groups : pandas.DataFrame
        One row per group: ``group``, ``n``, ``n_pos``, ``n_neg``, ``tp``, ``fp``,
        ``tpr`` and ``fpr`` (NaN when undefined).
    correction : str or None
        Multiple-comparison correction within each family (None: none).
    method : {"auto", "exact", "score", "wald", "permutation"}
        The requested method; the test of each row is in ``frame["method"]``.
    equalized_odds : pandas.DataFrame or None
        One row per pair of groups: ``group_a``, ``group_b``, ``difference`` (the
        equalized-odds difference ``max(|TPR gap|, |FPR gap|)``), ``difference_low``
        and ``difference_high``: the image of the rectangle of the two gaps'
        Newcombe intervals, each at level ``sqrt(confidence_level)`` so that both
        hold jointly with probability ``confidence_level`` (Sidak: TPR and FPR come
        from the positives and the negatives), as in
        :func:`~sklearn_smallfair.metrics.disparity_intervals`. Its lower bound is
        0 when both gaps may be 0. None with ``confidence_level=None``.
    confidence_level : float or None
        Level of the intervals.

    Attributes
    ----------
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``(metric, group_a, group_b)`` in the order of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.
    violated : bool
        Whether any test rejects: ``min(p_value_tpr, p_value_fpr) <= alpha`` (NaN
        p-values are ignored).
    p_value_tpr, p_value_fpr : float
        P-values of H0t (equal TPR) and H0f (equal FPR). With more than two groups,
        the smallest adjusted p-value of the family.
    z_tpr, z_fpr : float
        Statistics of the two groups (positive when the second sorted group has
        the higher rate); NaN with more than two groups.

    Examples
    --------
    Group ``b`` has the lower TPR (1/4 against 3/4) and the higher FPR (2/4
    against 1/4); with 4 people per cell the exact test is used, and at
    ``alpha = 0.3`` the TPR test rejects:

    >>> from sklearn_smallfair.stats import separation_test
    >>> res = separation_test(
    ...     [1, 1, 1, 1, 0, 0, 0, 0] * 2,
    ...     [1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0],
    ...     sensitive_features=["a"] * 8 + ["b"] * 8, alpha=0.3)
    >>> res
    SeparationResult(violated=True, alpha=0.3, n_tests=2, n_rejected=1, \
p_value_tpr=0.2901, p_value_fpr=0.7276)
    >>> res.frame[["metric", "method", "z", "p_value"]].round(4)
      metric method      z  p_value
    0    tpr  exact -1.4142   0.2901
    1    fpr  exact  0.7303   0.7276
    >>> res.pvalues.round(4)
    metric  group_a  group_b
    tpr     b        a          0.2901
    fpr     b        a          0.7276
    Name: p_adjusted, dtype: float64
    >>> res.reject.tolist()
    [True, False]
    >>> bool((res.reject == (res.pvalues <= res.alpha)).all())
    True
    >>> res.alpha = 0.05
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'alpha'
    """

    _keys = ("metric", "group_a", "group_b")
    _family = "metric"
    _families = ("tpr", "fpr")

    groups: pd.DataFrame
    correction: str | None
    method: str = "auto"
    equalized_odds: pd.DataFrame | None = None
    confidence_level: float | None = None

    p_value_tpr = family_pvalue("tpr")
    p_value_fpr = family_pvalue("fpr")
    z_tpr = family_z("tpr")
    z_fpr = family_z("fpr")

    @validate_params({"confidence_level": [Number(0, 1, closed="neither")]})
    def confidence_interval(self, confidence_level=0.95):
        """Newcombe's interval of each TPR and FPR gap at another level.

        The interval of the columns ``difference_low`` and ``difference_high``,
        computed from the per-group counts at ``confidence_level`` (the
        ``confidence_interval`` of scipy's test results).

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.

        Returns
        -------
        ci : ConfidenceInterval
            ``ci.low`` and ``ci.high``: :class:`pandas.Series` indexed like
            :attr:`pvalues`, by ``(metric, group_a, group_b)``.

        Examples
        --------
        >>> from sklearn_smallfair.stats import separation_test
        >>> res = separation_test(counts={"a": [48, 12, 12, 48],
        ...                               "b": [20, 20, 14, 26]})
        >>> ci = res.confidence_interval(confidence_level=0.9)
        >>> ci.low.round(3).tolist(), ci.high.round(3).tolist()
        ([-0.445, 0.003], [-0.141, 0.298])
        """
        frame, groups = self.frame, self.groups
        where = pd.Index(groups["group"])
        a = where.get_indexer(frame["group_a"])
        b = where.get_indexer(frame["group_b"])
        tpr = (frame["metric"] == "tpr").to_numpy()
        cells = {c: groups[c].to_numpy(np.float64) for c in ("tp", "fp")}
        sizes = {c: groups[c].to_numpy(np.float64) for c in ("n_pos", "n_neg")}
        hits = (
            np.where(tpr, cells["tp"][a], cells["fp"][a]),
            np.where(tpr, cells["tp"][b], cells["fp"][b]),
        )
        size = (
            np.where(tpr, sizes["n_pos"][a], sizes["n_neg"][a]),
            np.where(tpr, sizes["n_pos"][b], sizes["n_neg"][b]),
        )
        low, high = newcombe_interval(
            hits[0], size[0], hits[1], size[1], 1.0 - confidence_level
        )
        index = self.pvalues.index
        return ConfidenceInterval(
            pd.Series(low, index=index, name="difference_low"),
            pd.Series(high, index=index, name="difference_high"),
        )


# --- the tests of two rates ------------------------------------------------------
#: The tests a comparison can use, by code (the ``method`` column shows the name).
_TESTS = np.array(["exact", "score", "wald", "permutation"], dtype=object)
_EXACT, _SCORE, _WALD, _PERMUTATION = range(4)


def _choose(method, x_a, n_a, x_b, n_b, whole):
    """The test of each comparison, as codes into ``_TESTS``."""
    rows = x_a.shape[0]
    fixed = {"score": _SCORE, "wald": _WALD, "permutation": _PERMUTATION}
    if method in fixed:
        return np.full(rows, fixed[method], dtype=np.int8)
    small = np.minimum(n_a, n_b)
    feasible = small <= MAX_EXACT_N
    if method == "exact":
        return np.where(feasible, _EXACT, _SCORE).astype(np.int8)
    if not whole:  # fractional weights: no exact law of the counts
        return np.full(rows, _SCORE, dtype=np.int8)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (x_a + x_b) / (n_a + n_b)
    expected = small * np.minimum(pooled, 1.0 - pooled)
    exact = feasible & ~(expected >= AUTO_MIN_EXPECTED)  # NaN (empty) -> exact
    return np.where(exact, _EXACT, _SCORE).astype(np.int8)


def _compare(x_a, n_a, x_b, n_b, used, *, n_resamples, seed, keys):
    """``(z, p)`` of each comparison by its test (``used``, codes)."""
    defined = (n_a > 0) & (n_b > 0)
    z = np.where(defined, score_statistic(x_a, n_a, x_b, n_b), np.nan)
    p = 2.0 * ndtr(-np.abs(z))  # the score test; NaN where undefined
    wald = used == _WALD
    if wald.any():
        z[wald], p[wald] = wald_test(x_a[wald], n_a[wald], x_b[wald], n_b[wald])
    exact = np.flatnonzero((used == _EXACT) & defined)
    if exact.size:
        p[exact] = barnard_exact_pvalues(
            x_a[exact], n_a[exact], x_b[exact], n_b[exact], gamma=BERGER_BOOS_GAMMA
        )
    for k in np.flatnonzero((used == _PERMUTATION) & defined):
        p[k] = two_sample_permutation_pvalues(
            x_a[k],
            n_a[k],
            x_b[k],
            n_b[k],
            n_resamples=n_resamples,
            rng=child_rng(seed, "separation", *keys(k)),
        )
    return z, p


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": [*COUNTS, None],
        "sample_weight": ["array-like", str, None],
        "reference": [None, str, Real],
        **_PARAMS,
        "data": "no_validation",
    }
)
def separation_test(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
    reference=None,
    alpha=0.05,
    correction="holm",
    sample_weight=None,
    pos_label=None,
    method="auto",
    n_resamples=9999,
    random_state=0,
    confidence_level=0.95,
):
    """Test separation (equal TPR and FPR across groups) of a binary classifier.

    For two groups, H0t: ``TPR_1 = TPR_0`` is tested on the positives of the two
    groups and H0f: ``FPR_1 = FPR_0`` on their negatives, each with a two-sided
    test of two proportions, and separation is declared violated when
    ``min(p_t, p_f) <= alpha``. Under no bias the two tests are independent, so
    this joint verdict has a false-positive rate of ``1 - (1 - alpha)^2`` (0.0975
    at ``alpha = 0.05``).

    Group "1" is the second of the sorted group labels (``1`` for 0/1, ``True``
    for booleans, ``"b"`` for ``"a"``/``"b"``) and group "0" the first; the
    statistics ``z`` are positive when group "1" has the higher rate.

    With more than two groups every pair of groups is compared (for TPR and for
    FPR), or each group against a reference (``reference``); the p-values of each
    family (TPR, FPR) are adjusted with ``correction``, and the headline p-values
    are the smallest adjusted p-value of each family.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels (row-level input).
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
default=None
        Group labels for row-level input; at least two groups. Several columns
        define intersectional groups ``"a|b"``.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group confusion counts ``(TP, FN, FP, TN)`` instead of rows, with the
        group labels (see :func:`~sklearn_smallfair.check_group_counts`), as
        :func:`match_test` takes them. The result is the one the rows give.
        Fractional counts are treated like fractional ``sample_weight``.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    reference : None, "rest" or a group label, default=None
        What each group is compared with. ``None``: every pair of groups
        (``K (K - 1) / 2`` comparisons per rate). ``"rest"``: each group against
        everyone else (the people of all other groups pooled; ``K`` comparisons,
        ``group_b`` is ``"rest"``). A group label: each other group against that
        group (``K - 1`` comparisons). With two groups every choice is the one
        comparison of the two. Fewer comparisons make a smaller family to
        correct, so each test keeps more power.
    alpha : float, default=0.05
        Significance level of ``violated`` and ``reject``, in (0, 1).
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison adjustment within each family of pairwise tests (see
        :func:`adjust_pvalues`); with two groups there is one test per family and
        nothing to adjust. ``None`` is the same as ``"none"`` (no adjustment).
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights: the counts are weighted sums, so integer weights equal
        repeating rows. Fractional weights have no exact law: ``method="auto"``
        then uses the score test, and ``"exact"`` and ``"permutation"`` refuse
        them.
    pos_label : int, float, bool, str or None, default=None
        The positive class of row-level labels. ``None`` means ``1`` when the
        labels are ``{0, 1}`` or ``{-1, 1}`` (scikit-learn's rule); other labels
        need an explicit ``pos_label``.
    method : {"auto", "exact", "score", "wald", "permutation"}, default="auto"
        The test of two rates ``x_a / n_a`` and ``x_b / n_b``:

        - ``"exact"``: an exact unconditional test ordered by the pooled score
          statistic: the p-value is the largest probability of a statistic at
          least as extreme over the common rates in a 99.9 % confidence interval
          of the pooled rate, plus 0.001 (Berger and Boos' form of Barnard's
          test, which does not let rates the data exclude make it conservative).
          Its size is at most ``alpha`` at every sample size. Computed for
          comparisons whose smaller group has at most 1,000 people in the label
          stratum; larger ones (where the score test is accurate) use the score
          test, with a warning.
        - ``"score"``: the two-proportion score (z) test, with the variance under
          the null ``p (1 - p) (1 / n_a + 1 / n_b)`` of the pooled rate ``p``.
        - ``"wald"``: the Wald z-test with unpooled variances ``mu (1 - mu) / n``
          (:func:`~sklearn_smallfair.stats._wald.wald_test`): **the published
          test**, to reproduce the paper. When a small group's rate is 0 or 1 its
          variance is 0, and the test then rejects far more often than
          ``alpha`` under the null (half the time with 5 negatives and an FPR of
          0.12; see the user guide's calibration table).
        - ``"permutation"``: the group labels of the two compared groups are
          permuted ``n_resamples`` times among their positives (TPR) or their
          negatives (FPR); the p-value ``(1 + #{|z*| >= |z|}) / (1 + B)`` of the
          score statistic has size at most ``alpha`` by construction.
        - ``"auto"``: the exact test when the smallest expected count of the
          comparison under equal rates, ``min(n_a, n_b) min(p, 1 - p)`` with the
          pooled rate ``p``, is below 10, the score test otherwise (there its
          size is within half a point of ``alpha``).

        The column ``method`` of the result says which test each row used.
    n_resamples : int, default=9999
        Label permutations per comparison with ``method="permutation"`` (100 to
        1,000,000). A permutation p-value is at least ``1 / (n_resamples + 1)``:
        fewer than ``ceil(1 / alpha) - 1`` permutations, with which no test can
        reject at ``alpha``, are an error.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
default=0
        Seed of the permutations (``method="permutation"`` only); ``None`` for
        fresh entropy. Each comparison
        draws from its own stream keyed by the metric and the two group labels,
        so its p-value does not depend on the other groups.
    confidence_level : float in (0, 1) or None, default=0.95
        Level of the intervals: Newcombe's hybrid score interval of each TPR and
        FPR gap (columns ``difference_low``, ``difference_high``; it keeps
        its level at small counts and with rates of 0 or 1, where the Wald
        interval collapses), and the interval of the equalized-odds difference of
        each pair (``result.equalized_odds``). ``None`` leaves them out.

    Returns
    -------
    result : SeparationResult
        ``result.violated``, ``result.p_value_tpr``, ``result.p_value_fpr``, the
        per-group table ``result.groups`` and the tests ``result.to_frame()``.

    See Also
    --------
    comparative_separation_test : The same question for comparative judgments.

    Examples
    --------
    A group of 10 people classified perfectly (TPR 1, FPR 0) against a group of
    1,000 with TPR 0.8 and FPR 0.1. The published Wald test calls this a
    violation with a p-value of ``5e-29``: the variance of a rate of 0 or 1 is 0.
    The default uses the exact test for these small cells:

    >>> import numpy as np
    >>> from sklearn_smallfair.stats import separation_test
    >>> y_true = np.r_[np.ones(500), np.zeros(500), np.ones(5), np.zeros(5)]
    >>> y_pred = np.r_[np.ones(400), np.zeros(100), np.ones(50), np.zeros(450),
    ...                np.ones(5), np.zeros(5)]
    >>> groups = np.r_[["big"] * 1000, ["small"] * 10]
    >>> res = separation_test(y_true, y_pred, sensitive_features=groups)
    >>> res.frame[["metric", "n_a", "n_b", "value_a", "value_b", "method",
    ...            "p_value"]].round(4)
      metric  n_a  n_b  value_a  value_b method  p_value
    0    tpr    5  500      1.0      0.8  exact   0.3566
    1    fpr    5  500      0.0      0.1  exact   0.6298
    >>> res.violated
    False
    >>> wald = separation_test(y_true, y_pred, sensitive_features=groups,
    ...                        method="wald")
    >>> wald.violated, f"{wald.p_value_tpr:.2g}"
    (True, '5.1e-29')

    With larger cells the score test is used:

    >>> y_true = [1] * 60 + [0] * 60 + [1] * 40 + [0] * 40
    >>> y_pred = ([1] * 48 + [0] * 12 + [1] * 12 + [0] * 48
    ...           + [1] * 20 + [0] * 20 + [1] * 14 + [0] * 26)
    >>> groups = ["a"] * 120 + ["b"] * 80
    >>> res = separation_test(y_true, y_pred, sensitive_features=groups)
    >>> res.groups
      group    n  n_pos  n_neg  tp  fp  tpr   fpr
    0     a  120     60     60  48  12  0.8  0.20
    1     b   80     40     40  20  14  0.5  0.35
    >>> res.frame[["metric", "method", "z", "p_value"]].round(4)
      metric method       z  p_value
    0    tpr  score -3.1506   0.0016
    1    fpr  score  1.6753   0.0939

    The gaps with their 95 % Newcombe intervals, and the equalized-odds difference
    with its interval:

    >>> res.frame[["metric", "difference", "difference_low",
    ...            "difference_high"]].round(3)
      metric  difference  difference_low  difference_high
    0    tpr       -0.30             -0.469              -0.111
    1    fpr        0.15             -0.024               0.325
    >>> res.equalized_odds.round(3)
      group_a group_b  difference  difference_low  difference_high
    0       b       a         0.3   0.085     0.49

    The same test from per-group counts ``(TP, FN, FP, TN)``:

    >>> counts = {"a": [48, 12, 12, 48], "b": [20, 20, 14, 26]}
    >>> separation_test(counts=counts).frame["p_value"].round(4).tolist()
    [0.0016, 0.0939]
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight, counts=counts
    )
    correction = check_correction(correction)
    groups, counts, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
    )
    side_a, side_b, label_a, label_b = _comparisons(groups, counts, reference)
    whole = counts.dtype.kind in "iub" or bool(
        np.all(counts == np.round(counts)) and counts.max() < 2**53
    )
    if whole:
        counts = counts.astype(np.int64)
        side_a, side_b = side_a.astype(np.int64), side_b.astype(np.int64)
    elif method in ("exact", "permutation"):
        raise ValueError(
            f"method={method!r} needs whole counts, but the counts (or "
            f"sample_weight) are fractional; use method='auto' or 'score' (or "
            f"whole frequency weights)."
        )
    tp, fn, fp, tn = counts.T
    n_pos, n_neg = tp + fn, fp + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n_pos > 0, tp / n_pos, np.nan)
        fpr = np.where(n_neg > 0, fp / n_neg, np.nan)
    table = pd.DataFrame(
        {
            "group": groups,
            "n": n_pos + n_neg,
            "n_pos": n_pos,
            "n_neg": n_neg,
            "tp": tp,
            "fp": fp,
            "tpr": tpr,
            "fpr": fpr,
        }
    )
    for rate, size, what in (("TPR", n_pos, "positives"), ("FPR", n_neg, "negatives")):
        if (size == 0).any():
            warnings.warn(
                f"{rate} is undefined (no {what}) for group(s) "
                f"{', '.join(format_label(v) for v in groups[size == 0])}, so the "
                f"tests involving them are NaN.",
                UndefinedGroupMetricWarning,
                stacklevel=user_stacklevel(),
            )
    seed = resolve_seed(random_state) if method == "permutation" else None
    # a permutation p-value is at least 1 / (n_resamples + 1)
    check_draws_can_reject(
        [method],
        int(n_resamples),
        float(alpha),
        two_sided=False,
        simulated=("permutation",),
    )
    frames = []
    for metric, hit, miss in (("tpr", 0, 1), ("fpr", 2, 3)):
        x_a, x_b = side_a[:, hit], side_b[:, hit]
        n_a, n_b = x_a + side_a[:, miss], x_b + side_b[:, miss]
        with np.errstate(divide="ignore", invalid="ignore"):
            value_a = np.where(n_a > 0, x_a / np.where(n_a > 0, n_a, 1), np.nan)
            value_b = np.where(n_b > 0, x_b / np.where(n_b > 0, n_b, 1), np.nan)
        used = _choose(method, x_a, n_a, x_b, n_b, whole)
        if method == "exact" and (used == _SCORE).any():
            big = used == _SCORE
            warnings.warn(
                f"method='exact' enumerates the smaller group of a comparison, at "
                f"most {MAX_EXACT_N} people; the {metric.upper()} comparisons of "
                f"{_pair_names(label_a[big], label_b[big])} use the score test "
                f"(accurate at these sizes).",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        z, p = _compare(
            x_a,
            n_a,
            x_b,
            n_b,
            used,
            n_resamples=n_resamples,
            seed=seed,
            keys=lambda k, m=metric: (m, label_a[k], label_b[k]),
        )
        columns = {
            "metric": metric,
            "group_a": label_a,
            "group_b": label_b,
            "n_a": n_a,
            "n_b": n_b,
            "value_a": value_a,
            "value_b": value_b,
            "difference": value_a - value_b,
        }
        if confidence_level is not None:
            low, high = newcombe_interval(x_a, n_a, x_b, n_b, 1.0 - confidence_level)
            columns.update(difference_low=low, difference_high=high)
        columns.update(
            method=_TESTS[used],
            z=z,
            p_value=floor_pvalues(p),
            p_adjusted=floor_pvalues(adjust_family(p, correction)),
        )
        frames.append(pd.DataFrame(columns))
    return SeparationResult(
        frame=pd.concat(frames, ignore_index=True),
        alpha=alpha,
        groups=table,
        correction=correction,
        method=method,
        equalized_odds=_equalized_odds(
            side_a, side_b, label_a, label_b, confidence_level
        ),
        confidence_level=None if confidence_level is None else float(confidence_level),
    )


def _comparisons(groups, counts, reference):
    """The two sides of every comparison: counts ``(n_comparisons, 4)`` of side
    a and side b, and their labels (see ``reference`` of :func:`separation_test`).
    """
    a, b = group_pairs(groups)  # also refuses a single group
    if groups.shape[0] == 2 or reference is None:
        return counts[a], counts[b], groups[a], groups[b]
    if isinstance(reference, str) and reference == "rest":
        label_b = np.empty(groups.shape[0], dtype=object)
        label_b[:] = "rest"
        return counts, counts.sum(axis=0) - counts, groups, label_b
    at = np.flatnonzero(_same_label(groups, reference))
    if at.size != 1:
        raise ValueError(
            f"reference={reference!r} is not one of the groups "
            f"{format_labels(groups)}; pass None (every pair), 'rest' (each group "
            f"against everyone else) or one of the group labels."
        )
    others = np.flatnonzero(np.arange(groups.shape[0]) != at[0])
    label_b = np.empty(others.shape[0], dtype=object)
    label_b[:] = [groups[at[0]]] * others.shape[0]
    return (
        counts[others],
        counts[at[0]][None].repeat(others.size, 0),
        groups[others],
        label_b,
    )


def _same_label(groups, label):
    """Where ``groups`` equals the scalar ``label``."""
    return np.array([g == label for g in groups.tolist()], dtype=bool)


def _equalized_odds(side_a, side_b, label_a, label_b, confidence_level):
    """Per comparison, ``max(|TPR gap|, |FPR gap|)`` and the image of the joint
    (Sidak) rectangle of the two gaps' Newcombe intervals."""
    if confidence_level is None:
        return None
    level = sidak_level(1.0 - confidence_level)
    gaps, lows, highs = [], [], []
    for hit, miss in ((0, 1), (2, 3)):
        x_a, x_b = side_a[:, hit], side_b[:, hit]
        n_a, n_b = x_a + side_a[:, miss], x_b + side_b[:, miss]
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = x_a / n_a - x_b / n_b
        near, far = fold_interval(*newcombe_interval(x_a, n_a, x_b, n_b, level))
        gaps.append(np.abs(gap))
        lows.append(near)
        highs.append(far)
    undefined = np.isnan(gaps[0]) | np.isnan(gaps[1])
    return pd.DataFrame(
        {
            "group_a": label_a,
            "group_b": label_b,
            "difference": np.where(undefined, np.nan, np.maximum(*gaps)),
            "difference_low": np.where(undefined, np.nan, np.maximum(*lows)),
            "difference_high": np.where(undefined, np.nan, np.maximum(*highs)),
        }
    )


def _pair_names(label_a, label_b, limit=5):
    """The first ``limit`` compared pairs, ``'x' vs 'y'``, and how many more."""
    names = [
        f"{format_label(i)} vs {format_label(j)}"
        for i, j in zip(label_a[:limit], label_b[:limit])
    ]
    more = label_a.shape[0] - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
