"""Benchmark: the MATCH test's exact null laws against the straightforward ways.

Three computations of :func:`sklearn_smallfair.stats.match_test`, each timed end to
end (validation, the null law, the result table) for one group, against a baseline
written here that evaluates the same sum the plain way, in the same process:

* **exact joint ratio** (``metric="tpr"``, ``method="exact"``): the published sum
  ``P(S <= a/b) = sum_k Bin(k; n, q) BinCDF(floor(a k / b); k, theta)`` (and the
  upper tail), vectorized over k with integer floors: O(n). Baseline: a double
  Python loop over k and, for each k, over c = 0..k with binomial pmfs from
  ``math.lgamma`` (O(n^2)). Ours at n = 100,000 (target under 1 s); the ratio at
  the baseline's size (full: n = 3,000; ``--quick``: 500).
* **enumeration** (``metric="mcc"``, ``method="enumerate"``): the multinomial pmf
  of all ``C(n+3, 3)`` matrices of size n. Baseline: the masked ``(n+1)^3``
  ``np.meshgrid`` grid, ``scipy.stats.multinomial.pmf`` and the MCC formula. Ours
  at n = 300, cold (enumeration cache cleared) and warm (target under 3 s); the
  baseline at n = 300 (``--quick``: n = 150, with ours timed at 150 for the
  ratio).
* **reference uncertainty** (``metric="tpr"``, ``method="exact"``,
  ``reference_uncertainty=True``): the same sum with beta-binomial pieces. Ours
  uses an O(n) Polya-urn recursion for the conditional CDFs; the baseline calls
  ``scipy.stats.betabinom.pmf`` for the weights and ``betabinom.cdf`` / ``sf``
  vectorized over k, which sum the pmf (O(k) per value, O(n^2) in all). Ours at
  n = 100,000; the ratio at n = 3,000 (``--quick``: 1,000).

* **any size** (``metric="tpr"``, ``method="auto"``): one group of n = 10^7
  (auto: the exact sum over the window of the denominator, by recursion; target
  under 50 ms) against the same window summed with ``scipy.stats.binom``'s pmf,
  CDF and survival function for each k; one group of n = 10^12 (auto: the
  saddle-point approximation; target under 1 s) against the exact windowed sum
  (``method="exact"``), which it must match within 1e-9; 20,000 groups of 5 to
  150 people, each against the rest (target under 2 s), against a per-group loop
  of the O(n) sum over every k with ``scipy.stats.binom`` (a plain reference loop).
  ``--quick`` times the loop on 1,000 of the groups (ours too, for the ratio).
  The 10^7 call includes the group's ``reference_range`` columns
  (``confidence_level=0.95``), which at that size come from the Edgeworth law
  (:func:`sklearn_smallfair.stats._large_n.large_range`, O(1) per group); a
  row of its own times that range against the exact law's search
  (``_planning_fixed._exact_range``, the windowed sums), which it must match within
  one lattice step ``1 / (n (p_TP + p_FN))``.

* **sample size** (:func:`~sklearn_smallfair.stats.match_sample_size`,
  ``metric="tpr"``): the smallest group size from which the exact test keeps 80 %
  power against a TPR lower by 0.014 than that of all COMPAS defendants (about
  88,000 people; target under 1 s). The critical values of the exact null law
  are searched on the probit scale from the normal approximation's answer, each
  evaluation moving the bracket to the end of its run of equal thresholds.
  Baseline: the same function with the previous search, a plain bisection on
  the ``2^D`` score grid (``2 log2(n)`` evaluations per critical value), which
  must return the same size (``--quick``: an effect of 0.03, about 19,000
  people).

Data: the reference is the published COMPAS matrix of all defendants but Black
ones (``ALL - Black``, 3,276 people), and each group is a seeded multinomial draw
of size n from the reference's proportions, so both tails are far from 0 and 1.

Timing: every row with a baseline reports the median of per-pair ratios from
interleaved pairs, the baseline and ours back to back (``_common.interleaved``;
3 pairs, or 1 for a slow baseline in full mode: the double loop at n = 3,000 and
the per-group loop on 20,000 groups; ``--quick`` times the n = 10^12 exact sum
once), with the load average beside it; the times are the medians of the pairs.
In full mode the enumeration's baseline, ours cold (cache cleared before it)
and ours warm run in 3 interleaved rounds, the order rotated each round
(``_common.interleaved_rounds``), and the times are the rounds' medians.
``--quick`` times ours at n = 300 on its own, with no baseline at that size
(cold: best of 2, as the process's first call there took 1.5-1.8 s against
0.7 s for the next; warm: one call) and takes the ratio at n = 150 from 3
pairs, the cache cleared before each call; its 1,000-group loop runs in 3
pairs with ours on those groups, and ours on all 20,000 is timed once. The
rows without a baseline at n = 100,000 are the best of 3 calls.

Correctness, on the results of the timed calls (no untimed call repeats them): ours and
each baseline agree on ``lower``, ``upper`` and ``p_undefined`` within 1e-9
(absolute); at n = 100,000 ours is also checked against a vectorized
``scipy.stats.binom`` evaluation of the same sum (plain test) and for
``0 <= lower, upper <= 1 <= lower + upper`` (with reference uncertainty, where
the scipy evaluation would take minutes). A check that fails stops the run.

Run ``python benchmarks/bench_match.py [--quick]`` or through ``run.py``.
"""

