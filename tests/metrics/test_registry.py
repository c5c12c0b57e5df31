"""Tests of the metric registry: formulas, shapes, names, zero_division."""

import dataclasses
import warnings
from collections import Counter
from decimal import Decimal, getcontext
from math import sqrt

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import UndefinedMetricWarning

from sklearn_smallfair.exceptions import UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import Metric, compute_metric, get_metric, metric_names

NAN = np.nan
SINGLE = metric_names(n_groups=1)
ALL = metric_names()

# --------------------------------------------------------------------------------------
# Hand-computed values on fixed matrices (TP, FN, FP, TN).
MATRICES = [
    (3, 1, 2, 4),  # n = 10
    (5, 0, 0, 5),  # perfect classifier
    (0, 4, 1, 0),  # everything wrong, n = 5
    (2, 2, 1, 3),  # n = 8
    (0, 0, 3, 3),  # no positives: TPR undefined
    (1, 1, 2, 2),  # TPR = FPR = 1/2: PT undefined
]
HAND = {
    #                (3,1,2,4)  (5,0,0,5) (0,4,1,0) (2,2,1,3)  (0,0,3,3) (1,1,2,2)
    "acc": [7 / 10, 1.0, 0.0, 5 / 8, 1 / 2, 1 / 2],
    "prev": [4 / 10, 1 / 2, 4 / 5, 1 / 2, 0.0, 2 / 6],
    "ppr": [5 / 10, 1 / 2, 1 / 5, 3 / 8, 1 / 2, 1 / 2],
    "inacc": [3 / 10, 0.0, 1.0, 3 / 8, 1 / 2, 1 / 2],
    "nprev": [6 / 10, 1 / 2, 1 / 5, 1 / 2, 1.0, 4 / 6],
    "pnr": [5 / 10, 1 / 2, 4 / 5, 5 / 8, 1 / 2, 1 / 2],
    "tpr": [3 / 4, 1.0, 0.0, 1 / 2, NAN, 1 / 2],
    "fnr": [1 / 4, 0.0, 1.0, 1 / 2, NAN, 1 / 2],
    "fpr": [2 / 6, 0.0, 1.0, 1 / 4, 1 / 2, 1 / 2],
    "tnr": [4 / 6, 1.0, 0.0, 3 / 4, 1 / 2, 1 / 2],
    "ppv": [3 / 5, 1.0, 0.0, 2 / 3, 0.0, 1 / 3],
    "fdr": [2 / 5, 0.0, 1.0, 1 / 3, 1.0, 2 / 3],
    "npv": [4 / 5, 1.0, 0.0, 3 / 5, 1.0, 2 / 3],
    "for": [1 / 5, 0.0, 1.0, 2 / 5, 0.0, 1 / 3],
    "f1": [6 / 9, 1.0, 0.0, 4 / 7, 0.0, 2 / 5],
    "f1_original": [2 / 3, 1.0, NAN, 4 / 7, NAN, 2 / 5],
    # (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))
    "mcc": [10 / sqrt(5 * 4 * 6 * 5), 1.0, -1.0, 4 / sqrt(3 * 4 * 4 * 5), NAN, 0.0],
    # (sqrt(TPR FPR) - FPR) / (TPR - FPR); (3,1,2,4): (1/2 - 1/3) / (3/4 - 1/3) = 2/5
    "pt": [2 / 5, 0.0, 1.0, sqrt(2) - 1, NAN, NAN],
    "mb": [1 / 10, 0.0, -3 / 5, -1 / 8, 1 / 2, 1 / 6],
}


def test_hand_table_covers_every_single_group_metric():
    assert sorted(HAND) == sorted(SINGLE)


@pytest.mark.parametrize("name", SINGLE)
def test_formula_on_hand_computed_matrices(name):
    values = compute_metric(name, MATRICES)
    assert_allclose(values, HAND[name], rtol=1e-14, atol=1e-15)  # NaN where NaN
    for cm, expected in zip(MATRICES, HAND[name]):
        value = compute_metric(name, cm)
        assert isinstance(value, float)
        assert_allclose(value, expected, rtol=1e-14, atol=1e-15)


