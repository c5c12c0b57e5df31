"""Comparative separation in scikit-learn model selection: a scorer.

:func:`comparative_separation_statistic` summarises
:func:`comparative_separation_test` in one number, which
:func:`make_comparative_separation_scorer` turns into a scorer that receives the
group labels through metadata routing.
"""

import warnings

import numpy as np

from .._params import StrOptions, validate_params
from .._scoring import NAN_POLICY, GroupScorer
from ..exceptions import UndefinedGroupMetricWarning
from ._comparative import (
    _SHARED_PARAMS,
    STATISTICS,
    _empty_cells,
    _unmatched_strata,
    comparative_separation_test,
)

__all__ = [
    "comparative_separation_statistic",
    "make_comparative_separation_scorer",
]


# =====================================================================================
# Scorer
# =====================================================================================
_ROUTING_HINT = (
    "The comparative separation scorer needs the group labels. In model selection "
    "enable metadata routing with sklearn.set_config(enable_metadata_routing=True) "
    "and pass them as GridSearchCV(...).fit(X, y, sensitive_features=A) or "
    "cross_validate(..., params={'sensitive_features': A}). Outside model "
    "selection call comparative_separation_statistic(y, scores, "
    "sensitive_features=A)."
)
_STATISTIC_PARAMS = {
    "statistic": [StrOptions(set(STATISTICS))],
    **_SHARED_PARAMS,
    "nan_policy": NAN_POLICY,
}


