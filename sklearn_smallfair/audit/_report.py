"""The audit report: per-group tables, findings, plots, and HTML/CSV/JSON output."""

import base64
import html
import io
import json

import numpy as np

from .. import __version__
from .._output import (
    check_destination,
    csv_safe,
    display_frame,
    display_label,
    write_atomic,
)

__all__ = ["AuditReport"]

_SMALL_N = 30  # groups below this size are flagged as small in the summary


def _fmt(x, digits=3):
    """A number for prose: NaN as 'undefined'."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "undefined"
    return f"{x:.{digits}f}"


def _fmt_ci(low, high, digits=2):
    """A group's interval for prose and tables: ``[0.41, 0.80]``."""
    if np.isnan(low) or np.isnan(high):
        return "[undefined]"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _fmt_p(p):
    if np.isnan(p):
        return "undefined"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.3g}"


def _name(group):
    """A group label for prose and plots: its value (not its repr), displayable.

    Control and bidirectional characters are escaped (:func:`display_label`).
    """
    value = group.item() if isinstance(group, np.generic) else group
    if isinstance(value, tuple):
        return " & ".join(display_label(v) for v in value)
    return display_label(value)


class AuditReport:
    """Result of a fairness audit: per-group tables, findings and plots.

    Returned by :meth:`FairnessAudit.audit` and :func:`audit_predictions`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per group: ``n``, ``n_pos``, ``n_neg`` and, for every metric
        ``m``: ``m`` (raw value, NaN when undefined), ``m_ci_low``/``m_ci_high``
        (the group's own ``ci`` confidence interval: where its true value may
        be), ``m_undefined``, ``m_smoothed`` with ``m_smoothed_ci_low``/
        ``m_smoothed_ci_high``, ``m_reference`` (the reference group's value),
        ``m_interval_low``/``m_interval_high`` (the *reference's range at this
        size*: the central ``1 - alpha`` range of the metric under the
        reference's proportions at the group's size, from the MATCH null law; not
        an interval of the group's value), and the MATCH test's ``m_match_lower``,
        ``m_match_upper`` (percentiles of the observed value), ``m_match_p``,
        ``m_match_p_adjusted`` and ``m_match_reject``; then, with the separation
        test, ``separation_p_tpr`` and ``separation_p_fpr``: the smallest
        adjusted p-value of the comparisons involving the group.
    match : pandas.DataFrame or None
        The MATCH test's table (:class:`~sklearn_smallfair.stats.MatchResult`).
    separation : pandas.DataFrame or None
        The separation test's comparisons
        (:class:`~sklearn_smallfair.stats.SeparationResult`).
    separation_violated : bool or None
        Whether the separation test rejects equal TPR or equal FPR.
    metrics : list of str
        The audited metrics.
    alpha : float
        Significance level of the tests.
    ci : float
        Level of the groups' confidence intervals (``1 - alpha`` unless the audit
        was given ``ci=``).
    correction : str or None
        Multiple-comparison correction of the p-values.
    smoothing : str
        Description of the smoothing of the ``*_smoothed`` columns.
    title : str
        Title of the report.

    Examples
    --------
    >>> from sklearn_smallfair.audit import audit_predictions
    >>> y_true = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> report = audit_predictions(y_true, y_pred, sensitive_features=groups,
    ...                            tests=("match",))
    >>> report.frame[["n", "tpr", "tpr_smoothed"]].round(3)
           n    tpr  tpr_smoothed
    group
    a      6  0.667         0.667
    b      6  0.667         0.667
    """

    def __init__(
        self,
        *,
        frame,
        match,
        separation,
        separation_violated,
        metrics,
        alpha,
        correction,
        smoothing,
        reference,
        title,
        ci=None,
    ):
        self.frame = frame
        self.match = match
        self.separation = separation
        self.separation_violated = separation_violated
        self.metrics = list(metrics)
        self.alpha = alpha
        self.ci = 1.0 - alpha if ci is None else ci
        self.correction = correction
        self.smoothing = smoothing
        self.reference = reference
        self.title = title

    def __repr__(self):
        return (
            f"AuditReport(title={self.title!r}, groups={len(self.frame)}, "
            f"metrics={self.metrics}, alpha={self.alpha})"
        )

    # -- findings -------------------------------------------------------------------
    def findings(self):
        """The findings of :meth:`summary`, one sentence each, as a list of str."""
        out = []
        f = self.frame
        ref_word = {
            "rest": "everyone else",
            "total": "everyone",
        }.get(self.reference, "the reference")
        adjusted = "adjusted " if self.correction else ""
        level = f"{self.ci:.0%}"

        def interval(row, column):
            low = row.get(f"{column}_ci_low", np.nan)
            high = row.get(f"{column}_ci_high", np.nan)
            return f", {level} CI {_fmt_ci(low, high)}," if not np.isnan(low) else ""

        for metric in self.metrics:
            for group, row in f.iterrows():
                value = row[metric]
                who = f"{_name(group)} (n = {int(row['n'])})"
                label = metric.upper() if len(metric) <= 4 else metric
                if row[f"{metric}_undefined"]:
                    out.append(
                        (
                            2,
                            0.0,
                            f"{who}: {label} is undefined (0/0: no one in its "
                            f"denominator); the smoothed value is "
                            f"{_fmt(row[f'{metric}_smoothed'])}"
                            f"{interval(row, f'{metric}_smoothed').rstrip(',')}.",
                        )
                    )
                    continue
                p = row.get(f"{metric}_match_p_adjusted", np.nan)
                ref = row[f"{metric}_reference"]
                if np.isnan(p):
                    continue
                if row[f"{metric}_match_reject"]:
                    out.append(
                        (
                            0,
                            p,
                            f"{who}: {label} = {_fmt(value)}"
                            f"{interval(row, metric)} is unlikely under the "
                            f"reference ({ref_word}: {_fmt(ref)}) at this group's "
                            f"size ({adjusted}p = {_fmt_p(p)}).",
                        )
                    )
                elif abs(value - ref) >= 0.05:
                    low = row[f"{metric}_interval_low"]
                    high = row[f"{metric}_interval_high"]
                    out.append(
                        (
                            1,
                            -abs(value - ref),
                            f"{who}: {label} = {_fmt(value)}"
                            f"{interval(row, metric)} differs from the "
                            f"reference ({ref_word}: {_fmt(ref)}) but is consistent "
                            f"with sample-size noise ({adjusted}p = {_fmt_p(p)}; "
                            f"{_fmt(low)} to {_fmt(high)} is the reference's "
                            f"{1 - self.alpha:.0%} range at this size).",
                        )
                    )
        out.sort(key=lambda t: (t[0], t[1]))
        lines = [text for _, _, text in out]
        if self.separation_violated is not None:
            sep = self.separation
            parts = []
            for m in ("tpr", "fpr"):
                rows = sep[sep["metric"] == m]
                if len(rows):
                    parts.append(
                        f"smallest {adjusted}p for equal {m.upper()} "
                        f"{_fmt_p(float(rows['p_adjusted'].min()))}"
                    )
            verdict = (
                "violated" if self.separation_violated else "no violation detected"
            )
            lines.append(
                f"Separation (equalized odds): {verdict} at alpha = {self.alpha:g} "
                f"({'; '.join(parts)})."
            )
        small = f.index[f["n"] < _SMALL_N]
        if len(small):
            names = ", ".join(_name(g) for g in small)
            lines.append(
                f"Small group(s) with fewer than {_SMALL_N} people: {names}. Their "
                f"raw values are noisy; read their confidence intervals, compare "
                f"the smoothed values and the reference ranges, and read a large "
                f"p-value as 'not enough data', not as 'fair'."
            )
        return lines

    def summary(self, max_findings=12):
        """A short text of the findings that matter.

        Parameters
        ----------
        max_findings : int, default=12
            At most this many per-group findings (the rest are counted).

        Returns
        -------
        str
        """
        lines = self.findings()
        per_group = [x for x in lines if not x.startswith(("Separation", "Small"))]
        rest = [x for x in lines if x.startswith(("Separation", "Small"))]
        shown = per_group[:max_findings]
        n_people = int(self.frame["n"].sum())
        head = (
            f"{display_label(self.title)}: {len(self.frame)} groups, "
            f"{n_people:,} people; metrics {', '.join(self.metrics)}; "
            f"alpha = {self.alpha:g}"
            + (f" ({self.correction}-adjusted)" if self.correction else "")
        )
        body = [f"- {x}" for x in shown]
        if len(per_group) > len(shown):
            body.append(f"- ... and {len(per_group) - len(shown)} more (see .frame).")
        if not per_group:
            body.append(
                "- No group's metric is unlikely under the reference at its size, and "
                "none differs from it by 0.05 or more" + self._widest() + "."
            )
        body += [f"- {x}" for x in rest]
        tail = (
            "A p-value above alpha means the data are consistent with sample-size "
            "noise, not that the groups are alike: small groups have little power."
        )
        return "\n".join([head, *body, tail])

    def _widest(self):
        """``; the widest 95% CI is b's TPR, [0.19, 0.81]`` (empty without any)."""
        best = None
        for metric in self.metrics:
            low = self.frame.get(f"{metric}_ci_low")
            high = self.frame.get(f"{metric}_ci_high")
            if low is None or high is None:
                continue
            width = (high - low).to_numpy(dtype=float)
            if np.isnan(width).all():
                continue
            i = int(np.nanargmax(width))
            if best is None or width[i] > best[0]:
                best = (width[i], metric, i, low.iloc[i], high.iloc[i])
        if best is None:
            return ""
        _, metric, i, low, high = best
        label = metric.upper() if len(metric) <= 4 else metric
        return (
            f"; but the widest {self.ci:.0%} CI, {_name(self.frame.index[i])}'s "
            f"{label} {_fmt_ci(low, high)}, says how little that shows"
        )

    # -- plots ---------------------------------------------------------------------
    def plot(self, *, metrics=None, figsize=None, ax=None):
        """Per-group raw and smoothed values with the reference's MATCH ranges.

        One panel per metric. For each group: the raw value (circle; missing when
        undefined), the smoothed value (diamond), and as a horizontal bar the
        central ``1 - alpha`` range of the metric under the reference's
        proportions at the group's size: a raw value outside its bar is unlikely
        to be sample-size noise. Drawn by :class:`AuditDisplay`. Needs matplotlib.

        Parameters
        ----------
        metrics : str or list of str, default=None
            Metrics to draw; default all.
        figsize : tuple, default=None
            Size of the figure created when ``ax`` is None; default grows with
            the number of panels.
        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw: one Axes per metric (see :meth:`AuditDisplay.plot`);
            ``None`` creates a figure.

        Returns
        -------
        matplotlib.figure.Figure
            The figure holding the plot (that of ``ax`` when given); for the
            drawn artists use :meth:`AuditDisplay.from_report`.
        """
        from ._plot import AuditDisplay

        display = AuditDisplay.from_report(
            self, metrics=metrics, ax=ax, figsize=figsize
        )
        return display.figure_

    # -- output --------------------------------------------------------------------
    def to_csv(self, path=None, *, escape_formulas=True, force=False):
        """The per-group ``frame`` as CSV (written to ``path`` when given).

        The CSV is meant to be opened in a spreadsheet, so its text (group
        labels, the index and column names; never numbers, so ``-0.12`` stays a
        number) is made safe to show:

        - a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
          carriage return gets a leading single quote (``'=1+1``), so that a
          spreadsheet shows it instead of running it as a formula (CSV
          injection); ``escape_formulas=False`` writes such labels unquoted;
        - control characters (e.g. NUL, newline) and Unicode bidirectional
          controls (e.g. U+202E) are written as visible escapes (``\\x00``,
          ``\\u202e``).

        For the exact labels use :attr:`frame` or :meth:`to_json`.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the file (UTF-8). The file is replaced whole
            (written to a temporary file, then renamed); an empty path, a
            directory or a symbolic link (without ``force``) is refused.
        escape_formulas : bool, default=True
            Quote text cells that a spreadsheet would run as a formula.
        force : bool, default=False
            Write through a symbolic link at ``path`` to the file it points to.

        Returns
        -------
        str
            The CSV text.

        Examples
        --------
        >>> from sklearn_smallfair.audit import audit_predictions
        >>> report = audit_predictions(
        ...     [1, 0, 1, 0, 1, 0, 1, 0], [1, 0, 0, 0, 1, 1, 1, 0],
        ...     sensitive_features=["=1+1"] * 4 + ["b"] * 4, tests=())
        >>> [line.split(",")[0] for line in report.to_csv().splitlines()]
        ['group', "'=1+1", 'b']
        """
        text = csv_safe(self.frame, escape_formulas=escape_formulas).to_csv()
        if path is not None:
            write_atomic(path, text, what="the CSV", force=force)
        return text

    def to_json(self, path=None, *, force=False):
        """The report as JSON: settings, findings and all tables.

        Returns the JSON text and writes it to ``path`` when given. The tables
        keep the labels' exact values (the findings show them as
        :meth:`summary` does); JSON writes every non-ASCII and control
        character as an escape (``\\u202e``).

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the file; replaced whole, as with :meth:`to_csv`.
        force : bool, default=False
            Write through a symbolic link at ``path`` to the file it points to.

        Returns
        -------
        str
            The JSON text.
        """
        if path is not None:
            check_destination(path, force=force)
        payload = {
            "title": self.title,
            "version": __version__,
            "metrics": self.metrics,
            "alpha": self.alpha,
            "ci": self.ci,
            "correction": self.correction,
            "smoothing": self.smoothing,
            "reference": str(self.reference),
            "findings": self.findings(),
            "separation_violated": self.separation_violated,
            "groups": json.loads(self.frame.reset_index().to_json(orient="records")),
            "match": None
            if self.match is None
            else json.loads(self.match.to_json(orient="records")),
            "separation": None
            if self.separation is None
            else json.loads(self.separation.to_json(orient="records")),
        }
        text = json.dumps(payload, indent=2, default=str)
        if path is not None:
            write_atomic(path, text, what="the JSON", force=force)
        return text

    def to_html(self, path=None, *, include_plots=True, force=False):
        """One self-contained HTML file: summary, tables and embedded plots.

        The page has inline CSS and PNG images as data URIs and loads nothing.
        Every user-supplied string (group names, the title) is escaped: as HTML,
        and with control and Unicode bidirectional characters shown as visible
        escapes (``\\u202e``) so that a label cannot reorder the text around
        it; a content security policy forbids scripts altogether.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the file (UTF-8). The file is replaced whole
            (written to a temporary file, then renamed); an empty path, a
            directory or a symbolic link (without ``force``) is refused.
        include_plots : bool, default=True
            Embed :meth:`plot` as a PNG (skipped, with a note, when matplotlib
            is not installed).
        force : bool, default=False
            Write through a symbolic link at ``path`` to the file it points to.

        Returns
        -------
        str
            The HTML text.
        """
        if path is not None:
            check_destination(path, force=force)  # fail before the plots

        def esc(text):
            return html.escape(display_label(text))

        plots = ""
        if include_plots:
            try:
                fig = self.plot()
            except ImportError:
                plots = "<p>Plots need matplotlib (pip install matplotlib).</p>"
            else:
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=110)
                import matplotlib.pyplot as plt

                plt.close(fig)
                data = base64.b64encode(buf.getvalue()).decode("ascii")
                plots = (
                    '<figure><img alt="Per-group metric values with the '
                    'reference ranges" src="data:image/png;base64,'
                    f"{data}\"><figcaption>Circles: raw values, with the group's "
                    f"{self.ci:.0%} confidence interval as a thin line (where "
                    f"the group's true value may be); diamonds: smoothed values "
                    f"({esc(self.smoothing)}); grey bars just below: the "
                    f"reference's range at the group's size (the central "
                    f"{1 - self.alpha:.0%} range of the metric under the "
                    f"reference's proportions for a group of that size; a raw "
                    f"value outside it is unlikely to be sample-size noise)."
                    "</figcaption>"
                    "</figure>"
                )
        findings = "".join(f"<li>{esc(x)}</li>" for x in self.findings())
        groups = _html_table(self._display_table())
        sections = [
            f"<section id='summary'><h2>Findings</h2><ul>{findings}</ul></section>",
            f"<section id='groups'><h2>Per-group metrics</h2><p>Each value with "
            f"the group's {self.ci:.0%} confidence interval in brackets.</p>"
            f"{groups}</section>",
        ]
        if self.match is not None:
            sections.append(
                "<section id='match'><h2>MATCH test</h2><p>For each group and "
                "metric: the observed value, the reference's value, the "
                "percentiles of the observed value under the reference's "
                "proportions at the group's size, and the p-values.</p>"
                f"{_html_table(_round(self.match), index=False)}</section>"
            )
        if self.separation is not None:
            verdict = (
                "violated" if self.separation_violated else "no violation detected"
            )
            sections.append(
                "<section id='separation'><h2>Separation (equalized odds)</h2>"
                f"<p>Verdict at alpha = {self.alpha:g}: <strong>{verdict}"
                "</strong>.</p>"
                f"{_html_table(_round(self.separation), index=False)}</section>"
            )
        if plots:
            sections.append(f"<section id='plots'><h2>Plots</h2>{plots}</section>")
        sections.append(_HOW_TO_READ)
        page = _PAGE.format(
            title=esc(self.title),
            meta=esc(
                f"sklearn-smallfair {__version__}; reference: {self.reference}; "
                f"smoothing: {self.smoothing}; alpha = {self.alpha:g}; "
                f"correction: {self.correction}"
            ),
            body="\n".join(sections),
            css=_CSS,
        )
        if path is not None:
            write_atomic(path, page, what="the HTML report", force=force)
        return page

    def _display_table(self):
        """Counts, then per metric: value [CI], smoothed [CI], reference, p.

        Each value and its confidence interval share a cell (``0.62 [0.41,
        0.80]``); the header names the interval's level.
        """
        f = self.frame
        out = _round(f[["n", "n_pos", "n_neg"]])
        level = f"{self.ci:.0%} CI"
        for m in self.metrics:
            for col, head in ((m, m), (f"{m}_smoothed", f"{m} smoothed")):
                if f"{col}_ci_low" in f:
                    out[f"{head} [{level}]"] = [
                        _with_ci(v, lo, hi)
                        for v, lo, hi in zip(
                            f[col], f[f"{col}_ci_low"], f[f"{col}_ci_high"]
                        )
                    ]
                else:
                    out[head] = _round(f[[col]])[col]
            out[f"{m} reference"] = _round(f[[f"{m}_reference"]])[f"{m}_reference"]
            if f"{m}_match_p_adjusted" in f:
                p = f"{m}_match_p_adjusted"
                out[f"{m} MATCH p"] = _round(f[[p]])[p]
        return out


