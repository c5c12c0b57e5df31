"""Lazy access to matplotlib, an optional dependency (extra ``plot``)."""

from ._output import display_label

__all__ = ["_check_matplotlib", "plot_text"]

#: Characters of a label drawn on a figure; a longer label is cut there.
PLOT_LABEL_LIMIT = 80


def plot_text(value):
    """A label as matplotlib text: displayable, with ``$`` kept literal.

    Control and bidirectional characters are escaped visibly
    (:func:`~sklearn_smallfair._output.display_label`); matplotlib reads text
    between two ``$`` as mathtext, so a label such as ``$\\frac$`` would otherwise
    be parsed (and fail to draw). A label longer than ``PLOT_LABEL_LIMIT``
    characters is cut (:func:`~sklearn_smallfair._output.display_label`).
    """
    return display_label(value, limit=PLOT_LABEL_LIMIT).replace("$", r"\$")


def _check_matplotlib(caller):
    """Import and return ``matplotlib.pyplot``, or explain how to install it.

    Parameters
    ----------
    caller : str
        Name of the function or method that needs matplotlib, used in the error.

    Returns
    -------
    plt : module
        ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        If matplotlib cannot be imported.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} needs matplotlib, a dependency of sklearn-smallfair that "
            f"is missing from this environment; install it with "
            f"`pip install matplotlib`."
        ) from exc
    return plt