# Independent vectorized formulas, for random and float counts.
def _ratio(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a / b
    return np.where(np.isfinite(out), out, np.nan)


def _reference(name, c):
    tp, fn, fp, tn = (c[..., i].astype(float) for i in range(4))
    n = tp + fn + fp + tn
    tpr, fpr = _ratio(tp, tp + fn), _ratio(fp, fp + tn)
    ppv = _ratio(tp, tp + fp)
    with np.errstate(divide="ignore", invalid="ignore"):
        table = {
            "acc": _ratio(tp + tn, n),
            "prev": _ratio(tp + fn, n),
            "ppr": _ratio(tp + fp, n),
            "inacc": _ratio(fp + fn, n),
            "nprev": _ratio(tn + fp, n),
            "pnr": _ratio(tn + fn, n),
            "tpr": tpr,
            "fnr": _ratio(fn, fn + tp),
            "fpr": fpr,
            "tnr": _ratio(tn, tn + fp),
            "ppv": ppv,
            "fdr": _ratio(fp, fp + tp),
            "npv": _ratio(tn, tn + fn),
            "for": _ratio(fn, fn + tn),
            "f1": _ratio(2 * tp, 2 * tp + fp + fn),
            # 1/PPV and 1/TPR are 1/0 when TP = 0: undefined
            "f1_original": np.where(tp > 0, _ratio(2.0, 1 / ppv + 1 / tpr), np.nan),
            "mcc": _ratio(
                tp * tn - fp * fn,
                np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)),
            ),
            "pt": _ratio(np.sqrt(tpr * fpr) - fpr, tpr - fpr),
            "mb": _ratio(fp - fn, n),
        }
    return table[name]


@pytest.mark.parametrize("name", SINGLE)
@pytest.mark.parametrize("kind", ["int", "float"])
def test_formula_on_random_counts(name, kind):
    rng = np.random.default_rng([SINGLE.index(name), kind == "float"])
    if kind == "int":
        counts = rng.integers(0, 6, size=(2000, 4))
    else:  # smoothed-like fractional counts
        counts = rng.gamma(0.5, 3.0, size=(2000, 4)) * (rng.random((2000, 4)) < 0.8)
    expected = _reference(name, counts)
    got = compute_metric(name, counts)
    assert_array_equal(np.isnan(got), np.isnan(expected))
    assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "name", metric_names(family="binomial") + metric_names(family="joint_ratio")
)
def test_numerator_denominator_cells_describe_the_formula(name):
    m = get_metric(name)
    counts = np.random.default_rng(5).integers(0, 9, size=(500, 4))
    expected = _ratio(
        counts[:, list(m.numerator)].sum(axis=1),
        counts[:, list(m.denominator)].sum(axis=1),
    )
    assert_allclose(compute_metric(m, counts), expected)
    assert set(m.numerator) <= set(m.denominator)
    if m.family == "binomial":
        assert sorted(m.denominator) == [0, 1, 2, 3]
        assert len(m.numerator) == 2
    else:
        assert len(m.numerator) == 1 and len(m.denominator) == 2


# --------------------------------------------------------------------------------------
# shapes


@pytest.mark.parametrize("name", SINGLE)
@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 3, 4), (0, 4), (1, 1, 4)])
def test_any_leading_shape_equals_loop(name, shape):
    rng = np.random.default_rng(len(shape))
    counts = rng.integers(0, 4, size=shape)
    out = compute_metric(name, counts)
    if shape == (4,):
        assert isinstance(out, float)
        loop = compute_metric(name, counts.tolist())
        assert_array_equal(out, loop)
        return
    assert isinstance(out, np.ndarray)
    assert out.shape == shape[:-1]
    assert out.dtype == np.float64
    flat = counts.reshape(-1, 4)
    loop = np.array([compute_metric(name, row) for row in flat]).reshape(shape[:-1])
    assert_array_equal(out, loop)


@pytest.mark.parametrize("name", SINGLE)
def test_int_float_and_bool_counts_agree(name):
    counts = np.random.default_rng(2).integers(0, 2, size=(64, 4))
    as_int = compute_metric(name, counts)
    assert_array_equal(compute_metric(name, counts.astype(float)), as_int)
    assert_array_equal(compute_metric(name, counts.astype(np.uint8)), as_int)
    assert_array_equal(compute_metric(name, counts.astype(bool)), as_int)


