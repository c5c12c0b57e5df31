"""Power and sample sizes of the separation and comparative separation tests.

A binary classifier's joint law with the label and the group is the 8-cell law
``P(C, Y, A)`` (C the prediction, Y the label, A in {0, 1} the group), given as
``cell_probs`` in the order

``(C=1,Y=1,A=1), (0,1,1), (1,0,1), (0,0,1), (1,1,0), (0,1,0), (1,0,0), (0,0,0)``,

that is the cells ``(TP, FN, FP, TN)`` of group ``A=1`` followed by those of
group ``A=0`` (as joint probabilities, summing to 1 over both groups).

The power of a two-sided Wald test of equal proportions with true values ``w``
and ``v`` and sizes ``n_w`` and ``n_v`` is ``1 - beta`` with

``sigma = sqrt(w (1 - w) / n_w + v (1 - v) / n_v)``,
``beta = Phi(z - (w - v) / sigma) - Phi(-z - (w - v) / sigma)``,

``z = z_{1 - alpha/2}`` the upper critical value. Each of the separation tests
rejects when the smaller of its two p-values is at most ``alpha``, so its power
is ``1 - beta_1 beta_2``.
"""

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from .._params import Number, Whole, validate_params
from ..metrics import compute_metric

__all__ = [
    "comparative_separation_power",
    "comparative_separation_sample_size",
    "separation_power",
    "separation_sample_size",
]

# The ``(C, Y, A)`` value of each entry of ``cell_probs``.
_CELL_ORDER = (
    (1, 1, 1),
    (0, 1, 1),
    (1, 0, 1),
    (0, 0, 1),
    (1, 1, 0),
    (0, 1, 0),
    (1, 0, 0),
    (0, 0, 0),
)

_SUM_TOL = 1e-6  # cell_probs must sum to 1 within this tolerance
_RATE_TOL = 1e-12  # rate differences below it are floating-point noise: equal

_SEPARATION_TESTS = ("power_tpr", "power_fpr")
_COMPARATIVE_TESTS = ("power_cross", "power_within")

# --- declared parameters ----------------------------------------------------------
_CELL_PROBS = ["array-like", Mapping]
_LEVEL = [Number(0, 1, closed="neither")]
#: Sizes of the closed forms: positive numbers (not necessarily whole), or arrays
#: of them (whose entries are checked with the data).
_SIZES = [Number(0, None, closed="neither"), "array-like"]
#: Sizes of the simulation, or None; they must be whole (500.0 is), which is
#: checked with the entries of an array.
_SIM_SIZES = [*_SIZES, None]
_SOLVER_PARAMS = {
    "cell_probs": _CELL_PROBS,
    "power": _LEVEL,
    "alpha": _LEVEL,
    "max_n": [Whole(1, None, closed="left")],
}


# --- validation ---------------------------------------------------------------
def _frame_to_cells(frame):
    """The 8 cell probabilities, in order, from a table with C, Y, A and p."""
    missing = [c for c in ("C", "Y", "A", "p") if c not in frame.columns]
    if missing:
        raise ValueError(
            f"cell_probs as a table needs the columns 'C', 'Y', 'A' and 'p'; "
            f"missing {missing}."
        )
    if len(frame) != 8:
        raise ValueError(
            f"cell_probs as a table needs 8 rows, one per (C, Y, A) combination; "
            f"got {len(frame)}."
        )
    index = np.zeros(8, dtype=np.int64)
    for col, weight in (("C", 1), ("Y", 2), ("A", 4)):
        values = np.asarray(frame[col])
        if values.dtype.kind not in "biuf" or not np.isin(values, (0, 1)).all():
            raise ValueError(
                f"cell_probs column {col!r} must hold the values 0 and 1; got "
                f"{sorted(pd.unique(values).tolist(), key=repr)}."
            )
        index += weight * (1 - values.astype(np.int64))
    if np.unique(index).shape[0] != 8:
        raise ValueError(
            "cell_probs as a table must list each (C, Y, A) combination exactly "
            "once; some combination is repeated."
        )
    p = np.asarray(frame["p"])
    if p.dtype.kind not in "biuf":
        raise TypeError(f"cell_probs column 'p' must be numeric, got dtype {p.dtype}.")
    out = np.empty(8, dtype=np.float64)
    out[index] = p
    return out


