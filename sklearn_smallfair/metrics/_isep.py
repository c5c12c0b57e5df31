"""The conditional-mutual-information separation metric ``I_sep``."""

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.utils.fixes import parse_version

from .._groups import check_sensitive_features
from .._params import Number, Whole, validate_params
from .._validation import check_paired_targets

__all__ = ["isep_score"]


def _numeric(values, name):
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be numeric (labels and predictions of a regression or "
            f"0/1 classes)."
        ) from None
    if not np.isfinite(out).all():
        raise ValueError(f"{name} contains infinite values; pass finite numbers.")
    return out


@validate_params(
    {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "sensitive_features": ["array-like"],
        "C": [Number(0, None, closed="right")],
        "max_iter": [Whole(1, None, closed="left")],
    }
)
def isep_score(y_true, y_pred, *, sensitive_features, C=1.0, max_iter=100):
    """Separation violation ``I_sep``: how much the predictions tell of the group
    beyond the label.

    Separation holds when the prediction ``Ŷ`` is independent of the group ``S``
    given the label ``Y``, that is when the conditional mutual information
    ``I(S; Ŷ | Y)`` is zero. ``I_sep`` is that information as a fraction of the
    group's entropy given the label,

    .. math::

        I_{sep} = \\frac{I(S; \\hat Y \\mid Y)}{H(S \\mid Y)}
                = \\frac{\\sum_i \\log \\hat P(s_i \\mid y_i, \\hat y_i)
                        - \\log \\hat P(s_i \\mid y_i)}
                       {-\\sum_i \\log \\hat P(s_i \\mid y_i)},

    estimated as in the comparative-separation study's code: ``P(S | Y, Ŷ)`` and
    ``P(S | Y)`` are two logistic regressions of the group on ``(y, ŷ)`` and on
    ``y`` (raw features, intercept, L2 penalty with ``C``), fitted and evaluated
    on the same samples (a plug-in estimate). ``0`` means that ``ŷ`` adds nothing
    to ``y`` for predicting the group (up to estimation error), ``1`` that ``ŷ``
    and ``y`` together determine it.

    The estimate is a plug-in: it is positive on average even without any
    violation (its bias is of order ``1 / n``) and has no test attached; at small
    ``n`` compare it with its value under permutations of the groups within
    label strata, or use :func:`~sklearn_smallfair.stats.separation_test` and
    :func:`~sklearn_smallfair.stats.comparative_separation_test`. The models are
    linear in ``y`` and ``ŷ``, so a dependence they cannot represent (for
    example through ``|ŷ - y|``) is not measured.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Numeric labels (regression targets or 0/1 classes).
    y_pred : array-like of shape (n_samples,)
        Numeric predictions.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_features)
        Group label of each sample; at least two groups. With more than two the
        logistic regressions are multinomial.
    C : float, default=1.0
        Inverse strength of the L2 penalty of both logistic regressions (the
        published code uses scikit-learn's default, 1.0). ``numpy.inf`` fits them
        without penalty (maximum likelihood).
    max_iter : int, default=100
        Iterations of the solver (lbfgs) of each regression (scikit-learn's
        default, as published).

    Returns
    -------
    isep : float
        The estimate of ``I(S; Ŷ | Y) / H(S | Y)``.

    References
    ----------
    The comparative-separation study's code, ``real/src/metrics.py``
    (``Metrics.Isep``), https://github.com/hil-se/Comparative_Separation.

    Examples
    --------
    Predictions that copy the label tell nothing more of the group:

    >>> from sklearn_smallfair.metrics import isep_score
    >>> y = [1, 2, 3, 5, 8, 1, 2, 3, 5, 8]
    >>> groups = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    >>> round(isep_score(y, y, sensitive_features=groups), 6)
    0.0

    Predictions shifted up for group 1 reveal the group, the more so the larger
    the shift (without penalty, a shift of 2 separates the groups completely):

    >>> import numpy as np
    >>> shift = np.array(groups)
    >>> [round(isep_score(y, y + d * shift, sensitive_features=groups), 3)
    ...  for d in (0.5, 2)]
    [0.102, 0.616]
    >>> round(isep_score(y, y + 2 * shift, sensitive_features=groups, C=np.inf), 3)
    1.0
    """
    y_true, y_pred = check_paired_targets(y_true, y_pred)
    y = _numeric(y_true, "y_true")
    pred = _numeric(y_pred, "y_pred")
    groups, codes, _ = check_sensitive_features(sensitive_features, y.shape[0])
    if len(groups) < 2:
        raise ValueError(
            "sensitive_features has a single group; I_sep needs at least two."
        )
    if np.isfinite(C):
        penalty = {"C": C}
    elif parse_version(sklearn.__version__) >= parse_version("1.8"):
        penalty = {"C": np.inf}  # penalty=None is deprecated from 1.8 on
    else:
        penalty = {"penalty": None}
    joint = np.column_stack([y, pred])
    margin = y[:, None]
    rows = np.arange(y.shape[0])
    log_p = []
    for features in (joint, margin):
        model = LogisticRegression(max_iter=max_iter, **penalty).fit(features, codes)
        # classes_ are the sorted codes 0..K-1: column k is P(S = group k)
        log_p.append(model.predict_log_proba(features)[rows, codes])
    info = np.sum(log_p[0] - log_p[1])
    entropy = -np.sum(log_p[1])
    if entropy <= 0:
        raise ValueError(
            "y_true determines the group exactly (H(S | Y) = 0): I_sep is undefined."
        )
    return float(info / entropy)
