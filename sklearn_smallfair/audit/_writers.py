"""The audit reports' files: CSV, JSON and the plots embedded in the page."""

import base64
import datetime
import io
import json
import math
import numbers

import numpy as np

from .._output import check_destination, csv_safe, write_atomic

__all__ = ["plot_png", "records", "write_csv", "write_json"]


def jsonable(value):
    """``value`` as a JSON value that keeps it exactly where JSON can.

    Floats keep all their digits (JSON numbers round-trip a float), and a
    non-finite float becomes ``null``; integers of any size stay integers;
    booleans, strings and ``None`` are themselves; numpy scalars are read as
    their Python values; tuples and arrays become lists; dates and times become
    ISO 8601 text; a missing value (``pd.NA``, ``NaT``) is ``null``. Anything else
    (bytes, objects) is written as its ``str``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    import pandas as pd

    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (datetime.date, datetime.time, pd.Timestamp)):
        return value.isoformat()
    if isinstance(value, (pd.Timedelta, datetime.timedelta)):
        return pd.Timedelta(value).isoformat()
    return str(value)


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
    text = json.dumps(jsonable(payload()), indent=2, allow_nan=False)
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
