"""Reproduction of the EAUC study: MovieLens-100k and synthetic non-uniformity.

Not a timing benchmark (not registered in ``run.py``): it reruns the study behind
the EAUC and prints the tables of ``doc/reproductions/eauc.rst``.

MovieLens-100k comes from the copy installed with ``recbole``
(``pip install --no-deps recbole``; :func:`sklearn_smallfair.datasets.
load_movielens_100k`); without it the real-data part is skipped with a message.

Protocol (the published code's: ``src/avg_bias_auc_analysis.py`` of the
authors' repository): a random 80/20 split of the ratings, repeated with
``--repeats`` seeds; per-entity means from the training part; the EAUC with
absolute errors, the two-tailed eccentricity ``|r - avg|``, sorted rows
(``method="ordered"``, the published default) and also the published binning
(``method="bins_published"``, 20 edges); test rows of unseen users or items are
dropped (the published code does the same).

Models: the pair's average (:class:`DyadicMeanRegressor`), biased matrix
factorization by ALS (:class:`MatrixFactorizationRegressor`, a grid of ranks and
penalties), item-item and user-user neighbourhood models
(:class:`NeighborhoodRegressor`) and the uniform random baseline
(:class:`UniformRandomRegressor`). The published study's deep models (GLocal-K,
GC-MC, Bayesian SVD++) are not reproduced.

Tables:

1. RMSE, MAE, EAUC (ordered and published bins) per model, mean over repeats.
2. MAE per eccentricity band, and the share of test ratings in each band: where
   each model is worse than the uniform random baseline.
3. Figure 3 of the paper as a table: the mean prediction per observed rating for
   dyads whose pair average is low (< 2.75) and high (> 4.0).
4. Figure 4 as a table: EAUC against RMSE over the grid of models, with the rank
   correlation of the two.
5. EAUC and RMSE per quintile of the users' own KS statistic (their
   non-uniformity) on MovieLens-100k.
6. Synthetic D_KS sweep: ``make_dyadic_regression`` at non-uniformity 0 to 1,
   D_KS of the data and EAUC of matrix factorization and of the pair's average,
   with Pearson and Spearman correlations of EAUC with D_KS.

Run ``python benchmarks/repro_eauc.py [--quick] [--repeats N]``; ``--quick``
uses one repeat and a smaller synthetic sweep (about a minute on one core).
"""

import argparse
import itertools
import sys
import time
import warnings

import numpy as np
from scipy import stats

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

_common.ensure_package_importable()

from sklearn_smallfair.datasets import (  # noqa: E402
    load_movielens_100k,
    make_dyadic_regression,
)
from sklearn_smallfair.dyadic import (  # noqa: E402
    DyadicMeanRegressor,
    MatrixFactorizationRegressor,
    NeighborhoodRegressor,
    UniformRandomRegressor,
    dks_nonuniformity,
    eauc_score,
    eccentricity,
)
from sklearn_smallfair.exceptions import DyadicDataWarning  # noqa: E402

SEED = 20261124
BANDS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, np.inf)
LOW_MEAN, HIGH_MEAN = 2.75, 4.0


def models(seed):
    """The compared models, by name."""
    out = {
        "pair average": DyadicMeanRegressor(),
        "random": UniformRandomRegressor(random_state=seed),
        "item kNN": NeighborhoodRegressor(40, kind="item"),
        "user kNN": NeighborhoodRegressor(40, kind="user"),
    }
    for k, alpha in [(0, 5.0), (5, 5.0), (10, 10.0), (20, 15.0), (20, 1.0)]:
        out[f"MF k={k} a={alpha:g}"] = MatrixFactorizationRegressor(
            k, alpha=alpha, n_iter=30, random_state=seed
        )
    return out


def split(n, seed, test_size=0.2):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    n_test = round(test_size * n)
    return perm[n_test:], perm[:n_test]


def evaluate(X, y, seed):
    """Per model: predictions and scores on one split; plus the test data."""
    tr, te = split(y.shape[0], seed)
    X_tr, y_tr, X_te, y_te = X[tr], y[tr], X[te], y[te]
    results = {}
    for name, model in models(seed).items():
        start = time.perf_counter()
        model.fit(X_tr, y_tr)
        pred = model.predict(X_te)
        seconds = time.perf_counter() - start
        means = model.entity_means_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DyadicDataWarning)
            kw = dict(users=X_te[:, 0], items=X_te[:, 1], means=means)
            ecc = eccentricity(y_te, **kw, unknown="global_mean")
            results[name] = {
                "pred": pred,
                "rmse": float(np.sqrt(np.mean((pred - y_te) ** 2))),
                "mae": float(np.mean(np.abs(pred - y_te))),
                "eauc": eauc_score(y_te, pred, **kw),
                "eauc_bins": eauc_score(y_te, pred, **kw, method="bins_published"),
                "seconds": seconds,
            }
    mean_model = DyadicMeanRegressor().fit(X_tr, y_tr)
    pair_avg, means = mean_model.predict(X_te), mean_model.entity_means_
    # quintile of each test rating's user by the user's own KS statistic
    _, user_ks, _ = dks_nonuniformity(
        y_tr, users=X_tr[:, 0], items=X_tr[:, 1], return_per_entity=True
    )
    cuts = np.quantile(user_ks.to_numpy(), [0.2, 0.4, 0.6, 0.8])
    ks = user_ks.reindex(X_te[:, 0]).to_numpy()
    return results, {
        "y": y_te,
        "ecc": ecc,
        "pair_avg": pair_avg,
        "X": X_te,
        "means": means,
        "ks": ks,
        "ks_group": np.where(np.isnan(ks), -1, np.digitize(ks, cuts)),
    }


