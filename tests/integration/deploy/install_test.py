#!/usr/bin/env python3
"""Installs trainer-cpp from nothing on a fresh private test bed with exactly the commands
docs/install.md shows, then upgrades, uninstalls keeping TrainJobs, reinstalls with JobSet and
uninstalls everything, checking the cluster after each step.

The commands are read from docs/install.md: every block whose marker says
`skip: tests/integration/deploy/install_test.py runs this ... (<tag>)` (the docs harness skips
them; this test runs them), and the README's install block must be the same commands as the
(install) block. They run in bash from a directory holding a copy of deploy/ whose JobSet
manifests come from JobSet's Go module instead of GitHub (lib.sh says why; nothing else differs)
and examples/, with the test bed's kubectl on PATH.

The test bed is private (`up.sh --no-crds`: no CRD at all, no JobSet), in
$TRAINER_BUILD_DIR/install-testbed, and stopped at the end. It runs no kubelet, so the
Deployments' pods never start; to create a TrainJob through admission, trainer-webhook runs as a
local process under the ServiceAccount the install created, and the installed webhook
configurations are pointed at it (as hack/run-local.sh does).
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import docs_test  # noqa: E402  (the guides' parser)
import testbed  # noqa: E402

import yaml  # noqa: E402

MARKER = re.compile(r"^tests/integration/deploy/install_test\.py runs this.*\((?P<tag>[\w-]+)\)$")
NS = "kubeflow-system"
TRAINER_CRDS = ["trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
                "clustertrainingruntimes.trainer.kubeflow.org"]


def log(msg):
    print(f"[install_test {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def documented_blocks():
    """tag -> list of commands, from docs/install.md."""
    path = os.path.join(ROOT, "docs", "install.md")
    with open(path) as f:
        blocks = docs_test.parse(path, f.read())
    out = {}
    for b in blocks:
        m = MARKER.match(b.reason or "")
        if b.action != "skip" or not m:
            continue
        docs_test.parse_console(b, b.line + 1)
        out[m.group("tag")] = [c.text for c in b.commands]
    return out


def readme_install_commands():
    with open(os.path.join(ROOT, "README.md")) as f:
        lines = f.read().split("\n")
    i = lines.index("<!-- install-test: install -->")
    assert lines[i + 1].startswith("```"), "README: the install marker is not before a fence"
    cmds = []
    for line in lines[i + 2:]:
        if line.startswith("```"):
            return cmds
        cmds.append(line)
    raise AssertionError("README: unterminated install block")


class Bed:
    """A private test bed and the directory the documented commands run in."""

    def __init__(self, build_dir):
        self.dir = os.path.join(build_dir, "install-testbed")
        self.env = dict(os.environ, TESTBED_DIR=self.dir)
        self.down()
        log(f"starting a fresh test bed in {self.dir} (no CRDs)")
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "up.sh"), "--no-crds"],
                       env=self.env, check=True, stdout=subprocess.DEVNULL)
        self.k = testbed.Kubectl(self.dir)
        self.work = tempfile.mkdtemp(prefix="install-test-")
        subprocess.run(["bash", "-c", 'source hack/testbed/lib.sh && '
                        'source tests/integration/deploy/lib.sh && '
                        'deploy_tree_with_local_jobset "$1"', "_", self.work],
                       cwd=ROOT, env=self.env, check=True)
        bin_dir = os.path.dirname(self.k.binary)
        self.cmd_env = dict(os.environ, KUBECONFIG=self.k.kubeconfig,
                            PATH=bin_dir + os.pathsep + os.environ["PATH"])

    def run_block(self, tag, cmds, rewrite=None):
        log(f"running the documented block ({tag})")
        for c in cmds:
            c = rewrite(c) if rewrite else c
            print(f"    $ {c}", flush=True)
            p = subprocess.run(["bash", "-o", "pipefail", "-c", c], cwd=self.work,
                               env=self.cmd_env, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                raise AssertionError(f"({tag}) `{c}` failed ({p.returncode}):\n{p.stdout}{p.stderr}")

    def render(self, path):
        p = self.k.run("kustomize", os.path.join(self.work, path))
        return [d for d in yaml.load_all(p.stdout, Loader=yaml.CSafeLoader) if d]

    def down(self):
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "down.sh")], env=self.env,
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ref(obj):
    m = obj["metadata"]
    return (obj["kind"], m.get("namespace", ""), m["name"])


def live(k, obj):
    """The object as stored, or None."""
    kind, ns, name = ref(obj)
    api = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    resource = f"{kind.lower()}.{api}" if api else kind.lower()
    args = ["get", resource, name, "-o", "json", "--ignore-not-found"]
    if ns:
        args += ["-n", ns]
    p = k.run(*args, check=False)
    if p.returncode != 0:
        if "the server doesn't have a resource type" in p.stderr:
            return None  # its CRD is gone
        raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr.strip()}")
    return json.loads(p.stdout) if p.stdout.strip() else None


def check_installed(k, objs, what):
    """Every object exists and carries the part-of label; returns uid by ref."""
    uids, missing, unlabelled = {}, [], []
    for o in objs:
        got = live(k, o)
        if got is None:
            missing.append(ref(o))
            continue
        uids[ref(o)] = got["metadata"]["uid"]
        if (got["metadata"].get("labels") or {}).get("app.kubernetes.io/part-of") != "trainer-cpp":
            unlabelled.append(ref(o))
    assert not missing, f"{what}: not installed: {missing}"
    assert not unlabelled, f"{what}: without app.kubernetes.io/part-of=trainer-cpp: {unlabelled}"
    log(f"ok: {what}: all {len(objs)} objects installed and labelled part-of")
    return uids


def crd_established(k, name):
    out = k.run("get", "crd", name, "-o",
                'jsonpath={.status.conditions[?(@.type=="Established")].status}', check=False)
    return out.returncode == 0 and out.stdout == "True"


def kept(obj):
    labels = obj["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/component") in ("crd", "namespace")


def point_webhooks_at(k, port, ca):
    """The installed webhook configurations call https://127.0.0.1:port instead of the Service."""
    with open(ca, "rb") as f:
        bundle = base64.b64encode(f.read()).decode()
    for kind, name in (("mutatingwebhookconfiguration", "defaulter.trainer.kubeflow.org"),
                       ("validatingwebhookconfiguration", "validator.trainer.kubeflow.org")):
        cfg = json.loads(k.run("get", kind, name, "-o", "json").stdout)
        ops = []
        for i, w in enumerate(cfg["webhooks"]):
            path = w["clientConfig"]["service"]["path"]
            ops.append({"op": "replace", "path": f"/webhooks/{i}/clientConfig",
                        "value": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}})
        k.run("patch", kind, name, "--type=json", "-p", json.dumps(ops))


