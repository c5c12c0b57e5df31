"""Downsampling experiments: how well does each estimator score a small subgroup?"""

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.parallel import Parallel, delayed

from .._confusion import rows_or_counts
from .._params import (
    BOOLEAN,
    COUNTS,
    N_JOBS,
    POS_LABEL,
    RANDOM_STATE,
    REFERENCE,
    StrOptions,
    Whole,
    validate_params,
)
from .._random import resolve_seed
from .._references import reference_counts
from .._validation import check_smoothing, format_labels
from ..metrics import Metric, get_metrics
from ..smoothing import CrossPriorSmoothing
from ._budget import _MAX_RESAMPLES, MEMORY_BUDGET, _check_work
from ._checkpoint import _Checkpoint, _fingerprint
from ._schedule import _run_task, _tasks
from ._split import _check_sizes
from ._statistics import _columns
from ._sums import _plan

__all__ = ["downsampling_experiment"]

_METHODS = ("exact", "montecarlo")
_SAMPLINGS = ("multinomial", "hypergeometric")


def _check_estimators(estimators):
    if estimators is None:
        return {"raw": None, "cps_10": CrossPriorSmoothing(10)}
    if not isinstance(estimators, Mapping):
        raise TypeError(
            "estimators must be a mapping {name: None | smoothing}, e.g. "
            "{'raw': None, 'cps_10': CrossPriorSmoothing(10)}; got "
            f"{type(estimators).__name__}."
        )
    if not estimators:
        raise ValueError("estimators is empty; pass at least one estimator.")
    for name, est in estimators.items():
        if not isinstance(name, str):
            raise TypeError(f"estimator names must be strings; got {name!r}.")
        check_smoothing(est, name=f"estimators[{name!r}]")
    return dict(estimators)


def _fit_estimators(estimators, groups, counts, refs):
    """Smoothers that learn from the data (``CrossPriorSmoothing(lam="auto")``)
    fitted once, on a copy, on the whole groups' matrices and their references:
    what an auditor has. ``lam_`` then stays fixed for every subgroup drawn."""
    learns = [n for n, e in estimators.items() if isinstance(getattr(e, "lam", 0), str)]
    if not learns:
        return estimators
    labelled = pd.DataFrame(refs, index=pd.Index(groups, dtype=object))  # warnings
    return {
        name: clone(est).fit(counts, labelled) if name in learns else est
        for name, est in estimators.items()
    }


