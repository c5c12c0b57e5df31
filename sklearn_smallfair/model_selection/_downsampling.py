"""Downsampling experiments: how well does each estimator score a small subgroup?"""

import hashlib
import json
import os
from collections.abc import Mapping
from functools import lru_cache
from math import comb
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.utils.parallel import Parallel, delayed

from .._confusion import (
    _logpmf_by_group,
    enumerate_confusion_matrices,
    n_confusion_matrices,
    reference_counts,
    rows_or_counts,
)
from .._random import child_rng, resolve_seed
from .._validation import (
    check_bool,
    check_choice,
    check_smoothing,
    format_label,
    format_labels,
)
from ..metrics import get_metric, get_metrics
from ..smoothing import CrossPriorSmoothing
from ._split import _check_sizes

__all__ = ["downsampling_experiment"]

_METHODS = ("exact", "montecarlo")
_SAMPLINGS = ("multinomial", "hypergeometric")
#: Largest number of Monte Carlo draws held in memory at once (rows of 4 cells).
_MAX_CHUNK = 1_000_000
#: Monte Carlo draws are generated as a histogram over the possible matrices when
#: there are at most this many (and no more than draws).
_HISTOGRAM_MAX = 2_000_000
#: Number of (group, matrix) pairs evaluated at once: bounds the memory of a
#: task and keeps the temporaries of the metric formulas in cache.
_BLOCK = 1 << 16
_KEYS = ["group", "n", "metric", "estimator"]
_STATS = ["mse", "bias", "variance", "p_undefined"]
_CHECKPOINT_FORMAT = 1


def _check_estimators(estimators):
    if estimators is None:
        return {"raw": None, "cps_10": CrossPriorSmoothing(10)}
    if not isinstance(estimators, Mapping):
        raise TypeError(
            "estimators must be a mapping {name: None | smoothing}, e.g. "
            "{'raw': None, 'cps_10': CrossPriorSmoothing(10)}; got "
            f"{type(estimators).__name__}."
        )
    if not estimators:
        raise ValueError("estimators is empty; pass at least one estimator.")
    for name, est in estimators.items():
        if not isinstance(name, str):
            raise TypeError(f"estimator names must be strings; got {name!r}.")
        check_smoothing(est, name=f"estimators[{name!r}]")
    return dict(estimators)


# ---------------------------------------------------------------------------
# Support of each metric: the block sums it depends on (see ``Metric.blocks``)
# ---------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _compositions(n, k):
    """All ``(b_0, ..., b_{k-1}) >= 0`` summing to ``n``, ordered by :func:`_rank`."""
    if k == 4:
        return enumerate_confusion_matrices(n)
    if k == 3:
        # (n - s, i, s - i) for s = 0..n, i = 0..s: rank s (s + 1) / 2 + i
        s = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
        i = np.arange(s.shape[0]) - s * (s + 1) // 2
        out = np.stack([n - s, i, s - i], axis=1)
    elif k == 2:
        j = np.arange(n + 1)
        out = np.stack([n - j, j], axis=1)
    else:
        out = np.full((1, 1), n)
    out.flags.writeable = False
    return out


def _rank(block_sums):
    """Row of each block-sum vector in :func:`_compositions` (last axis: blocks)."""
    k = block_sums.shape[-1]
    if k == 3:
        s = block_sums[..., 1] + block_sums[..., 2]
        return s * (s + 1) // 2 + block_sums[..., 1]
    if k == 2:
        return block_sums[..., 1]
    if k == 1:
        return np.zeros(block_sums.shape[:-1], dtype=np.int64)
    raise ValueError("four blocks are ranked by the enumeration itself")


def _collapse(cells, blocks):
    """Put each block's sum in the block's first cell and zeros elsewhere."""
    out = np.zeros_like(cells)
    for block in blocks:
        out[..., block[0]] = cells[..., list(block)].sum(axis=-1)
    return out


