"""pytest setup for netra's Python tests: the package comes from python/ of this tree; libnetra from
$NETRA_LIBRARY or the tree's build directory. Without torch or a CUDA device every test is
skipped with a reason that starts with "netra-python-tests skipped" (ctest reports it as skipped)."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

try:
    import torch
except ImportError:
    torch = None


def pytest_collection_modifyitems(config, items):
    reason = None
    if torch is None:
        reason = "netra-python-tests skipped: torch is not installed"
    elif not torch.cuda.is_available():
        reason = "netra-python-tests skipped: no CUDA device"
    if reason:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))
