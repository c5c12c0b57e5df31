"""Planning a MATCH audit: exact power, sample size and minimum detectable effect.

The power of the exact MATCH test (:func:`match_test` with ``method="exact"``) of a
group of size ``n`` is computed in two steps (DESIGN 5.9): the rejection region of
the exact null law (the reference proportions), then its probability under an
alternative law. The test's statistic has a monotone null law, so its rejection
region is one tail (``"less"``, ``"greater"``) or two tails (``"two-sided"``, each
at ``alpha / 2``: the two-sided p-value is ``min(1, 2 min(lower, upper))``), each cut
at a critical value found by integer bisection on the exact tail.

The tails are the test's laws (DESIGN 5.3): binomial metrics by the binomial CDF
kernels of :mod:`._match_laws`; joint ratios and marginal benefit by the sum over
the denominator ``K = c_i + c_j`` (over ``t = FP + FN`` for marginal benefit) of
``Bin(K; n, q) P(X_K <= m_K)``, on the window of :func:`._match_laws.window`,
conditional on the metric being defined. The laws of :mod:`._match_laws` take the
observed matrices of the groups, and a joint ratio's critical value need not be
the score of a matrix of size ``n`` that the search visits, so the sums over
``K`` are made here by :func:`_linear_tail`, a thin vectorized helper on the same
kernels (:func:`._match_laws._cdf`, :func:`._match_laws._sf`,
:func:`._match_laws.window`) with thresholds ``floor((a + c K) / d)`` in exact
integer arithmetic (:func:`._match_laws._floor_div`).

The alternative law changes the reference proportions ``p`` by the metric's family:

* joint ratio ``c_i / (c_i + c_j)``: the mass ``p_i + p_j`` is kept and shared as
  ``(target, 1 - target)`` between the two cells; the other two cells keep their
  probabilities (for ``tpr``: TP and FN change, the prevalence and FP, TN stay);
* binomial ``(c_i + c_j) / n``: the two cells are scaled by ``target / q`` and the
  two complementary cells by ``(1 - target) / (1 - q)`` (``q = p_i + p_j``), keeping
  the proportions within each pair;
* marginal benefit ``(FP - FN) / n``: ``p_FP + p_FN`` is kept and ``p_FP - p_FN``
  becomes the target (TP and TN stay); targets lie in ``[-(p_FP + p_FN), p_FP +
  p_FN]``.

Other metrics (``f1``, ``mcc``, ...) have no closed-form law and are refused.
"""

import math
from numbers import Integral

import numpy as np
from scipy.special import ndtri

from .._confusion import FN, FP
from .._params import Number, StrOptions, Whole, validate_params
from ..metrics import get_metric
from ._large_n import large, large_power, large_range
from ._match_laws import (
    _binomial_run,
    _cdf,
    _floor_div,
    _path_tail,
    _sf,
    family,
    joint_cells,
    window,
)
from ._two_sample import proportion_counts, size_detectable, size_power

__all__ = ["match_min_detectable_effect", "match_power", "match_sample_size"]

_ALTERNATIVES = ("two-sided", "less", "greater")
_SUPPORTED = "binomial metrics (acc, prev, ppr, inacc, nprev, pnr), joint ratios "
_SUPPORTED += "(tpr, fnr, fpr, tnr, ppv, fdr, npv, for) and mb"
#: Consecutive sizes after the first size at which power reaches the target that
#: match_sample_size checks (its stability window).
SAMPLE_SIZE_WINDOW = 20
_GRID_POINTS = 64  # geometric grid of sizes searched by match_sample_size
_GRID_CHUNK = 4  # grid sizes evaluated at once
_MDE_STEPS = 40  # bisection steps on the effect
_SPLIT = 8  # sizes evaluated at once when narrowing the crossing

_NULLS = ("two-sample", "fixed-reference")
_COMMON = {
    "metric": [str],
    "reference": ["array-like"],
    "effect": [Number(), None],
    "target": [Number(), None],
    "alpha": [Number(0, 1, closed="neither")],
    "alternative": [StrOptions(set(_ALTERNATIVES))],
    "null": [StrOptions(set(_NULLS))],
    "share": [Number(0, 1, closed="both"), "array-like", None],
}


# =====================================================================================
# inputs
# =====================================================================================
def _metric(metric):
    m = get_metric(metric)
    if family(m) is None:
        raise ValueError(
            f"metric={metric!r} has no exact MATCH law; planning supports "
            f"{_SUPPORTED}. For other metrics simulate match_test(method="
            f"'montecarlo') on matrices drawn from the alternative law."
        )
    return m


def _proportions(reference):
    ref = np.asarray(reference)
    if ref.dtype.kind not in "biuf":
        raise TypeError(f"reference must hold numeric counts, got dtype {ref.dtype}.")
    if ref.shape != (4,):
        raise ValueError(
            f"reference must be 4 counts (TP, FN, FP, TN); got shape {ref.shape}."
        )
    ref = ref.astype(np.float64)
    if not np.isfinite(ref).all() or (ref < 0).any() or ref.sum() <= 0:
        raise ValueError(
            "reference must be finite non-negative counts with a positive total; "
            f"got {reference!r}."
        )
    return ref / ref.sum()


def _sizes(n):
    arr = np.asarray(n)
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f"
        and np.isfinite(arr).all()
        and (arr == np.round(arr)).all()
    ):
        raise TypeError(f"n must be whole sizes; got {n!r}.")
    if arr.ndim > 1 or arr.size == 0:
        raise ValueError(f"n must be a size or a 1-D array of sizes; got {n!r}.")
    if (arr < 1).any():
        raise ValueError(f"n must be >= 1; got {n!r}.")
    return np.atleast_1d(arr).astype(np.int64)


