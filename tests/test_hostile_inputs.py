"""Hostile and careless inputs through every public callable.

1. Declared parameters: every public function carries a ``validate_params`` table
   and every public estimator a ``_parameter_constraints`` table covering all its
   parameters; each declared parameter is fed a value of a wrong type and, for
   each constraint, a value just outside it (as scikit-learn's
   ``test_public_functions.py`` does), and must raise an ``InvalidParameterError``
   naming the parameter and the callable, before any work.
2. Data: a table of bad data (lengths, NaN/inf, empty, ragged, dict/set/generator,
   mixed-type labels, pandas nullable dtypes) through the entry points that take
   rows, asserting a ``ValueError``/``TypeError`` whose message names the argument.
3. Properties (hypothesis): invariance to row order and group relabelling, bounds
   of rates and p-values, agreement of the exact law and the enumeration.
"""

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_smallfair._compat import (
    InvalidParameterError,
    generate_invalid_param_val,
    make_constraint,
)

SUBPACKAGES = [
    "",
    "metrics",
    "smoothing",
    "stats",
    "model_selection",
    "preprocessing",
    "dyadic",
    "adaptive",
    "audit",
    "datasets",
]


def _public():
    """``(qualified name, object)`` of every public function and estimator."""
    seen = {}
    for sub in SUBPACKAGES:
        module = importlib.import_module(
            ".".join(("sklearn_smallfair", sub)).rstrip(".")
        )
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or (
                inspect.isclass(obj)
                and (
                    issubclass(obj, BaseEstimator)
                    or hasattr(obj, "_parameter_constraints")
                )
                and not inspect.isabstract(obj)
                and not name.startswith("Base")
            ):
                seen.setdefault(obj, f"{sub or 'sklearn_smallfair'}.{name}")
    return sorted(((q, o) for o, q in seen.items()), key=lambda t: t[0])


PUBLIC = _public()
FUNCTIONS = [(q, o) for q, o in PUBLIC if inspect.isfunction(o)]
ESTIMATORS = [(q, o) for q, o in PUBLIC if inspect.isclass(o)]

# ---------------------------------------------------------------------------------
# Valid values of the required parameters (those without a default), by name; a
# callable's own entry in REQUIRED wins.
# ---------------------------------------------------------------------------------
_Y = np.array([1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0])
_P = np.array([1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1])
_A = np.array(["a"] * 6 + ["b"] * 6)
VALID_BY_NAME = {
    "y_true": _Y,
    "y_pred": _P,
    "y": _Y,
    "y_score": _P.astype(float),
    "sensitive_features": _A,
    "counts": np.array([[5, 2, 3, 10], [4, 1, 2, 8]]),
    "metric": "tpr",
    "cell_probs": np.full(8, 1 / 8),
    "n": 100,
    "n_pairs": 100,
    "estimator": LogisticRegression(),
    "metrics": ["tpr", "fpr"],
    "users": np.arange(12) % 4,
    "items": np.arange(12) % 3,
    "ratings": np.linspace(1.0, 5.0, 12),
    "path": "u.data",
    "results": pd.DataFrame(),
    "regressor": LinearRegression(),
    "cm": np.array([[8, 2], [3, 7]]),
    "p": np.full(4, 0.25),
    "alpha": np.ones(4),
    "population": np.array([5, 5, 5, 5]),
    "pvalues": np.array([0.01, 0.04, 0.03]),
    "reference": np.array([40, 10, 20, 30]),
}
REQUIRED = {}


def _required_args(func, qualname):
    """Valid values for the parameters of ``func`` that have no default."""
    if qualname in REQUIRED:
        return dict(REQUIRED[qualname])
    args = {}
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("self", "cls"):
            continue
        if p.default is p.empty:
            if p.name not in VALID_BY_NAME:
                pytest.fail(
                    f"{qualname}: add a valid value for its required parameter "
                    f"{p.name!r} to VALID_BY_NAME or REQUIRED"
                )
            args[p.name] = VALID_BY_NAME[p.name]
    return args


def _signature_params(func):
    return [
        p.name
        for p in inspect.signature(func).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.name not in ("self", "cls")
    ]


class _BadType:
    """A value of a type no parameter accepts."""


