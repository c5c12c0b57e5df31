"""The ``stacklevel`` that makes a warning point at the user's code."""

import sys

__all__ = ["user_stacklevel"]

#: Frames skipped: the package's own and scikit-learn's parameter checks.
_INNER_MODULES = ("sklearn_smallfair.", "sklearn.utils._param_validation")


def user_stacklevel():
    """``stacklevel`` of a warning issued by the calling function that points at
    the first frame outside the package and scikit-learn's parameter checks.

    Examples
    --------
    >>> from sklearn_smallfair._stacklevel import user_stacklevel
    >>> user_stacklevel() >= 1
    True
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        _INNER_MODULES
    ):
        frame, level = frame.f_back, level + 1
    return level
