"""The comparative separation test: are pairs ordered equally well across groups?

For a pair ``(i, j)`` with true order ``y_ij = sign(y_i - y_j)`` (pairs with tied
labels carry no order and are dropped) and predicted order
``c_ij = sign(s_i - s_j)``, the comparative true-positive rate of the cell
``(a, b)`` is the fraction of correctly ordered pairs among the pairs whose
truly-higher item is in group ``a`` and truly-lower item in group ``b`` (both
orientations of a pair are pooled). For a binary classifier scored by its
predicted labels, ``TPR(a, b) = TPR_a * TNR_b``. The pairs are drawn, checked and
counted in ``_pairs.py``.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._scoring import GroupScorer
from .._validation import (
    check_choice,
    check_probability,
    check_sensitive_features,
    format_label,
)
from ..exceptions import UndefinedGroupMetricWarning
from ._multitest import adjust_pvalues, check_correction, group_pairs
from ._pairs import (
    LABEL_HINT,
    SCORE_HINT,
    TIES,
    VARIANCES,
    check_judgments,
    check_n_pairs,
    check_numeric,
    check_pairs,
    count_pairs,
    make_comparative_pairs,
)
from ._results import PairwiseResult, TestEstimator, family_pvalue, family_z
from ._wald import wald_test, z_test

__all__ = [
    "ComparativeSeparationResult",
    "ComparativeSeparationTest",
    "comparative_separation_statistic",
    "comparative_separation_test",
    "make_comparative_separation_scorer",
]

STATISTICS = ("max_gap", "min_pvalue")


@dataclass(frozen=True, repr=False, eq=False)
class ComparativeSeparationResult(PairwiseResult):
    """Result of :func:`comparative_separation_test`.

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one row per
    comparison of two cells of comparative TPRs, the p-values that decide it
    (``pvalues``) and one rejection rule, ``reject = pvalues <= alpha``.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per test: ``test`` (``"cross"``: ``TPR(a, b)`` vs ``TPR(b, a)``;
        ``"within"``: ``TPR(a, a)`` vs ``TPR(b, b)``), ``higher_a``, ``lower_a``,
        ``higher_b``, ``lower_b`` (the two cells compared), ``n_a``, ``n_b``,
        ``tpr_a``, ``tpr_b``, ``difference`` (``tpr_a - tpr_b``), ``se``, ``z``,
        ``p_value``, ``p_adjusted`` (within the test's family; equal to
        ``p_value`` with two groups) and ``reject`` (``p_adjusted <= alpha``).
    alpha : float
        Significance level.
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``(test, higher_a, lower_a, higher_b, lower_b)`` in the order
        of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.
    violated : bool
        Whether any test rejects: ``min(pvalue_cross, pvalue_within) <= alpha``
        (NaN p-values are ignored).
    pvalue_cross, pvalue_within : float
        P-values of H0c: ``TPR(1, 0) = TPR(0, 1)`` and H0w:
        ``TPR(1, 1) = TPR(0, 0)``. With more than two groups, the smallest adjusted
        p-value of each family.
    z_cross, z_within : float
        Their z statistics (positive when the cell with group "1" as the higher
        item has the higher rate); NaN with more than two groups.
    table : pandas.DataFrame
        The ``K x K`` cells in long form, indexed by ``(higher, lower)``: the group
        of the truly-higher and of the truly-lower item. Columns ``n`` (usable
        pairs), ``correct`` (correctly ordered pairs; half-integers with
        ``tie="half"``), ``tpr`` (``correct / n``, NaN when ``n = 0``) and ``se``
        (its standard error under ``variance``).
    tpr_matrix : pandas.DataFrame
        Comparative TPR as a ``K x K`` table (rows: higher, columns: lower).
    groups : ndarray
        Sorted group labels; for two groups, group "1" is ``groups[1]``.
    n_pairs : int
        Pairs counted (distinct true order; with ``tie="drop"`` also distinct
        predicted order).
    n_predicted_ties : int
        Usable pairs whose two scores are equal (before ``tie`` is applied).
    pairs : ndarray of shape (m, 2)
        The pairs passed or drawn (before pairs with tied labels are dropped).
    correction, tie, variance
        The options used.

    Examples
    --------
    >>> from sklearn_smallfair.stats import comparative_separation_test
    >>> res = comparative_separation_test(
    ...     [3, 2, 1, 3, 2, 1], [0.9, 0.5, 0.1, 0.2, 0.8, 0.0],
    ...     sensitive_features=["a", "a", "a", "b", "b", "b"],
    ...     pairs=[[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [0, 4], [3, 1],
    ...            [4, 2], [1, 5], [3, 2], [0, 5]], alpha=0.25)
    >>> res
    ComparativeSeparationResult(violated=True, alpha=0.25, n_tests=2, \
n_rejected=2, pvalue_cross=0.2207, pvalue_within=0.2207, n_pairs=12)
    >>> res.pvalues.round(4)
    test    higher_a  lower_a  higher_b  lower_b
    cross   b         a        a         b          0.2207
    within  b         b        a         a          0.2207
    Name: p_adjusted, dtype: float64
    >>> bool((res.reject == (res.pvalues <= res.alpha)).all())
    True
    >>> res.alpha = 0.05
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'alpha'
    """

    _keys = ("test", "higher_a", "lower_a", "higher_b", "lower_b")
    _family = "test"
    _families = ("cross", "within")

    table: pd.DataFrame
    groups: np.ndarray
    n_pairs: int
    n_predicted_ties: int
    pairs: np.ndarray
    correction: str | None
    tie: str
    variance: str

    pvalue_cross = family_pvalue("cross")
    pvalue_within = family_pvalue("within")
    z_cross = family_z("cross")
    z_within = family_z("within")

    @property
    def tpr_matrix(self):
        """Comparative TPR as a ``K x K`` DataFrame (rows: higher, columns: lower)."""
        return self.table["tpr"].unstack("lower")

    def _summary(self):
        return {**super()._summary(), "n_pairs": self.n_pairs}


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
    variance="clustered",
    random_state=None,
):
    """Test comparative separation: are pairs ordered equally well across groups?

    Each pair ``(i, j)`` has a true order, ``y_ij = sign(y_i - y_j)`` from labels
    (pairs with tied labels are dropped) or an explicit judgment, and a predicted
    order ``c_ij = sign(s_i - s_j)`` from the scores. The comparative TPR of the
    cell ``(a, b)``, ``TPR(a, b)``, is the fraction of correctly ordered pairs among
    those whose truly-higher item is in group ``a`` and truly-lower item in group
    ``b`` (both orientations of a pair pooled). For two groups the test compares
    the cross-group cells, H0c: ``TPR(1, 0) = TPR(0, 1)``, and the within-group
    cells, H0w: ``TPR(1, 1) = TPR(0, 0)``, with two-sided Wald z-tests; comparative
    separation is violated when ``min(p_c, p_w) <= alpha``. For a binary classifier
    scored by its predicted labels, ``TPR(a, b) = TPR_a * TNR_b``, so the verdict
    agrees with :func:`separation_test` on large samples.

    Group "1" is the second of the sorted group labels (``1`` for 0/1, ``True`` for
    booleans) and group "0" the first. With ``K > 2`` groups the full ``K x K``
    table is reported and every pair of groups ``a > b`` (in sorted order) is
    tested: ``TPR(a, b)`` vs ``TPR(b, a)`` (family ``"cross"``) and ``TPR(a, a)``
    vs ``TPR(b, b)`` (family ``"within"``); p-values are adjusted with
    ``correction`` within each family and the headline p-values are each family's
    smallest adjusted p-value.

    Labels may be class labels or regression targets (e.g. story points): only
    their order is used, so any increasing transform of ``y_true`` gives the same
    result. Counting is vectorized (one ``bincount`` over the ``K^2`` pair types).

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
        Item indices (positions in ``y_score``) of the pairs to compare. With
        ``y_true`` and ``pairs=None``, pairs are drawn with
        :func:`make_comparative_pairs`. Required with ``judgments``. Self-pairs
        ``(i, i)`` are an error.
    judgments : array-like of shape (m,), default=None
        Explicit comparative judgments of ``pairs``: ``+1`` when the first item of
        the pair is higher, ``-1`` when the second is (booleans: ``True`` = first
        is higher). Judgments of equality carry no order and must be dropped.
    n_pairs : int, default=None
        Number of pairs to draw when ``pairs`` is None (``None``: ``2 * n_items``);
        see :func:`make_comparative_pairs`.
    alpha : float, default=0.05
        Significance level of ``violated`` and ``reject``.
    tie : {"incorrect", "half", "drop"}, default="incorrect"
        A predicted tie (``s_i == s_j``) counts as incorrectly ordered
        (``"incorrect"``), as half correct (``"half"``), or is left out of the
        counts (``"drop"``).
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
        Multiple-comparison adjustment within each family of tests (used with more
        than two groups; with two, each family has one test).
    variance : {"clustered", "independent"}, default="clustered"
        Variance of the cell rates in the Wald tests. ``"independent"`` treats the
        pairs as independent: ``mu (1 - mu) / n_ab``, as in the published test;
        it is right when no item is in two pairs, but pairs that share items
        (``2 * n_items`` random pairs put each item in about four) are positively
        correlated and it then rejects far too often (about 0.28 instead of 0.0975
        for the joint verdict under no bias). ``"clustered"`` (the default) is the
        dyadic cluster-robust variance: residuals are summed per item, so shared
        items are accounted for, and for cross-group tests the covariance of the
        two cells (from items that are higher in some pairs and lower in others)
        is included. Without shared items it equals ``"independent"`` exactly; it
        is never smaller.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
        Seed of the pair draws when ``pairs`` is None.

    Returns
    -------
    result : ComparativeSeparationResult
        ``result.violated``, ``result.pvalue_cross``, ``result.pvalue_within``, the
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
    ComparativeSeparationTest : The test as a scikit-learn estimator.

    Examples
    --------
    Explicit pairs of six items, the score ordering every pair correctly except
    the ones whose truly-higher item is in group ``"b"`` and truly-lower in ``"a"``:

    >>> from sklearn_smallfair.stats import comparative_separation_test
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
    >>> round(res.z_cross, 4), round(res.pvalue_cross, 4), res.violated
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
    alpha = check_probability(alpha, "alpha")
    tie = check_choice(tie, "tie", TIES)
    variance = check_choice(variance, "variance", VARIANCES)
    correction = check_correction(correction)
    n_pairs = check_n_pairs(n_pairs)
    y, s = _check_items(y_true, y_score, pairs, judgments, n_pairs)
    groups, codes = _check_groups(sensitive_features, s.shape[0])
    pairs, i, j, first_higher = _resolve_pairs(
        y, pairs, judgments, n_pairs, random_state, s.shape[0]
    )
    counts = count_pairs(
        i, j, first_higher, y, s, codes, groups.shape[0], tie=tie, variance=variance
    )
    if counts.n_label_ties == i.shape[0]:
        raise ValueError(
            "every pair has tied labels (y_true[i] == y_true[j]), so no pair has a "
            "true order; pass pairs of items with different labels."
        )
    _warn_empty_cells(counts.n, groups)
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
        frame=_comparisons(counts, groups, correction, variance),
        alpha=alpha,
        table=table,
        groups=groups,
        n_pairs=int(counts.n.sum()),
        n_predicted_ties=counts.n_predicted_ties,
        pairs=np.asarray(pairs),
        correction=correction,
        tie=tie,
        variance=variance,
    )


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
                f"labels; draw more pairs (a larger n_pairs)."
            )
    i, j = check_pairs(pairs, n_items)
    return pairs, i, j, None


