"""Declared parameter constraints: the vocabulary shared by every public callable.

Public functions declare what each parameter may be with :func:`validate_params`
(scikit-learn's decorator) and estimators with a ``_parameter_constraints`` table
checked in ``fit``; nothing checks a parameter by hand in a function's body. An
invalid value raises :class:`sklearn.utils._param_validation.InvalidParameterError`
(a subclass of both ``ValueError`` and ``TypeError``) whose message names the
parameter, the function, what it may be, and what was given. Data (arrays, labels,
groups, counts) are checked in :mod:`sklearn_smallfair._validation`.
"""

import functools
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np

from ._compat import HasMethods, Interval, InvalidParameterError, Options, StrOptions
from ._compat import validate_params as _sklearn_validate_params

__all__ = [
    "BOOLEAN",
    "COUNTS",
    "N_JOBS",
    "POS_LABEL",
    "RANDOM_STATE",
    "REFERENCE",
    "ZERO_DIVISION",
    "HasMethods",
    "Number",
    "NumberOptions",
    "Options",
    "StrOptions",
    "Whole",
    "validate_params",
]


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


class Whole(Interval):
    """Whole numbers in an interval; ``True`` and ``False`` are not numbers here."""

    def __init__(self, left=None, right=None, *, closed="both"):
        super().__init__(Integral, left, right, closed=closed)

    def is_satisfied_by(self, val):
        return not _is_bool(val) and super().is_satisfied_by(val)


class Number(Interval):
    """Real numbers (ints included, bools and NaN excluded) in an interval."""

    def __init__(self, left=None, right=None, *, closed="both"):
        super().__init__(Real, left, right, closed=closed)

    def is_satisfied_by(self, val):
        return not _is_bool(val) and super().is_satisfied_by(val)


class NumberOptions(Options):
    """A finite set of numbers; ``True`` and ``False`` are not among them."""

    def __init__(self, options):
        super().__init__(Real, set(options))

    def is_satisfied_by(self, val):
        return not _is_bool(val) and super().is_satisfied_by(val)


#: ``random_state``: None, a non-negative int, or a numpy random object.
RANDOM_STATE = [
    None,
    Whole(0, None, closed="left"),
    np.random.Generator,
    np.random.RandomState,
    np.random.SeedSequence,
]
#: ``n_jobs`` as joblib reads it: None, a positive count, or -1, -2, ... (all
#: cores, all but one, ...); 0 is refused.
N_JOBS = [None, Whole(1, None, closed="left"), Whole(None, -1, closed="right")]
#: ``zero_division`` in scikit-learn's vocabulary.
ZERO_DIVISION = [StrOptions({"warn"}), NumberOptions({0.0, 1.0}), "nan"]
#: A true bool (``"no"``, ``0`` and ``None`` are refused).
BOOLEAN = ["boolean"]
#: ``pos_label``: a class label (number, bool or string), or ``None`` for
#: scikit-learn's rule (:func:`~sklearn_smallfair._validation.resolve_pos_label`).
POS_LABEL = [Real, str, None]
#: ``reference``: ``"rest"``/``"total"``, a group label, or explicit counts.
REFERENCE = [str, Real, "array-like"]
#: Per-group counts given instead of rows: a table, a mapping or an array.
COUNTS = ["array-like", Mapping]


#: Longest shown value in an error message: a wrong data argument (a dict of
#: thousands of values) must not flood the terminal.
_MAX_SHOWN = 200


def _shortened(error):
    """``error`` with the shown value cut to ``_MAX_SHOWN`` characters."""
    message = str(error)
    head, sep, tail = message.partition(". Got ")
    if not sep or len(tail) <= _MAX_SHOWN:
        return error
    value = tail[: -len(" instead.")] if tail.endswith(" instead.") else tail
    return InvalidParameterError(
        f"{head}{sep}{value[:_MAX_SHOWN]}... ({len(value):,} characters) instead."
    )


def validate_params(parameter_constraints):
    """Decorate a public function with its table of parameter constraints.

    scikit-learn's :func:`~sklearn.utils._param_validation.validate_params`, with
    nested validation skipped (the package's functions call each other with
    already-checked values), and the shown value of a refused argument cut to a
    readable length.
    """

    def decorate(func):
        validated = _sklearn_validate_params(
            parameter_constraints, prefer_skip_nested_validation=True
        )(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return validated(*args, **kwargs)
            except InvalidParameterError as error:
                shorter = _shortened(error)
                if shorter is error:
                    raise
                raise shorter from None

        wrapper._skl_parameter_constraints = parameter_constraints
        return wrapper

    return decorate
