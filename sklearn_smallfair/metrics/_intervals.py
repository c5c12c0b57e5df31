"""Confidence and credible intervals for per-group metrics and for disparities.

Everything is vectorized over groups: closed-form intervals (Clopper-Pearson,
Wilson, Jeffreys, Beta posteriors, Newcombe, Katz) are array expressions of the
per-group counts; intervals from draws (Dirichlet posteriors, the stratified
bootstrap) fill one block of shape ``(groups, n_draws, 4)`` per chunk of groups
and evaluate the registry's metric function on the whole block. Each group's
draws come from its own random stream, keyed by the group's label and the metric
(:func:`sklearn_smallfair._random.child_rng`), so an interval does not depend on
the order of the groups or on which other groups are present; the only per-group
Python step is seeding the stream and filling the group's rows of the block.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import beta, norm

from .._confusion import FN, FP, TN, TP, reference_counts, rows_or_counts
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
from .._random import child_rng, resolve_seed
from ._registry import Metric, _normalise, get_metrics

__all__ = ["disparity_intervals"]

#: Interval methods of :func:`group_metrics` (``ci_method``).
CI_METHODS = ("auto", "clopper-pearson", "wilson", "jeffreys", "posterior", "bootstrap")
#: Closed-form intervals of a proportion.
SCORE_METHODS = ("clopper-pearson", "wilson", "jeffreys")
#: Interval methods of :func:`disparity_intervals` (``method``).
DISPARITY_METHODS = ("auto", "newcombe-katz", "posterior", "bootstrap")
#: Default number of posterior draws or bootstrap replicates per group and metric.
DEFAULT_N_DRAWS = 2000
#: Most draws per group and metric: a group's block is then 32 MiB.
MAX_N_DRAWS = 10**6
#: Pseudo-count per cell of the weak (Jeffreys) Dirichlet prior used for raw values.
JEFFREYS_PRIOR = 0.5
#: Names that ask :func:`disparity_intervals` for the equalized-odds difference.
EQUALIZED_ODDS = "equalized_odds"
_EOD_ALIASES = ("equalized_odds", "eod", "equalized_odds_difference")
#: Largest number of draws (groups x n_draws) held at once: 2**21 draws of 4
#: float64 cells are 64 MiB.
_CHUNK_DRAWS = 1 << 21


# ---------------------------------------------------------------------------------
# Which metrics have a closed-form (binomial) interval
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Proportion:
    """A metric as a monotone increasing function of one proportion ``k / m``.

    ``k`` sums the ``numerator`` cells and ``m`` the ``denominator`` cells; given
    ``m``, ``k`` is binomial, so a binomial interval for ``k / m`` mapped through
    ``link`` is an interval for the metric.
    """

    numerator: tuple
    denominator: tuple
    link: object = None  # None: the identity

    def split(self, cells):
        """``(k, m)``: numerator and denominator sums of ``cells`` (..., 4)."""
        cells = np.asarray(cells, dtype=np.float64)
        return (
            cells[..., list(self.numerator)].sum(axis=-1),
            cells[..., list(self.denominator)].sum(axis=-1),
        )

    def apply(self, x):
        return x if self.link is None else self.link(x)


def _f1_link(x):
    # F1 = 2 TP / (2 TP + FP + FN) = 2 x / (1 + x) with x = TP / (TP + FN + FP).
    with np.errstate(invalid="ignore", divide="ignore"):
        return 2.0 * x / (1.0 + x)


_F1_FORM = _Proportion((TP,), (TP, FN, FP), _f1_link)
#: Metrics outside the binomial and joint-ratio families that are a monotone
#: function of one proportion (checked against the registry in the tests).
_LINKED = {"f1": _F1_FORM, "f1_original": _F1_FORM}


def proportion_form(metric):
    """The :class:`_Proportion` behind ``metric``, or ``None`` if it has none."""
    if metric.family in ("binomial", "joint_ratio"):
        return _Proportion(tuple(metric.numerator), tuple(metric.denominator))
    return _LINKED.get(metric.name)


def applicable_methods(metric):
    """The ``ci_method`` values that give ``metric`` an interval."""
    if proportion_form(metric) is not None:
        return CI_METHODS
    return ("auto", "posterior", "bootstrap")


def check_ci_method(metrics, ci_method):
    """Refuse a method that gives one of ``metrics`` no interval."""
    bad = [m for m in metrics if ci_method not in applicable_methods(m)]
    if bad:
        names = ", ".join(m.name for m in bad)
        methods = " or ".join(
            ", ".join(repr(x) for x in applicable_methods(bad[0])).rsplit(", ", 1)
        )
        raise ValueError(
            f"ci_method={ci_method!r} is an interval for a proportion; "
            f"{names} {'is' if len(bad) == 1 else 'are'} not a proportion, so "
            f"for {'it' if len(bad) == 1 else 'them'} use ci_method={methods}. "
            f"The closed-form methods "
            f"('clopper-pearson', 'wilson', 'jeffreys') apply to the binomial and "
            f"joint-ratio metrics and to f1 and f1_original."
        )


#: Metrics of one group that are no proportion but a function of the prevalence,
#: the TPR and the FPR: ``ci_method="auto"`` gives them the projection interval.
_PROJECTED = ("mcc", "pt", "mb")
#: Method of a smoothed column under ``ci_method="auto"``: the hull of the
#: posterior interval with the smoothing's prior and of the raw ``"auto"`` interval.
SMOOTHED_AUTO = "posterior-hull"


def _raw_auto_method(metric):
    """The method of ``ci_method="auto"`` for a raw value of ``metric``.

    - a proportion metric (binomial, joint-ratio, ``f1``, ``f1_original``):
      ``"clopper-pearson"``, whose coverage is at least the level for every true
      rate and every size (Wilson and Jeffreys fall to 79-89 % for some rates in
      [0.01, 0.99] with 1 to 40 trials; mid-p Clopper-Pearson to 91 %);
    - ``mcc``, ``pt``, ``mb``: ``"projection"`` (:func:`projection_interval`),
      because the Dirichlet posterior with the Jeffreys prior covers as little as
      74 % (MCC), 72 % (PT) and 67 % (MB) of the time on some laws with rates
      in [0.01, 0.99] at n = 10 and 20 (its MCC interval for a matrix of 10 with
      one error stops below a true MCC of 0.97), and no smaller or larger prior
      fixes it;
    - the two-group metrics (``ofi``, ``te``): ``"posterior"``.
    """
    if proportion_form(metric) is not None:
        return "clopper-pearson"
    if metric.n_groups == 1 and metric.name in _PROJECTED:
        return "projection"
    return "posterior"


def resolve_ci_method(metric, ci_method, *, smoothed):
    """The method actually used for one column (see the table in the user guide).

    ``"auto"`` is :func:`_raw_auto_method` for raw values and ``"posterior-hull"``
    for smoothed ones (:func:`column_interval`): the smoothed value borrows from
    the reference, but its interval must still cover the group's own value when
    the group differs from its reference, which the posterior with the smoothing's
    prior alone does not (it covered 60 % at n = 5 for a PPV that truly differs).
    The other methods are used as asked; smoothed columns get the posterior with
    the smoothing's prior unless ``"bootstrap"`` is asked.
    """
    if ci_method == "bootstrap":
        return "bootstrap"
    if smoothed:
        return SMOOTHED_AUTO if ci_method == "auto" else "posterior"
    if ci_method == "auto":
        return _raw_auto_method(metric)
    return ci_method


# ---------------------------------------------------------------------------------
# Closed-form intervals of proportions, vectorized
# ---------------------------------------------------------------------------------
def _z(alpha):
    return norm.ppf(1.0 - alpha / 2.0)


def _beta_quantile(q, a, b):
    """``beta.ppf(q, a, b)`` where ``a, b > 0``; NaN elsewhere (masked by callers)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ok = (a > 0) & (b > 0)
    out = np.full(np.broadcast(a, b).shape, np.nan)
    if ok.any():
        out[ok] = beta.ppf(
            q, np.broadcast_to(a, ok.shape)[ok], np.broadcast_to(b, ok.shape)[ok]
        )
    return out


