"""The binary audit of per-group confusion matrices: the table, the tests and
the verdicts of an :class:`AuditReport`."""

import warnings

import numpy as np
import pandas as pd

from .._confusion import CELLS
from .._groups import _feature_columns, check_sensitive_features
from .._random import child_seed
from .._references import reference_counts
from .._validation import format_labels
from ..exceptions import UndefinedGroupMetricWarning
from ..metrics import compute_metric, get_metrics, group_metrics
from ..smoothing import IntersectionalSmoothing
from ..stats import match_test, separation_test
from ._detectable import TOLERANCE, detectable_gaps, verdicts
from ._intersections import intersections
from ._report import AuditReport

__all__ = [
    "audit_counts",
    "decide_match",
    "separation_columns",
    "separation_reference",
    "warn_undefined",
]


def _describe(smoothing):
    """``CrossPriorSmoothing(lam=10)``: the smoothing with all its parameters."""
    if smoothing is None:
        return "none"
    params = ", ".join(f"{k}={v!r}" for k, v in smoothing.get_params().items())
    return f"{type(smoothing).__name__}({params})"


def _is_total(reference):
    return isinstance(reference, str) and reference == "total"


def _marginals(data, groups, cms, metrics, confidence_level, seed):
    """Per attribute of intersectional groups: its groups' metrics, and the parts.

    Returns ``(marginals, parts)``: a dict from attribute name to the frame of
    :func:`group_metrics` over that attribute alone (``n``, each metric with its
    confidence interval), and a frame indexed by the intersectional groups with
    one column per attribute (the group's level of it); ``(None, None)`` for a
    single attribute or counts. The rows are not counted again: a level's
    confusion matrix is the sum of those of the intersections ``cms`` (of the
    groups ``groups``) that hold it.
    """
    features = data["sensitive_features"]
    if data["y_true"] is None or features is None:
        return None, None
    n_samples = len(data["y_pred"])
    # the labels were read (and warned about) when the rows were counted
    columns, name = _feature_columns(features, n_samples, warn=False)
    if len(columns) < 2:
        return None, None
    names = name.split("|")
    if len(names) != len(columns) or len(set(names)) != len(names):
        names = [f"attribute {k + 1}" for k in range(len(columns))]
    groups, codes, _ = check_sensitive_features(features, n_samples, warn=False)
    first = np.unique(codes, return_index=True)[1]
    # a categorical column is its codes and categories: its labels, per row
    columns = [c.to_numpy() if hasattr(c, "to_numpy") else c for c in columns]
    parts = pd.DataFrame(
        {a: np.asarray(col)[first] for a, col in zip(names, columns)}, index=groups
    )
    levels = parts.reindex(pd.Index(groups, dtype=object))
    marginals = {}
    for a in names:
        summed = (
            pd.DataFrame(cms, columns=list(CELLS))
            .groupby(levels[a].to_numpy(), sort=True)
            .sum()
            .rename_axis("group")
        )
        with warnings.catch_warnings():  # the intersections' warning says it
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            table = group_metrics(
                counts=summed,
                metrics=metrics,
                smoothing=None,
                zero_division=np.nan,
                confidence_level=confidence_level,
                interval_method="auto",
                random_state=child_seed(seed, "marginal", a),
            )
        keep = ["n"] + [f"{m}{s}" for m in metrics for s in ("", "_low", "_high")]
        marginals[a] = table[keep]
    return marginals, parts


