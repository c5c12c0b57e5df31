"""The metric catalogue: the single source of confusion-matrix metric formulas.

Every metric is a :class:`Metric`: a frozen record with its name, aliases, family,
the cells of its numerator and denominator where the family has them, whether
greater is better, and a vectorized function of counts of shape ``(..., 4)``
(two-group metrics: ``(..., 2, 4)``). Inside the registry an undefined value
(0/0 or any other non-finite result) is ``NaN``; :func:`compute_metric` applies the
``zero_division`` policy.
"""

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._confusion import FN, FP, TN, TP
from .._params import BOOLEAN, ZERO_DIVISION, StrOptions, Whole, validate_params
from .._validation import check_counts, check_zero_division
from ..exceptions import UndefinedGroupMetricWarning

__all__ = ["Metric", "compute_metric", "get_metric", "metric_names"]

FAMILIES = ("binomial", "joint_ratio", "other", "two_group")


@dataclass(frozen=True)
class Metric:
    """A confusion-matrix metric of the registry.

    Parameters
    ----------
    name : str
        Canonical (short) name, e.g. ``"tpr"``.
    description : str
        Human-readable name and formula.
    family : {"binomial", "joint_ratio", "other", "two_group"}
        ``binomial``: ``(c_i + c_j) / n``; ``joint_ratio``: ``c_i / (c_i + c_j)``;
        ``two_group``: a difference of a per-group component between two matrices.
    func : callable
        Vectorized function of counts ``(..., 4)`` (or ``(..., 2, 4)``) returning
        values of shape ``(...)`` with ``NaN`` where undefined.
    aliases : tuple of str
        Other accepted names (case-insensitive).
    numerator, denominator : tuple of int or None
        Cell indices (in ``(TP, FN, FP, TN)`` order) summed in the numerator and
        denominator, for the ``binomial`` and ``joint_ratio`` families.
    greater_is_better : bool or None
        ``None`` for descriptive quantities (prevalence, marginal benefit, ...).
    n_groups : int
        1 for single-group metrics, 2 for two-group metrics.
    component : Metric or None
        For two-group metrics, the per-group quantity whose difference is taken.
    blocks : tuple of tuple of int
        A partition of the four cells such that the metric depends on a matrix only
        through the sums of the blocks: ``tpr`` is a function of ``TP``, ``FN`` and
        ``FP + TN``, so its blocks are ``((TP,), (FN,), (FP, TN))``. With ``k``
        blocks the distinct values over all matrices of size ``n`` come from
        ``C(n + k - 1, k - 1)`` block sums instead of ``C(n + 3, 3)`` matrices,
        which the exact downsampling engine uses. Single cells by default.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import get_metric
    >>> tpr = get_metric("tpr")
    >>> tpr.name, tpr.greater_is_better
    ('tpr', True)
    >>> float(tpr.func(np.array([3, 1, 2, 4])))
    0.75
    """

    name: str
    description: str
    family: str
    func: object = field(repr=False, compare=False)
    aliases: tuple = ()
    numerator: tuple | None = None
    denominator: tuple | None = None
    greater_is_better: bool | None = None
    n_groups: int = 1
    component: "Metric | None" = field(default=None, repr=False)
    blocks: tuple = ((0,), (1,), (2,), (3,))

    def __call__(self, counts, *, zero_division=np.nan):
        """Compute the metric; see :func:`compute_metric`."""
        return _compute_metric(self, counts, zero_division)


#: Largest (smallest) cell the metrics compute with: a product of two sums of
#: two cells (MCC) then stays within float64's range.
_MAX_CELL_EXPONENT = 480