def _invalid_values(constraints):
    """A wrong-typed value, then one value just outside each constraint."""
    yield _BadType()
    made = [make_constraint(c) for c in constraints]
    for constraint in made:
        try:
            bad = generate_invalid_param_val(constraint)
        except NotImplementedError:
            continue
        # a value outside one constraint may satisfy another one of the list
        if not any(other.is_satisfied_by(bad) for other in made):
            yield bad


@pytest.mark.parametrize("qualname, func", FUNCTIONS, ids=[q for q, _ in FUNCTIONS])
def test_function_declares_every_parameter(qualname, func):
    table = getattr(func, "_skl_parameter_constraints", None)
    assert table is not None, f"{qualname} has no validate_params table"
    assert set(table) == set(_signature_params(func)), qualname


@pytest.mark.parametrize("qualname, func", FUNCTIONS, ids=[q for q, _ in FUNCTIONS])
def test_function_refuses_every_invalid_parameter(qualname, func):
    table = getattr(func, "_skl_parameter_constraints", {})
    required = _required_args(func, qualname)
    checked = 0
    for param, constraints in table.items():
        if constraints == "no_validation":
            continue
        for bad in _invalid_values(constraints):
            message = rf"The '{param}' parameter of {func.__qualname__} must be"
            with pytest.raises(InvalidParameterError, match=message):
                func(**{**required, param: bad})
            checked += 1
    assert checked >= len(table) - sum(c == "no_validation" for c in table.values())


@pytest.mark.parametrize("qualname, cls", ESTIMATORS, ids=[q for q, _ in ESTIMATORS])
def test_estimator_declares_every_parameter(qualname, cls):
    table = getattr(cls, "_parameter_constraints", None)
    assert table is not None, f"{qualname} has no _parameter_constraints"
    assert set(table) >= set(_signature_params(cls.__init__)), qualname


@pytest.mark.parametrize("qualname, cls", ESTIMATORS, ids=[q for q, _ in ESTIMATORS])
def test_estimator_refuses_every_invalid_parameter(qualname, cls):
    table = getattr(cls, "_parameter_constraints", {})
    required = _required_args(cls.__init__, qualname)
    for param, constraints in table.items():
        if constraints == "no_validation":
            continue
        for bad in _invalid_values(constraints):
            est = cls(**{**required, param: bad})  # __init__ stores verbatim
            with pytest.raises(InvalidParameterError, match=rf"'{param}' parameter"):
                est._validate_params()


# ---------------------------------------------------------------------------------
# Numbered cases: each failed before its fix.
# ---------------------------------------------------------------------------------
def test_named_cells_are_read_by_name_everywhere():
    from sklearn_smallfair._pmf import dirichlet_multinomial_logpmf, multinomial_logpmf
    from sklearn_smallfair.metrics import compute_metric, group_metrics
    from sklearn_smallfair.smoothing import AdditiveSmoothing, CrossPriorSmoothing

    named = pd.DataFrame([[30, 10, 5, 55]], columns=["TN", "FP", "FN", "TP"])
    ordered = np.array([[55, 5, 10, 30]])  # (TP, FN, FP, TN)
    # compute_metric used to read the columns by position: 0.75 instead of 55/60
    assert compute_metric("tpr", named)[0] == pytest.approx(55 / 60)
    assert compute_metric("tpr", named)[0] == group_metrics(counts=named)["tpr"][0]
    np.testing.assert_array_equal(
        AdditiveSmoothing(1).transform(named), AdditiveSmoothing(1).transform(ordered)
    )
    ref = pd.Series([1, 2, 3, 4], index=["tp", "fn", "fp", "tn"])
    np.testing.assert_array_equal(
        CrossPriorSmoothing(5).transform(named, reference_counts=ref),
        CrossPriorSmoothing(5).transform(ordered, reference_counts=[1, 2, 3, 4]),
    )
    p = pd.Series([0.1, 0.2, 0.3, 0.4], index=["TN", "FP", "FN", "TP"])
    np.testing.assert_allclose(
        multinomial_logpmf(named, p), multinomial_logpmf(ordered, [0.4, 0.3, 0.2, 0.1])
    )
    np.testing.assert_allclose(
        dirichlet_multinomial_logpmf(named, ref),
        dirichlet_multinomial_logpmf(ordered, [1, 2, 3, 4]),
    )
    # a frame with unnamed (default) columns is read by position
    assert compute_metric("tpr", pd.DataFrame(ordered))[0] == pytest.approx(55 / 60)