def audit_counts(groups, cms, name, data, settings, title, *, decide=True):
    """The binary audit of the per-group ``(TP, FN, FP, TN)`` matrices ``cms``.

    ``data`` holds the rows (for the margins of intersectional groups) or the
    counts; the matrices are counted once, by the caller. ``decide=False``
    leaves out the MATCH verdicts and detectable gaps (:func:`decide_match`),
    for a caller that adjusts the p-values over a larger family first.
    Intersectional groups get the structured estimates and interaction tests of
    ``IntersectionalSmoothing()`` beside another smoothing when ``decide`` (the
    audit of binary targets, not each class of a multiclass audit), and always
    when the smoothing is an :class:`IntersectionalSmoothing`.
    """
    check_all_pairs(settings, len(groups))
    resolved = settings["resolved"]
    smoothing = settings["smoothing"]
    tests = settings["tests"]
    alpha, confidence_level = settings["alpha"], settings["confidence_level"]
    correction, reference = settings["correction"], settings["reference"]
    seed = settings["seed"]
    table = group_metrics(
        counts=pd.DataFrame(
            cms, columns=list(CELLS), index=pd.Index(groups, name=name)
        ),
        metrics=resolved,
        smoothing=smoothing,
        reference=reference,
        zero_division=np.nan,
        confidence_level=confidence_level,
        interval_method="auto",
        random_state=child_seed(seed, "ci"),
    )
    ref = reference_counts(cms, reference, groups=groups)
    frame = table[["n", "n_pos", "n_neg"]].copy()
    for m in resolved:
        frame[m] = table[m]
        frame[f"{m}_low"] = table[f"{m}_low"]
        frame[f"{m}_high"] = table[f"{m}_high"]
        frame[f"{m}_undefined"] = table[f"{m}_undefined"]
        source = f"{m}_smoothed" if smoothing is not None else m
        frame[f"{m}_smoothed"] = table[source]
        frame[f"{m}_smoothed_low"] = table[f"{source}_low"]
        frame[f"{m}_smoothed_high"] = table[f"{source}_high"]
        frame[f"{m}_reference"] = compute_metric(m, ref, zero_division=np.nan)
        # the range of the group's value that the MATCH test accepts (below)
        frame[f"{m}_interval_low"] = np.nan
        frame[f"{m}_interval_high"] = np.nan

    match = None
    if "match" in tests:
        # by position: the counts of group k under the key k; the test compares
        # each group with a sample independent of it (the others for "total")
        others = cms.sum(axis=0) - cms if _is_total(reference) else ref
        with warnings.catch_warnings():  # one warning by label, below
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            result = match_test(
                counts={k: row for k, row in enumerate(cms)},
                metric=resolved,
                reference=others,
                correction=correction,
                family=settings["family"],
                alpha=alpha,
                confidence_level=1.0 - alpha,  # the reference range's coverage
                n_resamples=settings["n_resamples"],
                random_state=child_seed(seed, "match"),
            )
        match = result.to_frame()
        position = match["group"].to_numpy(dtype=np.int64)
        match["group"] = groups[position]
        for m in resolved:
            rows = match[match["metric"] == m]
            at = position[(match["metric"] == m).to_numpy()]
            for col, col_name in (
                ("p_lower_tail", "match_lower"),
                ("p_upper_tail", "match_upper"),
                ("p_value", "match_p_value"),
                ("p_adjusted", "match_p_adjusted"),
            ):
                values = np.full(len(frame), np.nan)
                values[at] = rows[col].to_numpy(dtype=float)
                frame[f"{m}_{col_name}"] = values
            for end in ("low", "high"):
                values = np.full(len(frame), np.nan)
                values[at] = rows[f"reference_range_{end}"].to_numpy(dtype=float)
                frame[f"{m}_interval_{end}"] = values
            reject = np.zeros(len(frame), dtype=bool)
            reject[at] = rows["reject"].to_numpy(dtype=bool)
            frame[f"{m}_match_reject"] = reject
        if decide:
            decide_match(
                frame, resolved, cms, others, settings, _family_sizes(match, settings)
            )

    separation = violated = None
    if "separation" in tests:
        with warnings.catch_warnings():  # one warning by label, below
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            res = separation_test(
                counts=cms,  # group k at position k
                reference=separation_reference(settings, groups),
                alpha=alpha,
                correction=correction,
                method="auto",  # exact test for small cells, score test otherwise
            )
        separation = res.to_frame()
        for col in ("group_a", "group_b"):
            at = separation[col].to_numpy(dtype=object) != "rest"
            labels = separation[col].to_numpy(dtype=object)
            labels[at] = groups[labels[at].astype(np.int64)]
            separation[col] = labels
        violated = bool(res.violated)
        separation_columns(frame, separation)

    marginals, parts = _marginals(data, groups, cms, resolved, confidence_level, seed)
    crossed, crossed_note = None, None
    own = isinstance(smoothing, IntersectionalSmoothing)
    if marginals is not None and (own or decide):
        # the report's own smoothing when it is the structured one, the default
        # IntersectionalSmoothing beside it otherwise
        crossed, crossed_note = intersections(
            smoothing if own else IntersectionalSmoothing(),
            groups,
            cms,
            "|".join(str(a) for a in marginals),
            resolved,
            confidence_level=confidence_level,
            alpha=alpha,
            seed=child_seed(seed, "intersections"),
        )
        if crossed is not None:
            crossed.attrs["report_smoothing"] = own
    return AuditReport(
        frame=frame,
        marginals=marginals,
        parts=parts,
        intersections=crossed,
        intersections_note=crossed_note,
        overall={
            m: float(compute_metric(m, cms.sum(axis=0), zero_division=np.nan))
            for m in resolved
        },
        match=match,
        separation=separation,
        separation_violated=violated,
        metrics=resolved,
        alpha=alpha,
        confidence_level=confidence_level,
        correction=correction,
        smoothing=_describe(smoothing),
        reference=reference if np.ndim(reference) == 0 else "given",
        title=title,
        family=settings["family"],
        tolerance=settings.get("tolerance", TOLERANCE),
    )


