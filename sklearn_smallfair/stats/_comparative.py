"""The comparative separation test: are pairs ordered equally well across groups?

For a pair ``(i, j)`` with true order ``y_ij = sign(y_i - y_j)`` (pairs with tied
labels carry no order and are dropped) and predicted order
``c_ij = sign(s_i - s_j)``, the comparative true-positive rate of the cell
``(a, b)`` is the fraction of correctly ordered pairs among the pairs whose
truly-higher item is in group ``a`` and truly-lower item in group ``b`` (both
orientations of a pair are pooled). For a binary classifier scored by its
predicted labels, ``TPR(a, b) = TPR_a * TNR_b``.

With labels and scores the cells hold all pairs of items, counted in
``_allpairs.py`` in O(n log n); given, drawn or judged pairs are checked and
counted in ``_pairs.py``.
"""

import warnings

import numpy as np
import pandas as pd

from .._groups import check_sensitive_features
from .._params import (
    BOOLEAN,
    RANDOM_STATE,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._validation import format_label
from ..exceptions import UndefinedGroupMetricWarning
from ._allpairs import (
    AllPairs,
    count_all_pairs,
)
from ._comparative_result import ComparativeSeparationResult
from ._comparative_tests import _class_frame, _comparisons, _permutation_frame
from ._match_result import check_draws_can_reject
from ._multitest import CORRECTION, check_correction, group_pairs
from ._pairs import (
    LABEL_HINT,
    MAX_PAIRS,
    SCORE_HINT,
    TIES,
    check_judgments,
    check_numeric,
    check_pairs,
    count_pairs,
    make_comparative_pairs,
)

__all__ = ["ComparativeSeparationResult", "comparative_separation_test"]

STATISTICS = ("max_gap", "min_pvalue")
VARIANCES = ("auto", "pooled", "u_statistic", "clustered", "independent")
#: Most distinct labels for which the pairs are stratified by their label pair
#: (45 strata); with more, the pooled cells are compared.
MAX_STRATIFIED_LABELS = 10
METHODS = ("asymptotic", "permutation")
#: Most resamples of the permutation test.
MAX_RESAMPLES = 1_000_000

_SHARED_PARAMS = {
    "n_pairs": [Whole(1, MAX_PAIRS), None],
    "tie": [StrOptions(set(TIES))],
    "correction": CORRECTION,
    "variance": [StrOptions(set(VARIANCES))],
    "stratify": BOOLEAN,
    "random_state": RANDOM_STATE,
}
_TEST_PARAMS = {
    "alpha": [Number(0, 1, closed="neither")],
    "method": [StrOptions(set(METHODS))],
    "n_resamples": [Whole(100, MAX_RESAMPLES)],
    **_SHARED_PARAMS,
}


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_score": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "pairs": ["array-like", None],
        "judgments": ["array-like", None],
        **_TEST_PARAMS,
    }
)
def comparative_separation_test(
    y_true=None,
    y_score=None,
    *,
    sensitive_features,
    pairs=None,
    judgments=None,
    n_pairs=None,
    alpha=0.05,
    tie="incorrect",
    correction="holm",
    variance="auto",
    stratify=True,
    method="asymptotic",
    n_resamples=9999,
    random_state=0,
):
    """Test comparative separation: are pairs ordered equally well across groups?

    Each pair ``(i, j)`` has a true order, ``y_ij = sign(y_i - y_j)`` from labels
    (pairs with tied labels are dropped) or an explicit judgment, and a predicted
    order ``c_ij = sign(s_i - s_j)`` from the scores. The comparative TPR of the
    cell ``(a, b)``, ``TPR(a, b)``, is the fraction of correctly ordered pairs among
    those whose truly-higher item is in group ``a`` and truly-lower item in group
    ``b`` (both orientations of a pair pooled). For two groups the test compares
    the cross-group cells, H0c: ``TPR(1, 0) = TPR(0, 1)``, and the within-group
    cells, H0w: ``TPR(1, 1) = TPR(0, 0)``; comparative separation is violated when
    ``min(p_c, p_w) <= alpha``. For a binary classifier scored by its predicted
    labels, ``TPR(a, b) = TPR_a * TNR_b``, so the verdict agrees with
    :func:`separation_test` on large samples.

    **Which pairs.** With ``y_true`` and ``y_score`` (and neither ``pairs``,
    ``judgments`` nor ``n_pairs``) every pair of items with different labels is
    counted: for binary labels ``TPR(a, b)`` is then the cross-group area under
    the ROC curve ("xAUC"): the fraction of (positive of ``a``, negative of ``b``)
    pairs that the scores order correctly; for ordinal or continuous labels a
    dominance count. The count takes O(n log n) time (sorting and cumulative
    counts, no pair is formed) and does not depend on ``random_state``: the result
    is deterministic. Given ``pairs`` (with labels or with ``judgments``, e.g.
    real comparative judgments) only those are counted; with ``n_pairs`` that many
    pairs are drawn at random by :func:`make_comparative_pairs`, the published
    procedure.

    **Which statistic.** With labels of more than two values the pairs are
    stratified by their label pair (``stratify=True``): a pair whose higher item
    has label ``u`` and lower item label ``v`` is compared only with pairs of the
    same ``(u, v)``. Under separation (scores independent of the group given the
    label) ``TPR_uv(a, b) = P(S > S' | Y = u, Y' = v)`` for every pair of groups,
    whatever the groups' label mixes, whereas the pooled ``TPR(1, 0)`` and
    ``TPR(0, 1)`` differ as soon as one group's labels are higher (its pairs
    across groups then have larger label gaps). The cross test compares ``D =
    sum_uv w_uv (TPR_uv(1, 0) - TPR_uv(0, 1))``, the within test the same with
    ``(1, 1)`` and ``(0, 0)``; the common weight of a stratum is the harmonic-mean
    (Mantel-Haenszel) weight ``n1 n2 / (n1 + n2)`` of the two cells' pair counts,
    normalized to sum 1. It is, up to a constant, the inverse of the variance of
    the stratum's difference for equal rates, so strata where both cells are
    well measured count most, and a stratum that one of the two cells lacks
    counts zero. ``tpr_a`` and ``tpr_b`` of :attr:`frame` are the two cells'
    rates standardized to these weights (``table`` keeps the pooled rates).
    With binary labels there is one stratum and the statistic is the pooled
    difference. Strata are formed when the labels take at most
    ``MAX_STRATIFIED_LABELS`` = 10 values; with more (continuous labels, whose
    pairs each form a stratum of their own) the pooled cells are compared, which
    tests equal comparative TPRs rather than separation: bin such labels (e.g.
    into quantiles) to test separation. ``result.stratified`` says which
    statistic was used. When two compared cells have pairs but no label pair in
    common (a group whose items have few distinct labels), the stratified test
    is NaN, with a warning. The cost is ``O(n K L log L)`` for ``L`` distinct labels
    and ``K`` groups.

    **Which test.** With all pairs the default variance (``variance="auto"``,
    that is ``"pooled"`` for labels of at most 10 distinct values) is the
    variance of the statistic's first-order (Hajek) projection on the items, a
    sum of per-item terms built from each item's placements (DeLong's
    structural components), computed under separation: the items of each
    label form one sample whatever their group, so the variance of an item's
    term is estimated from all the items with its label and not from its
    group's few items. The z statistic is referred to a
    Student t law with Welch-Satterthwaite degrees of freedom from the number of
    items of each label. Measured under separation with group shares down to
    0.1, 50 to 1,000 items, ties in scores and label mixes that differ by group,
    each test rejects at most at about its nominal rate and the joint verdict at
    about ``1 - (1 - alpha)^2`` (see the user guide, :ref:`separation`); it
    costs a few milliseconds for 1,000 items. ``variance="u_statistic"``
    estimates each group's part from its own items (unbiased for large groups,
    but too small by chance for a group of a handful of items: with 5 of 50
    items the joint verdict rejected in 32 % to 41 % of null data sets).
    ``method="permutation"`` instead permutes the group labels within the
    strata of equal labels ``n_resamples`` times and reports ``p = (1 + #{|D*|
    >= |D|}) / (1 + n_resamples)`` for each difference ``D`` of the pooled cells
    (``stratify`` does not apply: the permutation keeps every group's labels, so
    the test is exact for separation whatever the label mixes).

    The unstratified variant, all pairs with the pooled cells and the
    U-statistic variance estimated by group, is ``stratify=False,
    variance="u_statistic"``.

    **The published test** (sampled pairs, independent-pairs Wald test) is
    ``n_pairs=len(y_true)`` or ``2 * len(y_true)`` (the published code draws
    ``2 n`` pairs in the simulations and in the classification experiments of
    Table V, and ``n`` in the regression experiment of Table VIII) with
    ``variance="independent"`` and
    ``tie="incorrect"``. Pairs drawn at random share items, so the
    independent-pairs variance is too small and that test rejects far too often
    (about 25 % instead of 9.75 % under no bias, for 200 items with integer labels
    and ``2 n`` pairs); its verdict also changes with the draw.

    Group "1" is the second of the sorted group labels (``1`` for 0/1, ``True`` for
    booleans) and group "0" the first. With ``K > 2`` groups the full ``K x K``
    table is reported and every pair of groups ``a > b`` (in sorted order) is
    tested: ``TPR(a, b)`` vs ``TPR(b, a)`` (family ``"cross"``) and ``TPR(a, a)``
    vs ``TPR(b, b)`` (family ``"within"``); p-values are adjusted with
    ``correction`` within each family and the headline p-values are each family's
    smallest adjusted p-value.

    Labels may be class labels or regression targets (e.g. story points): only
    their order is used, so any increasing transform of ``y_true`` gives the same
    result. With labels of more than two values, the comparative TPRs also depend
    on how far apart the labels of the compared pairs are: if the groups' label
    distributions differ, ``TPR(1, 0)`` and ``TPR(0, 1)`` can differ even when the
    scores treat both groups alike given the labels. The permutation test, which
    keeps each group's labels, tests that hypothesis (separation) directly.

    Parameters
    ----------
    y_true : array-like of shape (n_items,), default=None
        Numeric labels of the items (pointwise input). Omit it when passing
        ``judgments``.
    y_score : array-like of shape (n_items,)
        Model scores of the items (required); higher means ranked higher.
    sensitive_features : array-like of shape (n_items,) or (n_items, n_features)
        Group label of each item; at least two groups.
    pairs : array-like of int, shape (m, 2), default=None
        Item indices (positions in ``y_score``) of the pairs to compare. Required
        with ``judgments``. Self-pairs ``(i, i)`` are an error.
    judgments : array-like of shape (m,), default=None
        Explicit comparative judgments of ``pairs``: ``+1`` when the first item of
        the pair is higher, ``-1`` when the second is (booleans: ``True`` = first
        is higher). Judgments of equality carry no order and must be dropped.
    n_pairs : int, default=None
        Draw this many random pairs with :func:`make_comparative_pairs` instead
        of counting all pairs (the published procedure); at most ``MAX_PAIRS`` =
        50,000,000. ``None`` counts all pairs. Only with ``y_true`` and without
        ``pairs``.
    alpha : float, default=0.05
        Significance level of ``violated`` and ``reject``.
    tie : {"incorrect", "half", "drop"}, default="incorrect"
        A predicted tie (``s_i == s_j``) counts as incorrectly ordered
        (``"incorrect"``, as published), as half correct (``"half"``, the usual
        convention of the AUC), or is left out of the counts (``"drop"``).
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison adjustment within each family of tests (used with more
        than two groups; with two, each family has one test); ``"none"`` is
        ``None``.
    variance : {"auto", "pooled", "u_statistic", "clustered", "independent"}, \
            default="auto"
        Variance of the cell rates in the Wald tests. ``"u_statistic"`` (all
        pairs only): the U-statistic variance with each group's part estimated
        from its own items, with a t reference. ``"pooled"`` (all pairs only,
        labels of at most 10 distinct values): the variance under separation
        described above. ``"clustered"``: the
        dyadic cluster-robust variance (residuals summed per item, so items
        shared by pairs are accounted for, and for cross-group tests the
        covariance of the two cells is included; without shared items it equals
        ``"independent"`` exactly, and it is never smaller). ``"independent"``:
        ``mu (1 - mu) / n_ab``, as in the published test, right only when no
        item is in two pairs (about 0.25 instead of 0.0975 for the joint verdict
        with ``2 n`` random pairs, and meaningless for all pairs). ``"auto"``:
        ``"pooled"`` for all pairs whose labels take at most
        ``MAX_STRATIFIED_LABELS`` = 10 distinct values, ``"u_statistic"`` for
        all pairs with more (each label then has too few items to pool, e.g.
        continuous labels), ``"clustered"`` otherwise.
    stratify : bool, default=True
        With all pairs and ``variance`` ``"pooled"`` or ``"u_statistic"``,
        compare the cells within the strata of equal label pairs (see above);
        applied when the labels take 3 to ``MAX_STRATIFIED_LABELS`` = 10
        distinct values (with two there is one stratum). ``False`` compares the
        pooled cells.
    method : {"asymptotic", "permutation"}, default="asymptotic"
        ``"asymptotic"``: the Wald tests of ``variance``. ``"permutation"``
        (all pairs only): group labels permuted within the strata of equal
        labels. Its cost is ``n_resamples`` times a count of all pairs, counted
        in blocks of resamples (one to two seconds for 1,000 items and the
        default 9,999 resamples); with labels that are all distinct there is
        nothing to permute, and a warning says so.
    n_resamples : int, default=9999
        Resamples of the permutation test (100 to 1,000,000). A permutation
        p-value is at least ``1 / (n_resamples + 1)``: fewer than
        ``ceil(1 / alpha) - 1`` resamples, with which no test can reject at
        ``alpha``, are an error.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed (``None`` for fresh entropy) of the pair draws (``n_pairs``) and of
        the permutations. The default test (all pairs, asymptotic) does not use
        it.

    Returns
    -------
    result : ComparativeSeparationResult
        ``result.violated``, ``result.p_value_cross``, ``result.p_value_within``, the
        cell table ``result.table`` and the tests ``result.to_frame()``.

    Warns
    -----
    UndefinedGroupMetricWarning
        When a cell has no usable pairs: its TPR and the tests involving it are
        NaN.

    See Also
    --------
    separation_test : Separation of a binary classifier.
    make_comparative_pairs : The pair draws.

    Examples
    --------
    All pairs of eight items with binary labels: ``TPR(a, b)`` is the share of the
    (positive of ``a``, negative of ``b``) pairs that the scores order correctly.

    >>> from sklearn_smallfair.stats import comparative_separation_test
    >>> y = [1, 1, 0, 0, 1, 1, 0, 0]
    >>> s = [0.9, 0.6, 0.4, 0.1, 0.7, 0.2, 0.5, 0.3]
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> res = comparative_separation_test(y, s, sensitive_features=groups)
    >>> res.table
                  n  correct   tpr        se
    higher lower
    a      a      4        4  1.00  0.000000
           b      4        4  1.00  0.000000
    b      a      4        3  0.75  0.353553
           b      4        2  0.50  0.500000
    >>> res.pair_source, res.variance, res.n_pairs, res.stratified
    ('all', 'pooled', 16, False)
    >>> res.frame[["difference", "se", "df", "p_value"]].round(4).values.tolist()
    [[-0.25, 0.3953, 3.6585, 0.5644], [-0.5, 0.3953, 3.6585, 0.2805]]

    The unstratified variant (each group's part of the variance from its own
    items):

    >>> old = comparative_separation_test(y, s, sensitive_features=groups,
    ...                                   stratify=False, variance="u_statistic")
    >>> old.frame[["difference", "se", "df", "p_value"]].round(4).values.tolist()
    [[-0.25, 0.3536, 2.0, 0.5528], [-0.5, 0.5, 1.0, 0.5]]

    Ordinal labels whose mix differs by group: ``tpr_a`` and ``tpr_b`` are the
    cells' rates standardized over the label-pair strata.

    >>> y = [2, 2, 1, 1, 0, 0, 2, 1, 0, 0, 0, 1]
    >>> s = [0.9, 0.7, 0.4, 0.8, 0.1, 0.3, 0.6, 0.5, 0.2, 0.0, 0.35, 0.45]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> res = comparative_separation_test(y, s, sensitive_features=groups)
    >>> res.stratified
    True
    >>> res.frame[["tpr_a", "tpr_b", "difference"]].round(4).values.tolist()
    [[0.8726, 1.0, -0.1274], [1.0, 0.9388, 0.0612]]

    Explicit pairs of six items, the score ordering every pair correctly except
    the ones whose truly-higher item is in group ``"b"`` and truly-lower in ``"a"``:

    >>> y = [3, 2, 1, 3, 2, 1]
    >>> s = [0.9, 0.5, 0.1, 0.2, 0.8, 0.0]
    >>> groups = ["a", "a", "a", "b", "b", "b"]
    >>> pairs = [[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [0, 4], [3, 1],
    ...          [4, 2], [1, 5], [3, 2], [0, 5]]
    >>> res = comparative_separation_test(y, s, sensitive_features=groups,
    ...                                   pairs=pairs)
    >>> res.table
                   n  correct       tpr        se
    higher lower
    a      a       3        3  1.000000  0.000000
           b       3        3  1.000000  0.000000
    b      a       3        2  0.666667  0.272166
           b       3        2  0.666667  0.272166
    >>> round(res.z_cross, 4), round(res.p_value_cross, 4), res.violated
    (-1.2247, 0.2207, False)

    Comparative judgments instead of labels (``+1``: the first item is higher):

    >>> res = comparative_separation_test(
    ...     y_score=s, sensitive_features=groups,
    ...     pairs=[[0, 3], [4, 1], [2, 5], [0, 1], [3, 5]], judgments=[1, 1, -1, 1, 1])
    >>> res.tpr_matrix
    lower     a    b
    higher
    a       1.0  1.0
    b       0.5  1.0
    """
    y, s = _check_items(y_true, y_score, pairs, judgments, n_pairs)
    groups, codes = _check_groups(sensitive_features, s.shape[0])
    correction = check_correction(correction)
    source = _pair_source(pairs, judgments, n_pairs)
    requested = variance
    variance = _resolve_variance(variance, source)
    # a permutation p-value is at least 1 / (n_resamples + 1)
    check_draws_can_reject(
        [method],
        int(n_resamples),
        float(alpha),
        two_sided=False,
        simulated=("permutation",),
    )
    if method == "permutation" and source != "all":
        raise ValueError(
            f"method='permutation' permutes the group labels of all pairs of items; "
            f"it is not available with {_SOURCE_TEXT[source]}. Pass y_true and "
            f"y_score without pairs, judgments and n_pairs, or use "
            f"method='asymptotic'."
        )
    K = groups.shape[0]
    stratified = False
    cell_variance = variance
    if source == "all":
        _check_two_labels(y)
        plan = AllPairs(y, s)
        variance = _resolve_pooled(variance, requested, plan.n_levels)
        # the cell table's standard errors: the U-statistic variance of each cell
        cell_variance = "u_statistic" if variance == "pooled" else variance
        counts = count_all_pairs(plan, codes, K, tie=tie, variance=cell_variance)
        stratified = bool(
            stratify
            and method == "asymptotic"
            and variance in ("pooled", "u_statistic")
            and 2 < plan.n_levels <= MAX_STRATIFIED_LABELS
        )
        pairs = None
    else:
        pairs, i, j, first_higher = _resolve_pairs(
            y, pairs, judgments, n_pairs, random_state, s.shape[0]
        )
        counts = count_pairs(
            i, j, first_higher, y, s, codes, K, tie=tie, variance=variance
        )
        if counts.n_label_ties == i.shape[0]:
            raise ValueError(
                "every pair has tied labels (y_true[i] == y_true[j]), so no pair has "
                "a true order; pass pairs of items with different labels."
            )
        pairs = np.asarray(pairs)
    _warn_empty_cells(counts.n, groups, source)
    frame = _comparisons(counts, groups, correction, cell_variance)
    if source == "all" and (stratified or variance == "pooled"):
        frame = _class_frame(
            frame, plan, codes, groups, tie, correction, stratified, variance
        )
        _warn_unmatched_strata(frame)
    if method == "permutation":
        frame = _permutation_frame(
            frame,
            plan,
            codes,
            groups,
            tie,
            correction,
            n_resamples,
            random_state,
            alpha,
        )
    index = pd.MultiIndex.from_product([groups, groups], names=["higher", "lower"])
    table = pd.DataFrame(
        {
            "n": counts.n.ravel(),
            "correct": counts.correct.ravel(),
            "tpr": counts.tpr.ravel(),
            "se": np.sqrt(counts.var.ravel()),
        },
        index=index,
    )
    return ComparativeSeparationResult(
        frame=frame,
        alpha=float(alpha),
        table=table,
        groups=groups,
        n_pairs=int(counts.n.sum()),
        n_predicted_ties=counts.n_predicted_ties,
        pairs=pairs,
        correction=correction,
        tie=tie,
        variance=variance,
        pair_source=source,
        method=method,
        n_resamples=n_resamples if method == "permutation" else None,
        stratified=stratified,
    )


