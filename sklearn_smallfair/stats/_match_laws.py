"""Null laws of the published (fixed-reference) MATCH test: one function per
method, all with one signature, ``law(metric, batch) -> Tails`` (see
:mod:`._match_batch`).

* :func:`~._match_exact.exact` -- the exact law, any size;
* :func:`~._match_saddlepoint.saddlepoint` -- Lugannani-Rice, any size;
* :func:`asymptotic`, :func:`beta` -- the published approximations;
* :func:`enumerate_law` -- every matrix of size ``n``, once per distinct (size,
  reference) and shared by the groups that have it;
* :func:`montecarlo` -- ``n_resamples`` matrices per group from the group's own
  random stream.
"""

import math

import numpy as np
from scipy import stats
from scipy.special import ndtr

from .._confusion import FN, FP
from .._enumeration import enumerate_confusion_matrices
from .._pmf import dirichlet_multinomial_logpmf, multinomial_logpmf
from .._random import child_seed
from ._match_batch import Tails, _tails, family, joint_cells, score
from ._match_exact import exact
from ._match_saddlepoint import saddlepoint

__all__ = ["LAWS", "asymptotic", "beta", "enumerate_law", "montecarlo"]

_MC_CHUNK = 250_000  # Monte Carlo draws per block
_TIE_RTOL = 1e-12  # score comparisons in enumerate / montecarlo
_FEW = 8  # groups sharing an enumerated law below which masked sums beat a sort


# =====================================================================================
# asymptotic and beta (the published approximations)
# =====================================================================================
def asymptotic(metric, batch):
    """Normal approximation with continuity correction (binomial metrics and mb);
    with reference uncertainty the Dirichlet-multinomial moments."""
    n = batch.n.astype(np.float64)
    obs = batch.counts
    if batch.dirichlet is None:
        p, inflation = batch.p, 1.0
    else:
        total = batch.dirichlet.sum(axis=1)
        p = batch.dirichlet / total[:, None]
        inflation = (total + n) / (total + 1.0)
    if family(metric) == "binomial":
        cells = list(metric.numerator)
        q = p[:, cells].sum(axis=1)
        x = obs[:, cells].sum(axis=1).astype(np.float64)
        mean, var = n * q, n * q * (1 - q)
    else:  # mb
        mu = p[:, FP] - p[:, FN]
        x = (obs[:, FP] - obs[:, FN]).astype(np.float64)
        mean, var = n * mu, n * (p[:, FP] + p[:, FN] - mu**2)
    sd = np.sqrt(var * inflation)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(sd > 0, ndtr((x + 0.5 - mean) / sd), x >= mean)
        upper = np.where(sd > 0, ndtr((mean - x + 0.5) / sd), x <= mean)
    G = n.shape[0]
    return _tails(lower, upper, np.ones(G), 0.0, batch, se=np.nan)


def beta(metric, batch):
    """The published approximation for joint ratios: ``S ~ Beta(k theta + 1,
    k (1 - theta) + 1)`` with the group's observed denominator ``k = c_i + c_j``
    and ``theta = p_i / (p_i + p_j)`` from the reference (no continuity
    correction)."""
    i, j = joint_cells(metric)
    obs, p = batch.counts, batch.p
    num = obs[:, i].astype(np.float64)
    den = (obs[:, i] + obs[:, j]).astype(np.float64)
    pij = p[:, i] + p[:, j]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = num / den
        theta = p[:, i] / pij
    a, b = den * theta + 1.0, den * (1.0 - theta) + 1.0
    ok = pij > 0
    lower = np.where(ok, stats.beta.cdf(s, a, b), np.nan)
    upper = np.where(ok, stats.beta.sf(s, a, b), np.nan)
    p_undef = np.where(ok, (1 - pij) ** batch.n, 1.0)
    if not batch.conditional:
        lower, upper = lower * (1 - p_undef), upper * (1 - p_undef)
    lower = np.where(np.isnan(batch.score), np.nan, lower)
    upper = np.where(np.isnan(batch.score), np.nan, upper)
    nan = np.full(lower.shape, np.nan)
    return Tails(lower, upper, p_undef, nan, nan.copy())


