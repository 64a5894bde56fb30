#!/usr/bin/env bash
# Prepares the kernel-Homa VM test (testbench/tests/homa_vm.rs): a guest kernel
# that HomaModule builds against, its e1000 driver, and HomaModule's homa.ko
# built on this host (out-of-tree, against the kernel's unpacked headers).
#
# Nothing is installed: Debian's packages are downloaded with apt-get and
# unpacked into DIR. HomaModule's main branch needs Linux 6.12 or later;
# bookworm has 6.1, so the kernel comes from bookworm-backports, read through a
# private apt configuration in DIR/apt (the machine's sources are not touched).
#
# HomaModule is pinned to the commit design/WIRE.md describes. Its source comes
# from $HOMA_MODULE_REPO (a git URL or a local clone) when set, else GitHub.
#
# Layout of DIR (default target/homa-vm):
#   vmlinuz, modules/e1000.ko     the guest kernel and its NIC driver
#   homa.ko                       HomaModule, debug info stripped
#   HOMA_COMMIT, KERNEL           what was built, against what
# Idempotent: does nothing when all of these exist for the pinned commit.
# Usage: fetch-homa.sh [DIR]
set -euo pipefail
HOMA_COMMIT=9edb95896ba874dcb64064a51099ae4b38c84617
SUITE=bookworm-backports
dir=${1:-target/homa-vm}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -f "$dir/vmlinuz" ] && [ -f "$dir/homa.ko" ] && [ -f "$dir/modules/e1000.ko" ] \
    && [ "$(cat "$dir/HOMA_COMMIT" 2>/dev/null)" = "$HOMA_COMMIT" ]; then
    exit 0
fi
say() { echo "fetch-homa: $*" >&2; }

# 1. The kernel packages, from a private apt view of $SUITE.
apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
echo "deb http://deb.debian.org/debian $SUITE main" > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root")
if ! apt-get "${apt_opts[@]}" update -qq >/dev/null 2>&1; then
    say "cannot read $SUITE's package list (no network to deb.debian.org?)"
    exit 1
fi
image_pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null \
    | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$image_pkg" ]; then
    say "$SUITE has no linux-image-amd64"
    exit 1
fi
release=${image_pkg#linux-image-}          # e.g. 6.12.95+deb12-amd64
common=${release%-amd64}                   # e.g. 6.12.95+deb12
pkgs=("linux-image-$release-unsigned" "linux-headers-$release" "linux-headers-$common-common" "linux-kbuild-$common")
work=$dir/work
rm -rf "$work" && mkdir -p "$work/debs" "$work/x"
chmod 777 "$work/debs"   # apt downloads as its sandbox user where there is one
say "downloading ${pkgs[*]}"
(cd "$work/debs" && apt-get "${apt_opts[@]}" download -q "${pkgs[@]}" >/dev/null)
for deb in "$work"/debs/linux-headers-* "$work"/debs/linux-kbuild-*; do
    dpkg-deb -x "$deb" "$work/x"
done
dpkg-deb --fsys-tarfile "$work"/debs/linux-image-*.deb | tar -x -C "$work/x" --wildcards \
    './boot/vmlinuz-*' '*/drivers/net/ethernet/intel/e1000/e1000.ko*'
kdir=$work/x/usr/src/linux-headers-$release
# The arch headers' Makefile includes the common part by its installed path.
sed -i "s|include /usr/src/|include $work/x/usr/src/|" "$kdir/Makefile"

# 2. HomaModule at the pinned commit, built against those headers.
src=$dir/HomaModule
repo=${HOMA_MODULE_REPO:-https://github.com/PlatformLab/HomaModule}
if ! git -C "$src" cat-file -e "$HOMA_COMMIT^{commit}" 2>/dev/null; then
    rm -rf "$src"
    say "cloning HomaModule from $repo"
    if ! git clone -q --no-checkout "$repo" "$src"; then
        say "cannot clone $repo (set HOMA_MODULE_REPO to a local clone)"
        exit 1
    fi
fi
git -C "$src" -c advice.detachedHead=false checkout -q --force "$HOMA_COMMIT"
git -C "$src" clean -qfdx
say "building homa.ko ($HOMA_COMMIT) against $release"
# No pahole here: skip the modules' BTF (homa.ko loads without it).
if ! nice -n 15 make -C "$src" KDIR="$kdir" CONFIG_DEBUG_INFO_BTF_MODULES= > "$work/build.log" 2>&1; then
    tail -30 "$work/build.log" >&2
    say "HomaModule does not build against $release (log: $work/build.log)"
    exit 1
fi

# 3. The results; vmlinuz last but one, HOMA_COMMIT last: it marks a complete run.
mkdir -p "$dir/modules"
strip --strip-debug -o "$dir/homa.ko" "$src/homa.ko"
for m in $(find "$work/x" -name 'e1000.ko*'); do
    case "$m" in
        *.ko.xz) xz -dc "$m" > "$dir/modules/e1000.ko" ;;
        *.ko.zst) zstd -qdc "$m" > "$dir/modules/e1000.ko" ;;
        *.ko) cp "$m" "$dir/modules/e1000.ko" ;;
    esac
done
cp "$work"/x/boot/vmlinuz-* "$dir/vmlinuz"
echo "$release" > "$dir/KERNEL"
rm -rf "$work"
echo "$HOMA_COMMIT" > "$dir/HOMA_COMMIT"
say "homa.ko ($HOMA_COMMIT) for $release in $dir"
