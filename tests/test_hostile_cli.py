"""Tests of the ``smallfair`` command under careless and hostile input.

Tables whose labels pandas would guess wrong (ZIP codes, ``NA``, booleans),
inputs that can be read only once (pipes), header mistakes, option values no
strict parser accepts, and runs that fail half-way: each gives the right
numbers or one clear line naming the problem, and never a traceback, a
silently changed group or a half-written set of outputs.
"""

import io
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.cli import main


def run(argv, capsys):
    """Run ``main`` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code, err, expected_code, *fragments):
    """One line ``smallfair: error: ...`` holding every fragment."""
    assert code == expected_code, err
    lines = [line for line in err.strip().splitlines() if "warning:" not in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("smallfair: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def audit(path, tmp_path, *extra, target="y", prediction="p", group="g"):
    """Arguments of ``smallfair audit`` on a CSV file, writing in ``tmp_path``."""
    return [
        "audit",
        "--csv",
        path,
        "--target",
        target,
        "--prediction",
        prediction,
        "--group",
        group,
        "--tests",
        "none",
        "--lam",
        "0",
        "--out",
        tmp_path / "report.html",
        *extra,
    ]


def table(argv, tmp_path, capsys, name="groups.csv"):
    """Run an audit; return its per-group CSV read back with text labels."""
    out_csv = tmp_path / name
    code, _, err = run([*argv, "--csv-out", out_csv], capsys)
    assert code == 0, err
    labels = pd.read_csv(out_csv, usecols=[0], dtype=str, keep_default_na=False)
    frame = pd.read_csv(out_csv, index_col=0)
    frame.index = pd.Index(labels.iloc[:, 0], name=frame.index.name)
    return frame


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rows(header, records):
    return header + "\n" + "\n".join(records) + "\n"


# ---------------------------------------------------------------------------
# group labels are the text written
# ---------------------------------------------------------------------------


def test_group_labels_are_read_as_written(tmp_path, capsys):
    records = ["1,1,01", "0,1,1", "1,0,2", "0,0,01", "1,1,02134", "0,0,1.0"]
    path = write(tmp_path, "zip.csv", rows("y,p,g", records))
    groups = table(audit(path, tmp_path), tmp_path, capsys)
    assert sorted(groups.index) == ["01", "02134", "1", "1.0", "2"]
    assert groups.loc["01", "n"] == 2 and groups.loc["1", "n"] == 1


def test_group_labels_do_not_depend_on_other_rows_or_chunks(tmp_path, capsys):
    """A text label late in the file changes neither the other groups nor the
    result at any chunk size."""
    rng = np.random.default_rng(1)
    n = 2500
    groups = rng.choice(["1", "2", "007"], size=n).astype(object)
    groups[-1] = "x"
    frame = pd.DataFrame(
        {"y": rng.integers(0, 2, n), "p": rng.integers(0, 2, n), "g": groups}
    )
    path = tmp_path / "late.csv"
    frame.to_csv(path, index=False)
    whole = table(audit(path, tmp_path), tmp_path, capsys, "whole.csv")
    assert sorted(whole.index) == ["007", "1", "2", "x"]
    for size in ("1000", "7"):
        chunks = table(
            audit(path, tmp_path, "--chunksize", size), tmp_path, capsys, "c.csv"
        )
        pd.testing.assert_frame_equal(whole, chunks)


def test_label_columns_read_alike_at_any_chunk_size(tmp_path, capsys):
    """``True``, ``1`` and ``1.0`` in label columns are one class, whichever
    chunk holds them."""
    records = ["True,1,a", "False,0,b", "True,0,a", "False,1,b"] * 3
    records += ["1,1.0,a", "0,0.0,b"]
    path = write(tmp_path, "labels.csv", rows("y,p,g", records))
    whole = table(audit(path, tmp_path), tmp_path, capsys, "whole.csv")
    assert whole.loc["a", "n"] == 7 and whole.loc["a", "tpr"] == pytest.approx(4 / 7)
    for size in ("3", "5"):
        chunks = table(audit(path, tmp_path, "--chunksize", size), tmp_path, capsys)
        pd.testing.assert_frame_equal(whole, chunks)


def test_words_pandas_reads_as_missing_are_labels(tmp_path, capsys):
    records = ["1,1,NA", "0,0,null", "1,0,None", "0,1,NA", "1,1,n/a"]
    path = write(tmp_path, "na.csv", rows("y,p,g", records))
    groups = table(audit(path, tmp_path), tmp_path, capsys)
    assert sorted(groups.index) == ["NA", "None", "n/a", "null"]
    # an empty field is missing
    path = write(tmp_path, "empty.csv", rows("y,p,g", [*records, "1,0,"]))
    code, _, err = run(audit(path, tmp_path), capsys)
    assert_error(code, err, 1, "group column 'g'", "missing", "line 7")


# ---------------------------------------------------------------------------
# inputs read once
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["-", "/dev/stdin"])
def test_audit_reads_a_pipe(tmp_path, name):
    if name == "/dev/stdin" and not os.path.exists(name):
        pytest.skip("no /dev/stdin")
    records = ["1,1,a", "0,0,b", "1,0,a", "0,1,b", "1,1,c", "0,0,c"]
    text = rows("y,p,g", records)
    out_csv = tmp_path / "groups.csv"
    argv = [str(a) for a in audit(name, tmp_path, "--csv-out", out_csv)]
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_smallfair", *argv],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "(stdin)" in proc.stdout or "stdin" in proc.stdout
    groups = pd.read_csv(out_csv, index_col=0)
    assert groups["n"].to_dict() == {"a": 2, "b": 2, "c": 2}


# ---------------------------------------------------------------------------
# label columns
# ---------------------------------------------------------------------------


def test_stray_text_in_a_numeric_label_column(tmp_path, capsys):
    records = ["1,1,a", "0,0,b", "1,0,a", "0,1,b"] * 5 + ["oops,1,a"]
    path = write(tmp_path, "stray.csv", rows("y,p,g", records))
    for chunksize in ("1000", "4"):
        code, _, err = run(audit(path, tmp_path, "--chunksize", chunksize), capsys)
        assert_error(code, err, 1, "column 'y'", "'oops'", "numbers and text")


def test_parquet_text_digits_beside_integer_predictions(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {
            "y": ["0", "1", "1", "0", "1", "0"],
            "p": [0, 1, 0, 1, 1, 0],
            "g": ["a", "a", "a", "b", "b", "b"],
        }
    )
    path = tmp_path / "typed.parquet"
    frame.to_parquet(path)
    argv = audit(path, tmp_path)
    argv[1] = "--parquet"
    from_text = table(argv, tmp_path, capsys, "text.csv")
    frame.astype({"y": int}).to_parquet(path)
    from_numbers = table(argv, tmp_path, capsys, "numbers.csv")
    pd.testing.assert_frame_equal(from_text, from_numbers)
    # words beside numbers are a clear error naming both columns
    frame.assign(y=["no", "yes", "yes", "no", "yes", "no"]).to_parquet(path)
    code, _, err = run(argv, capsys)
    assert_error(code, err, 1, "column 'y'", "text labels", "column 'p'", "numbers")


def test_nested_parquet_column(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    data = pa.table(
        {
            "y": [0, 1, 1, 0],
            "p": [0, 1, 0, 1],
            "g": [{"k": 1}, {"k": 2}, {"k": 1}, {"k": 2}],
        }
    )
    path = tmp_path / "nested.parquet"
    pq.write_table(data, path)
    argv = audit(path, tmp_path)
    argv[1] = "--parquet"
    code, _, err = run(argv, capsys)
    assert_error(code, err, 1, "column 'g'", "nested", "flatten")


def test_booleans_beside_zero_one(tmp_path, capsys):
    records = ["True,1,a", "False,0,a", "True,0,a", "False,1,b", "True,1,b"]
    path = write(tmp_path, "bool.csv", rows("y,p,g", [*records, "False,0,b"]))
    numbers = write(
        tmp_path,
        "numbers.csv",
        rows("y,p,g", [r.replace("True", "1").replace("False", "0") for r in records])
        + "0,0,b\n",
    )
    expected = table(audit(numbers, tmp_path), tmp_path, capsys, "expected.csv")
    for extra in ([], ["--pos-label", "True"], ["--pos-label", "1"]):
        got = table(audit(path, tmp_path, *extra), tmp_path, capsys, "got.csv")
        pd.testing.assert_frame_equal(expected, got)


@pytest.mark.parametrize(
    "labels",
    [("no", "yes"), ("very likely", "it's not"), (1, 2), ("-a", "-b")],
    ids=["words", "quotes", "numbers", "dashes"],
)
def test_suggested_pos_label_works(tmp_path, capsys, labels):
    """A ``--pos-label`` the command suggests is one that works."""
    first, second = labels
    records = [f'"{a}","{b}",{g}' for a, b, g in [(first, second, "a")] * 3]
    records += [f'"{a}","{b}",{g}' for a, b, g in [(second, first, "b")] * 3]
    records += [f'"{first}","{first}",a', f'"{second}","{second}",b']
    path = write(tmp_path, "labels.csv", rows("y,p,g", records))
    code, _, err = run(audit(path, tmp_path), capsys)
    line = assert_error(code, err, 1, "--pos-label")
    suggested = shlex.split(line[line.index("--pos-label") :])
    suggested = suggested[:1] if "=" in suggested[0] else suggested[:2]
    code, _, err = run(audit(path, tmp_path, *suggested), capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------
# columns and header
# ---------------------------------------------------------------------------


def test_header_with_spaces_after_commas(tmp_path, capsys):
    path = write(tmp_path, "spaces.csv", rows("y, p, g", ["1,1,a", "0,0,b"]))
    code, _, err = run(audit(path, tmp_path), capsys)
    line = assert_error(code, err, 1, "' p'", "' g'", "did you mean ' p'?")
    assert "available columns: y, p, g" not in line


def test_same_column_twice(tmp_path, capsys):
    path = write(tmp_path, "dup.csv", rows("y,p,g,y", ["1,1,a,0", "0,0,b,1"]))
    code, _, err = run(audit(path, tmp_path), capsys)
    assert_error(code, err, 1, "column 'y' appears 2 times", "columns 1, 4")
    path = write(tmp_path, "ok.csv", rows("y,p,g", ["1,1,a", "0,0,b"]))
    code, _, err = run(audit(path, tmp_path, prediction="y"), capsys)
    assert_error(code, err, 2, "--target and --prediction", "'y'")


def test_group_column_named_like_a_result_column(tmp_path, capsys):
    records = ["1,1,a", "1,0,a", "1,1,a", "0,0,b", "0,1,b", "0,1,b"]
    path = write(tmp_path, "n.csv", rows("y,p,n", records))
    groups = table(audit(path, tmp_path, group="n"), tmp_path, capsys)
    assert groups.index.name == "n (group)"
    assert groups["n"].to_dict() == {"a": 3, "b": 3}
    assert groups.loc["a", "tpr"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------
# outputs: all or nothing
# ---------------------------------------------------------------------------


def test_failed_run_replaces_no_output(tmp_path, capsys, monkeypatch):
    from sklearn_smallfair.audit._report import AuditReport

    path = write(tmp_path, "in.csv", rows("y,p,g", ["1,1,a", "0,0,b", "1,0,a"]))
    html, csv = tmp_path / "report.html", tmp_path / "old.csv"
    html.write_text("old html")
    csv.write_text("old csv")

    def fail(self, *args, **kwargs):
        raise ValueError("cannot make the JSON")

    monkeypatch.setattr(AuditReport, "to_json", fail)
    argv = audit(path, tmp_path, "--csv-out", csv, "--json-out", tmp_path / "r.json")
    code, _, err = run(argv, capsys)
    assert_error(code, err, 1, "cannot make the JSON")
    assert html.read_text() == "old html" and csv.read_text() == "old csv"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "in.csv",
        "old.csv",
        "report.html",
    ]


def test_longest_legal_output_name(tmp_path, capsys):
    path = write(tmp_path, "in.csv", rows("y,p,g", ["1,1,a", "0,0,b", "1,0,a"]))
    html = tmp_path / "report.html"
    html.write_text("old html")
    longest = tmp_path / ("c" * 250 + ".csv")
    code, _, err = run(audit(path, tmp_path, "--csv-out", longest), capsys)
    assert code == 0, err
    assert longest.read_text().startswith("g,n,")
    assert html.read_text() != "old html"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------
# options and JSON
# ---------------------------------------------------------------------------


def _strict(text):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_plan_refuses_non_finite_effect(tmp_path, capsys, value):
    out_json = tmp_path / "plan.json"
    argv = ["plan", "--counts", "389,347,1597,4121", "--n", "30"]
    code, _, err = run([*argv, f"--effect={value}", "--json-out", out_json], capsys)
    assert_error(code, err, 2, "--effect", "finite")
    assert not out_json.exists()
    code, _, err = run([*argv, "--effect=-0.1", "--json-out", out_json], capsys)
    assert code == 0, err
    _strict(out_json.read_text())


def test_strict_json_replaces_non_finite_numbers():
    from sklearn_smallfair._output import json_text

    text = json_text({"a": np.nan, "b": [1.5, np.inf, -np.inf], "c": 2.1e-12})
    assert _strict(text) == {"a": None, "b": [1.5, None, None], "c": 2.1e-12}


def test_warnings_are_one_tidy_line(tmp_path, capsys):
    records = ["1,1,a", "1,0,a", "0,0,b", "0,1,b", "1,1,b"]
    path = write(tmp_path, "in.csv", rows("y,p,g", records))
    argv = audit(path, tmp_path)
    argv[argv.index("--lam") + 1] = "10"
    code, _, err = run(argv, capsys)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines, "a small reference is warned about"
    assert all(line.startswith("smallfair: warning: ") for line in lines), err
    assert ".py" not in err and "warnings.warn" not in err


# ---------------------------------------------------------------------------
# experiment: population rows
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spelled", ["all", "ALL ", "Total", " overall"])
def test_experiment_population_row_is_not_a_group(tmp_path, capsys, spelled):
    from sklearn_smallfair.cli import read_group_counts

    lines = ["A,27,17,104,169", "B,7,12,38,167", f"{spelled},34,29,142,336"]
    text = rows("group,TP,FN,FP,TN", lines)
    path = write(tmp_path, "groups.csv", text)
    counts, reference = read_group_counts(str(path))
    assert list(counts.index) == ["A", "B"]
    np.testing.assert_array_equal(reference.loc["A"], [7, 12, 38, 167])
    out = io.StringIO()
    argv = ["experiment", "--dataset", path, "--sizes", "5", "--no-progress"]
    code = main([str(a) for a in [*argv, "--out", tmp_path / "r.csv"]], out=out)
    assert code == 0, capsys.readouterr().err
    results = pd.read_csv(tmp_path / "r.csv")
    assert set(results["group"]) == {"A", "B"}


def test_progress_names_the_audits_stages(tmp_path, capsys):
    records = ["1,1,a", "1,0,a", "0,0,a", "0,1,b", "1,1,b", "0,0,b"]
    path = write(tmp_path, "in.csv", rows("y,p,g", records))
    code, _, err = run(audit(path, tmp_path, "--progress"), capsys)
    assert code == 0, err
    assert "smallfair: auditing 2 groups x 3 metrics (tests: none)" in err
    assert "smallfair: audited in " in err
    code, _, err = run(audit(path, tmp_path, "--no-progress"), capsys)
    assert code == 0 and "auditing" not in err


def test_an_output_named_dash_is_refused(tmp_path, capsys):
    path = write(tmp_path, "in.csv", rows("y,p,g", ["1,1,a", "0,0,b", "1,0,a"]))
    argv = audit(path, tmp_path)
    argv[argv.index("--out") + 1] = "-"
    code, _, err = run(argv, capsys)
    assert_error(code, err, 2, "--out - would write a file named '-'")
    assert not (tmp_path / "-").exists()
