#!/usr/bin/env python3
"""Integration test of the framework and scheduler plugins (MPI, JAX, XGBoost, Flux, torchtune,
CoScheduling, Volcano) on the test bed, with trainer-webhook registered with the apiserver and
trainer-controller running, as users meet them through kubectl.

Cases (each a function below, run in order; failures are collected and reported together):
  runtimes       every runtime of examples/runtimes/ applies through the webhook, and the TrainJob
                 of examples/trainjobs/ using it is admitted and gets a JobSet (and the other
                 objects) with the content trainer-render produces offline for the same inputs
  mpi            the <trainjob>-mpi-ssh-auth Secret (type, immutable, keys, a valid P-521 key pair,
                 controller ownerReference), the hostfile ConfigMap (name, key, slots, hostnames
                 under network.subdomain), the JobSet's MPI env, volumes and mounts; after a
                 controller restart the Secret is the same object with the same data; an edit
                 of the hostfile by hand is taken back
  coscheduling   scheduling.x-k8s.io PodGroup (minMember, minResources over every PodSet,
                 scheduleTimeoutSeconds and its default), ownerReference, pod-group label on every
                 pod template; a suspended TrainJob's PodGroup follows a numNodes change
  volcano        scheduling.volcano.sh/v1beta1 PodGroup with the queue from the runtime's
                 annotation and the pods' priorityClassName; group-name pod annotation
  requeue        upstream's CoScheduling watches: a LimitRange event re-enqueues exactly the
                 suspended TrainJobs of its namespace, a RuntimeClass event exactly the suspended
                 TrainJobs whose runtime (TrainingRuntime or ClusterTrainingRuntime) uses it; seen
                 in the controller's V(2) "Reconciling TrainJob" lines
  validation     every plugin's admission check through kubectl: the exact line kubectl prints;
                 the webhook runs as deploy/'s trainer-webhook ServiceAccount with its ClusterRole
                 (renamed for the run), so the Volcano PriorityClass reads prove the grant
  webhook-rbac   that grant's edges: get priorityclasses yes, list/watch no, ...
  missing-crd    in a test bed of its own without the Volcano PodGroup CRD: a Volcano TrainJob gets
                 a ResourcesCreationFailed condition and a Warning event, the controller keeps
                 running and serving; once the CRD exists, the PodGroup is created

Environment: TESTBED_DIR, TRAINER_BIN_DIR, TRAINER_BUILD_DIR (the missing-crd test bed lives
there), optional KUBECTL, optional CASES (comma-separated subset).
"""

import base64
import copy
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
import testbed  # noqa: E402
from testbed import condition, subset, wait_for  # noqa: E402

RUN_ID = "%05d" % random.randint(0, 99999)
NS = "plugins-it-" + RUN_ID
LABEL = "trainer-cpp.plugins-test/run"
WORK = tempfile.mkdtemp(prefix="plugins-it-")
K = testbed.Kubectl()
API = "trainer.kubeflow.org/v1alpha1"
JOBSETS = "jobsets.jobset.x-k8s.io"
SP_PODGROUPS = "podgroups.scheduling.x-k8s.io"
VOLCANO_PODGROUPS = "podgroups.scheduling.volcano.sh"
DENIED = ('Error from server (Forbidden): error when creating "STDIN": admission webhook '
          '"validator.trainjob.trainer.kubeflow.org" denied the request: ')
PRIORITY_CLASS = "plugins-it-%s-high" % RUN_ID


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def equal(want, have, what):
    if want != have:
        raise AssertionError("%s:\n  want %s\n  have %s" % (what, json.dumps(want, sort_keys=True),
                                                          json.dumps(have, sort_keys=True)))


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def labelled(obj):
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("labels", {})[LABEL] = RUN_ID
    return obj


def namespaced(rt, name=None):
    """A ClusterTrainingRuntime restated as a TrainingRuntime of this test's namespace."""
    rt = copy.deepcopy(rt)
    rt["kind"] = "TrainingRuntime"
    rt["metadata"] = {"name": name or rt["metadata"]["name"], "namespace": NS}
    return rt


def trainjob(name, runtime, kind="TrainingRuntime", **spec):
    tj = {"apiVersion": API, "kind": "TrainJob", "metadata": {"name": name, "namespace": NS},
          "spec": {"runtimeRef": {"name": runtime, "kind": kind}}}
    tj["spec"].update(spec)
    return tj


