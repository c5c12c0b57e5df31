"""The audit reports' files: CSV, JSON and the plots embedded in the page."""

import base64
import io

from .._output import check_destination, csv_safe, json_text, jsonable, write_atomic

__all__ = ["plot_png", "records", "with_labels", "write_csv", "write_json"]


def with_labels(frame):
    """``frame`` with its row labels as its first column(s), for a file.

    An index level named like one of the columns (a group column called
    ``"n"``) is written as ``"n (group)"``, so that every column of the file has
    its own name.
    """
    names = list(frame.index.names)
    taken = {str(c) for c in frame.columns}
    free = []
    for level, name in enumerate(names):
        name = "group" if name is None and len(names) == 1 else name
        name = f"level_{level}" if name is None else name
        while str(name) in taken:
            name = f"{name} (group)"
        taken.add(str(name))
        free.append(name)
    return frame.rename_axis(free).reset_index()


def records(frame):
    """A table as JSON-ready records with exact values (``None`` for no table)."""
    if frame is None:
        return None
    columns = [str(c) for c in frame.columns]
    return [
        dict(zip(columns, (jsonable(v) for v in row)))
        for row in frame.itertuples(index=False, name=None)
    ]


def write_csv(frame, path, *, escape_formulas, force):
    """``frame`` as spreadsheet-safe CSV text, written to ``path`` when given."""
    text = csv_safe(with_labels(frame), escape_formulas=escape_formulas).to_csv(
        index=False
    )
    if path is not None:
        write_atomic(path, text, what="the CSV", force=force)
    return text


def write_json(payload, path, *, force):
    """``payload()`` as indented JSON text, written to ``path`` when given.

    ``payload`` is called after the destination is checked, so that a refused
    path fails before the work.
    """
    if path is not None:
        check_destination(path, force=force)
    text = json_text(payload())
    if path is not None:
        write_atomic(path, text, what="the JSON", force=force)
    return text


def plot_png(report, **kwargs):
    """``report.plot(**kwargs)`` as base64 PNG text; ``None`` without matplotlib."""
    try:
        fig = report.plot(**kwargs)
    except ImportError:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
