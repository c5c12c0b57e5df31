"""Enumeration of all confusion matrices of a size, and its memory bound."""

from functools import lru_cache
from math import comb

import numpy as np

from ._confusion import FN, FP, TN, TP
from ._params import Whole, validate_params

__all__ = [
    "MAX_ENUMERATION_BYTES",
    "enumerate_confusion_matrices",
    "n_confusion_matrices",
]


#: Largest array :func:`enumerate_confusion_matrices` builds: ``C(n + 3, 3)`` rows
#: of 4 int64 cells (32 bytes a row) may take at most this many bytes (2 GiB, i.e.
#: ``n <= 736``).
MAX_ENUMERATION_BYTES = 2 * 1024**3
#: Enumerations of at most this many rows (32 MiB, ``n <= 182``) are cached.
_ENUMERATION_CACHE_ROWS = 1 << 20


def _format_bytes(n_bytes):
    """``n_bytes`` in the largest binary unit that keeps the number >= 1."""
    value = float(n_bytes)
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB")
    for unit in units:
        if value < 1024 or unit == units[-1]:
            break
        value /= 1024
    if unit == "bytes":
        return f"{int(value)} bytes"
    return f"{value:.4g} {unit}"


def _enumeration_bytes(n):
    """Bytes of the array of all matrices of size ``n`` (4 int64 cells a row)."""
    return n_confusion_matrices(n) * 4 * 8


def _largest_n(fits):
    """Largest ``n >= 0`` with ``fits(n)``, for ``fits`` true at 0 and decreasing."""
    lo, hi = 0, 1
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _check_enumeration(n, what, hint):
    """Raise before building the ``C(n + 3, 3)`` matrices of size ``n`` when their
    array would exceed ``MAX_ENUMERATION_BYTES``: ``what`` (the caller) would build
    them, ``hint`` says what to use instead."""
    n_bytes = _enumeration_bytes(n)
    if n_bytes > MAX_ENUMERATION_BYTES:
        largest = _largest_n(lambda m: _enumeration_bytes(m) <= MAX_ENUMERATION_BYTES)
        raise ValueError(
            f"{what} would build all C(n + 3, 3) = {n_confusion_matrices(n):,} "
            f"confusion matrices of size n={n}, {_format_bytes(n_bytes)} of memory, "
            f"above the bound MAX_ENUMERATION_BYTES = "
            f"{_format_bytes(MAX_ENUMERATION_BYTES)} (n <= {largest}). {hint}"
        )


@validate_params({"n": [Whole(0, None, closed="left")]})
def n_confusion_matrices(n):
    """Number of 2x2 confusion matrices with total ``n``: ``C(n + 3, 3)``.

    Parameters
    ----------
    n : int
        Total count (group size), a whole number ``n >= 0``.

    Returns
    -------
    count : int
        An exact Python integer, computed without enumerating anything.

    Examples
    --------
    >>> from sklearn_smallfair import n_confusion_matrices
    >>> n_confusion_matrices(150)
    585276
    >>> n_confusion_matrices(10**6)
    166667666668500001
    """
    return comb(_check_size(n) + 3, 3)


def _check_size(n, name="n"):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be a non-negative integer, got {n!r}.")
    if n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n}.")
    return int(n)


def _build_enumeration(n):
    # Pairs (FN, FP) with FN + FP <= m, ordered by s = FN + FP, so the pairs with
    # FN + FP <= m are the first T(m) = (m + 1)(m + 2) / 2 entries for every m.
    s = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    tri = np.arange(s.shape[0]) - s * (s + 1) // 2
    fn_tri, fp_tri = tri, s - tri
    tp = np.arange(n + 1)
    sizes = (n - tp + 1) * (n - tp + 2) // 2  # T(n - TP) completions per TP
    starts = np.cumsum(sizes) - sizes
    tp_col = np.repeat(tp, sizes)
    idx = np.arange(tp_col.shape[0]) - np.repeat(starts, sizes)
    out = np.empty((tp_col.shape[0], 4), dtype=np.int64)
    out[:, TP] = tp_col
    out[:, FN] = fn_tri[idx]
    out[:, FP] = fp_tri[idx]
    out[:, TN] = n - tp_col - out[:, FN] - out[:, FP]
    out.flags.writeable = False
    return out


@lru_cache(maxsize=16)
def _enumerate_cached(n):
    return _build_enumeration(n)


@validate_params({"n": [Whole(0, None, closed="left")]})
def enumerate_confusion_matrices(n):
    """All ``C(n + 3, 3)`` confusion matrices with total ``n``.

    Built directly (no masking of an ``(n + 1)^3`` grid); the result is read-only,
    and cached for ``n <= 182`` (at most 2^20 rows).

    The array takes ``C(n + 3, 3) x 4 x 8`` bytes, about ``5.3 n^3`` bytes: 1.7
    GiB for ``n = 700``, 4.9 TiB for ``n = 10^4``. Sizes whose array would exceed
    ``MAX_ENUMERATION_BYTES`` (2 GiB, so ``n <= 736``) raise a ``ValueError``
    before anything is allocated; :func:`n_confusion_matrices` gives the count for
    any ``n`` without enumerating.

    Parameters
    ----------
    n : int
        Total count (group size), a whole number ``0 <= n <= 736``.

    Returns
    -------
    counts : ndarray of int64, shape (C(n + 3, 3), 4)
        Every non-negative integer matrix ``(TP, FN, FP, TN)`` summing to ``n``,
        ordered by ``TP``, then ``FN + FP``, then ``FN`` (all ascending).

    Raises
    ------
    TypeError
        If ``n`` is not an integer (``bool`` and floats such as ``2.0`` included).
    ValueError
        If ``n`` is negative, or if the array would take more than
        ``MAX_ENUMERATION_BYTES``.

    Examples
    --------
    >>> from sklearn_smallfair import enumerate_confusion_matrices
    >>> enumerate_confusion_matrices(1)
    array([[0, 0, 0, 1],
           [0, 0, 1, 0],
           [0, 1, 0, 0],
           [1, 0, 0, 0]])
    >>> enumerate_confusion_matrices(150).shape
    (585276, 4)
    """
    n = _check_size(n)
    _check_enumeration(
        n,
        "enumerate_confusion_matrices(n)",
        "Use n_confusion_matrices(n) for their number, or draw matrices at random "
        "(e.g. numpy's Generator.multinomial) instead of enumerating them all.",
    )
    if n_confusion_matrices(n) <= _ENUMERATION_CACHE_ROWS:
        return _enumerate_cached(n)
    return _build_enumeration(n)