def _check_cell_probs(cell_probs):
    """Validate the 8-cell law and return it as float64, summing exactly to 1."""
    if isinstance(cell_probs, Mapping):
        try:
            cell_probs = pd.DataFrame(cell_probs)
        except ValueError:
            raise ValueError(
                "cell_probs as a mapping must map the columns 'C', 'Y', 'A' and "
                "'p' to 8 values each; otherwise pass an array of 8 probabilities."
            ) from None
    if isinstance(cell_probs, pd.DataFrame):
        p = _frame_to_cells(cell_probs)
    else:
        p = np.asarray(cell_probs)
        if p.dtype.kind not in "biuf":
            raise TypeError(
                f"cell_probs must be numeric probabilities, got dtype {p.dtype}."
            )
        if p.shape != (8,):
            raise ValueError(
                "cell_probs must have 8 entries P(C, Y, A) ordered (C,Y,A) = "
                "(1,1,1), (0,1,1), (1,0,1), (0,0,1), (1,1,0), (0,1,0), (1,0,0), "
                f"(0,0,0); got shape {p.shape}."
            )
        p = p.astype(np.float64)
    if not np.isfinite(p).all():
        raise ValueError("cell_probs contains NaN or inf.")
    if (p < 0).any():
        raise ValueError("cell_probs must be non-negative.")
    total = p.sum()
    if abs(total - 1.0) > _SUM_TOL:
        raise ValueError(
            f"cell_probs must sum to 1 (within {_SUM_TOL:g}); they sum to "
            f"{total:.10g}. Divide counts by their total to get probabilities."
        )
    p = p / total
    g = p.reshape(2, 4)
    for row, a in enumerate((1, 0)):
        for cells, y in (((0, 1), 1), ((2, 3), 0)):
            if g[row, list(cells)].sum() <= 0:
                rate = "TPR" if y == 1 else "FPR"
                raise ValueError(
                    f"cell_probs gives P(Y={y}, A={a}) = 0: the {rate} of group "
                    f"A={a} is undefined. Every (Y, A) combination needs positive "
                    f"probability."
                )
    return p


def _check_sizes(n, name):
    """Scalar or 1-D array of positive finite sizes (the entries of an array are
    data; the declared constraints have checked a scalar's type and sign)."""
    arr = np.asarray(n)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}.")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-D; got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; pass at least one size.")
    if not np.isfinite(arr).all() or (arr <= 0).any():
        raise ValueError(f"{name} must be finite and > 0; got {n!r}.")
    return arr


# --- closed forms -------------------------------------------------------------
def _rates(p):
    """Per-group P(Y=1, A=a), P(Y=0, A=a), TPR_a and FPR_a, groups (A=1, A=0)."""
    g = p.reshape(2, 4)  # rows A=1, A=0; columns TP, FN, FP, TN
    pos = g[:, 0] + g[:, 1]
    neg = g[:, 2] + g[:, 3]
    return pos, neg, compute_metric("tpr", g), compute_metric("fpr", g)


