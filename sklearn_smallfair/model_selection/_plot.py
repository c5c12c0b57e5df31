"""Plot the results of a downsampling experiment against the subgroup size."""

import numpy as np
import pandas as pd
from scipy.special import ndtri

from .._params import BOOLEAN, HasMethods, Number, StrOptions, validate_params
from .._plotting import _check_matplotlib, plot_text
from .._validation import check_bool, check_choice, format_label, format_labels
from ..metrics import get_metric
from ._statistics import _KEYS, _STATS

__all__ = ["DownsamplingDisplay"]

#: The statistics of the results, and ``rmse``, the square root of ``mse``.
_STATISTICS = (_STATS[0], "rmse", *_STATS[1:])
_LABELS = {
    "mse": "MSE",
    "rmse": "RMSE",
    "bias": "bias",
    "variance": "variance",
    "p_undefined": "P(score undefined)",
}


def _check_selection(selected, present, name, metric):
    """Labels of ``selected`` (all of ``present`` when None), in the given order."""
    if selected is None:
        return list(present)
    if np.ndim(selected) == 0:
        selected = [selected]
    selected = list(dict.fromkeys(selected))
    if not selected:
        raise ValueError(
            f"{name} is empty; pass None (all) or some of {format_labels(present)}."
        )
    present_set = set(present)
    missing = [s for s in selected if s not in present_set]
    if missing:
        raise ValueError(
            f"{name} {format_labels(missing)} not found in results for metric "
            f"{metric!r}; present: {format_labels(present, limit=50)}."
        )
    return selected


def _sort_curves(frame, orders):
    """Sort ``frame`` by the given label orders, then by ``n``."""
    keys = []
    for col, order in orders.items():
        rank = {label: i for i, label in enumerate(order)}
        frame[f"_{col}_rank"] = frame[col].map(rank)
        keys.append(f"_{col}_rank")
    frame = frame.sort_values([*keys, "n"], kind="stable")
    return frame.drop(columns=keys).reset_index(drop=True)


def _add_values(frame, value, se, statistic, z):
    """Add ``value`` (and the band ``value +- z se`` when ``se`` is given) to
    ``frame``."""
    value = np.asarray(value, dtype=float)
    if statistic == "rmse":
        value = np.sqrt(value)
        if se is not None:
            # delta method: se(sqrt(m)) = se(m) / (2 sqrt(m))
            with np.errstate(divide="ignore", invalid="ignore"):
                se = np.where(value > 0, np.asarray(se, float) / (2 * value), np.nan)
    frame["value"] = value
    if se is not None:
        se = np.asarray(se, dtype=float)
        frame["lower"] = value - z * se
        frame["upper"] = value + z * se
    return frame


def _pooled_curves(sub, column, statistic, estimators, band, z):
    keys = ["estimator", "n"]
    # equal-weight mean over the groups where the statistic is defined; NaN when
    # it is defined for none (pandas' mean skips NaN and gives NaN for all-NaN)
    value = sub.groupby(keys, sort=False)[column].mean()
    se = None
    if band:
        defined = sub[sub[column].notna()]
        se2 = defined["mse_se"].to_numpy(dtype=float) ** 2
        parts = pd.DataFrame(
            {
                "estimator": defined["estimator"].to_numpy(),
                "n": defined["n"].to_numpy(),
                "se2": se2,
                "unknown": np.isnan(se2),
            }
        )
        grouped = parts.groupby(keys, sort=False)
        pooled_se = np.sqrt(grouped["se2"].sum()) / grouped.size()
        pooled_se[grouped["unknown"].any()] = np.nan
        se = pooled_se.reindex(value.index).to_numpy(dtype=float)
    frame = value.index.to_frame(index=False)
    frame = _add_values(frame, value.to_numpy(dtype=float), se, statistic, z)
    return _sort_curves(frame, {"estimator": estimators})


