"""numpydoc's own validation of every public docstring.

As scikit-learn's ``test_docstrings.py`` does: every public function, class and
public method is validated with :func:`numpydoc.validate.validate`, and the
checks below must hold (every parameter documented, in order, with a type and a
description; known sections in order; an Examples section on every public
function and class).
"""

import importlib
import inspect

import pytest

validate = pytest.importorskip("numpydoc.validate").validate

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
    "sklearn_smallfair.exceptions",
)

#: The checks that must pass (numpydoc's codes).
CHECKED = {
    "GL06",  # unknown section
    "GL07",  # sections out of order
    "GL08",  # no docstring
    "GL10",  # reST directive without its two colons
    "SS01",  # no summary
    "PR01",  # undocumented parameter
    "PR02",  # documented parameter that does not exist
    "PR03",  # parameters documented in another order
    "PR04",  # parameter without a type
    "PR07",  # parameter without a description
    "PR10",  # "name: type" without the space before the colon
    "RT03",  # return value without a description
}
#: Checked on functions and classes, not on their methods.
CHECKED_TOP = CHECKED | {"EX01"}  # no Examples section


def _targets():
    seen = {}
    for module_name in SUBPACKAGES:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            path = f"{obj.__module__}.{obj.__qualname__}"
            public = f"{module_name}.{attr}"
            if path in seen:
                continue
            seen[path] = (public, True)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for name, member in vars(obj).items():
                    if name.startswith("_"):
                        continue
                    func = getattr(member, "__func__", member)
                    if inspect.isfunction(func) or isinstance(member, property):
                        seen[f"{path}.{name}"] = (f"{public}.{name}", False)
    return sorted((public, top) for public, top in seen.values())


TARGETS = _targets()


def test_targets_are_found():
    assert len(TARGETS) > 150


@pytest.mark.parametrize("name, top", TARGETS, ids=[t[0] for t in TARGETS])
def test_docstring(name, top):
    result = validate(name)
    checked = CHECKED_TOP if top else CHECKED
    if not top and result["type"] == "property":
        checked = checked - {"PR01", "PR02", "RT03"}
    errors = [
        f"{code}: {message}" for code, message in result["errors"] if code in checked
    ]
    assert not errors, f"{name}:\n" + "\n".join(errors)


def test_api_reference_lists_every_public_callable():
    from pathlib import Path

    api = Path(__file__).resolve().parents[1] / "doc" / "api.rst"
    if not api.is_file():
        pytest.skip("the documentation sources are not beside the tests")
    listed = {line.strip() for line in api.read_text(encoding="utf-8").splitlines()}
    missing = [
        public
        for public, top in TARGETS
        if top
        and public.rsplit(".", 1)[0] != "sklearn_smallfair"
        and public.rsplit(".", 1)[1] not in listed
    ]
    assert not missing, "not in doc/api.rst: " + ", ".join(missing)