class _Support:
    """The matrices of size ``n`` a group of metrics sharing ``blocks`` needs.

    ``cells`` has one row per block-sum vector, the sum of each block in the
    block's first cell (every metric of the group gives the same value on it as
    on any matrix with those block sums).
    """

    def __init__(self, n, blocks):
        self.blocks = blocks
        comps = _compositions(n, len(blocks))
        if len(blocks) == 4:
            self.cells = comps
        else:
            cells = np.zeros((comps.shape[0], 4), dtype=np.int64)
            for j, block in enumerate(blocks):
                cells[:, block[0]] = comps[:, j]
            self.cells = cells

    def from_full(self, weights, n):
        """Weights over all matrices of size ``n`` summed onto this support."""
        if len(self.blocks) == 4:
            return weights
        full = enumerate_confusion_matrices(n)
        sums = np.stack([full[:, list(b)].sum(axis=1) for b in self.blocks], axis=1)
        index = _rank(sums)
        size = self.cells.shape[0]
        return np.stack([np.bincount(index, w, minlength=size) for w in weights])


def _plan(metrics):
    """(index, metric) pairs grouped by their blocks, costliest support first."""
    plan = {}
    for j, m in enumerate(metrics):
        plan.setdefault(tuple(tuple(b) for b in m.blocks), []).append((j, m))
    return sorted(plan.items(), key=lambda kv: -len(kv[0]))


def _coefficients(est, n, refs, blocks):
    """Affine form ``(scale, offset)`` of a smoother at size ``n`` on a support.

    ``None`` for raw counts; ``offset`` holds each block's total offset in the
    block's first cell. Shapes ``(1,), (4,)`` for a reference-free smoother,
    ``(G, 1), (G, 4)`` for one with a reference per group.
    """
    if est is None:
        return None
    if est.requires_reference:
        scale, offset = est.coefficients(np.full(len(refs), float(n)), refs)
    else:
        scale, offset = est.coefficients(float(n))
    return scale, _collapse(offset, blocks)


def _smoothed(columns, coef):
    """Smoothed support matrices from the support's cell columns ``(4, m)``.

    Returns ``(m, 4)`` (shared by all groups) or ``(G, m, 4)`` (one per group),
    laid out so that each cell ``x[..., j]`` is contiguous for the metrics.
    """
    if coef is None:
        return columns.T
    scale, offset = coef
    if offset.ndim == 1:
        return (scale[0] * columns + offset[:, None]).T
    out = scale[None, :, :] * columns[:, None, :] + offset.T[:, :, None]
    return out.transpose(1, 2, 0)


def _power_sums(values, weights, shift, order):
    """``sum w (v - shift)^k`` for ``k = 0..order`` over defined values, and the
    weight of undefined values, per group.

    ``values`` (M,) or (G, M); ``weights`` (G, M); ``shift`` (G,). Plain numpy
    sums and ``einsum`` (no BLAS): the same bits whatever the thread count.
    """
    defined = np.isfinite(values)
    shared = values.ndim == 1
    if shared:
        # one common shift, re-centred per group after the sums
        c = float(np.mean(shift))
        rows = np.empty((order + 2, values.shape[0]))
        rows[0] = defined
        u = np.where(defined, values - c, 0.0)
        for k in range(1, order + 1):
            np.multiply(rows[k - 1], u, out=rows[k])
        np.logical_not(defined, out=rows[order + 1], casting="unsafe")
        sums = np.einsum("gm,km->kg", weights, rows)
        p = sums[: order + 1]  # (order + 1, G)
        delta = shift - c
        out = np.zeros_like(p)
        for k in range(order + 1):
            for j in range(k + 1):
                out[k] += comb(k, j) * (-delta) ** (k - j) * p[j]
        undefined = sums[order + 1]
        return out, undefined
    w = np.where(defined, weights, 0.0)
    d = np.where(defined, values - shift[:, None], 0.0)
    sums = [w.sum(axis=-1)]
    f = d
    for k in range(order):
        sums.append(np.einsum("gm,gm->g", w, f))
        if k + 1 < order:
            f = f * d
    undefined = (
        np.where(defined, 0.0, weights).sum(axis=-1)
        if not defined.all()
        else np.zeros(len(shift))
    )
    return np.stack(sums), undefined


