"""Careless and hostile labels, references, models and sizes through the API.

Each test pins one rule: a per-group reference matched by its label, never its
row; JSON that keeps every value; metadata routed as scikit-learn routes it;
look-alike labels warned about and shown apart; a model and a target coded alike;
bounds checked before the work they bound.
"""

import json
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_smallfair._lookalike import lookalike_sets, skeleton
from sklearn_smallfair._output import csv_text, display_label
from sklearn_smallfair.audit import FairnessAudit, audit_predictions
from sklearn_smallfair.dyadic import MatrixFactorizationRegressor
from sklearn_smallfair.exceptions import SensitiveFeaturesWarning
from sklearn_smallfair.metrics import group_metrics
from sklearn_smallfair.stats import match_test

COUNTS = pd.DataFrame(
    {"tp": [5, 10, 20], "fn": [5, 10, 20], "fp": [3, 5, 8], "tn": [7, 10, 30]},
    index=["A", "B", "C"],
)
REFERENCE = pd.DataFrame(
    {"tp": [50, 1, 90], "fn": [50, 99, 10], "fp": [3, 5, 8], "tn": [7, 10, 30]},
    index=["A", "B", "C"],
)


# ---------------------------------------------------------------------------
# a per-group reference is matched by label
# ---------------------------------------------------------------------------
def test_reference_frame_is_matched_by_label_not_row():
    ordered = match_test(counts=COUNTS, reference=REFERENCE).frame
    shuffled = match_test(counts=COUNTS, reference=REFERENCE.loc[["C", "A", "B"]])
    pd.testing.assert_frame_equal(ordered, shuffled.frame)
    # group C against its own reference (TPR 0.9), not against B's (0.01)
    row = ordered[(ordered["group"] == "C") & (ordered["metric"] == "tpr")]
    assert row["reference_score"].item() == pytest.approx(0.9)


def test_reference_frame_matches_group_metrics_too():
    a = group_metrics(counts=COUNTS, reference=REFERENCE, metrics=["tpr"])
    b = group_metrics(
        counts=COUNTS, reference=REFERENCE.loc[["B", "C", "A"]], metrics=["tpr"]
    )
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "index, words",
    [
        (["A", "B", "Z"], ["no row for group(s) ['C']", "unknown group(s) ['Z']"]),
        (["A", "B", "B"], ["more than once"]),
    ],
)
def test_reference_frame_with_unknown_or_repeated_labels_is_refused(index, words):
    bad = REFERENCE.set_axis(index)
    with pytest.raises(ValueError) as info:
        match_test(counts=COUNTS, reference=bad)
    for word in words:
        assert word in str(info.value)


def test_reference_frame_without_labels_is_read_by_position():
    plain = REFERENCE.reset_index(drop=True)
    a = match_test(counts=COUNTS, reference=plain).frame
    b = match_test(counts=COUNTS, reference=REFERENCE.to_numpy()).frame
    pd.testing.assert_frame_equal(a, b)


# ---------------------------------------------------------------------------
# JSON keeps values
# ---------------------------------------------------------------------------
def _strict(text):
    def refuse(constant):
        raise AssertionError(f"{constant} in JSON")

    return json.loads(text, parse_constant=refuse)


