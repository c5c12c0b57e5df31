"""The work of ``smallfair plan`` (its parser is in ``_plan``)."""

import sys
import warnings

import numpy as np
import pandas as pd

from .._output import json_text
from ._io import (
    _check_distinct,
    _check_output,
    _show,
    _write_all,
)
from ._options import (
    EXIT_OK,
    CLIError,
    _check_metrics,
    _UsageError,
)
from ._plan import (
    _CELL_NAMES,
    COLUMNS,
)


def _parse_counts(text):
    """The four reference counts of ``--counts``, as (TP, FN, FP, TN)."""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    named = [p for p in parts if "=" in p]
    if named and len(named) != len(parts):
        raise _UsageError(
            f"--counts {text!r}: give four numbers TP,FN,FP,TN or four named "
            f"cells TP=..,FN=..,FP=..,TN=.., not a mix"
        )
    values = {}
    if named:
        for part in parts:
            key, _, value = part.partition("=")
            key = key.strip().upper()
            if key not in _CELL_NAMES or key in values:
                raise _UsageError(
                    f"--counts {text!r}: cell names are TP, FN, FP and TN, each "
                    f"once; got {key!r}"
                )
            values[key] = value
    elif len(parts) == 4:
        values = dict(zip(_CELL_NAMES, parts))
    if len(values) != 4:
        raise _UsageError(
            f"--counts {text!r}: give the four reference counts, TP,FN,FP,TN "
            f"(e.g. --counts 389,347,1597,4121)"
        )
    try:
        counts = np.array([float(values[c]) for c in _CELL_NAMES])
    except ValueError:
        raise _UsageError(f"--counts {text!r}: the counts must be numbers") from None
    if not np.isfinite(counts).all() or (counts < 0).any() or counts.sum() <= 0:
        raise _UsageError(
            f"--counts {text!r}: the counts must be finite, non-negative and not all 0"
        )
    return counts


def _check_planned_metrics(names):
    """The metrics of ``--metrics`` that the power analysis supports."""
    from ..metrics import get_metric

    metrics = _check_metrics(names)
    bad = [
        m for m in metrics if get_metric(m).family not in ("binomial", "joint_ratio")
    ]
    if bad:
        raise _UsageError(
            f"--metrics: the power analysis covers the binomial metrics "
            f"(acc, prev, ppr, ...) and the joint ratios (tpr, fpr, ppv, npv, ...), "
            f"not {', '.join(bad)}"
        )
    return metrics


def _groups_from_file(args, err):
    """``(labels, sizes, reference counts)`` of the groups of a table."""
    from .._references import reference_counts
    from ._file_counts import _check_columns, _count_file
    from ._sources import resolve

    missing = [
        option
        for option, value in (
            ("--target", args.target),
            ("--prediction", args.prediction),
            ("--group", args.group),
        )
        if not value
    ]
    if missing:
        raise _UsageError(
            f"reading a table of predictions needs {', '.join(missing)} (see "
            f"'smallfair plan --help')"
        )
    if args.n:
        raise _UsageError("--n goes with --counts; a table gives the group sizes")
    groups = _check_columns(args)
    source = resolve(args)
    _check_distinct(
        source.inputs,
        [("--csv-out", args.csv_out), ("--json-out", args.json_out)],
    )
    counts, _ = _count_file(args, source, source.kind, groups, err, multiclass=False)
    cms = counts.to_numpy(dtype=np.float64)
    if len(cms) < 2 and args.reference == "rest":
        raise CLIError(
            f"the group column(s) {', '.join(repr(g) for g in groups)} of "
            f"{source.name} "
            f"hold a single group ({str(counts.index[0])!r}); with --reference rest "
            f"each group is compared with the others, so at least two are needed"
        )
    # the MATCH test compares each group with a sample independent of it: the
    # others (everyone else, also for --reference total)
    refs = reference_counts(cms, "rest")
    labels = [str(v) for v in counts.index]
    return labels, cms.sum(axis=1).astype(np.int64), refs, cms


def _groups_from_counts(args):
    """``(labels, sizes, reference counts)`` for planned sizes against counts."""
    if args.target or args.prediction or args.group:
        raise _UsageError(
            "--target, --prediction and --group read a table; with --counts give "
            "the planned sizes with --n"
        )
    if not args.n:
        raise _UsageError("--counts needs the planned group sizes, e.g. --n 30 100")
    reference = _parse_counts(args.counts)
    sizes = np.array(list(dict.fromkeys(args.n)), dtype=np.int64)
    labels = [f"n={n}" for n in sizes]
    return labels, sizes, np.tile(reference, (sizes.size, 1)), None


