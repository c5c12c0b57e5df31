"""Tables where the data lives: ``data=`` with column names, counted by the
table's own engine (pandas, polars eager and lazy, pyarrow, dask, DuckDB,
PySpark), the same table bit for bit from every engine, and the same errors."""

import importlib
import os
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair import _frames, audit_predictions
from sklearn_smallfair.exceptions import SensitiveFeaturesWarning
from sklearn_smallfair.metrics import (
    confusion_counts,
    disparity_intervals,
    group_metrics,
    multiclass_confusion_counts,
)
from sklearn_smallfair.stats import match_test, multiclass_match_test, separation_test

pytest.importorskip("narwhals")

N = 3_000


def _rows(seed=0, n=N):
    rng = np.random.default_rng(seed)
    race = rng.choice(["Asian", "Black", "White", "Other"], n, p=[0.1, 0.3, 0.5, 0.1])
    y = rng.integers(0, 2, n)
    return pd.DataFrame(
        {
            "y": y,
            "y_hat": np.where(rng.random(n) < 0.8, y, 1 - y),
            "race": race,
            "age": rng.integers(1, 4, n),
            "w": rng.integers(1, 5, n),
            "fw": rng.random(n) + 0.5,
            "k": rng.choice(["low", "mid", "high"], n),
            "k_hat": rng.choice(["low", "mid", "high"], n),
        }
    )


ROWS = _rows()


#: Set (by the continuous integration) when every engine must run, not skip.
REQUIRED = bool(os.environ.get("SMALLFAIR_REQUIRE_ENGINES"))