def _with_ci(value, low, high):
    """``0.62 [0.41, 0.80]``; ``undefined`` for a NaN value."""
    if np.isnan(value):
        return "undefined"
    return f"{value:.3g} {_fmt_ci(low, high)}"


def _round(frame):
    out = frame.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(lambda v: "undefined" if np.isnan(v) else f"{v:.4g}")
    return out


def _html_table(frame, index=True):
    """An escaped HTML table (pandas escapes cell, index and header text).

    Text is first made displayable (:func:`display_label`).
    """
    return display_frame(frame).to_html(
        escape=True, border=0, classes="data", na_rep="undefined", index=index
    )


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
.meta{color:#57606a;font-size:.9rem}
table.data{border-collapse:collapse;font-size:.85rem;margin:.5rem 0;display:block;
overflow-x:auto}
table.data th,table.data td{border:1px solid #d0d7de;padding:.25rem .5rem;
text-align:right;white-space:nowrap}
table.data thead th{background:#f6f8fa}
table.data tbody th{text-align:left;background:#f6f8fa}
figure{margin:1rem 0}img{max-width:100%;height:auto}
figcaption{color:#57606a;font-size:.85rem}
li{margin:.3rem 0}
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
alike: small groups have little power.</li>
<li>The separation test compares true and false positive rates between groups
(equalized odds).</li>
</ul>
</section>"""
