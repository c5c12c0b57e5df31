"""Per-group metric tables."""

import warnings

import numpy as np
import pandas as pd

from .._confusion import (
    FN,
    FP,
    TN,
    TP,
    reference_counts,
    rows_or_counts,
)
from .._params import COUNTS, POS_LABEL, REFERENCE, ZERO_DIVISION, validate_params
from .._validation import check_smoothing, check_zero_division, format_label
from ..exceptions import UndefinedGroupMetricWarning
from ..smoothing import BaseSmoothing
from ._registry import Metric, get_metrics

__all__ = ["group_metrics"]


class _GroupCounts:
    """Per-group counts with lazily computed references and smoothed matrices."""

    def __init__(self, groups, counts, reference, smoothing):
        self.groups = groups
        self.counts = counts
        self.reference = reference
        self.smoothing = smoothing
        self._ref = None
        self._smoothed = None

    @property
    def ref(self):
        if self._ref is None:
            self._ref = reference_counts(
                self.counts, self.reference, groups=self.groups
            )
        return self._ref

    @property
    def smoothed(self):
        if self._smoothed is None:
            ref = self.ref if self.smoothing.requires_reference else None
            self._smoothed = self.smoothing.transform(self.counts, ref)
        return self._smoothed

    def values(self, metric, *, smoothed=False, zero_division=np.nan):
        """Metric per group, raw or smoothed, and the mask of undefined values.

        Two-group metrics compare each group with its reference matrix (the
        reference itself is never smoothed). Undefined values follow
        ``zero_division`` (a validated policy); ``"warn"`` names the groups.
        """
        counts = self.smoothed if smoothed else self.counts
        if metric.n_groups == 2:
            counts = np.stack(
                [counts, np.broadcast_to(self.ref, counts.shape)], axis=-2
            )
        values = np.asarray(metric.func(counts), dtype=np.float64)
        undefined = ~np.isfinite(values)
        values = np.where(undefined, np.nan, values)
        if zero_division == "warn":
            if undefined.any():
                _warn_undefined(
                    metric.name,
                    self.groups,
                    undefined,
                    self.counts,
                    what=" (smoothed)" if smoothed else "",
                )
        elif not np.isnan(zero_division):
            values = np.where(undefined, zero_division, values)
        return values, undefined


def _warn_undefined(metric_name, groups, undefined, counts, *, what=""):
    bad = np.flatnonzero(undefined)
    detail = ", ".join(
        f"{format_label(groups[i])} (n={_fmt_num(counts[i].sum())}, "
        f"n_pos={_fmt_num(counts[i, TP] + counts[i, FN])})"
        for i in bad[:10]
    )
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    warnings.warn(
        f"{metric_name}{what} is undefined (0/0) for group(s) {detail}{more}; "
        f"returned as NaN. Pass zero_division=np.nan to silence this warning, 0.0 or "
        f"1.0 to substitute a value, or smoothing=CrossPriorSmoothing(lam) to borrow "
        f"strength from the reference group.",
        UndefinedGroupMetricWarning,
        stacklevel=4,
    )


def _fmt_num(x):
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:.4g}"


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "smoothing": [None, BaseSmoothing],
        "reference": REFERENCE,
        "zero_division": ZERO_DIVISION,
        "sample_weight": ["array-like", None],
        "pos_label": POS_LABEL,
    }
)
def group_metrics(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    metrics=("tpr", "fpr"),
    smoothing=None,
    reference="rest",
    zero_division="warn",
    sample_weight=None,
    pos_label=1,
):
    """Confusion-matrix metrics for every group, raw and optionally smoothed.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True binary labels.
    y_pred : array-like of shape (n_samples,)
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; several columns define intersectional groups ``"a|b"``.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group confusion matrices instead of rows (for published tables); see
        :func:`~sklearn_smallfair.check_group_counts` for the accepted forms.
    metrics : str or sequence of str, default=("tpr", "fpr")
        Names or aliases from :func:`metric_names`. Two-group metrics (``ofi``,
        ``te``) compare each group (first) with its reference (second).
    smoothing : AdditiveSmoothing, CrossPriorSmoothing or None, default=None
        When given, each metric is also reported on the smoothed matrices, in a
        column ``<metric>_smoothed``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference matrix of each group for
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing` and the
        two-group metrics; see :func:`~sklearn_smallfair.reference_counts`.
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        Value reported for undefined metrics. ``"warn"`` keeps NaN and emits an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning` naming
        the groups; ``np.nan`` keeps NaN silently; ``0.0``/``1.0`` substitute. The
        ``<metric>_undefined`` columns flag undefined values whatever the policy.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; ``n``, ``n_pos``, ``n_neg`` are then weighted sums.
    pos_label : int, float, bool or str, default=1
        The positive class.

    Returns
    -------
    table : pandas.DataFrame
        One row per group (index: the group labels), columns ``n``, ``n_pos``,
        ``n_neg``, then per metric ``<metric>``, ``<metric>_undefined`` and, with
        ``smoothing``, ``<metric>_smoothed``, ``<metric>_smoothed_undefined``.
        Metric columns use the canonical names.

    See Also
    --------
    confusion_counts : The per-group matrices behind the table.
    make_group_scorer : An aggregate of one column as a scikit-learn scorer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import group_metrics
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> y_true = [1, 1, 0, 0, 1, 0, 0, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "a", "b", "b", "b"]
    >>> group_metrics(y_true, y_pred, sensitive_features=groups,
    ...               metrics=["tpr", "fpr"], zero_division=np.nan)
           n  n_pos  n_neg       tpr  tpr_undefined       fpr  fpr_undefined
    group
    a      5      3      2  0.666667          False  0.500000          False
    b      3      0      3       NaN           True  0.333333          False
    >>> table = group_metrics(y_true, y_pred, sensitive_features=groups,
    ...                       metrics="tpr", smoothing=CrossPriorSmoothing(lam=2),
    ...                       zero_division=np.nan)
    >>> table[["tpr", "tpr_smoothed"]].round(3)
             tpr  tpr_smoothed
    group
    a      0.667         0.667
    b        NaN         0.667

    From published per-group matrices:

    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> compas = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> group_metrics(counts=compas, metrics=["tpr", "ppv"])[["n", "tpr", "ppv"]]
              n       tpr       ppv
    group
    Black  3178  0.616253  0.207447
    White  2265  0.373786  0.168490
    """
    zero_division = check_zero_division(zero_division)
    resolved = get_metrics(metrics)
    smoothing = check_smoothing(smoothing)
    groups, counts, name = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
    )
    gc = _GroupCounts(groups, counts, reference, smoothing)
    if smoothing is not None and smoothing.requires_reference:
        gc.ref  # noqa: B018 - fail early on a bad reference
    columns = {
        "n": counts.sum(axis=1),
        "n_pos": counts[:, TP] + counts[:, FN],
        "n_neg": counts[:, FP] + counts[:, TN],
    }
    variants = [(False, "")] + ([(True, "_smoothed")] if smoothing is not None else [])
    for metric in resolved:
        for smoothed, suffix in variants:
            values, undefined = gc.values(
                metric, smoothed=smoothed, zero_division=zero_division
            )
            columns[metric.name + suffix] = values
            columns[f"{metric.name}{suffix}_undefined"] = undefined
    index = pd.Index(groups, name=name)
    return pd.DataFrame(columns, index=index)
