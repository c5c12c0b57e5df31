"""Separation and comparative separation tests.

*Separation* (equalized odds) asks whether the true- and false-positive rates of a
binary classifier are equal across groups. *Comparative separation* asks the same
of comparative judgments: for pairs of items whose true order is known, is the
model's ordering equally often right whatever the groups of the two items?

For a pair ``(i, j)`` with true order ``y_ij = sign(y_i - y_j)`` (pairs with tied
labels carry no order and are dropped) and predicted order
``c_ij = sign(s_i - s_j)``, the comparative true-positive rate of the cell
``(a, b)`` is the fraction of correctly ordered pairs among the pairs whose
truly-higher item is in group ``a`` and truly-lower item in group ``b`` (both
orientations of a pair are pooled). For a binary classifier scored by its
predicted labels, ``TPR(a, b) = TPR_a * TNR_b``.
"""

import warnings
from dataclasses import dataclass
from itertools import combinations
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.special import ndtr
from sklearn.base import BaseEstimator

from .._confusion import _grouped_counts
from .._random import resolve_seed
from .._scoring import GroupScorer
from .._validation import (
    _as_1d,
    _check_no_missing,
    _reject_mapping,
    check_choice,
    check_probability,
    check_sensitive_features,
    format_label,
    format_labels,
)
from ..exceptions import UndefinedGroupMetricWarning
from ._multitest import adjust_pvalues
from ._wald import wald_test

__all__ = [
    "ComparativeSeparationResult",
    "ComparativeSeparationTest",
    "SeparationResult",
    "SeparationTest",
    "comparative_separation_statistic",
    "comparative_separation_test",
    "make_comparative_pairs",
    "make_comparative_separation_scorer",
    "separation_test",
]

TIES = ("incorrect", "half", "drop")
VARIANCES = ("clustered", "independent")
SEPARATION_VARIANCES = ("unpooled", "pooled")
STATISTICS = ("max_gap", "min_pvalue")
# Pairs are counted in chunks of this many: the temporaries of a chunk stay in
# cache and their memory is reused, instead of a dozen arrays as long as the pairs.
_CHUNK = 1 << 20
# The per-item residual sums (items x 2 x groups) cover every item when that array
# is at most 8 times the number of pairs (or this small); otherwise only the items
# that are in pairs.
_DENSE_CLUSTER_MIN = 1 << 16
# np.add.at is as fast as bincount from numpy 1.25 on, and much slower before
_ADD_AT_IS_FAST = np.lib.NumpyVersion(np.__version__) >= "1.25.0"


# =====================================================================================
# Shared checks
# =====================================================================================
def _check_correction(correction):
    adjust_pvalues(np.empty(0), correction)  # validates the name
    return correction


def _check_n_pairs(n_pairs):
    if n_pairs is None:
        return None
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, Integral) or n_pairs < 1:
        raise ValueError(
            f"n_pairs must be None (2 x the number of items) or an integer >= 1; "
            f"got {n_pairs!r}."
        )
    return int(n_pairs)


def _check_numeric(values, name, hint):
    """A finite 1-D numeric array (booleans become 0/1)."""
    arr = _as_1d(values, name)
    _check_no_missing(arr, name)
    if arr.dtype.kind == "O":
        distinct = pd.unique(arr)
        if all(
            isinstance(v, (Real, np.number, bool, np.bool_)) for v in distinct.tolist()
        ):
            arr = arr.astype(np.float64)
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}. {hint}")
    return arr


def _check_groups(sensitive_features, n_items, name):
    """Encode group labels; at least two groups are needed."""
    if sensitive_features is not None and not isinstance(
        sensitive_features, pd.DataFrame
    ):
        if np.ndim(sensitive_features) >= 1 and len(sensitive_features) != n_items:
            raise ValueError(
                f"sensitive_features has {len(sensitive_features)} rows but {name} "
                f"has {n_items}; pass one group label per item."
            )
    groups, codes, group_name = check_sensitive_features(sensitive_features, n_items)
    if groups.shape[0] < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; "
            f"separation compares groups, so at least two are needed."
        )
    return groups, codes, group_name


