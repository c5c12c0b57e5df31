"""The multiclass per-group table of :func:`~sklearn_smallfair.metrics.group_metrics`:
per-class or averaged metrics of each group's K x K matrix, optionally smoothed,
with intervals."""

import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._column_intervals import (
    INTERVAL_METHODS,
    check_interval_method,
    column_interval,
    resolve_interval_method,
)
from .._confusion import FN, FP, TP
from .._draws import matrix_interval
from .._multiclass_counts import (
    group_matrices,
    long_table,
    multiclass_confusion_counts,
    one_vs_rest,
    reference_matrices,
)
from .._proportion_intervals import SCORE_FUNCTIONS, beta_interval, mover_mean_interval
from .._random import resolve_seed
from ..exceptions import UndefinedGroupMetricWarning
from ._multiclass import (
    _resolve,
    average_fill,
    multiclass_metric,
    warn_undefined_classes,
)
from ._registry import get_metric
from ._warn import user_stacklevel


def _group_counts(y_true, y_pred, sensitive_features, counts, labels, sample_weight):
    """``(groups, class labels, counts (G, K, K))`` from rows or from counts."""
    if counts is None:
        if y_true is None or y_pred is None or sensitive_features is None:
            raise ValueError(
                "pass y_true, y_pred and sensitive_features, or counts=<per-group "
                "K x K matrices> (an array of shape (n_groups, K, K), a mapping "
                "{group: K x K matrix}, a MulticlassCounts or its to_frame() table)."
            )
        res = multiclass_confusion_counts(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            labels=labels,
            sample_weight=sample_weight,
        )
        return res.groups, res.labels, res.counts
    # the forms of the multiclass MATCH test's counts, one reader for both
    if sample_weight is not None:
        raise ValueError(
            "sample_weight weights rows, but counts= was given (its cells already "
            "count people); pass the rows (y_true, y_pred, sensitive_features) with "
            "sample_weight, or counts without sample_weight."
        )
    if isinstance(counts, pd.DataFrame):
        counts = long_table(counts, labels)
    groups, classes, cms = group_matrices(
        y_true, y_pred, sensitive_features, counts, labels, integer=False
    )
    if not np.array_equal(cms, np.round(cms)):
        raise ValueError(
            "counts must hold whole numbers of people (cell [i, j]: the people of "
            "true class i predicted as class j); got fractional counts, as smoothed "
            "or weighted matrices have. Pass the raw counts (smoothing= smooths "
            "them), or the rows with sample_weight= for weighted counts."
        )
    return groups, classes, cms.astype(np.int64)


class _Smoothed(NamedTuple):
    """K x K matrices smoothed toward their references, and the smoothing's prior."""

    matrices: np.ndarray  # (G, K, K)
    prior: np.ndarray  # (G, K, K): smoothed = s (counts + prior)
    lam: float | None  # the strength of Cross-Prior Smoothing, else None


def _smooth(smoothing, counts, reference, groups):
    """Smooth every group's K x K matrix (``transform_matrices``) toward its
    reference; ``lam="auto"`` learns one ``lam`` from all the groups' ``K^2``
    cells, used for every column and interval of the call."""
    from sklearn.base import clone

    from ..smoothing import CrossPriorSmoothing

    if getattr(smoothing, "requires_attributes", False):
        raise ValueError(
            f"{type(smoothing).__name__} models binary confusion matrices (its "
            f"main effects are those of the prevalence, TPR and FPR); for K x K "
            f"matrices use CrossPriorSmoothing(lam='auto'), or audit each class "
            f"one-vs-rest."
        )
    g, k = counts.shape[0], counts.shape[-1]
    flat = counts.reshape(g, k * k).astype(np.float64)
    ref = flat_ref = None
    if smoothing.requires_reference:
        ref = reference_matrices(counts, reference, groups)
        flat_ref = ref.reshape(g, k * k)
    est = clone(smoothing)
    lam = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if isinstance(est, CrossPriorSmoothing):
            if isinstance(est.lam, str):  # "auto": the Dirichlet-multinomial fit
                est.set_params(lam=CrossPriorSmoothing._learn(flat, flat_ref))
            lam = float(est.lam)
        matrices = est._transform_matrices(counts, ref, labels=groups)
    for caught_warning in caught:  # the references' warnings, at the user's call
        warnings.warn(caught_warning.message, stacklevel=user_stacklevel())
    # every smoother is affine, scale * c + offset: the prior is offset / scale
    scale, offset = est._coefficients(flat.sum(axis=1, keepdims=True), flat_ref, k * k)
    prior = np.broadcast_to(offset / scale, flat.shape).reshape(g, k, k)
    return _Smoothed(matrices, prior, lam)


