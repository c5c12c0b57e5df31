"""The page's drill-down of intersectional groups: which attribute drives a gap."""

import numpy as np
import pandas as pd

from .._output import display_label
from ._format import metric_label, plain
from ._intersections import interaction_sentences
from ._templates import ci_text, macro, num, table

__all__ = ["drilldown"]

VERDICT_CLASS = {
    "gap": "v-gap",
    "no gap detected": "v-ok",
    "inconclusive": "v-unsure",
    "undefined": "v-undef",
    "not tested": "v-none",
}


def drilldown(report, prefix=""):
    """Per metric: the attributes' marginal values beside the intersections."""
    marginals = report.marginals
    attrs = list(marginals)
    level = f"{report.confidence_level:.0%}"
    metrics = []
    for m in report.metrics:
        L = metric_label(m)
        overall = report.overall.get(m, np.nan)
        rows = []
        for a in attrs:
            for lvl, r in marginals[a].iterrows():
                rows.append(
                    {
                        "attribute": display_label(a),
                        "level": display_label(lvl),
                        "n": int(r["n"]),
                        "value": ci_text(r[m], r[f"{m}_low"], r[f"{m}_high"]),
                        "diff": "undefined"
                        if np.isnan(r[m])
                        else f"{r[m] - overall:+.2f}",
                    }
                )
        heads = {
            "level": ("Level", "A value of the attribute"),
            "n": ("People", "People with this level, over all intersections"),
            "value": (f"{L} [{level} CI]", f"{L} of the people with this level"),
            "diff": ("Gap to overall", f"The level's {L} minus the overall {L}"),
        }
        metrics.append(
            {
                "label": L,
                "overall": num(overall, 3),
                "driver": _driver(report, m),
                "interaction": interaction_sentences(report, m),
                "structured": _structured_table(report, m),
                "cross": _cross(report, m, attrs) if len(attrs) == 2 else None,
                "margins": table(
                    pd.DataFrame(rows).set_index("attribute"),
                    heads,
                    index=("Attribute", "One column of the sensitive features"),
                    cls="data margins",
                ),
            }
        )
    note = report.intersections_note
    return macro("drilldown")(
        {"prefix": prefix, "attrs": attrs, "metrics": metrics, "note": note}
    )


def _structured_table(report, metric):
    """Per intersection: raw, the report's smoothing, the structured estimate
    and the main effects' prediction, with the interaction test.

    The report's smoothed value has its own column only when the report's
    smoothing is not the structured one (and there is one).
    """
    crossed = report.intersections
    if crossed is None:
        return None
    f = report.frame.reindex(crossed.index)
    L = metric_label(metric)
    level = f"{report.confidence_level:.0%}"

    def cis(frame, column):
        return [
            ci_text(v, lo, hi)
            for v, lo, hi in zip(
                frame[column], frame[f"{column}_low"], frame[f"{column}_high"]
            )
        ]

    columns = {"n": f["n"].astype(int).to_numpy(), "raw": cis(f, metric)}
    heads = {
        "n": ("People", "People in the intersection"),
        "raw": (f"Raw {L} [{level} CI]", f"The intersection's own {L}"),
    }
    smoothed, own = _report_smoothing(report)
    if smoothed is not None and all(
        f"{metric}_smoothed{s}" in f for s in ("", "_low", "_high")
    ):
        columns["smoothed"] = cis(f, f"{metric}_smoothed")
        heads["smoothed"] = (
            f"{smoothed} [{level} CI]",
            f"The report's smoothed {L} ({report.smoothing})",
        )
    columns["structured"] = cis(crossed, f"{metric}_structured")
    heads["structured"] = (
        f"Structured [{level} CI]",
        "Borrowing strength through the attributes' main effects "
        + (
            f"(the report's smoothing, {report.smoothing})"
            if own
            else "(IntersectionalSmoothing)"
        ),
    )
    rows = pd.DataFrame(columns, index=[display_label(plain(g)) for g in crossed.index])
    if f"{metric}_predicted" in crossed:
        rows["predicted"] = [num(v) for v in crossed[f"{metric}_predicted"]]
        rows["p"] = [
            "-" if np.isnan(p) else f"{p:.3g}" + (" *" if r else "")
            for p, r in zip(
                crossed[f"{metric}_interaction_p"], crossed[f"{metric}_interaction"]
            )
        ]
        heads["predicted"] = (
            "Main effects",
            "What the attributes alone predict, fitted on the other intersections",
        )
        heads["p"] = (
            "Interaction p",
            "Test of the intersection against the main effects of the others, "
            "Holm-adjusted over the intersections (* departs)",
        )
    return table(
        rows, heads, index=("Intersection", "The group"), cls="data structured"
    )