import math
import sys
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "match"
# published COMPAS matrices, (TP, FN, FP, TN): ALL minus Black
REFERENCE = np.array([389, 347, 1597, 4121]) - np.array([273, 170, 1043, 1692])
SEED = 20261121
BIG_N = 100_000
ENUM_N = 300
TOL = 1e-9
TARGET_EXACT_S = 1.0
TARGET_ENUM_S = 3.0
#: match_sample_size: all COMPAS defendants, a TPR lower by PLAN_EFFECT
PLAN_REFERENCE = np.array([389, 347, 1597, 4121])
PLAN_EFFECT = -0.014
TARGET_PLAN_S = 1.0
HUGE_N = 10**7
GIANT_N = 10**12
N_GROUPS = 20_000
TARGET_HUGE_S = 0.05
TARGET_GIANT_S = 1.0
TARGET_GROUPS_S = 2.0
FULL = {
    "loop_n": 3_000,
    "enum_base_n": ENUM_N,
    "betabinom_n": 3_000,
    "repeats_ours": 3,
    "repeats_enum": 3,
    "pairs": 3,
    "pairs_loop": 1,
    "pairs_enum": 3,
    "pairs_giant": 3,
    "pairs_groups": 1,
    "loop_groups": N_GROUPS,
    "plan_effect": PLAN_EFFECT,
}
QUICK = {
    "loop_n": 500,
    "enum_base_n": 150,
    "betabinom_n": 1_000,
    "repeats_ours": 3,
    "repeats_enum": 2,
    "pairs": 3,
    "pairs_loop": 3,
    "pairs_enum": 3,
    "pairs_giant": 1,
    "pairs_groups": 3,
    "loop_groups": 1_000,
    "plan_effect": -0.03,
}
TP, FN, FP, TN = range(4)


def make_group(n, seed=SEED):
    """A seeded multinomial draw of size ``n`` from the reference's proportions."""
    rng = np.random.default_rng([seed, n])
    return rng.multinomial(n, REFERENCE / REFERENCE.sum())


