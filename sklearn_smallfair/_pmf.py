"""Probability laws of confusion matrices: multinomial, Dirichlet-multinomial and
multivariate hypergeometric log-pmfs."""

from functools import lru_cache

import numpy as np
from scipy.special import betaln, gammaln, xlogy

from ._params import validate_params
from ._validation import check_counts

__all__ = [
    "dirichlet_multinomial_logpmf",
    "multinomial_logpmf",
    "multivariate_hypergeometric_logpmf",
]


_LOG_FACTORIAL_TABLE_MAX = 1 << 20


@lru_cache(maxsize=1)
def _log_factorial_table(size):
    return gammaln(np.arange(size + 1, dtype=np.float64) + 1.0)


def _log_factorial(x):
    """``log(x!)`` for an array; a table lookup for small non-negative integers."""
    x = np.asarray(x)
    if x.dtype.kind in "iu" and x.size:
        top = int(x.max())
        if top <= _LOG_FACTORIAL_TABLE_MAX and int(x.min()) >= 0:
            size = 1 << max(top, 1).bit_length()  # power of two: few table sizes
            return _log_factorial_table(size)[x]
    return gammaln(np.asarray(x, dtype=np.float64) + 1.0)


def _check_probabilities(p, name="p"):
    p = check_counts(p, name=name).astype(np.float64)
    total = p.sum(axis=-1, keepdims=True)
    if (total <= 0).any():
        raise ValueError(f"{name} must have a positive sum along its last axis.")
    return p / total