def clopper_pearson_interval(k, m, alpha):
    """Exact (Clopper-Pearson) interval for ``k`` successes in ``m`` trials.

    ``beta.ppf(alpha/2, k, m - k + 1)`` and ``beta.ppf(1 - alpha/2, k + 1, m - k)``,
    with 0 and 1 at ``k = 0`` and ``k = m``; NaN where ``m = 0``.
    """
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    low = np.where(k > 0, _beta_quantile(alpha / 2.0, k, m - k + 1.0), 0.0)
    high = np.where(k < m, _beta_quantile(1.0 - alpha / 2.0, k + 1.0, m - k), 1.0)
    return _mask_empty(low, high, m)


def wilson_interval(k, m, alpha):
    """Wilson score interval (without continuity correction); NaN where ``m = 0``."""
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    z = _z(alpha)
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        denom = 1.0 + z2 / m
        center = (p + z2 / (2.0 * m)) / denom
        half = z * np.sqrt(np.maximum(p * (1.0 - p) / m + z2 / (4.0 * m * m), 0.0))
        half = half / denom
    # at k = 0 (k = m) the lower (upper) bound is exactly 0 (1): the formula's
    # difference of two equal terms leaves a rounding residue otherwise
    low = np.where(k > 0, np.clip(center - half, 0.0, 1.0), 0.0)
    high = np.where(k < m, np.clip(center + half, 0.0, 1.0), 1.0)
    return _mask_empty(low, high, m)


