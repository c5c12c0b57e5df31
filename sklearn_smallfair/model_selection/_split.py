"""GroupDownsamplingCV: draw small subgroups of each group, the rest as reference."""

import numpy as np
import pandas as pd
from sklearn.utils.validation import _num_samples

from .._compat import (
    BaseCrossValidator,
    GroupsConsumerMixin,
    validate_parameter_constraints,
)
from .._groups import check_sensitive_features
from .._params import BOOLEAN, RANDOM_STATE, Whole
from .._random import child_rng, resolve_seed
from .._validation import format_label, format_labels

__all__ = ["GroupDownsamplingCV"]


def _check_sizes(sizes):
    try:
        values = np.asarray(list(sizes))
    except TypeError:
        raise TypeError(
            f"sizes must be an iterable of integers; got {sizes!r}."
        ) from None
    if values.size == 0:
        raise ValueError("sizes is empty; pass at least one subgroup size.")
    if values.dtype.kind not in "iu" or (values < 1).any():
        raise ValueError(f"sizes must be integers >= 1; got {list(values)}.")
    return values.astype(np.int64)


class GroupDownsamplingCV(GroupsConsumerMixin, BaseCrossValidator):
    """Splitter for downsampling experiments: small test subgroups, the rest as train.

    For each target group, each size ``n`` in ``sizes`` and each of ``n_repeats``
    repeats, yields ``(train, test)`` where ``test`` is ``n`` rows of that group
    (drawn without replacement unless ``replace=True``) and ``train`` is every row
    outside the group: the group's leave-one-group-out reference. Rows of the
    group that are not drawn are in neither.

    ``groups`` reaches :meth:`split` through scikit-learn's metadata routing (the
    splitter requests it by default) or as ``groups=`` when routing is off.

    Parameters
    ----------
    sizes : iterable of int, default=range(5, 151)
        Subgroup sizes.
    n_repeats : int, default=10
        Draws per group and size.
    target_groups : sequence or None, default=None
        Groups to downsample; ``None`` uses every group, in sorted order.
    replace : bool, default=False
        Draw with replacement (a size may then exceed the group's size).
    random_state : int, numpy Generator, RandomState or None, default=0
        With an int, every call of :meth:`split` yields the same splits; the draws
        of a (group, size) do not depend on the other groups or sizes requested.
        ``None`` or a generator give new draws at each call.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_smallfair.model_selection import GroupDownsamplingCV
    >>> groups = np.array(["a"] * 6 + ["b"] * 4)
    >>> cv = GroupDownsamplingCV(sizes=[2, 3], n_repeats=2, random_state=0)
    >>> cv.get_n_splits(groups=groups)
    8
    >>> train, test = next(cv.split(np.zeros((10, 1)), groups=groups))
    >>> train, len(test), bool(np.isin(test, np.arange(6)).all())
    (array([6, 7, 8, 9]), 2, True)
    >>> cv.split_info(groups=groups).head(3)
       split group  size  repeat
    0      0     a     2       0
    1      1     a     2       1
    2      2     a     3       0
    """

    def __init__(
        self,
        *,
        sizes=range(5, 151),
        n_repeats=10,
        target_groups=None,
        replace=False,
        random_state=0,
    ):
        self.sizes = sizes
        self.n_repeats = n_repeats
        self.target_groups = target_groups
        self.replace = replace
        self.random_state = random_state

    _parameter_constraints: dict = {
        "sizes": ["array-like", range],
        "n_repeats": [Whole(1, None, closed="left")],
        "target_groups": ["array-like", None],
        "replace": BOOLEAN,
        "random_state": RANDOM_STATE,
    }

    def _validate_params(self):
        validate_parameter_constraints(
            self._parameter_constraints,
            {name: getattr(self, name) for name in self._parameter_constraints},
            caller_name=type(self).__name__,
        )

    def _check_params(self):
        self._validate_params()
        return _check_sizes(self.sizes)

    def _targets(self, labels):
        if self.target_groups is None:
            return np.arange(labels.shape[0])
        wanted = list(self.target_groups)
        index = {v: i for i, v in enumerate(labels.tolist())}
        missing = [v for v in wanted if v not in index]
        if missing:
            raise ValueError(
                f"target_groups {missing} are not among the groups "
                f"{format_labels(labels)}."
            )
        return np.array([index[v] for v in wanted], dtype=np.int64)

    def _plan(self, X, groups):
        """Validate everything and return (labels, codes, targets, sizes)."""
        sizes = self._check_params()
        if groups is None:
            raise ValueError(
                "GroupDownsamplingCV needs the group of every row: pass groups=... "
                "to split (or, with metadata routing, params={'groups': groups} to "
                "cross_validate)."
            )
        n_samples = _num_samples(groups) if X is None else _num_samples(X)
        labels, codes, _ = check_sensitive_features(groups, n_samples)
        targets = self._targets(labels)
        if labels.shape[0] < 2:
            raise ValueError(
                "GroupDownsamplingCV needs at least two groups: the rows outside a "
                "target group are its reference (train)."
            )
        counts = np.bincount(codes, minlength=labels.shape[0])
        if not self.replace:
            too_big = [
                f"{format_label(labels[t])} (size {counts[t]})"
                for t in targets
                if counts[t] < sizes.max()
            ]
            if too_big:
                raise ValueError(
                    f"sizes up to {sizes.max()} exceed group(s) {', '.join(too_big)}; "
                    f"drop those sizes, choose target_groups, or pass replace=True."
                )
        return labels, codes, targets, sizes

    def split(self, X, y=None, groups=None):
        """Generate ``(train, test)`` indices.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; only its number of rows is used.
        y : array-like of shape (n_samples,), default=None
            Ignored.
        groups : array-like of shape (n_samples,) or (n_samples, n_features)
            Group labels (several columns define intersectional groups).

        Yields
        ------
        train : ndarray of int
            Every row outside the target group.
        test : ndarray of int
            ``n`` rows of the target group.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_smallfair.model_selection import GroupDownsamplingCV
        >>> groups = np.array(["a"] * 6 + ["b"] * 4)
        >>> cv = GroupDownsamplingCV(sizes=[2], n_repeats=1, target_groups=["b"])
        >>> [(train.tolist(), len(test)) for train, test in cv.split(
        ...     np.zeros((10, 1)), groups=groups)]
        [([0, 1, 2, 3, 4, 5], 2)]
        """
        labels, codes, targets, sizes = self._plan(X, groups)
        base = resolve_seed(self.random_state)
        order = np.argsort(codes, kind="stable")
        starts = np.concatenate(
            [[0], np.cumsum(np.bincount(codes, minlength=len(labels)))]
        )
        for t in targets:
            members = order[starts[t] : starts[t + 1]]
            train = np.flatnonzero(codes != t)
            for n in sizes:
                rng = child_rng(base, labels[t], int(n))
                if self.replace:
                    picks = rng.integers(0, members.shape[0], size=(self.n_repeats, n))
                else:  # n distinct rows per repeat: the first n of a random order
                    keys = rng.random((self.n_repeats, members.shape[0]))
                    picks = np.argpartition(keys, n - 1, axis=1)[:, :n]
                for test in members[picks]:
                    yield train, test

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of splits: target groups x sizes x repeats.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Ignored.
        y : array-like of shape (n_samples,), default=None
            Ignored.
        groups : array-like of shape (n_samples,) or (n_samples, n_features), \
                default=None
            Group labels; needed unless ``target_groups`` is given.

        Returns
        -------
        n_splits : int
            The number of ``(train, test)`` pairs :meth:`split` yields.

        Examples
        --------
        >>> from sklearn_smallfair.model_selection import GroupDownsamplingCV
        >>> cv = GroupDownsamplingCV(sizes=[5, 10], n_repeats=3, target_groups=["a"])
        >>> cv.get_n_splits()
        6
        """
        sizes = self._check_params()
        if self.target_groups is not None:
            n_targets = len(list(self.target_groups))
        else:
            if groups is None:
                raise ValueError(
                    "get_n_splits needs groups=... when target_groups is None."
                )
            labels, _, _ = check_sensitive_features(groups, _num_samples(groups))
            n_targets = labels.shape[0]
        return n_targets * sizes.shape[0] * self.n_repeats

    def split_info(self, X=None, y=None, groups=None):
        """Which group, size and repeat each split is, in the order of :meth:`split`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Training data; only its number of rows is used (``groups`` gives it
            when ``X`` is None).
        y : array-like of shape (n_samples,), default=None
            Ignored.
        groups : array-like of shape (n_samples,) or (n_samples, n_features)
            Group labels (several columns define intersectional groups).

        Returns
        -------
        info : pandas.DataFrame
            Columns ``split``, ``group``, ``size``, ``repeat``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_smallfair.model_selection import GroupDownsamplingCV
        >>> groups = np.array(["a"] * 6 + ["b"] * 4)
        >>> cv = GroupDownsamplingCV(sizes=[2, 3], n_repeats=1)
        >>> cv.split_info(groups=groups)
           split group  size  repeat
        0      0     a     2       0
        1      1     a     3       0
        2      2     b     2       0
        3      3     b     3       0
        """
        labels, _, targets, sizes = self._plan(X, groups)
        g = np.repeat(targets, sizes.shape[0] * self.n_repeats)
        s = np.tile(np.repeat(sizes, self.n_repeats), targets.shape[0])
        r = np.tile(np.arange(self.n_repeats), targets.shape[0] * sizes.shape[0])
        return pd.DataFrame(
            {"split": np.arange(g.shape[0]), "group": labels[g], "size": s, "repeat": r}
        )