@validate_params({"counts": ["array-like"], "p": ["array-like"]})
def multinomial_logpmf(counts, p):
    """Log-pmf of the multinomial law of confusion matrices.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts; ``n`` is their sum along the last axis.
    p : array-like of shape (..., 4)
        Cell probabilities (or any non-negative weights, normalised to sum to 1
        along the last axis), broadcast against ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``log n! - sum log c_i! + sum c_i log p_i`` (``-inf`` where a cell with
        probability zero is non-empty).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf
    >>> cms = enumerate_confusion_matrices(10)
    >>> round(float(np.exp(multinomial_logpmf(cms, [0.1, 0.2, 0.3, 0.4])).sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    p = _check_probabilities(p)
    n, cells = _totals_and_cells(counts)
    # per cell: k log p_j - log k!
    return _log_factorial(n) + _sum_cell_terms(
        counts, cells, n, p, lambda k, j: xlogy(k, p[..., j]) - _log_factorial(k)
    )


def _totals_and_cells(counts):
    """Matrix totals and the four cell columns (int64 for integer counts)."""
    if counts.dtype.kind in "iu":
        counts = counts.astype(np.int64, copy=False)  # no overflow in the sums
    # Explicit additions over the 4 cells: numpy reductions along a length-4 last
    # axis are several times slower than three elementwise additions.
    cells = [counts[..., j] for j in range(4)]
    return cells[0] + cells[1] + cells[2] + cells[3], cells


def _sum_cell_terms(counts, cells, n, params, term):
    """``sum_j term(c_j, j)`` over the four cells of every matrix.

    For integer counts and one parameter vector, ``term`` is tabulated once per
    cell for ``k = 0..max(n)`` and looked up: no per-matrix special function.
    """
    top = int(n.max()) if counts.dtype.kind in "iu" and counts.size else -1
    if 0 <= top <= _LOG_FACTORIAL_TABLE_MAX and params.ndim == 1:
        k = np.arange(top + 1)
        out = 0.0
        for j in range(4):
            out = out + term(k, j)[cells[j]]
        return out
    return term(cells[0], 0) + term(cells[1], 1) + term(cells[2], 2) + term(cells[3], 3)


@validate_params({"counts": ["array-like"], "alpha": ["array-like"]})
def dirichlet_multinomial_logpmf(counts, alpha):
    """Log-pmf of the Dirichlet-multinomial law of confusion matrices.

    The law of a matrix of size ``n`` whose cell probabilities are themselves
    uncertain, ``p ~ Dirichlet(alpha)``: for example the reference proportions
    estimated from reference counts ``r`` with a prior ``a0``, ``alpha = r + a0``.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts; ``n`` is their sum along the last axis.
    alpha : array-like of shape (..., 4)
        Positive Dirichlet concentration parameters, broadcast against ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``log n! - sum log c_i! + log G(A) - log G(n + A)
        + sum [log G(c_i + alpha_i) - log G(alpha_i)]`` with ``A = sum alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import (dirichlet_multinomial_logpmf,
    ...     enumerate_confusion_matrices)
    >>> cms = enumerate_confusion_matrices(8)
    >>> pmf = np.exp(dirichlet_multinomial_logpmf(cms, [2.5, 0.5, 1.0, 7.0]))
    >>> round(float(pmf.sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    alpha = check_counts(alpha, name="alpha").astype(np.float64)
    if (alpha <= 0).any():
        raise ValueError("alpha must be strictly positive.")
    n, cells = _totals_and_cells(counts)
    total = alpha[..., 0] + alpha[..., 1] + alpha[..., 2] + alpha[..., 3]
    # per cell: log G(k + a_j) - log G(a_j) - log k!
    return (
        _log_factorial(n)
        + gammaln(total)
        - gammaln(n + total)
        + _sum_cell_terms(
            counts,
            cells,
            n,
            alpha,
            lambda k, j: (
                gammaln(k + alpha[..., j]) - gammaln(alpha[..., j]) - _log_factorial(k)
            ),
        )
    )


@validate_params({"counts": ["array-like"], "population": ["array-like"]})
def multivariate_hypergeometric_logpmf(counts, population):
    """Log-pmf of drawing ``counts`` without replacement from ``population``.

    Parameters
    ----------
    counts : array-like of shape (..., 4)
        Integer cell counts of the sample (size ``n`` = their sum).
    population : array-like of shape (..., 4)
        Integer cell counts of the population (size ``N``), broadcast against
        ``counts``.

    Returns
    -------
    logpmf : ndarray of shape (...)
        ``sum log C(K_i, c_i) - log C(N, n)``; ``-inf`` where ``c_i > K_i`` or
        ``n > N``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import (enumerate_confusion_matrices,
    ...     multivariate_hypergeometric_logpmf)
    >>> cms = enumerate_confusion_matrices(5)
    >>> pmf = np.exp(multivariate_hypergeometric_logpmf(cms, [3, 4, 5, 6]))
    >>> round(float(pmf.sum()), 12)
    1.0
    """
    counts = check_counts(counts)
    population = check_counts(population, name="population")
    for arr, name in ((counts, "counts"), (population, "population")):
        if arr.dtype.kind == "f" and not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"{name} must hold integer counts.")
    counts = counts.astype(np.int64)
    population = population.astype(np.int64)
    counts, population = np.broadcast_arrays(counts, population)
    feasible = (counts <= population).all(axis=-1)
    rest = np.where(feasible[..., None], population - counts, 0)
    log_num = (
        _log_factorial(population) - _log_factorial(counts) - _log_factorial(rest)
    ).sum(axis=-1)
    n = counts.sum(axis=-1)
    big_n = population.sum(axis=-1)
    log_den = (
        _log_factorial(big_n)
        - _log_factorial(n)
        - _log_factorial(np.maximum(big_n - n, 0))
    )
    return np.where(feasible, log_num - log_den, -np.inf)


def _log_binomial(total, k):
    """``log C(total, k)`` for ``0 <= k <= total`` (``-inf`` elsewhere), accurate
    for large totals (no difference of huge log-factorials)."""
    total, k = np.broadcast_arrays(
        np.asarray(total, dtype=np.float64), np.asarray(k, dtype=np.float64)
    )
    ok = (k >= 0) & (k <= total)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = -np.log1p(total) - betaln(total - k + 1.0, k + 1.0)
    return np.where(ok, out, -np.inf)


def _logpmf_by_group(cells, group_counts, law):
    """Log-pmf of every matrix under every group's sampling law, shape (G, M).

    ``cells`` (M, 4) are integer matrices of one size ``n``; ``group_counts``
    (G, 4) the groups' whole matrices. ``law="multinomial"`` draws with
    replacement from the proportions ``K / N``, ``"hypergeometric"`` draws ``n``
    of the ``N`` rows. The per-cell terms are tabulated once per (group, cell)
    for ``k = 0..n`` and gathered, so the cost is four lookups per matrix and
    group.
    """
    cells = np.asarray(cells)
    group_counts = np.asarray(group_counts)
    n = int(cells[0].sum()) if cells.shape[0] else 0
    k = np.arange(n + 1, dtype=np.float64)
    big_n = group_counts.sum(axis=1)
    if law == "multinomial":
        p = group_counts / big_n[:, None]
        table = xlogy(k, p[:, :, None]) - _log_factorial(np.arange(n + 1))
        const = np.full(len(group_counts), float(_log_factorial(np.array([n]))[0]))
    else:
        table = _log_binomial(group_counts[:, :, None], k)
        const = -_log_binomial(big_n, n)
    columns = [np.ascontiguousarray(cells[:, j]) for j in range(4)]
    out = np.empty((len(group_counts), cells.shape[0]))
    for g, row in enumerate(out):  # one-dimensional takes: the fast gathers
        np.take(table[g, 0], columns[0], out=row)
        for j in (1, 2, 3):
            row += np.take(table[g, j], columns[j])
        row += const[g]
    return out
