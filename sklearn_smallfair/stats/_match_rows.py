"""The rows of the MATCH table: one metric's tests on all the groups.

:func:`_choose_method` chooses the method of every group before any work;
:func:`_test_metric` runs each method of the published (fixed-reference) law once
on the groups it was chosen for, and :func:`_test_two_sample` runs the two-sample
law; both add the interval of the group's metric and the range of scores the
reference law gives a group of its size.
"""

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from .._column_intervals import column_interval, resolve_interval_method
from .._draws import DEFAULT_N_RESAMPLES
from .._random import child_rng
from .._validation import format_label
from ..exceptions import UndefinedGroupMetricWarning
from ..metrics import get_metrics
from ._match_batch import family, score, subset
from ._match_exact import exact_terms
from ._match_laws import LAWS
from ._permutation_law import permutation_law
from ._planning_fixed import null_range
from ._two_sample import acceptance_range, proportion_counts, tails, two_sided

#: Largest group size for ``method="enumerate"``: C(403, 3) = 10.8 million
#: matrices, about 0.35 GB of counts and a few seconds of work.
ENUMERATE_MAX_N = 400
#: Largest group size that ``method="auto"`` enumerates (C(203, 3) = 1.4 million
#: matrices, under half a second); Monte Carlo above.
AUTO_ENUMERATE_MAX_N = 200
#: Largest number of terms of an exact sum that ``method="auto"`` computes per
#: group (under half a second); the saddle-point approximation above (Monte Carlo with
#: ``reference_uncertainty=True``).
AUTO_EXACT_MAX_TERMS = 500_000
#: Largest number of terms of an exact sum that ``method="exact"`` accepts per
#: group (about 10 s): the window of ``n = 10^14`` for a rate of 0.1 without
#: reference uncertainty, ``n = 10^7`` with it.
EXACT_MAX_TERMS = 10_000_000
#: Most groups per metric whose reference range is computed: the exact range
#: inverts both tails of the null law (about 10 evaluations each, against
#: one for the test), a few milliseconds per group; beyond, the range is NaN.
RANGE_MAX_GROUPS = 1_000


def _labels(groups, mask):
    return ", ".join(format_label(v) for v in np.asarray(groups, dtype=object)[mask])


# =====================================================================================
# The choice of method, before any work
# =====================================================================================
def _choose_method(metric, method, batch, groups):
    """The method of every group for ``metric``, an array of names, shape (G,).

    ``"auto"`` chooses by cost (see :func:`match_test`); an explicit method is
    checked against its size limits here, so that nothing runs for a call that
    must fail.
    """
    n = batch.n
    if method == "auto":
        if family(metric) is None:
            return np.where(n <= AUTO_ENUMERATE_MAX_N, "enumerate", "montecarlo")
        cheap = exact_terms(metric, batch) <= AUTO_EXACT_MAX_TERMS
        fallback = "saddlepoint" if batch.dirichlet is None else "montecarlo"
        return np.where(cheap, "exact", fallback)
    if method == "enumerate" and (n > ENUMERATE_MAX_N).any():
        raise ValueError(
            f"method='enumerate' handles groups of size n <= {ENUMERATE_MAX_N} "
            f"(C(n + 3, 3) matrices); group(s) {_labels(groups, n > ENUMERATE_MAX_N)}"
            f" are larger. Use method='montecarlo' (or 'auto', which switches to "
            f"it)."
        )
    if method == "exact":
        terms = exact_terms(metric, batch)
        if (terms > EXACT_MAX_TERMS).any():
            raise ValueError(
                f"method='exact' sums more than EXACT_MAX_TERMS={EXACT_MAX_TERMS:,} "
                f"terms for {metric.name!r} and group(s) "
                f"{_labels(groups, terms > EXACT_MAX_TERMS)} (n up to "
                f"{int(n.max()):,}). Use method='auto', which switches to "
                f"'saddlepoint' (or 'montecarlo' with reference_uncertainty)."
            )
    return np.full(n.shape, method, dtype=object)


def _run_laws(metric, methods, batch):
    """Each method's law once, on the groups it was chosen for."""
    G = methods.shape[0]
    out = {k: np.full(G, np.nan) for k in ("lower", "upper", "p_undefined")}
    out["se_lower"], out["se_upper"] = np.full(G, np.nan), np.full(G, np.nan)
    for name in dict.fromkeys(methods.tolist()):
        index = np.flatnonzero(methods == name)
        part = batch if index.size == G else subset(batch, index)
        tails = LAWS[name](metric, part)
        for key in out:
            out[key][index] = getattr(tails, key)
    return out


def _p_values(tails, alternative):
    """The p-values and their Monte Carlo standard errors."""
    lower, upper = tails["lower"], tails["upper"]
    if alternative == "less":
        return lower, tails["se_lower"]
    if alternative == "greater":
        return upper, tails["se_upper"]
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
        se = np.where(lower <= upper, tails["se_lower"], tails["se_upper"])
    return p, np.minimum(2.0 * se, 1.0)


