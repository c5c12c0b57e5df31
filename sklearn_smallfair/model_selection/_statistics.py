"""The table of a downsampling experiment: its keys, its statistics, and the
statistics computed from the power sums of the scores."""

import numpy as np

#: Columns that identify a row of the results.
_KEYS = ("group", "n", "metric", "estimator")
#: Statistics of every row; Monte Carlo results add ``mse_se``.
_STATS = ("mse", "bias", "variance", "p_undefined")


def _columns(method):
    """Statistic columns of the results of ``method``."""
    return list(_STATS) + (["mse_se"] if method == "montecarlo" else [])


def _error_statistics(sums, undefined, total, finite_target, montecarlo):
    """``mse``, ``bias``, ``variance``, ``p_undefined`` (and ``mse_se``) from the
    power sums of ``v - target`` over the defined scores.

    ``sums[k]`` is the weighted sum of ``(v - target)^k`` (``sums[0]`` the weight
    of the defined scores), ``undefined`` the weight of the undefined scores and
    ``total`` the total weight; ``finite_target`` says where the target is
    defined (``mse``, ``bias`` and ``mse_se`` are NaN elsewhere). Returns the
    statistics stacked on a last axis.
    """
    k = sums[0]
    has = k > 0
    ok = has & finite_target
    with np.errstate(invalid="ignore", divide="ignore"):
        m1 = sums[1] / k
        m2 = sums[2] / k
        stats = [
            np.where(ok, m2, np.nan),
            np.where(ok, m1, np.nan),
            np.where(has, np.maximum(m2 - m1 * m1, 0.0), np.nan),
            undefined / total,
        ]
        if montecarlo:
            m4 = sums[4] / k
            stats.append(
                np.where(ok, np.sqrt(np.maximum(m4 - m2 * m2, 0.0) / k), np.nan)
            )
    return np.stack(stats, axis=-1)


def _finish(acc, n_groups, n_estimators, targets, method):
    """Statistics from the power sums ``acc`` of every (metric, estimator): array
    ``(G, n_estimators, n_metrics, n_stats)``."""
    finite = np.isfinite(targets)
    n_stats = len(_columns(method))
    out = np.full((n_groups, n_estimators, targets.shape[1], n_stats), np.nan)
    for (j, e), (s, undefined, total) in acc.items():
        out[:, e, j] = _error_statistics(
            s, undefined, total, finite[:, j], method == "montecarlo"
        )
    return out
