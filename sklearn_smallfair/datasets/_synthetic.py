"""Synthetic binary classification with groups of controlled sizes (some tiny)
and controlled per-group error rates, for fairness audits."""

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._params import BOOLEAN, Number, Whole, validate_params
from ._dyadic import SEEDS, _generator

__all__ = ["make_small_group_classification"]

_DEFAULT_GROUPS = {"A": 0.75, "B": 0.2, "C": 0.05}
_SUM_TOL = 1e-8


# -------------------------------------------------------------------------------------
# checks of the groups and of the per-group values
# -------------------------------------------------------------------------------------
def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_)
    )


def _is_sequence(value):
    if isinstance(value, (str, bytes, Mapping)):
        return False
    return isinstance(value, (Sequence, np.ndarray, pd.Index, pd.Series))


def _as_numbers(values, name):
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers, got {values!r}.") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {values!r}.")
    return arr


def _check_group_sizes(group_sizes, n_samples):
    """Group labels (ndarray) and exact sizes (int64 ndarray summing to
    ``n_samples``)."""
    if group_sizes is None:
        group_sizes = _DEFAULT_GROUPS
    if isinstance(group_sizes, pd.Series):
        group_sizes = group_sizes.to_dict()
    if isinstance(group_sizes, Mapping):
        labels, values = list(group_sizes.keys()), list(group_sizes.values())
    elif _is_sequence(group_sizes):
        if np.ndim(group_sizes) != 1:
            raise ValueError(
                "group_sizes must be a 1-D sequence of sizes or proportions, got "
                f"an array of shape {np.shape(group_sizes)}."
            )
        values = list(np.asarray(group_sizes, dtype=object))
        labels = list(range(len(values)))
    else:
        raise TypeError(
            "group_sizes must be None, a dict {label: size or proportion} or a "
            f"sequence of sizes or proportions, got {group_sizes!r}."
        )
    if not values:
        raise ValueError("group_sizes must describe at least one group, got none.")
    sizes = _as_numbers(values, "group_sizes")
    if (sizes < 0).any():
        raise ValueError(f"group_sizes must be non-negative, got {group_sizes!r}.")
    if all(_is_integer(v) for v in values):  # counts
        total = int(sizes.sum())
        if total != n_samples:
            raise ValueError(
                f"group_sizes are counts summing to {total}, but n_samples="
                f"{n_samples}. Pass n_samples={total}, or proportions (floats "
                "summing to 1)."
            )
        sizes = sizes.astype(np.int64)
    else:  # proportions
        total = float(sizes.sum())
        if abs(total - 1.0) > _SUM_TOL:
            raise ValueError(
                f"group_sizes given as proportions (floats) must sum to 1, got "
                f"{total:.10g}. Pass proportions summing to 1, or integer counts "
                f"summing to n_samples={n_samples}."
            )
        sizes = _largest_remainder(sizes / total, n_samples)
    empty = [labels[i] for i in np.flatnonzero(sizes == 0)]
    if empty:
        raise ValueError(
            f"group_sizes gives no member to the groups {empty} (with n_samples="
            f"{n_samples}); every group needs at least 1 member. Increase their "
            "size or n_samples, or leave them out."
        )
    return _label_array(labels), sizes


def _label_array(labels):
    """``labels`` as a 1-D array; object dtype when numpy would convert them
    (mixed types, tuples)."""
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.tolist() != labels:
        arr = np.empty(len(labels), dtype=object)
        for i, label in enumerate(labels):
            arr[i] = label
    return arr


def _largest_remainder(proportions, n):
    """Integer sizes summing to ``n``, as close as possible to ``proportions * n``
    (Hamilton's method; ties go to the earlier group)."""
    raw = proportions * n
    sizes = np.floor(raw).astype(np.int64)
    order = np.argsort(-(raw - sizes), kind="stable")
    sizes[order[: n - int(sizes.sum())]] += 1
    return sizes


