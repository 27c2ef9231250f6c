#!/usr/bin/env python3
"""Chaos: two replicas of each service.

Controller leader hand-over: two trainer-controllers with --leader-elect on one Lease (15 s lease,
10 s renew deadline, 2 s retry: upstream's defaults). The leader is killed with SIGKILL (it cannot
release the Lease); the standby may take the Lease only once it has seen the record unchanged for
the lease duration. As client-go, it polls every retry period jittered by 1.2 (2 to 4.4 s), so the
worst case after the kill is one poll to observe the last renewal, 15 s, and one more poll:
HANDOVER_BOUND = 15 + 2 x 4.4 = 23.8 s, plus 1 s of slack. Figures: time to the new holder and
time to the first JobSet it creates (a TrainJob created right after the kill).

Webhook replica killed under load: kube-apiserver calls a webhook registered by Service through
its service resolver; with --enable-aggregator-routing (set on the test bed's apiserver for this
test through hack/testbed/restart-apiserver.sh --set-flag, and set back at the end) that resolver
picks a random ready endpoint of the Service's EndpointSlices for each new connection
(k8s.io/apiserver/pkg/util/proxy.ResolveEndpoint), which is how the calls reach two replicas
here: a Service without selector and one EndpointSlice per replica (this machine's address, as
EndpointSlices refuse loopback ones, and the replica's port). The
shipped webhook configurations (failurePolicy: Fail) point at that Service. A load of dry-run
TrainJob creates runs through the apiserver in three phases:
  both         both replicas serving (both must receive calls)
  dead-listed  replica 2 killed with SIGKILL, its endpoint still listed as ready (what the
               apiserver sees until the EndpointSlice controller notices the pod is gone)
  removed      replica 2's endpoint marked not ready (what the EndpointSlice controller does)
  replaced     a new replica (new port) listed ready in its place
  drained      the new replica's endpoint marked not ready, SIGTERM 2 s later (a rolling update
               with a preStop sleep)
The apiserver does not retry a webhook POST on another endpoint (client-go retries only GETs on
connection errors, and a POST only on a Retry-After answer), so calls that dial the dead endpoint
fail. The test asserts zero failures in every phase but `dead-listed`, whose count it reports.
"""

import json
import os
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
HANDOVER_BOUND = 15 + 2 * 4.4
PHASE = float(os.environ.get("PHASE", "6"))
LOADERS = int(os.environ.get("LOADERS", "4"))
RUN_ID = str(os.getpid())
NS = f"chaos-rep-{RUN_ID}"
LABEL = "trainer-cpp.chaos/run"
RUNTIME = f"chaos-rep-{RUN_ID}"
SVC = "trainer-webhook"


def lease_holder(client, name):
    status, body = client.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/{name}")
    return body["spec"].get("holderIdentity") or None if status == 200 else None


def leading(ctl):
    return any("starting controllers" in line for line in open(ctl.log_path))


