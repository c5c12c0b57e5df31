"""AuditDisplay, and AuditReport.plot and to_html drawing through it."""

import base64
import io
import re

import numpy as np
import pytest

from sklearn_smallfair.audit import AuditDisplay, audit_predictions
from sklearn_smallfair.audit import _plot as audit_plot

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    n = 900
    groups = np.asarray(["A", "B", "C", "D"], dtype=object)[
        rng.choice(4, n, p=(0.6, 0.3, 0.08, 0.02))
    ]
    y = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < np.where(groups == "B", 0.35, 0.15), 1 - y, y)
    return audit_predictions(
        y, pred, sensitive_features=groups, metrics=["tpr", "fpr"], random_state=0
    )


def _check_panel(panel, frame, metric):
    """The panel of ``metric`` shows the frame's rows, first group on top."""
    f = frame
    assert panel.get_title() == metric
    assert panel.yaxis.get_inverted()
    labels = [t.get_text() for t in panel.get_yticklabels()]
    assert labels == [f"{g} (n={int(n)})" for g, n in zip(f.index, f["n"])]


def test_draws_on_the_given_axes(report):
    fig, ax = plt.subplots()
    disp = AuditDisplay.from_report(report, metrics="fpr", ax=ax)
    assert isinstance(disp, AuditDisplay)
    assert disp.ax_ is ax
    assert disp.figure_ is fig
    # rows in the summary's order: the strongest evidence on top
    assert disp.metrics == ["fpr"]
    assert list(disp.frame.index) == report._group_order("evidence")
    f = disp.frame
    _check_panel(ax, f, "fpr")
    np.testing.assert_array_equal(
        np.ma.filled(disp.raw_["fpr"].get_offsets()[:, 0], np.nan), f["fpr"]
    )
    np.testing.assert_array_equal(disp.smoothed_["fpr"].get_xdata(), f["fpr_smoothed"])
    assert len(disp.ranges_["fpr"].get_segments()) == len(report.frame)
    assert disp.legend_.axes is ax  # the legend in the panel, not below the figure
    verdicts = [v for v in audit_plot.VERDICT_COLORS if v in set(f["fpr_verdict"])]
    assert [t.get_text() for t in disp.legend_.get_texts()] == [
        "reference's 95% range at the group's size",
        "group's 95% confidence interval",
        *[f"raw: {v}" for v in verdicts],
        "smoothed",
    ]
    # the group's interval on its row, the reference's range just below
    segments = disp.intervals_["fpr"].get_segments()
    defined = ~f["fpr_low"].isna().to_numpy()
    assert len(segments) == defined.sum()
    for seg, (_, row) in zip(segments, f[defined].iterrows()):
        np.testing.assert_allclose(seg[:, 0], [row["fpr_low"], row["fpr_high"]])
    ref_y = [seg[0, 1] for seg in disp.ranges_["fpr"].get_segments()]
    assert all(y % 1 > 0 for y in ref_y)
    assert fig.axes == [ax]  # nothing added to the user's figure


def test_draws_on_an_array_of_axes(report):
    fig, axes = plt.subplots(2, 1, sharey=True)
    disp = AuditDisplay(frame=report.frame, metrics=["tpr", "fpr"]).plot(ax=axes)
    assert disp.figure_ is fig
    assert disp.ax_.shape == (2,)
    assert list(disp.ax_) == list(axes.ravel())
    for panel, metric in zip(disp.ax_, ["tpr", "fpr"]):
        _check_panel(panel, report.frame, metric)  # shared y: inverted once
    assert sorted(disp.raw_) == sorted(disp.smoothed_) == ["fpr", "tpr"]


def test_report_plot_delegates_to_the_display(report):
    fig, axes = plt.subplots(1, 2)
    assert report.plot(ax=axes) is fig
    assert [panel.get_title() for panel in axes] == ["tpr", "fpr"]
    fig, ax = plt.subplots()
    assert report.plot(metrics=["tpr"], ax=ax, order="name") is fig
    _check_panel(ax, report.frame.sort_index(), "tpr")
    # without ax: a new figure, the legend below the panels, as before
    fig = report.plot(figsize=(5, 4))
    assert isinstance(fig, matplotlib.figure.Figure)
    assert tuple(fig.get_size_inches()) == (5, 4)
    assert [ax.get_title() for ax in fig.axes] == ["tpr", "fpr"]
    assert len(fig.legends) == 1


def test_new_figure_has_one_panel_per_metric(report):
    disp = AuditDisplay.from_report(report, metrics=["fpr", "tpr", "fpr", "tpr"])
    assert disp.ax_.shape == (4,)
    visible = [ax for ax in disp.figure_.axes if ax.get_visible()]
    assert list(disp.ax_) == visible
    assert len(disp.figure_.axes) == 6  # a 2 x 3 grid, the last two hidden
    assert disp.legend_ in disp.figure_.legends
    one = AuditDisplay.from_report(report, metrics=["tpr"])
    assert one.ax_ is one.figure_.axes[0]