def _type2(w, v, n_w, n_v, alpha):
    """Type II error of the two-sided Wald test of ``w = v`` (broadcast)."""
    z = ndtri(1.0 - alpha / 2.0)
    d = np.abs(w - v)  # beta is symmetric in w - v; |d| avoids 1 - 1 cancellation
    d = np.where(d <= _RATE_TOL, 0.0, d)
    sigma = np.sqrt(w * (1.0 - w) / n_w + v * (1.0 - v) / n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = d / sigma
        beta = ndtr(z - delta) - ndtr(-z - delta)
    # zero standard error: the observed rates are w and v for sure, and the Wald
    # test (wald_test) never rejects equal ones and always rejects different ones
    return np.where(sigma > 0, beta, np.where(d == 0, 1.0, 0.0))


def _separation_type2(p, n, alpha):
    pos, neg, tpr, fpr = _rates(p)
    b_t = _type2(tpr[0], tpr[1], n * pos[0], n * pos[1], alpha)
    b_f = _type2(fpr[0], fpr[1], n * neg[0], n * neg[1], alpha)
    return b_t, b_f


def _comparative_laws(p):
    """Comparative TPRs and pair fractions; index 0 is group A=1, 1 is A=0."""
    pos, neg, tpr, fpr = _rates(p)
    ctpr = np.outer(tpr, 1.0 - fpr)  # ctpr[a, b] = TPR_a TNR_b
    frac = 2.0 * np.outer(pos, neg)  # n_ab / n_pairs
    return ctpr, frac


def _comparative_type2(p, n_pairs, alpha):
    ctpr, frac = _comparative_laws(p)
    # H0c: TPR(1, 0) = TPR(0, 1); H0w: TPR(1, 1) = TPR(0, 0)
    b_c = _type2(
        ctpr[0, 1], ctpr[1, 0], n_pairs * frac[0, 1], n_pairs * frac[1, 0], alpha
    )
    b_w = _type2(
        ctpr[0, 0], ctpr[1, 1], n_pairs * frac[0, 0], n_pairs * frac[1, 1], alpha
    )
    return b_c, b_w


def _package(sizes, n_input, columns, name):
    """Series for scalar sizes, DataFrame indexed by the sizes for 1-D ones."""
    if np.ndim(n_input) == 0:
        value = n_input.item() if isinstance(n_input, np.generic) else n_input
        return pd.Series(
            {c: float(v[()]) for c, v in columns.items()}, name=value, dtype=float
        )
    index = pd.Index(sizes, name=name)
    return pd.DataFrame(
        {c: np.asarray(v, dtype=float) for c, v in columns.items()}, index=index
    )


def _powers(type2, tests):
    b1, b2 = type2
    return {tests[0]: 1.0 - b1, tests[1]: 1.0 - b2, "power": 1.0 - b1 * b2}


@validate_params({"cell_probs": _CELL_PROBS, "n": _SIZES, "alpha": _LEVEL})
def separation_power(cell_probs, n, *, alpha=0.05):
    """Power of the separation test for a binary classifier and two groups.

    The separation test (:func:`separation_test`) compares the true positive
    rates, H0t: ``TPR_1 = TPR_0``, and the false positive rates, H0f:
    ``FPR_1 = FPR_0``, of the groups ``A=1`` and ``A=0`` with two-sided tests,
    and declares separation violated when ``min(p_t, p_f) <= alpha``. This is
    the power of the published Wald tests (``method="wald"``); for the large
    expected cells where the default ``method="auto"`` uses the score test the
    two powers agree closely, and at small cells the user guide's calibration
    table gives the default's measured power.
    For ``n`` people drawn from ``cell_probs`` the group sizes are taken at
    their expectations ``n_{y,a} = n P(Y=y, A=a)``, and each test's power is
    ``1 - beta`` with

    ``sigma = sqrt(w (1 - w) / n_w + v (1 - v) / n_v)``,
    ``beta = Phi(z - (w - v) / sigma) - Phi(-z - (w - v) / sigma)``,

    ``w, v`` the two groups' rates and ``z = z_{1 - alpha/2}``. The joint test's
    power is ``1 - beta_t beta_f`` (the two tests use disjoint people). At a law
    satisfying separation it is the false-positive rate ``1 - (1 - alpha)^2``
    for every ``n``.

    Parameters
    ----------
    cell_probs : array-like of shape (8,) or DataFrame
        The law ``P(C, Y, A)`` of prediction ``C``, label ``Y`` and group ``A``,
        ordered ``(C,Y,A) = (1,1,1), (0,1,1), (1,0,1), (0,0,1), (1,1,0),
        (0,1,0), (1,0,0), (0,0,0)``: the ``(TP, FN, FP, TN)`` cells of group
        ``A=1``, then of group ``A=0``. Non-negative, summing to 1 within
        ``1e-6`` (then rescaled to sum exactly 1), with ``P(Y=y, A=a) > 0``
        for all four ``(y, a)``. A DataFrame (or a mapping of columns) with
        the columns ``C``, ``Y``, ``A`` (0/1) and ``p``, one row per
        combination in any order, is accepted too.
    n : float or array-like of shape (n_sizes,)
        Number(s) of people tested; need not be integers.
    alpha : float, default=0.05
        Level of each of the two Wald tests.

    Returns
    -------
    power : pandas.Series or pandas.DataFrame
        For a scalar ``n``, a Series named ``n`` with the entries
        ``power_tpr`` (power of H0t alone), ``power_fpr`` (H0f alone) and
        ``power`` (the joint test). For a 1-D ``n``, a DataFrame with these
        columns and one row per size, indexed by ``n``.

    See Also
    --------
    separation_sample_size : The smallest ``n`` reaching a target power.
    simulate_separation_power : The same powers estimated by simulation.
    comparative_separation_power : Power from comparative judgments.

    Notes
    -----
    Rate differences below ``1e-12`` are treated as zero (floating-point noise
    in ``cell_probs``). When both rates of a test are 0 or 1 its standard error
    is 0 and the Wald test is deterministic: its power is 0 when the rates are
    equal and 1 when they differ.

    Examples
    --------
    A law with ``TPR_1 = 0.836``, ``TPR_0 = 0.889``, ``FPR_1 = 0.467`` and
    ``FPR_0 = 0.364``:

    >>> from sklearn_smallfair.stats import separation_power
    >>> law = [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175]
    >>> separation_power(law, 1000).round(4)
    power_tpr    0.4039
    power_fpr    0.6460
    power        0.7890
    Name: 1000, dtype: float64
    >>> separation_power(law, [500, 1000, 2000])["power"].round(4)
    n
    500     0.5207
    1000    0.7890
    2000    0.9712
    Name: power, dtype: float64
    """
    p = _check_cell_probs(cell_probs)
    sizes = _check_sizes(n, "n")
    return _package(
        sizes,
        n,
        _powers(
            _separation_type2(p, sizes.astype(np.float64), alpha), _SEPARATION_TESTS
        ),
        "n",
    )


@validate_params({"cell_probs": _CELL_PROBS, "n_pairs": _SIZES, "alpha": _LEVEL})
def comparative_separation_power(cell_probs, n_pairs, *, alpha=0.05):
    """Power of the comparative separation test for a binary classifier.

    The comparative separation test (:func:`comparative_separation_test`)
    judges pairs of people whose labels differ: a pair is correctly ordered
    when the classifier puts the truly higher person (``Y=1``) above the lower
    one (``C=1`` and ``C=0``; a predicted tie counts as incorrect). The
    comparative true positive rate ``TPR(a, b)`` is the fraction of correctly
    ordered pairs among those whose higher person is in group ``a`` and lower
    person in group ``b``; for a binary classifier ``TPR(a, b) = TPR_a TNR_b``
    with ``TNR_b = 1 - FPR_b``. The test compares H0c:
    ``TPR(1, 0) = TPR(0, 1)`` (across groups) and H0w: ``TPR(1, 1) = TPR(0, 0)``
    (within groups) with Wald tests and declares separation violated when
    ``min(p_c, p_w) <= alpha``.

    For ``n_pairs`` pairs of independently drawn people the expected number of
    pairs of type ``(a, b)`` is ``n_ab = 2 n_pairs P(Y=1, A=a) P(Y=0, A=b)``,
    and each test's power is ``1 - beta`` with the formula of
    :func:`separation_power` applied to the two comparative TPRs and their
    ``n_ab``. The joint power is ``1 - beta_c beta_w``.

    Parameters
    ----------
    cell_probs : array-like of shape (8,) or DataFrame
        The law ``P(C, Y, A)``; see :func:`separation_power`.
    n_pairs : float or array-like of shape (n_sizes,)
        Number(s) of judged pairs, including the pairs with equal labels that
        the test drops; need not be integers.
    alpha : float, default=0.05
        Level of each of the two Wald tests.

    Returns
    -------
    power : pandas.Series or pandas.DataFrame
        For a scalar ``n_pairs``, a Series named ``n_pairs`` with the entries
        ``power_cross`` (power of H0c alone), ``power_within`` (H0w alone) and
        ``power`` (the joint test). For a 1-D ``n_pairs``, a DataFrame with
        these columns and one row per size, indexed by ``n_pairs``.

    See Also
    --------
    comparative_separation_sample_size : The smallest ``n_pairs`` reaching a
        target power.
    simulate_separation_power : The same powers estimated by simulation.
    separation_power : Power from labelled people.

    Examples
    --------
    >>> from sklearn_smallfair.stats import comparative_separation_power
    >>> law = [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175]
    >>> comparative_separation_power(law, 2000).round(4)
    power_cross     0.2499
    power_within    0.7643
    power           0.8232
    Name: 2000, dtype: float64
    """
    p = _check_cell_probs(cell_probs)
    sizes = _check_sizes(n_pairs, "n_pairs")
    return _package(
        sizes,
        n_pairs,
        _powers(
            _comparative_type2(p, sizes.astype(np.float64), alpha), _COMPARATIVE_TESTS
        ),
        "n_pairs",
    )


# --- sample sizes ---------------------------------------------------------------
def _smallest_size(joint_power, target, max_n, name):
    """Smallest integer ``n`` in [1, max_n] with ``joint_power(n) >= target``.

    ``joint_power`` maps an int64 array of sizes to powers and is increasing in
    ``n``. Powers of two bracket the answer; each refinement then evaluates up
    to 256 sizes of the bracket at once, so a few vectorized calls suffice.
    """
    grid = np.unique(
        np.minimum(2 ** np.arange(int(np.ceil(np.log2(max_n))) + 1), max_n)
    ).astype(np.int64)
    reached = joint_power(grid) >= target
    if not reached[-1]:
        raise ValueError(
            f"power={target} is not reached with {name} <= max_n={max_n}; the "
            f"difference between the groups is too small to detect with that "
            f"many. Increase max_n."
        )
    k = int(np.argmax(reached))
    if k == 0:
        return 1
    lo, hi = int(grid[k - 1]), int(grid[k])  # power(lo) < target <= power(hi)
    while hi - lo > 1:
        cand = np.unique(np.round(np.linspace(lo, hi, 258)).astype(np.int64))
        k = int(np.argmax(joint_power(cand) >= target))  # k >= 1: power(lo) < target
        lo, hi = int(cand[k - 1]), int(cand[k])
    return hi


def _check_solver(cell_probs, power, alpha, max_n):
    return _check_cell_probs(cell_probs), float(power), float(alpha), int(max_n)


def _null_error(what, alpha, target):
    return ValueError(
        f"cell_probs satisfies {what}, so the test's power equals its "
        f"false-positive rate 1 - (1 - alpha)^2 = {1 - (1 - alpha) ** 2:.4g} "
        f"at every size and power={target} is never reached. A sample size "
        f"only exists for a law that violates separation."
    )


@validate_params(_SOLVER_PARAMS)
def separation_sample_size(cell_probs, power=0.8, *, alpha=0.05, max_n=10**9):
    """Smallest number of people for the separation test to reach a power.

    Returns the smallest integer ``n`` whose joint power
    (:func:`separation_power`, column ``power``) is at least ``power``. For a
    law violating separation the power increases with ``n``; it is found by
    bracketing with powers of two and a vectorized integer bisection.

    Parameters
    ----------
    cell_probs : array-like of shape (8,) or DataFrame
        The law ``P(C, Y, A)``; see :func:`separation_power`.
    power : float, default=0.8
        Target power of the joint test, in (0, 1).
    alpha : float, default=0.05
        Level of each of the two Wald tests.
    max_n : int, default=10**9
        Largest size searched.

    Returns
    -------
    n : int
        The smallest ``n`` with ``separation_power(cell_probs, n)["power"] >=
        power``.

    Raises
    ------
    ValueError
        If the law satisfies separation (``TPR_1 = TPR_0`` and
        ``FPR_1 = FPR_0``: the power stays at ``1 - (1 - alpha)^2``), or if
        the target is not reached within ``max_n``.

    See Also
    --------
    separation_power : The power at given sizes.
    comparative_separation_sample_size : The same for comparative judgments.

    Examples
    --------
    >>> from sklearn_smallfair.stats import separation_power, separation_sample_size
    >>> law = [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175]
    >>> n = separation_sample_size(law, power=0.8)
    >>> n
    1030
    >>> round(float(separation_power(law, n)["power"]), 5)
    0.80002
    >>> round(float(separation_power(law, n - 1)["power"]), 5)
    0.79966
    """
    p, target, alpha, max_n = _check_solver(cell_probs, power, alpha, max_n)
    _, _, tpr, fpr = _rates(p)
    if abs(tpr[0] - tpr[1]) <= _RATE_TOL and abs(fpr[0] - fpr[1]) <= _RATE_TOL:
        raise _null_error("separation (TPR_1 = TPR_0 and FPR_1 = FPR_0)", alpha, target)

    def joint(sizes):
        b1, b2 = _separation_type2(p, sizes.astype(np.float64), alpha)
        return 1.0 - b1 * b2

    return _smallest_size(joint, target, max_n, "n")


@validate_params(_SOLVER_PARAMS)
def comparative_separation_sample_size(
    cell_probs, power=0.8, *, alpha=0.05, max_n=10**9
):
    """Smallest number of judged pairs for comparative separation to reach a power.

    Returns the smallest integer ``n_pairs`` whose joint power
    (:func:`comparative_separation_power`, column ``power``) is at least
    ``power``, by bracketing with powers of two and a vectorized integer
    bisection (the power increases with ``n_pairs`` for a violating law).

    Parameters
    ----------
    cell_probs : array-like of shape (8,) or DataFrame
        The law ``P(C, Y, A)``; see :func:`separation_power`.
    power : float, default=0.8
        Target power of the joint test, in (0, 1).
    alpha : float, default=0.05
        Level of each of the two Wald tests.
    max_n : int, default=10**9
        Largest number of pairs searched.

    Returns
    -------
    n_pairs : int
        The smallest ``n_pairs`` with
        ``comparative_separation_power(cell_probs, n_pairs)["power"] >= power``.

    Raises
    ------
    ValueError
        If ``TPR(1, 0) = TPR(0, 1)`` and ``TPR(1, 1) = TPR(0, 0)`` (the power
        stays at ``1 - (1 - alpha)^2``), or if the target is not reached within
        ``max_n``.

    See Also
    --------
    comparative_separation_power : The power at given numbers of pairs.
    separation_sample_size : The same for labelled people.

    Examples
    --------
    >>> from sklearn_smallfair.stats import comparative_separation_sample_size
    >>> law = [0.23, 0.045, 0.105, 0.12, 0.20, 0.025, 0.10, 0.175]
    >>> comparative_separation_sample_size(law, power=0.8)
    1877
    """
    p, target, alpha, max_n = _check_solver(cell_probs, power, alpha, max_n)
    ctpr, _ = _comparative_laws(p)
    if (
        abs(ctpr[0, 1] - ctpr[1, 0]) <= _RATE_TOL
        and abs(ctpr[0, 0] - ctpr[1, 1]) <= _RATE_TOL
    ):
        raise _null_error(
            "comparative separation (TPR(1, 0) = TPR(0, 1) and TPR(1, 1) = TPR(0, 0))",
            alpha,
            target,
        )

    def joint(sizes):
        b1, b2 = _comparative_type2(p, sizes.astype(np.float64), alpha)
        return 1.0 - b1 * b2

    return _smallest_size(joint, target, max_n, "n_pairs")