@validate_params(
    {
        "y_true": ["array-like", None],
        "y_pred": ["array-like", None],
        "sensitive_features": ["array-like", None],
        "counts": [*COUNTS, None],
        "pos_label": POS_LABEL,
        "metrics": [str, Metric, list, tuple, np.ndarray, pd.Index, pd.Series],
        "estimators": [Mapping, None],
        "sizes": ["array-like", range],
        "method": [StrOptions(set(_METHODS))],
        "sampling": [StrOptions(set(_SAMPLINGS))],
        # the draws of a Monte Carlo histogram are counted in float64: exact to 2^53
        "n_resamples": [Whole(1, _MAX_RESAMPLES)],
        "reference": REFERENCE,
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
        "progress": BOOLEAN,
        "checkpoint": [str, os.PathLike, None],
        "memory_budget": [Whole(1 << 20, None, closed="left"), None],
    }
)
def downsampling_experiment(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    pos_label=None,
    metrics=("tpr", "fpr", "ppv", "mcc"),
    estimators=None,
    sizes=range(5, 151),
    method="exact",
    sampling="multinomial",
    n_resamples=1_000_000,
    reference="rest",
    n_jobs=None,
    random_state=0,
    progress=False,
    checkpoint=None,
    memory_budget=None,
):
    """Error of metric estimators on small subgroups drawn from each group.

    For a group with whole-group matrix ``K`` (size ``N``) the target is the
    unsmoothed score ``t = M(K)``. For each size ``n`` a subgroup matrix is drawn
    from ``Multinomial(n, K / N)`` (``sampling="multinomial"``, the published
    protocol) or by taking ``n`` of the ``N`` rows without replacement
    (``sampling="hypergeometric"``). Each estimator (raw counts or a smoothing)
    scores it; the report gives, conditional on the score being defined, its
    ``bias = E[v] - t``, ``variance = Var[v]`` and ``mse = E[(v - t)^2]``, plus
    the probability ``p_undefined`` that the score is undefined.

    ``method="exact"`` sums over all ``C(n + 3, 3)`` matrices of size ``n`` with
    their probabilities: no Monte Carlo error. The matrices are generated from
    their ranks block by block (never all held at once), each block's
    probabilities, smoothed values, metric values and power sums computed in one
    pass. An estimator without a reference (raw counts, additive smoothing)
    scores a matrix the same for every group, so each metric is evaluated once
    per matrix and the groups' sums come from one matrix product with their
    probabilities; Cross-Prior Smoothing, whose reference differs between groups,
    is evaluated per group. A matrix whose probability is below
    ``NEGLECTED_MASS / C(n + 3, 3)``
    (``NEGLECTED_MASS`` = 1e-16) for a group is skipped for that group, so at
    most 1e-16 of each group's probability is left out (the statistics move by
    less than 1e-15 for metrics in [-1, 1]). A metric that depends on the cells
    only through ``k`` block sums (``Metric.blocks``: ``tpr`` through ``TP``,
    ``FN`` and ``FP + TN``) is summed over the ``C(n + k - 1, k - 1)`` block-sum
    vectors instead, which is the same sum grouped by value. ``method="montecarlo"``
    draws ``n_resamples`` matrices per (group, size) and also reports ``mse_se``; when
    there are fewer possible matrices than draws, the draws are generated as their
    histogram over the possible matrices (one multinomial draw of ``n_resamples``, the
    same law as ``n_resamples`` separate draws), so a million draws cost no more than
    the exact sum. Every metric and estimator is scored on the same draws.

    Work is split into joblib tasks by size (each task computes all groups of its
    sizes, sharing the reference-free estimators' values between groups). Each
    (group, size) has its own random stream, so the results do not depend on
    ``n_jobs``, on the joblib backend (e.g. dask) or on the other sizes requested.

    The requested work is checked before any work is done, against two module
    constants of :mod:`sklearn_smallfair.model_selection._budget`:

    - ``MAX_WORK`` (10^11, several hours of one core): the (group, matrix)
      evaluations summed over the sizes, i.e. ``n_resamples x groups`` per size whose
      matrices are drawn one by one, and the number of enumerated matrices (or
      block-sum vectors) ``x groups`` per size summed exactly or as a histogram.
      Above it a ``ValueError`` says to lower ``n_resamples``, request fewer sizes or
      groups, or use ``method="montecarlo"``;
    - ``memory_budget`` (default ``MEMORY_BUDGET``, 1 GiB, per job): blocks
      of the exact sums hold at most ``_BLOCK`` (65,536) (group, matrix) pairs,
      fewer if the budget is smaller, so the memory of ``method="exact"`` does
      not grow with the number of matrices (size 1,000, ten groups, ``mcc``,
      the two default estimators: 208 MB peak resident memory for the whole
      process). A ``ValueError`` is
      raised before any work when the budget cannot hold the per-size probability tables
      (``16 x groups x blocks x (n + 1)`` bytes) and a block of 256 rows
      (it names the largest size that fits); and when a Monte Carlo histogram,
      which holds every matrix of a size with its probability for every group
      (about ``rows x (12 + 2 n_groups) x 8`` bytes), would exceed the budget
      (it says to raise the budget or to lower ``n_resamples`` below the number of
      matrices, so that they are drawn one by one).

    Checkpoints: the file's first line holds the SHA-256 fingerprint of the
    arguments that determine the results (data, reference, metrics, estimators,
    method, sampling, and for Monte Carlo ``n_resamples`` and the seed); each further
    line records one finished size with the SHA-256 checksum of its canonical
    content (and of the fingerprint). Records are appended whole and synced, and
    the header is written to a temporary file renamed into place, so a run killed
    at any point leaves at most a last record cut short, which is dropped. On
    resume, a file written with other arguments, a record that is corrupt
    (unparsable, or whose checksum does not match: edited, damaged or copied from
    another file), a size recorded twice, or a record with a non-finite value or
    an undefined (``null``) statistic where a run writes a number raises a
    ``ValueError`` naming the file and the record (line, size, and the group,
    metric, estimator and statistic where it applies); so does a file that is not
    a checkpoint (random bytes included). An empty file, or one cut short inside
    its header (a run killed while creating it), records nothing: it is started
    afresh with a :class:`~sklearn_smallfair.exceptions.CheckpointWarning`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted binary labels; or pass ``counts``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, \
            n_features), default=None
        Group label of each sample (required with rows).
    counts : pandas.DataFrame, mapping or array-like of shape (n_groups, 4), \
            default=None
        Per-group counts ``(TP, FN, FP, TN)`` instead of rows, e.g.
        ``load_published_confusion_matrices("COMPAS", include_all=False)``. At
        least one group, and no group with all cells 0.
    pos_label : int, float, bool, str or None, default=None
        The positive label of ``y_true`` and ``y_pred``, as in scikit-learn:
        ``None`` means 1 when the labels are {0, 1} or {-1, 1}, and an error
        naming the labels otherwise. Only with rows.
    metrics : str or sequence of str, default=("tpr", "fpr", "ppv", "mcc")
        Single-group metrics of the registry.
    estimators : mapping of str to None or smoothing, default=None
        ``{name: None}`` scores the raw subgroup matrix, ``{name: smoothing}``
        the smoothed one (:class:`~sklearn_smallfair.smoothing.AdditiveSmoothing`,
        :class:`~sklearn_smallfair.smoothing.CrossPriorSmoothing`). ``None`` means
        ``{"raw": None, "cps_10": CrossPriorSmoothing(10)}``. A
        ``CrossPriorSmoothing(lam="auto")`` is fitted (a copy) once, before the
        experiment, on the whole groups' matrices and their references, as an
        auditor would fit it on the groups at hand; its ``lam_`` is then fixed for
        every subgroup drawn.
    sizes : iterable of int, default=range(5, 151)
        Subgroup sizes ``n >= 1`` (sorted and deduplicated in the output). With
        ``sampling="hypergeometric"`` every size must be at most each group's size.
        All together they must fit in ``MAX_WORK``, and each in
        ``memory_budget`` (see above).
    method : {"exact", "montecarlo"}, default="exact"
        Exact enumeration or Monte Carlo draws.
    sampling : {"multinomial", "hypergeometric"}, default="multinomial"
        Draw subgroups with replacement (multinomial) or without (hypergeometric).
    n_resamples : int, default=1_000_000
        Draws per (group, size) for ``method="montecarlo"``, at most ``2**53``.
        Sizes with fewer possible matrices than draws (and at most 2,000,000)
        draw them as a histogram, whose cost does not grow with ``n_resamples``; at
        the others each draw counts towards ``MAX_WORK``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        Reference of each group for Cross-Prior Smoothing; see
        :func:`sklearn_smallfair.reference_counts`.
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.
    random_state : None, int, numpy Generator or SeedSequence, default=0
        Seed of the Monte Carlo draws. Each (group, size) gets its own stream keyed
        by the group label and the size, so results do not depend on ``n_jobs``
        or on which other groups and sizes are requested. ``None`` draws fresh
        entropy (not with a Monte Carlo ``checkpoint``).
    progress : bool, default=False
        Show a progress bar over tasks (needs ``tqdm``, extra ``progress``).
    checkpoint : str or path-like, default=None
        File recording each finished size as soon as it is computed. A run that is
        interrupted (killed, out of time) and restarted with the same arguments
        and the same ``checkpoint`` computes only the missing sizes and returns
        exactly the table an uninterrupted run returns. A file written with other
        arguments, or a corrupt, duplicated or non-finite record, raises an error
        instead of being mixed in; an empty file is started afresh (see
        Checkpoints above). With ``method="montecarlo"`` it needs a fixed
        ``random_state``.
    memory_budget : int, default=None
        Bytes of memory each job may use for the exact sums' blocks and the
        Monte Carlo histograms, at least 2^20; None means ``MEMORY_BUDGET``
        (1 GiB). It changes the blocks, not the results (beyond round-off).

    Returns
    -------
    results : pandas.DataFrame
        One row per group, size, metric and estimator, with columns ``group``,
        ``n``, ``metric``, ``estimator``, ``mse``, ``bias``, ``variance``,
        ``p_undefined``; with ``method="montecarlo"`` also ``mse_se`` (standard
        error of ``mse``) and ``n_resamples``. Statistics are ``NaN`` when the score is
        never defined (or the target is undefined, for ``mse`` and ``bias``).

    Raises
    ------
    ValueError
        On invalid arguments (each message names the argument): no groups in
        ``counts`` or an empty group, work above ``MAX_WORK`` or a size above
        ``memory_budget``, a checkpoint written with other arguments or holding a
        corrupt, duplicated or non-finite record.

    Warns
    -----
    CheckpointWarning
        When ``checkpoint`` is an empty file or one cut short inside its header.

    See Also
    --------
    GroupDownsamplingCV : Draw the subgroups' rows for a model-based experiment.

    Examples
    --------
    >>> from sklearn_smallfair.datasets import load_published_confusion_matrices
    >>> from sklearn_smallfair.model_selection import downsampling_experiment
    >>> from sklearn_smallfair.smoothing import CrossPriorSmoothing
    >>> counts = load_published_confusion_matrices("COMPAS", include_all=False)
    >>> res = downsampling_experiment(
    ...     counts=counts, metrics="tpr", sizes=[10, 20],
    ...     estimators={"raw": None, "cps_10": CrossPriorSmoothing(10)})
    >>> res[["group", "n", "estimator", "mse", "variance", "p_undefined"]].round(4)
       group   n estimator     mse  variance  p_undefined
    0  Black  10       raw  0.1643    0.1643       0.2229
    1  Black  10    cps_10  0.0648    0.0494       0.0000
    2  Black  20       raw  0.1073    0.1073       0.0497
    3  Black  20    cps_10  0.0540    0.0484       0.0000
    4  White  10       raw  0.1866    0.1866       0.3854
    5  White  10    cps_10  0.0571    0.0285       0.0000
    6  White  20       raw  0.1426    0.1426       0.1485
    7  White  20    cps_10  0.0518    0.0361       0.0000

    Raw TPR is conditionally unbiased under multinomial sampling but undefined for
    22% of Black subgroups of 10; CPS trades a little bias for a much smaller
    variance.
    """
    # ---- validation, before any work (parameters: the table above) ----
    n_resamples = int(n_resamples)
    sizes = np.unique(_check_sizes(sizes))
    metrics = get_metrics(metrics, single_group=True)
    estimators = _check_estimators(estimators)
    if checkpoint is not None:
        if method == "montecarlo" and (
            random_state is None
            or isinstance(random_state, (np.random.Generator, np.random.RandomState))
        ):
            raise ValueError(
                "checkpoint with method='montecarlo' needs random_state set to an "
                "int (or SeedSequence), so that a restarted run draws the same "
                "numbers."
            )
    groups, counts, _ = rows_or_counts(
        y_true, y_pred, sensitive_features, counts, None, pos_label
    )
    if sampling == "hypergeometric":
        if counts.dtype.kind == "f":
            if not np.array_equal(counts, np.round(counts)):
                raise ValueError(
                    "sampling='hypergeometric' draws rows without replacement, so "
                    "it needs integer counts; got fractional counts."
                )
            counts = counts.astype(np.int64)
        too_small = counts.sum(axis=1) < sizes.max()
        if too_small.any():
            raise ValueError(
                f"sampling='hypergeometric' cannot draw {int(sizes.max())} rows "
                f"from group(s) {format_labels(groups[too_small])} of size(s) "
                f"{counts.sum(axis=1)[too_small].tolist()}; use sizes no larger "
                f"than the smallest group, or sampling='multinomial'."
            )
    elif method == "exact" and counts.dtype.kind == "f":
        counts = counts.astype(np.float64)
    if any(est is not None and est.requires_reference for est in estimators.values()):
        refs = reference_counts(counts, reference, groups=groups).astype(np.float64)
    else:
        refs = None
    estimators = _fit_estimators(estimators, groups, counts, refs)
    pkg_tqdm = None
    if progress:
        try:
            from tqdm.auto import tqdm as pkg_tqdm
        except ImportError as exc:
            raise ImportError(
                "progress=True needs tqdm; install it with "
                "`pip install sklearn-smallfair[progress]` (or `pip install tqdm`)."
            ) from exc
    base_seed = resolve_seed(random_state)
    budget = MEMORY_BUDGET if memory_budget is None else int(memory_budget)
    _check_work(
        sizes,
        len(groups),
        _plan(metrics),
        method,
        n_resamples,
        budget,
        len(estimators),
    )

    # ---- tasks: chunks of sizes, all groups at once ----
    whole = np.asarray(counts, dtype=np.float64)
    targets = np.stack([m.func(whole) for m in metrics], axis=1)
    columns = _columns(method)
    shape = (len(groups), len(estimators), len(metrics), len(columns))
    store = None
    if checkpoint is not None:
        store = _Checkpoint(
            checkpoint,
            _fingerprint(
                groups,
                counts,
                refs,
                metrics,
                estimators,
                method,
                sampling,
                n_resamples,
                base_seed,
            ),
            shape,
            (groups, list(estimators), [m.name for m in metrics], columns),
            np.isfinite(targets),
        )
    done = {} if store is None else dict(store.done)
    todo = np.array([n for n in sizes.tolist() if n not in done], dtype=np.int64)
    results = dict(done)
    if todo.size:
        tasks = [
            delayed(_run_task)(
                chunk,
                groups,
                counts,
                refs,
                targets,
                [m.name for m in metrics],
                estimators,
                method,
                sampling,
                int(n_resamples),
                base_seed,
                budget,
            )
            for chunk in _tasks(todo, method, n_resamples)
        ]
        finished = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
        if progress:
            finished = pkg_tqdm(finished, total=len(tasks), desc="downsampling")
        for task_result in finished:
            for n, stats in task_result:
                if store is not None:
                    store.add(n, stats)
                results[n] = stats

    # ---- assemble in (group, size, estimator, metric) order ----
    table = np.stack([results[n] for n in sizes.tolist()], axis=1)  # (G, S, E, M, k)
    codes = np.indices(table.shape[:4]).reshape(4, -1)
    frame = pd.DataFrame(table.reshape(-1, table.shape[-1]), columns=columns)
    frame.insert(0, "group", np.asarray(groups, dtype=object)[codes[0]])
    frame.insert(1, "n", sizes.astype(np.int64)[codes[1]])
    names = np.array([m.name for m in metrics], dtype=object)
    frame.insert(2, "metric", names[codes[3]])
    frame.insert(3, "estimator", np.array(list(estimators), dtype=object)[codes[2]])
    if method == "montecarlo":
        frame["n_resamples"] = np.int64(n_resamples)
    return frame
