"""The factors of the dataset-adaptive normalized score: dimensionality, SNR and
imbalance."""

import math

import numpy as np
from scipy.special import expit

from .._groups import _unique_inverse

#: Fraction of the sample size at which the dimensionality factor starts to grow.
_DIM_RATIO = 0.05


def _dimensionality_factor(n_features, n_samples):
    """``f(d, N) = 1 + max(0, sigma(d / (0.05 N) - 1) - sigma(0))``."""
    z = n_features / (_DIM_RATIO * n_samples) - 1.0
    return 1.0 + max(0.0, float(expit(z)) - 0.5)


def _default_snr_factor(snr, snr_scale):
    """``g(SNR) = 1 - exp(-SNR / snr_scale)``: 0 at SNR 0, increasing, 1 at inf."""
    return -math.expm1(-snr / snr_scale) if np.isfinite(snr) else 1.0


def _ratio(signal, noise):
    """``signal / noise`` with ``x / 0 = inf`` for ``x > 0`` and ``0 / 0 = 0``."""
    if noise > 0:
        return float(signal / noise)
    return math.inf if signal > 0 else 0.0


def _regression_snr(y_true, y_pred):
    """``sum(y^2) / sum((y - y_pred)^2)``: squared targets (not centred)."""
    noise = float(np.sum((y_true - y_pred) ** 2))
    if noise == 0:
        return math.inf
    return _ratio(float(np.sum(y_true**2)), noise)


def _classification_snr(y_true, y_pred):
    """Correct over incorrect predictions: trace(C) / (sum(C) - trace(C))."""
    correct = int(np.sum(_equal_labels(y_true, y_pred)))
    return _ratio(correct, y_true.shape[0] - correct)


def _equal_labels(a, b):
    if a.dtype.kind == "O" or b.dtype.kind == "O" or a.dtype.kind != b.dtype.kind:
        # Python == element by element (1 == 1.0, "1" != 1), in one ufunc call
        return np.equal(a.astype(object), b.astype(object)).astype(bool)
    return a == b


def _clustering_snr(X, codes):
    """Between-cluster over within-cluster dispersion of ``X`` for the cluster
    ``codes`` (``0 .. k - 1``, each used).

    ``B = sum_k n_k ||c_k - c||^2`` and ``W = sum_k sum_{i in k} ||x_i - c_k||^2``:
    the Calinski-Harabasz index without its ``(N - K) / (K - 1)`` factor.
    """
    k = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, codes, X)
    centroids = sums / counts[:, None]
    overall = X.mean(axis=0)
    between = float(np.sum(counts * np.sum((centroids - overall) ** 2, axis=1)))
    within = float(np.sum((X - centroids[codes]) ** 2))
    return _ratio(between, within)


def _imbalance(y_true, task):
    """``(name, value, h)`` for the classes present in ``y_true``."""
    counts = np.bincount(_codes(y_true))
    if counts.shape[0] < 2:
        raise ValueError(
            f"y_true holds a single class, so the class imbalance of the {task} "
            "task is undefined; score data with at least two classes."
        )
    if task == "binary":
        ci = counts.max() / counts.min()
        return "CI", float(ci), 1.0 + math.log(ci)
    acir = float(np.mean(counts / counts.max()))
    return "ACIR", acir, 1.0 + math.log(1.0 / acir)


def _codes(y):
    """Codes ``0 .. k - 1`` of the ``k`` distinct labels of ``y``."""
    return _unique_inverse(y)[1]
