#!/bin/sh
# Install Layer Studio's menu entry, icons and project file type for the current user.
#
#     packaging/install-desktop.sh [BUNDLE_DIR]      (default: dist/layer-studio)
#
# The bundle stays where it is: the menu entry starts BUNDLE_DIR/layer-studio. Run it again
# after moving the bundle; remove the entry with --uninstall.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data=${XDG_DATA_HOME:-$HOME/.local/share}
sizes="16 32 48 64 128 256 512"

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$data/applications/layer-studio.desktop" "$data/mime/packages/layer-studio.xml" \
        "$data/icons/hicolor/scalable/apps/layer-studio.svg"
    for size in $sizes; do
        rm -f "$data/icons/hicolor/${size}x${size}/apps/layer-studio.png"
    done
    echo "Removed Layer Studio's menu entry and icons from $data"
    exit 0
fi

bundle=$(cd "${1:-$root/dist/layer-studio}" 2>/dev/null && pwd) || {
    echo "No bundle at ${1:-$root/dist/layer-studio}: build it with 'make bundle' first." >&2
    exit 1
}
if [ ! -x "$bundle/layer-studio" ]; then
    echo "$bundle holds no layer-studio executable: build it with 'make bundle' first." >&2
    exit 1
fi

for size in $sizes; do
    mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
    cp "$root/assets/icons/layer-studio-$size.png" "$data/icons/hicolor/${size}x${size}/apps/layer-studio.png"
done
mkdir -p "$data/icons/hicolor/scalable/apps" "$data/applications" "$data/mime/packages"
cp "$root/assets/icon.svg" "$data/icons/hicolor/scalable/apps/layer-studio.svg"
cp "$here/layer-studio-mime.xml" "$data/mime/packages/layer-studio.xml"
sed -e "s|^Exec=layer-studio|Exec=\"$bundle/layer-studio\"|" \
    -e "s|^TryExec=layer-studio|TryExec=$bundle/layer-studio|" \
    "$here/layer-studio.desktop" > "$data/applications/layer-studio.desktop"

# Refresh the desktop's caches where the tools exist (they do on most desktops).
command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
echo "Installed Layer Studio's menu entry ($data/applications/layer-studio.desktop), starting $bundle/layer-studio"