def _family_sizes(match, settings):
    """Per metric, the number of MATCH tests in its correction family."""
    counts = match.groupby("metric")["p_value"].count()
    if settings["family"] == "all":
        return dict.fromkeys(counts.index, int(counts.sum()))
    return counts.to_dict()


def decide_match(frame, resolved, cms, others, settings, n_tests):
    """Per metric: ``<m>_detectable_gap`` and ``<m>_verdict`` of ``frame``.

    ``others`` are the samples the MATCH test compared each group with;
    ``n_tests`` maps each metric to the number of tests of its correction
    family.
    """
    alpha, correction = settings["alpha"], settings["correction"]
    n = cms.sum(axis=1)
    n_int = np.rint(n).astype(np.int64)
    for m in resolved:
        # one gap among the family's tests is rejected at alpha / n_tests by
        # holm, bonferroni and fdr_bh alike
        single = alpha / max(n_tests.get(m, 0), 1) if correction else alpha
        metric = get_metrics(m)[0]
        gap = np.full(len(frame), np.nan)
        if metric.family in ("binomial", "joint_ratio"):
            k = cms[:, list(metric.denominator)].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(n > 0, k / np.where(n > 0, n, 1), 0.0)
            gap = detectable_gaps(m, others, n_int, share, alpha=single)
        frame[f"{m}_detectable_gap"] = gap
        frame[f"{m}_verdict"] = verdicts(
            frame, m, gap, tolerance=settings.get("tolerance", TOLERANCE)
        )


#: The most groups of an audit that compares every pair of groups
#: (``separation_pairs="all"``): 19,900 pairs per rate.
MAX_ALL_PAIRS_GROUPS = 200


def check_all_pairs(settings, n_groups):
    """Refuse, before any work, an all-pairs separation test over too many groups."""
    if (
        "separation" not in settings["tests"]
        or settings.get("separation_pairs", "reference") != "all"
        or n_groups <= MAX_ALL_PAIRS_GROUPS
    ):
        return
    pairs = n_groups * (n_groups - 1) // 2
    raise ValueError(
        f"separation_pairs='all' compares every pair of groups: {n_groups:,} groups "
        f"make {pairs:,} comparisons per rate, beyond the limit of "
        f"{MAX_ALL_PAIRS_GROUPS} groups; each comparison would also have almost no "
        f"power after the correction. Use separation_pairs='reference' (each group "
        f"against everyone else, {n_groups:,} comparisons), or audit fewer groups."
    )


def separation_reference(settings, groups):
    """The ``reference`` of :func:`~sklearn_smallfair.stats.separation_test` for
    the audit's settings, with the groups at positions ``0 .. K - 1``: None for
    every pair; else the position of a reference group, or ``"rest"`` (a
    two-sample test needs disjoint samples, so ``"total"`` and tables of counts
    compare each group with everyone else)."""
    if settings.get("separation_pairs", "reference") == "all":
        return None
    reference = settings["reference"]
    if isinstance(reference, str) and reference in ("rest", "total"):
        return "rest"
    if np.ndim(reference) == 0:
        at = np.flatnonzero([g == reference for g in groups.tolist()])
        if at.size == 1:
            return int(at[0])
    return "rest"


def separation_columns(frame, separation):
    """``tpr_separation_p_adjusted`` and ``fpr_separation_p_adjusted``: per
    group, the smallest adjusted p-value of the comparisons involving it."""
    position = {g: k for k, g in enumerate(frame.index.tolist())}
    for m in ("tpr", "fpr"):
        rows = separation[separation["metric"] == m]
        best = np.full(len(frame), np.inf)
        p = rows["p_adjusted"].to_numpy(dtype=float)
        for col in ("group_a", "group_b"):
            at = np.array([position.get(g, -1) for g in rows[col].tolist()], int)
            has = (at >= 0) & ~np.isnan(p)
            np.minimum.at(best, at[has], p[has])
        frame[f"{m}_separation_p_adjusted"] = np.where(np.isinf(best), np.nan, best)


def warn_undefined(frame, resolved, where=""):
    """One warning naming every undefined (0/0) metric and its groups."""
    undefined = [
        f"{m} for {format_labels(frame.index[frame[f'{m}_undefined'].to_numpy()])}"
        for m in resolved
        if frame[f"{m}_undefined"].any()
    ]
    if undefined:
        warnings.warn(
            f"undefined (0/0) metrics{where}: {'; '.join(undefined)}. The report "
            f"marks them (<metric>_undefined), their tests are NaN, and their "
            f"smoothed values are defined.",
            UndefinedGroupMetricWarning,
            stacklevel=3,
        )