def _per_group(value, name, labels, width):
    """``value`` given once, per group as a sequence, or as a dict keyed by group
    label, as a float array of shape ``(n_groups, width)``. Each group's entry is a
    number, or (``width == 2``) a number or a pair of numbers."""
    n_groups = len(labels)
    labels = labels.tolist()
    if isinstance(value, pd.Series):
        value = value.to_dict()
    if isinstance(value, Mapping):
        keys = list(value.keys())
        missing = [lab for lab in labels if lab not in value]
        extra = [k for k in keys if k not in labels]
        if missing or extra:
            raise ValueError(
                f"The keys of {name} must be the group labels {labels}; "
                f"missing {missing}, unknown {extra}."
            )
        entries = [value[lab] for lab in labels]
    elif _is_sequence(value):
        entries = list(value)
        if len(entries) != n_groups:
            raise ValueError(
                f"{name} must have one entry per group ({n_groups}, in the order "
                f"of group_sizes), got {len(entries)}. Pass a single value for "
                "every group, or a dict keyed by group label."
            )
    else:
        entries = [value] * n_groups
    out = np.empty((n_groups, width))
    for i, entry in enumerate(entries):
        arr = _as_numbers(entry, name)
        if arr.shape == ():
            arr = np.full(width, arr)
        if arr.shape != (width,):
            what = "a number" if width == 1 else "a number or a pair (fnr, fpr)"
            raise ValueError(
                f"Each group's entry of {name} must be {what}; got {entry!r} for "
                f"group {labels[i]!r}."
            )
        out[i] = arr
    bad = (out < 0) | (out > 1)
    if bad.any():
        i = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(
            f"{name} must be in [0, 1]; got {entries[i]!r} for group {labels[i]!r}."
        )
    return out


# -------------------------------------------------------------------------------------
# generator
# -------------------------------------------------------------------------------------
#: A value in [0, 1] for every group, or per group in a sequence or a dict.
_PER_GROUP = [Number(0, 1), "array-like", Mapping]


