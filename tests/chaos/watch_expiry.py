#!/usr/bin/env python3
"""Chaos: watch expiry. The services' watches are forced onto 410 Gone and must relist without
missing the changes made meanwhile.

trainer-controller and trainer-webhook run and sync. Both are frozen (SIGSTOP, as a long GC pause
or a partition would) and the apiserver is restarted once, which ends their watch connections
(otherwise the apiserver would stream the gap's events into their socket buffers, to be read on
the resume without any relist). While they are frozen: a ClusterTrainingRuntime is created and another
deleted; a TrainJob is created, another suspended, another deleted, and the JobSet of a fourth is
deleted by hand. Then etcd is compacted at its current revision (etcd's v3 HTTP API,
/v3/kv/compaction, physical) and the apiserver is restarted, so its watch cache starts empty at
the new revision and neither it nor etcd holds the history the frozen watches would resume from.
The services are resumed (SIGCONT): every watch resumes from its old resourceVersion, gets
410 Gone ("too old resource version") and relists.

The deleted TrainJob's objects are deleted too inside the gap (by the test, as the garbage
collector would: kube-controller-manager's own watches take from seconds to over a minute to
reconnect after an apiserver restart, which is not what is under test). That is the hazard for a
stale cache. On the resume the controller's JobSet informer may relist before its TrainJob informer and
report the JobSet gone while the cache still holds the deleted TrainJob; a controller that then
re-applies would re-create a JobSet (and start its pods) for a TrainJob that no longer exists.
A watch on the namespace's JobSets, opened before the resume, sees any such re-creation however
briefly it lives.

Checks (bound RECOVER_BOUND s after the resume): each process logged relists after 410; the
controller acted on every change made in the gap (JobSet of the new TrainJob created, JobSet of
the suspended one suspended, the deleted JobSet re-created, the deleted TrainJob's objects never
re-created); the webhook admits a TrainJob of the runtime created in the gap and denies one of
the runtime deleted in the gap. Figures: time to each, number of 410 relists.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
RECOVER_BOUND = float(os.environ.get("RECOVER_BOUND", "90"))
RUN_ID = str(os.getpid())
NS = f"chaos-gone-{RUN_ID}"        # TrainJobs the controller works on (no webhook there)
ADMIT_NS = f"chaos-gone-adm-{RUN_ID}"  # where our webhook is registered
LABEL = "trainer-cpp.chaos/run"
JS = "jobsets.jobset.x-k8s.io"


def etcd_url():
    for line in open(os.path.join(tb.testbed_dir(), "env")):
        if line.startswith("export TESTBED_ETCD_URL="):
            return line.split("=", 1)[1].strip().strip("'\"")
    raise RuntimeError("no TESTBED_ETCD_URL in the test bed's env")


def etcd(path, body):
    req = urllib.request.Request(etcd_url() + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def relists(log_path):
    return sum(1 for line in open(log_path) if "informer relisting: resource version too old"
               in line)


def main():
    r = cl.Result("chaos_watch_expiry")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-gone-")
    rt, rt_new, rt_gone = (f"chaos-gone-{RUN_ID}", f"chaos-gone-new-{RUN_ID}",
                           f"chaos-gone-del-{RUN_ID}")
    # Runtimes carry no webhook label: their create/delete in the gap needs no admission.
    k.apply(cl.example_runtime("torch-distributed.yaml", rt))
    k.apply(cl.example_runtime("torch-distributed.yaml", rt_gone))
    wh = tb.Webhook(k, work, cn="chaos-gone")
    ctl = None
    frozen = []
    try:
        for ns in (NS, ADMIT_NS):
            k.run("create", "namespace", ns)
        k.run("label", "namespace", ADMIT_NS, f"{LABEL}={RUN_ID}")
        wh.register(f"chaos-gone-{RUN_ID}-", LABEL, RUN_ID, cl.probe_trainjob(ADMIT_NS))
        ctl = tb.Controller(log_dir=work)
        for name in ("keep", "suspend-me", "delete-me", "lose-jobset"):
            k.apply(cl.trainjob(name, NS, rt))
        for name in ("keep", "suspend-me", "delete-me", "lose-jobset"):
            tb.wait_for(f"JobSet {name}", lambda: k.run("get", JS, name, "-n", NS,
                                                        check=False).returncode == 0, 60, 0.2)
        lost_uid = k.get(JS, "lose-jobset", NS)["metadata"]["uid"]
        client = cl.ApiClient()
        status, _ = client.request("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/"
                                   f"{ADMIT_NS}/trainjobs?dryRun=All",
                                   cl.trainjob("pre", ADMIT_NS, rt_gone))
        r.check(status == 201, f"before the gap a TrainJob of {rt_gone} is admitted ({status})")
        relists_before = (relists(ctl.log_path), relists(wh.log_path))

        # ---- the gap ----
        owned_by_deleted = {kind: [o["metadata"]["name"] for o in items if any(
            ref["name"] == "delete-me" for ref in o["metadata"]["ownerReferences"])]
            for kind, items in cl.owned_objects(k, NS).items()}
        r.check(bool(owned_by_deleted[JS]), f"objects of delete-me before the gap: "
                f"{ {kind: len(names) for kind, names in owned_by_deleted.items() if names} }")

        def left_of_deleted():
            return [f"{kind} {o['metadata']['name']}" for kind, names in owned_by_deleted.items()
                    if names for o in cl.owned_objects(k, NS, [kind])[kind]
                    if o["metadata"]["name"] in names]
        for p in (ctl.proc, wh.proc):
            p.send_signal(signal.SIGSTOP)
            frozen.append(p)
        # A first restart ends the frozen processes' watch connections now, so the apiserver
        # cannot stream the gap's events into their socket buffers (they would read those on the
        # resume and never need the relist this test is about).
        ok, err = cl.restart_apiserver("--down-seconds", "1")
        r.check(ok, f"apiserver restarted to cut the frozen watches {err}")
        k.run("delete", "trainjob", "delete-me", "-n", NS, "--wait=false")
        # Its objects go the way the garbage collector would remove them, but by hand: how soon
        # kube-controller-manager's own watches reconnect after an apiserver restart varies
        # (their back-off reached 17-55 s here, more under load) and is not under test.
        for kind, names in owned_by_deleted.items():
            for name in names:
                k.run("delete", kind, name, "-n", NS, "--wait=false", "--ignore-not-found")
        r.check(not left_of_deleted(), "delete-me's objects deleted in the gap")
        k.apply(cl.example_runtime("torch-distributed.yaml", rt_new))
        k.run("delete", "clustertrainingruntime", rt_gone)
        k.apply(cl.trainjob("born-in-gap", NS, rt))
        k.run("patch", "trainjob", "suspend-me", "-n", NS, "--type=merge", "-p",
              '{"spec":{"suspend":true}}')
        k.run("delete", JS, "lose-jobset", "-n", NS, "--wait=false")
        rev = int(etcd("/v3/kv/range", {"key": "Lw=="})["header"]["revision"])
        etcd("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        r.figure(f"etcd compacted at revision {rev}")
        ok, err = cl.restart_apiserver("--down-seconds", "1")
        r.check(ok, f"apiserver restarted after the compaction {err}")
        # Every JobSet event in NS from here on: a re-created delete-me shows as ADDED.
        watch = subprocess.Popen(
            [k.binary, "--kubeconfig", k.kubeconfig, "get", JS, "-n", NS, "--watch-only",
             "--output-watch-events", "-o", "jsonpath={.type} {.object.metadata.name}{\"\\n\"}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(1)  # the watch is open before anything can happen
        for proc in frozen:
            proc.send_signal(signal.SIGCONT)
        frozen = []
        resumed = time.time()

        def timed(what, fn):
            try:
                tb.wait_for(what, fn, max(1, resumed + RECOVER_BOUND - time.time()), 0.2)
                r.check(True, f"{what}: {time.time() - resumed:.1f}s after the resume")
            except AssertionError as e:
                r.check(False, str(e))

        def js(name):
            p = k.run("get", JS, name, "-n", NS, "-o", "json", check=False)
            return json.loads(p.stdout) if p.returncode == 0 else None
        timed("controller: JobSet of the TrainJob created in the gap", lambda: js("born-in-gap"))
        timed("controller: JobSet of the TrainJob suspended in the gap suspended",
              lambda: (js("suspend-me") or {}).get("spec", {}).get("suspend") is True)
        timed("controller: JobSet deleted in the gap re-created",
              lambda: (js("lose-jobset") or {}).get("metadata", {}).get("uid") not in
              (None, lost_uid))

        def admission(runtime):
            status, body = client.request(
                "POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ADMIT_NS}/trainjobs"
                "?dryRun=All", cl.trainjob("post", ADMIT_NS, runtime))
            return status, body
        timed("webhook: TrainJob of the runtime created in the gap admitted",
              lambda: admission(rt_new)[0] == 201)
        timed("webhook: TrainJob of the runtime deleted in the gap denied",
              lambda: admission(rt_gone)[0] == 403 and "must be created before" in
              json.dumps(admission(rt_gone)[1]))
        def relisted():
            return (relists(ctl.log_path) - relists_before[0],
                    relists(wh.log_path) - relists_before[1])
        timed("watches got 410 Gone and relisted", lambda: all(n > 0 for n in relisted()))
        gone = relisted()
        r.figure(f"informers relisted after 410: controller {gone[0]}, webhook {gone[1]}")
        time.sleep(2)  # every relist has been handled; a late re-create would show by now
        watch.terminate()
        seen = watch.communicate(timeout=10)[0].split("\n")
        recreated = [line for line in seen if line.endswith(" delete-me")]
        r.check(not recreated and js("delete-me") is None,
                f"the deleted TrainJob's JobSet never re-created (JobSet events in {NS} after the "
                f"resume: {len([line for line in seen if line])}; of delete-me: {recreated})")
        r.check(not left_of_deleted(), f"no object of the deleted TrainJob re-created: "
                f"{left_of_deleted()}")
        r.check(ctl.proc.poll() is None and wh.proc.poll() is None, "both services running")
        client.close()
    finally:
        for proc in frozen:
            proc.send_signal(signal.SIGCONT)
        if ctl is not None and ctl.proc.poll() is None:
            ctl.stop()
        wh.stop()
        for ns in (NS, ADMIT_NS):
            k.delete_namespace(ns)
        for name in (rt, rt_new, rt_gone):
            k.run("delete", "clustertrainingruntime", name, "--ignore-not-found", check=False)
    return r.finish([wh.log_path] + ([ctl.log_path] if ctl else []))


if __name__ == "__main__":
    sys.exit(main())
