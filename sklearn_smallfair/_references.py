"""Reference confusion matrices: the matrix each group is compared with, and the
warning when a reference is too small or degenerate to serve as a prior or a null
law."""

import numpy as np

from ._params import REFERENCE, validate_params
from ._validation import _CELL_NAMES, check_counts, format_label, format_labels

__all__ = [
    "align_by_label",
    "is_default_index",
    "reference_counts",
    "warn_small_references",
]


def _is_explicit_counts(reference):
    return isinstance(reference, (list, tuple, np.ndarray)) or hasattr(
        reference, "to_numpy"
    )


@validate_params(
    {"counts": ["array-like"], "reference": REFERENCE, "groups": ["array-like", None]}
)
def reference_counts(counts, reference="rest", *, groups=None):
    """Reference confusion matrix for each group.

    Parameters
    ----------
    counts : array-like of shape (n_groups, 4)
        Per-group counts ``(TP, FN, FP, TN)``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        - ``"rest"``: leave-one-group-out, ``total - counts[g]``;
        - ``"total"``: all groups together (including the group itself);
        - a label in ``groups``: that group's matrix for every group;
        - array-like of shape (4,) or (n_groups, 4): explicit reference counts.

        The strings ``"rest"`` and ``"total"`` take precedence over group labels.
    groups : array-like of shape (n_groups,), default=None
        Group labels, needed when ``reference`` names a group.

    Returns
    -------
    reference_counts : ndarray of shape (n_groups, 4)
        The reference matrix ``(TP, FN, FP, TN)`` of each group.

    Raises
    ------
    ValueError
        If a reference matrix has zero total (e.g. ``"rest"`` with a single group).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair import reference_counts
    >>> counts = np.array([[1, 2, 3, 4], [10, 20, 30, 40]])
    >>> reference_counts(counts)
    array([[10, 20, 30, 40],
           [ 1,  2,  3,  4]])
    >>> reference_counts(counts, "b", groups=["a", "b"])
    array([[10, 20, 30, 40],
           [10, 20, 30, 40]])
    """
    counts = check_counts(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must have shape (n_groups, 4), got {counts.shape}.")
    n_groups = counts.shape[0]
    labels = None if groups is None else np.asarray(groups)
    if labels is not None and labels.shape != (n_groups,):
        raise ValueError(
            f"groups must hold one label per row of counts ({n_groups}); got shape "
            f"{labels.shape}."
        )
    if isinstance(reference, str) and reference == "rest":
        ref = counts.sum(axis=0) - counts
        if ref.dtype.kind == "f":
            ref = np.maximum(ref, 0.0)  # rounding of weighted sums
    elif isinstance(reference, str) and reference == "total":
        ref = np.broadcast_to(counts.sum(axis=0), counts.shape).copy()
    elif _is_explicit_counts(reference):
        ref = check_counts(align_by_label(reference, labels), name="reference")
        if ref.shape not in ((4,), (n_groups, 4)):
            raise ValueError(
                f"explicit reference counts must have shape (4,) or ({n_groups}, 4); "
                f"got {ref.shape}."
            )
        ref = np.broadcast_to(ref, counts.shape).copy()
    else:
        if labels is None:
            raise ValueError(
                f"reference={reference!r} names a group, so pass groups=..."
            )
        match = np.flatnonzero(labels == reference) if labels.size else []
        if len(match) != 1:
            raise ValueError(
                f"reference={reference!r} is not 'rest', 'total', a group label or "
                f"explicit counts; the groups are {format_labels(labels)}."
            )
        ref = np.broadcast_to(counts[match[0]], counts.shape).copy()
    zero = ref.sum(axis=1) <= 0
    if zero.any():
        which = format_labels(
            labels[zero] if labels is not None else np.flatnonzero(zero)
        )
        hint = (
            " With reference='rest' this happens when there is only one group or "
            "every other group is empty."
            if isinstance(reference, str) and reference == "rest"
            else ""
        )
        raise ValueError(
            f"the reference matrix of group(s) {which} has zero total, so it has no "
            f"proportions to smooth or test against.{hint}"
        )
    return ref


def is_default_index(index):
    """Whether a pandas index carries no labels (``0, 1, ..., n - 1``)."""
    import pandas as pd

    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def align_by_label(reference, labels, *, name="reference"):
    """Per-group reference rows in the order of ``labels``, matched by index label.

    A pandas ``DataFrame`` with one row per group is matched to the groups by its
    index, never by position: a reordered frame gives the same references, and an
    index that misses a group or names an unknown one is an error. A frame whose
    index carries no labels (``0, 1, ..., n - 1``), a frame of one row (one
    reference for every group), a frame for groups without labels (its index
    then names them) and arrays are returned unchanged (read by position).

    Parameters
    ----------
    reference : array-like or pandas DataFrame
        Explicit reference counts.
    labels : array-like of shape (n_groups,) or None
        The groups' labels, in the order of the counts.
    name : str, default="reference"
        The argument's name in messages.

    Returns
    -------
    reference : array-like
        ``reference``, its rows reordered to follow ``labels`` when matched by
        label.
    """
    index = getattr(reference, "index", None)
    if (
        index is None
        or getattr(reference, "ndim", 1) != 2
        or len(index) == 1
        or is_default_index(index)
    ):
        return reference
    if labels is None:  # the counts have no labels: the frame's index names them
        return reference
    import pandas as pd

    if index.has_duplicates:
        raise ValueError(
            f"{name} names group(s) "
            f"{format_labels(np.asarray(index[index.duplicated()].unique()))} more "
            f"than once; pass one reference row per group."
        )
    labels = pd.Index(np.asarray(labels, dtype=object), dtype=object)
    position = index.get_indexer(labels)
    unknown = index.difference(labels, sort=False)
    if (position < 0).any() or len(unknown):
        missing = np.asarray(labels[position < 0])
        parts = []
        if missing.size:
            parts.append(f"it has no row for group(s) {format_labels(missing)}")
        if len(unknown):
            parts.append(
                f"it has rows for unknown group(s) {format_labels(np.asarray(unknown))}"
            )
        raise ValueError(
            f"{name} is matched to the groups by its index, and {'; '.join(parts)}. "
            f"The groups are {format_labels(np.asarray(labels))}; index {name} by "
            f"these labels (or pass an array in the groups' order)."
        )
    return reference.iloc[position]


def _reference_names(shape, labels):
    """Names of the references of leading shape ``shape``, as shown in warnings."""
    if labels is not None:
        labels = np.asarray(labels, dtype=object)
        if labels.shape != shape:
            raise ValueError(
                f"labels must hold one label per reference matrix, shape {shape}; "
                f"got shape {labels.shape}."
            )

        def named(index):
            label = labels[index]
            if isinstance(label, str):
                return f"group {format_label(label)}"
            return f"group labelled {format_label(label)}"

        return named
    if len(shape) == 1:
        return lambda index: f"the group at position {index[0]}"
    return lambda index: f"the reference at position {index}"


def _people(total):
    """A number of people as shown in messages: ``1,234``, ``12.5`` or ``0.004``
    (weighted counts)."""
    if float(total).is_integer():
        return f"{int(total):,}"
    return f"{total:,.1f}" if total >= 1 else f"{total:.3g}"


def warn_small_references(
    reference_counts,
    labels=None,
    min_reference=100,
    *,
    what="Cross-Prior Smoothing",
    hint="",
    parameter="min_reference",
    stacklevel=2,
    cell_names=None,
    reference=None,
):
    """Warn when reference matrices are too small, or degenerate, to be a prior.

    A reference used as a prior (Cross-Prior Smoothing) or as a null law (the
    MATCH test) should be known much better than the small group it serves. Two
    :class:`~sklearn_smallfair.exceptions.ReferenceWarning` are possible, each
    naming the references concerned (by group label, else by position) and the
    fix:

    - a reference with fewer than ``min_reference`` people: its proportions are
      almost as noisy as a small group's;
    - a reference with an empty cell: that cell has zero prior mass, so a
      group's count in it can only be shrunk toward 0, and a rate built on it is
      pulled toward 0 or 1 with no uncertainty. When that cell is empty in
      every reference, the data hold no one in it (constant predictions, a
      class never predicted): the message says so, since no other reference
      would fill it.

    At most five references are named, then how many in all.

    Parameters
    ----------
    reference_counts : array-like of shape (..., 4)
        Reference matrices ``(TP, FN, FP, TN)``, one per group (or a single one).
    labels : array-like of shape (...), default=None
        Group label of each reference matrix (the leading shape of
        ``reference_counts``); references are named by position when ``None``.
    min_reference : int, default=100
        Fewest people a reference should hold; ``0`` disables the size check
        (empty cells are still reported).
    what : str, default="Cross-Prior Smoothing"
        What the reference is used for, to start the message.
    hint : str, default=""
        One more remedy specific to the caller (e.g. ``"a smaller lam"``).
    parameter : str or None, default="min_reference"
        The caller's parameter that sets ``min_reference``, named in the message
        (with how to silence it); ``None`` when the caller has none.
    stacklevel : int, default=2
        Passed to :func:`warnings.warn` (2: the function calling this one is
        shown).
    cell_names : sequence of str, default=None
        Names of the cells of other matrices than the binary ``(TP, FN, FP, TN)``
        (e.g. the ``K^2`` cells of flattened K x K matrices); the last axis of
        ``reference_counts`` then has ``len(cell_names)`` cells.
    reference : str, scalar, array-like or None, default=None
        The caller's ``reference`` setting, when it has one: a remedy it names
        is not suggested again (``"rest"`` and ``"total"`` are then not offered
        as larger references).

    Returns
    -------
    flagged : ndarray of bool, shape (...)
        References that were reported (too small or with an empty cell).

    Examples
    --------
    >>> import warnings
    >>> from sklearn_smallfair._references import warn_small_references
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_small_references([[30, 10, 5, 15], [500, 0, 200, 300]],
    ...                           labels=["a", "b"])
    array([ True,  True])
    >>> for w in caught:
    ...     print(str(w.message)[:72], "...")
    Cross-Prior Smoothing: the reference of group 'a' (60 people in the refe ...
    Cross-Prior Smoothing: the reference of group 'b' (FN = 0) has an empty ...
    """
    import warnings

    from .exceptions import ReferenceWarning

    if cell_names is None:
        ref = check_counts(reference_counts, name="reference_counts").astype(np.float64)
        cell_names = _CELL_NAMES
    else:
        ref = np.asarray(reference_counts, dtype=np.float64)
    shape = ref.shape[:-1]
    name = _reference_names(shape, labels)
    totals = ref.sum(axis=-1)
    small = totals < min_reference
    empty = (ref == 0).any(axis=-1)
    pooled = isinstance(reference, str) and reference in ("rest", "total")
    remedies = [
        "a published population table as the reference"
        if pooled
        else "a larger reference (reference='rest' or 'total' rather than one "
        "group, or a published population table)"
    ]
    if hint:
        remedies.append(hint)

    def listing(mask, describe):
        """``(subject, verb)``: the references in ``mask``, described."""
        where = [tuple(int(i) for i in index) for index in np.argwhere(mask)]
        if not shape:  # a single reference matrix: its own size is the one shown
            return f"the reference{describe(())}".replace(
                " in the reference", ""
            ), "has"
        parts = [f"{name(index)}{describe(index)}" for index in where[:5]]
        more = f", ... ({len(where)} in all)" if len(where) > 5 else ""
        if len(where) == 1:
            return f"the reference of {parts[0]}", "has"
        return f"the references of {', '.join(parts)}{more}", "have"

    if small.any():
        which, verb = listing(
            small,
            lambda index: f" ({_people(totals[index])} people in the reference)",
        )
        threshold = f"{parameter}={min_reference}" if parameter else min_reference
        silence = (
            f"; set {parameter}=0 if this reference is known to be reliable"
            if parameter
            else ""
        )
        warnings.warn(
            f"{what}: {which} {verb} fewer than {threshold} people, so "
            f"{'its' if verb == 'has' else 'their'} proportions are almost as "
            f"noisy as a small group's and make a poor prior. Use "
            f"{' or '.join(remedies)}{silence}.",
            ReferenceWarning,
            stacklevel=stacklevel,
        )
    nowhere = np.zeros(ref.shape[-1], dtype=bool)
    flat = ref.reshape(-1, ref.shape[-1])
    # one matrix repeated (a reference group) says nothing of the other groups
    if flat.shape[0] > 1 and (pooled or (flat != flat[0]).any()):
        nowhere = (flat == 0).all(axis=0)
    if nowhere.any():
        zero = " and ".join(f"{c} = 0" for c, z in zip(cell_names, nowhere) if z)
        warnings.warn(
            f"{what}: every reference has {zero}: no one in the data is in such a "
            f"cell (for instance the predictions are constant, or a class is "
            f"never predicted or never true), so a rate built on it is undefined, "
            f"0 or 1 in every group and no other reference can fill it. Check the "
            f"predictions and labels passed.",
            ReferenceWarning,
            stacklevel=stacklevel,
        )
        empty = (ref[..., ~nowhere] == 0).any(axis=-1)
    if empty.any():

        def cells(index):
            zero = [
                c
                for c, v, z in zip(cell_names, ref[index], nowhere)
                if v == 0 and not z
            ]
            return f" ({', '.join(f'{c} = 0' for c in zero)})"

        which, verb = listing(empty, cells)
        warnings.warn(
            f"{what}: {which} {verb} an empty cell, which gets no prior mass: a "
            f"group's count in that cell is only shrunk toward 0, and a rate built "
            f"on it (e.g. TPR = TP / (TP + FN) when FN = 0) is pulled toward 0 or "
            f"1 with no uncertainty. Use {' or '.join(remedies)}, or add a "
            f"pseudo-count to the reference (reference_counts + 0.5).",
            ReferenceWarning,
            stacklevel=stacklevel,
        )
    return small | empty
