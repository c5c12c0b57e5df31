"""Differences and ratios of each group's metrics to its reference, with
intervals (:func:`disparity_intervals`)."""

import numpy as np
import pandas as pd

from .._column_intervals import proportion_form
from .._confusion import rows_or_counts
from .._draws import (
    DEFAULT_N_RESAMPLES,
    JEFFREYS_PRIOR,
    MAX_N_RESAMPLES,
    Comparison,
    _chunks,
    _comparison_draws,
    _draws,
    _metric_values,
    draw_quantiles,
)
from .._frames import from_data
from .._params import (
    COUNTS,
    POS_LABEL,
    RANDOM_STATE,
    REFERENCE,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._proportion_intervals import (
    fold_interval,
    katz_interval,
    newcombe_interval,
    sidak_level,
)
from .._random import child_rng, resolve_seed
from ._disparity import to_reference
from ._registry import Metric, _normalise, get_metrics

__all__ = ["disparity_intervals"]

#: Interval methods of :func:`disparity_intervals` (``interval_method``).
DISPARITY_METHODS = ("auto", "newcombe-katz", "posterior", "bootstrap")
#: Names that ask :func:`disparity_intervals` for the equalized-odds difference.
EQUALIZED_ODDS = "equalized_odds"
_EOD_ALIASES = ("equalized_odds", "eod", "equalized_odds_difference")


def _resolve_disparity_metrics(metrics):
    """Registry metrics and whether the equalized-odds difference is asked for."""
    names = [metrics] if isinstance(metrics, (str, Metric)) else list(metrics)
    eod = [m for m in names if isinstance(m, str) and _normalise(m) in _EOD_ALIASES]
    rest = [
        m for m in names if not (isinstance(m, str) and _normalise(m) in _EOD_ALIASES)
    ]
    if len(eod) > 1:
        raise ValueError(f"metrics lists the equalized-odds difference twice: {eod}.")
    if not rest and not eod:
        raise ValueError("metrics is empty; pass at least one metric name.")
    try:
        resolved = get_metrics(rest, single_group=True) if rest else []
    except ValueError as error:
        raise ValueError(
            f"{error} For the equalized-odds difference pass 'equalized_odds'."
        ) from None
    return resolved, bool(eod)


def _closed_form_disparity(form, counts, comparison, alpha):
    """Newcombe (difference) and Katz (ratio) intervals against the comparison."""
    k1, m1 = form.split(counts)
    k2, m2 = form.split(comparison.counts)
    d_low, d_high = newcombe_interval(k1, m1, k2, m2, alpha)
    r_low, r_high = katz_interval(k1, m1, k2, m2, alpha)
    if comparison.includes_group:
        # p_g - p_total = m2 / (m1 + m2) (p_g - p_rest), and p_g / p_total =
        # M rho / (m1 rho + m2) with rho = p_g / p_rest, increasing in rho.
        with np.errstate(invalid="ignore", divide="ignore"):
            s = m2 / (m1 + m2)
            d_low, d_high = s * d_low, s * d_high
            total = m1 + m2
            r_low = total * r_low / (m1 * r_low + m2)
            r_high = np.where(
                np.isinf(r_high), total / m1, total * r_high / (m1 * r_high + m2)
            )
    return d_low, d_high, r_low, r_high


def _drawn_disparity(metric, counts, comparison, method, labels, seed, n_resamples):
    """Draws of the group's and the comparison's values: ``(value, ref_value)``
    arrays of shape (G, n_resamples), chunk by chunk."""
    counts = np.asarray(counts, dtype=np.float64)
    for sl in _chunks(counts.shape[0], n_resamples):
        rngs = [child_rng(seed, label, metric.name) for label in labels[sl]]
        cells = _draws(
            method,
            counts[sl],
            counts[sl] + JEFFREYS_PRIOR,
            rngs,
            n_resamples,
            scaled=comparison.includes_group,
        )
        other = _comparison_draws(
            comparison, sl, metric.name, method, seed, n_resamples, cells
        )
        yield sl, _metric_values(metric, cells), _metric_values(metric, other)


def _disparity_rows(
    metric, counts, comparison, labels, method, alpha, seed, n_resamples
):
    """Per group: value, reference value, difference, ratio and their intervals."""
    form = proportion_form(metric)
    closed = form is not None and metric.family in ("binomial", "joint_ratio")
    value = _metric_values(metric, counts)
    ref_value = _metric_values(metric, comparison.observed(counts))
    n_groups = counts.shape[0]
    difference, ratio = to_reference(value, ref_value)
    out = {
        "value": value,
        "reference_value": ref_value,
        "difference": difference,
        "ratio": ratio,
    }
    use = method
    if method == "auto":
        use = "newcombe-katz" if closed else "posterior"
    if use == "newcombe-katz":
        d_low, d_high, r_low, r_high = _closed_form_disparity(
            form, counts, comparison, alpha
        )
        d_method, r_method = "newcombe", "katz"
    else:
        d_low, d_high, r_low, r_high = (np.full(n_groups, np.nan) for _ in range(4))
        for sl, v, r in _drawn_disparity(
            metric, counts, comparison, use, labels, seed, n_resamples
        ):
            drawn_difference, drawn_ratio = to_reference(v, r)
            d_low[sl], d_high[sl] = draw_quantiles(drawn_difference, alpha)
            r_low[sl], r_high[sl] = draw_quantiles(drawn_ratio, alpha)
        d_method = r_method = use
    same = comparison.itself  # a group against itself: no difference, ratio 1
    d_low, d_high = np.where(same, 0.0, d_low), np.where(same, 0.0, d_high)
    r_low = np.where(same & (value > 0), 1.0, r_low)
    r_high = np.where(same & (value > 0), 1.0, r_high)
    # Each interval holds its point: Katz's interval adds 1/2 to the cells of a
    # table with an empty cell, and draws come from posteriors with a prior, so
    # a ratio of 0 (or 1 / reference at a rate of 1) may fall outside them; the
    # interval is widened to it. An undefined ratio (reference value 0) or
    # difference has no interval.
    d_low, d_high = np.minimum(d_low, difference), np.maximum(d_high, difference)
    r_low, r_high = np.minimum(r_low, ratio), np.maximum(r_high, ratio)
    out.update(
        difference_low=d_low,
        difference_high=d_high,
        ratio_low=r_low,
        ratio_high=r_high,
        difference_method=d_method,
        ratio_method=r_method,
    )
    return out


def _eod_rows(counts, comparison, labels, method, alpha, seed, n_resamples):
    """Equalized-odds difference ``max(|TPR gap|, |FPR gap|)`` with its interval.

    The interval is the image of the joint (Sidak) rectangle of the two signed
    gaps: each gap's interval at level ``sqrt(1 - alpha)``, so that both hold with
    probability ``1 - alpha`` (TPR and FPR come from the positives and the
    negatives, independent given their counts); ``max(|x|, |y|)`` over the
    rectangle is the interval. Unlike the percentiles of the drawn
    ``max(|gap|)``, it reaches 0 when the gaps may be 0.
    """
    level = sidak_level(alpha)
    gaps, lows, highs = [], [], []
    for name in ("tpr", "fpr"):
        sub = _disparity_rows(
            get_metrics(name)[0],
            counts,
            comparison,
            labels,
            method,
            level,
            seed,
            n_resamples,
        )
        near, far = fold_interval(sub["difference_low"], sub["difference_high"])
        gaps.append(np.abs(sub["difference"]))
        lows.append(near)
        highs.append(far)
        d_method = sub["difference_method"]
    undefined = np.isnan(gaps[0]) | np.isnan(gaps[1])
    nan = np.full(counts.shape[0], np.nan)
    return {
        "value": nan,
        "reference_value": nan,
        "difference": np.where(undefined, np.nan, np.maximum(*gaps)),
        "ratio": nan,
        "difference_low": np.where(undefined, np.nan, np.maximum(*lows)),
        "difference_high": np.where(undefined, np.nan, np.maximum(*highs)),
        "ratio_low": nan,
        "ratio_high": nan,
        "difference_method": f"sidak-{d_method}",
        "ratio_method": "none",
    }


_DISPARITY_COLUMNS = (
    "n",
    "value",
    "reference_value",
    "difference",
    "difference_low",
    "difference_high",
    "ratio",
    "ratio_low",
    "ratio_high",
    "undefined",
    "difference_method",
    "ratio_method",
)


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": [*COUNTS, None],
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "reference": REFERENCE,
        "confidence_level": [Number(0, 1, closed="neither")],
        "interval_method": [StrOptions(set(DISPARITY_METHODS))],
        "n_resamples": [Whole(100, MAX_N_RESAMPLES)],
        "random_state": RANDOM_STATE,
        "sample_weight": ["array-like", str, None],
        "pos_label": POS_LABEL,
        "data": "no_validation",
    }
)
def disparity_intervals(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
    metrics=("tpr", "fpr"),
    reference="rest",
    confidence_level=0.95,
    interval_method="auto",
    n_resamples=DEFAULT_N_RESAMPLES,
    random_state=0,
    sample_weight=None,
    pos_label=None,
):
    """Differences and ratios of each group's metrics to its reference, with intervals.

    For every group and metric: the group's value, the reference's value, their
    difference ``group - reference`` and ratio ``group / reference``, each with a
    ``confidence_level`` interval. The reference of a group is all other groups together
    (``"rest"``), everybody (``"total"``), a named group, or explicit counts. The
    equalized-odds difference ``max(|TPR gap|, |FPR gap|)`` is available as the
    metric ``"equalized_odds"``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,), default=None
        True binary labels.
    y_pred : array-like of shape (n_samples,), default=None
        Predicted binary labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features), \
            default=None
        Group labels; several columns define intersectional groups ``"a|b"``.
    counts : DataFrame, mapping or array-like of shape (n_groups, 4), default=None
        Per-group confusion matrices instead of rows; see
        :func:`~sklearn_smallfair.check_group_counts`.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    metrics : str or sequence of str, default=("tpr", "fpr")
        Single-group metrics of :func:`metric_names` (or aliases), and
        ``"equalized_odds"`` (aliases ``"eod"``, ``"equalized_odds_difference"``).
    reference : {"rest", "total"}, group label or array-like, default="rest"
        What each group is compared with; see
        :func:`~sklearn_smallfair.reference_counts`.
    confidence_level : float, default=0.95
        Confidence level, in (0, 1).
    interval_method : {"auto", "newcombe-katz", "posterior", "bootstrap"}, \
            default="auto"
        - ``"newcombe-katz"``: Newcombe's hybrid score interval (method 10 of
          Newcombe, 1998) for differences and Katz's log interval for ratios; only
          for the binomial and joint-ratio metrics (``tpr``, ``ppv``, ``acc``, ...)
          and the equalized-odds difference;
        - ``"posterior"``: quantiles of draws from the Dirichlet posteriors
          ``Dirichlet(c + 1/2)`` of the group and of its reference;
        - ``"bootstrap"``: quantiles of stratified bootstrap replicates (each group
          and its reference redrawn from their own matrices);
        - ``"auto"``: ``"newcombe-katz"`` where it applies, ``"posterior"`` for the
          other metrics.
    n_resamples : int in [100, 10**6], default=2000
        Draws (posterior) or replicates (bootstrap) per group and metric.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the draws. Each group's draws come from a stream keyed by its label
        and the metric, so a group's intervals do not depend on the other groups or
        their order.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; the intervals then treat the weighted sums as counts.
    pos_label : int, float, bool, str or None, default=None
        The positive class; ``None`` means ``1`` for labels ``{0, 1}`` or
        ``{-1, 1}`` and is an error for other labels (scikit-learn's rule).

    Returns
    -------
    table : pandas.DataFrame
        Indexed by ``(group, metric)``; columns ``n`` (the group's size),
        ``value``, ``reference_value``, ``difference``, ``difference_low``,
        ``difference_high``, ``ratio``, ``ratio_low``, ``ratio_high``,
        ``undefined`` (the group's or the reference's value is undefined: all
        NaN), ``difference_method`` and ``ratio_method`` (the methods used). For
        ``equalized_odds`` only the difference columns are filled. Every
        interval holds its point (see the Notes); the ratio is the uncorrected
        ``group / reference``, NaN where the reference's value is 0 (or
        negative), and a NaN ratio has NaN bounds.

    See Also
    --------
    group_metrics : Per-group values with ``confidence_level=`` intervals.

    Notes
    -----
    With ``reference="total"`` the group is part of its reference; the closed-form
    intervals are then those against the rest of the data, mapped exactly
    (``p_g - p_total = m_rest / (m_g + m_rest) (p_g - p_rest)``, and the ratio is
    an increasing function of ``p_g / p_rest``), and the draws combine a draw of
    the group with one of the rest.

    Katz's interval adds 1/2 to every cell of a 2 x 2 table with an empty cell
    (Haldane's correction), and the drawn intervals come from posteriors with a
    prior, so their ends need not reach the observed ratio (a group with no
    numerator count has ratio 0, below a Katz interval starting at 0.03, say);
    each interval is then widened to its point, so that it always holds the
    reported, uncorrected ratio (or difference).

    The equalized-odds interval is the range of ``max(|x|, |y|)`` over the
    rectangle of the two gaps' intervals, each at level
    ``sqrt(confidence_level)`` (Sidak): when both gaps are inside their
    intervals, which happens with probability ``confidence_level``, the true
    equalized-odds difference is inside. It is conservative, and unlike
    the percentiles of drawn ``max(|gap|)`` values it reaches 0 when no gap is
    detectably different from 0. See :ref:`intervals` for the measured coverage.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import disparity_intervals
    >>> counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9]}
    >>> table = disparity_intervals(counts=counts, metrics=["tpr", "equalized_odds"])
    >>> table[["difference", "difference_low", "difference_high"]].round(3)
                          difference  difference_low  difference_high
    group metric
    a     tpr                    0.2          -0.066            0.500
          equalized_odds         0.2           0.000            0.532
    b     tpr                   -0.2          -0.500            0.066
          equalized_odds         0.2           0.000            0.532
    >>> table.loc[("b", "tpr"), ["ratio", "ratio_low", "ratio_high"]].round(3)
    ratio         0.750
    ratio_low     0.444
    ratio_high    1.267
    Name: (b, tpr), dtype: float64
    """
    y_true, y_pred, sensitive_features, sample_weight = from_data(
        data, y_true, y_pred, sensitive_features, sample_weight, counts=counts
    )
    alpha = 1.0 - float(confidence_level)
    resolved, eod = _resolve_disparity_metrics(metrics)
    if interval_method == "newcombe-katz":
        bad = [m.name for m in resolved if m.family not in ("binomial", "joint_ratio")]
        if bad:
            raise ValueError(
                f"interval_method='newcombe-katz' compares proportions; "
                f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not a "
                f"binomial or joint-ratio "
                f"metric, so use interval_method='auto', 'posterior' or 'bootstrap'."
            )
    seed = resolve_seed(random_state)
    groups, counts, name = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, sample_weight, pos_label
    )
    sizes = counts.sum(axis=1)
    counts = np.asarray(counts, dtype=np.float64)
    labels = np.asarray(groups, dtype=object)
    comparison = Comparison.of(counts, groups, reference)
    per_metric = {}
    for metric in resolved:
        per_metric[metric.name] = _disparity_rows(
            metric,
            counts,
            comparison,
            labels,
            interval_method,
            alpha,
            seed,
            n_resamples,
        )
    if eod:
        per_metric[EQUALIZED_ODDS] = _eod_rows(
            counts, comparison, labels, interval_method, alpha, seed, n_resamples
        )
    return _disparity_frame(groups, name, sizes, per_metric)


def _disparity_frame(groups, name, sizes, per_metric):
    """One row per (group, metric), groups in their order, metrics as asked."""
    frames = {}
    for metric_name, rows in per_metric.items():
        if metric_name == EQUALIZED_ODDS:
            undefined = np.isnan(rows["difference"])
        else:
            undefined = np.isnan(rows["value"]) | np.isnan(rows["reference_value"])
        columns = {"n": sizes}
        for col in _DISPARITY_COLUMNS[1:]:
            if col == "undefined":
                columns[col] = undefined
            elif col.endswith("_method"):
                columns[col] = rows[col]
            elif col in ("value", "reference_value"):
                columns[col] = rows[col]
            else:
                columns[col] = np.where(undefined, np.nan, rows[col])
        frames[metric_name] = pd.DataFrame(columns, index=pd.Index(groups, name=name))
    table = pd.concat(frames, names=["metric"]).swaplevel(0, 1)
    order = pd.MultiIndex.from_product(
        [list(groups), list(per_metric)], names=[name, "metric"]
    )
    return table.reindex(order)[list(_DISPARITY_COLUMNS)]