def jeffreys_interval(k, m, alpha):
    """Jeffreys interval: the equal-tailed ``Beta(k + 1/2, m - k + 1/2)`` interval.

    With Brown, Cai and DasGupta's (2001) boundary rule: the lower bound is 0 when
    ``k = 0`` and the upper bound 1 when ``k = m``. NaN where ``m = 0``.
    """
    k, m = np.broadcast_arrays(np.asarray(k, float), np.asarray(m, float))
    a, b = k + 0.5, m - k + 0.5
    low = np.where(k > 0, _beta_quantile(alpha / 2.0, a, b), 0.0)
    high = np.where(k < m, _beta_quantile(1.0 - alpha / 2.0, a, b), 1.0)
    return _mask_empty(low, high, m)


def beta_interval(a, b, alpha):
    """Equal-tailed interval of ``Beta(a, b)``; a zero parameter is a point mass.

    ``a = 0`` (no numerator mass) gives ``[0, 0]``, ``b = 0`` gives ``[1, 1]``,
    both zero NaN.
    """
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    low = _beta_quantile(alpha / 2.0, a, b)
    high = _beta_quantile(1.0 - alpha / 2.0, a, b)
    low = np.where(a == 0, 0.0, np.where(b == 0, 1.0, low))
    high = np.where(a == 0, 0.0, np.where(b == 0, 1.0, high))
    both = (a == 0) & (b == 0)
    return np.where(both, np.nan, low), np.where(both, np.nan, high)


def _mask_empty(low, high, m):
    empty = ~(m > 0)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


_SCORE_FUNCTIONS = {
    "clopper-pearson": clopper_pearson_interval,
    "wilson": wilson_interval,
    "jeffreys": jeffreys_interval,
}


