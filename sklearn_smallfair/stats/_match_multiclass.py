"""The MATCH test for K x K confusion matrices.

Under H0 a group's ``K x K`` matrix is ``Multinomial(n, p_ref)`` over its ``K^2``
cells, ``p_ref`` the reference's proportions. Two paths share that law:

- a per-class (one-vs-rest) registry metric: by the aggregation property of the
  multinomial, class ``k``'s one-vs-rest matrix is ``Multinomial(n, q_k)`` with
  ``q_k`` the reference's one-vs-rest proportions, so the binary
  :func:`~sklearn_smallfair.stats.match_test` is called once on all (group, class)
  one-vs-rest matrices with their one-vs-rest references, and its laws (exact for
  binomial and joint-ratio metrics) are reused as they are;
- an averaged one-vs-rest metric or a whole-matrix metric (accuracy, balanced
  accuracy, Gorodkin's R_K, Cohen's kappa): the law of the score is summed over all
  ``C(n + K^2 - 1, K^2 - 1)`` matrices of size ``n`` when there are few enough of
  them, and estimated from multinomial draws otherwise.
"""

import warnings
from collections.abc import Mapping
from functools import lru_cache

import numpy as np
import pandas as pd

from .._confusion import counts_have_labels
from .._frames import from_data
from .._multiclass_counts import (
    MulticlassCounts,
    enumerate_multiclass_matrices,
    n_multiclass_matrices,
    one_vs_rest,
    whole_matrix_name,
)
from .._multiclass_counts import group_matrices as _group_matrices
from .._multiclass_counts import reference_matrices as _reference_matrices
from .._params import (
    RANDOM_STATE,
    REFERENCE,
    Number,
    StrOptions,
    Whole,
    validate_params,
)
from .._pmf import _log_factorial
from .._pvalues import floor_pvalues
from .._random import child_rng, resolve_seed
from .._validation import format_label, format_labels
from ..exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from ..metrics import get_metric, multiclass_metric
from ._match import ALTERNATIVES, MAX_N_RESAMPLES, METHODS
from ._match import match_test as _binary_match_test
from ._match_result import COLUMNS, MatchResult, check_draws_can_reject
from ._multitest import CORRECTION, adjust_pvalues, check_correction

__all__ = [
    "MULTICLASS_AUTO_ENUMERATE_MAX_ROWS",
    "MULTICLASS_ENUMERATE_MAX_ROWS",
    "MulticlassMatchResult",
    "multiclass_match_test",
]

#: Largest number of K x K matrices ``method="auto"`` enumerates per group size
#: (35 MB of counts for K = 3): ``n <= 15`` for ``K = 3``,
#: ``n <= 8`` for ``K = 4``, ``n <= 142`` for ``K = 2``; Monte Carlo above.
MULTICLASS_AUTO_ENUMERATE_MAX_ROWS = 500_000
#: Largest number of matrices ``method="enumerate"`` accepts per group size (about
#: 0.3 GB of counts for K = 3): ``n <= 20`` for ``K = 3``, ``n <= 10`` for ``K = 4``.
MULTICLASS_ENUMERATE_MAX_ROWS = 4_000_000
_TIE_RTOL = 1e-12  # score comparisons, as in the binary test
_MC_CHUNK = 1 << 17  # draws evaluated at once
_CI_DRAWS = 2000  # posterior draws of the intervals (the binary test's default)
_JEFFREYS = 0.5
#: (matrix, group) pairs whose probabilities are held at once by the exact sums
#: (about 100 MB with the two cumulative sums).
_LAW_CELLS = 4_000_000
_MATRIX_METHODS = ("auto", "enumerate", "montecarlo")
_AVERAGES = ("macro", "weighted", "micro")
_ROW_COLUMNS = ["group", "class", *COLUMNS[1:]]


