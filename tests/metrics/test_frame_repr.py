"""GroupMetricFrame's text and notebook (HTML) representations."""

import numpy as np
import pytest

from sklearn_smallfair.metrics import GroupMetricFrame

pytestmark = pytest.mark.filterwarnings("ignore")


def _frame(groups, seed=0):
    rng = np.random.default_rng(seed)
    n = len(groups)
    return GroupMetricFrame(
        metrics=["tpr", "fpr"],
        y_true=rng.integers(0, 2, n),
        y_pred=rng.integers(0, 2, n),
        sensitive_features=groups,
    )


def test_repr_shows_by_group_and_overall():
    frame = _frame(["a", "<script>"] * 50)
    text = repr(frame)
    assert "object at 0x" not in text
    assert text.startswith("GroupMetricFrame: 2 groups x 2 metrics\n")
    for name in ("a", "<script>", "tpr", "fpr", "by_group:", "overall:"):
        assert name in text
    assert f"{frame.by_group.loc['a', 'tpr']:.6f}" in text
    assert f"{frame.overall['fpr']:.6f}" in text


def test_repr_html_escaped():
    frame = _frame(["a", "<script>"] * 50)
    page = frame._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "tpr" in page and "overall" in page
    assert "<th>overall</th>" in page and "<th>a</th>" in page


def test_one_group():
    frame = _frame(["only"] * 30)
    assert "GroupMetricFrame: 1 group x 2 metrics" in repr(frame)
    assert "only" in repr(frame)
    assert "only" in frame._repr_html_()


def test_sixty_groups_bounded():
    frame = _frame([f"group_{k:02d}" for k in range(60)] * 20)
    text = repr(frame)
    assert "60 groups" in text
    assert "group_00" in text and "group_59" in text and "group_30" not in text
    assert len(text.splitlines()) < 35
    assert len(text) < 2000
    page = frame._repr_html_()
    assert "group_00" in page and "group_30" not in page
    assert "20 of 60 groups shown" in page
    assert len(page) < 10_000