_SOURCE_TEXT = {
    "drawn": "pairs drawn at random (n_pairs)",
    "given": "given pairs",
    "judgments": "judgments",
}


def _pair_source(pairs, judgments, n_pairs):
    """Which pairs are counted: ``"all"``, ``"drawn"``, ``"given"``, ``"judgments"``."""
    if judgments is not None:
        return "judgments"
    if pairs is not None:
        return "given"
    return "all" if n_pairs is None else "drawn"


def _resolve_pooled(variance, requested, n_levels):
    """``"pooled"`` estimates each item's variance from the items with its label:
    with more than ``MAX_STRATIFIED_LABELS`` distinct labels (e.g. continuous
    labels, one item each) there are too few, and ``"auto"`` is
    ``"u_statistic"``."""
    if variance != "pooled" or n_levels <= MAX_STRATIFIED_LABELS:
        return variance
    if requested == "auto":
        return "u_statistic"
    raise ValueError(
        f"variance='pooled' estimates the variance of each item's part from the "
        f"items with its label, and needs labels of at most "
        f"{MAX_STRATIFIED_LABELS} distinct values; got {n_levels}. Bin the labels "
        f"(e.g. into quantiles), or use variance='u_statistic' (or 'auto')."
    )


def _resolve_variance(variance, source):
    if variance == "auto":
        return "pooled" if source == "all" else "clustered"
    if variance in ("pooled", "u_statistic") and source != "all":
        raise ValueError(
            f"variance={variance!r} is a variance of the count over all pairs; "
            f"with {_SOURCE_TEXT[source]} use variance='clustered' (or 'auto')."
        )
    return variance


