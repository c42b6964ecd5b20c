"""The core must stay free of Qt so it runs headless, in tests, the CLI and workers."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "studio" / "core"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "qtpy", "superqt", "shiboken6")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_imports_no_qt():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 5
    offenders = {
        f"{path.relative_to(CORE)}: {name}"
        for path in files
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN
    }
    assert not offenders, f"studio/core imports Qt: {sorted(offenders)}"


def test_forbidden_import_is_detected(tmp_path):
    sample = tmp_path / "bad.py"
    sample.write_text("def f():\n    from PySide6.QtCore import QObject\n")
    assert "PySide6.QtCore" in imported_modules(sample)


def test_importing_core_does_not_load_tensorflow():
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys, studio.core\n"
        "modules = [m.name for m in pkgutil.walk_packages(studio.core.__path__, 'studio.core.')]\n"
        "for name in modules:\n"
        "    importlib.import_module(name)\n"
        "print(len(modules), 'tensorflow' in sys.modules, 'keras' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, tensorflow, keras = out.stdout.split()
    assert int(count) == len(list(CORE.rglob("*.py"))) - 1  # all but studio/core/__init__
    assert (tensorflow, keras) == ("False", "False")
