"""One shape for the results of the statistical tests.

Every result is a frozen table of tests, one row per test, with the p-value on
which the test is decided (``p_adjusted``: adjusted for multiplicity where an
adjustment applies, else the raw p-value) and one rejection rule, ``p <= alpha``.
"""

import html
import sys
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ._multitest import smallest_pvalue

__all__ = [
    "P_VALUE_FLOOR",
    "PairwiseResult",
    "ResultFrame",
    "TestEstimator",
    "TestResult",
    "deprecated_alias",
    "family_pvalue",
    "family_z",
    "rejects",
]


#: Smallest p-value reported: the smallest normal double (2.2e-308). Below it
#: float64 numbers are subnormal and keep no relative precision, so a tail such
#: as 1.6e-316 says only "below 2.2e-308" and is reported as this floor.
P_VALUE_FLOOR = float(np.finfo(np.float64).tiny)


def floor_pvalues(p):
    """``p`` with the values in ``(0, P_VALUE_FLOOR)`` raised to the floor.

    Examples
    --------
    >>> from sklearn_smallfair.stats._results import floor_pvalues
    >>> floor_pvalues([1.6e-316, 0.0, 0.5]).tolist()
    [2.2250738585072014e-308, 0.0, 0.5]
    """
    p = np.asarray(p, dtype=np.float64)
    return np.where((p > 0) & (p < P_VALUE_FLOOR), P_VALUE_FLOOR, p)


def _called_from_package():
    """Whether the caller of the caller of a deprecated name is this package."""
    frame = sys._getframe(2)
    return frame.f_globals.get("__name__", "").startswith("sklearn_smallfair.")


def deprecated_alias(new, old):
    """A property ``old`` that reads attribute ``new`` with a ``FutureWarning``.

    The warning is for users' code: reads from inside the package (kept working
    through the deprecation period) are silent.
    """

    def get(self):
        if not _called_from_package():
            warnings.warn(
                f"{type(self).__name__}.{old} is deprecated and will be removed in "
                f"the next release; use {type(self).__name__}.{new}.",
                FutureWarning,
                stacklevel=2,
            )
        return getattr(self, new)

    return property(get, doc=f"Deprecated alias of :attr:`{new}`.")


class ResultFrame(pd.DataFrame):
    """A table of tests whose renamed columns stay readable for one release.

    ``_legacy`` maps an old column name to its new name, or to ``(reason,
    function)`` for a column that was dropped (``function(frame)`` gives the old
    values). Item access with an old name (``frame["lower"]``, ``frame[["group",
    "lower"]]``) returns the column with a ``FutureWarning``; every other use of
    the frame is that of a plain :class:`pandas.DataFrame`, and
    ``pandas.DataFrame(frame)`` is a plain frame without the old names.
    """

    _legacy: ClassVar[dict] = {}

    @property
    def _constructor(self):
        return type(self)

    def _is_legacy(self, key):
        return isinstance(key, str) and key in self._legacy and key not in self.columns

    def _old_column(self, key, stacklevel=3):
        target = self._legacy[key]
        if isinstance(target, str):
            message = f"is renamed {target!r}; the old name"
            values = pd.DataFrame.__getitem__(self, target)
        else:
            reason, function = target
            message = f"is dropped ({reason}); the old column"
            values = pd.Series(function(self), index=self.index)
        warnings.warn(
            f"column {key!r} of the test table {message} will be removed in the "
            f"next release.",
            FutureWarning,
            stacklevel=stacklevel,
        )
        return values.rename(key)

    def __getitem__(self, key):
        if self._is_legacy(key):
            return self._old_column(key)
        if isinstance(key, list) and any(self._is_legacy(k) for k in key):
            columns = {}
            for k in key:
                if self._is_legacy(k):
                    columns[k] = self._old_column(k)
                else:
                    columns[k] = super().__getitem__(k)
            return pd.DataFrame(columns, index=self.index)
        return super().__getitem__(key)


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
    #: The type of ``frame`` (a :class:`ResultFrame` keeps renamed columns readable).
    _frame_type: ClassVar[type] = pd.DataFrame

    frame: pd.DataFrame
    alpha: float

    def __post_init__(self):
        frame = self._frame_type(self.frame, copy=True)
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
    return property(
        lambda self: self._headline_pvalue(family),
        doc=f"P-value of the {family!r} tests: the smallest adjusted p-value of the "
        f"family (its only p-value with two groups).",
    )


def family_z(family):
    """A property: the z statistic of a family's only test (two groups)."""
    return property(
        lambda self: self._headline_z(family),
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


class TestEstimator(BaseEstimator):
    """Base of the estimators that run a test in ``fit`` and keep its result."""

    __test__ = False  # an estimator, not a test case

    def _keep(self, result):
        """Store the fitted attributes shared by all tests; returns ``self``."""
        self.result_ = result
        self.results_ = result.to_frame()
        self.pvalues_ = result.pvalues
        self.reject_ = result.reject
        if isinstance(result, PairwiseResult):
            self.violated_ = result.violated
        return self