def controller_handover(r, k, work):
    lease = "chaos-rep-lease"
    flags = ("--leader-elect", "--leader-election-namespace", NS, "--leader-election-id", lease)
    a = tb.Controller(*flags, log_dir=work)
    time.sleep(0.5)  # a first, so it most likely leads; the test works either way
    b = tb.Controller(*flags, log_dir=work)
    client = cl.ApiClient()
    try:
        tb.wait_for("a lease holder", lambda: lease_holder(client, lease), 60, 0.2)
        leader, standby = tb.wait_for("the leader to start its controllers", lambda: (
            (a, b) if leading(a) else (b, a) if leading(b) else None), 60, 0.2)
        k.apply(cl.trainjob("before-handover", NS, RUNTIME))
        tb.wait_for("JobSet of the leader", lambda: k.run(
            "get", "jobsets.jobset.x-k8s.io", "before-handover", "-n", NS,
            check=False).returncode == 0, 60, 0.2)
        old_holder = lease_holder(client, lease)
        r.check(not leading(standby), "the standby does not reconcile while the leader runs")
        leader.stop(signal.SIGKILL)
        killed = time.time()
        k.apply(cl.trainjob("after-handover", NS, RUNTIME))
        bound = HANDOVER_BOUND + 1
        try:
            tb.wait_for("a new lease holder", lambda: lease_holder(client, lease) not in
                        (None, old_holder), bound, 0.1)
            took = time.time() - killed
            tb.wait_for("JobSet of the new leader", lambda: k.run(
                "get", "jobsets.jobset.x-k8s.io", "after-handover", "-n", NS,
                check=False).returncode == 0, max(1, killed + bound - time.time()), 0.1)
            reconciled = time.time() - killed
            r.check(leading(standby) and took <= bound,
                    f"controller hand-over after SIGKILL of the leader: Lease taken in "
                    f"{took:.1f}s, first JobSet by the new leader {reconciled:.1f}s after the "
                    f"kill (bound: lease 15s + 2 jittered retries = {bound:.0f}s)")
        except AssertionError as e:
            r.check(False, f"controller hand-over: {e}")
        return [standby.log_path]
    finally:
        client.close()
        for c in (a, b):
            if c.proc.poll() is None:
                c.stop()


