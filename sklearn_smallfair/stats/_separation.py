"""The separation test: equal true- and false-positive rates across groups.

*Separation* (equalized odds) asks whether the true- and false-positive rates of a
binary classifier are equal across groups. Comparative judgments, the same
question asked of ordered pairs, are tested in ``_comparative.py``.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._confusion import _grouped_counts
from .._validation import check_choice, check_probability, format_label
from ..exceptions import UndefinedGroupMetricWarning
from ._multitest import adjust_pvalues, check_correction, group_pairs
from ._results import PairwiseResult, TestEstimator, family_pvalue, family_z
from ._wald import wald_test

__all__ = ["SeparationResult", "SeparationTest", "separation_test"]

SEPARATION_VARIANCES = ("unpooled", "pooled")


@dataclass(frozen=True, repr=False, eq=False)
class SeparationResult(PairwiseResult):
    """Result of :func:`separation_test`.

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one row per
    comparison of two groups on TPR or FPR, the p-values that decide it
    (``pvalues``) and one rejection rule, ``reject = pvalues <= alpha``.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per test: ``metric`` (``"tpr"`` or ``"fpr"``), ``group_a``,
        ``group_b`` (the compared groups; ``a`` is the later of the sorted labels),
        ``n_a``, ``n_b`` (positives for TPR, negatives for FPR), ``value_a``,
        ``value_b``, ``difference`` (``value_a - value_b``), ``z``, ``p_value``,
        ``p_adjusted`` (within the metric's family of pairwise tests; equal to
        ``p_value`` with two groups) and ``reject`` (``p_adjusted <= alpha``).
    alpha : float
        Significance level.
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``(metric, group_a, group_b)`` in the order of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.
    violated : bool
        Whether any test rejects: ``min(pvalue_tpr, pvalue_fpr) <= alpha`` (NaN
        p-values are ignored).
    pvalue_tpr, pvalue_fpr : float
        P-values of H0t (equal TPR) and H0f (equal FPR). With more than two groups,
        the smallest adjusted p-value of the family.
    z_tpr, z_fpr : float
        Wald statistics of the two groups (positive when the second sorted group
        has the higher rate); NaN with more than two groups.
    groups : pandas.DataFrame
        One row per group: ``group``, ``n``, ``n_pos``, ``n_neg``, ``tp``, ``fp``,
        ``tpr`` and ``fpr`` (NaN when undefined).
    correction : str or None
        Multiple-comparison correction within each family.
    variance : {"unpooled", "pooled"}
        Variance of the z statistics.

    Examples
    --------
    Group ``b`` has the lower TPR (1/4 against 3/4) and the higher FPR (2/4
    against 1/4); at ``alpha = 0.2`` the TPR test rejects:

    >>> from sklearn_smallfair.stats import separation_test
    >>> res = separation_test(
    ...     [1, 1, 1, 1, 0, 0, 0, 0] * 2,
    ...     [1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0],
    ...     sensitive_features=["a"] * 8 + ["b"] * 8, alpha=0.2)
    >>> res
    SeparationResult(violated=True, alpha=0.2, n_tests=2, n_rejected=1, \
pvalue_tpr=0.1025, pvalue_fpr=0.4497)
    >>> res.pvalues.round(4)
    metric  group_a  group_b
    tpr     b        a          0.1025
    fpr     b        a          0.4497
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
    variance: str = "unpooled"

    pvalue_tpr = family_pvalue("tpr")
    pvalue_fpr = family_pvalue("fpr")
    z_tpr = family_z("tpr")
    z_fpr = family_z("fpr")


