"""``smallfair plan`` on a table states the detectable effects of the audit's report."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair.audit import audit_predictions
from sklearn_smallfair.cli import main


@pytest.mark.slow
def test_plan_and_report_state_the_same_detectable_gap(tmp_path, capsys):
    rng = np.random.default_rng(4)
    sizes = {"a": 400, "b": 120, "c": 60}
    rows = []
    for g, n in sizes.items():
        y = rng.random(n) < 0.35
        pred = np.where(y, rng.random(n) < 0.7, rng.random(n) < 0.2)
        rows.append(pd.DataFrame({"y": y.astype(int), "p": pred.astype(int), "g": g}))
    data = pd.concat(rows, ignore_index=True)
    path = tmp_path / "predictions.csv"
    data.to_csv(path, index=False)
    out = tmp_path / "plan.csv"
    code = main(
        [
            "plan",
            "--csv",
            str(path),
            "--target",
            "y",
            "--prediction",
            "p",
            "--group",
            "g",
            "--metrics",
            "tpr",
            "ppv",
            "--csv-out",
            str(out),
        ]
    )
    assert code == 0
    plan = pd.read_csv(out)
    report = audit_predictions(
        data["y"],
        data["p"],
        sensitive_features=data["g"],
        metrics=["tpr", "ppv"],
        tests=("match",),
    )
    for metric in ("tpr", "ppv"):
        stated = plan[plan["metric"] == metric].set_index("group")
        np.testing.assert_allclose(
            stated["min_detectable_effect"].abs().to_numpy(),
            report.frame.loc[stated.index, f"{metric}_detectable_gap"].to_numpy(),
            rtol=1e-9,
        )
