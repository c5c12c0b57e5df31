"""The audit report: per-group tables, findings, plots, and HTML/CSV/JSON output."""

import html

import numpy as np
import pandas as pd

from .. import __version__
from .._output import check_destination, display_label, write_atomic
from . import _prose
from ._detectable import TOLERANCE
from ._format import reference_word
from ._html import _cells, _orders, figure, render
from ._plot import AuditDisplay
from ._prose import headline
from ._templates import macro, table
from ._writers import plot_png, records, with_labels, write_csv, write_json

__all__ = ["AuditReport"]


class AuditReport:
    """Result of a binary fairness audit, built by the audit: tables, findings, plots.

    Built and returned by :meth:`FairnessAudit.audit` and
    :func:`audit_predictions` (one per class in a
    :class:`MulticlassAuditReport`); there is no need to construct it directly.

    Parameters
    ----------
    frame : pandas.DataFrame
        The per-group table, one row per group, stored as :attr:`frame` (its
        columns are described under Attributes).
    match : pandas.DataFrame or None
        The MATCH test's table, one row per group and metric; ``None`` when the
        MATCH test was not run.
    separation : pandas.DataFrame or None
        The separation test's comparisons, per rate: each group against its
        reference (``group_b`` is ``"rest"`` for everyone else) or every pair
        of groups; ``None`` when the separation test was not run.
    separation_violated : bool or None
        Whether the separation test rejects equal TPR or equal FPR; ``None``
        when it was not run.
    metrics : list of str
        The names of the audited metrics (stored as a list).
    alpha : float
        Significance level of the tests, also the reference ranges'
        ``1 - alpha`` coverage.
    correction : str or None
        The multiple-comparison correction of the p-values (``"holm"``,
        ``"bonferroni"`` or ``"fdr_bh"``); ``None`` for no correction.
    smoothing : str
        Description of the smoothing of the ``*_smoothed`` columns, with its
        parameters (``"none"`` without smoothing).
    reference : str or scalar
        The groups' reference, named in the findings: ``"rest"``, ``"total"``,
        a reference group's label, or ``"given"`` for reference counts.
    title : str
        Title of the report.
    confidence_level : float, default=0.95
        Level of the groups' confidence intervals.
    marginals : dict of str to pandas.DataFrame, default=None
        For intersectional groups: per attribute, the table of that attribute's
        groups alone; ``None`` otherwise.
    parts : pandas.DataFrame, default=None
        For intersectional groups: each group's level of each attribute;
        ``None`` otherwise.
    overall : dict of str to float, default=None
        Each metric over everyone; ``None`` is stored as an empty dict.
    family : {"all", "metric"}, default="all"
        The family over which ``correction`` adjusts the MATCH tests: every
        group x metric of the audit, or each metric on its own.
    tolerance : float, default=0.1
        The largest gap that counts as no gap: a non-rejection is ``"no gap
        detected"`` only when the smallest gap the audit detects at the group's
        size is at most this.
    intersections : pandas.DataFrame, default=None
        For intersectional groups: the structured estimates and interaction
        tests (see :attr:`intersections`); ``None`` otherwise.
    intersections_note : str, default=None
        Why intersectional groups have no :attr:`intersections` (e.g. an
        attribute with a single level).

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per group: ``n``, ``n_pos``, ``n_neg`` and, for every metric
        ``m``: ``m`` (raw value, NaN when undefined), ``m_low``/``m_high``
        (the group's own ``confidence_level`` interval: where its true value may
        be), ``m_undefined``, ``m_smoothed`` with ``m_smoothed_low``/
        ``m_smoothed_high``, ``m_reference`` (the reference group's value),
        ``m_interval_low``/``m_interval_high`` (the *reference's range at this
        size*: the central ``1 - alpha`` range of the metric under the
        reference's proportions at the group's size, from the MATCH null law; not
        an interval of the group's value), and the MATCH test's ``m_match_lower``,
        ``m_match_upper`` (percentiles of the observed value), ``m_match_p_value``,
        ``m_match_p_adjusted`` and ``m_match_reject``, ``m_detectable_gap`` (the
        smallest gap between the group's metric and the reference's, up or down
        (the smaller of the two), that the audit detects at the group's size with
        80 % power: :func:`~sklearn_smallfair.stats.match_min_detectable_effect`
        against the group's reference with the group's own share of people in
        the metric's denominator, at the level at which the correction rejects a
        single gap among the tests of its family (``family``: every group x
        metric of the audit, or each metric's), ``alpha / n_tests`` for holm,
        bonferroni and fdr_bh; NaN when no gap is detectable at that size or
        the metric has no closed-form power) and ``m_verdict`` (``"gap"``: rejected;
        ``"no gap detected"``: not rejected, the detectable gap at most
        ``tolerance`` and the group's interval within the reference's value
        plus or minus the detectable gap;
        ``"inconclusive"``: any other non-rejection;
        ``"undefined"``); then, with the separation test, ``tpr_separation_p_adjusted``
        and ``fpr_separation_p_adjusted``: the smallest adjusted p-value of the
        comparisons involving the group.
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
    confidence_level : float
        Level of the groups' confidence intervals.
    correction : str or None
        Multiple-comparison correction of the p-values.
    smoothing : str
        Description of the smoothing of the ``*_smoothed`` columns.
    title : str
        Title of the report.
    marginals : dict of str to pandas.DataFrame or None
        For intersectional groups (several columns of ``sensitive_features``):
        per attribute, the groups of that attribute alone with ``n`` and each
        metric with its confidence interval; ``None`` otherwise.
    parts : pandas.DataFrame or None
        For intersectional groups: one row per group of :attr:`frame`, one column
        per attribute, holding the group's level of each attribute.
    intersections : pandas.DataFrame or None
        For every audit of intersectional groups of binary targets, whatever
        its smoothing: one row per group with, for every metric ``m``,
        ``m_structured`` and its interval ``m_structured_low``/
        ``m_structured_high`` (the estimate of
        :class:`~sklearn_smallfair.smoothing.IntersectionalSmoothing`, which
        borrows strength from the other intersections through the attributes'
        main effects) and, for rates of a numerator out of a denominator (TPR,
        FPR, PPV, ...), ``m_predicted`` (the main effects' prediction),
        ``m_interaction_p`` (the test of the group against what the other
        intersections' main effects predict for it, Holm-adjusted over the
        intersections) and ``m_interaction``; and
        ``strength``, each group's prior strength. The estimates are those of
        ``IntersectionalSmoothing()`` beside the report's own smoothing, or of
        the audit's ``smoothing`` when it is an ``IntersectionalSmoothing``: then
        they are also the ``*_smoothed`` values of :attr:`frame`. ``None``
        for a single attribute, counts, or when the fit fails (see
        :attr:`intersections_note`).
    intersections_note : str or None
        Why intersectional groups have no :attr:`intersections`.
    overall : dict of str to float
        Each metric over everyone.

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
        confidence_level=0.95,
        marginals=None,
        parts=None,
        overall=None,
        family="all",
        tolerance=TOLERANCE,
        intersections=None,
        intersections_note=None,
    ):
        self.frame = frame
        self.match = match
        self.separation = separation
        self.separation_violated = separation_violated
        self.metrics = list(metrics)
        self.alpha = alpha
        self.confidence_level = confidence_level
        self.correction = correction
        self.smoothing = smoothing
        self.reference = reference
        self.title = title
        self.marginals = marginals
        self.parts = parts
        self.overall = overall or {}
        self.family = family
        self.tolerance = tolerance
        self.intersections = intersections
        self.intersections_note = intersections_note

    def __repr__(self):
        """Several lines: the groups, metrics and tests, the flagged cells."""
        return _repr_text(self, "AuditReport")

    def _repr_html_(self):
        """The title, the headline and the table of verdicts, for a notebook."""
        return _repr_html(self)

    def _group_order(self, key):
        """The groups in the summary's order ``key`` (``"evidence"``,
        ``"size"``, ``"name"``), as the page ranks them."""
        return list(_orders(self, _cells(self))[key])

    # -- findings -------------------------------------------------------------------
    def _ref_word(self):
        return reference_word(self.reference)

    def _family_words(self, label):
        """``"tests of the audit"`` or ``"TPR tests"``: the correction family."""
        return "tests of the audit" if self.family == "all" else f"{label} tests"

    def _n_tests(self, metric):
        """The number of MATCH tests in ``metric``'s correction family: its
        tests of every group (and, for one class of a multiclass audit, of
        every class); each metric is adjusted on its own."""
        if self.match is None:
            return 0
        if getattr(self, "n_tests", None) is not None:
            return int(self.n_tests.get(metric, 0))
        if self.family == "all":
            return int(self.match["p_value"].notna().sum())
        at = (self.match["metric"] == metric).to_numpy()
        return int(self.match["p_value"][at].notna().sum())

    def cell(self, group, metric):
        """What the audit says of one group's metric, as a dict.

        Keys: ``verdict`` (``"gap"``, ``"no gap detected"``, ``"inconclusive"``,
        ``"undefined"`` or ``"not tested"``), ``value``, ``reference``,
        ``difference`` (value minus reference), ``p`` and ``p_adjusted`` (MATCH),
        ``detectable_gap`` (the smallest gap the audit detects at the group's size
        with 80 % power, NaN when none), ``outside`` (the raw value lies outside
        the reference's range at the group's size), ``text`` (one sentence that
        says all this, with why a value outside the range is not a finding) and
        ``short`` (a few words for a table cell).

        Parameters
        ----------
        group : label
            A label of :attr:`frame`'s index.
        metric : str
            An audited metric.

        Returns
        -------
        dict
            The verdict, values, p-values and sentences of the cell, under the
            keys above.

        Examples
        --------
        >>> from sklearn_smallfair.audit import audit_predictions
        >>> report = audit_predictions(
        ...     counts={"a": [40, 10, 5, 45], "b": [5, 5, 2, 8]}, metrics="tpr")
        >>> cell = report.cell("b", "tpr")
        >>> cell["verdict"], round(cell["difference"], 2)
        ('inconclusive', -0.3)
        >>> cell["short"]
        'needs gap > 0.57'
        """
        return _prose.cell(self, group, self.frame.loc[group], metric)

    def _ranked(self):
        """``(kind, sort key, text)`` of every finding, in the order shown."""
        return _prose.ranked(self)

    def findings(self):
        """The findings of :meth:`summary`, one sentence each, as a list of str.

        Ranked: gaps (smallest adjusted p first), values outside the reference's
        range that the adjusted test does not reject (with the reason), the
        separation test, undefined metrics, differences of 0.05 or more that the
        test does not reject (with the smallest gap it detects at the group's
        size), what the audit could not see per metric,
        and the small groups.
        """
        return _prose.findings(self)

    def summary(self, max_findings=12):
        """A short text of the findings that matter.

        Parameters
        ----------
        max_findings : int, default=12
            At most this many per-group findings (the rest are counted).

        Returns
        -------
        str
            The summary: the audit's settings, the verdicts' counts and the
            ranked findings, one per line.
        """
        return _prose.summary(self, max_findings)

    def _verdict_counts(self):
        """``Verdicts of 24 group x metric cells: 3 gap, ...`` (empty untested)."""
        return _prose.verdict_counts(self)

    # -- plots ---------------------------------------------------------------------
    def plot(
        self, *, metrics=None, order="evidence", max_groups=None, figsize=None, ax=None
    ):
        """Per-group raw and smoothed values with the reference's MATCH ranges.

        One panel per metric, one row per group in the summary's order (the
        strongest evidence on top). For each group: the raw value (circle,
        coloured by verdict; missing when undefined), the smoothed value
        (diamond), and as a horizontal bar the
        central ``1 - alpha`` range of the metric under the reference's
        proportions at the group's size: a raw value outside its bar is unlikely
        to be sample-size noise. Drawn by :class:`AuditDisplay`. Needs matplotlib.

        Parameters
        ----------
        metrics : str or list of str, default=None
            Metrics to draw; default all.
        order : {"evidence", "gap", "size", "name"}, default="evidence"
            The order of the rows (see :meth:`AuditDisplay.from_report`).
        max_groups : int, default=None
            Draw only the first ``max_groups`` groups of the order; ``None``
            draws every group. The HTML report draws the first 60.
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
        display = AuditDisplay.from_report(
            self,
            metrics=metrics,
            order=order,
            max_groups=max_groups,
            ax=ax,
            figsize=figsize,
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
        return write_csv(self.frame, path, escape_formulas=escape_formulas, force=force)

    def to_json(self, path=None, *, force=False):
        """The report as JSON: settings, findings and all tables.

        The tables are the groups (:attr:`frame`), the MATCH and separation
        tests and, for intersectional groups, each attribute's margins
        (:attr:`marginals`, ``None`` otherwise).

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
        return write_json(self._payload, path, force=force)

    def _payload(self):
        """The content of :meth:`to_json`."""
        return {
            "title": self.title,
            "version": __version__,
            "metrics": self.metrics,
            "alpha": self.alpha,
            "confidence_level": self.confidence_level,
            "correction": self.correction,
            "family": self.family,
            "smoothing": self.smoothing,
            "reference": str(self.reference),
            "findings": self.findings(),
            "separation_violated": self.separation_violated,
            "groups": records(with_labels(self.frame)),
            "match": records(self.match),
            "separation": records(self.separation),
            "marginals": None
            if self.marginals is None
            else {str(a): records(with_labels(t)) for a, t in self.marginals.items()},
            "intersections": None
            if self.intersections is None
            else records(with_labels(self.intersections)),
        }

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
        page = render(self, self._plots_html() if include_plots else "")
        if path is not None:
            write_atomic(path, page, what="the HTML report", force=force)
        return page

    def _plots_html(self):
        """:meth:`plot` as an embedded PNG with its caption (a note without
        matplotlib)."""
        n_groups = len(self.frame)
        return figure(
            plot_png(self, max_groups=PLOT_GROUPS),
            shown=None
            if n_groups <= PLOT_GROUPS
            else f"the {PLOT_GROUPS} groups with the strongest evidence of "
            f"{n_groups:,} (every group is in the tables)",
            level=f"{self.confidence_level:.0%}",
            smoothing=self.smoothing,
            range_level=f"{1 - self.alpha:.0%}",
        )


#: Groups drawn in the HTML report's figure (the first of the summary's order).
PLOT_GROUPS = 60
#: Groups named in the text representation; rows of the notebook's table.
REPR_GROUPS = 8
REPR_ROWS = 20
#: Longest group label shown in the text representation.
REPR_LABEL = 30


def _short(label):
    """A label made displayable, cut to ``REPR_LABEL`` characters."""
    text = display_label(label)
    return text if len(text) <= REPR_LABEL else text[: REPR_LABEL - 3] + "..."


def _groups_line(groups):
    shown = ", ".join(_short(g) for g in groups[:REPR_GROUPS])
    more = len(groups) - REPR_GROUPS
    return shown + (f", ... ({more} more)" if more > 0 else "")


def _tests_words(report):
    tests = []
    if report.match is not None:
        tests.append("MATCH")
    if report.separation is not None:
        tests.append("separation")
    return ", ".join(tests) or "none"


def _n_flagged(report):
    """``(flagged, total)``: the cells with verdict ``"gap"``, of all tested."""
    cols = [f"{m}_verdict" for m in report.metrics if f"{m}_verdict" in report.frame]
    table = report.frame[cols]
    return int((table == "gap").to_numpy().sum()), int(table.size)


def _repr_text(report, name, *, groups=None, extra=(), flagged=None, title=None):
    """The lines of a report's ``repr``: title, groups, metrics, tests, flagged
    cells, where to see more (``groups`` and ``flagged`` default to those of
    ``report.frame``)."""
    groups = list(report.frame.index) if groups is None else list(groups)
    flagged, total = _n_flagged(report) if flagged is None else flagged
    lines = [
        f"{name}: {_short(report.title if title is None else title)}",
        f"  groups ({len(groups)}): {_groups_line(groups)}",
        *extra,
        f"  metrics: {', '.join(report.metrics)}",
        f"  tests: {_tests_words(report)} (alpha = {report.alpha:g}, "
        f"correction: {report.correction or 'none'})",
        f"  flagged cells (gap): {flagged} of {total}"
        if total
        else "  flagged cells (gap): none tested",
        "  See .summary(), .findings(), .frame or .to_html() for more.",
    ]
    return "\n".join(lines)


def _headline(report):
    """How many gaps and the largest, else what no gap means."""
    return headline(report)


def _verdict_text(cell):
    """``gap (+0.31)``: a cell's verdict and difference (the verdict alone
    when the difference is undefined)."""
    d = cell["difference"]
    untested = cell["verdict"] in ("undefined", "not tested")
    return (
        cell["verdict"] if untested or np.isnan(d) else f"{cell['verdict']} ({d:+.2f})"
    )


def _verdicts_table(report):
    """The per-group verdicts (strongest evidence first) as HTML, from the
    page's table macro; at most ``REPR_ROWS`` rows."""
    cells = _cells(report)
    order = _orders(report, cells)["evidence"]
    shown = order[:REPR_ROWS]
    out = pd.DataFrame(index=pd.Index(shown, dtype=object))
    out["n"] = [f"{int(report.frame.loc[g, 'n']):,}" for g in shown]
    heads = {"n": ("People", "Number of people in the group (n)")}
    for k, m in enumerate(report.metrics):
        out[f"m{k}"] = [_verdict_text(cells[g][k]) for g in shown]
        heads[f"m{k}"] = (
            m,
            f"Verdict of {m} (the group's value minus the reference's)",
        )
    text = str(
        macro("table")(table(out, heads, index=("Group", "The group"), cls="data"))
    )
    if len(order) > len(shown):
        text += (
            f"<p>... and {len(order) - len(shown)} more groups (see .to_html()).</p>"
        )
    return text


def _repr_html(report, extra=""):
    counts = report._verdict_counts()
    headline = _headline(report)
    parts = [
        f"<h3>{html.escape(display_label(report.title))}</h3>",
        f"<p><strong>{html.escape(display_label(headline))}</strong></p>",
    ]
    if counts and counts != headline:
        parts.append(f"<p>{html.escape(display_label(counts))}</p>")
    parts.append(extra)
    parts.append(_verdicts_table(report))
    return '<div class="smallfair-report">' + "".join(parts) + "</div>"
