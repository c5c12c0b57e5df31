"""Power of the separation and comparative separation tests by simulation.

:func:`simulate_separation_power` draws data sets from the 8-cell law
``P(C, Y, A)`` (see :mod:`._power`) and counts how often each test rejects,
which checks the closed forms of :func:`separation_power` and
:func:`comparative_separation_power` at small sizes.
"""

import numpy as np

from .._params import BOOLEAN, RANDOM_STATE, Whole, validate_params
from .._random import child_rng, resolve_seed
from ._power import (
    _CELL_ORDER,
    _CELL_PROBS,
    _COMPARATIVE_TESTS,
    _LEVEL,
    _SEPARATION_TESTS,
    _SIM_SIZES,
    _check_cell_probs,
    _check_sizes,
    _package,
)
from ._results import rejects
from ._wald import wald_test

_SIM_CHUNK = 50_000  # simulated repeats per block (memory ~ 64 * 8 bytes each)

__all__ = ["simulate_separation_power"]


# --- simulation -----------------------------------------------------------------
def _pair_design():
    """Indicator matrices mapping the 64 ordered pair types to (a, b) counts.

    Returns ``(pairs, correct)`` of shape (64, 4): column ``k`` of ``pairs``
    marks the pair types with different labels whose higher item (``Y=1``) is
    in group ``a`` and lower item in group ``b``, ``k = 2 (1 - a) + (1 - b)``
    (order ``(1,1), (1,0), (0,1), (0,0)``); ``correct`` marks those among them
    ordered correctly (``C_higher = 1`` and ``C_lower = 0``).
    """
    cya = np.asarray(_CELL_ORDER)
    c, y, a = cya[:, 0], cya[:, 1], cya[:, 2]
    ci, cj = np.meshgrid(c, c, indexing="ij")
    yi, yj = np.meshgrid(y, y, indexing="ij")
    ai, aj = np.meshgrid(a, a, indexing="ij")
    keep = (yi != yj).ravel()
    i_higher = (yi == 1).ravel()
    c_hi = np.where(i_higher, ci.ravel(), cj.ravel())
    c_lo = np.where(i_higher, cj.ravel(), ci.ravel())
    a_hi = np.where(i_higher, ai.ravel(), aj.ravel())
    a_lo = np.where(i_higher, aj.ravel(), ai.ravel())
    kind = 2 * (1 - a_hi) + (1 - a_lo)
    pairs = (keep[:, None] & (kind[:, None] == np.arange(4))).astype(np.int64)
    correct = pairs * ((c_hi == 1) & (c_lo == 0)).astype(np.int64)[:, None]
    return pairs, correct


def _simulate_separation(p, n, alpha, n_repeats, rng):
    rejections = np.zeros(3, dtype=np.int64)
    for start in range(0, n_repeats, _SIM_CHUNK):
        size = min(_SIM_CHUNK, n_repeats - start)
        g = rng.multinomial(n, p, size=size).reshape(size, 2, 4)
        pos = g[:, :, 0] + g[:, :, 1]
        neg = g[:, :, 2] + g[:, :, 3]
        _, p_t = wald_test(g[:, 0, 0], pos[:, 0], g[:, 1, 0], pos[:, 1])
        _, p_f = wald_test(g[:, 0, 2], neg[:, 0], g[:, 1, 2], neg[:, 1])
        rejections += _count_rejections(p_t, p_f, alpha)
    return rejections


def _simulate_comparative(p, n_pairs, alpha, n_repeats, rng):
    pairs, correct = _pair_design()
    p64 = np.outer(p, p).ravel()
    p64 /= p64.sum()
    rejections = np.zeros(3, dtype=np.int64)
    for start in range(0, n_repeats, _SIM_CHUNK):
        size = min(_SIM_CHUNK, n_repeats - start)
        counts = rng.multinomial(n_pairs, p64, size=size)
        n_ab, c_ab = counts @ pairs, counts @ correct  # columns (1,1),(1,0),(0,1),(0,0)
        _, p_c = wald_test(c_ab[:, 1], n_ab[:, 1], c_ab[:, 2], n_ab[:, 2])
        _, p_w = wald_test(c_ab[:, 0], n_ab[:, 0], c_ab[:, 3], n_ab[:, 3])
        rejections += _count_rejections(p_c, p_w, alpha)
    return rejections


def _count_rejections(p1, p2, alpha):
    # a NaN p-value (an empty sample: nothing to test) never rejects
    r1, r2 = rejects(p1, alpha), rejects(p2, alpha)
    return np.array([r1.sum(), r2.sum(), (r1 | r2).sum()], dtype=np.int64)


