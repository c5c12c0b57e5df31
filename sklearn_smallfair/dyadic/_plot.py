"""Plot of error against eccentricity for one or several dyadic models."""

from .._params import HasMethods, StrOptions, validate_params
from .._plotting import _check_matplotlib
from ._eauc import CURVE_OPTIONS, METHODS, _curve_of, _eauc_of, _prepare
from ._eccentricity import RATINGS
from ._means import _ids_from_X
from ._scorer import _fitted_means

__all__ = ["EccentricityDisplay"]

#: Matplotlib axes, or None for a new figure.
_AX = [None, HasMethods(["plot", "legend"])]
#: Constraints shared by the two constructors.
_DISPLAY_OPTIONS = {
    "names": [str, "array-like", None],
    **CURVE_OPTIONS,
    "eauc_method": [StrOptions(set(METHODS))],
    "ax": _AX,
}


def _named(values, names, what):
    """``[(name, value)]`` from one value, a list or a dict of values."""
    if isinstance(values, dict):
        if names is not None:
            raise ValueError(f"pass names only with a list of {what}, not a dict.")
        return list(values.items())
    if not isinstance(values, (list, tuple)):
        values = [values]
    if names is None:
        names = [None] * len(values)
    elif isinstance(names, str):
        names = [names]
    if len(names) != len(values):
        raise ValueError(
            f"names has {len(names)} entries but there are {len(values)} {what}; "
            f"pass one name per {what[:-1]}."
        )
    return list(zip(names, values))


def _curve_and_eauc(y_true, y_pred, eauc_method, options):
    """The drawn curve and the EAUC for the legend, from one check of the inputs.

    ``options`` are those of :func:`eccentricity_curve` (``train`` the training
    ratings, users and items); the legend's EAUC of another method than the
    drawn one uses the default ``n_bins`` of :func:`eauc_score`.
    """
    rows = _prepare(y_true, y_pred, **options)
    curve = _curve_of(rows)
    if eauc_method == rows.method:
        return curve, curve.eauc
    return curve, _eauc_of(rows._replace(method=eauc_method, n_bins=20))