def _check_items(y_true, y_score, pairs, judgments, n_pairs):
    """Labels (None with judgments) and scores of the items, after the checks that
    the arguments given form one of the input modes."""
    if y_score is None:
        raise ValueError(
            "y_score is required: pass one model score per item (the predicted "
            "order of a pair is sign(y_score[i] - y_score[j]))."
        )
    s = check_numeric(y_score, "y_score", SCORE_HINT)
    if judgments is not None:
        if y_true is not None:
            raise ValueError(
                "pass either y_true (pairs are ordered by the labels) or judgments "
                "(explicit orders of pairs), not both."
            )
        if pairs is None:
            raise ValueError(
                "judgments need pairs: pass pairs of shape (m, 2) with the item "
                "indices that each judgment compares."
            )
        if n_pairs is not None:
            raise ValueError("n_pairs is only used to draw pairs; omit it with pairs.")
        return None, s
    if y_true is None:
        raise ValueError(
            "pass y_true (labels of the items) or judgments with pairs (explicit "
            "comparative judgments)."
        )
    y = check_numeric(y_true, "y_true", LABEL_HINT)
    if y.shape[0] != s.shape[0]:
        raise ValueError(
            f"y_true and y_score have inconsistent lengths ({y.shape[0]} and "
            f"{s.shape[0]}); pass one label and one score per item."
        )
    if pairs is not None and n_pairs is not None:
        raise ValueError(
            "n_pairs is only used to draw pairs; omit it when passing pairs."
        )
    return y, s


