#!/usr/bin/env python3
"""Integration test of trainer-controller against the test bed (kube-apiserver, etcd,
kube-controller-manager with the garbage collector; no JobSet controller, so JobSet status is
patched by hand).

Cases (each a function below, run in order; failures are collected and reported together):
  golden        runtime + TrainJob -> JobSet with the content trainer-render (the runtime
                library, offline) produces for the same inputs, ownerReferences, snapshot ConfigMap
  status        JobSet status patched by hand (jobsStatus, Completed, Failed) -> TrainJob status
  suspend       suspend -> Suspended condition, JobSet suspended; resume -> Resumed, unsuspended
  deadline      activeDeadlineSeconds exceeded -> Failed/DeadlineExceeded, JobSet deleted
  gc            delete the TrainJob -> JobSet and snapshot ConfigMap garbage-collected
  managedby     managedBy other than trainer -> no objects, no status
  ssa           on a suspended JobSet an edit of a field trainer owns is taken back; a field
                someone else added survives
  errors        a missing runtime -> ResourcesCreationFailed condition + Event, cleared once the
                runtime appears
  finalizer     a legacy resource-in-use finalizer on a runtime is removed
  protect       --protect-runtimes-in-use: off (v2.3.0), a runtime in use is deleted at once;
                on, a ClusterTrainingRuntime and a TrainingRuntime in use stay (deleting) until
                their last TrainJob goes, an unused one gets no finalizer
  endpoints     /healthz, /readyz, /metrics with controller-runtime and trainer_* names
  crash         kill -9 in the middle of a 200-TrainJob wave, restart -> all converge, no
                duplicates, no orphans
  sigterm       with --leader-elect: SIGTERM -> exit 0 and the Lease released

Environment: TESTBED_DIR (kubeconfig), TRAINER_BIN_DIR (trainer-controller, trainer-render),
optional KUBECTL, optional CASES (comma-separated subset).
"""

import json
import os
import random
import signal
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

BIN = testbed.bin_dir()
NS = "ctrl-it-%d" % random.randint(10000, 99999)
WORK = tempfile.mkdtemp(prefix="controller-it-")
K = testbed.Kubectl()


def kubectl(*args, stdin=None, check=True):
    return K.run(*args, stdin=stdin, check=check).stdout


def apply(obj, manager="it-test"):
    K.apply(obj, manager)


def get(resource, name, ns=NS):
    return K.get_or_none(resource, name, ns, managed_fields=True)


def list_items(resource, ns=NS):
    return K.items(resource, ns)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def Controller(*flags):  # noqa: N802 - stands for the class it constructs
    return testbed.Controller(*flags, log_dir=WORK)


def trainjob(name, runtime="torch-it", **spec):
    tj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
          "metadata": {"name": name, "namespace": NS},
          "spec": {"runtimeRef": {"name": runtime},
                   "trainer": {"numNodes": 2, "command": ["python3", "-c", "print(1)"]}}}
    tj["spec"].update(spec)
    return tj


def runtime_object(name="torch-it"):
    with open(os.path.join(ROOT, "examples/runtimes/torch-distributed.yaml")) as f:
        rt = yaml.safe_load(f)
    rt["metadata"]["name"] = name
    return rt


# ---------------------------------------------------------------------------------------------