@validate_params(
    {
        "y_true": ["array-like"],
        "y_score": ["array-like"],
        "sensitive_features": ["array-like", None],
        **_STATISTIC_PARAMS,
    }
)
def comparative_separation_statistic(
    y_true,
    y_score,
    *,
    sensitive_features=None,
    statistic="max_gap",
    n_pairs=None,
    tie="incorrect",
    variance="auto",
    stratify=True,
    correction="holm",
    random_state=0,
    nan_policy="propagate",
):
    """One number summarising comparative separation (the scorer's function).

    Parameters
    ----------
    y_true : array-like of shape (n_items,)
        Numeric labels (class labels or regression targets).
    y_score : array-like of shape (n_items,)
        Model scores.
    sensitive_features : array-like of shape (n_items,) or (n_items, k)
        Group labels (required; ``None`` raises an error explaining metadata
        routing).
    statistic : {"max_gap", "min_pvalue"}, default="max_gap"
        ``"max_gap"``: the largest absolute difference ``|tpr_a - tpr_b|`` over all
        tests of :func:`comparative_separation_test` (cross and within; lower is
        better). ``"min_pvalue"``: ``min(p_value_cross, p_value_within)`` (higher is
        better).
    n_pairs : int, default=None
        Pairs drawn (``None``: all pairs of items are counted).
    tie : {"incorrect", "half", "drop"}, default="incorrect"
        Predicted ties; see :func:`comparative_separation_test`.
    variance : {"auto", "pooled", "u_statistic", "clustered", "independent"}, \
            default="auto"
        Variance of the counts; see :func:`comparative_separation_test`.
    stratify : bool, default=True
        Compare the cells within the strata of equal label pairs; see
        :func:`comparative_separation_test`.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison adjustment of the p-values (``"min_pvalue"``).
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the pair draws when ``n_pairs`` is given; a fixed seed makes
        scores reproducible. Unused with all pairs.
    nan_policy : {"propagate", "omit", "raise"}, default="propagate"
        What a compared cell without usable pairs does to the statistic. With
        ``"max_gap"``: ``"propagate"`` returns NaN, ``"omit"`` the largest gap of
        the tests that could be run (NaN if none). ``"min_pvalue"`` is always
        taken over the tests that could be run, so those two agree for it.
        ``"raise"``: a ``ValueError`` naming the cells, whatever the statistic.
        The default keeps a gap that cannot be measured visible instead of
        scoring the fold on the groups that happen to have pairs.

    Returns
    -------
    value : float
        With ``"max_gap"``, NaN when a compared cell has no usable pairs (e.g. a
        group whose items all have the same label); with ``"min_pvalue"``, the
        smallest p-value of the tests that could be run (NaN if none).

    Warns
    -----
    UndefinedGroupMetricWarning
        When a cell has no usable pairs, naming the cells (unless
        ``nan_policy="raise"``). In model selection a
        NaN score of a fold makes the mean over folds (``mean_test_score``) NaN;
        use folds stratified on the groups and labels, or merge small groups.

    Examples
    --------
    >>> from sklearn_smallfair.stats import comparative_separation_statistic
    >>> y = [3, 2, 1, 3, 2, 1]
    >>> s = [0.9, 0.5, 0.1, 0.2, 0.8, 0.0]
    >>> groups = ["a", "a", "a", "b", "b", "b"]
    >>> gap = comparative_separation_statistic(y, s, sensitive_features=groups)
    >>> round(gap, 4)
    0.3333
    """
    if sensitive_features is None:
        raise ValueError(_ROUTING_HINT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        res = comparative_separation_test(
            y_true,
            y_score,
            sensitive_features=sensitive_features,
            n_pairs=n_pairs,
            tie=tie,
            variance=variance,
            stratify=stratify,
            correction=correction,
            random_state=random_state,
        )
    n = res.table["n"].to_numpy().reshape(res.groups.shape[0], -1)
    cells = _empty_cells(n, res.groups)
    what = []
    if cells:
        what.append(
            f"cell(s) {cells} (group of the truly-higher item, of the truly-lower "
            f"item) have no usable pairs among these items"
        )
    unmatched = _unmatched_strata(res.frame)
    if unmatched:
        what.append(
            f"the cells of the stratified test(s) {unmatched} have no label pair "
            f"in common"
        )
    what = "; ".join(what)
    if what and nan_policy == "raise":
        raise ValueError(
            f"comparative_separation_statistic({statistic!r}): {what} "
            f"(nan_policy='raise'); use folds stratified on the groups and labels, "
            f"merge small groups, or pass nan_policy='propagate' (NaN) or 'omit' "
            f"(the other tests)."
        )
    if statistic == "min_pvalue":
        value = float(np.fmin(res.p_value_cross, res.p_value_within))
    else:
        gaps = np.abs(res.frame["difference"].to_numpy(dtype=np.float64))
        defined = gaps[~np.isnan(gaps)]
        if defined.shape[0] == gaps.shape[0] or (
            nan_policy == "omit" and defined.shape[0]
        ):
            value = float(defined.max())
        else:
            value = np.nan
    if what:
        if np.isnan(value):
            effect = (
                "so the statistic is NaN. As a scorer, this fold's score is NaN and "
                "so is the mean over folds"
            )
        else:
            effect = "so the tests involving them are left out of the statistic"
        warnings.warn(
            f"comparative_separation_statistic({statistic!r}): {what}, {effect}; "
            f"use folds stratified on the groups and labels, or merge small groups.",
            UndefinedGroupMetricWarning,
            stacklevel=4,  # the caller of the decorated function
        )
    return value


@validate_params(
    {
        **_STATISTIC_PARAMS,
        "response_method": [
            StrOptions({"decision_function", "predict_proba", "predict"}),
            tuple,
            list,
        ],
    }
)
def make_comparative_separation_scorer(
    *,
    statistic="max_gap",
    n_pairs=None,
    tie="incorrect",
    variance="auto",
    stratify=True,
    correction="holm",
    random_state=0,
    nan_policy="propagate",
    response_method=("decision_function", "predict_proba", "predict"),
):
    """Make a scikit-learn scorer of comparative separation.

    The scorer evaluates the estimator's scores on the test fold (the first of
    ``response_method`` it has: a classifier's decision function or positive-class
    probability, a regressor's prediction), compares all pairs of the fold's items
    (or ``n_pairs`` drawn pairs) and returns
    :func:`comparative_separation_statistic`. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``) model selection routes
    ``sensitive_features`` to it: the scorer requests it by default.

    A fold on which a compared cell has no usable pairs (say, a small group whose
    items in the fold all have the same label) scores NaN under the default
    ``nan_policy="propagate"``, with an
    :class:`~sklearn_smallfair.exceptions.UndefinedGroupMetricWarning` naming the
    cells; scikit-learn's mean over the folds is then NaN too. Stratify the folds
    on the groups and labels, or merge small groups.

    Parameters
    ----------
    statistic : {"max_gap", "min_pvalue"}, default="max_gap"
        ``"max_gap"`` (lower is better: the scorer negates it, as scikit-learn
        does for losses) or ``"min_pvalue"`` (higher is better).
    n_pairs : int, default=None
        Pairs drawn per fold (``None``: all pairs of the fold's items).
    tie : {"incorrect", "half", "drop"}, default="incorrect"
        Predicted ties; see :func:`comparative_separation_test`.
    variance : {"auto", "pooled", "u_statistic", "clustered", "independent"}, \
            default="auto"
        Variance of the counts; see :func:`comparative_separation_test`.
    stratify : bool, default=True
        Compare the cells within the strata of equal label pairs.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Multiple-comparison adjustment of the p-values (``"min_pvalue"``).
    random_state : None or int, default=0
        Seed of the pair draws with ``n_pairs``, the same for every fold and
        candidate.
    nan_policy : {"propagate", "omit", "raise"}, default="propagate"
        What a fold's cell without usable pairs does to the fold's score; see
        :func:`comparative_separation_statistic`.
    response_method : str or tuple of str, \
            default=("decision_function", "predict_proba", "predict")
        Estimator methods tried in order for the scores.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sensitive_features=...)``.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_smallfair.stats import make_comparative_separation_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + rng.normal(size=300)
    >>> A = rng.choice(["a", "b"], size=300)
    >>> scorer = make_comparative_separation_scorer(statistic="max_gap")
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, scoring=scorer,
    ...                           cv=3).fit(X, y, sensitive_features=A)
    >>> bool((search.cv_results_["mean_test_score"] <= 0).all())
    True
    """
    kwargs = dict(
        statistic=statistic,
        n_pairs=n_pairs,
        tie=tie,
        variance=variance,
        stratify=stratify,
        correction=correction,
        random_state=random_state,
        nan_policy=nan_policy,
    )
    sign = -1 if statistic == "max_gap" else 1
    return GroupScorer(comparative_separation_statistic, sign, kwargs, response_method)
