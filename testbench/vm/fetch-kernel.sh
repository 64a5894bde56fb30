#!/usr/bin/env bash
# Unpacks the guest kernel of the VFIO VM test from Debian's kernel package
# (downloaded with apt, not installed): DIR/vmlinuz and DIR/modules/*.ko for
# the VFIO modules. Idempotent: does nothing when DIR/vmlinuz exists.
# Usage: fetch-kernel.sh DIR
set -euo pipefail
dir=${1:?usage: fetch-kernel.sh DIR}
[ -f "$dir/vmlinuz" ] && exit 0
# linux-image-amd64 is a metapackage; its dependency is the versioned image.
find_pkg() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
pkg=$(find_pkg)
if [ -z "$pkg" ]; then
    # A fresh machine may have no package lists yet.
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    pkg=$(find_pkg)
fi
if [ -z "$pkg" ]; then
    echo "fetch-kernel: apt knows no linux-image-amd64 (run apt-get update?)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work"   # apt downloads as its sandbox user
(cd "$work" && apt-get download -q "$pkg" >/dev/null)
mkdir -p "$work/x"
dpkg-deb --fsys-tarfile "$work"/*.deb | tar -x -C "$work/x" --wildcards \
    './boot/vmlinuz-*' '*/drivers/vfio/*' '*/virt/lib/irqbypass.ko*'
mkdir -p "$dir/modules"
for m in $(find "$work/x" -name '*.ko*'); do
    name=$(basename "$m")
    case "$name" in
        *.ko.xz) xz -dc "$m" > "$dir/modules/${name%.xz}" ;;
        *.ko.zst) zstd -qdc "$m" > "$dir/modules/${name%.zst}" ;;
        *.ko) cp "$m" "$dir/modules/$name" ;;
    esac
done
# vmlinuz last: its presence marks a complete unpack.
cp "$work"/x/boot/vmlinuz-* "$dir/vmlinuz.tmp" && mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
echo "fetch-kernel: $pkg unpacked into $dir"