def _floats(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _floats(v)
    elif isinstance(node, list):
        for v in node:
            yield from _floats(v)
    elif isinstance(node, float):
        yield node


def test_to_json_keeps_tiny_p_values_and_is_strict():
    rng = np.random.default_rng(0)
    n = 4000
    g = np.repeat(["a", "b"], n // 2)
    y = rng.integers(0, 2, n)
    p = y.copy()
    p[:900] = 1 - p[:900]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g)
    data = _strict(report.to_json())
    written = sorted(m["p_value"] for m in data["separation"])
    expected = sorted(report.separation["p_value"].tolist())
    assert written == expected  # bit for bit, not rounded to 10 decimals
    assert min(written) < 1e-100
    assert any(0 < abs(v) < 1e-10 for v in _floats(data))


def test_to_json_writes_labels_json_cannot_hold_as_values_it_can():
    ts = pd.Timestamp("2024-01-02")
    big = 2**63 + 5
    g = np.array([ts] * 6 + [pd.Timestamp("2025-01-01")] * 6, dtype=object)
    y = np.array([0, 1] * 6)
    report = audit_predictions(y, y, sensitive_features=g, tests=())
    data = _strict(report.to_json())
    assert data["groups"][0]["group"] == "2024-01-02T00:00:00"
    h = [big] * 6 + [7] * 6
    data = _strict(audit_predictions(y, y, sensitive_features=h, tests=()).to_json())
    assert {row["group"] for row in data["groups"]} == {7, big}


# ---------------------------------------------------------------------------
# routing of fit parameters
# ---------------------------------------------------------------------------
class _Spy(LogisticRegression):
    def fit(self, X, y, sample_weight=None):
        self.got_weights_ = sample_weight is not None
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.fixture
def routing():
    sklearn.set_config(enable_metadata_routing=True)
    yield
    sklearn.set_config(enable_metadata_routing=False)


def _xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


def test_routing_honours_a_request_not_to_receive_weights(routing):
    X, y = _xy()
    audit = FairnessAudit(_Spy().set_fit_request(sample_weight=False)).fit(X, y)
    assert not audit.estimator_.got_weights_
    with pytest.raises(TypeError, match="unexpected argument"):
        FairnessAudit(_Spy().set_fit_request(sample_weight=False)).fit(
            X, y, sample_weight=np.ones(200)
        )


def test_routing_raises_scikit_learns_error_without_a_request(routing):
    from sklearn.exceptions import UnsetMetadataPassedError

    X, y = _xy()
    with pytest.raises(UnsetMetadataPassedError):
        FairnessAudit(_Spy()).fit(X, y, sample_weight=np.ones(200))


def test_routing_passes_requested_weights(routing):
    X, y = _xy()
    audit = FairnessAudit(_Spy().set_fit_request(sample_weight=True))
    assert audit.fit(X, y, sample_weight=np.ones(200)).estimator_.got_weights_


def test_without_routing_fit_parameters_reach_the_estimator():
    X, y = _xy()
    audit = FairnessAudit(_Spy()).fit(X, y, sample_weight=np.ones(200))
    assert audit.estimator_.got_weights_


# ---------------------------------------------------------------------------
# the audited model and the target code the classes alike
# ---------------------------------------------------------------------------
def test_a_model_trained_on_another_coding_is_refused():
    X, y = _xy()
    groups = np.repeat(["a", "b"], 100)
    audit = FairnessAudit(LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match=r"class\(es\) \[2\].*classes_ are \[0, 1\]"):
        audit.audit(X, y + 1, sensitive_features=groups)


def test_two_binary_codings_are_not_read_as_three_classes():
    y = np.array([1, 2] * 20)
    p = np.array([0, 1, 1, 0] * 10)
    g = np.repeat(["a", "b"], 20)
    with pytest.raises(ValueError, match="two binary codings"):
        audit_predictions(y, p, sensitive_features=g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g, labels=[0, 1, 2])
    assert list(report.labels) == [0, 1, 2]


@pytest.mark.parametrize(
    "model", [KMeans(2, n_init=1, random_state=0), LinearRegression()]
)
def test_a_model_that_does_not_classify_is_refused(model):
    X, y = _xy()
    with pytest.raises(TypeError, match="audits a classifier"):
        FairnessAudit(model).fit(X, y)


# ---------------------------------------------------------------------------
# look-alike labels
# ---------------------------------------------------------------------------
LOOKALIKES = [
    "A",
    "A ",
    "A\u200b",
    "A\u200d",
    "A\ufeff",
    "A\u00ad",
    "\u0410",  # Cyrillic capital A
    "\u00e9",  # é composed
    "e\u0301",  # é decomposed
]


def test_skeleton_reads_labels_as_a_person_does():
    assert lookalike_sets(LOOKALIKES) == [LOOKALIKES[:7], LOOKALIKES[7:]]
    assert skeleton("a") != skeleton("A")  # case is visible
    assert lookalike_sets(["Black", "White", "Hispanic"]) == []


def test_lookalike_group_labels_are_warned_about_and_kept_apart():
    g = np.repeat(LOOKALIKES, 10)
    y = np.tile([0, 1], 45)
    with pytest.warns(SensitiveFeaturesWarning, match="look alike") as record:
        frame = group_metrics(y, y, sensitive_features=g)
    assert len(frame) == 9
    message = str(record[0].message)
    assert "'\\u0410'" in message and "'e\\u0301'" in message


def test_ordinary_labels_give_no_lookalike_warning():
    g = np.repeat(["Black", "White", "black"], 10)
    y = np.tile([0, 1], 15)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SensitiveFeaturesWarning)
        group_metrics(y, y, sensitive_features=g)


