"""Lazy access to matplotlib, an optional dependency (extra ``plot``)."""

__all__ = ["_check_matplotlib"]


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
            f"{caller} needs matplotlib; install it with "
            f"`pip install sklearn-smallfair[plot]` (or `pip install matplotlib`)."
        ) from exc
    return plt