def _headline(p_adjusted):
    """Smallest adjusted p-value of a family (NaN when no test could be run)."""
    p = np.asarray(p_adjusted, dtype=np.float64)
    return float(np.nanmin(p)) if (~np.isnan(p)).any() else np.nan


def _violated(p1, p2, alpha):
    p = np.fmin(p1, p2)
    return bool(not np.isnan(p) and p < alpha)


def _group_pairs(n_groups):
    """Index pairs ``(q, p)`` with ``p < q``: group ``q`` is compared with ``p``.

    For two groups this is ``(1, 0)``: the second sorted label against the first.
    """
    return [(q, p) for p, q in combinations(range(n_groups), 2)]


def _z_test(diff, var, defined):
    """Two-sided z-test of ``diff`` with variance ``var``, ``wald_test``'s rules.

    Zero variance gives ``z = 0`` for equal proportions and ``+-inf`` otherwise;
    undefined comparisons give NaN.
    """
    diff = np.asarray(diff, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var)
        z = np.where(
            se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf)
        )
    z = np.where(defined, z, np.nan)
    return z, 2.0 * ndtr(-np.abs(z))


def _repr_table(frame, columns):
    return frame[columns].to_string(
        float_format=lambda v: f"{v:.4g}", index=False, na_rep="NaN"
    )


# =====================================================================================
# Separation
# =====================================================================================
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
            f"{_repr_table(self.frame, cols)}"
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
    correction = _check_correction(correction)
    variance = check_choice(variance, "variance", SEPARATION_VARIANCES)
    if sensitive_features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    groups, counts, _ = _grouped_counts(
        y_true, y_pred, sensitive_features, sample_weight, pos_label
    )
    if groups.shape[0] < 2:
        raise ValueError(
            f"sensitive_features has a single group {format_labels(groups)}; "
            f"separation compares groups, so at least two are needed."
        )
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
    qa, pb = np.array(_group_pairs(groups.shape[0])).T
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
    by = {m: frame[frame["metric"] == m] for m in ("tpr", "fpr")}
    p_t, p_f = _headline(by["tpr"]["p_adjusted"]), _headline(by["fpr"]["p_adjusted"])
    binary = groups.shape[0] == 2
    return SeparationResult(
        frame=frame,
        groups=table,
        pvalue_tpr=p_t,
        pvalue_fpr=p_f,
        z_tpr=float(by["tpr"]["z"].iloc[0]) if binary else np.nan,
        z_fpr=float(by["fpr"]["z"].iloc[0]) if binary else np.nan,
        violated=_violated(p_t, p_f, alpha),
        alpha=alpha,
        correction=correction,
        variance=variance,
    )


# =====================================================================================
# Comparative pairs
# =====================================================================================
_LABEL_HINT = (
    "Pass class labels (e.g. 0/1) or regression targets; encode ordered string "
    "categories as numbers first."
)
_SCORE_HINT = "Pass one real-valued score per item (e.g. decision_function output)."


