"""Benchmark: exact enumeration of all confusion matrices plus their multinomial pmf.

For every group size n in 5..150, ours builds all ``C(n+3, 3)`` matrices with
:func:`sklearn_smallfair.enumerate_confusion_matrices` and evaluates
:func:`sklearn_smallfair.multinomial_logpmf` at a fixed ``p``, then ``exp`` and sum:
the inner loop of ``method="exact"`` in the MATCH test and downsampling experiments
(22,533,056 matrices in all). It is timed end to end:

* cold: the enumeration cache is cleared first
  (``sklearn_smallfair._enumeration._enumerate_cached.cache_clear()``), so the
  construction of the matrices is timed;
* warm: the same sweep again without clearing (the cache keeps the 16 most recent
  sizes, so a sweep over 146 sizes gets no hits; the hit count is reported);
* parts (informational): the time spent in the enumeration and in the pmf
  (``multinomial_logpmf`` + ``exp`` + sum) within the cold sweeps, read around
  each size's calls.

Baseline, the naive way, in the same run: the ``(n+1)^3`` grid of (TP, FN, FP) from
``np.meshgrid``, masked to ``TP + FN + FP <= n``, then
``scipy.stats.multinomial.logpmf``. Full mode runs it for every n within a 120 s
budget (ascending n; if the budget runs out the sizes done so far form the
documented subset); ``--quick`` runs it for n in 5..60.

Timing: the baseline and ours cold (in full mode also ours warm) run back to back
in 3 interleaved rounds, the order rotated each round; each ratio is the median
of the per-round ratios (see :func:`interleaved_rounds`). The baseline's first
call, the first of the first round, sweeps within the budget; every later call of
the baseline and every call of ours cover exactly the sizes it completed. When
that is every size, the cold and warm rows carry the ratios; otherwise (always in
``--quick``) a subset row does, and ours is then timed alone on every size (cold,
then warm; 3 rounds, ``--quick`` 1).

Correctness: the pmf sums to 1 (to 1e-9) for every n, for ours and for the last
timed baseline call, whose per-n totals equal ours'; before timing, ours equals
the baseline matrix by matrix (same set of matrices, log-pmf within 1e-9) for a
spread of sizes.

Target: ours under 2 s for the cold 5..150 sweep on the reference machine (2 cores).

Run ``python benchmarks/bench_enumeration.py [--quick]`` or through ``run.py``.
"""

import statistics
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
#: ``rounds``: interleaved rounds of the baseline and ours; ``repeats_ours``: of
#: ours alone where the baseline did not cover every size (always in ``--quick``).
FULL = {"rounds": 3, "repeats_ours": 3}
QUICK = {"rounds": 3, "repeats_ours": 1}
SUM_TOL = 1e-9


def n_matrices(sizes):
    """Exact number of matrices over ``sizes``: the sum of ``C(n+3, 3)``."""
    return sum(comb(n + 3, 3) for n in sizes)


def _size_label(sizes):
    return f"n={sizes[0]}..{sizes[-1]}"


def _cache():
    _common.ensure_package_importable()
    from sklearn_smallfair._enumeration import _enumerate_cached

    return _enumerate_cached


def ours_sweep(sizes, p=P, *, parts=None):
    """Enumerate and evaluate the pmf for every n; return the pmf total per n.

    With ``parts`` (a list), the seconds spent in the enumeration and in the pmf
    (``multinomial_logpmf`` + ``exp`` + sum) over the sweep are appended to it as a
    pair (two ``time.perf_counter`` readings per size: about 0.02 ms per sweep).
    """
    _common.ensure_package_importable()
    from sklearn_smallfair import enumerate_confusion_matrices, multinomial_logpmf

    totals = np.empty(len(sizes))
    if parts is None:
        for i, n in enumerate(sizes):
            counts = enumerate_confusion_matrices(n)
            totals[i] = np.exp(multinomial_logpmf(counts, p)).sum()
        return totals
    clock = time.perf_counter
    enum_s = pmf_s = 0.0
    for i, n in enumerate(sizes):
        start = clock()
        counts = enumerate_confusion_matrices(n)
        middle = clock()
        totals[i] = np.exp(multinomial_logpmf(counts, p)).sum()
        enum_s += middle - start
        pmf_s += clock() - middle
    parts.append((enum_s, pmf_s))
    return totals


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


