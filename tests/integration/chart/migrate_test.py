#!/usr/bin/env python3
"""hack/migrate-from-upstream-helm.sh on a private test bed, from a release of upstream's chart.

Upstream's chart (charts/kubeflow-trainer of the v2.3.0 module hack/bench/webhook/upstream.sh
builds from) is installed as release kubeflow-trainer, CRDs included, as upstream's README says:
its dependencies left out (jobset.install=false, as helm_test.py installs ours), hooks not run
(no kubelet would run them): its runtimes are applied as its installer Job applies them. No
kubelet runs its manager either: a post-renderer points its webhook configurations at the URL
the test's trainer-webhook will serve (as helm_test.py does for ours), with failurePolicy Ignore
while nothing answers there, and a TrainJob is created through them. The webhook certificate Secret gets a CA, as upstream's
rotator would give it.

Then, as an admin would: `--check` with a values file that sets what this chart refuses
(metrics.secureServing: true) stops before anything changes; the migration runs once with a
`helm install` that fails (no release is left, nothing is lost) and again with the same state
directory, which continues it; the services run as local processes under the new release's
identities (helm_test.py's way). Checked:
  - the CRDs, the runtimes, the TrainJob and the certificate Secret are the same objects (uids),
    the Secret with the same data: nothing was deleted and re-created;
  - Helm lists trainer-cpp only; its manifest holds every object it renders, the runtimes and
    the webhook configurations taken over among them; of upstream's release only the CRDs are
    left; upstream's image values were not carried over;
  - the TrainJob created under upstream gets its JobSet from trainer-controller; a new one is
    admitted, and a bad one denied, by trainer-webhook;
  - a rerun after the migration upgrades the release in place, re-creating nothing;
  - `helm uninstall trainer-cpp` keeps the CRDs and the TrainJobs.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
sys.path.insert(0, HERE)
import testbed  # noqa: E402
import helm_test  # noqa: E402
from helm_test import NS, RELEASE, JOB_NS  # noqa: E402

OLD = "kubeflow-trainer"
CRDS = [f"{c}.trainer.kubeflow.org" for c in
        ("trainjobs", "trainingruntimes", "clustertrainingruntimes")]
# What the admin's upstream values file says (carried over by the script).
UPSTREAM_VALUES = {
    "jobset": {"install": False},
    "image": {"registry": "ghcr.io", "tag": "v2.3.0"},  # upstream's image: must not carry over
    "commonLabels": {"team": "ml-platform"},
    "manager": {"config": {"metrics": {"secureServing": True}}},
    "runtimes": {"torchDistributed": {"enabled": True}},
}



def log(msg):
    print(f"[migrate_test {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def upstream_chart(work):
    """Upstream's chart, copied without its dependencies (JobSet and LWS, both off here)."""
    _, src = testbed.upstream_build()
    dst = os.path.join(work, "kubeflow-trainer")
    shutil.copytree(os.path.join(src, "charts", "kubeflow-trainer"), dst)
    subprocess.run(["chmod", "-R", "u+w", dst], check=True)
    meta_path = os.path.join(dst, "Chart.yaml")
    with open(meta_path) as f:
        meta = yaml.safe_load(f)
    assert meta["version"] == "2.3.0", f"upstream's chart is {meta['version']}"
    meta.pop("dependencies", None)
    with open(meta_path, "w") as f:
        yaml.safe_dump(meta, f)
    return dst


def post_render(s, *args):
    """Helm arguments: the webhook configurations call the test's local trainer-webhook by URL
    (post_render_local.py; args are more of its flags)."""
    out = ["--post-renderer", os.path.join(HERE, "post_render_local.py"),
           "--post-renderer-args", f"--url=https://127.0.0.1:{s.webhook_port}",
           "--post-renderer-args", f"--ca={os.path.join(s.pki, 'ca.crt')}"]
    for a in args:
        out += ["--post-renderer-args", a]
    return out


def uid(k, kind, name, ns=None):
    return k.get(kind, name, ns)["metadata"]["uid"]


def manifest_objects(s, release):
    text = s.helm("get", "manifest", release, "-n", NS)
    return {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(text) if d}