@pytest.mark.parametrize(
    "columns",
    [["a", "b", "c", "d"], ["TP", "FN", "FP", "XX"], ["TP", "TP", "FP", "TN"]],
)
def test_frame_with_unknown_cell_names_is_an_error(columns):
    from sklearn_smallfair.metrics import compute_metric

    frame = pd.DataFrame([[1, 2, 3, 4]], columns=columns)
    with pytest.raises(ValueError, match="counts is a pandas DataFrame whose columns"):
        compute_metric("tpr", frame)


def test_mixed_type_labels_are_refused():
    from sklearn_smallfair.metrics import group_metrics

    groups = np.array([1, "1"] * 6, dtype=object)
    with pytest.raises(ValueError, match="sensitive_features mixes text and non-text"):
        group_metrics(_Y, _P, sensitive_features=groups)


def test_intersectional_labels_do_not_collide():
    from sklearn_smallfair.metrics import group_metrics

    A = pd.DataFrame({"x": ["A|B"] * 6 + ["A"] * 6, "y": ["C"] * 6 + ["B|C"] * 6})
    table = group_metrics(_Y, _P, sensitive_features=A, zero_division=np.nan)
    assert len(table) == 2  # used to be two rows both named "A|B|C"
    assert len(set(table.index)) == 2
    assert set(table.index) == {"A\\|B|C", "A|B\\|C"}


# ---------------------------------------------------------------------------------
# Bad data through every entry point that takes rows
# ---------------------------------------------------------------------------------
def _entry_points():
    from sklearn_smallfair.audit import audit_predictions
    from sklearn_smallfair.metrics import (
        aggregate_group_metric,
        confusion_counts,
        group_metrics,
    )
    from sklearn_smallfair.model_selection import downsampling_experiment
    from sklearn_smallfair.preprocessing import reweighing_weights
    from sklearn_smallfair.stats import (
        comparative_separation_test,
        match_test,
        separation_test,
    )

    same = {"y_true": "y_true", "y_pred": "y_pred"}
    return {
        "confusion_counts": (
            lambda y, p, a: confusion_counts(y, p, sensitive_features=a),
            same,
        ),
        "group_metrics": (
            lambda y, p, a: group_metrics(
                y, p, sensitive_features=a, zero_division=np.nan
            ),
            same,
        ),
        "aggregate_group_metric": (
            lambda y, p, a: aggregate_group_metric(y, p, sensitive_features=a),
            same,
        ),
        "match_test": (lambda y, p, a: match_test(y, p, sensitive_features=a), same),
        "separation_test": (
            lambda y, p, a: separation_test(y, p, sensitive_features=a),
            same,
        ),
        "comparative_separation_test": (
            lambda y, p, a: comparative_separation_test(y, p, sensitive_features=a),
            {"y_true": "y_true", "y_pred": "y_score"},
        ),
        "audit_predictions": (
            lambda y, p, a: audit_predictions(y, p, sensitive_features=a),
            same,
        ),
        "reweighing_weights": (
            lambda y, p, a: reweighing_weights(y, sensitive_features=a),
            {"y_true": "y", "y_pred": None},
        ),
        "downsampling_experiment": (
            lambda y, p, a: downsampling_experiment(
                y, p, sensitive_features=a, sizes=[5]
            ),
            same,
        ),
    }


_YY = np.tile(_Y, 2)
_PP = np.tile(_P, 2)
_AA = np.tile(_A, 2)
_AT = np.arange(24)
BAD_DATA = {
    "y_pred shorter": (_YY, _PP[:-1], _AA, "y_pred"),
    "groups shorter": (_YY, _PP, _AA[:-1], "sensitive_features"),
    "NaN in y_true": (np.where(_AT == 3, np.nan, _YY), _PP, _AA, "y_true"),
    "inf in y_pred": (_YY, np.where(_AT == 2, np.inf, _PP), _AA, "y_pred"),
    "empty": ([], [], [], None),
    "ragged y_true": ([[1, 0], [1]] * 12, _PP, _AA, "y_true"),
    "dict groups": (_YY, _PP, {"a": 1}, "sensitive_features"),
    "set y_true": (set(_YY.tolist()), _PP, _AA, "y_true"),
    "generator groups": (_YY, _PP, (g for g in _AA), "sensitive_features"),
    "mixed-type groups": (
        _YY,
        _PP,
        np.array([1, "1"] * 12, dtype=object),
        "sensitive_features",
    ),
    "nullable NA in y_true": (
        pd.array(np.where(_AT == 5, None, _YY).tolist(), dtype="Int64"),
        _PP,
        _AA,
        "y_true",
    ),
    "None group": (_YY, _PP, np.where(_AT == 4, None, _AA), "sensitive_features"),
    "string y_true": ("101010", _PP, _AA, "y_true"),
}


