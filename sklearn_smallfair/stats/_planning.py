"""Planning a MATCH audit: power, sample size and minimum detectable effect.

The three public functions plan under either law of :func:`match_test`: the
default two-sample law (:mod:`._planning_two_sample`) or the published
fixed-reference law, whose exact tails and power are in :mod:`._planning_fixed`.
"""

import warnings
from numbers import Integral

import numpy as np

from .._confusion import ConfusionCounts
from .._params import Number, StrOptions, Whole, validate_params
from ._planning_fixed import (
    _alternative_law,
    _check_null,
    _metric,
    _null_value,
    _power,
    _proportions,
    _setup,
    _sizes,
    _value_range,
)
from ._planning_two_sample import (
    _GRID_CHUNK,
    _GRID_POINTS,
    _two_sample_size,
    _TwoSample,
    size_detectable,
)

__all__ = ["match_min_detectable_effect", "match_power", "match_sample_size"]

_ALTERNATIVES = ("two-sided", "less", "greater")
#: Consecutive sizes after the first size at which power reaches the target that
#: match_sample_size checks (its stability window).
SAMPLE_SIZE_WINDOW = 20
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


def _reference_counts(reference):
    """The reference as counts: a :class:`~sklearn_smallfair.metrics.ConfusionCounts`
    of one matrix (no groups, or one group) gives its row of counts."""
    if not isinstance(reference, ConfusionCounts):
        return reference
    counts = np.asarray(reference.counts)
    if counts.ndim == 2 and counts.shape[0] == 1:
        return counts[0]
    if counts.ndim == 2:
        raise ValueError(
            f"reference is a ConfusionCounts of {counts.shape[0]} groups; the "
            "reference is one matrix of counts (TP, FN, FP, TN). Pass one group's "
            "row (result.counts[i]), their total (result.counts.sum(axis=0)), or "
            "count the reference without sensitive_features."
        )
    return counts


def _warn_not_detectable(sizes, power, alternative):
    """One warning naming the group sizes at which no effect reaches ``power``."""
    sizes = ", ".join(str(int(v)) for v in sizes)
    warnings.warn(
        f"power={power} is not reached by any effect in the direction of "
        f"alternative={alternative!r} at n={sizes}: the minimum detectable effect "
        "is NaN there. Increase n.",
        UserWarning,
        stacklevel=5,  # the caller of the validated public function
    )


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
    reference : array-like of shape (4,) or (n_sizes, 4), or ConfusionCounts
        Reference counts ``(TP, FN, FP, TN)``: a sample of people for the
        default law; their proportions are the null law for
        ``null="fixed-reference"``. A
        :class:`~sklearn_smallfair.metrics.ConfusionCounts` of one matrix (no
        groups, or a single group) gives its row of counts.
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
    reference = _reference_counts(reference)
    if null == "two-sample":
        law = _TwoSample(metric, reference, n, share)
        theta1 = law.targets(effect, target, alternative)
        power = law.power(theta1, alpha, alternative)
        return float(power[0]) if law.scalar else power
    m, p0, p1 = _setup(metric, reference, effect, target, alternative)
    sizes = _sizes(n)
    power = _power(m, p0, p1, sizes, alpha, alternative)
    return float(power[0]) if np.ndim(n) == 0 else power


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
    metric : str
        A binomial metric (``acc``, ``prev``, ``ppr``, ``inacc``, ``nprev``,
        ``pnr``), a joint ratio (``tpr``, ``fnr``, ``fpr``, ``tnr``, ``ppv``, ``fdr``,
        ``npv``, ``for``) or ``mb``; other metrics raise ``ValueError``.
    reference : array-like of shape (4,) or (n_sizes, 4), or ConfusionCounts
        Reference counts ``(TP, FN, FP, TN)``: a sample of people for the
        default law; their proportions are the null law for
        ``null="fixed-reference"``. A
        :class:`~sklearn_smallfair.metrics.ConfusionCounts` of one matrix (no
        groups, or a single group) gives its row of counts.
    effect : float, default=None
        Difference between the group's metric and the reference's, on the metric's
        scale. Exactly one of ``effect`` and ``target``.
    target : float, default=None
        The group's value of the metric under the alternative.
    power : float, default=0.8
        Target power, in (0, 1).
    alpha : float, default=0.05
        Level of the test.
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        As in :func:`match_test`; ``"greater"`` needs a non-negative effect and
        ``"less"`` a non-positive one.
    max_n : int, default=100_000
        Largest size considered.
    null : {"two-sample", "fixed-reference"}, default="two-sample"
        The law of the test, as in :func:`match_test`.
    share : float or array-like in [0, 1], default=None
        Default law, joint ratios: the share of the group's people in the
        metric's denominator (its prevalence for ``tpr``, its rate of predicted
        positives for ``ppv``); ``None`` takes the reference's.

    Returns
    -------
    n : int
        The smallest group size from which the power stays at least ``power``.

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
    reference = _reference_counts(reference)
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
    metric : str
        A binomial metric (``acc``, ``prev``, ``ppr``, ``inacc``, ``nprev``,
        ``pnr``), a joint ratio (``tpr``, ``fnr``, ``fpr``, ``tnr``, ``ppv``, ``fdr``,
        ``npv``, ``for``) or ``mb``; other metrics raise ``ValueError``.
    reference : array-like of shape (4,) or (n_sizes, 4), or ConfusionCounts
        Reference counts ``(TP, FN, FP, TN)``: a sample of people for the
        default law; their proportions are the null law for
        ``null="fixed-reference"``. A
        :class:`~sklearn_smallfair.metrics.ConfusionCounts` of one matrix (no
        groups, or a single group) gives its row of counts.
    n : int or array-like of int
        Group size (an array of sizes with the default ``null="two-sample"``).
    power : float, default=0.8
        Target power, in (0, 1).
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
    effect : float or ndarray
        Difference on the metric's scale (signed); an array when ``n`` is one.
        NaN where no effect in the search range is detectable at this size (a
        ``UserWarning`` then names those sizes).

    Warns
    -----
    UserWarning
        Once, naming the sizes at which even the largest possible effect does
        not reach ``power``.

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

    At 8 people no effect on ``tpr`` is detectable with 80 % power:

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     effects = match_min_detectable_effect("tpr", reference, [8, 200],
    ...                                           alternative="less")
    >>> effects.round(3)
    array([  nan, -0.26])
    """
    reference = _reference_counts(reference)
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
        if np.isnan(effect).any():
            _warn_not_detectable(law.n[np.isnan(effect)], power, alternative)
        return float(effect[0]) if law.scalar else effect
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
    found = []

    def pw(effect):
        p1 = _alternative_law(m, p0, s0 + effect)
        return _power(m, p0, p1, sizes, alpha, alternative)[0]

    for sign in directions:
        room = (hi_v - s0) if sign > 0 else (s0 - lo_v)
        if room <= 0:
            continue
        top = pw(sign * room)
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
        _warn_not_detectable([n], power, alternative)
        return float("nan")
    return float(min(found, key=abs))
