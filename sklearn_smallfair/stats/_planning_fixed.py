"""Planning under the published (fixed-reference) MATCH law: exact tails, ranges
and power.

The power of the exact MATCH test (:func:`match_test` with
``null="fixed-reference"``) of a group of size ``n`` is computed in two steps: the
rejection region of
the exact null law (the reference proportions), then its probability under an
alternative law. The test's statistic has a monotone null law, so its rejection
region is one tail (``"less"``, ``"greater"``) or two tails (``"two-sided"``, each
at ``alpha / 2``: the two-sided p-value is ``min(1, 2 min(lower, upper))``), each cut
at a critical value found by integer bisection on the exact tail.

The tails are the test's laws: binomial metrics by the binomial CDF
kernels of :mod:`._binomial`; joint ratios and marginal benefit by the sum over
the denominator ``K = c_i + c_j`` (over ``t = FP + FN`` for marginal benefit) of
``Bin(K; n, q) P(X_K <= m_K)``, on the window of :func:`._binomial.window`,
conditional on the metric being defined. The laws of :mod:`._match_laws` take the
observed matrices of the groups, and a joint ratio's critical value need not be
the score of a matrix of size ``n`` that the search visits, so the sums over
``K`` are made here by :func:`_linear_tail`, a thin vectorized helper on the same
kernels (:func:`._binomial._cdf`, :func:`._binomial._sf`,
:func:`._binomial.window`) with thresholds ``floor((a + c K) / d)`` in exact
integer arithmetic (:func:`._binomial._floor_div`).

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

import numpy as np
from scipy.special import ndtri

from .._confusion import FN, FP
from ..metrics import get_metric
from ._binomial import _cdf, _floor_div, _sf, window
from ._large_n import large, large_power, large_range
from ._match_batch import family, joint_cells
from ._match_exact import _binomial_run, _path_tail

__all__ = ["null_range"]

_SUPPORTED = "binomial metrics (acc, prev, ppr, inacc, nprev, pnr), joint ratios "
_SUPPORTED += "(tpr, fnr, fpr, tnr, ppv, fdr, npv, for) and mb"


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