def _report_smoothing(report):
    """The header of the report's smoothed values beside the structured ones
    (``None`` without smoothing or when the structured estimate is the
    report's smoothing), and whether it is."""
    crossed = report.intersections
    kind = str(report.smoothing).split("(", 1)[0]
    own = bool(crossed.attrs.get("report_smoothing", kind == "IntersectionalSmoothing"))
    if own or kind == "none":
        return None, own
    return ("Cross-Prior" if kind == "CrossPriorSmoothing" else "Smoothed"), own


def _cross(report, metric, attrs):
    """Two attributes: levels of one as rows, of the other as columns, margins."""
    a, b = attrs
    f, parts = report.frame, report.parts
    ma, mb = report.marginals[a], report.marginals[b]
    cols = list(mb.index)
    rows = []
    for r in ma.index:
        cells = []
        for c in cols:
            hit = parts.index[(parts[a] == r) & (parts[b] == c)]
            if not len(hit):
                cells.append(None)
                continue
            cell = report.cell(hit[0], metric)
            cells.append(
                {
                    "cls": VERDICT_CLASS.get(cell["verdict"], "v-none"),
                    "text": cell["text"],
                    "value": num(cell["value"]),
                    "n": int(f.loc[hit[0], "n"]),
                }
            )
        rows.append((plain(r), cells, num(ma.loc[r, metric])))
    return {
        "a": a,
        "b": b,
        "cols": [plain(c) for c in cols],
        "tip": f"{metric_label(metric)} of the row's level over all",
        "rows": rows,
        "foot": [num(mb.loc[c, metric]) for c in cols],
        "overall": num(report.overall.get(metric, np.nan)),
    }


def _driver(report, metric):
    """One sentence per gap: the attribute whose level's margin is farthest from
    the overall value. Only gaps are drilled into: the largest raw difference of
    a non-rejected cell is most often the smallest group's noise."""
    f = report.frame
    L = metric_label(metric)
    overall = report.overall.get(metric, np.nan)
    gaps = f.index[f.get(f"{metric}_verdict", pd.Series("", f.index)) == "gap"]
    focus = list(gaps)
    if not focus:
        return f"No {L} gap was found, so no attribute is named as driving one."
    if np.isnan(overall):
        return f"No {L} value to drill into."
    texts = []
    for g in focus[:3]:
        levels = report.parts.loc[g]
        margins = {
            a: report.marginals[a].loc[levels[a], metric] for a in report.marginals
        }
        dev = {a: v - overall for a, v in margins.items() if not np.isnan(v)}
        if not dev:
            continue
        top = max(dev, key=lambda a: abs(dev[a]))
        rest = "; ".join(
            f"{display_label(a)} = {display_label(levels[a])}: {num(margins[a])}"
            for a in dev
            if a != top
        )
        texts.append(
            f"{display_label(plain(g))}'s gap ({L} "
            f"{f.loc[g, metric]:.2f} against {f.loc[g, f'{metric}_reference']:.2f} "
            f"for {report._ref_word()}) follows "
            f"{display_label(top)} = {display_label(levels[top])} most: the "
            f"people with that level have {L} {margins[top]:.2f} against "
            f"{overall:.2f} overall" + (f" ({rest})." if rest else ".")
        )
    return " ".join(texts) or f"No {L} value to drill into."
