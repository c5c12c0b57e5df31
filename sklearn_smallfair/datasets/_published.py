"""Published per-group confusion matrices (COMPAS, Folktables)."""

from importlib import resources

import pandas as pd

from .._confusion import CELLS
from .._params import BOOLEAN, StrOptions, validate_params

_FILE = "published_group_confusion_matrices.csv"
_DATASETS = ("COMPAS", "Folktables")
_DATASET = [StrOptions(set(_DATASETS)), None]


@validate_params({"dataset": _DATASET, "include_all": BOOLEAN})
def load_published_confusion_matrices(dataset=None, *, include_all=True):
    """Load the published per-group confusion matrices embedded in the package.

    - ``COMPAS``: ProPublica's violent-recidivism score tables ("High" = violent
      score not Low) for Black, White and all 6,454 defendants (the ``ALL`` row
      includes every race, so ``ALL`` minus a group is that group's
      leave-one-group-out reference).
    - ``Folktables``: one random-forest run on ACS 2017 California income
      (>= 50k) for 8 race groups; ``ALL`` is their sum.

    Parameters
    ----------
    dataset : {"COMPAS", "Folktables"} or None, default=None
        One dataset, or ``None`` for both.
    include_all : bool, default=True
        Keep the ``ALL`` rows (the whole population of each dataset). Drop them
        (``include_all=False``) before passing the table as per-group ``counts``,
        or ``ALL`` would be treated as one more group.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``dataset``, ``group``, ``TP``, ``FN``, ``FP``, ``TN`` (int64).

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> compas = load_published_confusion_matrices("COMPAS")
    >>> compas
      dataset  group   TP   FN    FP    TN
    0  COMPAS  Black  273  170  1043  1692
    1  COMPAS  White   77  129   380  1679
    2  COMPAS    ALL  389  347  1597  4121
    """
    with resources.files(__package__).joinpath("data", _FILE).open("r") as fh:
        table = pd.read_csv(fh, dtype={c: "int64" for c in CELLS})
    table = table.astype({"dataset": object, "group": object})
    if dataset is not None:
        table = table[table["dataset"] == dataset]
    if not include_all:
        table = table[table["group"] != "ALL"]
    return table.reset_index(drop=True)


@validate_params({"dataset": _DATASET})
def load_published_groups(dataset=None):
    """Published groups with their leave-one-group-out reference matrices.

    The inputs of the published downsampling and smoothing experiments: each
    group's confusion matrix, labelled ``"dataset|group"``, and its reference,
    the dataset's ``ALL`` row minus the group. (For COMPAS, ``ALL`` counts every
    race, so the reference is not the sum of the other listed groups.)

    Parameters
    ----------
    dataset : {"COMPAS", "Folktables"} or None, default=None
        One dataset, or ``None`` for both (10 groups).

    Returns
    -------
    counts : pandas.DataFrame
        Columns ``TP``, ``FN``, ``FP``, ``TN``; index ``group`` with labels such as
        ``"COMPAS|Black"``. Pass it as ``counts=``.
    reference : pandas.DataFrame
        The reference matrix of each group, same index and columns. Pass it as
        ``reference=``.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_published_groups
    >>> counts, reference = load_published_groups("COMPAS")
    >>> counts
                   TP   FN    FP    TN
    group
    COMPAS|Black  273  170  1043  1692
    COMPAS|White   77  129   380  1679
    >>> reference
                   TP   FN   FP    TN
    group
    COMPAS|Black  116  177  554  2429
    COMPAS|White  312  218  1217  2442
    """
    table = load_published_confusion_matrices(dataset)
    is_all = table["group"] == "ALL"
    totals = table[is_all].set_index("dataset")[list(CELLS)]
    groups = table[~is_all]
    index = pd.Index(groups["dataset"] + "|" + groups["group"], name="group")
    counts = pd.DataFrame(groups[list(CELLS)].to_numpy(), index=index, columns=CELLS)
    reference = pd.DataFrame(
        totals.loc[groups["dataset"]].to_numpy() - counts.to_numpy(),
        index=index,
        columns=CELLS,
    )
    return counts, reference
