#!/usr/bin/env bash
# Builds the container images the real node runs, without Docker or a registry, as OCI archives
# cached under ~/.cache/trainer-images, and loads them into the test bed's node.
#
#   hack/images/build.sh [IMAGE...]      build what is missing or changed (default: all), then
#                                        print each image's reference, size and archive
#   hack/images/build.sh --env [IMAGE...]  the same, then print `export VAR=<reference>` lines on
#                                        stdout (progress goes to stderr), e.g.
#                                        eval "$(hack/images/build.sh --env)"
#   hack/images/build.sh --load [IMAGE...] build, then import into the containerd of the node of
#                                        $TESTBED_DIR (hack/testbed/add.sh --node)
#   hack/images/build.sh --list [IMAGE...] build, then print "<image> <reference> <archive>" lines
#
# Images (docs/install.md, "Images", says what each contains):
#   trainer-webhook, trainer-controller  the services, from this checkout: hack/images/service.sh
#                                        (the recipe deploy/images/*/Dockerfile run too) on a
#                                        Release build in <repo>/build-images
#   pause               the node's sandbox image (hack/images/pause/pause.c, static)
#   jobset-controller   the JobSet controller the test bed builds (hack/testbed/build.sh), as
#                       JobSet's own image lays it out (/manager, user 65532)
#   torch               Debian 12 minbase + python3-torch (torchrun on PATH), for training pods
#   openmpi             Debian 12 minbase + OpenMPI, OpenSSH and python3-mpi4py, laid out for
#                       the MPI plugin as upstream's MPI runtimes are (user mpiuser, sshd on 2222)
#
# References are `trainer-cpp/<image>:<12 hex of the content or recipe>`; the two services are
# also tagged `:dev`, the tag deploy/ names, and --load tags torch and openmpi `:bookworm` in the
# node (examples/local/ names that). A service image is rebuilt when its files change;
# the Debian images when their recipe below changes (RECIPE_DEBIAN), not when Debian publishes
# updates: delete ~/.cache/trainer-images/<image> to take those.
# Environment: TRAINER_IMAGES_CACHE (default ~/.cache/trainer-images), IMAGES_BUILD_DIR (default
# <repo>/build-images), TESTBED_DIR (for --load).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/hack/images"

ALL_IMAGES=(pause trainer-webhook trainer-controller jobset-controller torch openmpi)
DEBIAN_SUITE=bookworm
DEBIAN_MIRRORS=("deb http://deb.debian.org/debian $DEBIAN_SUITE main"
  "deb http://deb.debian.org/debian $DEBIAN_SUITE-updates main"
  "deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main")
RECIPE_DEBIAN=1 RECIPE_PAUSE=1 RECIPE_JOBSET=1

CACHE=${TRAINER_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainer-images}
BUILD_DIR=${IMAGES_BUILD_DIR:-$ROOT/build-images}

log() { echo "[images] $*" >&2; }
die() { echo "[images] error: $*" >&2; exit 1; }

mode=build
case "${1:-}" in
  --env) mode=env; shift ;;
  --load) mode=load; shift ;;
  --list) mode=list; shift ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
