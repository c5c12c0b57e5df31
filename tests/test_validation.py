"""Bad input gets a clear error naming the argument; property tests of edge inputs."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_smallfair import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair._confusion import FN, FP, TN, TP
from sklearn_smallfair.metrics import (
    compute_metric,
    confusion_counts,
    get_metric,
    metric_names,
)

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # fixed seeds: the same examples on every run
    suppress_health_check=[HealthCheck.too_slow],
)
SINGLE = metric_names(n_groups=1)
RATIO = metric_names(family="binomial") + metric_names(family="joint_ratio")

# --------------------------------------------------------------------------------------
# rows: lengths, missing values, labels


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"y_true": [0, 1, 1], "y_pred": [0, 1]},
            r"y_true and y_pred have inconsistent lengths \(3 and 2\)",
        ),
        (
            {"y_true": [0, 1], "y_pred": [0, 1], "sample_weight": [1.0, 2.0, 3.0]},
            "sample_weight has 3 entries but there are 2 samples",
        ),
        (
            {
                "y_true": [0, 1, 1],
                "y_pred": [0, 1, 0],
                "sensitive_features": ["a", "b"],
            },
            "sensitive_features has 2 rows but y_true has 3",
        ),
        (
            {
                "y_true": [0, 1, 1],
                "y_pred": [0, 1, 0],
                "sensitive_features": pd.DataFrame({"a": [1, 2], "b": [3, 4]}),
            },
            "sensitive_features has 2 rows but y_true has 3",
        ),
    ],
)
def test_mismatched_lengths(kwargs, match):
    with pytest.raises(ValueError, match=match):
        confusion_counts(**kwargs)


MISSING = [np.nan, np.inf, -np.inf, None, pd.NA]


@pytest.mark.parametrize("argument", ["y_true", "y_pred"])
@pytest.mark.parametrize("bad", MISSING, ids=repr)
def test_missing_values_in_labels(argument, bad):
    args = {"y_true": [0, 1, 1, 0], "y_pred": [1, 1, 0, 0]}
    args[argument] = [0, 1, bad, 0]
    with pytest.raises(
        ValueError,
        match=f"{argument} contains 1 missing or non-finite"
        r".*first at position 2",
    ):
        confusion_counts(args["y_true"], args["y_pred"])


@pytest.mark.parametrize("argument", ["y_true", "y_pred"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, None], ids=repr)
@pytest.mark.parametrize("container", [list, pd.Series, lambda v: np.array(v, object)])
def test_missing_values_among_string_labels(argument, bad, container):
    # numpy would turn NaN in a list of strings into the label 'nan'
    args = {"y_true": ["pos", "neg", "pos"], "y_pred": ["pos", "pos", "neg"]}
    args[argument] = container(["pos", bad, "pos"])
    with pytest.raises(ValueError, match=f"{argument} contains 1 missing"):
        confusion_counts(**args, pos_label="pos")


@pytest.mark.parametrize("bad", MISSING, ids=repr)
def test_missing_values_in_sample_weight(bad):
    with pytest.raises(ValueError, match="sample_weight contains 1 missing"):
        confusion_counts([0, 1, 1], [0, 1, 0], sample_weight=[1.0, bad, 2.0])


@pytest.mark.parametrize("bad", [np.nan, None, pd.NA, np.inf], ids=repr)
@pytest.mark.parametrize("form", ["list", "2d", "frame"])
def test_missing_values_in_sensitive_features(bad, form):
    if form == "list":
        sf = ["a", bad, "b"] if bad is not np.inf else [1.0, np.inf, 2.0]
    elif form == "2d":
        sf = np.array([["a", "x"], ["b", bad], ["a", "y"]], dtype=object)
    else:
        sf = pd.DataFrame({"race": ["a", "b", "a"], "sex": ["x", bad, "y"]})
    with pytest.raises(ValueError, match="sensitive_features contains 1 missing"):
        confusion_counts([0, 1, 1], [0, 1, 0], sensitive_features=sf)


@pytest.mark.parametrize("argument", ["y_true", "y_pred"])
def test_non_binary_labels(argument):
    args = {"y_true": [0, 1, 1, 0], "y_pred": [1, 1, 0, 0]}
    args[argument] = [0, 1, 2, 1]
    with pytest.raises(
        ValueError,
        match=f"{argument} must be binary, but has 3 "
        r"distinct labels \[0, 1, 2\]",
    ):
        confusion_counts(**args)
    args[argument] = ["a", "b", "c", "a"]
    with pytest.raises(ValueError, match=f"{argument} must be binary.*'a', 'b', 'c'"):
        confusion_counts(**args, pos_label="a")


def test_labels_differ_between_y_true_and_y_pred():
    with pytest.raises(ValueError, match="y_true and y_pred together have 3 distinct"):
        confusion_counts([0, 1, 0], [1, 2, 1])
    with pytest.raises(TypeError, match="mixes label types"):
        confusion_counts([0, 1, 0], ["a", "b", "a"])


@pytest.mark.parametrize("argument", ["y_true", "y_pred"])
def test_continuous_labels(argument):
    args = {"y_true": [0, 1, 1, 0], "y_pred": [1, 1, 0, 0]}
    args[argument] = [0.1, 0.9, 0.4, 0.7]
    with pytest.raises(ValueError, match=f"{argument} holds continuous values"):
        confusion_counts(**args)


@pytest.mark.parametrize(
    "argument, value, match",
    [
        (
            "sensitive_features",
            {"race": ["a", "b"]},
            "sensitive_features must be array-like, got a dict",
        ),
        ("y_true", {0: 1, 1: 0}, "y_true must be array-like, got a dict"),
        ("y_pred", {0: 1, 1: 0}, "y_pred must be array-like, got a dict"),
        (
            "sample_weight",
            {0: 1.0, 1: 1.0},
            "sample_weight must be array-like, got a dict",
        ),
        ("y_true", 1, "'y_true' parameter of confusion_counts must be an array-like"),
        ("y_true", "01", "y_true='01' is a string; to name a column, pass the"),
        ("sensitive_features", "ab", "sensitive_features='ab' is a string; to name"),
        ("sample_weight", 2.0, "'sample_weight' parameter of confusion_counts must"),
        ("sample_weight", ["a", "b"], "sample_weight must be numeric"),
    ],
)
def test_type_errors(argument, value, match):
    args = {"y_true": [0, 1], "y_pred": [1, 1]}
    args[argument] = value
    with pytest.raises(TypeError, match=match):
        confusion_counts(**args)


@pytest.mark.parametrize(
    "argument, value, match",
    [
        (
            "y_true",
            [[0, 1], [1, 0]],
            r"y_true must be 1-D, got an array of shape \(2, 2\)",
        ),
        (
            "sensitive_features",
            np.zeros((2, 1, 1)),
            "sensitive_features must be 1-D or 2-D",
        ),
    ],
)
def test_bad_dimensions(argument, value, match):
    args = {"y_true": [0, 1], "y_pred": [1, 1]}
    args[argument] = value
    with pytest.raises(ValueError, match=match):
        confusion_counts(**args)


@pytest.mark.parametrize("container", [list, np.array, pd.Series])
def test_empty_input(container):
    with pytest.raises(ValueError, match="y_true and y_pred are empty"):
        confusion_counts(container([]), container([]))


@pytest.mark.parametrize(
    "y, pos_label",
    [
        ([0, 1, 1], 2),
        ([0, 1, 1], "1"),
        (["a", "b"], "c"),
        ([True, False], "True"),
        ([-1, 1], 0),
    ],
)
def test_pos_label_not_among_labels(y, pos_label):
    with pytest.raises(
        ValueError,
        match=rf"pos_label={pos_label!r} is not a valid "
        r"label: the labels are \[",
    ):
        confusion_counts(y, y, pos_label=pos_label)


def test_string_labels_with_default_pos_label():
    # pos_label=None is scikit-learn's rule: 1 only for labels {0, 1} or {-1, 1}
    with pytest.raises(
        ValueError,
        match=r"take the labels \['neg', 'pos'\] and pos_label is None.*"
        r"pass pos_label=",
    ):
        confusion_counts(["pos", "neg"], ["neg", "neg"])
    with pytest.raises(ValueError, match=r"take the labels \['neg'\]"):
        confusion_counts(["neg", "neg"], ["neg", "neg"])
    # an explicit numeric pos_label with string labels is still a mistake
    with pytest.raises(
        ValueError,
        match=r"pos_label=1 is not a valid label: the labels are \['neg', 'pos'\]",
    ):
        confusion_counts(["pos", "neg"], ["neg", "neg"], pos_label=1)
    with pytest.raises(ValueError, match="pos_label=1 is not a valid label"):
        confusion_counts(["neg", "neg"], ["neg", "neg"], pos_label=1)
    assert confusion_counts([-1, 1, 1], [1, 1, -1]).counts.tolist() == [1, 1, 1, 0]
    assert (
        confusion_counts(["pos", "neg"], ["neg", "neg"], pos_label="pos").counts[1] == 1
    )


@pytest.mark.parametrize("weights", [[1.0, -0.5, 2.0], [-1, 0, 0]])
def test_negative_weights(weights):
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        confusion_counts([0, 1, 1], [0, 1, 0], sample_weight=weights)


# --------------------------------------------------------------------------------------
# smoothing parameters


@pytest.mark.parametrize(
    "make, name", [(CrossPriorSmoothing, "lam"), (AdditiveSmoothing, "eps")]
)
@pytest.mark.parametrize(
    "value, shown",
    [
        (-1.0, "-1.0"),
        (-3, "-3"),
        (np.nan, "nan"),
        (np.inf, "inf"),
        ("1.0", "'1.0'"),
        (None, "None"),
        (True, "True"),
        ([1.0], r"\[1.0\]"),
    ],
)
def test_bad_smoothing_parameters(make, name, value, shown):
    smoother = make(**{name: value})
    match = (
        rf"The '{name}' parameter of {make.__name__} must be a float in the range "
        rf"\[0.0, inf\)(?: or a str among \{{'auto'\}})?. Got {shown} instead"
    )
    with pytest.raises(ValueError, match=match):  # also a TypeError
        smoother.transform([1, 2, 3, 4], [1, 1, 1, 1])


@pytest.mark.parametrize("value", [np.nan, np.inf, -1e-300])
def test_bad_smoothing_parameters_rejected_before_any_work(value):
    with pytest.raises(TypeError):
        CrossPriorSmoothing(lam=value).fit()


@pytest.mark.parametrize("value", [0, 0.0, 2, np.float32(0.5), np.int64(3)])
def test_good_smoothing_parameters(value):
    for smoother in (CrossPriorSmoothing(lam=value), AdditiveSmoothing(eps=value)):
        out = smoother.transform([1, 2, 3, 4], [1, 1, 1, 1])
        assert np.isfinite(out).all()


# --------------------------------------------------------------------------------------
# counts given to compute_metric


@pytest.mark.parametrize(
    "counts, error, match",
    [
        ([1, -1, 2, 3], ValueError, "counts must be non-negative"),
        ([[1, 2, 3, 4], [0, 0, -1e-9, 0]], ValueError, "counts must be non-negative"),
        ([1, np.nan, 2, 3], ValueError, "counts contains NaN or inf"),
        ([1, np.inf, 2, 3], ValueError, "counts contains NaN or inf"),
        (
            [1, 2, 3],
            ValueError,
            r"counts must have shape \(\.\.\., 4\) with cells "
            r"ordered \(TP, FN, FP, TN\); got shape \(3,\)",
        ),
        (np.ones((3, 5)), ValueError, r"got shape \(3, 5\)"),
        (np.ones((4, 2)), ValueError, r"got shape \(4, 2\)"),
        (5, ValueError, r"'counts' parameter of compute_metric must be an array-like"),
        (["1", "2", "3", "4"], TypeError, "counts must be numeric"),
        ([1, None, 2, 3], TypeError, "counts must be numeric"),
        ([1 + 1j, 0, 0, 0], TypeError, "counts must be numeric"),
        ({"TP": 1, "FN": 2}, TypeError, "counts must be array-like"),
    ],
)
def test_bad_counts(counts, error, match):
    with pytest.raises(error, match=match):
        compute_metric("tpr", counts)


# --------------------------------------------------------------------------------------
# property tests


def _expected_undefined(name, c):
    """Where a metric is undefined (n = 0 is 0/0 for all)."""
    tp, fn, fp, tn = (c[..., i] for i in range(4))
    m = get_metric(name)
    if m.family in ("binomial", "joint_ratio"):
        return c[..., list(m.denominator)].sum(axis=-1) == 0
    n = c.sum(axis=-1)
    return {
        "f1": 2 * tp + fp + fn == 0,
        "f1_original": tp == 0,
        "mcc": (tp + fp == 0) | (tp + fn == 0) | (tn + fp == 0) | (tn + fn == 0),
        "mb": n == 0,
        # PT: TPR or FPR undefined, or TPR = FPR (exact integer test)
        "pt": (tp + fn == 0) | (fp + tn == 0) | (tp * (fp + tn) == fp * (tp + fn)),
    }[name]


small_matrices = hnp.arrays(
    np.int64,
    st.tuples(st.integers(0, 12), st.just(4)),
    elements=st.integers(0, 20),
)


@SETTINGS
@given(counts=small_matrices)
def test_compute_metric_never_raises_and_nan_exactly_where_undefined(counts):
    for name in SINGLE:
        values = compute_metric(name, counts)
        assert values.shape == counts.shape[:-1]
        assert_array_equal(np.isnan(values), _expected_undefined(name, counts))
        assert np.isfinite(values[~np.isnan(values)]).all()
        if name in RATIO or name in ("f1", "f1_original"):
            defined = values[~np.isnan(values)]
            assert ((defined >= 0) & (defined <= 1)).all()


@SETTINGS
@given(
    counts=hnp.arrays(
        np.int64,
        st.tuples(st.integers(0, 6), st.just(2), st.just(4)),
        elements=st.integers(0, 10),
    )
)
def test_two_group_metrics_never_raise(counts):
    te = compute_metric("te", counts)
    undefined = (counts[:, 0, FP] == 0) | (counts[:, 1, FP] == 0)
    assert_array_equal(np.isnan(te), undefined)
    ofi = compute_metric("ofi", counts)
    assert_array_equal(np.isnan(ofi), (counts.sum(axis=-1) == 0).any(axis=-1))
    assert (np.abs(ofi[~np.isnan(ofi)]) <= 2).all()


# 0, or a count between the "bashful" pseudo-count 1e-10 and 1e12 (subnormal
# "counts" such as 1e-300 are not counts: their products underflow)
huge_cell = st.one_of(
    st.just(0.0),
    st.integers(0, 10**12).map(float),
    st.floats(min_value=1e-10, max_value=1e12),
)


@SETTINGS
@given(
    cells=st.lists(
        st.tuples(huge_cell, huge_cell, huge_cell, huge_cell), min_size=1, max_size=8
    )
)
def test_huge_counts_give_finite_values_in_range(cells):
    counts = np.array(cells, dtype=np.float64)
    for name in RATIO:
        m = get_metric(name)
        values = compute_metric(name, counts)
        defined = counts[:, list(m.denominator)].sum(axis=1) > 0
        assert np.isfinite(values[defined]).all()
        assert ((values[defined] >= 0) & (values[defined] <= 1)).all()
        assert np.isnan(values[~defined]).all()
    for name, low, high in (("f1", 0, 1), ("mcc", -1, 1), ("mb", -1, 1)):
        values = compute_metric(name, counts)
        ok = values[~np.isnan(values)]
        assert ((ok >= low - 1e-12) & (ok <= high + 1e-12)).all()
    # all four margins > 0 (in float arithmetic): MCC is defined
    margins = np.stack(
        [
            counts[:, TP] + counts[:, FP],
            counts[:, TP] + counts[:, FN],
            counts[:, TN] + counts[:, FP],
            counts[:, TN] + counts[:, FN],
        ]
    )
    assert np.isfinite(compute_metric("mcc", counts)[(margins > 0).all(axis=0)]).all()


@st.composite
def grouped_rows(draw):
    n = draw(st.integers(1, 60))
    y_true = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    y_pred = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 1)))
    groups = draw(hnp.arrays(np.int64, n, elements=st.integers(0, 5)))
    weighted = draw(st.booleans())
    w = (
        draw(hnp.arrays(np.float64, n, elements=st.floats(0.01, 100.0)))
        if weighted
        else None
    )
    return y_true, y_pred, groups, w


@SETTINGS
@given(rows=grouped_rows())
def test_group_counts_sum_to_overall_counts(rows):
    y_true, y_pred, groups, w = rows
    labels, counts = confusion_counts(
        y_true, y_pred, sensitive_features=groups, sample_weight=w
    )
    overall = confusion_counts(y_true, y_pred, sample_weight=w).counts
    assert_array_equal(labels, np.unique(groups))
    assert_allclose(counts.sum(axis=0), overall, rtol=1e-12)
    if w is None:
        assert_array_equal(counts.sum(axis=1), np.bincount(groups)[labels])
        assert counts[:, TP].sum() == np.sum((y_true == 1) & (y_pred == 1))
    else:
        assert_allclose(counts.sum(axis=1), np.bincount(groups, weights=w)[labels])
    assert (counts >= 0).all()


@SETTINGS
@given(
    rows=grouped_rows(),
    labels=st.sampled_from([("n", "p"), (-1, 1), (False, True), ("0", "1"), (3, 7)]),
    swap=st.booleans(),
)
def test_any_two_labels_with_pos_label_equal_the_01_encoding(rows, labels, swap):
    y_true, y_pred, _, w = rows
    neg, pos = labels
    coded = np.array([neg, pos], dtype=object)
    if swap:
        pos_label, t01, p01 = neg, 1 - y_true, 1 - y_pred
    else:
        pos_label, t01, p01 = pos, y_true, y_pred
    got = confusion_counts(
        coded[y_true].tolist(),
        coded[y_pred].tolist(),
        sample_weight=w,
        pos_label=pos_label,
    ).counts
    assert_array_equal(got, confusion_counts(t01, p01, sample_weight=w).counts)


@SETTINGS
@given(
    rows=grouped_rows(),
    position=st.integers(0, 59),
    argument=st.sampled_from(
        ["y_true", "y_pred", "sample_weight", "sensitive_features"]
    ),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
)
def test_any_non_finite_value_is_rejected(rows, position, argument, bad):
    y_true, y_pred, groups, w = rows
    args = {
        "y_true": y_true.astype(float),
        "y_pred": y_pred.astype(float),
        "sample_weight": np.ones(len(y_true)) if w is None else w.copy(),
        "sensitive_features": groups.astype(float),
    }
    args[argument][position % len(y_true)] = bad
    with pytest.raises(ValueError, match=f"{argument} contains 1 missing"):
        confusion_counts(**args)


@SETTINGS
@given(
    rows=grouped_rows(),
    position=st.integers(0, 59),
    value=st.floats(max_value=-1e-300, min_value=-1e6),
)
def test_any_negative_weight_is_rejected(rows, position, value):
    y_true, y_pred, groups, _ = rows
    w = np.ones(len(y_true))
    w[position % len(w)] = value
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        confusion_counts(y_true, y_pred, sensitive_features=groups, sample_weight=w)


@SETTINGS
@given(n_true=st.integers(1, 30), n_pred=st.integers(1, 30))
def test_any_length_mismatch_is_rejected(n_true, n_pred):
    assume(n_true != n_pred)
    with pytest.raises(
        ValueError, match=f"inconsistent lengths \\({n_true} and {n_pred}\\)"
    ):
        confusion_counts(np.zeros(n_true, dtype=int), np.ones(n_pred, dtype=int))


@SETTINGS
@given(
    counts=hnp.arrays(
        np.float64, st.tuples(st.integers(1, 5), st.just(4)), elements=huge_cell
    ),
    ref=hnp.arrays(np.float64, 4, elements=st.floats(1e-3, 1e6)),
    lam=st.one_of(st.just(0.0), st.floats(1e-10, 1e6)),
)
def test_cps_properties(counts, ref, lam):
    out = CrossPriorSmoothing(lam=lam).transform(counts, ref)
    n = counts.sum(axis=-1)
    assert_allclose(out.sum(axis=-1), n, rtol=1e-9, atol=1e-9)
    assert (out >= 0).all()
    if lam > 0:
        assert (out[n > 0] > 0).all()
    # every smoothed metric is computable
    for name in RATIO:
        values = compute_metric(name, out)
        defined = values[~np.isnan(values)]
        assert ((defined >= 0) & (defined <= 1 + 1e-12)).all()


def test_shared_number_checks_agree_on_the_error_type():
    from sklearn_smallfair._validation import (
        check_non_negative_scalar,
        check_probability,
    )

    # a value of the wrong type is a TypeError in both, a number out of range a
    # ValueError
    for check in (check_probability, check_non_negative_scalar):
        with pytest.raises(TypeError, match="x must be"):
            check("a", "x")
        with pytest.raises(TypeError, match="x must be"):
            check(True, "x")
        with pytest.raises(ValueError, match="x must be"):
            check(-1.0, "x")


@pytest.mark.parametrize(
    "column",
    [
        np.array([5, -3, -3, 9, 5, 120], dtype=np.int16),
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64),
        np.array([-(2**40), 0, 2**40, 0]),  # too wide a range: hashed
        np.array([True, True, False]),
        np.array([True, True]),
        np.array(["b", "a", "b", "c"], dtype=object),
        np.array([3.5, -1.0, 3.5]),
    ],
)
def test_unique_inverse_fast_paths_equal_factorize(column):
    from sklearn_smallfair._groups import _unique_inverse

    labels, codes = _unique_inverse(column)
    want_codes, want_labels = pd.factorize(column, sort=True)
    assert_array_equal(labels, want_labels)
    assert labels.dtype == np.asarray(want_labels).dtype
    assert_array_equal(codes, want_codes)


def test_sensitive_features_codes_of_a_category_column():
    """A category column is encoded from its codes: the labels and codes of the
    same labels in a plain column, unused categories left out."""
    from sklearn_smallfair._groups import check_sensitive_features

    values = ["z", "b", "z", "m"]
    cat = pd.Categorical(values, categories=["z", "unused", "m", "b"])
    for column in (pd.Series(cat), pd.DataFrame({"g": cat})):
        groups, codes, _ = check_sensitive_features(column, 4)
        want_groups, want_codes, _ = check_sensitive_features(
            np.array(values, dtype=object), 4
        )
        assert groups.tolist() == want_groups.tolist() == ["b", "m", "z"]
        assert_array_equal(codes, want_codes)
    with pytest.raises(ValueError, match="mixes text and non-text labels"):
        check_sensitive_features(pd.Series(pd.Categorical(["a", 1, "a"])), 3)


def test_check_smoothing_is_duck_typed():
    from sklearn_smallfair._validation import check_smoothing
    from sklearn_smallfair.smoothing import AdditiveSmoothing

    smoother = AdditiveSmoothing(0.5)
    assert check_smoothing(smoother) is smoother
    assert check_smoothing(None) is None

    class Lookalike:
        def fit(self, counts=None, reference_counts=None):
            return self

        transform = transform_matrices = coefficients = fit

    lookalike = Lookalike()
    assert check_smoothing(lookalike) is lookalike
    with pytest.raises(TypeError, match="smoothing must be None, AdditiveSmoothing"):
        check_smoothing("additive")
