"""The audit of multiclass predictions: the binary audit of each class, one-vs-rest.

Every group's ``K x K`` matrix is counted once; class ``k``'s binary matrices are
its one-vs-rest matrices (:func:`~sklearn_smallfair.metrics.one_vs_rest`), so the
binary audit (metrics with intervals, smoothing, MATCH, separation, detectable
gaps, verdicts) runs on them unchanged. Its p-values are adjusted once over the
tests of every class: for each metric (MATCH) and each of TPR and FPR
(separation), one family of all groups (pairs of groups) times all classes.
"""

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._groups import _feature_columns
from .._multiclass_counts import MULTICLASS_METRICS
from .._pvalues import floor_pvalues
from .._random import child_seed
from .._references import _is_explicit_counts, reference_counts
from .._validation import check_paired_targets, format_labels
from ..exceptions import UndefinedGroupMetricWarning
from ..metrics import (
    MulticlassCounts,
    multiclass_confusion_counts,
    multiclass_metric,
    one_vs_rest,
)
from ..stats import adjust_pvalues, multiclass_match_test
from ._binary import audit_counts, decide_match, separation_columns
from ._format import class_name
from ._multiclass_report import MulticlassAuditReport

__all__ = ["audit_multiclass", "is_multiclass_counts", "multiclass_counts"]


def is_multiclass_counts(counts):
    """Whether ``counts`` holds ``K x K`` matrices (not ``(TP, FN, FP, TN)`` rows)."""
    if counts is None or isinstance(counts, pd.DataFrame):
        return False
    if isinstance(counts, MulticlassCounts):
        return True
    if isinstance(counts, Mapping):
        first = next(iter(counts.values()), None)
        return first is not None and np.ndim(first) == 2
    return np.ndim(counts) == 3


def more_than_two(y_true, y_pred):
    """Whether ``y_true`` and ``y_pred`` hold more than two classes together."""
    if y_true is None or y_pred is None:
        return False
    try:
        t, p = check_paired_targets(y_true, y_pred)
    except (ValueError, TypeError):
        return False
    both = pd.unique(np.concatenate([pd.unique(t), pd.unique(p)]).astype(object))
    return both.shape[0] > 2


def check_same_coding(y_true, y_pred):
    """Refuse two binary codings that only look like three classes together.

    ``y_true`` in ``{1, 2}`` and ``y_pred`` in ``{0, 1}`` each hold two classes
    but three together: almost always a model trained on another coding of the
    target than the audit's, not a three-class model. Audited as it stands it
    would be a three-class report of undefined rates.
    """
    t, p = check_paired_targets(y_true, y_pred)
    true, pred = pd.unique(t.astype(object)), pd.unique(p.astype(object))
    if len(true) > 2 or len(pred) > 2:
        return
    together = len(set(true) | set(pred))
    raise ValueError(
        f"y_true holds the classes {format_labels(true)} and y_pred the classes "
        f"{format_labels(pred)}: two binary codings that only look like "
        f"{together} classes together. If the model was trained on another coding "
        f"of the target, recode the predictions or the target (e.g. y_pred + 1); "
        f"if these really are classes of one multiclass problem, pass "
        f"labels=[...] listing them all."
    )


def _check_labels(labels):
    if labels is None:
        return None
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(
            f"labels must list at least two classes, got "
            f"{format_labels(np.atleast_1d(arr))}; pass every class of the "
            f"targets, e.g. labels=['low', 'mid', 'high']."
        )
    return arr


def _check_no_pos_label(pos_label, labels):
    if pos_label is not None:
        raise ValueError(
            f"pos_label={pos_label!r} names the positive class of binary targets, "
            f"but these targets are multiclass (classes {format_labels(labels)}): "
            f"the audit takes each class in turn as the positive one. Drop "
            f"pos_label (labels=[...] fixes the classes and their order), or "
            f"binarize the targets (y == {pos_label!r}) for one class alone."
        )


