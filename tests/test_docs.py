"""The documentation's code runs: the user guide's examples are doctests, and the
gallery examples are scripts free of test plumbing (skipped outside a checkout).

:func:`run_example` is the harness that runs a gallery example the way the gallery
does, without a display: the Agg backend, and ``plt.show()`` replaced by a hook
that saves the open figures (to look at them, pass ``figure_dir``) and closes them.
The examples themselves only call ``plt.show()``.
"""

import ast
import doctest
import runpy
import warnings
from pathlib import Path

import pytest
import sklearn

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
GUIDE = DOC / "user_guide"
PAGES = (
    sorted(GUIDE.glob("*.rst")) + sorted(DOC.glob("getting_started.rst"))
    if GUIDE.is_dir()
    else []
)
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: Quick examples (a few seconds) run by the slow suite through the harness; the
#: others run in the continuous integration's examples step and the gallery build.
QUICK_EXAMPLES = {
    "plot_cps_smoothing.py": None,  # embedded published matrices
    "plot_comparative_separation_jira.py": "jira",  # a file of the data folder
}
#: Examples that still save their figure when an environment variable is set.
SAVING_EXAMPLES: set = set()


def _example_params():
    for path in EXAMPLES:
        marks = ()
        if path.name in SAVING_EXAMPLES:
            marks = pytest.mark.xfail(
                reason="saves its figure when SMALLFAIR_EXAMPLE_SAVEFIG is set",
                strict=False,
            )
        yield pytest.param(path, id=path.name, marks=marks)


#: The optional libraries a page's examples import (skipped without them).
PAGE_REQUIRES = {
    "data_sources.rst": ("narwhals", "duckdb", "polars", "pyarrow", "dask"),
    "large_data.rst": ("dask", "polars", "pyarrow"),
}
#: Pages whose examples take more than ~10 s (the accuracy tables of the MATCH
#: test's approximations): run with the slow checks.
SLOW_PAGES = {"match_test.rst"}


@pytest.mark.skipif(not PAGES, reason="documentation sources not available")
@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_PAGES else p
        for p in PAGES
    ],
    ids=[p.name for p in PAGES],
)
def test_user_guide_examples(page):
    for module in PAGE_REQUIRES.get(page.name, ()):
        pytest.importorskip(module)
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
        verbose=False,
    )
    assert result.failed == 0, f"{result.failed} example(s) failed in {page.name}"


# -------------------------------------------------------------------------------------
# gallery examples
# -------------------------------------------------------------------------------------
def run_example(path, monkeypatch, figure_dir=None):
    """Run the example script ``path``; return the paths of the figures it showed.

    The script runs in a fresh namespace as ``__main__`` with the Agg backend,
    from ``figure_dir`` (or its own folder) as the working directory. Each call
    of ``plt.show()`` saves the open figures as ``<example>_<k>.png`` in
    ``figure_dir`` (when given) and closes them. scikit-learn's configuration is
    restored afterwards.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    saved = []

    def show(*args, **kwargs):
        for number in plt.get_fignums():
            if figure_dir is not None:
                out = Path(figure_dir) / f"{path.stem}_{len(saved) + 1}.png"
                plt.figure(number).savefig(out, dpi=80)
                saved.append(out)
            else:
                saved.append(None)
        plt.close("all")

    monkeypatch.setattr(plt, "show", show)
    monkeypatch.chdir(figure_dir if figure_dir is not None else path.parent)
    with sklearn.config_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(path), run_name="__main__")
    show()  # figures left open without a plt.show()
    return saved


def _environment_reads(tree):
    """Line numbers of ``os.environ`` / ``os.getenv`` uses in a module's AST."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                lines.append(node.lineno)
    return lines


@pytest.mark.skipif(not EXAMPLES, reason="examples not available")
@pytest.mark.parametrize("example", list(_example_params()))
def test_example_has_no_test_plumbing(example):
    """An example reads no environment variable and saves no figure itself: data
    come from the package's loaders, figures from ``plt.show()``."""
    source = example.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert _environment_reads(tree) == [], (
        f"{example.name} reads the environment (lines "
        f"{_environment_reads(tree)}); locate data with "
        f"sklearn_smallfair.datasets.get_data_home() and leave saving figures "
        f"to the caller"
    )
    assert ".savefig(" not in source, f"{example.name} saves a figure itself"
    assert "plt.show()" in source, f"{example.name} never shows its figure"


@pytest.mark.slow
@pytest.mark.skipif(not EXAMPLES, reason="examples not available")
@pytest.mark.parametrize("name", QUICK_EXAMPLES)
def test_quick_examples_run_and_draw(name, monkeypatch, tmp_path, shared_file):
    path = ROOT / "examples" / name
    if not path.is_file():
        pytest.skip(f"{name} not available")
    if QUICK_EXAMPLES[name] is not None:
        # the example finds the file where the tests do (skip when absent)
        data = shared_file(QUICK_EXAMPLES[name])
        monkeypatch.setenv("SMALLFAIR_DATA", str(data.parent))
    figures = run_example(path, monkeypatch, figure_dir=tmp_path)
    assert figures, f"{name} drew no figure"
    for figure in figures:
        assert figure.is_file() and figure.stat().st_size > 1000
