"""The audit report as one self-contained HTML page, readable at 2 to 100 groups.

The page loads nothing and runs no script (its content security policy forbids
them): the summary matrix is sorted by radio buttons and CSS (one copy of the
matrix per order, the checked one shown), long lists fold into ``<details>``,
wide tables scroll inside their own container on screen and wrap in print. The
markup is in the templates (:mod:`._templates`); this module turns a report into
the values its sections show.
"""

import numpy as np
import pandas as pd
from markupsafe import Markup

from .. import __version__
from .._output import display_label
from ._detectable import POWER
from ._drilldown import VERDICT_CLASS as _CLASS
from ._drilldown import drilldown
from ._format import metric_label, plain
from ._prose import headline
from ._templates import (
    ci_text,
    describe,
    fmt_p,
    macro,
    num,
    page,
    render_template,
    table,
)

__all__ = ["figure", "render", "render_sections", "shown_pairs"]


#: Findings shown above the fold; the rest are folded by kind.
TOP_FINDINGS = 5
#: Pairwise separation comparisons shown besides the rejections (largest gaps).
TOP_PAIRS = 8
#: Groups from which the per-group table is folded.
FOLD_GROUPS = 12

_KINDS = {
    "labels": "Labels that look alike",
    "gap": "Gaps",
    "outside": "Outside the reference's range, not significant after adjustment",
    "separation": "Separation (equalized odds)",
    "undefined": "Undefined metrics",
    "inconclusive": "Differences of 0.05 or more that the tests do not reject",
    "blind": "What the audit could not see",
    "small": "Small groups",
}
#: Beyond this many groups the page holds one order of the table, not one per
#: choice of the sorter (each a copy of the table).
SORT_GROUPS = 200
_ORDERS = (
    ("evidence", "Strongest evidence first"),
    ("size", "Smallest group first"),
    ("name", "By name"),
)


# =====================================================================================
# summary matrix
# =====================================================================================
def _cells(report):
    """Per group: the cells of every metric (dicts of AuditReport.cell)."""
    return {
        group: [report.cell(group, m) for m in report.metrics]
        for group in report.frame.index
    }


def _orders(report, cells):
    f = report.frame
    groups = list(f.index)

    def evidence(g):
        ps = [c["p_adjusted"] for c in cells[g]]
        gaps = sum(c["verdict"] == "gap" for c in cells[g])
        best = min((p for p in ps if not np.isnan(p)), default=2.0)
        return (-gaps, best, -max(abs(c["difference"]) for c in cells[g]))

    def by_name(g):
        return str(display_label(g))

    def metric(k):  # a gap first, then the smallest p, then the largest gap
        def key(g):
            c = cells[g][k]
            p = 2.0 if np.isnan(c["p_adjusted"]) else c["p_adjusted"]
            d = 0.0 if np.isnan(c["difference"]) else abs(c["difference"])
            return (c["verdict"] != "gap", p, -d, by_name(g))

        return key

    orders = {
        "evidence": sorted(groups, key=evidence),
        "size": sorted(groups, key=lambda g: (f.loc[g, "n"], by_name(g))),
        "name": sorted(groups, key=by_name),
    }
    for k in range(len(report.metrics)):
        orders[f"m{k}"] = sorted(groups, key=metric(k))
    return orders


def _order_keys(report):
    """``(key, label)`` of every order of the matrix: the fixed ones, per metric."""
    return [*_ORDERS] + [
        (f"m{k}", f"{metric_label(m)} gaps first") for k, m in enumerate(report.metrics)
    ]


def _order_css(report, prefix=""):
    """Show the view of the checked order (one rule per order); ``prefix`` is
    that of the radio buttons' ids (one per report on a page)."""
    rules = ",".join(
        f"#{prefix}order-{key}:checked~.view-{key}" for key, _ in _order_keys(report)
    )
    return f"{rules}{{display:flex}}"


def _verdict_class(cell):
    if cell["verdict"] == "inconclusive" and cell["short"] == "no gap detectable":
        return "v-blind"
    return _CLASS.get(cell["verdict"], "v-none")