def matrix_prior(n_classes):
    """Pseudo-count per cell of the Dirichlet prior of a raw K x K matrix's
    posterior: ``2 / K^2``, the total of two pseudo-counts of the binary Jeffreys
    prior (``1/2`` on each of four cells), which it equals for ``K = 2``.

    ``1/2`` per cell would put ``K^2 / 2`` pseudo-counts on a small group (4.5
    for ``K = 3``) and pull whole-matrix metrics toward a uniform matrix: at
    ``n = 30``, ``K = 3`` the 95 % posterior intervals of accuracy then covered
    0.887 and 0.925, and of kappa 0.885 and 0.912, in the tests' simulation (two
    laws, 600 groups each), against 0.938 and 0.955, and 0.933 and 0.938, with
    ``2 / K^2``.
    """
    return 2.0 / (n_classes * n_classes)


#: Macro averages (and balanced accuracy, the macro-averaged TPR) give a small
#: class as much weight as a large one, and neither posterior draws nor the
#: bootstrap covered near the level for small groups (at n = 30, K = 3, on three
#: laws: macro F1 0.87 to 0.92 with posterior draws and 0.88 to 0.94 with the
#: bootstrap, macro TPR 0.92 to 0.94 and 0.89 to 0.93;
#: benchmarks/bench_multiclass_coverage.py and the user guide's table). Only the
#: macro means of rates of one row or one column of the matrix get an interval,
#: the MOVER of the classes' binomial intervals (:func:`_mover_metric`).
_NO_INTERVAL = "macro"


def _has_interval(label, avg):
    """Whether a column has posterior and bootstrap intervals."""
    return not (avg == _NO_INTERVAL or label == "balanced_accuracy")


def _mover_metric(label, reg, avg):
    """The per-class rate whose macro mean has a MOVER interval, or ``None``.

    A rate over one row of the matrix (``TP + FN``: TPR, FNR) or one column
    (``TP + FP``: PPV, FDR): given the rows' (columns') totals, the rows
    (columns) of a multinomial matrix are independent, so the classes' rates are
    independent binomial proportions and the MOVER of their intervals applies.
    """
    if label == "balanced_accuracy":
        return get_metric("tpr")
    if avg != _NO_INTERVAL or reg is None or reg.family != "joint_ratio":
        return None
    if set(reg.denominator) in ({TP, FN}, {TP, FP}):
        return reg
    return None


#: ``interval_method`` values that give a macro mean its MOVER interval.
_MOVER_METHODS = ("auto", "wilson", "jeffreys", "clopper-pearson")


def _row_or_column_rates(metric, counts):
    """``(k, m)`` (G, K): each class's diagonal cell and its row (``TP + FN``) or
    column (``TP + FP``) total, the binomial counts of the rate ``metric``."""
    c = np.asarray(counts, dtype=np.float64)
    ovr = one_vs_rest(c)
    return (
        ovr[..., list(metric.numerator)].sum(axis=-1),
        ovr[..., list(metric.denominator)].sum(axis=-1),
    )


def _matrix_interval_methods(name):
    """``interval_method`` values with an interval for an averaged or whole-matrix
    metric: accuracy is a proportion (the trace over ``n``), the others are not."""
    if name == "accuracy":
        return INTERVAL_METHODS
    return ("auto", "posterior", "bootstrap")


