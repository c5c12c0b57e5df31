"""scikit-learn's estimator checks on the smoothers.

A smoother transforms confusion matrices of shape ``(..., 4)``, not samples of
shape ``(n_samples, n_features)``: its tags declare a transformer (float64
output, non-negative input), and the checks that feed it other data are listed,
with the reason, by ``expected_failed_checks``. Every other check must pass.
"""

import warnings

import pytest
import sklearn
from sklearn.utils.estimator_checks import check_estimator

from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing
from sklearn_smallfair.smoothing._base import expected_failed_checks

SMOOTHERS = [AdditiveSmoothing(), CrossPriorSmoothing(), CrossPriorSmoothing("auto")]
NEW_TAGS = tuple(int(p) for p in sklearn.__version__.split(".")[:2]) >= (1, 6)


@pytest.mark.parametrize("smoother", SMOOTHERS, ids=repr)
def test_check_estimator(smoother):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped checks, reference warnings
        if not NEW_TAGS:  # the _xfail_checks tag skips the listed checks
            check_estimator(smoother)
            return
        results = check_estimator(
            smoother,
            expected_failed_checks=expected_failed_checks(smoother),
            on_fail=None,
        )
    status = {}
    for r in results:
        status.setdefault(r["check_name"], set()).add(r["status"])
    failed = sorted(name for name, s in status.items() if "failed" in s)
    assert failed == [], failed
    # the listed failures are real: none of them passes
    xpassed = sorted(
        name
        for name in expected_failed_checks(smoother)
        if status.get(name) == {"passed"}
    )
    assert xpassed == [], xpassed
    # the API checks pass
    for name in (
        "check_estimator_cloneable",
        "check_get_params_invariance",
        "check_set_params",
        "check_no_attributes_set_in_init",
        "check_parameters_default_constructible",
        "check_fit_non_negative",
    ):
        assert status[name] == {"passed"}, name


@pytest.mark.parametrize("smoother", SMOOTHERS, ids=repr)
def test_expected_failures_have_reasons(smoother):
    checks = expected_failed_checks(smoother)
    assert checks and all(isinstance(r, str) and len(r) > 30 for r in checks.values())


def test_fit_validates_counts():
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 4\)"):
        AdditiveSmoothing().fit([[1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        AdditiveSmoothing().fit([1, -1, 0, 2])
    with pytest.raises(ValueError, match="reference_counts contains NaN"):
        CrossPriorSmoothing().fit([1, 1, 0, 2], [1.0, float("nan"), 1.0, 1.0])