def separation_test(
    y_true,
    y_pred,
    *,
    sensitive_features,
    alpha=0.05,
    correction="holm",
    sample_weight=None,
    pos_label=1,
    variance="unpooled",
):
    """Test separation (equal TPR and FPR across groups) of a binary classifier.

    For two groups, H0t: ``TPR_1 = TPR_0`` and H0f: ``FPR_1 = FPR_0`` are tested
    with two-sided Wald z-tests with unpooled variances ``mu (1 - mu) / n``
    (:func:`~sklearn_smallfair.stats._wald.wald_test`), and separation is declared
    violated when ``min(p_t, p_f) <= alpha``. Under no bias the two tests are
    independent, so this joint verdict has a false-positive rate of
    ``1 - (1 - alpha)^2`` (0.0975 at ``alpha = 0.05``).

    Group "1" is the second of the sorted group labels (``1`` for 0/1, ``True``
    for booleans, ``"b"`` for ``"a"``/``"b"``) and group "0" the first; the
    statistics ``z`` are positive when group "1" has the higher rate.

    With more than two groups every pair of groups is compared (for TPR and for
    FPR), the p-values of each family (TPR, FPR) are adjusted with ``correction``,
    and the headline p-values are the smallest adjusted p-value of each family.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; at least two groups. Several columns define intersectional
        groups ``"a|b"``.
    alpha : float, default=0.05
        Significance level of ``violated`` and ``reject``.
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
        Multiple-comparison adjustment within each family of pairwise tests (see
        :func:`adjust_pvalues`); with two groups there is one test per family and
        nothing to adjust.
    sample_weight : array-like of shape (n_samples,), default=None
        Frequency weights: the counts and the Wald sample sizes are weighted sums,
        so integer weights equal repeating rows.
    pos_label : int, float, bool or str, default=1
        The positive class.
    variance : {"unpooled", "pooled"}, default="unpooled"
        ``"unpooled"``: the Wald test above (the published test). ``"pooled"``:
        the two-proportion score test, with the variance under the null
        ``p (1 - p) (1 / n_a + 1 / n_b)`` of the pooled rate ``p``. Use it with
        small groups: when a small group's rate is 0 or 1 its unpooled variance
        is 0, and the Wald test then rejects far more often than ``alpha`` under
        the null (about half the time with 5 negatives and an FPR of 0.12).

    Returns
    -------
    result : SeparationResult
        ``result.violated``, ``result.pvalue_tpr``, ``result.pvalue_fpr``, the
        per-group table ``result.groups`` and the tests ``result.to_frame()``.

    See Also
    --------
    comparative_separation_test : The same question for comparative judgments.
    SeparationTest : The test as a scikit-learn estimator.

    Examples
    --------
    >>> from sklearn_smallfair.stats import separation_test
    >>> y_true = [1] * 10 + [0] * 10 + [1] * 5 + [0] * 5
    >>> y_pred = [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8 + [1] * 2 + [0] * 3 + \
[1] * 3 + [0] * 2
    >>> groups = ["a"] * 20 + ["b"] * 10
    >>> res = separation_test(y_true, y_pred, sensitive_features=groups)
    >>> res.groups
      group   n  n_pos  n_neg  tp  fp  tpr  fpr
    0     a  20     10     10   8   2  0.8  0.2
    1     b  10      5      5   2   3  0.4  0.6
    >>> round(res.z_tpr, 4), round(res.pvalue_tpr, 4), res.violated
    (-1.5811, 0.1138, False)
    """
    alpha = check_probability(alpha, "alpha")
    correction = check_correction(correction)
    variance = check_choice(variance, "variance", SEPARATION_VARIANCES)
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    groups, counts, _ = _grouped_counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    qa, pb = group_pairs(groups)
    if sample_weight is None:
        counts = counts.astype(np.int64)
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
                stacklevel=2,
            )
    frames = []
    for metric, hits, size, rate in (
        ("tpr", tp, n_pos, tpr),
        ("fpr", fp, n_neg, fpr),
    ):
        z, p = wald_test(
            hits[qa], size[qa], hits[pb], size[pb], pooled=variance == "pooled"
        )
        frames.append(
            pd.DataFrame(
                {
                    "metric": metric,
                    "group_a": groups[qa],
                    "group_b": groups[pb],
                    "n_a": size[qa],
                    "n_b": size[pb],
                    "value_a": rate[qa],
                    "value_b": rate[pb],
                    "difference": rate[qa] - rate[pb],
                    "z": z,
                    "p_value": p,
                    "p_adjusted": adjust_pvalues(p, correction),
                }
            )
        )
    return SeparationResult(
        frame=pd.concat(frames, ignore_index=True),
        alpha=alpha,
        groups=table,
        correction=correction,
        variance=variance,
    )


class SeparationTest(TestEstimator):
    """The separation test as a scikit-learn estimator.

    Holds the parameters of :func:`separation_test`; :meth:`fit` runs the test and
    stores its results.

    Parameters
    ----------
    alpha : float, default=0.05
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
    pos_label : int, float, bool or str, default=1
    variance : {"unpooled", "pooled"}, default="unpooled"
        See :func:`separation_test`.

    Attributes
    ----------
    result_ : SeparationResult
        The full result.
    results_ : pandas.DataFrame
        The tests, ``result_.to_frame()``.
    groups_ : pandas.DataFrame
        The per-group table ``result_.groups``.
    pvalues_ : pandas.Series
        ``result_.pvalues``: the p-value deciding each test, indexed by
        ``(metric, group_a, group_b)``.
    reject_ : pandas.Series of bool
        ``result_.reject``: ``pvalues_ <= alpha``.
    violated_ : bool
        Whether separation is violated at ``alpha`` (any test rejects).

    Examples
    --------
    >>> from sklearn_smallfair.stats import SeparationTest
    >>> y_true = [1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0]
    >>> y_pred = [1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> test = SeparationTest().fit(y_true, y_pred, sensitive_features=groups)
    >>> test.violated_
    False
    >>> test.pvalues_.round(3)
    metric  group_a  group_b
    tpr     b        a          1.000
    fpr     b        a          0.546
    Name: p_adjusted, dtype: float64
    """

    def __init__(self, alpha=0.05, correction="holm", pos_label=1, variance="unpooled"):
        self.alpha = alpha
        self.correction = correction
        self.pos_label = pos_label
        self.variance = variance

    def fit(self, y_true, y_pred, *, sensitive_features, sample_weight=None):
        """Run the test.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n_samples,)
            True and predicted binary labels.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
            Group labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights.

        Returns
        -------
        self : SeparationTest
        """
        result = separation_test(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            alpha=self.alpha,
            correction=self.correction,
            sample_weight=sample_weight,
            pos_label=self.pos_label,
            variance=self.variance,
        )
        self.groups_ = result.groups.copy()
        return self._keep(result)
