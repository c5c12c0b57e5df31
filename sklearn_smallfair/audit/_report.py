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
from ._detectable import POWER, VERDICTS
from ._detectable import plannable as _plannable
from ._html import render

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


def _label(metric):
    """``TPR`` for short names, the name itself otherwise."""
    return metric.upper() if len(metric) <= 4 else metric


def _list_names(groups, limit=6):
    names = [_name(g) for g in groups]
    if len(names) > limit:
        return ", ".join(names[:limit]) + f" and {len(names) - limit} more"
    return ", ".join(names)


def _get(row, column):
    value = row.get(column, np.nan)
    return np.nan if value is None else value


def _cell(report, group, row, metric):
    """What the audit says of one group's metric (see :meth:`AuditReport.cell`)."""
    label = _label(metric)
    n = int(row["n"])
    who = f"{_name(group)} (n = {n})"
    adjusted = "adjusted " if report.correction else ""
    level = f"{report.ci:.0%}"
    value = float(row[metric])
    ref = float(row[f"{metric}_reference"])
    diff = value - ref
    p = float(_get(row, f"{metric}_match_p"))
    p_adj = float(_get(row, f"{metric}_match_p_adjusted"))
    gap = float(_get(row, f"{metric}_detectable_gap"))
    low, high = float(row[f"{metric}_ci_low"]), float(row[f"{metric}_ci_high"])
    r_low = float(row[f"{metric}_interval_low"])
    r_high = float(row[f"{metric}_interval_high"])
    verdict = row.get(f"{metric}_verdict", "not tested")
    if row[f"{metric}_undefined"]:
        verdict = "undefined"
    outside = bool(value < r_low or value > r_high)
    ci = f", {level} CI {_fmt_ci(low, high)}," if not np.isnan(low) else ""
    head = f"{who}: {label} = {_fmt(value)}{ci} vs {_fmt(ref)} for {report._ref_word()}"
    out = dict(
        verdict=verdict,
        value=value,
        reference=ref,
        difference=diff,
        p=p,
        p_adjusted=p_adj,
        detectable_gap=gap,
        outside=outside and verdict == "inconclusive",
    )
    if verdict == "undefined":
        smoothed = row[f"{metric}_smoothed"]
        s_low = row.get(f"{metric}_smoothed_ci_low", np.nan)
        s_ci = (
            f", {level} CI {_fmt_ci(s_low, row[f'{metric}_smoothed_ci_high'])}"
            if not np.isnan(s_low)
            else ""
        )
        text = (
            f"{who}: {label} is undefined (0/0: no one in its denominator); the "
            f"smoothed value is {_fmt(smoothed)}{s_ci}."
        )
        return {**out, "text": text, "short": "undefined (0/0)"}
    if verdict == "not tested":
        return {**out, "text": f"{head} (not tested).", "short": "not tested"}
    test = f"{adjusted}p = {_fmt_p(p_adj)}"
    if verdict == "gap":
        text = (
            f"{head}: a gap of {diff:+.2f}, unlikely under the reference at this "
            f"group's size ({test})"
        )
        if low <= ref <= high:  # the numbers beside the verdict, reconciled
            text += (
                f"; the group's {level} interval still holds the reference's "
                f"value: the test also weighs the reference's own counts and the "
                f"exact law of the group's, which the interval of the group alone "
                f"does not"
            )
        text += "."
        return {**out, "text": text, "short": f"gap {diff:+.2f}"}
    d = abs(gap)
    if verdict == "no gap detected":
        text = (
            f"{head}: a difference of {diff:+.2f}, not significant ({test}); the "
            f"data exclude a gap above {d:.2f}, the smallest this audit detects at "
            f"n = {n} with {POWER:.0%} power (the group's interval holds the "
            f"reference's value and lies within {_fmt(ref)} +/- {d:.2f}), but not "
            f"a smaller one."
        )
        return {**out, "text": text, "short": f"no gap > {d:.2f}"}
    # inconclusive
    if not _plannable(metric):
        seen = f"{label} has no exact MATCH law, so the smallest gap this audit "
        seen += "detects is not computed"
        short = "inconclusive"
    elif np.isnan(gap):
        seen = f"at n = {n} no {label} gap at all is detectable with {POWER:.0%} power"
        short = "no gap detectable"
    else:
        seen = (
            f"at n = {n} this audit detects only a {label} gap above {d:.2f} (with "
            f"{POWER:.0%} power), and the group's interval reaches further from "
            f"the reference's value than that"
        )
        short = f"needs gap > {d:.2f}"
    why = ""
    if out["outside"]:
        if not np.isnan(p) and p <= report.alpha and report.correction:
            why = (
                f"; its value lies outside the reference's {1 - report.alpha:.0%} "
                f"range at this size ({_fmt(r_low)} to {_fmt(r_high)}) and its "
                f"unadjusted p = {_fmt_p(p)} is below alpha, but not after the "
                f"{report.correction} adjustment for the {report._n_tests(metric)} "
                f"{report._family_words(label)} (multiplicity)"
            )
        else:
            why = (
                f"; its value lies just outside the {1 - report.alpha:.0%} range "
                f"the test accepts at this size ({_fmt(r_low)} to {_fmt(r_high)}, "
                f"found at the pooled count of its ends), but the test's own p = "
                f"{_fmt_p(p)} is above alpha"
            )
    text = f"{head}: inconclusive at this size ({test}){why}; {seen}."
    return {**out, "text": text, "short": short}


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
        ``"no gap detected"``: not rejected and the group's interval holds the
        reference's value and lies within it plus or minus the detectable gap;
        ``"inconclusive"``: any other non-rejection;
        ``"undefined"``); then, with the separation test, ``separation_p_tpr``
        and ``separation_p_fpr``: the smallest adjusted p-value of the
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
    ci : float
        Level of the groups' confidence intervals (``1 - alpha`` unless the audit
        was given ``ci=``).
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
        ci=None,
        marginals=None,
        parts=None,
        overall=None,
        family="all",
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
        self.marginals = marginals
        self.parts = parts
        self.overall = overall or {}
        self.family = family

    def __repr__(self):
        return (
            f"AuditReport(title={self.title!r}, groups={len(self.frame)}, "
            f"metrics={self.metrics}, alpha={self.alpha})"
        )

    # -- findings -------------------------------------------------------------------
    def _ref_word(self):
        return {"rest": "everyone else", "total": "everyone"}.get(
            self.reference, "the reference"
        )

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
        row = self.frame.loc[group]
        return _cell(self, group, row, metric)

    def _ranked(self):
        """``(kind, sort key, text)`` of every finding, in the order shown."""
        out = []
        f = self.frame
        for metric in self.metrics:
            for group, row in f.iterrows():
                c = _cell(self, group, row, metric)
                v = c["verdict"]
                if v == "gap":
                    out.append(("gap", c["p_adjusted"], c["text"]))
                elif v == "undefined":
                    out.append(("undefined", 0.0, c["text"]))
                elif v == "inconclusive" and c["outside"]:
                    out.append(("outside", c["p"], c["text"]))
                elif abs(c["difference"]) >= 0.05:  # not rejected: what it can say
                    out.append(("inconclusive", -abs(c["difference"]), c["text"]))
        order = {"gap": 0, "outside": 1, "undefined": 3, "inconclusive": 4}
        out.sort(key=lambda t: (order[t[0]], t[1]))
        if self.separation_violated is not None:
            out.append(("separation", 0.0, self._separation_line()))
        out += [("blind", 0.0, text) for text in self._blind_spots()]
        small = f.index[f["n"] < _SMALL_N]
        if len(small):
            names = ", ".join(_name(g) for g in small)
            out.append(
                (
                    "small",
                    0.0,
                    f"Small group(s) with fewer than {_SMALL_N} people: {names}. "
                    f"Their raw values are noisy; read their confidence intervals, "
                    f"compare the smoothed values and the reference ranges, and read "
                    f"a large p-value as 'not enough data', not as 'fair'.",
                )
            )
        # the separation verdict ranks after the gaps and the values outside
        # their range, before the undefined and inconclusive ones
        first = [x for x in out if x[0] in ("gap", "outside")]
        sep = [x for x in out if x[0] == "separation"]
        rest = [x for x in out if x[0] not in ("gap", "outside", "separation")]
        return first + sep + rest

    def _separation_line(self):
        adjusted = "adjusted " if self.correction else ""
        sep = self.separation
        parts = []
        for m in ("tpr", "fpr"):
            rows = sep[sep["metric"] == m]
            if len(rows):
                parts.append(
                    f"smallest {adjusted}p for equal {m.upper()} "
                    f"{_fmt_p(float(rows['p_adjusted'].min()))}"
                )
        verdict = "violated" if self.separation_violated else "no violation detected"
        return (
            f"Separation (equalized odds): {verdict} at alpha = {self.alpha:g} "
            f"({'; '.join(parts)})."
        )

    def _blind_spots(self):
        """Per metric: how many non-rejections are inconclusive and the gaps missed."""
        lines = []
        f = self.frame
        for metric in self.metrics:
            col = f"{metric}_verdict"
            if col not in f:
                continue
            label = _label(metric)
            unsure = f[col] == "inconclusive"
            if not unsure.any():
                continue
            gap = f[f"{metric}_detectable_gap"].abs()
            if not _plannable(metric):
                lines.append(
                    f"What the audit could not see, {label}: {int(unsure.sum())} "
                    f"group(s) inconclusive at their size; {label} has no exact "
                    f"MATCH law, so the smallest detectable gap is not computed."
                )
                continue
            blind = f.index[unsure & gap.isna()]
            seen = unsure & gap.notna()
            parts = []
            if seen.any():
                sizes = f.loc[seen, "n"]
                lo, hi = gap[seen].min(), gap[seen].max()
                span = f"{hi:.2f} (n = {int(sizes[gap[seen].idxmax()])})"
                if f"{lo:.2f}" != f"{hi:.2f}":
                    span += f" to {lo:.2f} (n = {int(sizes[gap[seen].idxmin()])})"
                parts.append(f"the smallest {label} gap it detects is {span}")
            if len(blind):
                parts.append(
                    f"at the size of {len(blind)} of them "
                    f"({_list_names(blind)}) no {label} gap at all is detectable"
                )
            lines.append(
                f"What the audit could not see, {label}: {int(unsure.sum())} of "
                f"{len(f)} group(s) inconclusive at their size (not rejected, but "
                f"the data allow a gap the audit would miss); {'; '.join(parts)} "
                f"with {POWER:.0%} power."
            )
        return lines

    def findings(self):
        """The findings of :meth:`summary`, one sentence each, as a list of str.

        Ranked: gaps (smallest adjusted p first), values outside the reference's
        range that the adjusted test does not reject (with the reason), the
        separation test, undefined metrics, differences of 0.05 or more that the
        test does not reject (with the smallest gap it detects at the group's
        size), what the audit could not see per metric,
        and the small groups.
        """
        return [text for _, _, text in self._ranked()]

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
        ranked = self._ranked()
        general = ("separation", "blind", "small")
        per_group = [t for k, _, t in ranked if k not in general]
        rest = [t for k, _, t in ranked if k in general]
        shown = per_group[:max_findings]
        n_people = int(self.frame["n"].sum())
        head = (
            f"{display_label(self.title)}: {len(self.frame)} groups, "
            f"{n_people:,} people; metrics {', '.join(self.metrics)}; "
            f"alpha = {self.alpha:g}"
            + (
                f" ({self.correction}-adjusted over "
                + (
                    f"all {self._n_tests(self.metrics[0])} MATCH tests of the audit)"
                    if self.family == "all"
                    else "each metric's groups)"
                )
                if self.correction and self.match is not None
                else f" ({self.correction}-adjusted)"
                if self.correction
                else ""
            )
        )
        counts = self._verdict_counts()
        if counts:
            head += "\n" + counts
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
            "A p-value above alpha does not show that the groups are alike: a "
            "non-rejection is 'no gap detected' only when the group's interval "
            "lies within the smallest gap the audit detects at its size; otherwise "
            "it is inconclusive at this size."
        )
        return "\n".join([head, *body, tail])

    def _verdict_counts(self):
        """``Verdicts of 24 group x metric cells: 3 gap, ...`` (empty untested)."""
        cols = [f"{m}_verdict" for m in self.metrics if f"{m}_verdict" in self.frame]
        if not cols:
            return ""
        values = self.frame[cols].to_numpy().ravel()
        parts = [
            f"{int((values == v).sum())} {v}" for v in VERDICTS if (values == v).any()
        ]
        return f"Verdicts of {values.size} group x metric cells: {', '.join(parts)}."

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
        if path is not None:
            check_destination(path, force=force)
        payload = {
            "title": self.title,
            "version": __version__,
            "metrics": self.metrics,
            "alpha": self.alpha,
            "ci": self.ci,
            "correction": self.correction,
            "family": self.family,
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
            "marginals": None
            if self.marginals is None
            else {
                str(a): json.loads(t.reset_index().to_json(orient="records"))
                for a, t in self.marginals.items()
            },
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
        page = render(self, self._plots_html() if include_plots else "")
        if path is not None:
            write_atomic(path, page, what="the HTML report", force=force)
        return page

    def _plots_html(self):
        """:meth:`plot` as an embedded PNG with its caption (a note without
        matplotlib)."""
        try:
            fig = self.plot()
        except ImportError:
            return "<p>Plots need matplotlib (pip install matplotlib).</p>"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        import matplotlib.pyplot as plt

        plt.close(fig)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        smoothing = html.escape(display_label(self.smoothing))
        return (
            '<figure><img alt="Per-group metric values with the '
            'reference ranges" src="data:image/png;base64,'
            f"{data}\"><figcaption>Circles: raw values, with the group's "
            f"{self.ci:.0%} confidence interval as a thin line (where "
            f"the group's true value may be); diamonds: smoothed values "
            f"({smoothing}); grey bars just below: the "
            f"reference's range at the group's size (the central "
            f"{1 - self.alpha:.0%} range of the metric under the "
            f"reference's proportions for a group of that size; a raw "
            f"value outside it is unlikely to be sample-size noise)."
            "</figcaption>"
            "</figure>"
        )

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
