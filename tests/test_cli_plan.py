"""Tests of ``smallfair plan``: the planning table of the exact MATCH test."""

import json

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.cli import main
from sklearn_smallfair.stats import (
    match_min_detectable_effect,
    match_power,
    match_sample_size,
)

COMPAS = np.array([389, 347, 1597, 4121])  # (TP, FN, FP, TN), all defendants


def run(argv, capsys):
    """Run ``main`` in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code, err, expected_code, *fragments):
    assert code == expected_code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smallfair: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def predictions(tmp_path):
    """Predictions of three groups of 60, 40 and 25 people."""
    rng = np.random.default_rng(3)
    sizes = {"A": 60, "B": 40, "C": 25}
    groups = np.repeat(list(sizes), list(sizes.values()))
    y = rng.integers(0, 2, size=groups.size)
    flip = rng.random(groups.size) < np.where(groups == "B", 0.35, 0.15)
    pred = np.where(flip, 1 - y, y)
    frame = pd.DataFrame({"y": y, "pred": pred, "race": groups})
    path = tmp_path / "predictions.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_counts_mode_equals_the_library(tmp_path, capsys):
    out_csv, out_json = tmp_path / "plan.csv", tmp_path / "plan.json"
    code, out, err = run(
        [
            "plan",
            "--counts",
            ",".join(map(str, COMPAS)),
            "--n",
            40,
            120,
            "--metrics",
            "fpr",
            "--effect",
            "-0.1",
            "--csv-out",
            out_csv,
            "--json-out",
            out_json,
        ],
        capsys,
    )
    assert code == 0, err
    assert "n=40" in out and "n=120" in out and "CSV table:" in out
    table = pd.read_csv(out_csv)
    assert list(table["group"]) == ["n=40", "n=120"]
    n_needed = match_sample_size("fpr", COMPAS, effect=-0.1)
    for row in table.itertuples():
        assert row.reference_value == pytest.approx(1597 / (1597 + 4121))
        assert row.min_detectable_effect == pytest.approx(
            match_min_detectable_effect("fpr", COMPAS, row.n), rel=1e-12
        )
        assert row.power == pytest.approx(
            match_power("fpr", COMPAS, row.n, effect=-0.1), rel=1e-12
        )
        assert row.n_needed == n_needed
        assert row.extra_records == max(0, n_needed - row.n)
    # power grows with the size, the detectable effect shrinks
    assert table["power"].is_monotonic_increasing
    assert table["min_detectable_effect"].abs().is_monotonic_decreasing
    doc = json.loads(out_json.read_text())
    assert (
        doc["settings"]["effect"] == -0.1 and doc["settings"]["reference"] == "counts"
    )
    assert [r["n_needed"] for r in doc["plan"]] == [n_needed, n_needed]


def test_named_counts_in_any_order(capsys):
    argv = ["plan", "--n", 50, "--metrics", "tpr", "--effect", "-0.2"]
    code, plain, _ = run([*argv, "--counts", "389,347,1597,4121"], capsys)
    assert code == 0
    code, named, _ = run([*argv, "--counts", "TN=4121,FP=1597,TP=389,FN=347"], capsys)
    assert code == 0 and named == plain


def test_table_mode_each_group_against_the_rest(predictions, tmp_path, capsys):
    path, frame = predictions
    out_csv = tmp_path / "plan.csv"
    code, _, err = run(
        [
            "plan",
            "--csv",
            path,
            "--y-true",
            "y",
            "--y-pred",
            "pred",
            "--group",
            "race",
            "--metrics",
            "tpr",
            "--effect",
            "-0.3",
            "--csv-out",
            out_csv,
        ],
        capsys,
    )
    assert code == 0, err
    table = pd.read_csv(out_csv).set_index("group")
    assert list(table.index) == ["A", "B", "C"]
    cells = {}
    for g, part in frame.groupby("race"):
        y, p = part["y"].to_numpy(), part["pred"].to_numpy()
        tp, fn = ((y == 1) & (p == 1)).sum(), ((y == 1) & (p == 0)).sum()
        fp, tn = ((y == 0) & (p == 1)).sum(), ((y == 0) & (p == 0)).sum()
        cells[g] = np.array([tp, fn, fp, tn])
    for g in cells:
        rest = sum(c for h, c in cells.items() if h != g)
        assert table.loc[g, "n"] == cells[g].sum()
        assert table.loc[g, "reference_value"] == pytest.approx(
            rest[0] / rest[:2].sum()
        )
        # the audit's family (3 groups x 1 metric) and the group's own share
        n = int(cells[g].sum())
        assert table.loc[g, "power"] == pytest.approx(
            match_power(
                "tpr",
                rest,
                n,
                effect=-0.3,
                share=cells[g][:2].sum() / n,
                alpha=0.05 / 3,
            ),
            rel=1e-12,
        )


@pytest.mark.parametrize(
    "argv, code, fragment",
    [
        (["--counts", "1,2,3", "--n", 10], 2, "four reference counts"),
        (["--counts", "1,2,3,x", "--n", 10], 2, "must be numbers"),
        (["--counts", "TP=1,FN=2,FP=3,XX=4", "--n", 10], 2, "cell names"),
        (["--counts", "0,0,0,0", "--n", 10], 2, "not all 0"),
        (["--counts", "389,347,1597,4121"], 2, "--n"),
        (["--counts", "389,347,1597,4121", "--n", 0], 2, "--n"),
        (["--counts", "389,347,1597,4121", "--n", 9, "--metrics", "mcc"], 2, "mcc"),
        (["--counts", "389,347,1597,4121", "--n", 9, "--metrics", "nope"], 2, "nope"),
        (["--counts", "389,347,1597,4121", "--n", 9, "--power", "1.5"], 2, "power"),
        (["--csv", "missing.csv", "--target", "y", "--prediction", "p"], 2, "--group"),
    ],
)
def test_usage_errors(argv, code, fragment, capsys):
    got, _, err = run(["plan", *argv], capsys)
    assert_error(got, err, code, fragment)


def test_data_errors(predictions, tmp_path, capsys):
    path, _ = predictions
    base = ["plan", "--target", "y", "--prediction", "pred", "--metrics", "tpr"]
    code, _, err = run(
        [*base, "--csv", tmp_path / "none.csv", "--group", "race"], capsys
    )
    assert_error(code, err, 1, "none.csv")
    code, _, err = run([*base, "--csv", path, "--group", "sex"], capsys)
    assert_error(code, err, 1, "sex")
    # never over the input, never over an existing file without --force
    code, _, err = run(
        [*base, "--csv", path, "--group", "race", "--csv-out", path], capsys
    )
    assert_error(code, err, 2, "input")
    # a symbolic link is refused without --force; the file it points to is kept
    target = tmp_path / "kept.csv"
    target.write_text("keep me\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    argv = ["plan", "--counts", "389,347,1597,4121", "--n", 20, "--metrics", "fpr"]
    code, _, err = run([*argv, "--csv-out", link], capsys)
    assert_error(code, err, 2, "symbolic link")
    assert target.read_text() == "keep me\n"
    code, _, err = run([*argv, "--csv-out", link, "--force"], capsys)
    assert code == 0 and target.read_text().startswith("group,metric,n,")


def test_unreachable_power_is_a_note_not_an_error(capsys):
    code, out, err = run(
        [
            "plan",
            "--counts",
            "389,347,1597,4121",
            "--n",
            10,
            "--metrics",
            "tpr",
            "--effect",
            "-0.01",
            "--max-n",
            200,
        ],
        capsys,
    )
    assert code == 0, err
    assert "n_needed: power=0.8 is not reached up to max_n=200" in out
