"""Where the tests find the shared reference data (``../shared/data`` beside the
checkout), and skip markers for tests that need one of its files."""

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
COMPAS = SHARED / "compas-scores-two-years.csv"
GERMAN = SHARED / "german.data"
JIRA = SHARED / "jirasoftware_filtered.csv"
PUBLISHED = SHARED / "published_group_confusion_matrices.csv"


def needs_file(path, what):
    """Skip marker for a test that reads the shared file ``path``."""
    return pytest.mark.skipif(
        not path.exists(), reason=f"shared {what} data not available"
    )


needs_compas = needs_file(COMPAS, "COMPAS")
needs_german = needs_file(GERMAN, "German credit")
