"""``smallfair experiment``: the options that reach the experiment and its plot."""

import pandas as pd
import pytest

from sklearn_smallfair.cli import main
from sklearn_smallfair.model_selection import DownsamplingDisplay


def test_n_resamples_and_confidence_level_reach_the_experiment(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("matplotlib")
    levels = []
    real = DownsamplingDisplay.from_results.__func__

    def spy(cls, results, **kwargs):
        levels.append(kwargs["confidence_level"])
        return real(cls, results, **kwargs)

    monkeypatch.setattr(DownsamplingDisplay, "from_results", classmethod(spy))
    out = tmp_path / "r.csv"
    argv = [
        "experiment", "--dataset", "compas", "--sizes", "5", "10",
        "--metrics", "tpr", "--method", "montecarlo", "--n-resamples", "300",
        "--confidence-level", "0.9", "--plot", tmp_path / "c.png",
        "--no-progress", "--out", out,
    ]  # fmt: skip
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    frame = pd.read_csv(out)
    assert (frame["n_resamples"] == 300).all()
    assert levels == [0.9]


@pytest.mark.parametrize("value", ["0", "1", "1.5", "x"])
def test_confidence_level_must_be_in_0_1(tmp_path, capsys, value):
    argv = ["experiment", "--confidence-level", value, "--out", tmp_path / "r.csv"]
    assert main([str(a) for a in argv]) == 2
    assert "--confidence-level" in capsys.readouterr().err
