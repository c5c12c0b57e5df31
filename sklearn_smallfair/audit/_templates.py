"""The audit pages' templates: a Jinja2 environment and the values they show.

The markup lives in Jinja2 templates (``templates/``), rendered with
``autoescape=True``: every value a template shows is escaped, user-supplied
labels also made displayable (control and bidirectional characters shown as
escapes, :func:`~sklearn_smallfair._output.display_label`).
"""

import html
import re

import jinja2
import numpy as np
from jinja2.ext import Extension
from markupsafe import Markup

from .._output import display_label
from ..metrics import get_metric
from ._format import plain

__all__ = ["macro", "page", "render_template", "table"]


class _Compact(Extension):
    """Drop every line break and the indentation after it from a template's source.

    The markup of the section templates is written on indented lines for the
    reader; the page holds it on one line, as browsers need no more. Templates
    in ``_VERBATIM`` (the page's frame, the notes, the style sheets) are kept as
    written.
    """

    _VERBATIM = frozenset({"page.html", "notes.html"})

    def preprocess(self, source, name, filename=None):
        if name in self._VERBATIM or not name.endswith(".html"):
            return source
        return re.sub(r"\n[ \t]*", "", source)


def _shown(value):
    """Every value a template shows: escaped as HTML, labels displayable.

    Values marked safe (:class:`markupsafe.Markup`: the HTML of a section
    rendered from the templates) are kept as they are.
    """
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(display_label(value)))


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("sklearn_smallfair.audit", "templates"),
    autoescape=True,
    finalize=_shown,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    extensions=[_Compact],
)


def macro(name, template="report.html"):
    """A macro of ``template`` as a function returning safe HTML."""
    return getattr(_ENV.get_template(template).module, name)


def render_template(name, **context):
    """The text of template ``name`` rendered with ``context``."""
    return _ENV.get_template(name).render(**context)


# =====================================================================================
# values shown
# =====================================================================================
def describe(metric):
    try:
        return get_metric(metric).description
    except ValueError:  # pragma: no cover - audited metrics are known
        return metric


def fmt_p(p):
    if np.isnan(p):
        return "undefined"
    return f"{p:.1e}" if p < 1e-4 else f"{p:.2g}"


def num(x, digits=2):
    return "undefined" if np.isnan(x) else f"{x:.{digits}f}"


def _cell_text(value):
    """A table cell's text: numbers formatted, booleans in words, labels as
    :func:`plain` shows them."""
    if isinstance(value, (float, np.floating)):
        return "undefined" if np.isnan(value) else f"{value:.4g}"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    return plain(value)


def ci_text(value, low, high):
    if np.isnan(value):
        return "undefined"
    if np.isnan(low) or np.isnan(high):
        return f"{value:.3g}"
    return f"{value:.3g} [{low:.2f}, {high:.2f}]"


def table(frame, heads, *, index=None, cls="data"):
    """A table's values: readable headers with tooltips, formatted cells.

    ``heads`` maps each column to ``(header, tooltip)``; ``index`` is the
    ``(header, tooltip)`` of the row labels (``None``: no row labels).
    """
    columns = [[_cell_text(v) for v in frame[c].tolist()] for c in frame.columns]
    labels = [plain(label) for label in frame.index]
    return {
        "cls": cls,
        "index": index,
        "heads": [heads[c] for c in frame.columns],
        "rows": list(zip(labels, zip(*columns))),
    }


def page(title, meta, body, css="", *, stylesheets=()):
    """A whole self-contained page: ``title`` and ``meta`` (text, escaped by the
    template), ``body`` (HTML), the template style sheets ``stylesheets`` and
    the CSS ``css`` added to the page's own."""
    return render_template(
        "page.html",
        title=title,
        meta=meta,
        body=Markup(body),
        css=Markup(css),
        stylesheets=list(stylesheets),
    )
