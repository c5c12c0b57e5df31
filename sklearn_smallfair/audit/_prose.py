"""What an audit report says in words: each cell's sentence, the ranked
findings and the summary."""

import numpy as np

from .._lookalike import lookalike_sets
from .._output import display_label
from ._detectable import POWER, VERDICTS
from ._detectable import plannable as _plannable
from ._format import fmt as _fmt
from ._format import fmt_ci as _fmt_ci
from ._format import fmt_p as _fmt_p
from ._format import list_names as _list_names
from ._format import metric_label as _label
from ._format import name as _name

__all__ = [
    "caveat",
    "cell",
    "findings",
    "headline",
    "ranked",
    "summary",
    "verdict_counts",
]

SMALL_N = 30  # groups below this size are flagged as small in the summary


def _get(row, column):
    value = row.get(column, np.nan)
    return np.nan if value is None else value


def cell(report, group, row, metric):
    """What the audit says of one group's metric (see :meth:`AuditReport.cell`)."""
    label = _label(metric)
    n = int(row["n"])
    who = f"{_name(group)} (n = {n})"
    adjusted = "adjusted " if report.correction else ""
    level = f"{report.confidence_level:.0%}"
    value = float(row[metric])
    ref = float(row[f"{metric}_reference"])
    diff = value - ref
    p = float(_get(row, f"{metric}_match_p_value"))
    p_adj = float(_get(row, f"{metric}_match_p_adjusted"))
    gap = float(_get(row, f"{metric}_detectable_gap"))
    low, high = float(row[f"{metric}_low"]), float(row[f"{metric}_high"])
    r_low = float(row[f"{metric}_interval_low"])
    r_high = float(row[f"{metric}_interval_high"])
    verdict = row.get(f"{metric}_verdict", "not tested")
    if row[f"{metric}_undefined"]:
        verdict = "undefined"
    outside = bool(value < r_low or value > r_high)
    interval = f", {level} CI {_fmt_ci(low, high)}," if not np.isnan(low) else ""
    head = (
        f"{who}: {label} = {_fmt(value)}{interval} vs {_fmt(ref)} for "
        f"{report._ref_word()}"
    )
    out = dict(
        verdict=verdict,
        value=value,
        reference=ref,
        difference=diff,
        p=p,
        p_adjusted=p_adj,
        detectable_gap=gap,
        outside=outside and verdict == "inconclusive",
    )
    if verdict == "undefined":
        smoothed = row[f"{metric}_smoothed"]
        s_low = row.get(f"{metric}_smoothed_low", np.nan)
        s_ci = (
            f", {level} CI {_fmt_ci(s_low, row[f'{metric}_smoothed_high'])}"
            if not np.isnan(s_low)
            else ""
        )
        if np.isnan(value):
            text = (
                f"{who}: {label} is undefined (0/0: no one in its denominator); "
                f"the smoothed value is {_fmt(smoothed)}{s_ci}."
            )
            return {**out, "text": text, "short": "undefined (0/0)"}
        text = (
            f"{who}: {label} = {_fmt(value)}{interval.rstrip(',')}, but "
            f"{report._ref_word()}'s "
            f"{label} is undefined (0/0: no one in its denominator), so there is "
            f"nothing to compare it with."
        )
        return {**out, "text": text, "short": "reference undefined (0/0)"}
    if verdict == "not tested":
        return {**out, "text": f"{head} (not tested).", "short": "not tested"}
    test = f"{adjusted}p = {_fmt_p(p_adj)}"
    if verdict == "gap":
        text = (
            f"{head}: a gap of {diff:+.2f}, unlikely under the reference at this "
            f"group's size ({test})"
        )
        if low <= ref <= high:  # the numbers beside the verdict, reconciled
            text += (
                f"; the group's {level} interval still holds the reference's "
                f"value: the test also weighs the reference's own counts and the "
                f"exact law of the group's, which the interval of the group alone "
                f"does not"
            )
        text += "."
        return {**out, "text": text, "short": f"gap {diff:+.2f}"}
    d = abs(gap)
    if verdict == "no gap detected":
        text = (
            f"{head}: a difference of {diff:+.2f}, not significant ({test}); the "
            f"data exclude a gap above {d:.2f}, the smallest this audit detects at "
            f"n = {n} with {POWER:.0%} power (the group's interval lies within "
            f"{_fmt(ref)} +/- {d:.2f}), but not "
            f"a smaller one."
        )
        return {**out, "text": text, "short": f"no gap > {d:.2f}"}
    # inconclusive
    if not _plannable(metric):
        seen = f"{label} has no exact MATCH law, so the smallest gap this audit "
        seen += "detects is not computed"
        short = "inconclusive"
    elif np.isnan(gap):
        seen = f"at n = {n} no {label} gap at all is detectable with {POWER:.0%} power"
        short = "no gap detectable"
    elif d > report.tolerance:
        seen = (
            f"at n = {n} this audit detects only a {label} gap above {d:.2f} (with "
            f"{POWER:.0%} power), more than the tolerance of "
            f"{report.tolerance:.2f}, so a gap that large is not excluded"
        )
        short = f"needs gap > {d:.2f}"
    else:
        seen = (
            f"at n = {n} this audit detects only a {label} gap above {d:.2f} (with "
            f"{POWER:.0%} power), and the group's interval reaches further from "
            f"the reference's value than that"
        )
        short = f"needs gap > {d:.2f}"
    why = ""
    if out["outside"]:
        if not np.isnan(p) and p <= report.alpha and report.correction:
            why = (
                f"; its value lies outside the reference's {1 - report.alpha:.0%} "
                f"range at this size ({_fmt(r_low)} to {_fmt(r_high)}) and its "
                f"unadjusted p = {_fmt_p(p)} is below alpha, but not after the "
                f"{report.correction} adjustment for the {report._n_tests(metric)} "
                f"{report._family_words(label)} (multiplicity)"
            )
        else:
            why = (
                f"; its value lies just outside the {1 - report.alpha:.0%} range "
                f"the test accepts at this size ({_fmt(r_low)} to {_fmt(r_high)}, "
                f"found at the pooled count of its ends), but the test's own p = "
                f"{_fmt_p(p)} is above alpha"
            )
    text = f"{head}: inconclusive at this size ({test}){why}; {seen}."
    return {**out, "text": text, "short": short}


