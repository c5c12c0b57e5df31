"""The tasks of a downsampling experiment: sizes bundled into joblib tasks of
similar cost, each computing every group of its sizes."""

import numpy as np
from threadpoolctl import threadpool_limits

from .._enumeration import n_confusion_matrices
from .._random import child_rng
from ..metrics import get_metric
from ._budget import _HISTOGRAM_MAX
from ._exact import _exact_task
from ._montecarlo import _size_stats
from ._statistics import _finish
from ._sums import _plan


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
    n_resamples,
    base_seed,
    memory_budget=None,
):
    """Statistics of every size of one task, all groups at once: a list of
    ``(n, array (G, n_estimators, n_metrics, n_stats))``.

    ``method="exact"`` sums every size of the task block by block
    (:func:`~._exact._exact_task`); Monte Carlo draws each size on its own, from
    one stream per (group, size) derived from ``base_seed``.
    """
    metrics = [get_metric(name) for name in metric_names]
    plan = _plan(metrics)
    estimators = list(estimators.values())
    if method == "exact":
        finite = np.isfinite(targets)
        shift = np.where(finite, targets, 0.0)
        # one BLAS thread: the groups' sums are matrix products whose bits would
        # otherwise depend on the thread count (and so on n_jobs)
        with np.errstate(all="ignore"), threadpool_limits(limits=1, user_api="blas"):
            acc = _exact_task(
                sizes, counts, refs, shift, plan, estimators, sampling, memory_budget
            )
        n_groups = counts.shape[0]
        out = []
        for pos, n in enumerate(sizes):
            part = slice(pos * n_groups, (pos + 1) * n_groups)
            one = {key: tuple(a[..., part] for a in val) for key, val in acc.items()}
            stats = _finish(one, n_groups, len(estimators), targets, method)
            out.append((int(n), stats))
        return out
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
            estimators,
            method,
            sampling,
            n_resamples,
            rngs,
        )
        out.append((int(n), stats))
    return out


def _cost(n, method, n_resamples):
    m = n_confusion_matrices(n)
    if method == "montecarlo" and m > min(n_resamples, _HISTOGRAM_MAX):
        return n_resamples
    return m


def _tasks(sizes, method, n_resamples):
    """Sizes bundled into tasks of similar cost, costliest first.

    The bundling never changes a result (each size is computed on its own, with
    its own random streams); it only balances the work between the jobs.
    """
    costs = [_cost(int(n), method, n_resamples) for n in sizes]
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
