"""What starting the package and the command imports (structure, not timing:
the times against ``import sklearn`` are in ``benchmarks/bench_startup.py``)."""

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "scipy", "sklearn", "matplotlib", "jinja2", "dask", "polars")


def _loaded_after(code):
    """The heavy modules in ``sys.modules`` after running ``code`` in a fresh
    interpreter."""
    script = (
        f"{code}\nimport sys, json\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_import_loads_no_heavy_module():
    assert _loaded_after("import sklearn_smallfair") == set()


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["audit", "--help"], ["plan", "--help"], ["experiment", "--help"]],
)
def test_help_and_usage_errors_import_neither_pandas_nor_sklearn(argv):
    code = (
        "import contextlib, io\n"
        "from sklearn_smallfair.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        "    assert main(['audit', '--no-such-option']) == 2\n"
    )
    assert _loaded_after(code) == set()


def test_the_audit_does_not_import_matplotlib_until_it_plots():
    loaded = _loaded_after("import sklearn_smallfair.audit")
    assert "matplotlib" not in loaded and {"pandas", "sklearn"} <= loaded


def test_a_command_still_runs_its_work():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sklearn_smallfair",
            "plan",
            "--counts",
            "389,347,1597,4121",
            "--n",
            "30",
            "--effect",
            "-0.1",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "30" in out
