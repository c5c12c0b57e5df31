"""How the audit's reports write numbers and labels in prose, plots and pages."""

import numpy as np

from .._output import LABEL_LIMIT, cut_label, display_label

__all__ = [
    "class_name",
    "fmt",
    "fmt_ci",
    "fmt_p",
    "list_names",
    "metric_label",
    "name",
    "plain",
    "reference_word",
]


def fmt(x, digits=3):
    """A number for prose: NaN as 'undefined'."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "undefined"
    return f"{x:.{digits}f}"


def fmt_ci(low, high, digits=2):
    """A group's interval for prose and tables: ``[0.41, 0.80]``."""
    if np.isnan(low) or np.isnan(high):
        return "[undefined]"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def fmt_p(p):
    """A p-value for prose: ``0.0123``, ``3.2e-06``, ``undefined``."""
    if np.isnan(p):
        return "undefined"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.3g}"


def name(group):
    """A group label for prose and plots: its value (not its repr), displayable.

    Control and bidirectional characters are escaped (:func:`display_label`);
    a label longer than ``LABEL_LIMIT`` characters is cut.
    """
    value = group.item() if isinstance(group, np.generic) else group
    if isinstance(value, tuple):
        return " & ".join(display_label(v, limit=LABEL_LIMIT) for v in value)
    return display_label(value, limit=LABEL_LIMIT)


def plain(group):
    """A group label as a page shows it (before escaping): its value, a tuple's
    values joined by ``" & "``."""
    value = group.item() if isinstance(group, np.generic) else group
    if isinstance(value, tuple):
        return " & ".join(display_label(v, limit=LABEL_LIMIT) for v in value)
    if isinstance(value, str) and len(value) > LABEL_LIMIT:
        return cut_label(value)
    return value


def metric_label(metric):
    """``TPR`` for short names, the name itself otherwise."""
    return metric.upper() if len(metric) <= 4 else metric


def list_names(groups, limit=6):
    """``a, b, c and 4 more``: at most ``limit`` group names."""
    names = [name(g) for g in groups]
    if len(names) > limit:
        return ", ".join(names[:limit]) + f" and {len(names) - limit} more"
    return ", ".join(names)


def reference_word(reference):
    """What the report calls the reference: ``"everyone else"`` (``"rest"``),
    ``"everyone"`` (``"total"``: all groups, the group's own people included),
    the named group, or ``"the given reference"`` (a table of counts)."""
    if isinstance(reference, str) and reference == "rest":
        return "everyone else"
    if isinstance(reference, str) and reference == "total":
        return "everyone"
    if reference is None or (isinstance(reference, str) and reference == "given"):
        return "the given reference"
    return f"group {name(reference)}"


def class_name(label):
    """A class label as the report shows it: ``'low'`` for text, ``2`` else."""
    value = label.item() if isinstance(label, np.generic) else label
    return repr(value) if isinstance(value, str) else str(value)