def _warn_empty_cells(n, groups):
    empty = np.argwhere(n == 0)
    if empty.size:
        cells = ", ".join(
            f"({format_label(groups[a])}, {format_label(groups[b])})" for a, b in empty
        )
        warnings.warn(
            f"comparative TPR is undefined (no usable pairs) for cell(s) {cells} "
            f"(group of the truly-higher item, of the truly-lower item), so the tests "
            f"involving them are NaN. Draw more pairs (n_pairs) or merge small "
            f"groups.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )


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
        if variance == "independent":
            z, p = wald_test(correct[ha, la], n[ha, la], correct[hb, lb], n[hb, lb])
            var = V[ha, la] + V[hb, lb]
        else:
            var = counts.var_cross[ha, la] if test == "cross" else V[ha, la] + V[hb, lb]
            z, p = z_test(diff, var, (n[ha, la] > 0) & (n[hb, lb] > 0))
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
                    "p_value": p,
                    "p_adjusted": adjust_pvalues(np.atleast_1d(p), correction),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# =====================================================================================
# Estimator
# =====================================================================================
class ComparativeSeparationTest(TestEstimator):
    """The comparative separation test as a scikit-learn estimator.

    Holds the parameters of :func:`comparative_separation_test`; :meth:`fit` runs
    the test and stores its results.

    Parameters
    ----------
    alpha : float, default=0.05
    n_pairs : int, default=None
    tie : {"incorrect", "half", "drop"}, default="incorrect"
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
    variance : {"clustered", "independent"}, default="clustered"
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
        See :func:`comparative_separation_test`.

    Attributes
    ----------
    result_ : ComparativeSeparationResult
        What :func:`comparative_separation_test` returned.
    results_ : pandas.DataFrame
        A copy of its table of tests, ``result_.frame``.
    table_ : pandas.DataFrame
        The ``K x K`` cell table ``result_.table``.
    pvalues_ : pandas.Series
        ``result_.pvalues``: the p-value deciding each test, indexed by
        ``(test, higher_a, lower_a, higher_b, lower_b)``.
    reject_ : pandas.Series of bool
        ``result_.reject``: ``pvalues_ <= alpha``.
    violated_ : bool
        Whether comparative separation is violated at ``alpha`` (any test
        rejects).
    pairs_ : ndarray of shape (m, 2)
        The pairs passed or drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import ComparativeSeparationTest
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=400)
    >>> s = y + rng.normal(size=400)
    >>> groups = rng.choice(["a", "b"], size=400)
    >>> test = ComparativeSeparationTest(random_state=0)
    >>> test = test.fit(y, s, sensitive_features=groups)
    >>> test.table_.shape, test.violated_
    ((4, 4), False)
    """

    def __init__(
        self,
        alpha=0.05,
        n_pairs=None,
        tie="incorrect",
        correction="holm",
        variance="clustered",
        random_state=None,
    ):
        self.alpha = alpha
        self.n_pairs = n_pairs
        self.tie = tie
        self.correction = correction
        self.variance = variance
        self.random_state = random_state

    def fit(
        self,
        y_true=None,
        y_score=None,
        *,
        sensitive_features,
        pairs=None,
        judgments=None,
    ):
        """Run the test on labels and scores, or on judgments and scores.

        Parameters
        ----------
        y_true : array-like of shape (n_items,), default=None
            Item labels (omit with ``judgments``).
        y_score : array-like of shape (n_items,)
            Model scores.
        sensitive_features : array-like of shape (n_items,) or (n_items, k)
            Group labels.
        pairs : array-like of shape (m, 2), default=None
            Item index pairs (drawn when None and ``y_true`` is given).
        judgments : array-like of shape (m,), default=None
            ``+1``/``-1`` judgments of ``pairs``.

        Returns
        -------
        self : ComparativeSeparationTest
        """
        result = comparative_separation_test(
            y_true,
            y_score,
            sensitive_features=sensitive_features,
            pairs=pairs,
            judgments=judgments,
            n_pairs=self.n_pairs if pairs is None else None,
            alpha=self.alpha,
            tie=self.tie,
            correction=self.correction,
            variance=self.variance,
            random_state=self.random_state,
        )
        self.table_ = result.table.copy()
        self.pairs_ = result.pairs
        return self._keep(result)


# =====================================================================================
# Scorer
# =====================================================================================
_ROUTING_HINT = (
    "The comparative separation scorer needs the group labels. In model selection "
    "enable metadata routing with sklearn.set_config(enable_metadata_routing=True) "
    "and pass them as GridSearchCV(...).fit(X, y, sensitive_features=A) or "
    "cross_validate(..., params={'sensitive_features': A}). Outside model "
    "selection call comparative_separation_statistic(y, scores, "
    "sensitive_features=A)."
)


def comparative_separation_statistic(
    y_true,
    y_score,
    *,
    sensitive_features=None,
    statistic="max_gap",
    n_pairs=None,
    tie="incorrect",
    variance="clustered",
    correction="holm",
    random_state=0,
):
    """One number summarising comparative separation (the scorer's function).

    Parameters
    ----------
    y_true : array-like of shape (n_items,)
        Numeric labels (class labels or regression targets).
    y_score : array-like of shape (n_items,)
        Model scores.
    sensitive_features : array-like of shape (n_items,) or (n_items, k)
        Group labels (required; ``None`` raises an error explaining metadata
        routing).
    statistic : {"max_gap", "min_pvalue"}, default="max_gap"
        ``"max_gap"``: the largest absolute difference ``|tpr_a - tpr_b|`` over all
        tests of :func:`comparative_separation_test` (cross and within; lower is
        better; NaN when a compared cell is undefined). ``"min_pvalue"``:
        ``min(pvalue_cross, pvalue_within)`` (higher is better).
    n_pairs, tie, variance, correction
        See :func:`comparative_separation_test`.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the pair draws; a fixed seed makes scores reproducible.

    Returns
    -------
    value : float

    Examples
    --------
    >>> from sklearn_smallfair.stats import comparative_separation_statistic
    >>> y = [3, 2, 1, 3, 2, 1]
    >>> s = [0.9, 0.5, 0.1, 0.2, 0.8, 0.0]
    >>> groups = ["a", "a", "a", "b", "b", "b"]
    >>> gap = comparative_separation_statistic(y, s, sensitive_features=groups,
    ...                                        n_pairs=200)
    >>> 0 <= gap <= 1
    True
    """
    if sensitive_features is None:
        raise ValueError(_ROUTING_HINT)
    statistic = check_choice(statistic, "statistic", STATISTICS)
    res = comparative_separation_test(
        y_true,
        y_score,
        sensitive_features=sensitive_features,
        n_pairs=n_pairs,
        tie=tie,
        variance=variance,
        correction=correction,
        random_state=random_state,
    )
    if statistic == "min_pvalue":
        return float(np.fmin(res.pvalue_cross, res.pvalue_within))
    gaps = res.frame["difference"].to_numpy(dtype=np.float64)
    return float(np.abs(gaps).max()) if not np.isnan(gaps).any() else np.nan


def make_comparative_separation_scorer(
    *,
    statistic="max_gap",
    n_pairs=None,
    tie="incorrect",
    variance="clustered",
    correction="holm",
    random_state=0,
    response_method=("decision_function", "predict_proba", "predict"),
):
    """Make a scikit-learn scorer of comparative separation.

    The scorer evaluates the estimator's scores on the test fold (the first of
    ``response_method`` it has: a classifier's decision function or positive-class
    probability, a regressor's prediction), draws pairs of the fold's items with
    :func:`make_comparative_pairs` and returns
    :func:`comparative_separation_statistic`. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``) model selection routes
    ``sensitive_features`` to it: the scorer requests it by default.

    Parameters
    ----------
    statistic : {"max_gap", "min_pvalue"}, default="max_gap"
        ``"max_gap"`` (lower is better: the scorer negates it, as scikit-learn
        does for losses) or ``"min_pvalue"`` (higher is better).
    n_pairs : int, default=None
        Pairs drawn per fold (``None``: twice the fold's size).
    tie, variance, correction
        See :func:`comparative_separation_test`.
    random_state : None or int, default=0
        Seed of the pair draws, the same for every fold and candidate.
    response_method : str or tuple of str, \
            default=("decision_function", "predict_proba", "predict")
        Estimator methods tried in order for the scores.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sensitive_features=...)``.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_smallfair.stats import make_comparative_separation_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + rng.normal(size=300)
    >>> A = rng.choice(["a", "b"], size=300)
    >>> scorer = make_comparative_separation_scorer(statistic="max_gap")
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, scoring=scorer,
    ...                           cv=3).fit(X, y, sensitive_features=A)
    >>> bool((search.cv_results_["mean_test_score"] <= 0).all())
    True
    """
    statistic = check_choice(statistic, "statistic", STATISTICS)
    kwargs = dict(
        statistic=statistic,
        n_pairs=check_n_pairs(n_pairs),
        tie=check_choice(tie, "tie", TIES),
        variance=check_choice(variance, "variance", VARIANCES),
        correction=check_correction(correction),
        random_state=random_state,
    )
    sign = -1 if statistic == "max_gap" else 1
    return GroupScorer(comparative_separation_statistic, sign, kwargs, response_method)