def ranked(report):
    """``(kind, sort key, text)`` of every finding, in the order shown."""
    out = []
    f = report.frame
    for metric in report.metrics:
        for group, row in f.iterrows():
            c = cell(report, group, row, metric)
            v = c["verdict"]
            if v == "gap":
                out.append(("gap", c["p_adjusted"], c["text"]))
            elif v == "undefined":
                out.append(("undefined", 0.0, c["text"]))
            elif v == "inconclusive" and c["outside"]:
                out.append(("outside", c["p"], c["text"]))
            elif abs(c["difference"]) >= 0.05:  # not rejected: what it can say
                out.append(("inconclusive", -abs(c["difference"]), c["text"]))
    order = {"gap": 0, "outside": 1, "undefined": 3, "inconclusive": 4}
    out.sort(key=lambda t: (order[t[0]], t[1]))
    if report.separation_violated is not None:
        out.append(("separation", 0.0, _separation_line(report)))
    out += [("blind", 0.0, text) for text in _blind_spots(report)]
    small = f.index[f["n"] < SMALL_N]
    if len(small):
        names = ", ".join(_name(g) for g in small)
        out.append(
            (
                "small",
                0.0,
                f"Small group(s) with fewer than {SMALL_N} people: {names}. "
                f"Their raw values are noisy; read their confidence intervals, "
                f"compare the smoothed values and the reference ranges, and read "
                f"a large p-value as 'not enough data', not as 'fair'.",
            )
        )
    lookalike = lookalike_sets([g for g in f.index.tolist() if isinstance(g, str)])
    if lookalike:
        sets = "; ".join(" and ".join(ascii(v) for v in same) for same in lookalike)
        out.append(
            (
                "labels",
                0.0,
                f"Labels that look alike are different groups here: {sets} "
                f"(written with escapes to show how they differ). If they name one "
                f"group, clean the labels and audit again.",
            )
        )
    # a caveat on the labels comes first; the separation verdict ranks after
    # the gaps and the values outside their range, before the undefined and
    # inconclusive ones
    first = [x for x in out if x[0] == "labels"]
    first += [x for x in out if x[0] in ("gap", "outside")]
    sep = [x for x in out if x[0] == "separation"]
    rest = [x for x in out if x[0] not in ("labels", "gap", "outside", "separation")]
    return first + sep + rest


