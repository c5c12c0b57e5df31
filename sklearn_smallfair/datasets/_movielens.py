"""MovieLens-100k read from the copy installed with the ``recbole`` package.

GroupLens' terms do not allow redistributing MovieLens, so this package does not
ship it. The ``recbole`` wheel on PyPI carries the 100k ratings as an example
data set; the loader reads them from there at run time, without importing
``recbole`` (whose dependencies, such as torch, are not needed).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from .._params import BOOLEAN, validate_params

__all__ = ["load_movielens_100k"]

_INSTALL = (
    "MovieLens-100k is read from the example data installed with the recbole "
    "package, which is not installed; install it without its dependencies with "
    "`pip install --no-deps recbole`."
)
_RELATIVE = Path("dataset_example", "ml-100k", "ml-100k.inter")
_HEADER = ["user_id:token", "item_id:token", "rating:float", "timestamp:float"]
#: number of ratings, users and items of MovieLens-100k
_SHAPE = (100_000, 943, 1682)


def _recbole_file():
    """Path of ``ml-100k.inter`` inside the installed ``recbole`` package."""
    try:
        spec = importlib.util.find_spec("recbole")
    except (ImportError, ValueError):  # pragma: no cover - broken installs
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(_INSTALL)
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _RELATIVE
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"The installed recbole package has no {_RELATIVE.as_posix()}; reinstall "
        f"it with `pip install --no-deps --force-reinstall recbole`."
    )


def _read_inter(path):
    header = pd.read_csv(path, sep="\t", nrows=0).columns.tolist()
    if header != _HEADER:
        raise ValueError(
            f"{path} is not recbole's MovieLens-100k file: its header is "
            f"{header}, expected {_HEADER}."
        )
    frame = pd.read_csv(
        path,
        sep="\t",
        header=0,
        names=["user", "item", "rating", "timestamp"],
        dtype={
            "user": np.int64,
            "item": np.int64,
            "rating": np.float64,
            "timestamp": np.float64,
        },
        engine="c",
    )
    frame["timestamp"] = frame["timestamp"].astype(np.int64)
    n, n_users, n_items = _SHAPE
    if (
        frame.shape[0] != n
        or frame["user"].nunique() != n_users
        or frame["item"].nunique() != n_items
    ):
        raise ValueError(
            f"{path} holds {frame.shape[0]} ratings of {frame['user'].nunique()} "
            f"users and {frame['item'].nunique()} items; MovieLens-100k has "
            f"{n} ratings of {n_users} users and {n_items} items."
        )
    return frame


@validate_params({"as_frame": BOOLEAN})
def load_movielens_100k(*, as_frame=False):
    """Load MovieLens-100k (100,000 ratings, 943 users, 1,682 movies).

    The ratings are read from the copy installed with the ``recbole`` package
    (``pip install --no-deps recbole``: the wheel carries the data set and
    nothing of ``recbole`` is imported). Nothing is downloaded at run time and
    the data are not part of this package: GroupLens' terms forbid
    redistributing them.

    Parameters
    ----------
    as_frame : bool, default=False
        Return a DataFrame with columns ``user``, ``item``, ``rating``,
        ``timestamp`` instead of ``(X, y)``.

    Returns
    -------
    X : ndarray of int64, shape (100000, 2)
        User ids (column 0) and movie ids (column 1), MovieLens' own ids
        (starting at 1). Only when ``as_frame=False``.
    y : ndarray of float64, shape (100000,)
        The ratings, integers 1 to 5. Only when ``as_frame=False``.
    frame : pandas.DataFrame
        The ratings with their timestamps, in file order. Only when
        ``as_frame=True``.

    Raises
    ------
    ImportError
        If ``recbole`` is not installed; the message gives the command that
        installs it.

    See Also
    --------
    load_movielens : Read any local MovieLens ratings file.
    make_dyadic_regression : Synthetic ratings in the same layout.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_movielens_100k
    >>> X, y = load_movielens_100k()  # doctest: +SKIP
    >>> X.shape, sorted(set(y))  # doctest: +SKIP
    ((100000, 2), [1.0, 2.0, 3.0, 4.0, 5.0])
    """
    frame = _read_inter(_recbole_file())
    if as_frame:
        return frame
    X = frame[["user", "item"]].to_numpy(dtype=np.int64)
    return X, frame["rating"].to_numpy(dtype=np.float64)