def _matrix_cell(cell, compact):
    v = cell["verdict"]
    p = cell["p_adjusted"]
    own = v == "undefined" and np.isnan(cell["value"])
    return {
        "cls": _verdict_class(cell),
        "text": cell["text"],
        "undefined": v == "undefined",
        "undefined_big": "0/0" if own else f"{cell['value']:.2f}",
        "undefined_small": "undefined" if own else "reference 0/0",
        "big": f"{cell['difference']:+.2f}",
        "outside": cell["outside"],
        "p": None if np.isnan(p) else fmt_p(p),
        "short": cell["short"] if v != "gap" and not compact else None,
    }


def _summary(report, cells, prefix=""):
    f = report.frame
    ref = report._ref_word()
    compact = len(f) > FOLD_GROUPS
    heads = [
        ("#", "Rank of the group in the chosen order"),
        ("Group", "The group (its label as given)"),
        ("People", "Number of people in the group (n)"),
    ]
    for m in report.metrics:
        heads.append(
            (
                metric_label(m),
                f"{describe(m)}. Each cell: the group's value minus {ref}'s "
                f"(large; on the metric's scale, a difference of proportions for "
                f"a rate), the MATCH test's adjusted p-value, and for a "
                f"non-rejection the smallest gap the audit detects at the group's "
                f"size with {POWER:.0%} power"
                + (" (hover a cell)" if compact else "")
                + ". Hover a cell for the whole sentence.",
            )
        )
    shown = {
        g: {
            "label": plain(g),
            "n": f"{int(f.loc[g, 'n']):,}",
            "cells": [_matrix_cell(c, compact) for c in cells[g]],
        }
        for g in f.index
    }
    orders = _orders(report, cells)
    keys = _order_keys(report)
    if len(f) > SORT_GROUPS:
        keys = [
            (
                keys[0][0],
                f"{keys[0][1]} (one order for {len(f):,} groups; the CSV has "
                f"every column to sort by)",
            )
        ]
    views = [{"key": key, "rows": [shown[g] for g in orders[key]]} for key, _ in keys]
    separation = None
    if report.separation_violated is not None:
        separation = (
            "violated" if report.separation_violated else "no violation detected"
        )
    return macro("summary")(
        {
            "prefix": prefix,
            "headline": headline(report),
            "counts": report._verdict_counts(),
            "separation": separation,
            "tolerance": f"{report.tolerance:.2f}",
            "power": f"{POWER:.0%}",
            "range_level": f"{1 - report.alpha:.0%}",
            "orders": keys,
            "views": views,
            "heads": heads,
            "compact": compact,
        }
    )


# =====================================================================================
# findings
# =====================================================================================
def _findings(report, prefix=""):
    ranked = report._ranked()
    rest = ranked[TOP_FINDINGS:]
    by_kind = []
    for kind, title in _KINDS.items():
        items = [text for k, _, text in rest if k == kind]
        if items:
            by_kind.append((title, items))
    return macro("findings")(
        {
            "prefix": prefix,
            "top": [text for _, _, text in ranked[:TOP_FINDINGS]],
            "n_rest": len(rest),
            "rest": by_kind,
        }
    )