def _as_float(counts):
    """Counts as float64; a matrix whose largest cell is above ``2**480`` or
    below ``2**-480`` is scaled by a power of 2 (exactly) to a largest cell near
    1, which leaves every metric unchanged (each is a ratio of forms of the same
    degree in the cells) and keeps its sums and products from overflowing or
    underflowing (counts smoothed with a huge pseudo-count, huge or tiny
    weights)."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0 or c.size == 0:
        return c
    return scale_cells(c, axis=-1)


def scale_cells(c, axis):
    """``c`` with each matrix (the cells along ``axis``) whose largest cell is
    above ``2**480`` or below ``2**-480`` scaled by a power of 2 to a largest
    cell near 1 (exactly: ``ldexp``); other matrices unchanged."""
    top = c.max(axis=axis, keepdims=True)
    out_of_range = (top > 2.0**_MAX_CELL_EXPONENT) | (
        (top > 0) & (top < 2.0**-_MAX_CELL_EXPONENT)
    )
    if not out_of_range.any():
        return c
    _, exponent = np.frexp(top)
    return np.ldexp(c, -np.where(out_of_range & np.isfinite(top), exponent, 0))


def _safe_divide(num, den):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.true_divide(num, den)
    return out


def _ratio_func(numerator, denominator):
    num_cells, den_cells = list(numerator), list(denominator)

    def func(counts):
        c = _as_float(counts)
        return _safe_divide(
            c[..., num_cells].sum(axis=-1), c[..., den_cells].sum(axis=-1)
        )

    return func


def _rate(counts, i, j):
    c = _as_float(counts)
    return _safe_divide(c[..., i], c[..., i] + c[..., j])


def _f1(counts):
    c = _as_float(counts)
    return _safe_divide(2 * c[..., TP], 2 * c[..., TP] + c[..., FP] + c[..., FN])


def _f1_original(counts):
    # Harmonic mean of PPV and TPR: undefined (1/0) whenever TP = 0.
    c = _as_float(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_ppv = _safe_divide(c[..., TP] + c[..., FP], c[..., TP])
        inv_tpr = _safe_divide(c[..., TP] + c[..., FN], c[..., TP])
        out = 2.0 / (inv_ppv + inv_tpr)
    return np.where(np.isfinite(inv_ppv) & np.isfinite(inv_tpr), out, np.nan)


def _mcc(counts):
    c = _as_float(counts)
    tp, fn, fp, tn = c[..., TP], c[..., FN], c[..., FP], c[..., TN]
    with np.errstate(invalid="ignore", over="ignore"):
        den = np.sqrt((tp + fp) * (tp + fn)) * np.sqrt((tn + fp) * (tn + fn))
    return _safe_divide(tp * tn - fp * fn, den)


def _pt(counts):
    tpr = _rate(counts, TP, FN)
    fpr = _rate(counts, FP, TN)
    with np.errstate(invalid="ignore"):
        num = np.sqrt(tpr * fpr) - fpr
    return _safe_divide(num, tpr - fpr)


def _mb(counts):
    c = _as_float(counts)
    return _safe_divide(c[..., FP] - c[..., FN], c.sum(axis=-1))


def _fn_fp_ratio(counts):
    return _safe_divide(_as_float(counts)[..., FN], _as_float(counts)[..., FP])


def _difference_of(component):
    def func(counts):
        c = _as_float(counts)
        with np.errstate(invalid="ignore"):
            return component.func(c[..., 0, :]) - component.func(c[..., 1, :])

    return func


_CELL_SYMBOL = {TP: "TP", FN: "FN", FP: "FP", TN: "TN"}


def _ratio_metric(name, family, numerator, denominator, long_name, aliases, gib):
    num = " + ".join(_CELL_SYMBOL[i] for i in numerator)
    den = (
        "n"
        if len(denominator) == 4
        else " + ".join(_CELL_SYMBOL[i] for i in denominator)
    )
    rest = tuple(sorted(set(_ALL) - set(denominator)))
    others = tuple(sorted(set(denominator) - set(numerator)))
    blocks = tuple(
        sorted((b for b in (tuple(sorted(numerator)), others, rest) if b), key=min)
    )
    return Metric(
        name=name,
        description=f"{long_name}: ({num}) / ({den})",
        blocks=blocks,
        family=family,
        func=_ratio_func(numerator, denominator),
        aliases=aliases,
        numerator=numerator,
        denominator=denominator,
        greater_is_better=gib,
    )


_ALL = (TP, FN, FP, TN)


def _build_registry():
    metrics = [
        # binomial: (c_i + c_j) / n
        _ratio_metric(
            "acc",
            "binomial",
            (TP, TN),
            _ALL,
            "accuracy",
            ("accuracy", "accuracy_score"),
            True,
        ),
        _ratio_metric(
            "prev",
            "binomial",
            (TP, FN),
            _ALL,
            "prevalence",
            ("prevalence", "base_rate"),
            None,
        ),
        _ratio_metric(
            "ppr",
            "binomial",
            (TP, FP),
            _ALL,
            "positive prediction rate",
            ("positive_prediction_rate", "selection_rate"),
            None,
        ),
        _ratio_metric(
            "inacc",
            "binomial",
            (FP, FN),
            _ALL,
            "inaccuracy (error rate)",
            ("inaccuracy", "error_rate"),
            False,
        ),
        _ratio_metric(
            "nprev",
            "binomial",
            (TN, FP),
            _ALL,
            "negative prevalence",
            ("negative_prevalence",),
            None,
        ),
        _ratio_metric(
            "pnr",
            "binomial",
            (TN, FN),
            _ALL,
            "negative prediction rate",
            ("negative_prediction_rate",),
            None,
        ),
        # joint ratio: c_i / (c_i + c_j)
        _ratio_metric(
            "tpr",
            "joint_ratio",
            (TP,),
            (TP, FN),
            "true positive rate",
            ("recall", "sensitivity", "hit_rate", "true_positive_rate", "recall_score"),
            True,
        ),
        _ratio_metric(
            "fnr",
            "joint_ratio",
            (FN,),
            (FN, TP),
            "false negative rate",
            ("miss_rate", "false_negative_rate"),
            False,
        ),
        _ratio_metric(
            "fpr",
            "joint_ratio",
            (FP,),
            (FP, TN),
            "false positive rate",
            ("fall_out", "false_positive_rate"),
            False,
        ),
        _ratio_metric(
            "tnr",
            "joint_ratio",
            (TN,),
            (TN, FP),
            "true negative rate",
            ("specificity", "selectivity", "true_negative_rate"),
            True,
        ),
        _ratio_metric(
            "ppv",
            "joint_ratio",
            (TP,),
            (TP, FP),
            "positive predictive value",
            ("precision", "positive_predictive_value", "precision_score"),
            True,
        ),
        _ratio_metric(
            "fdr",
            "joint_ratio",
            (FP,),
            (FP, TP),
            "false discovery rate",
            ("false_discovery_rate",),
            False,
        ),
        _ratio_metric(
            "npv",
            "joint_ratio",
            (TN,),
            (TN, FN),
            "negative predictive value",
            ("negative_predictive_value",),
            True,
        ),
        _ratio_metric(
            "for",
            "joint_ratio",
            (FN,),
            (FN, TN),
            "false omission rate",
            ("false_omission_rate",),
            False,
        ),
        Metric(
            "f1",
            "F1 score: 2TP / (2TP + FP + FN)",
            "other",
            _f1,
            aliases=("f1_score", "f_measure"),
            greater_is_better=True,
            blocks=((TP,), (FN, FP), (TN,)),
        ),
        Metric(
            "f1_original",
            "F1 as the harmonic mean 2 / (1/PPV + 1/TPR) (undefined when TP = 0)",
            "other",
            _f1_original,
            aliases=("f1_harmonic",),
            greater_is_better=True,
            blocks=((TP,), (FN, FP), (TN,)),
        ),
        Metric(
            "mcc",
            "Matthews correlation coefficient: (TP TN - FP FN) / "
            "sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))",
            "other",
            _mcc,
            aliases=("matthews", "matthews_corrcoef", "phi"),
            greater_is_better=True,
        ),
        Metric(
            "pt",
            "prevalence threshold: (sqrt(TPR FPR) - FPR) / (TPR - FPR)",
            "other",
            _pt,
            aliases=("prevalence_threshold",),
        ),
        Metric(
            "mb",
            "marginal benefit: (FP - FN) / n",
            "other",
            _mb,
            aliases=("marginal_benefit",),
            blocks=((TP, TN), (FN,), (FP,)),
        ),
    ]
    by_name = {m.name: m for m in metrics}
    fn_fp = Metric("fn_fp_ratio", "FN / FP", "other", _fn_fp_ratio)
    metrics += [
        Metric(
            "ofi",
            "Objective Fairness Index: MB_1 - MB_2 (difference of marginal benefits)",
            "two_group",
            _difference_of(by_name["mb"]),
            aliases=("objective_fairness_index", "overall_fairness_index"),
            n_groups=2,
            component=by_name["mb"],
        ),
        Metric(
            "te",
            "treatment equality: FN_1/FP_1 - FN_2/FP_2",
            "two_group",
            _difference_of(fn_fp),
            aliases=("treatment_equality",),
            n_groups=2,
            component=fn_fp,
        ),
    ]
    registry = {m.name: m for m in metrics}
    lookup = {}
    for m in metrics:
        for key in (m.name, *m.aliases):
            key = _normalise(key)
            if key in lookup:  # pragma: no cover - guards the table above
                raise RuntimeError(f"duplicate metric name {key!r}")
            lookup[key] = m
    return registry, lookup


def _normalise(name):
    return name.strip().lower().replace("-", "_").replace(" ", "_")


_REGISTRY, _LOOKUP = _build_registry()


@validate_params(
    {
        "family": [StrOptions({"binomial", "joint_ratio", "other", "two_group"}), None],
        "n_groups": [Whole(1, 2), None],
    }
)
def metric_names(*, family=None, n_groups=None):
    """Canonical names of the registered metrics.

    Parameters
    ----------
    family : {"binomial", "joint_ratio", "other", "two_group"} or None
        Only names of this family.
    n_groups : {1, 2} or None
        Only single-group (1) or two-group (2) metrics.

    Returns
    -------
    names : list of str
        In catalogue order: binomial, joint-ratio, other, two-group.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import metric_names
    >>> len(metric_names())
    21
    >>> metric_names(family="joint_ratio")
    ['tpr', 'fnr', 'fpr', 'tnr', 'ppv', 'fdr', 'npv', 'for']
    """
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES} or None; got {family!r}.")
    if n_groups not in (None, 1, 2):
        raise ValueError(f"n_groups must be 1, 2 or None; got {n_groups!r}.")
    return [
        m.name
        for m in _REGISTRY.values()
        if (family is None or m.family == family)
        and (n_groups is None or m.n_groups == n_groups)
    ]


@validate_params({"metric": [str, Metric]})
def get_metric(metric):
    """Look a metric up by name or alias (case-insensitive).

    Parameters
    ----------
    metric : str or Metric
        A canonical name, an alias (``"recall"``, ``"precision"``, ...) or a
        :class:`Metric`.

    Returns
    -------
    metric : Metric
        The registry entry (``metric`` itself when a :class:`Metric` is given).

    Examples
    --------
    >>> from sklearn_smallfair.metrics import get_metric
    >>> m = get_metric("Recall")
    >>> m.name, m.family, m.numerator, m.denominator
    ('tpr', 'joint_ratio', (0,), (0, 1))
    """
    if isinstance(metric, Metric):
        return metric
    if not isinstance(metric, str):
        raise TypeError(
            f"metric must be a metric name (str), got {type(metric).__name__}; valid "
            f"names: {', '.join(metric_names())}."
        )
    found = _LOOKUP.get(_normalise(metric))
    if found is None or found.name == "fn_fp_ratio":
        raise ValueError(
            f"unknown metric {metric!r}; valid names are {', '.join(metric_names())} "
            f"(aliases such as 'recall', 'precision', 'accuracy', 'specificity', "
            f"'matthews' are accepted too)."
        )
    return found


@validate_params(
    {
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "name": [str],
        "single_group": BOOLEAN,
    }
)
def get_metrics(metrics, *, name="metrics", single_group=False):
    """Resolve one metric or a sequence of metrics to a list of :class:`Metric`.

    Parameters
    ----------
    metrics : str, Metric or sequence of them
        Names or aliases (case-insensitive), as accepted by :func:`get_metric`.
    name : str, default="metrics"
        The argument's name in error messages.
    single_group : bool, default=False
        Reject two-group metrics (``ofi``, ``te``), for callers that score one
        group at a time.

    Returns
    -------
    metrics : list of Metric
        In the order given.

    Raises
    ------
    TypeError
        When ``metrics`` is neither a name nor a sequence of names.
    ValueError
        For an unknown name, an empty sequence, a metric listed twice (after
        aliases), or a two-group metric with ``single_group=True``.

    Examples
    --------
    >>> from sklearn_smallfair.metrics import get_metrics
    >>> [m.name for m in get_metrics(["Recall", "fpr"])]
    ['tpr', 'fpr']
    """
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    elif isinstance(metrics, Mapping) or not np.iterable(metrics):
        raise TypeError(
            f"{name} must be a metric name or a sequence of names; got {metrics!r}."
        )
    resolved = [get_metric(m) for m in metrics]
    if not resolved:
        raise ValueError(f"{name} is empty; pass at least one metric name.")
    names = [m.name for m in resolved]
    if len(set(names)) != len(names):
        raise ValueError(f"{name} lists a metric twice (after aliases): {names}.")
    if single_group:
        pairs = [m.name for m in resolved if m.n_groups != 1]
        if pairs:
            raise ValueError(
                f"{name} includes the two-group metric(s) {pairs}; this scores one "
                f"group at a time, so use single-group metrics (e.g. 'tpr', 'fpr', "
                f"'ppv', 'mcc')."
            )
    return resolved


def _apply_zero_division(values, zero_division, *, context=""):
    """Replace undefined (NaN) values following the ``zero_division`` policy."""
    undefined = np.isnan(values)
    if zero_division == "warn":
        if undefined.any():
            warnings.warn(
                f"{context}{int(undefined.sum())} of {undefined.size} value(s) are "
                f"undefined (0/0) and are returned as NaN. Use zero_division=np.nan to "
                f"silence this warning, or 0.0/1.0 to substitute a value.",
                UndefinedGroupMetricWarning,
                stacklevel=3,
            )
        return values
    if np.isnan(zero_division):
        return values
    return np.where(undefined, zero_division, values)


@validate_params(
    {"metric": [str, Metric], "counts": ["array-like"], "zero_division": ZERO_DIVISION}
)
def compute_metric(metric, counts, *, zero_division=np.nan):
    """Compute a registered metric on confusion matrices of any leading shape.

    Parameters
    ----------
    metric : str or Metric
        A name of :func:`metric_names` or an alias.
    counts : array-like of shape (..., 4), or (..., 2, 4) for two-group metrics
        Cells ``(TP, FN, FP, TN)``, integer or float (smoothed), non-negative. For
        two-group metrics (``ofi``, ``te``) axis ``-2`` holds the two groups.
        Every metric is a ratio of forms of one degree in the cells, so a matrix
        whose largest cell is above ``2**480`` or below ``2**-480`` (a huge
        pseudo-count, huge or tiny weights) is first scaled by a power of 2,
        exactly: its value is that of the scaled matrix, never an overflow.
    zero_division : {"warn", np.nan, 0.0, 1.0}, default=np.nan
        Value for undefined results (0/0 or any other non-finite value).
        ``np.nan`` returns NaN silently, ``"warn"`` returns NaN with an
        :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning`,
        ``0.0``/``1.0`` substitute that value. Unlike scikit-learn, ``"warn"``
        never substitutes 0: a small group's undefined metric stays visible.

    Returns
    -------
    values : ndarray of shape (...) or float
        A float for a single matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.metrics import compute_metric
    >>> compute_metric("tpr", [3, 1, 2, 4])
    0.75
    >>> compute_metric("recall", [[3, 1, 2, 4], [0, 0, 5, 5]])
    array([0.75,  nan])
    >>> compute_metric("tpr", [0, 0, 5, 5], zero_division=0.0)
    0.0
    >>> compute_metric("te", [[1, 2, 4, 3], [1, 1, 2, 6]])  # 2/4 - 1/2
    0.0
    """
    return _compute_metric(get_metric(metric), counts, zero_division)


def _compute_metric(m, counts, zero_division):
    """:func:`compute_metric` for a resolved :class:`Metric` (no parameter checks)."""
    zero_division = check_zero_division(zero_division)
    counts = check_counts(counts, n_groups=2 if m.n_groups == 2 else None)
    values = np.asarray(m.func(counts), dtype=np.float64)
    values = np.where(np.isfinite(values), values, np.nan)
    values = _apply_zero_division(values, zero_division, context=f"{m.name}: ")
    if values.ndim == 0:
        return float(values)
    return values