def webhook_replicas(r, k, work):
    replicas = []
    for i in (1, 2):
        os.mkdir(os.path.join(work, f"replica-{i}"))
        replicas.append(tb.Webhook(k, os.path.join(work, f"replica-{i}"), cn=f"chaos-rep-{i}",
                                   dns=(f"{SVC}.{NS}.svc",)))
    # The shipped configurations, scoped to this test, calling the Service instead of a URL.
    base = f"https://127.0.0.1:{replicas[0].port}"
    configs = tb.scoped_webhook_configurations(replicas[0].port, replicas[0].ca,
                                               f"chaos-rep-{RUN_ID}-", LABEL, RUN_ID)
    for item in configs["items"]:
        for wh in item["webhooks"]:
            cc = wh["clientConfig"]
            wh["clientConfig"] = {"caBundle": cc["caBundle"], "service": {
                "name": SVC, "namespace": NS, "port": 443, "path": cc["url"][len(base):]}}
    logs = [w.log_path for w in replicas]
    try:
        k.run("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SVC, "namespace": NS},
             "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}},
            cl.endpoint_slice(NS, SVC, f"{SVC}-1", replicas[0].port),
            cl.endpoint_slice(NS, SVC, f"{SVC}-2", replicas[1].port)]}))
        replicas[0].configs = configs  # so stop() removes them
        k.run("apply", "-f", "-", stdin=json.dumps(configs))
        tb.wait_for("the Service-referenced webhooks called", lambda: "denied the request" in
                    k.create(cl.probe_trainjob(NS), "--dry-run=server").stderr, 60, 0.5)

        stop = threading.Event()
        phase = {"name": "both"}
        results = {}  # phase -> [ok, failed, {message: count}]
        lock = threading.Lock()

        def load():
            client = cl.ApiClient()
            i = 0
            while not stop.is_set():
                status, body = client.request(
                    "POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainjobs"
                    "?dryRun=All", cl.trainjob(f"load-{threading.get_ident()}-{i}", NS, RUNTIME))
                i += 1
                # By completion: a call in flight when the replica dies counts as after the kill.
                ph = phase["name"]
                with lock:
                    res = results.setdefault(ph, [0, 0, {}])
                    if status == 201:
                        res[0] += 1
                    else:
                        res[1] += 1
                        msg = body.get("message", str(body)) if isinstance(body, dict) else body
                        msg = msg.split("failed to call webhook:")[-1][-160:]
                        res[2][msg] = res[2].get(msg, 0) + 1
            client.close()
        loaders = [threading.Thread(target=load, daemon=True) for _ in range(LOADERS)]
        for t in loaders:
            t.start()
        time.sleep(PHASE)
        per_replica = [metric_requests(w) for w in replicas]
        phase["name"] = "dead-listed"
        replicas[1].kill()
        time.sleep(PHASE)
        phase["name"] = "removed"
        k.run("apply", "-f", "-", stdin=json.dumps(cl.endpoint_slice(
            NS, SVC, f"{SVC}-2", replicas[1].port, ready=False)))
        time.sleep(1)  # the apiserver's EndpointSlice informer
        phase["name"] = "removed-settled"
        time.sleep(PHASE)
        # A replacement for replica 2 (a new port, as a new pod has a new address), listed ready.
        os.mkdir(os.path.join(work, "replica-3"))
        replicas.append(tb.Webhook(k, os.path.join(work, "replica-3"), cn="chaos-rep-3",
                                   dns=(f"{SVC}.{NS}.svc",)))
        logs.append(replicas[2].log_path)
        k.run("apply", "-f", "-", stdin=json.dumps(cl.endpoint_slice(
            NS, SVC, f"{SVC}-2", replicas[2].port)))
        time.sleep(1)
        phase["name"] = "replaced"
        time.sleep(PHASE)
        # A rolling update done right: the endpoint leaves first (a preStop sleep lets the
        # EndpointSlice controller and the apiserver see it), then SIGTERM.
        phase["name"] = "drained-then-sigterm"
        k.run("apply", "-f", "-", stdin=json.dumps(cl.endpoint_slice(
            NS, SVC, f"{SVC}-2", replicas[2].port, ready=False)))
        time.sleep(2)
        replicas[2].proc.terminate()
        replicas[2].proc.wait(30)
        time.sleep(PHASE)
        stop.set()
        for t in loaders:
            t.join(60)
        for ph in ("both", "dead-listed", "removed", "removed-settled", "replaced",
                   "drained-then-sigterm"):
            ok, failed, msgs = results.get(ph, [0, 0, {}])
            r.figure(f"phase {ph}: {ok} admitted, {failed} failed "
                     f"{sorted(msgs.items(), key=lambda kv: -kv[1])[:2]}")
        r.check(min(per_replica) > 0, f"the apiserver spreads webhook calls over both endpoints: "
                f"requests per replica {per_replica}")
        both = results.get("both", [0, 0, {}])
        r.check(both[0] > 0 and both[1] == 0, f"both replicas up: {both[0]} admitted, "
                f"{both[1]} failed")
        dead = results.get("dead-listed", [0, 0, {}])
        total = dead[0] + dead[1]
        r.figure(f"replica killed, endpoint still ready: {dead[1]}/{total} admissions failed "
                 f"({100.0 * dead[1] / max(1, total):.0f}%); the apiserver does not retry them "
                 "on the other endpoint")
        settled = results.get("removed-settled", [0, 0, {}])
        r.check(settled[0] > 0 and settled[1] == 0,
                f"endpoint marked not ready: {settled[0]} admitted, {settled[1]} failed")
        for ph, what in (("replaced", "a replacement replica listed"),
                         ("drained-then-sigterm", "endpoint removed 2 s before SIGTERM")):
            ok, failed, _ = results.get(ph, [0, 0, {}])
            r.check(ok > 0 and failed == 0, f"{what}: {ok} admitted, {failed} failed")
        r.check(replicas[0].proc.poll() is None, "replica 1 still running")
    finally:
        for w in replicas:
            w.stop()
    return logs


def metric_requests(wh):
    status, text = tb.http_get(f"http://127.0.0.1:{wh.metrics_port}/metrics")
    total = 0
    for line in text.splitlines():
        if line.startswith("controller_runtime_webhook_requests_total{"):
            total += float(line.split()[-1])
    return int(total)


def main():
    r = cl.Result("chaos_replicas")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-rep-")
    with cl.run_namespace(k, NS, RUNTIME, LABEL, RUN_ID):
        logs = controller_handover(r, k, work)
        with cl.aggregator_routing():
            logs += webhook_replicas(r, k, work)
    return r.finish(logs)


if __name__ == "__main__":
    sys.exit(main())