def _null_value(metric, p):
    """The metric's value under the law ``p``."""
    fam = family(metric)
    if fam == "mb":
        return p[FP] - p[FN]
    if fam == "binomial":
        return p[list(metric.numerator)].sum()
    i, j = joint_cells(metric)
    return p[i] / (p[i] + p[j])


def _value_range(metric, p):
    if family(metric) == "mb":
        return -(p[FP] + p[FN]), p[FP] + p[FN]
    return 0.0, 1.0


def _check_null(metric, p):
    if family(metric) == "joint_ratio":
        i, j = joint_cells(metric)
        if p[i] + p[j] <= 0:
            raise ValueError(
                f"reference has no mass in the cells of {metric.name}: the null law "
                "never defines the metric."
            )


def _alternative_law(metric, p, value):
    """The reference proportions moved so that the metric is ``value``."""
    fam = family(metric)
    p1 = p.copy()
    if fam == "mb":
        total = p[FP] + p[FN]
        p1[FP], p1[FN] = (total + value) / 2, (total - value) / 2
    elif fam == "joint_ratio":
        i, j = joint_cells(metric)
        q = p[i] + p[j]
        p1[i], p1[j] = q * value, q * (1 - value)
    else:
        inside = np.zeros(4, bool)
        inside[list(metric.numerator)] = True
        q = p[inside].sum()
        p1[inside] = p[inside] * value / q if q > 0 else value / 2
        p1[~inside] = p[~inside] * (1 - value) / (1 - q) if q < 1 else (1 - value) / 2
    return np.clip(p1, 0.0, 1.0)


def _target_value(metric, p, effect, target, alternative):
    """The metric's value under the alternative, from ``effect`` or ``target``."""
    if (effect is None) == (target is None):
        raise ValueError(
            "give exactly one of effect (a difference on the metric's scale) and "
            f"target (a value of the metric); got effect={effect!r}, target={target!r}."
        )
    s0 = _null_value(metric, p)
    value = s0 + effect if target is None else float(target)
    lo, hi = _value_range(metric, p)
    name, given = ("effect", effect) if target is None else ("target", target)
    if not lo - 1e-12 <= value <= hi + 1e-12:
        raise ValueError(
            f"{name}={given!r} puts {metric.name} at {value:.6g}, outside its range "
            f"[{lo:.6g}, {hi:.6g}] under this reference (reference value {s0:.6g})."
        )
    diff = value - s0
    if (alternative == "greater" and diff < 0) or (alternative == "less" and diff > 0):
        raise ValueError(
            f"{name}={given!r} moves {metric.name} from {s0:.6g} to {value:.6g}, "
            f"against alternative={alternative!r}: use a "
            f"{'non-negative' if alternative == 'greater' else 'non-positive'} effect "
            "or the other alternative."
        )
    return float(np.clip(value, lo, hi))