def _from_counts(counts, labels):
    """``(groups, labels, matrices)`` of multiclass ``counts``, checked."""
    from .._multiclass_counts import check_square as _check_square

    if isinstance(counts, MulticlassCounts):
        if counts.groups is None:
            raise ValueError(
                "counts has no groups (a MulticlassCounts counted without "
                "sensitive_features); count it with sensitive_features=..."
            )
        groups = np.asarray(counts.groups)
        given, matrices = np.asarray(counts.labels), np.asarray(counts.counts)
        if labels is not None:
            position = pd.Index(given.astype(object), dtype=object).get_indexer(
                pd.Index(labels.astype(object), dtype=object)
            )
            if (position < 0).any() or labels.shape[0] != given.shape[0]:
                raise ValueError(
                    f"labels={format_labels(labels)} must hold the classes of "
                    f"counts, {format_labels(given)}, in any order."
                )
            matrices = matrices[:, position][:, :, position]
            given = labels
        labels = given
    elif isinstance(counts, Mapping):
        groups = np.array(list(counts.keys()), dtype=object)
        matrices = np.stack([np.asarray(v) for v in counts.values()])
    else:
        matrices = np.asarray(counts)
        groups = np.arange(matrices.shape[0])
    matrices = _check_square(matrices)
    if matrices.ndim != 3:
        raise ValueError(
            f"counts must hold one K x K matrix per group, shape (n_groups, K, K); "
            f"got {matrices.shape}."
        )
    k = matrices.shape[-1]
    if labels is None:
        labels = np.arange(k)
    elif labels.shape[0] != k:
        raise ValueError(
            f"labels has {labels.shape[0]} classes but counts are {k} x {k} "
            f"matrices; pass one label per row (and column) of the matrices."
        )
    if len(set(groups.tolist())) != groups.shape[0]:
        raise ValueError("counts has duplicate group labels.")
    empty = matrices.sum(axis=(1, 2)) == 0
    if empty.any():
        raise ValueError(
            f"group(s) {format_labels(groups[empty])} in counts are empty (all "
            f"cells 0); drop them."
        )
    return groups, labels, matrices


def multiclass_counts(data, labels):
    """The groups' ``K x K`` matrices of rows or counts, and the groups' name.

    Returns ``(MulticlassCounts, name)``.
    """
    labels = _check_labels(labels)
    counts = data["counts"]
    if counts is not None:
        given = [
            n
            for n in ("y_true", "y_pred", "sensitive_features", "sample_weight")
            if data[n] is not None
        ]
        if given:
            raise ValueError(
                f"pass either rows (y_true, y_pred, sensitive_features) or counts, "
                f"not both; got counts and {', '.join(given)}."
            )
        name = "group"
        if isinstance(counts, MulticlassCounts) and counts.groups is not None:
            name = getattr(counts.groups, "name", None) or name  # a pandas Index
        groups, labels, matrices = _from_counts(counts, labels)
        _check_no_pos_label(data["pos_label"], labels)
        return MulticlassCounts(groups, labels, matrices), name
    if data["y_true"] is None or data["y_pred"] is None:
        raise ValueError(
            "pass y_true, y_pred and sensitive_features, or counts=<per-group table>."
        )
    features = data["sensitive_features"]
    if features is None:
        raise ValueError(
            "sensitive_features is required: pass the group label of every sample."
        )
    result = multiclass_confusion_counts(
        data["y_true"],
        data["y_pred"],
        sensitive_features=features,
        labels=labels,
        sample_weight=data["sample_weight"],
    )
    _check_no_pos_label(data["pos_label"], result.labels)
    if data["sample_weight"] is not None:
        empty = result.counts.sum(axis=(1, 2)) == 0
        if empty.any():
            raise ValueError(
                f"group(s) {format_labels(result.groups[empty])} have zero total "
                f"sample_weight, so their metrics are empty; drop those rows or "
                f"give them positive weight."
            )
    _, name = _feature_columns(features, _n_rows(data))
    return result, name


def _n_rows(data):
    return check_paired_targets(data["y_true"], data["y_pred"])[0].shape[0]