@pytest.mark.parametrize("case", list(BAD_DATA))
@pytest.mark.parametrize("entry", list(_entry_points()))
def test_bad_data_is_a_clear_error_naming_the_argument(entry, case):
    func, names = _entry_points()[entry]
    y, p, a, arg = BAD_DATA[case]
    arg = names.get(arg, arg)
    if arg is None and case != "empty":
        pytest.skip(f"{entry} takes no such argument")
    with pytest.raises((ValueError, TypeError)) as excinfo:
        func(y, p, a)
    message = str(excinfo.value)
    if arg is not None:
        assert arg in message, message
    assert "inhomogeneous" not in message.split("(")[0]


# ---------------------------------------------------------------------------------
# Properties (derandomized: the same examples in every run)
# ---------------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None)


@st.composite
def _rows(draw, min_size=4, max_size=60):
    n = draw(st.integers(min_size, max_size))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    p = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    g = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    return np.array(y), np.array(p), np.array(g)


@PROPERTY
@given(rows=_rows(), seed=st.integers(0, 2**32 - 1))
def test_group_metrics_invariant_to_row_order(rows, seed):
    from sklearn_smallfair.metrics import group_metrics

    y, p, g = rows
    order = np.random.default_rng(seed).permutation(len(y))
    kw = dict(metrics=["tpr", "fpr", "mcc", "f1", "acc"], zero_division=np.nan)
    a = group_metrics(y, p, sensitive_features=g, **kw)
    b = group_metrics(y[order], p[order], sensitive_features=g[order], **kw)
    pd.testing.assert_frame_equal(a, b)


@PROPERTY
@given(rows=_rows())
def test_group_metrics_invariant_to_relabelling_groups(rows):
    from sklearn_smallfair.metrics import group_metrics

    y, p, g = rows
    names = {"a": "zeta", "b": "alpha", "c": "mu"}
    kw = dict(metrics=["tpr", "ppv", "mcc"], zero_division=np.nan)
    a = group_metrics(y, p, sensitive_features=g, **kw)
    b = group_metrics(y, p, sensitive_features=[names[v] for v in g], **kw)
    b.index = b.index.map({v: k for k, v in names.items()})
    b.index.name = a.index.name
    pd.testing.assert_frame_equal(a, b.loc[a.index])


@PROPERTY
@given(counts=st.lists(st.integers(0, 30), min_size=4, max_size=4))
def test_metric_values_stay_in_their_ranges(counts):
    from sklearn_smallfair.metrics import compute_metric, metric_names

    for name in metric_names(n_groups=1):
        value = compute_metric(name, counts)
        if np.isnan(value):
            continue
        if name == "mcc":
            assert -1.0 - 1e-12 <= value <= 1.0 + 1e-12
        elif name == "mb":
            assert -1.0 <= value <= 1.0
        elif name != "pt":
            assert 0.0 <= value <= 1.0, (name, counts, value)


@PROPERTY
@given(
    group=st.lists(st.integers(0, 6), min_size=4, max_size=4).filter(
        lambda c: sum(c) >= 1
    ),
    reference=st.lists(st.integers(1, 40), min_size=4, max_size=4),
    metric=st.sampled_from(["tpr", "fpr", "ppv", "acc", "mb"]),
)
def test_match_exact_law_agrees_with_enumeration(group, reference, metric):
    from sklearn_smallfair.stats import match_test

    kw = dict(counts=np.array([group]), reference=reference, metric=metric)
    exact = match_test(method="exact", null="fixed-reference", **kw).frame
    enum = match_test(method="enumerate", null="fixed-reference", **kw).frame
    for col in ("p_lower_tail", "p_upper_tail", "p_value", "p_undefined"):
        np.testing.assert_allclose(exact[col], enum[col], rtol=1e-9, atol=1e-12)
    # a p-value is in [0, 1], and undefined exactly when the group's score is
    pvalue = exact["p_value"]
    assert (pvalue.isna() == exact["score"].isna()).all()
    assert ((pvalue.dropna() >= 0) & (pvalue.dropna() <= 1)).all()
