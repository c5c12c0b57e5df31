"""Sphinx directive ``metric-catalogue``: the metric table, built from the registry.

Usage in reStructuredText::

    .. metric-catalogue::
       :n: 12

Every row comes from :func:`sklearn_smallfair.metrics.get_metric` (name, aliases,
family, description, ``greater_is_better``). The "undefined matrices" column
states the closed form of the number of matrices of size ``n`` on which the
metric is undefined; at build time each closed form is checked against
:func:`sklearn_smallfair.metrics.count_undefined` for ``n = 1 .. 30`` (and for
unequal pairs of sizes for two-group metrics), and a mismatch is reported as a
Sphinx warning, which fails a ``-W`` build. The last column is the count itself
for the ``:n:`` given.
"""

from math import comb
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_CHECK_SIZES = range(1, 31)
_CHECK_PAIRS = ((1, 2), (3, 7), (12, 5), (20, 30))


def _n_matrices(n):
    return comb(n + 3, 3)


def _a(n):
    # matrices of size n with a given cell equal to 0
    return comb(n + 2, 2)


# closed forms: (text, function of n or of (n1, n2) for two-group metrics)
_BY_NAME = {
    "f1": ("1", lambda n: 1),
    "f1_original": ("C(n+2, 2) (TP = 0)", _a),
    "mcc": ("4n", lambda n: 4 * n),
    "pt": ("by enumeration", None),
    "mb": ("0", lambda n: 0),
    "ofi": ("0 (pairs)", lambda n1, n2: 0),
    "te": (
        "A1·N2 + N1·A2 − A1·A2 (pairs; FP = 0 in either group)",
        lambda n1, n2: (
            _a(n1) * _n_matrices(n2) + _n_matrices(n1) * _a(n2) - _a(n1) * _a(n2)
        ),
    ),
}
_BY_FAMILY = {
    "binomial": ("0", lambda n: 0),
    "joint_ratio": ("n + 1 (denominator 0)", lambda n: n + 1),
}


def _closed_form(metric):
    if metric.name in _BY_NAME:
        return _BY_NAME[metric.name]
    if metric.family in _BY_FAMILY:
        return _BY_FAMILY[metric.family]
    return ("by enumeration", None)


def _escape(text):
    for char in "\\*`|_":
        text = text.replace(char, "\\" + char)
    return text


def _definition(description):
    name, sep, formula = description.partition(": ")
    if not sep:
        return _escape(description)
    return f"{_escape(name)}: ``{formula}``"


def _direction(metric):
    if metric.greater_is_better is None and metric.n_groups == 2:
        return "— (difference; 0 is parity)"
    return {True: "yes", False: "no (lower is better)"}.get(
        metric.greater_is_better, "— (descriptive)"
    )


class MetricCatalogue(SphinxDirective):
    """Render the registry as a list-table with verified undefined counts."""

    has_content = False
    option_spec: ClassVar[dict] = {"n": directives.positive_int}

    def run(self):
        from sklearn_smallfair.metrics import count_undefined, get_metric, metric_names

        n = self.options.get("n", 12)
        location = self.get_location()
        lines = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 14 10 36 10 18 12",
            "",
            "   * - Name (aliases)",
            "     - Family",
            "     - Definition",
            "     - Greater is better",
            "     - Undefined matrices of size n",
            f"     - n = {n} (of {_n_matrices(n)}; pairs: of {_n_matrices(n) ** 2})",
        ]
        for name in metric_names():
            metric = get_metric(name)
            text, formula = _closed_form(metric)
            two_group = metric.n_groups == 2
            if formula is not None:
                cases = _CHECK_PAIRS if two_group else _CHECK_SIZES
                for case in cases:
                    args = case if two_group else (case,)
                    expected = formula(*args)
                    got = count_undefined(name, case)
                    if got != expected:
                        logger.warning(
                            "metric-catalogue: closed form %r of %r gives %d for n=%r "
                            "but count_undefined returns %d",
                            text,
                            name,
                            expected,
                            case,
                            got,
                            location=location,
                        )
            aliases = ", ".join(metric.aliases)
            label = f"``{name}``" + (f" ({_escape(aliases)})" if aliases else "")
            lines += [
                f"   * - {label}",
                f"     - {metric.family}",
                f"     - {_definition(metric.description)}",
                f"     - {_direction(metric)}",
                f"     - {_escape(text)}",
                f"     - {count_undefined(name, n)}",
            ]
        container = nodes.container()
        content = StringList(lines, source="metric-catalogue")
        self.state.nested_parse(content, 0, container)
        return container.children


def setup(app):
    app.add_directive("metric-catalogue", MetricCatalogue)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
