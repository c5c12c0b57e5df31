"""The user guide's examples are doctests: run them (skipped outside a checkout)."""

import doctest
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "doc"
GUIDE = DOC / "user_guide"
PAGES = (
    sorted(GUIDE.glob("*.rst")) + sorted(DOC.glob("getting_started.rst"))
    if GUIDE.is_dir()
    else []
)


@pytest.mark.skipif(not PAGES, reason="documentation sources not available")
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_user_guide_examples(page):
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
        verbose=False,
    )
    assert result.failed == 0, f"{result.failed} example(s) failed in {page.name}"
