"""The work of ``smallfair experiment`` (its parser is in ``_experiment``)."""

import io
from pathlib import Path

import numpy as np
import pandas as pd

from .._output import csv_safe
from ._experiment import (
    _PUBLISHED,
)
from ._io import (
    _agg_backend,
    _check_distinct,
    _check_output,
    _show,
    _write_all,
    read_group_counts,
)
from ._options import (
    EXIT_OK,
    CLIError,
    _check_metrics,
    _UsageError,
)


def _has_tqdm():
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def _experiment_data(dataset):
    from ..datasets import load_published_groups

    key = dataset.lower()
    if key in _PUBLISHED:
        counts, reference = load_published_groups(_PUBLISHED[key])
        name = "published groups" if _PUBLISHED[key] is None else _PUBLISHED[key]
        return counts, reference, name
    counts, reference = read_group_counts(dataset)
    return counts, reference, dataset


def _plot_experiment(results, metrics, statistic, path, *, confidence_level=0.95):
    """The image of the experiment's curves, as bytes in the format of ``path``."""
    import matplotlib.pyplot as plt

    from ..model_selection import DownsamplingDisplay

    k = len(metrics)
    ncols = min(k, 3)
    nrows = -(-k // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(4.6 * ncols, 3.6 * nrows),
        squeeze=False,
        layout="constrained",
    )
    try:
        for ax, metric in zip(axes.ravel(), metrics):
            DownsamplingDisplay.from_results(
                results,
                metric=metric,
                statistic=statistic,
                ax=ax,
                confidence_level=confidence_level,
                logy=statistic in ("mse", "rmse", "variance"),
            )
        for ax in axes.ravel()[k:]:
            ax.set_visible(False)
        fmt = Path(path).suffix.lower().lstrip(".")
        image = io.BytesIO()
        fig.savefig(image, format=fmt, dpi=120)
        return image.getvalue()
    finally:
        plt.close(fig)


def _overview(results, out):
    """Mean of the statistics over groups at a few sizes."""
    sizes = np.unique(results["n"])
    picks = sorted({int(sizes[0]), int(sizes[len(sizes) // 2]), int(sizes[-1])})
    sub = results[results["n"].isin(picks)]
    table = sub.pivot_table(
        index=["metric", "estimator"],
        columns="n",
        values="mse",
        aggfunc="mean",
        sort=False,
    )
    table.columns = [f"mse n={n}" for n in table.columns]
    raw = sub[sub["estimator"] == "raw"].pivot_table(
        index="metric", columns="n", values="p_undefined", aggfunc="mean", sort=False
    )
    print("Mean over groups (statistics conditional on a defined score):", file=out)
    with pd.option_context("display.width", 120):
        print(table.to_string(float_format=lambda v: f"{v:.4g}"), file=out)
        if len(raw):
            raw.columns = [f"P(undefined) n={n}" for n in raw.columns]
            print("\nRaw scores undefined (0/0):", file=out)
            print(raw.to_string(float_format=lambda v: f"{v:.3f}"), file=out)


def run(args, out):
    """Run ``smallfair experiment``.

    Run the experiment, print an overview and write the results (and the plot).

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
    from ..model_selection import downsampling_experiment
    from ..smoothing import CrossPriorSmoothing

    metrics = _check_metrics(args.metrics)
    sizes = sorted({n for part in args.sizes for n in part})
    estimators = {"raw": None}
    for lam in args.lam:
        estimators.setdefault(f"cps_{lam:g}", CrossPriorSmoothing(lam=lam))
    _check_output(args.out, "--out", force=args.force)
    _check_output(args.plot, "--plot", force=args.force)
    dataset_file = None if args.dataset.lower() in _PUBLISHED else args.dataset
    _check_distinct(
        [("--dataset", dataset_file)], [("--out", args.out), ("--plot", args.plot)]
    )
    if args.plot:
        _agg_backend()
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise CLIError(
                "--plot needs matplotlib; install it with `pip install "
                "sklearn-smallfair[plot]` (or `pip install matplotlib`), or drop "
                "--plot"
            ) from None
        formats = plt.figure().canvas.get_supported_filetypes()
        plt.close("all")
        ext = Path(args.plot).suffix.lower().lstrip(".")
        if ext not in formats:
            raise _UsageError(
                f"--plot {args.plot}: unsupported image format {ext or '(none)'!r}; "
                f"use one of {', '.join(sorted(formats))}"
            )
    counts, reference, source = _experiment_data(args.dataset)
    progress = not args.no_progress and _has_tqdm()
    print(
        f"Downsampling experiment on {_show(source)}: {len(counts)} group(s), sizes "
        f"{sizes[0]}..{sizes[-1]} ({len(sizes)}), metrics {', '.join(metrics)}, "
        f"estimators {', '.join(estimators)}, method {args.method}"
        + (f" ({args.n_resamples:,} draws)" if args.method == "montecarlo" else ""),
        file=out,
        flush=True,
    )
    results = downsampling_experiment(
        counts=counts,
        metrics=metrics,
        estimators=estimators,
        sizes=sizes,
        method=args.method,
        sampling=args.sampling,
        n_resamples=args.n_resamples,
        reference=reference,
        n_jobs=args.jobs,
        random_state=args.random_state,
        progress=progress,
    )
    text = csv_safe(results).to_csv(index=False)  # group labels from the dataset
    outputs = [(text, args.out, "the results CSV")]
    if args.plot:
        image = _plot_experiment(
            results,
            metrics,
            args.statistic,
            args.plot,
            confidence_level=args.confidence_level,
        )
        outputs.append((image, args.plot, "the plot"))
    paths = _write_all(outputs, force=args.force)
    print(file=out)
    _overview(results, out)
    print(f"\nResults ({len(results):,} rows): {_show(paths[0])}", file=out)
    if args.plot:
        print(f"Plot: {_show(paths[1])}", file=out)
    return EXIT_OK
