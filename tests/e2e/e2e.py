"""Helpers the e2e tier shares: the machine check, the images built by hack/images/build.sh, the
e2e test bed (a private one with a real node, started by e2e_up.sh) and polling.

Every e2e test starts with `e2e.require_machine()`: a machine that cannot run a real node (not
root) skips the tier with the reason (exit 77, SKIP_RETURN_CODE in tests/e2e/CMakeLists.txt),
except under CI=true, where the same reason fails the test, so CI never skips it silently.
"""
import json
import os
import subprocess
import sys
import tarfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
import testbed  # noqa: E402  (tests/integration/common/py)

SKIP = 77


def require_machine():
    reason = None
    if os.geteuid() != 0:
        reason = "a real node needs root (containerd, kubelet, iptables, the pod bridge)"
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        print(f"e2e: cannot run on this machine: {reason}; CI must run this tier", flush=True)
        sys.exit(1)
    print(f"e2e: SKIPPED: {reason}", flush=True)
    sys.exit(SKIP)


def images():
    """{image: (reference, archive)} of every image, built if missing (cached: about 1 s)."""
    out = subprocess.run([os.path.join(ROOT, "hack", "images", "build.sh"), "--list"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"hack/images/build.sh --list failed:\n{out.stderr}")
    return {i: (r, a) for i, r, a in (line.split() for line in out.stdout.splitlines())}


class Archive:
    """An OCI archive of hack/images/oci.py: its config and its one layer."""

    def __init__(self, path):
        self.tar = tarfile.open(path)
        index = json.load(self.tar.extractfile("index.json"))
        manifest = self._blob(index["manifests"][0]["digest"])
        self.config = self._blob(manifest["config"]["digest"])
        self.layer_digest = manifest["layers"][0]["digest"]
        self.size = manifest["layers"][0]["size"]

    def _blob(self, digest):
        return json.load(self.tar.extractfile("blobs/sha256/" + digest.split(":")[1]))

    def members(self):
        layer = tarfile.open(fileobj=self.tar.extractfile("blobs/sha256/" + self.layer_digest[7:]))
        return {m.name.lstrip("./").lstrip("/") or ".": m for m in layer.getmembers()}

    def extract(self, dest):
        layer = tarfile.open(fileobj=self.tar.extractfile("blobs/sha256/" + self.layer_digest[7:]))
        layer.extractall(dest, numeric_owner=True, filter="fully_trusted")


def wait_for(desc, timeout, fn, interval=0.5):
    """Calls fn until it returns a true value (returned); fails naming desc after timeout s."""
    deadline = time.time() + timeout
    last_error = None
    while time.time() < deadline:
        try:
            value = fn()
            if value:
                return value
        except Exception as e:  # noqa: BLE001 (the last error is part of the failure message)
            last_error = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {desc}"
                         + (f" (last error: {last_error})" if last_error else ""))


def e2e_testbed():
    return os.environ["TESTBED_DIR"]


class Kubectl(testbed.Kubectl):
    """testbed.Kubectl on the e2e test bed, plus out(): stdout of a command that must succeed."""

    def __init__(self):
        super().__init__(e2e_testbed())

    def out(self, *args, stdin=None):
        return self.run(*args, stdin=stdin).stdout.strip()

    def fresh_namespace(self, ns):
        """Deletes NS (a leftover of an earlier run) and creates it again."""
        self.run("delete", "namespace", ns, "--ignore-not-found", "--wait=true")
        self.run("create", "namespace", ns)


def kubectl():
    return Kubectl()


def e2e_env():
    """The e2e test bed's env file (hack/testbed/env plus the images e2e_up.sh loaded)."""
    values = {}
    with open(os.path.join(e2e_testbed(), "env")) as f:
        for line in f:
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].strip().split("=", 1)
                values[k] = v.strip("'")
    return values


if __name__ == "__main__":
    require_machine()  # for shell scripts: exits 77 (skip) or 1 (CI) when the machine cannot
