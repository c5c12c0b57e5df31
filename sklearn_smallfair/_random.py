"""Random streams: one resolution of ``random_state`` and keyed child seeds.

Every random function of the package resolves ``random_state`` once with
:func:`resolve_seed` and gives each unit of work (a group, a metric, a size) its
own stream with :func:`child_seed`. A child is keyed by stable hashes of the
unit's labels, not by its position, so a group's numbers do not depend on
``n_jobs``, the joblib backend, the order of the groups or which other groups are
present.
"""

import zlib
from numbers import Integral

import numpy as np

from ._validation import format_label

__all__ = ["child_rng", "child_seed", "resolve_seed"]


def resolve_seed(random_state, name="random_state"):
    """A :class:`numpy.random.SeedSequence` from a ``random_state`` argument.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, RandomState or SeedSequence
        ``None`` draws fresh entropy; a non-negative int is a fixed seed; a
        generator is consumed once (four words) to seed the sequence.
    name : str, default="random_state"
        The argument's name in error messages.

    Returns
    -------
    seed : numpy.random.SeedSequence

    Raises
    ------
    TypeError
        For a bool, a float or any other type.
    ValueError
        For a negative int.
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63, size=4))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**31, size=4))
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, Integral) and not isinstance(
        random_state, (bool, np.bool_)
    ):
        if random_state < 0:
            raise ValueError(
                f"{name} must be a non-negative int (or None, a numpy Generator, "
                f"RandomState or SeedSequence); got {random_state!r}."
            )
        return np.random.SeedSequence(int(random_state))
    raise TypeError(
        f"{name} must be None, a non-negative int, a numpy Generator, RandomState "
        f"or SeedSequence; got {random_state!r} of type {type(random_state).__name__}."
    )


def _key(value):
    """A stable 32-bit key of a label, a name or a whole number."""
    if isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value) & 0xFFFFFFFF
    return zlib.crc32(repr(format_label(value)).encode())


def child_seed(base, *keys):
    """A child of ``base`` keyed by stable hashes of ``keys`` (labels, names, sizes).

    Unlike positional ``SeedSequence.spawn``, the stream of a unit of work does not
    depend on which other units exist or on their order.

    Parameters
    ----------
    base : numpy.random.SeedSequence
        The resolved seed of the call (:func:`resolve_seed`).
    *keys : str, int or group label
        What identifies the unit of work.

    Returns
    -------
    seed : numpy.random.SeedSequence
    """
    return np.random.SeedSequence(
        base.entropy,
        spawn_key=(*base.spawn_key, *(_key(k) for k in keys)),
        pool_size=base.pool_size,
    )


def child_rng(base, *keys):
    """A :class:`numpy.random.Generator` on :func:`child_seed` ``(base, *keys)``."""
    return np.random.default_rng(child_seed(base, *keys))
