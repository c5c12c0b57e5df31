"""Benchmark: EAUC and D_KS on millions of ratings, against pandas group-by-and-sort.

Data (seeded, untimed): 10,000,000 test ratings (``--quick``: 1,000,000) and as many
training ratings, integer stars 1..5 from 480,000 users and 18,000 items (the
Netflix Prize's shape), each entity with its own level, and predictions shrunk
toward the pair's average (a model with eccentricity bias).

Ours, timed end to end (input checks included):

* :func:`sklearn_smallfair.dyadic.eauc_score` with the training ratings (per-entity
  means from ``bincount`` over one coding of the training and test ids, the pair
  averages block by block, one sort of eccentricity keys with the row index in
  their low bits, and the area from the ends of each run of equal eccentricities,
  the errors recomputed by row);
* :func:`sklearn_smallfair.dyadic.dks_nonuniformity` on the training ratings
  (per-entity histograms over the distinct ratings).

Baselines, written here, the straightforward pandas way:

* EAUC: ``groupby(...).mean()`` of the training ratings per user and per item,
  ``join`` onto the test rows, drop unknown entities, ``sort_values`` by
  eccentricity then error (so the number does not depend on the row order, as
  ours), ``np.trapezoid`` and the normalization. A second, context-only
  baseline sorts by eccentricity alone (stable), as the published protocol does;
  it gives the same number only when no two rows tie in eccentricity.
* D_KS: for users and then items, ``sort_values`` by (entity, rating),
  ``groupby(...).cumcount()`` and ``transform("size")`` for each row's rank and
  entity size, the two one-sided KS terms per row, ``groupby(...).max()``, then
  the mean over all entities.

Floors, on the same arrays (prepared untimed): a bare ``np.argsort`` of the
test rows' eccentricities and ``np.trapezoid`` of their errors in that order
(EAUC), and a bare ``np.argsort`` of the training users' and of the items' ids
(D_KS: both need the ratings in entity order). They do none of the work of
checking the input, coding the entity ids or computing the means, so they are a
lower bound of any implementation.

Memory (untimed): the peak of ``tracemalloc`` during one call of ours (and of the
EAUC floor, for context), the arrays passed in not counted, in units of one float64
array of the rows (8 bytes per row).

Correctness, before timing: ours and the baselines agree within 1e-9 (relative).

Times and ratios are medians of interleaved repeats (baseline and ours alternating,
so that both see the same load; the ratio is the median of the per-pair ratios).

Targets: each of EAUC and D_KS under 5 s on 10,000,000 ratings and at least 5x the
pandas baseline; within 2x of its floor (ratio floor/ours at least 0.5); peak
temporaries of at most two arrays of the rows (plus less than half of one in
block- and entity-sized arrays).

Run ``python benchmarks/bench_eauc.py [--quick]`` or through ``run.py``.
"""

import gc
import sys
import tracemalloc
import warnings

import numpy as np
import pandas as pd

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

NAME = "eauc"
SEED = 20261121
TOL = 1e-9
TARGET_S = 5.0
TARGET_RATIO = 5.0
FULL = {"n": 10_000_000, "n_users": 480_000, "n_items": 18_000}
QUICK = {"n": 1_000_000, "n_users": 48_000, "n_items": 1_800}
REPEATS = 3
PAIRS = 3
TARGET_FLOOR = 0.5
TARGET_ARRAYS = 2


def make_data(n, n_users, n_items, seed=SEED):
    """Training and test ratings (stars 1..5) with biased predictions."""
    rng = np.random.default_rng(seed)
    user_level = rng.normal(scale=0.8, size=n_users)
    item_level = rng.normal(scale=0.6, size=n_items)

    def draw(size):
        # popular entities rate more: squared uniforms skew the ids
        u = (rng.random(size) ** 2 * n_users).astype(np.int64)
        i = (rng.random(size) ** 2 * n_items).astype(np.int64)
        latent = 3.4 + user_level[u] + item_level[i] + rng.normal(size=size)
        return np.clip(np.round(latent), 1, 5), u, i

    train = draw(n)
    y, u, i = draw(n)
    level = 3.4 + (user_level[u] + item_level[i]) * 0.8
    pred = 0.35 * y + 0.65 * level + rng.normal(scale=0.3, size=n)
    return train, (y, pred, u, i)


