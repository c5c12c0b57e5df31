"""The audit report as one self-contained HTML page, readable at 2 to 100 groups.

The page loads nothing and runs no script (its content security policy forbids
them): the summary matrix is sorted by radio buttons and CSS (one copy of the
matrix per order, the checked one shown), long lists fold into ``<details>``,
wide tables scroll inside their own container on screen and wrap in print.
"""

import html

import numpy as np
import pandas as pd

from .. import __version__
from .._output import display_label
from ..metrics import get_metric
from ._detectable import POWER

__all__ = ["render"]

#: Findings shown above the fold; the rest are folded by kind.
TOP_FINDINGS = 5
#: Pairwise separation comparisons shown besides the rejections (largest gaps).
TOP_PAIRS = 8
#: Groups from which the per-group table is folded.
FOLD_GROUPS = 12

_KINDS = {
    "gap": "Gaps",
    "outside": "Outside the reference's range, not significant after adjustment",
    "separation": "Separation (equalized odds)",
    "undefined": "Undefined metrics",
    "inconclusive": "Differences of 0.05 or more that the tests do not reject",
    "blind": "What the audit could not see",
    "small": "Small groups",
}
_CLASS = {
    "gap": "v-gap",
    "no gap detected": "v-ok",
    "inconclusive": "v-unsure",
    "undefined": "v-undef",
    "not tested": "v-none",
}
_ORDERS = (
    ("evidence", "Strongest evidence first"),
    ("size", "Smallest group first"),
    ("name", "By name"),
)


def esc(text):
    """Displayable (control and bidirectional characters shown) and escaped."""
    return html.escape(display_label(text))


def _label(metric):
    return metric.upper() if len(metric) <= 4 else metric


def _describe(metric):
    try:
        return get_metric(metric).description
    except ValueError:  # pragma: no cover - audited metrics are known
        return metric


def _p(p):
    if np.isnan(p):
        return "undefined"
    return f"{p:.1e}" if p < 1e-4 else f"{p:.2g}"


def _num(x, digits=2):
    return "undefined" if np.isnan(x) else f"{x:.{digits}f}"


def _head(text, tip):
    """A header cell: readable words with a tooltip explaining the column."""
    return f'<th scope="col"><abbr title="{html.escape(tip)}">{text}</abbr></th>'


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
        (f"m{k}", f"{_label(m)} gaps first") for k, m in enumerate(report.metrics)
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
    tip = html.escape(display_label(cell["text"]))
    if v == "undefined":
        body = '<span class="big">0/0</span><span class="small">undefined</span>'
    else:
        d = cell["difference"]
        p = cell["p_adjusted"]
        mark = "&#8224;" if cell["outside"] else ""
        body = f'<span class="big">{d:+.2f}{mark}</span>'
        if not np.isnan(p):
            body += f'<span class="small">p = {_p(p)}</span>'
        if v != "gap" and not compact:
            body += f'<span class="small">{html.escape(cell["short"])}</span>'
    return f'<td class="{_verdict_class(cell)}" title="{tip}">{body}</td>'