def make_comparative_pairs(y_true, *, n_pairs=None, random_state=None):
    """Draw random pairs of items with different labels for comparative tests.

    Two independent index draws with replacement, ``i`` and ``j``, each of
    ``n_pairs`` items; the pairs whose labels are tied (``y_i == y_j``, including
    every self-pair ``i == j``) carry no order and are dropped. So the number of
    pairs returned, ``m``, is at most ``n_pairs`` (about ``n_pairs * P(y_i !=
    y_j)``).

    Parameters
    ----------
    y_true : array-like of shape (n_items,)
        Numeric labels (class labels or regression targets) of the items.
    n_pairs : int, default=None
        Number of pairs drawn before ties are dropped; ``None`` draws
        ``2 * n_items``.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
        Seed of the draws.

    Returns
    -------
    pairs : ndarray of int64, shape (m, 2)
        Item indices ``(i, j)`` with ``y_true[i] != y_true[j]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import make_comparative_pairs
    >>> y = [0, 1, 1, 0, 2]
    >>> pairs = make_comparative_pairs(y, n_pairs=10, random_state=0)
    >>> pairs.shape[1], pairs.shape[0] <= 10
    (2, True)
    >>> bool((np.take(y, pairs[:, 0]) != np.take(y, pairs[:, 1])).all())
    True
    """
    y = _check_numeric(y_true, "y_true", _LABEL_HINT)
    n_pairs = _check_n_pairs(n_pairs)
    n = y.shape[0]
    if n < 2 or (y == y[0]).all():
        raise ValueError(
            f"y_true must hold at least two different values to form ordered pairs; "
            f"got {n} item(s) with {len(np.unique(y))} distinct value(s)."
        )
    rng = np.random.default_rng(resolve_seed(random_state))
    size = 2 * n if n_pairs is None else n_pairs
    i = rng.integers(0, n, size=size)
    j = rng.integers(0, n, size=size)
    keep = y[i] != y[j]
    return np.column_stack((i[keep], j[keep])).astype(np.int64, copy=False)


def _check_pairs(pairs, n_items):
    _reject_mapping(pairs, "pairs")
    arr = np.asarray(pairs)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"pairs must have shape (n_pairs, 2): one row (i, j) of item indices per "
            f"pair; got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError("pairs is empty; pass at least one pair (i, j).")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or not np.array_equal(arr, np.round(arr)):
            raise ValueError(
                "pairs must hold integer item indices; got non-integer or "
                "non-finite values."
            )
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        raise TypeError(
            f"pairs must hold integer item indices (positions in y_score), got dtype "
            f"{arr.dtype}."
        )
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n_items:
        bad = int(((arr < 0) | (arr >= n_items)).any(axis=1).sum())
        raise ValueError(
            f"pairs holds item indices from {lo} to {hi}, but there are {n_items} "
            f"items (valid indices 0..{n_items - 1}); {bad} pair(s) are out of "
            f"range. Index items by their position in y_score."
        )
    if arr.dtype.kind == "u":
        arr = arr.astype(np.int64)
    i, j = arr[:, 0], arr[:, 1]
    for start in range(0, i.shape[0], _CHUNK):
        same = i[start : start + _CHUNK] == j[start : start + _CHUNK]
        if same.any():
            same = i == j
            raise ValueError(
                f"pairs contains {int(same.sum())} self-pair(s) (i == j; first at "
                f"row {int(np.flatnonzero(same)[0])}); an item cannot be compared "
                f"with itself. Drop those rows."
            )
    return i, j


def _check_judgments(judgments, m):
    arr = _as_1d(judgments, "judgments")
    _check_no_missing(arr, "judgments")
    if arr.shape[0] != m:
        raise ValueError(
            f"judgments has {arr.shape[0]} entries but pairs has {m} rows; pass one "
            f"judgment per pair."
        )
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                "judgments must be +1/-1 (or booleans), got non-numeric values."
            ) from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"judgments must be +1/-1 (or booleans), got dtype {arr.dtype}."
        )
    ok = (arr == 1) | (arr == -1)
    if not ok.all():
        bad = np.unique(arr[~ok])
        raise ValueError(
            f"judgments must be +1 (the first item of the pair is higher) or -1 (the "
            f"second is higher); got {format_labels(bad)}. Pairs judged equal carry "
            f"no order: drop them."
        )
    return arr > 0


