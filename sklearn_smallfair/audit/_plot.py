"""Plot of an audit: per-group values with their intervals and the reference ranges."""

import numbers

import numpy as np

from .._plotting import _check_matplotlib
from ._format import name as _name

__all__ = ["AuditDisplay"]


def _tick_label(group, n):
    """A group's tick label: displayable (:func:`_name`), dollars kept literal.

    matplotlib reads text between two ``$`` as mathtext; a group label such as
    ``$\\frac$`` would otherwise be parsed (and fail to draw).
    """
    return _name(group).replace("$", r"\$") + f" (n={int(n)})"


def _columns(metric):
    """The columns of ``AuditReport.frame`` drawn in the panel of ``metric``."""
    return (
        metric,
        f"{metric}_smoothed",
        f"{metric}_interval_low",
        f"{metric}_interval_high",
    )


#: Vertical offset of the reference's range below each group's row.
_RANGE_OFFSET = 0.22
#: Colour of a raw value and its interval by the cell's verdict: darker shades of
#: the report page's verdict colours, visible on white.
VERDICT_COLORS = {
    "gap": "#c0392b",
    "inconclusive": "#d68910",
    "no gap detected": "#1e8449",
    "undefined": "#7f8c8d",
    "not tested": "#1f77b4",
}
#: The orders of the rows of :meth:`AuditDisplay.from_report`.
ORDERS = ("evidence", "gap", "size", "name")


