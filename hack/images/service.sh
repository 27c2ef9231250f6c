#!/usr/bin/env bash
# The recipe of the trainer-webhook and trainer-controller images: one script that both
# deploy/images/<image>/Dockerfile (in its build stage) and hack/images/build.sh run, so a
# release built with `docker build` and the image the e2e tier tests contain the same files.
#
#   hack/images/service.sh IMAGE BUILD_DIR ROOTFS
#     IMAGE     trainer-webhook | trainer-controller
#     BUILD_DIR a CMake build directory: configured here as Release (-O3, no debug info) if new
#     ROOTFS    written from scratch: the image's whole file system
#
# The root file system holds only what the service runs: its stripped programs in
# /usr/local/bin, the shared libraries they load (the ldd closure, taken from the build
# machine's Debian 12, so Debian's security updates reach the image at the next build), and
# /etc/passwd + /etc/group naming the unprivileged user 65532 (nonroot) the Deployments run as.
# No shell, no package manager, no CA bundle (the services trust the cluster CA they are given).
# Every file is owned by root and read-only to the service.
#
# What each image contains is listed in programs_of below, and only there.
set -euo pipefail

image=${1:?usage: service.sh IMAGE BUILD_DIR ROOTFS}
build_dir=${2:?usage: service.sh IMAGE BUILD_DIR ROOTFS}
rootfs=${3:?usage: service.sh IMAGE BUILD_DIR ROOTFS}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# programs_of IMAGE: "<CMake target or file in the tree>:<path in the image>" per line.
programs_of() {
  case "$1" in
    trainer-webhook)
      # It issues and renews its own certificate in-process (--cert-management, certs/).
      echo "target:trainer-webhook:/usr/local/bin/trainer-webhook"
      ;;
    trainer-controller)
      echo "target:trainer-controller:/usr/local/bin/trainer-controller"
      # An admin previews what a TrainJob will create without building anything (issue 17).
      echo "target:trainer-render:/usr/local/bin/trainer-render"
      ;;
    *) echo "service.sh: unknown image '$1' (want trainer-webhook or trainer-controller)" >&2; return 2 ;;
  esac
}

lines=$(programs_of "$image")
targets=()
while IFS=: read -r kind what _; do
  [[ $kind == target ]] && targets+=("$what")
done <<<"$lines"

# --- Build (Release, only this image's targets) -----------------------------------------------
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$src" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build_dir" -j "${JOBS:-2}" --target "${targets[@]}"

# --- Assemble the root file system ------------------------------------------------------------
rm -rf "$rootfs"
mkdir -p "$rootfs"/{usr/bin,usr/lib,usr/lib64,usr/local/bin,etc,tmp}
# Debian 12's merged /usr: programs and the ELF interpreter (/lib64/ld-linux-x86-64.so.2) are
# found through these links, as on the build machine.
ln -s usr/bin "$rootfs/bin"
ln -s usr/lib "$rootfs/lib"
ln -s usr/lib64 "$rootfs/lib64"

# copy_in SRC DEST: SRC's content (links followed) at DEST in the image.
copy_in() {
  mkdir -p "$rootfs$(dirname "$2")"
  cp -L "$1" "$rootfs$2"
}

# The shared libraries ELF file $1 loads, as the dynamic loader finds them (absolute paths).
libraries_of() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}

elves=()
while IFS=: read -r kind what dest; do
  case "$kind" in
    target)
      copy_in "$build_dir/bin/$what" "$dest"
      strip --strip-unneeded "$rootfs$dest"
      elves+=("$rootfs$dest") ;;
    file) copy_in "$src/$what" "$dest"; chmod 0755 "$rootfs$dest" ;;
    system) copy_in "$what" "$dest"; elves+=("$what") ;;
    data) copy_in "$what" "$dest"; chmod 0644 "$rootfs$dest" ;;
  esac
done <<<"$lines"
for elf in "${elves[@]}"; do
  for lib in $(libraries_of "$elf"); do
    [[ -e "$rootfs$lib" ]] || copy_in "$lib" "$lib"
  done
done

cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
chmod -R go-w "$rootfs"
chmod 1777 "$rootfs/tmp"
echo "service.sh: $image root file system in $rootfs ($(du -sk "$rootfs" | cut -f1) KiB)"