def summary_table(runs):
    names = list(runs[0][0])
    keys = ("rmse", "mae", "eauc", "eauc_bins", "seconds")
    rows = []
    for name in names:
        vals = {k: np.mean([r[0][name][k] for r in runs]) for k in keys}
        sds = {k: np.std([r[0][name][k] for r in runs]) for k in keys}
        rows.append((name, vals, sds))
    print(
        "\nTable 1. MovieLens-100k, 80/20 random splits: mean (sd) over "
        f"{len(runs)} repeat(s)"
    )
    print(
        f"{'model':<18}{'RMSE':>15}{'MAE':>15}{'EAUC ordered':>18}"
        f"{'EAUC bins':>16}{'fit+pred s':>12}"
    )
    for name, v, s in rows:
        print(
            f"{name:<18}{v['rmse']:>8.4f} ({s['rmse']:.3f}){v['mae']:>8.4f} "
            f"({s['mae']:.3f}){v['eauc']:>10.4f} ({s['eauc']:.3f})"
            f"{v['eauc_bins']:>9.4f} ({s['eauc_bins']:.3f}){v['seconds']:>10.2f}"
        )
    return rows


def band_table(runs):
    """MAE per eccentricity band, pooled over repeats."""
    names = list(runs[0][0])
    ecc = np.concatenate([r[1]["ecc"] for r in runs])
    y = np.concatenate([r[1]["y"] for r in runs])
    band = np.digitize(ecc, BANDS[1:-1])
    n_band = np.bincount(band, minlength=len(BANDS) - 1)
    labels = [f"[{lo:g},{hi:g})" for lo, hi in itertools.pairwise(BANDS)]
    print(
        "\nTable 2. MAE per eccentricity band (pooled test ratings); * = worse "
        "than the uniform random baseline"
    )
    print(f"{'model':<18}" + "".join(f"{lab:>12}" for lab in labels))
    print(
        f"{'share of ratings':<18}"
        + "".join(f"{c / n_band.sum():>12.3f}" for c in n_band)
    )
    mae = {}
    for name in names:
        pred = np.concatenate([r[0][name]["pred"] for r in runs])
        err = np.abs(pred - y)
        mae[name] = np.bincount(band, weights=err, minlength=len(n_band)) / np.maximum(
            n_band, 1
        )
    for name in names:
        cells = []
        for b in range(len(n_band)):
            star = "*" if name != "random" and mae[name][b] > mae["random"][b] else " "
            cells.append(f"{mae[name][b]:>11.3f}{star}")
        print(f"{name:<18}" + "".join(cells))
    return mae, n_band


def figure3_table(runs, names=("pair average", "MF k=10 a=10", "item kNN", "random")):
    """Mean prediction per observed rating, for low and high pair averages."""
    y = np.concatenate([r[1]["y"] for r in runs])
    avg = np.concatenate([r[1]["pair_avg"] for r in runs])
    print(
        "\nTable 3 (Figure 3). Mean prediction by observed rating, dyads with a "
        f"low (< {LOW_MEAN}) and a high (> {HIGH_MEAN}) pair average"
    )
    out = {}
    for label, mask in (("low", avg < LOW_MEAN), ("high", avg > HIGH_MEAN)):
        counts = [int(np.sum(mask & (y == s))) for s in range(1, 6)]
        print(
            f"  {label} pair average: ratings 1..5 counted "
            + ", ".join(str(c) for c in counts)
        )
        for name in names:
            pred = np.concatenate([r[0][name]["pred"] for r in runs])
            row = [
                float(np.mean(pred[mask & (y == s)])) if c else np.nan
                for s, c in zip(range(1, 6), counts)
            ]
            out[(label, name)] = row
            print(f"    {name:<16}" + "".join(f"{v:>8.2f}" for v in row))
    return out


def figure4_table(rows):
    names = [r[0] for r in rows if r[0] != "random"]
    rmse = np.array([r[1]["rmse"] for r in rows if r[0] != "random"])
    eauc = np.array([r[1]["eauc"] for r in rows if r[0] != "random"])
    rho = stats.spearmanr(rmse, eauc).statistic
    print(
        "\nTable 4 (Figure 4). EAUC against RMSE, models sorted by RMSE "
        "(random baseline left out)"
    )
    for i in np.argsort(rmse):
        print(f"  {names[i]:<18} RMSE {rmse[i]:.4f}  EAUC {eauc[i]:.4f}")
    print(f"  Spearman rank correlation of RMSE and EAUC: {rho:.3f}")
    return rho


