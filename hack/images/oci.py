#!/usr/bin/env python3
"""Writes a single-layer OCI image archive (the format `ctr images import` and `docker load`
read) from a root file system, without Docker or a registry.

    oci.py --out IMG.tar --name docker.io/trainer-cpp/trainer-webhook --tag dev \
        --rootfs DIR | --layer LAYER.tar  [--user 65532:65532] [--entrypoint '["/x"]']
        [--cmd '[...]'] [--env K=V]... [--workdir /]

--rootfs DIR is packed into a reproducible layer (sorted entries, mtime 0, owned by root), so the
same files give the same digest; --layer takes a tar as it is (mmdebstrap's output). Layers are
stored uncompressed: the archive goes only into a local containerd, where compressing would cost
time on both ends. Prints one JSON line: name, tags, manifest digest, layer size in bytes.
"""
import argparse
import hashlib
import io
import json
import os
import tarfile
import tempfile

LAYER_MEDIA = "application/vnd.oci.image.layer.v1.tar"
CONFIG_MEDIA = "application/vnd.oci.image.config.v1+json"
MANIFEST_MEDIA = "application/vnd.oci.image.manifest.v1+json"
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def pack_rootfs(rootfs, out):
    """A reproducible tar of the directory ROOTFS: sorted, mtime 0, uid/gid 0."""
    def reset(info):
        info.mtime = 0
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                path = os.path.join(dirpath, name)
                arcname = os.path.relpath(path, rootfs)
                tar.add(path, arcname=arcname, recursive=False, filter=reset)


def digest_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest(), os.path.getsize(path)


def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--name", required=True, help="repository, e.g. docker.io/trainer-cpp/x")
    p.add_argument("--tag", action="append", required=True)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--rootfs")
    src.add_argument("--layer")
    p.add_argument("--user", default="")
    p.add_argument("--entrypoint", default="null")
    p.add_argument("--cmd", default="null")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--workdir", default="/")
    a = p.parse_args()

    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.out))) as tmp:
        layer = a.layer
        if a.rootfs:
            layer = os.path.join(tmp, "layer.tar")
            pack_rootfs(a.rootfs, layer)
        layer_digest, layer_size = digest_of(layer)

        env = list(a.env)
        if not any(e.startswith("PATH=") for e in env):
            env.insert(0, DEFAULT_PATH)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"User": a.user, "Env": env, "WorkingDir": a.workdir,
                       "Entrypoint": json.loads(a.entrypoint), "Cmd": json.loads(a.cmd)},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
            "history": [{"created_by": "hack/images/build.sh"}],
        }
        config_digest, config_bytes = blob(json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA,
            "config": {"mediaType": CONFIG_MEDIA, "digest": config_digest,
                       "size": len(config_bytes)},
            "layers": [{"mediaType": LAYER_MEDIA, "digest": layer_digest, "size": layer_size}],
        }
        manifest_digest, manifest_bytes = blob(json.dumps(manifest, sort_keys=True).encode())
        index = {"schemaVersion": 2, "manifests": [
            {"mediaType": MANIFEST_MEDIA, "digest": manifest_digest, "size": len(manifest_bytes),
             "annotations": {"io.containerd.image.name": f"{a.name}:{tag}",
                             "org.opencontainers.image.ref.name": tag}}
            for tag in a.tag]}

        partial = a.out + ".partial"
        with tarfile.open(partial, "w") as tar:
            add_bytes(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
            add_bytes(tar, "index.json", json.dumps(index, sort_keys=True).encode())
            for digest, data in ((config_digest, config_bytes), (manifest_digest, manifest_bytes)):
                add_bytes(tar, "blobs/sha256/" + digest.split(":")[1], data)
            info = tarfile.TarInfo("blobs/sha256/" + layer_digest.split(":")[1])
            info.size = layer_size
            info.mode = 0o644
            with open(layer, "rb") as f:
                tar.addfile(info, f)
        os.replace(partial, a.out)

    print(json.dumps({"name": a.name, "tags": a.tag, "manifest": manifest_digest,
                      "layer": layer_digest, "size": layer_size}))


if __name__ == "__main__":
    main()