# =====================================================================================
# Comparative separation
# =====================================================================================
@dataclass(repr=False, eq=False)
class ComparativeSeparationResult:
    """Result of :func:`comparative_separation_test`.

    Attributes
    ----------
    table : pandas.DataFrame
        The ``K x K`` cells in long form, indexed by ``(higher, lower)``: the group
        of the truly-higher and of the truly-lower item. Columns ``n`` (usable
        pairs), ``correct`` (correctly ordered pairs; half-integers with
        ``tie="half"``), ``tpr`` (``correct / n``, NaN when ``n = 0``) and ``se``
        (its standard error under ``variance``).
    frame : pandas.DataFrame
        One row per test: ``test`` (``"cross"``: ``TPR(a, b)`` vs ``TPR(b, a)``;
        ``"within"``: ``TPR(a, a)`` vs ``TPR(b, b)``), ``higher_a``, ``lower_a``,
        ``higher_b``, ``lower_b`` (the two cells compared), ``n_a``, ``n_b``,
        ``tpr_a``, ``tpr_b``, ``difference`` (``tpr_a - tpr_b``), ``se``, ``z``,
        ``p_value``, ``p_adjusted`` (within the test's family) and ``reject``
        (``p_adjusted < alpha``).
    groups : ndarray
        Sorted group labels; for two groups, group "1" is ``groups[1]``.
    pvalue_cross, pvalue_within : float
        P-values of H0c: ``TPR(1, 0) = TPR(0, 1)`` and H0w:
        ``TPR(1, 1) = TPR(0, 0)``. With more than two groups, the smallest adjusted
        p-value of each family.
    z_cross, z_within : float
        Their z statistics (positive when the cell with group "1" as the higher
        item has the higher rate); NaN with more than two groups.
    violated : bool
        ``min(pvalue_cross, pvalue_within) < alpha`` (NaN p-values are ignored).
    n_pairs : int
        Pairs counted (distinct true order; with ``tie="drop"`` also distinct
        predicted order).
    n_predicted_ties : int
        Usable pairs whose two scores are equal (before ``tie`` is applied).
    pairs : ndarray of shape (m, 2)
        The pairs passed or drawn (before pairs with tied labels are dropped).
    alpha, correction, tie, variance
        The options used.
    """

    table: pd.DataFrame
    frame: pd.DataFrame
    groups: np.ndarray
    pvalue_cross: float
    pvalue_within: float
    z_cross: float
    z_within: float
    violated: bool
    n_pairs: int
    n_predicted_ties: int
    pairs: np.ndarray
    alpha: float
    correction: str | None
    tie: str
    variance: str

    def to_frame(self):
        """The table of tests (a copy)."""
        return self.frame.copy()

    @property
    def tpr_matrix(self):
        """Comparative TPR as a ``K x K`` DataFrame (rows: higher, columns: lower)."""
        return self.table["tpr"].unstack("lower")

    @property
    def pvalues(self):
        """``pvalue_cross`` and ``pvalue_within`` as a Series."""
        return pd.Series(
            {"cross": self.pvalue_cross, "within": self.pvalue_within},
            name="p_value",
        )

    def __repr__(self):
        cols = ["test", "higher_a", "lower_a", "higher_b", "lower_b", "tpr_a"]
        cols += ["tpr_b", "z", "p_value", "p_adjusted", "reject"]
        return (
            f"ComparativeSeparationResult(violated={self.violated}, "
            f"alpha={self.alpha}, pvalue_cross={self.pvalue_cross:.4g}, "
            f"pvalue_within={self.pvalue_within:.4g}, n_pairs={self.n_pairs})\n"
            f"{_repr_table(self.frame, cols)}"
        )

    def _repr_html_(self):
        return self.frame._repr_html_()


def _small_int(codes, bound):
    """``codes`` in the smallest signed integer type holding values up to bound."""
    for dtype in (np.int8, np.int16, np.int32):
        if bound <= np.iinfo(dtype).max:
            return codes.astype(dtype)
    return codes.astype(np.int64)