def _check_two_labels(y):
    n = y.shape[0]
    if n < 2 or (y == y[0]).all():
        raise ValueError(
            f"y_true must hold at least two different values to form ordered pairs; "
            f"got {n} item(s) with {len(np.unique(y))} distinct value(s)."
        )


def _check_groups(sensitive_features, n_items):
    """Sorted group labels (at least two) and the group code of each item."""
    if sensitive_features is not None and not isinstance(
        sensitive_features, pd.DataFrame
    ):
        if np.ndim(sensitive_features) >= 1 and len(sensitive_features) != n_items:
            raise ValueError(
                f"sensitive_features has {len(sensitive_features)} rows but y_score "
                f"has {n_items}; pass one group label per item."
            )
    groups, codes, _ = check_sensitive_features(sensitive_features, n_items)
    group_pairs(groups)  # at least two groups
    return groups, codes


def _resolve_pairs(y, pairs, judgments, n_pairs, random_state, n_items):
    """The pairs (given or drawn), their item indices and the judgments if any."""
    if judgments is not None:
        i, j = check_pairs(pairs, n_items)
        return pairs, i, j, check_judgments(judgments, i.shape[0])
    if pairs is None:
        pairs = make_comparative_pairs(y, n_pairs=n_pairs, random_state=random_state)
        if pairs.shape[0] == 0:
            raise ValueError(
                f"none of the n_pairs={n_pairs} drawn pairs has two different "
                f"labels; draw more pairs (a larger n_pairs), or count all pairs "
                f"(n_pairs=None)."
            )
    i, j = check_pairs(pairs, n_items)
    return pairs, i, j, None


