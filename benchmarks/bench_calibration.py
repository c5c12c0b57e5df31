"""Calibration of the package's tests: size under the null and power, by simulation.

Not a timing. For every test and method, the share of simulated data sets on which
the test rejects at ``alpha = 0.05`` (``p <= alpha``), with its Monte Carlo 95 %
Wilson interval, under the null hypothesis (the size) and under one fixed
alternative (the power).

**separation_test** (one test of two rates, TPR or FPR): a small group of
n = 5, 10, 20, 50, 200 people in the label stratum against a group of 1,000, both
with the true rate 0.05, 0.2, 0.5 or 0.95 (null), or 0.6 against 0.8
(alternative). The test sees only the two counts, so they are drawn directly with
binomials and each data set becomes a call with 8 weighted rows (``sample_weight``
of the cells): the positives of one data set and the negatives of another, so a
call tests two data sets (its TPR and FPR rows). Each distinct table is tested
once and counted with its multiplicity (13,000 calls cover 200,000 data sets);
the permutation test, random itself, is called for every data set. Methods:
``"auto"`` (the default), ``"exact"``, ``"score"``, ``"wald"`` (the published test)
and ``"permutation"`` (999 resamples).

**comparative_separation_test** (all pairs by default): n = 50, 200, 1,000 items.
Binary labels: the predicted labels as scores, people drawn from a law with TPR
0.8 and FPR 0.4 in both groups and prevalences 0.55 (group 1) and 0.45 (group 0),
half of them in each group; alternative: group 1's TPR is 0.6. Integer labels: 0
to 4 independent of the group (40 % in group 1), scores ``round(y / 2 + N(0, 1),
1)``; alternative: group 1's scores are 0.5 lower. One call per data set. Methods:
all pairs with the U-statistic variance and a t reference (the default), all
pairs by permutation (199 resamples), ``2 n`` sampled pairs with the clustered
variance, and ``2 n`` sampled pairs with the independent-pairs variance (the
published procedure). Reported: the cross test, the within test and the joint
verdict ``min(p_cross, p_within) <= alpha`` (nominal ``1 - 0.95^2 = 0.0975``);
data sets where a cell has no pair (NaN p-value) are left out and counted.

**match_test**: a group of n = 5, 10, 20, 50, 200 drawn from the law with
prevalence 0.5 and TPR = TNR = r (so TPR = accuracy = r and MCC = 2r - 1), r =
0.05, 0.2, 0.5, 0.95 (null); alternative: the reference has r = 0.8 and the group
r = 0.6. Metrics ``tpr`` (a joint ratio), ``acc`` (binomial) and ``mcc`` (no closed
form). Two designs, every simulated group its own group in one call
(``match_test(null="fixed-reference", counts=..., reference=...)``):

* *known reference*: the reference is the law itself (its proportions times
  10^6), so the null hypothesis of the test holds exactly. Methods: ``"auto"``,
  ``"exact"``, ``"saddlepoint"``, ``"enumerate"``, ``"montecarlo"`` (999 draws per
  group), ``"beta"`` (published, joint ratios) and ``"asymptotic"`` (binomial metrics);
* *reference of 1,000*: each group against its own reference of 1,000 people drawn
  from the same law, with ``reference_uncertainty`` False (the default) and True,
  and the published approximations. ``mcc`` at n = 200 is left out here: its
  enumeration against 10,000 different references would take about an hour per
  cell (0.3 s each).

Rates are among the data sets on which the test is defined (a TPR needs a
positive; 3 % of groups of 5 at prevalence 0.5 have none).

Data sets per cell: ``--sets`` (10,000 by default) for the non-random methods;
``--perm-sets`` (2,000) for the permutation tests, MATCH's Monte Carlo and the
power of the comparative tests. ``--quick`` uses 200 and 100 sets, group sizes 5
and 50, true rates 0.05 and 0.5 and 50 items (16 to 24 s). Seeds are fixed; within
a cell all methods see the same data sets.

Targets: the exact and permutation tests (and MATCH's ``"enumerate"`` and
``"montecarlo"`` in the known-reference design) never reject more than ``alpha``
plus two Monte Carlo standard errors ``sqrt(alpha (1 - alpha) / sets)``; the
defaults (``separation_test(method="auto")``, all pairs with the t reference,
``match_test(method="auto")``) at most 1.5 points above ``alpha`` at every size
(more conservative is allowed; the power is reported beside it). With the few
sets of ``--quick`` every bound allows three more standard errors.

Run ``python benchmarks/bench_calibration.py [--quick] [--sets N] [--perm-sets N]
[--only PART] [--out results.json] [--rst]``: it prints the tables (rates in %,
Wilson intervals in parentheses) and the targets, and writes every cell as JSON
(default ``benchmarks/results/calibration.json``, ``calibration_quick.json`` with
``--quick``); ``--from-json PATH`` prints the tables of a saved run; ``--rst``
prints them also as reStructuredText, rates without intervals, as in the user
guide. The full study takes about 30 minutes on 2 cores (comparative tests 16,
MATCH 6-7, separation 6).
"""