def _compact_labels(y):
    """Integer-valued labels as small integers (same order): faster to gather."""
    if y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):
        return y
    lo, hi = y.min(), y.max()
    span = float(hi) - float(lo) if y.dtype.kind == "f" else int(hi) - int(lo)
    if span > np.iinfo(np.int32).max:
        return y
    return _small_int(y - lo, span)


def _sign_of_difference(a, b):
    """``sign(a - b)`` as int8, by comparisons (no overflow, any numeric dtype)."""
    out = np.greater(a, b).view(np.int8)
    out -= np.less(a, b).view(np.int8)
    return out


class _Tally:
    """Counts of the pairs by state, from one pass over the pairs in chunks.

    A pair ``(i, j)`` has a true order ``t = sign(y_i - y_j)`` (``+1`` when ``i`` is
    the higher item; from ``first_higher`` for explicit judgments) and an outcome
    ``o = t sign(s_i - s_j)``: ``+1`` correctly ordered, ``0`` predicted tie, ``-1``
    wrongly ordered. Its code ``(3 t + o + 4) K^2 + g_i K + g_j`` takes ``9 K^2``
    values, and one ``bincount`` per chunk (see ``_CHUNK``) counts them. The cell
    counts, correct counts, ties and the cells' sums of squared residuals all follow
    from those ``9 K^2`` counts, so every total is an exact integer count.

    Labels and groups are packed into one small integer per item (``y << bits |
    g``) when the labels are integers, so a pair needs two gathers for them and two
    for the scores.

    With ``clustered=True`` the same pass adds each counted pair to a per-(slot,
    item) integer total of both of its items, packed as ``count << 32 | 2 x
    outcome`` (see :meth:`cluster_sums` for the slots); the residual sums follow
    once the rates are known.
    """

    def __init__(self, i, j, first_higher, y, s, g, n_groups, tie, clustered):
        K = n_groups
        kk = K * K
        self.K, self.tie = K, tie
        m = i.shape[0]
        code_dtype = _small_int(np.zeros(0), 9 * kk).dtype
        gbits = max(1, (K - 1).bit_length())
        # compact labels (see _compact_labels) are small non-negative integers
        packed = y is not None and y.dtype.kind in "iu" and y.dtype.itemsize <= 4
        if packed:
            u = _small_int(y, int(y.max()) << gbits)
            u <<= gbits
            u |= g
            gmask = u.dtype.type((1 << gbits) - 1)
        else:
            u = g
        lut = _state_tables(K, tie)
        counts = np.zeros(9 * kk, dtype=np.int64)
        self.T = self.remap = self.n_used = None
        if clustered:
            self._prepare_cluster_totals(i, j, g, m)
        for start in range(0, m, _CHUNK):
            sl = slice(start, start + _CHUNK)
            ic, jc = i[sl], j[sl]
            ui, uj = u[ic], u[jc]
            if y is None:
                t = first_higher[sl].view(np.int8) * np.int8(2)
                t -= np.int8(1)
            elif packed:
                t = _sign_of_difference(ui >> gbits, uj >> gbits)
                ui &= gmask
                uj &= gmask
            else:
                t = _sign_of_difference(y[ic], y[jc])
            o = _sign_of_difference(s[ic], s[jc])
            o *= t
            code = t.astype(code_dtype)
            code *= code_dtype.type(3)
            code += o
            code += code_dtype.type(4)
            code *= code_dtype.type(kk)
            code += ui.astype(code_dtype) * code_dtype.type(K)
            code += uj
            counts += np.bincount(code, minlength=9 * kk)
            if clustered:
                self._add_cluster_totals(code, ic, jc, lut)
        counts = counts.reshape(3, 3, K, K)  # (t + 1, o + 1, g_i, g_j)
        # cell (a, b) of the pairs with outcome o: i higher (t = +1) in (g_i, g_j),
        # j higher (t = -1) in (g_j, g_i)
        by_outcome = counts[2] + counts[0].transpose(0, 2, 1)  # (o + 1, a, b)
        wrong, ties, right = by_outcome
        self.n_label_ties = int(counts[1].sum())
        self.n_ties = int(ties.sum())
        kept_ties = 0 if tie == "drop" else ties
        self.n = (right + wrong + kept_ties).ravel()
        if tie == "half":
            self.correct = (right + 0.5 * ties).ravel()
        else:
            self.correct = right.ravel()
        self._by_outcome = by_outcome

    def squared_residuals(self, tpr):
        """Per-cell sums of squared residuals ``(outcome - tpr)^2``, shape (K, K)."""
        mu = np.nan_to_num(tpr)
        wrong, ties, right = self._by_outcome
        tie_value = {"incorrect": 0.0, "half": 0.5, "drop": None}[self.tie]
        P = right * (1.0 - mu) ** 2 + wrong * mu**2
        if tie_value is not None:
            P = P + ties * (tie_value - mu) ** 2
        return P

    def _prepare_cluster_totals(self, i, j, g, m):
        K = self.K
        n_items = g.shape[0]
        if n_items * 2 * K > max(8 * m, _DENSE_CLUSTER_MIN):
            used = np.zeros(n_items, dtype=bool)
            used[i] = True
            used[j] = True
            self.remap = np.cumsum(used) - 1
            self.g_used = g[used]
        else:
            self.g_used = g
        self.n_used = self.g_used.shape[0]
        self.T = np.zeros(2 * K * self.n_used, dtype=np.int64)

    def _add_cluster_totals(self, code, ic, jc, lut):
        if self.remap is not None:
            ic, jc = self.remap[ic], self.remap[jc]
        value = lut["value"][code]
        for slots, items in ((lut["slot_i"], ic), (lut["slot_j"], jc)):
            key = slots[code]
            key *= self.n_used
            key += items
            if _ADD_AT_IS_FAST:
                np.add.at(self.T, key, value)
            else:  # pragma: no cover - numpy < 1.25
                size = self.T.shape[0]
                counts = np.bincount(key, weights=value >> 32, minlength=size)
                twice = np.bincount(key, weights=value & 0xFFFFFFFF, minlength=size)
                self.T += (counts.astype(np.int64) << 32) + twice.astype(np.int64)

    def cluster_sums(self, tpr):
        """Residual sums per item and slot, for the item-clustered variance.

        Returns ``(T, g, P)``. ``T`` has shape (2 K, n_used): row ``b < K`` holds
        each item's residual sum over the pairs where it is the higher item and the
        other item is in group ``b``; row ``K + b`` the pairs where it is the lower
        item and the other is in group ``b != own group`` (the lower-item sums of
        the item's own-group cell ``(g, g)`` are added to row ``g``, the same
        cell). ``g`` is the group of each used item and ``P`` the per-cell sums
        of squared residuals, shape (K, K). Items in no pair are left out when
        the dense array would be large.
        """
        K, g = self.K, self.g_used
        totals = self.T.reshape(2 * K, self.n_used)
        counts = (totals >> 32).astype(np.float64)
        outcome = (totals & 0xFFFFFFFF).astype(np.float64)
        outcome *= 0.5
        mu = np.nan_to_num(tpr)
        # the cell of each (slot, item): (own group, b) as the higher item, (b, own
        # group) as the lower item
        counts[:K] *= mu[g].T
        counts[K:] *= mu[:, g]
        outcome -= counts
        return outcome, g, self.squared_residuals(tpr)