def _empty_cells(n, groups):
    """The cells without usable pairs, as text: ``"('a', 'b'), ..."``."""
    return ", ".join(
        f"({format_label(groups[a])}, {format_label(groups[b])})"
        for a, b in np.argwhere(n == 0)
    )


def _warn_empty_cells(n, groups, source):
    cells = _empty_cells(n, groups)
    if not cells:
        return
    if source == "all":
        fix = (
            "With all pairs counted, a cell is empty when one of its groups has no "
            "item with a higher (or lower) label than some item of the other; "
            "merge small groups."
        )
    else:
        fix = "Count all pairs (n_pairs=None), draw more pairs or merge small groups."
    warnings.warn(
        f"comparative TPR is undefined (no usable pairs) for cell(s) {cells} "
        f"(group of the truly-higher item, of the truly-lower item), so the tests "
        f"involving them are NaN. {fix}",
        UndefinedGroupMetricWarning,
        stacklevel=5,  # the caller of the decorated comparative_separation_test
    )


def _unmatched_strata(frame):
    """The tests whose two cells have pairs but no stratum of label pairs in
    common, as text: ``"cross ('a', 'b') vs ('b', 'a'), ..."``."""
    rows = frame[(frame["n_a"] > 0) & (frame["n_b"] > 0) & frame["difference"].isna()]
    return ", ".join(
        f"{r.test} ({format_label(r.higher_a)}, {format_label(r.lower_a)}) vs "
        f"({format_label(r.higher_b)}, {format_label(r.lower_b)})"
        for r in rows.itertuples()
    )


def _warn_unmatched_strata(frame):
    tests = _unmatched_strata(frame)
    if not tests:
        return
    warnings.warn(
        f"the compared cells of the test(s) {tests} (group of the truly-higher "
        f"item, of the truly-lower item) have pairs but no label pair (stratum) in "
        f"common, so these stratified tests are NaN. This happens when a group's "
        f"items have few distinct labels; merge small groups, or pass "
        f"stratify=False to compare the pooled cells (which also differ when the "
        f"groups' label mixes differ).",
        UndefinedGroupMetricWarning,
        stacklevel=5,  # the caller of the decorated comparative_separation_test
    )
