"""Intervals from draws: Dirichlet posteriors and the stratified bootstrap.

Everything is vectorized over groups: one block of shape ``(groups, n_resamples,
4)`` (or ``(groups, n_resamples, K, K)``) is filled per chunk of groups and the
metric function is evaluated on the whole block. Each group's draws come from its
own random stream, keyed by the group's label and the metric
(:func:`sklearn_smallfair._random.child_rng`), so an interval does not depend on
the order of the groups or on which other groups are present; the only per-group
Python step is seeding the stream and filling the group's rows of the block.
"""

import numpy as np

from ._random import child_rng
from ._references import reference_counts

#: Default number of posterior draws or bootstrap replicates per group and metric.
DEFAULT_N_RESAMPLES = 2000
#: Most draws per group and metric: a group's block is then 32 MiB.
MAX_N_RESAMPLES = 10**6
#: Pseudo-count per cell of the weak (Jeffreys) Dirichlet prior used for raw values.
JEFFREYS_PRIOR = 0.5
#: Largest number of draws (groups x n_resamples) held at once: 2**21 draws of 4
#: float64 cells are 64 MiB.
_CHUNK_DRAWS = 1 << 21


def _chunks(n_groups, n_resamples):
    size = max(1, _CHUNK_DRAWS // n_resamples)
    for start in range(0, n_groups, size):
        yield slice(start, min(start + size, n_groups))


def posterior_block(params, rngs, n_resamples, scale=None):
    """Dirichlet draws of the cell probabilities of each group.

    ``params`` (G, 4) are the Dirichlet parameters ``c + a``; each group's draws are
    independent gammas from the group's own generator. Every metric of the
    registry is homogeneous of degree 0 (it does not change when all cells are
    multiplied by a constant), so the gammas themselves, of shape
    ``(G, n_resamples, 4)``, are returned unless ``scale`` (G,) is given: then they are
    normalised and multiplied by it (expected counts of a group of that size).
    """
    block = np.empty((len(rngs), n_resamples, 4))
    for i, rng in enumerate(rngs):
        rng.standard_gamma(params[i], size=(n_resamples, 4), out=block[i])
    if scale is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            total = block.sum(axis=-1, keepdims=True)
            block *= np.asarray(scale, dtype=np.float64)[:, None, None] / total
    return block


def bootstrap_block(counts, rngs, n_resamples):
    """Stratified bootstrap: ``n_resamples`` multinomial redraws of each group's matrix.

    A group of ``n`` people is resampled ``n`` times with replacement, i.e. its
    matrix is redrawn from ``Multinomial(n, counts / n)``. Weighted (non-integer)
    counts are redrawn at the nearest whole size.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=-1)
    sizes = np.rint(n).astype(np.int64)
    probs = counts / n[:, None]
    block = np.empty((len(rngs), n_resamples, 4), dtype=np.float64)
    for i, rng in enumerate(rngs):
        block[i] = rng.multinomial(sizes[i], probs[i], size=n_resamples)
    return block


def draw_quantiles(values, alpha):
    """Equal-tailed ``alpha/2`` and ``1 - alpha/2`` quantiles of each row, NaN left out.

    ``values`` has shape (G, D); non-finite values are undefined draws. Quantiles
    interpolate linearly between order statistics (numpy's default). NaN for a row
    without any defined draw.
    """
    values = np.where(np.isfinite(values), values, np.nan)
    ordered = np.sort(values, axis=1)  # NaN last
    defined = np.isfinite(ordered).sum(axis=1)
    rows = np.arange(values.shape[0])
    out = []
    for q in (alpha / 2.0, 1.0 - alpha / 2.0):
        pos = q * np.maximum(defined - 1, 0)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(defined - 1, 0))
        frac = pos - lo
        a, b = ordered[rows, lo], ordered[rows, hi]
        with np.errstate(invalid="ignore"):
            value = a + (b - a) * frac
        out.append(np.where(defined > 0, np.where(frac == 0, a, value), np.nan))
    return out[0], out[1]


def _metric_values(metric, cells, comparison=None):
    """Registry values of draws ``cells`` (..., 4); two-group metrics pair them
    with ``comparison`` draws."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if metric.n_groups == 2:
            cells = np.stack([cells, comparison], axis=-2)
        return np.asarray(metric.func(cells), dtype=np.float64)


class Comparison:
    """Each group's comparison matrix and how its draws are made.

    ``counts`` (G, 4) are the matrices drawn for the comparison side; with
    ``includes_group`` (``reference="total"``) they are the rest of the data and
    the comparison is the group's draw plus the rest's draw. ``keys`` are the
    random-stream keys of each group's comparison draws.
    """

    def __init__(self, counts, includes_group, keys, itself=None):
        self.counts = np.asarray(counts, dtype=np.float64)
        self.includes_group = includes_group
        self.keys = keys
        #: Groups compared with themselves (the named reference group).
        self.itself = (
            np.zeros(self.counts.shape[0], dtype=bool) if itself is None else itself
        )

    @classmethod
    def of(cls, counts, groups, reference):
        """The comparison of every group with its ``reference`` (see
        :func:`~sklearn_smallfair.reference_counts`)."""
        counts = np.asarray(counts, dtype=np.float64)
        if isinstance(reference, str) and reference in ("rest", "total"):
            rest = reference_counts(counts, "rest", groups=groups)
            return cls(rest, reference == "total", [(g, "rest") for g in groups])
        ref = reference_counts(counts, reference, groups=groups)
        if isinstance(reference, (list, tuple, np.ndarray)) or hasattr(
            reference, "to_numpy"
        ):
            return cls(ref, False, [(g, "reference") for g in groups])
        itself = np.asarray([g == reference for g in groups], dtype=bool)
        return cls(ref, False, [(reference,)] * len(groups), itself)

    def matrices(self, group_draws, comparison_draws):
        """The comparison's matrices in each draw."""
        if self.includes_group:
            return group_draws + comparison_draws
        return comparison_draws

    def observed(self, counts):
        counts = np.asarray(counts, dtype=np.float64)
        return counts + self.counts if self.includes_group else self.counts


def _draws(method, counts, params, rngs, n_resamples, *, scaled=False):
    """Posterior draws (expected counts if ``scaled``) or bootstrap replicates."""
    if method == "posterior":
        scale = counts.sum(axis=-1) if scaled else None
        return posterior_block(params, rngs, n_resamples, scale)
    return bootstrap_block(counts, rngs, n_resamples)


def drawn_interval(
    metric,
    counts,
    *,
    method,
    alpha,
    n_resamples,
    seed,
    labels,
    prior=None,
    comparison=None,
):
    """Interval of a metric column from posterior draws or bootstrap replicates.

    ``prior`` (G, 4) is the pseudo-count of the column's estimator: ``None`` for
    raw values (the posterior then uses the Jeffreys prior, the bootstrap the raw
    replicates), the smoothing's prior for smoothed values (posterior
    ``Dirichlet(c + prior)``; bootstrap replicates smoothed as the data are).
    Two-group metrics pair each draw with a draw of ``comparison``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_groups = counts.shape[0]
    post_prior = JEFFREYS_PRIOR if prior is None else prior
    params = np.broadcast_to(counts + post_prior, counts.shape)
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    scaled = comparison is not None and comparison.includes_group
    for sl in _chunks(n_groups, n_resamples):
        rngs = [child_rng(seed, label, metric.name) for label in labels[sl]]
        cells = _draws(method, counts[sl], params[sl], rngs, n_resamples, scaled=scaled)
        other = None
        if metric.n_groups == 2:  # the reference is never smoothed
            other = _comparison_draws(
                comparison, sl, metric.name, method, seed, n_resamples, cells
            )
        if method == "bootstrap" and prior is not None:
            cells += np.asarray(prior, dtype=np.float64)[sl, None, :]
        low[sl], high[sl] = draw_quantiles(_metric_values(metric, cells, other), alpha)
    return low, high


def _comparison_draws(comparison, sl, key, method, seed, n_resamples, group_cells):
    ref = comparison.counts[sl]
    rngs = [child_rng(seed, *k, key) for k in comparison.keys[sl]]
    drawn = _draws(
        method,
        ref,
        ref + JEFFREYS_PRIOR,
        rngs,
        n_resamples,
        scaled=comparison.includes_group,
    )
    return comparison.matrices(group_cells, drawn)


def matrix_draws(method, counts, params, rngs, n_resamples):
    """Draws of K x K matrices, shape ``(G, n_resamples, K, K)``.

    ``"posterior"``: independent gammas with parameters ``params`` (G, K, K), the
    unnormalised Dirichlet draws (every metric of a confusion matrix is
    homogeneous of degree 0); ``"bootstrap"``: ``n_resamples`` multinomial redraws of
    each group's ``K^2`` cells at its size (the nearest whole size for weighted
    counts), i.e. the group's people resampled with replacement.
    """
    counts = np.asarray(counts, dtype=np.float64)
    g, k = counts.shape[0], counts.shape[-1]
    cells = k * k
    block = np.empty((g, n_resamples, cells))
    flat = counts.reshape(g, cells)
    if method == "posterior":
        flat_params = np.broadcast_to(params, counts.shape).reshape(g, cells)
        for i, rng in enumerate(rngs):
            rng.standard_gamma(flat_params[i], size=(n_resamples, cells), out=block[i])
    else:
        n = flat.sum(axis=-1)
        sizes = np.rint(n).astype(np.int64)
        for i, rng in enumerate(rngs):
            block[i] = rng.multinomial(sizes[i], flat[i] / n[i], size=n_resamples)
    return block.reshape(g, n_resamples, k, k)


def matrix_interval(
    func, counts, *, method, alpha, n_resamples, seed, labels, key, prior=None
):
    """Interval of a function of K x K matrices from draws.

    ``func`` maps matrices ``(..., K, K)`` to values ``(...)`` (non-finite where
    undefined); ``counts`` (G, K, K). ``method`` is ``"posterior"`` (equal-tailed
    interval of the Dirichlet posterior ``Dirichlet(c + a)``, ``a`` the Jeffreys
    1/2 per cell for raw values, ``prior`` (G, K, K) for smoothed ones) or
    ``"bootstrap"`` (percentiles of stratified bootstrap replicates, each plus
    ``prior`` when given, i.e. smoothed as the data are). Each group's draws come
    from the stream keyed by its label and ``key``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    g, k = counts.shape[0], counts.shape[-1]
    post_prior = JEFFREYS_PRIOR if prior is None else prior
    params = np.broadcast_to(counts + post_prior, counts.shape)
    low = np.full(g, np.nan)
    high = np.full(g, np.nan)
    # the same memory per chunk as four-cell draws
    size = max(1, (_CHUNK_DRAWS * 4) // (n_resamples * k * k))
    for start in range(0, g, size):
        sl = slice(start, min(start + size, g))
        rngs = [child_rng(seed, label, key) for label in labels[sl]]
        cells = matrix_draws(method, counts[sl], params[sl], rngs, n_resamples)
        if method == "bootstrap" and prior is not None:
            cells += np.asarray(prior, dtype=np.float64)[sl, None]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            values = np.asarray(func(cells), dtype=np.float64)
        low[sl], high[sl] = draw_quantiles(values, alpha)
    return low, high