def ours(group, metric="tpr", method="exact", reference_uncertainty=False):
    """``(lower, upper, p_undefined)`` from :func:`match_test` for one group."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import match_test

    res = match_test(
        null="fixed-reference",
        counts=np.asarray(group)[None, :],
        reference=REFERENCE,
        metric=metric,
        method=method,
        reference_uncertainty=reference_uncertainty,
    )
    row = res.frame.iloc[0]
    return (
        float(row["p_lower_tail"]),
        float(row["p_upper_tail"]),
        float(row["p_undefined"]),
    )


# --- (a) exact joint ratio ---------------------------------------------------------
def naive_joint_ratio(group, ref=REFERENCE, i=TP, j=FN):
    """The published sum for ``c_i / (c_i + c_j)``, as a double loop (O(n^2)).

    For every denominator k = 1..n and every c = 0..k, the binomial pmfs are
    computed with ``math.lgamma``; c counts in the lower tail when
    ``c / k <= a / b`` and in the upper tail when ``c / k >= a / b`` (compared as
    integers, ``c b <= a k``). Conditional on the metric being defined.
    """
    n = int(sum(group))
    p = ref / ref.sum()
    q = float(p[i] + p[j])
    theta = float(p[i] / (p[i] + p[j]))
    a, b = int(group[i]), int(group[i] + group[j])
    log_q, log_1q = math.log(q), math.log1p(-q)
    log_t, log_1t = math.log(theta), math.log1p(-theta)
    lg = math.lgamma
    lower = upper = defined = 0.0
    for k in range(1, n + 1):
        w = math.exp(
            lg(n + 1) - lg(k + 1) - lg(n - k + 1) + k * log_q + (n - k) * log_1q
        )
        lo = up = 0.0
        for c in range(k + 1):
            pmf = math.exp(
                lg(k + 1) - lg(c + 1) - lg(k - c + 1) + c * log_t + (k - c) * log_1t
            )
            if c * b <= a * k:
                lo += pmf
            if c * b >= a * k:
                up += pmf
        lower += w * lo
        upper += w * up
        defined += w
    return lower / defined, upper / defined, 1.0 - defined


def scipy_joint_ratio(group, ref=REFERENCE, i=TP, j=FN):
    """The same sum, vectorized over k with ``scipy.stats.binom`` (a check at 100k)."""
    from scipy import stats

    n = int(sum(group))
    p = ref / ref.sum()
    q, theta = p[i] + p[j], p[i] / (p[i] + p[j])
    a, b = int(group[i]), int(group[i] + group[j])
    k = np.arange(1, n + 1)
    w = stats.binom.pmf(k, n, q)
    lo = stats.binom.cdf((a * k) // b, k, theta)
    up = stats.binom.sf(-((-a * k) // b) - 1, k, theta)
    d = w.sum()
    return float(w @ lo / d), float(w @ up / d), float(stats.binom.pmf(0, n, q))


def scipy_window_joint_ratio(group, ref=REFERENCE, i=TP, j=FN):
    """The sum over the window of k (mean +- 8.5 sd), with ``scipy.stats.binom``'s
    pmf, CDF and survival function evaluated for each k (no recursion)."""
    from scipy import stats

    n = int(sum(group))
    p = ref / ref.sum()
    q, theta = p[i] + p[j], p[i] / (p[i] + p[j])
    a, b = int(group[i]), int(group[i] + group[j])
    sd = math.sqrt(n * q * (1 - q))
    k = np.arange(
        max(1, math.floor(n * q - 8.5 * sd - 12)), min(n, n * q + 8.5 * sd + 12)
    )
    k = k.astype(np.int64)
    w = stats.binom.pmf(k, n, q)
    lo = stats.binom.cdf((a * k) // b, k, theta)
    up = stats.binom.sf(-((-a * k) // b) - 1, k, theta)
    d = -math.expm1(n * math.log1p(-q))
    return float(w @ lo / d), float(w @ up / d), float(1 - d)


def make_groups(count, seed=SEED):
    """``count`` groups of 5 to 150 people drawn from the reference's proportions."""
    rng = np.random.default_rng([seed, count])
    sizes = rng.integers(5, 151, size=count)
    return np.stack([rng.multinomial(s, REFERENCE / REFERENCE.sum()) for s in sizes])


