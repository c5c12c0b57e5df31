"""Downsampling experiments for multiclass groups: raw and smoothed K x K scores.

For each group, its whole ``K x K`` matrix's proportions are the truth; subgroups
of each size are ``Multinomial(n, p_group)`` over the ``K^2`` cells; each metric is
computed on the raw subgroup matrix and on its Cross-Prior-Smoothed version
``(c + lam p_ref) / (n + lam) n`` for each ``lam``, and compared with the whole
group's (raw) value.
"""

import warnings
from collections.abc import Mapping
from functools import lru_cache
from numbers import Real

import numpy as np
import pandas as pd
from sklearn.utils.parallel import Parallel, delayed

from .._multiclass_counts import (
    enumerate_multiclass_matrices,
    group_matrices,
    n_multiclass_matrices,
    reference_matrices,
)
from .._params import (
    N_JOBS,
    RANDOM_STATE,
    REFERENCE,
    StrOptions,
    Whole,
    validate_params,
)
from .._pmf import _log_factorial
from .._random import child_rng, resolve_seed
from .._validation import format_labels
from ..exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from ..metrics import get_metric, multiclass_metric
from ._split import _check_sizes
from ._statistics import _columns, _error_statistics

__all__ = ["EXACT_MAX_ROWS", "multiclass_downsampling_experiment"]

#: Largest number of K x K matrices of one size that ``method="exact"`` sums over
#: (``n <= 16`` for ``K = 3``, ``n <= 8`` for ``K = 4``).
EXACT_MAX_ROWS = 1_000_000
#: Matrices (or draws) evaluated at once, per group and ``lam``: bounds the memory
#: of a task to a few tens of MB.
_BLOCK = 1 << 13
_AVERAGES = ("macro", "weighted", "micro")
#: The metrics of the whole K x K matrix (:func:`multiclass_metric`).
_WHOLE_MATRIX = ("accuracy", "balanced_accuracy", "mcc", "kappa")
#: A matrix on which the whole-matrix metrics all differ.
_PROBE = np.array([[5, 1, 2], [2, 7, 1], [1, 3, 9]])


def _whole_matrix_name(metric):
    """The name of a whole-matrix metric (``"acc"`` is ``"accuracy"``), or None
    for a metric evaluated per class; an unknown or two-group metric raises
    :func:`multiclass_metric`'s error."""
    value = multiclass_metric(metric, _PROBE)
    if np.ndim(value):
        return None
    return next(w for w in _WHOLE_MATRIX if multiclass_metric(w, _PROBE) == value)


