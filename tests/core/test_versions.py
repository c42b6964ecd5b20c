"""Versions and diagnostics for the About box and a bug report, without loading TensorFlow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from studio.core.base.versions import diagnostics_text, package_versions

ROOT = Path(__file__).resolve().parents[2]


def test_versions_are_read_without_importing_tensorflow():
    script = ("import sys\nfrom studio.core.base.versions import package_versions\n"
              "print(package_versions()['tensorflow'], 'tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.split()
    assert out == [package_versions()["tensorflow"], "False"]
    assert out[0] != "unknown"


def test_diagnostics_name_the_versions_the_devices_and_the_last_error():
    text = diagnostics_text({"layer_studio": "0.1.0", "tensorflow": "2.18.0", "qt": "6.8.1"},
                            "CPU: Test, 4 cores, 8.0 GB. No GPU found.",
                            "Cannot open project: p.studio.json is not a project file.")
    lines = text.splitlines()
    assert lines[:4] == ["Layer Studio diagnostics", "Layer Studio 0.1.0", "TensorFlow 2.18.0",
                         "Qt 6.8.1"]
    assert lines[4].startswith("System: ")
    assert lines[5:] == ["Devices: CPU: Test, 4 cores, 8.0 GB. No GPU found.",
                         "Last error: Cannot open project: p.studio.json is not a project file."]
    assert diagnostics_text({}, "Not known yet.", "").endswith("Last error: none\n")
