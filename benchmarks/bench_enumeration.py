"""Benchmark: exact enumeration of all confusion matrices plus their multinomial pmf.

For every group size n in 5..150, ours builds all ``C(n+3, 3)`` matrices with
:func:`sklearn_smallfair.enumerate_confusion_matrices` and evaluates
:func:`sklearn_smallfair.multinomial_logpmf` at a fixed ``p``, then ``exp`` and sum:
the inner loop of ``method="exact"`` in the MATCH test and downsampling experiments
(22,533,056 matrices in all). It is timed end to end:

* cold: the enumeration cache is cleared first
  (``sklearn_smallfair._confusion._enumerate_cached.cache_clear()``), so the
  construction of the matrices is timed;
* warm: the same sweep again without clearing (the cache keeps the 16 most recent
  sizes, so a sweep over 146 sizes gets no hits; the hit count is reported);
* parts (informational): the enumeration alone (cache cleared), and the pmf alone
  (``multinomial_logpmf`` + ``exp`` + sum on matrices built beforehand).

Baseline, the naive way, in the same run: the ``(n+1)^3`` grid of (TP, FN, FP) from
``np.meshgrid``, masked to ``TP + FN + FP <= n``, then
``scipy.stats.multinomial.logpmf``. Full mode runs it for every n within a 120 s
budget (ascending n; if the budget runs out the sizes done so far form the
documented subset and ours is timed on the same subset for the ratio); ``--quick``
runs it for n in 5..60. Correctness: the pmf sums to 1 (to 1e-9) for every n, for
ours and the baseline, and ours equals the baseline matrix by matrix (same set of
matrices, log-pmf within 1e-9) for a spread of sizes.

Target: ours under 2 s for the cold 5..150 sweep on the reference machine (2 cores).

Run ``python benchmarks/bench_enumeration.py [--quick]`` or through ``run.py``.
"""

import sys
import time
from math import comb

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "enumeration"
SIZES = range(5, 151)
P = np.array([0.30, 0.10, 0.15, 0.45])  # (TP, FN, FP, TN) cell probabilities
TARGET_SECONDS = 2.0
BASELINE_BUDGET_S = 120.0
QUICK_BASELINE_SIZES = range(5, 61)
CHECK_SIZES = (5, 6, 7, 10, 25, 50, 60, 100, 149, 150)
FULL = {"repeats_ours": 3}
QUICK = {"repeats_ours": 1}
SUM_TOL = 1e-9


def n_matrices(sizes):
    """Exact number of matrices over ``sizes``: the sum of ``C(n+3, 3)``."""
    return sum(comb(n + 3, 3) for n in sizes)


def _size_label(sizes):
    return f"n={sizes[0]}..{sizes[-1]}"


def _cache():
    _common.ensure_package_importable()
    from sklearn_smallfair._confusion import _enumerate_cached

    return _enumerate_cached


def ours_sweep(sizes, p=P):
    """Enumerate and evaluate the pmf for every n; return the pmf total per n."""
    _common.ensure_package_importable()
    from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf

    totals = np.empty(len(sizes))
    for i, n in enumerate(sizes):
        counts = enumerate_confusion_matrices(n)
        totals[i] = np.exp(multinomial_logpmf(counts, p)).sum()
    return totals


def ours_enumeration_only(sizes, *, keep=False):
    """The enumeration part of :func:`ours_sweep`.

    Returns the number of matrices, or the list of them with ``keep=True`` (not
    used for timing: holding every size costs page faults the sweep does not pay).
    """
    from sklearn_smallfair import enumerate_confusion_matrices

    if keep:
        return [enumerate_confusion_matrices(n) for n in sizes]
    return sum(enumerate_confusion_matrices(n).shape[0] for n in sizes)


def ours_pmf_only(matrices, p=P):
    """The pmf part of :func:`ours_sweep` on matrices built beforehand."""
    from sklearn_smallfair import multinomial_logpmf

    return np.array([np.exp(multinomial_logpmf(c, p)).sum() for c in matrices])


def naive_matrices(n):
    """All matrices of size n from the masked ``(n+1)^3`` meshgrid (lexicographic)."""
    r = np.arange(n + 1)
    tp, fn, fp = np.meshgrid(r, r, r, indexing="ij")
    keep = tp + fn + fp <= n
    tp, fn, fp = tp[keep], fn[keep], fp[keep]
    return np.stack([tp, fn, fp, n - tp - fn - fp], axis=-1)