@validate_params(
    {
        "cell_probs": _CELL_PROBS,
        "n": _SIM_SIZES,
        "comparative": BOOLEAN,
        "n_pairs": _SIM_SIZES,
        "alpha": _LEVEL,
        "n_repeats": [Whole(1, None, closed="left")],
        "random_state": RANDOM_STATE,
    }
)
def simulate_separation_power(
    cell_probs,
    n=None,
    *,
    comparative=False,
    n_pairs=None,
    alpha=0.05,
    n_repeats=2000,
    random_state=0,
):
    """Power of the (comparative) separation test estimated by simulation.

    The Monte Carlo counterpart of :func:`separation_power` and
    :func:`comparative_separation_power`, without their normal approximation
    and expected sizes. Each repeat draws a whole data set and runs the
    published Wald tests (:func:`separation_test` with ``method="wald"``, resp.
    :func:`comparative_separation_test`) on it; all repeats are drawn and tested
    at once, as arrays.

    - Separation (``comparative=False``): the 8 cell counts of ``n`` people are
      drawn from ``Multinomial(n, cell_probs)``; the TPRs and FPRs of the two
      groups are compared with the Wald test.
    - Comparative separation (``comparative=True``): ``n_pairs`` pairs of
      independently drawn people, i.e. the counts of the 64 ordered pair types
      drawn from ``Multinomial(n_pairs, outer(cell_probs, cell_probs))``. Pairs
      with equal labels are dropped; the truly higher item of a pair is the
      one with ``Y=1``, and the pair is correctly ordered when ``C = 1`` for it
      and ``C = 0`` for the lower one (a predicted tie is incorrect). Pairs are
      counted by the groups ``(a, b)`` of the higher and the lower item, and
      H0c: ``TPR(1, 0) = TPR(0, 1)`` and H0w: ``TPR(1, 1) = TPR(0, 0)`` are
      tested. No product formula ``TPR_a TNR_b`` is assumed.

    A test whose sample is empty in a repeat (a p-value of NaN) does not
    reject; a test rejects when its p-value is at most ``alpha``, and the joint
    test when either does.

    Parameters
    ----------
    cell_probs : array-like of shape (8,) or DataFrame
        The law ``P(C, Y, A)``; see :func:`separation_power`.
    n : int or array-like of int of shape (n_sizes,), default=None
        Number(s) of people per simulated data set, whole (``500.0`` is).
        Required unless ``comparative=True``.
    comparative : bool, default=False
        Simulate the comparative separation test on ``n_pairs`` pairs.
    n_pairs : int or array-like of int of shape (n_sizes,), default=None
        Number(s) of judged pairs per simulated data set; required with (and
        only used with) ``comparative=True``.
    alpha : float, default=0.05
        Level of each of the two Wald tests.
    n_repeats : int, default=2000
        Number of simulated data sets per size.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
default=0
        Seed (``None`` for fresh entropy). Each size draws from its own child seed
        derived from the size, so the result for one size does not depend on the
        other sizes asked.

    Returns
    -------
    power : pandas.Series or pandas.DataFrame
        Rejection fractions and their Monte Carlo standard errors
        ``sqrt(f (1 - f) / n_repeats)``: ``power_tpr``, ``power_tpr_se``,
        ``power_fpr``, ``power_fpr_se``, ``power``, ``power_se`` for separation;
        ``power_cross``, ``power_cross_se``, ``power_within``,
        ``power_within_se``, ``power``, ``power_se`` for comparative
        separation. A Series named by the size for a scalar size, a DataFrame
        indexed by ``n`` (resp. ``n_pairs``) for a 1-D one.

    See Also
    --------
    separation_power, comparative_separation_power : The closed forms.

    Examples
    --------
    >>> from sklearn_smallfair.stats import simulate_separation_power
    >>> law = [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175]
    >>> sim = simulate_separation_power(law, 1000, random_state=0)
    >>> sim[["power", "power_se"]].round(3)
    power       0.780
    power_se    0.009
    Name: 1000, dtype: float64
    >>> sim = simulate_separation_power(law, comparative=True, n_pairs=2000,
    ...                                 random_state=0)
    >>> sim[["power", "power_se"]].round(3)
    power       0.827
    power_se    0.008
    Name: 2000, dtype: float64
    """
    p = _check_cell_probs(cell_probs)
    if comparative:
        if n_pairs is None:
            raise ValueError(
                "comparative=True simulates judged pairs: pass n_pairs (the "
                "number of pairs)."
            )
        if n is not None:
            raise ValueError(
                "comparative=True simulates n_pairs pairs and does not use n; "
                "pass only n_pairs."
            )
        sizes_in, name, tests = n_pairs, "n_pairs", _COMPARATIVE_TESTS
        simulate = _simulate_comparative
    else:
        if n_pairs is not None:
            raise ValueError(
                "n_pairs is only used with comparative=True; for the separation "
                "test pass n (the number of people)."
            )
        if n is None:
            raise ValueError("n is required: pass the number of people.")
        sizes_in, name, tests = n, "n", _SEPARATION_TESTS
        simulate = _simulate_separation
    sizes = _check_sizes(sizes_in, name)
    if sizes.dtype.kind == "f":
        if not np.array_equal(sizes, np.round(sizes)):
            raise ValueError(f"{name} must be integers to simulate; got {sizes_in!r}.")
        sizes = sizes.astype(np.int64)
    base = resolve_seed(random_state)
    counts = np.stack(
        [
            simulate(
                p,
                int(size),
                alpha,
                n_repeats,
                child_rng(base, name, int(size)),
            )
            for size in np.atleast_1d(sizes)
        ]
    )
    frac = counts / n_repeats
    se = np.sqrt(frac * (1.0 - frac) / n_repeats)
    columns = {}
    for k, test in enumerate((*tests, "power")):
        columns[test] = frac[:, k]
        columns[f"{test}_se"] = se[:, k]
    if np.ndim(sizes_in) == 0:
        columns = {c: v[0] for c, v in columns.items()}
    return _package(sizes, sizes_in, columns, name)