class MulticlassMatchResult(MatchResult):
    """Result of :func:`multiclass_match_test`: one row per group, class and metric.

    The table of :class:`MatchResult` with a ``class`` column after ``group``: the
    class of a one-vs-rest row, ``None`` for an averaged metric (named as in
    scikit-learn's scorers, e.g. ``"f1_macro"``) or a whole-matrix metric.
    ``pvalues`` and ``reject`` are indexed by ``group``, then ``class`` when a
    per-class metric was tested, then ``metric`` when there are several.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table of tests: the columns of :class:`MatchResult` with ``class``
        after ``group``.
    alpha : float
        The significance level of ``reject``.

    Examples
    --------
    >>> from sklearn_smallfair.stats import multiclass_match_test
    >>> counts = {"a": [[8, 1, 1], [2, 6, 2], [1, 1, 9]],
    ...           "b": [[3, 3, 4], [1, 4, 1], [1, 2, 3]]}
    >>> res = multiclass_match_test(counts=counts, metric="tpr")
    >>> res
    MulticlassMatchResult(alpha=0.05, n_tests=6, n_rejected=0)
    >>> res.pvalues.round(3)
    group  class
    a      0        0.248
           1        1.000
           2        1.000
    b      0        0.248
           1        1.000
           2        1.000
    Name: p_adjusted, dtype: float64
    """

    _keys = ("group", "class", "metric")

    def _row_keys(self):
        keys = ["group"]
        if self.frame["class"].notna().any():
            keys.append("class")
        if self.frame["metric"].nunique() > 1:
            keys.append("metric")
        return keys


# =====================================================================================
# Data: the groups' matrices, their classes and references
# =====================================================================================
def _group_names(groups, where, named):
    """The groups at ``where`` as messages name them: by label, or by position
    when the counts carry no labels."""
    if named:
        return f"group(s) {format_labels(groups[where])}"
    return f"the group(s) at position(s) {format_labels(where)}"


def _warn_references(refs, groups, labels, named=True):
    """A :class:`ReferenceWarning` for empty reference rows and cells; ``named``:
    whether the groups have labels (else they are named by position)."""
    groups = np.asarray(groups, dtype=object)
    rows = refs.sum(axis=-1) == 0  # (G, K): a class that is never true
    cells = refs == 0
    if rows.any():
        where = np.flatnonzero(rows.any(axis=1))
        absent = format_labels(np.asarray(labels)[rows.any(axis=0)])
        warnings.warn(
            f"the reference of {_group_names(groups, where, named)} has no case "
            f"of true class(es) {absent}: under H0 those classes never occur, so "
            f"their per-class metrics are undefined and any such case in the group "
            f"is impossible. Use reference='rest' or 'total', or add a pseudo-count "
            f"to the reference (reference + 0.5).",
            ReferenceWarning,
            stacklevel=5,  # the caller of multiclass_match_test
        )
    elif cells.any():
        where = np.flatnonzero(cells.any(axis=(1, 2)))
        warnings.warn(
            f"the reference of {_group_names(groups, where, named)} has empty "
            f"cells: under H0 those cells have probability 0, so the null law is "
            f"degenerate there (a group with cases in them is judged against a law "
            f"that cannot produce it). Use a larger reference (reference='rest' or "
            f"'total') or add a pseudo-count (reference + 0.5).",
            ReferenceWarning,
            stacklevel=5,  # the caller of multiclass_match_test
        )


# =====================================================================================
# The law of a whole-matrix or averaged score
# =====================================================================================
def _matrix_logpmf(flat, n, probs):
    """Multinomial log-pmf of flattened matrices ``flat`` (N, d) of total ``n``
    under each row of ``probs`` (G, d): shape (N, G); ``-inf`` where a matrix has a
    case in a cell of probability 0."""
    base = _log_factorial(np.int64(n)) - _log_factorial(flat).sum(axis=1)
    positive = probs > 0
    logp = np.where(positive, np.log(np.where(positive, probs, 1.0)), 0.0)
    out = base[:, None] + flat @ logp.T
    impossible = flat @ (~positive).T.astype(np.int64) > 0
    return np.where(impossible, -np.inf, out)


def _scorer(name, average):
    """Score of matrices ``(..., K, K)`` (NaN where undefined)."""

    def score(c):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
            return multiclass_metric(name, c, average=average, zero_division=np.nan)

    return score