# =====================================================================================
# tables
# =====================================================================================
def _groups_table(report, prefix=""):
    f = report.frame
    level = f"{report.confidence_level:.0%}"
    ref = report._ref_word()
    out = pd.DataFrame(index=f.index)
    heads = {}

    def add(col, values, head, tip):
        out[col] = values
        heads[col] = (head, tip)

    add("n", f["n"].astype(int), "People", "Number of people in the group (n)")
    add("n_pos", f["n_pos"].astype(int), "Positives", "People whose true label is 1")
    add("n_neg", f["n_neg"].astype(int), "Negatives", "People whose true label is 0")
    for m in report.metrics:
        L = metric_label(m)
        add(
            m,
            [ci_text(*t) for t in zip(f[m], f[f"{m}_low"], f[f"{m}_high"])],
            f"{L} [{level} CI]",
            f"{describe(m)}: the group's raw value and its {level} confidence "
            "interval (where its true value may be)",
        )
        s = f"{m}_smoothed"
        add(
            s,
            [ci_text(*t) for t in zip(f[s], f[f"{s}_low"], f[f"{s}_high"])],
            f"{L} smoothed [{level} CI]",
            f"The group's {L} after smoothing ({report.smoothing}) with its interval",
        )
        add(
            f"{m}_reference",
            f[f"{m}_reference"],
            f"{L} of reference",
            f"{L} of the group's reference ({ref})",
        )
        add(
            f"{m}_range",
            [
                f"{num(lo)} to {num(hi)}"
                for lo, hi in zip(f[f"{m}_interval_low"], f[f"{m}_interval_high"])
            ],
            f"{L} reference range",
            f"The central {1 - report.alpha:.0%} range of {L} under the "
            "reference's proportions at the group's size: values a group like "
            "the reference shows by chance",
        )
        if f"{m}_match_p_adjusted" in f:
            add(
                f"{m}_p",
                f[f"{m}_match_p_adjusted"],
                f"{L} adjusted p",
                f"MATCH test p-value of the group's {L} against the reference, "
                f"adjusted for the {report._n_tests(m)} "
                f"{report._family_words(L)} "
                f"({report.correction or 'no correction'})",
            )
            add(
                f"{m}_gap",
                [
                    num(abs(x)) if not np.isnan(x) else "none"
                    for x in f[f"{m}_detectable_gap"]
                ],
                f"{L} detectable gap",
                f"Smallest gap of {L} from the reference (same scale, absolute) "
                f"the audit detects at the group's size with {POWER:.0%} power; "
                "'none': no gap is detectable at that size",
            )
            add(
                f"{m}_verdict",
                f[f"{m}_verdict"],
                f"{L} verdict",
                "gap, no gap detected, inconclusive at this size or undefined",
            )
    # one table per metric, with the counts: narrow enough for a printed page
    counts = ["n", "n_pos", "n_neg"]
    tables = []
    for m in report.metrics:
        cols = counts + [c for c in out.columns if c == m or c.startswith(f"{m}_")]
        tables.append(
            (
                metric_label(m),
                table(
                    out[cols], heads, index=("Group", "The group (its label as given)")
                ),
            )
        )
    return macro("groups")(
        {
            "prefix": prefix,
            "folded": len(f) > FOLD_GROUPS,
            "n_groups": len(f),
            "level": level,
            "tables": tables,
        }
    )


_MATCH_HEADS = {
    "group": ("Group", "The group"),
    "n": ("People", "Number of people in the group"),
    "metric": ("Metric", "The audited metric"),
    "score": ("Value", "The group's value of the metric"),
    "score_low": ("Value CI low", "Lower end of the group's interval"),
    "score_high": ("Value CI high", "Upper end of the group's interval"),
    "reference_score": ("Reference value", "The reference's value of the metric"),
    "reference_range_low": (
        "Reference range low",
        "Lower end of the central range of the metric for a group of this size "
        "drawn from the reference's proportions",
    ),
    "reference_range_high": (
        "Reference range high",
        "Upper end of the central range of the metric for a group of this size "
        "drawn from the reference's proportions",
    ),
    "p_lower_tail": (
        "P(value or lower)",
        "Probability of the observed value or a lower one under the reference",
    ),
    "p_upper_tail": (
        "P(value or higher)",
        "Probability of the observed value or a higher one under the reference",
    ),
    "p_value": ("p", "Two-sided p-value, unadjusted"),
    "p_adjusted": ("Adjusted p", "p-value adjusted for the number of tests"),
    "p_undefined": ("p undefined", "Whether the test is undefined (0/0)"),
    "method": ("Method", "How the p-value is computed"),
    "reject": ("Rejects", "Whether the adjusted test rejects at alpha"),
}
_SEP_HEADS = {
    "metric": ("Metric", "TPR (equal opportunity) or FPR"),
    "group_a": ("Group A", "First group of the pair"),
    "group_b": ("Group B", "The group A is compared with"),
    "n_a": (
        "Denominator A",
        "People of group A in the rate's denominator: its positives for TPR, "
        "its negatives for FPR (not the group's size)",
    ),
    "n_b": (
        "Denominator B",
        "People of B in the rate's denominator: positives for TPR, negatives for FPR",
    ),
    "value_a": ("Value A", "Group A's rate"),
    "value_b": ("Value B", "Group B's rate"),
    "difference": ("Gap (A - B)", "Group A's rate minus group B's"),
    "gap": (
        "Gap A - B [CI]",
        "Group A's rate minus group B's, with its confidence interval "
        "(Newcombe's hybrid score interval)",
    ),
    "difference_low": ("Gap CI low", "Lower end of the gap's confidence interval"),
    "difference_high": (
        "Gap CI high",
        "Upper end of the gap's confidence interval",
    ),
    "method": ("Method", "The test used for this pair"),
    "z": ("z", "The test's statistic"),
    "p_value": ("p", "p-value, unadjusted"),
    "p_adjusted": (
        "Adjusted p",
        "p-value adjusted for the comparisons of the same rate",
    ),
    "reject": ("Rejects", "Whether the adjusted test rejects at alpha"),
}