def admitted_trainjob(k, work):
    """Runs trainer-webhook as its installed ServiceAccount, points the webhooks at it, and
    creates a TrainJob through admission. Returns the TrainJob's uid."""
    kc = testbed.service_account_kubeconfig(k, NS, "trainer-webhook",
                                            os.path.join(work, "trainer-webhook.kubeconfig"))
    os.makedirs(os.path.join(work, "webhook"))
    wh = testbed.Webhook(k, os.path.join(work, "webhook"), kubeconfig=kc)
    try:
        assert wh.probe("/readyz")[0] == 200, "trainer-webhook not ready:\n" + wh.tail_log()
        point_webhooks_at(k, wh.port, wh.ca)
        k.run("create", "namespace", "install-test")
        with open(os.path.join(ROOT, "examples", "trainjobs", "torch-distributed.yaml")) as f:
            job = yaml.safe_load(f)
        job["metadata"]["namespace"] = "install-test"
        # A TrainJob of a runtime that does not exist: only trainer-webhook denies it, so its
        # denial shows the apiserver calls the installed configurations (it picks up their change
        # asynchronously, hence the retries).
        bad = json.loads(json.dumps(job))
        bad["metadata"]["name"] = "no-runtime"
        bad["spec"]["runtimeRef"]["name"] = "no-such-runtime"
        deadline = time.time() + 30
        while True:
            p = k.create(bad, "--dry-run=server")
            if p.returncode != 0 and "denied the request" in p.stderr:
                break
            if time.time() > deadline:
                raise AssertionError("the installed webhook configurations do not call "
                                     f"trainer-webhook: {p.stdout}{p.stderr}\n{wh.tail_log()}")
            time.sleep(0.5)
        p = k.create(job)
        assert p.returncode == 0, f"creating a TrainJob failed: {p.stderr}\n{wh.tail_log()}"
        got = k.get("trainjob", "torch-distributed", "install-test")
        log("ok: trainer-webhook, running as the installed ServiceAccount, denied a TrainJob of a "
            "missing runtime and admitted one of torch-distributed")
        return got["metadata"]["uid"]
    finally:
        wh.stop()


def controller_names_missing_jobset(k, work):
    """trainer-controller, as its installed ServiceAccount on a cluster without JobSet, stays not
    ready and says why in plain words: its /readyz check and its log name the JobSet CRD."""
    kc = testbed.service_account_kubeconfig(k, NS, "trainer-controller",
                                            os.path.join(work, "trainer-controller.kubeconfig"))
    ctl = testbed.Controller(kubeconfig=kc, log_dir=work, wait_ready=False)
    try:
        want = "JobSet is not installed: the CRD jobsets.jobset.x-k8s.io is missing"
        url = f"http://127.0.0.1:{ctl.health}/readyz"

        def names_jobset():
            status, body = testbed.http_get(url + "/readyz")
            return status == 500 and want in body

        testbed.wait_for("/readyz/readyz naming the missing JobSet CRD", names_jobset)
        assert testbed.http_get(url)[0] == 500, "/readyz is not 500 without JobSet"
        with open(ctl.log_path) as f:
            logged = f.read()
        assert want in logged and "deploy/overlays/jobset" in logged, (
            "the controller's log does not name the missing JobSet CRD:\n" + logged[-3000:])
        log("ok: without JobSet, trainer-controller is not ready and its /readyz and log say "
            "the JobSet CRD is missing")
    finally:
        ctl.stop()