def _tails_from_sorted(v, mass, s):
    """Unnormalised tails ``P(S <= s, defined)``, ``P(S >= s, defined)`` and
    ``P(defined)`` for each column of ``mass`` (N_def, G), the pmf of the defined
    matrices in the order of their sorted scores ``v``, and observed scores ``s``
    (cumulative sums from both ends, so small tails keep their precision)."""
    below = np.vstack([np.zeros((1, mass.shape[1])), np.cumsum(mass, axis=0)])
    above = np.vstack(
        [np.cumsum(mass[::-1], axis=0)[::-1], np.zeros((1, mass.shape[1]))]
    )
    tol = _TIE_RTOL * np.maximum(1.0, np.abs(s))
    with np.errstate(invalid="ignore"):
        hi = np.searchsorted(v, np.where(np.isnan(s), np.inf, s + tol), side="right")
        lo = np.searchsorted(v, np.where(np.isnan(s), np.inf, s - tol), side="left")
    cols = np.arange(mass.shape[1])
    return below[hi, cols], above[lo, cols], below[-1]


@lru_cache(maxsize=2)
def _matrices(n, k):
    """All K x K matrices of size ``n`` (read-only; the last two sizes kept)."""
    cms = enumerate_multiclass_matrices(n, k)
    cms.flags.writeable = False
    return cms


def _range_from_sorted(v, mass, p_def, half):
    """Central range of the defined scores ``v`` (sorted) with masses ``mass``
    (N_def, G) and total ``p_def``: the smallest value whose lower tail exceeds
    ``half`` and the largest whose upper tail does, so that a score outside it
    has a two-sided p-value of at most ``2 half`` (the binary test's rule)."""
    G = mass.shape[1]
    low, high = np.full(G, np.nan), np.full(G, np.nan)
    if v.shape[0] == 0:
        return low, high
    with np.errstate(invalid="ignore", divide="ignore"):
        below = np.cumsum(mass, axis=0) / p_def
        above = np.cumsum(mass[::-1], axis=0)[::-1] / p_def
    ok = p_def > 0
    first = np.argmax(below > half * (1 + 1e-12), axis=0)
    last = v.shape[0] - 1 - np.argmax((above > half * (1 + 1e-12))[::-1], axis=0)
    low[ok], high[ok] = v[first[ok]], v[last[ok]]
    return low, high


