import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri

from sklearn_smallfair.datasets import load_published_groups
from sklearn_smallfair.model_selection import (
    DownsamplingDisplay,
    downsampling_experiment,
)
from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

ESTIMATORS = {
    "raw": None,
    "eps_1": AdditiveSmoothing(1.0),
    "cps_10": CrossPriorSmoothing(10),
}
LEVEL = 0.95
#: Normal quantile of the band at LEVEL (1.96).
Z = float(ndtri(0.5 + LEVEL / 2))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def published():
    return load_published_groups()


@pytest.fixture(scope="module")
def exact(published):
    counts, reference = published
    return downsampling_experiment(
        counts=counts,
        reference=reference,
        metrics=["tpr", "mcc"],
        estimators=ESTIMATORS,
        sizes=range(3, 12),
    )


@pytest.fixture(scope="module")
def montecarlo(published):
    counts, reference = published
    return downsampling_experiment(
        counts=counts,
        reference=reference,
        metrics="tpr",
        method="montecarlo",
        n_resamples=400,
        estimators=ESTIMATORS,
        sizes=range(3, 9),
        random_state=0,
    )


def synthetic():
    """Two groups, two sizes; NaN for one group at n=5 and both at n=6."""
    return pd.DataFrame(
        {
            "group": ["a", "a", "a", "b", "b", "b"],
            "n": [4, 5, 6, 4, 5, 6],
            "metric": "tpr",
            "estimator": "raw",
            "mse": [0.1, np.nan, np.nan, 0.3, 0.2, np.nan],
            "bias": [0.01, np.nan, np.nan, -0.03, 0.0, np.nan],
            "variance": [0.09, np.nan, np.nan, 0.2, 0.2, np.nan],
            "p_undefined": [0.5, 1.0, 1.0, 0.2, 0.1, 1.0],
            "mse_se": [0.01, np.nan, np.nan, 0.02, 0.04, np.nan],
        }
    )


def pooled_reference(results, metric, estimator, column, groups=None):
    """Equal-weight mean over groups, from the frame, with plain numpy loops."""
    sub = results[(results["metric"] == metric) & (results["estimator"] == estimator)]
    if groups is not None:
        sub = sub[sub["group"].isin(groups)]
    sizes = np.unique(sub["n"].to_numpy())
    mean, se = [], []
    for n in sizes:
        rows = sub[sub["n"] == n]
        values = rows[column].to_numpy(dtype=float)
        defined = ~np.isnan(values)
        if not defined.any():
            mean.append(np.nan)
            se.append(np.nan)
            continue
        mean.append(values[defined].sum() / defined.sum())
        if "mse_se" in rows:
            ses = rows["mse_se"].to_numpy(dtype=float)[defined]
            se.append(np.sqrt(np.sum(ses**2)) / defined.sum())
    return sizes, np.array(mean), np.array(se) if se else None


def band_limits(band, x):
    """Lowest and highest y of the band's polygon at each x."""
    vertices = np.concatenate([p.vertices for p in band.get_paths()])
    lows, highs = [], []
    for xi in x:
        ys = vertices[np.isclose(vertices[:, 0], xi), 1]
        lows.append(ys.min())
        highs.append(ys.max())
    return np.array(lows), np.array(highs)


# ---- pooled values ---------------------------------------------------------


@pytest.mark.parametrize("statistic", ["mse", "bias", "variance", "p_undefined"])
@pytest.mark.parametrize("metric", ["tpr", "mcc"])
def test_pooled_lines_are_equal_weight_means(exact, metric, statistic):
    disp = DownsamplingDisplay.from_results(exact, metric=metric, statistic=statistic)
    assert list(disp.lines_) == list(ESTIMATORS)
    for est, line in disp.lines_.items():
        sizes, mean, _ = pooled_reference(exact, metric, est, statistic)
        np.testing.assert_array_equal(line.get_xdata(), sizes)
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12, atol=0)
    assert disp.bands_ == {}
    assert "group" not in disp.curves.columns
    assert isinstance(disp.ax_, Axes)
    assert disp.figure_ is disp.ax_.figure


def test_pooled_rmse_is_sqrt_of_pooled_mse(exact):
    disp = DownsamplingDisplay.from_results(exact, metric="mcc", statistic="rmse")
    for est, line in disp.lines_.items():
        _, mean, _ = pooled_reference(exact, "mcc", est, "mse")
        np.testing.assert_allclose(line.get_ydata(), np.sqrt(mean), rtol=1e-12)