def mover_mean_interval(k, m, alpha, method="wilson"):
    """Interval of the mean of independent proportions ``k / m`` over the last axis.

    Zou and Donner's MOVER (method of variance estimates recovery, the
    construction of Newcombe's interval for a difference): with each
    proportion's own interval ``(l_i, u_i)`` (``method``: Wilson, Clopper-Pearson
    or Jeffreys) and weights ``w = 1 / K'`` over the ``K'`` proportions with
    ``m > 0``, ``mean - sqrt(sum w^2 (p_i - l_i)^2)`` to ``mean + sqrt(sum w^2
    (u_i - p_i)^2)``. NaN where no proportion has ``m > 0``.
    """
    k = np.asarray(k, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    low, high = _SCORE_FUNCTIONS[method](k, m, alpha)
    present = m > 0
    count = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(present, k / np.where(present, m, 1.0), 0.0)
        w = present / count[..., None]
        mean = (w * p).sum(axis=-1)
        down = np.sqrt((np.where(present, w * (p - low), 0.0) ** 2).sum(axis=-1))
        up = np.sqrt((np.where(present, w * (high - p), 0.0) ** 2).sum(axis=-1))
    lo = np.clip(mean - down, 0.0, 1.0)
    hi = np.clip(mean + up, 0.0, 1.0)
    return np.where(count > 0, lo, np.nan), np.where(count > 0, hi, np.nan)


def newcombe_interval(k1, m1, k2, m2, alpha):
    """Newcombe's hybrid score interval for ``k1/m1 - k2/m2`` (method 10, 1998).

    From the Wilson intervals ``(l_i, u_i)`` of the two proportions:
    ``d - sqrt((p1 - l1)^2 + (u2 - p2)^2)`` to ``d + sqrt((u1 - p1)^2 + (p2 - l2)^2)``.
    """
    l1, u1 = wilson_interval(k1, m1, alpha)
    l2, u2 = wilson_interval(k2, m2, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1 = np.asarray(k1, float) / np.asarray(m1, float)
        p2 = np.asarray(k2, float) / np.asarray(m2, float)
    d = p1 - p2
    low = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return low, high


def katz_interval(k1, m1, k2, m2, alpha):
    """Katz's log interval for the ratio ``(k1/m1) / (k2/m2)``.

    ``exp(log(RR) -/+ z sqrt(1/k1 - 1/m1 + 1/k2 - 1/m2))``. When a cell of the
    2 x 2 table (``k1``, ``m1 - k1``, ``k2``, ``m2 - k2``) is 0, 1/2 is added to each
    cell (Haldane's correction) for the interval; it is NaN where ``m1`` or ``m2``
    is 0.
    """
    k1, m1, k2, m2 = (np.asarray(x, dtype=np.float64) for x in (k1, m1, k2, m2))
    zero = (k1 == 0) | (k1 == m1) | (k2 == 0) | (k2 == m2)
    c = np.where(zero, 0.5, 0.0)
    a1, n1, a2, n2 = k1 + c, m1 + 2 * c, k2 + c, m2 + 2 * c
    z = _z(alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_rr = np.log(a1 / n1) - np.log(a2 / n2)
        se = np.sqrt(np.maximum(1 / a1 - 1 / n1 + 1 / a2 - 1 / n2, 0.0))
        low, high = np.exp(log_rr - z * se), np.exp(log_rr + z * se)
    bad = ~((m1 > 0) & (m2 > 0))
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


# ---------------------------------------------------------------------------------
# Draws: Dirichlet posteriors and the stratified bootstrap
# ---------------------------------------------------------------------------------
def _chunks(n_groups, n_draws):
    size = max(1, _CHUNK_DRAWS // n_draws)
    for start in range(0, n_groups, size):
        yield slice(start, min(start + size, n_groups))


def posterior_block(params, rngs, n_draws, scale=None):
    """Dirichlet draws of the cell probabilities of each group.

    ``params`` (G, 4) are the Dirichlet parameters ``c + a``; each group's draws are
    independent gammas from the group's own generator. Every metric of the
    registry is homogeneous of degree 0 (it does not change when all cells are
    multiplied by a constant), so the gammas themselves, of shape
    ``(G, n_draws, 4)``, are returned unless ``scale`` (G,) is given: then they are
    normalised and multiplied by it (expected counts of a group of that size).
    """
    block = np.empty((len(rngs), n_draws, 4))
    for i, rng in enumerate(rngs):
        rng.standard_gamma(params[i], size=(n_draws, 4), out=block[i])
    if scale is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            total = block.sum(axis=-1, keepdims=True)
            block *= np.asarray(scale, dtype=np.float64)[:, None, None] / total
    return block


def bootstrap_block(counts, rngs, n_draws):
    """Stratified bootstrap: ``n_draws`` multinomial redraws of each group's matrix.

    A group of ``n`` people is resampled ``n`` times with replacement, i.e. its
    matrix is redrawn from ``Multinomial(n, counts / n)``. Weighted (non-integer)
    counts are redrawn at the nearest whole size.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=-1)
    sizes = np.rint(n).astype(np.int64)
    probs = counts / n[:, None]
    block = np.empty((len(rngs), n_draws, 4), dtype=np.float64)
    for i, rng in enumerate(rngs):
        block[i] = rng.multinomial(sizes[i], probs[i], size=n_draws)
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


def _draws(method, counts, params, rngs, n_draws, *, scaled=False):
    """Posterior draws (expected counts if ``scaled``) or bootstrap replicates."""
    if method == "posterior":
        scale = counts.sum(axis=-1) if scaled else None
        return posterior_block(params, rngs, n_draws, scale)
    return bootstrap_block(counts, rngs, n_draws)


def drawn_interval(
    metric,
    counts,
    *,
    method,
    alpha,
    n_draws,
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
    for sl in _chunks(n_groups, n_draws):
        rngs = [child_rng(seed, label, metric.name) for label in labels[sl]]
        cells = _draws(method, counts[sl], params[sl], rngs, n_draws, scaled=scaled)
        other = None
        if metric.n_groups == 2:  # the reference is never smoothed
            other = _comparison_draws(
                comparison, sl, metric.name, method, seed, n_draws, cells
            )
        if method == "bootstrap" and prior is not None:
            cells += np.asarray(prior, dtype=np.float64)[sl, None, :]
        low[sl], high[sl] = draw_quantiles(_metric_values(metric, cells, other), alpha)
    return low, high


def _comparison_draws(comparison, sl, key, method, seed, n_draws, group_cells):
    ref = comparison.counts[sl]
    rngs = [child_rng(seed, *k, key) for k in comparison.keys[sl]]
    drawn = _draws(
        method,
        ref,
        ref + JEFFREYS_PRIOR,
        rngs,
        n_draws,
        scaled=comparison.includes_group,
    )
    return comparison.matrices(group_cells, drawn)


def matrix_draws(method, counts, params, rngs, n_draws):
    """Draws of K x K matrices, shape ``(G, n_draws, K, K)``.

    ``"posterior"``: independent gammas with parameters ``params`` (G, K, K), the
    unnormalised Dirichlet draws (every metric of a confusion matrix is
    homogeneous of degree 0); ``"bootstrap"``: ``n_draws`` multinomial redraws of
    each group's ``K^2`` cells at its size (the nearest whole size for weighted
    counts), i.e. the group's people resampled with replacement.
    """
    counts = np.asarray(counts, dtype=np.float64)
    g, k = counts.shape[0], counts.shape[-1]
    cells = k * k
    block = np.empty((g, n_draws, cells))
    flat = counts.reshape(g, cells)
    if method == "posterior":
        flat_params = np.broadcast_to(params, counts.shape).reshape(g, cells)
        for i, rng in enumerate(rngs):
            rng.standard_gamma(flat_params[i], size=(n_draws, cells), out=block[i])
    else:
        n = flat.sum(axis=-1)
        sizes = np.rint(n).astype(np.int64)
        for i, rng in enumerate(rngs):
            block[i] = rng.multinomial(sizes[i], flat[i] / n[i], size=n_draws)
    return block.reshape(g, n_draws, k, k)


def matrix_interval(
    func, counts, *, method, alpha, n_draws, seed, labels, key, prior=None
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
    size = max(1, (_CHUNK_DRAWS * 4) // (n_draws * k * k))
    for start in range(0, g, size):
        sl = slice(start, min(start + size, g))
        rngs = [child_rng(seed, label, key) for label in labels[sl]]
        cells = matrix_draws(method, counts[sl], params[sl], rngs, n_draws)
        if method == "bootstrap" and prior is not None:
            cells += np.asarray(prior, dtype=np.float64)[sl, None]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            values = np.asarray(func(cells), dtype=np.float64)
        low[sl], high[sl] = draw_quantiles(values, alpha)
    return low, high


def column_interval(
    metric,
    counts,
    *,
    method,
    alpha,
    n_draws,
    seed,
    labels,
    prior=None,
    comparison=None,
):
    """``(low, high)`` for one metric column of ``G`` groups with a concrete method.

    ``method`` is one of ``"clopper-pearson"``, ``"wilson"``, ``"jeffreys"``,
    ``"posterior"``, ``"bootstrap"``, ``"projection"`` (:func:`projection_interval`)
    and ``"posterior-hull"`` (:func:`_hull_interval`, for smoothed values);
    ``prior`` as in :func:`drawn_interval`.
    """
    counts = np.asarray(counts, dtype=np.float64)
    form = proportion_form(metric)
    if method == SMOOTHED_AUTO:
        return _hull_interval(
            metric,
            counts,
            alpha=alpha,
            n_draws=n_draws,
            seed=seed,
            labels=labels,
            prior=prior,
            comparison=comparison,
        )
    if method == "projection":
        return projection_interval(metric, counts, alpha)
    if method in _SCORE_FUNCTIONS:
        k, m = form.split(counts)
        low, high = _SCORE_FUNCTIONS[method](k, m, alpha)
        return form.apply(low), form.apply(high)
    if method == "posterior" and form is not None and metric.n_groups == 1:
        # Aggregation property: the proportion's posterior is exactly a Beta.
        params = counts + (JEFFREYS_PRIOR if prior is None else prior)
        a, m = form.split(params)
        low, high = beta_interval(a, m - a, alpha)
        return form.apply(low), form.apply(high)
    return drawn_interval(
        metric,
        counts,
        method=method,
        alpha=alpha,
        n_draws=n_draws,
        seed=seed,
        labels=labels,
        prior=prior,
        comparison=comparison,
    )


def _hull_interval(
    metric, counts, *, alpha, n_draws, seed, labels, prior=None, comparison=None
):
    """Interval of a smoothed value: the hull of two intervals.

    The posterior interval with the smoothing's prior (``Dirichlet(c + a)``, ``a =
    lam * p_ref`` for Cross-Prior Smoothing) is right when the group follows its
    reference; when it does not, it is centred on a value shrunk toward the
    reference and misses the group's own value (for a PPV that truly differs from
    the reference's, 60 % coverage at n = 5 and 80 % at n = 20 with ``lam = 10``).
    The raw ``"auto"`` interval covers the group's value whatever the reference.
    Their hull (smallest interval holding both) covers whenever the raw one does,
    and holds the smoothed value, which the raw interval alone need not. Without a
    ``prior`` it is the raw interval; where the raw interval is NaN (the raw value
    is undefined, e.g. a TPR without positives) it is the posterior interval.
    """
    low, high = column_interval(
        metric,
        counts,
        method=_raw_auto_method(metric),
        alpha=alpha,
        n_draws=n_draws,
        seed=seed,
        labels=labels,
        comparison=comparison,
    )
    if prior is None:
        return low, high
    p_low, p_high = column_interval(
        metric,
        counts,
        method="posterior",
        alpha=alpha,
        n_draws=n_draws,
        seed=seed,
        labels=labels,
        prior=prior,
        comparison=comparison,
    )
    return np.fmin(low, p_low), np.fmax(high, p_high)


#: Points per axis of the grid on which :func:`projection_interval` evaluates the
#: metric over the box of (prevalence, TPR, FPR).
PROJECTION_GRID = 9


def projection_interval(metric, counts, alpha, grid=PROJECTION_GRID):
    """Projection interval of a function of the prevalence, the TPR and the FPR.

    The cell probabilities are ``(pi t, pi (1 - t), (1 - pi) f, (1 - pi) (1 - f))``
    with the prevalence ``pi``, the TPR ``t`` and the FPR ``f``. Each of the three
    gets its Clopper-Pearson interval at level ``1 - alpha`` (``n_pos`` out of
    ``n``, ``TP`` out of ``n_pos``, ``FP`` out of ``n_neg``; ``[0, 1]`` when there
    is no trial); the interval of the metric is its range over the box of the
    three intervals, taken on a ``grid`` x ``grid`` x ``grid`` lattice that includes
    the corners, widened if need be to hold the group's own value.

    Given ``n_pos``, the TPR's and the FPR's intervals are independent and each
    covers with probability at least ``1 - alpha`` for every true rate, so the box
    holds the true law with probability at least ``(1 - alpha)^3`` (0.857 at
    ``alpha = 0.05``), and the range holds the true value at least as often (up
    to the lattice's resolution). The range is much more often right than the
    box, since most laws outside the box have a value inside the range: the
    intervals are not adjusted for the three rates.

    Exact coverage (every matrix enumerated) at n = 5, 10 and 20 over the laws
    with prevalence, TPR and FPR in {0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65,
    0.8, 0.9, 0.95, 0.98, 0.99} where the metric is defined with probability at
    least 0.1, for ``alpha = 0.05``: MCC at least 99.7 % (mean width 1.74, 1.46,
    1.17 against 1.06, 0.87, 0.70 for the Jeffreys posterior, which fell to
    74 %), MB at least 98.1 % (the posterior fell to 67 %, and to 0 % on one law
    at n = 5), PT at least 97.7 % (the posterior fell to 72 %). NaN where the
    metric is undefined at every point of the box. Vectorized over groups
    (chunks of at most ``2**21`` lattice points).
    """
    counts = np.asarray(counts, dtype=np.float64)
    tp, fn, fp, tn = (counts[:, i] for i in range(4))
    n_pos, n_neg = tp + fn, fp + tn
    rates = []
    for k, m in ((n_pos, n_pos + n_neg), (tp, n_pos), (fp, n_neg)):
        lo, hi = clopper_pearson_interval(k, m, alpha)
        rates.append((np.where(m > 0, lo, 0.0), np.where(m > 0, hi, 1.0)))
    u = np.linspace(0.0, 1.0, grid)
    n_groups = counts.shape[0]
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    size = max(1, _CHUNK_DRAWS // grid**3)
    for start in range(0, n_groups, size):
        sl = slice(start, min(start + size, n_groups))
        pi, t, f = (lo[sl, None] + (hi - lo)[sl, None] * u for lo, hi in rates)
        pi, t, f = pi[:, :, None, None], t[:, None, :, None], f[:, None, None, :]
        cells = np.empty((sl.stop - sl.start, grid, grid, grid, 4))
        cells[..., TP] = pi * t
        cells[..., FN] = pi * (1.0 - t)
        cells[..., FP] = (1.0 - pi) * f
        cells[..., TN] = (1.0 - pi) * (1.0 - f)
        values = _metric_values(metric, cells).reshape(sl.stop - sl.start, -1)
        finite = np.isfinite(values)
        some = finite.any(axis=1)
        lo_v = np.where(finite, values, np.inf).min(axis=1)
        hi_v = np.where(finite, values, -np.inf).max(axis=1)
        low[sl] = np.where(some, lo_v, np.nan)
        high[sl] = np.where(some, hi_v, np.nan)
    # the group's own value is in the box but need not be on the lattice
    value = _metric_values(metric, counts)
    value = np.where(np.isfinite(value), value, np.nan)
    return np.fmin(low, value), np.fmax(high, value)


# ---------------------------------------------------------------------------------
# Disparities
# ---------------------------------------------------------------------------------
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


def _sidak(alpha, k=2):
    """Per-component level so that ``k`` independent intervals hold jointly."""
    return 1.0 - (1.0 - alpha) ** (1.0 / k)


def _fold_interval(low, high):
    """The range of ``|x|`` for ``x`` in ``[low, high]``."""
    straddles = (low <= 0) & (high >= 0)
    near = np.where(straddles, 0.0, np.minimum(np.abs(low), np.abs(high)))
    far = np.maximum(np.abs(low), np.abs(high))
    return near, far


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


def _drawn_disparity(metric, counts, comparison, method, labels, seed, n_draws):
    """Draws of the group's and the comparison's values: ``(value, ref_value)``
    arrays of shape (G, n_draws), chunk by chunk."""
    counts = np.asarray(counts, dtype=np.float64)
    for sl in _chunks(counts.shape[0], n_draws):
        rngs = [child_rng(seed, label, metric.name) for label in labels[sl]]
        cells = _draws(
            method,
            counts[sl],
            counts[sl] + JEFFREYS_PRIOR,
            rngs,
            n_draws,
            scaled=comparison.includes_group,
        )
        other = _comparison_draws(
            comparison, sl, metric.name, method, seed, n_draws, cells
        )
        yield sl, _metric_values(metric, cells), _metric_values(metric, other)


def _difference_ratio_draws(value, ref_value):
    with np.errstate(invalid="ignore", divide="ignore"):
        return value - ref_value, value / ref_value


def _disparity_rows(metric, counts, comparison, labels, method, alpha, seed, n_draws):
    """Per group: value, reference value, difference, ratio and their intervals."""
    form = proportion_form(metric)
    closed = form is not None and metric.family in ("binomial", "joint_ratio")
    value = _metric_values(metric, counts)
    ref_value = _metric_values(metric, comparison.observed(counts))
    n_groups = counts.shape[0]
    out = {
        "value": value,
        "reference_value": ref_value,
        "difference": value - ref_value,
    }
    with np.errstate(invalid="ignore", divide="ignore"):
        out["ratio"] = np.where(ref_value > 0, value / ref_value, np.nan)
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
            metric, counts, comparison, use, labels, seed, n_draws
        ):
            diff, ratio = _difference_ratio_draws(v, r)
            d_low[sl], d_high[sl] = draw_quantiles(diff, alpha)
            r_low[sl], r_high[sl] = draw_quantiles(ratio, alpha)
        d_method = r_method = use
    same = comparison.itself  # a group against itself: no difference, ratio 1
    d_low, d_high = np.where(same, 0.0, d_low), np.where(same, 0.0, d_high)
    r_low = np.where(same & (value > 0), 1.0, r_low)
    r_high = np.where(same & (value > 0), 1.0, r_high)
    out.update(
        difference_ci_low=d_low,
        difference_ci_high=d_high,
        ratio_ci_low=r_low,
        ratio_ci_high=r_high,
        difference_method=d_method,
        ratio_method=r_method,
    )
    return out


def _eod_rows(counts, comparison, labels, method, alpha, seed, n_draws):
    """Equalized-odds difference ``max(|TPR gap|, |FPR gap|)`` with its interval.

    The interval is the image of the joint (Sidak) rectangle of the two signed
    gaps: each gap's interval at level ``sqrt(1 - alpha)``, so that both hold with
    probability ``1 - alpha`` (TPR and FPR come from the positives and the
    negatives, independent given their counts); ``max(|x|, |y|)`` over the
    rectangle is the interval. Unlike the percentiles of the drawn
    ``max(|gap|)``, it reaches 0 when the gaps may be 0.
    """
    level = _sidak(alpha)
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
            n_draws,
        )
        near, far = _fold_interval(sub["difference_ci_low"], sub["difference_ci_high"])
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
        "difference_ci_low": np.where(undefined, np.nan, np.maximum(*lows)),
        "difference_ci_high": np.where(undefined, np.nan, np.maximum(*highs)),
        "ratio_ci_low": nan,
        "ratio_ci_high": nan,
        "difference_method": f"sidak-{d_method}",
        "ratio_method": "none",
    }


_DISPARITY_COLUMNS = (
    "n",
    "value",
    "reference_value",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "undefined",
    "difference_method",
    "ratio_method",
)


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "reference": REFERENCE,
        "ci": [Number(0, 1, closed="neither")],
        "method": [StrOptions(set(DISPARITY_METHODS))],
        "n_draws": [Whole(100, MAX_N_DRAWS)],
        "random_state": RANDOM_STATE,
        "sample_weight": ["array-like", None],
        "pos_label": POS_LABEL,
    }
)
def disparity_intervals(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    metrics=("tpr", "fpr"),
    reference="rest",
    ci=0.95,
    method="auto",
    n_draws=DEFAULT_N_DRAWS,
    random_state=None,
    sample_weight=None,
    pos_label=1,
):
    """Differences and ratios of each group's metrics to its reference, with intervals.

    For every group and metric: the group's value, the reference's value, their
    difference ``group - reference`` and ratio ``group / reference``, each with a
    ``ci`` interval. The reference of a group is all other groups together
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
    metrics : str or sequence of str, default=("tpr", "fpr")
        Single-group metrics of :func:`metric_names` (or aliases), and
        ``"equalized_odds"`` (aliases ``"eod"``, ``"equalized_odds_difference"``).
    reference : {"rest", "total"}, group label or array-like, default="rest"
        What each group is compared with; see
        :func:`~sklearn_smallfair.reference_counts`.
    ci : float, default=0.95
        Confidence level, in (0, 1).
    method : {"auto", "newcombe-katz", "posterior", "bootstrap"}, default="auto"
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
    n_draws : int in [100, 10**6], default=2000
        Draws (posterior) or replicates (bootstrap) per group and metric.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=None
        Seed of the draws. Each group's draws come from a stream keyed by its label
        and the metric, so a group's intervals do not depend on the other groups or
        their order.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; the intervals then treat the weighted sums as counts.
    pos_label : int, float, bool or str, default=1
        The positive class.

    Returns
    -------
    table : pandas.DataFrame
        Indexed by ``(group, metric)``; columns ``n`` (the group's size),
        ``value``, ``reference_value``, ``difference``, ``difference_ci_low``,
        ``difference_ci_high``, ``ratio``, ``ratio_ci_low``, ``ratio_ci_high``,
        ``undefined`` (the group's or the reference's value is undefined: all
        NaN), ``difference_method`` and ``ratio_method`` (the methods used). For
        ``equalized_odds`` only the difference columns are filled.

    Notes
    -----
    With ``reference="total"`` the group is part of its reference; the closed-form
    intervals are then those against the rest of the data, mapped exactly
    (``p_g - p_total = m_rest / (m_g + m_rest) (p_g - p_rest)``, and the ratio is
    an increasing function of ``p_g / p_rest``), and the draws combine a draw of
    the group with one of the rest.

    The equalized-odds interval is the range of ``max(|x|, |y|)`` over the
    rectangle of the two gaps' intervals, each at level ``sqrt(ci)`` (Sidak): when
    both gaps are inside their intervals, which happens with probability ``ci``,
    the true equalized-odds difference is inside. It is conservative, and unlike
    the percentiles of drawn ``max(|gap|)`` values it reaches 0 when no gap is
    detectably different from 0. See :ref:`intervals` for the measured coverage.

    See Also
    --------
    group_metrics : Per-group values with ``ci=`` intervals.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import disparity_intervals
    >>> counts = {"a": [40, 10, 5, 45], "b": [6, 4, 1, 9]}
    >>> table = disparity_intervals(counts=counts, metrics=["tpr", "equalized_odds"])
    >>> table[["difference", "difference_ci_low", "difference_ci_high"]].round(3)
                          difference  difference_ci_low  difference_ci_high
    group metric
    a     tpr                    0.2             -0.066               0.500
          equalized_odds         0.2              0.000               0.532
    b     tpr                   -0.2             -0.500               0.066
          equalized_odds         0.2              0.000               0.532
    >>> table.loc[("b", "tpr"), ["ratio", "ratio_ci_low", "ratio_ci_high"]].round(3)
    ratio            0.750
    ratio_ci_low     0.444
    ratio_ci_high    1.267
    Name: (b, tpr), dtype: float64
    """
    alpha = 1.0 - float(ci)
    resolved, eod = _resolve_disparity_metrics(metrics)
    if method == "newcombe-katz":
        bad = [m.name for m in resolved if m.family not in ("binomial", "joint_ratio")]
        if bad:
            raise ValueError(
                f"method='newcombe-katz' compares proportions; {', '.join(bad)} "
                f"{'is' if len(bad) == 1 else 'are'} not a binomial or joint-ratio "
                f"metric, so use method='auto', 'posterior' or 'bootstrap'."
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
            metric, counts, comparison, labels, method, alpha, seed, n_draws
        )
    if eod:
        per_metric[EQUALIZED_ODDS] = _eod_rows(
            counts, comparison, labels, method, alpha, seed, n_draws
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
