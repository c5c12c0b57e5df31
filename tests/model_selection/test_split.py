"""Tests of GroupDownsamplingCV."""

import numpy as np
import pytest
import sklearn
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import check_cv, cross_validate

from sklearn_smallfair.model_selection import GroupDownsamplingCV


@pytest.fixture
def groups():
    return np.array(["b"] * 30 + ["a"] * 20 + ["c"] * 12)[
        np.random.default_rng(0).permutation(62)
    ]


def test_splits_are_subgroups_and_references(groups):
    cv = GroupDownsamplingCV(sizes=[3, 7, 12], n_repeats=4, random_state=1)
    X = np.zeros((groups.shape[0], 2))
    splits = list(cv.split(X, groups=groups))
    info = cv.split_info(X, groups=groups)
    assert len(splits) == cv.get_n_splits(groups=groups) == 3 * 3 * 4 == len(info)
    assert list(info["group"].unique()) == ["a", "b", "c"]
    for (train, test), (_, row) in zip(splits, info.iterrows()):
        g = row["group"]
        np.testing.assert_array_equal(train, np.flatnonzero(groups != g))
        assert test.shape == (row["size"],)
        assert (groups[test] == g).all()
        assert np.unique(test).shape[0] == test.shape[0]  # without replacement


def test_same_seed_same_splits_and_independent_of_other_requests(groups):
    cv = GroupDownsamplingCV(sizes=[5, 9], n_repeats=3, random_state=7)
    first = [t for _, t in cv.split(None, groups=groups)]
    again = [t for _, t in cv.split(None, groups=groups)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    # the draws of (group "c", size 9) do not depend on the other groups or sizes
    only = GroupDownsamplingCV(
        sizes=[9], n_repeats=3, target_groups=["c"], random_state=7
    )
    info = cv.split_info(groups=groups)
    sel = np.flatnonzero((info["group"] == "c") & (info["size"] == 9))
    for i, (_, t) in zip(sel, only.split(None, groups=groups)):
        np.testing.assert_array_equal(first[i], t)
    unseeded = GroupDownsamplingCV(sizes=[9], n_repeats=3, random_state=None)
    a = [t for _, t in unseeded.split(None, groups=groups)]
    b = [t for _, t in unseeded.split(None, groups=groups)]
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))


def test_draws_are_uniform_over_the_group():
    groups = np.array([0] * 10 + [1] * 5)
    n, reps = 4, 20_000
    cv = GroupDownsamplingCV(
        sizes=[n], n_repeats=reps, target_groups=[0], random_state=0
    )
    hits = np.bincount(
        np.concatenate([t for _, t in cv.split(None, groups=groups)]), minlength=15
    )[:10]
    # each row is in a test set with probability n / 10; binomial SE per row
    p = n / 10
    se = np.sqrt(reps * p * (1 - p))
    assert np.abs(hits - reps * p).max() < 4 * se


def test_replace_allows_sizes_above_group_size(groups):
    with pytest.raises(ValueError, match=r"exceed group\(s\) 'a' \(size 20\), 'c'"):
        list(GroupDownsamplingCV(sizes=[25]).split(None, groups=groups))
    cv = GroupDownsamplingCV(sizes=[25], n_repeats=2, replace=True, random_state=0)
    tests = [t for _, t in cv.split(None, groups=groups)]
    assert all(t.shape == (25,) for t in tests)
    assert any(np.unique(t).shape[0] < 25 for t in tests)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(sizes=[]), "sizes is empty"),
        (dict(sizes=[0, 3]), "sizes must be integers >= 1"),
        (dict(sizes=[2.5]), "sizes must be integers >= 1"),
        (dict(n_repeats=0), "'n_repeats' parameter of GroupDownsamplingCV must be"),
        (dict(target_groups=["zz"]), "not among the groups"),
    ],
)
def test_bad_parameters(groups, kwargs, match):
    with pytest.raises(ValueError, match=match):
        list(GroupDownsamplingCV(**kwargs).split(None, groups=groups))


def test_groups_required_and_two_groups_needed():
    with pytest.raises(ValueError, match="needs the group of every row"):
        list(GroupDownsamplingCV(sizes=[2]).split(np.zeros((4, 1))))
    with pytest.raises(ValueError, match="at least two groups"):
        list(GroupDownsamplingCV(sizes=[2]).split(None, groups=[0, 0, 0]))
    with pytest.raises(ValueError, match="needs groups"):
        GroupDownsamplingCV(sizes=[2]).get_n_splits()
    assert (
        GroupDownsamplingCV(
            sizes=[2, 3], n_repeats=5, target_groups=["a"]
        ).get_n_splits()
        == 10
    )


def test_repr_and_check_cv():
    cv = GroupDownsamplingCV(sizes=[5, 10], n_repeats=3, random_state=0)
    assert " ".join(repr(cv).split()) == (
        "GroupDownsamplingCV(n_repeats=3, random_state=0, replace=False, "
        "sizes=[5, 10], target_groups=None)"
    )
    assert check_cv(cv) is cv


def _data(groups):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(groups.shape[0], 3))
    y = (rng.random(groups.shape[0]) < 0.5).astype(int)
    return X, y


def test_cross_validate_with_routing(groups):
    X, y = _data(groups)
    cv = GroupDownsamplingCV(sizes=[5, 10], n_repeats=2, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(
            DummyClassifier(),
            X,
            y,
            cv=cv,
            params={"groups": groups},
            return_indices=True,
        )
    assert len(res["test_score"]) == cv.get_n_splits(groups=groups)
    expected = [t for _, t in cv.split(X, groups=groups)]
    for got, want in zip(res["indices"]["test"], expected):
        np.testing.assert_array_equal(got, want)


def test_cross_validate_without_routing(groups):
    X, y = _data(groups)
    cv = GroupDownsamplingCV(sizes=[5], n_repeats=2, random_state=0)
    res = cross_validate(DummyClassifier(), X, y, cv=cv, groups=groups)
    assert len(res["test_score"]) == 6


def test_default_seed_gives_the_same_splits():
    groups = np.repeat(["a", "b"], [30, 20])
    splits = [
        [
            test.tolist()
            for _, test in GroupDownsamplingCV(sizes=[5]).split(
                np.zeros((50, 1)), groups=groups
            )
        ]
        for _ in range(2)
    ]
    assert splits[0] == splits[1]