def test_float_counts_smoothed():
    # CPS-like fractional cells: every joint ratio is defined
    counts = np.array([2.0, 2 / 7, 6 / 7, 6 / 7])  # CPS(lam=10) of (3, 0, 1, 0)
    assert_allclose(compute_metric("tpr", counts), 2.0 / (2.0 + 2 / 7))
    assert_allclose(compute_metric("fpr", counts), 0.5)
    assert_allclose(compute_metric("tpr", [0.5, 0.5, 0.0, 1e-10]), 0.5)
    assert_allclose(compute_metric("fpr", [0.5, 0.5, 0.0, 1e-10]), 0.0)


# --------------------------------------------------------------------------------------
# names and aliases


def test_metric_names_catalogue():
    assert len(ALL) == 21
    assert len(set(ALL)) == 21
    families = Counter(get_metric(name).family for name in ALL)
    assert families == {"binomial": 6, "joint_ratio": 8, "other": 5, "two_group": 2}
    assert metric_names(family="binomial") == [
        "acc",
        "prev",
        "ppr",
        "inacc",
        "nprev",
        "pnr",
    ]
    assert metric_names(family="joint_ratio") == [
        "tpr",
        "fnr",
        "fpr",
        "tnr",
        "ppv",
        "fdr",
        "npv",
        "for",
    ]
    assert metric_names(family="other") == ["f1", "f1_original", "mcc", "pt", "mb"]
    assert metric_names(family="two_group") == ["ofi", "te"]
    assert metric_names(n_groups=2) == ["ofi", "te"]
    assert len(metric_names(n_groups=1)) == 19
    assert metric_names(family="two_group", n_groups=1) == []
    for name in ALL:
        assert get_metric(name).name == name


@pytest.mark.parametrize(
    "kwargs", [{"family": "ratio"}, {"n_groups": 3}, {"n_groups": 0}]
)
def test_metric_names_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        metric_names(**kwargs)


@pytest.mark.parametrize(
    "alias, name",
    [
        ("recall", "tpr"),
        ("Recall", "tpr"),
        ("SENSITIVITY", "tpr"),
        ("Precision", "ppv"),
        ("specificity", "tnr"),
        ("Specificity ", "tnr"),
        ("matthews", "mcc"),
        ("Matthews_CorrCoef", "mcc"),
        ("MCC", "mcc"),
        ("marginal_benefit", "mb"),
        ("Marginal-Benefit", "mb"),
        ("prevalence_threshold", "pt"),
        ("Prevalence Threshold", "pt"),
        ("treatment_equality", "te"),
        ("Treatment_Equality", "te"),
        ("overall_fairness_index", "ofi"),
        ("accuracy", "acc"),
        ("Accuracy", "acc"),
        ("error_rate", "inacc"),
        ("selection_rate", "ppr"),
        ("base_rate", "prev"),
        ("f1_score", "f1"),
        ("miss_rate", "fnr"),
        ("fall_out", "fpr"),
        ("false_omission_rate", "for"),
        ("FOR", "for"),
        ("TPR", "tpr"),
    ],
)
def test_aliases_resolve_case_insensitively(alias, name):
    assert get_metric(alias).name == name
    counts = np.random.default_rng(0).integers(1, 5, size=(7, 2, 4))
    if get_metric(name).n_groups == 1:
        counts = counts[:, 0]
    assert_array_equal(compute_metric(alias, counts), compute_metric(name, counts))


@pytest.mark.parametrize("name", ALL)
def test_every_registered_alias_resolves(name):
    m = get_metric(name)
    for alias in m.aliases:
        assert get_metric(alias) is m
        assert get_metric(alias.upper()) is m
    assert get_metric(m) is m


@pytest.mark.parametrize("bad", ["tpr2", "recal", "", "fn_fp_ratio", "roc_auc"])
def test_unknown_metric_lists_valid_names(bad):
    with pytest.raises(ValueError, match="unknown metric") as excinfo:
        get_metric(bad)
    message = str(excinfo.value)
    assert all(name in message for name in ALL)
    with pytest.raises(ValueError, match="valid names are"):
        compute_metric(bad, [1, 2, 3, 4])


@pytest.mark.parametrize("bad", [1, None, ["tpr"], b"tpr", 0.5])
def test_non_str_metric_raises_type_error(bad):
    with pytest.raises(TypeError, match="'metric' parameter of compute_metric must be"):
        compute_metric(bad, [1, 2, 3, 4])
    with pytest.raises(TypeError, match="'metric' parameter of get_metric must be"):
        get_metric(bad)


