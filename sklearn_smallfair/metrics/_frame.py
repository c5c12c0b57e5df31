"""A frame of any metrics per group: registry metrics and callables, overall row,
differences, ratios, minima and maxima over the groups."""

import inspect
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning

from .._column_intervals import INTERVAL_METHODS
from .._confusion import CELLS, confusion_counts
from .._draws import DEFAULT_N_RESAMPLES, MAX_N_RESAMPLES
from .._groups import check_sensitive_features
from .._params import (
    BOOLEAN,
    POS_LABEL,
    RANDOM_STATE,
    ZERO_DIVISION,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._validation import (
    _as_1d,
    _check_no_missing,
    check_sample_weight,
    check_zero_division,
    format_label,
)
from ..exceptions import UndefinedGroupMetricWarning
from ._disparity import METHODS, summarize
from ._group import group_metrics, resolve_metric_name
from ._registry import Metric, metric_names
from ._warn import SHOWN as _SHOWN
from ._warn import format_count, user_stacklevel

__all__ = ["GroupMetricFrame"]

_METHOD = [StrOptions(set(METHODS))]


#: Rows of ``by_group`` shown by the frame's text and HTML representations.
_REPR_ROWS = 20


def _resolve_name(name):
    """The registry metric ``name`` names, or an error suggesting close names."""
    return resolve_metric_name(
        name, hint=" Any callable f(y_true, y_pred) is accepted as well."
    )


def _callable_name(func):
    base = getattr(func, "func", func)  # functools.partial
    name = getattr(base, "__name__", None)
    if not name or name == "<lambda>":
        raise ValueError(
            f"metrics holds a callable without a usable name ({func!r}); name its "
            f"column with a dict, metrics={{'my_metric': func}}."
        )
    return name


def _parse_metrics(metrics):
    """``[(column, Metric or callable)]`` from a name, callable, list or dict."""
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
        for column, _ in items:
            if not isinstance(column, str):
                raise TypeError(
                    f"metrics as a dict maps column names (str) to metrics; got the "
                    f"key {column!r}."
                )
    else:
        if isinstance(metrics, (str, Metric)) or callable(metrics):
            metrics = [metrics]
        items = [(None, m) for m in metrics]
    if not items:
        raise ValueError("metrics is empty; pass at least one metric name or callable.")
    parsed = []
    for column, spec in items:
        if isinstance(spec, (str, Metric)):
            metric = _resolve_name(spec)
            if metric.n_groups != 1:
                raise ValueError(
                    f"metrics includes the two-group metric {metric.name!r}, which "
                    f"compares a group with a reference; the frame holds one value "
                    f"per group. Use disparity_intervals or group_metrics for it."
                )
            parsed.append((metric.name if column is None else column, metric))
        elif callable(spec):
            parsed.append((_callable_name(spec) if column is None else column, spec))
        else:
            raise TypeError(
                f"metrics must hold metric names ({', '.join(metric_names()[:4])}, "
                f"...) or callables f(y_true, y_pred); got {spec!r}."
            )
    columns = [c for c, _ in parsed]
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise ValueError(
            f"metrics gives the column name(s) {twice} twice (after aliases); name "
            f"the columns with a dict, metrics={{'name': metric, ...}}."
        )
    return parsed


def _accepts_sample_weight(func):
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD
        or (
            p.name == "sample_weight"
            and p.kind
            in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        )
        for p in parameters
    )


def _targets(y_true, y_pred, y_score):
    """1-D ``y_true`` and the array the callables receive, of equal lengths."""
    y_true = _as_1d(y_true, "y_true")
    other_name = "y_score" if y_score is not None else "y_pred"
    other = _as_1d(y_score if y_score is not None else y_pred, other_name)
    if other.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y_true and {other_name} have inconsistent lengths ({y_true.shape[0]} "
            f"and {other.shape[0]}); pass one value per sample."
        )
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty; at least one sample is needed.")
    _check_no_missing(y_true, "y_true")
    _check_no_missing(other, other_name)
    if y_pred is not None and y_score is not None:
        y_pred = _as_1d(y_pred, "y_pred")
        if y_pred.shape[0] != y_true.shape[0]:
            raise ValueError(
                f"y_true and y_pred have inconsistent lengths ({y_true.shape[0]} and "
                f"{y_pred.shape[0]}); pass one prediction per sample."
            )
    return y_true, other


