"""Memory and work of a downsampling experiment: the block sizes of the exact
sums, and the bounds checked before any work."""

from math import comb

from .._enumeration import _format_bytes, _largest_n, n_confusion_matrices

#: Default memory budget of one job, in bytes (``memory_budget``).
MEMORY_BUDGET = 1024**3
#: Largest total work of one call, in (group, matrix) evaluations summed over the
#: sizes: ``n_resamples`` per group and size for Monte Carlo draws made one by one,
#: the number of enumerated matrices (or block-sum vectors) per group and size
#: for ``method="exact"`` and for Monte Carlo histograms. 10^11 evaluations take
#: several hours of one core.
MAX_WORK = 10**11
#: Number of (group, matrix) pairs evaluated at once: bounds the memory of a
#: task and keeps the temporaries of the metric formulas in cache.
_BLOCK = 1 << 16
#: Fewest rows of a support in a block of the exact sums (the smallest block a
#: memory budget must hold).
_ROWS_MIN = 256
#: Largest number of Monte Carlo draws held in memory at once (rows of 4 cells).
_MAX_CHUNK = 1_000_000
#: Monte Carlo draws are generated as a histogram over the possible matrices when
#: there are at most this many (and no more than draws).
_HISTOGRAM_MAX = 2_000_000
#: Largest ``n_resamples``: the draws of a Monte Carlo histogram are counted in
#: float64, exact up to 2^53.
_MAX_RESAMPLES = 2**53


def _row_bytes(n_groups, order, n_estimators=1, n_metrics=1):
    """Memory of one support row in a block: its parts, its smoothed cells,
    metric values and power-sum columns for the estimators shared by all
    groups, and per group its probability and, for the estimators with a
    reference per group, its own smoothed cells, values and power-sum terms."""
    e, m = n_estimators, n_metrics
    shared = 8 + e * (4 + 5 * m)
    per_group = 10 + order + e * (6 + 3 * m)
    return 8 * (shared + n_groups * per_group)


def _plan_metrics(plan):
    """Most metrics sharing one support in ``plan`` (evaluated together)."""
    return max(len(metrics) for _, metrics in plan)


def _block_rows(n_groups, order, memory_budget, n_estimators=1, n_metrics=1):
    """Rows of a block: ``_BLOCK`` (group, row) pairs (they stay in the cache),
    fewer if ``memory_budget`` holds fewer, never fewer than ``_ROWS_MIN``."""
    row = _row_bytes(n_groups, order, n_estimators, n_metrics)
    fit = int(memory_budget) // (2 * row)
    return int(max(_ROWS_MIN, min(max(_BLOCK // n_groups, _ROWS_MIN), fit)))


def _blocks(sizes, k, rows):
    """Blocks of at most ``rows`` support rows over the sizes of a task.

    Each size's rows are cut at multiples of ``rows`` (whatever the other sizes
    of the task), and every piece is a block of its own: a floating-point sum
    over a block (numpy's pairwise summation) then depends on that size's rows
    only, so a size's results are bit for bit the same whichever sizes are
    computed in the same task (as when a checkpointed run resumes with the
    sizes left).
    """
    for pos, n in enumerate(sizes):
        total = comb(int(n) + k - 1, k - 1)
        for start in range(0, total, rows):
            yield [(pos, int(n), start, min(total, start + rows))]


def _size_load(n, plan, method, n_resamples):
    """``(work, rows)`` of one size for one group.

    ``work``: matrices evaluated (drawn one by one, or enumerated); ``rows``: the
    largest array of matrices (or block-sum vectors) held with their
    probabilities, 0 for draws made one by one (held ``_MAX_CHUNK`` at a time).
    """
    full = n_confusion_matrices(n)
    if method == "montecarlo":
        if full > min(n_resamples, _HISTOGRAM_MAX):
            return n_resamples, 0
        return full, full
    supports = [comb(n + len(blocks) - 1, len(blocks) - 1) for blocks, _ in plan]
    return sum(supports), 0


def _size_bytes(rows, n_groups):
    """Memory of a Monte Carlo histogram over ``rows`` matrices (or block-sum
    vectors) with their probabilities for every group."""
    return rows * (12 + 2 * n_groups) * 8


def _exact_bytes(n, n_groups, plan, n_estimators=1):
    """Least memory of the exact sums at size ``n`` in one job: the per-part
    log-probability tables of the largest support and one block of ``_ROWS_MIN``
    rows (see :func:`_block_rows`)."""
    parts = max(len(blocks) for blocks, _ in plan)
    tables = 8 * n_groups * parts * (n + 1) * 2
    row = _row_bytes(n_groups, 2, n_estimators, _plan_metrics(plan))
    return tables + 2 * _ROWS_MIN * row


def _check_work(
    sizes, n_groups, plan, method, n_resamples, budget=MEMORY_BUDGET, n_estimators=1
):
    """Refuse a call whose work exceeds ``MAX_WORK`` or one of whose sizes needs
    more memory than ``budget`` (``memory_budget``), saying which parameter to
    change."""
    loads = [_size_load(int(n), plan, method, n_resamples) for n in sizes]
    if method == "exact":
        n = int(max(sizes))
        need = _exact_bytes(n, n_groups, plan, n_estimators)
        if need > budget:
            largest = _largest_n(
                lambda m: _exact_bytes(m, n_groups, plan, n_estimators) <= budget
            )
            raise ValueError(
                f"memory_budget: the exact sums of size {n} for {n_groups} group(s) "
                f"need at least {_format_bytes(need)} per job (their probability "
                f"tables and one block of {_ROWS_MIN:,} rows), above memory_budget "
                f"= {_format_bytes(budget)}. Raise memory_budget, use sizes up to "
                f"{largest}, or pass fewer groups per call."
            )
    heavy = [(int(n), rows) for n, (_, rows) in zip(sizes, loads, strict=True) if rows]
    if heavy:
        n, rows = max(heavy, key=lambda t: t[1])
        need = _size_bytes(rows, n_groups)
        if need > budget:
            raise ValueError(
                f"memory_budget: size {n} with method={method!r} draws its "
                f"n_resamples={n_resamples:,} matrices as a histogram over the "
                f"{rows:,} possible ones with their probabilities for {n_groups} "
                f"group(s), "
                f"about {_format_bytes(need)} of memory per job, above "
                f"memory_budget = {_format_bytes(budget)}. Raise memory_budget, "
                f"lower n_resamples below {n_confusion_matrices(n):,} (the number of "
                f"matrices of size {n}) to draw the matrices one by one, or pass "
                f"fewer groups per call."
            )
    work = n_groups * sum(w for w, _ in loads)
    if work > MAX_WORK:
        direct = sum(1 for _, rows in loads if not rows)
        enumerated = sum(rows for _, rows in loads)
        most = (MAX_WORK // n_groups - enumerated) // max(direct, 1)
        if method == "montecarlo" and direct and most >= 1:
            hint = (
                f"Lower n_resamples (at most about {most:,} here), or request fewer "
                f"sizes or groups."
            )
        elif method == "montecarlo":
            hint = "Request fewer sizes or groups per call."
        else:
            hint = (
                "Request fewer or smaller sizes, or use method='montecarlo' "
                "(n_resamples matrices per group and size, whatever the size)."
            )
        raise ValueError(
            f"the requested work, {work:,} (group, matrix) evaluations over "
            f"{n_groups} group(s) and {len(loads)} size(s) with method={method!r}"
            + (f" and n_resamples={n_resamples:,}" if method == "montecarlo" else "")
            + f", is above the bound MAX_WORK = {MAX_WORK:,}. {hint}"
        )