def _state_tables(K, tie):
    """By pair code: the rows of the per-item totals and the pair's packed value.

    ``slot_i``/``slot_j`` give the row of the per-item totals that item ``i``/``j``
    of the pair adds to; ``value`` is ``1 << 32 | 2 x outcome`` for counted pairs
    (``2`` correct, ``1`` a predicted tie with ``tie="half"``, ``0`` otherwise) and
    ``0`` for pairs not counted (tied labels; predicted ties with ``tie="drop"``).
    """
    kk = K * K
    code = np.arange(9 * kk)
    state, cell = np.divmod(code, kk)
    t = state // 3 - 1
    o = state % 3 - 1
    gi, gj = np.divmod(cell, K)
    same = gi == gj
    i_higher = t == 1
    slot_i = np.where(i_higher, gj, np.where(same, gj, K + gj))
    slot_j = np.where(i_higher, np.where(same, gi, K + gi), gi)
    counted = (t != 0) & ~((o == 0) & (tie == "drop"))
    twice = np.where(o == 1, 2, np.where((o == 0) & (tie == "half"), 1, 0))
    value = np.where(counted, (np.int64(1) << 32) + twice, 0).astype(np.int64)
    return {
        "slot_i": slot_i.astype(np.int64),
        "slot_j": slot_j.astype(np.int64),
        "value": value,
    }


