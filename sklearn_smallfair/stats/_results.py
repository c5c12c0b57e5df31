"""One shape for the results of the statistical tests.

Every result is a frozen table of tests, one row per test, with the p-value on
which the test is decided (``p_adjusted``: adjusted for multiplicity where an
adjustment applies, else the raw p-value) and one rejection rule, ``p <= alpha``.
"""

import html
from collections import namedtuple
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ._multitest import smallest_pvalue

__all__ = [
    "ConfidenceInterval",
    "PairwiseResult",
    "TestResult",
    "family_pvalue",
    "family_z",
    "rejects",
]


#: What ``confidence_interval`` returns, as in :mod:`scipy.stats`: the two ends of
#: the intervals, each a :class:`pandas.Series` indexed like the result's ``pvalues``.
ConfidenceInterval = namedtuple("ConfidenceInterval", ["low", "high"])


def rejects(pvalues, alpha):
    """The rejection rule of every test: ``p <= alpha`` (NaN never rejects).

    Examples
    --------
    >>> from sklearn_smallfair.stats._results import rejects
    >>> rejects([0.01, 0.05, 0.2, float("nan")], 0.05).tolist()
    [True, True, False, False]
    """
    return np.asarray(pvalues, dtype=np.float64) <= alpha


def _short(value):
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return repr(value)


@dataclass(frozen=True, repr=False, eq=False)
class TestResult:
    """Base of the results of the statistical tests: a table of tests and a level.

    Results are frozen: assigning an attribute raises ``AttributeError``
    (``dataclasses.FrozenInstanceError``); :meth:`to_frame` returns a copy of the
    table to work on.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per test, with a ``p_adjusted`` column (the p-value on which the
        test is decided) and the columns that name a row (``_keys``). Its
        ``reject`` column is set on construction by the rule ``p_adjusted <=
        alpha``, the same as :attr:`reject`.
    alpha : float
        Significance level.

    Attributes
    ----------
    frame : pandas.DataFrame
        The table of tests.
    alpha : float
        Significance level.
    pvalues : pandas.Series
        The p-values on which ``reject`` is decided, the column ``p_adjusted``:
        adjusted for multiple comparisons where an adjustment applies, else the
        raw p-values. One entry per row of ``frame``, in the same order, indexed by
        the columns that name the rows.
    reject : pandas.Series of bool
        ``pvalues <= alpha``, indexed like ``pvalues`` (a NaN p-value, a test that
        could not be run, does not reject).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_smallfair.stats._results import TestResult
    >>> frame = pd.DataFrame({"p_adjusted": [0.01, 0.05, 0.3]})
    >>> res = TestResult(frame, alpha=0.05)
    >>> res.reject.tolist()
    [True, True, False]
    >>> res
    TestResult(alpha=0.05, n_tests=3, n_rejected=2)
    """

    __test__ = False  # a result, not a test case
    #: Columns naming the rows (the index of ``pvalues``); the row number if empty.
    _keys: ClassVar[tuple[str, ...]] = ()

    frame: pd.DataFrame
    alpha: float

    def __post_init__(self):
        frame = pd.DataFrame(self.frame, copy=True)
        frame["reject"] = rejects(frame["p_adjusted"], self.alpha)
        object.__setattr__(self, "frame", frame)

    def _row_keys(self):
        return list(self._keys)

    def to_frame(self):
        """The table of tests (a copy)."""
        return self.frame.copy()

    @property
    def pvalues(self):
        """The p-values deciding ``reject`` (``p_adjusted``), indexed by row keys."""
        keys = self._row_keys()
        frame = self.frame.set_index(keys) if keys else self.frame
        return frame["p_adjusted"].astype(np.float64)

    @property
    def reject(self):
        """``pvalues <= alpha``, indexed like :attr:`pvalues`."""
        p = self.pvalues
        return pd.Series(rejects(p, self.alpha), index=p.index, name="reject")

    def _summary(self):
        return {
            "alpha": self.alpha,
            "n_tests": len(self.frame),
            "n_rejected": int(self.reject.sum()),
        }

    def __repr__(self):
        items = ", ".join(f"{k}={_short(v)}" for k, v in self._summary().items())
        return f"{type(self).__name__}({items})"

    def _repr_html_(self):
        table = self.frame.to_html(
            index=False,
            escape=True,
            na_rep="NaN",
            float_format=lambda v: f"{v:.4g}",
            max_rows=pd.get_option("display.max_rows"),
        )
        return f"<div><p>{html.escape(repr(self))}</p>{table}</div>"


def family_pvalue(family):
    """A property: the p-value of a family of tests, its smallest ``p_adjusted``."""

    def get(self):
        return self._headline_pvalue(family)

    return property(
        get,
        doc=f"P-value of the {family!r} tests: the smallest adjusted p-value of the "
        f"family (its only p-value with two groups).",
    )


def family_z(family):
    """A property: the z statistic of a family's only test (two groups)."""

    def get(self):
        return self._headline_z(family)

    return property(
        get,
        doc=f"z statistic of the {family!r} test with two groups (NaN with more).",
    )


@dataclass(frozen=True, repr=False, eq=False)
class PairwiseResult(TestResult):
    """Two families of pairwise comparisons of groups and one verdict.

    ``frame[_family]`` names the family of each row (``_families``); the headline
    p-value of a family is its smallest ``p_adjusted``, its z statistic that of
    its only test when two groups are compared (NaN otherwise), and the verdict
    ``violated`` is ``reject.any()``.
    """

    _family: ClassVar[str] = ""
    _families: ClassVar[tuple[str, str]] = ("", "")

    @property
    def violated(self):
        """Whether any test rejects: the smaller headline p-value is <= alpha."""
        return bool(self.reject.any())

    def _rows(self, family):
        return self.frame[self.frame[self._family] == family]

    def _headline_pvalue(self, family):
        return smallest_pvalue(self._rows(family)["p_adjusted"])

    def _headline_z(self, family):
        rows = self._rows(family)
        return float(rows["z"].iloc[0]) if len(rows) == 1 else np.nan

    def _summary(self):
        headline = {f"p_value_{f}": self._headline_pvalue(f) for f in self._families}
        return {"violated": self.violated, **super()._summary(), **headline}