def audit_multiclass(counted, data, settings, title):
    """The per-class audit of :func:`audit_predictions` for multiclass targets."""
    mc, name = counted
    groups, labels = mc.groups, mc.labels
    ovr = one_vs_rest(mc.counts)  # (G, K, 4)
    per_class = _class_settings(settings, ovr.shape[0], labels)
    raw = [dict(s, correction=None) for s in per_class]  # adjusted below
    reports = []
    with warnings.catch_warnings():  # one warning for every class, below
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        for k, label in enumerate(labels):
            reports.append(
                audit_counts(
                    groups,
                    ovr[:, k],
                    name,
                    data,  # the margins of intersections are summed from ovr
                    raw[k],
                    f"{title}: class {label}",
                    decide=False,
                )
            )
    alpha, correction = settings["alpha"], settings["correction"]
    resolved = settings["resolved"]
    n_tests = {}
    if "match" in settings["tests"]:
        # one family of every group x class x metric (family="all"), or one per
        # metric over its groups x classes
        raw = {
            m: np.concatenate(
                [r.frame[f"{m}_match_p_value"].to_numpy() for r in reports]
            )
            for m in resolved
        }
        if settings["family"] == "all":
            joint = floor_pvalues(
                adjust_pvalues(np.concatenate(list(raw.values())), correction)
            )
            total = int(sum((~np.isnan(v)).sum() for v in raw.values()))
            adjusted_by = dict(zip(resolved, np.split(joint, len(resolved))))
            n_tests = dict.fromkeys(resolved, total)
        else:
            adjusted_by = {
                m: floor_pvalues(adjust_pvalues(v, correction)) for m, v in raw.items()
            }
            n_tests = {m: int((~np.isnan(v)).sum()) for m, v in raw.items()}
        for m in resolved:
            adjusted = adjusted_by[m]
            for r, p in zip(reports, np.split(adjusted, len(reports))):
                r.frame[f"{m}_match_p_adjusted"] = p
                r.frame[f"{m}_match_reject"] = p <= alpha  # NaN: not rejected
                at = (r.match["metric"] == m).to_numpy()
                where = r.frame.index.get_indexer(pd.Index(r.match["group"][at]))
                r.match.loc[at, "p_adjusted"] = p[where]
                r.match.loc[at, "reject"] = p[where] <= alpha
        for k, r in enumerate(reports):
            cms = ovr[:, k]
            reference = per_class[k]["reference"]
            if isinstance(reference, str) and reference == "total":
                others = cms.sum(axis=0) - cms
            else:
                others = reference_counts(cms, reference, groups=groups)
            decide_match(r.frame, resolved, cms, others, per_class[k], n_tests)
            last = [c for c in r.frame.columns if c.endswith("_separation_p_adjusted")]
            first = [c for c in r.frame.columns if c not in last]
            r.frame = r.frame[first + last]
    violated = None
    if "separation" in settings["tests"]:
        for m in ("tpr", "fpr"):
            sel = [(r.separation["metric"] == m).to_numpy() for r in reports]
            raw_p = np.concatenate(
                [r.separation["p_value"].to_numpy()[s] for r, s in zip(reports, sel)]
            )
            adjusted = floor_pvalues(adjust_pvalues(raw_p, correction))
            parts = np.split(adjusted, np.cumsum([s.sum() for s in sel])[:-1])
            for r, s, p in zip(reports, sel, parts):
                r.separation.loc[s, "p_adjusted"] = p
                if "reject" in r.separation:
                    r.separation.loc[s, "reject"] = p <= alpha
        for r in reports:
            separation_columns(r.frame, r.separation)  # last, as in the binary one
            r.separation_violated = bool((r.separation["p_adjusted"] <= alpha).any())
        violated = any(r.separation_violated for r in reports)
    for r in reports:
        r.correction = correction
        r.n_tests = n_tests
    _warn_undefined(reports, labels, resolved)
    matrix = None
    if settings.get("matrix_metrics"):
        matrix = _matrix_table(mc, name, settings)
    return MulticlassAuditReport(
        matrix=matrix,
        reports=dict(zip(labels.tolist(), reports)),
        labels=labels,
        counts=mc,
        separation_violated=violated,
        n_tests=n_tests,
        title=title,
    )


def _class_settings(settings, n_groups, labels):
    """Each class's settings: an explicit reference of ``K x K`` counts becomes
    the class's one-vs-rest ``(TP, FN, FP, TN)`` reference."""
    reference = settings["reference"]
    if not _is_explicit_counts(reference):
        return [settings] * labels.shape[0]
    ref = np.asarray(reference, dtype=np.float64)
    k = labels.shape[0]
    if ref.shape not in ((k, k), (n_groups, k, k)):
        raise ValueError(
            f"reference given as counts must hold the reference's {k} x {k} "
            f"matrix (rows true, columns predicted, in the order of the classes "
            f"{format_labels(labels)}), shape ({k}, {k}), or one per group, shape "
            f"({n_groups}, {k}, {k}); got shape {ref.shape}. Binary (TP, FN, FP, "
            f"TN) cells do not say which class they are of."
        )
    ovr = one_vs_rest(ref)  # (..., K, 4)
    return [dict(settings, reference=ovr[..., j, :]) for j in range(k)]


