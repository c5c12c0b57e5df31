"""The result of the comparative separation test."""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._results import PairwiseResult, family_pvalue, family_z

__all__ = ["ComparativeSeparationResult"]


@dataclass(frozen=True, repr=False, eq=False)
class ComparativeSeparationResult(PairwiseResult):
    """Result of :func:`comparative_separation_test`.

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one row per
    comparison of two cells of comparative TPRs, the p-values that decide it
    (``pvalues``) and one rejection rule, ``reject = pvalues <= alpha``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per test: ``test`` (``"cross"``: ``TPR(a, b)`` vs ``TPR(b, a)``;
        ``"within"``: ``TPR(a, a)`` vs ``TPR(b, b)``), ``higher_a``, ``lower_a``,
        ``higher_b``, ``lower_b`` (the two cells compared), ``n_a``, ``n_b``,
        ``tpr_a``, ``tpr_b``, ``difference`` (``tpr_a - tpr_b``), ``se``, ``z``,
        ``df`` (degrees of freedom of the t reference of ``z``; ``inf`` for the
        normal reference), ``p_value``, ``p_adjusted`` (within the test's family;
        equal to ``p_value`` with two groups) and ``reject`` (``p_adjusted <=
        alpha``). With ``method="permutation"``, ``p_value`` is the permutation
        p-value and ``se``, ``z`` and ``df`` those of the asymptotic test.
    alpha : float
        Significance level.
    table : pandas.DataFrame
        The ``K x K`` cells in long form, indexed by ``(higher, lower)``: the group
        of the truly-higher and of the truly-lower item. Columns ``n`` (usable
        pairs), ``correct`` (correctly ordered pairs; half-integers with
        ``tie="half"``), ``tpr`` (``correct / n``, NaN when ``n = 0``) and ``se``
        (its standard error under ``variance``).
    groups : ndarray
        Sorted group labels; for two groups, group "1" is ``groups[1]``.
    n_pairs : int
        Pairs counted (distinct true order; with ``tie="drop"`` also distinct
        predicted order).
    n_predicted_ties : int
        Usable pairs whose two scores are equal (before ``tie`` is applied).
    pairs : ndarray of shape (m, 2) or None
        The pairs passed or drawn (before pairs with tied labels are dropped);
        None when all pairs were counted.
    correction, tie, variance : str or None
        The options used (``variance`` as resolved from ``"auto"``).
    pair_source : {"all", "drawn", "given", "judgments"}
        Which pairs were counted: all pairs of items with different labels, pairs
        drawn by :func:`make_comparative_pairs` (``n_pairs``), pairs passed with
        labels, or pairs passed with judgments.
    method : {"asymptotic", "permutation"}
        How the p-values were computed.
    n_resamples : int or None
        Resamples of the permutation test (None for the asymptotic test).
    stratified : bool
        Whether the tests compared the cells within the strata of equal label
        pairs (``tpr_a``, ``tpr_b`` and ``difference`` of ``frame`` are then
        standardized over the strata; ``table`` keeps the pooled rates).

    Attributes
    ----------
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``(test, higher_a, lower_a, higher_b, lower_b)`` in the order
        of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.
    violated : bool
        Whether any test rejects: ``min(p_value_cross, p_value_within) <= alpha``
        (NaN p-values are ignored).
    p_value_cross, p_value_within : float
        P-values of H0c: ``TPR(1, 0) = TPR(0, 1)`` and H0w:
        ``TPR(1, 1) = TPR(0, 0)``. With more than two groups, the smallest adjusted
        p-value of each family.
    z_cross, z_within : float
        Their z statistics (positive when the cell with group "1" as the higher
        item has the higher rate); NaN with more than two groups.
    tpr_matrix : pandas.DataFrame
        Comparative TPR as a ``K x K`` table (rows: higher, columns: lower).

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
n_rejected=2, p_value_cross=0.2207, p_value_within=0.2207, n_pairs=12)
    >>> res.pvalues.round(4)
    test    higher_a  lower_a  higher_b  lower_b
    cross   b         a        a         b          0.2207
    within  b         b        a         a          0.2207
    Name: p_adjusted, dtype: float64
    >>> bool((res.reject == (res.pvalues <= res.alpha)).all())
    True
    >>> res.pair_source, res.method
    ('given', 'asymptotic')
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
    pairs: np.ndarray | None
    correction: str | None
    tie: str
    variance: str
    pair_source: str = "given"
    method: str = "asymptotic"
    n_resamples: int | None = None
    stratified: bool = False

    p_value_cross = family_pvalue("cross")
    p_value_within = family_pvalue("within")
    z_cross = family_z("cross")
    z_within = family_z("within")

    @property
    def tpr_matrix(self):
        """Comparative TPR as a ``K x K`` DataFrame (rows: higher, columns: lower)."""
        return self.table["tpr"].unstack("lower")

    def _summary(self):
        return {**super()._summary(), "n_pairs": self.n_pairs}