# =====================================================================================
# exact tails
# =====================================================================================
class _LinearTail:
    """Tails of ``X_K`` summed over ``K ~ Bin(n, q)``, vectorized over groups.

    ``K = c_i + c_j`` (the denominator of a joint ratio, ``FP + FN`` for marginal
    benefit) and ``X_K = c_i | K ~ Bin(K, theta)``, ``theta = p_i / q``. For integer
    ``a`` (per group), ``c`` and ``d``, :meth:`lower` is ``sum_K Bin(K; n, q)
    P(X_K <= floor((a + c K) / d))`` and :meth:`upper` the same with ``P(X_K >=
    .)``, both divided by ``P(K >= 1)`` when ``joint`` (conditional on the metric
    being defined). The sums run over the window of :func:`window` (the terms left
    out weigh at most ``WINDOW_MASS``).
    """

    def __init__(self, n, p, i, j, joint):
        n = np.asarray(n, np.int64)
        q = p[..., i] + p[..., j]
        q = np.broadcast_to(q, n.shape).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            theta = np.where(q > 0, np.broadcast_to(p[..., i], n.shape) / q, 0.0)
        lo, hi = window(n, q)
        if joint:
            lo = np.maximum(lo, 1)
        width = int(max(1, (hi - lo + 1).max()))
        K = lo[:, None] + np.arange(width)[None, :]
        self.valid = K <= hi[:, None]
        self.K = np.where(self.valid, K, lo[:, None]).astype(np.int64)
        self.w = _binomial_run(self.K, self.valid, n, q)
        if joint:
            with np.errstate(divide="ignore"):
                self.w = self.w / -np.expm1(n * np.log1p(-q))[:, None]
        self.theta = theta
        self.zeros = np.zeros_like(self.K)

    def _m(self, a, c, d, rows):
        K = self.K[rows]
        G = K.shape[0]
        a, c, d = (
            np.broadcast_to(np.asarray(v, np.int64), (G,))[:, None] for v in (a, c, d)
        )
        # Python integers: the bound itself may exceed 2^63 (10^12 * 2^50)
        big = int(np.abs(c).max()) * int(K.max()) + int(np.abs(a).max())
        if big < 2**62:  # no overflow: plain integer division
            return np.clip((a + c * K) // d, -1, K + 1)
        return _floor_div(a, c, K, d, self.zeros[rows], K)

    def _sum(self, path, rows, lower):
        K, valid, theta = self.K[rows], self.valid[rows], self.theta[rows]
        tail = _path_tail(path, K, valid, theta, lower=lower)
        return (self.w[rows] * tail).sum(axis=1)

    def lower(self, a, c, d, rows=slice(None)):
        """On the groups ``rows`` (all by default; each group's sum is the same
        whichever groups are computed with it)."""
        return self._sum(self._m(a, c, d, rows), rows, lower=True)

    def upper(self, a, c, d, rows=slice(None)):
        # P(X >= m) is _path_tail's P(X >= path + 1) on the path m - 1
        return self._sum(self._m(a, c, d, rows) - 1, rows, lower=False)


class _Law:
    """Lower and upper tails of the exact MATCH statistic at integer points ``x``.

    Binomial metrics: ``x = k`` the count, in ``[0, n]``. Marginal benefit: ``x =
    FP - FN`` in ``[-n, n]``. Joint ratios: the score ``x / 2^D`` (``D`` bits fine
    enough that two such points have at most one score of size ``n`` between
    them), ``x`` in ``[0, 2^D]``.
    """

    def __init__(self, metric, n, p):
        self.fam = family(metric)
        self.n = n
        if self.fam == "binomial":
            self.q = p[..., list(metric.numerator)].sum(axis=-1)
            self.lo, self.hi = np.zeros_like(n), n.copy()
            return
        if self.fam == "mb":
            self.tail = _LinearTail(n, p, FP, FN, joint=False)
            self.pq = np.broadcast_to(p[..., FP] + p[..., FN], n.shape)
            self.lo, self.hi = -n, n.copy()
            return
        i, j = joint_cells(metric)
        self.tail = _LinearTail(n, p, i, j, joint=True)
        self.pq = np.broadcast_to(p[..., i] + p[..., j], n.shape)
        bits = min(62, math.ceil(2 * math.log2(max(2, int(n.max())))) + 1)
        # only the window's denominators matter: when the bits of n make K 2^D
        # too large for the exact runs (_Runs.usable), the bits of the largest K
        # of the window separate its scores as well
        kmax = int(np.where(self.tail.valid, self.tail.K, 0).max())
        if kmax << bits >= 2**61:
            bits = min(bits, math.ceil(2 * math.log2(max(2, kmax))) + 1)
        self.den = np.full(n.shape, 1 << bits, np.int64)
        self.lo, self.hi = np.zeros_like(n), self.den.copy()

    def approximation(self):
        """Normal approximation of the statistic on the scale of ``x``: ``(mean,
        sd)`` per group (a starting point of the search of critical values)."""
        n = self.n.astype(np.float64)
        if self.fam == "binomial":
            q = np.broadcast_to(self.q, n.shape)
            return n * q, np.sqrt(n * q * (1.0 - q))
        t = self.tail
        if self.fam == "mb":  # x = FP - FN = 2 FP - t, t = FP + FN
            q = self.pq
            d = 2.0 * t.theta - 1.0
            return n * q * d, np.sqrt(n * (q - (q * d) ** 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt(t.theta * (1.0 - t.theta) / np.maximum(n * self.pq, 1.0))
        return t.theta * self.den, sd * self.den

    def lower(self, x, rows=slice(None)):
        """``P(S <= s(x))`` on the groups ``rows`` (``x`` of their shape)."""
        if self.fam == "binomial":
            q = np.broadcast_to(self.q, self.n.shape)[rows]
            return _cdf(x, self.n[rows], q)
        if self.fam == "mb":  # FP <= floor((x + t) / 2)
            return self.tail.lower(x, 1, 2, rows)
        return self.tail.lower(0, x, self.den[rows], rows)

    def upper(self, x, rows=slice(None)):
        """``P(S >= s(x))`` on the groups ``rows``."""
        if self.fam == "binomial":
            q = np.broadcast_to(self.q, self.n.shape)[rows]
            return _sf(x, self.n[rows], q)
        if self.fam == "mb":  # FP >= ceil((x + t) / 2)
            return self.tail.upper(x + 1, 1, 2, rows)
        den = self.den[rows]
        return self.tail.upper(den - 1, x, den, rows)


def _largest(f, lo, hi, level, guess, scale, region=None):
    """Per group the largest integer ``x`` in ``[lo, hi]`` with ``f(x) <= level``
    (``f`` nondecreasing), or ``lo - 1`` when there is none; or, with ``region``,
    the last point of the run of points with the same rejection region as it.

    ``f`` is a fine step function close to a normal CDF of mean ``guess`` and
    standard deviation ``scale`` (the normal approximation of the law), so the
    search works on the probit scale, where ``f`` is close to a line: the first
    point is the approximation's answer, the next ones where the chord between
    the ends of the bracket ``(L, H)`` (``f(L) <= level < f(H)``) crosses the
    level on that scale (regula falsi, Illinois variant: the value at an end
    that survives twice is pulled halfway to the level), or a step of the
    approximation's slope from the only finite end. When the bracket has not
    halved in two steps the next step bisects it, so the search takes at most
    about twice the steps of a bisection, and usually a handful. ``region(x)``
    gives, per group, the first and last points of the run of points around
    ``x`` on which ``f`` is constant (a joint ratio's thresholds
    ``floor(x K / 2^D)`` all equal); an evaluation then moves an end of the
    bracket to the far end of its run.
    """
    L, H = lo - 1, hi + 1
    target = float(ndtri(level))
    zL, zH = np.full(L.shape, -np.inf), np.full(L.shape, np.inf)
    kept = np.zeros(L.shape, np.int8)  # -1: L kept last step, +1: H kept
    widths = [H - L, H - L]
    scale = np.maximum(np.asarray(scale, np.float64), 1.0)
    x = np.asarray(guess, np.float64)
    for step in range(100_000):
        active = H - L > 1
        if not active.any():
            return L
        width = H - L
        if step:
            with np.errstate(invalid="ignore", divide="ignore"):
                chord = L + (target - zL) / (zH - zL) * width
            fromL = L + (target - zL) * scale * 1.5
            fromH = H - (zH - target) * scale * 1.5
            x = np.where(
                np.isfinite(zL) & np.isfinite(zH),
                chord,
                np.where(np.isfinite(zL), fromL, fromH),
            )
        x = np.clip(np.where(np.isfinite(x), x, (L + H) / 2.0), L + 1.0, H - 1.0)
        bisect = (step >= 3) & (2 * width > widths[-2])
        mid = np.where(bisect, L + width // 2, np.floor(x).astype(np.int64))
        mid = np.where(active, np.clip(mid, L + 1, H - 1), lo)
        # only the groups still searched are evaluated (the others' values are
        # not used)
        rows = np.flatnonzero(active) if not active.all() else slice(None)
        value = np.zeros(mid.shape)
        value[rows] = f(mid[rows], rows)
        if region is None:
            first = last = mid
        else:
            first, last = mid.copy(), mid.copy()
            first[rows], last[rows] = region(mid[rows], rows)
        z = ndtri(np.clip(value, 1e-300, 1.0 - 1e-16))
        ok = value <= level
        upL, upH = active & ok, active & ~ok
        # Illinois: an end that survives twice is pulled halfway to the level
        zL = np.where(upL, z, np.where(upH & (kept == -1), (zL + target) / 2, zL))
        zH = np.where(upH, z, np.where(upL & (kept == 1), (zH + target) / 2, zH))
        kept = np.where(upH, -1, np.where(upL, 1, kept)).astype(np.int8)
        widths.append(width)
        L, H = np.where(upL, last, L), np.where(upH, first, H)
    raise RuntimeError("the search of a critical value did not end")  # pragma: no cover


class _Runs:
    """Runs of score points with the same thresholds, for a joint ratio's tail.

    Lower tail: thresholds ``floor(x K / den)`` over the window's ``K``, constant
    for ``x`` in ``[max_K ceil(m_K den / K), min_K ceil((m_K + 1) den / K) - 1]``.
    Upper tail (searched at ``y = -x``): thresholds ``ceil(x K / den)``, constant
    for ``x`` in ``[max_K floor((u_K - 1) den / K) + 1, min_K floor(u_K den / K)]``.
    """

    def __init__(self, law, side):
        self.side = side
        tail = law.tail
        self.K = np.where(tail.valid, tail.K, 1)
        self.valid = tail.valid
        self.den = law.den[:, None]

    @staticmethod
    def usable(law):
        """Exact in int64: ``K den`` must stay below 2^62."""
        kmax = int(np.where(law.tail.valid, law.tail.K, 0).max())
        return kmax * int(law.den.max()) < 2**61

    def __call__(self, x, rows=slice(None)):
        K, den, big = self.K[rows], self.den[rows], np.iinfo(np.int64).max
        valid = self.valid[rows]
        if self.side == "lower":
            m = (x[:, None] * K) // den
            a = -((-m * den) // K)
            b = -((-(m + 1) * den) // K) - 1
            first = np.where(valid, a, -big).max(axis=1)
            last = np.where(valid, b, big).min(axis=1)
            return first, last
        xs = -x  # upper tail at y = -x
        u = -((-xs[:, None] * K) // den)
        a = ((u - 1) * den) // K + 1
        b = (u * den) // K
        first = np.where(valid, a, -big).max(axis=1)
        last = np.where(valid, b, big).min(axis=1)
        return -last, -first


def _critical(law, level, side):
    """The rejection region of one tail: ``x <= x_L`` (lower) or ``x >= x_U``."""
    joint = law.fam not in ("binomial", "mb") and _Runs.usable(law)
    mean, sd = law.approximation()
    shift = float(ndtri(level)) * sd
    if side == "lower":
        runs = _Runs(law, "lower") if joint else None
        return _largest(law.lower, law.lo, law.hi, level, mean + shift, sd, runs)
    runs = _Runs(law, "upper") if joint else None
    return -_largest(
        lambda y, rows: law.upper(-y, rows),
        -law.hi,
        -law.lo,
        level,
        -mean + shift,
        sd,
        runs,
    )


def null_range(metric, n, p, level):
    """Central range of the exact null law of the MATCH statistic at size ``n``.

    Per group, the smallest score ``lo`` with ``P(S <= lo) > level`` and the
    largest ``hi`` with ``P(S >= hi) > level`` under ``Multinomial(n, p)``
    (conditional on the metric being defined): a score outside ``[lo, hi]`` has a
    tail probability of at most ``level``, so with ``level = (1 - ci) / 2`` it is
    outside exactly when the exact two-sided p-value is at most ``1 - ci``.
    Binomial metrics, joint ratios and ``mb``; ``n`` (G,) int64 >= 1, ``p`` (G,
    4) proportions under which the metric can be defined. Joint ratios and
    ``mb`` whose counts have a variance of at least
    :data:`._large_n.LARGE_VARIANCE` (groups of about a million people) take
    the range of the Edgeworth law (:func:`._large_n.large_range`, ``O(1)``
    per group, within one lattice step of the exact range).
    """
    n = np.asarray(n, np.int64)
    p = np.asarray(p, np.float64)
    big = large(metric, n, p)
    if not big.any():
        return _exact_range(metric, n, p, level)
    lo, hi = np.empty(n.shape), np.empty(n.shape)
    lo[big], hi[big] = large_range(metric, n[big], p[big], level)
    if not big.all():
        lo[~big], hi[~big] = _exact_range(metric, n[~big], p[~big], level)
    return lo, hi


def _exact_range(metric, n, p, level):
    """:func:`null_range` by the exact law (the windowed sums)."""
    law = _Law(metric, n, p)
    x_lo = _critical(law, level, "lower") + 1  # first x outside the lower tail
    x_hi = _critical(law, level, "upper") - 1  # last x outside the upper tail
    if law.fam in ("binomial", "mb"):
        nf = law.n.astype(np.float64)
        return x_lo / nf, x_hi / nf
    # x stands for the scores in ((x - 1) / den, x / den] in the lower tail and
    # in [x / den, (x + 1) / den) in the upper one: the largest score c / K <=
    # x_lo / den and the smallest >= x_hi / den
    K, valid, den = law.tail.K, law.tail.valid, law.den[:, None]
    zeros = np.zeros_like(K)
    # floor(x K / den) and ceil(x K / den) in exact integers (x K may pass 2^63)
    down = _floor_div(zeros, x_lo[:, None], K, den, zeros, K)
    up = -_floor_div(zeros, -x_hi[:, None], K, den, -K, zeros)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(valid & (down >= 0), down / K, -np.inf).max(axis=1)
        hi = np.where(valid & (up <= K), up / K, np.inf).min(axis=1)
    return lo, hi


def _power(metric, p0, p1, n, alpha, alternative):
    """Exact power at the sizes ``n`` (int64 array); the Edgeworth law's power
    (:func:`._large_n.large_power`) at the sizes where :func:`._large_n.large`."""
    sides = {"two-sided": ("lower", "upper"), "less": ("lower",)}
    sides = sides.get(alternative, ("upper",))
    level = alpha / 2 if alternative == "two-sided" else alpha
    big = large(metric, n, p0)
    if big.any():
        power = np.empty(n.shape)
        power[big] = large_power(metric, n[big], p0, p1, level, sides)
        if not big.all():
            power[~big] = _power(metric, p0, p1, n[~big], alpha, alternative)
        return power
    null, alt = _Law(metric, n, p0), _Law(metric, n, p1)
    power = np.zeros(n.shape)
    for side in sides:
        x = _critical(null, level, side)
        if side == "lower":
            some = x >= null.lo
            power += np.where(some, alt.lower(np.where(some, x, null.lo)), 0.0)
        else:
            some = x <= null.hi
            power += np.where(some, alt.upper(np.where(some, x, null.hi)), 0.0)
    return np.clip(power, 0.0, 1.0)


def _setup(metric, reference, effect, target, alternative):
    m = _metric(metric)
    p0 = _proportions(reference)
    _check_null(m, p0)
    value = _target_value(m, p0, effect, target, alternative)
    return m, p0, _alternative_law(m, p0, value)


# =====================================================================================
# the two-sample law (the default of match_test)
# =====================================================================================
class _TwoSample:
    """Groups of sizes ``n`` against references that are samples: per group the
    reference's numerator ``y`` and denominator ``m`` of the metric, the group's
    share ``share`` of people in the denominator and the reference's value."""

    def __init__(self, metric, reference, n, share):
        m = get_metric(metric)
        if m.family not in ("binomial", "joint_ratio"):
            raise ValueError(
                f"metric={metric!r}: planning with null='two-sample' supports "
                f"binomial metrics (acc, prev, ppr, inacc, nprev, pnr) and joint "
                f"ratios (tpr, fnr, fpr, tnr, ppv, fdr, npv, for); other metrics "
                f"are tested by a permutation law without a closed-form power. Use "
                f"null='fixed-reference' for mb, or simulate match_test."
            )
        self.metric = m
        sizes = np.atleast_1d(np.asarray(n))
        self.scalar = np.ndim(n) == 0
        self.n = _sizes(sizes)
        ref = np.asarray(reference)
        if ref.dtype.kind not in "biuf":
            raise TypeError(
                f"reference must hold numeric counts, got dtype {ref.dtype}."
            )
        ref = ref.astype(np.float64)
        if ref.shape == (4,):
            ref = np.broadcast_to(ref, (self.n.size, 4))
        if ref.shape != (self.n.size, 4):
            raise ValueError(
                f"reference must be 4 counts (TP, FN, FP, TN), or one row of 4 per "
                f"size of n; got shape {np.shape(reference)} for {self.n.size} "
                f"size(s)."
            )
        if not np.isfinite(ref).all() or (ref < 0).any():
            raise ValueError("reference must hold finite non-negative counts.")
        if not np.array_equal(ref, np.round(ref)):
            raise ValueError(
                "with null='two-sample' the reference is a sample of people: give "
                "its whole counts (TP, FN, FP, TN), not proportions; for known "
                "proportions use null='fixed-reference'."
            )
        y, mm = proportion_counts(m, ref)
        if (mm <= 0).any():
            raise ValueError(
                f"reference has no one in the denominator of {m.name}: the test "
                f"has nothing to compare with."
            )
        self.y, self.m = y, mm
        self.value = y / mm
        if m.family == "binomial":
            self.share = np.ones(self.n.size)
        elif share is None:
            self.share = mm / ref.sum(axis=1)
        else:
            sh = np.broadcast_to(np.asarray(share, dtype=np.float64), self.n.shape)
            if not np.isfinite(sh).all() or (sh < 0).any() or (sh > 1).any():
                raise ValueError(f"share must be in [0, 1]; got {share!r}.")
            self.share = np.array(sh)

    def targets(self, effect, target, alternative):
        if (effect is None) == (target is None):
            raise ValueError(
                "give exactly one of effect (a difference on the metric's scale) "
                f"and target (a value of the metric); got effect={effect!r}, "
                f"target={target!r}."
            )
        value = (
            self.value + effect
            if target is None
            else np.full(self.n.shape, float(target))
        )
        name, given = ("effect", effect) if target is None else ("target", target)
        if ((value < -1e-12) | (value > 1 + 1e-12)).any():
            raise ValueError(
                f"{name}={given!r} puts {self.metric.name} outside [0, 1] under this "
                f"reference (reference value {self.value[0]:.6g})."
            )
        diff = value - self.value
        if (alternative == "greater" and (diff < 0).any()) or (
            alternative == "less" and (diff > 0).any()
        ):
            raise ValueError(
                f"{name}={given!r} moves {self.metric.name} against "
                f"alternative={alternative!r}: use a "
                f"{'non-negative' if alternative == 'greater' else 'non-positive'} "
                "effect or the other alternative."
            )
        return np.clip(value, 0.0, 1.0)

    def power(self, theta1, alpha, alternative, n=None):
        n = self.n if n is None else n
        return size_power(n, self.share, self.y, self.m, theta1, alpha, alternative)


# =====================================================================================
# public functions
# =====================================================================================
@validate_params({**_COMMON, "n": [Whole(1, None, closed="left"), "array-like"]})
def match_power(
    metric,
    reference,
    n,
    *,
    effect=None,
    target=None,
    alpha=0.05,
    alternative="two-sided",
    null="two-sample",
    share=None,
):
    """Power of the MATCH test of a group of size ``n``.

    **Default** (``null="two-sample"``, the law of :func:`match_test`): a
    proportion metric (binomial or joint ratio) of a group of ``n`` people of
    whom a share ``share`` is in the metric's denominator (by default the
    reference's share: its prevalence for ``tpr``), whose value is the
    reference's plus ``effect`` (or ``target``), against the reference counts
    as a sample: the test's region at the pooled count the alternative gives,
    its probability with the group's and the reference's counts both random,
    averaged over the group's denominator ``K ~ Bin(n, share)`` (enumerated on
    its window, or by a 5-point Gauss-Hermite rule where that holds more than 16
    values). In the exact test's regime the region is the exact one (the
    supremum over 9 common rates of the confidence interval); in the E test's
    regime (the smaller sample's count variance at least 100) the normal law
    of the statistic with a Cornish-Fisher correction for its skewness. The
    stated power was checked by simulating the test (user guide, calibration
    page). ``n`` and ``share`` may be arrays (one power per size), and then
    ``reference`` may hold one row of counts per size.

    **Published** (``null="fixed-reference"``): as follows.

    The rejection region of :func:`match_test` with ``method="exact"`` (and
    ``conditional=True``) under the null law ``reference / sum(reference)``, then its
    probability under the alternative law in which the metric takes the value
    ``target`` (or the reference's value plus ``effect``). How the alternative law is
    made from the reference depends on the metric's family: a joint ratio
    ``c_i / (c_i + c_j)`` moves mass between its two cells and keeps the others (for
    ``tpr``: TP and FN change, prevalence, FP and TN stay); a binomial metric scales
    its two cells and the two complementary cells proportionally; marginal benefit
    keeps ``p_FP + p_FN`` and sets ``p_FP - p_FN``.

    For a joint ratio or ``mb`` at a size where the variance of the counts
    (``n p_i p_j / (p_i + p_j)`` for a joint ratio) is at least 10^4, e.g.
    from 351,907 people for ``tpr`` at the COMPAS reference below, the power
    is that of the law's Edgeworth expansion, in ``O(1)``: within 1e-4 of the
    exact power in the tests (user guide, "Groups of millions");
    :func:`match_sample_size` and :func:`match_min_detectable_effect` inherit
    it.

    Parameters
    ----------
    metric : str
        A binomial metric (``acc``, ``prev``, ``ppr``, ``inacc``, ``nprev``,
        ``pnr``), a joint ratio (``tpr``, ``fnr``, ``fpr``, ``tnr``, ``ppv``, ``fdr``,
        ``npv``, ``for``) or ``mb``; other metrics raise ``ValueError``.
    reference : array-like of shape (4,) or (n_sizes, 4)
        Reference counts ``(TP, FN, FP, TN)``: a sample of people for the
        default law; their proportions are the null law for
        ``null="fixed-reference"``.
    n : int or array-like of int
        Group size(s).
    effect : float, default=None
        Difference between the group's metric and the reference's, on the metric's
        scale. Exactly one of ``effect`` and ``target``.
    target : float, default=None
        The group's value of the metric under the alternative.
    alpha : float, default=0.05
        Level of the test.
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        As in :func:`match_test`; ``"greater"`` needs a non-negative effect and
        ``"less"`` a non-positive one.
    null : {"two-sample", "fixed-reference"}, default="two-sample"
        The law of the test, as in :func:`match_test`.
    share : float or array-like in [0, 1], default=None
        Default law, joint ratios: the share of the group's people in the
        metric's denominator (its prevalence for ``tpr``, its rate of predicted
        positives for ``ppv``); ``None`` takes the reference's.

    Returns
    -------
    power : float or ndarray
        Probability of rejecting at level ``alpha``; an array when ``n`` is one.
        At ``effect=0`` it is the test's exact size (at most ``alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import match_power
    >>> reference = np.array([389, 347, 1597, 4121])  # COMPAS, all defendants
    >>> round(match_power("tpr", reference, 200, effect=-0.15), 3)
    0.28
    >>> round(match_power("tpr", reference, 200, effect=-0.15,
    ...                   null="fixed-reference"), 3)
    0.278
    >>> match_power("tpr", reference, [50, 100], effect=0.0) <= 0.05
    array([ True,  True])
    """
    if null == "two-sample":
        law = _TwoSample(metric, reference, n, share)
        theta1 = law.targets(effect, target, alternative)
        power = law.power(theta1, alpha, alternative)
        return float(power[0]) if law.scalar else power
    m, p0, p1 = _setup(metric, reference, effect, target, alternative)
    sizes = _sizes(n)
    power = _power(m, p0, p1, sizes, alpha, alternative)
    return float(power[0]) if np.ndim(n) == 0 else power


def _two_sample_size(
    metric, reference, effect, target, goal, alpha, alternative, max_n, share
):
    """:func:`match_sample_size` under the two-sample law: the power at a
    geometric grid of sizes, then a bisection of the first crossing (the power
    of the two-sample law, averaged over the group's denominator, grows with the
    size)."""
    law = _TwoSample(metric, reference, 1, share)
    theta1 = float(law.targets(effect, target, alternative)[0])
    grid = np.unique(np.round(np.geomspace(1, max_n, _GRID_POINTS)).astype(np.int64))

    def at(sizes):
        sizes = np.asarray(sizes, dtype=np.int64)
        return size_power(
            sizes, law.share[0], law.y[0], law.m[0], theta1, alpha, alternative
        )

    values = np.full(grid.shape, np.nan)
    for start in range(0, grid.size, _GRID_CHUNK * 2):  # up the grid, in chunks
        part = slice(start, start + _GRID_CHUNK * 2)
        values[part] = at(grid[part])
        if (values[part] >= goal).any():
            break
    above = np.flatnonzero(values >= goal)
    if not above.size:
        raise ValueError(
            f"power={goal} is not reached up to max_n={max_n}: the largest power "
            f"on the sizes searched is {np.nanmax(values):.4f}. Increase max_n or "
            "the effect."
        )
    hi = int(grid[above[0]])
    lo = int(grid[above[0] - 1]) if above[0] else 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at([mid])[0] >= goal:
            hi = mid
        else:
            lo = mid
    return hi


@validate_params(
    {
        **_COMMON,
        "power": [Number(0, 1, closed="neither")],
        "max_n": [Whole(1, None, closed="left")],
    }
)
def match_sample_size(
    metric,
    reference,
    *,
    effect=None,
    target=None,
    power=0.8,
    alpha=0.05,
    alternative="two-sided",
    max_n=100_000,
    null="two-sample",
    share=None,
):
    """Smallest group size from which the exact MATCH test keeps the given power.

    Exact power is saw-toothed in ``n`` (the rejection region changes by whole
    matrices), so the first size at which it reaches ``power`` may be followed by
    sizes at which it falls below again. The size ``n`` returned has power at
    least ``power`` at every size from ``n`` to ``n + SAMPLE_SIZE_WINDOW`` (20) and
    at the points of a geometric grid of 64 sizes between 1 and ``max_n`` from
    ``n`` up to twice the first grid size from which the grid holds, and power
    below ``power`` at ``n - 1``: it is the smallest such size after the last
    crossing of the target that the grid shows.

    The search evaluates :func:`match_power` on the geometric grid, narrows the
    last crossing of the target between two grid points (eight sizes at a time,
    keeping the last one below the target and the next one), and scans every
    size around it. Each evaluation costs O(sqrt(n)) terms (the window of the exact
    sums) per step of the search of the critical values: a search on the probit
    scale started from the normal approximation, in which each step moves the
    bracket to the end of its run of equal thresholds, takes about 5 to 10 steps
    where a bisection of the score grid takes ``2 log2(n)`` (about 35 near
    100,000), with the same rejection regions. ``benchmarks/bench_match.py``
    times it against that bisection near n = 100,000 for ``tpr``.

    Parameters
    ----------
    metric, reference, effect, target, alpha, alternative, null, share
        As in :func:`match_power`.
    power : float, default=0.8
        Target power, in (0, 1).
    max_n : int, default=100_000
        Largest size considered.

    Returns
    -------
    n : int

    Raises
    ------
    ValueError
        When the power stays below ``power`` up to ``max_n``; the message gives the
        largest power reached.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import match_sample_size, match_power
    >>> reference = np.array([389, 347, 1597, 4121])
    >>> n = match_sample_size("tpr", reference, effect=-0.15)
    >>> n
    864
    >>> bool(match_power("tpr", reference, n, effect=-0.15) >= 0.8)
    True
    """
    if null == "two-sample":
        return _two_sample_size(
            metric, reference, effect, target, power, alpha, alternative, max_n, share
        )
    m, p0, p1 = _setup(metric, reference, effect, target, alternative)
    goal = power

    def at(sizes):
        return _power(m, p0, p1, np.asarray(sizes, np.int64), alpha, alternative)

    grid = np.unique(np.round(np.geomspace(1, max_n, _GRID_POINTS)).astype(np.int64))
    values = np.full(grid.size, np.nan)
    for start in range(0, grid.size, _GRID_CHUNK):  # walk up the grid
        values[start : start + _GRID_CHUNK] = at(grid[start : start + _GRID_CHUNK])
        done = values[: start + _GRID_CHUNK]
        below = np.flatnonzero(done < goal)
        first = below[-1] + 1 if below.size else 0
        if first < done.size and grid[done.size - 1] >= 2 * grid[first]:
            break
    else:
        if below.size and below[-1] == grid.size - 1:
            raise ValueError(
                f"power={goal} is not reached up to max_n={max_n}: the largest "
                f"power on the sizes searched is {np.nanmax(values):.4f}. Increase "
                "max_n or the effect."
            )
    # the last crossing lies in (grid[first - 1], grid[first]]
    lo = int(grid[first - 1]) if first else 0
    hi = int(grid[first])
    while hi - lo > 2 * SAMPLE_SIZE_WINDOW:  # narrow the trend's last crossing
        # _SPLIT sizes at once: the bracket shrinks _SPLIT + 1 times per call
        inner = np.linspace(lo, hi, _SPLIT + 2)[1:-1].round().astype(np.int64)
        inner = np.unique(inner[(inner > lo) & (inner < hi)])
        below = np.flatnonzero(at(inner) < goal)
        if below.size:
            lo = int(inner[below[-1]])
        if below.size and below[-1] + 1 < inner.size:
            hi = int(inner[below[-1] + 1])
        elif not below.size:
            hi = int(inner[0])
    # scan around the crossing: the size after the last failure, extending the
    # scan down until a failure and up until a whole window passes
    w = SAMPLE_SIZE_WINDOW
    sizes = np.arange(max(1, hi - w), min(max_n, hi + w) + 1)
    ok = at(sizes) >= goal
    while True:
        fails = np.flatnonzero(~ok)
        if not fails.size and sizes[0] > 1:  # no failure yet: look lower
            more = np.arange(max(1, sizes[0] - 2 * w), sizes[0])
            sizes, ok = (
                np.concatenate([more, sizes]),
                np.concatenate([at(more) >= goal, ok]),
            )
            continue
        n = int(sizes[fails[-1]] + 1) if fails.size else int(sizes[0])
        top = min(max_n, n + w)
        if top > sizes[-1]:  # the window above n is not fully scanned yet
            more = np.arange(sizes[-1] + 1, top + 1)
            sizes, ok = (
                np.concatenate([sizes, more]),
                np.concatenate([ok, at(more) >= goal]),
            )
            continue
        if n > max_n:
            raise ValueError(
                f"power={goal} is not kept up to max_n={max_n}; the largest power on "
                f"the sizes searched is {np.nanmax(values):.4f}. Increase max_n."
            )
        return n


@validate_params(
    {
        "metric": [str],
        "reference": ["array-like"],
        "n": [Whole(1, None, closed="left"), "array-like"],
        "power": [Number(0, 1, closed="neither")],
        "alpha": [Number(0, 1, closed="neither")],
        "alternative": [StrOptions(set(_ALTERNATIVES))],
        "null": [StrOptions(set(_NULLS))],
        "share": [Number(0, 1, closed="both"), "array-like", None],
    }
)
def match_min_detectable_effect(
    metric,
    reference,
    n,
    *,
    power=0.8,
    alpha=0.05,
    alternative="two-sided",
    null="two-sample",
    share=None,
):
    """Smallest effect the exact MATCH test detects with the given power at size n.

    Bisection on the effect (40 steps) of :func:`match_power`, whose power grows with
    the effect's size in the alternative's direction. With ``"greater"`` the effect
    is positive, with ``"less"`` negative; with ``"two-sided"`` both directions are
    searched and the effect of smaller magnitude is returned (with its sign).

    Parameters
    ----------
    metric, reference, alpha, alternative, null, share
        As in :func:`match_power`.
    n : int
        Group size.
    power : float, default=0.8
        Target power, in (0, 1).

    Returns
    -------
    effect : float
        Difference on the metric's scale (signed).

    Raises
    ------
    ValueError
        When even the largest possible effect does not reach ``power``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.stats import match_min_detectable_effect
    >>> reference = np.array([389, 347, 1597, 4121])
    >>> round(match_min_detectable_effect("tpr", reference, 200, alternative="less"), 3)
    -0.26
    >>> round(match_min_detectable_effect("tpr", reference, 200, alternative="less",
    ...                                   null="fixed-reference"), 3)
    -0.258
    """
    if null == "two-sample":
        law = _TwoSample(metric, reference, n, share)
        gaps = size_detectable(
            law.n,
            law.share,
            law.y,
            law.m,
            alpha,
            target=power,
            alternative=alternative,
        )
        up = gaps.get(1, np.full(law.n.shape, np.nan))
        down = -gaps.get(-1, np.full(law.n.shape, np.nan))
        effect = np.where(np.isnan(up) | (np.abs(down) < up), down, up)
        if law.scalar:
            if np.isnan(effect[0]):
                raise ValueError(
                    f"power={power} is not reached at n={n} by any effect in the "
                    f"direction of alternative={alternative!r}. Increase n."
                )
            return float(effect[0])
        return effect
    m = _metric(metric)
    p0 = _proportions(reference)
    _check_null(m, p0)
    if isinstance(n, Integral) is False:
        raise TypeError(
            "n must be an int with null='fixed-reference'; arrays of sizes are "
            "planned with the default null='two-sample'."
        )
    s0 = _null_value(m, p0)
    lo_v, hi_v = _value_range(m, p0)
    sizes = np.array([n], np.int64)
    directions = {"greater": (1,), "less": (-1,)}.get(alternative, (1, -1))
    found, best = [], 0.0

    def pw(effect):
        p1 = _alternative_law(m, p0, s0 + effect)
        return _power(m, p0, p1, sizes, alpha, alternative)[0]

    for sign in directions:
        room = (hi_v - s0) if sign > 0 else (s0 - lo_v)
        if room <= 0:
            continue
        top = pw(sign * room)
        best = max(best, top)
        if top < power:
            continue
        a, b = 0.0, room
        for _ in range(_MDE_STEPS):
            mid = (a + b) / 2
            if pw(sign * mid) >= power:
                b = mid
            else:
                a = mid
        found.append(sign * b)
    if not found:
        raise ValueError(
            f"power={power} is not reached at n={n} by any effect in the direction "
            f"of alternative={alternative!r}; the largest power is {best:.4f}. "
            "Increase n."
        )
    return float(min(found, key=abs))
