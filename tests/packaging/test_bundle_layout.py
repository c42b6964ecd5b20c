"""The bundle's layout, icons and desktop entry, checked without building a bundle."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from PIL import Image

from studio.core.project.document import SUFFIX
from tests.packaging.bundle_support import PACKAGING_DIR, bundle_files

FIND_FILES = """
import studio
from studio.core.data.bundled import ASSETS_DIR
from studio.core.project.document import SCHEMA_PATH
from studio.gui.shell.readme_dialog import README
print(studio.__file__)
print(ASSETS_DIR)
print(SCHEMA_PATH.is_file())
print(README.is_file() and (README.parent / "assets/screenshots/main-window.png").is_file())
"""


def test_the_app_finds_its_assets_where_the_bundle_puts_them(tmp_path):
    # PyInstaller's one-folder layout: the studio package and the data files side by side
    # in _internal (sys._MEIPASS), the package's JSON files inside it.
    internal = tmp_path / "layer-studio" / "_internal"
    shutil.copytree(bundle_files.ROOT / "studio", internal / "studio",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for source, folder in bundle_files.data_files():
        (internal / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, internal / folder)
    out = subprocess.run([sys.executable, "-c", FIND_FILES], cwd=tmp_path, check=True,
                         capture_output=True, text=True,
                         env={"PYTHONPATH": str(internal), "PATH": ""}).stdout.splitlines()
    package, assets, schema_found, guide_found = out
    assert package.startswith(str(internal / "studio"))
    assert assets == str(internal / "assets")
    assert (internal / "assets" / "mnist-10k.npz").is_file()
    assert (internal / bundle_files.APP_ICON.relative_to(bundle_files.ROOT)).is_file()
    assert schema_found == "True"
    assert guide_found == "True"  # Help > Layer Studio Guide reads it offline


def test_icons_exist_in_every_size_and_are_drawn():
    for size in bundle_files.ICON_SIZES:
        with Image.open(bundle_files.icon_path(size)) as image:
            assert image.size == (size, size)
            alpha = image.convert("RGBA").getchannel("A")
            assert alpha.getextrema() == (0, 255)  # transparent corners, an opaque body


def test_desktop_entry_starts_the_windowed_executable_on_project_files():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(PACKAGING_DIR / "layer-studio.desktop")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application"
    assert desktop["Exec"].split()[0] == bundle_files.GUI_EXECUTABLE
    assert desktop["Icon"] == "layer-studio"
    assert {"Development", "Education", "Science"} <= set(desktop["Categories"].split(";"))
    mime = ET.parse(PACKAGING_DIR / "layer-studio-mime.xml").getroot()[0]
    assert desktop["MimeType"] == mime.get("type") + ";"
    globs = [node.get("pattern") for node in mime if node.tag.endswith("glob")]
    assert globs == ["*" + SUFFIX]


def test_install_script_installs_the_entry_and_icons_for_the_bundle_and_removes_them(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / bundle_files.GUI_EXECUTABLE).write_text("#!/bin/sh\n")
    (bundle / bundle_files.GUI_EXECUTABLE).chmod(0o755)
    data = tmp_path / "share"
    script = str(PACKAGING_DIR / "install-desktop.sh")
    env = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["sh", script, str(bundle)], env=env, check=True, capture_output=True)
    entry = (data / "applications" / "layer-studio.desktop").read_text()
    assert f'Exec="{bundle}/{bundle_files.GUI_EXECUTABLE}" %f' in entry
    icons = data / "icons" / "hicolor"
    for size in bundle_files.ICON_SIZES:
        assert (icons / f"{size}x{size}" / "apps" / "layer-studio.png").is_file()
    subprocess.run(["sh", script, "--uninstall"], env=env, check=True, capture_output=True)
    assert not (data / "applications" / "layer-studio.desktop").exists()


def test_install_script_says_to_build_the_bundle_first(tmp_path):
    done = subprocess.run(["sh", str(PACKAGING_DIR / "install-desktop.sh"), str(tmp_path / "no")],
                          env={"XDG_DATA_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "make bundle" in done.stderr
    assert not (tmp_path / "applications").exists()
