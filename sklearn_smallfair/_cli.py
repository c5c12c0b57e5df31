"""The ``smallfair`` command (also ``python -m sklearn_smallfair``)."""

import argparse
import sys

import numpy as np
import pandas as pd

from . import __version__
from ._confusion import CELLS
from .datasets import load_published_confusion_matrices
from .metrics import group_metrics
from .smoothing import CrossPriorSmoothing

_DEMO_METRICS = ("tpr", "fpr", "ppv")


def _demo(args, out):
    table = load_published_confusion_matrices("COMPAS")
    everyone = table.loc[table["group"] == "ALL", list(CELLS)].to_numpy()[0]
    groups = table[table["group"] != "ALL"].set_index("group")
    counts = groups[list(CELLS)].to_numpy()
    reference = everyone - counts  # leave-one-group-out: ALL minus the group
    smoothing = CrossPriorSmoothing(lam=args.lam)
    pd.set_option("display.width", 120)
    cols = ["n", "n_pos", "n_neg"] + [
        f"{m}{s}" for m in _DEMO_METRICS for s in ("", "_smoothed")
    ]

    print(
        f"sklearn-smallfair {__version__}: demo on the published COMPAS "
        "violent-recidivism tables",
        file=out,
    )
    print(
        "\nWhole groups (reference: all defendants minus the group; "
        f"Cross-Prior Smoothing lam={args.lam:g}):",
        file=out,
    )
    full = group_metrics(
        counts=groups[list(CELLS)],
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=reference,
        zero_division=np.nan,
    )
    print(full[cols].round(3).to_string(), file=out)

    rng = np.random.default_rng(args.seed)
    white = groups.loc["White", list(CELLS)].to_numpy()
    sizes = (8, 12, 25, 50)
    draws = rng.multinomial(sizes, white / white.sum())
    small = pd.DataFrame(
        draws,
        columns=list(CELLS),
        index=pd.Index([f"White, n={n}" for n in sizes], name="group"),
    )
    print(
        f"\nSmall samples drawn from the White group's proportions (seed "
        f"{args.seed}): raw metrics are jagged or undefined (NaN); smoothed ones are "
        "always defined and shrink toward the reference (everyone else), less so "
        "as n grows:",
        file=out,
    )
    sub = group_metrics(
        counts=small,
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=everyone - white,
        zero_division=np.nan,
    )
    print(pd.concat([small, sub[cols[3:]].round(3)], axis=1).to_string(), file=out)
    n_undef = int(sub[[f"{m}_undefined" for m in _DEMO_METRICS]].to_numpy().sum())
    print(
        f"\n{n_undef} raw value(s) undefined; 0 after smoothing. Next: "
        "group_metrics(y_true, y_pred, sensitive_features=groups, "
        "smoothing=CrossPriorSmoothing(lam=10)) on your own predictions.",
        file=out,
    )
    return 0


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="smallfair",
        description="Fair evaluation of models when some groups are small.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="per-group metrics, raw and smoothed, on embedded COMPAS tables"
    )
    demo.add_argument(
        "--lam",
        type=float,
        default=10.0,
        help="Cross-Prior Smoothing strength (default: 10)",
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the small-sample draws (default: 0)",
    )
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None, out=None):
    """Entry point of the ``smallfair`` command; returns the exit code."""
    out = sys.stdout if out is None else out
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["demo", *(argv or [])])
    if getattr(args, "lam", 0) < 0:
        parser.error("--lam must be >= 0")
    return args.func(args, out)