def _engine_module(name):
    """Import an engine's module, or skip (fail when every engine must run)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if REQUIRED:
            pytest.fail(f"{name} is not installed but SMALLFAIR_REQUIRE_ENGINES is set")
        pytest.skip(f"{name} is not installed")


@pytest.fixture(scope="module")
def spark():
    _engine_module("pyspark")
    _engine_module("pyarrow")
    if shutil.which("java") is None:
        if REQUIRED:
            pytest.fail("Spark needs Java, which is not on the PATH")
        pytest.skip("Spark needs Java")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("sklearn-smallfair tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _engine_frame(engine, frame, request):
    """``frame`` (pandas) as a table of ``engine``."""
    if engine == "pandas":
        return frame
    if engine in ("polars", "polars-lazy"):
        pl = pytest.importorskip("polars")
        out = pl.from_pandas(frame)
        return out.lazy() if engine == "polars-lazy" else out
    if engine == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        return pa.Table.from_pandas(frame, preserve_index=False)
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(frame, npartitions=3)
    if engine == "duckdb":
        duckdb = _engine_module("duckdb")
        con = duckdb.connect()
        con.register("rows", frame)
        return con.sql("SELECT * FROM rows")
    if engine == "spark":
        session = request.getfixturevalue("spark")
        with warnings.catch_warnings():  # pyspark's notes on the pandas version
            warnings.simplefilter("ignore", FutureWarning)
            return session.createDataFrame(frame)
    raise AssertionError(engine)


ENGINES = ["pandas", "polars", "polars-lazy", "pyarrow", "dask", "duckdb", "spark"]


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


def _table(engine, request, frame=ROWS):
    return _engine_frame(engine, frame, request)


def _same(a, b):
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert np.array_equal(a, b)


def test_binary_counts_bit_for_bit(engine, request):
    data = _table(engine, request)
    expected = confusion_counts(
        ROWS["y"], ROWS["y_hat"], sensitive_features=ROWS[["race", "age"]]
    )
    got = confusion_counts("y", "y_hat", sensitive_features=["race", "age"], data=data)
    _same(got.groups, expected.groups)
    _same(got.counts, expected.counts)
    assert got.counts.sum() == N
    one = confusion_counts("y", "y_hat", sensitive_features="race", data=data)
    ref = confusion_counts(ROWS["y"], ROWS["y_hat"], sensitive_features=ROWS["race"])
    _same(one.groups, ref.groups)
    _same(one.counts, ref.counts)
    overall = confusion_counts("y", "y_hat", data=data)
    _same(overall.counts, confusion_counts(ROWS["y"], ROWS["y_hat"]).counts)


@pytest.mark.parametrize("weight", ["w", "fw"])
def test_weighted_counts(engine, request, weight):
    data = _table(engine, request)
    expected = confusion_counts(
        ROWS["y"],
        ROWS["y_hat"],
        sensitive_features=ROWS["race"],
        sample_weight=ROWS[weight],
    )
    got = confusion_counts(
        "y", "y_hat", sensitive_features="race", sample_weight=weight, data=data
    )
    _same(got.groups, expected.groups)
    assert got.counts.dtype == expected.counts.dtype
    # float sums may be added in another order by an engine
    np.testing.assert_allclose(got.counts, expected.counts, rtol=1e-12)


def test_integer_weights_are_repeated_rows():
    """Integer weights are frequency weights: the counts of the repeated rows,
    as integers (scikit-learn's confusion_matrix gives int64 for them too)."""
    repeated = ROWS.loc[ROWS.index.repeat(ROWS["w"])]
    expected = confusion_counts(
        repeated["y"], repeated["y_hat"], sensitive_features=repeated["race"]
    )
    got = confusion_counts(
        ROWS["y"],
        ROWS["y_hat"],
        sensitive_features=ROWS["race"],
        sample_weight=ROWS["w"],
    )
    _same(got.counts, expected.counts)
    from sklearn.metrics import confusion_matrix

    sk = confusion_matrix(ROWS["y"], ROWS["y_hat"], sample_weight=ROWS["w"])
    overall = confusion_counts(ROWS["y"], ROWS["y_hat"], sample_weight=ROWS["w"])
    assert sk.dtype == overall.counts.dtype == np.int64
    np.testing.assert_array_equal(overall.counts, sk.ravel()[::-1])


def test_multiclass_counts_bit_for_bit(engine, request):
    data = _table(engine, request)
    expected = multiclass_confusion_counts(
        ROWS["k"], ROWS["k_hat"], sensitive_features=ROWS["race"]
    )
    got = multiclass_confusion_counts(
        "k", "k_hat", sensitive_features="race", data=data
    )
    _same(got.groups, expected.groups)
    _same(got.labels, expected.labels)
    _same(got.counts, expected.counts)


@pytest.mark.parametrize("engine", ["polars-lazy", "duckdb"])
def test_results_equal_the_in_memory_ones(engine, request):
    data = _table(engine, request)
    rows = dict(y_true=ROWS["y"], y_pred=ROWS["y_hat"])
    named = dict(y_true="y", y_pred="y_hat", data=data)
    pd.testing.assert_frame_equal(
        group_metrics(
            **rows, sensitive_features=ROWS[["race", "age"]], confidence_level=0.9
        ),
        group_metrics(
            **named, sensitive_features=["race", "age"], confidence_level=0.9
        ),
    )
    pd.testing.assert_frame_equal(
        disparity_intervals(**rows, sensitive_features=ROWS["race"]),
        disparity_intervals(**named, sensitive_features="race"),
    )
    a = match_test(**rows, sensitive_features=ROWS["race"])
    b = match_test(**named, sensitive_features="race")
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    a = separation_test(**rows, sensitive_features=ROWS["race"])
    b = separation_test(**named, sensitive_features="race")
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    a = multiclass_match_test(
        ROWS["k"], ROWS["k_hat"], sensitive_features=ROWS["race"], n_resamples=2000
    )
    b = multiclass_match_test(
        "k", "k_hat", sensitive_features="race", data=data, n_resamples=2000
    )
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_audit_of_a_table_equals_the_audit_of_its_rows(request):
    data = _table("duckdb", request)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = audit_predictions(
            ROWS["y"], ROWS["y_hat"], sensitive_features=ROWS[["race", "age"]]
        )
        b = audit_predictions(
            "y", "y_hat", sensitive_features=["race", "age"], data=data
        )
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.summary() == b.summary()


# ---------------------------------------------------------------------------
# the same errors from every engine
# ---------------------------------------------------------------------------


def test_missing_column_lists_the_columns(engine, request):
    data = _table(engine, request)
    with pytest.raises(
        ValueError,
        match=r"no column y_pred='yhat'; its columns are 'y', 'y_hat', 'race'",
    ):
        confusion_counts("y", "yhat", sensitive_features="race", data=data)


@pytest.mark.parametrize(
    "column, role",
    [("race", "sensitive_features"), ("y", "y_true"), ("fw", "sample_weight")],
)
def test_a_null_is_the_same_error_everywhere(engine, request, column, role):
    frame = ROWS.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[[5, 17, 40], column] = None
    if column == "y":
        frame[column] = frame[column].astype("float64")
    if column == "fw":
        frame[column] = frame[column].astype("float64")
    data = _table(engine, request, frame)
    match = (
        rf"data's column '{column}' \({role}\) holds 3 missing value\(s\) "
        r"\(null or NaN\)"
    )
    with pytest.raises(ValueError, match=match):
        confusion_counts(
            "y", "y_hat", sensitive_features="race", sample_weight="fw", data=data
        )


def test_negative_weights_refused(engine, request):
    frame = ROWS.assign(fw=ROWS["fw"] - 1.0)
    data = _table(engine, request, frame)
    with pytest.raises(ValueError, match="holds negative weights"):
        confusion_counts(
            "y", "y_hat", sensitive_features="race", sample_weight="fw", data=data
        )


def test_failing_query_names_its_engine():
    pl = pytest.importorskip("polars")
    lazy = pl.LazyFrame({"s": ["x", "1"], "y": [0, 1], "p": [1, 1]}).with_columns(
        pl.col("s").cast(pl.Int64, strict=True)
    )
    with pytest.raises(RuntimeError, match=r"the polars query .* failed: "):
        confusion_counts("y", "p", sensitive_features="s", data=lazy)
    duckdb = pytest.importorskip("duckdb")
    relation = duckdb.sql(
        "SELECT CAST(s AS INTEGER) AS g, 1 AS y, 0 AS p FROM (VALUES ('x')) t(s)"
    )
    with pytest.raises(RuntimeError, match=r"the duckdb query .* failed: .*Conversion"):
        confusion_counts("y", "p", sensitive_features="g", data=relation)


def test_scores_in_a_table_refused_without_collecting(monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.setattr(_frames, "MAX_TALLY_ROWS", 50)
    relation = duckdb.sql(
        "SELECT i % 2 AS y, random() AS score, 'a' AS g FROM range(1000) t(i)"
    )
    with pytest.raises(ValueError, match="more than 50 distinct combinations"):
        confusion_counts("y", "score", sensitive_features="g", data=relation)


def test_continuous_group_warning_counts_people(request):
    """A numeric group column of many levels is warned about from a table as
    from its rows (the table's rows are not people)."""
    frame = ROWS.assign(score=np.arange(N) % 30)
    expected = []
    for data in (frame, _table("duckdb", request, frame)):
        with pytest.warns(SensitiveFeaturesWarning, match="30 distinct values") as rec:
            confusion_counts("y", "y_hat", sensitive_features="score", data=data)
        expected.append(str(rec[0].message))
    assert expected[0] == expected[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SensitiveFeaturesWarning)
        confusion_counts(
            "y", "y_hat", sensitive_features="age", data=_table("duckdb", request)
        )


def test_arguments_with_data():
    with pytest.raises(TypeError, match="with data=, y_true names a column"):
        confusion_counts(ROWS["y"].to_numpy(), "y_hat", data=ROWS)
    with pytest.raises(TypeError, match="y_true='y' is a string; to name a column"):
        confusion_counts("y", "y_hat")
    with pytest.raises(ValueError, match=r"either data= .* or counts="):
        group_metrics("y", "y_hat", data=ROWS, counts={"a": (1, 1, 1, 1)})
    with pytest.raises(TypeError, match="data must be a data frame or table"):
        confusion_counts("y", "y_hat", data=ROWS.to_numpy())
    with pytest.raises(ValueError, match="y_true and y_pred both name the column"):
        confusion_counts("y", "y", sensitive_features="race", data=ROWS)
    with pytest.raises(TypeError, match="data must be a data frame or table that"):
        confusion_counts("y", "y_hat", data=object())


def test_lazy_table_as_a_column_is_refused():
    pl = pytest.importorskip("polars")
    lazy = pl.from_pandas(ROWS).lazy()
    with pytest.raises(
        TypeError, match=r"whose rows have no order .* pass it as data="
    ):
        _frames.to_local(lazy, "sensitive_features", frame=True)
    with pytest.raises(TypeError, match="must be an array-like"):
        confusion_counts(ROWS["y"], ROWS["y_hat"], sensitive_features=lazy)


def test_series_of_other_libraries_as_columns():
    pl = pytest.importorskip("polars")
    frame = pl.from_pandas(ROWS)
    expected = confusion_counts(
        ROWS["y"], ROWS["y_hat"], sensitive_features=ROWS[["race", "age"]]
    )
    got = confusion_counts(
        frame["y"], frame["y_hat"], sensitive_features=frame.select("race", "age")
    )
    _same(got.groups, expected.groups)
    _same(got.counts, expected.counts)


def test_without_narwhals(monkeypatch):
    """Columns of other libraries still read through numpy; a table that only
    Narwhals reads asks for it by name."""
    pl = pytest.importorskip("polars")
    monkeypatch.setattr(_frames, "_NARWHALS", "narwhals_is_not_installed")
    frame = pl.from_pandas(ROWS)
    got = confusion_counts(frame["y"], frame["y_hat"], sensitive_features=frame["race"])
    expected = confusion_counts(
        ROWS["y"], ROWS["y_hat"], sensitive_features=ROWS["race"]
    )
    np.testing.assert_array_equal(got.counts, expected.counts)
    with pytest.raises(ImportError, match="pip install narwhals"):
        confusion_counts("y", "y_hat", sensitive_features="race", data=frame)
    # pandas needs nothing more
    confusion_counts("y", "y_hat", sensitive_features="race", data=ROWS)


def test_fairness_audit_predicts_in_memory_only():
    duckdb = pytest.importorskip("duckdb")
    from sklearn.linear_model import LogisticRegression

    from sklearn_smallfair import FairnessAudit

    X = ROWS[["age"]].to_numpy()
    audit = FairnessAudit(LogisticRegression()).fit(X, ROWS["y"])
    relation = duckdb.from_df(ROWS[["age"]])
    with pytest.raises(TypeError, match=r"X is a duckdb table; .* data=table"):
        audit.audit(relation, ROWS["y"], sensitive_features=ROWS["race"])
    table = ROWS.assign(y_pred=audit.predict(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = audit.audit(X, ROWS["y"], sensitive_features=ROWS["race"])
        b = audit.audit_predictions(
            "y", "y_pred", sensitive_features="race", data=duckdb.from_df(table)
        )
    pd.testing.assert_frame_equal(a.frame, b.frame)


@pytest.mark.parametrize(
    "column, match",
    [("g", "sensitive_features mixes text and non-text labels"), ("y", "y_true mixes")],
)
def test_mixed_label_types_same_error(column, match):
    frame = pd.DataFrame(
        {"y": [0, 1, 0, 1], "p": [1, 1, 0, 0], "g": ["x", "x", "z", "z"]}
    )
    frame[column] = [1, "a", 1, "a"] if column == "g" else [0, "1", 0, 1]
    with pytest.raises((TypeError, ValueError), match=match):
        confusion_counts(frame["y"], frame["p"], sensitive_features=frame["g"])
    with pytest.raises((TypeError, ValueError), match=match):
        confusion_counts("y", "p", sensitive_features="g", data=frame)
