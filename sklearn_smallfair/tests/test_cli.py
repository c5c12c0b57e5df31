"""Tests of the ``smallfair`` command."""

import io
import subprocess
import sys

import pytest

from sklearn_smallfair._cli import main


def test_demo_prints_tables():
    out = io.StringIO()
    assert main(["demo"], out=out) == 0
    text = out.getvalue()
    assert "Black" in text and "White, n=12" in text
    assert "tpr_smoothed" in text
    # whole-group COMPAS TPR of Black defendants: 273 / (273 + 170)
    assert "0.616" in text


def test_default_command_is_demo():
    out = io.StringIO()
    assert main([], out=out) == 0
    assert "COMPAS" in out.getvalue()


def test_bad_lam_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--lam", "-1"])
    assert exc.value.code == 2
    assert "--lam must be >= 0" in capsys.readouterr().err


def test_module_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_smallfair", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("smallfair ")
