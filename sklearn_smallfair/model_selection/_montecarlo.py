"""The statistics of one size summed over whole supports: Monte Carlo draws,
made one by one or as a histogram over the possible matrices, and the exact sum
of one size (the reference of the block engine)."""

import numpy as np

from .._enumeration import enumerate_confusion_matrices, n_confusion_matrices
from ._budget import _HISTOGRAM_MAX, _MAX_CHUNK
from ._statistics import _finish
from ._sums import _SINGLES, _collapse, _evaluate, _Support, _weights


def _size_stats(
    n, counts, refs, targets, plan, estimators, method, sampling, n_resamples, rngs
):
    """Statistics of one size: array (G, n_estimators, n_metrics, n_stats)."""
    order = 4 if method == "montecarlo" else 2
    finite = np.isfinite(targets)
    shift = np.where(finite, targets, 0.0)  # (G, n_metrics)
    acc = {}
    histogram = method == "montecarlo" and n_confusion_matrices(n) <= min(
        n_resamples, _HISTOGRAM_MAX
    )
    if histogram:
        # the histogram of n_resamples matrices over the C(n+3, 3) possible ones: one
        # multinomial draw per group, the same law as n_resamples separate draws, and
        # every metric and estimator scored on the same draws
        full = _weights(enumerate_confusion_matrices(n), counts, sampling)
        full /= full.sum(axis=1, keepdims=True)
        hist = np.stack(
            [rng.multinomial(n_resamples, p) for rng, p in zip(rngs, full, strict=True)]
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
        metrics = [jm for _, ms in plan for jm in ms]
        p = counts / counts.sum(axis=1, keepdims=True)
        for g, rng in enumerate(rngs):
            part = slice(g, g + 1)
            one = {}
            for start in range(0, n_resamples, _MAX_CHUNK):
                size = min(_MAX_CHUNK, n_resamples - start)
                if sampling == "multinomial":
                    cells = rng.multinomial(n, p[g], size=size)
                else:
                    cells = rng.multivariate_hypergeometric(counts[g], n, size=size)
                _evaluate(
                    one,
                    cells,
                    np.ones((1, size)),
                    n,
                    _SINGLES,
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
    return _finish(acc, counts.shape[0], len(estimators), targets, method)
