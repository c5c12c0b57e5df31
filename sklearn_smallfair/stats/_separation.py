"""The separation test: equal true- and false-positive rates across groups.

*Separation* (equalized odds) asks whether the true- and false-positive rates of a
binary classifier are equal across groups. Comparative judgments, the same
question asked of ordered pairs, are tested in ``_comparative.py``.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._confusion import _grouped_counts
from .._validation import check_choice, check_probability, format_label
from ..exceptions import UndefinedGroupMetricWarning
from ._multitest import adjust_pvalues, check_correction, group_pairs
from ._results import family_summary, repr_table
from ._wald import wald_test

__all__ = ["SeparationResult", "SeparationTest", "separation_test"]

SEPARATION_VARIANCES = ("unpooled", "pooled")


@dataclass(repr=False, eq=False)
class SeparationResult:
    """Result of :func:`separation_test`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per test: ``metric`` (``"tpr"`` or ``"fpr"``), ``group_a``,
        ``group_b`` (the compared groups; ``a`` is the later of the sorted labels),
        ``n_a``, ``n_b`` (positives for TPR, negatives for FPR), ``value_a``,
        ``value_b``, ``difference`` (``value_a - value_b``), ``z``, ``p_value``,
        ``p_adjusted`` (within the metric's family of pairwise tests) and
        ``reject`` (``p_adjusted < alpha``).
    groups : pandas.DataFrame
        One row per group: ``group``, ``n``, ``n_pos``, ``n_neg``, ``tp``, ``fp``,
        ``tpr`` and ``fpr`` (NaN when undefined).
    pvalue_tpr, pvalue_fpr : float
        P-values of H0t (equal TPR) and H0f (equal FPR). With more than two groups,
        the smallest adjusted p-value of the family.
    z_tpr, z_fpr : float
        Wald statistics of the two groups (positive when the second sorted group
        has the higher rate); NaN with more than two groups.
    violated : bool
        ``min(pvalue_tpr, pvalue_fpr) < alpha`` (NaN p-values are ignored).
    alpha : float
        Significance level.
    correction : str or None
        Multiple-comparison correction within each family.
    variance : {"unpooled", "pooled"}
        Variance of the z statistics.
    """

    frame: pd.DataFrame
    groups: pd.DataFrame
    pvalue_tpr: float
    pvalue_fpr: float
    z_tpr: float
    z_fpr: float
    violated: bool
    alpha: float
    correction: str | None
    variance: str = "unpooled"

    def to_frame(self):
        """The table of tests (a copy)."""
        return self.frame.copy()

    @property
    def pvalues(self):
        """``pvalue_tpr`` and ``pvalue_fpr`` as a Series indexed ``tpr``, ``fpr``."""
        return pd.Series(
            {"tpr": self.pvalue_tpr, "fpr": self.pvalue_fpr}, name="p_value"
        )

    def __repr__(self):
        cols = ["metric", "group_a", "group_b", "value_a", "value_b", "z", "p_value"]
        cols += ["p_adjusted", "reject"]
        return (
            f"SeparationResult(violated={self.violated}, alpha={self.alpha}, "
            f"pvalue_tpr={self.pvalue_tpr:.4g}, pvalue_fpr={self.pvalue_fpr:.4g})\n"
            f"{repr_table(self.frame, cols)}"
        )

    def _repr_html_(self):
        return self.frame._repr_html_()


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
    violated when ``min(p_t, p_f) < alpha``. Under no bias the two tests are
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
    frame = pd.concat(frames, ignore_index=True)
    frame["reject"] = (frame["p_adjusted"] < alpha).to_numpy()
    (p_t, p_f), (z_t, z_f), verdict = family_summary(
        frame, "metric", ("tpr", "fpr"), alpha, groups.shape[0] == 2
    )
    return SeparationResult(
        frame=frame,
        groups=table,
        pvalue_tpr=p_t,
        pvalue_fpr=p_f,
        z_tpr=z_t,
        z_fpr=z_f,
        violated=verdict,
        alpha=alpha,
        correction=correction,
        variance=variance,
    )


class SeparationTest(BaseEstimator):
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
        ``pvalue_tpr`` and ``pvalue_fpr`` indexed ``tpr``, ``fpr``.
    violated_ : bool
        Whether separation is violated at ``alpha``.

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
    tpr    1.000
    fpr    0.546
    Name: p_value, dtype: float64
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
        self.result_ = separation_test(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            alpha=self.alpha,
            correction=self.correction,
            sample_weight=sample_weight,
            pos_label=self.pos_label,
            variance=self.variance,
        )
        self.results_ = self.result_.to_frame()
        self.groups_ = self.result_.groups.copy()
        self.pvalues_ = self.result_.pvalues
        self.violated_ = self.result_.violated
        return self