def _warn_untestable(metric, groups, observed, lower):
    undefined = np.isnan(observed)
    if undefined.any():
        warnings.warn(
            f"{metric.name} is undefined (0/0) for group(s) "
            f"{_labels(groups, undefined)}, so they cannot be tested (p-value NaN). "
            f"Smoothing (smoothing=CrossPriorSmoothing(lam)) makes the score defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )
    impossible = ~undefined & np.isnan(lower)
    if impossible.any():
        warnings.warn(
            f"under the reference law {metric.name} is never defined at these sizes "
            f"(e.g. a reference with no cases in the metric's denominator), so "
            f"group(s) {_labels(groups, impossible)} cannot be tested (p-value NaN). "
            f"Choose a reference that has such cases, or smoothing to make the score "
            f"defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )


def _score_interval(
    metric, counts, reference, smoothing, labels, seed, confidence_level
):
    """The interval of the groups' (smoothed) metric at level ``confidence_level``."""
    smoothed = smoothing is not None
    prior = None
    if smoothed:  # the smoothed score is the metric of c + offset / scale
        scale, offset = smoothing.coefficients(
            counts.sum(axis=-1).astype(np.float64), reference
        )
        prior = np.broadcast_to(offset / scale, counts.shape)
    return column_interval(
        metric,
        counts,
        method=resolve_interval_method(metric, "auto", smoothed=smoothed),
        alpha=1.0 - confidence_level,
        n_resamples=DEFAULT_N_RESAMPLES,
        seed=seed,
        labels=labels,
        prior=prior,
    )


def score_intervals(
    metrics, counts, reference, smoothing, labels, seed, confidence_level
):
    """``(low, high)`` of every row of the MATCH table at ``confidence_level``:
    the interval of each group's (smoothed) metric, metric after metric, NaN
    where the group's score is undefined (as the columns ``score_low`` and
    ``score_high``)."""
    lows, highs = [], []
    for metric in get_metrics(list(metrics), name="metric"):
        observed = score(metric, counts.astype(np.float64), smoothing, reference)
        low, high = _score_interval(
            metric, counts, reference, smoothing, labels, seed, confidence_level
        )
        lows.append(np.where(np.isnan(observed), np.nan, low))
        highs.append(np.where(np.isnan(observed), np.nan, high))
    return np.concatenate(lows), np.concatenate(highs)


def _intervals(metric, base, groups, observed, methods, confidence_level):
    """The interval of the groups' metric and the reference range at their size."""
    if confidence_level is None:
        return {}
    labels = np.asarray(groups, dtype=object)
    low, high = _score_interval(
        metric,
        base.counts,
        base.reference,
        base.smoothing,
        labels,
        base.seed,
        confidence_level,
    )
    undefined = np.isnan(observed)
    ref_low, ref_high = _reference_range(
        metric, base, labels, methods, confidence_level
    )
    return {
        "score_low": np.where(undefined, np.nan, low),
        "score_high": np.where(undefined, np.nan, high),
        "reference_range_low": ref_low,
        "reference_range_high": ref_high,
    }


def _reference_range(metric, base, labels, methods, confidence_level):
    """Central ``confidence_level`` range of the score of a group of the same size
    drawn from the reference law (the test's null law), conditional on it being
    defined.

    Exact (:func:`._planning_fixed.null_range`) where the test used ``method="exact"``
    on the plain multinomial law; elsewhere the quantiles of ``DEFAULT_N_RESAMPLES``
    null matrices (Dirichlet-multinomial with ``reference_uncertainty``, smoothed
    like the group's), each group from its own stream.
    """
    level = (1.0 - confidence_level) / 2.0
    G = base.n.shape[0]
    low, high = np.full(G, np.nan), np.full(G, np.nan)
    if G > RANGE_MAX_GROUPS:
        return low, high
    total = base.reference.sum(axis=1)
    p = base.reference / np.where(total > 0, total, 1.0)[:, None]
    defined = (base.n > 0) & ~np.isnan(score(metric, base.reference))
    exact = (methods == "exact") & defined
    if base.smoothing is not None or base.dirichlet is not None:
        exact[:] = False
    if exact.any():
        low[exact], high[exact] = null_range(metric, base.n[exact], p[exact], level)
    for g in np.flatnonzero(defined & ~exact):  # seeding each group's stream
        rng = child_rng(base.seed, "reference range", labels[g], metric.name)
        probs = p[g]
        if base.dirichlet is not None:
            probs = rng.dirichlet(base.dirichlet[g], size=DEFAULT_N_RESAMPLES)
        draws = rng.multinomial(
            int(base.n[g]),
            probs,
            size=None if base.dirichlet is not None else DEFAULT_N_RESAMPLES,
        )
        values = score(
            metric, draws.astype(np.float64), base.smoothing, base.reference[g]
        )
        values = values[~np.isnan(values)]
        if values.size:
            low[g], high[g] = np.quantile(values, [level, 1.0 - level])
    return low, high


def _test_metric(metric, methods, base, groups, alternative, confidence_level):
    """The rows of one metric: its laws on their groups, p-values, warnings."""
    observed = score(
        metric, base.counts.astype(np.float64), base.smoothing, base.reference
    )
    batch = replace(base, score=observed)
    tails = _run_laws(metric, methods, batch)
    _warn_untestable(metric, groups, observed, tails["lower"])
    p, se = _p_values(tails, alternative)
    return pd.DataFrame(
        {
            "group": list(groups),
            "n": base.n,
            "metric": metric.name,
            "score": observed,
            "reference_score": score(metric, base.reference),
            **_intervals(metric, base, groups, observed, methods, confidence_level),
            "p_lower_tail": tails["lower"],
            "p_upper_tail": tails["upper"],
            "p_value": p,
            "p_undefined": tails["p_undefined"],
            "se": np.where(methods == "montecarlo", se, np.nan),
            "method": methods.astype(object),
        }
    )


def _test_two_sample(
    metric,
    cms,
    refs,
    reference,
    groups,
    smoothing,
    alternative,
    confidence_level,
    n_resamples,
    seed,
):
    """The rows of one metric under the two-sample law (:mod:`._two_sample`)."""
    G = cms.shape[0]
    labels = np.asarray(groups, dtype=object)
    raw = score(metric, cms.astype(np.float64))
    observed = score(metric, cms.astype(np.float64), smoothing, refs)
    # the law compares the group with a sample independent of it: the total
    # holds the group, so the group is compared with the others
    others = cms.sum(axis=0) - cms if _is_total(reference) else refs
    others = np.rint(others).astype(np.int64)
    p_undefined = np.full(G, np.nan)
    se = np.full(G, np.nan)
    if family(metric) in ("binomial", "joint_ratio"):
        x, k = proportion_counts(metric, cms)
        y, m = proportion_counts(metric, others)
        lower, upper, exact = tails(x, k, y, m)
        methods = np.where(exact, "berger-boos", "e-test").astype(object)
        if metric.family == "joint_ratio":
            total = others.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                q = np.where(total > 0, m / np.where(total > 0, total, 1), np.nan)
                # q = 1 (everyone in the denominator): log(0) = -inf, P = 0
                p_undefined = np.exp(cms.sum(axis=1) * np.log1p(-np.minimum(q, 1.0)))
        else:
            p_undefined = np.zeros(G)
        if alternative == "less":
            p = lower
        elif alternative == "greater":
            p = upper
        else:
            p = two_sided(lower, upper)
    else:
        ranged = confidence_level is not None and G <= RANGE_MAX_GROUPS
        law = permutation_law(
            metric,
            cms,
            others,
            (1.0 - confidence_level) / 2.0 if ranged else None,
            n_resamples=n_resamples,
            seed=seed,
            labels=labels,
        )
        lower, upper, p_undefined = law["lower"], law["upper"], law["p_undefined"]
        se, methods = law["se"], law["method"]
        p, se = _p_values(
            {"lower": lower, "upper": upper, "se_lower": se, "se_upper": se},
            alternative,
        )
    undefined = np.isnan(raw)
    lower, upper, p = (np.where(undefined, np.nan, v) for v in (lower, upper, p))
    _warn_untestable(metric, groups, raw, lower)
    columns = {
        "group": list(groups),
        "n": cms.sum(axis=1),
        "metric": metric.name,
        "score": observed,
        "reference_score": score(metric, refs.astype(np.float64)),
    }
    if confidence_level is not None:
        low, high = _score_interval(
            metric, cms, refs, smoothing, labels, seed, confidence_level
        )
        columns["score_low"] = np.where(np.isnan(observed), np.nan, low)
        columns["score_high"] = np.where(np.isnan(observed), np.nan, high)
        ref_low, ref_high = np.full(G, np.nan), np.full(G, np.nan)
        if G <= RANGE_MAX_GROUPS:
            if family(metric) in ("binomial", "joint_ratio"):
                ref_low, ref_high = acceptance_range(k, y, m, 1.0 - confidence_level)
            else:
                ref_low, ref_high = law["low"], law["high"]
        columns["reference_range_low"] = ref_low
        columns["reference_range_high"] = ref_high
    columns.update(
        {
            "p_lower_tail": lower,
            "p_upper_tail": upper,
            "p_value": p,
            "p_undefined": p_undefined,
            "se": se,
            "method": methods,
        }
    )
    return pd.DataFrame(columns)


def _is_total(reference):
    return isinstance(reference, str) and reference == "total"