def _warm_sweep(sizes, cache, counter):
    """A sweep over ``sizes`` without clearing the cache; its cache hits and
    lookups are added to ``counter``."""
    before = cache.cache_info()
    totals = ours_sweep(sizes)
    after = cache.cache_info()
    hits = after.hits - before.hits
    counter["hits"] += hits
    counter["lookups"] += hits + after.misses - before.misses
    counter["sweeps"] += 1
    counter["maxsize"] = after.maxsize
    return totals


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

    # The baseline and ours, cold, in interleaved rounds. The baseline's first
    # call (the first of the first round) sweeps within the budget in full mode;
    # every later call of either side covers exactly the sizes it completed.
    if quick:
        requested, budget = QUICK_BASELINE_SIZES, None
    else:
        requested, budget = sizes, BASELINE_BUDGET_S
    state = {"sizes": requested, "budget": budget, "ours_sizes": []}

    def baseline():
        totals, done, _ = naive_sweep(state["sizes"], budget_s=state["budget"])
        state.update(sizes=done, budget=None)
        return totals

    def cold(parts):
        state["ours_sizes"].append(state["sizes"])
        return ours_sweep(state["sizes"], parts=parts)

    cold_parts, warm_count = [], {"hits": 0, "lookups": 0, "sweeps": 0}
    calls = {"baseline": baseline, "cold": lambda: cold(cold_parts)}
    if not quick:  # the warm sweep joins the rounds when it may get a ratio
        calls["warm"] = lambda: _warm_sweep(sizes, cache, warm_count)
    rounds = _common.interleaved_rounds(
        calls, cfg["rounds"], setups={"cold": cache.cache_clear}
    )
    base_sizes = state["sizes"]
    _common.check(
        all(list(used) == list(base_sizes) for used in state["ours_sizes"]),
        "ours was timed on other sizes than the baseline",
    )
    res = _common.versus(rounds, "baseline", "cold")
    base_err = check_sums("baseline", base_sizes, res["baseline_result"])
    _common.check(
        np.allclose(res["ours_result"], res["baseline_result"], rtol=0, atol=SUM_TOL),
        "per-n pmf totals differ between ours and the baseline",
    )
    full_baseline = list(base_sizes) == list(sizes)
    log(
        f"[{NAME}] naive baseline on {_size_label(base_sizes)}: {res['baseline_s']:.3f}"
        f" s, ours cold {res['ours_s']:.3f} s ({res['ratio']:.2f}x, median of "
        f"{cfg['rounds']} interleaved rounds; max |sum pmf - 1| {base_err:.1e})"
        + (
            ""
            if full_baseline or quick
            else f"; stopped at the {BASELINE_BUDGET_S:g} s budget"
        )
    )
    if full_baseline:
        timed = rounds
        cold_res, warm_res = res, _common.versus(rounds, "baseline", "warm")
    else:
        # ours alone on every size: cold (cache cleared), then warm
        cold_parts.clear()
        warm_count.update(hits=0, lookups=0, sweeps=0)
        timed = _common.interleaved_rounds(
            {
                "cold": lambda: ours_sweep(sizes, parts=cold_parts),
                "warm": lambda: _warm_sweep(sizes, cache, warm_count),
            },
            cfg["repeats_ours"],
            setups={"cold": cache.cache_clear},
        )
        cold_res, warm_res = (
            {
                "ours_s": statistics.median(timed["times"][name]),
                "ours_result": timed["results"][name],
            }
            for name in ("cold", "warm")
        )
    cold_times, warm_times = timed["times"]["cold"], timed["times"]["warm"]
    max_err = check_sums("ours", sizes, cold_res["ours_result"])
    check_sums("ours (warm)", sizes, warm_res["ours_result"])
    hits, lookups = warm_count["hits"], warm_count["lookups"]
    cold_s, warm_s = cold_res["ours_s"], warm_res["ours_s"]
    log(
        f"[{NAME}] ours on {_size_label(sizes)}: cold {cold_s:.3f} s, warm "
        f"{warm_s:.3f} s (medians; {hits} cache hits in {lookups} lookups, maxsize "
        f"{warm_count['maxsize']}); max |sum pmf - 1| {max_err:.1e}"
    )
    enum_s = statistics.median(e for e, _ in cold_parts)
    pmf_s = statistics.median(q for _, q in cold_parts)

    baseline_name = "naive meshgrid + scipy multinomial.logpmf"
    target = f"< {TARGET_SECONDS:g} s"
    params = {
        "sizes": [sizes[0], sizes[-1]],
        "n_matrices": total,
        "p": P.tolist(),
        "repeats_ours": len(cold_times),
    }
    cache_note = (
        f"{hits} cache hits in {lookups} lookups over {warm_count['sweeps']} warm "
        f"sweep(s)"
    )
    if hits == 0:
        cache_note += (
            f": lru_cache(maxsize={warm_count['maxsize']}) holds fewer sizes than "
            f"the {len(sizes)} of a sweep, so warm = cold"
        )
    if full_baseline:
        # ratios of the rounds: the baseline against each of ours
        extra = {
            "cold": {"ratio": cold_res["ratio"], "pair_ratios": cold_res["ratios"]},
            "warm": {"ratio": warm_res["ratio"], "pair_ratios": warm_res["ratios"]},
        }
        row_baseline, row_base_s = baseline_name, res["baseline_s"]
        cold_note = (
            f"{total:,} matrices; pmf sums to 1 within {max_err:.1e}; "
            f"{len(cold_times)} interleaved rounds of the baseline and ours cold "
            f"and warm (cache cleared before each cold call)"
        )
    else:
        # without a full-range baseline the ratio lives in the subset row below
        extra = {"cold": {}, "warm": {}}
        row_baseline, row_base_s = None, None
        cold_note = f"{total:,} matrices; baseline on a subset, see its row"
    rows = [
        _common.make_row(
            f"enumeration+pmf {_size_label(sizes)} cold",
            cold_s,
            row_baseline,
            row_base_s,
            target=target,
            status="PASS" if cold_s < TARGET_SECONDS else "MISS",
            notes=cold_note,
            load=timed["load"],
            ours_times=cold_times,
            **extra["cold"],
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
            load=timed["load"],
            ours_times=warm_times,
            cache_hits=hits,
            cache_lookups=lookups,
            **extra["warm"],
            **params,
        ),
    ]
    if not full_baseline:
        why = (
            "quick mode"
            if quick
            else f"the baseline stopped at its {BASELINE_BUDGET_S:g} s budget"
        )
        rows.append(
            _common.make_row(
                f"enumeration+pmf {_size_label(base_sizes)} cold",
                res["ours_s"],
                baseline_name,
                res["baseline_s"],
                ratio=res["ratio"],
                target="-",
                status="INFO",
                notes=(
                    f"subset ({why}): {n_matrices(base_sizes):,} matrices; "
                    f"{cfg['rounds']} interleaved pairs, cache cleared before each "
                    f"of ours' calls"
                ),
                load=res["load"],
                pair_ratios=res["ratios"],
                ours_times=rounds["times"]["cold"],
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
            notes=(
                "enumerate_confusion_matrices for every n within the cold sweeps "
                "(cache cleared first), timed around each call; median over the "
                "sweeps"
            ),
        )
    )
    rows.append(
        _common.make_row(
            f"  part: pmf only {_size_label(sizes)}",
            pmf_s,
            None,
            None,
            status="INFO",
            notes=(
                "multinomial_logpmf + exp + sum within the same cold sweeps, timed "
                "around each size's call; median over the sweeps"
            ),
        )
    )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_enumeration.py [--quick]``."""
    return _common.script_main(
        run,
        __doc__,
        "the baseline on n in 5..60 only, and one sweep of ours alone on 5..150",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
