"""Per-group metric tables."""

import difflib
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._column_intervals import (
    INTERVAL_METHODS,
    check_interval_method,
    column_interval,
    resolve_interval_method,
)
from .._confusion import FN, FP, TN, TP, counts_have_labels, rows_or_counts
from .._draws import DEFAULT_N_RESAMPLES, MAX_N_RESAMPLES, Comparison
from .._frames import from_data
from .._params import (
    COUNTS,
    POS_LABEL,
    RANDOM_STATE,
    REFERENCE,
    ZERO_DIVISION,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import resolve_seed
from .._references import reference_counts
from .._validation import check_smoothing, check_zero_division
from ..exceptions import UndefinedGroupMetricWarning
from ..smoothing import BaseSmoothing, CrossPriorSmoothing, IntersectionalSmoothing
from ._registry import _LOOKUP, Metric, _normalise, get_metric, get_metrics
from ._warn import describe_groups, user_stacklevel

__all__ = ["group_metrics"]


class _GroupCounts:
    """Per-group counts with lazily computed references and smoothed matrices."""

    def __init__(
        self, groups, counts, reference, smoothing, labelled=True, name="group"
    ):
        self.groups = groups
        self.name = name
        self.labelled = labelled  # else groups are positions, named so
        self.counts = counts
        self.reference = reference
        self.smoothing = smoothing
        self._ref = None
        self._smoothed = None
        self._prior = None
        self._comparison = None
        self._fitted = None

    @property
    def ref(self):
        if self._ref is None:
            self._ref = reference_counts(
                self.counts, self.reference, groups=self.groups
            )
        return self._ref

    @property
    def fitted_smoothing(self):
        """A copy of the smoothing fitted on the groups and their references.

        A smoother with a fixed strength learns nothing; ``lam="auto"`` learns its
        ``lam_`` here, once, for every column, interval and consumer of the call.
        """
        if self._fitted is None:
            smoothing = clone(self.smoothing)
            if getattr(smoothing, "requires_attributes", False):
                # the attributes of intersectional groups, from their labels
                # "a|b" (the grouping's name "race|sex" names them)
                index = pd.Index(self.groups, dtype=object, name=self.name)
                self._fitted = smoothing.fit(pd.DataFrame(self.counts, index=index))
            else:
                self._fitted = smoothing.fit(self.counts, self._named_ref())
        return self._fitted

    def _named_ref(self):
        """The references, indexed by the groups' labels so that the smoother's
        warnings name the groups (``None`` when the smoother needs none)."""
        if not self.smoothing.requires_reference:
            return None
        ref = np.asarray(self.ref, dtype=np.float64)
        if ref.ndim != 2 or ref.shape[0] != len(self.groups) or not self.labelled:
            return ref
        named = pd.DataFrame(ref, index=pd.Index(self.groups, dtype=object))
        if isinstance(self.reference, str):  # not suggested again by warnings
            named.attrs["reference"] = self.reference
        return named

    def _coefficients(self):
        ref = self.ref if self.smoothing.requires_reference else None
        return self.fitted_smoothing.coefficients(self.counts.sum(axis=1), ref)

    @property
    def smoothed(self):
        if self._smoothed is None:
            self._smoothed = self.fitted_smoothing.transform(
                self.counts, self._named_ref()
            )
        return self._smoothed

    @property
    def prior(self):
        """Pseudo-counts ``a`` (G, 4) of the smoothing: ``smoothed = s (c + a)``.

        Every smoother is affine, ``scale * c + offset``, so ``a = offset / scale``:
        ``eps`` for additive smoothing, ``lam * p_ref`` for Cross-Prior Smoothing.
        Metrics are homogeneous of degree 0, so the smoothed value is the metric of
        ``c + a``, the mean of the Dirichlet posterior with prior ``a`` (times n).
        """
        if self._prior is None:
            scale, offset = self._coefficients()
            self._prior = np.broadcast_to(offset / scale, self.counts.shape)
        return self._prior

    def prior_for(self, metric, *, interval=False):
        """The pseudo-counts behind ``metric``'s smoothed column (``interval``:
        behind its posterior interval): the smoother's own prior of that metric
        where it has one (:class:`IntersectionalSmoothing`'s proportions), else
        :attr:`prior`."""
        name = "interval_pseudo_counts" if interval else "metric_pseudo_counts"
        own = getattr(self.fitted_smoothing, name, None)
        if own is None or metric.n_groups != 1:
            return self.prior
        return np.broadcast_to(own(metric), self.counts.shape)

    @property
    def comparison(self):
        """Each group's reference, as drawn for two-group metrics' intervals."""
        if self._comparison is None:
            self._comparison = Comparison.of(self.counts, self.groups, self.reference)
        return self._comparison

    def interval(
        self, metric, method, *, smoothed, alpha, n_resamples, seed, value=None
    ):
        """``(low, high)`` of one column with a concrete interval method;
        ``value``: the column's smoothed values, which the interval holds when
        its prior is not the value's (``interval_pseudo_counts``)."""
        low, high = column_interval(
            metric,
            self.counts,
            method=method,
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
            labels=np.asarray(self.groups, dtype=object),
            prior=self.prior_for(metric, interval=True) if smoothed else None,
            comparison=self.comparison if metric.n_groups == 2 else None,
        )
        if smoothed and hasattr(self.fitted_smoothing, "interval_pseudo_counts"):
            # the interval's prior is weaker than the value's: hold the value
            if value is None:
                value = self.values(metric, smoothed=True)[0]
            defined = np.isfinite(low) & np.isfinite(value)
            low = np.where(defined, np.fmin(low, value), low)
            high = np.where(defined, np.fmax(high, value), high)
        return low, high

    def values(self, metric, *, smoothed=False, zero_division=np.nan):
        """Metric per group, raw or smoothed, and the mask of undefined values.

        Two-group metrics compare each group with its reference matrix (the
        reference itself is never smoothed). Undefined values follow
        ``zero_division`` (a validated policy); ``"warn"`` names the groups.
        """
        if smoothed and hasattr(self.fitted_smoothing, "metric_pseudo_counts"):
            # the metric's own prior (metrics are homogeneous of degree 0)
            counts = self.counts + self.prior_for(metric)
        else:
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


#: Hidden registry entries (helpers of other metrics), never suggested.
_HIDDEN = {"fn_fp_ratio"}


def resolve_metric_name(name, *, hint=""):
    """The registry metric ``name`` names; an unknown name's error suggests the
    closest names and aliases."""
    try:
        return get_metric(name)
    except ValueError as error:
        known = [k for k, m in _LOOKUP.items() if m.name not in _HIDDEN]
        close = difflib.get_close_matches(_normalise(name), known, n=3, cutoff=0.6)
        suggestion = (
            f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        )
        raise ValueError(f"{error}{suggestion}{hint}") from None


def _has_many_classes(y_true, y_pred, counts):
    """Whether in-memory rows ``y_true`` and ``y_pred`` hold more than two
    classes together (multiclass targets); other inputs are left to the binary
    checks."""
    if counts is not None or y_true is None or y_pred is None:
        return False
    kinds = (list, tuple, np.ndarray, pd.Series, pd.Index)
    if not (isinstance(y_true, kinds) and isinstance(y_pred, kinds)):
        return False
    classes = set()
    for y in (y_true, y_pred):
        try:
            arr = np.asarray(y)
            if arr.ndim != 1:
                return False
            classes.update(pd.unique(arr).tolist())
        except (TypeError, ValueError):  # ragged or unhashable: the binary
            return False  # checks name the problem
        if len(classes) > 2:
            return True
    return False


def _is_multiclass_counts(counts):
    """Whether ``counts`` holds K x K matrices (not binary ``(TP, FN, FP, TN)``
    rows): a ``MulticlassCounts``, an array of shape ``(n_groups, K, K)``, a
    mapping of K x K matrices, or a long table with ``true`` and ``predicted``
    columns."""
    from collections.abc import Mapping

    from .._multiclass_counts import MulticlassCounts

    if counts is None:
        return False
    if isinstance(counts, MulticlassCounts):
        return True
    if isinstance(counts, pd.DataFrame):
        lower = {str(c).lower() for c in counts.columns}
        return {"true", "predicted"} <= lower
    if isinstance(counts, Mapping):
        first = next(iter(counts.values()), None)
        return first is not None and np.ndim(first) == 2
    return np.ndim(counts) == 3


def _multiclass_table(
    y_true,
    y_pred,
    sensitive_features,
    counts,
    metrics,
    smoothing,
    reference,
    zero_division,
    sample_weight,
    pos_label,
    confidence_level,
    interval_method,
    n_resamples,
    random_state,
    labels,
    average,
):
    """group_metrics for multiclass targets: the table of :func:`multiclass_table`."""
    from ._multiclass_table import multiclass_table

    if pos_label is not None:
        raise ValueError(
            f"pos_label={pos_label!r} does not apply to multiclass targets (more "
            f"than two classes in the rows or in labels=, average=, or K x K "
            f"counts): each class is "
            f"the positive class in turn (one row per class, or an average over "
            f"them). Drop pos_label; for one class's binary table pass "
            f"y_true == {pos_label!r} and y_pred == {pos_label!r} without labels "
            f"and average."
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    return multiclass_table(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        counts=counts,
        labels=labels,
        metrics=list(metrics),
        average=average,
        zero_division=zero_division,
        sample_weight=sample_weight,
        smoothing=smoothing,
        reference=reference,
        confidence_level=confidence_level,
        interval_method=interval_method,
        n_resamples=n_resamples,
        random_state=random_state,
    )


def _warn_undefined(metric_name, groups, undefined, counts, *, what=""):
    warnings.warn(
        f"{metric_name}{what} is undefined (0/0) for group(s) "
        f"{describe_groups(groups, counts, undefined)}; returned as NaN. Pass "
        f"zero_division=np.nan to silence this warning, 0.0 or 1.0 to substitute "
        f"a value, or smoothing=CrossPriorSmoothing(lam) to borrow strength from "
        f"the reference group.",
        UndefinedGroupMetricWarning,
        stacklevel=user_stacklevel(),
    )


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": [*COUNTS, None],
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "smoothing": [None, BaseSmoothing],
        "reference": REFERENCE,
        "zero_division": ZERO_DIVISION,
        "sample_weight": ["array-like", str, None],
        "pos_label": POS_LABEL,
        "confidence_level": [None, Number(0, 1, closed="neither")],
        "interval_method": [StrOptions(set(INTERVAL_METHODS))],
        "n_resamples": [Whole(100, MAX_N_RESAMPLES)],
        "random_state": RANDOM_STATE,
        "labels": ["array-like", None],
        "average": [StrOptions({"macro", "weighted", "micro"}), None],
        "data": "no_validation",
    }
)
def group_metrics(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
    metrics=("tpr", "fpr"),
    smoothing=None,
    reference="rest",
    zero_division="warn",
    sample_weight=None,
    pos_label=None,
    confidence_level=None,
    interval_method="auto",
    n_resamples=DEFAULT_N_RESAMPLES,
    random_state=0,
    labels=None,
    average=None,
):
    """Confusion-matrix metrics for every group, raw and optionally smoothed.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels: binary, or class labels of multiclass targets (see
        ``labels`` and ``average``).
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels; several columns define intersectional groups ``"a|b"``.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group confusion matrices instead of rows (for published tables); see
        :func:`~sklearn_smallfair.check_group_counts` for the accepted forms.
        K x K matrices (rows true class, columns predicted: an array of shape
        ``(n_groups, K, K)``, a mapping ``{group: K x K matrix}``, a
        :class:`~sklearn_smallfair.metrics.MulticlassCounts` or its long
        ``to_frame()`` table with columns ``group``, ``true``, ``predicted``,
        ``count``) give the multiclass table; their cells are whole numbers of
        people.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    metrics : str or sequence of str, default=("tpr", "fpr")
        Names or aliases from :func:`metric_names`. Two-group metrics (``ofi``,
        ``te``) compare each group (first) with its reference (second). For
        multiclass targets, single-group metrics taken one-vs-rest for each
        class and, with ``average``, the whole-matrix metrics ``"accuracy"``,
        ``"balanced_accuracy"``, ``"mcc"`` (Gorodkin's R_K) and ``"kappa"``.
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
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).
        Multiclass targets have none (each class is the positive class in
        turn): passing one is an error that names the binarized call.
    confidence_level : float or None, default=None
        Level of an interval for every metric column, in (0, 1) (e.g. 0.95): adds
        ``<metric>_low`` and ``<metric>_high`` (and
        ``<metric>_smoothed_low``, ``<metric>_smoothed_high``). Undefined
        values get NaN bounds.
    interval_method : {"auto", "clopper-pearson", "wilson", "jeffreys", "posterior", \
            "bootstrap"}, default="auto"
        - ``"clopper-pearson"`` (exact), ``"wilson"`` (score), ``"jeffreys"``:
          binomial intervals of the metric's proportion, for the binomial
          (``acc``, ``prev``, ...) and joint-ratio (``tpr``, ``ppv``, ...) metrics
          and for ``f1``/``f1_original`` (an increasing function of
          ``TP / (TP + FN + FP)``); any other metric is an error;
        - ``"posterior"``: equal-tailed interval of the Dirichlet posterior of the
          group's cell probabilities, with the Jeffreys prior (1/2 per cell) for raw
          values and the smoothing's prior for smoothed values (``lam * p_ref`` for
          :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`, ``eps`` for
          :class:`~sklearn_smallfair.smoothing.AdditiveSmoothing`): exact Beta
          quantiles where the metric is a proportion, ``n_resamples`` draws
          otherwise;
        - ``"bootstrap"``: percentile interval of ``n_resamples`` stratified
          bootstrap replicates (each group resampled on its own: multinomial
          redraws of its matrix), smoothed like the data for the smoothed
          columns;
        - ``"auto"``: ``"clopper-pearson"`` for the proportion metrics above;
          ``"projection"`` for ``mcc``, ``pt`` and ``mb`` (their range over the
          box of the Clopper-Pearson intervals of the prevalence, the TPR and
          the FPR, on a 9 x 9 x 9 lattice, widened to hold the value);
          ``"posterior"`` for the two-group metrics (``ofi``, ``te``); and for
          every smoothed value ``"posterior-hull"``, the smallest interval
          holding both the posterior interval with the smoothing's prior and the
          raw value's ``"auto"`` interval (the posterior one alone where the raw
          one is NaN, e.g. a TPR without positives), so that it still covers the
          group's own value when the group differs from its reference. The
          one-group intervals cover at least 93 % at level 0.95 for groups of 5,
          10 and 20 on every law with rates in [0.01, 0.99] tried, where Wilson
          fell to 81 % (TPR) and the Jeffreys posterior to 74 % (MCC); they are
          wider.

        With a method asked for by name, smoothed columns get the posterior
        interval with the smoothing's prior (the bootstrap with
        ``"bootstrap"``). ``table.attrs["interval_method"]`` records the method
        of each column (one of the names above, ``"projection"`` or
        ``"posterior-hull"``); see :ref:`intervals` for the table of methods and
        their coverage, and the Notes for multiclass targets.
    n_resamples : int in [100, 10**6], default=2000
        Posterior draws or bootstrap replicates per group and metric, for the
        intervals that need draws.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the draws. Each group's draws come from a stream keyed by its label
        and the metric, so a group's interval does not depend on the other groups
        or their order.
    labels : array-like of shape (n_classes,), default=None
        Multiclass targets: the class order (with rows, the sorted classes of
        ``y_true`` and ``y_pred`` by default; with K x K ``counts``, the names of
        their rows and columns, default ``0 .. K - 1``). More than two
        ``labels``, ``average`` or K x K ``counts`` give the multiclass table
        (see the Notes). Binary input without them is unchanged.
    average : {"macro", "weighted", "micro"} or None, default=None
        Multiclass targets: average the one-vs-rest metrics over the classes, as
        in scikit-learn (:func:`multiclass_metric`), one row per group, and allow
        the whole-matrix metrics. A class whose metric is undefined in a group
        (e.g. its TPR where it is never true) enters the macro and weighted
        averages as scikit-learn's
        :func:`~sklearn.metrics.precision_recall_fscore_support` has it: as
        ``zero_division`` (0.0 or 1.0), as 0 under ``"warn"`` (with an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning`
        naming the classes and groups), left out under ``np.nan``; the
        ``<metric>_undefined`` column flags the groups where no class has one.

    Returns
    -------
    table : pandas.DataFrame
        One row per group (index: the group labels), columns ``n``, ``n_pos``,
        ``n_neg`` (and ``lam``, the strength used, with
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`, learned from
        the groups with ``lam="auto"``), then per metric ``<metric>``,
        ``<metric>_undefined`` and, with ``smoothing``, ``<metric>_smoothed``,
        ``<metric>_smoothed_undefined``.
        Metric columns use the canonical names. With ``confidence_level``, each
        value column is followed by its ``_low`` and ``_high`` columns. For
        multiclass targets, see the Notes.

    See Also
    --------
    confusion_counts : The per-group matrices behind the table.
    disparity_intervals : Differences and ratios to the reference, with intervals.
    make_group_scorer : An aggregate of one column as a scikit-learn scorer.

    Notes
    -----
    **Multiclass targets.** Without ``average`` the table has one row per
    (group, class), indexed by ``group`` (the ``"a|b"`` labels) and ``class``,
    with the class's ``support`` (true samples) and ``predicted`` counts; with
    ``average``, one row per group. ``smoothing`` smooths the K x K matrices
    (``transform_matrices``): per-class metrics are then taken on the smoothed
    matrices' one-vs-rest matrices (for Cross-Prior Smoothing with a fixed
    ``lam``, the one-vs-rest matrix smoothed toward the reference's one-vs-rest
    matrix), and ``lam="auto"`` learns one ``lam`` from the groups' ``K^2``
    cells (column ``lam``). ``reference`` may then be explicit counts of shape
    ``(K, K)`` or ``(n_groups, K, K)``.

    Intervals: a per-class column gets the binary interval of the class's
    one-vs-rest matrix. Accuracy (the trace over ``n``) has the binomial
    intervals (Wilson under ``"auto"``); the macro TPR, FNR, PPV and FDR and
    balanced accuracy the MOVER of the classes' binomial intervals (methods
    ``"mover-wilson"``, ...: the classes' rates are independent given the rows'
    or columns' totals); the other macro averages none (NaN bounds and one
    warning: no interval covered near its level for small groups); the other
    averaged and whole-matrix columns, and every smoothed one, the posterior
    (``Dirichlet(c + 2 / K^2)`` raw, the smoothing's prior smoothed) or, with
    ``interval_method="bootstrap"``, the bootstrap of the K x K matrix. The
    closed-form methods are refused for the weighted and micro averages and for
    R_K and kappa, which are not proportions. See
    :ref:`multiclass_group_options` for their measured coverage.

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

    With 95 % intervals (by default Clopper-Pearson for a rate, the projection
    interval for MCC, and for a smoothed rate the hull of its posterior interval
    and of the raw interval: group ``b`` has no positive, so no raw interval, and
    gets the posterior one alone):

    >>> table = group_metrics(y_true, y_pred, sensitive_features=groups,
    ...                       metrics=["tpr", "mcc"],
    ...                       smoothing=CrossPriorSmoothing(2), zero_division=np.nan,
    ...                       confidence_level=0.95)
    >>> table[["tpr", "tpr_low", "tpr_high"]].round(3)
             tpr  tpr_low  tpr_high
    group
    a      0.667    0.094     0.992
    b        NaN      NaN       NaN
    >>> table[["tpr_smoothed", "tpr_smoothed_low", "tpr_smoothed_high"]].round(3)
           tpr_smoothed  tpr_smoothed_low  tpr_smoothed_high
    group
    a             0.667             0.094              0.992
    b             0.667             0.027              1.000
    >>> methods = table.attrs["interval_method"]
    >>> methods["mcc"], methods["tpr_smoothed"]
    ('projection', 'posterior-hull')

    Multiclass groups from their K x K matrices (rows true, columns predicted),
    per class with the binary intervals of each class, or one row per group:

    >>> counts = {"a": [[3, 1, 0], [0, 2, 1], [1, 0, 2]],
    ...           "b": [[30, 6, 2], [5, 40, 7], [2, 6, 25]]}
    >>> table = group_metrics(counts=counts, labels=["low", "mid", "high"],
    ...                       metrics="tpr", confidence_level=0.95)
    >>> table.loc["a", ["tpr", "tpr_low", "tpr_high"]].round(3)
             tpr  tpr_low  tpr_high
    class
    low    0.750    0.194     0.994
    mid    0.667    0.094     0.992
    high   0.667    0.094     0.992
    >>> group_metrics(counts=counts, metrics=["accuracy", "kappa"],
    ...               average="weighted")[["accuracy", "kappa"]].round(3)
           accuracy  kappa
    group
    a         0.700  0.545
    b         0.772  0.652
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight, counts=counts
    )
    if (
        average is not None
        or (labels is not None and len(labels) > 2)
        or _is_multiclass_counts(counts)
        or _has_many_classes(y_true, y_pred, counts)
    ):
        return _multiclass_table(
            y_true,
            y_pred,
            sensitive_features,
            counts,
            metrics,
            smoothing,
            reference,
            zero_division,
            sample_weight,
            pos_label,
            confidence_level,
            interval_method,
            n_resamples,
            random_state,
            labels,
            average,
        )
    zero_division = check_zero_division(zero_division)
    names = [metrics] if isinstance(metrics, str) else metrics
    for name in names if np.iterable(names) else []:
        if isinstance(name, str):
            resolve_metric_name(name)  # an unknown name: suggest the closest
    resolved = get_metrics(metrics)
    smoothing = check_smoothing(smoothing)
    if confidence_level is not None:
        check_interval_method(resolved, interval_method)
        seed = resolve_seed(random_state)
    counts_in = counts
    groups, counts, name = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
    )
    gc = _GroupCounts(
        groups,
        counts,
        reference,
        smoothing,
        labelled=counts_have_labels(counts_in),
        name=name,
    )
    if smoothing is not None and smoothing.requires_reference:
        gc.ref  # noqa: B018 - fail early on a bad reference
    columns = {
        "n": counts.sum(axis=1),
        "n_pos": counts[:, TP] + counts[:, FN],
        "n_neg": counts[:, FP] + counts[:, TN],
    }
    if isinstance(smoothing, CrossPriorSmoothing):
        # the strength used, learned from the groups with lam="auto"
        columns["lam"] = np.full(len(groups), gc.fitted_smoothing.lam_)
    elif isinstance(smoothing, IntersectionalSmoothing):
        # each group's prior strength: lam, less the main effects' own error
        columns["lam"] = np.full(len(groups), gc.fitted_smoothing.lam_)
        columns["strength"] = gc.fitted_smoothing.strength_
    variants = [(False, "")] + ([(True, "_smoothed")] if smoothing is not None else [])
    methods = {}
    for metric in resolved:
        for smoothed, suffix in variants:
            column = metric.name + suffix
            values, undefined = gc.values(
                metric, smoothed=smoothed, zero_division=zero_division
            )
            columns[column] = values
            if confidence_level is not None:
                method = resolve_interval_method(
                    metric, interval_method, smoothed=smoothed
                )
                low, high = gc.interval(
                    metric,
                    method,
                    smoothed=smoothed,
                    alpha=1.0 - confidence_level,
                    n_resamples=n_resamples,
                    seed=seed,
                    value=np.where(undefined, np.nan, values),
                )
                columns[f"{column}_low"] = np.where(undefined, np.nan, low)
                columns[f"{column}_high"] = np.where(undefined, np.nan, high)
                methods[column] = method
            columns[f"{column}_undefined"] = undefined
    index = pd.Index(groups, name=name)
    table = pd.DataFrame(columns, index=index)
    if confidence_level is not None:
        table.attrs["confidence_level"] = float(confidence_level)
        table.attrs["interval_method"] = methods
    return table