def torch_runtime(name, requests=None, pod_group_policy=None, annotations=None, pod_spec=None):
    container = {"name": "node", "image": "pytorch/pytorch"}
    if requests:
        container["resources"] = {"requests": requests}
    pod = {"containers": [container], **(pod_spec or {})}
    rt = {"apiVersion": API, "kind": "TrainingRuntime",
          "metadata": {"name": name, "namespace": NS},
          "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                   "template": {"spec": {"replicatedJobs": [{
                       "name": "node",
                       "template": {"metadata": {"labels": {
                           "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                           "spec": {"template": {"spec": pod}}}}]}}}}
    if pod_group_policy is not None:
        rt["spec"]["podGroupPolicy"] = pod_group_policy
    if annotations:
        rt["spec"]["template"]["metadata"] = {"annotations": annotations}
    return rt


def get(kind, name, ns=NS):
    return K.get_or_none(kind, name, ns)


def wait_get(kind, name, ns=NS, timeout=30):
    return wait_for("%s %s/%s" % (kind, ns, name), lambda: get(kind, name, ns), timeout)


def controller_ref(obj, tj):
    """The ownerReferences every object a plugin builds carries: its TrainJob, as controller."""
    equal([{"apiVersion": API, "kind": "TrainJob", "name": tj["metadata"]["name"],
            "uid": tj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}],
          obj["metadata"].get("ownerReferences"),
          "ownerReferences of %s %s" % (obj["kind"], obj["metadata"]["name"]))


def wait_equal(what, fn, want, timeout=30):
    """Polls fn() until it equals want; on the deadline, fails showing the last value."""
    deadline = time.time() + timeout
    while True:
        try:
            have = fn()
        except Exception as e:  # noqa: BLE001
            have = e
        if have == want:
            return
        if time.time() > deadline:
            equal(want, have if not isinstance(have, Exception) else repr(have),
                  "%s after %.0fs" % (what, timeout))
        time.sleep(0.2)


def pod_templates(js):
    return {rj["name"]: rj["template"]["spec"]["template"] for rj in js["spec"]["replicatedJobs"]}


def container(pod, name="node"):
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def render(*objs):
    """trainer-render (the runtime library, offline) of the given inputs: {(kind, name): obj}."""
    files = []
    for i, obj in enumerate(objs):
        path = os.path.join(WORK, "render-%d-%d.json" % (time.time_ns(), i))
        with open(path, "w") as f:
            json.dump(obj, f)
        files += ["-f", path]
    out = subprocess.run([os.path.join(testbed.bin_dir(), "trainer-render"), *files, "-o", "json"],
                         capture_output=True, text=True)
    check(out.returncode == 0, "trainer-render: %s" % out.stderr)
    return {(o["kind"], o["metadata"]["name"]): o for o in json.loads(out.stdout)["items"]}


def live_inputs(tj_name):
    """The TrainJob and its runtime as the apiserver holds them (defaults applied)."""
    tj = K.get("trainjobs", tj_name, NS)
    tj.pop("status", None)
    ref = tj["spec"]["runtimeRef"]
    if ref.get("kind") == "TrainingRuntime":
        rt = K.get("trainingruntimes", ref["name"], NS)
    else:
        rt = K.get("clustertrainingruntimes", ref["name"])
    return rt, tj


# ---------------------------------------------------------------------------------------------

def apply_shipped_runtimes():
    """Applies every examples/runtimes/ ClusterTrainingRuntime (labelled for this test, so the
    webhook validates it); {name: (file name, kubectl's CompletedProcess)}."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "runtimes", "*.yaml"))):
        rt = labelled(load(path))
        out[rt["metadata"]["name"]] = (os.path.basename(path), K.run(
            "apply", "--server-side", "--field-manager=plugins-test", "-f", "-",
            stdin=json.dumps(rt), check=False))
    return out


def case_runtimes(ctl):
    runtimes = apply_shipped_runtimes()
    for file_name, p in runtimes.values():
        check(p.returncode == 0 and "Warning" not in p.stderr,
              "%s does not apply cleanly: %s" % (file_name, p.stderr.strip()))
    used = set()
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "trainjobs", "*.yaml"))):
        tj = load(path)
        tj["metadata"]["namespace"] = NS
        name = tj["metadata"]["name"]
        p = K.create(tj)
        check(p.returncode == 0, "TrainJob of %s denied: %s" % (os.path.basename(path), p.stderr))
        if "podtemplateoverrides" not in path:  # that one is a deprecated field: a warning
            check(not p.stderr.strip(), "TrainJob of %s admitted with warnings: %s" % (
                os.path.basename(path), p.stderr))
        used.add(tj["spec"]["runtimeRef"]["name"])
        js = wait_get(JOBSETS, name)
        live_tj = K.get("trainjobs", name, NS)
        controller_ref(js, live_tj)
        rendered = render(*live_inputs(name))
        for (kind, obj_name), want in rendered.items():
            if obj_name.endswith("-runtime-snapshot"):
                continue  # the controller test checks the snapshot
            resource = {"JobSet": JOBSETS, "PodGroup": SP_PODGROUPS}.get(kind, kind.lower() + "s")
            have = wait_get(resource, obj_name)
            controller_ref(have, live_tj)
            if kind == "Secret":  # a fresh MPI key each time: compare the shape
                equal(sorted(want["data"]), sorted(have["data"]), "Secret %s keys" % obj_name)
                equal(want.get("type"), have.get("type"), "Secret %s type" % obj_name)
                continue
            for field in ("spec", "data"):
                if field in want:
                    err = subset(want[field], have.get(field), "%s %s .%s" % (kind, obj_name, field))
                    check(err is None, "live object differs from trainer-render: %s" % err)
            err = subset(want["metadata"].get("labels", {}), have["metadata"].get("labels", {}),
                         "%s %s metadata.labels" % (kind, obj_name))
            check(err is None, "live object differs from trainer-render: %s" % err)
        print("  %-40s -> JobSet %s (%d objects as rendered)" % (
            os.path.basename(path), name, len(rendered) - 1))
    equal(sorted(runtimes), sorted(used), "runtimes used by examples/trainjobs")


MPI_ENV_NAMES = ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                 "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args"]


def ssh_auth_volume(tj_name):
    return {"name": "mpi-ssh-auth", "secret": {
        "secretName": tj_name + "-mpi-ssh-auth", "defaultMode": 256, "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 416},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 420},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 420}]}}


def check_ssh_secret(tj):
    name = tj["metadata"]["name"] + "-mpi-ssh-auth"
    s = wait_get("secrets", name)
    controller_ref(s, tj)
    equal("kubernetes.io/ssh-auth", s.get("type"), "Secret %s type" % name)
    equal(True, s.get("immutable"), "Secret %s immutable" % name)
    equal(["ssh-privatekey", "ssh-publickey"], sorted(s["data"]), "Secret %s keys" % name)
    private = base64.b64decode(s["data"]["ssh-privatekey"]).decode()
    public = base64.b64decode(s["data"]["ssh-publickey"]).decode()
    check(private.startswith("-----BEGIN EC PRIVATE KEY-----\n") and
          private.endswith("-----END EC PRIVATE KEY-----\n"), "private key PEM: %r" % private[:60])
    check(public.startswith("ecdsa-sha2-nistp521 AAAA") and public.endswith("\n") and
          public.count("\n") == 1, "public key line: %r" % public)
    if shutil.which("ssh-keygen"):
        key_file = os.path.join(WORK, name)
        with open(key_file, "w") as f:
            f.write(private)
        os.chmod(key_file, 0o600)
        derived = subprocess.run(["ssh-keygen", "-y", "-f", key_file], capture_output=True,
                                 text=True)
        check(derived.returncode == 0 and derived.stdout.split()[:2] == public.split()[:2],
              "ssh-keygen -y of the private key does not give the public key: %s%s" % (
                  derived.stdout, derived.stderr))
    return s


def case_mpi(ctl):
    # The shipped DeepSpeed runtime under a custom subdomain, 3 nodes (launcher + 2), 2 slots.
    rt = namespaced(load("examples/runtimes/deepspeed-distributed.yaml"), "deepspeed-sub")
    rt["spec"]["template"]["spec"]["network"]["subdomain"] = "mpi-hosts"
    K.apply(rt)
    K.apply(trainjob("mpi", "deepspeed-sub", trainer={
        "numNodes": 3, "numProcPerNode": 2, "command": ["mpirun", "hostname"]}))
    js = wait_get(JOBSETS, "mpi")
    tj = K.get("trainjobs", "mpi", NS)
    secret = check_ssh_secret(tj)

    cm = wait_get("configmaps", "mpi-mpi-hostfile")
    controller_ref(cm, tj)
    equal({"hostfile": "mpi-node-0-0.mpi-hosts slots=2\nmpi-node-0-1.mpi-hosts slots=2\n"
                       "mpi-launcher-0-0.mpi-hosts slots=2\n"},
          cm["data"], "hostfile ConfigMap data")

    pods = pod_templates(js)
    equal([ssh_auth_volume("mpi"), {"name": "mpi-hostfile", "configMap": {
        "name": "mpi-mpi-hostfile", "items": [{"key": "hostfile", "path": "hostfile",
                                               "mode": 292}]}}],
          pods["launcher"]["spec"]["volumes"], "launcher volumes")
    equal([ssh_auth_volume("mpi")], pods["node"]["spec"]["volumes"], "node volumes")
    launcher = container(pods["launcher"])
    equal([{"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"},
           {"name": "mpi-hostfile", "mountPath": "/etc/mpi"}],
          launcher["volumeMounts"], "launcher volumeMounts")
    equal([{"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"}],
          container(pods["node"])["volumeMounts"], "node volumeMounts")
    equal([{"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
           {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
           {"name": "OMPI_MCA_orte_set_default_slots", "value": "2"},
           {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}],
          [e for e in launcher.get("env", []) if e["name"] in MPI_ENV_NAMES], "launcher MPI env")
    check(not [e for e in container(pods["node"]).get("env", []) if e["name"] in MPI_ENV_NAMES],
          "MPI env on the node job")
    rjobs = {rj["name"]: rj for rj in js["spec"]["replicatedJobs"]}
    equal(2, rjobs["node"]["template"]["spec"]["parallelism"], "node parallelism")
    equal("mpi-hosts", js["spec"]["network"]["subdomain"], "JobSet subdomain")

    # The shipped runtime as is: hostnames under the TrainJob's name, slots from the GPU count.
    K.apply(trainjob("ds", "deepspeed-distributed", kind="ClusterTrainingRuntime", trainer={
        "numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}))
    tj_ds = wait_get("trainjobs", "ds")
    check_ssh_secret(tj_ds)
    cm = wait_get("configmaps", "ds-mpi-hostfile")
    equal({"hostfile": "ds-node-0-0.ds slots=4\nds-launcher-0-0.ds slots=4\n"}, cm["data"],
          "hostfile of the shipped runtime")

    # An edit of the hostfile by someone else is taken back, as upstream's re-apply does (the
    # cache keeps the ConfigMap's managers for that; it once kept none and left the edit).
    want = K.get("configmaps", "mpi-mpi-hostfile", NS)["data"]
    K.run("patch", "configmap", "mpi-mpi-hostfile", "-n", NS, "--type", "merge",
          "-p", json.dumps({"data": {"hostfile": "edited by hand\n"}}))
    wait_equal("hostfile ConfigMap data after an edit by hand",
               lambda: K.get("configmaps", "mpi-mpi-hostfile", NS)["data"], want)

    # A new controller reconciles the TrainJob again (the hostfile comes back) but leaves the
    # immutable Secret as it is: same object, same key.
    ctl.stop()
    ctl = testbed.Controller(log_dir=WORK)
    try:
        K.run("delete", "configmap", "mpi-mpi-hostfile", "-n", NS)
        wait_get("configmaps", "mpi-mpi-hostfile")
        after = K.get("secrets", "mpi-mpi-ssh-auth", NS)
        for field in ("uid", "resourceVersion", "creationTimestamp"):
            equal(secret["metadata"][field], after["metadata"][field],
                  "Secret %s after restart" % field)
        equal(secret["data"], after["data"], "Secret data after restart")
        check(condition(K.get("trainjobs", "mpi", NS), "ResourcesCreationFailed") is None,
              "reconcile after restart failed: %r" % K.get("trainjobs", "mpi", NS).get("status"))
    except Exception:
        ctl.stop()  # main() starts another when it sees this one exited
        raise
    return ctl


def case_coscheduling(ctl):
    K.apply(torch_runtime("gang", requests={"cpu": "1500m", "memory": "1Gi"},
                          pod_group_policy={"coscheduling": {"scheduleTimeoutSeconds": 120}}))
    K.apply(trainjob("gang", "gang", suspend=True, trainer={"numNodes": 3}))
    pg = wait_get(SP_PODGROUPS, "gang")
    tj = K.get("trainjobs", "gang", NS)
    controller_ref(pg, tj)
    equal({"minMember": 3, "minResources": {"cpu": "4500m", "memory": "3Gi"},
           "scheduleTimeoutSeconds": 120}, pg["spec"], "PodGroup spec")
    js = wait_get(JOBSETS, "gang")
    for name, pod in pod_templates(js).items():
        equal("gang", pod["metadata"].get("labels", {}).get("scheduling.x-k8s.io/pod-group"),
              "pod-group label of %s" % name)
    # While suspended, the PodGroup is the TrainJob's: an edit is taken back. Running, it is
    # left alone (the scheduler may be acting on it).
    K.run("patch", SP_PODGROUPS, "gang", "-n", NS, "--type=merge", "-p",
          '{"spec":{"minMember":1}}')
    wait_equal("PodGroup of a suspended TrainJob restored",
               lambda: get(SP_PODGROUPS, "gang")["spec"]["minMember"], 3)
    K.run("patch", "trainjob", "gang", "-n", NS, "--type=merge", "-p",
          '{"spec":{"suspend":false}}')
    wait_for("JobSet resumed", lambda: get(JOBSETS, "gang")["spec"]["suspend"] is False)
    K.run("patch", SP_PODGROUPS, "gang", "-n", NS, "--type=merge", "-p",
          '{"spec":{"minMember":1}}')
    K.run("label", "trainjob", "gang", "-n", NS, "touched=yes")  # one more reconcile
    time.sleep(2)
    equal(1, get(SP_PODGROUPS, "gang")["spec"]["minMember"],
          "minMember of a running TrainJob's PodGroup after an edit")
    # An initializer counts too; the timeout defaults to 60.
    rt = torch_runtime("gang-init", requests={"cpu": "1"}, pod_group_policy={"coscheduling": {}})
    rt["spec"]["template"]["spec"]["replicatedJobs"].insert(0, {
        "name": "dataset-initializer",
        "template": {"metadata": {"labels": {
            "trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
            "spec": {"template": {"spec": {"containers": [{
                "name": "dataset-initializer", "image": "init",
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}}}}})
    K.apply(rt)
    K.apply(trainjob("gang-init", "gang-init", trainer={"numNodes": 2}))
    pg = wait_get(SP_PODGROUPS, "gang-init")
    equal({"minMember": 3, "minResources": {"cpu": "2500m", "memory": "512Mi"},
           "scheduleTimeoutSeconds": 60}, pg["spec"], "PodGroup spec with an initializer")
    js = wait_get(JOBSETS, "gang-init")
    for name, pod in pod_templates(js).items():
        equal("gang-init", pod["metadata"].get("labels", {}).get(
            "scheduling.x-k8s.io/pod-group"), "pod-group label of %s" % name)


def reconciled_since(ctl, mark):
    """TrainJob keys the controller reconciled after byte `mark` of its log (V(2) lines)."""
    keys = set()
    with open(ctl.log_path) as f:
        f.seek(mark)
        for line in f:
            if line.startswith("{"):  # --log-format=json, the default
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line still being written
                if rec.get("msg") == "Reconciling TrainJob":
                    keys.add(rec.get("trainJob"))
            else:
                keys.update(re.findall(r'msg="Reconciling TrainJob" trainJob=(\S+)', line))
    return sorted(keys)


def settled(ctl, quiet=2.0, timeout=60):
    """Waits until the controller reconciled nothing for `quiet` s; the log's size then."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        mark = os.path.getsize(ctl.log_path)
        time.sleep(quiet)
        if not reconciled_since(ctl, mark):
            return os.path.getsize(ctl.log_path)
    raise AssertionError("the controller kept reconciling for %ds" % timeout)


def case_requeue(ctl):
    ctl.stop()
    ctl = testbed.Controller("-v=2", log_dir=WORK)
    ns = NS + "-rq"
    rc_tr, rc_ctr, rc_none = ("trainer-it-%s-%s" % (x, RUN_ID) for x in ("tr", "ctr", "none"))
    K.run("create", "namespace", ns)
    K.run("label", "namespace", ns, f"{LABEL}={RUN_ID}")
    try:
        gang = {"coscheduling": {}}
        rt = torch_runtime("rq", pod_group_policy=gang, pod_spec={"runtimeClassName": rc_tr})
        rt["metadata"]["namespace"] = ns
        K.apply(rt)
        ctr = torch_runtime("rq-" + RUN_ID, pod_group_policy=gang,
                            pod_spec={"runtimeClassName": rc_ctr})
        ctr["kind"] = "ClusterTrainingRuntime"
        ctr["metadata"] = {"name": "rq-" + RUN_ID}
        K.apply(labelled(ctr))
        for name, runtime, kind, suspend in (("sus", "rq", "TrainingRuntime", True),
                                             ("run", "rq", "TrainingRuntime", False),
                                             ("sus-ctr", "rq-" + RUN_ID, "ClusterTrainingRuntime",
                                              True)):
            tj = trainjob(name, runtime, kind, suspend=suspend)
            tj["metadata"]["namespace"] = ns
            K.apply(tj)
        for name in ("sus", "run", "sus-ctr"):
            wait_get(SP_PODGROUPS, name, ns)

        def requeued_by(what, obj):
            mark = settled(ctl)
            K.apply(obj)
            time.sleep(1)
            settled(ctl)
            return reconciled_since(ctl, mark)

        equal([ns + "/sus", ns + "/sus-ctr"], requeued_by("LimitRange", {
            "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits", "namespace": ns},
            "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]}}),
            "TrainJobs re-enqueued by a LimitRange of their namespace")

        def runtime_class(name):
            return labelled({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                             "metadata": {"name": name}, "handler": "runc"})
        equal([ns + "/sus"], requeued_by("RuntimeClass", runtime_class(rc_tr)),
              "TrainJobs re-enqueued by their TrainingRuntime's RuntimeClass")
        equal([ns + "/sus-ctr"], requeued_by("RuntimeClass", runtime_class(rc_ctr)),
              "TrainJobs re-enqueued by their ClusterTrainingRuntime's RuntimeClass")
        equal([], requeued_by("RuntimeClass", runtime_class(rc_none)),
              "TrainJobs re-enqueued by a RuntimeClass no runtime uses")
    finally:
        K.run("delete", "runtimeclasses", "-l", f"{LABEL}={RUN_ID}", "--ignore-not-found",
              check=False)
        K.delete_namespace(ns)
    return ctl


def case_volcano(ctl):
    K.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": PRIORITY_CLASS, "labels": {LABEL: RUN_ID}}, "value": 1000})
    K.apply(torch_runtime("vc", requests={"cpu": "2", "memory": "4Gi"},
                          pod_group_policy={"volcano": {}},
                          annotations={"scheduling.volcano.sh/queue-name": "research"},
                          pod_spec={"priorityClassName": PRIORITY_CLASS}))
    p = K.create(trainjob("vc", "vc", trainer={"numNodes": 3}))
    check(p.returncode == 0, "Volcano TrainJob denied: %s" % p.stderr)
    pg = wait_get(VOLCANO_PODGROUPS, "vc")
    tj = K.get("trainjobs", "vc", NS)
    controller_ref(pg, tj)
    equal("scheduling.volcano.sh/v1beta1", pg["apiVersion"], "PodGroup apiVersion")
    equal({"minMember": 3, "queue": "research", "priorityClassName": PRIORITY_CLASS,
           "minResources": {"cpu": "6", "memory": "12Gi"}}, pg["spec"], "Volcano PodGroup spec")
    js = wait_get(JOBSETS, "vc")
    for name, pod in pod_templates(js).items():
        equal("vc", pod["metadata"].get("annotations", {}).get("scheduling.k8s.io/group-name"),
              "group-name annotation of %s" % name)
        equal(PRIORITY_CLASS, pod["spec"].get("priorityClassName"), "priorityClassName of %s" % name)


# (name, runtimes to apply first, TrainJob, exact message after "denied the request: ")
def validation_cases():
    mpi_node_only = {"apiVersion": API, "kind": "TrainingRuntime",
                     "metadata": {"name": "mpi-node-only", "namespace": NS},
                     "spec": {"mlPolicy": {"numNodes": 1, "mpi": {"runLauncherAsNode": True}},
                              "template": {"spec": {"replicatedJobs": [{
                                  "name": "node", "template": {
                                      "metadata": {"labels": {
                                          "trainer.kubeflow.org/trainjob-ancestor-step":
                                              "trainer"}},
                                      "spec": {"template": {"spec": {"containers": [
                                          {"name": "node", "image": "test"}]}}}}}]}}}}
    flux = namespaced(load("examples/flux/flux-runtime.yaml"), "flux")
    flux_installer = copy.deepcopy(flux)
    flux_installer["metadata"]["name"] = "flux-installer"
    flux_installer["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["initContainers"] = [{"name": "flux-installer", "image": "custom"}]
    tune_8b = namespaced(load("examples/runtimes/torchtune-llama3.2-1b.yaml"),
                         "torchtune-llama3.1-8b")
    inject = torch_runtime("torch-inject")
    inject["spec"]["mlPolicy"]["torch"] = {"envInjection": {"targets": [
        {"jobName": "node", "containerNames": ["sidecar"]}]}}
    vc_empty_queue = torch_runtime("vc-empty-queue", pod_group_policy={"volcano": {}},
                                   annotations={"scheduling.volcano.sh/queue-name": ""})
    vc_missing_pc = torch_runtime("vc-missing-pc", pod_group_policy={"volcano": {}},
                                  pod_spec={"priorityClassName": "plugins-it-no-such-class"})
    tune = {"command": ["tune", "run"]}
    ctr = "ClusterTrainingRuntime"

    def env(*pairs):
        return [{"name": n, "value": v} for n, v in pairs]

    return [
        ("mpi runLauncherAsNode without a launcher job", [mpi_node_only],
         trainjob("v-mpi-shape", "mpi-node-only", trainer={"numNodes": 2}),
         "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with "
         "enabled runLauncherAsNode does not have either launcher and node"),
        ("mpi reserved env", [],
         trainjob("v-mpi-env", "deepspeed-distributed", kind=ctr, trainer={"env": env(
             ("OMPI_MCA_plm_rsh_args", "custom"), ("OMPI_MCA_orte_default_hostfile", "/h"))}),
         'spec.trainer.env: Invalid value: []v1.EnvVar{v1.EnvVar{Name:"OMPI_MCA_plm_rsh_args", '
         'Value:"custom", ValueFrom:(*v1.EnvVarSource)(nil)}, v1.EnvVar{Name:'
         '"OMPI_MCA_orte_default_hostfile", Value:"/h", ValueFrom:(*v1.EnvVarSource)(nil)}}: '
         'must not have reserved envs, invalid envs configured: '
         '[OMPI_MCA_orte_default_hostfile OMPI_MCA_plm_rsh_args]'),
        ("xgboost reserved env", [],
         trainjob("v-xgb-env", "xgboost-distributed", kind=ctr, trainer={"env": env(
             ("DMLC_TRACKER_URI", "x"), ("SEED", "1"), ("DMLC_NUM_WORKER", "3"))}),
         "[spec.trainer.env[0]: Forbidden: DMLC_TRACKER_URI is reserved for the XGBoost runtime, "
         "spec.trainer.env[2]: Forbidden: DMLC_NUM_WORKER is reserved for the XGBoost runtime]"),
        ("flux numProcPerNode below 1", [flux],
         trainjob("v-flux-procs", "flux", trainer={"numNodes": 2, "numProcPerNode": 0}),
         "spec.trainer.numProcPerNode: Invalid value: 0: must be greater than or equal to 1 for "
         "Flux TrainJob"),
        ("flux-installer init container reserved", [flux_installer],
         trainjob("v-flux-installer", "flux-installer", trainer={"numNodes": 2}),
         "spec.trainer.initContainers: Invalid value: \"flux-installer\": InitContainer "
         "'flux-installer' is reserved"),
        ("torchtune unsupported model", [tune_8b],
         trainjob("v-tune-model", "torchtune-llama3.1-8b", trainer=tune),
         'spec.runtimeRef.name: Invalid value: "torchtune-llama3.1-8b": must have a supported '
         'pretrained model, invalid model configured: llama3_1/8B'),
        ("torchtune multi-node LoRA", [],
         trainjob("v-tune-lora", "torchtune-llama3.2-1b", kind=ctr, trainer={
             **tune, "numNodes": 2, "args": ["model.lora_attn_modules=[q_proj,v_proj]"]}),
         "[spec.trainer.numNodes: Invalid value: 2: must be 1 for llama3_2/1B model, "
         "spec.trainer.numNodes: Invalid value: 2: LoRA fine-tuning is not supported for "
         "multi-node training in TorchTune]"),
        ("torchtune QLoRA on qwen2.5", [],
         trainjob("v-tune-qwen", "torchtune-qwen2.5-1.5b", kind=ctr, trainer={
             **tune, "args": ["model.quantize_base=True"]}),
         'spec.runtimeRef.name: Invalid value: "torchtune-qwen2.5-1.5b": QLoRA is not supported '
         'for qwen2_5/1.5B model'),
        ("torchtune QLoRA on llama3.2 with 2 processes", [],
         trainjob("v-tune-qlora", "torchtune-llama3.2-3b", kind=ctr, trainer={
             **tune, "numProcPerNode": 2, "args": ["model.quantize_base=true"],
             "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}}),
         # The resourcesPerNode value is upstream's Go %#v of a ResourceRequirements (Quantity
         # internals); ours renders the value as JSON. Path and detail are upstream's.
         "[spec.trainer.numProcPerNode: Invalid value: intstr.IntOrString{Type:0, IntVal:2, "
         "StrVal:\"\"}: must be auto or 1 for llama3_2/3B model when using QLoRA, "
         "spec.trainer.resourcesPerNode: Invalid value: {\"limits\":{\"nvidia.com/gpu\":\"2\"}}: "
         "must have gpu resource with value 1 for llama3_2/3B model when "
         "using QLoRA]"),
        ("torchtune immutable config in args", [],
         trainjob("v-tune-args", "torchtune-llama3.2-1b", kind=ctr, trainer={
             **tune, "args": ["epochs=1", "tokenizer.path=/mine"]}),
         'spec.trainer.args[1]: Invalid value: "tokenizer.path=/mine": must not set immutable '
         'config "tokenizer.path" in trainer args; it is managed by the runtime'),
        ("volcano empty queue", [vc_empty_queue],
         trainjob("v-vc-queue", "vc-empty-queue"),
         'spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": Volcano queue '
         'name must not be empty'),
        ("volcano missing PriorityClass", [vc_missing_pc],
         trainjob("v-vc-pc", "vc-missing-pc"),
         'spec.templateSpec.priorityClassName: Invalid value: "plugins-it-no-such-class": '
         'PriorityClass "plugins-it-no-such-class" doesn\'t exist: priorityclasses.scheduling.k8s.io '
         '"plugins-it-no-such-class" not found'),
        ("torch reserved env", [],
         trainjob("v-torch-env", "torch-distributed", kind=ctr, trainer={"env": env(
             ("PET_NNODES", "4"), ("PET_MASTER_PORT", "1234"))}),
         'spec.trainer.env: Invalid value: []v1.EnvVar{v1.EnvVar{Name:"PET_NNODES", Value:"4", '
         'ValueFrom:(*v1.EnvVarSource)(nil)}, v1.EnvVar{Name:"PET_MASTER_PORT", Value:"1234", '
         'ValueFrom:(*v1.EnvVarSource)(nil)}}: must not have reserved envs, invalid envs '
         'configured: [PET_MASTER_PORT PET_NNODES]'),
        ("torch envInjection target missing", [inject],
         trainjob("v-torch-inject", "torch-inject"),
         'spec.runtimeRef: Invalid value: v1alpha1.EnvInjectionTarget{JobName:"node", '
         'ContainerNames:[]string{"sidecar"}}: envInjection target podSet "node" container '
         '"sidecar" not found in runtime template'),
    ]


def case_validation(ctl):
    apply_shipped_runtimes()
    failed = []
    for name, runtimes, tj, want in validation_cases():
        for rt in runtimes:
            K.apply(rt)
        p = K.create(tj)
        have = p.stderr.strip()
        if p.returncode == 0 or have != DENIED + want:
            failed.append(name)
            print("  FAIL %s\n    want: %s\n    have: %s" % (name, DENIED + want,
                                                           have or "(admitted)"))
        else:
            print("  ok   %s" % name)
    # JAX reserves nothing: the user's JAX_* env is admitted (and overrides the plugin's).
    p = K.create(trainjob("v-jax-env", "jax-distributed", kind="ClusterTrainingRuntime",
                          trainer={"env": [{"name": "JAX_NUM_PROCESSES", "value": "8"}]}),
                 "--dry-run=server")
    if p.returncode != 0:
        failed.append("jax env admitted")
        print("  FAIL JAX_* env in a JAX TrainJob denied: %s" % p.stderr.strip())
    else:
        print("  ok   JAX_* env admitted")
    check(not failed, "denials differing: %s" % ", ".join(failed))


def case_webhook_rbac(ctl):
    """The webhook's role is exactly what its code reads (deploy/base/rbac/webhook.yaml names the
    code): the validation case ran the webhook as that account; here the edges of the grant."""
    who = "system:serviceaccount:%s:trainer-webhook" % NS
    want = [("get", "priorityclasses.scheduling.k8s.io", "yes"),
            ("list", "priorityclasses.scheduling.k8s.io", "no"),
            ("watch", "priorityclasses.scheduling.k8s.io", "no"),
            ("get", "jobsets.jobset.x-k8s.io", "yes"),
            ("list", "jobsets.jobset.x-k8s.io", "no"),
            ("watch", "clustertrainingruntimes.trainer.kubeflow.org", "yes"),
            ("list", "trainingruntimes.trainer.kubeflow.org", "yes"),
            ("get", "trainjobs.trainer.kubeflow.org", "no"),
            ("get", "podgroups.scheduling.volcano.sh", "no"),
            ("create", "secrets", "no")]
    have = [(verb, res, K.run("auth", "can-i", verb, res, "--as", who, "-A",
                              check=False).stdout.strip()) for verb, res, _ in want]
    equal(want, have, "kubectl auth can-i as %s" % who)


def case_missing_crd(ctl):
    """A test bed of its own: the fixture's is shared, and removing a CRD there would break any
    test running beside this one."""
    bed = os.path.join(os.environ.get("TRAINER_BUILD_DIR", WORK), "testbed-plugins-no-volcano")
    env = dict(os.environ, TESTBED_DIR=bed)
    down = os.path.join(ROOT, "hack", "testbed", "down.sh")
    subprocess.run([down], env=env, capture_output=True)  # a leftover of an interrupted run
    own = None
    try:
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "up.sh"), "--no-crds"], env=env,
                       check=True, capture_output=True, text=True)
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "install-crds.sh"), "jobset",
                        "scheduler-plugins-podgroups"], env=env, check=True, capture_output=True)
        k = testbed.Kubectl(bed)
        testbed.install_trainer_crds(k)
        k.run("create", "namespace", NS)
        own = testbed.Controller(kubeconfig=k.kubeconfig, log_dir=WORK)
        rt = torch_runtime("vc", requests={"cpu": "1"}, pod_group_policy={"volcano": {}})
        k.apply(rt)
        k.apply(trainjob("vc", "vc"))
        c = wait_for("ResourcesCreationFailed", lambda: condition(
            k.get_or_none("trainjobs", "vc", NS), "ResourcesCreationFailed"))
        no_kind = ('PodGroup %s/vc: no matches for kind "PodGroup" in version '
                   '"scheduling.volcano.sh/v1beta1"' % NS)
        equal(("True", "ApplyFailed", no_kind), (c["status"], c["reason"], c["message"]),
              "ResourcesCreationFailed condition")
        events = wait_for("event", lambda: [e for e in k.items("events.events.k8s.io", NS)
                                            if e.get("regarding", {}).get("name") == "vc"])
        equal(("Warning", "TrainJobResourcesCreationFailed",
               "TrainJob resources reconciliation failed: " + no_kind.split(": ", 1)[1]),
              (events[0]["type"], events[0]["reason"], events[0]["note"]), "event")
        time.sleep(3)
        check(own.proc.poll() is None, "the controller exited (%r)" % own.proc.returncode)
        check(own.http(own.health, "/healthz") == "ok" and own.http(own.health, "/readyz") == "ok",
              "the controller stopped serving its probes")
        # The JobSet goes out only after its PodGroup (upstream: Build fails before any apply), so
        # no pod runs without gang scheduling.
        check(k.get_or_none(JOBSETS, "vc", NS) is None,
              "a JobSet exists although its PodGroup could not be applied")
        # Installing the CRD later: the TrainJob converges.
        subprocess.run([os.path.join(ROOT, "hack", "testbed", "install-crds.sh"),
                        "volcano-podgroups"], env=env, check=True, capture_output=True)
        wait_for("Volcano PodGroup once the CRD exists",
                 lambda: k.get_or_none(VOLCANO_PODGROUPS, "vc", NS), 60)
        wait_for("JobSet once the CRD exists", lambda: k.get_or_none(JOBSETS, "vc", NS), 30)
        wait_for("condition cleared", lambda: condition(
            k.get_or_none("trainjobs", "vc", NS), "ResourcesCreationFailed") is None, 30)
    finally:
        if own is not None:
            own.stop()
        subprocess.run([down], env=env, capture_output=True)


CASES = [case_runtimes, case_mpi, case_coscheduling, case_volcano, case_requeue, case_validation,
         case_webhook_rbac, case_missing_crd]


def webhook_identity():
    """deploy/'s trainer-webhook ServiceAccount and ClusterRole (renamed for this run, the
    account in our namespace): the webhook runs with exactly that RBAC, so the Volcano
    PriorityClass check proves the role grants what the code reads. A kubeconfig path."""
    with open(os.path.join(ROOT, "deploy", "base", "rbac", "webhook.yaml")) as f:
        docs = [labelled(d) for d in yaml.safe_load_all(f) if d]
    role = "plugins-it-%s-trainer-webhook" % RUN_ID
    for d in docs:
        if d["kind"] == "ServiceAccount":
            d["metadata"]["namespace"] = NS
        else:
            d["metadata"]["name"] = role
        if d["kind"] == "ClusterRoleBinding":
            d["roleRef"]["name"] = role
            d["subjects"] = [{"kind": "ServiceAccount", "name": "trainer-webhook", "namespace": NS}]
    K.apply({"apiVersion": "v1", "kind": "List", "items": docs})
    return testbed.service_account_kubeconfig(K, NS, "trainer-webhook",
                                              os.path.join(WORK, "webhook-kubeconfig"))


def main():
    testbed.install_trainer_crds(K, manager="plugins-test")
    K.run("create", "namespace", NS)
    K.run("label", "namespace", NS, f"{LABEL}={RUN_ID}")
    only = set(filter(None, os.environ.get("CASES", "").split(",")))
    failures = []
    wh = testbed.Webhook(K, WORK, kubeconfig=webhook_identity())
    ctl = None
    try:
        check(wh.probe("/readyz") == (200, "ok"), "trainer-webhook not ready")
        wh.register(f"plugins-test-{RUN_ID}-", LABEL, RUN_ID,
                    probe_trainjob=trainjob("probe", "does-not-exist"))
        ctl = testbed.Controller(log_dir=WORK)
        for case in CASES:
            name = case.__name__[len("case_"):].replace("_", "-")
            if only and name not in only:
                continue
            start = time.time()
            try:
                new = case(ctl)
                if new is not None:
                    ctl = new
                print("ok    %-13s %.1fs" % (name, time.time() - start))
            except Exception as e:  # noqa: BLE001
                failures.append(name)
                print("FAIL  %-13s %s" % (name, e))
                traceback.print_exc()
            if ctl.proc.poll() is not None:
                print("controller exited (%r); starting another" % ctl.proc.returncode)
                ctl = testbed.Controller(log_dir=WORK)
    finally:
        if ctl is not None:
            ctl.stop()
        wh.stop()
        K.delete_namespace(NS)
        K.run("delete", "clustertrainingruntimes,priorityclasses,clusterroles,clusterrolebindings",
              "-l", f"{LABEL}={RUN_ID}",
              "--ignore-not-found", check=False)
    if failures:
        print("controller and webhook logs in %s" % WORK)
        print("FAILED: %s" % ", ".join(failures))
        sys.exit(1)
    shutil.rmtree(WORK, ignore_errors=True)
    print("all plugins integration cases passed")


if __name__ == "__main__":
    main()