def ours_eauc(train, test):
    _common.ensure_package_importable()
    from sklearn_smallfair.dyadic import eauc_score

    r, tu, ti = train
    y, pred, u, i = test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown entities are dropped
        return eauc_score(
            y,
            pred,
            users=u,
            items=i,
            train_ratings=r,
            train_users=tu,
            train_items=ti,
        )


def ours_dks(train):
    _common.ensure_package_importable()
    from sklearn_smallfair.dyadic import dks_nonuniformity

    r, u, i = train
    return dks_nonuniformity(r, users=u, items=i)


def pandas_eauc(train, test, *, keys=("ecc", "err"), kind="quicksort"):
    """EAUC the straightforward pandas way (sorted by ``keys``)."""
    r, tu, ti = train
    y, pred, u, i = test
    tr = pd.DataFrame({"r": r, "u": tu, "i": ti})
    um = tr.groupby("u")["r"].mean().rename("um")
    im = tr.groupby("i")["r"].mean().rename("im")
    df = pd.DataFrame({"y": y, "p": pred, "u": u, "i": i})
    df = df.join(um, on="u").join(im, on="i").dropna()
    df["ecc"] = (df["y"] - (df["um"] + df["im"]) / 2).abs()
    df["err"] = (df["y"] - df["p"]).abs()
    df = df.sort_values(list(keys), kind=kind)
    area = _trapezoid(df["err"].to_numpy(), df["ecc"].to_numpy())
    return area / (df["y"].max() - df["y"].min()) ** 2


def _trapezoid(y, x):
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1])) / 2)


def pandas_dks(train):
    """D_KS the straightforward pandas way."""
    r, u, i = train
    lo, hi = r.min(), r.max()
    stats = []
    for ids in (u, i):
        df = pd.DataFrame({"e": ids, "r": r}).sort_values(["e", "r"])
        g = df.groupby("e", sort=False)
        k = g.cumcount().to_numpy()
        m = g["r"].transform("size").to_numpy()
        f = (df["r"].to_numpy() - lo) / (hi - lo)
        df["d"] = np.maximum((k + 1) / m - f, f - k / m)
        stats.append(df.groupby("e")["d"].max().to_numpy())
    return float(np.concatenate(stats).mean())


def floor_arrays(train, test):
    """Eccentricity and error of the test rows with known entities (numpy)."""
    r, tu, ti = train
    y, pred, u, i = test
    um = np.bincount(tu, r) / np.maximum(np.bincount(tu), 1)
    im = np.bincount(ti, r) / np.maximum(np.bincount(ti), 1)
    known = np.zeros(um.size, bool)
    known[tu] = True
    iknown = np.zeros(im.size, bool)
    iknown[ti] = True
    ok = known[np.minimum(u, um.size - 1)] & (u < um.size)
    ok &= iknown[np.minimum(i, im.size - 1)] & (i < im.size)
    ecc = np.abs(y[ok] - (um[u[ok]] + im[i[ok]]) / 2)
    err = np.abs(y[ok] - pred[ok])
    return ecc, err


def floor_eauc(ecc, err):
    """A bare argsort of the eccentricities and the trapezoid of the errors."""
    order = np.argsort(ecc)
    return float(_np_trapezoid(err[order], ecc[order]))


def floor_dks(train):
    """A bare argsort of the users' and of the items' ids."""
    _, u, i = train
    return np.argsort(u), np.argsort(i)


if hasattr(np, "trapezoid"):
    _np_trapezoid = np.trapezoid
else:  # numpy < 2
    _np_trapezoid = np.trapz  # noqa: NPY201


def _floor_row(benchmark, timed, floor_name, notes):
    ratio = timed["ratio"]
    return _common.make_row(
        benchmark,
        timed["ours_s"],
        floor_name,
        timed["baseline_s"],
        ratio=ratio,
        target=f"within 2x: floor/ours >= {TARGET_FLOOR:g}",
        status="PASS" if ratio >= TARGET_FLOOR else "MISS",
        notes=notes,
        pair_ratios=timed["ratios"],
    )


def y_span(test):
    """``max y - min y`` of the test ratings (the EAUC's normalization)."""
    return float(np.max(test[0]) - np.min(test[0]))