def test_pooled_ignores_nan_groups_and_all_nan_is_nan():
    res = synthetic()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        disp = DownsamplingDisplay.from_results(
            res, metric="tpr", confidence_level=LEVEL
        )
    y = disp.lines_["raw"].get_ydata()
    np.testing.assert_allclose(y, [0.2, 0.2, np.nan])
    se = disp.curves["upper"].to_numpy() - disp.curves["value"].to_numpy()
    # n=4: sqrt(0.01^2 + 0.02^2) / 2; n=5: only group b defined
    expected = Z * np.array([np.sqrt(0.01**2 + 0.02**2) / 2, 0.04, np.nan])
    np.testing.assert_allclose(se, expected, rtol=1e-12)


def test_pooled_band_unknown_when_a_defined_group_has_no_se():
    res = synthetic()
    res.loc[0, "mse_se"] = np.nan  # group a at n=4 has mse but no se
    disp = DownsamplingDisplay.from_results(res, metric="tpr", confidence_level=LEVEL)
    assert np.isnan(disp.curves["lower"].iloc[0])
    assert np.isfinite(disp.curves["lower"].iloc[1])


# ---- Monte Carlo band ------------------------------------------------------


def test_pooled_band_is_196_pooled_se(montecarlo):
    disp = DownsamplingDisplay.from_results(
        montecarlo, metric="tpr", confidence_level=LEVEL
    )
    assert list(disp.bands_) == list(ESTIMATORS)
    for est, line in disp.lines_.items():
        sizes, mean, se = pooled_reference(montecarlo, "tpr", est, "mse")
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12)
        curve = disp.curves[disp.curves["estimator"] == est]
        np.testing.assert_allclose(curve["lower"], mean - Z * se, rtol=1e-12)
        np.testing.assert_allclose(curve["upper"], mean + Z * se, rtol=1e-12)
        low, high = band_limits(disp.bands_[est], sizes)
        np.testing.assert_allclose(low, mean - Z * se, rtol=1e-9)
        np.testing.assert_allclose(high, mean + Z * se, rtol=1e-9)
        assert disp.bands_[est].get_alpha() == pytest.approx(0.2)


def test_rmse_band_uses_delta_method(montecarlo):
    disp = DownsamplingDisplay.from_results(
        montecarlo, metric="tpr", statistic="rmse", confidence_level=LEVEL
    )
    for est, line in disp.lines_.items():
        _, mean, se = pooled_reference(montecarlo, "tpr", est, "mse")
        rmse = np.sqrt(mean)
        np.testing.assert_allclose(line.get_ydata(), rmse, rtol=1e-12)
        curve = disp.curves[disp.curves["estimator"] == est]
        half = Z * se / (2 * rmse)
        np.testing.assert_allclose(curve["lower"], rmse - half, rtol=1e-12)
        np.testing.assert_allclose(curve["upper"], rmse + half, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"confidence_level": None},
        {"statistic": "bias", "confidence_level": LEVEL},
        {"statistic": "variance", "confidence_level": LEVEL},
    ],
)
def test_no_band(montecarlo, kwargs):
    disp = DownsamplingDisplay.from_results(montecarlo, metric="tpr", **kwargs)
    assert disp.bands_ == {}
    assert "lower" not in disp.curves.columns
    assert not disp.ax_.collections


# ---- by group --------------------------------------------------------------


def test_by_group_one_line_per_group_and_estimator(montecarlo, published):
    counts, _ = published
    disp = DownsamplingDisplay.from_results(
        montecarlo, metric="tpr", by_group=True, confidence_level=LEVEL
    )
    groups = list(counts.index)
    assert list(disp.lines_) == [(g, e) for g in groups for e in ESTIMATORS]
    assert disp.ax_.shape == (len(groups),)
    assert len(disp.figure_.axes) == len(groups)  # unused grid cells removed
    for panel, group in zip(disp.ax_, groups):
        assert panel.get_title() == group
        assert len(panel.get_lines()) == len(ESTIMATORS)
    for (group, est), line in disp.lines_.items():
        rows = montecarlo[
            (montecarlo["group"] == group) & (montecarlo["estimator"] == est)
        ].sort_values("n")
        np.testing.assert_array_equal(line.get_xdata(), rows["n"])
        np.testing.assert_array_equal(line.get_ydata(), rows["mse"])
        assert line.axes is disp.ax_[groups.index(group)]
        low, high = band_limits(disp.bands_[group, est], rows["n"])
        np.testing.assert_allclose(low, rows["mse"] - Z * rows["mse_se"], rtol=1e-9)
        np.testing.assert_allclose(high, rows["mse"] + Z * rows["mse_se"], rtol=1e-9)
    # same colour for an estimator in every panel
    for est in ESTIMATORS:
        colours = {disp.lines_[g, est].get_color() for g in groups}
        assert len(colours) == 1