@validate_params(
    {
        "n_samples": [Whole(1, None, closed="left")],
        "group_sizes": [Mapping, "array-like", None],
        "group_error_rates": _PER_GROUP,
        "n_features": [Whole(1, None, closed="left")],
        "prevalence": _PER_GROUP,
        "class_sep": [Number(0, None, closed="left")],
        "return_predictions": BOOLEAN,
        "shuffle": BOOLEAN,
        "random_state": SEEDS,
        "as_frame": BOOLEAN,
    }
)
def make_small_group_classification(
    n_samples=2000,
    *,
    group_sizes=None,
    group_error_rates=0.1,
    n_features=5,
    prevalence=0.5,
    class_sep=4.0,
    return_predictions=False,
    shuffle=True,
    random_state=0,
    as_frame=False,
):
    """Generate binary classification data with small groups and controlled
    per-group error rates.

    Every person belongs to one group; the group sizes are exact, so some groups
    can be tiny (say 10 people). Within group ``g``:

    1. the label is drawn ``y ~ Bernoulli(prevalence[g])``;
    2. a fraction of the people *look like the other class*: a positive with
       probability ``fnr[g]``, a negative with probability ``fpr[g]``. Their
       apparent class is ``y_pred = 1 - y``; for everyone else ``y_pred = y``;
    3. the features are drawn from the apparent class:
       ``X ~ N((y_pred - 1/2) * class_sep * w, I)`` with
       ``w = (1, ..., 1) / sqrt(n_features)``, so the two classes' means are at
       distance ``class_sep``. The group itself is not a feature.

    ``y_pred`` (returned with ``return_predictions=True``) is therefore a
    simulated classifier whose true positive rate in group ``g`` is
    ``1 - fnr[g]`` and whose false positive rate is ``fpr[g]``, up to binomial
    sampling error. A model fit on ``(X, y)`` learns to predict the apparent
    class, so its per-group rates differ across groups as requested, each
    further blurred by the class overlap ``Phi(-class_sep / 2)`` (2.3 % with the
    default ``class_sep=4``; ``Phi`` is the standard normal CDF), and as long as
    most people of each apparent class have that label overall.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of people.
    group_sizes : dict, sequence or None, default=None
        The groups and their sizes: a dict ``{label: size}`` or a sequence of
        sizes (the groups are then labelled ``0, 1, ...``). Sizes are either all
        integers, the exact counts (they must sum to ``n_samples``), or
        floats, proportions summing to 1 (turned into counts summing to
        ``n_samples`` by the largest-remainder method). Every group needs at
        least one member. None means ``{"A": 0.75, "B": 0.2, "C": 0.05}``.
    group_error_rates : float, sequence or dict, default=0.1
        The per-group false negative rate ``fnr`` (so ``TPR = 1 - fnr``) and
        false positive rate ``fpr`` of ``y_pred``, each in [0, 1]. A group's
        entry is a number ``e`` (``fnr = fpr = e``) or a pair ``(fnr, fpr)``.
        Give one entry for every group, a sequence with one entry per group (in
        the order of ``group_sizes``; a sequence is always read per group, so
        ``(0.1, 0.3)`` with two groups means ``e = 0.1`` and ``e = 0.3``), or a
        dict keyed by group label.
    n_features : int, default=5
        Number of features, all equally informative.
    prevalence : float, sequence or dict, default=0.5
        Probability of ``y = 1`` in each group, in [0, 1]: one number for every
        group, one per group in a sequence, or a dict keyed by group label.
    class_sep : float, default=4.0
        Distance between the means of the two apparent classes (finite,
        ``>= 0``), in units of the features' standard deviation. Larger values
        make ``X`` separate the apparent classes better, so a fitted model's rates
        come closer to the requested ones.
    return_predictions : bool, default=False
        Also return ``y_pred``, the simulated classifier's predictions.
    shuffle : bool, default=True
        Shuffle the rows. If False, rows are ordered by group, in the order of
        ``group_sizes``.
    random_state : int, RandomState instance, Generator or None, default=0
        Seed of the draws (an int in ``[0, 2**32 - 1]``); the same seed gives the
        same data. ``None`` draws fresh entropy.
    as_frame : bool, default=False
        Return ``X`` as a DataFrame with columns ``x0, x1, ...`` and ``y``,
        ``groups`` and ``y_pred`` as Series named ``"y"``, ``"group"`` and
        ``"y_pred"``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) or DataFrame
        The features (float64).
    y : ndarray of shape (n_samples,) or Series
        The 0/1 labels (int64).
    groups : ndarray of shape (n_samples,) or Series
        The group label of each person.
    y_pred : ndarray of shape (n_samples,) or Series
        The simulated classifier's 0/1 predictions (int64), the apparent class.
        Only when ``return_predictions=True``.

    Raises
    ------
    ValueError
        When the counts of ``group_sizes`` do not sum to ``n_samples`` or its
        proportions do not sum to 1, when a size is negative or gives an empty
        group, when a rate or a prevalence is outside [0, 1], or when a per-group
        argument has the wrong number of entries or keys other than the group
        labels.
    TypeError
        When an argument has the wrong type.

    See Also
    --------
    sklearn.datasets.make_classification : Classification data without groups.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.datasets import make_small_group_classification
    >>> X, y, groups, y_pred = make_small_group_classification(
    ...     n_samples=20_010,
    ...     group_sizes={"majority": 20_000, "minority": 10},
    ...     group_error_rates={"majority": 0.1, "minority": (0.4, 0.1)},
    ...     return_predictions=True,
    ...     random_state=0,
    ... )
    >>> X.shape
    (20010, 5)
    >>> np.unique(groups, return_counts=True)
    (array(['majority', 'minority'], dtype='<U8'), array([20000,    10]))
    >>> major = (groups == "majority") & (y == 1)
    >>> print(f"TPR of y_pred in the majority: {y_pred[major].mean():.2f}")
    TPR of y_pred in the majority: 0.90

    A model fit on ``X`` inherits the disparity:

    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y, groups = make_small_group_classification(
    ...     n_samples=4000,
    ...     group_sizes={"a": 2000, "b": 2000},
    ...     group_error_rates={"a": 0.05, "b": (0.3, 0.05)},
    ...     random_state=0,
    ... )
    >>> pred = LogisticRegression().fit(X, y).predict(X)
    >>> tpr = {g: pred[(groups == g) & (y == 1)].mean() for g in ("a", "b")}
    >>> bool(tpr["a"] > tpr["b"] + 0.15)
    True
    """
    n_samples, n_features, class_sep = int(n_samples), int(n_features), float(class_sep)
    labels, sizes = _check_group_sizes(group_sizes, n_samples)
    prev = _per_group(prevalence, "prevalence", labels, 1)[:, 0]
    rates = _per_group(group_error_rates, "group_error_rates", labels, 2)
    rng = _generator(random_state)

    g = np.repeat(np.arange(len(labels)), sizes)
    y = rng.random(n_samples) < prev[g]
    flip = rng.random(n_samples) < np.where(y, rates[g, 0], rates[g, 1])
    y_pred = y ^ flip
    shift = class_sep / np.sqrt(n_features) * (y_pred - 0.5)
    X = rng.standard_normal((n_samples, n_features)) + shift[:, None]
    y = y.astype(np.int64)
    y_pred = y_pred.astype(np.int64)
    if shuffle:
        perm = rng.permutation(n_samples)
        X, y, y_pred, g = X[perm], y[perm], y_pred[perm], g[perm]
    groups = labels[g]

    if as_frame:
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(n_features)])
        y = pd.Series(y, name="y")
        groups = pd.Series(groups, name="group")
        y_pred = pd.Series(y_pred, name="y_pred")
    if return_predictions:
        return X, y, groups, y_pred
    return X, y, groups