def _separation_line(report):
    adjusted = "adjusted " if report.correction else ""
    sep = report.separation
    parts = []
    for m in ("tpr", "fpr"):
        rows = sep[sep["metric"] == m]
        if len(rows):
            parts.append(
                f"smallest {adjusted}p for equal {m.upper()} "
                f"{_fmt_p(float(rows['p_adjusted'].min()))}"
            )
    verdict = "violated" if report.separation_violated else "no violation detected"
    return (
        f"Separation (equalized odds): {verdict} at alpha = {report.alpha:g} "
        f"({'; '.join(parts)})."
    )


def _blind_spots(report):
    """Per metric: how many non-rejections are inconclusive and the gaps missed."""
    lines = []
    f = report.frame
    for metric in report.metrics:
        col = f"{metric}_verdict"
        if col not in f:
            continue
        label = _label(metric)
        unsure = f[col] == "inconclusive"
        if not unsure.any():
            continue
        gap = f[f"{metric}_detectable_gap"].abs()
        if not _plannable(metric):
            lines.append(
                f"What the audit could not see, {label}: {int(unsure.sum())} "
                f"group(s) inconclusive at their size; {label} has no exact "
                f"MATCH law, so the smallest detectable gap is not computed."
            )
            continue
        blind = f.index[unsure & gap.isna()]
        seen = unsure & gap.notna()
        parts = []
        if seen.any():
            sizes = f.loc[seen, "n"]
            lo, hi = gap[seen].min(), gap[seen].max()
            span = f"{hi:.2f} (n = {int(sizes[gap[seen].idxmax()])})"
            if f"{lo:.2f}" != f"{hi:.2f}":
                span += f" to {lo:.2f} (n = {int(sizes[gap[seen].idxmin()])})"
            parts.append(f"the smallest {label} gap it detects is {span}")
        if len(blind):
            parts.append(
                f"at the size of {len(blind)} of them "
                f"({_list_names(blind)}) no {label} gap at all is detectable"
            )
        lines.append(
            f"What the audit could not see, {label}: {int(unsure.sum())} of "
            f"{len(f)} group(s) inconclusive at their size (not rejected, but "
            f"the data allow a gap the audit would miss); {'; '.join(parts)} "
            f"with {POWER:.0%} power."
        )
    return lines


def findings(report):
    """The findings of :meth:`summary`, one sentence each, as a list of str.

    Ranked: gaps (smallest adjusted p first), values outside the reference's
    range that the adjusted test does not reject (with the reason), the
    separation test, undefined metrics, differences of 0.05 or more that the
    test does not reject (with the smallest gap it detects at the group's
    size), what the audit could not see per metric,
    and the small groups.
    """
    return [text for _, _, text in ranked(report)]


def summary(report, max_findings=12):
    """A short text of the findings that matter.

    Parameters
    ----------
    max_findings : int, default=12
        At most this many per-group findings (the rest are counted).

    Returns
    -------
    str
    """
    found = ranked(report)
    general = ("separation", "blind", "small")
    per_group = [t for k, _, t in found if k not in general]
    rest = [t for k, _, t in found if k in general]
    shown = per_group[:max_findings]
    n_people = int(report.frame["n"].sum())
    head = (
        f"{display_label(report.title)}: {len(report.frame)} groups, "
        f"{n_people:,} people; metrics {', '.join(report.metrics)}; "
        f"alpha = {report.alpha:g}"
        + (
            f" ({report.correction}-adjusted over "
            + (
                f"all {report._n_tests(report.metrics[0])} MATCH tests of the audit)"
                if report.family == "all"
                else "each metric's groups)"
            )
            if report.correction and report.match is not None
            else f" ({report.correction}-adjusted)"
            if report.correction
            else ""
        )
    )
    counts = verdict_counts(report)
    if counts:
        head += "\n" + counts
    body = [f"- {x}" for x in shown]
    if len(per_group) > len(shown):
        body.append(f"- ... and {len(per_group) - len(shown)} more (see .frame).")
    if not per_group:
        body.append(
            "- No group's metric is unlikely under the reference at its size, and "
            "none differs from it by 0.05 or more" + _widest(report) + "."
        )
    body += [f"- {x}" for x in rest]
    return "\n".join([head, *body, caveat(report.tolerance)])


