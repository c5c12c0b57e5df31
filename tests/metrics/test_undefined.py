"""Counts of undefined values ("holes") over all confusion matrices of size n."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from sklearn_smallfair import enumerate_confusion_matrices
from sklearn_smallfair.metrics import compute_metric, count_undefined, metric_names

JOINT_RATIO = metric_names(family="joint_ratio")
BINOMIAL = metric_names(family="binomial")
SIZES = range(1, 41)


def _closed_form(name, n):
    """Hole counts among the C(n + 3, 3) matrices of size n >= 1."""
    if name in JOINT_RATIO:
        return n + 1
    if name in BINOMIAL or name == "mb":
        return 0
    return {"mcc": 4 * n, "f1": 1, "f1_original": comb(n + 2, 2)}[name]


@pytest.mark.parametrize(
    "name", [*BINOMIAL, *JOINT_RATIO, "f1", "f1_original", "mcc", "mb"]
)
def test_count_undefined_closed_forms(name):
    for n in SIZES:
        expected = _closed_form(name, n)
        assert count_undefined(name, n) == expected, n
        # the same holes are NaN in compute_metric over the enumeration
        values = compute_metric(name, enumerate_confusion_matrices(n))
        assert int(np.isnan(values).sum()) == expected


@pytest.mark.parametrize("name", metric_names(n_groups=1))
def test_count_undefined_size_zero(name):
    # the only matrix of size 0 is (0, 0, 0, 0): every metric is 0/0
    assert count_undefined(name, 0) == 1


def test_count_undefined_aliases():
    assert count_undefined("Recall", 10) == 11
    assert count_undefined("matthews", 10) == 40
    assert count_undefined("prevalence_threshold", 5) == count_undefined("pt", 5)


# --------------------------------------------------------------------------------------
# prevalence threshold: no closed form, checked against brute force


def _pt_holes_fraction(n):
    """Brute force over the (n + 1)^3 grid with exact rational arithmetic.

    PT = (sqrt(TPR FPR) - FPR) / (TPR - FPR) is undefined when TPR or FPR is (a zero
    denominator) or when TPR = FPR.
    """
    holes = set()
    for tp in range(n + 1):
        for fn in range(n + 1):
            for fp in range(n + 1):
                tn = n - tp - fn - fp
                if tn < 0:
                    continue
                if tp + fn == 0 or fp + tn == 0:
                    holes.add((tp, fn, fp, tn))
                elif Fraction(tp, tp + fn) == Fraction(fp, fp + tn):
                    holes.add((tp, fn, fp, tn))
    return holes


@pytest.mark.parametrize("n", range(13))
def test_pt_holes_brute_force(n):
    holes = _pt_holes_fraction(n)
    assert count_undefined("pt", n) == len(holes)
    cms = enumerate_confusion_matrices(n)
    nan_rows = {
        tuple(int(v) for v in row) for row in cms[np.isnan(compute_metric("pt", cms))]
    }
    assert nan_rows == holes


@pytest.mark.parametrize("n", SIZES)
def test_pt_holes_integer_cross_multiplication(n):
    # TPR = FPR  <=>  TP (FP + TN) = FP (TP + FN), exact in integers
    c = enumerate_confusion_matrices(n).astype(object)
    tp, fn, fp, tn = c.T
    pos, neg = tp + fn, fp + tn
    undefined = (pos == 0) | (neg == 0) | (tp * neg == fp * pos)
    assert count_undefined("pt", n) == int(undefined.sum())
    # at least the holes of TPR and FPR (n + 1 each, disjoint for n >= 1) plus the
    # matrices with TPR = FPR = 0 or 1 and both margins > 0 (2 (n - 1) of them)
    assert count_undefined("pt", n) >= 2 * (n + 1) + 2 * (n - 1)


def test_pt_hole_counts_small_values():
    # worked by hand for n = 1, 2: every matrix has a zero margin or TPR = FPR
    # n = 1: all 4 matrices have TP + FN = 0 or FP + TN = 0
    assert count_undefined("pt", 1) == 4
    # n = 2: 10 matrices; defined only for (1,0,0,1) [TPR=1, FPR=0] and (0,1,1,0)
    assert count_undefined("pt", 2) == 8


# --------------------------------------------------------------------------------------
# two-group metrics over ordered pairs of matrices


def _te_closed_form(n1, n2):
    a1, a2 = comb(n1 + 2, 2), comb(n2 + 2, 2)
    t1, t2 = comb(n1 + 3, 3), comb(n2 + 3, 3)
    return a1 * t2 + t1 * a2 - a1 * a2


@pytest.mark.parametrize("n", SIZES)
def test_te_closed_form_equal_sizes(n):
    assert count_undefined("te", n) == _te_closed_form(n, n)
    assert count_undefined("te", (n, n)) == _te_closed_form(n, n)
    assert count_undefined("ofi", n) == 0
    assert count_undefined("ofi", (n, n)) == 0


@pytest.mark.parametrize(
    "n1, n2", [(1, 2), (2, 1), (3, 7), (10, 1), (0, 5), (25, 40), (40, 3), (17, 18)]
)
def test_te_closed_form_unequal_sizes(n1, n2):
    assert count_undefined("te", (n1, n2)) == _te_closed_form(n1, n2)
    assert count_undefined("treatment_equality", (n1, n2)) == _te_closed_form(n1, n2)


def _pairs(n1, n2):
    c1 = enumerate_confusion_matrices(n1)
    c2 = enumerate_confusion_matrices(n2)
    return np.stack(np.broadcast_arrays(c1[:, None, :], c2[None, :, :]), axis=-2)


@pytest.mark.parametrize("n1", range(5))
@pytest.mark.parametrize("n2", range(5))
def test_two_group_counts_brute_force_over_pairs(n1, n2):
    pairs = _pairs(n1, n2)
    assert pairs.shape == (comb(n1 + 3, 3), comb(n2 + 3, 3), 2, 4)
    te_nan = np.isnan(compute_metric("te", pairs))
    assert count_undefined("te", (n1, n2)) == int(te_nan.sum())
    # independently: a pair is undefined exactly when FP_1 = 0 or FP_2 = 0
    loop = sum(
        1
        for a in enumerate_confusion_matrices(n1)
        for b in enumerate_confusion_matrices(n2)
        if a[2] == 0 or b[2] == 0
    )
    assert int(te_nan.sum()) == loop
    ofi_nan = np.isnan(compute_metric("ofi", pairs))
    assert count_undefined("ofi", (n1, n2)) == int(ofi_nan.sum())
    if n1 > 0 and n2 > 0:
        assert not ofi_nan.any()


# --------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "n, error, match",
    [
        (-1, ValueError, "'n' parameter of count_undefined must be"),
        (2.0, TypeError, "'n' parameter of count_undefined must be"),
        (2.5, TypeError, "'n' parameter of count_undefined must be"),
        (True, TypeError, "'n' parameter of count_undefined must be"),
        (np.True_, TypeError, "'n' parameter of count_undefined must be"),
        ("3", TypeError, "'n' parameter of count_undefined must be"),
        (None, TypeError, "'n' parameter of count_undefined must be"),
        (np.float64(3), TypeError, "'n' parameter of count_undefined must be"),
        ((3, 4), TypeError, "single-group metric 'tpr'"),
    ],
)
def test_count_undefined_bad_n_single_group(n, error, match):
    with pytest.raises(error, match=match):
        count_undefined("tpr", n)


@pytest.mark.parametrize(
    "n, error, match",
    [
        (-2, ValueError, "'n' parameter of count_undefined must be"),
        ((1, -1), ValueError, "n2 must be a non-negative integer"),
        ((1, 2.0), TypeError, "n2 must be a non-negative integer"),
        ((False, 2), TypeError, "n1 must be a non-negative integer"),
        ((1, 2, 3), ValueError, r"an int or a pair \(n1, n2\)"),
        (1.5, TypeError, "'n' parameter of count_undefined must be"),
    ],
)
def test_count_undefined_bad_n_two_group(n, error, match):
    with pytest.raises(error, match=match):
        count_undefined("te", n)


def test_count_undefined_numpy_integer_and_unknown_metric():
    assert count_undefined("tpr", np.int64(6)) == 7
    assert count_undefined("te", (np.int32(2), 3)) == _te_closed_form(2, 3)
    with pytest.raises(ValueError, match="unknown metric"):
        count_undefined("nope", 3)


# --------------------------------------------------------------------------------------
# closed forms for any n, a bound on enumeration


def test_closed_forms_need_no_enumeration(monkeypatch):
    from sklearn_smallfair.metrics import _undefined

    def refuse(n):
        raise AssertionError(f"enumerated the matrices of size {n}")

    monkeypatch.setattr(_undefined, "enumerate_confusion_matrices", refuse)
    n = 10**7
    assert count_undefined("tpr", n) == n + 1
    assert count_undefined("ppv", 10**12) == 10**12 + 1
    assert count_undefined("mcc", n) == 4 * n
    assert count_undefined("f1", n) == 1
    assert count_undefined("f1_original", n) == comb(n + 2, 2)
    assert count_undefined("acc", n) == 0
    assert count_undefined("mb", n) == 0
    assert count_undefined("te", (n, 3)) == _te_closed_form(n, 3)
    assert count_undefined("ofi", (n, n)) == 0
    for name in [*BINOMIAL, *JOINT_RATIO, "f1", "f1_original", "mcc", "mb"]:
        assert count_undefined(name, 0) == 1


@pytest.mark.parametrize(
    "name", [*BINOMIAL, *JOINT_RATIO, "f1", "f1_original", "mcc", "mb"]
)
def test_closed_forms_equal_the_enumeration(name):
    from sklearn_smallfair.metrics._registry import get_metric

    func = get_metric(name).func
    for n in range(0, 61):
        expected = int((~np.isfinite(func(enumerate_confusion_matrices(n)))).sum())
        assert count_undefined(name, n) == expected, n


def test_te_component_closed_form_equals_the_enumeration():
    from sklearn_smallfair.metrics._registry import get_metric

    component = get_metric("te").component
    for n in range(0, 41):
        values = component.func(enumerate_confusion_matrices(n))
        holes = int((~np.isfinite(values)).sum())  # 0/0 and x/0
        assert holes == comb(n + 2, 2)
        assert count_undefined("te", (n, 1)) == _te_closed_form(n, 1)


def test_enumeration_only_metric_above_the_bound():
    with pytest.raises(ValueError) as exc:
        count_undefined("pt", 10**7)
    message = str(exc.value)
    assert "count_undefined('pt', n=10000000)" in message
    assert "MAX_ENUMERATION_BYTES = 2 GiB (n <= 736)" in message
    assert "4.518 ZiB of memory" in message  # the memory it would need
    assert "no closed-form hole count" in message and "smaller n" in message
    with pytest.raises(ValueError, match="count_undefined\\('pt', n=737\\)"):
        count_undefined("pt", 737)


def test_enumeration_bound_is_checked_before_enumerating(monkeypatch):
    from sklearn_smallfair import _enumeration
    from sklearn_smallfair._enumeration import _enumeration_bytes

    monkeypatch.setattr(_enumeration, "MAX_ENUMERATION_BYTES", _enumeration_bytes(20))
    assert count_undefined("pt", 20) == len(_pt_holes_fraction(20))
    with pytest.raises(ValueError, match=r"\(n <= 20\)"):
        count_undefined("pt", 21)


def test_metric_outside_the_registry_is_enumerated():
    # same name and family as tpr but another function: no closed form assumed
    from dataclasses import replace

    from sklearn_smallfair.metrics._registry import get_metric

    tpr = get_metric("tpr")
    custom = replace(tpr, func=lambda c: np.asarray(c, dtype=float)[..., 0] / 1.0)
    assert custom == tpr  # the dataclass ignores func in comparisons
    assert count_undefined(custom, 10) == 0
    assert count_undefined(tpr, 10) == 11
    with pytest.raises(ValueError, match="MAX_ENUMERATION_BYTES"):
        count_undefined(custom, 10**4)


@pytest.mark.parametrize(
    "n, error, match",
    [
        ((10**6, -1), ValueError, "n2 must be a non-negative integer"),
        ((1.5, 3), TypeError, "n1 must be a non-negative integer"),
    ],
)
def test_two_group_n_checked_with_closed_forms(n, error, match):
    with pytest.raises(error, match=match):
        count_undefined("te", n)
