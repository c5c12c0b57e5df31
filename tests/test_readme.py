"""The code examples of README.md run as written.

Every ```python block is executed, in order and in one namespace, in a temporary
working directory; every ```bash block starting with ``smallfair `` is run there
as ``python -m sklearn_smallfair ...`` and must exit with status 0. The
``pip install`` blocks and the other shell blocks are not run.
"""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn

README = Path(__file__).resolve().parent.parent / "README.md"

_BLOCK = re.compile(r"^```(\w+)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _blocks(text):
    """The README's ``(language, code)`` blocks, in order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]


def _runnable_blocks(text):
    """The python blocks and the ``smallfair`` shell commands, in order."""
    runnable = []
    for language, code in _blocks(text):
        if language == "python":
            runnable.append(("python", code))
        elif language == "bash" and code.lstrip().startswith("smallfair "):
            runnable.append(("smallfair", code))
    return runnable


def _smallfair_argv(code):
    """The argument vector of a ``smallfair ...`` shell block."""
    argv = shlex.split(code.replace("\\\n", " "))
    assert argv[0] == "smallfair", code
    return [sys.executable, "-m", "sklearn_smallfair", *argv[1:]]


def test_readme_blocks_are_found():
    blocks = _blocks(README.read_text(encoding="utf-8"))
    languages = [language for language, _ in blocks]
    assert languages.count("python") >= 4
    runnable = _runnable_blocks(README.read_text(encoding="utf-8"))
    assert [kind for kind, _ in runnable].count("smallfair") >= 1
    # the install blocks are not run
    assert not any("pip install" in code for _, code in runnable)


def test_smallfair_argv():
    argv = _smallfair_argv("smallfair audit --csv p.csv \\\n    --group race\n")
    assert argv == [
        sys.executable,
        "-m",
        "sklearn_smallfair",
        "audit",
        "--csv",
        "p.csv",
        "--group",
        "race",
    ]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="needs ruff")
def test_readme_python_blocks_are_self_contained():
    # each block defines every name it uses: no block relies on an earlier one
    for i, (kind, code) in enumerate(_runnable_blocks(README.read_text("utf-8"))):
        if kind != "python":
            continue
        argv = [shutil.which("ruff"), "check", "--isolated", "--select", "F821"]
        argv += ["--stdin-filename", f"readme_block_{i}.py", "-"]
        completed = subprocess.run(
            argv,
            input=code,
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, f"{code}\n{completed.stdout}"


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    runnable = _runnable_blocks(README.read_text(encoding="utf-8"))
    # a README example may change scikit-learn's global configuration
    # (metadata routing): restore it afterwards
    with sklearn.config_context():
        for i, (kind, code) in enumerate(runnable):
            if kind == "python":
                try:
                    exec(
                        compile(code, f"README.md python block {i}", "exec"), namespace
                    )
                except Exception as exc:
                    pytest.fail(f"README python block {i} failed: {exc!r}\n{code}")
            else:
                completed = subprocess.run(
                    _smallfair_argv(code),
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert completed.returncode == 0, (
                    f"README shell block {i} exited with {completed.returncode}:\n"
                    f"{code}\n{completed.stdout}\n{completed.stderr}"
                )
    assert (tmp_path / "report.html").is_file()
    assert (tmp_path / "smallfair_audit_report.html").is_file()
