"""Tests of the ``smallfair`` command."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.cli import main, read_group_counts

try:
    import matplotlib

    matplotlib.use("Agg")
    HAS_MPL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAS_MPL = False


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
def predictions_csv(tmp_path):
    """Predictions of 400 people: two large groups, a small one, and a sex column."""
    rng = np.random.default_rng(0)
    n = 400
    race = rng.choice(["A", "B"], size=n)
    race[:12] = "C"  # a small group
    sex = rng.choice(["F", "M"], size=n)
    y = rng.integers(0, 2, size=n)
    flip = rng.random(n) < np.where(race == "B", 0.35, 0.15)
    pred = np.where(flip, 1 - y, y)
    frame = pd.DataFrame({"y": y, "pred": pred, "race": race, "sex": sex})
    path = tmp_path / "predictions.csv"
    frame.to_csv(path, index=False)
    return path, frame


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def test_demo_writes_report_and_prints_summary(tmp_path, capsys):
    report = tmp_path / "demo.html"
    code, out, err = run(["demo", "--out", report], capsys)
    assert code == 0, err
    assert "Black (n = 3178)" in out and "White (n = 2265)" in out
    # whole-group COMPAS TPR of Black defendants: 273 / (273 + 170)
    assert "0.616" in out
    assert "Separation (equalized odds): violated" in out
    assert "White, n=12" in out and "tpr_smoothed" in out
    assert str(report) in out
    page = report.read_text(encoding="utf-8")
    assert "Black" in page and "White" in page and "<table" in page
    if HAS_MPL:
        assert '<img alt="' in page and 'src="data:image/png;base64,' in page


def test_default_command_is_demo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main([], out=out) == 0
    assert "COMPAS" in out.getvalue()
    assert (tmp_path / "smallfair_demo_report.html").is_file()
    # demo options without the command name
    out = io.StringIO()
    assert main(["--out", "other.html", "--lam", "5", "--debug"], out=out) == 0
    assert "lam=5" in out.getvalue()
    assert (tmp_path / "other.html").is_file()


def test_demo_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    report = tmp_path / "demo.html"
    code, _, err = run(["demo", "--out", report, "--lam", "0"], capsys)
    assert code == 0, err
    page = report.read_text(encoding="utf-8")
    assert "Plots need matplotlib" in page
    assert "data:image/png" not in page


def test_module_entry_point_subprocess(tmp_path):
    report = tmp_path / "sub dir" / "report.html"
    report.parent.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_smallfair", "demo", "--out", str(report)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**__import__("os").environ, "MPLBACKEND": "Agg"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "HTML report:" in proc.stdout
    page = report.read_text(encoding="utf-8")
    assert "Black" in page and "<table" in page
    if HAS_MPL:
        assert 'src="data:image/png;base64,' in page


def test_version_and_help(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("smallfair ")
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "examples:" in out and "experiment" in out and "audit" in out
    for command in ("demo", "audit", "experiment"):
        code, out, _ = run([command, "--help"], capsys)
        assert code == 0 and "examples:" in out


# ---------------------------------------------------------------------------
# audit
# ---------------------------------------------------------------------------


def test_audit_generated_csv(predictions_csv, tmp_path, capsys):
    path, _ = predictions_csv
    html = tmp_path / "audit.html"
    table = tmp_path / "groups.csv"
    js = tmp_path / "audit.json"
    code, out, err = run(
        [
            "audit", "--csv", path, "--target", "y", "--prediction", "pred",
            "--group", "race", "--out", html, "--csv-out", table, "--json-out", js,
            "--title", "Generated <audit>",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "Generated <audit>: 3 groups, 400 people" in out
    assert "Small group(s) with fewer than 30 people: C" in out
    page = html.read_text(encoding="utf-8")
    assert "Generated &lt;audit&gt;" in page and "<table" in page
    groups = pd.read_csv(table, index_col=0)
    assert list(groups.index) == ["A", "B", "C"]
    assert groups.loc["C", "n"] == 12
    assert {"tpr", "tpr_smoothed", "fpr", "ppv_match_p_value"} <= set(groups.columns)
    payload = json.loads(js.read_text(encoding="utf-8"))
    assert payload["title"] == "Generated <audit>"


def test_audit_intersectional_groups(predictions_csv, tmp_path, capsys):
    path, frame = predictions_csv
    table = tmp_path / "groups.csv"
    code, out, err = run(
        [
            "audit", "--csv", path, "--target", "y", "--prediction", "pred",
            "--group", "race", "--group", "sex", "--metrics", "tpr", "recall",
            "fpr", "--tests", "match", "--lam", "5", "--alpha", "0.1",
            "--out", tmp_path / "a.html", "--csv-out", table,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    groups = pd.read_csv(table, index_col=0)
    expected = sorted(set(frame["race"] + "|" + frame["sex"]))
    assert sorted(groups.index) == expected
    assert "C|F" in out or "C|M" in out
    assert "tpr_separation_p_adjusted" not in groups.columns  # only the MATCH test
    assert "ppv" not in groups.columns
    assert "alpha = 0.1" in out


def test_audit_confidence_level_and_n_resamples(predictions_csv, tmp_path, capsys):
    path, frame = predictions_csv
    js = tmp_path / "a.json"
    code, _, err = run(
        [
            "audit", "--csv", path, "--target", "y", "--prediction", "pred",
            "--group", "race", "--metrics", "tpr", "--tests", "match",
            "--confidence-level", "0.8", "--n-resamples", "500",
            "--out", tmp_path / "a.html", "--json-out", js,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(js.read_text(encoding="utf-8"))
    assert payload["confidence_level"] == 0.8
    from sklearn_smallfair.audit import audit_predictions

    expected = audit_predictions(
        frame["y"], frame["pred"], sensitive_features=frame["race"],
        metrics="tpr", tests=("match",), confidence_level=0.8, n_resamples=500,
    ).frame  # fmt: skip
    got = pd.DataFrame(payload["groups"]).set_index("race")
    np.testing.assert_allclose(got["tpr_low"], expected["tpr_low"])


def test_audit_tolerance_and_separation_pairs(predictions_csv, tmp_path, capsys):
    path, frame = predictions_csv
    js = tmp_path / "a.json"
    code, _, err = run(
        [
            "audit", "--csv", path, "--target", "y", "--prediction", "pred",
            "--group", "race", "--metrics", "tpr", "--tolerance", "0.4",
            "--separation-pairs", "all",
            "--out", tmp_path / "a.html", "--json-out", js,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(js.read_text(encoding="utf-8"))
    from sklearn_smallfair.audit import audit_predictions

    expected = audit_predictions(
        frame["y"], frame["pred"], sensitive_features=frame["race"],
        metrics="tpr", tolerance=0.4, separation_pairs="all",
    )  # fmt: skip
    got = pd.DataFrame(payload["groups"]).set_index("race")
    assert list(got["tpr_verdict"]) == list(expected.frame["tpr_verdict"])
    assert len(payload["separation"]) == len(expected.separation)
    k = len(expected.frame)
    assert len(expected.separation) == k * (k - 1)  # every pair, two rates
    code, _, err = run(
        ["audit", "--csv", path, "--target", "y", "--prediction", "pred",
         "--group", "race", "--tolerance", "-1"],
        capsys,
    )  # fmt: skip
    assert_error(code, err, 2, "--tolerance", "> 0")


def test_audit_text_labels_and_default_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame(
        {
            "truth": ["yes", "no"] * 30,
            "guess": ["yes", "yes", "no"] * 20,
            "grp": ["x"] * 40 + ["y"] * 20,
        }
    )
    frame.to_csv("labels.csv", index=False)
    base = ["audit", "--csv", "labels.csv", "--target", "truth"]
    base += ["--prediction", "guess", "--group", "grp"]
    code, _, err = run(base, capsys)
    # a data error (exit 1), which names the option that settles it
    assert_error(code, err, 1, "hold text labels", "--pos-label", "'no', 'yes'")
    code, _, err = run([*base, "--pos-label", "yes", "--tests", "none"], capsys)
    assert code == 0, err
    assert (tmp_path / "smallfair_audit_report.html").is_file()
    code, _, err = run([*base, "--pos-label", "maybe"], capsys)
    assert_error(code, err, 2, "--pos-label 'maybe' is not a label")


def test_audit_compas_logistic_regression(tmp_path, capsys, compas_path):
    from sklearn.linear_model import LogisticRegression

    compas = pd.read_csv(compas_path)
    features = ["age", "priors_count", "juv_fel_count"]
    model = LogisticRegression().fit(compas[features], compas["two_year_recid"])
    compas["lr_pred"] = model.predict(compas[features])
    path = tmp_path / "compas_pred.csv"
    compas[[*features, "race", "sex", "two_year_recid", "lr_pred"]].to_csv(
        path, index=False
    )
    table = tmp_path / "compas_groups.csv"
    html = tmp_path / "compas.html"
    code, out, err = run(
        [
            "audit", "--csv", path, "--target", "two_year_recid",
            "--prediction", "lr_pred", "--group", "race", "--group", "sex",
            "--out", html, "--csv-out", table,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    groups = pd.read_csv(table, index_col=0)
    assert "African-American|Male" in groups.index
    assert groups["n"].sum() == len(compas)
    assert groups["n"].min() < 30  # some intersections are small
    assert "Small group(s)" in out
    assert "more (see the HTML report)" in out
    page = html.read_text(encoding="utf-8")
    assert "African-American|Male" in page


# ---------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------


def test_experiment_published_exact(tmp_path, capsys):
    results = tmp_path / "results.csv"
    code, out, err = run(
        [
            "experiment", "--sizes", "5:20", "--method", "exact", "--metrics",
            "tpr", "fpr", "--lam", "5", "10", "--out", results, "--no-progress",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(results)
    assert list(frame.columns) == [
        "group", "n", "metric", "estimator", "mse", "bias", "variance",
        "p_undefined",
    ]  # fmt: skip
    assert frame["n"].min() == 5 and frame["n"].max() == 20
    assert set(frame["estimator"]) == {"raw", "cps_5", "cps_10"}
    assert set(frame["metric"]) == {"tpr", "fpr"}
    assert frame["group"].nunique() == 10
    assert len(frame) == 10 * 16 * 2 * 3
    assert "mse n=5" in out and str(results) in out
    assert err == ""


def test_experiment_montecarlo_progress_and_plot(tmp_path, capsys):
    results = tmp_path / "mc.csv"
    argv = [
        "experiment", "--dataset", "compas", "--sizes", "5:15:5", "30",
        "--method", "montecarlo", "--n-resamples", "500", "--metrics", "ppv",
        "--lam", "10", "--random-state", "3", "--out", results,
    ]  # fmt: skip
    plot = tmp_path / "curves.png"
    if HAS_MPL:
        argv += ["--plot", plot, "--statistic", "rmse"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "Traceback" not in err
    frame = pd.read_csv(results)
    assert {"mse_se", "n_resamples"} <= set(frame.columns)
    assert sorted(frame["n"].unique()) == [5, 10, 15, 30]
    assert set(frame["group"]) == {"COMPAS|Black", "COMPAS|White"}
    if HAS_MPL:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "Plot:" in out


def test_experiment_user_file(tmp_path, capsys):
    counts = pd.DataFrame(
        {
            "group": ["A", "B", "ALL"],
            "TP": [273, 77, 389],
            "FN": [170, 129, 347],
            "FP": [1043, 380, 1597],
            "TN": [1692, 1679, 4121],
        }
    )
    path = tmp_path / "groups.csv"
    counts.to_csv(path, index=False)
    results = tmp_path / "r.csv"
    code, _, err = run(
        ["experiment", "--dataset", path, "--sizes", "10", "20", "--metrics",
         "tpr", "--out", results, "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(results)
    published = pd.read_csv(tmp_path / "r.csv")
    assert set(frame["group"]) == {"A", "B"}
    # ALL row: same references as the published COMPAS groups
    code, _, err = run(
        ["experiment", "--dataset", "compas", "--sizes", "10", "20", "--metrics",
         "tpr", "--out", tmp_path / "p.csv", "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    ref = pd.read_csv(tmp_path / "p.csv")
    np.testing.assert_allclose(published["mse"], ref["mse"])


def test_read_group_counts_formats(tmp_path):
    path = tmp_path / "ref.csv"
    pd.DataFrame(
        {
            "Group": ["a", "b"],
            "tp": [5, 6],
            "fn": [1, 2],
            "fp": [3, 4],
            "tn": [10, 20],
            "ref_TP": [6, 5],
            "ref_FN": [2, 1],
            "ref_FP": [4, 3],
            "ref_TN": [20, 10],
        }
    ).to_csv(path, index=False)
    counts, reference = read_group_counts(str(path))
    assert list(counts.index) == ["a", "b"]
    assert reference.loc["a"].tolist() == [6, 2, 4, 20]

    path = tmp_path / "datasets.csv"
    pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2", "d2"],
            "group": ["a", "ALL", "a", "ALL"],
            "TP": [1, 3, 2, 5],
            "FN": [1, 3, 2, 5],
            "FP": [1, 3, 2, 5],
            "TN": [1, 3, 2, 5],
        }
    ).to_csv(path, index=False)
    counts, reference = read_group_counts(str(path))
    assert list(counts.index) == ["d1|a", "d2|a"]
    assert reference.to_numpy().tolist() == [[2] * 4, [3] * 4]

    path = tmp_path / "plain.csv"
    pd.DataFrame({"group": ["a", "b"], "TP": [1, 2], "FN": [1, 2], "FP": [1, 2],
                  "TN": [1, 2]}).to_csv(path, index=False)  # fmt: skip
    assert read_group_counts(str(path))[1] == "rest"


# ---------------------------------------------------------------------------
# errors: one line on stderr, exit 1 (data) or 2 (usage), never a traceback
# ---------------------------------------------------------------------------


def _audit(path, *extra, target="y", prediction="pred", group="race"):
    return [
        "audit", "--csv", path, "--target", target, "--prediction", prediction,
        "--group", group, *extra,
    ]  # fmt: skip


def test_usage_errors(tmp_path, predictions_csv, capsys):
    path, _ = predictions_csv
    out = ["--out", tmp_path / "x.html"]
    cases = [
        (["demo", "--lam", "-1"], "--lam", "must be a finite number >= 0"),
        (["demo", "--lam", "abc"], "--lam", "expected a number"),
        (["demo", "--random-state", "-3"], "--random-state", ">= 0"),
        (["nonsense"], "invalid choice", "nonsense"),
        (["demo", "--bogus"], "unrecognized arguments: --bogus"),
        (["audit", "--csv", path], "required", "--target"),
        (_audit(path, "--metrics", "tpr", "foo", *out), "unknown", "'foo'", "ppv"),
        (_audit(path, "--metrics", "te", *out), "unsupported metric 'te'"),
        (_audit(path, "--alpha", "1.5", *out), "--alpha", "(0, 1)"),
        (_audit(path, "--confidence-level", "1", *out), "--confidence-level"),
        (_audit(path, "--n-resamples", "50", *out), "--n-resamples", "100"),
        (_audit(path, "--tests", "magic", *out), "--tests", "invalid choice"),
        (_audit(path, "--tests", "none", "match", *out), "--tests none"),
        (_audit(path, "--group", "race", *out), "--group", "more than once"),
        (_audit(path, "--pos-label", "abc", *out), "--pos-label 'abc'"),
        (_audit(path, "--sep", "", *out), "--sep", "one character"),
        (_audit(path, "--sep", "ab", *out), "--sep", "one character"),
        (_audit(path, "--out", path), "--out", "input file of --csv"),
        (_audit(path, *out, "--csv-out", out[1]), "--out", "--csv-out", "same"),
        (_audit(path, "--out", ""), "--out is empty"),
        (["experiment", "--sizes", "20:5"], "--sizes", "A <= B"),
        (["experiment", "--sizes", "0:5"], "--sizes", ">= 1"),
        (["experiment", "--sizes", "a:b"], "--sizes", "A:B"),
        (["experiment", "--n-resamples", "0"], "--n-resamples", ">= 1"),
        (["experiment", "--jobs", "0"], "--jobs", "must not be 0"),
        (["experiment", "--method", "magic"], "--method", "invalid choice"),
        (["experiment", "--metrics", "nope"], "unknown", "'nope'", "tpr"),
    ]
    if HAS_MPL:
        cases.append(
            (["experiment", "--plot", tmp_path / "c.xyz"], "unsupported image format")
        )
    for argv, *fragments in cases:
        code, _, err = run(argv, capsys)
        assert_error(code, err, 2, *fragments)


def test_data_errors(tmp_path, predictions_csv, capsys):
    path, frame = predictions_csv
    out = ["--out", tmp_path / "x.html"]

    def write(name, data, **kw):
        p = tmp_path / name
        if isinstance(data, str):
            p.write_text(data, encoding="utf-8")
        elif isinstance(data, bytes):
            p.write_bytes(data)
        else:
            data.to_csv(p, index=False, **kw)
        return p

    nan_group = frame.astype({"race": object})
    nan_group.loc[5, "race"] = None
    nan_target = frame.astype({"y": float})
    nan_target.loc[7, "y"] = np.nan
    scores = frame.astype({"pred": float})
    scores["pred"] = np.linspace(0, 1, len(frame))
    one_group = frame.assign(race="A")
    cells = {"FN": [1, 1], "FP": [1, 1], "TN": [1, 1]}
    cm_missing = write("cm.csv", pd.DataFrame({"group": ["a"], "TP": [1]}))
    cm_negative = write(
        "neg.csv", pd.DataFrame({"group": ["a", "b"], "TP": [1, -1], **cells})
    )
    cm_single = write(
        "single.csv",
        pd.DataFrame({"group": ["a"], "TP": [1], "FN": [1], "FP": [1], "TN": [1]}),
    )
    cm_partial_ref = write(
        "ref.csv",
        pd.DataFrame({"group": ["a", "b"], "TP": [1, 2], "ref_TP": [2, 1], **cells}),
    )
    hyper = ["--sizes", "5000", "--sampling", "hypergeometric", "--no-progress"]
    cases = [
        (_audit(tmp_path / "missing.csv", *out), "file not found", "missing.csv"),
        (_audit(tmp_path, *out), "is a directory"),
        (_audit(write("empty.csv", ""), *out), "is empty"),
        (_audit(write("header.csv", "y,pred,race\n"), *out), "no data rows"),
        (_audit(write("bad.csv", 'y,pred\n1,"0\n'), *out), "cannot parse"),
        (_audit(write("bin.csv", b"\xff\xfe\x00\x81\x00"), *out), "not a UTF-8"),
        (
            _audit(path, *out, target="label", group="ethnicity"),
            "'label', 'ethnicity' not found",
            "available columns: y, pred, race, sex",
        ),
        (
            _audit(write("nang.csv", nan_group), *out),
            "group column 'race'",
            "1 missing value(s) (first on line 7)",
        ),
        (_audit(write("nant.csv", nan_target), *out), "column 'y'", "line 9"),
        (_audit(write("scores.csv", scores), *out), "continuous values"),
        (_audit(write("semi.csv", frame, sep=";"), *out), "pass --sep ';'"),
        (_audit(write("one.csv", one_group), *out), "single group ('A')"),
        (
            _audit(path, "--out", tmp_path / "no" / "such" / "dir.html"),
            "directory",
            "does not exist",
        ),
        (["experiment", "--dataset", tmp_path / "nope.csv"], "file not found"),
        (
            ["experiment", "--dataset", cm_missing],
            "'FN', 'FP', 'TN' not found",
            "available columns: group, TP",
        ),
        (
            ["experiment", "--dataset", cm_negative],
            "must hold counts",
            "line 3 has '-1'",
        ),
        (["experiment", "--dataset", cm_single], "single group"),
        (["experiment", "--dataset", cm_partial_ref], "ref_TP", "all four"),
        (["experiment", "--dataset", "compas", *hyper], "hypergeometric"),
    ]
    for argv, *fragments in cases:
        code, _, err = run(argv, capsys)
        assert_error(code, err, 1, *fragments)


def test_plot_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    code, _, err = run(
        ["experiment", "--sizes", "5", "--plot", tmp_path / "c.png",
         "--out", tmp_path / "r.csv"],
        capsys,
    )  # fmt: skip
    assert_error(code, err, 1, "--plot needs matplotlib")
    assert not (tmp_path / "r.csv").exists()  # failed before any work


def test_debug_lets_library_errors_propagate(tmp_path, capsys):
    argv = ["experiment", "--dataset", "compas", "--sizes", "5000", "--sampling",
            "hypergeometric", "--no-progress", "--out", tmp_path / "r.csv"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert_error(code, err, 1, "hypergeometric")
    with pytest.raises(ValueError, match="hypergeometric"):
        main(["--debug", *map(str, argv)])
    with pytest.raises(ValueError, match="hypergeometric"):
        main([*map(str, argv), "--debug"])


def test_experiment_without_tqdm(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    results = tmp_path / "r.csv"
    code, _, err = run(
        ["experiment", "--sizes", "5", "--metrics", "tpr", "--out", results], capsys
    )
    assert code == 0, err
    assert err == ""  # no progress bar, no complaint
    assert results.is_file()


# ---------------------------------------------------------------------------
# audit: chunked reading, Parquet, progress
# ---------------------------------------------------------------------------


def _audit_table(argv, tmp_path, capsys, name):
    table = tmp_path / f"{name}.csv"
    code, out, err = run(
        [*argv, "--out", tmp_path / f"{name}.html", "--csv-out", table], capsys
    )
    assert code == 0, err
    return pd.read_csv(table, index_col=0), out, err


def test_audit_in_chunks_equals_whole_file(predictions_csv, tmp_path, capsys):
    """Chunks of 7 rows (a group or a label absent from some chunks) give the
    report of the whole file, and the report of rows counted in memory."""
    path, frame = predictions_csv
    base = _audit(path, "--group", "sex")
    whole, out, _ = _audit_table(base, tmp_path, capsys, "whole")
    chunks, out_chunks, _ = _audit_table(
        [*base, "--chunksize", "7"], tmp_path, capsys, "chunks"
    )
    pd.testing.assert_frame_equal(whole, chunks)
    assert out.splitlines()[:8] == out_chunks.splitlines()[:8]
    from sklearn_smallfair.audit import audit_predictions

    direct = audit_predictions(
        frame["y"], frame["pred"], sensitive_features=frame[["race", "sex"]]
    ).frame
    assert list(whole.index) == list(direct.index)
    np.testing.assert_allclose(whole["tpr"], direct["tpr"])
    np.testing.assert_array_equal(whole["n"], direct["n"])


def test_audit_parquet_equals_csv(predictions_csv, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path, frame = predictions_csv
    parquet = tmp_path / "predictions.parquet"
    frame.to_parquet(parquet, row_group_size=50)
    from_csv, _, _ = _audit_table(_audit(path), tmp_path, capsys, "csv")
    argv = ["audit", "--parquet", parquet, "--target", "y", "--prediction", "pred"]
    argv += ["--group", "race", "--chunksize", "64"]
    from_parquet, _, _ = _audit_table(argv, tmp_path, capsys, "parquet")
    pd.testing.assert_frame_equal(from_csv, from_parquet)
    # a missing group label is reported by its row
    holes = frame.astype({"race": object})
    holes.loc[130, "race"] = None
    holes.to_parquet(tmp_path / "holes.parquet", row_group_size=50)
    argv[2] = tmp_path / "holes.parquet"
    code, _, err = run([*argv, "--out", tmp_path / "h.html"], capsys)
    assert_error(code, err, 1, "group column 'race'", "first on row 131")
    code, _, err = run(
        [*argv[:2], path, *argv[3:], "--out", tmp_path / "h.html"], capsys
    )
    assert_error(code, err, 1, "cannot read", "as Parquet")


def test_audit_parquet_without_pyarrow(predictions_csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path, _ = predictions_csv
    argv = ["audit", "--parquet", path, "--target", "y", "--prediction", "pred"]
    code, _, err = run([*argv, "--group", "race", "--out", tmp_path / "x.html"], capsys)
    assert_error(code, err, 1, "needs pyarrow", "sklearn-smallfair[parquet]")


def test_audit_progress_line_without_tqdm(
    predictions_csv, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    path, _ = predictions_csv
    argv = [*_audit(path), "--chunksize", "150", "--progress", "--tests", "none"]
    _, _, err = _audit_table(argv, tmp_path, capsys, "progress")
    reading, auditing = err.split("\n", 1)
    assert reading.endswith("smallfair: 400 rows read")
    assert reading.count("rows read") == 3  # one update per chunk, on one line
    assert auditing.startswith("smallfair: auditing 3 groups x 3 metrics")
    _, _, err = _audit_table([*argv, "--no-progress"], tmp_path, capsys, "quiet")
    assert err == ""