def caveat(tolerance):
    """The last sentence of a summary: what a non-rejection does not show."""
    return (
        "A p-value above alpha does not show that the groups are alike: a "
        "non-rejection is 'no gap detected' only when the audit detects, at the "
        f"group's size, every gap above a size of at most the tolerance "
        f"({tolerance:.2f}) and the group's interval lies within that size; "
        "otherwise it is inconclusive at this size."
    )


def headline(report):
    """One sentence: how many gaps and the largest, else what no gap means."""
    f = report.frame
    cols = [m for m in report.metrics if f"{m}_verdict" in f]
    if not cols:
        return "No test was run."
    found = []
    for m in cols:
        at = np.flatnonzero((f[f"{m}_verdict"] == "gap").to_numpy())
        diff = (f[m] - f[f"{m}_reference"]).to_numpy(dtype=float)
        found += [(-abs(diff[k]), k, m) for k in at]
    if found:
        _, k, m = min(found, key=lambda x: x[0])
        row = f.iloc[k]
        g = f.index[k]
        n_groups = len({k for _, k, _ in found})
        adjusted = "adjusted " if report.correction else ""
        return (
            f"{len(found)} gap{'s' if len(found) > 1 else ''} in {n_groups} of "
            f"{len(f)} groups. Largest: {_name(g)} (n = {int(row['n'])}), "
            f"{_label(m)} {_fmt(float(row[m]))} vs "
            f"{_fmt(float(row[f'{m}_reference']))} for {report._ref_word()} "
            f"({float(row[m] - row[f'{m}_reference']):+.2f}, {adjusted}p = "
            f"{_fmt_p(float(row[f'{m}_match_p_adjusted']))})."
        )
    values = f[[f"{m}_verdict" for m in cols]].to_numpy().ravel()
    unsure = int((values == "inconclusive").sum())
    text = (
        f"No gap found in {len(f)} groups x {len(cols)} metrics at alpha = "
        f"{report.alpha:g}"
    )
    if unsure:
        return (
            f"{text}, but {unsure} of the {values.size} cells are inconclusive at "
            f"their size: gaps there are not excluded."
        )
    return f"{text}; every tested cell excludes a gap above the tolerance of " + (
        f"{report.tolerance:.2f}."
    )


def verdict_counts(report):
    """``Verdicts of 24 group x metric cells: 3 gap, ...`` (empty untested)."""
    cols = [f"{m}_verdict" for m in report.metrics if f"{m}_verdict" in report.frame]
    if not cols:
        return ""
    values = report.frame[cols].to_numpy().ravel()
    parts = [f"{int((values == v).sum())} {v}" for v in VERDICTS if (values == v).any()]
    return f"Verdicts of {values.size} group x metric cells: {', '.join(parts)}."


def _widest(report):
    """``; the widest 95% CI is b's TPR, [0.19, 0.81]`` (empty without any)."""
    best = None
    for metric in report.metrics:
        low = report.frame.get(f"{metric}_low")
        high = report.frame.get(f"{metric}_high")
        if low is None or high is None:
            continue
        width = (high - low).to_numpy(dtype=float)
        if np.isnan(width).all():
            continue
        i = int(np.nanargmax(width))
        if best is None or width[i] > best[0]:
            best = (width[i], metric, i, low.iloc[i], high.iloc[i])
    if best is None:
        return ""
    _, metric, i, low, high = best
    label = metric.upper() if len(metric) <= 4 else metric
    who = _name(report.frame.index[i])
    return (
        f"; but the widest {report.confidence_level:.0%} CI, {who}'s "
        f"{label} {_fmt_ci(low, high)}, says how little that shows"
    )
