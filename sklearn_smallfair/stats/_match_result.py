"""The result of the MATCH test: one row per group (and metric)."""

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._params import Number, validate_params
from .._pvalues import floor_pvalues
from ._match_rows import score_intervals
from ._multitest import adjust_pvalues
from ._results import ConfidenceInterval, TestResult

__all__ = ["MatchResult"]

#: Methods whose p-values carry a Monte Carlo standard error (the ``se`` column).
_SIMULATED = ("montecarlo", "permutation-montecarlo")
COLUMNS = [
    "group",
    "n",
    "metric",
    "score",
    "score_low",
    "score_high",
    "reference_score",
    "reference_range_low",
    "reference_range_high",
    "p_lower_tail",
    "p_upper_tail",
    "p_value",
    "p_adjusted",
    "p_undefined",
    "se",
    "method",
]


@dataclass(frozen=True, repr=False, eq=False)
class MatchResult(TestResult):
    """Result of :func:`match_test`: one row per group (and metric).

    A frozen :class:`~sklearn_smallfair.stats._results.TestResult`: one test per
    row, the p-values that decide them (``pvalues``) and one rejection rule,
    ``reject = pvalues <= alpha``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``group``, ``n``, ``metric``, ``score`` (observed, smoothed when
        ``smoothing`` is given), ``score_low`` and ``score_high`` (the interval of
        the group's metric at level ``confidence_level``, by the method of
        :func:`~sklearn_smallfair.metrics.group_metrics` with
        ``interval_method="auto"``: Wilson for a proportion, the Dirichlet
        posterior otherwise and for a smoothed score), ``reference_score`` (the
        metric of the reference matrix), ``reference_range_low`` and
        ``reference_range_high`` (the central ``confidence_level`` range of the
        score of a group of the same size drawn from the reference law, conditional
        on the score being defined: exact where the test used the exact method on
        the multinomial law, so that a score outside it has a two-sided exact
        p-value of at most ``1 - confidence_level``; else the quantiles of 2,000
        null matrices, seeded by ``random_state``; NaN when more than
        ``RANGE_MAX_GROUPS`` = 1,000 groups are tested), ``p_lower_tail`` = P(S <=
        score) and ``p_upper_tail`` = P(S >= score) under the reference law (tail
        probabilities, not interval bounds), ``p_value``, ``p_adjusted`` (across
        groups, per metric), ``p_undefined``, ``se`` (only when a row used Monte
        Carlo: the standard error of its ``p_value``, NaN on the other rows),
        ``method`` (the method used) and ``reject`` (``p_adjusted <= alpha``).
        Without ``confidence_level`` the four interval columns are absent.
        P-values and tails below 2.2e-308 (``P_VALUE_FLOOR``, the smallest normal
        double) are reported as 2.2e-308.
    alpha : float
        The significance level of ``reject``.

    Attributes
    ----------
    pvalues : pandas.Series
        ``p_adjusted`` of every test, the p-values on which ``reject`` is decided,
        indexed by ``group`` (by ``(group, metric)`` when several metrics are
        tested) in the order of ``frame``.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues``.

    Examples
    --------
    >>> from sklearn_smallfair.stats import match_test
    >>> res = match_test(counts={"a": [8, 2, 1, 9], "b": [3, 3, 4, 10],
    ...                          "c": [1, 5, 2, 12]}, metric="tpr")
    >>> res
    MatchResult(alpha=0.05, n_tests=3, n_rejected=0)
    >>> res.pvalues.round(4)  # Holm-adjusted across the three groups
    group
    a    0.1049
    b    0.9098
    c    0.1142
    Name: p_adjusted, dtype: float64
    >>> res.reject.tolist()
    [False, False, False]
    >>> res.alpha = 0.01
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'alpha'
    """

    _keys = ("group", "metric")

    #: What :meth:`confidence_interval` recomputes the intervals from: the
    #: metrics, counts, references, smoothing, labels and seed of the test.
    _interval_inputs: tuple | None = field(default=None, init=False, repr=False)

    def _row_keys(self):
        if self.frame["metric"].nunique() <= 1:
            return ["group"]
        return list(self._keys)

    @validate_params({"confidence_level": [Number(0, 1, closed="neither")]})
    def confidence_interval(self, confidence_level=0.95):
        """The interval of each group's metric at another level.

        The interval of the columns ``score_low`` and ``score_high``, computed
        again at ``confidence_level`` from the counts the test saw (the
        ``confidence_interval`` of scipy's test results).

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.

        Returns
        -------
        ci : ConfidenceInterval
            ``ci.low`` and ``ci.high``: :class:`pandas.Series` indexed like
            :attr:`pvalues`.

        Examples
        --------
        >>> from sklearn_smallfair.stats import match_test
        >>> res = match_test(counts={"a": [8, 2, 1, 9], "b": [3, 3, 4, 10]})
        >>> ci = res.confidence_interval(confidence_level=0.9)
        >>> ci.low.round(3).tolist(), ci.high.round(3).tolist()
        ([0.493, 0.153], [0.963, 0.847])
        """
        if self._interval_inputs is None:
            raise ValueError(
                f"{type(self).__name__} keeps no counts to compute intervals "
                f"from; read its columns score_low and score_high instead."
            )
        low, high = score_intervals(*self._interval_inputs, confidence_level)
        index = self.pvalues.index
        return ConfidenceInterval(
            pd.Series(low, index=index, name="score_low"),
            pd.Series(high, index=index, name="score_high"),
        )


