#!/usr/bin/env python3
"""Fixture setup of e2e_installed: trainer-cpp installed on the real node as a cluster admin
installs it, with the commands of docs/install.md's (install-jobset) block run as written, in a
copy of deploy/ whose images are set to the ones hack/images/build.sh built (in the overlay
applied, as `kustomize edit set image` sets them) and whose JobSet manifests come from JobSet's Go
module instead of GitHub (tests/integration/deploy/lib.sh). Then: both Deployments and the JobSet controller run as pods;
trainer-webhook (--cert-management) issued the serving certificate into the Secret, injected its
CA into both webhook configurations and serves it; two webhook replicas are Ready behind the
Service; the
controller holds its Lease; docs/install.md's Verify commands pass. Prints how long each step
took.
"""
import base64
import json
import os
import subprocess
import sys
import time

import yaml

import e2e

sys.path.insert(0, os.path.join(e2e.ROOT, "tests", "integration", "deploy"))
sys.path.insert(0, os.path.join(e2e.ROOT, "tests", "docs"))
import docs_test  # noqa: E402  (the guides' parser)
from install_test import documented_blocks  # noqa: E402  (the install guide's tagged blocks)

NS = "kubeflow-system"


def set_images(kustomization, images):
    """What `kustomize edit set image NAME=REF` writes: one images entry per name."""
    with open(kustomization) as f:
        k = yaml.safe_load(f)
    entries = [e for e in k.get("images", []) if e["name"] not in images]
    for name, ref in images.items():
        new_name, new_tag = ref.rsplit(":", 1)
        entries.append({"name": name, "newName": new_name, "newTag": new_tag})
    k["images"] = entries
    # JSON is YAML whose strings are always quoted: a hex tag such as "4870e23456" must not be
    # read back by kustomize as a number.
    with open(kustomization, "w") as f:
        json.dump(k, f, indent=2)


def verify_block():
    """docs/install.md's Verify commands, which only a cluster whose nodes run the images can run."""
    path = os.path.join(e2e.ROOT, "docs", "install.md")
    with open(path) as f:
        blocks = docs_test.parse(path, f.read())
    for b in blocks:
        if b.action == "skip" and "real-node e2e tier" in (b.reason or ""):
            docs_test.parse_console(b, b.line + 1)
            return [c.text for c in b.commands]
    raise AssertionError("docs/install.md has no block for the real-node e2e tier (Verify)")


def run_commands(what, commands, work, env):
    for c in commands:
        print(f"    $ {c}", flush=True)
        deadline = time.time() + 60  # a reader may run before the controller wrote (retried)
        while True:
            p = subprocess.run(["bash", "-o", "pipefail", "-c", c], cwd=work, env=env,
                               capture_output=True, text=True, timeout=300)
            if p.returncode == 0 or time.time() > deadline:
                break
            time.sleep(2)
        if p.returncode != 0:
            sys.exit(f"{what}: `{c}` failed ({p.returncode}):\n{p.stdout}{p.stderr}")
        if p.stdout.strip():
            print("      " + p.stdout.strip().replace("\n", "\n      "), flush=True)


def main():
    e2e.require_machine()
    t0 = time.time()
    env = e2e.e2e_env()
    k = e2e.kubectl()
    work = os.path.join(e2e.e2e_testbed(), "install")
    subprocess.run(["bash", "-c", 'source hack/testbed/lib.sh && source tests/integration/deploy/lib.sh'
                    ' && deploy_tree_with_local_jobset "$1"', "_", work], cwd=e2e.ROOT, check=True)
    # As docs/install.md ("Images") says: in the kustomization that is applied, so JobSet's
    # controller takes its image too.
    set_images(os.path.join(work, "deploy", "overlays", "jobset", "kustomization.yaml"), {
        "trainer-cpp/trainer-webhook": env["TRAINER_WEBHOOK_IMAGE"],
        "trainer-cpp/trainer-controller": env["TRAINER_CONTROLLER_IMAGE"],
        "registry.k8s.io/jobset/jobset": env["TRAINER_JOBSET_IMAGE"]})

    cmd_env = dict(os.environ, KUBECONFIG=k.kubeconfig,
                   PATH=os.path.dirname(k.binary) + os.pathsep + os.environ["PATH"])
    run_commands("install-jobset", documented_blocks()["install-jobset"], work, cmd_env)
    print(f"installed with docs/install.md's (install-jobset) commands in {time.time() - t0:.0f}s",
          flush=True)

    deployments = {"trainer-webhook": 2, "trainer-controller": 1, "jobset-controller-manager": 1}
    for name, want in deployments.items():
        try:
            e2e.wait_for(f"Deployment {name} to have {want} ready replicas", 240, lambda: k.out(
                "get", "deployment", name, "-n", NS, "-o", "jsonpath={.status.readyReplicas}") == str(want))
        except AssertionError:
            print(k.run("get", "pods", "-n", NS, "-o", "wide", check=False).stdout)
            print(k.run("describe", "deployment", name, "-n", NS, check=False).stdout[-3000:])
            print(k.run("logs", "-n", NS, f"deployment/{name}", "--all-containers", "--tail=30",
                        check=False).stdout)
            raise
        images = k.out("get", "deployment", name, "-n", NS, "-o",
                       "jsonpath={.spec.template.spec.containers[*].image}")
        print(f"ok   Deployment {name}: {want} ready ({images})", flush=True)

    secret = k.run("get", "secret", "kubeflow-trainer-webhook-cert", "-n", NS, "-o", "json").stdout
    data = yaml.safe_load(secret)["data"]
    ca = base64.b64decode(data["ca.crt"])
    cert = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName"],
                          input=base64.b64decode(data["tls.crt"]), capture_output=True).stdout.decode()
    assert f"DNS:trainer-webhook.{NS}.svc" in cert, f"the serving certificate names {cert}"
    for kind, name in (("mutatingwebhookconfiguration", "defaulter.trainer.kubeflow.org"),
                       ("validatingwebhookconfiguration", "validator.trainer.kubeflow.org")):
        bundles = k.out("get", kind, name, "-o", "jsonpath={.webhooks[*].clientConfig.caBundle}").split()
        assert bundles and all(base64.b64decode(b) == ca for b in bundles), \
            f"{name}: caBundle is not the Secret's CA"
    served = []
    for pod in k.out("get", "pods", "-n", NS, "-l", "app.kubernetes.io/component=webhook", "-o",
                     "jsonpath={.items[*].metadata.name}").split():
        lines = [json.loads(line) for line in k.out("logs", "-n", NS, pod).splitlines()
                 if line.startswith("{")]
        serving = [x for x in lines if x.get("msg") == "serving certificate"]
        assert serving, f"{pod} logged no certificate it serves (--cert-management)"
        served.append(serving[-1].get("certificate", "")[:19])
    print(f"ok   trainer-webhook issued the certificate for trainer-webhook.{NS}.svc, injected the "
          f"CA into both webhook configurations, and each replica serves it ({', '.join(served)})")
    holder = e2e.wait_for("trainer-controller to hold its Lease", 60, lambda: k.out(
        "get", "lease", "trainer.kubeflow.org", "-n", NS, "-o", "jsonpath={.spec.holderIdentity}"))
    print(f"ok   trainer-controller holds Lease trainer.kubeflow.org ({holder})")
    print("docs/install.md's Verify commands:", flush=True)
    run_commands("Verify", verify_block(), work, cmd_env)
    k.run("delete", "namespace", "demo", "--wait=false", check=False)
    print(f"e2e_install: ready in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