def test_by_group_on_given_axes(exact):
    _, axes = plt.subplots(1, 2)
    disp = DownsamplingDisplay.from_results(
        exact,
        metric="tpr",
        statistic="rmse",
        by_group=True,
        groups=["COMPAS|White", "COMPAS|Black"],
        estimators=["cps_10", "raw"],
        ax=axes,
    )
    assert list(disp.lines_) == [
        ("COMPAS|White", "cps_10"),
        ("COMPAS|White", "raw"),
        ("COMPAS|Black", "cps_10"),
        ("COMPAS|Black", "raw"),
    ]
    assert list(disp.ax_) == list(axes)
    rows = exact[
        (exact["group"] == "COMPAS|Black")
        & (exact["metric"] == "tpr")
        & (exact["estimator"] == "raw")
    ]
    line = disp.lines_["COMPAS|Black", "raw"]
    assert line.axes is axes[1]
    np.testing.assert_allclose(line.get_ydata(), np.sqrt(rows["mse"]), rtol=1e-12)


# ---- filters, layout, options -----------------------------------------------


def test_estimators_filter_and_order(exact):
    disp = DownsamplingDisplay.from_results(
        exact, metric="tpr", estimators=["cps_10", "raw"]
    )
    assert list(disp.lines_) == ["cps_10", "raw"]
    assert [t.get_text() for t in disp.ax_.get_legend().get_texts()] == [
        "cps_10",
        "raw",
    ]
    single = DownsamplingDisplay.from_results(exact, metric="tpr", estimators="eps_1")
    assert list(single.lines_) == ["eps_1"]


def test_groups_filter_changes_the_pooled_mean(exact):
    groups = ["COMPAS|Black", "Folktables|Asian", "Folktables|White"]
    disp = DownsamplingDisplay.from_results(exact, metric="mcc", groups=groups)
    for est, line in disp.lines_.items():
        _, mean, _ = pooled_reference(exact, "mcc", est, "mse", groups=groups)
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12)
    one = DownsamplingDisplay.from_results(exact, metric="mcc", groups="COMPAS|Black")
    rows = exact[
        (exact["group"] == "COMPAS|Black")
        & (exact["metric"] == "mcc")
        & (exact["estimator"] == "raw")
    ]
    np.testing.assert_allclose(one.lines_["raw"].get_ydata(), rows["mse"])


def test_labels_title_logy_kwargs_and_given_ax(exact):
    _, ax = plt.subplots()
    disp = DownsamplingDisplay.from_results(
        exact, metric="tpr", ax=ax, logy=True, linewidth=3
    )
    assert disp.ax_ is ax
    assert ax.get_xlabel() == "subgroup size n"
    assert ax.get_ylabel() == "MSE (mean over groups)"
    assert ax.get_title() == "MSE of tpr"
    assert ax.get_yscale() == "log"
    assert all(line.get_linewidth() == 3 for line in disp.lines_.values())
    assert (
        DownsamplingDisplay.from_results(exact, metric="tpr").ax_.get_yscale()
        == "linear"
    )


def test_display_plot_from_curves():
    curves = pd.DataFrame(
        {"n": [1, 2, 1, 2], "estimator": ["x", "x", "y", "y"], "value": [4, 3, 2, 1]}
    )
    disp = DownsamplingDisplay(
        curves=curves, metric="ppv", statistic="variance", by_group=False
    )
    assert disp.plot() is disp
    np.testing.assert_array_equal(disp.lines_["y"].get_ydata(), [2, 1])
    assert disp.ax_.get_title() == "variance of ppv"


def test_band_level_sets_its_width(montecarlo):
    wide = DownsamplingDisplay.from_results(
        montecarlo, metric="tpr", confidence_level=0.99
    )
    narrow = DownsamplingDisplay.from_results(
        montecarlo, metric="tpr", confidence_level=LEVEL
    )
    ratio = (wide.curves["upper"] - wide.curves["value"]) / (
        narrow.curves["upper"] - narrow.curves["value"]
    )
    np.testing.assert_allclose(ratio, ndtri(0.995) / Z, rtol=1e-12)


# ---- validation -------------------------------------------------------------


def test_results_must_be_a_dataframe(exact):
    match = (
        r"'results' parameter of DownsamplingDisplay.from_results must be an "
        r"instance of 'pandas"
    )
    with pytest.raises(TypeError, match=match) as excinfo:
        DownsamplingDisplay.from_results(exact.to_dict("list"), metric="tpr")
    assert len(str(excinfo.value)) < 500  # the refused value is shown cut short


