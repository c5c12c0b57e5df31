"""Coverage of the multiclass intervals of ``group_metrics`` at small group sizes.

For each law (the ``K x K`` cell probabilities of a population, ``K = 3``), each
group size and each ``interval_method``, ``--groups`` groups are drawn at once with
one ``multinomial`` call and scored by the package itself:
``group_metrics(counts=..., confidence_level=0.95, interval_method=method)``.
Coverage is the fraction of groups whose interval holds the law's value of the
metric (the metric of the law's matrix), among the groups where the metric is
defined; with 1,000 groups its Monte Carlo standard error near 95 % is 0.7 points.

The macro TPR and PPV and balanced accuracy have the MOVER of the classes'
Wilson intervals (``"auto"``) and none with posterior draws or the bootstrap
("none"); the "withheld" rows are the intervals the package would give the
macro averages from the same posterior draws or bootstrap replicates
(``matrix_interval`` with the same prior), which is why it withholds them.

Run ``python benchmarks/bench_multiclass_coverage.py [--groups N] [--sizes 30 ...]
[--rst]``; ``--rst`` prints the table as reStructuredText for the user guide.
"""

import argparse
import time
import warnings

import numpy as np

from sklearn_smallfair._draws import matrix_interval
from sklearn_smallfair._random import resolve_seed
from sklearn_smallfair.metrics import group_metrics, multiclass_metric
from sklearn_smallfair.metrics._multiclass_table import matrix_prior

LAWS = {
    "balanced": [[0.20, 0.05, 0.02], [0.05, 0.20, 0.05], [0.02, 0.06, 0.35]],
    "rare class": [[0.45, 0.08, 0.02], [0.07, 0.20, 0.05], [0.02, 0.03, 0.08]],
    "skewed": [[0.60, 0.10, 0.02], [0.08, 0.10, 0.02], [0.02, 0.01, 0.05]],
}
#: (column, metric, average): the columns reported by the package
REPORTED = [
    ("tpr (a class)", "tpr", None),
    ("ppv (a class)", "ppv", None),
    ("tpr_weighted", "tpr", "weighted"),
    ("ppv_weighted", "ppv", "weighted"),
    ("fpr_micro", "fpr", "micro"),
    ("accuracy", "accuracy", None),
    ("kappa", "kappa", None),
    ("mcc (R_K)", "mcc", None),
    ("tpr_macro", "tpr", "macro"),
    ("ppv_macro", "ppv", "macro"),
    ("balanced_accuracy", "balanced_accuracy", None),
]
#: the columns the package withholds, scored from the same draws
WITHHELD = [
    ("tpr_macro", "tpr", "macro"),
    ("f1_macro", "f1", "macro"),
]
WHOLE = ("accuracy", "balanced_accuracy", "kappa", "mcc")
METHODS = ("auto", "posterior", "bootstrap")


def _coverage(law, n, method, n_groups, seed, n_resamples):
    law = np.asarray(law, dtype=float)
    law = law / law.sum()
    k = law.shape[0]
    counts = np.random.default_rng(seed).multinomial(n, law.ravel(), n_groups)
    counts = counts.reshape(n_groups, k, k)
    out = {}
    for column, metric, avg in REPORTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = group_metrics(
                counts=counts,
                metrics=[metric],
                average="weighted" if metric in WHOLE else avg,
                confidence_level=0.95,
                interval_method=method,
                n_resamples=n_resamples,
                random_state=seed,
                zero_division=np.nan,
            )
        truth = multiclass_metric(metric, law, average=avg)
        if avg is None and metric not in WHOLE:
            truth = np.tile(truth, n_groups)
        ok = ~table[f"{metric}_undefined"].to_numpy()
        low = table[f"{metric}_low"].to_numpy()
        high = table[f"{metric}_high"].to_numpy()
        covered = ((low <= truth) & (truth <= high))[ok].mean()
        out[column] = covered if np.isfinite(low).any() else np.nan
    drawn = "bootstrap" if method == "bootstrap" else "posterior"
    prior = None if drawn == "bootstrap" else np.full(counts.shape, matrix_prior(k))
    for column, metric, avg in WITHHELD:

        def func(m, metric=metric, avg=avg):
            return multiclass_metric(metric, m, average=avg, zero_division=np.nan)

        low, high = matrix_interval(
            func,
            counts,
            method=drawn,
            alpha=0.05,
            n_resamples=n_resamples,
            seed=resolve_seed(seed),
            labels=np.arange(n_groups),
            key=column,
            prior=prior,
        )
        ok = np.isfinite(func(counts))
        truth = func(law)
        out[f"{column} (withheld)"] = ((low <= truth) & (truth <= high))[ok].mean()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[30])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--rst", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = {}
    for n in args.sizes:
        for method in METHODS:
            cells = [
                _coverage(law, n, method, args.groups, seed, args.draws)
                for seed, law in enumerate(LAWS.values())
            ]
            for column in cells[0]:
                rows.setdefault((n, column), {})[method] = [c[column] for c in cells]
    print(
        f"# {args.groups} groups per law, laws {', '.join(LAWS)}, "
        f"{args.draws} draws, {time.perf_counter() - start:.0f} s"
    )
    header = ["n", "column", *METHODS]
    lines = []
    for (n, column), by_method in rows.items():
        ranges = [
            f"{min(by_method[m]):.3f}-{max(by_method[m]):.3f}"
            if np.isfinite(by_method[m]).all()
            else "none"
            for m in METHODS
        ]
        lines.append([str(n), column, *ranges])
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    if args.rst:
        rule = "  ".join("=" * w for w in widths)
        print(rule)
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        print(rule)
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
        print(rule)
    else:
        for line in [header, *lines]:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)))


if __name__ == "__main__":
    main()
