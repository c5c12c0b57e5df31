"""Print pip pins for the declared minimum versions of the core dependencies.

With ``--test-requirements``, print instead the ``test`` extra's requirements, one
per line, without those that cannot be installed beside the minimum versions
(fairlearn's parity tests need a newer scikit-learn and pandas than the package's
floors, and PySpark a newer pandas: they run at the current versions and skip at
the minimum ones).

Reads ``[project].dependencies`` of ``pyproject.toml``: a floor ``name>=X.Y.Z`` is
pinned exactly, a floor ``name>=X.Y`` to its series ``name==X.Y.*`` (the newest
patch release of the declared minor version); and the floors of ``pyarrow`` and
``polars`` in the ``test`` extra, whose newest releases need NumPy 2.
"""

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

root = Path(__file__).resolve().parents[1]
project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
#: Test requirements left out at the minimum versions.
NOT_AT_MINIMUM = ("fairlearn", "pyspark")
if "--test-requirements" in sys.argv[1:]:
    for requirement in project["optional-dependencies"]["test"]:
        name = re.split(r"[\[<>=!~ ]", requirement.strip(), maxsplit=1)[0]
        if name.lower() not in NOT_AT_MINIMUM:
            print(requirement)
    sys.exit(0)
pins = []
for requirement in project["dependencies"]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([0-9.]+)\s*", requirement)
    if match is None:
        sys.exit(f"cannot read a floor in the dependency {requirement!r}")
    name, floor = match.groups()
    name = name.split("[")[0]
    parts = floor.split(".")
    pins.append(f"{name}=={floor}" if len(parts) >= 3 else f"{name}=={floor}.*")
# the data libraries of the test extra whose floors the package declares: their
# newest releases need NumPy 2, so the floors are tested with the oldest NumPy
for requirement in project["optional-dependencies"]["test"]:
    match = re.fullmatch(r"\s*(pyarrow|polars)\s*>=\s*([0-9.]+)\s*", requirement)
    if match is not None:
        name, floor = match.groups()
        exact = floor.count(".") >= 2
        pins.append(f"{name}=={floor}" if exact else f"{name}=={floor}.*")
print(" ".join(pins))