def _chunks(report, order):
    """The rows of the matrix cut in side-by-side columns for many groups."""
    if len(order) <= FOLD_GROUPS:
        return [order]
    width = 150 + 75 * len(report.metrics)  # pixels of one table, about
    side = max(1, min(4, 1150 // width))
    rows = max(FOLD_GROUPS, -(-len(order) // side))
    return [order[k : k + rows] for k in range(0, len(order), rows)]


def _matrix(report, order, cells, key):
    f = report.frame
    ref = report._ref_word()
    compact = len(order) > FOLD_GROUPS
    heads = [
        _head("Group", "The group (its label as given)"),
        _head("People", "Number of people in the group (n)"),
    ]
    for m in report.metrics:
        heads.append(
            _head(
                _label(m),
                f"{_describe(m)}. Each cell: the group's value minus {ref}'s "
                f"(large; on the metric's scale, a difference of proportions for "
                f"a rate), the MATCH test's adjusted p-value, and for a "
                f"non-rejection the smallest gap the audit detects at the group's "
                f"size with {POWER:.0%} power"
                + (" (hover a cell)" if compact else "")
                + ". Hover a cell for the whole sentence.",
            )
        )
    tables = []
    for chunk in _chunks(report, order):
        rows = [
            f'<tr><th scope="row">{esc(_plain(g))}</th>'
            f'<td class="n">{int(f.loc[g, "n"]):,}</td>'
            + "".join(_matrix_cell(c, compact) for c in cells[g])
            + "</tr>"
            for g in chunk
        ]
        tables.append(
            f'<div class="scroll"><table class="matrix{" compact" * compact}">'
            f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}"
            "</tbody></table></div>"
        )
    return f'<div class="view view-{key}">{"".join(tables)}</div>'


def _plain(group):
    value = group.item() if isinstance(group, np.generic) else group
    if isinstance(value, tuple):
        return " & ".join(str(display_label(v)) for v in value)
    return value


def _legend(report):
    items = (
        ("v-gap", "gap", "The MATCH test rejects, after the adjustment"),
        (
            "v-unsure",
            "inconclusive at this size",
            "Not rejected, but the group's interval allows a gap the audit would miss",
        ),
        (
            "v-ok",
            "no gap above the detectable size",
            "Not rejected, and the group's interval holds the reference's value "
            f"and no gap as large as the one the audit detects with {POWER:.0%} "
            "power at the group's size",
        ),
        (
            "v-blind",
            "no gap detectable at this size",
            f"At the group's size no gap reaches {POWER:.0%} power: the audit "
            "cannot see a gap, whatever the data",
        ),
        ("v-undef", "undefined (0/0)", "No one in the metric's denominator"),
        (
            "",
            "&#8224; outside the reference's range, not rejected",
            f"The value lies outside the reference's {1 - report.alpha:.0%} "
            "range at the group's size but the adjusted test does not reject; "
            "hover the cell for why (the adjustment for many tests, or a small n)",
        ),
    )
    spans = "".join(
        f'<span class="key {cls}" title="{html.escape(tip)}">{text}</span>'
        for cls, text, tip in items
    )
    return f'<p class="legend">{spans}</p>'


def _summary(report, cells, prefix=""):
    orders = _orders(report, cells)
    radios = "".join(
        f'<input type="radio" name="{prefix}order" id="{prefix}order-{key}"'
        f"{' checked' if k == 0 else ''}>"
        f'<label for="{prefix}order-{key}">{text}</label>'
        for k, (key, text) in enumerate(_order_keys(report))
    )
    views = "".join(
        _matrix(report, orders[key], cells, key) for key, _ in _order_keys(report)
    )
    counts = report._verdict_counts()
    sep = ""
    if report.separation_violated is not None:
        word = "violated" if report.separation_violated else "no violation detected"
        sep = f" Separation (equalized odds): <strong>{word}</strong>."
    return (
        "<section id='summary'><h2>Summary</h2>"
        f'<p class="verdict">{html.escape(counts)}{sep}</p>'
        f"{_legend(report)}"
        f'<div class="sorter"><span class="sort-by">Sort:</span>{radios}{views}'
        "</div></section>"
    )


# =====================================================================================
# findings
# =====================================================================================
def _findings(report):
    ranked = report._ranked()
    top = ranked[:TOP_FINDINGS]
    rest = ranked[TOP_FINDINGS:]
    out = ["<section id='findings'><h2>Findings</h2>"]
    out.append(
        "<ol class='top'>"
        + "".join(f"<li>{esc(text)}</li>" for _, _, text in top)
        + "</ol>"
    )
    if rest:
        out.append(
            f"<details class='more'><summary>{len(rest)} more finding(s), by "
            "kind</summary>"
        )
        for kind, title in _KINDS.items():
            items = [text for k, _, text in rest if k == kind]
            if items:
                out.append(
                    f"<h3>{html.escape(title)} ({len(items)})</h3><ul>"
                    + "".join(f"<li>{esc(t)}</li>" for t in items)
                    + "</ul>"
                )
        out.append("</details>")
    out.append("</section>")
    return "".join(out)


# =====================================================================================
# tables
# =====================================================================================
def _table(frame, heads, *, index=None, cls="data"):
    """An escaped table with readable headers and tooltips.

    ``heads`` maps each column to ``(header, tooltip)``; ``index`` is the header
    of the row labels (``None``: no row labels).
    """
    cols = "".join(_head(*heads[c]) for c in frame.columns)
    first = _head(*index) if index else ""
    columns = [[_cell_text(v) for v in frame[c].tolist()] for c in frame.columns]
    labels = [
        f'<th scope="row">{esc(_plain(label))}</th>' if index else ""
        for label in frame.index
    ]
    rows = [
        f"<tr>{th}{''.join(f'<td>{v}</td>' for v in values)}</tr>"
        for th, values in zip(labels, zip(*columns))
    ]
    return (
        f'<div class="scroll"><table class="{cls}"><thead><tr>{first}{cols}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cell_text(value):
    """A table cell's escaped text: numbers formatted, labels made displayable."""
    text = _text(value)
    if isinstance(text, str) and text.isascii() and text.isprintable():
        return html.escape(text)
    return esc(text)


def _text(value):
    if isinstance(value, (float, np.floating)):
        return "undefined" if np.isnan(value) else f"{value:.4g}"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    return value


def _ci_text(value, low, high):
    if np.isnan(value):
        return "undefined"
    if np.isnan(low) or np.isnan(high):
        return f"{value:.3g}"
    return f"{value:.3g} [{low:.2f}, {high:.2f}]"


def _groups_table(report):
    f = report.frame
    level = f"{report.ci:.0%}"
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
        L = _label(m)
        add(
            m,
            [_ci_text(*t) for t in zip(f[m], f[f"{m}_ci_low"], f[f"{m}_ci_high"])],
            f"{L} [{level} CI]",
            f"{_describe(m)}: the group's raw value and its {level} confidence "
            "interval (where its true value may be)",
        )
        s = f"{m}_smoothed"
        add(
            s,
            [_ci_text(*t) for t in zip(f[s], f[f"{s}_ci_low"], f[f"{s}_ci_high"])],
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
                f"{_num(lo)} to {_num(hi)}"
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
                    _num(abs(x)) if not np.isnan(x) else "none"
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
            f"<h3>{_label(m)}</h3>"
            + _table(
                out[cols],
                heads,
                index=("Group", "The group (its label as given)"),
            )
        )
    table = "".join(tables)
    text = (
        f"<p>One table per metric. Each value with the group's {level} "
        "confidence interval in brackets; hover a header for what the column "
        "holds.</p>"
    )
    if len(f) > FOLD_GROUPS:
        return (
            "<section id='groups'><h2>Per-group metrics</h2>"
            f"<details><summary>All {len(f)} groups, one table per metric"
            f"</summary>{text}{table}</details></section>"
        )
    return f"<section id='groups'><h2>Per-group metrics</h2>{text}{table}</section>"


_MATCH_HEADS = {
    "group": ("Group", "The group"),
    "n": ("People", "Number of people in the group"),
    "metric": ("Metric", "The audited metric"),
    "score": ("Value", "The group's value of the metric"),
    "score_ci_low": ("Value CI low", "Lower end of the group's interval"),
    "score_ci_high": ("Value CI high", "Upper end of the group's interval"),
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
    "lower": ("P(value or lower)", "Lower tail probability under the reference"),
    "upper": ("P(value or higher)", "Upper tail probability under the reference"),
    "p_value": ("p", "Two-sided p-value, unadjusted"),
    "p_adjusted": ("Adjusted p", "p-value adjusted for the number of tests"),
    "p_undefined": ("p undefined", "Whether the test is undefined (0/0)"),
    "method": ("Method", "How the p-value is computed"),
    "reject": ("Rejects", "Whether the adjusted test rejects at alpha"),
}
_SEP_HEADS = {
    "metric": ("Metric", "TPR (equal opportunity) or FPR"),
    "group_a": ("Group A", "First group of the pair"),
    "group_b": ("Group B", "Second group of the pair"),
    "n_a": ("People A", "People in group A's denominator"),
    "n_b": ("People B", "People in group B's denominator"),
    "value_a": ("Value A", "Group A's rate"),
    "value_b": ("Value B", "Group B's rate"),
    "difference": ("Gap (A - B)", "Group A's rate minus group B's"),
    "difference_ci_low": ("Gap CI low", "Lower end of the gap's confidence interval"),
    "difference_ci_high": (
        "Gap CI high",
        "Upper end of the gap's confidence interval",
    ),
    "method": ("Method", "The test used for this pair"),
    "z": ("z", "The test's statistic"),
    "p_value": ("p", "p-value, unadjusted"),
    "p_adjusted": ("Adjusted p", "p-value adjusted for all pairs and metrics"),
    "reject": ("Rejects", "Whether the adjusted test rejects at alpha"),
}


def _heads_for(frame, known):
    return {
        c: known.get(c, (html.escape(str(c)).replace("_", " ").capitalize(), str(c)))
        for c in frame.columns
    }


def _match_section(report):
    m = report.match
    table = _table(m, _heads_for(m, _MATCH_HEADS), cls="data")
    return (
        "<section id='match'><h2>MATCH test</h2><p>For each group and metric: "
        "the observed value, the reference's value, the tail probabilities of "
        "the observed value under the reference's proportions at the group's "
        "size, and the p-values.</p>"
        f"<details><summary>All {len(m)} tests</summary>{table}</details>"
        "</section>"
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
    if {"difference_ci_low", "difference_ci_high"} <= set(sep.columns):
        low = sep["difference_ci_low"].to_numpy(dtype=float)
        high = sep["difference_ci_high"].to_numpy(dtype=float)
        supported = np.where(low > 0, low, np.where(high < 0, -high, 0.0))
        supported = np.nan_to_num(supported, nan=0.0)
    else:
        supported = np.zeros(len(sep))
    order = np.lexsort((p, -supported))
    keep[order[:TOP_PAIRS]] = True
    return keep


def _separation_section(report):
    sep = report.separation
    word = "violated" if report.separation_violated else "no violation detected"
    reject = sep["reject"].to_numpy(dtype=bool)
    keep = shown_pairs(sep)
    shown = sep[keep].sort_values(["reject", "p_adjusted"], ascending=[False, True])
    heads = _heads_for(sep, _SEP_HEADS)
    text = (
        f"<p>Verdict at alpha = {report.alpha:g}: <strong>{word}</strong>. "
        f"{int(reject.sum())} of {len(sep)} comparisons reject; shown: the "
        f"rejections and the {min(TOP_PAIRS, len(sep))} largest gaps the data "
        "support (the end of the gap's confidence interval nearest zero; then "
        "the smallest p-value).</p>"
    )
    full = ""
    if len(shown) < len(sep):
        full = (
            f"<details><summary>All {len(sep)} comparisons</summary>"
            f"{_table(sep, heads, cls='data full')}</details>"
        )
    return (
        "<section id='separation'><h2>Separation (equalized odds)</h2>"
        f"{text}{_table(shown, heads, cls='data')}{full}</section>"
    )


# =====================================================================================
# intersections
# =====================================================================================
def _drilldown(report):
    """Per metric: the attributes' marginal values beside the intersections."""
    marginals = report.marginals
    attrs = list(marginals)
    out = [
        "<section id='drilldown'><h2>Which attribute drives a gap</h2>"
        "<p>The groups are intersections of "
        + ", ".join(f"<em>{esc(a)}</em>" for a in attrs)
        + ". For each metric: the value of every level of each attribute alone "
        "(over all its intersections) beside the intersections' values; a gap "
        "that follows one attribute's level shows in that attribute's margin.</p>"
    ]
    level = f"{report.ci:.0%}"
    for m in report.metrics:
        L = _label(m)
        overall = report.overall.get(m, np.nan)
        out.append(f"<h3>{L} (everyone: {_num(overall, 3)})</h3>")
        out.append(f"<p class='driver'>{esc(_driver(report, m))}</p>")
        out.append('<div class="side">')
        if len(attrs) == 2:
            out.append(_cross(report, m, attrs))
        rows = []
        for a in attrs:
            t = marginals[a]
            for lvl, r in t.iterrows():
                rows.append(
                    {
                        "attribute": display_label(a),
                        "level": display_label(lvl),
                        "n": int(r["n"]),
                        "value": _ci_text(r[m], r[f"{m}_ci_low"], r[f"{m}_ci_high"]),
                        "diff": "undefined"
                        if np.isnan(r[m])
                        else f"{r[m] - overall:+.2f}",
                    }
                )
        frame = pd.DataFrame(rows)
        heads = {
            "attribute": ("Attribute", "One column of the sensitive features"),
            "level": ("Level", "A value of the attribute"),
            "n": ("People", "People with this level, over all intersections"),
            "value": (f"{L} [{level} CI]", f"{L} of everyone with this level"),
            "diff": ("Gap to everyone", f"The level's {L} minus everyone's"),
        }
        body = {k: v for k, v in heads.items() if k != "attribute"}
        out.append(
            _table(
                frame.set_index("attribute"),
                body,
                index=heads["attribute"],
                cls="data margins",
            )
        )
        out.append("</div>")
    out.append("</section>")
    return "".join(out)


def _cross(report, metric, attrs):
    """Two attributes: levels of one as rows, of the other as columns, margins."""
    a, b = attrs
    f, parts = report.frame, report.parts
    ma, mb = report.marginals[a], report.marginals[b]
    cols = list(mb.index)
    head = "".join(f'<th scope="col">{esc(_plain(c))}</th>' for c in cols) + _head(
        f"All {esc(b)}", f"{_label(metric)} of the row's level over all"
    )
    rows = []
    for r in ma.index:
        tds = []
        for c in cols:
            hit = parts.index[(parts[a] == r) & (parts[b] == c)]
            if not len(hit):
                tds.append('<td class="v-none">no one</td>')
                continue
            cell = report.cell(hit[0], metric)
            tip = html.escape(display_label(cell["text"]))
            tds.append(
                f'<td class="{_CLASS.get(cell["verdict"], "v-none")}" title="{tip}">'
                f"{_num(cell['value'])}<span class='small'>n = "
                f"{int(f.loc[hit[0], 'n'])}</span></td>"
            )
        tds.append(f'<td class="margin">{_num(ma.loc[r, metric])}</td>')
        rows.append(f'<tr><th scope="row">{esc(_plain(r))}</th>{"".join(tds)}</tr>')
    foot = "".join(f'<td class="margin">{_num(mb.loc[c, metric])}</td>' for c in cols)
    overall = report.overall.get(metric, np.nan)
    rows.append(
        f'<tr><th scope="row">All {esc(a)}</th>{foot}'
        f'<td class="margin">{_num(overall)}</td></tr>'
    )
    return (
        '<div class="scroll"><table class="cross">'
        f'<thead><tr><th scope="col">{esc(a)} \\ {esc(b)}</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _driver(report, metric):
    """One sentence: the attribute whose level's margin is farthest from everyone."""
    f = report.frame
    overall = report.overall.get(metric, np.nan)
    diff = (f[metric] - f[f"{metric}_reference"]).abs()
    gaps = f.index[f.get(f"{metric}_verdict", pd.Series("", f.index)) == "gap"]
    focus = list(gaps) if len(gaps) else ([diff.idxmax()] if diff.notna().any() else [])
    if not focus or np.isnan(overall):
        return f"No {_label(metric)} value to drill into."
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
            f"{display_label(a)} = {display_label(levels[a])}: {_num(margins[a])}"
            for a in dev
            if a != top
        )
        kind = "gap" if g in gaps else "largest difference"
        texts.append(
            f"{display_label(_plain(g))}'s {kind} ({_label(metric)} "
            f"{f.loc[g, metric]:.2f} against {f.loc[g, f'{metric}_reference']:.2f} "
            f"for {report._ref_word()}) follows "
            f"{display_label(top)} = {display_label(levels[top])} most: everyone "
            f"with that level has {_label(metric)} {margins[top]:.2f} against "
            f"{overall:.2f} overall" + (f" ({rest})." if rest else ".")
        )
    return " ".join(texts) or f"No {_label(metric)} value to drill into."


# =====================================================================================
# page
# =====================================================================================
def render_sections(report, plots, prefix=""):
    """The sections of ``report``'s page (without the notes) and their CSS.

    ``prefix`` starts every element id (and the sorting radio buttons' name), so
    that several reports' sections can share one page.
    """
    cells = _cells(report)
    sections = [_summary(report, cells, prefix), _findings(report)]
    if report.marginals:
        sections.append(_drilldown(report))
    sections.append(_groups_table(report))
    if report.separation is not None:
        sections.append(_separation_section(report))
    if report.match is not None:
        sections.append(_match_section(report))
    if plots:
        sections.append(f"<section id='plots'><h2>Plots</h2>{plots}</section>")
    if prefix:  # the generated ids; labels are escaped, so hold no quote
        sections = [
            x.replace("<section id='", f"<section id='{prefix}") for x in sections
        ]
    return sections, _order_css(report, prefix)


def render(report, plots):
    """The page of ``report`` with the ``plots`` section's HTML (may be empty)."""
    sections, css = render_sections(report, plots)
    sections.append(_HOW_TO_READ)
    return page(
        report.title,
        f"sklearn-smallfair {__version__}; {len(report.frame)} groups, "
        f"{int(report.frame['n'].sum()):,} people; reference: "
        f"{report.reference}; smoothing: {report.smoothing}; alpha = "
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


def page(title, meta, body, css=""):
    """A whole self-contained page: ``title`` and ``meta`` (text, escaped here),
    ``body`` (HTML) and the CSS added to the page's own."""
    return _PAGE.format(title=esc(title), meta=esc(meta), body=body, css=_CSS + css)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
color:#1f2328;background:#fff;line-height:1.4}
main{max-width:1200px;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d0d7de;padding-bottom:.3rem}h3{font-size:1rem}
.meta{color:#57606a;font-size:.9rem}
.verdict{font-size:1.05rem}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:right;
vertical-align:top}
thead th{background:#f6f8fa;position:sticky;top:0}
tbody th{text-align:left;background:#f6f8fa;font-weight:600;max-width:18rem;
overflow-wrap:anywhere}
table.data td{white-space:nowrap}
abbr[title]{text-decoration:underline dotted;cursor:help}
table.matrix td{min-width:6.5rem;text-align:center}
table.matrix td.n{min-width:0;text-align:right}
.big{display:block;font-weight:600;font-size:1.15em}
.small{display:block;font-size:.85em;color:#3d444d}
.v-gap{background:#f9c9c3}.v-unsure{background:#fdf0c8}
.v-ok{background:#d3eed9}.v-blind{background:#f4efe2;color:#57606a}.v-undef{background:#e6e6e6}.v-none{background:#fff}
td.margin{background:#eef3fb;font-weight:600}
.side{display:flex;flex-wrap:wrap;gap:0 1.5rem;align-items:flex-start}
.legend{font-size:.8rem;display:flex;flex-wrap:wrap;gap:.4rem}
.key{padding:.15rem .4rem;border:1px solid #d0d7de;border-radius:3px}
.sorter>input{margin-left:.8rem}.sorter label{font-size:.85rem;cursor:pointer}
.sort-by{font-size:.85rem;color:#57606a}
.view{display:none;flex-wrap:wrap;gap:0 1rem;align-items:flex-start}
table.compact td{min-width:4.2rem;padding:.1rem .35rem;line-height:1.15}
table.compact .big{font-size:1em}table.compact .small{font-size:.8em}
table.compact th{padding:.1rem .35rem}
details{margin:.5rem 0}summary{cursor:pointer;color:#0550ae}
figure{margin:1rem 0}img{max-width:100%;height:auto}
figcaption{color:#57606a;font-size:.85rem}
li{margin:.3rem 0}ol.top li{margin:.45rem 0}
@page{size:A4 landscape;margin:10mm}
@media print{
body{font-size:9pt}main{max-width:none;padding:0}
h2{break-after:avoid}
.scroll{overflow:visible}
table{font-size:7pt;max-width:100%}
th,td,table.data td{white-space:normal;overflow-wrap:anywhere;padding:.1rem .2rem}
thead th{overflow-wrap:normal;hyphens:auto}
table.matrix td{min-width:0}
thead th{position:static}
thead{display:table-header-group}tr{break-inside:avoid}
.sorter>input,.sorter label,.sort-by{display:none}
.v-gap,.v-unsure,.v-ok,.v-blind,.v-undef,td.margin,thead th,tbody th{
-webkit-print-color-adjust:exact;print-color-adjust:exact}
figure{break-inside:avoid}
}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p class="meta">{meta}</p>
{body}
</main>
</body>
</html>
"""

_HOW_TO_READ = """<section id='notes'><h2>How to read this report</h2>
<ul>
<li>The summary gives one cell per group and metric: the group's value minus
its reference's (large), the MATCH test's adjusted p-value, and for a
non-rejection the smallest gap the audit detects at the group's size with 80%
power. Red: a gap. Green: no gap above that size (the group's confidence
interval lies within it). Amber: inconclusive at this size (not rejected, but
the data allow a gap the audit would miss). Hover a cell for the full
sentence.</li>
<li>Raw values come straight from each group's confusion matrix; they are
undefined (0/0) when a group has no one in the denominator, and noisy when a group
is small.</li>
<li>Each value's bracket <code>[low, high]</code> is the group's confidence
interval: the true rates compatible with its data. A wide interval means the data
say little about the group, whatever the test says.</li>
<li>Smoothed values shrink a group's confusion matrix toward the reference's
proportions; the shrinkage fades as the group grows.</li>
<li>The MATCH test asks whether a group's value is consistent with the reference's
proportions at the group's size (the reference's range in the plot; not an
interval of the group's own value). A small p-value says the difference is unlikely
to be sample-size noise. A large p-value does not show that the group is treated
alike: small groups have little power, and the adjustment for many tests asks
more of each.</li>
<li>The separation test compares true and false positive rates between groups
(equalized odds).</li>
</ul>
</section>"""
