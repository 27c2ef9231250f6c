#!/usr/bin/env python3
"""Integration test of trainer-webhook against the test bed's kube-apiserver (admission over TLS).

1. Applies deploy/crds, starts trainer-webhook (cert dir laid out like a Secret volume, signed by
   the test bed CA; its kubeconfig) and waits for /readyz.
2. Registers the four webhooks by URL (the shipped deploy/base/webhook/webhook-configurations.yaml
   via hack/testbed/webhooks.py), scoped to this test: TrainJobs and TrainingRuntimes in a namespace
   labelled for it, ClusterTrainingRuntimes carrying its label, so tests sharing the test bed are
   not affected.
3. Checks through kubectl what users see: denials (403 Forbidden, upstream's texts), warnings,
   runtimePatches time defaulting, podTemplateOverrides translation, server-side dry run, the
   objectSelector opt-out, UPDATE rules, a certificate rotation under a stream of creates with
   zero failures, and /metrics (controller-runtime families, promtool-clean).

Environment: TESTBED_DIR (kubeconfig, pki/), TRAINER_BIN_DIR (trainer-webhook), optional KUBECTL.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
import testbed  # noqa: E402
from testbed import http_get, sign_cert  # noqa: E402

RUN_ID = f"{os.getpid()}"
NS = f"webhook-test-{RUN_ID}"
LABEL = "trainer-cpp.webhook-test/run"
VALIDATE_TJ = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

failures = []


def check(cond, what):
    if cond:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}")
        failures.append(what)


def runtime(kind, name, labels=None, replicas=1, container="node"):
    md = {"name": name, "labels": {LABEL: RUN_ID, **(labels or {})}}
    if kind == "TrainingRuntime":
        md["namespace"] = NS
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": md,
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "template": {"spec": {"replicatedJobs": [{
                         "name": "node", "replicas": replicas,
                         "template": {"metadata": {"labels": {
                             "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                             "spec": {"template": {"spec": {"containers": [
                                 {"name": container, "image": "pytorch/pytorch"}]}}}}}]}}}}


def trainjob(name, runtime_name, kind="ClusterTrainingRuntime", **spec):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"runtimeRef": {"name": runtime_name, "kind": kind}, **spec}}


def main():
    tb = testbed.testbed_dir()
    binary = os.path.join(testbed.bin_dir(), "trainer-webhook")
    ca = os.path.join(tb, "pki", "ca.crt")
    for path in (os.path.join(tb, "kubeconfig"), binary, ca):
        if not os.path.exists(path):
            sys.exit(f"webhook test: missing {path}")
    k = testbed.Kubectl(tb)
    testbed.install_trainer_crds(k, manager="webhook-test")

    work = tempfile.mkdtemp(prefix="webhook-it-")
    wh = testbed.Webhook(k, work)
    pki, port, metrics_port, proc, certs = wh.pki, wh.port, wh.metrics_port, wh.proc, wh.certs
    try:
        check(wh.probe("/readyz") == (200, "ok"), "/readyz ok")
        check(wh.probe("/healthz") == (200, "ok"), "/healthz ok")

        k.run("create", "namespace", NS)
        k.run("label", "namespace", NS, f"{LABEL}={RUN_ID}")
        wh.register(f"webhook-test-{RUN_ID}-", LABEL, RUN_ID,
                    probe_trainjob=trainjob("probe", "does-not-exist"))

        # ---- runtimes ----
        p = k.create(runtime("ClusterTrainingRuntime", f"torch-{RUN_ID}"))
        check(p.returncode == 0, "valid ClusterTrainingRuntime created")
        p = k.create(runtime("ClusterTrainingRuntime", f"bad-{RUN_ID}", replicas=2))
        check(p.returncode != 0 and 'admission webhook "validator.clustertrainingruntime.trainer.'
              'kubeflow.org" denied the request: spec.template.spec.replicatedJobs[0].replicas: '
              'Invalid value: 2: always must be 1' in p.stderr,
              "ClusterTrainingRuntime with replicas 2 denied with upstream's text")
        p = k.create(runtime("ClusterTrainingRuntime", f"optout-{RUN_ID}", replicas=2,
                             labels={"trainer.kubeflow.org/webhook-validation": "disabled"}))
        check(p.returncode == 0, "webhook-validation=disabled runtime bypasses validation")
        p = k.create(runtime("ClusterTrainingRuntime", f"old-{RUN_ID}",
                             labels={"trainer.kubeflow.org/support": "deprecated"}))
        check(p.returncode == 0 and f'Warning: ClusterTrainingRuntime "old-{RUN_ID}" is deprecated'
              in p.stderr, "deprecated ClusterTrainingRuntime created with a warning")
        p = k.create(runtime("TrainingRuntime", "team", container="trainer"))
        check(p.returncode != 0 and "must contain the required container for the ancestor: "
              "trainer" in p.stderr, "TrainingRuntime without node container denied")
        p = k.create(runtime("TrainingRuntime", "team"))
        check(p.returncode == 0, "valid TrainingRuntime created")
        p = k.run("patch", "trainingruntime", "team", "-n", NS, "--type=json", "-p",
                  '[{"op":"replace","path":"/spec/template/spec/replicatedJobs/0/replicas",'
                  '"value":3}]', check=False)
        check(p.returncode == 0, "TrainingRuntime UPDATE is not validated (as upstream)")

        # ---- TrainJobs ----
        p = k.create(trainjob("missing", "nope"))
        check(p.returncode != 0 and "(Forbidden)" in p.stderr and
              'admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
              'spec.RuntimeRef: Invalid value' in p.stderr and
              "specified clusterTrainingRuntime must be created before the TrainJob is created"
              in p.stderr, "TrainJob of a missing runtime denied")
        p = k.create(trainjob("unsupported", "x", kind="MyRuntime"))
        check(p.returncode != 0 and "unsupported runtime: MyRuntime.trainer.kubeflow.org"
              in p.stderr, "unsupported runtime kind denied")
        p = k.create(trainjob("reserved", f"torch-{RUN_ID}",
                              trainer={"env": [{"name": "PET_NNODES", "value": "2"}]}))
        check(p.returncode != 0 and "must not have reserved envs, invalid envs configured: "
              "[PET_NNODES]" in p.stderr, "reserved torch env denied")
        p = k.create(trainjob("dry", f"torch-{RUN_ID}"), "--dry-run=server")
        check(p.returncode == 0, "server-side dry run admitted")
        check(k.run("get", "trainjob", "dry", "-n", NS, check=False).returncode != 0,
              "dry run not persisted")

        p = k.create(trainjob("job", f"torch-{RUN_ID}", suspend=True, runtimePatches=[
            {"manager": "example.com/a", "trainingRuntimeSpec": {
                "template": {"metadata": {"labels": {"team": "a"}}}}}]))
        check(p.returncode == 0, "valid TrainJob created")
        job = k.get("trainjob", "job", NS)
        t = job["spec"]["runtimePatches"][0].get("time", "")
        check(t != "", f"runtimePatches[0].time defaulted ({t})")
        check(job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["metadata"]
              ["labels"] == {"team": "a"}, "runtime patch content untouched")
        p = k.run("label", "trainjob", "job", "-n", NS, "x=y", check=False)
        job2 = k.get("trainjob", "job", NS)
        check(p.returncode == 0 and job2["spec"]["runtimePatches"][0]["time"] == t,
              "metadata-only UPDATE keeps the patch time")

        p = k.create(trainjob("running", f"torch-{RUN_ID}"))
        check(p.returncode == 0, "running TrainJob created")
        p = k.run("patch", "trainjob", "running", "-n", NS, "--type=merge", "-p",
                  json.dumps({"spec": {"runtimePatches": [{"manager": "example.com/b"}]}}),
                  check=False)
        check(p.returncode != 0 and "RuntimePatches can only be modified when the TrainJob is "
              "suspended before or after the update" in p.stderr,
              "runtimePatches change on a running TrainJob denied")

        p = k.create(trainjob("deprecated", f"old-{RUN_ID}"))
        check(p.returncode == 0 and f'Warning: Referenced ClusterTrainingRuntime "old-{RUN_ID}" '
              'is deprecated' in p.stderr, "TrainJob of a deprecated runtime warns")

        p = k.create(trainjob("legacy", f"torch-{RUN_ID}", podTemplateOverrides=[
            {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]))
        check(p.returncode == 0 and "spec.podTemplateOverrides is deprecated" in p.stderr,
              "podTemplateOverrides TrainJob created with a deprecation warning")
        if p.returncode == 0:
            legacy = k.get("trainjob", "legacy", NS)
            patches = legacy["spec"].get("runtimePatches", [])
            check(len(patches) == 1 and patches[0]["manager"] ==
                  "trainer.kubeflow.org/podtemplateoverrides" and patches[0].get("time"),
                  "podTemplateOverrides translated into a timed runtimePatches entry")

        # ---- certificate rotation under load ----
        check(testbed.served_cn(port, ca) == "trainer-webhook-1", "serving the first certificate")
        results = []
        stop_at = time.time() + 8
        rotated = False
        i = 0
        while time.time() < stop_at:
            p = k.create(trainjob(f"rot-{i}", f"torch-{RUN_ID}"), "--dry-run=server")
            if p.returncode != 0:
                print(p.stderr.strip())
            results.append(p.returncode == 0)
            i += 1
            if not rotated and time.time() > stop_at - 6:
                certs.publish(*sign_cert(pki, work, "trainer-webhook-2"))
                rotated = True
        deadline = time.time() + 10
        while time.time() < deadline and testbed.served_cn(port, ca) != "trainer-webhook-2":
            time.sleep(0.2)
        check(testbed.served_cn(port, ca) == "trainer-webhook-2", "rotated certificate served")
        check(len(results) > 5 and all(results),
              f"no admission failed across the rotation ({sum(results)}/{len(results)})")
        p = k.create(trainjob("after-rotation", f"torch-{RUN_ID}"), "--dry-run=server")
        check(p.returncode == 0, "admission works after the rotation")

        # ---- metrics ----
        status, text = http_get(f"http://127.0.0.1:{metrics_port}/metrics")
        check(status == 200, "/metrics served")
        check(f'controller_runtime_webhook_requests_total{{code="200",webhook="{VALIDATE_TJ}"}}'
              in text, "requests_total by webhook and code")
        check("trainer_webhook_denials_total{reason=\"Forbidden\"" in text, "denials counted")
        check("controller_runtime_webhook_latency_seconds_bucket" in text, "latency histogram")
        check("certwatcher_read_certificate_total 2" in text, "two certificate reads")
        check("trainer_webhook_certificate_expiry_timestamp_seconds " in text, "expiry gauge")
        if shutil.which("promtool"):
            p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                               text=True)
            check(p.returncode == 0, f"promtool check metrics {p.stdout}{p.stderr}".strip())

        proc.terminate()
        try:
            proc.wait(timeout=15)
            check(proc.returncode == 0, "graceful stop on SIGTERM")
        except subprocess.TimeoutExpired:
            check(False, "graceful stop on SIGTERM within 15 s")
    finally:
        wh.stop()
        for name in (f"torch-{RUN_ID}", f"optout-{RUN_ID}", f"old-{RUN_ID}"):
            k.run("delete", "clustertrainingruntime", name, "--ignore-not-found", check=False)
        k.delete_namespace(NS)
        if failures:
            print(wh.tail_log())
        shutil.rmtree(work, ignore_errors=True)

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
