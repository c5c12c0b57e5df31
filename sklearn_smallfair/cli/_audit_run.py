"""The work of ``smallfair audit`` (its parser is in ``_audit``)."""

import sys
import time
import warnings

from sklearn.exceptions import UndefinedMetricWarning

from ._file_counts import _check_columns, _count_file
from ._io import (
    _agg_backend,
    _check_distinct,
    _check_output,
    _show,
    _summary,
    _write_all,
)
from ._options import (
    EXIT_OK,
    CLIError,
    _check_metrics,
    _UsageError,
)
from ._sources import resolve


def run(args, out, err=None):
    """Run ``smallfair audit``.

    Read the table, print the findings and write the reports.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.
    out : file-like
        Where to print the results.
    err : file-like, default=None
        Where to show the progress of the reading (``sys.stderr``).

    Returns
    -------
    int
        The exit code, 0; user mistakes raise :class:`CLIError`.
    """
    from ..audit import audit_predictions
    from ..smoothing import CrossPriorSmoothing

    err = sys.stderr if err is None else err
    metrics = _check_metrics(args.metrics)
    groups = _check_columns(args)
    outputs = [
        ("--out", args.out),
        ("--csv-out", args.csv_out),
        ("--json-out", args.json_out),
    ]
    for option, path in outputs:
        _check_output(path, option, force=args.force)
    source = resolve(args)
    _check_distinct(source.inputs, outputs)
    tests = () if args.tests == ["none"] else tuple(dict.fromkeys(args.tests))
    if "none" in tests:
        raise _UsageError("--tests none cannot be combined with other tests")
    if args.n_resamples < 100:
        raise _UsageError(f"--n-resamples must be at least 100, got {args.n_resamples}")
    if args.labels is not None and args.pos_label is not None:
        raise _UsageError(
            "--pos-label names the positive class of binary labels; --labels "
            "audits each class in turn as the positive one, so drop --pos-label"
        )
    matrix_metrics = getattr(args, "matrix_metrics", None)
    counts, _ = _count_file(args, source, source.kind, groups, err)
    if matrix_metrics and not isinstance(counts, tuple):
        raise _UsageError(
            f"--matrix-metrics are metrics of multiclass confusion matrices, but "
            f"{args.target!r} and {args.prediction!r} hold two classes; pass "
            f"--labels to audit each class, or drop --matrix-metrics"
        )
    title = args.title or (
        f"Fairness audit of {args.prediction!r} by {' x '.join(groups)} "
        f"({source.title})"
    )
    names = counts.groups if isinstance(counts, tuple) else counts.index
    if len(names) < 2 and args.reference == "rest":
        raise CLIError(
            f"the group column(s) {', '.join(repr(g) for g in groups)} of "
            f"{source.name} hold a single group ({str(names[0])!r}); an audit "
            f"compares each group with the others, so it needs at least two groups"
        )

    def audit(counts):
        with warnings.catch_warnings():
            # undefined (0/0) values are reported in the summary and the tables
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            return audit_predictions(
                counts=counts,
                metrics=metrics,
                smoothing=CrossPriorSmoothing(lam=args.lam),
                reference=args.reference,
                tests=tests,
                alpha=args.alpha,
                confidence_level=args.confidence_level,
                correction=None if args.correction == "none" else args.correction,
                family=args.family,
                tolerance=args.tolerance,
                separation_pairs=args.separation_pairs,
                n_resamples=args.n_resamples,
                random_state=args.random_state,
                title=title,
                matrix_metrics=matrix_metrics,
            )

    show = (
        args.progress
        if args.progress is not None
        else getattr(err, "isatty", lambda: False)()
    )
    start = time.perf_counter()
    if show:
        print(
            f"smallfair: auditing {len(names):,} groups x {len(metrics)} metrics "
            f"(tests: {', '.join(tests) or 'none'})",
            file=err,
            flush=True,
        )
    report = audit(counts)
    if show:
        print(
            f"smallfair: audited in {time.perf_counter() - start:.1f} s; writing "
            f"the outputs",
            file=err,
            flush=True,
        )
    _agg_backend()
    # every output is made before any is written: a failure writes nothing
    outputs = [(report.to_html(), args.out, "the HTML report", "HTML report")]
    if args.csv_out:
        outputs.append((report.to_csv(), args.csv_out, "the CSV", "CSV table"))
    if args.json_out:
        outputs.append((report.to_json(), args.json_out, "the JSON", "JSON"))
    paths = _write_all([o[:3] for o in outputs], force=args.force)
    written = [(o[3], path) for o, path in zip(outputs, paths)]
    print(_summary(report), file=out)
    print(file=out)
    for what, path in written:
        print(f"{what}: {_show(path)}", file=out)
    return EXIT_OK