def _cell(func, *args, **kwargs):
    """``(func(*args, **kwargs), reason)``: the reason is empty, or the first
    sentence of the error or of the warning that explains an effect out of
    reach (a NaN)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = func(*args, **kwargs)
    except ValueError as exc:
        return np.nan, str(exc).split(";")[0].split(". ")[0]
    reason = ""
    if np.isnan(np.asarray(value, dtype=np.float64)).any():
        explained = [w for w in caught if issubclass(w.category, UserWarning)]
        if explained:
            reason = str(explained[-1].message).split(";")[0].split(". ")[0]
    return value, reason


def plan_table(labels, sizes, references, metrics, args, cms=None):
    """The planning table: one row per group and metric (see ``COLUMNS``).

    With the groups' counts ``cms`` (a table), each group's share of people in a
    metric's denominator is its own and the level is that at which the audit's
    correction rejects one test of its family (``alpha`` over the groups x
    metrics, or the groups with ``--family metric``), so the detectable effects
    are those the audit's report states.
    """
    from ..metrics import get_metric
    from ..stats import match_min_detectable_effect, match_power, match_sample_size

    level = args.alpha
    if cms is not None:
        family = len(labels) * (len(metrics) if args.family == "all" else 1)
        level = args.alpha / family
    common = {"alpha": level, "alternative": args.alternative}
    rows = []
    needed = {}  # the sample size depends on the reference and the share only
    for k, (label, n, ref) in enumerate(zip(labels, sizes, references)):
        for name in metrics:
            metric = get_metric(name)
            with np.errstate(invalid="ignore", divide="ignore"):
                value = float(metric.func(np.asarray(ref, dtype=np.float64)))
            share = None
            if cms is not None and metric.family == "joint_ratio" and n > 0:
                share = float(cms[k, list(metric.denominator)].sum() / n)
            notes = []
            mde, why = _cell(
                match_min_detectable_effect,
                name,
                ref,
                int(n),
                power=args.power,
                share=share,
                **common,
            )
            notes.append(f"detectable effect: {why}" if why else "")
            power, why = _cell(
                match_power,
                name,
                ref,
                int(n),
                effect=args.effect,
                share=share,
                **common,
            )
            notes.append(f"power: {why}" if why else "")
            key = (name, tuple(np.asarray(ref, dtype=np.float64).tolist()), share)
            if key not in needed:
                needed[key] = _cell(
                    match_sample_size,
                    name,
                    ref,
                    effect=args.effect,
                    power=args.power,
                    max_n=args.max_n,
                    share=share,
                    **common,
                )
            n_needed, why = needed[key]
            notes.append(f"n_needed: {why}" if why else "")
            rows.append(
                {
                    "group": label,
                    "metric": name,
                    "n": int(n),
                    "reference_value": value,
                    "min_detectable_effect": mde,
                    "effect": float(args.effect),
                    "power": power,
                    "n_needed": n_needed,
                    "extra_records": (
                        max(0, int(n_needed) - int(n))
                        if np.isfinite(n_needed)
                        else np.nan
                    ),
                    "note": "; ".join(t for t in notes if t),
                }
            )
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("n_needed", "extra_records"):
        table[column] = table[column].astype("Int64")
    return table


def _json(table, args):
    settings = {
        "effect": float(args.effect),
        "power": float(args.power),
        "alpha": float(args.alpha),
        "family": args.family if not args.counts else None,
        "alternative": args.alternative,
        "max_n": int(args.max_n),
        "reference": "counts" if args.counts else args.reference,
    }
    records = table.to_dict(orient="records")
    return json_text({"settings": settings, "plan": records}) + "\n"


def _text(table):
    shown = table.drop(columns="note").copy()
    for column in ("reference_value", "min_detectable_effect", "effect", "power"):
        shown[column] = shown[column].map(
            lambda v: "NaN" if not np.isfinite(v) else f"{v:.3f}"
        )
    shown = shown.rename(
        columns={
            "reference_value": "reference",
            "min_detectable_effect": "detectable",
            "n_needed": "n_needed",
            "extra_records": "extra",
        }
    )
    lines = [shown.to_string(index=False, na_rep="NaN")]
    notes = table.loc[table["note"] != "", ["group", "metric", "note"]]
    for row in notes.itertuples(index=False):
        lines.append(f"  {row.group} {row.metric}: {row.note}")
    return "\n".join(lines)


def run(args, out, err=None):
    """Run ``smallfair plan``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options.
    out : file-like
        Where to print the table.
    err : file-like, default=None
        Where to show the progress of the reading (``sys.stderr``).

    Returns
    -------
    int
        The exit code, 0; user mistakes raise :class:`CLIError`.
    """
    err = sys.stderr if err is None else err
    metrics = _check_planned_metrics(args.metrics)
    outputs = [("--csv-out", args.csv_out), ("--json-out", args.json_out)]
    for option, path in outputs:
        _check_output(path, option, force=args.force)
    _check_distinct([], outputs)
    if args.counts is not None:
        labels, sizes, references, cms = _groups_from_counts(args)
    else:
        labels, sizes, references, cms = _groups_from_file(args, err)
    table = plan_table(labels, sizes, references, metrics, args, cms)
    print(
        f"MATCH test (exact), {args.alternative}, alpha = {args.alpha:g}: the "
        f"detectable effect at power {args.power:g}, the power against an effect "
        f"of {args.effect:+g}, and the size that keeps power {args.power:g} "
        f"against it (n_needed; extra: records still needed, up to --max-n "
        f"{args.max_n:,})",
        file=out,
    )
    print(_text(table), file=out)
    outputs = []
    if args.csv_out:
        outputs.append((table.to_csv(index=False), args.csv_out, "the CSV"))
    if args.json_out:
        outputs.append((_json(table, args), args.json_out, "the JSON"))
    paths = _write_all(outputs, force=args.force)
    names = ["CSV table"] * bool(args.csv_out) + ["JSON"] * bool(args.json_out)
    written = list(zip(names, paths))
    if written:
        print(file=out)
    for what, path in written:
        print(f"{what}: {_show(path)}", file=out)
    return EXIT_OK