def _group_curves(sub, column, statistic, estimators, groups, band, z):
    frame = pd.DataFrame(
        {
            "group": sub["group"].to_numpy(),
            "n": sub["n"].to_numpy(),
            "estimator": sub["estimator"].to_numpy(),
        }
    )
    se = sub["mse_se"].to_numpy(dtype=float) if band else None
    frame = _add_values(frame, sub[column].to_numpy(dtype=float), se, statistic, z)
    return _sort_curves(frame, {"group": groups, "estimator": estimators})


def _canonical_metric(metric):
    """A metric's canonical name (``"recall"`` is ``"tpr"``), as in the results.

    Names that are not registry metrics are kept as they are (results may hold
    other metrics), and reported as not found by the caller.
    """
    try:
        return get_metric(metric).name
    except (ValueError, TypeError):
        return metric


def _curves_from_results(
    results, *, metric, statistic, by_group, estimators, groups, confidence_level
):
    """Validate ``results`` and the options; return the data to plot."""
    if not isinstance(results, pd.DataFrame):
        raise TypeError(
            f"results must be the pandas.DataFrame returned by "
            f"downsampling_experiment; got {type(results).__name__}."
        )
    check_choice(statistic, "statistic", _STATISTICS)
    check_bool(by_group, "by_group")
    column = "mse" if statistic == "rmse" else statistic
    missing = [c for c in (*_KEYS, column) if c not in results.columns]
    if missing:
        raise ValueError(
            f"results is missing column(s) {missing}; expected the frame returned "
            f"by downsampling_experiment, with columns {[*_KEYS, column]} at least "
            f"(got {list(results.columns)})."
        )
    present_metrics = results["metric"].drop_duplicates().tolist()
    if not isinstance(metric, str) or metric not in present_metrics:
        raise ValueError(
            f"metric {metric!r} not found in results; present: "
            f"{format_labels(present_metrics, limit=50)}."
        )
    sub = results[results["metric"] == metric]
    estimators = _check_selection(
        estimators, sub["estimator"].drop_duplicates().tolist(), "estimators", metric
    )
    groups = _check_selection(
        groups, sub["group"].drop_duplicates().tolist(), "groups", metric
    )
    sub = sub[sub["estimator"].isin(estimators) & sub["group"].isin(groups)]
    dup = sub.duplicated(["group", "n", "estimator"])
    if dup.any():
        row = sub[dup].iloc[0]
        raise ValueError(
            f"results has several rows for group {format_label(row['group'])}, "
            f"n={row['n']}, metric {metric!r} and estimator "
            f"{format_label(row['estimator'])}; pass the results of one experiment "
            f"(or aggregate them first)."
        )
    band = (
        confidence_level is not None
        and statistic in ("mse", "rmse")
        and "mse_se" in sub.columns
    )
    # normal quantile of the pointwise band: 1.96 for a level of 0.95
    z = float(ndtri(0.5 + confidence_level / 2)) if band else None
    if by_group:
        return _group_curves(sub, column, statistic, estimators, groups, band, z)
    return _pooled_curves(sub, column, statistic, estimators, band, z)