def _specs(metrics, average, labels):
    """``[(label, name, average, class labels or None)]`` of the metrics: a
    registry metric averaged (``"tpr_macro"``) or per class, or a whole-matrix
    metric."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics is empty; name at least one metric.")
    out = []
    for m in names:
        name = _whole_matrix_name(m)
        if name is not None:
            out.append((name, name, None, None))
            continue
        reg = get_metric(m)
        if average is None:
            out.append((reg.name, m, None, labels))
        else:
            out.append((f"{reg.name}_{average}", m, average, None))
    return out


def _values(specs, cms):
    """Every metric column of matrices ``(..., K, K)``: shape ``(..., M)``, NaN
    where undefined (per-class metrics give one column per class)."""
    columns = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        for _, name, average, classes in specs:
            v = multiclass_metric(name, cms, average=average, zero_division=np.nan)
            columns.append(v if classes is not None else v[..., None])
    return np.concatenate(columns, axis=-1)


def _smooth(cms, lams, p_ref):
    """Cross-Prior Smoothing of matrices ``(B, K, K)`` toward ``p_ref`` (K, K) for
    each ``lam``: ``(c + lam p_ref) / (n + lam) n``, shape ``(L, B, K, K)``."""
    c = cms.astype(np.float64)
    n = c.sum(axis=(-2, -1))[None, :, None, None]
    lam = lams[:, None, None, None]
    return (c[None] + lam * p_ref) / (n + lam) * n


def _sums(values, targets, weights, order):
    """Weighted power sums of ``values - target`` over the matrices.

    ``values`` (L, B, M), ``targets`` (M,), ``weights`` (B,). Returns ``sums``
    (order + 1, L, M) over defined values (the first the defined weight) and the
    undefined weight (L, M).
    """
    defined = ~np.isnan(values)
    w = np.where(defined, weights[None, :, None], 0.0)
    shift = np.where(np.isfinite(targets), targets, 0.0)
    dev = np.where(defined, values - shift, 0.0)
    sums = [w.sum(axis=1)]
    power = np.ones_like(dev)
    for _ in range(order):
        power = power * dev
        sums.append((w * power).sum(axis=1))
    undefined = np.where(defined, 0.0, weights[None, :, None]).sum(axis=1)
    return np.stack(sums), undefined


@lru_cache(maxsize=2)
def _matrices(n, k):
    cms = enumerate_multiclass_matrices(n, k)
    cms.flags.writeable = False
    return cms


def _logpmf(flat, n, p):
    """Multinomial log-pmf of flattened matrices ``flat`` (B, d) under ``p`` (d,)."""
    positive = p > 0
    logp = np.where(positive, np.log(np.where(positive, p, 1.0)), 0.0)
    out = _log_factorial(np.int64(n)) - _log_factorial(flat).sum(axis=1) + flat @ logp
    return np.where(flat[:, ~positive].sum(axis=1) > 0, -np.inf, out)


def _draws(rng, n, p, k, n_resamples):
    """``n_resamples`` matrices of ``Multinomial(n, p)`` in blocks, unit weights."""
    for start in range(0, n_resamples, _BLOCK):
        size = min(_BLOCK, n_resamples - start)
        yield rng.multinomial(n, p, size=size).reshape(size, k, k), np.ones(size)


def _size_task(
    n, groups, p_groups, p_refs, targets, specs, lams, method, n_resamples, seed
):
    """Statistics of one size for every group: (G, L, M, n_stats)."""
    G, k = p_groups.shape[0], p_groups.shape[-1]
    order = 4 if method == "montecarlo" else 2
    out = []
    for g in range(G):
        acc = None
        undefined = 0.0
        if method == "exact":
            every = _matrices(int(n), k)
            flat = every.reshape(every.shape[0], -1)
            pmf = np.exp(_logpmf(flat, n, p_groups[g].reshape(-1)))
            keep = np.flatnonzero(pmf > 0)
            blocks = (
                (every[keep[i : i + _BLOCK]], pmf[keep[i : i + _BLOCK]])
                for i in range(0, keep.size, _BLOCK)
            )
        else:
            rng = child_rng(seed, groups[g], int(n))
            blocks = _draws(rng, int(n), p_groups[g].reshape(-1), k, n_resamples)
        for block, w in blocks:
            values = _values(specs, _smooth(block, lams, p_refs[g]))
            s, u = _sums(values, targets[g], w, order)
            acc = s if acc is None else acc + s
            undefined = undefined + u
        out.append(_finish(acc, undefined, targets[g], method))
    return np.stack(out)


def _finish(sums, undefined, targets, method):
    """mse, bias, variance, p_undefined (and mse_se): array (L, M, n_stats)."""
    return _error_statistics(
        sums,
        undefined,
        sums[0] + undefined,
        np.isfinite(targets)[None, :],
        method == "montecarlo",
    )


def _estimator_names(lams):
    return ["raw" if lam == 0 else f"cps_{lam:g}" for lam in lams.tolist()]


@validate_params(
    {
        "counts": ["array-like", Mapping],
        "labels": ["array-like", None],
        "reference": REFERENCE,
        "sizes": ["array-like"],
        "metrics": [str, list, tuple],
        "average": [StrOptions(set(_AVERAGES)), None],
        "lam": ["array-like", Real],
        "method": [StrOptions({"exact", "montecarlo"})],
        "n_resamples": [Whole(1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
    }
)
def multiclass_downsampling_experiment(
    counts,
    *,
    labels=None,
    reference="rest",
    sizes=range(5, 151, 5),
    metrics=("tpr", "ppv", "f1", "accuracy", "balanced_accuracy", "mcc", "kappa"),
    average="macro",
    lam=(0, 5, 10, 20),
    method="montecarlo",
    n_resamples=10_000,
    random_state=0,
    n_jobs=None,
):
    """Error of raw and Cross-Prior-Smoothed scores on small multiclass subgroups.

    For a group with whole matrix ``C`` (size ``N``) the target is the raw score
    ``t = M(C)``. For each size ``n`` a subgroup matrix is drawn from
    ``Multinomial(n, C / N)`` over the ``K^2`` cells and scored raw (``lam = 0``)
    and smoothed toward the group's reference proportions ``p_ref`` with each
    ``lam``: ``(c + lam p_ref) / (n + lam) n`` cell-wise (Cross-Prior Smoothing of
    the ``K x K`` matrix). As in
    :func:`~sklearn_smallfair.model_selection.downsampling_experiment`, the table
    gives, conditional on the score being defined, ``bias = E[v] - t``,
    ``variance = Var[v]`` and ``mse = E[(v - t)^2]``, and the probability
    ``p_undefined`` that the score is undefined.

    ``method="montecarlo"`` draws ``n_resamples`` matrices per (group, size), every
    metric and ``lam`` scored on the same draws, and adds ``mse_se``;
    ``method="exact"`` sums over all ``C(n + K^2 - 1, K^2 - 1)`` matrices of size
    ``n`` with their multinomial probabilities, in blocks of 8,192 matrices, up to
    ``EXACT_MAX_ROWS`` (1,000,000) matrices per size: ``n <= 16`` for ``K = 3``,
    ``n <= 8`` for ``K = 4``.

    Work is split into joblib tasks by size; each (group, size) draws from its own
    stream keyed by the group's label and the size, so the results do not depend on
    ``n_jobs`` or on the other groups and sizes requested.

    Parameters
    ----------
    counts : array-like of shape (n_groups, K, K), mapping or MulticlassCounts
        Per-group matrices (rows true, columns predicted), e.g. the result of
        :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`; counts may
        be fractional (weighted).
    labels : array-like of shape (K,), default=None
        Class names (``0 .. K - 1`` by default), shown in the ``class`` column.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        The reference of each group for Cross-Prior Smoothing, as in
        :func:`~sklearn_smallfair.stats.multiclass_match_test`.
    sizes : iterable of int, default=range(5, 151, 5)
        Subgroup sizes ``n >= 1``.
    metrics : str or sequence of str, \
            default=("tpr", "ppv", "f1", "accuracy", "balanced_accuracy", "mcc", \
"kappa")
        Registry metrics (averaged with ``average``, or per class when ``average``
        is None) and whole-matrix metrics (``"accuracy"``,
        ``"balanced_accuracy"``, ``"mcc"``, ``"kappa"``, never averaged).
    average : {"macro", "weighted", "micro"} or None, default="macro"
        Average of the registry metrics (the row's metric is then
        ``"<metric>_<average>"``); ``None`` gives one row per class.
    lam : float or array-like of float, default=(0, 5, 10, 20)
        Smoothing strengths, ``>= 0``; ``0`` is the raw score (estimator
        ``"raw"``), the others are named ``"cps_<lam>"``.
    method : {"montecarlo", "exact"}, default="montecarlo"
    n_resamples : int, default=10_000
        Draws per (group, size) with ``method="montecarlo"``.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the draws: the same seed gives the same table; ``None`` draws
        fresh entropy.
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.

    Returns
    -------
    results : pandas.DataFrame
        One row per group, size, metric, class and estimator, with columns
        ``group``, ``n``, ``metric``, ``class`` (``None`` for averaged and
        whole-matrix metrics), ``estimator``, ``lam``, ``mse``, ``bias``,
        ``variance``, ``p_undefined``; with ``method="montecarlo"`` also
        ``mse_se`` and ``n_resamples``.

    See Also
    --------
    downsampling_experiment : The binary experiment.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.model_selection import (
    ...     multiclass_downsampling_experiment)
    >>> counts = {"a": [[50, 10, 5], [8, 40, 12], [4, 9, 60]],
    ...           "b": [[12, 4, 3], [3, 9, 4], [1, 2, 15]]}
    >>> res = multiclass_downsampling_experiment(
    ...     counts, sizes=[10], metrics=["tpr", "kappa"], lam=[0, 10],
    ...     method="exact")
    >>> res[["group", "n", "metric", "estimator", "mse", "p_undefined"]].round(4)
      group   n     metric estimator     mse  p_undefined
    0     a  10  tpr_macro       raw  0.0233          0.0
    1     a  10  tpr_macro    cps_10  0.0061          0.0
    2     a  10      kappa       raw  0.0456          0.0
    3     a  10      kappa    cps_10  0.0144          0.0
    4     b  10  tpr_macro       raw  0.0263          0.0
    5     b  10  tpr_macro    cps_10  0.0065          0.0
    6     b  10      kappa       raw  0.0505          0.0
    7     b  10      kappa    cps_10  0.0147          0.0

    At ten people, smoothing toward the other group with ``lam = 10`` cuts the
    mean squared error of the macro TPR and of kappa about fourfold here, at the
    price of a bias toward the reference.
    """
    sizes = np.unique(_check_sizes(sizes))
    lams = np.atleast_1d(np.asarray(lam, dtype=np.float64))
    if (
        lams.ndim != 1
        or lams.size == 0
        or not np.isfinite(lams).all()
        or (lams < 0).any()
    ):
        raise ValueError(
            f"lam must be one or more finite numbers >= 0 (0 is the raw score); got "
            f"{lam!r}."
        )
    lams = np.unique(lams)
    groups, labels, cms = group_matrices(
        None, None, None, counts, labels, integer=False
    )
    refs = reference_matrices(cms, reference, groups)
    empty = (refs[:, None] == 0).any(axis=(-2, -1)).reshape(-1) & (lams > 0).any()
    if empty.any():
        warnings.warn(
            f"the reference of group(s) {format_labels(np.asarray(groups)[empty])} "
            f"has empty cells, which get no prior mass: Cross-Prior Smoothing "
            f"shrinks the group's counts in them toward 0. Use a larger reference "
            f"(reference='rest' or 'total') or add a pseudo-count (reference + "
            f"0.5).",
            ReferenceWarning,
            stacklevel=4,  # the caller of multiclass_downsampling_experiment
        )
    k = cms.shape[-1]
    specs = _specs(metrics, average, labels)
    if method == "exact":
        big = np.array(
            [n_multiclass_matrices(int(n), k) > EXACT_MAX_ROWS for n in sizes]
        )
        if big.any():
            largest = 1
            while n_multiclass_matrices(largest + 1, k) <= EXACT_MAX_ROWS:
                largest += 1
            raise ValueError(
                f"method='exact' sums over C(n + K^2 - 1, K^2 - 1) matrices per "
                f"size, at most EXACT_MAX_ROWS={EXACT_MAX_ROWS:,} (n <= {largest} "
                f"for K = {k}); sizes {sizes[big].tolist()} are larger. Use "
                f"method='montecarlo'."
            )
    p_groups = cms / cms.sum(axis=(1, 2), keepdims=True)
    p_refs = refs / refs.sum(axis=(1, 2), keepdims=True)
    targets = _values(specs, cms)  # (G, M)
    seed = resolve_seed(random_state)
    tasks = [
        delayed(_size_task)(
            n,
            groups,
            p_groups,
            p_refs,
            targets,
            specs,
            lams,
            method,
            int(n_resamples),
            seed,
        )
        for n in sizes.tolist()
    ]
    results = Parallel(n_jobs=n_jobs)(tasks)  # ordered by size
    table = np.stack(results, axis=1)  # (G, S, L, M, n_stats)
    columns = _columns(method)
    # metric columns: per-class metrics have one column per class
    metric_names, class_names = [], []
    for label, _, _, classes in specs:
        if classes is None:
            metric_names.append(label)
            class_names.append(None)
        else:
            metric_names.extend([label] * len(classes))
            class_names.extend(list(classes))
    G, S, L, M = table.shape[:4]
    # rows in (group, size, metric, estimator) order
    table = table.transpose(0, 1, 3, 2, 4)
    codes = np.indices((G, S, M, L)).reshape(4, -1)
    frame = pd.DataFrame(table.reshape(-1, table.shape[-1]), columns=columns)
    frame.insert(0, "group", np.asarray(groups, dtype=object)[codes[0]])
    frame.insert(1, "n", sizes.astype(np.int64)[codes[1]])
    frame.insert(2, "metric", np.array(metric_names, dtype=object)[codes[2]])
    frame.insert(3, "class", np.array(class_names, dtype=object)[codes[2]])
    frame.insert(
        4, "estimator", np.array(_estimator_names(lams), dtype=object)[codes[3]]
    )
    frame.insert(5, "lam", lams[codes[3]])
    if method == "montecarlo":
        frame["n_resamples"] = np.int64(n_resamples)
    if not np.isfinite(targets).all():
        bad = ~np.isfinite(targets).all(axis=1)
        warnings.warn(
            f"a metric is undefined on the whole matrix of group(s) "
            f"{format_labels(np.asarray(groups)[bad])}, so its mse and bias are NaN "
            f"there.",
            UndefinedGroupMetricWarning,
            stacklevel=4,  # the caller of multiclass_downsampling_experiment
        )
    return frame