class EccentricityDisplay:
    """Error against eccentricity, one curve per model, EAUC in the legend.

    Build it with :meth:`from_predictions` or :meth:`from_estimator` (which also
    plot), or from :class:`EccentricityCurve` objects and call :meth:`plot`.
    Needs matplotlib (extra ``plot``).

    Parameters
    ----------
    curves : list of EccentricityCurve
        The curves to draw.
    names : list of str
        Legend names, one per curve.
    eaucs : list of float, default=None
        EAUC shown in the legend for each curve; default: each curve's own
        ``eauc``.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        The figure of ``ax_``.
    lines_ : list of matplotlib Line2D
        One line per curve.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_smallfair.datasets import make_dyadic_regression
    >>> from sklearn_smallfair.dyadic import (DyadicMeanRegressor,
    ...     EccentricityDisplay)
    >>> X, y = make_dyadic_regression(n_users=60, n_items=50, n_ratings=2500,
    ...                               random_state=0)
    >>> model = DyadicMeanRegressor().fit(X[:2000], y[:2000])
    >>> disp = EccentricityDisplay.from_estimator(model, X[2000:], y[2000:],
    ...                                           names="pair mean")
    >>> len(disp.lines_)
    1
    """

    def __init__(self, curves, names, eaucs=None):
        self.curves = list(curves)
        self.names = list(names)
        self.eaucs = list(eaucs) if eaucs is not None else None

    @validate_params({"ax": _AX})
    def plot(self, *, ax=None, **kwargs):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.
        **kwargs
            Passed to every ``ax.plot`` call.

        Returns
        -------
        self : EccentricityDisplay
            The display, with ``ax_``, ``figure_`` and ``lines_`` set.
        """
        plt = _check_matplotlib("EccentricityDisplay.plot")
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        eaucs = self.eaucs or [c.eauc for c in self.curves]
        self.lines_ = []
        for curve, name, value in zip(self.curves, self.names, eaucs):
            label = f"{name} (EAUC = {value:.4f})" if name else f"EAUC = {value:.4f}"
            style = (
                {"marker": "o", "markersize": 3} if curve.method != "ordered" else {}
            )
            (line,) = ax.plot(
                curve.eccentricity, curve.error, label=label, **{**style, **kwargs}
            )
            self.lines_.append(line)
        first = self.curves[0]
        ax.set_xlabel("eccentricity |r - (user mean + item mean) / 2|")
        what = "absolute error" if first.error_kind == "absolute" else "squared error"
        if first.method != "ordered":
            what = f"mean {what}"
        ax.set_ylabel(what)
        ax.legend(loc="upper left")
        ax.grid(color="0.92")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    @validate_params(
        {
            "y_true": ["array-like"],
            "y_pred": ["array-like", dict],
            **RATINGS,
            **_DISPLAY_OPTIONS,
        }
    )
    def from_predictions(
        cls,
        y_true,
        y_pred,
        *,
        users,
        items,
        names=None,
        train_ratings=None,
        train_users=None,
        train_items=None,
        means=None,
        error="absolute",
        tail="both",
        method="bins",
        n_bins=20,
        eauc_method="ordered",
        unknown="drop",
        ax=None,
        **kwargs,
    ):
        """Plot the curves of one or several models' predictions.

        Parameters
        ----------
        y_true : array-like of shape (n_ratings,)
            True ratings.
        y_pred : array-like, list of array-like, or dict
            Predictions of one model, a list of them, or a dict ``{name:
            predictions}``.
        users, items : array-like of shape (n_ratings,)
            The user and the item of each rating.
        names : str or list of str, default=None
            Legend names (not with a dict).
        train_ratings, train_users, train_items : array-like, default=None
            Training ratings with their users and items, for the per-entity
            means, as in :func:`eauc_score`.
        means : EntityMeans, default=None
            Precomputed training means, as in :func:`eauc_score`.
        error : {"absolute", "squared"}, default="absolute"
            The error drawn, as in :func:`eauc_score`.
        tail : {"both", "upper", "lower"}, default="both"
            The ratings drawn, as in :func:`eauc_score`.
        method : {"ordered", "grouped", "bins"}, default="bins"
            The drawn curve (see :func:`eccentricity_curve`); binned means read
            better than one point per row.
        n_bins : int, default=20
            Number of bins of the drawn curve.
        eauc_method : {"ordered", "grouped", "bins"}, default="ordered"
            The curve whose area the legend shows (``"ordered"``: the EAUC of
            :func:`eauc_score`'s default).
        unknown : {"drop", "error", "global_mean"}, default="drop"
            Rows whose user or item has no training rating, as in
            :func:`eauc_score`.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        EccentricityDisplay
            The display, plotted.
        """
        named = _named(y_pred, names, "predictions")
        options = dict(
            users=users,
            items=items,
            train=(train_ratings, train_users, train_items),
            means=means,
            error=error,
            tail=tail,
            method=method,
            n_bins=n_bins,
            unknown=unknown,
        )
        curves, eaucs = zip(
            *(_curve_and_eauc(y_true, pred, eauc_method, options) for _, pred in named)
        )
        return cls(curves, [n for n, _ in named], eaucs).plot(ax=ax, **kwargs)

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["predict"]), list, tuple, dict],
            "X": ["array-like"],
            "y": ["array-like"],
            **_DISPLAY_OPTIONS,
        }
    )
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        names=None,
        error="absolute",
        tail="both",
        method="bins",
        n_bins=20,
        eauc_method="ordered",
        unknown="drop",
        ax=None,
        **kwargs,
    ):
        """Plot the curves of one or several fitted dyadic estimators.

        Each estimator's training means (its ``entity_means_``, see
        :func:`make_eauc_scorer`) define the eccentricities of its curve.

        Parameters
        ----------
        estimator : estimator, list of estimators, or dict
            Fitted estimators taking ``X`` in the dyadic layout (column 0 user
            id, column 1 item id), or a dict ``{name: estimator}``.
        X : array-like of shape (n_ratings, 2)
            User and item ids of the evaluated ratings.
        y : array-like of shape (n_ratings,)
            True ratings.
        names : str or list of str, default=None
            Legend names; default: the estimators' class names.
        error : {"absolute", "squared"}, default="absolute"
            The error drawn, as in :func:`eauc_score`.
        tail : {"both", "upper", "lower"}, default="both"
            The ratings drawn, as in :func:`eauc_score`.
        method : {"ordered", "grouped", "bins"}, default="bins"
            The drawn curve, as in :meth:`from_predictions`.
        n_bins : int, default=20
            Number of bins of the drawn curve.
        eauc_method : {"ordered", "grouped", "bins"}, default="ordered"
            The curve whose area the legend shows, as in
            :meth:`from_predictions`.
        unknown : {"drop", "error", "global_mean"}, default="drop"
            Rows whose user or item has no training rating, as in
            :func:`eauc_score`.
        ax : matplotlib Axes, default=None
            Axes to draw on.
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        EccentricityDisplay
            The display, plotted.
        """
        named = _named(estimator, names, "estimators")
        users, items = _ids_from_X(X)
        curves, eaucs, labels = [], [], []
        options = dict(
            users=users,
            items=items,
            error=error,
            tail=tail,
            method=method,
            n_bins=n_bins,
            unknown=unknown,
        )
        for name, est in named:
            curve, eauc = _curve_and_eauc(
                y, est.predict(X), eauc_method, dict(options, means=_fitted_means(est))
            )
            curves.append(curve)
            eaucs.append(eauc)
            labels.append(name if name is not None else type(est).__name__)
        return cls(curves, labels, eaucs).plot(ax=ax, **kwargs)