def check_matrix_metrics(matrix_metrics):
    """The whole-matrix metrics asked for, checked: a tuple (empty for None)."""
    if matrix_metrics is None:
        return ()
    if isinstance(matrix_metrics, str):
        matrix_metrics = (matrix_metrics,)
    out = tuple(dict.fromkeys(matrix_metrics))
    unknown = [m for m in out if m not in MULTICLASS_METRICS]
    if unknown:
        raise ValueError(
            f"matrix_metrics must name metrics of the whole K x K matrix, "
            f"{list(MULTICLASS_METRICS)}; got unknown {unknown}."
        )
    return out


def _matrix_reference(counts, reference, groups):
    """Each group's reference ``K x K`` matrix, shape ``(G, K, K)``."""
    total = counts.sum(axis=0)
    if _is_explicit_counts(reference):
        ref = np.asarray(reference, dtype=np.float64)
        return np.broadcast_to(ref, counts.shape).astype(np.float64)
    if isinstance(reference, str) and reference == "rest":
        return (total[None] - counts).astype(np.float64)
    if isinstance(reference, str) and reference == "total":
        return np.broadcast_to(total, counts.shape).astype(np.float64)
    position = pd.Index(groups).get_indexer([reference])[0]
    if position < 0:  # pragma: no cover - the per-class audit refused it first
        raise ValueError(f"reference={reference!r} is not a group.")
    return np.broadcast_to(counts[position], counts.shape).astype(np.float64)


def _matrix_table(mc, name, settings):
    """Per group, each whole-matrix metric: raw (with its interval), smoothed,
    the reference's value and range, and its MATCH test (one family of the
    groups per metric)."""

    groups, labels, counts = mc.groups, mc.labels, mc.counts
    ref = _matrix_reference(counts, settings["reference"], groups)
    table = pd.DataFrame(
        {"n": counts.sum(axis=(1, 2))}, index=pd.Index(groups, name=name)
    )
    smoothing = settings["smoothing"]
    smoothed = None
    if smoothing is not None:
        smoothed = clone(smoothing)._transform_matrices(counts, ref, labels=groups)
    position = np.arange(groups.shape[0])
    for m in settings["matrix_metrics"]:
        table[m] = multiclass_metric(m, counts, zero_division=np.nan)
        table[f"{m}_smoothed"] = (
            table[m]
            if smoothed is None
            else multiclass_metric(m, smoothed, zero_division=np.nan)
        )
        table[f"{m}_reference"] = multiclass_metric(m, ref, zero_division=np.nan)
        if "match" not in settings["tests"]:
            continue
        res = multiclass_match_test(
            counts=counts,
            labels=labels,
            reference=settings["reference"]
            if isinstance(settings["reference"], str)
            or _is_explicit_counts(settings["reference"])
            else int(pd.Index(groups).get_indexer([settings["reference"]])[0]),
            metric=m,
            correction=settings["correction"],
            alpha=settings["alpha"],
            confidence_level=settings["confidence_level"],
            n_resamples=settings["n_resamples"],
            random_state=child_seed(settings["seed"], "matrix", m),
        ).frame
        at = res["group"].to_numpy(dtype=np.int64)
        for column, source in (
            ("low", "score_low"),
            ("high", "score_high"),
            ("interval_low", "reference_range_low"),
            ("interval_high", "reference_range_high"),
            ("match_p_value", "p_value"),
            ("match_p_adjusted", "p_adjusted"),
        ):
            values = np.full(position.shape[0], np.nan)
            values[at] = res[source].to_numpy(dtype=float)
            table[f"{m}_{column}"] = values
        reject = np.zeros(position.shape[0], dtype=bool)
        reject[at] = res["reject"].to_numpy(dtype=bool)
        table[f"{m}_match_reject"] = reject
        table[f"{m}_match_method"] = pd.Series(
            res["method"].to_numpy(), index=table.index[at]
        )
    return table


def _warn_undefined(reports, labels, resolved):
    parts = []
    for label, r in zip(labels, reports):
        f = r.frame
        for m in resolved:
            bad = f[f"{m}_undefined"].to_numpy()
            if bad.any():
                names = format_labels(f.index[bad])
                parts.append(f"{m} of class {class_name(label)} for {names}")
    if parts:
        warnings.warn(
            f"undefined (0/0) metrics: {'; '.join(parts)}. The report marks them "
            f"(<metric>_undefined), their tests are NaN, and their smoothed values "
            f"are defined.",
            UndefinedGroupMetricWarning,
            stacklevel=4,
        )
