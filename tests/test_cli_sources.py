"""``smallfair audit`` and ``smallfair plan`` on folders and globs of Parquet
files and on SQL queries, counted by DuckDB."""

import json
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.cli import main

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


def run(argv, capsys):
    """Run ``main`` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code, err, expected_code, *fragments):
    assert code == expected_code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("smallfair: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def predictions(tmp_path):
    """400 people in one CSV file and in a folder of four Parquet files."""
    rng = np.random.default_rng(0)
    n = 400
    race = rng.choice(["A", "B"], size=n)
    race[:12] = "C"
    y = rng.integers(0, 2, size=n)
    flip = rng.random(n) < np.where(race == "B", 0.35, 0.15)
    frame = pd.DataFrame(
        {
            "y": y,
            "pred": np.where(flip, 1 - y, y),
            "race": race,
            "sex": rng.choice(["F", "M"], size=n),
            "site": rng.choice([3, 10, 200], size=n),
            "year": rng.choice([2023, 2024], size=n),
        }
    )
    csv = tmp_path / "predictions.csv"
    frame.to_csv(csv, index=False)
    folder = tmp_path / "preds"
    folder.mkdir()
    for k, part in enumerate(np.array_split(np.arange(n), 4)):
        frame.iloc[part].to_parquet(folder / f"part-{k}.parquet", index=False)
    return frame, csv, folder


def audit(capsys, source, tmp_path, name, *extra, groups=("race", "sex")):
    """Audit ``source`` (options) into ``name``.json and .csv; return the JSON
    (without its title) and the CSV text."""
    argv = [
        "audit", *source, "--target", "y", "--prediction", "pred",
        "--out", tmp_path / f"{name}.html", "--json-out", tmp_path / f"{name}.json",
        "--csv-out", tmp_path / f"{name}.csv", "--tests", "match", "--lam", "0",
        "--metrics", "tpr",
        *extra,
    ]  # fmt: skip
    for group in groups:
        argv += ["--group", group]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    report = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    report.pop("title")
    report.pop("version")
    return report, (tmp_path / f"{name}.csv").read_text(encoding="utf-8"), out


def test_folder_and_glob_equal_the_csv(predictions, tmp_path, capsys):
    _, csv, folder = predictions
    expected, table, _ = audit(capsys, ["--csv", csv], tmp_path, "csv")
    for source in (["--parquet", folder], ["--parquet", f"{folder}/*.parquet"]):
        got, got_table, out = audit(capsys, source, tmp_path, "duck")
        assert got == expected
        assert got_table == table
        assert "400 people" in out
    got, got_table, _ = audit(
        capsys, ["--sql", f"SELECT * FROM '{folder}/*.parquet'"], tmp_path, "sql"
    )
    assert got == expected and got_table == table


def test_sql_where_equals_the_rows_kept(predictions, tmp_path, capsys):
    frame, _, folder = predictions
    kept = tmp_path / "kept.csv"
    frame[frame["year"] == 2024].to_csv(kept, index=False)
    expected, table, _ = audit(capsys, ["--csv", kept], tmp_path, "csv")
    query = f"SELECT * FROM read_parquet('{folder}/*.parquet') WHERE year = 2024"
    got, got_table, out = audit(capsys, ["--sql", query], tmp_path, "sql")
    assert got == expected and got_table == table
    assert "(SQL query)" in out


def test_hive_partitions_and_typed_groups(predictions, tmp_path, capsys):
    frame, _, _ = predictions
    root = tmp_path / "hive"
    for year, part in frame.groupby("year"):
        (root / f"year={year}").mkdir(parents=True)
        part.drop(columns="year").to_parquet(root / f"year={year}" / "p.parquet")
    got, _, _ = audit(capsys, ["--parquet", root], tmp_path, "hive", groups=("year",))
    n = {row["year"]: row["n"] for row in got["groups"]}
    assert n == frame["year"].value_counts().to_dict()
    # integer groups stay integers, in their order (3 < 10 < 200)
    got, _, _ = audit(capsys, ["--parquet", root], tmp_path, "site", groups=("site",))
    assert [row["site"] for row in got["groups"]] == [3, 10, 200]
    # the report of the rows in memory, by the API
    from sklearn_smallfair.audit import audit_predictions

    direct = audit_predictions(
        frame["y"], frame["pred"], sensitive_features=frame["site"], tests=("match",)
    ).frame
    table = pd.read_csv(tmp_path / "site.csv", index_col=0)
    assert list(table.index) == list(direct.index)
    np.testing.assert_array_equal(table["n"], direct["n"])


def test_missing_column_lists_the_columns(predictions, tmp_path, capsys):
    _, _, folder = predictions
    argv = ["audit", "--parquet", folder, "--target", "y", "--prediction", "pred"]
    code, _, err = run([*argv, "--group", "nope", "--out", tmp_path / "x.html"], capsys)
    assert_error(
        code, err, 1, "'nope' not found", "available columns: y, pred, race, sex"
    )


def test_failing_query_names_duckdb(tmp_path, capsys):
    out = ["--out", tmp_path / "x.html", "--target", "y", "--prediction", "p"]
    query = "SELECT CAST('x' AS INTEGER) AS y, 1 AS p, 'a' AS g"
    code, _, err = run(["audit", "--sql", query, "--group", "g", *out], capsys)
    assert_error(code, err, 1, "DuckDB", "ConversionException", "'x'")
    code, _, err = run(
        ["audit", "--sql", "SELECT * FROM nowhere", "--group", "g", *out], capsys
    )
    assert_error(code, err, 1, "DuckDB", "nowhere")
    code, _, err = run(
        ["audit", "--sql", "COPY (SELECT 1) TO 'x.csv'", "--group", "g", *out], capsys
    )
    assert_error(code, err, 2, "--sql takes one query")
    assert not (tmp_path / "x.csv").exists()


def test_null_group_is_the_package_error(predictions, tmp_path, capsys):
    frame, _, _ = predictions
    folder = tmp_path / "holes"
    folder.mkdir()
    holes = frame.astype({"race": object})
    holes.loc[[5, 7, 300], "race"] = None
    holes[:200].to_parquet(folder / "a.parquet")
    holes[200:].to_parquet(folder / "b.parquet")
    argv = ["audit", "--parquet", folder, "--target", "y", "--prediction", "pred"]
    code, _, err = run([*argv, "--group", "race", "--out", tmp_path / "x.html"], capsys)
    assert_error(
        code, err, 1, "column 'race' (sensitive_features) holds 3 missing value(s)"
    )


def test_no_parquet_file(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    argv = ["audit", "--target", "y", "--prediction", "p", "--group", "g"]
    argv += ["--out", tmp_path / "x.html"]
    code, _, err = run([*argv, "--parquet", tmp_path / "empty"], capsys)
    assert_error(code, err, 1, "no *.parquet file")
    code, _, err = run([*argv, "--parquet", tmp_path / "empty" / "*.parquet"], capsys)
    assert_error(code, err, 1, "no file matches")


def test_without_duckdb(predictions, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    _, _, folder = predictions
    argv = ["audit", "--parquet", folder, "--target", "y", "--prediction", "pred"]
    code, _, err = run([*argv, "--group", "race", "--out", tmp_path / "x.html"], capsys)
    assert_error(code, err, 1, "needs DuckDB", "sklearn-smallfair[duckdb]")


def test_progress_then_the_audit_stages(predictions, tmp_path, capsys):
    _, _, folder = predictions
    argv = ["audit", "--parquet", folder, "--target", "y", "--prediction", "pred"]
    argv += ["--group", "race", "--out", tmp_path / "x.html", "--tests", "none"]
    code, _, err = run([*argv, "--progress"], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith("smallfair: 400 rows counted by DuckDB in ")
    assert lines[1].startswith("smallfair: auditing 3 groups x 3 metrics")
    code, _, err = run([*argv, "--no-progress"], capsys)
    assert code == 0 and err == ""


def test_plan_on_a_folder(predictions, tmp_path, capsys):
    _, csv, folder = predictions
    tables = []
    for source in (["--csv", csv], ["--parquet", folder]):
        out = tmp_path / "plan.csv"
        argv = ["plan", *source, "--target", "y", "--prediction", "pred"]
        argv += ["--group", "race", "--csv-out", out, "--force", "--metrics", "tpr"]
        argv += ["--effect", "-0.3", "--max-n", "2000"]
        code, _, err = run(argv, capsys)
        assert code == 0, err
        tables.append(out.read_text(encoding="utf-8"))
    assert tables[0] == tables[1]