def _close(label, ours, base):
    err = abs(ours - base) / max(abs(base), 1e-300)
    _common.check(err <= TOL, f"{label}: ours {ours!r} vs baseline {base!r}")
    return err


def _target_row(benchmark, timed, baseline, *, quick, notes):
    """A row judged against the targets (the time target only on the full size)."""
    ours_s, ratio = timed["ours_s"], timed["ratio"]
    ok = ratio >= TARGET_RATIO and (quick or ours_s < TARGET_S)
    return _common.make_row(
        benchmark,
        ours_s,
        baseline,
        timed["baseline_s"],
        ratio=ratio,
        target=f"< {TARGET_S:g} s, >= {TARGET_RATIO:g}x",
        status="PASS" if ok else "MISS",
        notes=notes,
        pair_ratios=timed["ratios"],
    )


def run(quick=False, *, log=print):
    """Run the benchmark; return result rows (see ``_common.make_row``)."""
    cfg = QUICK if quick else FULL
    _common.ensure_package_importable()
    train, test = make_data(cfg["n"], cfg["n_users"], cfg["n_items"])
    n = cfg["n"]
    log(
        f"[{NAME}] {n:,} test and {n:,} training ratings, {cfg['n_users']:,} users, "
        f"{cfg['n_items']:,} items"
    )
    rows = []
    ours_eauc(train, test)  # untimed warm-up
    timed = _common.interleaved(
        lambda: pandas_eauc(train, test), lambda: ours_eauc(train, test), PAIRS
    )
    ours_s, base_s = timed["ours_s"], timed["baseline_s"]
    value, base = timed["ours_result"], timed["baseline_result"]
    err = _close("EAUC", value, base)
    stable_s, _, stable = _common.best_of(
        lambda: pandas_eauc(train, test, keys=("ecc",), kind="stable"), 1
    )
    log(
        f"[{NAME}] EAUC {value:.6f}: ours {ours_s:.2f} s, pandas {base_s:.2f} s "
        f"({base_s / ours_s:.1f}x); pandas sorted by eccentricity only "
        f"{stable_s:.2f} s ({stable_s / ours_s:.1f}x, value {stable:.6f}); agree "
        f"within {err:.1e}"
    )
    rows.append(
        _target_row(
            f"EAUC {n:,} ratings",
            timed,
            "pandas groupby means, join, sort by (ecc, err), trapezoid",
            quick=quick,
            notes=f"same value within {err:.1e}; training means from {n:,} ratings",
        )
    )
    rows.append(
        _common.make_row(
            f"EAUC {n:,} ratings",
            ours_s,
            "pandas, stable sort by ecc only (published order; ties by row)",
            stable_s,
            status="INFO",
            notes=(
                f"context: {stable:.6f} vs {value:.6f}, equal only without ties "
                f"in eccentricity"
            ),
        )
    )

    ecc, errors = floor_arrays(train, test)
    by_both = np.lexsort((errors, ecc))  # ties broken by error, as ours
    area = float(_np_trapezoid(errors[by_both], ecc[by_both])) / y_span(test) ** 2
    _common.check(
        abs(area - value) <= 1e-9 * abs(value),
        f"EAUC floor arrays: area {area!r}, ours {value!r} (not the same rows)",
    )
    floor = _common.interleaved(
        lambda: floor_eauc(ecc, errors), lambda: ours_eauc(train, test), PAIRS
    )
    log(
        f"[{NAME}] EAUC floor (argsort + trapezoid of {ecc.size:,} rows): "
        f"{floor['baseline_s']:.2f} s, ours {floor['ours_s']:.2f} s, "
        f"floor/ours {floor['ratio']:.2f} (pairs "
        f"{', '.join(f'{r:.2f}' for r in floor['ratios'])}; load {floor['load']}); "
        f"target within 2x: {_met(floor['ratio'] >= TARGET_FLOOR)}"
    )
    rows.append(
        _floor_row(
            f"EAUC {n:,} ratings",
            floor,
            "floor: np.argsort(ecc) + np.trapezoid, arrays prepared",
            notes="ours end to end (checks, id coding, means) vs the bare sort",
        )
    )
    ours_peak = peak_bytes(lambda: ours_eauc(train, test))
    floor_peak = peak_bytes(lambda: floor_eauc(ecc, errors))
    rows.append(
        _memory_row(
            f"EAUC {n:,} ratings",
            ours_peak,
            n,
            log=log,
            what="eauc_score with the training ratings",
            notes=(
                f"peak of tracemalloc during the call; the inputs ({n:,} test rows: "
                f"{input_bytes(test) / 1e6:,.0f} MB, as many training rows: "
                f"{input_bytes(train) / 1e6:,.0f} MB) not counted; the bare "
                f"argsort + trapezoid peaks at {floor_peak / 1e6:,.0f} MB "
                f"({floor_peak / (8 * ecc.size):.2f} arrays of its rows)"
            ),
        )
    )

    timed = _common.interleaved(
        lambda: pandas_dks(train), lambda: ours_dks(train), PAIRS
    )
    ours_s, base_s = timed["ours_s"], timed["baseline_s"]
    value, base = timed["ours_result"], timed["baseline_result"]
    err = _close("D_KS", value, base)
    log(
        f"[{NAME}] D_KS {value:.6f}: ours {ours_s:.2f} s, pandas {base_s:.2f} s "
        f"({base_s / ours_s:.1f}x); agree within {err:.1e}"
    )
    rows.append(
        _target_row(
            f"D_KS {n:,} ratings",
            timed,
            "pandas sort by (entity, rating), cumcount, groupby max",
            quick=quick,
            notes=f"same value within {err:.1e}",
        )
    )
    floor = _common.interleaved(
        lambda: floor_dks(train), lambda: ours_dks(train), PAIRS
    )
    log(
        f"[{NAME}] D_KS floor (argsorts of {n:,} user and item ids): "
        f"{floor['baseline_s']:.2f} s, ours {floor['ours_s']:.2f} s, "
        f"floor/ours {floor['ratio']:.2f} (pairs "
        f"{', '.join(f'{r:.2f}' for r in floor['ratios'])}; load {floor['load']}); "
        f"target within 2x: {_met(floor['ratio'] >= TARGET_FLOOR)}"
    )
    rows.append(
        _floor_row(
            f"D_KS {n:,} ratings",
            floor,
            "floor: np.argsort of user ids and of item ids",
            notes="ours end to end vs two bare sorts of the entity ids",
        )
    )
    rows.append(
        _memory_row(
            f"D_KS {n:,} ratings",
            peak_bytes(lambda: ours_dks(train)),
            n,
            log=log,
            what="dks_nonuniformity",
            notes=(
                f"peak of tracemalloc during the call; the inputs ({n:,} rows: "
                f"{input_bytes(train) / 1e6:,.0f} MB) not counted"
            ),
        )
    )
    return rows