def ours_groups(groups):
    """``(lower, upper)`` of every group against the rest, one call."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import match_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = match_test(null="fixed-reference", counts=groups, metric="tpr").frame
    return frame[["p_lower_tail", "p_upper_tail"]].to_numpy(), list(frame["method"])


def loop_groups(groups):
    """The per-group loop of the O(n) sum over every k (scipy.stats.binom), each
    group against the rest; NaN where the TPR is undefined."""
    rest = groups.sum(axis=0) - groups
    out = np.full((groups.shape[0], 2), np.nan)
    for g, (group, ref) in enumerate(zip(groups, rest)):
        if group[TP] + group[FN] > 0:
            out[g] = scipy_joint_ratio(group, ref.astype(np.float64))[:2]
    return out


def ours_auto(group, method="auto"):
    """``(lower, upper, p_undefined)`` and the method used, for one group."""
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import match_test

    row = match_test(
        null="fixed-reference",
        counts=np.asarray(group)[None, :],
        reference=REFERENCE,
        method=method,
    ).frame.iloc[0]
    return (
        float(row["p_lower_tail"]),
        float(row["p_upper_tail"]),
        float(row["p_undefined"]),
    ), str(row["method"])


# --- (b) enumeration -------------------------------------------------------------
def mcc(counts):
    """Matthews correlation of ``(..., 4)`` counts, NaN when a margin is 0."""
    tp, fn, fp, tn = (counts[..., c].astype(np.float64) for c in range(4))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (tp * tn - fp * fn) / den, np.nan)


def naive_enumerate_mcc(group, ref=REFERENCE):
    """Masked meshgrid of all matrices, ``scipy.stats.multinomial.pmf``, tail sums.

    Ties with the observed score count in both tails, to the same relative
    tolerance (1e-12) as ours. Conditional on the metric being defined.
    """
    from scipy.stats import multinomial

    n = int(sum(group))
    r = np.arange(n + 1)
    tp, fn, fp = np.meshgrid(r, r, r, indexing="ij")
    keep = tp + fn + fp <= n
    tp, fn, fp = tp[keep], fn[keep], fp[keep]
    counts = np.stack([tp, fn, fp, n - tp - fn - fp], axis=-1)
    pmf = multinomial.pmf(counts, n, ref / ref.sum())
    values = mcc(counts)
    s = float(mcc(np.asarray(group)))
    tol = 1e-12 * max(1.0, abs(s))
    defined = ~np.isnan(values)
    p_def = pmf[defined].sum()
    lower = pmf[defined & (values <= s + tol)].sum() / p_def
    upper = pmf[defined & (values >= s - tol)].sum() / p_def
    return float(lower), float(upper), float(1.0 - p_def)


# --- (c) reference uncertainty ---------------------------------------------------
def betabinom_joint_ratio(group, ref=REFERENCE, prior=0.5, i=TP, j=FN):
    """The joint-ratio sum under the Dirichlet-multinomial, with scipy's betabinom.

    ``K = c_i + c_j ~ BetaBinomial(n, alpha_i + alpha_j, rest)`` and
    ``c_i | K = k ~ BetaBinomial(k, alpha_i, alpha_j)`` with
    ``alpha = ref + prior``; scipy's ``cdf`` / ``sf`` sum the pmf for each k.
    """
    from scipy.stats import betabinom

    n = int(sum(group))
    alpha = ref + prior
    a_ij = alpha[i] + alpha[j]
    a, b = int(group[i]), int(group[i] + group[j])
    k = np.arange(1, n + 1)
    w = betabinom.pmf(k, n, a_ij, alpha.sum() - a_ij)
    lo = betabinom.cdf((a * k) // b, k, alpha[i], alpha[j])
    up = betabinom.sf(-((-a * k) // b) - 1, k, alpha[i], alpha[j])
    d = w.sum()
    p0 = float(betabinom.pmf(0, n, a_ij, alpha.sum() - a_ij))
    return float(w @ lo / d), float(w @ up / d), p0


# --- checks and timing -----------------------------------------------------------
def check_close(label, got, expected, tol=TOL):
    """``(lower, upper, p_undefined)`` agree within ``tol``; return the max error."""
    err = max(abs(g - e) for g, e in zip(got, expected))
    _common.check(
        err <= tol,
        f"{label}: ours {tuple(round(v, 15) for v in got)} vs baseline "
        f"{tuple(round(v, 15) for v in expected)} differ by {err:.3g} > {tol:g}",
    )
    return err


def check_sane(label, result):
    lower, upper, p_undef = result
    _common.check(
        0.0 <= lower <= 1.0 and 0.0 <= upper <= 1.0 and lower + upper >= 1.0 - 1e-9,
        f"{label}: implausible percentiles lower={lower!r}, upper={upper!r}",
    )
    _common.check(abs(p_undef) <= 1e-9, f"{label}: p_undefined={p_undef!r}")


def _fmt_n(n):
    return f"n={n:,}"


def _cache():
    _common.ensure_package_importable()
    from sklearn_smallfair._enumeration import _enumerate_cached

    return _enumerate_cached


def _pairs(res):
    """The row fields of an interleaved result: ratio, load and every pair's ratio."""
    return {"ratio": res["ratio"], "load": res["load"], "pair_ratios": res["ratios"]}


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    _common.ensure_package_importable()
    rows = []
    big = make_group(BIG_N)
    log(f"[{NAME}] reference (ALL - Black) = {REFERENCE.tolist()}")

    # (a) exact joint ratio: ours at 100,000 (checked on the last timed call's
    # result), the ratio at the loop's size from interleaved pairs
    big_s, big_times, res_big = _common.best_of(lambda: ours(big), cfg["repeats_ours"])
    check_sane("exact tpr n=100,000", res_big)
    err_big = check_close(
        "exact tpr n=100,000 vs scipy", res_big, scipy_joint_ratio(big)
    )
    log(
        f"[{NAME}] exact tpr {_fmt_n(BIG_N)}: {big_s:.4f} s (lower {res_big[0]:.6f}, "
        f"upper {res_big[1]:.6f}; vs vectorized scipy {err_big:.1e})"
    )
    rows.append(
        _common.make_row(
            f"match exact tpr {_fmt_n(BIG_N)}",
            big_s,
            None,
            None,
            target=f"< {TARGET_EXACT_S:g} s",
            status="PASS" if big_s < TARGET_EXACT_S else "MISS",
            notes=(
                f"O(n) sum over k; agrees with a vectorized scipy.stats.binom "
                f"evaluation within {err_big:.1e}"
            ),
            ours_times=big_times,
            n=BIG_N,
        )
    )
    n = cfg["loop_n"]
    group = make_group(n)
    res = _common.interleaved(
        lambda: naive_joint_ratio(group), lambda: ours(group), cfg["pairs_loop"]
    )
    err = check_close(
        f"exact tpr {_fmt_n(n)}", res["ours_result"], res["baseline_result"]
    )
    log(
        f"[{NAME}] exact tpr {_fmt_n(n)}: ours {res['ours_s']:.4f} s, double loop "
        f"{res['baseline_s']:.3f} s (ratio {res['ratio']:.1f}, median of "
        f"{cfg['pairs_loop']} interleaved pairs; max difference {err:.1e})"
    )
    rows.append(
        _common.make_row(
            f"match exact tpr {_fmt_n(n)}",
            res["ours_s"],
            "O(n^2) double loop, math.lgamma pmfs",
            res["baseline_s"],
            status="INFO",
            notes=f"same n; lower, upper, p_undefined agree within {err:.1e}",
            n=n,
            **_pairs(res),
        )
    )

    # (b) enumeration of all matrices for mcc
    rows.extend(run_enumeration(cfg, log))

    # (c) reference uncertainty: ours at 100,000, ratio at the betabinom size
    big_s, big_times, res_big = _common.best_of(
        lambda: ours(big, reference_uncertainty=True), cfg["repeats_ours"]
    )
    check_sane("exact tpr reference_uncertainty n=100,000", res_big)
    log(
        f"[{NAME}] exact tpr reference_uncertainty {_fmt_n(BIG_N)}: {big_s:.4f} s "
        f"(lower {res_big[0]:.6f}, upper {res_big[1]:.6f})"
    )
    rows.append(
        _common.make_row(
            f"match exact tpr ref. uncertainty {_fmt_n(BIG_N)}",
            big_s,
            None,
            None,
            status="INFO",
            notes="beta-binomial pieces, O(n) Polya-urn recursion",
            ours_times=big_times,
            n=BIG_N,
        )
    )
    n = cfg["betabinom_n"]
    group = make_group(n)
    res = _common.interleaved(
        lambda: betabinom_joint_ratio(group),
        lambda: ours(group, reference_uncertainty=True),
        cfg["pairs"],
    )
    err = check_close(
        f"exact tpr reference_uncertainty {_fmt_n(n)}",
        res["ours_result"],
        res["baseline_result"],
    )
    log(
        f"[{NAME}] exact tpr reference_uncertainty {_fmt_n(n)}: ours "
        f"{res['ours_s']:.4f} s, scipy betabinom {res['baseline_s']:.3f} s (ratio "
        f"{res['ratio']:.1f}, median of {cfg['pairs']} interleaved pairs; max "
        f"difference {err:.1e})"
    )
    rows.append(
        _common.make_row(
            f"match exact tpr ref. uncertainty {_fmt_n(n)}",
            res["ours_s"],
            "scipy.stats.betabinom pmf + cdf/sf per k",
            res["baseline_s"],
            status="INFO",
            notes=f"same n; lower, upper, p_undefined agree within {err:.1e}",
            n=n,
            **_pairs(res),
        )
    )
    rows.extend(run_any_size(cfg, log))
    rows.append(run_sample_size(cfg, log))
    return rows


