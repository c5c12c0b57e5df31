"""Automatic choice of the Cross-Prior Smoothing strength ``lam`` (empirical Bayes).

Model: group ``g`` has unknown cell proportions ``p_g ~ Dirichlet(lam * p'_g)``
around its reference proportions ``p'_g``, and its matrix is
``c_g ~ Multinomial(n_g, p_g)``. Cross-Prior Smoothing with that ``lam`` is then
the posterior mean of ``p_g`` (times ``n_g``): the Bayes estimator of every cell
proportion under squared error. ``lam`` is the precision of the prior, i.e. how
close groups are to their references: for each cell
``E[(p_gc - p'_gc)^2] = p'_gc (1 - p'_gc) / (lam + 1)``. It is estimated by
maximum marginal likelihood (type-II maximum likelihood): integrating ``p_g``
out, ``c_g`` is Dirichlet-multinomial, and

    L(lam) = sum_g log DirMult(c_g; n_g, lam * p'_g)

is maximized over ``lam`` in ``[0, LAM_MAX]``. The groups' own multinomial noise
is part of the model, so a small group far from its reference weighs little,
and a large one weighs much.
"""

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import gammaln

#: Largest ``lam`` considered: with 10^4 pseudo-people a group of 150 keeps 1.5 %
#: of its own weight; a maximum there means the groups cannot be told apart from
#: their references.
LAM_MAX = 1e4
#: Smallest positive ``lam`` of the grid; below it the limit ``lam = 0`` is
#: evaluated exactly.
LAM_MIN = 1e-2
#: Grid points per decade of ``lam`` before the local refinement.
GRID_PER_DECADE = 2
#: Tolerance of the refinement, in ``log10(lam)`` (0.23 % of ``lam``).
XATOL = 1e-3


def lam_grid():
    """``0`` followed by the log-spaced grid ``LAM_MIN .. LAM_MAX``."""
    decades = np.log10(LAM_MAX) - np.log10(LAM_MIN)
    points = round(decades * GRID_PER_DECADE) + 1
    return np.concatenate(([0.0], np.logspace(np.log10(LAM_MIN), 4, points)))


class MarginalLikelihood:
    """``L(lam) = sum_g log DirMult(c_g; n_g, lam * p'_g)`` for many groups.

    Parameters
    ----------
    counts, reference_counts : ndarray of float64, shape (G, 4)
        Validated groups' matrices and their references (positive totals).

    Attributes
    ----------
    impossible : ndarray of bool, shape (G,)
        Groups with people in a cell of zero reference mass: their likelihood is
        0 for every ``lam > 0``, so they are left out.
    n_used : int
        Number of groups in the likelihood: those whose term depends on ``lam``
        (more than one person, not impossible, not all in a cell holding the whole
        reference).

    Only the non-empty cells of the used groups are kept, flattened: one
    ``gammaln`` pass over them per value of ``lam`` (vectorized over a grid of
    values too). Cells with ``c = 0`` contribute ``0`` whatever ``lam``.
    """

    def __init__(self, counts, reference_counts):
        counts = np.asarray(counts, dtype=np.float64)
        ref = np.asarray(reference_counts, dtype=np.float64)
        p = ref / ref.sum(axis=-1, keepdims=True)
        n = counts.sum(axis=-1)
        occupied = counts > 0
        self.impossible = (occupied & (p == 0)).any(axis=-1)
        # A group's term depends on lam unless it holds at most one person (its
        # likelihood is then p'_j), or all its people are in a cell holding the
        # whole reference (p'_j = 1).
        k = occupied.sum(axis=-1)
        alone = (k == 1) & ((occupied * p).sum(axis=-1) == 1)
        used = (n > 1) & ~self.impossible & ~alone
        self.n_used = int(used.sum())
        cells = occupied & used[:, None]
        self._c = counts[cells]
        self._p = p[cells]
        self._n = n[used]
        # log n! - sum log c! (constant in lam): the full log-pmf, for checks
        self._const = float(gammaln(self._n + 1.0).sum() - gammaln(self._c + 1.0).sum())
        # the limit lam -> 0: each group with one occupied cell j tends to
        # log p'_j; with two or more, to -inf
        k = cells.sum(axis=-1)[used]
        self._at_zero = float(np.log(self._p).sum()) if (k <= 1).all() else -np.inf

    def __call__(self, lam, *, full=False):
        """``L`` at each ``lam`` (scalar or 1-D array); ``full`` adds the constant
        ``sum log n! - sum log c!`` so that the value is the log-pmf itself."""
        lam = np.asarray(lam, dtype=np.float64)
        flat = np.atleast_1d(lam)
        out = np.empty(flat.shape)
        zero = flat == 0
        out[zero] = self._at_zero
        pos = flat[~zero][:, None]
        if pos.size:
            a = pos * self._p
            out[~zero] = (
                self._n.size * gammaln(pos[:, 0])
                - gammaln(self._n + pos).sum(axis=-1)
                + (gammaln(self._c + a) - gammaln(a)).sum(axis=-1)
            )
        if full:
            out = out + self._const
        return out.reshape(lam.shape)


def fit_lam(counts, reference_counts):
    """Maximum marginal-likelihood ``lam`` in ``[0, LAM_MAX]``.

    The likelihood is evaluated on :func:`lam_grid` (``0`` and 2 points per
    decade from ``0.01`` to ``10^4``), then refined around the best grid point by
    bounded scalar minimization in ``log10(lam)`` (tolerance ``XATOL``): the grid
    finds the global maximum's basin even if the likelihood has several local
    maxima, the refinement its position.

    Returns
    -------
    lam : float
        The learnt ``lam``.
    likelihood : MarginalLikelihood
        The marginal likelihood that was maximised.

    Raises
    ------
    ValueError
        When the likelihood does not depend on ``lam``: no group with at least
        two people whose occupied cells all have reference mass (and that is not
        all in a cell holding the whole reference).
    """
    likelihood = MarginalLikelihood(counts, reference_counts)
    if likelihood.n_used == 0:
        raise ValueError(
            "lam='auto' cannot learn lam from these counts: the marginal likelihood "
            "does not depend on lam (it needs groups of two or more people whose "
            "occupied cells all have reference mass). Pass a number, e.g. lam=10."
        )
    grid = lam_grid()
    values = likelihood(grid)
    best = int(np.argmax(values))
    if best == 0:
        return 0.0, likelihood
    lo = np.log10(grid[max(best - 1, 1)])
    hi = np.log10(grid[min(best + 1, grid.size - 1)])
    res = minimize_scalar(
        lambda t: -likelihood(10.0**t),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": XATOL},
    )
    lam = float(10.0**res.x)
    if not likelihood(lam) >= values[best]:
        lam = float(grid[best])
    return lam, likelihood