import argparse
import functools
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "calibration"
ALPHA = 0.05
JOINT_ALPHA = 1 - (1 - ALPHA) ** 2
#: Allowed excess of the defaults over the nominal rate.
DEFAULT_SLACK = 0.015
SEED = 20261124
PARTS = ("separation", "comparative", "match")

SMALL_SIZES = (5, 10, 20, 50, 200)
LARGE_SIZE = 1000
RATES = (0.05, 0.2, 0.5, 0.95)
#: (small group's rate, large group's rate) of the separation power.
SEPARATION_ALTERNATIVE = (0.6, 0.8)
SEPARATION_METHODS = ("auto", "exact", "score", "wald", "permutation")
SEPARATION_RESAMPLES = 999

ITEM_SIZES = (50, 200, 1000)
LABEL_KINDS = ("binary", "integer")
#: (C, Y, A) of the 8 cells of a law, in the order of the laws below.
CELLS = np.array(
    [
        [1, 1, 1],
        [0, 1, 1],
        [1, 0, 1],
        [0, 0, 1],
        [1, 1, 0],
        [0, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
    ]
)
#: Half the people in each group; prevalences 0.55 (group 1) and 0.45 (group 0);
#: TPR 0.8 and FPR 0.4 in both (the first law of the comparative example).
LAW_NULL = (0.22, 0.055, 0.09, 0.135, 0.18, 0.045, 0.11, 0.165)
#: The same with group 1's TPR 0.6.
LAW_ALTERNATIVE = (0.165, 0.11, 0.09, 0.135, 0.18, 0.045, 0.11, 0.165)
#: Score shift of group 1 under the alternative, integer labels.
INTEGER_SHIFT = 0.5
COMPARATIVE_METHODS = {
    "all pairs (default)": {},
    "all pairs, permutation": {"method": "permutation", "n_resamples": 199},
    "2n pairs, clustered": {"variance": "clustered"},
    "2n pairs, independent (published)": {"variance": "independent"},
}
RANDOM_METHODS = {"permutation", "all pairs, permutation", "montecarlo"}

MATCH_DESIGNS = ("known reference", "reference of 1,000")
KNOWN_SCALE = 1_000_000
#: (reference's r, group's r) of the MATCH power.
MATCH_ALTERNATIVE = (0.8, 0.6)
MATCH_METHODS = {
    "known reference": {
        "tpr": ("auto", "exact", "saddlepoint", "enumerate", "montecarlo", "beta"),
        "acc": (
            "auto",
            "exact",
            "saddlepoint",
            "enumerate",
            "montecarlo",
            "asymptotic",
        ),
        "mcc": ("auto", "enumerate", "montecarlo"),
    },
    "reference of 1,000": {
        "tpr": ("auto", "auto, reference_uncertainty", "beta"),
        "acc": ("auto", "auto, reference_uncertainty", "asymptotic"),
        "mcc": ("auto", "auto, reference_uncertainty"),
    },
}
MATCH_DRAWS = 999
#: Largest n at which mcc is enumerated against a different reference per group.
MATCH_PER_REFERENCE_ENUMERATION_MAX_N = 50

FULL = {
    "sets": 10_000,
    "perm_sets": 2_000,
    "small_sizes": SMALL_SIZES,
    "rates": RATES,
    "item_sizes": ITEM_SIZES,
}
QUICK = {
    "sets": 200,
    "perm_sets": 100,
    "small_sizes": (5, 50),
    "rates": (0.05, 0.5),
    "item_sizes": (50,),
}
DEFAULT_JSON = _common.BENCH_DIR / "results" / "calibration.json"


# =====================================================================================
# Monte Carlo intervals
# =====================================================================================
def wilson(k, n, z=1.959963984540054):
    """Wilson score interval of ``k`` successes in ``n`` trials."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mc_se(rate, n):
    """Monte Carlo standard error of a rejection rate ``rate`` over ``n`` sets."""
    return math.sqrt(rate * (1 - rate) / n) if n else math.nan


def rate_entry(rejected, sets, undefined=0):
    """The rejection rate of a cell with its Wilson interval."""
    rejected, sets = int(rejected), int(sets)
    low, high = wilson(rejected, sets)
    return {
        "sets": sets,
        "rejected": rejected,
        "rate": rejected / sets if sets else math.nan,
        "ci_low": low,
        "ci_high": high,
        "undefined": int(undefined),
    }


def _seed(*key):
    """A seed sequence for one cell (the same for every method of the cell)."""
    return np.random.SeedSequence([SEED, *(round(k * 1000) for k in key)])


# =====================================================================================
# separation_test
# =====================================================================================
#: Rows of one call: (TP, FN, FP, TN) of the small group (label 1), then of the
#: large group (label 0); the weights are the counts.
_SEP_TRUE = np.array([1, 1, 0, 0, 1, 1, 0, 0])
_SEP_PRED = np.array([1, 0, 1, 0, 1, 0, 1, 0])
_SEP_GROUP = np.array([1, 1, 1, 1, 0, 0, 0, 0])


def _separation_pvalues(method, x_a, n, x_b, seeds=None):
    """P-values of ``separation_test`` for tables ``(x_a of n, x_b of 1,000)``,
    two tables per call (TPR and FPR rows), and the test each row used."""
    from sklearn_smallfair.stats import separation_test

    m = x_a.shape[0]
    p = np.full(m, np.nan)
    used = np.empty(m, dtype=object)
    for start in range(0, m, 2):
        i, j = start, min(start + 1, m - 1)
        weights = [
            x_a[i], n - x_a[i], x_a[j], n - x_a[j],
            x_b[i], LARGE_SIZE - x_b[i], x_b[j], LARGE_SIZE - x_b[j],
        ]  # fmt: skip
        kwargs = {}
        if method == "permutation":
            kwargs = {
                "n_resamples": SEPARATION_RESAMPLES,
                "random_state": int(seeds[start]),
            }
        frame = separation_test(
            _SEP_TRUE,
            _SEP_PRED,
            sensitive_features=_SEP_GROUP,
            sample_weight=np.asarray(weights),
            method=method,
            correction=None,
            **kwargs,
        ).frame
        if frame["n_a"].iat[0] != n or frame["group_a"].iat[0] != 1:
            raise _common.CorrectnessError(
                f"separation_test compared {frame[['group_a', 'n_a']].iloc[0]}"
            )
        p[i], p[j] = frame["p_value"].iat[0], frame["p_value"].iat[1]
        used[i], used[j] = frame["method"].iat[0], frame["method"].iat[1]
    return p, used


def separation_cell(n, rate_small, rate_large, sets, perm_sets, timings):
    """Rejection rates of every method on one setting (common data sets)."""
    rng = np.random.default_rng(_seed(1, n, rate_small, rate_large))
    x_a = rng.binomial(n, rate_small, sets)
    x_b = rng.binomial(LARGE_SIZE, rate_large, sets)
    perm_seeds = rng.integers(0, 2**63, perm_sets)
    # each distinct table once, counted with its multiplicity
    tables, counts = np.unique(np.stack([x_a, x_b], axis=1), axis=0, return_counts=True)
    out = {}
    for method in SEPARATION_METHODS:
        start = time.perf_counter()
        if method == "permutation":
            k = min(perm_sets, sets)
            p, used = _separation_pvalues(method, x_a[:k], n, x_b[:k], perm_seeds)
            weight = np.ones(k, dtype=np.int64)
        else:
            p, used = _separation_pvalues(method, tables[:, 0], n, tables[:, 1])
            weight = counts
        timings[method] = timings.get(method, 0.0) + time.perf_counter() - start
        entry = rate_entry(
            weight[p <= ALPHA].sum(), weight.sum(), weight[np.isnan(p)].sum()
        )
        if method == "auto":
            entry["exact_share"] = float(weight[used == "exact"].sum() / weight.sum())
        entry["calls"] = math.ceil(p.shape[0] / 2)
        out[method] = entry
    return out


def run_separation(config, log=print):
    """Size and power of ``separation_test``, one row per (method, n, rates)."""
    rows, timings = [], {}
    settings = [(r, r) for r in config["rates"]] + [SEPARATION_ALTERNATIVE]
    for n in config["small_sizes"]:
        start = time.perf_counter()
        for small, large in settings:
            cell = separation_cell(
                n, small, large, config["sets"], config["perm_sets"], timings
            )
            for method, entry in cell.items():
                rows.append(
                    {
                        "test": "separation",
                        "method": method,
                        "n": n,
                        "true_rate": small,
                        "true_rate_large": large,
                        "null": small == large,
                        **entry,
                    }
                )
        log(f"[calibration] separation n={n}: {time.perf_counter() - start:.1f} s")
    return rows, timings


# =====================================================================================
# comparative_separation_test
# =====================================================================================
def comparative_items(kind, n, alternative, rng):
    """``(y, score, group)`` of one simulated data set."""
    if kind == "binary":
        law = np.asarray(LAW_ALTERNATIVE if alternative else LAW_NULL)
        counts = rng.multinomial(n, law / law.sum())
        cells = np.repeat(CELLS, counts, axis=0)
        return cells[:, 1], cells[:, 0].astype(np.float64), cells[:, 2]
    group = (rng.random(n) < 0.4).astype(np.int64)
    y = rng.integers(0, 5, n)
    shift = INTEGER_SHIFT * group if alternative else 0.0
    return y, np.round(0.5 * y + rng.normal(size=n) - shift, 1), group


def comparative_cell(kind, n, alternative, sets, perm_sets, timings):
    """P-values (cross, within) of every method on common data sets."""
    from sklearn_smallfair.stats import comparative_separation_test

    rng = np.random.default_rng(_seed(2, LABEL_KINDS.index(kind), n, alternative))
    out = {}
    pvalues = {m: [] for m in COMPARATIVE_METHODS}
    for k in range(sets):
        y, score, group = comparative_items(kind, n, alternative, rng)
        seed = int(rng.integers(0, 2**63))
        for method, options in COMPARATIVE_METHODS.items():
            if method in RANDOM_METHODS and k >= perm_sets:
                continue
            kwargs = dict(options)
            if method.startswith("2n"):
                kwargs["n_pairs"] = 2 * n
            if method != "all pairs (default)":
                kwargs["random_state"] = seed
            start = time.perf_counter()
            if np.unique(group).size < 2:
                p = (math.nan, math.nan)
            else:
                frame = comparative_separation_test(
                    y, score, sensitive_features=group, correction=None, **kwargs
                ).frame
                if list(frame["test"]) != ["cross", "within"]:
                    raise _common.CorrectnessError(f"unexpected tests {frame}")
                p = tuple(frame["p_value"])
            timings[method] = timings.get(method, 0.0) + time.perf_counter() - start
            pvalues[method].append(p)
    for method, values in pvalues.items():
        p = np.array(values, dtype=np.float64).reshape(-1, 2)
        defined = ~np.isnan(p).any(axis=1)
        undefined = int((~defined).sum())
        p = p[defined]
        reject = p <= ALPHA
        out[method] = {
            "cross": rate_entry(reject[:, 0].sum(), len(p), undefined),
            "within": rate_entry(reject[:, 1].sum(), len(p), undefined),
            "joint": rate_entry(reject.any(axis=1).sum(), len(p), undefined),
        }
    return out


def run_comparative(config, log=print):
    """Size and power of ``comparative_separation_test``."""
    rows, timings = [], {}
    for kind in LABEL_KINDS:
        for n in config["item_sizes"]:
            start = time.perf_counter()
            for alternative in (False, True):
                sets = config["perm_sets"] if alternative else config["sets"]
                cell = comparative_cell(
                    kind, n, alternative, sets, config["perm_sets"], timings
                )
                for method, tests in cell.items():
                    for test, entry in tests.items():
                        rows.append(
                            {
                                "test": "comparative",
                                "labels": kind,
                                "method": method,
                                "n": n,
                                "null": not alternative,
                                "which": test,
                                **entry,
                            }
                        )
            log(
                f"[calibration] comparative {kind} n={n}: "
                f"{time.perf_counter() - start:.1f} s"
            )
    return rows, timings


# =====================================================================================
# match_test
# =====================================================================================
def match_law(r):
    """(TP, FN, FP, TN) proportions: prevalence 0.5, TPR = TNR = r."""
    return np.array([0.5 * r, 0.5 * (1 - r), 0.5 * (1 - r), 0.5 * r])


def match_cell(design, metric, n, rate_ref, rate_group, sets, perm_sets, timings):
    """Rejection rates of every method of ``design`` and ``metric`` (common data)."""
    from sklearn_smallfair.stats import match_test

    key = (3, MATCH_DESIGNS.index(design), n, rate_ref, rate_group)
    rng = np.random.default_rng(_seed(*key))
    cms = rng.multinomial(n, match_law(rate_group), sets)
    if design == "known reference":
        refs = np.round(match_law(rate_ref) * KNOWN_SCALE).astype(np.int64)
    else:
        refs = rng.multinomial(LARGE_SIZE, match_law(rate_ref), sets)
    out = {}
    for method in MATCH_METHODS[design][metric]:
        if (
            metric == "mcc"
            and design != "known reference"
            and n > MATCH_PER_REFERENCE_ENUMERATION_MAX_N
        ):
            continue
        k = min(perm_sets, sets) if method in RANDOM_METHODS else sets
        kwargs = {"method": method.split(",")[0]}
        if method.endswith("reference_uncertainty"):
            kwargs["reference_uncertainty"] = True
        if method == "montecarlo":
            kwargs.update(
                n_resamples=MATCH_DRAWS, random_state=int(rng.integers(2**63))
            )
        start = time.perf_counter()
        frame = match_test(
            null="fixed-reference",
            counts=cms[:k],
            reference=refs if refs.ndim == 1 else refs[:k],
            metric=metric,
            **kwargs,
        ).frame
        timings[f"{metric} {method}"] = (
            timings.get(f"{metric} {method}", 0.0) + time.perf_counter() - start
        )
        p = frame["p_value"].to_numpy()
        defined = ~np.isnan(p)
        entry = rate_entry((p[defined] <= ALPHA).sum(), defined.sum(), (~defined).sum())
        entry["methods_used"] = sorted(set(frame["method"]))
        out[method] = entry
    return out


def run_match(config, log=print):
    """Size and power of ``match_test``."""
    rows, timings = [], {}
    settings = [(r, r) for r in config["rates"]] + [MATCH_ALTERNATIVE]
    for design in MATCH_DESIGNS:
        for n in config["small_sizes"]:
            start = time.perf_counter()
            for metric in MATCH_METHODS[design]:
                for ref_rate, group_rate in settings:
                    cell = match_cell(
                        design,
                        metric,
                        n,
                        ref_rate,
                        group_rate,
                        config["sets"],
                        config["perm_sets"],
                        timings,
                    )
                    for method, entry in cell.items():
                        rows.append(
                            {
                                "test": "match",
                                "design": design,
                                "metric": metric,
                                "method": method,
                                "n": n,
                                "true_rate": group_rate,
                                "true_rate_reference": ref_rate,
                                "null": ref_rate == group_rate,
                                **entry,
                            }
                        )
            log(
                f"[calibration] match, {design}, n={n}: "
                f"{time.perf_counter() - start:.1f} s"
            )
    return rows, timings


# =====================================================================================
# The study, its targets and its tables
# =====================================================================================
def run_study(quick=False, *, sets=None, perm_sets=None, parts=PARTS, log=print):
    """Run the parts; return a JSON-able dict (configuration, rows, timings)."""
    _common.ensure_package_importable()
    config = dict(QUICK if quick else FULL)
    if sets is not None:
        config["sets"] = int(sets)
    if perm_sets is not None:
        config["perm_sets"] = int(perm_sets)
    config["perm_sets"] = min(config["perm_sets"], config["sets"])
    runners = {
        "separation": run_separation,
        "comparative": run_comparative,
        "match": run_match,
    }
    result = {
        "mode": "quick" if quick else "full",
        "alpha": ALPHA,
        "config": {
            k: list(v) if isinstance(v, tuple) else v for k, v in config.items()
        },
        "parts": list(parts),
        "rows": [],
        "timings": {},
        "seconds": {},
    }
    total = time.perf_counter()
    with warnings.catch_warnings():
        # undefined metrics (a group of 5 without positives), exact-test fallbacks
        warnings.simplefilter("ignore")
        for part in parts:
            start = time.perf_counter()
            rows, timings = runners[part](config, log=log)
            result["rows"].extend(rows)
            result["timings"][part] = timings
            result["seconds"][part] = time.perf_counter() - start
    result["seconds"]["total"] = time.perf_counter() - total
    return result


def check_targets(result):
    """``(what, target, passed, detail)`` for each target, from the null rows.

    The exact and random tests may exceed the nominal rate by two Monte Carlo
    standard errors of the nominal rate over the cell's sets; the defaults by 1.5
    points (their point estimate). In ``--quick`` mode, with its few sets and many
    cells, every bound allows three standard errors more than that.
    """
    quick = result["mode"] == "quick"
    rows = [r for r in result["rows"] if r["null"]]
    checks = []

    def noise(nominal, r):
        return (3 if quick else 0) * mc_se(nominal, r["sets"])

    def two_se(nominal, r):
        return 2 * mc_se(nominal, r["sets"]) + noise(nominal, r)

    def default_slack(nominal, r):
        return DEFAULT_SLACK + noise(nominal, r)

    def worst(selected, nominal, slack, label, target):
        if not selected:
            return
        e, r = max(
            ((r["rate"] - nominal - slack(nominal, r), r) for r in selected),
            key=lambda t: t[0],
        )
        keys = ("design", "metric", "labels", "which", "n", "true_rate")
        where = ", ".join(f"{k}={r[k]}" for k in keys if k in r)
        detail = (
            f"worst {r['rate']:.4f} over {r['sets']:,} sets ({where}); "
            f"{len(selected)} cells"
        )
        checks.append((label, target, bool(e <= 0), detail))

    exact_target = "<= nominal + " + ("5 SE" if quick else "2 SE")
    default_target = "<= nominal + 0.015" + (" + 3 SE" if quick else "")
    sep = [r for r in rows if r["test"] == "separation"]
    for method in ("exact", "permutation"):
        selected = [r for r in sep if r["method"] == method]
        worst(selected, ALPHA, two_se, f"separation {method}", exact_target)
    selected = [r for r in sep if r["method"] == "auto"]
    worst(selected, ALPHA, default_slack, "separation auto (default)", default_target)

    comp = [r for r in rows if r["test"] == "comparative"]
    for method, slack, target in (
        ("all pairs, permutation", two_se, exact_target),
        ("all pairs (default)", default_slack, default_target),
    ):
        for which in ("cross", "within", "joint"):
            nominal = JOINT_ALPHA if which == "joint" else ALPHA
            selected = [
                r for r in comp if r["method"] == method and r["which"] == which
            ]
            worst(selected, nominal, slack, f"comparative {method}, {which}", target)

    match = [r for r in rows if r["test"] == "match"]
    known = [r for r in match if r["design"] == "known reference"]
    for method in ("exact", "enumerate", "montecarlo"):
        selected = [r for r in known if r["method"] == method]
        label = f"match {method} (known reference)"
        worst(selected, ALPHA, two_se, label, exact_target)
    for design in MATCH_DESIGNS:
        selected = [r for r in match if r["design"] == design]
        for method in ("auto", "auto, reference_uncertainty"):
            label = f"match {method}, {design}"
            chosen = [r for r in selected if r["method"] == method]
            worst(chosen, ALPHA, default_slack, label, default_target)
    return checks


def _pct(entry, interval=True):
    if entry is None or entry["sets"] == 0:
        return "-"
    text = f"{100 * entry['rate']:.1f}"
    if interval:
        text += f" ({100 * entry['ci_low']:.1f}-{100 * entry['ci_high']:.1f})"
    return text


def _tables(result, intervals=True):
    """``(title, header, body)`` of every table, rates in percent.

    In the MATCH tables, methods whose rates agree at every size at the precision
    shown share their rows (``auto = exact = enumerate``). ``intervals`` adds the
    Wilson interval of every rate in parentheses.
    """
    pct = functools.partial(_pct, interval=intervals)
    rows = result["rows"]
    rates = result["config"]["rates"]
    tables = []
    sep = [r for r in rows if r["test"] == "separation"]
    if sep:
        alt = SEPARATION_ALTERNATIVE
        header = ["method", "n", *(f"rate {r}" for r in rates)]
        header += [f"power {alt[0]} vs {alt[1]}", "sets (null)"]
        body = []
        for method in SEPARATION_METHODS:
            for n in result["config"]["small_sizes"]:
                cells = {
                    (r["true_rate"], r["null"]): r
                    for r in sep
                    if r["method"] == method and r["n"] == n
                }
                line = [method, str(n)]
                line += [pct(cells.get((rate, True))) for rate in rates]
                power = cells.get((alt[0], False))
                line += [pct(power), f"{cells[(rates[0], True)]['sets']:,}"]
                body.append(line)
        title = "separation_test: rejection rate (%) at alpha = 5 %"
        tables.append((title, header, body))
        share = [
            [str(n)]
            + [
                f"{r['exact_share']:.2f}"
                for rate in rates
                for r in sep
                if r["method"] == "auto"
                and r["n"] == n
                and r["null"]
                and r["true_rate"] == rate
            ]
            for n in result["config"]["small_sizes"]
        ]
        tables.append(
            (
                "separation_test(method='auto'): share of data sets tested exactly",
                ["n", *(f"rate {r}" for r in rates)],
                share,
            )
        )
    comp = [r for r in rows if r["test"] == "comparative"]
    if comp:
        header = ["labels", "items", "method", "sets", "cross", "within", "joint"]
        header += ["joint power", "power sets"]
        body = []
        for kind in LABEL_KINDS:
            for n in result["config"]["item_sizes"]:
                for method in COMPARATIVE_METHODS:
                    sel = {
                        (r["which"], r["null"]): r
                        for r in comp
                        if r["labels"] == kind and r["n"] == n and r["method"] == method
                    }
                    if not sel:
                        continue
                    line = [kind, str(n), method, f"{sel[('joint', True)]['sets']:,}"]
                    line += [pct(sel[(w, True)]) for w in ("cross", "within", "joint")]
                    line += [
                        pct(sel[("joint", False)]),
                        f"{sel[('joint', False)]['sets']:,}",
                    ]
                    body.append(line)
        tables.append(
            (
                "comparative_separation_test: rejection rate (%) at alpha = 5 % "
                "per test (joint nominal 9.75 %)",
                header,
                body,
            )
        )
    match = [r for r in rows if r["test"] == "match"]
    for design in MATCH_DESIGNS:
        sel_design = [r for r in match if r["design"] == design]
        if not sel_design:
            continue
        alt = MATCH_ALTERNATIVE
        header = ["metric", "method", "n", *(f"r = {r}" for r in rates)]
        header += [f"power {alt[1]} vs {alt[0]}", "sets"]
        body = []
        for metric, methods in MATCH_METHODS[design].items():
            # methods with the same results at every size share one set of rows
            lines = {}
            for method in methods:
                for n in result["config"]["small_sizes"]:
                    cells = {
                        (r["true_rate"], r["null"]): r
                        for r in sel_design
                        if r["metric"] == metric
                        and r["method"] == method
                        and r["n"] == n
                    }
                    if not cells:
                        continue
                    line = [str(n)]
                    line += [pct(cells.get((rate, True))) for rate in rates]
                    line += [
                        pct(cells.get((alt[1], False))),
                        f"{max(r['sets'] for r in cells.values()):,}",
                    ]
                    lines.setdefault(method, []).append(line)
            merged = {}
            for method, block in lines.items():
                key = tuple(map(tuple, block))
                merged.setdefault(key, []).append(method)
            for key, names in merged.items():
                body += [[metric, " = ".join(names), *line] for line in key]
        tables.append(
            (f"match_test, {design}: rejection rate (%) at alpha = 5 %", header, body)
        )
    return tables


def format_text(result):
    """The tables as fixed-width text."""
    out = []
    for title, header, body in _tables(result):
        widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
        out.append(title)
        out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        out.append("  ".join("-" * w for w in widths))
        for line in body:
            out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        out.append("")
    return "\n".join(out)


def format_rst(result):
    """The tables as reStructuredText simple tables, rates without intervals (the
    user guide states their width)."""
    out = []
    for title, header, body in _tables(result, intervals=False):
        widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
        rule = "  ".join("=" * w for w in widths)
        out += [f".. {title}", "", rule]
        out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        out.append(rule)
        for line in body:
            out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        out += [rule, ""]
    return "\n".join(out)


def run(quick=True, *, log=print):
    """The targets of the ``--quick`` grid as PASS/MISS rows in ``run.py``'s format.

    The quick grid in both modes (``quick`` is ignored: the full study takes about
    half an hour). Not registered in ``run.py``: it would add about 20 s to
    ``run.py --quick``, taking it over a minute.
    """
    result = run_study(quick=True, log=log)
    grid = f"quick grid, {result['config']['sets']:,} sets per cell"
    rows = []
    for what, target, passed, detail in check_targets(result):
        rows.append(
            _common.make_row(
                f"calibration {what} ({grid})",
                result["seconds"]["total"],
                None,
                None,
                target=target,
                status="PASS" if passed else "MISS",
                notes=detail,
            )
        )
    return rows


def main(argv=None):
    """Command line: ``python benchmarks/bench_calibration.py [--quick] ...``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="few sets, sizes and rates (about 20 s)"
    )
    parser.add_argument(
        "--sets", type=int, default=None, help="data sets per cell (default 10,000)"
    )
    parser.add_argument(
        "--perm-sets",
        type=int,
        default=None,
        help="data sets per cell of the random tests and of comparative power "
        "(default 2,000)",
    )
    parser.add_argument(
        "--only", choices=PARTS, action="append", default=None, help="run one part"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the results as JSON here (default: "
        "benchmarks/results/calibration.json, calibration_quick.json with --quick)",
    )
    parser.add_argument("--rst", action="store_true", help="print RST tables too")
    parser.add_argument(
        "--from-json", type=Path, default=None, help="show a saved run's tables"
    )
    args = parser.parse_args(argv)
    if args.from_json:
        result = json.loads(args.from_json.read_text())
    else:
        result = run_study(
            quick=args.quick,
            sets=args.sets,
            perm_sets=args.perm_sets,
            parts=tuple(args.only) if args.only else PARTS,
        )
        result["environment"] = _common.environment()
        result["targets"] = [
            {"what": w, "target": t, "passed": bool(ok), "detail": d}
            for w, t, ok, d in check_targets(result)
        ]
    print()
    print(format_text(result))
    for what, target, passed, detail in check_targets(result):
        print(f"{'PASS' if passed else 'MISS'}  {what} {target}: {detail}")
    if args.rst:
        print()
        print(format_rst(result))
    if not args.from_json:
        out = args.out
        if out is None:
            out = (
                DEFAULT_JSON.with_stem("calibration_quick")
                if args.quick
                else DEFAULT_JSON
            )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, default=str) + "\n")
        print(f"results written to {out}")
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in result["seconds"].items())
    print(f"time: {seconds}")
    for part, timings in result["timings"].items():
        detail = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        print(f"  {part}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
