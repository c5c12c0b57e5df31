"""``smallfair experiment``: downsampling experiment.

Runs on the published groups or on a CSV of per-group confusion matrices (read
by :func:`read_group_counts`).
"""

import textwrap

from ._options import (
    _add_command,
    _add_force,
    _jobs,
    _non_negative_float,
    _positive_int,
    _probability,
    _seed,
    _sizes,
)

NAME = "experiment"

_EXPERIMENT_METRICS = ("tpr", "fpr", "ppv")

_PUBLISHED = {"published": None, "compas": "COMPAS", "folktables": "Folktables"}

_STATISTICS = ("mse", "rmse", "bias", "variance", "p_undefined")

_EXPERIMENT_EPILOG = textwrap.dedent(
    """\
    --dataset FILE: a CSV of per-group confusion matrices, one row per group,
    with columns group,TP,FN,FP,TN (case-insensitive), and optionally
      - ref_TP,ref_FN,ref_FP,ref_TN: each group's reference matrix; or
      - rows whose group is ALL: the whole population (reference = ALL - group);
      - a dataset column: several populations, each with its own ALL row.
    Without references each group's reference is the sum of the other rows.
    Example:
      group,TP,FN,FP,TN
      A,273,170,1043,1692
      B,77,129,380,1679
      ALL,389,347,1597,4121

    The results CSV has one row per group, size n, metric and estimator ("raw"
    or "cps_<lam>"), with columns group,n,metric,estimator,mse,bias,variance,
    p_undefined (and mse_se,n_resamples with --method montecarlo).

    examples:
      smallfair experiment
      smallfair experiment --dataset compas --sizes 5:50 --metrics tpr \\
          --plot curves.png
      smallfair experiment --dataset my_groups.csv --method montecarlo \\
          --n-resamples 100000 --jobs -1 --random-state 1 --out results.csv
    """
)


def add_parser(subparsers):
    """Add ``smallfair experiment`` and its options to the subcommands.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of the ``smallfair`` parser.

    Returns
    -------
    argparse.ArgumentParser
        The parser of the subcommand.
    """
    parser = _add_command(
        subparsers,
        NAME,
        help="downsampling experiment: error of raw vs smoothed metrics by size",
        description=(
            "For subgroups of each size drawn from each group, compute the error "
            "(MSE, bias, variance) of the raw and the smoothed metrics against the "
            "whole group's value, and how often the raw metric is undefined. Writes "
            "a tidy CSV and, with --plot, a figure."
        ),
        epilog=_EXPERIMENT_EPILOG,
    )
    parser.add_argument(
        "--dataset",
        default="published",
        metavar="published|compas|folktables|FILE",
        help="the embedded published groups (all, COMPAS or Folktables) or a CSV "
        "of per-group confusion matrices (default: published)",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=list(_EXPERIMENT_METRICS),
        metavar="NAME",
        help="metrics (default: tpr fpr ppv)",
    )
    parser.add_argument(
        "--lam",
        nargs="+",
        type=_non_negative_float,
        default=[5.0, 10.0, 20.0],
        metavar="LAM",
        help="Cross-Prior Smoothing strengths compared with raw (default: 5 10 20)",
    )
    parser.add_argument(
        "--sizes",
        nargs="+",
        type=_sizes,
        default=[list(range(5, 151))],
        metavar="SIZES",
        help="subgroup sizes: N, A:B (inclusive) or A:B:STEP (default: 5:150)",
    )
    parser.add_argument(
        "--method",
        choices=("exact", "montecarlo"),
        default="exact",
        help="exact enumeration or Monte Carlo draws (default: exact)",
    )
    parser.add_argument(
        "--sampling",
        choices=("multinomial", "hypergeometric"),
        default="multinomial",
        help="draw subgroups with or without replacement (default: multinomial)",
    )
    parser.add_argument(
        "--n-resamples",
        type=_positive_int,
        default=100_000,
        metavar="N",
        help="Monte Carlo draws per group and size (default: 100000)",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="parallel jobs; -1 for all CPUs (default: 1)",
    )
    parser.add_argument(
        "--random-state", type=_seed, default=0, help="seed of the draws (default: 0)"
    )
    parser.add_argument(
        "--out",
        default="smallfair_experiment.csv",
        metavar="FILE",
        help="results CSV to write (default: smallfair_experiment.csv)",
    )
    parser.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="also draw the curves to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    parser.add_argument(
        "--statistic",
        choices=_STATISTICS,
        default="mse",
        help="statistic of the plot (default: mse)",
    )
    parser.add_argument(
        "--confidence-level",
        type=_probability,
        default=0.95,
        metavar="LEVEL",
        help="level of the Monte Carlo band of mse and rmse in the plot "
        "(default: 0.95)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (shown on stderr when tqdm is installed)",
    )
    _add_force(parser)
    return parser
