"""Sphinx configuration for sklearn-smallfair."""

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Document the source tree even when the package is not installed.
sys.path.insert(0, str(ROOT))
# Local Sphinx extensions (the metric catalogue table of the user guide).
sys.path.insert(0, str(HERE / "sphinxext"))
os.environ.setdefault("MPLBACKEND", "Agg")

try:
    import sklearn_smallfair

    release = sklearn_smallfair.__version__
except Exception:  # pragma: no cover - documentation build without the package
    release = "0.1.0.dev0"
version = ".".join(release.split(".")[:2])

# -- Project information ------------------------------------------------------

project = "sklearn-smallfair"
author = "the sklearn-smallfair developers"
copyright = "2026, the sklearn-smallfair developers"

# -- General configuration ----------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "metric_catalogue",
]

# The gallery is built from ../examples when that folder exists.
EXAMPLES_DIR = ROOT / "examples"
HAVE_GALLERY = (
    importlib.util.find_spec("sphinx_gallery") is not None and EXAMPLES_DIR.is_dir()
)
if HAVE_GALLERY:
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": "../examples",
        "gallery_dirs": "auto_examples",
        "filename_pattern": "/plot_",
        "backreferences_dir": "gen_modules/backreferences",
        "doc_module": ("sklearn_smallfair",),
        "reference_url": {"sklearn_smallfair": None},
        "remove_config_comments": True,
        "plot_gallery": "True",
    }

templates_path = ["_templates"] if (HERE / "_templates").is_dir() else []
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "sg_execution_times.rst"]
if not HAVE_GALLERY:
    exclude_patterns.append("auto_examples")

root_doc = "index"
default_role = "obj"

# -- autodoc / autosummary / numpydoc -----------------------------------------

autosummary_generate = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# -- HTML output --------------------------------------------------------------

if importlib.util.find_spec("pydata_sphinx_theme") is not None:
    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
    }
else:
    html_theme = "alabaster"
    html_theme_options = {}

html_title = f"sklearn-smallfair {release}"
html_static_path = ["_static"] if (HERE / "_static").is_dir() else []