def _heads_for(frame, known):
    return {
        c: known.get(c, (str(c).replace("_", " ").capitalize(), str(c)))
        for c in frame.columns
    }


def _match_section(report, prefix=""):
    m = report.match
    return macro("match")(
        {
            "prefix": prefix,
            "n": len(m),
            "table": table(m, _heads_for(m, _MATCH_HEADS), cls="data"),
        }
    )


def shown_pairs(sep):
    """The separation comparisons shown: the rejections and the largest gaps.

    A gap's size is the bound of its confidence interval nearest zero (0 when
    the interval holds 0: the gap the data support, so that two groups of 2
    people with rates 0 and 1 do not crowd out real gaps), then the smaller
    p-value; without interval columns, the smaller p-value. Returns a boolean
    mask of the rows, at most ``TOP_PAIRS`` besides the rejections.
    """
    keep = sep["reject"].to_numpy(dtype=bool).copy()
    p = np.nan_to_num(sep["p_value"].to_numpy(dtype=float), nan=2.0)
    if {"difference_low", "difference_high"} <= set(sep.columns):
        low = sep["difference_low"].to_numpy(dtype=float)
        high = sep["difference_high"].to_numpy(dtype=float)
        supported = np.where(low > 0, low, np.where(high < 0, -high, 0.0))
        supported = np.nan_to_num(supported, nan=0.0)
    else:
        supported = np.zeros(len(sep))
    order = np.lexsort((p, -supported))
    keep[order[:TOP_PAIRS]] = True
    return keep


def _separation_columns(sep, report):
    """The separation table as the page shows it: each gap with its interval
    in one column, rates to 3 decimals, p-values as in the prose, no z (it fits
    1,280 pixels and a printed page)."""
    out = sep[["metric", "group_a", "group_b", "n_a", "n_b"]].copy()
    out["metric"] = [metric_label(m) for m in sep["metric"]]
    out["value_a"] = [num(v, 3) for v in sep["value_a"]]
    out["value_b"] = [num(v, 3) for v in sep["value_b"]]
    if {"difference_low", "difference_high"} <= set(sep.columns):
        out["gap"] = [
            "undefined" if np.isnan(d) else f"{d:+.3f} [{lo:.2f}, {hi:.2f}]"
            for d, lo, hi in zip(
                sep["difference"], sep["difference_low"], sep["difference_high"]
            )
        ]
    else:
        out["gap"] = [num(d, 3) for d in sep["difference"]]
    out["method"] = sep["method"]
    out["p_value"] = [fmt_p(p) for p in sep["p_value"]]
    out["p_adjusted"] = [fmt_p(p) for p in sep["p_adjusted"]]
    out["reject"] = sep["reject"]
    return out