def case_golden(ctl):
    apply(trainjob("golden"))
    js = wait_for("JobSet golden", lambda: get("jobsets.jobset.x-k8s.io", "golden"))
    tj = get("trainjobs", "golden")
    cm = wait_for("snapshot", lambda: get("configmaps", "golden-runtime-snapshot"))
    for obj in (js, cm):
        refs = obj["metadata"].get("ownerReferences", [])
        check(len(refs) == 1 and refs[0]["uid"] == tj["metadata"]["uid"] and refs[0]["controller"]
              and refs[0]["blockOwnerDeletion"] and refs[0]["kind"] == "TrainJob",
              "ownerReferences of %s: %r" % (obj["kind"], refs))
    check("kind: ClusterTrainingRuntime" in cm["data"]["runtime"] and
          "name: torch-it" in cm["data"]["runtime"], "snapshot data: %r" % cm["data"])
    check("trainer.kubeflow.org/applied-hash" in js["metadata"].get("annotations", {}),
          "applied-hash annotation missing")
    managers = {e["manager"]: e["operation"] for e in js["metadata"].get("managedFields", [])}
    check(managers == {"trainer": "Apply"}, "JobSet managers: %r" % managers)
    # The runtime library offline, on the same inputs.
    rt_file = os.path.join(WORK, "rt.json")
    tj_file = os.path.join(WORK, "tj.json")
    with open(rt_file, "w") as f:
        json.dump(get("clustertrainingruntimes", "torch-it", ns=None), f)
    with open(tj_file, "w") as f:
        tj.pop("status", None)
        json.dump(tj, f)
    out = subprocess.run([os.path.join(BIN, "trainer-render"), "-f", rt_file, "-f", tj_file,
                          "-o", "json"], capture_output=True, text=True)
    check(out.returncode == 0, "trainer-render: %s" % out.stderr)
    rendered = [o for o in json.loads(out.stdout)["items"] if o["kind"] == "JobSet"]
    check(len(rendered) == 1, "render gave %d JobSets" % len(rendered))
    err = subset(rendered[0]["spec"], js["spec"], "spec") or \
        subset(rendered[0]["metadata"].get("labels", {}), js["metadata"].get("labels", {}),
               "metadata.labels")
    check(err is None, "live JobSet differs from trainer-render: %s" % err)
    # Normal path: no conditions at all (the SDK derives Running from the pods only then).
    time.sleep(0.5)
    check(not get("trainjobs", "golden").get("status", {}).get("conditions"),
          "unexpected conditions on a new TrainJob")