def test_invisible_characters_and_edge_spaces_show_in_every_output():
    shown = [display_label(v) for v in LOOKALIKES[:6]]
    assert len(set(shown)) == 6
    assert shown[1] == "A\\x20" and shown[2] == "A\\u200b"
    g = np.repeat(LOOKALIKES[:6], 10)
    y = np.tile([0, 1], 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, y, sensitive_features=g, tests=())
    rows = report.to_csv().splitlines()[1:]
    assert len({row.split(",")[0] for row in rows}) == 6
    html = report.to_html()
    for label in shown:
        assert label in html


def test_sensitive_features_frame_with_repeated_column_names_is_refused():
    frame = pd.DataFrame([["a", "x"]] * 10, columns=["g", "g"])
    y = np.tile([0, 1], 5)
    with pytest.raises(ValueError, match="several columns named 'g'"):
        group_metrics(y, y, sensitive_features=frame)


# ---------------------------------------------------------------------------
# bounds checked before the work
# ---------------------------------------------------------------------------
def test_all_pairs_over_many_groups_is_refused_before_the_work():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(250).astype(str), 4)
    y = rng.integers(0, 2, g.size)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="31,125 comparisons per rate"):
        audit_predictions(y, y, sensitive_features=g, separation_pairs="all")
    # refused after counting, before any test: far below the seconds of the tests
    assert time.perf_counter() - start < 30


def test_a_huge_label_is_cut_on_pages_and_kept_whole_in_files():
    rng = np.random.default_rng(0)
    huge = "x" * 200_000
    g = np.array([huge, "b", "c"], dtype=object)[rng.integers(0, 3, 300)]
    y = rng.integers(0, 2, 300)
    p = np.where(rng.random(300) < 0.8, y, 1 - y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g)
    page = report.to_html()
    assert huge not in page and "(+199,000 characters)" in page
    assert len(page) < 500_000
    assert huge not in report.summary()
    assert huge in report.to_csv() and huge in report.to_json()
    assert csv_text(huge) == huge


def test_many_groups_give_one_order_of_the_table():
    rng = np.random.default_rng(0)
    g = np.array([f"g{i:04d}" for i in range(210)])[rng.integers(0, 210, 4200)]
    y = rng.integers(0, 2, g.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, y, sensitive_features=g, tests=("match",))
    page = report.to_html()
    assert page.count('class="view view-') == 1
    assert "one order for 210 groups" in page


def test_matrix_factorization_refuses_unidentified_components_before_allocating():
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 30, 300), rng.integers(0, 20, 300)]
    y = rng.normal(size=300)
    with pytest.raises(ValueError, match="rank at most 20"):
        MatrixFactorizationRegressor(n_components=10**9).fit(X, y)
    assert MatrixFactorizationRegressor(n_components=20).fit(X, y).n_iter_ > 0


# ---------------------------------------------------------------------------
# documented claims
# ---------------------------------------------------------------------------
def test_barnard_shortfall_of_scipy_is_as_documented():
    from scipy.stats import barnard_exact

    from sklearn_smallfair.stats._exact import barnard_exact_pvalues

    ours = barnard_exact_pvalues(
        np.array([10]), np.array([10]), np.array([800]), np.array([1000])
    )[0]
    theirs = barnard_exact([[10, 800], [0, 200]], pooled=True).pvalue
    assert ours == pytest.approx(0.151194, abs=5e-7)
    assert ours - theirs == pytest.approx(3.4e-3, abs=5e-5)


