"""The work of ``smallfair demo`` (its parser is in ``_demo``)."""

import numpy as np
import pandas as pd

from .. import __version__
from .._confusion import CELLS
from ._demo import (
    _DEMO_METRICS,
)
from ._io import _agg_backend, _check_output, _show, _summary, _write
from ._options import EXIT_OK


def run(args, out):
    """Run ``smallfair demo``.

    Print the audit of the COMPAS tables and write its HTML report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.
    out : file-like
        Where to print the results.

    Returns
    -------
    int
        The exit code, 0; user mistakes raise :class:`CLIError`.
    """
    from ..audit import audit_predictions
    from ..datasets import load_published_groups
    from ..metrics import group_metrics
    from ..smoothing import CrossPriorSmoothing

    _check_output(args.out, "--out", force=args.force)
    # each group against all other defendants (ALL counts every race)
    groups, reference = load_published_groups("COMPAS")
    groups.index = reference.index = groups.index.str.removeprefix("COMPAS|")
    smoothing = CrossPriorSmoothing(lam=args.lam)
    report = audit_predictions(
        counts=groups,
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=reference.to_numpy(),
        random_state=args.random_state,
        title="COMPAS violent-recidivism scores: Black and White defendants",
    )
    report.reference = "rest"  # the explicit matrices are "everyone else"
    _agg_backend()
    path = _write(report.to_html(), args.out, "the HTML report", force=args.force)

    print(
        f"sklearn-smallfair {__version__}: audit of the published COMPAS "
        f"violent-recidivism tables (reference: all other defendants; Cross-Prior "
        f"Smoothing lam={args.lam:g})\n",
        file=out,
    )
    print(_summary(report), file=out)

    rng = np.random.default_rng(args.random_state)
    white = groups.loc["White"].to_numpy()
    sizes = (8, 12, 25, 50)
    draws = rng.multinomial(sizes, white / white.sum())
    small = pd.DataFrame(
        draws,
        columns=list(CELLS),
        index=pd.Index([f"White, n={n}" for n in sizes], name="sample"),
    )
    sub = group_metrics(
        counts=small,
        metrics=_DEMO_METRICS,
        smoothing=smoothing,
        reference=reference.loc["White"].to_numpy(),
        zero_division=np.nan,
    )
    cols = [f"{m}{s}" for m in _DEMO_METRICS for s in ("", "_smoothed")]
    n_undef = int(sub[[f"{m}_undefined" for m in _DEMO_METRICS]].to_numpy().sum())
    print(
        f"\nSmall samples drawn from the White group's proportions (random state "
        f"{args.random_state}): raw metrics are jagged or undefined (NaN); "
        f"smoothed ones are always defined and shrink toward the reference, "
        f"less so as n grows "
        f"({n_undef} raw value(s) undefined, 0 smoothed):",
        file=out,
    )
    with pd.option_context("display.width", 120):
        print(pd.concat([small, sub[cols].round(3)], axis=1).to_string(), file=out)
    print(
        f"\nHTML report: {_show(path)}\nNext: smallfair audit --csv predictions.csv "
        "--target y --prediction y_pred --group race (see smallfair audit --help).",
        file=out,
    )
    return EXIT_OK
