"""Warnings of the metrics: where they point and how they name the groups."""

import sys

import numpy as np

from .._confusion import FN, TP
from .._validation import format_label

#: Groups named in one warning before "and N more".
SHOWN = 10

_INNER_MODULES = ("sklearn_smallfair.", "sklearn.utils._param_validation")


def user_stacklevel():
    """``stacklevel`` of a warning issued by the calling function that points at
    the first frame outside the package and scikit-learn's parameter checks."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        _INNER_MODULES
    ):
        frame, level = frame.f_back, level + 1
    return level


def format_count(x):
    """A count as an integer when it is one (weighted counts keep 4 digits)."""
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:.4g}"


def describe_groups(labels, counts, undefined):
    """``"'a' (n=4, n_pos=0), ... and N more"``: the groups where ``undefined``
    holds, with their sizes and positives (``counts`` rows ``(TP, FN, FP, TN)``)."""
    bad = np.flatnonzero(undefined)
    detail = ", ".join(
        f"{format_label(labels[i])} (n={format_count(counts[i].sum())}, "
        f"n_pos={format_count(counts[i, TP] + counts[i, FN])})"
        for i in bad[:SHOWN]
    )
    more = f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    return detail + more