def test_smoothing_matches_a_reference_frame_by_label():
    from sklearn_smallfair.smoothing import CrossPriorSmoothing

    for lam in (10, "auto"):
        a = CrossPriorSmoothing(lam=lam).fit_transform(COUNTS, REFERENCE * 10)
        b = CrossPriorSmoothing(lam=lam).fit_transform(
            COUNTS, (REFERENCE * 10).loc[["C", "A", "B"]]
        )
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="unknown group"):
        CrossPriorSmoothing(lam=10).transform(COUNTS, REFERENCE.set_axis(list("ABZ")))


def test_reference_warning_names_integer_labels_as_labels_and_sizes_as_references():
    counts = pd.DataFrame(
        {"tp": [5, 10], "fn": [5, 10], "fp": [3, 5], "tn": [7, 15]}, index=[0, 1]
    )
    with pytest.warns(Warning) as record:
        match_test(counts=counts, null="fixed-reference")
    message = " ".join(str(w.message) for w in record)
    # group 1 has 40 people; its reference (group 0) has 20
    assert "group labelled 1 (20 people in the reference)" in message


@pytest.mark.parametrize("train_as, predict_as", [(int, str), (str, int)])
def test_dyadic_ids_of_another_type_at_predict_are_refused(train_as, predict_as):
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 30, 300), rng.integers(0, 20, 300)]
    y = rng.normal(size=300)
    model = MatrixFactorizationRegressor(n_components=2).fit(X.astype(train_as), y)
    with pytest.raises(ValueError, match="every pair would be read as unseen"):
        model.predict(X[:3].astype(predict_as))
    assert np.isfinite(model.predict(X[:3].astype(train_as))).all()


def test_a_defined_rate_against_an_undefined_reference_is_not_called_undefined():
    y = [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    p = [1, 0, 1, 0, 1, 0, 0, 1, 0, 0]
    g = ["a"] * 5 + ["b"] * 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g)
    text = report.cell("a", "tpr")["text"]
    assert text.startswith("a (n = 5): TPR = 0.667")
    assert "everyone else's TPR is undefined" in text
    assert "reference 0/0" in report.to_html()
    assert report.cell("b", "tpr")["text"].startswith("b (n = 5): TPR is undefined")


def test_the_report_figure_draws_the_first_sixty_groups():
    rng = np.random.default_rng(0)
    g = np.array([f"g{i:03d}" for i in range(70)])[rng.integers(0, 70, 2800)]
    y = rng.integers(0, 2, g.size)
    p = np.where(rng.random(g.size) < 0.8, y, 1 - y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, p, sensitive_features=g, tests=("match",))
    from sklearn_smallfair.audit import AuditDisplay

    display = AuditDisplay.from_report(report, max_groups=60)
    assert len(display.frame) == 60
    assert list(display.frame.index) == report._group_order("evidence")[:60]
    assert "the 60 groups with the strongest evidence of 70" in report.to_html()
    with pytest.raises(ValueError, match="max_groups"):
        AuditDisplay.from_report(report, max_groups=0)
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.parametrize("label", ["All", "TOTAL ", " overall", "Population"])
def test_a_counts_row_labelled_like_everyone_is_warned_about(label):
    counts = pd.DataFrame(
        {"tp": [5, 6, 11], "fn": [1, 2, 3], "fp": [3, 3, 6], "tn": [9, 9, 18]},
        index=["a", "b", label],
    )
    with pytest.warns(SensitiveFeaturesWarning, match="labelled like everyone"):
        group_metrics(counts=counts, metrics=["tpr"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SensitiveFeaturesWarning)
        group_metrics(counts=counts.iloc[:2], metrics=["tpr"])
        group_metrics(counts=counts.iloc[2:], metrics=["tpr"])  # one row: no others


def test_the_report_names_lookalike_labels_first():
    g = np.repeat(["A", "\u0410", "B"], 20)
    y = np.tile([0, 1], 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = audit_predictions(y, y, sensitive_features=g)
    first = report.findings()[0]
    assert first.startswith("Labels that look alike") and "'\\u0410'" in first
    assert "Labels that look alike" in report.to_html()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = audit_predictions(y, y, sensitive_features=np.repeat(list("ABC"), 20))
    assert not any(f.startswith("Labels") for f in plain.findings())