def test_results_missing_columns(exact):
    with pytest.raises(ValueError, match=r"missing column\(s\) \['estimator'\]"):
        DownsamplingDisplay.from_results(exact.drop(columns="estimator"), metric="tpr")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['mse'\]"):
        DownsamplingDisplay.from_results(
            exact.drop(columns="mse"), metric="tpr", statistic="rmse"
        )


def test_unknown_metric_lists_present(exact):
    with pytest.raises(ValueError, match=r"metric 'ppv' not found.*'tpr', 'mcc'"):
        DownsamplingDisplay.from_results(exact, metric="ppv")


def test_unknown_statistic(exact):
    with pytest.raises(
        ValueError,
        match=(
            r"'statistic' parameter of DownsamplingDisplay.from_results must be"
            r".*'rmse'.*Got 'mae'"
        ),
    ):
        DownsamplingDisplay.from_results(exact, metric="tpr", statistic="mae")


def test_unknown_estimators_and_groups_list_present(exact):
    with pytest.raises(
        ValueError, match=r"estimators \['cps_5'\] not found.*'raw', 'eps_1'"
    ):
        DownsamplingDisplay.from_results(
            exact, metric="tpr", estimators=["raw", "cps_5"]
        )
    with pytest.raises(ValueError, match=r"groups \['Mars'\] not found.*COMPAS\|Black"):
        DownsamplingDisplay.from_results(exact, metric="tpr", groups="Mars")
    with pytest.raises(ValueError, match="estimators is empty"):
        DownsamplingDisplay.from_results(exact, metric="tpr", estimators=[])


def test_duplicate_rows(exact):
    doubled = pd.concat([exact, exact])
    with pytest.raises(
        ValueError, match=r"several rows for group 'COMPAS\|Black', n=3"
    ):
        DownsamplingDisplay.from_results(doubled, metric="tpr")


def test_ax_with_by_group(exact):
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"one panel per group.*single Axes"):
        DownsamplingDisplay.from_results(exact, metric="tpr", by_group=True, ax=ax)
    _, axes = plt.subplots(1, 3)
    with pytest.raises(ValueError, match="array of 2 matplotlib Axes"):
        DownsamplingDisplay.from_results(
            exact,
            metric="tpr",
            by_group=True,
            groups=["COMPAS|Black", "COMPAS|White"],
            ax=axes,
        )


def test_pooled_ax_must_be_axes(exact):
    _, axes = plt.subplots(1, 2)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        DownsamplingDisplay.from_results(exact, metric="tpr", ax=axes)


@pytest.mark.parametrize(
    "name, value",
    [
        ("by_group", "yes"),
        ("logy", "yes"),
        ("confidence_level", "yes"),
        ("confidence_level", True),
        ("confidence_level", 1.0),
        ("confidence_level", 95),
    ],
)
def test_options_are_validated(exact, name, value):
    match = f"'{name}' parameter of DownsamplingDisplay.from_results"
    with pytest.raises(ValueError, match=match):
        DownsamplingDisplay.from_results(exact, metric="tpr", **{name: value})


def test_logy_rejects_bias(exact):
    with pytest.raises(ValueError, match=r"logy=True.*bias"):
        DownsamplingDisplay.from_results(
            exact, metric="tpr", statistic="bias", logy=True
        )


def test_missing_matplotlib(exact, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"needs matplotlib.*pip install matplotlib"):
        DownsamplingDisplay.from_results(exact, metric="tpr")
    disp = DownsamplingDisplay(
        curves=pd.DataFrame({"n": [1], "estimator": ["raw"], "value": [0.1]}),
        metric="tpr",
        statistic="mse",
        by_group=False,
    )
    with pytest.raises(ImportError, match=r"needs matplotlib.*pip install matplotlib"):
        disp.plot()


def test_panel_titles_show_hidden_characters_and_dollars_literally(exact):
    sub = exact[exact["group"].isin(["COMPAS|Black", "COMPAS|White"])].copy()
    sub["group"] = sub["group"].map(
        {"COMPAS|Black": "$\\frac$ x", "COMPAS|White": "inv\u202efdp"}
    )
    disp = DownsamplingDisplay.from_results(sub, metric="tpr", by_group=True)
    disp.figure_.canvas.draw()  # mathtext would fail on "$\frac$"
    titles = {panel.get_title() for panel in np.ravel(disp.ax_) if panel.get_title()}
    assert titles == {"\\$\\frac\\$ x", "inv\\u202efdp"}


def test_metric_aliases_are_accepted_as_elsewhere(exact):
    # "recall" is "tpr" everywhere else, and in the display too
    alias = DownsamplingDisplay.from_results(exact, metric="Recall")
    canonical = DownsamplingDisplay.from_results(exact, metric="tpr")
    assert alias.metric == "tpr"
    pd.testing.assert_frame_equal(alias.curves, canonical.curves)