def run_enumeration(cfg, log):
    """(b) mcc by enumeration at n = 300, cold and warm, against the meshgrid.

    When the baseline runs at n = 300 (full mode), the baseline, ours cold and
    ours warm are timed in the same interleaved rounds (the order rotated each
    round; warm never comes first, so the cache holds the matrices of the cold
    call before it). Otherwise the two rows at 300 are timed on their own, and
    the ratio is taken at the baseline's n from interleaved pairs of the
    baseline and ours cold.
    """
    cache = _cache()
    enum_group = make_group(ENUM_N)
    base_n = cfg["enum_base_n"]
    base_group = make_group(base_n)
    same = base_n == ENUM_N
    n_mat = math.comb(ENUM_N + 3, 3)
    baseline = "meshgrid + scipy multinomial.pmf"
    rows = []
    if same:
        rounds = _common.interleaved_rounds(
            {
                "baseline": lambda: naive_enumerate_mcc(base_group),
                "cold": lambda: ours(enum_group, "mcc", "enumerate"),
                "warm": lambda: ours(enum_group, "mcc", "enumerate"),
            },
            cfg["repeats_enum"],
            setups={"cold": cache.cache_clear},
        )
        base_res = rounds["results"]["baseline"]
        err = max(
            check_close(
                f"enumerate mcc {_fmt_n(ENUM_N)} {label}",
                rounds["results"][label],
                base_res,
            )
            for label in ("cold", "warm")
        )
        figures = {
            label: _common.versus(rounds, "baseline", label)
            for label in ("cold", "warm")
        }
        base_s = figures["cold"]["baseline_s"]
    else:
        cache.cache_clear()
        figures = {}
        for label, setup, repeats in (
            ("cold", cache.cache_clear, cfg["repeats_enum"]),
            ("warm", None, 1),
        ):
            secs, times, _ = _common.best_of(
                lambda: ours(enum_group, "mcc", "enumerate"), repeats, setup=setup
            )
            figures[label] = {"ours_s": secs, "times": times}
        sub = _common.interleaved(
            lambda: naive_enumerate_mcc(base_group),
            lambda: ours(base_group, "mcc", "enumerate"),
            cfg["pairs_enum"],
            setup=cache.cache_clear,
        )
        err = check_close(
            f"enumerate mcc {_fmt_n(base_n)}",
            sub["ours_result"],
            sub["baseline_result"],
        )
        base_s = sub["baseline_s"]
    log(
        f"[{NAME}] enumerate mcc {_fmt_n(ENUM_N)} ({n_mat:,} matrices): cold "
        f"{figures['cold']['ours_s']:.3f} s, warm {figures['warm']['ours_s']:.3f} s; "
        f"baseline at {_fmt_n(base_n)} {base_s:.3f} s (max difference {err:.1e})"
    )
    for label in ("cold", "warm"):
        fig = figures[label]
        secs = fig["ours_s"]
        if same:
            extra = dict(ours_times=rounds["times"][label], **_pairs(fig))
        else:
            extra = {"ours_times": fig["times"]}
        rows.append(
            _common.make_row(
                f"match enumerate mcc {_fmt_n(ENUM_N)} {label}",
                secs,
                baseline if same else None,
                base_s if same else None,
                target=f"< {TARGET_ENUM_S:g} s",
                status="PASS" if secs < TARGET_ENUM_S else "MISS",
                notes=(
                    f"{n_mat:,} matrices; "
                    + (
                        "enumeration cache cleared before each repeat"
                        if label == "cold"
                        else "matrices cached by the previous call"
                    )
                    + (
                        f"; {cfg['repeats_enum']} interleaved rounds with the "
                        f"baseline; agrees with it within {err:.1e}"
                        if same
                        else "; baseline at a smaller n, see its row"
                    )
                ),
                n=ENUM_N,
                **extra,
            )
        )
    if not same:
        rows.append(
            _common.make_row(
                f"match enumerate mcc {_fmt_n(base_n)} cold",
                sub["ours_s"],
                baseline,
                base_s,
                status="INFO",
                notes=(
                    f"quick mode; {cfg['pairs_enum']} interleaved pairs, cache "
                    f"cleared before each call; agrees with the baseline within "
                    f"{err:.1e}"
                ),
                n=base_n,
                **_pairs(sub),
            )
        )
    return rows


