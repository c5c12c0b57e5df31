"""Null rate of the audit's separation verdict: each group against everyone else
(the audit's default, ``separation_test(reference="rest")``) and every pair of
groups (``reference=None``), on the same simulated counts.

Every group is drawn from one law per audit (prevalence uniform in [0.1, 0.6],
TPR in [0.5, 0.95], FPR in [0.05, 0.4]), group sizes log-uniform in [5, 5000];
2, 5, 12, 30 and 60 groups; 400 audits per setting up to 12 groups, 150 beyond.
The verdict "violated" (any Holm-adjusted comparison of TPR or of FPR rejects at
0.05) should come up in at most ``1 - 0.95^2 = 9.75 %`` of the audits. Prints
each rate with its Monte Carlo standard error. Run::

    python benchmarks/calibration_separation_pairs.py
"""

import warnings

import numpy as np

try:  # imported as part of the ``benchmarks`` package
    from . import _common
except ImportError:  # run as a script, or imported from the benchmarks folder
    import _common

SEED = 20261129
SETTINGS = ((2, 400), (5, 400), (12, 400), (30, 150), (60, 150))


def null_counts(rng, n_groups):
    """Per-group ``(TP, FN, FP, TN)`` of one fair audit."""
    n = np.round(np.exp(rng.uniform(np.log(5), np.log(5000), n_groups))).astype(int)
    prevalence, tpr, fpr = (
        rng.uniform(0.1, 0.6),
        rng.uniform(0.5, 0.95),
        rng.uniform(0.05, 0.4),
    )
    pos = rng.binomial(n, prevalence)
    neg = n - pos
    tp, fp = rng.binomial(pos, tpr), rng.binomial(neg, fpr)
    return {
        f"g{k}": [tp[k], pos[k] - tp[k], fp[k], neg[k] - fp[k]] for k in range(n_groups)
    }


def main():
    _common.ensure_package_importable()
    from sklearn_smallfair.stats import separation_test

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(SEED)
    print("groups  audits  each vs everyone else  every pair")
    for n_groups, reps in SETTINGS:
        hits = {"rest": 0, None: 0}
        for _ in range(reps):
            counts = null_counts(rng, n_groups)
            for reference in hits:
                hits[reference] += separation_test(
                    counts=counts, reference=reference
                ).violated
        cells = []
        for reference in ("rest", None):
            r = hits[reference] / reps
            cells.append(f"{r:6.1%} +/- {np.sqrt(r * (1 - r) / reps):.1%}")
        print(f"{n_groups:6d}  {reps:6d}  {cells[0]:>21}  {cells[1]:>16}")


if __name__ == "__main__":
    main()