# =====================================================================================
# enumerate and montecarlo (any metric)
# =====================================================================================
def enumerate_law(metric, batch):
    """Sum of the pmf over all ``C(n + 3, 3)`` matrices of size ``n``: once per
    distinct (size, reference), shared by the groups that have it (sorted scores
    and cumulative masses from both ends, so tiny tails keep their precision)."""
    G = batch.counts.shape[0]
    n = batch.n
    lower_u, upper_u = np.zeros(G), np.zeros(G)
    p_def, p_undef = np.zeros(G), np.zeros(G)
    keys = np.concatenate([n[:, None].astype(np.float64), batch.reference], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    for law, g0 in enumerate(first):
        members = np.flatnonzero(inverse == law)
        cms = enumerate_confusion_matrices(int(n[g0]))
        if batch.dirichlet is None:
            pmf = np.exp(multinomial_logpmf(cms, batch.p[g0]))
        else:
            pmf = np.exp(dirichlet_multinomial_logpmf(cms, batch.dirichlet[g0]))
        values = score(metric, cms, batch.smoothing, batch.reference[g0])
        defined = ~np.isnan(values)
        p_def[members] = pmf[defined].sum()
        p_undef[members] = pmf[~defined].sum()
        s = batch.score[members]
        tol = _TIE_RTOL * np.maximum(1.0, np.abs(s))
        if members.size <= _FEW:  # masked sums: no sort
            mass = np.where(defined, pmf, 0.0)
            for k, g in enumerate(members):
                lower_u[g] = mass[values <= s[k] + tol[k]].sum()
                upper_u[g] = mass[values >= s[k] - tol[k]].sum()
            continue
        order = np.argsort(values[defined], kind="stable")
        sorted_values = values[defined][order]
        mass = pmf[defined][order]
        from_below = np.concatenate([[0.0], np.cumsum(mass)])
        from_above = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
        with np.errstate(invalid="ignore"):
            below = np.searchsorted(sorted_values, s + tol, side="right")
            above = np.searchsorted(sorted_values, s - tol, side="left")
        lower_u[members] = from_below[below]
        upper_u[members] = from_above[above]
    return _tails(lower_u, upper_u, p_def, p_undef, batch)


def montecarlo(metric, batch):
    """``n_resamples`` matrices per group from its own random stream (keyed by the
    metric and the group's label); each tail is ``(count + 1) / (base + 1)`` with
    base the defined draws (all draws with ``conditional=False``), so it is never
    exactly 0, and its binomial standard error."""
    G = batch.counts.shape[0]
    n_resamples = batch.n_resamples
    out = {k: np.full(G, np.nan) for k in ("lower", "upper", "se_l", "se_u", "und")}
    for g in range(G):
        n = int(batch.counts[g].sum())
        rng = np.random.default_rng(
            child_seed(batch.seed, metric.name, batch.labels[g])
        )
        s_obs = batch.score[g]
        tol = _TIE_RTOL * max(1.0, abs(s_obs)) if not np.isnan(s_obs) else 0.0
        lower = upper = defined = 0
        for start in range(0, n_resamples, _MC_CHUNK):
            size = min(_MC_CHUNK, n_resamples - start)
            if batch.dirichlet is None:
                cms = rng.multinomial(n, batch.p[g], size=size)
            else:
                cms = rng.multinomial(n, rng.dirichlet(batch.dirichlet[g], size=size))
            values = score(metric, cms, batch.smoothing, batch.reference[g])
            ok = ~np.isnan(values)
            defined += int(ok.sum())
            if not np.isnan(s_obs):
                lower += int((ok & (values <= s_obs + tol)).sum())
                upper += int((ok & (values >= s_obs - tol)).sum())
        out["und"][g] = 1.0 - defined / n_resamples
        base = defined if batch.conditional else n_resamples
        if np.isnan(s_obs) or base == 0:
            continue
        lo, up = (lower + 1) / (base + 1), (upper + 1) / (base + 1)
        out["lower"][g], out["upper"][g] = min(lo, 1.0), min(up, 1.0)
        out["se_l"][g] = math.sqrt(lo * (1 - lo) / base)
        out["se_u"][g] = math.sqrt(up * (1 - up) / base)
    return Tails(out["lower"], out["upper"], out["und"], out["se_l"], out["se_u"])


#: The law of each method, all called as ``law(metric, batch) -> Tails``.
LAWS = {
    "exact": exact,
    "saddlepoint": saddlepoint,
    "asymptotic": asymptotic,
    "beta": beta,
    "enumerate": enumerate_law,
    "montecarlo": montecarlo,
}
