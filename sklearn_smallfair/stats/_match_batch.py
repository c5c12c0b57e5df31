"""The groups a MATCH law is computed on, and what a law returns.

A law of the published (fixed-reference) MATCH test takes ``(metric, batch)``: a
single-group metric of the registry and a :class:`Batch`, the groups tested with
that metric and that method, each with its own size and reference. It returns
:class:`Tails`: per group ``lower = P(S <= s)`` and ``upper = P(S >= s)``
(conditional on the metric being defined unless ``batch.conditional`` is False; NaN
where the group's own score is undefined or the null law never defines the
metric), ``p_undefined`` and the Monte Carlo standard errors of the two tails (0
for the exact laws, NaN for the approximations).
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["Batch", "Tails", "family", "joint_cells", "score", "subset", "supports"]

#: The metric families each closed-form method computes (others: any metric).
_FAMILIES = {
    "exact": ("binomial", "joint_ratio", "mb"),
    "saddlepoint": ("binomial", "joint_ratio", "mb"),
    "asymptotic": ("binomial", "mb"),
    "beta": ("joint_ratio",),
}


def family(metric):
    """The closed-form family of a metric: ``"binomial"``, ``"joint_ratio"``,
    ``"mb"`` or None (no closed law: enumeration or Monte Carlo)."""
    if metric.name == "mb":
        return "mb"
    if metric.family in ("binomial", "joint_ratio"):
        return metric.family
    return None


def supports(method, metric):
    """Whether ``method`` computes the law of ``metric``."""
    fams = _FAMILIES.get(method)
    return True if fams is None else family(metric) in fams


def joint_cells(metric):
    """``(i, j)`` of a joint-ratio metric ``c_i / (c_i + c_j)``."""
    (i,) = metric.numerator
    (j,) = [c for c in metric.denominator if c != i]
    return i, j


def score(metric, cms, smoothing=None, ref=None):
    """The metric of ``cms`` (smoothed toward ``ref`` first), NaN where undefined."""
    if smoothing is not None:
        # the affine form of the (fitted) smoother: the same values as transform,
        # without its warnings on every enumerated or drawn matrix
        scale, offset = smoothing.coefficients(np.sum(cms, axis=-1), ref)
        cms = scale * cms + offset
    values = np.asarray(metric.func(cms), dtype=np.float64)
    return np.where(np.isfinite(values), values, np.nan)


@dataclass(frozen=True)
class Batch:
    """Groups tested together with one metric and one method.

    Attributes
    ----------
    counts : ndarray of int64, shape (G, 4)
        The groups' matrices.
    reference : ndarray of float64, shape (G, 4)
        Each group's reference counts.
    score : ndarray of shape (G,)
        Observed (smoothed) scores, NaN where undefined.
    smoothing : BaseSmoothing or None
    dirichlet : ndarray of shape (G, 4) or None
        Dirichlet parameters ``reference + prior`` with ``reference_uncertainty``.
    conditional : bool
    n_resamples : int
        Monte Carlo draws per group.
    labels : sequence of length G
        Group labels (keys of the Monte Carlo streams).
    seed : numpy.random.SeedSequence or None
        Base seed of the Monte Carlo streams.
    """

    counts: np.ndarray
    reference: np.ndarray
    score: np.ndarray
    smoothing: object = None
    dirichlet: np.ndarray | None = None
    conditional: bool = True
    n_resamples: int = 100_000
    labels: tuple = ()
    seed: object = None

    @property
    def n(self):
        """Group sizes, shape (G,)."""
        return self.counts.sum(axis=1)

    @property
    def p(self):
        """Reference proportions, shape (G, 4)."""
        return self.reference / self.reference.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Tails:
    """What a law returns: arrays of shape (G,)."""

    lower: np.ndarray
    upper: np.ndarray
    p_undefined: np.ndarray
    se_lower: np.ndarray
    se_upper: np.ndarray


def _tails(lower_u, upper_u, p_def, p_undef, batch, se=0.0):
    """Percentiles from unnormalised tail masses; NaN for undefined observed scores
    and for laws that never define the metric."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if batch.conditional:
            lower = np.minimum(1.0, lower_u / p_def)
            upper = np.minimum(1.0, upper_u / p_def)
        else:
            lower, upper = np.asarray(lower_u, float), np.asarray(upper_u, float)
    bad = (p_def <= 0) | np.isnan(batch.score)
    lower = np.where(bad, np.nan, np.clip(lower, 0.0, 1.0))
    upper = np.where(bad, np.nan, np.clip(upper, 0.0, 1.0))
    se = np.where(bad, np.nan, se)
    p_undef = np.clip(np.broadcast_to(p_undef, lower.shape), 0.0, 1.0)
    return Tails(lower, upper, p_undef.astype(np.float64), se, se)


def subset(batch, index):
    """The batch restricted to the groups at ``index``."""
    return Batch(
        counts=batch.counts[index],
        reference=batch.reference[index],
        score=batch.score[index],
        smoothing=batch.smoothing,
        dirichlet=None if batch.dirichlet is None else batch.dirichlet[index],
        conditional=batch.conditional,
        n_resamples=batch.n_resamples,
        labels=tuple(batch.labels[t] for t in index) if len(batch.labels) else (),
        seed=batch.seed,
    )
