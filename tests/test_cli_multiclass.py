"""``smallfair audit`` on multiclass targets: each class audited one-vs-rest."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.cli import main
from sklearn_smallfair.exceptions import ReferenceWarning, UndefinedGroupMetricWarning
from sklearn_smallfair.metrics import multiclass_confusion_counts
from sklearn_smallfair.smoothing import CrossPriorSmoothing

LABELS = ["low", "mid", "high"]


def run(argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code, err, expected_code, *fragments):
    assert code == expected_code, err
    line = err.strip()
    assert "\n" not in line and line.startswith("smallfair: error: "), err
    for fragment in fragments:
        assert fragment in line, (fragment, line)


@pytest.fixture(scope="module")
def triage(tmp_path_factory):
    """150 people, three classes, two sites and a sex column."""
    rng = np.random.default_rng(0)
    n = 150
    y = rng.choice(LABELS, n)
    site = np.where(rng.random(n) < 0.3, "east", "west")
    pred = np.where(rng.random(n) < 0.7, y, rng.choice(LABELS, n))
    pred = np.where((site == "east") & (y == "high"), "mid", pred)
    sex = rng.choice(["F", "M"], n)
    frame = pd.DataFrame({"y": y, "pred": pred, "site": site, "sex": sex})
    path = tmp_path_factory.mktemp("triage") / "triage.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _argv(path, *extra, fmt="--csv"):
    return [
        "audit",
        fmt,
        path,
        "--target",
        "y",
        "--prediction",
        "pred",
        "--group",
        "site",
        "--metrics",
        "tpr",
        "--tests",
        "match",
        *extra,
    ]


def _table(argv, tmp_path, capsys, name):
    table = tmp_path / f"{name}.csv"
    code, out, err = run(
        [
            *argv,
            "--out",
            tmp_path / f"{name}.html",
            "--csv-out",
            table,
            "--json-out",
            tmp_path / f"{name}.json",
        ],
        capsys,
    )
    assert code == 0, err
    return pd.read_csv(table, index_col=[0, 1]), out


def test_audit_multiclass_csv_parquet_and_chunks(triage, tmp_path, capsys):
    path, frame = triage
    whole, out = _table(
        _argv(path, "--labels", "low,mid,high", "--matrix-metrics", "kappa"),
        tmp_path,
        capsys,
        "w",
    )
    assert "3 classes ('low', 'mid', 'high'), each audited one-vs-rest" in out
    assert "Whole-matrix kappa (MATCH, holm over the groups)" in out
    assert "holm over the 2 groups x 3 classes x 1 metric" in out
    assert whole.index.names == ["site", "class"]
    assert list(whole.index) == [(s, k) for s in ("east", "west") for k in LABELS]
    # the audit of the rows in memory, with the command's settings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceWarning)
        warnings.simplefilter("ignore", UndefinedGroupMetricWarning)
        direct = audit_predictions(
            frame["y"],
            frame["pred"],
            sensitive_features=frame["site"],
            labels=LABELS,
            metrics=["tpr"],
            tests=("match",),
            smoothing=CrossPriorSmoothing(lam=10.0),
        ).frame
    np.testing.assert_array_equal(whole["n_pos"], direct["n_pos"])
    np.testing.assert_allclose(whole["tpr"], direct["tpr"], rtol=1e-12)
    np.testing.assert_allclose(
        whole["tpr_match_p_adjusted"], direct["tpr_match_p_adjusted"], rtol=1e-12
    )
    # chunks of 7 rows (a class or a group absent from some chunks): the same
    chunks, out_chunks = _table(
        _argv(
            path,
            "--labels",
            "low,mid,high",
            "--chunksize",
            "7",
            "--matrix-metrics",
            "kappa",
        ),
        tmp_path,
        capsys,
        "c",
    )
    pd.testing.assert_frame_equal(whole, chunks)
    assert out.splitlines()[:4] == out_chunks.splitlines()[:4]
    # without --labels: the sorted classes, each class's audit unchanged
    # (metrics only: the tests are those of the counts, checked above)
    detected, _ = _table([*_argv(path), "--tests", "none"], tmp_path, capsys, "d")
    assert list(detected.index.get_level_values("class")[:3]) == sorted(LABELS)
    # (the reference ranges are the MATCH test's: NaN without it)
    same = [c for c in detected.columns if "_interval_" not in c]
    assert detected.filter(like="_interval_").isna().all().all()
    pd.testing.assert_frame_equal(detected[same].sort_index(), whole[same].sort_index())
    payload = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert payload["classes"] == LABELS
    assert [r["site"] for r in payload["whole_matrix"]] == ["east", "west"]
    counts = multiclass_confusion_counts(
        frame["y"], frame["pred"], sensitive_features=frame["site"], labels=LABELS
    )
    assert [r["count"] for r in payload["confusion_matrices"]] == (
        counts.counts.ravel().tolist()
    )
    page = (tmp_path / "w.html").read_text(encoding="utf-8")
    assert "<a href='#c2'>&#x27;high&#x27;</a>" in page
    # Parquet, read by row groups of 40
    pytest.importorskip("pyarrow")
    parquet = tmp_path / "triage.parquet"
    frame.to_parquet(parquet, row_group_size=40)
    from_parquet, _ = _table(
        _argv(
            parquet,
            "--labels",
            "low,mid,high",
            "--chunksize",
            "40",
            "--tests",
            "none",
            fmt="--parquet",
        ),
        tmp_path,
        capsys,
        "p",
    )
    same = [c for c in from_parquet.columns if "_interval_" not in c]
    pd.testing.assert_frame_equal(whole[same], from_parquet[same])


def test_audit_multiclass_numbers_and_intersections(triage, tmp_path, capsys):
    _, frame = triage
    coded = frame.assign(
        y=frame["y"].map({"low": 0, "mid": 1, "high": 2}),
        pred=frame["pred"].map({"low": 0, "mid": 1, "high": 2}),
    )
    numbers = tmp_path / "numbers.csv"
    coded.to_csv(numbers, index=False)
    table, out = _table(
        [*_argv(numbers, "--labels", "2,0,1,3"), "--group", "sex"],
        tmp_path,
        capsys,
        "n",
    )
    assert "4 classes (2, 0, 1, 3)" in out
    assert table.index.names == ["site|sex", "class"]
    assert set(table.index.get_level_values(0)) == {
        "east|F",
        "east|M",
        "west|F",
        "west|M",
    }
    # class 3: nobody has it, nobody is predicted it: its TPR is undefined
    assert table.xs(3, level="class")["n_pos"].eq(0).all()
    assert table.xs(3, level="class")["tpr_undefined"].all()


def test_audit_multiclass_errors(triage, tmp_path, capsys):
    path, frame = triage
    out = ["--out", tmp_path / "x.html"]
    code, _, err = run([*_argv(path, "--pos-label", "mid"), *out], capsys)
    assert_error(
        code, err, 2, "--pos-label 'mid'", "more than two classes", "drop --pos-label"
    )
    code, _, err = run(
        [*_argv(path, "--labels", "low,mid,high", "--pos-label", "mid"), *out], capsys
    )
    assert_error(code, err, 2, "--pos-label", "--labels")
    code, _, err = run([*_argv(path, "--labels", "low,mid"), *out], capsys)
    assert_error(code, err, 1, "class(es) 'high' that are not in --labels")
    binary = frame.assign(y=frame["y"] == "low", pred=frame["pred"] == "low")
    binary.to_csv(tmp_path / "binary.csv", index=False)
    code, _, err = run(
        [*_argv(tmp_path / "binary.csv", "--matrix-metrics", "kappa"), *out], capsys
    )
    assert_error(code, err, 2, "--matrix-metrics", "two classes")
    code, _, err = run([*_argv(path, "--labels", "low"), *out], capsys)
    assert_error(code, err, 2, "--labels 'low' must list at least two classes")
    code, _, err = run([*_argv(path, "--labels", "low,low,mid,high"), *out], capsys)
    assert_error(code, err, 2, "more than once")
    holes = frame.copy()
    holes.loc[9, "pred"] = None
    holes.to_csv(tmp_path / "holes.csv", index=False)
    code, _, err = run([*_argv(tmp_path / "holes.csv"), *out], capsys)
    assert_error(code, err, 1, "column 'pred'", "first on line 11")
    assert not (tmp_path / "x.html").exists()
