"""The audit reports' files: CSV, JSON and the plots embedded in the page."""

import base64
import io
import json

from .._output import check_destination, csv_safe, write_atomic

__all__ = ["plot_png", "records", "write_csv", "write_json"]


def records(frame):
    """A table as JSON-ready records (``None`` for no table)."""
    return None if frame is None else json.loads(frame.to_json(orient="records"))


def write_csv(frame, path, *, escape_formulas, force):
    """``frame`` as spreadsheet-safe CSV text, written to ``path`` when given."""
    text = csv_safe(frame, escape_formulas=escape_formulas).to_csv()
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
    text = json.dumps(payload(), indent=2, default=str)
    if path is not None:
        write_atomic(path, text, what="the JSON", force=force)
    return text


def plot_png(report):
    """``report.plot()`` as base64 PNG text; ``None`` without matplotlib."""
    try:
        fig = report.plot()
    except ImportError:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