def install_upstream(s, work):
    """Release kubeflow-trainer of upstream's chart, its runtimes applied as its installer Job
    does."""
    chart = upstream_chart(work)
    values = os.path.join(work, "upstream-values.yaml")
    with open(values, "w") as f:
        yaml.safe_dump(UPSTREAM_VALUES, f)
    # Called by URL, as ours will be (no kubelet runs upstream's manager behind its Service), and
    # ignored while nothing answers there.
    s.helm("install", OLD, chart, "-n", NS, "--create-namespace", "-f", values, "--no-hooks",
           *post_render(s, "--failure-policy=Ignore"))
    for crd in CRDS:
        testbed.wait_for(f"upstream's CRD {crd}", lambda c=crd: (testbed.condition(
            s.k.get("crd", c), "Established") or {}).get("status") == "True", timeout=60)
    # Upstream's installer Job: apply the runtimes of its ConfigMap, then label them its own.
    cms = json.loads(s.k.run("get", "configmaps", "-n", NS, "-o", "json").stdout)["items"]
    runtimes = next(c["data"]["runtimes.yaml"] for c in cms
                    if "runtimes.yaml" in (c.get("data") or {}))
    s.k.run("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=runtimes)
    s.k.run("label", "--overwrite", "clustertrainingruntime", "torch-distributed",
            "trainer.kubeflow.org/managed-by=runtimes-installer")


def migrate(s, *args, check=True, helm=None):
    env = dict(s.helm_env, HELM=helm or s.helm_bin, KUBECTL=testbed.kubectl_binary())
    env["PATH"] = os.path.dirname(testbed.kubectl_binary()) + os.pathsep + env["PATH"]
    p = subprocess.run([os.path.join(ROOT, "hack", "migrate-from-upstream-helm.sh"),
                        "--from", OLD, "--to", RELEASE, "-n", NS,
                        "--chart", s.chart, "--state-dir", os.path.join(s.work, "state"), *args],
                       env=env, capture_output=True, text=True, timeout=600)
    log("migrate:\n" + p.stdout + p.stderr)
    if check and p.returncode != 0:
        raise AssertionError(f"migrate-from-upstream-helm.sh failed ({p.returncode})")
    return p


def failing_install_helm(s):
    """A helm that refuses `helm install` (as a release that fails its install would) and
    passes everything else to the real one."""
    path = os.path.join(s.work, "helm-install-fails")
    with open(path, "w") as f:
        f.write("#!/usr/bin/env bash\n"
                "[[ \"$1\" == install ]] && { echo 'helm: install failed (test)' >&2; exit 1; }\n"
                f"exec {s.helm_bin} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def main():
    build_dir = os.environ.get("TRAINER_BUILD_DIR") or os.path.join(ROOT, "build")
    s = helm_test.Setup(build_dir, name="helm-migrate-testbed")
    k = s.k
    services = None
    ok = False
    try:
        # --- upstream's release, as an admin has it
        install_upstream(s, s.work)
        with open(os.path.join(s.pki, "ca.crt")) as f:
            ca = f.read()
        secret = "kubeflow-trainer-webhook-cert"
        k.run("patch", "secret", secret, "-n", NS, "--type=merge", "-p", json.dumps(
            {"stringData": {"ca.crt": ca}}))
        k.run("create", "namespace", JOB_NS)
        p = k.create(helm_test.trainjob("old"))
        assert p.returncode == 0, f"creating a TrainJob under upstream's release: {p.stderr}"
        before = {("crd", c): uid(k, "crd", c) for c in CRDS}
        before[("clustertrainingruntime", "torch-distributed")] = uid(
            k, "clustertrainingruntime", "torch-distributed")
        before[("trainjob", "old")] = uid(k, "trainjob", "old", JOB_NS)
        before[("secret", secret)] = uid(k, "secret", secret, NS)
        old_objects = manifest_objects(s, OLD)
        log(f"upstream's release: {len(old_objects)} objects, a runtime, a TrainJob")

        # --- bad arguments and values this chart refuses stop it before anything changes
        p = subprocess.run([os.path.join(ROOT, "hack", "migrate-from-upstream-helm.sh"), "--to"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "--to needs a value" in p.stderr, \
            f"--to without a value: rc {p.returncode}, {p.stderr}"
        p = migrate(s, "--check", check=False)
        assert p.returncode != 0 and "secureServing" in p.stderr, \
            f"--check with metrics.secureServing=true: rc {p.returncode}, {p.stderr}"
        assert OLD in s.helm("list", "-n", NS, "-q"), "--check changed the releases"
        log("ok: values the chart refuses stop the script before it changes anything")

        # --- the migration: its install fails first, and a rerun continues from the state
        install_args = ["--", "--set", "manager.config.metrics.secureServing=false",
                        *post_render(s)]
        p = migrate(s, *install_args, check=False, helm=failing_install_helm(s))
        assert p.returncode != 0 and "7. helm install" in p.stdout, \
            f"the run whose install fails: rc {p.returncode}, {p.stdout}{p.stderr}"
        assert s.helm("list", "-n", NS, "-q").split() == [], "releases after a failed install"
        assert uid(k, "trainjob", "old", JOB_NS) == before[("trainjob", "old")]
        p = migrate(s, *install_args)
        assert "continuing the migration recorded in" in p.stdout, p.stdout
        log("ok: a failed install leaves no release and loses nothing; a rerun continues")
        releases = s.helm("list", "-n", NS, "-q").split()
        assert releases == [RELEASE], f"Helm releases after the migration: {releases}"
        for (kind, name), want in before.items():
            ns = JOB_NS if kind == "trainjob" else (NS if kind == "secret" else None)
            got = uid(k, kind, name, ns)
            assert got == want, f"{kind}/{name} was re-created ({want} -> {got})"
        data = k.get("secret", secret, NS).get("data") or {}
        assert data.get("ca.crt"), f"the certificate Secret lost its CA: {sorted(data)}"
        new_objects = manifest_objects(s, RELEASE)
        for want in [("ClusterTrainingRuntime", "torch-distributed"),
                     ("MutatingWebhookConfiguration", "defaulter.trainer.kubeflow.org"),
                     ("ValidatingWebhookConfiguration", "validator.trainer.kubeflow.org"),
                     ("Secret", secret)]:
            assert want in new_objects, f"{want} is not in {RELEASE}'s manifest"
        left = []
        for kind, name in sorted(old_objects - new_objects):
            if kind == "CustomResourceDefinition":
                continue
            p = k.run("get", kind.lower(), name, "-n", NS, "--ignore-not-found", "-o", "name",
                      check=False)
            if p.stdout.strip():
                left.append(f"{kind}/{name}")
        assert not left, f"left of upstream's release: {left}"
        images = [c["image"] for d in ("controller", "webhook") for c in k.get(
            "deployment", f"{RELEASE}-{d}", NS)["spec"]["template"]["spec"]["containers"]]
        assert not any(i.startswith("ghcr.io/") or i.endswith(":v2.3.0") for i in images), \
            f"upstream's image values carried over: {images}"
        log(f"ok: {RELEASE} took over: the same CRDs, runtime, TrainJob and Secret; only the "
            "CRDs are left of upstream's release")

        # --- a rerun after success upgrades the release in place and re-creates nothing
        p = migrate(s, *install_args)
        assert "7. helm upgrade" in p.stdout and "8. deleting" not in p.stdout, p.stdout
        assert s.helm("list", "-n", NS, "-q").split() == [RELEASE]
        for (kind, name), want in before.items():
            ns = JOB_NS if kind == "trainjob" else (NS if kind == "secret" else None)
            assert uid(k, kind, name, ns) == want, f"the rerun re-created {kind}/{name}"
        assert manifest_objects(s, RELEASE) == new_objects, "the rerun changed the release"
        log("ok: a rerun after the migration upgrades in place")

        services = helm_test.Services(s)
        testbed.wait_for("the JobSet of the TrainJob created under upstream",
                         lambda: k.get_or_none("jobset", "old", JOB_NS) is not None, timeout=60)
        helm_test.admit(k, "new")
        log("ok: trainer-controller built the old TrainJob's JobSet; trainer-webhook admits "
            "and denies")

        services.stop()
        services = None
        s.helm("uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "120s")
        for c in CRDS:
            assert uid(k, "crd", c) == before[("crd", c)], f"helm uninstall deleted CRD {c}"
        assert uid(k, "trainjob", "old", JOB_NS) == before[("trainjob", "old")]
        log("ok: helm uninstall of the new release keeps the CRDs and TrainJobs")
        ok = True
    finally:
        if services is not None:
            services.stop()
        s.finish(ok)
    print("PASS")


if __name__ == "__main__":
    main()
