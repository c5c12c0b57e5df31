"""
=====================================================
Eccentricity bias on MovieLens-100k: the EAUC study
=====================================================

The EAUC study claims that dyadic regression models trained on ratings whose
per-user and per-item distributions are not uniform pull their predictions
toward the pair's average, ``(user mean + item mean) / 2``, and on the
*eccentric* ratings, far from that average, do worse than a uniform random
guess. RMSE does not show it; the eccentricity area under the curve (EAUC) is
meant to.

We rerun the study's protocol on MovieLens-100k (a random 80/20 split, the
entity means from the training part) with the pair's average, biased matrix
factorization (ALS) and the uniform random baseline, and look at

* the mean absolute error per eccentricity band, against the random baseline;
* the study's Figure 3: the mean prediction for each observed rating, among
  pairs whose average is low and among pairs whose average is high;
* the study's Figure 4: EAUC against RMSE for a few matrix factorizations.

MovieLens-100k is read from the copy installed with ``recbole``
(``pip install --no-deps recbole``); GroupLens' terms do not allow this package
to ship it. The longer run with five splits, the neighbourhood models and the
synthetic D_KS sweep is ``benchmarks/repro_eauc.py``; its tables are in the
documentation's reproduction of the EAUC study.
"""

# %%
# Load the ratings
# ----------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_smallfair.datasets import load_movielens_100k
from sklearn_smallfair.dyadic import (
    DyadicMeanRegressor,
    MatrixFactorizationRegressor,
    UniformRandomRegressor,
    dks_nonuniformity,
    eauc_score,
    eccentricity,
)

try:
    X, y = load_movielens_100k()
except ImportError:
    X = y = None
    print(
        "MovieLens-100k is not available (pip install --no-deps recbole); "
        "the study is skipped."
    )

# %%
# Fit the models on a random 80/20 split
# --------------------------------------
# Two in three test ratings lie within one star of their pair's average. The
# test rows of users or items absent from the training part are scored with the
# global training mean in place of the missing entity mean.
if X is not None:
    print(
        f"{y.size} ratings; D_KS non-uniformity "
        f"{dks_nonuniformity(y, users=X[:, 0], items=X[:, 1]):.3f}"
    )
    rng = np.random.default_rng(0)
    test = rng.random(y.size) < 0.2
    X_tr, y_tr, X_te, y_te = X[~test], y[~test], X[test], y[test]
    models = {
        "pair average": DyadicMeanRegressor(),
        "matrix factorization": MatrixFactorizationRegressor(
            10, alpha=10.0, n_iter=20, random_state=0
        ),
        "uniform random": UniformRandomRegressor(random_state=0),
    }
    preds = {name: m.fit(X_tr, y_tr).predict(X_te) for name, m in models.items()}
    means = models["pair average"].entity_means_
    ids = dict(users=X_te[:, 0], items=X_te[:, 1], means=means, unknown="global_mean")
    ecc = eccentricity(y_te, **ids)
    for name, pred in preds.items():
        rmse = np.sqrt(np.mean((pred - y_te) ** 2))
        print(f"{name:<21} RMSE {rmse:.3f}  EAUC {eauc_score(y_te, pred, **ids):.4f}")

# %%
# Error per eccentricity band
# ---------------------------
# Below an eccentricity of 1.5 stars both models beat the random guess by far;
# from 2 stars on the pair's average is worse than it, matrix factorization about
# even with it between 2 and 2.5 stars and worse beyond. Those bands hold few
# ratings (the last two about 4 % of them), which is why RMSE does not show it.
if X is not None:
    edges = np.array([0, 0.5, 1, 1.5, 2, 2.5, 4.5])
    band = np.digitize(ecc, edges[1:-1])
    share = np.bincount(band, minlength=6) / band.size
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, pred in preds.items():
        mae = np.bincount(band, weights=np.abs(pred - y_te), minlength=6)
        mae /= np.maximum(np.bincount(band, minlength=6), 1)
        ax.plot((edges[:-1] + edges[1:]) / 2, mae, marker="o", label=name)
        print(f"{name:<21} MAE per band " + " ".join(f"{v:.2f}" for v in mae))
    for x, s in zip((edges[:-1] + edges[1:]) / 2, share):
        ax.annotate(f"{s:.0%}", (x, 0.05), ha="center", fontsize=8)
    ax.set(
        xlabel="eccentricity |r - pair average| (band midpoint)",
        ylabel="mean absolute error",
        title="MovieLens-100k, test ratings",
    )
    ax.legend()
    fig.tight_layout()

# %%
# Figure 3: predictions stay near the pair's average
# --------------------------------------------------
# Among pairs whose average is below 2.75 stars, a 5-star rating is predicted
# at about 2.6 stars by matrix factorization; among pairs whose average is above
# 4, a 1-star rating is predicted at about 4. The diagonal is a perfect model.
if X is not None:
    avg = models["pair average"].predict(X_te)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), sharey=True)
    for ax, (label, mask) in zip(
        axes, [("pair average < 2.75", avg < 2.75), ("pair average > 4", avg > 4.0)]
    ):
        for name, pred in preds.items():
            stars = [s for s in range(1, 6) if np.any(mask & (y_te == s))]
            mean = [pred[mask & (y_te == s)].mean() for s in stars]
            ax.plot(stars, mean, marker="o", label=name)
        ax.plot([1, 5], [1, 5], color="grey", linestyle=":", linewidth=1)
        ax.set(title=label, xlabel="observed rating")
    axes[0].set_ylabel("mean prediction")
    axes[1].legend(fontsize=8)
    fig.tight_layout()

# %%
# Figure 4: EAUC against RMSE
# ---------------------------
# Matrix factorizations of several ranks and penalties: a lower RMSE does not
# always come with a lower EAUC. The weakly penalized rank-20 model has the worst
# RMSE of the group and one of the best EAUCs.
if X is not None:
    grid = [(0, 5.0), (5, 5.0), (10, 10.0), (20, 15.0), (20, 1.0)]
    points = []
    for k, alpha in grid:
        mf = MatrixFactorizationRegressor(k, alpha=alpha, n_iter=20, random_state=0)
        pred = mf.fit(X_tr, y_tr).predict(X_te)
        points.append(
            (np.sqrt(np.mean((pred - y_te) ** 2)), eauc_score(y_te, pred, **ids))
        )
    fig, ax = plt.subplots(figsize=(5, 4))
    for (k, alpha), (rmse, e) in zip(grid, points):
        ax.scatter(rmse, e, color="C1")
        ax.annotate(
            f"k={k}, alpha={alpha:g}",
            (rmse, e),
            fontsize=8,
            xytext=(4, 4),
            textcoords="offset points",
        )
        print(f"MF k={k:<2} alpha={alpha:<4g} RMSE {rmse:.3f}  EAUC {e:.4f}")
    ax.set(xlabel="RMSE", ylabel="EAUC", title="Matrix factorization grid")
    fig.tight_layout()
    plt.show()