def case_status(ctl):
    apply(trainjob("st"))
    wait_for("JobSet st", lambda: get("jobsets.jobset.x-k8s.io", "st"))
    kubectl("patch", "jobsets.jobset.x-k8s.io", "st", "-n", NS, "--subresource=status",
            "--type=merge", "-p", json.dumps({"status": {"replicatedJobsStatus": [
                {"name": "node", "ready": 1, "succeeded": 0, "failed": 0, "active": 2,
                 "suspended": 0}]}}))
    tj = wait_for("jobsStatus", lambda: (lambda t: t if t.get("status", {}).get("jobsStatus")
                                         else None)(get("trainjobs", "st")))
    check(tj["status"]["jobsStatus"] == [{"name": "node", "ready": 1, "succeeded": 0,
                                          "failed": 0, "active": 2, "suspended": 0}],
          "jobsStatus: %r" % tj["status"]["jobsStatus"])
    kubectl("patch", "jobsets.jobset.x-k8s.io", "st", "-n", NS, "--subresource=status",
            "--type=merge", "-p", json.dumps({"status": {"conditions": [
                {"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                 "message": "jobset completed successfully",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}))
    c = wait_for("Complete", lambda: condition(get("trainjobs", "st"), "Complete"))
    check(c["reason"] == "AllJobsCompleted" and c["message"] == "jobset completed successfully"
          and c["lastTransitionTime"] == "2026-01-01T00:00:00Z", "Complete: %r" % c)

    apply(trainjob("stf"))
    wait_for("JobSet stf", lambda: get("jobsets.jobset.x-k8s.io", "stf"))
    kubectl("patch", "jobsets.jobset.x-k8s.io", "stf", "-n", NS, "--subresource=status",
            "--type=merge", "-p", json.dumps({"status": {"conditions": [
                {"type": "Failed", "status": "True", "reason": "FailedJobs",
                 "message": "jobset failed due to one or more job failures",
                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}))
    c = wait_for("Failed", lambda: condition(get("trainjobs", "stf"), "Failed"))
    check(c["reason"] == "FailedJobs", "Failed: %r" % c)
    # Failed is terminal: the JobSet vanishing does not re-create it.
    kubectl("delete", "jobsets.jobset.x-k8s.io", "stf", "-n", NS)
    time.sleep(2)
    check(get("jobsets.jobset.x-k8s.io", "stf") is None, "JobSet of a Failed TrainJob re-created")
    check(condition(get("trainjobs", "stf"), "Failed")["reason"] == "FailedJobs",
          "Failed condition lost")


def case_suspend(ctl):
    apply(trainjob("sus", suspend=True))
    js = wait_for("JobSet sus", lambda: get("jobsets.jobset.x-k8s.io", "sus"))
    check(js["spec"]["suspend"] is True, "JobSet not suspended")
    c = wait_for("Suspended", lambda: condition(get("trainjobs", "sus"), "Suspended"))
    check((c["status"], c["reason"], c["message"]) == ("True", "Suspended",
                                                       "TrainJob is suspended"), repr(c))
    kubectl("patch", "trainjobs", "sus", "-n", NS, "--type=merge", "-p",
            '{"spec":{"suspend":false}}')
    c = wait_for("Resumed", lambda: (lambda c: c if c and c["status"] == "False" else None)(
        condition(get("trainjobs", "sus"), "Suspended")))
    check((c["reason"], c["message"]) == ("Resumed", "TrainJob is resumed"), repr(c))
    wait_for("JobSet resumed",
             lambda: get("jobsets.jobset.x-k8s.io", "sus")["spec"]["suspend"] is False)


def case_deadline(ctl):
    apply(trainjob("dl", activeDeadlineSeconds=3))
    wait_for("JobSet dl", lambda: get("jobsets.jobset.x-k8s.io", "dl"))
    c = wait_for("DeadlineExceeded", lambda: condition(get("trainjobs", "dl"), "Failed"),
                 timeout=20)
    check((c["reason"], c["message"]) == ("DeadlineExceeded",
                                          "TrainJob exceeded its active deadline"), repr(c))
    wait_for("JobSet dl deleted", lambda: get("jobsets.jobset.x-k8s.io", "dl") is None)
    time.sleep(1.5)
    check(get("jobsets.jobset.x-k8s.io", "dl") is None, "JobSet re-created after the deadline")


def case_gc(ctl):
    apply(trainjob("gc"))
    wait_for("JobSet gc", lambda: get("jobsets.jobset.x-k8s.io", "gc"))
    wait_for("snapshot gc", lambda: get("configmaps", "gc-runtime-snapshot"))
    kubectl("delete", "trainjobs", "gc", "-n", NS, "--wait=false")
    wait_for("JobSet gc collected", lambda: get("jobsets.jobset.x-k8s.io", "gc") is None, 60)
    wait_for("snapshot gc collected", lambda: get("configmaps", "gc-runtime-snapshot") is None, 60)


def case_managedby(ctl):
    apply(trainjob("mk", managedBy="kueue.x-k8s.io/multikueue"))
    time.sleep(2)
    check(get("jobsets.jobset.x-k8s.io", "mk") is None, "JobSet created for a foreign TrainJob")
    check(get("configmaps", "mk-runtime-snapshot") is None, "snapshot for a foreign TrainJob")
    check(not get("trainjobs", "mk").get("status"), "status written for a foreign TrainJob")


def case_ssa(ctl):
    apply(trainjob("ssa", suspend=True))
    wait_for("JobSet ssa", lambda: get("jobsets.jobset.x-k8s.io", "ssa"))
    wait_for("Suspended", lambda: condition(get("trainjobs", "ssa"), "Suspended"))
    # Someone edits a field trainer owns (the image) and adds a label trainer does not own.
    js = get("jobsets.jobset.x-k8s.io", "ssa")
    image = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["image"]
    kubectl("patch", "jobsets.jobset.x-k8s.io", "ssa", "-n", NS, "--type=json", "-p", json.dumps([
        {"op": "replace",
         "path": "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image",
         "value": "evil:latest"},
        {"op": "add", "path": "/metadata/labels", "value": {"team": "blue"}}]))

    def restored():
        j = get("jobsets.jobset.x-k8s.io", "ssa")
        img = j["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
            "containers"][0]["image"]
        return j if img == image else None
    j = wait_for("image taken back", restored)
    check(j["metadata"].get("labels", {}).get("team") == "blue",
          "a label trainer does not own was removed: %r" % j["metadata"].get("labels"))


def case_errors(ctl):
    apply(trainjob("err", runtime="missing-rt"))
    c = wait_for("ResourcesCreationFailed",
                 lambda: condition(get("trainjobs", "err"), "ResourcesCreationFailed"))
    check(c["status"] == "True" and c["reason"] == "BuildFailed" and
          "missing-rt" in c["message"], repr(c))
    events = wait_for("event", lambda: [e for e in json.loads(kubectl(
        "get", "events.events.k8s.io", "-n", NS, "-o", "json"))["items"]
        if e.get("regarding", {}).get("name") == "err"])
    e = events[0]
    check(e["reason"] == "TrainJobResourcesCreationFailed" and e["action"] == "Reconciling" and
          e["type"] == "Warning" and e["reportingController"] == "trainer-trainjob-controller" and
          e["note"].startswith("TrainJob resources reconciliation failed: "), repr(e))
    apply(runtime_object("missing-rt"))
    wait_for("JobSet err", lambda: get("jobsets.jobset.x-k8s.io", "err"))
    wait_for("condition cleared",
             lambda: condition(get("trainjobs", "err"), "ResourcesCreationFailed") is None)


def case_finalizer(ctl):
    rt = runtime_object("fin-rt")
    rt["metadata"]["finalizers"] = ["trainer.kubeflow.org/resource-in-use", "example.com/keep"]
    apply(rt)
    wait_for("legacy finalizer removed", lambda: get("clustertrainingruntimes", "fin-rt", None)[
        "metadata"].get("finalizers") == ["example.com/keep"])
    kubectl("patch", "clustertrainingruntimes", "fin-rt", "--type=merge", "-p",
            '{"metadata":{"finalizers":null}}')
    kubectl("delete", "clustertrainingruntimes", "fin-rt")


IN_USE = "trainer.kubeflow.org/resource-in-use"


def finalizers(resource, name, ns=None):
    obj = get(resource, name, ns)
    return None if obj is None else obj["metadata"].get("finalizers", [])


def deleting_stays(resource, name, ns=None, seconds=2.0):
    """The runtime still exists `seconds` after its deletion began, with a deletionTimestamp."""
    time.sleep(seconds)
    obj = get(resource, name, ns)
    check(obj is not None and obj["metadata"].get("deletionTimestamp"),
          "%s %s: expected it to stay while in use, got %r" % (resource, name, obj and obj[
              "metadata"]))


def case_protect(ctl):
    # Off (the default, v2.3.0): a runtime a TrainJob uses gets no finalizer and is deleted at
    # once; the TrainJob keeps its snapshot.
    apply(runtime_object("prot-off"))
    apply(trainjob("po", runtime="prot-off"))
    wait_for("JobSet po", lambda: get("jobsets.jobset.x-k8s.io", "po"))
    check(IN_USE not in finalizers("clustertrainingruntimes", "prot-off"),
          "finalizer without --protect-runtimes-in-use")
    kubectl("delete", "clustertrainingruntimes", "prot-off", "--timeout=30s")
    check(get("clustertrainingruntimes", "prot-off", None) is None, "prot-off not deleted")

    ctl.stop()
    c = Controller("--protect-runtimes-in-use")
    try:
        protect_on()
    except Exception:
        c.stop(signal.SIGKILL)
        raise
    return c


def protect_on():
    apply(runtime_object("prot-on"))
    ns_rt = runtime_object("prot-ns")
    ns_rt["kind"] = "TrainingRuntime"
    ns_rt["metadata"]["namespace"] = NS
    apply(ns_rt)
    apply(runtime_object("prot-unused"))
    for name in ("pa", "pb"):
        apply(trainjob(name, runtime="prot-on"))
    tj = trainjob("pn", runtime="prot-ns")
    tj["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    apply(tj)
    wait_for("finalizer on prot-on",
             lambda: IN_USE in finalizers("clustertrainingruntimes", "prot-on"))
    wait_for("finalizer on prot-ns", lambda: IN_USE in finalizers("trainingruntimes", "prot-ns", NS))
    wait_for("JobSet pn", lambda: get("jobsets.jobset.x-k8s.io", "pn"))
    check(IN_USE not in finalizers("clustertrainingruntimes", "prot-unused"),
          "finalizer on a runtime no TrainJob uses")
    kubectl("delete", "clustertrainingruntimes", "prot-unused", "--timeout=30s")

    kubectl("delete", "clustertrainingruntimes", "prot-on", "--wait=false")
    kubectl("delete", "trainingruntimes", "prot-ns", "-n", NS, "--wait=false")
    deleting_stays("clustertrainingruntimes", "prot-on")
    deleting_stays("trainingruntimes", "prot-ns", NS, seconds=0)
    kubectl("delete", "trainjob", "pa", "-n", NS)
    deleting_stays("clustertrainingruntimes", "prot-on")
    kubectl("delete", "trainjob", "pb", "-n", NS)
    wait_for("prot-on gone with its last TrainJob",
             lambda: get("clustertrainingruntimes", "prot-on", None) is None)
    deleting_stays("trainingruntimes", "prot-ns", NS, seconds=0)
    kubectl("delete", "trainjob", "pn", "-n", NS)
    wait_for("prot-ns gone with its last TrainJob",
             lambda: get("trainingruntimes", "prot-ns", NS) is None)


def case_endpoints(ctl):
    check(ctl.http(ctl.health, "/healthz") == "ok", "healthz")
    check(ctl.http(ctl.health, "/readyz") == "ok", "readyz")
    text = ctl.http(ctl.metrics, "/metrics") or ""
    for name in ['controller_runtime_reconcile_total{controller="trainjob_controller",'
                 'result="success"}',
                 "controller_runtime_reconcile_errors_total",
                 "controller_runtime_reconcile_time_seconds_bucket",
                 "controller_runtime_active_workers",
                 'workqueue_adds_total{controller="trainjob_controller",name="trainjob_controller"}',
                 "workqueue_depth", "workqueue_queue_duration_seconds_bucket",
                 "trainer_trainjob_objects_applied_seconds_count",
                 'trainer_trainjob_apply_errors_total{kind="', "trainer_trainjob_jobset_ready_seconds",
                 'trainer_trainjobs{state="Created"}', "process_resident_memory_bytes"]:
        check(name in text, "metric %s missing" % name)


def case_crash(ctl):
    ctl.stop(signal.SIGKILL)
    n = 200
    docs = [trainjob("wave-%03d" % i) for i in range(n)]
    with open(os.path.join(WORK, "wave.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": docs}, f)
    kubectl("create", "-f", os.path.join(WORK, "wave.json"))
    # The wave starts when the controller does; a client-side limit stretches it (2 writes per
    # TrainJob at 20/s: ~20 s) so the kill lands in its middle.
    ctl2 = Controller("--trainjob-workers=5", "--kube-api-qps=20", "--kube-api-burst=1")

    def some():
        # The controller's own count (cheap to poll, unlike listing 200 JobSets).
        text = ctl2.http(ctl2.metrics, "/metrics") or ""
        for line in text.splitlines():
            if line.startswith("trainer_trainjob_objects_applied_seconds_count"):
                k = int(float(line.split()[-1]))
                return k if k >= 20 else None
        return None
    try:
        wait_for("first wave JobSets", some, 120)
    finally:
        ctl2.stop(signal.SIGKILL)
    seen = len([j for j in list_items("jobsets.jobset.x-k8s.io")
                if j["metadata"]["name"].startswith("wave-")])
    print("  killed -9 with %d/%d wave JobSets applied" % (seen, n))
    check(seen < n, "the kill came after the wave (%d/%d)" % (seen, n))
    ctl3 = Controller()

    def converged():
        js = [j for j in list_items("jobsets.jobset.x-k8s.io")
              if j["metadata"]["name"].startswith("wave-")]
        return len(js) == n
    wait_for("all %d JobSets" % n, converged, 120)
    tjs = {t["metadata"]["name"]: t for t in list_items("trainjobs")}
    jobsets = list_items("jobsets.jobset.x-k8s.io")
    cms = [c for c in list_items("configmaps") if c["metadata"]["name"].endswith(
        "-runtime-snapshot")]
    for kind, objs in (("JobSet", jobsets), ("ConfigMap", cms)):
        for o in objs:
            refs = o["metadata"].get("ownerReferences", [])
            check(len(refs) == 1, "%s %s has %d owners" % (kind, o["metadata"]["name"], len(refs)))
            owner = tjs.get(refs[0]["name"])
            check(owner is not None and owner["metadata"]["uid"] == refs[0]["uid"],
                  "orphan %s %s" % (kind, o["metadata"]["name"]))
    for i in range(n):
        name = "wave-%03d" % i
        check(any(c["metadata"]["name"] == name + "-runtime-snapshot" for c in cms),
              "snapshot of %s missing" % name)
        check(not (tjs[name].get("status") or {}).get("conditions"),
              "conditions on %s: %r" % (name, tjs[name].get("status")))
    return ctl3


def case_sigterm(ctl):
    ctl.stop()
    lease_ns = NS
    c = Controller("--leader-elect", "--leader-election-namespace", lease_ns,
                   "--leader-election-id", "trainer-it")
    try:
        lease = wait_for("lease held", lambda: (lambda l: l if l and l["spec"].get(
            "holderIdentity") else None)(get("leases", "trainer-it", lease_ns)))
        apply(trainjob("le"))
        wait_for("JobSet le (leader)", lambda: get("jobsets.jobset.x-k8s.io", "le"))
        # client-go's leader_election_master_status, named after the Lease.
        wait_for("leader_election_master_status 1 while leading",
                 lambda: 'leader_election_master_status{name="trainer-it"} 1' in
                 (c.http(c.metrics, "/metrics") or ""))
    except Exception:
        c.stop(signal.SIGKILL)
        raise
    rc = c.stop(signal.SIGTERM)
    check(rc == 0, "exit code after SIGTERM: %r" % rc)
    lease = get("leases", "trainer-it", lease_ns)
    check(not lease["spec"].get("holderIdentity"), "lease not released: %r" % lease["spec"])
    return None


CASES = [case_golden, case_status, case_suspend, case_deadline, case_gc, case_managedby,
         case_ssa, case_errors, case_finalizer, case_protect, case_endpoints, case_crash,
         case_sigterm]


def main():
    testbed.install_trainer_crds(K)
    kubectl("create", "namespace", NS)
    apply(runtime_object("torch-it"))
    only = set(filter(None, os.environ.get("CASES", "").split(",")))
    ctl = Controller()
    failures = []
    try:
        for case in CASES:
            name = case.__name__[len("case_"):]
            if only and name not in only:
                continue
            start = time.time()
            try:
                new = case(ctl)
                if new is not None or name in ("crash", "protect", "sigterm"):
                    ctl = new
                print("ok    %-10s %.1fs" % (name, time.time() - start))
            except Exception as e:  # noqa: BLE001
                failures.append(name)
                print("FAIL  %-10s %s" % (name, e))
                traceback.print_exc()
            if ctl is None or ctl.proc.poll() is not None:
                ctl = Controller()
    finally:
        if ctl is not None:
            ctl.stop()
        K.delete_namespace(NS)
        for name in ("torch-it", "missing-rt", "prot-off", "prot-on", "prot-unused"):
            # A failed protect case may leave its finalizer behind.
            kubectl("patch", "clustertrainingruntimes", name, "--type=merge", "-p",
                    '{"metadata":{"finalizers":null}}', check=False)
            kubectl("delete", "clustertrainingruntimes", name, "--ignore-not-found", check=False)
    if failures:
        print("controller logs in %s" % WORK)
        print("FAILED: %s" % ", ".join(failures))
        sys.exit(1)
    print("all controller integration cases passed")


if __name__ == "__main__":
    main()
