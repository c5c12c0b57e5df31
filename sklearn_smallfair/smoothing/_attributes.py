"""The attributes of intersectional groups: labels ``"a|b|c"`` split into
levels and joined back, and the one-hot design of the levels."""

import numpy as np
import pandas as pd

from .._groups import _joinable


def _split_label(label):
    """Split ``"a|b|c"`` on the bars that are not escaped (``\\|`` is a bar of a
    level, ``\\\\`` a backslash), as the package joins multi-column groups."""
    parts, current, chars = [], [], iter(str(label))
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            current.append(nxt if nxt in "|\\" else ch + nxt)
        elif ch == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _join_labels(attrs):
    """``"a|b|c"`` labels of the attributes' rows, joined as the package joins
    several sensitive features (:func:`~sklearn_smallfair._groups._joinable`)."""
    return np.array(
        ["|".join(_joinable(v) for v in row) for row in attrs.itertuples(index=False)],
        dtype=object,
    )


def _attributes_from_index(index):
    """The attributes DataFrame of a MultiIndex or of ``"a|b|c"`` labels."""
    if isinstance(index, pd.MultiIndex):
        names = [
            str(n) if n is not None else f"attribute_{i}"
            for i, n in enumerate(index.names)
        ]
        return pd.DataFrame(
            {name: index.get_level_values(i) for i, name in enumerate(names)}
        ).set_axis(range(len(index)))
    if len(index) and all(isinstance(label, tuple) for label in index):
        return _attributes_from_index(pd.MultiIndex.from_tuples(list(index)))
    labels = [str(label) for label in index]
    parts = [_split_label(label) for label in labels]
    k = len(parts[0]) if parts else 0
    for label, p in zip(labels, parts):
        if len(p) != k:
            raise ValueError(
                f"group label {label!r} has {len(p)} attribute level(s) separated "
                f"by '|', but {labels[0]!r} has {k}; every label must name one "
                f"level of each attribute (or pass attributes=)."
            )
    names = _split_label(index.name) if index.name is not None else []
    if len(names) != k:
        names = [f"attribute_{i}" for i in range(k)]
    return pd.DataFrame(parts, columns=names)


def _design(attributes, categories):
    """One-hot design ``[1, levels of attribute 1, ...]`` (G, 1 + sum L)."""
    blocks = [np.ones((len(attributes), 1))]
    for name, cats in zip(attributes.columns, categories):
        codes = pd.Index(cats).get_indexer(attributes[name])
        if (codes < 0).any():
            unknown = pd.unique(attributes[name][codes < 0])
            raise ValueError(
                f"attribute {name!r} has level(s) {list(unknown)[:10]} that were "
                f"not in the groups the smoother was fitted on."
            )
        blocks.append(np.eye(len(cats))[codes])
    return np.hstack(blocks)


def _blocks(categories):
    """Column indices of each attribute's one-hot block in :func:`_design`."""
    ends = 1 + np.cumsum([len(c) for c in categories])
    return [np.arange(end - len(c), end) for c, end in zip(categories, ends)]