def _separation_section(report, prefix=""):
    sep = report.separation.copy()
    b = sep["group_b"].to_numpy(dtype=object)
    per_rate = len(sep) // max(sep["metric"].nunique(), 1)
    rest = np.array([v == "rest" for v in b.tolist()], dtype=bool)
    if rest.any() and len(report.frame) > 2:
        sep["group_b"] = np.where(rest, "everyone else", b)
        how = f"{per_rate} per rate: each group against everyone else"
    elif len(report.frame) > 2 and len({plain(v) for v in b.tolist()}) == 1:
        how = f"{per_rate} per rate: each group against group {plain(b[0])}"
    else:
        how = f"{per_rate} per rate: every pair of groups"
    reject = sep["reject"].to_numpy(dtype=bool)
    shown = sep[shown_pairs(sep)].sort_values(
        ["reject", "p_adjusted"], ascending=[False, True]
    )
    shown, full = _separation_columns(shown, report), _separation_columns(sep, report)
    heads = _heads_for(shown, _SEP_HEADS)
    if len(shown) == len(sep):
        full = None
    else:
        full = table(full, heads, cls="data full")
    return macro("separation")(
        {
            "prefix": prefix,
            "alpha": f"{report.alpha:g}",
            "word": "violated"
            if report.separation_violated
            else "no violation detected",
            "n_reject": int(reject.sum()),
            "n": len(sep),
            "n_top": min(TOP_PAIRS, len(sep)),
            "how": how,
            "shown": table(shown, heads, cls="data"),
            "full": full,
        }
    )


# =====================================================================================
# page
# =====================================================================================
def figure(data, *, level, smoothing, range_level, shown=None):
    """The plots' ``<figure>``: a base64 PNG ``data`` and its caption (a note
    that plots need matplotlib when ``data`` is None); ``shown`` says which
    groups are drawn when not all are."""
    return macro("figure")(
        {
            "data": data,
            "shown": shown,
            "level": level,
            "smoothing": smoothing,
            "range_level": range_level,
        }
    )


def render_sections(report, plots, prefix=""):
    """The sections of ``report``'s page (without the notes) and their CSS.

    ``plots`` is the plots' HTML (:func:`figure`, may be empty). ``prefix``
    starts every element id (and the sorting radio buttons' name), so that
    several reports' sections can share one page.
    """
    cells = _cells(report)
    sections = [_summary(report, cells, prefix), _findings(report, prefix)]
    if report.marginals:
        sections.append(drilldown(report, prefix))
    sections.append(_groups_table(report, prefix))
    if report.separation is not None:
        sections.append(_separation_section(report, prefix))
    if report.match is not None:
        sections.append(_match_section(report, prefix))
    if plots:
        sections.append(macro("plots")({"prefix": prefix, "html": Markup(plots)}))
    return [str(s) for s in sections], _order_css(report, prefix)


def _reference_meta(report):
    """``everyone else (reference='rest')``: the reference's word and setting."""
    word = report._ref_word()
    ref = report.reference
    if isinstance(ref, str) and ref == "given":
        return word
    return f"{word} (reference={ref!r})"


def render(report, plots):
    """The page of ``report`` with the ``plots`` section's HTML (may be empty)."""
    sections, css = render_sections(report, plots)
    sections.append(render_template("notes.html"))
    return page(
        report.title,
        f"sklearn-smallfair {__version__}; {len(report.frame)} groups, "
        f"{int(report.frame['n'].sum()):,} people; reference: "
        f"{_reference_meta(report)}; smoothing: {report.smoothing}; alpha = "
        f"{report.alpha:g}; correction: {report.correction}"
        + (
            f" over all {report._n_tests(report.metrics[0])} MATCH tests of the "
            f"audit (the chance of any false gap is at most alpha)"
            if report.family == "all" and report.correction and report.match is not None
            else " over each metric's groups"
            if report.correction and report.match is not None
            else ""
        ),
        "\n".join(sections),
        css,
    )