def _enumerate_law(score, n, probs, s, k, half=None):
    """Exact tails of the groups of size ``n`` (rows of ``probs``): the matrices'
    scores are computed and sorted once, the pmf of at most ``_LAW_CELLS``
    (matrix, group) pairs at a time; with ``half``, also the central range of
    the null law (:func:`_range_from_sorted`)."""
    cms = _matrices(n, k)
    values = score(cms)
    defined = ~np.isnan(values)
    order = np.argsort(values[defined], kind="stable")
    v = values[defined][order]
    flat = cms.reshape(cms.shape[0], -1)[defined][order]
    G = probs.shape[0]
    lower_u, upper_u, p_def = np.zeros(G), np.zeros(G), np.zeros(G)
    range_low, range_high = np.full(G, np.nan), np.full(G, np.nan)
    step = max(1, _LAW_CELLS // max(1, flat.shape[0]))
    for start in range(0, G, step):
        part = slice(start, start + step)
        mass = np.exp(_matrix_logpmf(flat, n, probs[part]))
        lower_u[part], upper_u[part], p_def[part] = _tails_from_sorted(v, mass, s[part])
        if half is not None:
            range_low[part], range_high[part] = _range_from_sorted(
                v, mass, p_def[part], half
            )
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.minimum(1.0, lower_u / p_def)
        upper = np.minimum(1.0, upper_u / p_def)
    bad = (p_def <= 0) | np.isnan(s)
    lower = np.where(bad, np.nan, np.clip(lower, 0.0, 1.0))
    upper = np.where(bad, np.nan, np.clip(upper, 0.0, 1.0))
    nan = np.full(lower.shape, np.nan)
    und = np.clip(1.0 - p_def, 0.0, 1.0)
    return lower, upper, und, nan, nan, range_low, range_high


def _montecarlo_law(score, n, p, s, k, n_resamples, rng, half=None):
    """Monte Carlo tails of one group: ``(count + 1) / (defined + 1)`` with their
    binomial standard errors, as in the binary test; with ``half``, the central
    range of the defined null draws (their ``half`` and ``1 - half``
    quantiles)."""
    tol = _TIE_RTOL * max(1.0, abs(s)) if not np.isnan(s) else 0.0
    lower = upper = defined = 0
    kept = []
    for start in range(0, n_resamples, _MC_CHUNK):
        size = min(_MC_CHUNK, n_resamples - start)
        cms = rng.multinomial(n, p, size=size).reshape(size, k, k)
        values = score(cms)
        ok = ~np.isnan(values)
        defined += int(ok.sum())
        if half is not None:
            kept.append(values[ok])
        if not np.isnan(s):
            lower += int((ok & (values <= s + tol)).sum())
            upper += int((ok & (values >= s - tol)).sum())
    p_undef = 1.0 - defined / n_resamples
    range_low = range_high = np.nan
    if half is not None and defined:
        range_low, range_high = np.quantile(np.concatenate(kept), [half, 1 - half])
    if np.isnan(s) or defined == 0:
        return np.nan, np.nan, p_undef, np.nan, np.nan, range_low, range_high
    lo, up = (lower + 1) / (defined + 1), (upper + 1) / (defined + 1)
    se_lo = np.sqrt(lo * (1 - lo) / defined)
    se_up = np.sqrt(up * (1 - up) / defined)
    return min(lo, 1.0), min(up, 1.0), p_undef, se_lo, se_up, range_low, range_high


def _choose_matrix_methods(method, sizes, k, groups):
    rows = np.array([n_multiclass_matrices(int(n), k) for n in sizes], dtype=float)
    if method == "auto":
        return np.where(
            rows <= MULTICLASS_AUTO_ENUMERATE_MAX_ROWS, "enumerate", "montecarlo"
        ).astype(object)
    if method == "enumerate":
        big = rows > MULTICLASS_ENUMERATE_MAX_ROWS
        if big.any():
            largest = 1
            while n_multiclass_matrices(largest + 1, k) <= (
                MULTICLASS_ENUMERATE_MAX_ROWS
            ):
                largest += 1
            raise ValueError(
                f"method='enumerate' sums over C(n + K^2 - 1, K^2 - 1) matrices, "
                f"at most MULTICLASS_ENUMERATE_MAX_ROWS="
                f"{MULTICLASS_ENUMERATE_MAX_ROWS:,} (n <= {largest} for K = {k}); "
                f"group(s) {format_labels(np.asarray(groups)[big])} are larger. Use "
                f"method='montecarlo' (or 'auto', which switches to it)."
            )
    return np.full(sizes.shape, method, dtype=object)


def _interval(score, cms, level, rng_of):
    """Equal-tailed interval of the score under the Dirichlet posterior
    ``Dirichlet(C + 1/2)`` of each matrix (the binary test's ``interval_method="auto"``
    for metrics that are not proportions)."""
    G, k = cms.shape[0], cms.shape[-1]
    low, high = np.full(G, np.nan), np.full(G, np.nan)
    q = [(1 - level) / 2, (1 + level) / 2]
    for g in range(G):
        rng = rng_of(g)
        draws = rng.dirichlet(cms[g].reshape(-1) + _JEFFREYS, size=_CI_DRAWS)
        values = score(draws.reshape(-1, k, k))
        if (~np.isnan(values)).any():
            low[g], high[g] = np.nanquantile(values, q)
    return low, high


def _matrix_rows(name, average, label, method, groups, cms, refs, options):
    """The rows of an averaged or whole-matrix metric: shape (G,) columns."""
    k = cms.shape[-1]
    score = _scorer(name, average)
    seed = options["seed"]
    sizes = cms.sum(axis=(1, 2))
    observed = score(cms)
    methods = _choose_matrix_methods(method, sizes, k, groups)
    probs = (refs / refs.sum(axis=(1, 2), keepdims=True)).reshape(len(groups), -1)
    G = len(groups)
    keys = ("lo", "up", "und", "se_lo", "se_up", "range_low", "range_high")
    out = {key: np.full(G, np.nan) for key in keys}
    half = (
        None
        if options["confidence_level"] is None
        else (1.0 - options["confidence_level"]) / 2.0
    )
    for n in np.unique(sizes[methods == "enumerate"]):
        members = np.flatnonzero((sizes == n) & (methods == "enumerate"))
        res = _enumerate_law(score, int(n), probs[members], observed[members], k, half)
        for key, values in zip(out, res, strict=True):
            out[key][members] = values
    for g in np.flatnonzero(methods == "montecarlo"):
        rng = child_rng(seed, label, groups[g])
        res = _montecarlo_law(
            score,
            int(sizes[g]),
            probs[g],
            observed[g],
            k,
            options["n_resamples"],
            rng,
            half,
        )
        for key, value in zip(out, res, strict=True):
            out[key][g] = value
    undefined = np.isnan(observed)
    if undefined.any():
        warnings.warn(
            f"{label} is undefined (0/0) for group(s) "
            f"{format_labels(np.asarray(groups)[undefined])}, so they cannot be "
            f"tested (p-value NaN).",
            UndefinedGroupMetricWarning,
            stacklevel=5,  # the caller of multiclass_match_test
        )
    lower, upper = out["lo"], out["up"]
    alternative = options["alternative"]
    if alternative == "less":
        p, se = lower, out["se_lo"]
    elif alternative == "greater":
        p, se = upper, out["se_up"]
    else:
        with np.errstate(invalid="ignore"):
            p = np.minimum(1.0, 2.0 * np.minimum(lower, upper))
            se = np.minimum(
                1.0, 2.0 * np.where(lower <= upper, out["se_lo"], out["se_up"])
            )
    frame = {
        "group": list(groups),
        "class": None,
        "n": sizes,
        "metric": label,
        "score": observed,
        "reference_score": score(refs),
    }
    if options["confidence_level"] is not None:
        level = options["confidence_level"]
        low, high = _interval(
            score, cms, level, lambda g: child_rng(seed, "ci", label, groups[g])
        )
        frame.update(
            score_low=low,
            score_high=high,
            # the central range of the null law at the group's size, as in the
            # binary test: a score outside it has a p-value <= 1 - confidence_level
            reference_range_low=out["range_low"],
            reference_range_high=out["range_high"],
        )
    frame.update(
        p_lower_tail=lower,
        p_upper_tail=upper,
        p_value=p,
        p_undefined=out["und"],
        se=np.where(methods == "montecarlo", se, np.nan),
        method=methods,
    )
    return pd.DataFrame(frame)


def _per_class_rows(metrics, method, groups, labels, cms, refs, options):
    """The rows of one-vs-rest metrics per class: the binary test on the (group,
    class) one-vs-rest matrices against the references' one-vs-rest matrices."""
    k = cms.shape[-1]
    keys = [
        f"{format_label(g)} / class {format_label(c)}" for g in groups for c in labels
    ]
    if len(set(keys)) != len(keys):  # pragma: no cover - labels built to collide
        raise ValueError("group and class labels give ambiguous (group, class) names.")
    ovr = one_vs_rest(cms).reshape(-1, 4)
    ref_ovr = one_vs_rest(refs).reshape(-1, 4)
    with warnings.catch_warnings():
        # the K x K reference was checked (_warn_references): an empty one-vs-rest
        # reference cell is an empty K x K cell
        warnings.simplefilter("ignore", ReferenceWarning)
        res = _binary_match_test(
            counts=dict(zip(keys, ovr, strict=True)),
            reference=ref_ovr,
            metric=list(metrics),
            # an explicit method is one of the published law's
            null="two-sample" if method == "auto" else "fixed-reference",
            method=method,
            alternative=options["alternative"],
            correction=None,
            alpha=options["alpha"],
            confidence_level=options["confidence_level"],
            n_resamples=options["n_resamples"],
            random_state=options["seed"],
        )
    frame = pd.DataFrame(res.frame).drop(columns=["reject", "p_adjusted"])
    where = {key: i for i, key in enumerate(keys)}
    index = frame["group"].map(where).to_numpy(dtype=np.int64)
    frame["group"] = np.asarray(groups, dtype=object)[index // k]
    frame.insert(1, "class", np.asarray(labels, dtype=object)[index % k])
    return frame


# =====================================================================================
# The test
# =====================================================================================
def _resolve(metric):
    """``(whole-matrix name, None)`` or ``(None, registry metric)``."""
    name = whole_matrix_name(metric)
    if name is not None:
        return name, None
    return None, get_metric(metric)


@validate_params(
    {
        "y_true": ["array-like", str, None],
        "y_pred": ["array-like", str, None],
        "sensitive_features": ["array-like", str, None],
        "counts": ["array-like", Mapping, None],
        "labels": ["array-like", None],
        "reference": REFERENCE,
        "metric": [str, list, tuple],
        "average": [StrOptions(set(_AVERAGES)), None],
        "method": [StrOptions(set(METHODS))],
        "alternative": [StrOptions(set(ALTERNATIVES))],
        "correction": CORRECTION,
        "alpha": [Number(0, 1, closed="neither")],
        "confidence_level": [Number(0, 1, closed="neither"), None],
        "n_resamples": [Whole(1, MAX_N_RESAMPLES)],
        "random_state": RANDOM_STATE,
        "data": "no_validation",
    }
)
def multiclass_match_test(
    y_true=None,
    y_pred=None,
    *,
    sensitive_features=None,
    counts=None,
    data=None,
    labels=None,
    reference="rest",
    metric="tpr",
    average=None,
    method="auto",
    alternative="two-sided",
    correction="holm",
    alpha=0.05,
    confidence_level=0.95,
    n_resamples=100_000,
    random_state=0,
):
    """MATCH test for multiclass groups: per class, averaged or whole-matrix.

    H0: the group's ``K x K`` confusion matrix is ``Multinomial(n, p_ref)``, with
    ``p_ref`` the reference's cell proportions. The tails ``P(S <= s)`` and
    ``P(S >= s)`` of the group's score ``s`` under H0 are conditional on the score
    being defined, as in :func:`match_test`.

    - Per-class (one-vs-rest) metrics, ``average=None``: class ``k``'s one-vs-rest
      matrix is ``Multinomial(n, q_k)`` (aggregation property of the
      multinomial), ``q_k`` the reference's one-vs-rest proportions, so each
      (group, class) is tested by :func:`match_test` with those explicit
      references (exact for binomial and joint-ratio metrics at any size).
    - Averaged one-vs-rest metrics (``average="macro"``, ``"weighted"``,
      ``"micro"``) and the whole-matrix metrics ``"accuracy"``,
      ``"balanced_accuracy"``, ``"mcc"`` (Gorodkin's R_K) and ``"kappa"``: the
      exact law summed over all ``C(n + K^2 - 1, K^2 - 1)`` matrices of size ``n``
      (``method="enumerate"``), or ``n_resamples`` multinomial draws
      (``method="montecarlo"``, tails ``(count + 1) / (defined draws + 1)`` with
      their standard error in ``se``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,), default=None
        True and predicted class labels; or pass ``counts``.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, \
            n_features), default=None
        Group label of each sample (required with rows).
    counts : array-like of shape (n_groups, K, K), mapping or MulticlassCounts, \
            default=None
        Per-group matrices (rows true, columns predicted): an array (groups
        labelled ``0 .. n_groups - 1``), a mapping ``{group: K x K}``, or the
        result of :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`.
    data : DataFrame or table, default=None
        A table whose columns the row arguments then name (pandas, polars,
        pyarrow, dask, DuckDB, PySpark, ...), counted by its own engine in
        one grouped aggregation; see :ref:`data_sources`.
    labels : array-like of shape (K,), default=None
        The classes, in the order of the rows and columns. With rows as in
        :func:`~sklearn_smallfair.metrics.multiclass_confusion_counts`; with
        ``counts`` it names the classes (``0 .. K - 1`` by default) and must have
        length ``K``.
    reference : {"rest", "total"}, group label or array-like, default="rest"
        ``"rest"``: the sum of all other groups' matrices; ``"total"``: all
        groups; a group label: that group's matrix; or explicit counts of shape
        ``(K, K)`` or ``(n_groups, K, K)``. A reference with an empty row or cell
        makes the null law degenerate and raises a
        :class:`~sklearn_smallfair.exceptions.ReferenceWarning`.
    metric : str or list of str, default="tpr"
        Registry metrics (one-vs-rest per class, or averaged with ``average``) or
        whole-matrix metrics (``"accuracy"``, ``"balanced_accuracy"``, ``"mcc"``,
        ``"kappa"``).
    average : {"macro", "weighted", "micro"} or None, default=None
        Average of the one-vs-rest metrics, as in
        :func:`~sklearn_smallfair.metrics.multiclass_metric`; the row's metric is
        then named ``"<metric>_<average>"``. Not allowed with whole-matrix
        metrics.
    method : str, default="auto"
        Per-class metrics: any method of :func:`match_test`. Averaged and
        whole-matrix metrics: ``"enumerate"`` (exact; at most
        ``MULTICLASS_ENUMERATE_MAX_ROWS`` = 4,000,000 matrices, ``n <= 20`` for
        ``K = 3``), ``"montecarlo"`` or ``"auto"`` (enumeration up to
        ``MULTICLASS_AUTO_ENUMERATE_MAX_ROWS`` = 500,000 matrices: ``n <= 15``
        for ``K = 3``, ``n <= 8`` for ``K = 4``; Monte Carlo above).
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        ``"two-sided"``: ``min(1, 2 min(lower, upper))``.
    correction : {"holm", "bonferroni", "fdr_bh", "none"} or None, default="holm"
        Adjustment across groups and classes, per metric.
    alpha : float in (0, 1), default=0.05
        Level of the ``reject`` column.
    confidence_level : float in (0, 1) or None, default=0.95
        Level of the intervals of the group's and the reference's scores (per
        class: as in :func:`match_test`; averaged and whole-matrix: the
        equal-tailed interval of the score under the posterior
        ``Dirichlet(C + 1/2)``, from 2,000 draws). ``None`` leaves them out.
    n_resamples : int in [1, MAX_N_RESAMPLES], default=100_000
        Monte Carlo draws per (metric, group). Where a p-value is drawn, fewer
        than ``ceil(1 / alpha) - 1`` draws (``ceil(2 / alpha) - 1`` two-sided),
        with which no p-value can reach ``alpha``, are an error.
    random_state : None, int, numpy Generator, RandomState or SeedSequence, \
            default=0
        Seed of the Monte Carlo draws and intervals (``None`` for fresh
        entropy); each (metric, group) has its own stream keyed by their labels.

    Returns
    -------
    result : MulticlassMatchResult
        The columns of :class:`MatchResult` with ``class`` after ``group``
        (``None`` on rows of averaged and whole-matrix metrics).

    See Also
    --------
    match_test : The binary test.
    sklearn_smallfair.metrics.multiclass_metric : The metrics tested.

    Examples
    --------
    >>> from sklearn_smallfair.stats import multiclass_match_test
    >>> counts = {"a": [[30, 5, 1], [6, 25, 4], [2, 5, 22]],
    ...           "b": [[20, 4, 2], [5, 18, 3], [1, 4, 16]],
    ...           "c": [[2, 3, 1], [2, 1, 1], [0, 2, 3]]}
    >>> res = multiclass_match_test(counts=counts, labels=["low", "mid", "high"],
    ...                             metric="tpr")
    >>> res.frame[["group", "class", "n", "score", "p_value", "method"]].round(3)
      group class    n  score  p_value       method
    0     a   low  100  0.833    0.197  berger-boos
    1     a   mid  100  0.714    0.521  berger-boos
    2     a  high  100  0.759    0.873  berger-boos
    3     b   low   73  0.769    0.997  berger-boos
    4     b   mid   73  0.692    0.876  berger-boos
    5     b  high   73  0.762    0.878  berger-boos
    6     c   low   15  0.333    0.045  berger-boos
    7     c   mid   15  0.250    0.119  berger-boos
    8     c  high   15  0.600    0.502  berger-boos

    Cohen's kappa of the whole matrix: exact by enumeration for the group of 15
    (490,314 matrices), Monte Carlo for the larger ones.

    >>> res = multiclass_match_test(counts=counts, metric="kappa",
    ...                             n_resamples=20_000)
    >>> res.frame[["group", "n", "score", "p_value", "method"]].round(3)
      group    n  score  p_value      method
    0     a  100  0.653    0.062  montecarlo
    1     b   73  0.608    0.714  montecarlo
    2     c   15  0.112    0.008   enumerate
    """
    y_true, y_pred, sensitive_features, row_weight = from_data(
        data, y_true, y_pred, sensitive_features, counts=counts
    )
    correction = check_correction(correction)
    names = [metric] if isinstance(metric, str) else list(metric)
    if not names:
        raise ValueError("metric is empty; name at least one metric.")
    resolved = [_resolve(m) for m in names]
    whole = [m for m, (name, _) in zip(names, resolved, strict=True) if name]
    if whole and average is not None:
        raise ValueError(
            f"average={average!r} does not apply to {whole}, defined on the whole "
            f"K x K matrix; leave average=None, or test them in a separate call."
        )
    for name, reg in resolved:
        if name is None and reg.n_groups != 1:
            raise ValueError(
                f"{reg.name!r} compares two groups and has no per-class form; use a "
                f"single-group metric."
            )
    per_class = average is None and any(name is None for name, _ in resolved)
    matrix = average is not None or whole
    if matrix and method not in _MATRIX_METHODS:
        raise ValueError(
            f"method={method!r} applies to per-class metrics; averaged and "
            f"whole-matrix metrics use method='enumerate' (exact), 'montecarlo' or "
            f"'auto'."
        )
    groups, labels, cms = _group_matrices(
        y_true, y_pred, sensitive_features, counts, labels, sample_weight=row_weight
    )
    refs = _reference_matrices(cms, reference, groups)
    _warn_references(
        refs,
        groups,
        labels,
        named=isinstance(counts, MulticlassCounts) or counts_have_labels(counts),
    )
    options = {
        "alternative": alternative,
        "alpha": float(alpha),
        "confidence_level": confidence_level,
        "n_resamples": int(n_resamples),
        "seed": resolve_seed(random_state),
    }
    frames = []
    if per_class:
        regs = [reg for name, reg in resolved if name is None]
        frames.append(_per_class_rows(regs, method, groups, labels, cms, refs, options))
    for m, (name, reg) in zip(names, resolved, strict=True):
        if name is not None:
            frames.append(
                _matrix_rows(name, None, name, method, groups, cms, refs, options)
            )
        elif average is not None:
            label = f"{reg.name}_{average}"
            frames.append(
                _matrix_rows(m, average, label, method, groups, cms, refs, options)
            )
    frame = pd.concat(frames, ignore_index=True)
    check_draws_can_reject(
        frame["method"],
        int(n_resamples),
        float(alpha),
        two_sided=alternative == "two-sided",
        pvalues=frame["p_value"],
    )
    frame["class"] = frame["class"].astype(object)
    frame["p_adjusted"] = np.nan
    for label in frame["metric"].unique():
        sel = (frame["metric"] == label).to_numpy()
        frame.loc[sel, "p_adjusted"] = adjust_pvalues(
            frame.loc[sel, "p_value"].to_numpy(dtype=float), correction
        )
    for column in ("p_lower_tail", "p_upper_tail", "p_value", "p_adjusted"):
        frame[column] = floor_pvalues(frame[column])
    columns = [
        c
        for c in _ROW_COLUMNS
        if c in frame.columns and (c != "se" or (frame["method"] == "montecarlo").any())
    ]
    return MulticlassMatchResult(frame[columns].reset_index(drop=True), float(alpha))