def _weights(cells, group_counts, sampling):
    """Probability of every support matrix for every group, shape (G, M)."""
    return np.exp(_logpmf_by_group(cells, group_counts, sampling))


def _evaluate(acc, cells, weights, n, blocks, metrics, estimators, refs, shift, order):
    """Add the power sums of every (metric, estimator) on one support.

    The support is processed in column blocks of a fixed size (whatever the
    machine or ``n_jobs``, so the sums are always added in the same order) that
    keep the temporaries of the metric formulas in cache.
    """
    n_groups, size = weights.shape
    coefs = [_coefficients(est, n, refs, blocks) for est in estimators]
    step = max(1, _BLOCK // n_groups)
    for e in range(len(coefs)):
        for j, _ in metrics:
            if (j, e) not in acc:
                acc[(j, e)] = (
                    np.zeros((order + 1, n_groups)),
                    np.zeros(n_groups),
                    np.zeros(n_groups),
                )
    for lo in range(0, size, step):
        cols = np.asarray(cells[lo : lo + step].T, dtype=np.float64, order="C")
        w = weights[:, lo : lo + step]
        total = w.sum(axis=1)
        for e, coef in enumerate(coefs):
            x = _smoothed(cols, coef)
            for j, m in metrics:
                sums, undefined = _power_sums(m.func(x), w, shift[:, j], order)
                s, u, t = acc[(j, e)]
                s += sums
                u += undefined
                t += total


def _size_stats(
    n, counts, refs, targets, plan, estimators, method, sampling, n_draws, rngs
):
    """Statistics of one size: array (G, n_estimators, n_metrics, n_stats)."""
    order = 4 if method == "montecarlo" else 2
    finite = np.isfinite(targets)
    shift = np.where(finite, targets, 0.0)  # (G, n_metrics)
    acc = {}
    histogram = method == "montecarlo" and n_confusion_matrices(n) <= min(
        n_draws, _HISTOGRAM_MAX
    )
    if histogram:
        # the histogram of n_draws matrices over the C(n+3, 3) possible ones: one
        # multinomial draw per group, the same law as n_draws separate draws, and
        # every metric and estimator scored on the same draws
        full = _weights(enumerate_confusion_matrices(n), counts, sampling)
        full /= full.sum(axis=1, keepdims=True)
        hist = np.stack(
            [rng.multinomial(n_draws, p) for rng, p in zip(rngs, full, strict=True)]
        ).astype(np.float64)
    if method == "exact" or histogram:
        for blocks, metrics in plan:
            support = _Support(n, blocks)
            if histogram:
                weights = support.from_full(hist, n)
            else:
                weights = _weights(support.cells, _collapse(counts, blocks), sampling)
            _evaluate(
                acc,
                support.cells,
                weights,
                n,
                blocks,
                metrics,
                estimators,
                refs,
                shift,
                order,
            )
    else:
        singles = ((0,), (1,), (2,), (3,))
        metrics = [jm for _, ms in plan for jm in ms]
        p = counts / counts.sum(axis=1, keepdims=True)
        for g, rng in enumerate(rngs):
            part = slice(g, g + 1)
            one = {}
            for start in range(0, n_draws, _MAX_CHUNK):
                size = min(_MAX_CHUNK, n_draws - start)
                if sampling == "multinomial":
                    cells = rng.multinomial(n, p[g], size=size)
                else:
                    cells = rng.multivariate_hypergeometric(counts[g], n, size=size)
                _evaluate(
                    one,
                    cells,
                    np.ones((1, size)),
                    n,
                    singles,
                    metrics,
                    estimators,
                    None if refs is None else refs[part],
                    shift[part],
                    order,
                )
            for key, (s, u, t) in one.items():
                if key not in acc:
                    acc[key] = (
                        np.zeros((order + 1, len(rngs))),
                        np.zeros(len(rngs)),
                        np.zeros(len(rngs)),
                    )
                acc[key][0][:, g] = s[:, 0]
                acc[key][1][g] = u[0]
                acc[key][2][g] = t[0]
    n_stats = 5 if method == "montecarlo" else 4
    out = np.full((counts.shape[0], len(estimators), targets.shape[1], n_stats), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        for (j, e), (s, undefined, total) in acc.items():
            k = s[0]
            has = k > 0
            m1 = np.where(has, s[1] / k, np.nan)
            m2 = np.where(has, s[2] / k, np.nan)
            ok = has & finite[:, j]
            out[:, e, j, 0] = np.where(ok, m2, np.nan)  # mse
            out[:, e, j, 1] = np.where(ok, m1, np.nan)  # bias
            out[:, e, j, 2] = np.where(has, np.maximum(m2 - m1 * m1, 0.0), np.nan)
            out[:, e, j, 3] = undefined / total  # p_undefined
            if method == "montecarlo":
                m4 = s[4] / k
                out[:, e, j, 4] = np.where(
                    ok, np.sqrt(np.maximum(m4 - m2 * m2, 0.0) / k), np.nan
                )
    return out


def _run_task(
    sizes,
    labels,
    counts,
    refs,
    targets,
    metric_names,
    estimators,
    method,
    sampling,
    n_draws,
    base_seed,
):
    metrics = [get_metric(name) for name in metric_names]
    plan = _plan(metrics)
    out = []
    for n in sizes:
        rngs = (
            [child_rng(base_seed, label, int(n)) for label in labels]
            if method == "montecarlo"
            else None
        )
        stats = _size_stats(
            n,
            counts,
            refs,
            targets,
            plan,
            list(estimators.values()),
            method,
            sampling,
            n_draws,
            rngs,
        )
        out.append((int(n), stats))
    return out


def _cost(n, method, n_draws):
    m = n_confusion_matrices(n)
    if method == "montecarlo" and m > min(n_draws, _HISTOGRAM_MAX):
        return n_draws
    return m


def _tasks(sizes, method, n_draws):
    """Sizes bundled into tasks of similar cost, costliest first.

    The bundling never changes a result (each size is computed on its own, with
    its own random streams); it only balances the work between the jobs.
    """
    costs = [_cost(int(n), method, n_draws) for n in sizes]
    target = max(max(costs), sum(costs) / 64)
    tasks, current, acc = [], [], 0
    for n, c in zip(sizes.tolist(), costs, strict=True):
        current.append(n)
        acc += c
        if acc >= target:
            tasks.append((acc, current))
            current, acc = [], 0
    if current:
        tasks.append((acc, current))
    tasks.sort(key=lambda t: -t[0])
    return [t[1] for t in tasks]


# ---------------------------------------------------------------------------
# Checkpoint: one JSON line per finished size, after a header with the
# fingerprint of the arguments
# ---------------------------------------------------------------------------


def _fingerprint(
    labels, counts, refs, metrics, estimators, method, sampling, n_draws, base_seed
):
    spec = {
        "format": _CHECKPOINT_FORMAT,
        "groups": [format_label(g) for g in labels],
        "counts": np.asarray(counts).tolist(),
        "reference": None if refs is None else np.asarray(refs).tolist(),
        "metrics": [m.name for m in metrics],
        "estimators": [
            [
                name,
                None if est is None else type(est).__name__,
                None if est is None else repr(sorted(est.get_params().items())),
            ]
            for name, est in estimators.items()
        ],
        "method": method,
        "sampling": sampling,
    }
    if method == "montecarlo":
        spec["n_draws"] = int(n_draws)
        spec["seed"] = [
            str(base_seed.entropy),
            list(base_seed.spawn_key),
            base_seed.pool_size,
        ]
    blob = json.dumps(spec, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class _Checkpoint:
    """Append-only record of finished sizes; survives a kill at any point."""

    def __init__(self, path, fingerprint, shape):
        self.path = os.fspath(path)
        self.shape = shape
        self.done = {}
        if os.path.exists(self.path):
            self._load(fingerprint)
        else:
            with open(self.path, "w", encoding="utf-8") as fh:
                fh.write(json.dumps({"fingerprint": fingerprint}) + "\n")
                fh.flush()
                os.fsync(fh.fileno())

    def _load(self, fingerprint):
        with open(self.path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.split("\n")
        try:
            header = json.loads(lines[0])["fingerprint"]
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f"checkpoint={self.path!r} is not a downsampling checkpoint file; "
                f"pass a new path or delete the file."
            ) from None
        if header != fingerprint:
            raise ValueError(
                f"checkpoint={self.path!r} was written by a run with other "
                f"arguments (data, metrics, estimators, method, sampling, n_draws "
                f"or random_state); rerun with the same arguments, or pass a new "
                f"path (or delete the file) to start afresh."
            )
        complete = lines[1:-1] if not text.endswith("\n") else lines[1:]
        for line in complete:
            if not line:
                continue
            try:
                record = json.loads(line)
                stats = np.array(record["stats"], dtype=np.float64)
            except (ValueError, KeyError, TypeError):
                continue  # a record cut short by a kill
            if stats.shape == self.shape:
                self.done[int(record["n"])] = stats
        if not text.endswith("\n"):
            # drop the partial last record before appending
            keep = text[: text.rfind("\n") + 1]
            with open(self.path, "w", encoding="utf-8") as fh:
                fh.write(keep)

    def add(self, n, stats):
        line = json.dumps({"n": int(n), "stats": stats.tolist()})
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.done[int(n)] = stats


def downsampling_experiment(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    metrics=("tpr", "fpr", "ppv", "mcc"),
    estimators=None,
    sizes=range(5, 151),
    method="exact",
    sampling="multinomial",
    n_draws=1_000_000,
    reference="rest",
    n_jobs=None,
    random_state=None,
    progress=False,
    checkpoint=None,
):
    """Error of metric estimators on small subgroups drawn from each group.

    For a group with whole-group matrix ``K`` (size ``N``) the target is the
    unsmoothed score ``t = M(K)``. For each size ``n`` a subgroup matrix is drawn
    from ``Multinomial(n, K / N)`` (``sampling="multinomial"``, the published
    protocol) or by taking ``n`` of the ``N`` rows without replacement
    (``sampling="hypergeometric"``). Each estimator (raw counts or a smoothing)
    scores it; the report gives, conditional on the score being defined, its
    ``bias = E[v] - t``, ``variance = Var[v]`` and ``mse = E[(v - t)^2]``, plus
    the probability ``p_undefined`` that the score is undefined.

    ``method="exact"`` sums over all ``C(n + 3, 3)`` matrices of size ``n`` with
    their probabilities: no Monte Carlo error. A metric that depends on the cells
    only through ``k`` block sums (``Metric.blocks``: ``tpr`` through ``TP``,
    ``FN`` and ``FP + TN``) is summed over the ``C(n + k - 1, k - 1)`` block-sum
    vectors instead, which is the same sum grouped by value. ``method="montecarlo"``
    draws ``n_draws`` matrices per (group, size) and also reports ``mse_se``; when
    there are fewer possible matrices than draws, the draws are generated as their
    histogram over the possible matrices (one multinomial draw of ``n_draws``, the
    same law as ``n_draws`` separate draws), so a million draws cost no more than
    the exact sum. Every metric and estimator is scored on the same draws.

    Work is split into joblib tasks by size (each task computes all groups of its
    sizes, sharing the reference-free estimators' values between groups). Each
    (group, size) has its own random stream, so the results do not depend on
    ``n_jobs``, on the joblib backend (e.g. dask) or on the other sizes requested.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels (positive label 1); or pass ``counts``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, \
            n_features), default=None
        Group label of each sample (required with rows).
    counts : pandas.DataFrame, mapping or array-like of shape (n_groups, 4), \
            default=None
        Per-group counts ``(TP, FN, FP, TN)`` instead of rows, e.g.
        ``load_published_confusion_matrices("COMPAS", include_all=False)``.
    metrics : str or sequence of str, default=("tpr", "fpr", "ppv", "mcc")
        Single-group metrics of the registry.
    estimators : mapping of str to None or smoothing, default=None
        ``{name: None}`` scores the raw subgroup matrix, ``{name: smoothing}``
        the smoothed one (:class:`~sklearn_smallfair.smoothing.AdditiveSmoothing`,
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`). ``None`` means
        ``{"raw": None, "cps_10": CrossPriorSmoothing(10)}``.
    sizes : iterable of int, default=range(5, 151)
        Subgroup sizes ``n >= 1`` (sorted and deduplicated in the output). With
        ``sampling="hypergeometric"`` every size must be at most each group's size.
    method : {"exact", "montecarlo"}, default="exact"
        Exact enumeration or Monte Carlo draws.
    sampling : {"multinomial", "hypergeometric"}, default="multinomial"
        Draw subgroups with replacement (multinomial) or without (hypergeometric).
    n_draws : int, default=1_000_000
        Draws per (group, size) for ``method="montecarlo"``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference of each group for Cross-Prior Smoothing; see
        :func:`sklearn_smallfair.reference_counts`.
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.
    random_state : None, int, numpy Generator or SeedSequence, default=None
        Seed of the Monte Carlo draws. Each (group, size) gets its own stream keyed
        by the group label and the size, so results do not depend on ``n_jobs``
        or on which other groups and sizes are requested.
    progress : bool, default=False
        Show a progress bar over tasks (needs ``tqdm``, extra ``progress``).
    checkpoint : str or path-like, default=None
        File recording each finished size as soon as it is computed. A run that is
        interrupted (killed, out of time) and restarted with the same arguments
        and the same ``checkpoint`` computes only the missing sizes and returns
        exactly the table an uninterrupted run returns. A file written with other
        arguments raises an error instead of being mixed in. With
        ``method="montecarlo"`` it needs a fixed ``random_state``.

    Returns
    -------
    results : pandas.DataFrame
        One row per group, size, metric and estimator, with columns ``group``,
        ``n``, ``metric``, ``estimator``, ``mse``, ``bias``, ``variance``,
        ``p_undefined``; with ``method="montecarlo"`` also ``mse_se`` (standard
        error of ``mse``) and ``n_draws``. Statistics are ``NaN`` when the score is
        never defined (or the target is undefined, for ``mse`` and ``bias``).

    See Also
    --------
    GroupDownsamplingCV : Draw the subgroups' rows for a model-based experiment.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> from sklearn_smallfair.model_selection import downsampling_experiment
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> counts = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> res = downsampling_experiment(
    ...     counts=counts, metrics="tpr", sizes=[10, 20],
    ...     estimators={"raw": None, "cps_10": CrossPriorSmoothing(10)})
    >>> res[["group", "n", "estimator", "mse", "variance", "p_undefined"]].round(4)
       group   n estimator     mse  variance  p_undefined
    0  Black  10       raw  0.1643    0.1643       0.2229
    1  Black  10    cps_10  0.0648    0.0494       0.0000
    2  Black  20       raw  0.1073    0.1073       0.0497
    3  Black  20    cps_10  0.0540    0.0484       0.0000
    4  White  10       raw  0.1866    0.1866       0.3854
    5  White  10    cps_10  0.0571    0.0285       0.0000
    6  White  20       raw  0.1426    0.1426       0.1485
    7  White  20    cps_10  0.0518    0.0361       0.0000

    Raw TPR is conditionally unbiased under multinomial sampling but undefined for
    22% of Black subgroups of 10; CPS trades a little bias for a much smaller
    variance.
    """
    # ---- validation, before any work ----
    check_choice(method, "method", _METHODS)
    check_choice(sampling, "sampling", _SAMPLINGS)
    if isinstance(n_draws, bool) or not isinstance(n_draws, Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1; got {n_draws!r}.")
    sizes = np.unique(_check_sizes(sizes))
    metrics = get_metrics(metrics, single_group=True)
    estimators = _check_estimators(estimators)
    progress = check_bool(progress, "progress")
    if checkpoint is not None:
        if not isinstance(checkpoint, (str, os.PathLike)):
            raise TypeError(
                f"checkpoint must be a file path (str or path-like); got "
                f"{checkpoint!r}."
            )
        if method == "montecarlo" and (
            random_state is None
            or isinstance(random_state, (np.random.Generator, np.random.RandomState))
        ):
            raise ValueError(
                "checkpoint with method='montecarlo' needs random_state set to an "
                "int (or SeedSequence), so that a restarted run draws the same "
                "numbers."
            )
    groups, counts, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, None, 1
    )
    if sampling == "hypergeometric":
        if counts.dtype.kind == "f":
            if not np.array_equal(counts, np.round(counts)):
                raise ValueError(
                    "sampling='hypergeometric' draws rows without replacement, so "
                    "it needs integer counts; got fractional counts."
                )
            counts = counts.astype(np.int64)
        too_small = counts.sum(axis=1) < sizes.max()
        if too_small.any():
            raise ValueError(
                f"sampling='hypergeometric' cannot draw {int(sizes.max())} rows "
                f"from group(s) {format_labels(groups[too_small])} of size(s) "
                f"{counts.sum(axis=1)[too_small].tolist()}; use sizes no larger "
                f"than the smallest group, or sampling='multinomial'."
            )
    elif method == "exact" and counts.dtype.kind == "f":
        counts = counts.astype(np.float64)
    if any(est is not None and est.requires_reference for est in estimators.values()):
        refs = reference_counts(counts, reference, groups=groups).astype(np.float64)
    else:
        refs = None
    pkg_tqdm = None
    if progress:
        try:
            from tqdm.auto import tqdm as pkg_tqdm
        except ImportError as exc:
            raise ImportError(
                "progress=True needs tqdm; install it with "
                "`pip install sklearn-smallfair[progress]` (or `pip install tqdm`)."
            ) from exc
    base_seed = resolve_seed(random_state)

    # ---- tasks: chunks of sizes, all groups at once ----
    whole = np.asarray(counts, dtype=np.float64)
    targets = np.stack([m.func(whole) for m in metrics], axis=1)
    n_stats = len(_STATS) + (method == "montecarlo")
    shape = (len(groups), len(estimators), len(metrics), n_stats)
    store = None
    if checkpoint is not None:
        store = _Checkpoint(
            checkpoint,
            _fingerprint(
                groups,
                counts,
                refs,
                metrics,
                estimators,
                method,
                sampling,
                n_draws,
                base_seed,
            ),
            shape,
        )
    done = {} if store is None else dict(store.done)
    todo = np.array([n for n in sizes.tolist() if n not in done], dtype=np.int64)
    results = dict(done)
    if todo.size:
        tasks = [
            delayed(_run_task)(
                chunk,
                groups,
                counts,
                refs,
                targets,
                [m.name for m in metrics],
                estimators,
                method,
                sampling,
                int(n_draws),
                base_seed,
            )
            for chunk in _tasks(todo, method, n_draws)
        ]
        finished = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
        if progress:
            finished = pkg_tqdm(finished, total=len(tasks), desc="downsampling")
        for task_result in finished:
            for n, stats in task_result:
                if store is not None:
                    store.add(n, stats)
                results[n] = stats

    # ---- assemble in (group, size, estimator, metric) order ----
    table = np.stack([results[n] for n in sizes.tolist()], axis=1)  # (G, S, E, M, k)
    codes = np.indices(table.shape[:4]).reshape(4, -1)
    columns = list(_STATS) + (["mse_se"] if method == "montecarlo" else [])
    frame = pd.DataFrame(table.reshape(-1, table.shape[-1]), columns=columns)
    frame.insert(0, "group", np.asarray(groups, dtype=object)[codes[0]])
    frame.insert(1, "n", sizes.astype(np.int64)[codes[1]])
    names = np.array([m.name for m in metrics], dtype=object)
    frame.insert(2, "metric", names[codes[3]])
    frame.insert(3, "estimator", np.array(list(estimators), dtype=object)[codes[2]])
    if method == "montecarlo":
        frame["n_draws"] = np.int64(n_draws)
    return frame
