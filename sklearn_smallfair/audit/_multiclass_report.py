"""The report of a multiclass audit: one binary :class:`AuditReport` per class."""

import html

import numpy as np
import pandas as pd
from markupsafe import Markup

from .. import __version__
from .._output import check_destination, display_label, write_atomic
from ._detectable import VERDICTS
from ._format import class_name as _class_name
from ._format import reference_word
from ._html import FOLD_GROUPS, render_sections
from ._prose import caveat
from ._report import _groups_line, _n_flagged, _repr_text
from ._templates import macro as _macro
from ._templates import page, render_template
from ._templates import table as _table
from ._writers import records, with_labels, write_csv, write_json

__all__ = ["MulticlassAuditReport"]

_GENERAL = ("separation", "blind", "small")


class MulticlassAuditReport:
    """Result of a multiclass fairness audit, built by the audit: one audit per class.

    Built and returned by :func:`audit_predictions` (and
    :meth:`FairnessAudit.audit`) for targets with more than two classes or given
    ``labels``; there is no need to construct it directly. Class ``k``'s audit
    is the binary audit of the groups' one-vs-rest matrices of class ``k`` (class
    ``k`` the positive class, every other class negative): the
    :class:`AuditReport` of ``y_true == k`` against ``y_pred == k``, except that
    the p-values are adjusted over the tests of every class together (for each
    metric, one family of all groups times all classes; for the separation test,
    one family per rate of all pairs of groups times all classes).

    Parameters
    ----------
    reports : dict of label to AuditReport
        The binary audit of each class, keyed by class in the order of
        ``labels``, with p-values already adjusted over every class. The
        settings (``metrics``, ``alpha``...) are read from the first.
    labels : array-like of shape (n_classes,)
        The classes, stored as an ndarray.
    counts : MulticlassCounts
        The groups' ``K x K`` confusion matrices, rows true and columns
        predicted, in the order of ``labels``.
    separation_violated : bool or None
        Whether the separation test rejects equal TPR or FPR for some class;
        ``None`` when the separation test was not run.
    n_tests : dict of str to int
        Per metric, the number of MATCH tests of its correction family (empty
        when the MATCH test was not run).
    title : str
        Title of the report.
    matrix : pandas.DataFrame, default=None
        The whole-matrix metrics' table (see :attr:`matrix`); ``None`` without
        ``matrix_metrics``.

    Attributes
    ----------
    reports : dict of label to AuditReport
        The audit of each class, in the order of :attr:`labels`.
    labels : ndarray of shape (n_classes,)
        The classes.
    frame : pandas.DataFrame
        The classes' :attr:`AuditReport.frame` stacked, one row per (group,
        class): a ``MultiIndex`` with levels ``group`` (the groups' name) and
        ``class``, as in :func:`~sklearn_smallfair.metrics.group_metrics`'s
        multiclass table;
        ``n_pos`` is the class's support in the group and ``n_neg`` its other
        people. ``frame.xs(label, level="class")`` is one class's table.
    counts : MulticlassCounts
        The groups' ``K x K`` matrices, rows true and columns predicted.
    match : pandas.DataFrame or None
        The MATCH tests of every class, with a ``class`` column.
    separation : pandas.DataFrame or None
        The separation tests of every class, with a ``class`` column.
    separation_violated : bool or None
        Whether the separation test rejects equal TPR or FPR for some class.
    n_tests : dict
        Per metric, the number of MATCH tests of its correction family (its
        tests of every group and class).
    matrix : pandas.DataFrame or None
        With ``matrix_metrics``: one row per group, for each whole-matrix metric
        ``m``: ``m`` (raw), ``m_low``/``m_high``, ``m_smoothed`` (the
        smoothed ``K x K`` matrix's), ``m_reference``,
        ``m_interval_low``/``m_interval_high`` (the reference's range at the
        group's size), ``m_match_p_value``, ``m_match_p_adjusted`` (over the
        groups), ``m_match_reject`` and ``m_match_method``.
    metrics, alpha, confidence_level, correction, smoothing, reference
        As in :class:`AuditReport`.
    title : str
        Title of the report.

    Examples
    --------
    >>> from sklearn_smallfair.audit import audit_predictions
    >>> y_true = ["low", "mid", "high"] * 20
    >>> y_pred = ["low", "mid", "high"] * 10 + ["low", "low", "high"] * 10
    >>> groups = ["a"] * 30 + ["b"] * 30
    >>> report = audit_predictions(
    ...     y_true, y_pred, sensitive_features=groups, metrics=["tpr"],
    ...     labels=["low", "mid", "high"], tests=("match",))
    >>> report.frame[["n", "n_pos", "tpr", "tpr_verdict"]]
                  n  n_pos  tpr   tpr_verdict
    group class
    a     low    30     10  1.0  inconclusive
          mid    30     10  1.0           gap
          high   30     10  1.0  inconclusive
    b     low    30     10  1.0  inconclusive
          mid    30     10  0.0           gap
          high   30     10  1.0  inconclusive
    >>> report.reports["mid"].frame["tpr"]
    group
    a    1.0
    b    0.0
    Name: tpr, dtype: float64
    """

    def __init__(
        self,
        *,
        reports,
        labels,
        counts,
        separation_violated,
        n_tests,
        title,
        matrix=None,
    ):
        self.reports = reports
        self.labels = np.asarray(labels)
        self.counts = counts
        self.separation_violated = separation_violated
        self.n_tests = n_tests
        self.title = title
        self.matrix = matrix
        first = next(iter(reports.values()))
        self.metrics = list(first.metrics)
        self.alpha = first.alpha
        self.confidence_level = first.confidence_level
        self.correction = first.correction
        self.smoothing = first.smoothing
        self.reference = first.reference
        self.frame = self._stack([r.frame for r in reports.values()])
        self.match = self._tests("match")
        self.separation = self._tests("separation")

    def _stack(self, frames):
        name = frames[0].index.name or "group"
        keys = list(self.reports)
        out = pd.concat(frames, keys=keys, names=["class", name])
        out = out.swaplevel(0, 1)
        order = pd.MultiIndex.from_product(
            [frames[0].index, keys], names=[name, "class"]
        )
        return out.reindex(order)

    def _tests(self, attr):
        tables = [getattr(r, attr) for r in self.reports.values()]
        if any(t is None for t in tables):
            return None
        out = []
        for label, t in zip(self.reports, tables):
            t = t.copy()
            t.insert(0, "class", label)
            out.append(t)
        return pd.concat(out, ignore_index=True)

    def __repr__(self):
        """Several lines: the classes, groups, metrics and tests, the flagged
        cells."""
        first = next(iter(self.reports.values()))
        names = [_class_name(x) for x in self.labels]
        flagged = [_n_flagged(r) for r in self.reports.values()]
        return _repr_text(
            first,
            "MulticlassAuditReport",
            extra=[f"  classes ({len(names)}): {_groups_line(names)}"],
            flagged=(sum(f for f, _ in flagged), sum(t for _, t in flagged)),
            title=self.title,
        )

    def _repr_html_(self):
        """The title, the headline and each class's verdicts, for a notebook."""
        first = next(iter(self.reports.values()))
        gaps = [
            f"class {_class_name(label)}: {text}"
            for label, r in self.reports.items()
            for kind, _, text in r._ranked()
            if kind == "gap"
        ]
        counts = self._verdict_counts()
        if gaps:
            headline = gaps[0]
        elif counts:
            headline = f"Verdicts of the group x class x metric cells: {counts}."
        else:
            headline = "No test was run."
        out = pd.DataFrame(index=pd.Index([_class_name(x) for x in self.labels]))
        out["groups"] = [len(r.frame) for r in self.reports.values()]
        out["support"] = [
            f"{int(r.frame['n_pos'].sum()):,}" for r in self.reports.values()
        ]
        out["flagged"] = [_n_flagged(r)[0] for r in self.reports.values()]
        out["verdicts"] = [
            self._verdict_counts(r) or "not tested" for r in self.reports.values()
        ]
        heads = {
            "groups": ("Groups", "Number of groups"),
            "support": ("People of the class", "People whose true class it is"),
            "flagged": ("Gaps", "Group x metric cells with a gap"),
            "verdicts": ("Verdicts", "Counts of the verdicts of the class's cells"),
        }
        grid = _macro("table")(
            _table(out, heads, index=("Class", "The class, audited one-vs-rest"))
        )
        parts = [
            f"<h3>{html.escape(display_label(self.title))}</h3>",
            f"<p><strong>{html.escape(display_label(headline))}</strong></p>",
            str(grid),
            f"<p>{len(first.frame)} groups; each class's per-group verdicts: "
            f"<code>.reports[label]</code>; the whole page: "
            f"<code>.to_html()</code>.</p>",
        ]
        return '<div class="smallfair-report">' + "".join(parts) + "</div>"

    # -- findings -------------------------------------------------------------------
    def _family(self):
        if not self.correction:
            return "no correction"
        n_groups = len(self.frame) // len(self.labels)
        first = next(iter(self.reports.values()))
        if getattr(first, "family", "all") == "all":
            return (
                f"{self.correction} over the {n_groups} groups x "
                f"{len(self.labels)} classes x {len(first.metrics)} "
                f"metric{'s' if len(first.metrics) != 1 else ''}"
            )
        return (
            f"{self.correction} over the {n_groups} groups x {len(self.labels)} "
            f"classes of each metric"
        )

    def _tests_per_metric(self):
        """``"; MATCH tests: tpr 12, fpr 12"``: each metric's family size."""
        if not self.correction or not self.n_tests:
            return ""
        sizes = ", ".join(f"{m} {n}" for m, n in self.n_tests.items())
        return f"; MATCH tests per family: {sizes}"

    def findings(self):
        """Every class's findings (:meth:`AuditReport.findings`), each sentence
        prefixed with its class, as a list of str."""
        return [
            f"class {_class_name(label)}: {text}"
            for label, r in self.reports.items()
            for text in r.findings()
        ]

    def _verdict_counts(self, report=None):
        reports = [report] if report is not None else list(self.reports.values())
        values = np.concatenate(
            [
                r.frame[f"{m}_verdict"].to_numpy()
                for r in reports
                for m in self.metrics
                if f"{m}_verdict" in r.frame
            ]
            or [np.array([], dtype=object)]
        )
        if not values.size:
            return ""
        return ", ".join(
            f"{int((values == v).sum())} {v}" for v in VERDICTS if (values == v).any()
        )

    def summary(self, max_findings=12):
        """A short text of the findings that matter, class by class.

        Parameters
        ----------
        max_findings : int, default=12
            At most this many per-group findings per class (the rest are
            counted).

        Returns
        -------
        str
            The summary: the audit's settings, the verdicts' counts, then each
            class's ranked findings, one per line.
        """
        first = next(iter(self.reports.values()))
        n_groups = len(first.frame)
        n_people = int(first.frame["n"].sum())
        head = (
            f"{display_label(self.title)}: {len(self.labels)} classes "
            f"({', '.join(_class_name(x) for x in self.labels)}), each audited "
            f"one-vs-rest; {n_groups} groups, {n_people:,} people; metrics "
            f"{', '.join(self.metrics)}; alpha = {self.alpha:g} ({self._family()})"
        )
        lines = [head]
        counts = self._verdict_counts()
        if counts:
            lines.append(
                f"Verdicts of {n_groups * len(self.labels) * len(self.metrics)} "
                f"group x class x metric cells: {counts}."
            )
        if self.separation_violated is not None:
            bad = [
                _class_name(label)
                for label, r in self.reports.items()
                if r.separation_violated
            ]
            lines.append(
                "Separation (equalized odds, each class one-vs-rest): "
                + (
                    f"violated for class(es) {', '.join(bad)}."
                    if bad
                    else "no violation detected for any class."
                )
            )
        lines += self._matrix_lines()
        small = []
        predicted_all = self.counts.counts.sum(axis=(0, 1))
        for k, (label, r) in enumerate(self.reports.items()):
            ranked = r._ranked()
            per_group = [t for k, _, t in ranked if k not in _GENERAL]
            general = [t for k, _, t in ranked if k in ("separation", "blind")]
            small = [t for k, _, t in ranked if k == "small"]
            support = int(r.frame["n_pos"].sum())
            predicted = int(predicted_all[k])
            lines.append(
                f"Class {_class_name(label)} ({support:,} people of the class, "
                f"{predicted:,} predicted as it):"
            )
            shown = per_group[:max_findings]
            lines += [f"  - {x}" for x in shown]
            if len(per_group) > len(shown):
                lines.append(
                    f"  - ... and {len(per_group) - len(shown)} more (see .frame)."
                )
            if not per_group:
                lines.append(
                    "  - No group's metric is unlikely under the reference at its "
                    "size, and none differs from it by 0.05 or more."
                )
            lines += [f"  - {x}" for x in general]
        lines += [f"- {x}" for x in small]
        lines.append(caveat(next(iter(self.reports.values())).tolerance))
        return "\n".join(lines)

    def _matrix_lines(self):
        """One line per whole-matrix metric: the groups it rejects (or none)."""
        t = self.matrix
        if t is None:
            return []
        ref = reference_word(self.reference)
        lines = []
        for m in self.matrix_metrics:
            if f"{m}_match_reject" not in t:
                continue
            hits = [
                f"{display_label(_plain(g))} (n = {int(r['n'])}): {r[m]:.3f} vs "
                f"{r[f'{m}_reference']:.3f} for {ref} (adjusted p = "
                f"{r[f'{m}_match_p_adjusted']:.3g})"
                for g, r in t[t[f"{m}_match_reject"]].iterrows()
            ]
            lines.append(
                f"Whole-matrix {m} (MATCH, {self.correction or 'no correction'} over "
                f"the groups): "
                + ("; ".join(hits) if hits else "no group unlikely under the reference")
                + "."
            )
        return lines

    @property
    def matrix_metrics(self):
        """The whole-matrix metrics of :attr:`matrix` (empty without)."""
        if self.matrix is None:
            return []
        suffix = "_reference"  # one column per metric
        return [c[: -len(suffix)] for c in self.matrix.columns if c.endswith(suffix)]

    def _matrix_html(self):
        t = self.matrix
        if t is None:
            return ""
        tables = []
        for m in self.matrix_metrics:
            rows = []
            for g, r in t.iterrows():
                rows.append(
                    {
                        "label": _plain(g),
                        "n": f"{int(r['n']):,}",
                        "reject": bool(r.get(f"{m}_match_reject", False)),
                        "value": num(r[m]),
                        "low": num(r.get(f"{m}_low", np.nan)),
                        "high": num(r.get(f"{m}_high", np.nan)),
                        "smoothed": num(r[f"{m}_smoothed"]),
                        "reference": num(r[f"{m}_reference"]),
                        "range_low": num(r.get(f"{m}_interval_low", np.nan)),
                        "range_high": num(r.get(f"{m}_interval_high", np.nan)),
                        "p": num(r.get(f"{m}_match_p_adjusted", np.nan)),
                    }
                )
            tables.append({"metric": m, "rows": rows})
        return _macro("whole_matrix", "multiclass.html")(
            {
                "correction": str(self.correction or "no"),
                "range_level": f"{1 - self.alpha:.0%}",
                "level": f"{self.confidence_level:.0%}",
                "tables": tables,
            }
        )

    # -- plots ---------------------------------------------------------------------
    def plot(self, label=None, *, metrics=None, figsize=None, ax=None):
        """One class's plot (:meth:`AuditReport.plot`).

        Parameters
        ----------
        label : class label, default=None
            The class to draw; default the first of :attr:`labels`.
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
            The figure holding the class's plot (that of ``ax`` when given).
        """
        report = self._report(label)
        return report.plot(metrics=metrics, figsize=figsize, ax=ax)

    def _report(self, label):
        if label is None:
            return next(iter(self.reports.values()))
        for key, r in self.reports.items():
            if key == label or str(key) == str(label):
                return r
        raise ValueError(
            f"label={label!r} is not a class of this report; the classes are "
            f"{self.labels.tolist()}."
        )

    # -- output --------------------------------------------------------------------
    def to_csv(self, path=None, *, escape_formulas=True, force=False):
        """The stacked per-(group, class) ``frame`` as CSV; see
        :meth:`AuditReport.to_csv`.

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
        """
        return write_csv(self.frame, path, escape_formulas=escape_formulas, force=force)

    def to_json(self, path=None, *, force=False):
        """The report as JSON: settings, each class's findings and all tables.

        Returns the JSON text and writes it to ``path`` when given.

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
            "classes": self.labels.tolist(),
            "metrics": self.metrics,
            "alpha": self.alpha,
            "confidence_level": self.confidence_level,
            "correction": self.correction,
            "correction_family": self._family(),
            "smoothing": self.smoothing,
            "reference": str(self.reference),
            "findings": {str(label): r.findings() for label, r in self.reports.items()},
            "separation_violated": self.separation_violated,
            "groups": records(with_labels(self.frame)),
            "confusion_matrices": records(self.counts.to_frame()),
            "whole_matrix": None
            if self.matrix is None
            else records(with_labels(self.matrix)),
            "match": records(self.match),
            "separation": records(self.separation),
        }

    def to_html(self, path=None, *, include_plots=True, force=False):
        """One self-contained HTML file: an overview of the classes, then one
        section per class (the binary report of the class), with a navigation.

        Element ids are prefixed per class (``c0-summary``...), so the classes'
        sections and sorting buttons do not collide. See
        :meth:`AuditReport.to_html`.

        Parameters
        ----------
        path : str or path-like, default=None
            Where to write the file (UTF-8). The file is replaced whole
            (written to a temporary file, then renamed); an empty path, a
            directory or a symbolic link (without ``force``) is refused.
        include_plots : bool, default=True
            Embed each class's :meth:`plot` as a PNG (skipped, with a note, when
            matplotlib is not installed).
        force : bool, default=False
            Write through a symbolic link at ``path`` to the file it points to.

        Returns
        -------
        str
            The HTML text.
        """
        if path is not None:
            check_destination(path, force=force)
        sections, css, classes = [], [], []
        predicted = self.counts.counts.sum(axis=(0, 1))
        for k, (label, r) in enumerate(self.reports.items()):
            plots = r._plots_html() if include_plots else ""
            body, rule = render_sections(r, plots, prefix=f"c{k}-")
            css.append(rule)
            # the class's sections one heading level down
            body = "".join(body).replace("<h3>", "<h4>").replace("</h3>", "</h4>")
            body = body.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
            sep = ""
            if r.separation_violated is not None:
                sep = "violated" if r.separation_violated else "no violation detected"
            c = {
                "k": k,
                "name": _class_name(label),
                "support": f"{int(r.frame['n_pos'].sum()):,}",
                "predicted": f"{int(predicted[k]):,}",
                "verdicts": self._verdict_counts(r),
                "separation": sep,
            }
            classes.append(c)
            section = _macro("class_section", "multiclass.html")(c, Markup(body))
            sections.append(str(section))
        overview = _macro("overview", "multiclass.html")(
            {
                "family": self._family(),
                "per_metric": self._tests_per_metric(),
                "classes": classes,
            }
        )
        overview = str(overview) + str(self._matrix_html()) + str(self._matrices_html())
        first = next(iter(self.reports.values()))
        meta = (
            f"sklearn-smallfair {__version__}; {len(self.labels)} classes, "
            f"{len(first.frame)} groups, {int(first.frame['n'].sum()):,} people; "
            f"reference: {reference_word(self.reference)} "
            f"(reference={self.reference!r}); smoothing: {self.smoothing}; alpha = "
            f"{self.alpha:g}; correction: {self._family()}"
        )
        body = [str(_macro("nav", "multiclass.html")(classes)), overview, *sections]
        text = page(
            self.title,
            meta,
            "\n".join([*body, render_template("notes.html")]),
            "".join(css),
            stylesheets=["multiclass.css"],
        )
        if path is not None:
            write_atomic(path, text, what="the HTML report", force=force)
        return text

    def _matrices_html(self):
        """The groups' K x K confusion matrices, side by side (folded for many
        groups)."""
        tables = [
            {
                "label": _plain(group),
                "n": _count(matrix.sum()),
                "rows": [[_count(v) for v in row] for row in matrix],
            }
            for group, matrix in zip(self.counts.groups, self.counts.counts)
        ]
        return _macro("matrices", "multiclass.html")(
            {
                "names": [_class_name(x) for x in self.labels],
                "tables": tables,
                "folded": len(tables) > FOLD_GROUPS,
            }
        )


def num(x):
    """``0.826``; ``undefined`` for NaN."""
    return "undefined" if np.isnan(x) else f"{x:.3g}"


def _count(value):
    value = float(value)
    return f"{int(value):,}" if value.is_integer() else f"{value:,.2f}"


def _plain(group):
    value = group.item() if isinstance(group, np.generic) else group
    return str(value)