def naive_logpmf(n, p=P):
    """Baseline log-pmf of every matrix of size n (``scipy.stats.multinomial``)."""
    from scipy.stats import multinomial

    counts = naive_matrices(n)
    return counts, multinomial.logpmf(counts, n, p)


def naive_sweep(sizes, p=P, budget_s=None):
    """Baseline sweep; stops early (ascending n) once ``budget_s`` is spent.

    Returns ``(totals, sizes_done, seconds)``; ``seconds`` is the time of the sizes
    done.
    """
    totals = []
    start = time.perf_counter()
    for n in sizes:
        _, logpmf = naive_logpmf(n, p)
        totals.append(np.exp(logpmf).sum())
        if budget_s is not None and time.perf_counter() - start > budget_s:
            break
    seconds = time.perf_counter() - start
    return np.array(totals), sizes[: len(totals)], seconds


def check_sums(label, sizes, totals):
    """The pmf over all matrices of size n must sum to 1 for every n."""
    err = np.abs(totals - 1.0)
    worst = int(np.argmax(err))
    _common.check(
        len(totals) == len(sizes) and bool((err <= SUM_TOL).all()),
        f"{label}: pmf does not sum to 1 within {SUM_TOL:g} at n={sizes[worst]} "
        f"(sum {float(totals[worst])!r})",
    )
    return float(err.max())