def _check_interval_methods(columns, interval_method):
    """Refuse a closed-form method for a column that is not a proportion."""
    per_class = [reg for _, reg, avg in columns if avg is None and reg is not None]
    check_interval_method(per_class, interval_method)
    bad = [
        label
        for label, reg, avg in columns
        if (avg is not None or reg is None)
        and _has_interval(label, avg)
        and interval_method not in _matrix_interval_methods(label)
    ]
    if bad:
        raise ValueError(
            f"interval_method={interval_method!r} is an interval for a proportion; "
            f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not one (an "
            f"average over classes, or a whole-matrix metric other than accuracy), "
            f"so use interval_method='auto', 'posterior' or 'bootstrap'."
        )


def _matrix_column_interval(
    label, func, counts, prior, *, method, alpha, n_resamples, seed, groups, key
):
    """``(low, high)`` of an averaged or whole-matrix column; accuracy (the trace
    over ``n``, a binomial proportion) has the binomial intervals."""
    k = counts.shape[-1]
    if prior is None and method == "posterior":
        prior = np.full(counts.shape, matrix_prior(k))
    if label == "accuracy" and method != "bootstrap":
        c = np.asarray(counts, dtype=np.float64)
        if method == "posterior":  # aggregation: the trace's posterior is a Beta
            c = c + prior
            hit = np.trace(c, axis1=-2, axis2=-1)
            return beta_interval(hit, c.sum(axis=(-2, -1)) - hit, alpha)
        hit = np.trace(c, axis1=-2, axis2=-1)
        return SCORE_FUNCTIONS[method](hit, c.sum(axis=(-2, -1)), alpha)
    return matrix_interval(
        func,
        counts,
        method=method,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        labels=np.asarray(groups, dtype=object),
        key=key,
        prior=prior,
    )


def multiclass_table(
    y_true,
    y_pred,
    *,
    sensitive_features,
    counts,
    labels,
    metrics,
    average,
    zero_division,
    sample_weight,
    smoothing,
    reference,
    confidence_level,
    interval_method,
    n_resamples,
    random_state,
):
    """The table of :func:`~sklearn_smallfair.metrics.group_metrics` for
    multiclass targets (its parameters, validated there).

    One row per (group, class) with the class's ``support`` and ``predicted``
    counts, or one row per group with ``average``; per metric ``<metric>`` (with
    ``_low`` and ``_high``), ``<metric>_undefined`` and, with ``smoothing``, the
    same for ``<metric>_smoothed``.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics is empty; name at least one metric.")
    resolved = [_resolve(m) for m in names]
    whole = [m for m, (name, _) in zip(names, resolved) if name is not None]
    if whole and average is None:
        raise ValueError(
            f"{whole} are defined on the whole K x K matrix, not per class; pass "
            f"average='macro' (any average gives one row per group) or compute them "
            f"in a separate call."
        )
    for _, reg in resolved:
        if reg is not None and reg.n_groups != 1:
            raise ValueError(
                f"{reg.name!r} compares two groups and has no per-class form; use a "
                f"single-group metric."
            )
    # (column label, registry metric or None, the column's average)
    columns_of = [
        (name if name is not None else reg.name, reg, None if name else average)
        for name, reg in resolved
    ]
    if confidence_level is not None:
        _check_interval_methods(columns_of, interval_method)
        seed = resolve_seed(random_state)
    groups, classes, counts = _group_counts(
        y_true, y_pred, sensitive_features, counts, labels, sample_weight
    )
    smoothed = None
    if smoothing is not None:
        smoothed = _smooth(smoothing, counts, reference, groups)
    g, k = counts.shape[0], counts.shape[-1]
    sizes = counts.sum(axis=(1, 2))
    if average is None:
        index = pd.MultiIndex.from_arrays(
            [np.repeat(groups, k), np.tile(classes, g)], names=["group", "class"]
        )
        columns = {
            "n": np.repeat(sizes, k),
            "support": counts.sum(axis=2).reshape(-1),
            "predicted": counts.sum(axis=1).reshape(-1),
        }
    else:
        index = pd.Index(groups, name="group")
        columns = {"n": sizes}
    if smoothed is not None and smoothed.lam is not None:
        columns["lam"] = np.full(len(index), smoothed.lam)
    variants = [(counts, None, "")]
    if smoothed is not None:
        variants.append((smoothed.matrices, smoothed.prior, "_smoothed"))
    methods, withheld = {}, []
    for metric, (label, reg, avg) in zip(names, columns_of):
        for matrices, prior, suffix in variants:
            column = label + suffix
            values = multiclass_metric(
                metric, matrices, average=avg, zero_division=np.nan
            ).reshape(-1)
            undefined = np.isnan(values)
            if reg is not None and avg in ("macro", "weighted"):
                # undefined classes enter the average as scikit-learn has them
                classes_undefined = np.isnan(
                    multiclass_metric(metric, matrices, zero_division=np.nan)
                )
                if classes_undefined.any():
                    values = multiclass_metric(
                        metric,
                        matrices,
                        average=avg,
                        zero_division=average_fill(zero_division),
                    ).reshape(-1)
                    if zero_division == "warn":
                        groups_of = index[classes_undefined.any(axis=-1)].tolist()
                        shown = ", ".join(map(repr, groups_of[:10]))
                        more = (
                            f" ({len(groups_of)} in all)" if len(groups_of) > 10 else ""
                        )
                        warn_undefined_classes(
                            column,
                            classes_undefined,
                            classes,
                            where=f" in group(s) {shown}{more}",
                        )
            elif undefined.any():
                where = index[undefined].tolist()
                if zero_division == "warn":
                    shown = ", ".join(map(str, where[:10]))
                    more = f" ({len(where)} in all)" if len(where) > 10 else ""
                    warnings.warn(
                        f"{column} is undefined (0/0) for {shown}{more}; reported "
                        f"as NaN and flagged in {column}_undefined.",
                        UndefinedGroupMetricWarning,
                        stacklevel=2,
                    )
                elif not np.isnan(zero_division):
                    values = np.where(undefined, zero_division, values)
            columns[column] = values
            mover = _mover_metric(label, reg, avg)
            if confidence_level is not None and not _has_interval(label, avg):
                if (
                    mover is not None
                    and not suffix
                    and interval_method in _MOVER_METHODS
                ):
                    score = "wilson" if interval_method == "auto" else interval_method
                    k, m = _row_or_column_rates(mover, counts)
                    low, high = mover_mean_interval(
                        k,
                        m,
                        1.0 - confidence_level,
                        score,
                        # balanced accuracy leaves out absent classes, as
                        # scikit-learn's does; a macro mean has them filled
                        fill=np.nan if reg is None else average_fill(zero_division),
                    )
                    columns[f"{column}_low"] = np.where(undefined, np.nan, low)
                    columns[f"{column}_high"] = np.where(undefined, np.nan, high)
                    methods[column] = f"mover-{score}"
                else:
                    columns[f"{column}_low"] = np.full(values.shape, np.nan)
                    columns[f"{column}_high"] = np.full(values.shape, np.nan)
                    methods[column] = "none"
                    withheld.append(column)
            elif confidence_level is not None:
                low, high, methods[column] = _column_interval(
                    metric,
                    label,
                    reg,
                    avg,
                    counts,
                    prior,
                    groups,
                    interval_method=interval_method,
                    smoothed=bool(suffix),
                    alpha=1.0 - confidence_level,
                    n_resamples=n_resamples,
                    seed=seed,
                )
                columns[f"{column}_low"] = np.where(undefined, np.nan, low)
                columns[f"{column}_high"] = np.where(undefined, np.nan, high)
            columns[f"{column}_undefined"] = undefined
    if withheld:
        warnings.warn(
            f"no interval is reported for {', '.join(withheld)} (NaN bounds): a "
            f"macro average (balanced accuracy is the macro-averaged TPR) weighs a "
            f"small class like a large one, and neither posterior draws nor the "
            f"bootstrap covered 95 % intervals near their level for small groups "
            f"(macro F1 0.87 to 0.94, macro TPR 0.89 to 0.94 at n = 30 and K = "
            f"3). Only the raw macro TPR, FNR, PPV and FDR and balanced accuracy "
            f"have one, with interval_method 'auto', 'wilson', 'jeffreys' or "
            f"'clopper-pearson' (the MOVER of the classes' binomial intervals). "
            f"Otherwise use the per-class intervals (average=None), or "
            f"average='weighted' or 'micro'.",
            UserWarning,
            stacklevel=2,
        )
    table = pd.DataFrame(columns, index=index)
    if confidence_level is not None:
        table.attrs["confidence_level"] = float(confidence_level)
        table.attrs["interval_method"] = methods
    return table


def _column_interval(
    metric,
    label,
    reg,
    avg,
    counts,
    prior,
    groups,
    *,
    interval_method,
    smoothed,
    alpha,
    n_resamples,
    seed,
):
    """``(low, high, method)`` of one column, flat in the table's row order."""
    g, k = counts.shape[0], counts.shape[-1]
    if avg is None and reg is not None:
        # per class: the binary interval of the one-vs-rest matrices, each group's
        # draws keyed by its label and the metric as in the binary table
        method = resolve_interval_method(reg, interval_method, smoothed=smoothed)
        low, high = column_interval(
            reg,
            one_vs_rest(counts).reshape(g * k, 4),
            method=method,
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
            labels=np.repeat(np.asarray(groups, dtype=object), k),
            prior=None if prior is None else one_vs_rest(prior).reshape(g * k, 4),
        )
        return low, high, method
    if interval_method == "bootstrap":
        method = "bootstrap"
    elif smoothed or interval_method == "auto":
        method = "wilson" if label == "accuracy" and not smoothed else "posterior"
    else:
        method = interval_method
    key = label if avg is None else f"{label}_{avg}"

    def func(matrices):
        return multiclass_metric(metric, matrices, average=avg, zero_division=np.nan)

    low, high = _matrix_column_interval(
        label,
        func,
        counts,
        prior,
        method=method,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        groups=groups,
        key=key,
    )
    return low, high, method