def _bisection_critical(law, level, side):
    """The previous search of a critical value: bisection on the whole grid."""

    def largest(f, lo, hi):
        L, H = lo - 1, hi + 1
        while True:
            active = H - L > 1
            if not active.any():
                return L
            mid = np.where(active, (L + H) // 2, lo)
            ok = f(mid) <= level
            L = np.where(active & ok, mid, L)
            H = np.where(active & ~ok, mid, H)

    if side == "lower":
        return largest(law.lower, law.lo, law.hi)
    return -largest(lambda y: law.upper(-y), -law.hi, -law.lo)


def run_sample_size(cfg, log):
    """(e) match_sample_size near n = 100,000 against the bisection search."""
    from unittest import mock

    from sklearn_smallfair.stats import _planning_fixed, match_sample_size

    effect = cfg["plan_effect"]

    def ours_plan():
        return match_sample_size(
            "tpr", PLAN_REFERENCE, effect=effect, null="fixed-reference"
        )

    def baseline_plan():
        with mock.patch.object(_planning_fixed, "_critical", _bisection_critical):
            return ours_plan()

    out = _common.interleaved(baseline_plan, ours_plan, 3)
    n, n_base = out["ours_result"], out["baseline_result"]
    _common.check(n == n_base, f"sample size {n} differs from the bisection's {n_base}")
    ours_s = out["ours_s"]
    status = "PASS" if ours_s < TARGET_PLAN_S else "FAIL"
    if n < 50_000:
        status = "INFO"  # quick mode: not the size of the target
    log(
        f"[{NAME}] match_sample_size tpr effect {effect}: n = {n:,}; ours "
        f"{ours_s:.3f} s, bisection {out['baseline_s']:.3f} s (ratio "
        f"{out['ratio']:.1f}, median of interleaved pairs)"
    )
    return _common.make_row(
        f"match_sample_size tpr n={n:,}",
        ours_s,
        "bisection of critical values on the 2^D grid (previous search)",
        out["baseline_s"],
        ratio=out["ratio"],
        target=f"< {TARGET_PLAN_S:g} s" if n >= 50_000 else "",
        status=status,
        notes="same n as the baseline",
        n=n,
    )


def _null_range_row(cfg, log):
    """The reference range of one group of 10^7: Edgeworth law against the
    exact law's search."""
    from sklearn_smallfair.metrics import get_metric
    from sklearn_smallfair.stats._planning_fixed import _exact_range, null_range

    tpr = get_metric("tpr")
    n = np.array([HUGE_N], np.int64)
    p = (REFERENCE / REFERENCE.sum())[None, :]
    res = _common.interleaved(
        lambda: _exact_range(tpr, n, p, 0.025),
        lambda: null_range(tpr, n, p, 0.025),
        cfg["pairs"],
    )
    got, expected = res["ours_result"], res["baseline_result"]
    step = 1.0 / (HUGE_N * (p[0, TP] + p[0, FN]))
    err = max(abs(got[0][0] - expected[0][0]), abs(got[1][0] - expected[1][0]))
    _common.check(err <= step, f"null range: off by {err / step:.3g} lattice steps")
    log(
        f"[{NAME}] null range tpr {_fmt_n(HUGE_N)}: ours {res['ours_s']:.4f} s, exact "
        f"search {res['baseline_s']:.3f} s (ratio {res['ratio']:.1f}; max difference "
        f"{err / step:.3f} lattice steps)"
    )
    return _common.make_row(
        f"null range tpr {_fmt_n(HUGE_N)}",
        res["ours_s"],
        "the exact law's search (windowed sums)",
        res["baseline_s"],
        notes=f"Edgeworth law; within {err / step:.3f} lattice steps of the exact",
        n=HUGE_N,
        **_pairs(res),
    )


def run_any_size(cfg, log):
    """(d) n = 10^7, n = 10^12 and 20,000 groups, with ``method="auto"``."""
    rows = []
    huge = make_group(HUGE_N)
    res = _common.interleaved(
        lambda: scipy_window_joint_ratio(huge), lambda: ours_auto(huge), cfg["pairs"]
    )
    mine, used = res["ours_result"]
    err = check_close(f"auto tpr {_fmt_n(HUGE_N)}", mine, res["baseline_result"])
    ours_s = res["ours_s"]
    log(
        f"[{NAME}] auto tpr {_fmt_n(HUGE_N)} ({used}): ours {ours_s:.4f} s, scipy per "
        f"k {res['baseline_s']:.3f} s (ratio {res['ratio']:.1f}; max difference "
        f"{err:.1e})"
    )
    rows.append(
        _common.make_row(
            f"match auto tpr {_fmt_n(HUGE_N)}",
            ours_s,
            "window of k, scipy.stats.binom pmf/cdf/sf per k",
            res["baseline_s"],
            target=f"< {TARGET_HUGE_S * 1000:g} ms",
            status="PASS" if ours_s < TARGET_HUGE_S else "MISS",
            notes=f"method {used}; agrees with the baseline within {err:.1e}",
            n=HUGE_N,
            **_pairs(res),
        )
    )
    rows.append(_null_range_row(cfg, log))
    giant = make_group(GIANT_N)
    res = _common.interleaved(
        lambda: ours_auto(giant, "exact"), lambda: ours_auto(giant), cfg["pairs_giant"]
    )
    mine, used = res["ours_result"]
    err = check_close(f"auto tpr {_fmt_n(GIANT_N)}", mine, res["baseline_result"][0])
    ours_s = res["ours_s"]
    log(
        f"[{NAME}] auto tpr {_fmt_n(GIANT_N)} ({used}): ours {ours_s:.4f} s, exact "
        f"windowed sum {res['baseline_s']:.3f} s (ratio {res['ratio']:.1f}; max "
        f"difference {err:.1e})"
    )
    rows.append(
        _common.make_row(
            f"match auto tpr {_fmt_n(GIANT_N)}",
            ours_s,
            "exact windowed sum (method='exact')",
            res["baseline_s"],
            target=f"< {TARGET_GIANT_S:g} s",
            status="PASS" if ours_s < TARGET_GIANT_S else "MISS",
            notes=(
                f"method {used}; within {err:.1e} of the exact law; the O(n) sum "
                f"would allocate 7 TiB"
            ),
            n=GIANT_N,
            **_pairs(res),
        )
    )
    groups = make_groups(N_GROUPS)
    count = cfg["loop_groups"]
    same = count == N_GROUPS
    sub = groups[:count]
    pairs = cfg["pairs_groups"]
    if same:
        res = _common.interleaved(
            lambda: loop_groups(groups), lambda: ours_groups(groups), pairs
        )
        all_res = res
    else:
        all_s, all_times, all_result = _common.best_of(lambda: ours_groups(groups), 1)
        all_res = {"ours_s": all_s, "ours_result": all_result, "times": all_times}
        res = _common.interleaved(
            lambda: loop_groups(sub), lambda: ours_groups(sub), pairs
        )
    used = all_res["ours_result"][1]
    sub_mine = res["ours_result"][0]
    expected = res["baseline_result"]
    err = float(np.nanmax(np.abs(sub_mine - expected)))
    _common.check(
        err <= TOL and np.array_equal(np.isnan(sub_mine), np.isnan(expected)),
        f"{count:,} groups: ours and the per-group loop differ by {err:.3g}",
    )
    ours_s = all_res["ours_s"]
    log(
        f"[{NAME}] auto tpr {N_GROUPS:,} groups: ours {ours_s:.3f} s; {count:,} "
        f"groups: ours {res['ours_s']:.3f} s, per-group loop {res['baseline_s']:.3f} s "
        f"(ratio {res['ratio']:.1f}, median of {pairs} interleaved pairs; max "
        f"difference {err:.1e})"
    )
    loop = "per-group loop, O(n) sum with scipy.stats.binom"
    rows.append(
        _common.make_row(
            f"match auto tpr {N_GROUPS:,} groups",
            ours_s,
            loop if same else None,
            res["baseline_s"] if same else None,
            target=f"< {TARGET_GROUPS_S:g} s",
            status="PASS" if ours_s < TARGET_GROUPS_S else "MISS",
            notes=(
                f"5 to 150 people each, against the rest; methods {sorted(set(used))}"
                + ("" if same else "; the loop is timed on fewer groups, see below")
            ),
            n=N_GROUPS,
            **(_pairs(res) if same else {"ours_times": all_res["times"]}),
        )
    )
    if not same:
        rows.append(
            _common.make_row(
                f"match auto tpr {count:,} groups",
                res["ours_s"],
                loop,
                res["baseline_s"],
                status="INFO",
                notes=(
                    f"quick mode; {pairs} interleaved pairs; agrees with the loop "
                    f"within {err:.1e}"
                ),
                n=count,
                **_pairs(res),
            )
        )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_match.py [--quick]``."""
    return _common.script_main(
        run,
        __doc__,
        "smaller baselines (n = 500, 150 and 1,000), two cold enumeration repeats, one "
        "pair for the n = 10^12 exact sum and the per-group loop on 1,000 groups",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
