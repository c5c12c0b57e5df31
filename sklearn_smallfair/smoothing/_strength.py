"""The between-group strength of a prior toward predicted rates, by maximum
Dirichlet- (or beta-) multinomial marginal likelihood, with each group's
strength reduced by the estimation error of its prediction."""

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import gammaln


def strengths(lam, prevalence, relative_variance):
    """Per-group total pseudo-counts ``s_g(lam)``, shape ``lam.shape + (G,)``.

    ``relative_variance`` holds, for the prevalence, TPR and FPR logits, the
    variance of each group's fitted rate divided by ``r (1 - r)``. Under
    ``Dirichlet(s q)`` the prevalence has relative variance ``1 / (s + 1)``, the
    TPR ``1 / (s pi + 1)`` and the FPR ``1 / (s (1 - pi) + 1)``; the strength of
    each rate is the one whose relative variance is the between-group one
    (strength ``lam``) plus the estimation variance of the fitted rate, and
    ``s_g`` is the smallest of the three (the most cautious).
    """
    lam = np.asarray(lam, dtype=np.float64)[..., None]
    pi = prevalence
    v_prev, v_tpr, v_fpr = relative_variance

    def strength(total, v):
        return 1.0 / (1.0 / (total + 1.0) + v) - 1.0

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.minimum(
            strength(lam, v_prev),
            np.minimum(
                strength(lam * pi, v_tpr) / pi,
                strength(lam * (1.0 - pi), v_fpr) / (1.0 - pi),
            ),
        )
    return np.clip(np.nan_to_num(s, nan=0.0), 0.0, None)


def dirichlet_multinomial_loglik(counts, proportions, strength, *, full=False):
    """``sum_g log DirMult(c_g; s_g q_g)`` for each row of ``strength``.

    ``strength`` has shape ``(..., G)``; ``full`` adds the multinomial
    coefficients so that the value is the log-pmf itself. A zero strength is
    evaluated at ``10^-10`` (the limit is ``-inf`` for a group with people in
    two cells or more, so a tiny strength stands for it).
    """
    s = np.maximum(np.asarray(strength, dtype=np.float64), 1e-10)
    n = counts.sum(axis=-1)
    a = s[..., None] * proportions
    out = (gammaln(s) - gammaln(n + s)).sum(axis=-1) + (
        gammaln(counts + a) - gammaln(a)
    ).sum(axis=(-2, -1))
    if full:
        out = out + gammaln(n + 1.0).sum() - gammaln(counts + 1.0).sum()
    return out


#: Largest ``lam`` of the search: the groups then cannot be told from their
#: main-effects prediction (their strengths are those of the estimation error).
LAM_MAX = 1e6
#: ``lam="auto-lower"``: the lower end of the 95 % profile-likelihood interval of
#: ``lam``, where the log-likelihood is ``chi2(1).ppf(0.95) / 2`` below its maximum.
_LOWER_DROP = 1.920729410347062


def fit_strength(counts, proportions, relative_variance, drop=0.0):
    """Maximum marginal-likelihood ``lam`` of the Dirichlet prior of the whole
    matrix (see :func:`maximize_strength`)."""
    pi = proportions[:, 0] + proportions[:, 1]
    return maximize_strength(
        lambda lam: dirichlet_multinomial_loglik(
            counts, proportions, strengths(lam, pi, relative_variance)
        ),
        drop,
    )


def binomial_strengths(lam, relative_variance):
    """Per-group strengths of a Beta prior of between-group strength ``lam``
    whose mean has the relative estimation variance ``relative_variance``:
    ``Beta(s q, s (1 - q))`` has relative variance ``1 / (s + 1)``, set to
    ``1 / (lam + 1) + v``. Shape ``lam.shape + (G,)``."""
    lam = np.asarray(lam, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = 1.0 / (1.0 / (lam + 1.0) + relative_variance) - 1.0
    return np.clip(np.nan_to_num(s, nan=0.0), 0.0, None)


def maximize_strength(loglik, drop=0.0):
    """Maximum of a marginal log-likelihood ``loglik(lam)`` (vectorized over
    ``lam``) in ``[0, LAM_MAX]``: a log grid (4 points per decade from
    ``0.01``, and ``0``) refined by bounded minimization in ``log10 lam``;
    with ``drop > 0`` the smallest ``lam`` whose log-likelihood is within
    ``drop`` of the maximum."""
    grid = np.concatenate(([0.0], np.logspace(-2, np.log10(LAM_MAX), 33)))
    values = loglik(grid)
    best = int(np.argmax(values))
    if best == 0:
        return 0.0
    lo = np.log10(grid[max(best - 1, 1)])
    hi = np.log10(grid[min(best + 1, grid.size - 1)])
    res = minimize_scalar(
        lambda t: -float(loglik(10.0**t)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-3},
    )
    lam = float(10.0**res.x)
    lam = lam if loglik(lam) >= values[best] else float(grid[best])
    if drop > 0:
        # the smallest lam whose log-likelihood is within ``drop`` of the maximum
        top = max(float(loglik(lam)), float(values[best]))
        below = np.flatnonzero((values < top - drop) & (grid < lam))
        if below.size:
            i = below[-1]
            res = minimize_scalar(
                lambda t: abs(float(loglik(10.0**t)) - (top - drop)),
                bounds=(np.log10(max(grid[i], 1e-2)), np.log10(lam)),
                method="bounded",
                options={"xatol": 1e-3},
            )
            lam = float(10.0**res.x)
    return lam