def check_matrices(sizes, p=P):
    """Ours equals the baseline matrix by matrix for each n in ``sizes``."""
    from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf

    worst = 0.0
    for n in sizes:
        counts = np.asarray(enumerate_confusion_matrices(n))
        _common.check(
            counts.shape == (comb(n + 3, 3), 4),
            f"n={n}: {counts.shape[0]} matrices, expected C(n+3, 3)",
        )
        _common.check(
            bool((counts.sum(axis=1) == n).all() and (counts >= 0).all()),
            f"n={n}: a matrix does not sum to n or has a negative cell",
        )
        key = (counts[:, 0] * (n + 1) + counts[:, 1]) * (n + 1) + counts[:, 2]
        order = np.argsort(key)
        base_counts, base_logpmf = naive_logpmf(n, p)
        _common.check(
            np.array_equal(counts[order], base_counts),
            f"n={n}: the set of matrices differs from the meshgrid's",
        )
        logpmf = multinomial_logpmf(counts, p)[order]
        diff = float(np.max(np.abs(logpmf - base_logpmf)))
        _common.check(diff <= 1e-9, f"n={n}: log-pmf differs from scipy by {diff:g}")
        worst = max(worst, diff)
    return worst


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    sizes = SIZES
    total = n_matrices(sizes)
    log(
        f"[{NAME}] n in {sizes[0]}..{sizes[-1]}: {total:,} matrices "
        f"(sum of C(n+3, 3)); p = {P.tolist()}"
    )
    cache = _cache()

    # correctness against scipy, matrix by matrix, before timing
    check_sizes = [n for n in CHECK_SIZES if n in sizes]
    worst_logpmf = check_matrices(check_sizes)
    log(
        f"[{NAME}] matrix-by-matrix check vs scipy for n in {check_sizes}: max "
        f"|log-pmf difference| {worst_logpmf:.2e}"
    )

    # ours, cold then warm
    cold_s, cold_times, totals = _common.best_of(
        lambda: ours_sweep(sizes), cfg["repeats_ours"], setup=cache.cache_clear
    )
    max_err = check_sums("ours", sizes, totals)
    # the cache now holds what a user's first sweep leaves in it
    before = cache.cache_info()
    warm_s, warm_times, totals = _common.best_of(
        lambda: ours_sweep(sizes), cfg["repeats_ours"]
    )
    after = cache.cache_info()
    hits = after.hits - before.hits
    lookups = hits + after.misses - before.misses
    check_sums("ours (warm)", sizes, totals)
    log(
        f"[{NAME}] ours: cold best {cold_s:.3f} s, warm best {warm_s:.3f} s "
        f"({hits} cache hits in {lookups} lookups, maxsize {after.maxsize}); "
        f"max |sum pmf - 1| {max_err:.1e}"
    )

    # informational: the two parts of the cold sweep, timed separately
    enum_s, _, _ = _common.best_of(
        lambda: ours_enumeration_only(sizes),
        cfg["repeats_ours"],
        setup=cache.cache_clear,
    )
    held = ours_enumeration_only(sizes, keep=True)
    pmf_s, _, _ = _common.best_of(lambda: ours_pmf_only(held), cfg["repeats_ours"])
    held.clear()

    # the naive baseline
    if quick:
        base_sizes_req, budget = QUICK_BASELINE_SIZES, None
    else:
        base_sizes_req, budget = sizes, BASELINE_BUDGET_S
    base_totals, base_sizes, base_s = naive_sweep(base_sizes_req, budget_s=budget)
    base_err = check_sums("baseline", base_sizes, base_totals)
    own = ours_sweep(base_sizes)
    _common.check(
        np.allclose(own, base_totals, rtol=0, atol=SUM_TOL),
        "per-n pmf totals differ between ours and the baseline",
    )
    full_baseline = list(base_sizes) == list(sizes)
    log(
        f"[{NAME}] naive baseline on {_size_label(base_sizes)}: {base_s:.3f} s "
        f"(max |sum pmf - 1| {base_err:.1e})"
        + (
            ""
            if full_baseline or quick
            else f"; stopped at the {BASELINE_BUDGET_S:g} s budget"
        )
    )

    baseline = "naive meshgrid + scipy multinomial.logpmf"
    target = f"< {TARGET_SECONDS:g} s"
    params = {
        "sizes": [sizes[0], sizes[-1]],
        "n_matrices": total,
        "p": P.tolist(),
        "repeats_ours": cfg["repeats_ours"],
    }
    cache_note = (
        f"{hits} cache hits in {lookups} lookups over {len(warm_times)} warm sweep(s)"
    )
    if hits == 0:
        cache_note += (
            f": lru_cache(maxsize={after.maxsize}) holds fewer sizes than "
            f"the {len(sizes)} of a sweep, so warm = cold"
        )
    # without a full-range baseline the ratio lives in the subset row below
    row_baseline, row_base_s = (baseline, base_s) if full_baseline else (None, None)
    cold_note = (
        f"{total:,} matrices; pmf sums to 1 within {max_err:.1e}"
        if full_baseline
        else f"{total:,} matrices; baseline on a subset, see its row"
    )
    rows = [
        _common.make_row(
            f"enumeration+pmf {_size_label(sizes)} cold",
            cold_s,
            row_baseline,
            row_base_s,
            target=target,
            status="PASS" if cold_s < TARGET_SECONDS else "MISS",
            notes=cold_note,
            ours_times=cold_times,
            **params,
        ),
        _common.make_row(
            f"enumeration+pmf {_size_label(sizes)} warm",
            warm_s,
            row_baseline,
            row_base_s,
            target=target,
            status="PASS" if warm_s < TARGET_SECONDS else "MISS",
            notes=cache_note,
            ours_times=warm_times,
            cache_hits=hits,
            cache_lookups=lookups,
            **params,
        ),
    ]
    if not full_baseline:
        # ours on the same subset, cold, for the ratio
        sub_s, sub_times, _ = _common.best_of(
            lambda: ours_sweep(base_sizes), cfg["repeats_ours"], setup=cache.cache_clear
        )
        why = (
            "quick mode"
            if quick
            else f"the baseline stopped at its {BASELINE_BUDGET_S:g} s budget"
        )
        rows.append(
            _common.make_row(
                f"enumeration+pmf {_size_label(base_sizes)} cold",
                sub_s,
                baseline,
                base_s,
                target="-",
                status="INFO",
                notes=f"subset ({why}): {n_matrices(base_sizes):,} matrices",
                ours_times=sub_times,
                baseline_sizes=[base_sizes[0], base_sizes[-1]],
            )
        )
    rows.append(
        _common.make_row(
            f"  part: enumeration only {_size_label(sizes)}",
            enum_s,
            None,
            None,
            status="INFO",
            notes="enumerate_confusion_matrices for every n, cache cleared first",
        )
    )
    rows.append(
        _common.make_row(
            f"  part: pmf only {_size_label(sizes)}",
            pmf_s,
            None,
            None,
            status="INFO",
            notes="multinomial_logpmf + exp + sum on matrices built beforehand",
        )
    )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_enumeration.py [--quick]``."""
    return _common.script_main(
        run, __doc__, "one repeat, and the baseline on n in 5..60 only", argv
    )


if __name__ == "__main__":
    sys.exit(main())