def smallest_draws(alpha, tails=1):
    """Fewest Monte Carlo draws ``n`` whose smallest p-value, ``tails / (n + 1)``
    (a tail ``(count + 1) / (draws + 1)``, doubled when two-sided), is at most
    ``alpha``: ``ceil(tails / alpha) - 1``."""
    need = max(math.ceil(tails / alpha) - 1, 1)
    while tails / (need + 1) > alpha:  # rounding of tails / alpha
        need += 1
    return need


def check_draws_can_reject(
    methods, n_resamples, alpha, *, two_sided, simulated=_SIMULATED, pvalues=None
):
    """Refuse Monte Carlo p-values that can never reach ``alpha``.

    A tail estimated from ``n`` draws is at least ``1 / (n + 1)`` (two-sided
    p-values: ``2 / (n + 1)``); with too few draws the test cannot reject at
    ``alpha`` whatever the data, and would say so silently. With ``pvalues``,
    only the rows with a p-value (a defined observed score) count.
    """
    drawn = np.isin(np.asarray(methods, dtype=object), simulated)
    if pvalues is not None:
        drawn &= np.isfinite(np.asarray(pvalues, dtype=np.float64))
    if not drawn.any():
        return
    tails = 2 if two_sided else 1
    if tails / (n_resamples + 1) <= alpha:
        return
    need = smallest_draws(alpha, tails)
    raise ValueError(
        f"n_resamples={n_resamples} Monte Carlo draws give p-values of at least "
        f"{tails}/(n_resamples + 1) = {tails / (n_resamples + 1):.3g}"
        f"{' (two-sided)' if two_sided else ''}, so no test can reject at "
        f"alpha={alpha:g} whatever the data. Pass n_resamples >= {need} "
        f"(ceil({tails}/alpha) - 1; many more for a stable p-value), or a method "
        f"that does not draw."
    )


def _finish(
    frames,
    correction,
    family,
    alpha,
    interval_inputs=None,
    *,
    n_resamples=None,
    alternative="two-sided",
):
    """The metrics' rows together, adjusted over the family, as a result.

    With ``n_resamples``, Monte Carlo rows whose p-values could never reach
    ``alpha`` are refused (:func:`check_draws_can_reject`).
    """
    frame = pd.concat(frames, ignore_index=True)
    if n_resamples is not None:
        check_draws_can_reject(
            frame["method"],
            n_resamples,
            alpha,
            two_sided=alternative == "two-sided",
            pvalues=frame["p_value"],
        )
    frame["p_adjusted"] = np.nan
    if family == "all":
        frame["p_adjusted"] = adjust_pvalues(
            frame["p_value"].to_numpy(dtype=float), correction
        )
    else:
        for name in frame["metric"].unique():
            sel = (frame["metric"] == name).to_numpy()
            frame.loc[sel, "p_adjusted"] = adjust_pvalues(
                frame.loc[sel, "p_value"].to_numpy(dtype=float), correction
            )
    for column in ("p_lower_tail", "p_upper_tail", "p_value", "p_adjusted"):
        frame[column] = floor_pvalues(frame[column])
    columns = [
        c
        for c in COLUMNS
        if c in frame.columns and (c != "se" or frame["method"].isin(_SIMULATED).any())
    ]
    result = MatchResult(frame[columns], float(alpha))
    object.__setattr__(result, "_interval_inputs", interval_inputs)
    return result
