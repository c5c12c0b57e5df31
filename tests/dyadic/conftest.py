"""Fixtures shared by the tests of the dyadic estimators."""

import inspect

import pytest
from sklearn.utils.estimator_checks import check_estimator

_COLUMNS = (
    "the check fits on X with a number of continuous feature columns other "
    "than 2; a dyadic X has exactly 2 id columns (user, item)"
)
EXPECTED_FAILED_CHECKS = {
    "check_fit_score_takes_y": _COLUMNS,
    "check_dont_overwrite_parameters": _COLUMNS,
    "check_n_features_in_after_fitting": _COLUMNS,
    "check_positive_only_tag_during_fit": _COLUMNS,
    "check_estimators_dtypes": _COLUMNS,
    "check_dtype_object": _COLUMNS,
    "check_pipeline_consistency": _COLUMNS,
    "check_estimators_nan_inf": _COLUMNS
    + " (missing ids are rejected: see test_input_errors)",
    "check_estimators_pickle": _COLUMNS
    + " (see test_clone_get_params_and_pickle on dyadic X)",
    "check_f_contiguous_array_estimator": _COLUMNS,
    "check_regressors_train": _COLUMNS,
    "check_regressor_data_not_an_array": _COLUMNS,
    "check_regressors_no_decision_function": _COLUMNS,
    "check_supervised_y_2d": _COLUMNS,
    "check_regressors_int": _COLUMNS,
    "check_methods_sample_order_invariance": _COLUMNS
    + " (see test_order_and_subset_invariance on dyadic X)",
    "check_methods_subset_invariance": _COLUMNS
    + " (see test_order_and_subset_invariance on dyadic X)",
    "check_fit2d_1sample": "the 1-sample X of the check has 10 columns; the "
    "column count is rejected before the sample count",
    "check_dict_unchanged": _COLUMNS,
    "check_fit2d_predict1d": _COLUMNS,
}


def run_sklearn_checks(estimator, expected_failed_checks):
    """Run scikit-learn's common checks; return the unexpected outcomes.

    ``check_estimator`` (rather than ``parametrize_with_checks``) keeps the
    expected failures cheap: pytest does not format their tracebacks.
    """
    if "expected_failed_checks" not in inspect.signature(check_estimator).parameters:
        pytest.skip("scikit-learn < 1.6 has no expected_failed_checks")
    results = check_estimator(
        estimator,
        expected_failed_checks=expected_failed_checks,
        on_fail=None,
        on_skip=None,
    )
    failed = {
        r["check_name"]: f"{type(r['exception']).__name__}: {r['exception']}"
        for r in results
        if r["status"] == "failed"
    }
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    # an expected failure that passes means the list above is stale
    stale = sorted(passed & set(expected_failed_checks))
    return failed, stale


@pytest.fixture
def sklearn_checks():
    """``(run_sklearn_checks, EXPECTED_FAILED_CHECKS)`` for the dyadic estimators."""
    return run_sklearn_checks, EXPECTED_FAILED_CHECKS