def _clustered_variances(T, g, n, P, n_groups):
    """Item-clustered variances of the cell rates and of cross differences.

    ``V[a, b]`` is the variance of ``TPR(a, b)``; ``VD[a, b]`` that of
    ``TPR(a, b) - TPR(b, a)``, covariance included. Both are floored at the
    independent-pairs value (``P / n^2``, sum of squared residuals). Dyadic
    cluster-robust form: the sum over items of the squared per-item residual sum,
    minus each pair's own square (counted once for each of its two items).
    """
    K = n_groups
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(n > 0, 1.0 / n, 0.0)
    indep = P * inv**2
    SS = np.zeros((K, K))
    Q = np.zeros((K, K))
    for b in range(K):
        hi_sums, lo_sums = T[b], T[K + b]
        # an item of group a: higher item of cell (a, b), lower item of (b, a)
        SS[:, b] += np.bincount(g, weights=hi_sums * hi_sums, minlength=K)
        SS[b, :] += np.bincount(g, weights=lo_sums * lo_sums, minlength=K)
        # its part of TPR(a, b) - TPR(b, a) (b != a; the diagonal is not used)
        x = hi_sums * inv[:, b][g]
        x -= lo_sums * inv[b, :][g]
        Q[:, b] = np.bincount(g, weights=x * x, minlength=K)
    V = np.maximum(SS - P, P) * inv**2
    VD = np.maximum(Q + Q.T - indep - indep.T, indep + indep.T)
    return V, VD


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
    separation is violated when ``min(p_c, p_w) < alpha``. For a binary classifier
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
    correction = _check_correction(correction)
    n_pairs = _check_n_pairs(n_pairs)
    if y_score is None:
        raise ValueError(
            "y_score is required: pass one model score per item (the predicted "
            "order of a pair is sign(y_score[i] - y_score[j]))."
        )
    s = _check_numeric(y_score, "y_score", _SCORE_HINT)
    n_items = s.shape[0]
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
        y = None
    else:
        if y_true is None:
            raise ValueError(
                "pass y_true (labels of the items) or judgments with pairs (explicit "
                "comparative judgments)."
            )
        y = _check_numeric(y_true, "y_true", _LABEL_HINT)
        if y.shape[0] != n_items:
            raise ValueError(
                f"y_true and y_score have inconsistent lengths ({y.shape[0]} and "
                f"{n_items}); pass one label and one score per item."
            )
        if pairs is not None and n_pairs is not None:
            raise ValueError(
                "n_pairs is only used to draw pairs; omit it when passing pairs."
            )
    groups, codes, _ = _check_groups(sensitive_features, n_items, "y_score")
    K = groups.shape[0]
    g_codes = _small_int(codes, K)

    if judgments is not None:
        i, j = _check_pairs(pairs, n_items)
        first_higher = _check_judgments(judgments, i.shape[0])
    else:
        if pairs is None:
            pairs = make_comparative_pairs(
                y, n_pairs=n_pairs, random_state=random_state
            )
            if pairs.shape[0] == 0:
                raise ValueError(
                    f"none of the n_pairs={n_pairs} drawn pairs has two different "
                    f"labels; draw more pairs (a larger n_pairs)."
                )
        i, j = _check_pairs(pairs, n_items)
        first_higher = None
    clustered = variance == "clustered"
    if y is not None:
        y = _compact_labels(y)
    tally = _Tally(i, j, first_higher, y, s, g_codes, K, tie, clustered)
    if tally.n_label_ties == i.shape[0]:
        raise ValueError(
            "every pair has tied labels (y_true[i] == y_true[j]), so no pair has a "
            "true order; pass pairs of items with different labels."
        )
    n, correct, n_ties = tally.n, tally.correct, tally.n_ties
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.where(n > 0, correct / n, np.nan)
    n, correct, tpr = n.reshape(K, K), correct.reshape(K, K), tpr.reshape(K, K)

    if clustered:
        T, g_used, P = tally.cluster_sums(tpr)
        del tally
        V, VD = _clustered_variances(T, g_used, n, P, K)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            V = np.where(n > 0, tpr * (1 - tpr) / n, np.nan)
        VD = None
    V = np.where(n > 0, V, np.nan)

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
            stacklevel=2,
        )

    index = pd.MultiIndex.from_product([groups, groups], names=["higher", "lower"])
    table = pd.DataFrame(
        {"n": n.ravel(), "correct": correct.ravel(), "tpr": tpr.ravel()}, index=index
    )
    table["se"] = np.sqrt(V.ravel())

    qa, pb = np.array(_group_pairs(K)).T
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
            var = VD[ha, la] if test == "cross" else V[ha, la] + V[hb, lb]
            z, p = _z_test(diff, var, (n[ha, la] > 0) & (n[hb, lb] > 0))
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
    frame = pd.concat(frames, ignore_index=True)
    frame["reject"] = (frame["p_adjusted"] < alpha).to_numpy()
    by = {t: frame[frame["test"] == t] for t in ("cross", "within")}
    p_c = _headline(by["cross"]["p_adjusted"])
    p_w = _headline(by["within"]["p_adjusted"])
    return ComparativeSeparationResult(
        table=table,
        frame=frame,
        groups=groups,
        pvalue_cross=p_c,
        pvalue_within=p_w,
        z_cross=float(by["cross"]["z"].iloc[0]) if K == 2 else np.nan,
        z_within=float(by["within"]["z"].iloc[0]) if K == 2 else np.nan,
        violated=_violated(p_c, p_w, alpha),
        n_pairs=int(n.sum()),
        n_predicted_ties=n_ties,
        pairs=np.asarray(pairs),
        alpha=alpha,
        correction=correction,
        tie=tie,
        variance=variance,
    )


# =====================================================================================
# Estimators
# =====================================================================================
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


class ComparativeSeparationTest(BaseEstimator):
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
        The full result.
    results_ : pandas.DataFrame
        The tests, ``result_.to_frame()``.
    table_ : pandas.DataFrame
        The ``K x K`` cell table ``result_.table``.
    pvalues_ : pandas.Series
        ``pvalue_cross`` and ``pvalue_within`` indexed ``cross``, ``within``.
    violated_ : bool
        Whether comparative separation is violated at ``alpha``.
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
        self.result_ = comparative_separation_test(
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
        self.results_ = self.result_.to_frame()
        self.table_ = self.result_.table.copy()
        self.pvalues_ = self.result_.pvalues
        self.violated_ = self.result_.violated
        self.pairs_ = self.result_.pairs
        return self


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
        n_pairs=_check_n_pairs(n_pairs),
        tie=check_choice(tie, "tie", TIES),
        variance=check_choice(variance, "variance", VARIANCES),
        correction=_check_correction(correction),
        random_state=random_state,
    )
    sign = -1 if statistic == "max_gap" else 1
    return GroupScorer(comparative_separation_statistic, sign, kwargs, response_method)