images=("$@")
((${#images[@]})) || images=("${ALL_IMAGES[@]}")
for i in "${images[@]}"; do
  [[ " ${ALL_IMAGES[*]} " == *" $i "* ]] || die "unknown image '$i' (want: ${ALL_IMAGES[*]})"
done

mkdir -p "$CACHE"

hash12() { sha256sum | cut -c1-12; }

# finish IMAGE KEY ARCHIVE_PRODUCER...: if $CACHE/IMAGE/KEY.tar is missing, runs the producer
# (which must write "$out"); records the reference for IMAGE.
declare -A REF ARCHIVE
finish() {
  local image=$1 key=$2; shift 2
  local dir="$CACHE/$image"
  out="$dir/$key.tar"
  mkdir -p "$dir"
  if [[ ! -f "$out" ]]; then
    # One build of an image at a time (ctest's and a person's may start together); others wait.
    exec 9>"$dir/.lock"
    if ! flock -n 9; then
      log "$image: another build holds $dir/.lock; waiting for it"
      flock 9
    fi
    if [[ ! -f "$out" ]]; then
      local start=$SECONDS
      "$@"
      log "$image: built in $((SECONDS - start))s"
      # Older builds of the image are of no further use.
      find "$dir" -maxdepth 1 -name '*.tar' ! -name "$key.tar" -delete
    fi
    exec 9>&-
  fi
  REF[$image]="trainer-cpp/$image:$key"
  ARCHIVE[$image]=$out
}

oci() { python3 "$HERE/oci.py" "$@" >/dev/null; }

# --- pause ----------------------------------------------------------------------------------
build_pause() {
  local key tmp
  key=$( { cat "$HERE/pause/pause.c"; gcc --version | head -1; echo "recipe $RECIPE_PAUSE"; } | hash12)
  make_pause() {
    tmp=$(mktemp -d)
    mkdir -p "$tmp/rootfs"
    gcc -Os -static -s -o "$tmp/rootfs/pause" "$HERE/pause/pause.c"
    oci --out "$out" --name docker.io/trainer-cpp/pause --tag "$key" --rootfs "$tmp/rootfs" \
      --user 65535:65535 --entrypoint '["/pause"]'
    rm -rf "$tmp"
  }
  finish pause "$key" make_pause
}

# --- trainer-webhook, trainer-controller --------------------------------------------------------
build_service() {
  local image=$1 tmp key
  tmp=$(mktemp -d)
  log "$image: building (Release, $BUILD_DIR) and assembling its root file system"
  "$HERE/service.sh" "$image" "$BUILD_DIR" "$tmp/rootfs" >&2
  key=$(tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/rootfs" -cf - . | hash12)
  make_service() {
    oci --out "$out" --name "docker.io/trainer-cpp/$image" --tag "$key" --tag dev \
      --rootfs "$tmp/rootfs" --user 65532:65532 --entrypoint "[\"/usr/local/bin/$image\"]"
  }
  finish "$image" "$key" make_service
  rm -rf "$tmp"
}

# --- jobset-controller ----------------------------------------------------------------------------
build_jobset() {
  local bin key tmp
  "$ROOT/hack/testbed/build.sh" jobset >&2
  bin="$("$ROOT/hack/testbed/build.sh" --print-bin-dir)/jobset-controller"
  key=$( { sha256sum <"$bin"; echo "recipe $RECIPE_JOBSET"; } | hash12)
  make_jobset() {
    tmp=$(mktemp -d)
    mkdir -p "$tmp/rootfs/etc"
    cp "$bin" "$tmp/rootfs/manager"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
      >"$tmp/rootfs/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$tmp/rootfs/etc/group"
    oci --out "$out" --name docker.io/trainer-cpp/jobset-controller --tag "$key" \
      --rootfs "$tmp/rootfs" --user 65532:65532 --entrypoint '["/manager"]'
    rm -rf "$tmp"
  }
  finish jobset-controller "$key" make_jobset
}

# --- Debian images (mmdebstrap) -----------------------------------------------------------------
# Documentation, manual pages and translations are left out; copyright files stay.
DPKG_EXCLUDES=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*')

# debian_image IMAGE PACKAGES HOOK ENTRY_ARGS...: IMAGE from Debian minbase + PACKAGES
# (comma-separated), HOOK run by mmdebstrap as a customize hook ($1 = the root file system).
debian_image() {
  local image=$1 packages=$2 hook=$3; shift 3
  local key
  key=$( { echo "$DEBIAN_SUITE $packages recipe $RECIPE_DEBIAN"; printf '%s\n' "${DEBIAN_MIRRORS[@]}" \
    "${DPKG_EXCLUDES[@]}" "$hook" "$@"; } | hash12)
  make_debian() {
    command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (hack/install-deps.sh installs it)"
    local tmp
    tmp=$(mktemp -d "$CACHE/.build.XXXXXX")
    log "$image: mmdebstrap $DEBIAN_SUITE minbase + $packages (cold: minutes, mostly downloads)"
    mmdebstrap --variant=minbase --mode=root --include="$packages" "${DPKG_EXCLUDES[@]}" \
      --customize-hook="$hook" "$DEBIAN_SUITE" "$tmp/rootfs.tar" "${DEBIAN_MIRRORS[@]}" \
      >"$tmp/mmdebstrap.log" 2>&1 &
    local pid=$! start=$SECONDS next=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
      sleep 1
      if ((SECONDS >= next)) && kill -0 "$pid" 2>/dev/null; then
        log "  ... still building $image ($((SECONDS - start))s; $(tail -n 1 "$tmp/mmdebstrap.log" | cut -c1-60))"
        next=$((next + 30))
      fi
    done
    if ! wait "$pid"; then
      tail -n 20 "$tmp/mmdebstrap.log" >&2
      rm -rf "$tmp"
      die "mmdebstrap failed for $image"
    fi
    oci --out "$out" --name "docker.io/trainer-cpp/$image" --tag "$key" --layer "$tmp/rootfs.tar" "$@"
    rm -rf "$tmp"
  }
  finish "$image" "$key" make_debian
}

build_torch() {
  # torchrun is Debian's own /usr/bin/torchrun (python3 -m torch.distributed.run). Debian 12's
  # torch 1.13 on Python 3.11 breaks it: Std.from_str iterates an IntFlag, which yields no alias
  # members (NONE = 0, ALL = 3) on 3.11, so the default "--redirects 0 --tee 0" become None and
  # every torchrun fails in start_processes. The hook makes it look the members up by name, as
  # later torch releases do.
  local hook='set -e
f="$1/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py"
grep -q "for s in Std:" "$f"
sed -i "s/for s in Std:/for s in Std.__members__.values():/" "$f"
test -x "$1/usr/bin/torchrun"'
  debian_image torch python3-torch "$hook" \
    --env PYTHONUNBUFFERED=1 --cmd '["python3"]'
}

build_openmpi() {
  # As upstream's MPI runtimes expect (mpi-operator's base image): a user mpiuser (uid 1000) whose
  # sshd runs unprivileged on port 2222 from ~/.sshd_config, with the SSH key pair the MPI plugin
  # mounts at ~/.ssh as its host key; the ssh client goes to port 2222 and accepts the pods' keys
  # (their names are new each run). Host keys generated at install are removed: an image holds
  # no private key.
  local hook='set -e
chroot "$1" useradd --create-home --uid 1000 --shell /bin/bash mpiuser
printf "Port 2222\nPidFile /home/mpiuser/sshd.pid\nHostKey /home/mpiuser/.ssh/id_rsa\nStrictModes no\n" >"$1/home/mpiuser/.sshd_config"
chroot "$1" chown mpiuser:mpiuser /home/mpiuser/.sshd_config
printf "Host *\n    Port 2222\n    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null\n    LogLevel ERROR\n" >"$1/etc/ssh/ssh_config.d/trainer-mpi.conf"
rm -f "$1"/etc/ssh/ssh_host_*'
  debian_image openmpi openmpi-bin,openssh-server,openssh-client,python3-mpi4py "$hook" \
    --env PYTHONUNBUFFERED=1 --env OMPI_MCA_btl_vader_single_copy_mechanism=none \
    --workdir /home/mpiuser --cmd '["/bin/bash"]'
}

# --- Main --------------------------------------------------------------------------------------
for image in "${images[@]}"; do
  case "$image" in
    pause) build_pause ;;
    trainer-webhook|trainer-controller) build_service "$image" ;;
    jobset-controller) build_jobset ;;
    torch) build_torch ;;
    openmpi) build_openmpi ;;
  esac