class AuditDisplay:
    """Per-group values of an audit with their intervals and the reference ranges.

    One panel per metric, one row per group, the first row on top. For each
    group: the raw value (circle; missing when undefined), coloured by the
    cell's verdict when the frame has ``m_verdict`` (red: gap; amber:
    inconclusive; green: no gap detected; grey: undefined), with the group's
    confidence interval as a thin line through it in the same colour (where
    the group's true value may be; drawn when the frame has ``m_low`` and
    ``m_high``), the smoothed value (diamond)
    and, as a grey bar just below, the reference's range at the group's size:
    the central ``1 - alpha`` range of the metric under the reference's
    proportions for a group of that size. A raw value outside its grey bar is
    unlikely to be sample-size noise; a long thin line says the group's data
    pin its value down poorly. Group labels are shown with control and
    Unicode bidirectional characters escaped (``\\u202e``), and ``$`` as
    written (never as mathtext). Prefer :meth:`from_report` (or
    :meth:`AuditReport.plot`) to create a display; all parameters are stored as
    attributes. Needs matplotlib.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per group, indexed by group, as :attr:`AuditReport.frame`:
        column ``n`` and, for every metric ``m`` in ``metrics``, the columns
        ``m`` (raw value, NaN when undefined), ``m_smoothed``,
        ``m_interval_low`` and ``m_interval_high`` (the reference's range), and
        optionally ``m_low`` and ``m_high`` (the group's interval).
    metrics : list of str
        The metrics to draw, one panel each, in this order.
    confidence_level : float or None, default=None
        Level of the groups' intervals, for the legend.
    alpha : float or None, default=0.05
        ``1 - alpha`` is the coverage of the reference's ranges, for the legend
        (``None``: the legend names no coverage).

    Attributes
    ----------
    raw_ : dict of str to matplotlib PathCollection
        The raw values (circles), keyed by metric; ``raw_[m].get_offsets()``
        holds each group's ``(value, row)``.
    smoothed_ : dict of str to matplotlib Line2D
        The smoothed values (diamonds), keyed by metric.
    ranges_ : dict of str to matplotlib LineCollection
        The reference's ranges at each group's size (grey bars), keyed by metric.
    intervals_ : dict of str to matplotlib LineCollection or None
        The groups' confidence intervals (thin lines), keyed by metric; None for
        a metric whose frame has no ``m_low``/``m_high`` columns.
    legend_ : matplotlib Legend
        The legend: below the panels of a new figure, in the first panel when
        ``ax`` was given.
    ax_ : matplotlib Axes or ndarray of Axes
        The Axes of the plot: one Axes for one metric, else an array of shape
        ``(n_metrics,)`` holding the panel of each metric, in metric order.
    figure_ : matplotlib Figure
        The figure holding the plot.

    See Also
    --------
    AuditReport.plot : The same plot from a report, returning the figure.
    audit_predictions : Compute the report to plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_smallfair.audit import AuditDisplay, audit_predictions
    >>> y_true = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0]
    >>> y_pred = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> report = audit_predictions(y_true, y_pred, sensitive_features=groups,
    ...                            metrics=["tpr", "fpr"], tests=("match",))
    >>> fig, axes = plt.subplots(1, 2, sharey=True)
    >>> disp = AuditDisplay.from_report(report, ax=axes)
    >>> [panel.get_title() for panel in disp.ax_]
    ['tpr', 'fpr']
    >>> disp.figure_ is fig
    True
    >>> disp.raw_["tpr"].get_offsets()[:, 0].round(3).tolist()
    [0.667, 0.667]
    >>> [label.get_text() for label in disp.ax_[0].get_yticklabels()]
    ['a (n=6)', 'b (n=6)']
    >>> plt.close(fig)
    """

    def __init__(self, *, frame, metrics, confidence_level=None, alpha=0.05):
        self.frame = frame
        self.metrics = metrics
        self.confidence_level = confidence_level
        self.alpha = alpha

    def plot(self, *, ax=None, figsize=None):
        """Draw the panels.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw: ``None`` creates a figure with one panel per metric
            (at most three per row, sharing the group axis) and the legend below
            them; or pass one Axes per metric (any array shape, filled in metric
            order; a single Axes for a single metric).
        figsize : tuple of float, default=None
            Size of the figure created when ``ax`` is None; default grows with
            the number of groups and panels.

        Returns
        -------
        display : AuditDisplay
            The display, with ``ax_``, ``figure_``, ``raw_``, ``smoothed_``,
            ``ranges_``, ``intervals_`` and ``legend_``.
        """
        plt = _check_matplotlib("AuditDisplay.plot")
        from matplotlib.axes import Axes

        metrics = list(self.metrics)
        if not metrics:
            raise ValueError("metrics is empty; pass at least one metric to draw.")
        frame = self.frame
        needed = ["n", *(c for m in metrics for c in _columns(m))]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise ValueError(
                f"frame is missing column(s) {missing}; expected AuditReport.frame "
                f"with the columns of metrics {metrics}."
            )
        k = len(metrics)
        created = ax is None
        if created:
            ncols = min(k, 3)
            nrows = -(-k // ncols)
            if figsize is None:
                figsize = (4.2 * ncols, 0.35 * len(frame) + 2.2 * nrows + 0.6)
            fig, grid = plt.subplots(
                nrows,
                ncols,
                figsize=figsize,
                squeeze=False,
                sharey=True,
                layout="constrained",  # long group names: no tight_layout warning
            )
            grid = grid.ravel()
            for extra in grid[k:]:
                extra.set_visible(False)
            axes = grid[:k]
        else:
            if figsize is not None:
                raise ValueError(
                    "figsize sizes the figure created when ax is None; with ax, "
                    "size the figure of ax instead."
                )
            axes = np.asarray([ax] if isinstance(ax, Axes) else ax, dtype=object)
            axes = axes.ravel()
            if axes.size != k or not all(isinstance(a, Axes) for a in axes):
                raise ValueError(
                    f"ax must be None or {k} matplotlib Axes, one per metric "
                    f"({metrics}); got {type(ax).__name__} of {axes.size} "
                    f"element(s)."
                )
            fig = axes[0].figure

        ypos = np.arange(len(frame))
        labels = [_tick_label(g, n) for g, n in zip(frame.index, frame["n"])]
        ci_label = "group's confidence interval"
        if self.confidence_level is not None:
            ci_label = f"group's {self.confidence_level:.0%} confidence interval"
        range_label = "reference's range at the group's size"
        if self.alpha is not None:
            range_label = f"reference's {1 - self.alpha:.0%} range at the group's size"
        self.raw_, self.smoothed_, self.ranges_, self.intervals_ = {}, {}, {}, {}
        colors, shown = {}, []
        for metric in metrics:
            verdict = frame.get(f"{metric}_verdict")
            if verdict is None:
                colors[metric] = np.full(len(frame), VERDICT_COLORS["not tested"])
                continue
            verdict = verdict.astype(object).where(verdict.notna(), "not tested")
            colors[metric] = np.array(
                [VERDICT_COLORS.get(v, VERDICT_COLORS["not tested"]) for v in verdict]
            )
            # an undefined value has no marker, so no legend entry either
            present = set(verdict) - {"undefined"}
            shown += [v for v in VERDICT_COLORS if v in present and v not in shown]
        for panel, metric in zip(axes, metrics):
            raw, smoothed, low, high = (
                frame[c].to_numpy(float) for c in _columns(metric)
            )
            ok = ~(np.isnan(low) | np.isnan(high))
            self.ranges_[metric] = panel.hlines(
                ypos[ok] + _RANGE_OFFSET,
                low[ok],
                high[ok],
                color="0.78",
                lw=4,
                label=range_label,
            )
            self.intervals_[metric] = None
            if {f"{metric}_low", f"{metric}_high"} <= set(frame.columns):
                c_low = frame[f"{metric}_low"].to_numpy(float)
                c_high = frame[f"{metric}_high"].to_numpy(float)
                has = ~(np.isnan(c_low) | np.isnan(c_high))
                self.intervals_[metric] = panel.hlines(
                    ypos[has],
                    c_low[has],
                    c_high[has],
                    # an empty collection still needs a colour for the legend
                    colors=colors[metric][has] if has.any() else "0.35",
                    lw=1.5,
                    label=ci_label,
                )
            self.raw_[metric] = panel.scatter(
                raw, ypos, c=colors[metric], s=36, zorder=3, label="raw"
            )
            (self.smoothed_[metric],) = panel.plot(
                smoothed, ypos, "D", color="0.2", ms=5, mfc="none", label="smoothed"
            )
            panel.set_yticks(ypos, labels)
            panel.set_title(metric)
            panel.grid(axis="x", color="0.92")
        for panel in axes:
            # one band per group, holding its row and its reference's range
            panel.set_ylim(len(frame) - 0.5, -0.5)  # the first group on top
        handles, names = axes[0].get_legend_handles_labels()
        if shown:  # one marker per verdict present, in the report's order
            from matplotlib.lines import Line2D

            if ci_label in names:  # the intervals take each verdict's colour
                handles[names.index(ci_label)] = Line2D([], [], color="0.35", lw=1.5)
            at = names.index("raw")
            handles[at : at + 1] = [
                Line2D([], [], ls="none", marker="o", color=VERDICT_COLORS[v])
                for v in shown
            ]
            names[at : at + 1] = [f"raw: {v}" for v in shown]
        if created:
            self.legend_ = fig.legend(
                handles, names, loc="outside lower center", ncols=2, frameon=False
            )
        else:
            self.legend_ = axes[0].legend(handles, names)
        self.ax_ = axes[0] if k == 1 else axes
        self.figure_ = fig
        return self

    @classmethod
    def from_report(
        cls,
        report,
        *,
        metrics=None,
        order="evidence",
        max_groups=None,
        ax=None,
        figsize=None,
    ):
        """Plot an audit report.

        Parameters
        ----------
        report : AuditReport
            The report of :func:`audit_predictions` or
            :meth:`FairnessAudit.audit`.
        metrics : str or list of str, default=None
            Metrics to draw, one panel each; default all audited metrics.
        order : {"evidence", "gap", "size", "name"}, default="evidence"
            The order of the rows, the first on top: ``"evidence"``, the
            report summary's default order (most gaps, then the smallest
            adjusted p-value, then the largest difference); ``"gap"``, the
            largest absolute difference from the reference over the drawn
            metrics first (undefined last); ``"size"``, the smallest group
            first; ``"name"``, by label.
        max_groups : int, default=None
            Draw only the first ``max_groups`` groups of the order (a figure of
            hundreds of rows cannot be read); ``None`` draws every group.
        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.
        figsize : tuple of float, default=None
            Size of the figure created when ``ax`` is None.

        Returns
        -------
        display : AuditDisplay
            The display, with the report's ``frame`` and the drawn ``metrics``.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> from sklearn_smallfair.audit import AuditDisplay, audit_predictions
        >>> y_true = [1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0]
        >>> y_pred = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1]
        >>> groups = ["a"] * 6 + ["b"] * 6
        >>> report = audit_predictions(y_true, y_pred, sensitive_features=groups,
        ...                            tests=("match",))
        >>> disp = AuditDisplay.from_report(report, metrics="fpr")
        >>> disp.ax_.get_title()
        'fpr'
        >>> plt.close(disp.figure_)
        """
        # an AuditReport (not imported: the report draws itself with this class)
        is_report = all(
            hasattr(report, a) for a in ("frame", "metrics", "alpha", "cell")
        ) and not hasattr(report, "reports")
        if not is_report:
            raise TypeError(
                f"report must be an AuditReport (from audit_predictions or "
                f"FairnessAudit.audit); got {type(report).__name__}."
            )
        if metrics is None:
            metrics = report.metrics
        elif isinstance(metrics, str):
            metrics = [metrics]
        metrics = list(metrics)
        unknown = [m for m in metrics if m not in report.metrics]
        if unknown:
            raise ValueError(
                f"metrics {unknown} were not audited; choose from {report.metrics}."
            )
        if not isinstance(order, str) or order not in ORDERS:
            raise ValueError(f"order must be one of {list(ORDERS)}; got {order!r}.")
        if max_groups is not None and (
            isinstance(max_groups, bool)
            or not isinstance(max_groups, numbers.Integral)
            or max_groups < 1
        ):
            raise ValueError(
                f"max_groups must be a positive integer or None; got {max_groups!r}."
            )
        rows = _row_order(report, metrics, order)[:max_groups]
        display = cls(
            frame=report.frame.loc[rows],
            metrics=metrics,
            confidence_level=report.confidence_level,
            alpha=report.alpha,
        )
        return display.plot(ax=ax, figsize=figsize)


def _row_order(report, metrics, order):
    """The groups of ``report`` in the rows' ``order`` (see ``from_report``)."""
    f = report.frame
    if order == "gap":
        diff = np.column_stack(
            [(f[m] - f[f"{m}_reference"]).abs().to_numpy(float) for m in metrics]
        )
        with np.errstate(invalid="ignore"):
            key = np.where(
                np.isnan(diff).all(axis=1),
                -1.0,
                np.nanmax(np.where(np.isnan(diff), -1.0, diff), axis=1),
            )
        return list(f.index[np.argsort(-key, kind="stable")])
    return report._group_order(order)
