"""What the audit could have detected: the smallest detectable gaps, the verdicts."""

import warnings

import numpy as np

from ..metrics import get_metric
from ..stats import match_min_detectable_effect

__all__ = ["TOLERANCE", "VERDICTS", "detectable_gaps", "plannable", "verdicts"]

#: Power at which the audit states the smallest gap it could have detected.
POWER = 0.8
#: Default largest gap the audit's "no gap detected" may leave unexcluded.
TOLERANCE = 0.1
#: The verdicts of a group's metric (``<metric>_verdict``).
GAP, NO_GAP, INCONCLUSIVE, UNDEFINED = (
    "gap",
    "no gap detected",
    "inconclusive",
    "undefined",
)
#: Every verdict, in the order of the report's legend.
VERDICTS = (GAP, INCONCLUSIVE, NO_GAP, UNDEFINED, "not tested")


def plannable(metric):
    """Whether ``metric`` has a closed-form power under the MATCH test's default
    two-sample law (proportions: binomial metrics and joint ratios), and so a
    detectable gap."""
    m = get_metric(metric)
    return m.family in ("binomial", "joint_ratio")


def detectable_gaps(metric, reference, n, share, *, alpha, power=POWER):
    """The smallest gap the MATCH test detects with ``power`` at each group's size.

    Per group ``k``: :func:`~sklearn_smallfair.stats.match_min_detectable_effect`
    of ``metric`` against the reference counts ``reference[k]`` at size ``n[k]``,
    with the group's own share ``share[k]`` of people in the metric's denominator
    (its prevalence for ``tpr``) and the two-sided test at level ``alpha`` (the
    level at which the audit's correction rejects one test of its family):
    the gap of smaller size of the two directions, as an absolute value, counting
    the noise of the group and of the reference. NaN where no gap reaches
    ``power``, where the group or the reference has no one in the metric's
    denominator, or for metrics without a closed-form power (``f1``, ``mcc``,
    ...).
    """
    reference = np.asarray(reference, dtype=np.float64)
    n = np.asarray(n, dtype=np.int64)
    share = np.asarray(share, dtype=np.float64)
    out = np.full(n.shape, np.nan)
    if not plannable(metric) or not n.size:
        return out
    m = get_metric(metric)
    denominator = reference[:, list(m.denominator)].sum(axis=1)
    ok = (n > 0) & (denominator > 0) & (share > 0)
    if ok.any():
        with warnings.catch_warnings():
            # NaN where no gap is detectable: the report states those sizes itself
            warnings.filterwarnings("ignore", "power=.* is not reached", UserWarning)
            effect = match_min_detectable_effect(
                m.name,
                np.rint(reference[ok]),
                n[ok],
                share=share[ok],
                alpha=alpha,
                power=power,
            )
        out[ok] = np.abs(effect)
    return out


def verdicts(frame, metric, gap, *, tolerance=TOLERANCE):
    """Per group: ``gap``, ``no gap detected``, ``inconclusive`` or ``undefined``.

    A group's metric shows ``no gap detected`` only when the test does not
    reject, a gap of the detectable size exists at the group's size and is at
    most ``tolerance``, and the group's confidence interval lies within the
    reference's value plus or minus that gap: the data exclude every gap above
    it (an equivalence reading; the interval need not hold the reference's
    value, a large group may show a real difference smaller than the
    tolerance); a non-rejection otherwise is
    ``inconclusive`` (the data cannot tell a gap the audit would miss from no
    gap).
    """
    reject = frame[f"{metric}_match_reject"].to_numpy(dtype=bool)
    p = frame[f"{metric}_match_p_adjusted"].to_numpy(dtype=float)
    low = frame[f"{metric}_low"].to_numpy(dtype=float)
    high = frame[f"{metric}_high"].to_numpy(dtype=float)
    ref = frame[f"{metric}_reference"].to_numpy(dtype=float)
    d = np.abs(gap)
    with np.errstate(invalid="ignore"):
        inside = (low >= ref - d) & (high <= ref + d) & (d <= tolerance)
    out = np.where(inside, NO_GAP, INCONCLUSIVE).astype(object)
    out[reject] = GAP
    out[np.isnan(p) & ~reject] = UNDEFINED
    out[frame[f"{metric}_undefined"].to_numpy(dtype=bool)] = UNDEFINED
    return out