def _call(func, y_true, y_other, weight):
    """``(value, status, reason)`` of one call; status "ok", "undefined", "failed".

    A callable that raises, or returns a non-finite value, or warns that its value
    is undefined (scikit-learn's :class:`~sklearn.exceptions.UndefinedMetricWarning`,
    e.g. ``recall_score`` substituting 0 for 0/0), gives no value. Other warnings
    pass through.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if weight is None:
                value = func(y_true, y_other)
            else:
                value = func(y_true, y_other, sample_weight=weight)
        except Exception as error:  # reported per group, not raised
            return np.nan, "failed", f"{type(error).__name__}: {error}"
    undefined = None
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            undefined = undefined or str(w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if np.ndim(value) != 0:
        raise TypeError(
            f"a metric callable returned {type(value).__name__} of shape "
            f"{np.shape(value)}; a metric returns one number per group."
        )
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"a metric callable returned {value!r}; a metric returns one number "
            f"per group."
        ) from None
    if undefined is not None:
        return np.nan, "undefined", undefined
    if not np.isfinite(value):
        return np.nan, "undefined", f"it returned {value}"
    return value, "ok", ""


def _warn_groups(column, labels, sizes, reasons, *, what):
    shown = "; ".join(
        f"{format_label(g)} (n={format_count(n)}): {r.rstrip('.')}"
        for g, n, r in list(zip(labels, sizes, reasons))[:_SHOWN]
    )
    more = f"; and {len(labels) - _SHOWN} more" if len(labels) > _SHOWN else ""
    warnings.warn(
        f"{column} {what} for group(s) {shown}{more}; returned as NaN.",
        UndefinedGroupMetricWarning,
        stacklevel=user_stacklevel(),
    )


class GroupMetricFrame:
    """Any metrics evaluated group by group and overall, with aggregates over groups.

    The counterpart of fairlearn's ``MetricFrame``, a view over the package's
    per-group table: its registry columns are :func:`group_metrics`' values, and
    its differences and ratios are computed as by the functions named like
    fairlearn's and :func:`aggregate_group_metric`. ``metrics`` mixes the names
    of the metric registry, computed from per-group confusion matrices (one
    count of the rows, then vectorized formulas), and callables ``f(y_true,
    y_pred)`` such as scikit-learn's metrics, evaluated on each group's rows. A
    value that cannot be computed (0/0, a callable warning that its value is
    undefined, or raising on a group, e.g. a ROC AUC on a group with one class)
    is NaN with a warning naming the group and the reason, never a substituted 0
    or 1, and aggregates over the groups that meet such a value are NaN too.

    Read more in the :ref:`User Guide <from_fairlearn>`.

    Parameters
    ----------
    metrics : str, callable, sequence of them, or dict
        Metric names or aliases of :func:`metric_names` (single-group metrics),
        callables ``f(y_true, y_pred)`` (``f(y_true, y_score)`` when ``y_score`` is
        given), or a dict ``{column: name or callable}`` naming the columns.
        Without a dict, a name's column is its canonical name and a callable's its
        ``__name__``.
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,), default=None
        Predicted labels. Needed by registry metrics (binary, with ``pos_label``);
        passed to the callables unless ``y_score`` is given.
    y_score : array-like of shape (n_samples,), default=None
        Scores or probabilities of the positive class, passed to the callables
        instead of ``y_pred``: for threshold-free metrics such as
        :func:`~sklearn.metrics.roc_auc_score`, :func:`~sklearn.metrics.log_loss`
        or :func:`~sklearn.metrics.brier_score_loss`.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group labels. Several columns (a DataFrame or 2-D array) define
        intersectional groups, labelled ``"a|b"`` (the index is named after the
        columns joined the same way, ``"race|sex"``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights: registry metrics use weighted counts, and the
        callables receive each group's weights as ``sample_weight=`` (a callable
        that does not accept ``sample_weight`` is then an error).
    pos_label : int, float, bool, str or None, default=None
        The positive class of the registry metrics (callables take their own);
        ``None`` means ``1`` for labels ``{0, 1}`` or ``{-1, 1}`` and is an error
        for other labels (scikit-learn's rule).
    zero_division : {"warn", np.nan, 0.0, 1.0}, default="warn"
        Value reported where a metric is undefined (0/0 for registry metrics, NaN
        or an :class:`~sklearn.exceptions.UndefinedMetricWarning` from a
        callable). ``"warn"`` keeps NaN and warns, naming the groups; ``np.nan``
        keeps NaN silently; ``0.0``/``1.0`` substitute. A callable that raises
        gives NaN with a warning whatever the policy.
    confidence_level : float or None, default=None
        Level of an interval for every registry metric, by group and overall, in
        (0, 1): see :func:`group_metrics` (within-group intervals, each group on
        its own). Callables have no intervals.
    interval_method : {"auto", "clopper-pearson", "wilson", "jeffreys", "posterior", \
            "bootstrap"}, default="auto"
        Method of the intervals; see :func:`group_metrics`.
    n_resamples : int in [100, 10**6], default=2000
        Draws or bootstrap replicates per group and metric, for the methods that
        draw.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the draws.

    Attributes
    ----------
    by_group : pandas.DataFrame
        One row per group (intersectional groups labelled ``"a|b"``), one column
        per metric.
    overall : pandas.Series
        Each metric on all rows together.
    undefined : pandas.DataFrame of bool
        Where ``by_group``'s value could not be computed (whatever
        ``zero_division`` substituted).
    sizes : pandas.Series
        The number of rows (the sum of weights) of every group.
    by_group_intervals : pandas.DataFrame or None
        With ``confidence_level``: columns ``<metric>_low`` and ``<metric>_high``
        of the registry metrics, by group; ``attrs["interval_method"]`` names
        each column's method.
    overall_intervals : pandas.Series or None
        With ``confidence_level``: the same bounds for the overall values.

    See Also
    --------
    group_metrics : The per-group table of registry metrics, with smoothing.
    equalized_odds_difference : One call for the largest TPR or FPR gap.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import recall_score, roc_auc_score
    >>> from sklearn_smallfair.metrics import GroupMetricFrame
    >>> y_true = [1, 1, 0, 0, 1, 0, 1, 0, 0, 1]
    >>> y_pred = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0]
    >>> groups = ["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"]
    >>> frame = GroupMetricFrame(metrics={"tpr": "tpr", "recall": recall_score},
    ...                          y_true=y_true, y_pred=y_pred,
    ...                          sensitive_features=groups)
    >>> frame.by_group
                tpr    recall
    group
    a      0.666667  0.666667
    b      0.500000  0.500000
    >>> frame.overall
    tpr       0.6
    recall    0.6
    dtype: float64
    >>> frame.difference()
    tpr       0.166667
    recall    0.166667
    dtype: float64
    >>> frame.ratio(method="to_overall").round(3)
    tpr       0.833
    recall    0.833
    dtype: float64

    A threshold-free metric on scores:

    >>> y_score = [0.9, 0.4, 0.2, 0.6, 0.8, 0.1, 0.7, 0.6, 0.3, 0.4]
    >>> GroupMetricFrame(metrics=roc_auc_score, y_true=y_true, y_score=y_score,
    ...                  sensitive_features=groups).by_group
           roc_auc_score
    group
    a           0.833333
    b           0.833333
    """

    @validate_params(
        {
            "metrics": [str, Metric, callable, list, tuple, dict],
            "y_true": ["array-like"],
            "y_pred": ["array-like", None],
            "y_score": ["array-like", None],
            "sensitive_features": ["array-like"],
            "sample_weight": ["array-like", None],
            "pos_label": POS_LABEL,
            "zero_division": ZERO_DIVISION,
            "confidence_level": [None, Number(0, 1, closed="neither")],
            "interval_method": [StrOptions(set(INTERVAL_METHODS))],
            "n_resamples": [Whole(100, MAX_N_RESAMPLES)],
            "random_state": RANDOM_STATE,
        }
    )
    def __init__(
        self,
        *,
        metrics,
        y_true,
        y_pred=None,
        y_score=None,
        sensitive_features,
        sample_weight=None,
        pos_label=None,
        zero_division="warn",
        confidence_level=None,
        interval_method="auto",
        n_resamples=DEFAULT_N_RESAMPLES,
        random_state=0,
    ):
        self.zero_division = check_zero_division(zero_division)
        parsed = _parse_metrics(metrics)
        registry = [(c, m) for c, m in parsed if isinstance(m, Metric)]
        callables = [(c, m) for c, m in parsed if not isinstance(m, Metric)]
        if y_pred is None and (registry or y_score is None):
            raise ValueError(
                "y_pred is required"
                + (
                    f" by the registry metric(s) {[c for c, _ in registry]}"
                    if registry
                    else ""
                )
                + "; pass the predicted labels (and y_score= for scores)."
            )
        if confidence_level is not None and not registry:
            raise ValueError(
                f"confidence_level={confidence_level!r} gives intervals of the "
                f"registry metrics (names such as 'tpr'), and metrics holds only "
                f"callables, which have none; pass confidence_level=None, or add "
                f"the registry metrics whose intervals you want."
            )
        y_true_arr, y_other = _targets(y_true, y_pred, y_score)
        n_samples = y_true_arr.shape[0]
        groups, codes, name = check_sensitive_features(sensitive_features, n_samples)
        weight = check_sample_weight(sample_weight, n_samples)
        if weight is not None:
            refused = [c for c, f in callables if not _accepts_sample_weight(f)]
            if refused:
                raise ValueError(
                    f"sample_weight is given but the metric(s) {refused} do not "
                    f"accept a sample_weight argument, so their values would ignore "
                    f"the weights; wrap them, e.g. lambda y, p, sample_weight: ..., "
                    f"or pass no weights."
                )
        n_groups = groups.shape[0]
        index = pd.Index(groups, name=name)
        sizes = np.bincount(codes, weights=weight, minlength=n_groups)
        if weight is not None and (sizes == 0).any():
            raise ValueError(
                "some groups have zero total sample_weight, so their metrics are "
                "empty; drop those rows or give them positive weight."
            )
        self.sizes = pd.Series(sizes, index=index, name="n")

        columns = [c for c, _ in parsed]
        by_group = pd.DataFrame(index=index, columns=columns, dtype=np.float64)
        undefined = pd.DataFrame(False, index=index, columns=columns)
        overall = pd.Series(np.nan, index=columns, dtype=np.float64)
        self.by_group_intervals = self.overall_intervals = None
        if registry:
            self._registry_columns(
                registry,
                y_true,
                y_pred,
                sensitive_features,
                sample_weight,
                pos_label,
                dict(
                    confidence_level=confidence_level,
                    interval_method=interval_method,
                    n_resamples=n_resamples,
                ),
                random_state,
                by_group,
                undefined,
                overall,
                index,
            )
        if callables:
            labels = index.to_list()
            # one stable sort by group: each group's rows are then a contiguous
            # view, in their original order
            order = np.argsort(codes, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(codes))])
            slices = [slice(bounds[g], bounds[g + 1]) for g in range(n_groups)]
            by_rows = (
                y_true_arr[order],
                y_other[order],
                None if weight is None else weight[order],
            )
            for column, func in callables:
                values, undef = self._callable_column(
                    column, func, *by_rows, slices, labels, sizes
                )
                by_group[column] = values
                undefined[column] = undef
                value, status, reason = _call(func, y_true_arr, y_other, weight)
                overall[column] = self._substituted(
                    column,
                    value,
                    status,
                    reason,
                    label="overall",
                    size=sizes.sum(),
                )
        self.by_group = by_group
        self.undefined = undefined
        self.overall = overall

    # -- display ----------------------------------------------------------------
    def _shown(self):
        """``by_group`` cut to ``_REPR_ROWS`` rows, and ``overall`` as a row."""
        table = self.by_group
        if len(table) > _REPR_ROWS:
            half = _REPR_ROWS // 2
            table = pd.concat([table.iloc[:half], table.iloc[-half:]])
        overall = pd.DataFrame([self.overall.to_numpy()], columns=self.overall.index)
        overall.index = pd.Index(["overall"])
        return table, overall

    def __repr__(self):
        """The per-group table and the overall values, as text."""
        n_groups, n_metrics = self.by_group.shape
        overall = self._shown()[1]
        opts = {"max_rows": _REPR_ROWS, "max_cols": 12, "max_colwidth": 30}
        lines = [
            f"GroupMetricFrame: {n_groups} group{'s' if n_groups != 1 else ''} x "
            f"{n_metrics} metric{'s' if n_metrics != 1 else ''}",
            "by_group:",
            self.by_group.to_string(**opts),
            "overall:",
            overall.to_string(**opts),
        ]
        if n_groups > _REPR_ROWS:
            lines.append(f"({n_groups} groups; all in .by_group)")
        return "\n".join(lines)

    def _repr_html_(self):
        """The per-group table and the overall values, as (escaped) HTML."""
        table, overall = self._shown()
        n_groups = len(self.by_group)
        more = ""
        if n_groups > _REPR_ROWS:
            more = (
                f"<p>{_REPR_ROWS} of {n_groups} groups shown (the first and the "
                f"last); all in <code>.by_group</code>.</p>"
            )
        return (
            '<div class="smallfair-frame"><p><strong>by_group</strong></p>'
            + table.to_html(escape=True, max_cols=12)
            + more
            + "<p><strong>overall</strong></p>"
            + overall.to_html(escape=True, max_cols=12)
            + "</div>"
        )

    # -- construction -----------------------------------------------------------
    def _registry_columns(
        self,
        registry,
        y_true,
        y_pred,
        sensitive_features,
        sample_weight,
        pos_label,
        interval_args,
        random_state,
        by_group,
        undefined,
        overall,
        index,
    ):
        _, counts = confusion_counts(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            sample_weight=sample_weight,
            pos_label=pos_label,
        )
        names = [m.name for _, m in registry]
        common = dict(
            metrics=names, zero_division=self.zero_division, random_state=random_state
        )
        if interval_args["confidence_level"] is not None:
            common.update(interval_args)
        table = group_metrics(
            counts=pd.DataFrame(counts, index=index, columns=list(CELLS)), **common
        )
        whole = group_metrics(
            counts=pd.DataFrame(
                [counts.sum(axis=0)], index=["overall"], columns=list(CELLS)
            ),
            **common,
        )
        for column, metric in registry:
            by_group[column] = table[metric.name].to_numpy()
            undefined[column] = table[f"{metric.name}_undefined"].to_numpy()
            overall[column] = whole[metric.name].iloc[0]
        if interval_args["confidence_level"] is not None:
            bounds = [
                (f"{column}_{side}", f"{metric.name}_{side}")
                for column, metric in registry
                for side in ("low", "high")
            ]
            self.by_group_intervals = pd.DataFrame(
                {new: table[old].to_numpy() for new, old in bounds}, index=index
            )
            methods = table.attrs["interval_method"]
            self.by_group_intervals.attrs = {
                "confidence_level": table.attrs["confidence_level"],
                "interval_method": {c: methods[m.name] for c, m in registry},
            }
            self.overall_intervals = pd.Series(
                {new: whole[old].iloc[0] for new, old in bounds}, dtype=np.float64
            )

    def _callable_column(
        self, column, func, y_true, y_other, weight, slices, groups, sizes
    ):
        values = np.empty(len(slices))
        undefined = np.zeros(len(slices), dtype=bool)
        failed, undef = [], []
        for g, rows in enumerate(slices):
            value, status, reason = _call(
                func,
                y_true[rows],
                y_other[rows],
                None if weight is None else weight[rows],
            )
            values[g] = value
            if status != "ok":
                undefined[g] = True
                (failed if status == "failed" else undef).append((g, reason))
        if failed:
            bad = [g for g, _ in failed]
            _warn_groups(
                column,
                [groups[g] for g in bad],
                sizes[bad],
                [r for _, r in failed],
                what="could not be computed (the metric raised)",
            )
        if undef:
            bad = [g for g, _ in undef]
            if self.zero_division == "warn":
                _warn_groups(
                    column,
                    [groups[g] for g in bad],
                    sizes[bad],
                    [r for _, r in undef],
                    what="is undefined",
                )
            elif not np.isnan(self.zero_division):
                values[bad] = self.zero_division
        return values, undefined

    def _substituted(self, column, value, status, reason, *, label, size):
        if status == "failed":
            _warn_groups(
                column,
                [label],
                [size],
                [reason],
                what="could not be computed (the metric raised)",
            )
        elif status == "undefined":
            if self.zero_division == "warn":
                _warn_groups(column, [label], [size], [reason], what="is undefined")
            elif not np.isnan(self.zero_division):
                return self.zero_division
        return value

    # -- aggregates over groups -------------------------------------------------
    def _defined(self, what, skipna):
        """``by_group`` with undefined values NaN unless substituted; warnings."""
        values = self.by_group
        nan = values.isna()
        if nan.any().any() and not skipna and self.zero_division == "warn":
            for column in values.columns[nan.any().to_numpy()]:
                bad = values.index[nan[column].to_numpy()]
                shown = ", ".join(format_label(g) for g in list(bad)[:_SHOWN])
                more = f" and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
                warnings.warn(
                    f"{what} of {column} is undefined: its value is undefined for "
                    f"group(s) {shown}{more}; returned as NaN. Pass skipna=True to "
                    f"aggregate over the groups where it is defined.",
                    UndefinedGroupMetricWarning,
                    stacklevel=user_stacklevel(),
                )
        return values

    def _aggregate(self, what, skipna, aggregate, method="between_groups"):
        """:func:`summarize` of every metric's group values."""
        values = self._defined(what, skipna)
        out = {}
        for column in values.columns:
            v = values[column].to_numpy(dtype=np.float64)
            if skipna:
                v = v[~np.isnan(v)]
            value, reason = summarize(
                v, aggregate, method=method, overall=float(self.overall[column])
            )
            if reason in ("zero", "negative"):
                detail = (
                    "it takes negative values"
                    if reason == "negative"
                    else "a group's value and the value it is compared with are 0 (0/0)"
                )
                warnings.warn(
                    f"{what} of {column} is undefined: {detail}; returned as NaN.",
                    UndefinedGroupMetricWarning,
                    stacklevel=user_stacklevel(),
                )
            out[column] = value
        return pd.Series(out, index=values.columns, dtype=np.float64)

    @validate_params({"skipna": BOOLEAN})
    def group_min(self, *, skipna=False):
        """The smallest value of each metric over the groups.

        Parameters
        ----------
        skipna : bool, default=False
            Ignore the groups where a metric is undefined. By default such a
            metric's minimum is NaN (with a warning): the missing group could be
            the smallest.

        Returns
        -------
        values : pandas.Series
            Indexed by metric.
        """
        return self._aggregate("group_min", skipna, "min")

    @validate_params({"skipna": BOOLEAN})
    def group_max(self, *, skipna=False):
        """The largest value of each metric over the groups.

        Parameters
        ----------
        skipna : bool, default=False
            Ignore the groups where a metric is undefined (by default the maximum
            is then NaN, with a warning).

        Returns
        -------
        values : pandas.Series
            Indexed by metric.
        """
        return self._aggregate("group_max", skipna, "max")

    @validate_params({"method": _METHOD, "skipna": BOOLEAN})
    def difference(self, method="between_groups", *, skipna=False):
        """The largest gap of each metric between groups, or to the overall value.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            ``"between_groups"``: largest minus smallest group value;
            ``"to_overall"``: largest ``|group - overall|``.
        skipna : bool, default=False
            Ignore the groups where a metric is undefined. By default the
            difference is then NaN, with a warning naming the groups.

        Returns
        -------
        differences : pandas.Series
            Indexed by metric; NaN where undefined.
        """
        return self._aggregate("difference", skipna, "difference", method)

    @validate_params({"method": _METHOD, "skipna": BOOLEAN})
    def ratio(self, method="between_groups", *, skipna=False):
        """The smallest ratio of each metric between groups, or to the overall value.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            ``"between_groups"``: smallest over largest group value;
            ``"to_overall"``: smallest ``min(group, overall) / max(group,
            overall)``.
        skipna : bool, default=False
            Ignore the groups where a metric is undefined. By default the ratio is
            then NaN, with a warning naming the groups.

        Returns
        -------
        ratios : pandas.Series
            Indexed by metric, in [0, 1]. NaN where a group's value is undefined,
            where the ratio is 0/0 (values 0) and for metrics with negative values
            (a ratio of values of opposite signs means nothing), with a warning.
        """
        return self._aggregate("ratio", skipna, "ratio", method)