def test_html_embeds_the_plot(report):
    page = report.to_html()
    assert plt.get_fignums() == []  # to_html closes its figure
    found = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(found) == 1
    png = base64.b64decode(found[0])
    assert png.startswith(b"\x89PNG")
    buf = io.BytesIO()
    report.plot().savefig(buf, format="png", dpi=110)
    assert png == buf.getvalue()
    assert "data:image" not in report.to_html(include_plots=False)


def test_html_without_matplotlib(report, monkeypatch):
    def missing(caller):
        raise ImportError(f"{caller} needs matplotlib")

    monkeypatch.setattr(audit_plot, "_check_matplotlib", missing)
    page = report.to_html()
    assert "Plots need matplotlib" in page and "data:image" not in page


def test_errors(report):
    _, axes = plt.subplots(1, 3)
    with pytest.raises(ValueError, match=r"2 matplotlib Axes, one per metric"):
        AuditDisplay.from_report(report, ax=axes)
    with pytest.raises(ValueError, match=r"2 matplotlib Axes.*got Axes of 1"):
        AuditDisplay.from_report(report, ax=axes[0])
    with pytest.raises(ValueError, match="one per metric"):
        AuditDisplay.from_report(report, ax=["not", "axes"])
    with pytest.raises(ValueError, match="figsize sizes the figure"):
        AuditDisplay.from_report(report, metrics="tpr", ax=axes[0], figsize=(3, 3))
    with pytest.raises(ValueError, match="were not audited"):
        AuditDisplay.from_report(report, metrics=["mcc"])
    with pytest.raises(ValueError, match="were not audited"):
        report.plot(metrics=["mcc"])
    with pytest.raises(ValueError, match="metrics is empty"):
        AuditDisplay.from_report(report, metrics=[])
    with pytest.raises(TypeError, match="report must be an AuditReport"):
        AuditDisplay.from_report(report.frame)
    frame = report.frame.drop(columns="fpr_interval_low")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['fpr_interval_low'\]"):
        AuditDisplay(frame=frame, metrics=["tpr", "fpr"]).plot()


def test_frame_without_group_intervals_still_draws(report):
    cols = [
        c
        for c in report.frame.columns
        if "interval" in c or not c.endswith(("_low", "_high"))
    ]
    disp = AuditDisplay(frame=report.frame[cols], metrics=["tpr"]).plot()
    assert disp.intervals_["tpr"] is None
    labels = [t.get_text() for t in disp.legend_.get_texts()]
    assert labels[0] == "reference's 95% range at the group's size"
    plt.close(disp.figure_)


def test_rows_in_order_and_coloured_by_verdict(report):
    f = report.frame
    # "gap": the largest absolute difference of any drawn metric first
    disp = AuditDisplay.from_report(report, order="gap")
    diff = np.maximum(
        (f["tpr"] - f["tpr_reference"]).abs(), (f["fpr"] - f["fpr_reference"]).abs()
    )
    assert list(disp.frame.index) == list(diff.sort_values(ascending=False).index)
    assert list(AuditDisplay.from_report(report, order="size").frame["n"]) == sorted(
        f["n"]
    )
    # the evidence order puts a group with a gap first
    first = AuditDisplay.from_report(report).frame.iloc[0]
    assert "gap" in (first["tpr_verdict"], first["fpr_verdict"])
    # each raw marker and interval in its verdict's colour
    for metric in ["tpr", "fpr"]:
        expected = [
            matplotlib.colors.to_rgba(audit_plot.VERDICT_COLORS[v])
            for v in disp.frame[f"{metric}_verdict"]
        ]
        np.testing.assert_allclose(disp.raw_[metric].get_facecolors(), expected)
        has = ~disp.frame[f"{metric}_low"].isna().to_numpy()
        np.testing.assert_allclose(
            disp.intervals_[metric].get_colors(), np.asarray(expected)[has]
        )
    with pytest.raises(ValueError, match="order must be one of"):
        AuditDisplay.from_report(report, order="random")


def test_frame_without_verdicts_keeps_one_colour(report):
    cols = [c for c in report.frame.columns if not c.endswith("_verdict")]
    disp = AuditDisplay(frame=report.frame[cols], metrics=["tpr"]).plot()
    colours = {tuple(c) for c in disp.raw_["tpr"].get_facecolors()}
    assert colours == {
        matplotlib.colors.to_rgba(audit_plot.VERDICT_COLORS["not tested"])
    }
    assert "raw" in [t.get_text() for t in disp.legend_.get_texts()]