def user_ks_table(runs, names=("pair average", "MF k=10 a=10", "item kNN", "random")):
    """EAUC and RMSE per quintile of the users' own KS statistic."""
    print(
        "\nTable 5. MovieLens-100k test ratings grouped by the quintile of their "
        "user's KS statistic (training ratings); EAUC / RMSE, mean over repeats"
    )
    print(
        f"{'quintile':>9}{'mean KS':>9}{'ratings':>9}"
        + "".join(f"{n:>22}" for n in names)
    )
    out = []
    for g in range(5):
        cells, ks, count = [], [], []
        for name in names:
            e, r = [], []
            for res, data in runs:
                m = data["ks_group"] == g
                X, y, p = data["X"][m], data["y"][m], res[name]["pred"][m]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DyadicDataWarning)
                    e.append(
                        eauc_score(
                            y, p, users=X[:, 0], items=X[:, 1], means=data["means"]
                        )
                    )
                r.append(float(np.sqrt(np.mean((p - y) ** 2))))
                if name == names[0]:
                    ks.append(float(np.nanmean(data["ks"][m])))
                    count.append(int(m.sum()))
            cells.append((float(np.mean(e)), float(np.mean(r))))
        out.append((g, np.mean(ks), np.mean(count), cells))
        print(
            f"{g + 1:>9}{np.mean(ks):>9.3f}{np.mean(count):>9.0f}"
            + "".join(f"{c[0]:>14.3f} / {c[1]:.3f}" for c in cells)
        )
    return out


def dks_sweep(levels, seeds, n_users=300, n_items=400, n_ratings=30_000):
    """D_KS of synthetic data against the EAUC of MF and of the pair average."""
    rows = []
    for level in levels:
        for seed in seeds:
            X, y = make_dyadic_regression(
                n_users, n_items, n_ratings, non_uniformity=level, random_state=seed
            )
            tr, te = split(y.shape[0], seed)
            dks = dks_nonuniformity(y[tr], users=X[tr, 0], items=X[tr, 1])
            row = {"level": level, "seed": seed, "dks": dks}
            for name, model in (
                ("pair average", DyadicMeanRegressor()),
                (
                    "MF",
                    MatrixFactorizationRegressor(
                        10, alpha=10.0, n_iter=20, random_state=seed
                    ),
                ),
            ):
                pred = model.fit(X[tr], y[tr]).predict(X[te])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DyadicDataWarning)
                    row[name] = eauc_score(
                        y[te],
                        pred,
                        users=X[te, 0],
                        items=X[te, 1],
                        means=model.entity_means_,
                    )
                row[name + " rmse"] = float(np.sqrt(np.mean((pred - y[te]) ** 2)))
            rows.append(row)
    print(
        f"\nTable 6. Synthetic D_KS sweep ({n_users} users, {n_items} items, "
        f"{n_ratings} ratings, {len(seeds)} seed(s) per level)"
    )
    print(
        f"{'non-uniformity':>15}{'D_KS':>8}{'EAUC pair avg':>15}{'EAUC MF':>10}"
        f"{'RMSE MF':>10}"
    )
    for level in levels:
        sub = [r for r in rows if r["level"] == level]
        print(
            f"{level:>15.2f}{np.mean([r['dks'] for r in sub]):>8.3f}"
            f"{np.mean([r['pair average'] for r in sub]):>15.4f}"
            f"{np.mean([r['MF'] for r in sub]):>10.4f}"
            f"{np.mean([r['MF rmse'] for r in sub]):>10.4f}"
        )
    dks = np.array([r["dks"] for r in rows])
    for name in ("pair average", "MF"):
        e = np.array([r[name] for r in rows])
        print(
            f"  EAUC of {name} against D_KS: Pearson "
            f"{stats.pearsonr(dks, e).statistic:.3f}, Spearman "
            f"{stats.spearmanr(dks, e).statistic:.3f} ({len(rows)} data sets)"
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 5)
    try:
        X, y = load_movielens_100k()
    except ImportError as exc:
        print(f"MovieLens-100k part skipped: {exc}")
    else:
        runs = [evaluate(X, y, SEED + r) for r in range(repeats)]
        rows = summary_table(runs)
        band_table(runs)
        figure3_table(runs)
        figure4_table(rows)
        user_ks_table(runs)
        print(
            f"\n  D_KS of MovieLens-100k (all ratings): "
            f"{dks_nonuniformity(y, users=X[:, 0], items=X[:, 1]):.4f}"
        )
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)
    seeds = (0,) if args.quick else (0, 1, 2)
    dks_sweep(levels, seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