def peak_bytes(func):
    """Peak memory traced by ``tracemalloc`` during ``func()`` (untimed): the
    temporaries of the call, the arrays it is given not counted."""
    func()  # imports and caches before tracing
    gc.collect()
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def input_bytes(arrays):
    return sum(a.nbytes for a in arrays)


def _met(ok):
    return "met" if ok else "not met"


def _memory_row(benchmark, peak, n, *, log, what, notes):
    """Peak temporaries in arrays of ``n`` float64 (8 bytes per row): at most two
    such arrays, plus less than half of one in block- and entity-sized arrays."""
    arrays = peak / (8 * n)
    ok = arrays < TARGET_ARRAYS + 0.5
    log(
        f"[{NAME}] {what}: peak temporaries {peak / 1e6:,.0f} MB = {arrays:.2f} "
        f"arrays of {n:,} float64; target at most {TARGET_ARRAYS:g} (+ small): "
        f"{_met(ok)}"
    )
    return _common.make_row(
        f"{benchmark}, memory",
        None,
        None,
        None,
        target=f"<= {TARGET_ARRAYS:g} arrays of the rows",
        status="PASS" if ok else "MISS",
        notes=f"{peak / 1e6:,.0f} MB = {arrays:.2f} x {8 * n / 1e6:,.0f} MB; {notes}",
        peak_bytes=peak,
        peak_arrays=arrays,
    )


def main(argv=None):
    """Command line: ``python benchmarks/bench_eauc.py [--quick]``."""
    return _common.script_main(
        run, __doc__, "1,000,000 ratings, 48,000 users, 1,800 items", argv
    )


if __name__ == "__main__":
    sys.exit(main())