done

env_name() {
  case "$1" in
    pause) echo TRAINER_PAUSE_IMAGE ;;
    trainer-webhook) echo TRAINER_WEBHOOK_IMAGE ;;
    trainer-controller) echo TRAINER_CONTROLLER_IMAGE ;;
    jobset-controller) echo TRAINER_JOBSET_IMAGE ;;
    torch) echo TRAINER_TORCH_IMAGE ;;
    openmpi) echo TRAINER_MPI_IMAGE ;;
  esac
}

for image in "${images[@]}"; do
  size=$(python3 -c 'import json,sys,tarfile
t = tarfile.open(sys.argv[1])
idx = json.load(t.extractfile("index.json"))
m = json.load(t.extractfile("blobs/sha256/" + idx["manifests"][0]["digest"][7:]))
print(m["layers"][0]["size"])' "${ARCHIVE[$image]}")
  log "$(printf '%-19s %-44s %s  %s' "$image" "${REF[$image]}" \
    "$(awk -v b="$size" 'BEGIN { printf "%7.1f MiB", b / 1048576 }')" "${ARCHIVE[$image]}")"
done

case "$mode" in
  list)
    for image in "${images[@]}"; do echo "$image ${REF[$image]} ${ARCHIVE[$image]}"; done ;;
  env)
    for image in "${images[@]}"; do echo "export $(env_name "$image")='${REF[$image]}'"; done ;;
  load)
    source "$ROOT/hack/testbed/lib.sh"
    sock="$TESTBED_DIR/node/containerd/containerd.sock"
    [[ -S "$sock" ]] || die "no node in $TESTBED_DIR (start one with hack/testbed/add.sh --node)"
    for image in "${images[@]}"; do
      start=$SECONDS
      ctr --address "$sock" --namespace k8s.io images import "${ARCHIVE[$image]}" >/dev/null
      # The Debian images also under a stable tag, which examples/local/ can name.
      if [[ $image == torch || $image == openmpi ]]; then
        ctr --address "$sock" --namespace k8s.io images tag --force "docker.io/${REF[$image]}" \
          "docker.io/trainer-cpp/$image:$DEBIAN_SUITE" >/dev/null
      fi
      log "loaded ${REF[$image]} into the node in $((SECONDS - start))s"
    done ;;
esac