def test_metric_is_frozen_and_callable():
    m = get_metric("tpr")
    assert isinstance(m, Metric)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.name = "recall"
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.aliases = ()
    assert m([3, 1, 2, 4]) == 0.75
    assert_array_equal(m([[0, 0, 1, 1]], zero_division=0.0), [0.0])


def test_greater_is_better():
    assert get_metric("tpr").greater_is_better is True
    assert get_metric("acc").greater_is_better is True
    assert get_metric("mcc").greater_is_better is True
    assert get_metric("fpr").greater_is_better is False
    assert get_metric("inacc").greater_is_better is False
    assert get_metric("prev").greater_is_better is None
    assert get_metric("mb").greater_is_better is None


# --------------------------------------------------------------------------------------
# zero_division

UNDEF = np.array([[3, 1, 2, 4], [0, 0, 5, 5], [1, 0, 0, 0]])  # tpr: 0.75, NaN, 1


def test_zero_division_nan_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = compute_metric("tpr", UNDEF, zero_division=np.nan)
        assert_array_equal(out, [0.75, np.nan, 1.0])
        out = compute_metric("tpr", UNDEF)  # the default
        assert_array_equal(out, [0.75, np.nan, 1.0])
        assert np.isnan(compute_metric("tpr", [0, 0, 1, 1], zero_division=float("nan")))


def test_zero_division_warn():
    assert issubclass(UndefinedGroupMetricWarning, UndefinedMetricWarning)
    with pytest.warns(UndefinedGroupMetricWarning, match=r"tpr: 1 of 3 value\(s\)"):
        out = compute_metric("tpr", UNDEF, zero_division="warn")
    assert_array_equal(out, [0.75, np.nan, 1.0])
    # filters written for scikit-learn's warning catch ours
    with pytest.warns(UndefinedMetricWarning):
        compute_metric("ppv", [0, 1, 0, 1], zero_division="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compute_metric("tpr", [3, 1, 2, 4], zero_division="warn") == 0.75


@pytest.mark.parametrize("value", [0.0, 1.0, 0, 1, np.float64(1.0)])
def test_zero_division_substitutes(value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = compute_metric("tpr", UNDEF, zero_division=value)
    assert_array_equal(out, [0.75, float(value), 1.0])
    assert compute_metric("tpr", [0, 0, 1, 1], zero_division=value) == float(value)
    # two-group metrics follow the same policy
    te = compute_metric("te", [[1, 1, 0, 1], [1, 1, 1, 1]], zero_division=value)
    assert te == value


@pytest.mark.parametrize(
    "bad", [0.5, 2, -1, "nan", "ignore", "Warn", None, True, [0.0], np.inf]
)
def test_zero_division_invalid(bad):
    with pytest.raises(
        ValueError, match=r"'zero_division' parameter of compute_metric"
    ):
        compute_metric("tpr", [1, 2, 3, 4], zero_division=bad)


def test_zero_division_does_not_touch_defined_values():
    counts = np.random.default_rng(3).integers(0, 3, size=(300, 4))
    for name in SINGLE:
        raw = compute_metric(name, counts)
        for value in (0.0, 1.0):
            out = compute_metric(name, counts, zero_division=value)
            assert_array_equal(out[~np.isnan(raw)], raw[~np.isnan(raw)])
            assert (out[np.isnan(raw)] == value).all()


# --------------------------------------------------------------------------------------
# two-group metrics

PAIR = np.array([[3, 1, 2, 4], [2, 2, 1, 3]])


def test_two_group_hand_values():
    # mb1 = (2 - 1)/10, mb2 = (1 - 2)/8
    assert_allclose(compute_metric("ofi", PAIR), 1 / 10 + 1 / 8)
    # te = FN1/FP1 - FN2/FP2 = 1/2 - 2/1
    assert_allclose(compute_metric("te", PAIR), -1.5)
    assert_allclose(compute_metric("te", [[1, 2, 4, 3], [1, 1, 2, 6]]), 0.0)
    # FP = 0 in either group: undefined (also when FN > 0, i.e. x/0)
    for pair in (
        [[1, 0, 0, 5], [1, 1, 1, 1]],
        [[1, 1, 1, 1], [1, 3, 0, 5]],
        [[1, 2, 0, 5], [1, 3, 0, 5]],
    ):
        assert np.isnan(compute_metric("te", pair))


@pytest.mark.parametrize("kind", ["int", "float"])
def test_two_group_against_components(kind):
    rng = np.random.default_rng(8)
    counts = rng.integers(0, 5, size=(40, 3, 2, 4))
    if kind == "float":
        counts = counts + rng.random(counts.shape)
    mb = compute_metric("mb", counts)
    assert_allclose(compute_metric("ofi", counts), mb[..., 0] - mb[..., 1], rtol=1e-14)
    fn, fp = counts[..., 1].astype(float), counts[..., 2].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = fn / fp
        expected = np.where(
            fp[..., 0] * fp[..., 1] > 0, ratio[..., 0] - ratio[..., 1], np.nan
        )
    te = compute_metric("te", counts)
    assert te.shape == (40, 3)
    assert_allclose(te, expected, rtol=1e-14)


@pytest.mark.parametrize("name", ["ofi", "te"])
@pytest.mark.parametrize("shape", [(2, 4), (5, 2, 4), (3, 2, 2, 4), (0, 2, 4)])
def test_two_group_shapes_equal_loop(name, shape):
    counts = np.random.default_rng(1).integers(0, 4, size=shape)
    out = compute_metric(name, counts)
    if shape == (2, 4):
        assert isinstance(out, float)
        return
    assert out.shape == shape[:-2]
    loop = [compute_metric(name, pair) for pair in counts.reshape(-1, 2, 4)]
    assert_array_equal(out, np.reshape(loop, shape[:-2]))


@pytest.mark.parametrize("name", ["ofi", "te"])
@pytest.mark.parametrize("shape", [(4,), (3, 4), (5, 1, 4), (2, 3, 4)])
def test_two_group_shape_required(name, shape):
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 2, 4\) for a 2-group"):
        compute_metric(name, np.ones(shape))


# --------------------------------------------------------------------------------------
# numerical robustness


def _exact_mcc(tp, fn, fp, tn):
    getcontext().prec = 60
    tp, fn, fp, tn = (Decimal(int(v)) for v in (tp, fn, fp, tn))
    den = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)).sqrt()
    return float((tp * tn - fp * fn) / den)


