"""Stress tests of the dataset-adaptive normalized metric on synthetic data.

Not a timing benchmark (not registered in ``run.py``): it prints the tables of
``doc/reproductions/adaptive_metric.rst``.

The source method's claims are that the normalized score is steadier than the raw
one on small, high-dimensional or imbalanced data, and that it anticipates the
performance the model reaches with more data. Each sweep below changes one
property of the data and scores the source's models with the raw metric and with
:func:`sklearn_smallfair.adaptive.adaptive_normalized_report`:

* ``N``: binary :func:`~sklearn.datasets.make_classification` (20 features, 5
  informative) at 30 to 2,000 samples, an RBF SVM;
* ``d``: 200 samples, 2 informative features and 0 to 158 noise features;
* imbalance: 400 samples, minority share 50 % to 5 %, the SVM and a majority
  class predictor;
* label noise: 400 samples, 0 % to 40 % of labels flipped (``flip_y``);
* regression: :func:`~sklearn.datasets.make_regression` (10 features, noise 150)
  at 30 to 2,000 samples, linear regression, raw metric R^2;
* clustering: :func:`~sklearn.datasets.make_blobs` (3 fixed centers 4 apart, 2
  features, ``cluster_std=2``) at 30 to 2,000 samples, K-means scored in-sample, raw
  metric NMI.

Supervised models are fitted on a stratified 70 % and scored on the other 30 %,
with ``d`` the number of features and ``N`` the training size. Each setting is
repeated ``--repeats`` times (seeds 0, 1, ...); a table row gives the mean and
the mean absolute deviation (MAD) over the repeats of the raw and the normalized
score. For the size sweeps, "gap" is the distance of the mean at that size from
the mean at the largest size (the performance the model reaches with more data).

Run ``python benchmarks/repro_adaptive.py [--repeats N]`` (default 30, about a
minute on one core).
"""

import argparse
import sys
import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

_common.ensure_package_importable()

from sklearn.cluster import KMeans  # noqa: E402
from sklearn.datasets import make_blobs, make_classification, make_regression  # noqa: E402
from sklearn.dummy import DummyClassifier  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from sklearn_smallfair.adaptive import adaptive_normalized_report  # noqa: E402

SIZES = (30, 60, 120, 250, 500, 1000, 2000)
#: fixed blob centers: the repeats differ by the sample, not by the geometry
CENTERS = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.5]])


def _supervised(X, y, model, seed, task, stratify=True):
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.3, random_state=seed, stratify=y if stratify else None
    )
    pred = model.fit(X_tr, y_tr).predict(X_te)
    rep = adaptive_normalized_report(
        y_te, pred, n_features=X.shape[1], n_samples=X_tr.shape[0], task=task
    )
    return rep.raw_score, rep.score


def _clustering(X, y, seed):
    codes = KMeans(3, n_init=4, random_state=seed).fit_predict(X)
    rep = adaptive_normalized_report(y, codes, X=X, task="clustering")
    return rep.raw_score, rep.score


def _mad(values):
    return float(np.mean(np.abs(values - values.mean())))


def _summarize(title, label, settings, scores, gap=False):
    """Print one table; ``scores`` has shape (n_settings, n_repeats, 2)."""
    scores = np.asarray(scores, dtype=float)
    mean = scores.mean(axis=1)
    mad = np.mean(np.abs(scores - mean[:, None, :]), axis=1)
    print(f"\n{title} ({scores.shape[1]} repeats)")
    head = f"{label:>14}{'raw mean':>10}{'raw MAD':>9}{'norm mean':>11}{'norm MAD':>10}"
    if gap:
        head += f"{'raw gap':>9}{'norm gap':>10}"
    print(head)
    for k, s in enumerate(settings):
        line = (
            f"{s!s:>14}{mean[k, 0]:>10.3f}{mad[k, 0]:>9.3f}"
            f"{mean[k, 1]:>11.3f}{mad[k, 1]:>10.3f}"
        )
        if gap:
            g = np.abs(mean[k] - mean[-1])
            line += f"{g[0]:>9.3f}{g[1]:>10.3f}"
        print(line)
    lower = int(np.sum(mad[:, 1] < mad[:, 0]))
    print(f"  normalized MAD below raw MAD in {lower} of {len(settings)} settings")
    return mean, mad


def sweep_n(repeats):
    scores = [
        [
            _supervised(
                *make_classification(n, 20, n_informative=5, random_state=s),
                SVC(),
                s,
                "binary",
            )
            for s in range(repeats)
        ]
        for n in SIZES
    ]
    return _summarize(
        "A. Sample size, binary, SVM, d = 20", "N", SIZES, scores, gap=True
    )


def sweep_d(repeats):
    dims = (2, 5, 10, 20, 40, 80, 160)
    scores = [
        [
            _supervised(
                *make_classification(
                    200, d, n_informative=2, n_redundant=0, random_state=s
                ),
                SVC(),
                s,
                "binary",
            )
            for s in range(repeats)
        ]
        for d in dims
    ]
    return _summarize(
        "B. Dimension, binary, SVM, N = 200 (2 informative features)", "d", dims, scores
    )


def sweep_imbalance(repeats):
    shares = (0.5, 0.3, 0.2, 0.1, 0.05)
    out = {}
    majority = lambda: DummyClassifier(strategy="most_frequent")  # noqa: E731
    for name, factory in (("SVM", SVC), ("majority", majority)):
        scores = [
            [
                _supervised(
                    *make_classification(
                        400, 10, n_informative=4, weights=[1 - w], random_state=s
                    ),
                    factory(),
                    s,
                    "binary",
                )
                for s in range(repeats)
            ]
            for w in shares
        ]
        out[name] = _summarize(
            f"C. Imbalance, binary, {name}, N = 400, d = 10", "minority", shares, scores
        )
    return out


def sweep_noise(repeats):
    flips = (0.0, 0.1, 0.2, 0.3, 0.4)
    scores = [
        [
            _supervised(
                *make_classification(
                    400, 10, n_informative=4, flip_y=f, random_state=s
                ),
                SVC(),
                s,
                "binary",
            )
            for s in range(repeats)
        ]
        for f in flips
    ]
    return _summarize(
        "D. Label noise, binary, SVM, N = 400, d = 10", "flip_y", flips, scores
    )


def sweep_regression(repeats):
    scores = [
        [
            _supervised(
                *make_regression(n, 10, noise=150.0, random_state=s),
                LinearRegression(),
                s,
                "regression",
                stratify=False,
            )
            for s in range(repeats)
        ]
        for n in SIZES
    ]
    return _summarize(
        "E. Sample size, regression, linear regression, d = 10",
        "N",
        SIZES,
        scores,
        gap=True,
    )


def sweep_clustering(repeats):
    scores = [
        [
            _clustering(
                *make_blobs(n, 2, centers=CENTERS, cluster_std=2.0, random_state=s), s
            )
            for s in range(repeats)
        ]
        for n in SIZES
    ]
    return _summarize(
        "F. Sample size, clustering, K-means (in-sample NMI), d = 2",
        "N",
        SIZES,
        scores,
        gap=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for sweep in (
            sweep_n,
            sweep_d,
            sweep_imbalance,
            sweep_noise,
            sweep_regression,
            sweep_clustering,
        ):
            sweep(args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
