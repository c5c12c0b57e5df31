"""Intersectional groups in the audit: the structured estimate of each
intersection beside its raw value, and whether it departs from what its
attributes' main effects explain."""

import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._confusion import CELLS
from .._output import display_label
from ..metrics import group_metrics
from ._format import metric_label, plain

__all__ = ["interaction_sentences", "intersections"]

#: Metrics with an interaction test (a numerator out of a denominator).
TESTED = ("tpr", "fnr", "fpr", "tnr", "ppv", "fdr", "npv", "for")


def intersections(
    smoothing, groups, cms, name, metrics, *, confidence_level, alpha, seed
):
    """The structured estimates and interaction tests of intersectional groups,
    with ``smoothing`` (an :class:`IntersectionalSmoothing`).

    Returns ``(table, note)``: a frame indexed by the groups with, per metric,
    ``<m>_structured`` and its interval (the audit's confidence level, the
    package's default interval for smoothed values), and for the binomial
    metrics the other intersections' main-effects prediction ``<m>_predicted``
    and the interaction test's Holm-adjusted p-value over the intersections
    ``<m>_interaction_p`` and decision ``<m>_interaction``; ``note`` says why
    there is no table (``None`` with one).
    """
    counts = pd.DataFrame(
        cms, index=pd.Index(groups, dtype=object, name=name), columns=list(CELLS)
    )
    try:
        with warnings.catch_warnings():  # the audit's own warnings say it
            warnings.simplefilter("ignore")
            fitted = clone(smoothing).fit(counts)
            table = group_metrics(
                counts=counts,
                metrics=metrics,
                smoothing=smoothing,
                zero_division=np.nan,
                confidence_level=confidence_level,
                random_state=seed,
            )
    except ValueError as exc:
        return None, str(exc)
    out = pd.DataFrame(index=table.index)
    for m in metrics:
        for suffix in ("", "_low", "_high"):
            out[f"{m}_structured{suffix}"] = table[f"{m}_smoothed{suffix}"]
        if m in TESTED:
            test = fitted.interaction_test(m, alpha=alpha, correction="holm")
            out[f"{m}_predicted"] = test["predicted"].to_numpy()
            out[f"{m}_interaction_p"] = test["pvalue_adjusted"].to_numpy()
            out[f"{m}_interaction"] = test["reject"].to_numpy()
    out["strength"] = fitted.strength_
    out.attrs["lam"] = float(fitted.lam_)
    return out, None


def _attributes(report):
    names = [display_label(a) for a in report.marginals]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def interaction_sentences(report, metric):
    """Whether each gap, and each intersection that departs from its main
    effects, is more than its attributes explain, in words."""
    table = report.intersections
    L = metric_label(metric)
    if table is None or f"{metric}_interaction_p" not in table:
        return ""
    attrs = _attributes(report)
    f = report.frame
    tested = table[f"{metric}_interaction_p"].notna()
    family = int(tested.sum())
    how = (
        f"test against the other intersections' main effects, Holm-adjusted over the "
        f"{family} intersections with a {L} defined"
    )
    texts = []
    gaps = f.index[f.get(f"{metric}_verdict", pd.Series("", f.index)) == "gap"]
    departs = table.index[table[f"{metric}_interaction"].to_numpy(dtype=bool)]
    for g in list(dict.fromkeys([*gaps, *departs]))[:5]:
        observed = f.loc[g, metric]
        predicted = table.loc[g, f"{metric}_predicted"]
        p = table.loc[g, f"{metric}_interaction_p"]
        if np.isnan(p):
            continue
        label = display_label(plain(g))
        what = f"the {L} gap of {label}" if g in gaps else f"the {L} of {label}"
        verdict = (
            "is"
            if table.loc[g, f"{metric}_interaction"]
            else "is not shown to be"  # no evidence, not evidence of none
        )
        texts.append(
            f"{what[0].upper()}{what[1:]} ({observed:.2f}) {verdict} more than its "
            f"{attrs} explain: their main effects predict {predicted:.2f} "
            f"({how}: p = {p:.3g})."
        )
    if not departs.size:
        texts.append(
            f"No intersection's {L} departs from what its {attrs} explain at "
            f"alpha = {report.alpha:g} ({how}); with few people an intersection "
            f"would have to depart far to be found (see the user guide's page on "
            f"intersectional groups for the test's power)."
        )
    return " ".join(texts)