def main():
    build_dir = os.environ.get("TRAINER_BUILD_DIR") or os.path.join(ROOT, "build")
    blocks = documented_blocks()
    want = {"install", "install-jobset", "upgrade", "uninstall-keep", "uninstall-all"}
    assert want <= set(blocks), f"docs/install.md: missing blocks {sorted(want - set(blocks))}"
    assert readme_install_commands() == blocks["install"], (
        "README.md's install block differs from docs/install.md's (install) block:\n"
        f"{readme_install_commands()}\n{blocks['install']}")
    log("ok: README.md shows the same install commands as docs/install.md")

    bed = Bed(build_dir)
    k = bed.k
    ok = False
    try:
        core = bed.render("deploy")
        runtimes = bed.render("deploy/runtimes")
        with_jobset = bed.render("deploy/overlays/jobset")

        # 1. From nothing: the documented install.
        bed.run_block("install", blocks["install"])
        for crd in TRAINER_CRDS:
            assert crd_established(k, crd), f"CRD {crd} is not Established"
        uids = check_installed(k, core + runtimes, "install")

        # 2. Upgrade: the same objects, none re-created.
        bed.run_block("upgrade", blocks["upgrade"])
        again = check_installed(k, core + runtimes, "upgrade")
        recreated = [r for r, u in uids.items() if again.get(r) != u]
        assert not recreated, f"upgrade re-created {recreated}"
        log("ok: upgrade re-created nothing")
        controller_names_missing_jobset(k, bed.work)

        # 3. A TrainJob through admission, then uninstall keeping TrainJobs.
        tj_uid = admitted_trainjob(k, bed.work)
        bed.run_block("uninstall-keep", blocks["uninstall-keep"])
        left = [ref(o) for o in core if not kept(o) and live(k, o) is not None]
        assert not left, f"uninstall-keep left {left}"
        gone = [ref(o) for o in core + runtimes if kept(o) or o["kind"] == "ClusterTrainingRuntime"
                if live(k, o) is None]
        assert not gone, f"uninstall-keep removed {gone}"
        got = k.get("trainjob", "torch-distributed", "install-test")
        assert got["metadata"]["uid"] == tj_uid, "the TrainJob was re-created"
        log("ok: uninstall-keep removed the services, kept the CRDs, runtimes, namespace, TrainJob")

        # 4. Reinstall, this time with JobSet (the cluster has none): the TrainJob stays.
        bed.run_block("install-jobset", blocks["install-jobset"])
        assert crd_established(k, "jobsets.jobset.x-k8s.io"), "the JobSet CRD is not Established"
        check_installed(k, with_jobset + runtimes, "install-jobset")
        assert k.get("trainjob", "torch-distributed", "install-test")["metadata"]["uid"] == tj_uid
        log("ok: reinstalled with JobSet; the TrainJob is the same object")

        # The uninstall that keeps TrainJobs, for the JobSet overlay as install.md says: the JobSet
        # CRD stays, the JobSet controller goes.
        bed.run_block("uninstall-keep (jobset)", blocks["uninstall-keep"],
                      rewrite=lambda c: c.replace("-k deploy/ ", "-k deploy/overlays/jobset "))
        assert crd_established(k, "jobsets.jobset.x-k8s.io"), "uninstall-keep removed the JobSet CRD"
        left = [ref(o) for o in with_jobset if not kept(o) and live(k, o) is not None]
        assert not left, f"uninstall-keep (jobset) left {left}"
        log("ok: uninstall-keep with JobSet kept the JobSet CRD and removed its controller")

        # 5. Everything, TrainJobs included.
        bed.run_block("install", blocks["install"])
        bed.run_block("uninstall-all", blocks["uninstall-all"])
        testbed.wait_for("the trainer CRDs to go",
                         lambda: all(live(k, {"apiVersion": "apiextensions.k8s.io/v1",
                                              "kind": "CustomResourceDefinition",
                                              "metadata": {"name": c}}) is None
                                     for c in TRAINER_CRDS), timeout=60)
        left = [ref(o) for o in core + runtimes
                if o["kind"] != "Namespace" and live(k, o) is not None]
        assert not left, f"uninstall-all left {left}"
        log("ok: uninstall-all removed everything, the TrainJobs with their CRD")
        ok = True
    finally:
        if not ok:
            kept_logs = os.path.join(build_dir, "install-testbed-logs")
            shutil.rmtree(kept_logs, ignore_errors=True)
            shutil.copytree(os.path.join(bed.dir, "logs"), kept_logs, dirs_exist_ok=True)
            print(f"test bed logs copied to {kept_logs}", file=sys.stderr)
        bed.down()
        shutil.rmtree(bed.work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