@pytest.mark.parametrize(
    "cm",
    [
        (1e9, 1e9, 1e9, 1e9),
        (2e9, 1e9, 1e9, 2e9),
        (1e9 + 7, 1e9, 3e9, 2e9 - 3),
        (1e9, 1, 2, 1e9),
        (1e12, 3e11, 1e12 - 1, 7e11),
        (1, 1e12, 1e12, 3),
    ],
)
def test_mcc_huge_counts(cm):
    value = compute_metric("mcc", np.array(cm))
    assert np.isfinite(value)
    assert -1.0 <= value <= 1.0
    assert_allclose(value, _exact_mcc(*cm), rtol=1e-9, atol=1e-12)


def test_mcc_huge_counts_exact_value():
    assert compute_metric("mcc", [1e9] * 4) == 0.0
    assert_allclose(compute_metric("mcc", [2e9, 1e9, 1e9, 2e9]), 1 / 3, rtol=1e-15)


@pytest.mark.parametrize("name", metric_names(n_groups=1))
def test_metric_depends_only_on_block_sums(name):
    """Moving counts between the cells of one block never changes the value."""
    metric = get_metric(name)
    cells = sorted(c for b in metric.blocks for c in b)
    assert cells == [0, 1, 2, 3]
    rng = np.random.default_rng(0)
    for base in (
        rng.integers(0, 6, size=(4000, 4)).astype(np.float64),  # many holes
        rng.random((4000, 4)) * 50 + 1e-10,  # smoothed, fractional
    ):
        moved = base.copy()
        for block in metric.blocks:
            if len(block) > 1:
                total = base[:, block].sum(axis=1)
                share = rng.dirichlet(np.ones(len(block)), size=len(base))
                # integer inputs keep integer cells; put everything in one cell too
                share[: len(base) // 2] = np.eye(len(block))[
                    rng.integers(0, len(block), size=len(base) // 2)
                ]
                moved[:, block] = share * total[:, None]
        a, b = metric.func(base), metric.func(moved)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