class DownsamplingDisplay:
    """Error statistic of metric estimators against the subgroup size.

    Visualise the results of
    :func:`~sklearn_smallfair.model_selection.downsampling_experiment`: one line
    per estimator (raw counts, smoothings) of a statistic (``mse``, ``rmse``,
    ``bias``, ``variance`` or ``p_undefined``) of one metric against the subgroup
    size ``n``. Create a display with :meth:`from_results`; all parameters are
    stored as attributes.

    Pooled (``by_group=False``), each point is the equal-weight mean of the
    statistic over the groups, the pooling of the published results; groups
    where the statistic is undefined (NaN) at that size are left out of the mean,
    and the point is NaN when it is undefined for every group. For ``rmse`` the
    point is the square root of the pooled ``mse``.

    Per group (``by_group=True``), the display draws small multiples: one panel
    per group, with shared axes, and in each panel one line per estimator (same
    colour for an estimator in every panel; legend in the first panel).

    With Monte Carlo results (column ``mse_se``), ``statistic`` ``mse`` or
    ``rmse`` and a ``confidence_level``, a shaded band ``value ± z SE`` shows the
    pointwise Monte Carlo uncertainty (``z`` the normal quantile of the level:
    1.96 for 0.95).

    Parameters
    ----------
    curves : pandas.DataFrame
        Data to plot, with columns ``n``, ``estimator`` and ``value``; ``group``
        when ``by_group=True``; optionally ``lower`` and ``upper``, the band. The
        lines follow the order of first appearance of estimators (and groups).
    metric : str
        Name of the metric, used in the title.
    statistic : {"mse", "rmse", "bias", "variance", "p_undefined"}
        The statistic in ``value``, used in the y-axis label.
    by_group : bool
        Whether ``curves`` holds one curve per group and estimator (small
        multiples) or one pooled curve per estimator.

    Attributes
    ----------
    lines_ : dict
        The drawn :class:`matplotlib.lines.Line2D`, keyed by estimator, or by
        ``(group, estimator)`` when ``by_group=True``.
    bands_ : dict
        The Monte Carlo bands (:class:`matplotlib.collections.PolyCollection`),
        with the keys of ``lines_``; empty without a band.
    ax_ : matplotlib Axes or ndarray of Axes
        The Axes of the plot; when ``by_group=True``, an array of shape
        ``(n_groups,)`` holding the panel of each group, in group order.
    figure_ : matplotlib Figure
        The figure holding the plot.

    See Also
    --------
    downsampling_experiment : Compute the results to plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> from sklearn_smallfair.model_selection import (
    ...     DownsamplingDisplay, downsampling_experiment)
    >>> counts = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> res = downsampling_experiment(counts=counts, metrics="tpr", sizes=range(5, 21))
    >>> disp = DownsamplingDisplay.from_results(res, metric="tpr", logy=True)
    >>> disp.curves.head(3).round(4)
      estimator  n   value
    0       raw  5  0.2072
    1       raw  6  0.2005
    2       raw  7  0.1940
    >>> sorted(disp.lines_)
    ['cps_10', 'raw']
    >>> disp.ax_.get_xlabel(), disp.ax_.get_ylabel()
    ('subgroup size n', 'MSE (mean over groups)')
    >>> plt.close(disp.figure_)
    """

    def __init__(self, *, curves, metric, statistic, by_group):
        self.curves = curves
        self.metric = metric
        self.statistic = statistic
        self.by_group = by_group

    @validate_params(
        {"ax": [None, HasMethods(["plot"]), "array-like"], "logy": BOOLEAN}
    )
    def plot(self, *, ax=None, logy=False, **kwargs):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw. Pooled: one Axes (``None`` creates a figure). With
            ``by_group=True``: ``None`` creates a grid of panels with shared axes,
            or pass one Axes per group (any array shape, filled in group order).
        logy : bool, default=False
            Log-scale y axis (useful for ``mse``; not allowed for ``bias``, which
            can be negative).
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line (they
            override the display's ``color`` and ``label``).

        Returns
        -------
        display : DownsamplingDisplay
            The display, with ``ax_``, ``figure_``, ``lines_`` and ``bands_``.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import pandas as pd
        >>> from sklearn_smallfair.model_selection import DownsamplingDisplay
        >>> curves = pd.DataFrame({"n": [5, 10, 5, 10],
        ...                        "estimator": ["raw", "raw", "cps_10", "cps_10"],
        ...                        "value": [0.20, 0.11, 0.03, 0.04]})
        >>> disp = DownsamplingDisplay(
        ...     curves=curves, metric="tpr", statistic="mse", by_group=False)
        >>> disp.plot(logy=True).ax_.get_yscale()
        'log'
        >>> plt.close(disp.figure_)
        """
        plt = _check_matplotlib("DownsamplingDisplay.plot")
        from matplotlib.axes import Axes

        check_choice(self.statistic, "statistic", _STATISTICS)
        check_bool(self.by_group, "by_group")
        if logy and self.statistic == "bias":
            raise ValueError(
                "logy=True needs positive values, but statistic='bias' can be "
                "negative; use logy=False (or statistic='mse' or 'rmse')."
            )
        curves = self.curves
        required = ["n", "estimator", "value"] + (["group"] if self.by_group else [])
        missing = [c for c in required if c not in curves.columns]
        if missing:
            raise ValueError(
                f"curves is missing column(s) {missing}; got {list(curves.columns)}."
            )
        estimators = curves["estimator"].drop_duplicates().tolist()
        colors = {est: f"C{i % 10}" for i, est in enumerate(estimators)}
        has_band = "lower" in curves.columns and "upper" in curves.columns
        label = _LABELS[self.statistic]
        self.lines_ = {}
        self.bands_ = {}

        def draw(axes, data, key_of):
            for est in estimators:
                part = data[data["estimator"] == est]
                if part.empty:
                    continue
                x = part["n"].to_numpy()
                (line,) = axes.plot(
                    x,
                    part["value"].to_numpy(dtype=float),
                    **{"color": colors[est], "label": str(est), **kwargs},
                )
                self.lines_[key_of(est)] = line
                if has_band:
                    self.bands_[key_of(est)] = axes.fill_between(
                        x,
                        part["lower"].to_numpy(dtype=float),
                        part["upper"].to_numpy(dtype=float),
                        color=line.get_color(),
                        alpha=0.2,
                        linewidth=0,
                    )
            if logy:
                axes.set_yscale("log")

        if not self.by_group:
            if ax is None:
                _, ax = plt.subplots(layout="constrained")
            elif not isinstance(ax, Axes):
                raise TypeError(
                    f"ax must be a matplotlib Axes (or None); got {type(ax).__name__}."
                )
            draw(ax, curves, lambda est: est)
            ax.set_xlabel("subgroup size n")
            ax.set_ylabel(f"{label} (mean over groups)")
            ax.set_title(f"{label} of {self.metric}")
            ax.legend()
            self.ax_ = ax
            self.figure_ = ax.figure
            return self

        groups = curves["group"].drop_duplicates().tolist()
        n_groups = len(groups)
        if ax is None:
            ncols = max(1, int(np.ceil(np.sqrt(n_groups))))
            nrows = max(1, int(np.ceil(n_groups / ncols)))
            _, grid = plt.subplots(
                nrows,
                ncols,
                sharex=True,
                sharey=True,
                squeeze=False,
                figsize=(3.2 * ncols, 2.6 * nrows),
                layout="constrained",
            )
            grid = grid.ravel()
            for extra in grid[n_groups:]:
                extra.remove()
            axes = grid[:n_groups]
            # the lowest panel of each column shows its x tick labels
            for panel in axes[-ncols:]:
                panel.xaxis.set_tick_params(labelbottom=True)
            created = True
        else:
            if isinstance(ax, Axes):
                raise ValueError(
                    f"by_group=True draws one panel per group ({n_groups} groups), "
                    f"so ax must be None (a grid is created) or an array of "
                    f"{n_groups} Axes; got a single Axes. For one panel, select a "
                    f"group with groups=... or use by_group=False."
                )
            axes = np.asarray(ax, dtype=object).ravel()
            if axes.size != n_groups or not all(isinstance(a, Axes) for a in axes):
                raise ValueError(
                    f"with by_group=True, ax must be None or an array of "
                    f"{n_groups} matplotlib Axes (one per group); got "
                    f"{type(ax).__name__} of {axes.size} element(s)."
                )
            created = False
        for panel, group in zip(axes, groups):
            draw(panel, curves[curves["group"] == group], lambda est, g=group: (g, est))
            panel.set_title(plot_text(group), fontsize="medium")
            if not created:
                panel.set_xlabel("subgroup size n")
                panel.set_ylabel(f"{label} of {self.metric}")
        self.ax_ = axes
        self.figure_ = axes[0].figure
        if created:
            self.figure_.supxlabel("subgroup size n")
            self.figure_.supylabel(label)
            self.figure_.suptitle(f"{label} of {self.metric}, by group")
        axes[0].legend()
        return self

    @classmethod
    @validate_params(
        {
            "results": [pd.DataFrame],
            "metric": [str],
            "statistic": [StrOptions(set(_STATISTICS))],
            "by_group": BOOLEAN,
            "estimators": [str, list, tuple, None],
            # a group label may be of any type (str, int, ...)
            "groups": "no_validation",
            "ax": [None, HasMethods(["plot"]), "array-like"],
            "confidence_level": [Number(0, 1, closed="neither"), None],
            "logy": BOOLEAN,
        }
    )
    def from_results(
        cls,
        results,
        *,
        metric,
        statistic="mse",
        by_group=False,
        estimators=None,
        groups=None,
        ax=None,
        confidence_level=None,
        logy=False,
        **kwargs,
    ):
        """Plot a statistic of the results of a downsampling experiment.

        Parameters
        ----------
        results : pandas.DataFrame
            The frame returned by
            :func:`~sklearn_smallfair.model_selection.downsampling_experiment`
            (columns ``group``, ``n``, ``metric``, ``estimator`` and the
            statistic; ``mse_se`` for the Monte Carlo band).
        metric : str
            The metric to plot (one of those in ``results["metric"]``).
        statistic : {"mse", "rmse", "bias", "variance", "p_undefined"}, \
                default="mse"
            The statistic on the y axis; ``rmse`` is the square root of ``mse``
            (pooled: of the pooled ``mse``).
        by_group : bool, default=False
            ``False``: one line per estimator, the equal-weight mean over groups
            (NaN groups left out). ``True``: one panel per group.
        estimators : str or sequence of str, default=None
            Estimators to plot, in this order; ``None`` means all, in order of
            appearance.
        groups : label or sequence of labels, default=None
            Groups to include (in the pooled mean, or as panels); ``None`` means
            all.
        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.
        confidence_level : float in (0, 1) or None, default=None
            Level of the pointwise Monte Carlo band ``value ± z SE`` (``z`` the
            normal quantile of the level, 1.96 for 0.95), drawn when ``results``
            has a ``mse_se`` column and ``statistic`` is ``mse`` or ``rmse``
            (delta method: ``SE / (2 rmse)``). Pooled, ``SE = sqrt(sum se_g^2) /
            G`` over the ``G`` groups in the mean. ``None`` draws no band; other
            statistics have none.
        logy : bool, default=False
            Log-scale y axis.
        **kwargs : dict
            Passed to :meth:`matplotlib.axes.Axes.plot` for every line.

        Returns
        -------
        display : DownsamplingDisplay
            The display, with the plotted data in ``curves``.

        See Also
        --------
        downsampling_experiment : Compute the results to plot.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
        >>> from sklearn_smallfair.model_selection import (
        ...     DownsamplingDisplay, downsampling_experiment)
        >>> counts = load_published_confusion_matrices("COMPAS", include_all=False)
        >>> res = downsampling_experiment(
        ...     counts=counts, metrics="tpr", method="montecarlo",
        ...     n_resamples=2000, sizes=range(5, 21))
        >>> disp = DownsamplingDisplay.from_results(
        ...     res, metric="tpr", statistic="rmse", by_group=True,
        ...     confidence_level=0.95)
        >>> disp.ax_.shape
        (2,)
        >>> sorted(disp.lines_)
        [('Black', 'cps_10'), ('Black', 'raw'), ('White', 'cps_10'), ('White', 'raw')]
        >>> list(disp.curves.columns)
        ['group', 'n', 'estimator', 'value', 'lower', 'upper']
        >>> plt.close(disp.figure_)
        """
        _check_matplotlib("DownsamplingDisplay.from_results")
        metric = _canonical_metric(metric)
        curves = _curves_from_results(
            results,
            metric=metric,
            statistic=statistic,
            by_group=by_group,
            estimators=estimators,
            groups=groups,
            confidence_level=confidence_level,
        )
        display = cls(
            curves=curves, metric=metric, statistic=statistic, by_group=by_group
        )
        return display.plot(ax=ax, logy=logy, **kwargs)
