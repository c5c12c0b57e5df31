"""Every public signature speaks the package's one vocabulary.

The vocabulary is written down in ``doc/developers/vocabulary.rst``: one name and
one meaning per concept (interval level, resampling counts, methods, aggregation,
frame output, seeds, the positive label). This test reads every public function,
class and public method, and fails on a spelling the vocabulary replaced, on a
default that differs from the one the vocabulary fixes, and on a method value
outside the vocabulary.
"""

import importlib
import inspect

import pytest

SUBPACKAGES = (
    "sklearn_smallfair",
    "sklearn_smallfair.metrics",
    "sklearn_smallfair.smoothing",
    "sklearn_smallfair.stats",
    "sklearn_smallfair.model_selection",
    "sklearn_smallfair.preprocessing",
    "sklearn_smallfair.dyadic",
    "sklearn_smallfair.adaptive",
    "sklearn_smallfair.audit",
    "sklearn_smallfair.datasets",
)

#: Spellings the vocabulary replaced, and their replacement.
REPLACED = {
    "ci": "confidence_level",
    "ci_level": "confidence_level",
    "confidence": "confidence_level",
    "level": "confidence_level",
    "ci_method": "interval_method",
    "n_draws": "n_resamples",
    "n_boot": "n_resamples",
    "n_bootstrap": "n_resamples",
    "n_permutations": "n_resamples",
    "n_samples_mc": "n_resamples",
    "agg": "aggregate",
    "aggregation": "aggregate",
    "return_frame": "as_frame",
    "return_dataframe": "as_frame",
    "seed": "random_state",
    "rng": "random_state",
    "sensitive_feature": "sensitive_features",
    "protected_attribute": "sensitive_features",
    "sensitive_attribute": "sensitive_features",
    "positive_label": "pos_label",
}

#: Functions named like fairlearn's take fairlearn's arguments, with fairlearn's
#: meaning (``agg``, ``method="between_groups"``), so that they are drop-in.
FAIRLEARN_NAMED = {
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "GroupMetricFrame.difference",
    "GroupMetricFrame.ratio",
}
FAIRLEARN_ARGUMENTS = {"agg"}

#: Defaults the vocabulary fixes.
DEFAULTS = {
    "random_state": {0},
    "pos_label": {None},
    "confidence_level": {None, 0.95},
    "n_jobs": {None},
}

#: ``alpha`` is the significance level (0.05) except where scikit-learn or scipy
#: give it another established meaning.
ALPHA_OTHER_MEANING = {
    "dirichlet_multinomial_logpmf": "the Dirichlet concentration, as in scipy.stats",
    "MatrixFactorizationRegressor": "the L2 penalty, as in scikit-learn's Ridge",
}

#: The words a ``method`` may take: how a p-value, a law or a curve is computed.
METHOD_WORDS = {
    "auto",
    "exact",
    "asymptotic",
    "montecarlo",
    "enumerate",
    "saddlepoint",
    "beta",
    "score",
    "wald",
    "permutation",
    # the estimators of the eccentricity curve
    "ordered",
    "grouped",
    "bins",
    "bins_published",
    # fairlearn's, in the functions named like fairlearn's
    "between_groups",
    "to_overall",
}
INTERVAL_WORDS = {
    "auto",
    "clopper-pearson",
    "wilson",
    "jeffreys",
    "newcombe-katz",
    "posterior",
    "bootstrap",
    "projection",
}


def _public_objects():
    seen = {}
    for name in SUBPACKAGES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                seen.setdefault(attr, obj)
    return seen


def _callables():
    """``(qualified name, callable)`` for every public function, class and method."""
    out = []
    for name, obj in sorted(_public_objects().items()):
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            out.append((name, obj))
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                func = (
                    member.__func__
                    if isinstance(member, (classmethod, staticmethod))
                    else member
                )
                if inspect.isfunction(func):
                    out.append((f"{name}.{attr}", func))
        else:
            out.append((name, obj))
    return out


CALLABLES = _callables()


def _parameters(obj):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return {}
    return {
        p.name: p
        for p in signature.parameters.values()
        if p.name not in ("self", "cls")
    }


def _constraints(obj):
    """The declared constraints of a function or an estimator, if any."""
    table = getattr(obj, "_skl_parameter_constraints", None)
    if table is None:
        table = getattr(obj, "_parameter_constraints", None)
    return table or {}


def _str_options(constraints):
    values = set()
    for c in constraints:
        options = getattr(c, "options", None)
        if options is not None and all(isinstance(o, str) for o in options):
            values |= set(options)
    return values


def test_public_api_is_read():
    names = {n for n, _ in CALLABLES}
    assert len(names) > 80
    assert {"group_metrics", "match_test", "FairnessAudit"} <= names


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_no_replaced_spelling(name, obj):
    allowed = FAIRLEARN_ARGUMENTS if name in FAIRLEARN_NAMED else set()
    wrong = {
        p: REPLACED[p] for p in _parameters(obj) if p in REPLACED and p not in allowed
    }
    assert not wrong, f"{name}: rename " + ", ".join(
        f"{a} -> {b}" for a, b in wrong.items()
    )


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_vocabulary_defaults(name, obj):
    for pname, param in _parameters(obj).items():
        if pname in DEFAULTS and param.default is not inspect.Parameter.empty:
            assert param.default in DEFAULTS[pname], (
                f"{name}({pname}={param.default!r}): the vocabulary's default is "
                f"{' or '.join(map(repr, DEFAULTS[pname]))}"
            )
        if (
            pname == "alpha"
            and param.default is not inspect.Parameter.empty
            and name.split(".")[0] not in ALPHA_OTHER_MEANING
        ):
            assert param.default == 0.05, f"{name}(alpha={param.default!r})"


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_method_values(name, obj):
    table = _constraints(obj)
    for pname, words in (("method", METHOD_WORDS), ("interval_method", INTERVAL_WORDS)):
        values = _str_options(table.get(pname, ()))
        default = _parameters(obj).get(pname)
        if default is not None and isinstance(default.default, str):
            values.add(default.default)
        assert values <= words, (
            f"{name}({pname}=...): outside the vocabulary: {values - words}"
        )


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_metric_is_one_name(name, obj):
    params = _parameters(obj)
    if "metric" in params:
        default = params["metric"].default
        assert not isinstance(default, (list, tuple)), (
            f"{name}: a list goes to metrics="
        )
        assert "array-like" not in _constraints(obj).get("metric", ()), (
            f"{name}: metric= takes one name; a list goes to metrics="
        )


def test_one_name_per_object():
    for module_name in SUBPACKAGES:
        module = importlib.import_module(module_name)
        by_id = {}
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if callable(obj):
                by_id.setdefault(id(obj), []).append(attr)
        aliases = [names for names in by_id.values() if len(names) > 1]
        assert not aliases, f"{module_name} exports aliases: {aliases}"


def test_the_checks_can_fail():
    def bad(*, ci=0.95, random_state=None, n_draws=10):
        """A signature in the replaced spellings."""

    assert set(_parameters(bad)) & set(REPLACED) == {"ci", "n_draws"}
    assert _parameters(bad)["random_state"].default not in DEFAULTS["random_state"]
