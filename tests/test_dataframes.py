"""Counting from every kind of input: the fast paths of the counting kernel give
the table of a direct count, and numpy, pandas, dask, polars and pyarrow inputs
give the same table."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair import _counting
from sklearn_smallfair._confusion import confusion_counts
from sklearn_smallfair._groups import check_sensitive_features
from sklearn_smallfair.metrics import group_metrics


def direct_counts(y_true, y_pred, groups, *, pos_label=1, sample_weight=None):
    """Groups hashed as Python objects, cells counted with ``np.add.at``."""
    codes, labels = pd.factorize(np.asarray(groups, dtype=object), sort=True)
    t = np.array([v == pos_label for v in np.asarray(y_true).tolist()])
    p = np.array([v == pos_label for v in np.asarray(y_pred).tolist()])
    cell = 2 * (~t) + (~p)
    w = np.ones(len(codes)) if sample_weight is None else np.asarray(sample_weight)
    counts = np.zeros((len(labels), 4))
    np.add.at(counts, (codes, cell), w)
    return np.asarray(labels, dtype=object), counts


def targets(rng, n):
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, 1 - y_true)
    return y_true, y_pred


GROUPINGS = {
    "negative ids with gaps": lambda rng, n: rng.choice([-7, -3, 0, 5, 40], n),
    "single group": lambda rng, n: np.full(n, 3),
    "int8": lambda rng, n: rng.integers(-128, 127, n).astype(np.int8),
    "uint64 extremes": lambda rng, n: (
        np.uint64(2**64 - 10) + rng.integers(0, 5, n).astype(np.uint64)
    ),
    "wide span (hashed)": lambda rng, n: rng.choice([-(2**40), 0, 2**40], n),
    "booleans": lambda rng, n: rng.random(n) < 0.3,
    "strings": lambda rng, n: rng.choice(["b", "a", "c|d", "é"], n),
}


@pytest.mark.parametrize("kind", list(GROUPINGS))
@pytest.mark.parametrize("n", [1, 50, 70_000])  # 70,000 rows: two blocks
def test_fast_paths_count_exactly(kind, n):
    rng = np.random.default_rng(n)
    y_true, y_pred = targets(rng, n)
    groups = GROUPINGS[kind](rng, n)
    labels, counts = confusion_counts(y_true, y_pred, sensitive_features=groups)
    want_labels, want = direct_counts(y_true, y_pred, groups)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, want)
    assert labels.tolist() == want_labels.tolist()
    # the labels keep the dtype of the column (as pandas.factorize gives them)
    expected, _, _ = check_sensitive_features(groups.astype(object), n)
    assert labels.tolist() == expected.tolist()
    if groups.dtype.kind != "U":
        assert labels.dtype == groups.dtype


@pytest.mark.parametrize(
    "y_true, y_pred, pos_label",
    [
        ([True, False, True, True], [True, True, False, True], True),
        ([0, 1, 1, 0], [1, 1, 0, 0], 0),
        ([1, 2, 2, 1], [2, 2, 1, 1], 2),
        ([1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], 1),
        (["yes", "no", "no", "yes"], ["no", "no", "yes", "yes"], "yes"),
        ([0, 2, 2, 0], [2, 2, 0, 0], 2),  # integers first read as 0/1
        ([0, -1, -1, 0], [-1, 0, 0, -1], -1),
        ([1, 7, 7, 1], [7, 1, 1, 7], 7),
        ([0, 0, 0, 0], [0, 0, 0, 0], 1),
        ([1, 1, 1, 1], [1, 1, 1, 1], 0),
    ],
)
def test_target_paths(y_true, y_pred, pos_label):
    groups = ["a", "b", "a", "b"]
    _, counts = confusion_counts(
        y_true, y_pred, sensitive_features=groups, pos_label=pos_label
    )
    _, want = direct_counts(y_true, y_pred, groups, pos_label=pos_label)
    np.testing.assert_array_equal(counts, want)


@pytest.mark.parametrize("n", [5, 200_000])
def test_integer_labels_beyond_two_are_refused(n):
    y_true = np.zeros(n, dtype=np.int64)
    y_true[-1] = 2
    y_true[-2] = 1
    groups = np.arange(n) % 3
    with pytest.raises(ValueError, match="y_true must be binary, but has 3 distinct"):
        confusion_counts(y_true, y_true % 2, sensitive_features=groups)
    with pytest.raises(ValueError, match="y_pred must be binary, but has 3"):
        confusion_counts(y_true % 2, y_true - 1, sensitive_features=groups)


def test_categorical_unused_categories_are_not_groups():
    """Categories no row holds are not groups (as for any other column), and
    groups are sorted by label, not by the order of the categories."""
    rng = np.random.default_rng(0)
    y_true, y_pred = targets(rng, 300)
    values = rng.choice(["z", "b", "m"], 300)
    cat = pd.Categorical(values, categories=["m", "unused", "z", "b", "never"])
    for sf in (pd.Series(cat, name="g"), pd.DataFrame({"g": cat})):
        labels, counts = confusion_counts(y_true, y_pred, sensitive_features=sf)
        want_labels, want = direct_counts(y_true, y_pred, values)
        assert labels.tolist() == ["b", "m", "z"] == want_labels.tolist()
        np.testing.assert_array_equal(counts, want)
    ints = pd.Series(pd.Categorical([3, 1, 3, 1], categories=[3, 2, 1]))
    labels, _ = confusion_counts([1, 0, 1, 1], [1, 1, 0, 1], sensitive_features=ints)
    assert labels.tolist() == [1, 3]


def test_categorical_missing_is_reported():
    cat = pd.Series(pd.Categorical(["a", None, "b"]))
    with pytest.raises(ValueError, match="sensitive_features contains 1 missing"):
        confusion_counts([1, 0, 1], [1, 1, 0], sensitive_features=cat)


def test_intersections_and_weights_count_exactly():
    rng = np.random.default_rng(1)
    n = 100_000
    y_true, y_pred = targets(rng, n)
    frame = pd.DataFrame(
        {
            "age": rng.choice([-2, 7, 30], n),
            "sex": pd.Categorical(
                rng.choice(["F", "M"], n), categories=["M", "X", "F"]
            ),
            "site": rng.choice(["n", "s|e"], n),
        }
    )
    weight = rng.integers(0, 4, n).astype(float)
    weight[:3] = 1.0
    labels, counts = confusion_counts(
        y_true, y_pred, sensitive_features=frame, sample_weight=weight
    )
    joined = (
        frame["age"].astype(str)
        + "|"
        + frame["sex"].astype(str)
        + "|"
        + frame["site"].str.replace("|", "\\|")
    )
    _, codes, _ = check_sensitive_features(frame.astype(object), n)
    _, want = direct_counts(y_true, y_pred, codes, sample_weight=weight)
    np.testing.assert_array_equal(counts, want)
    expected, _, _ = check_sensitive_features(frame.astype(object), n)
    assert labels.tolist() == expected.tolist()
    assert set(labels.tolist()) == set(joined)
    assert labels.tolist()[:2] == ["-2|F|n", "-2|F|s\\|e"]


def test_partials_merge_by_label():
    """Tables of parts add up to the table of the whole, whatever the parts
    hold (a label or a group missing from a part)."""
    rng = np.random.default_rng(2)
    n = 3_000
    y_true, y_pred = targets(rng, n)
    y_true[:1000] = 0  # the first part has a single true label
    groups = rng.choice([4, 9, 11], n)
    groups[1000:2000] = 9
    parts = [
        _counting._partial_counts(y_true[s], y_pred[s], groups[s])[0]
        for s in (slice(0, 1000), slice(1000, 2000), slice(2000, n))
    ]
    labels, counts = _counting._finish(_counting._merge(parts), 1)
    want_labels, want = confusion_counts(y_true, y_pred, sensitive_features=groups)
    np.testing.assert_array_equal(counts, want)
    np.testing.assert_array_equal(labels, want_labels)


def test_parts_with_three_labels_are_refused():
    a = _counting._partial_counts([0, 1], [0, 1], ["g", "g"])[0]
    b = _counting._partial_counts([2, 1], [2, 1], ["g", "g"])[0]
    with pytest.raises(ValueError, match="y_true must be binary"):
        _counting._merge([a, b])


# ---------------------------------------------------------------------------
# the same table from every library
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 2_000
    y_true, y_pred = targets(rng, n)
    return {
        "y_true": y_true,
        "y_pred": y_pred,
        "race": rng.choice(["A", "B", "C|D", "E"], n),
        "age": rng.choice([-1, 20, 65], n),
        "w": rng.integers(1, 4, n).astype(float),
    }


@pytest.fixture(scope="module")
def expected(data):
    frame = pd.DataFrame({"race": data["race"], "age": data["age"]})
    one = confusion_counts(
        data["y_true"], data["y_pred"], sensitive_features=data["race"]
    )
    two = confusion_counts(
        data["y_true"],
        data["y_pred"],
        sensitive_features=frame,
        sample_weight=data["w"],
    )
    return one, two


def assert_same(result, want):
    assert result.groups.tolist() == want.groups.tolist()
    np.testing.assert_array_equal(result.counts, want.counts)
    assert result.counts.dtype == want.counts.dtype


def test_polars_inputs(data, expected):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(data)
    assert_same(
        confusion_counts(
            frame["y_true"], frame["y_pred"], sensitive_features=frame["race"]
        ),
        expected[0],
    )
    assert_same(
        confusion_counts(
            frame["y_true"],
            frame["y_pred"],
            sensitive_features=frame.select("race", "age"),
            sample_weight=frame["w"],
        ),
        expected[1],
    )
    cat = frame["race"].cast(pl.Categorical)
    assert_same(
        confusion_counts(frame["y_true"], frame["y_pred"], sensitive_features=cat),
        expected[0],
    )
    table = group_metrics(
        frame["y_true"], frame["y_pred"], sensitive_features=frame["race"]
    )
    assert table.index.name == "race"
    with pytest.raises(TypeError, match="LazyFrame"):
        confusion_counts(
            frame["y_true"], frame["y_pred"], sensitive_features=frame.lazy()
        )


def test_pyarrow_inputs(data, expected):
    pa = pytest.importorskip("pyarrow")
    table = pa.table(data)
    chunked = pa.chunked_array([data["race"][:700], data["race"][700:]])
    for race in (table.column("race"), chunked, chunked.dictionary_encode()):
        assert_same(
            confusion_counts(
                table.column("y_true"),
                pa.array(data["y_pred"]),
                sensitive_features=race,
            ),
            expected[0],
        )
    assert_same(
        confusion_counts(
            table.column("y_true"),
            table.column("y_pred"),
            sensitive_features=table.select(["race", "age"]),
            sample_weight=table.column("w"),
        ),
        expected[1],
    )
    with_null = pa.array(["A", None, "B"])
    with pytest.raises(ValueError, match="missing"):
        confusion_counts([1, 0, 1], [1, 1, 0], sensitive_features=with_null)


def test_dask_inputs(data, expected):
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    frame = dd.from_pandas(pd.DataFrame(data), npartitions=5)
    assert_same(
        confusion_counts(
            frame["y_true"], frame["y_pred"], sensitive_features=frame["race"]
        ),
        expected[0],
    )
    assert_same(
        confusion_counts(
            frame["y_true"],
            frame["y_pred"],
            sensitive_features=frame[["race", "age"]],
            sample_weight=frame["w"],
        ),
        expected[1],
    )
    # dask arrays (and numpy) chunked differently from each other
    assert_same(
        confusion_counts(
            da.from_array(data["y_true"], chunks=300),
            da.from_array(data["y_pred"], chunks=700),
            sensitive_features=data["race"],
        ),
        expected[0],
    )
    table = group_metrics(
        frame["y_true"],
        frame["y_pred"],
        sensitive_features=frame["race"],
        metrics=["tpr", "ppv"],
    )
    want = group_metrics(
        data["y_true"],
        data["y_pred"],
        sensitive_features=pd.Series(data["race"]),
        metrics=["tpr", "ppv"],
    )
    pd.testing.assert_frame_equal(table, want.rename_axis("race"))
    with pytest.raises(ValueError, match="sensitive_features has 1999 rows"):
        confusion_counts(
            da.from_array(data["y_true"], chunks=300),
            data["y_pred"],
            sensitive_features=da.from_array(data["race"][:-1], chunks=500),
        )


def test_dask_errors_match_in_memory(data):
    dd = pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame(data)
    frame.loc[1500, "y_true"] = 2
    parts = dd.from_pandas(frame, npartitions=4)
    with pytest.raises(ValueError, match=r"y_true .*binary"):
        confusion_counts(
            parts["y_true"], parts["y_pred"], sensitive_features=parts["race"]
        )
    with pytest.raises(ValueError, match="pos_label='x' is not a valid label"):
        confusion_counts(
            parts["y_pred"],
            parts["y_pred"],
            sensitive_features=parts["race"],
            pos_label="x",
        )


def test_dask_local_cluster(data, expected):
    distributed = pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(pd.DataFrame(data), npartitions=4)
    with (
        distributed.LocalCluster(
            n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        result = confusion_counts(
            frame["y_true"],
            frame["y_pred"],
            sensitive_features=frame[["race", "age"]],
            sample_weight=frame["w"],
        )
    assert_same(result, expected[1])


@pytest.mark.slow  # a new interpreter: a few seconds
def test_no_optional_library_is_imported_by_the_package():
    import subprocess
    import sys

    code = (
        "import sys, sklearn_smallfair, sklearn_smallfair.metrics, "
        "sklearn_smallfair.cli; "
        "print(sorted(m for m in ('dask', 'polars') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("n_wide", [2, 4])  # sparse combinations; too many to index
def test_intersections_of_wide_columns(n_wide):
    rng = np.random.default_rng(n_wide)
    n = 50
    frame = pd.DataFrame(
        {f"c{i}": rng.choice([-5, 7, 60_000], n) for i in range(n_wide)}
    )
    frame["s"] = pd.Categorical(rng.choice(["y", "x"], n), categories=["y", "z", "x"])
    y_true, y_pred = targets(rng, n)
    labels, counts = confusion_counts(y_true, y_pred, sensitive_features=frame)
    expected, codes, _ = check_sensitive_features(frame.astype(object), n)
    _, want = direct_counts(y_true, y_pred, codes)
    assert labels.tolist() == expected.tolist()
    np.testing.assert_array_equal(counts, want)


@pytest.mark.slow  # three audits: a few seconds
def test_audit_of_dask_and_polars_columns():
    dd = pytest.importorskip("dask.dataframe")
    pl = pytest.importorskip("polars")
    from sklearn_smallfair.audit import audit_predictions

    rng = np.random.default_rng(4)
    n = 600
    y_true, y_pred = targets(rng, n)
    frame = pd.DataFrame({"y": y_true, "p": y_pred, "g": rng.choice(["a", "b"], n)})
    kw = dict(tests=("match",), n_resamples=2_000, metrics=["tpr"])
    want = audit_predictions(frame.y, frame.p, sensitive_features=frame.g, **kw)
    parts = dd.from_pandas(frame, npartitions=3)
    polars = pl.from_pandas(frame)
    for y, p, g in (
        (parts.y, parts.p, parts.g),
        (polars["y"], polars["p"], polars["g"]),
    ):
        got = audit_predictions(y, p, sensitive_features=g, **kw)
        pd.testing.assert_frame_equal(got.frame, want.frame)
