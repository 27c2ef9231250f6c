#!/usr/bin/env python3
"""Chaos: kube-apiserver killed (SIGKILL) and started again DOWN seconds later in the middle of
a wave of WAVE TrainJobs, with trainer-controller and trainer-webhook running.

The webhook is registered (by URL, scoped to this test's namespace) so the wave goes through
admission; the controller works through the wave with a client-side limit (--kube-api-qps) so the
outage lands in its middle. During the outage both services' /readyz are polled every 0.2 s.
Checks: both processes keep running with the same pids (no restart); the rest of the wave
converges (every TrainJob has its JobSet and snapshot ConfigMap, owned, no duplicates, no
orphans) within CONVERGE_BOUND s; the services' watches recovered: a ClusterTrainingRuntime created
after the restart is seen by the webhook (a TrainJob of it is admitted) and by the controller
(its JobSet is created), and a JobSet deleted by hand is re-created.

/readyz during the outage: both stay 200. That is deliberate and matches upstream: Kubeflow
Trainer v2.3.0's manager registers readyz = "certificates ready and webhook server started"
(cmd/trainer-controller-manager/main.go) and controller-runtime's checks do not call the
apiserver; our controller's readyz is "TrainJob and runtime caches synced once", the webhook's is
"certificates loaded, server started, runtime caches synced once". An apiserver outage is
cluster-wide: reporting every replica unready would take the webhook's endpoints away, so
admissions would fail for longer (until endpoints come back) instead of recovering with the
apiserver. The test records what the probes showed and fails if either flapped to unready.
"""

import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
WAVE = int(os.environ.get("WAVE", "300"))
DOWN = float(os.environ.get("DOWN", "4"))
CONVERGE_BOUND = float(os.environ.get("CONVERGE_BOUND", "240"))
RUN_ID = str(os.getpid())
NS = f"chaos-api-{RUN_ID}"
LABEL = "trainer-cpp.chaos/run"
RUNTIME = f"chaos-api-{RUN_ID}"
EXPECTED = {"jobsets.jobset.x-k8s.io": 1, "configmaps": 1}


class ReadyzPoller:
    def __init__(self, name, fn):
        self.name, self.fn = name, fn
        self.samples = []  # (time, status)
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), self.fn()))
            self.stop.wait(0.2)

    def during(self, start, end):
        return [s for t, s in self.samples if start <= t <= end]


def main():
    r = cl.Result("chaos_apiserver_restart")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-api-")
    k.apply(cl.example_runtime("torch-distributed.yaml", RUNTIME, {LABEL: RUN_ID}))
    wh = tb.Webhook(k, work, cn="chaos-api")
    ctl = None
    pollers = []
    try:
        k.run("create", "namespace", NS)
        k.run("label", "namespace", NS, f"{LABEL}={RUN_ID}")
        wh.register(f"chaos-api-{RUN_ID}-", LABEL, RUN_ID, cl.probe_trainjob(NS))
        ctl = tb.Controller("--kube-api-qps=25", "--kube-api-burst=5", log_dir=work)
        pids = (ctl.proc.pid, wh.proc.pid)

        failures = cl.create_wave(NS, RUNTIME, "wave", WAVE)
        r.check(not failures, f"wave of {WAVE} TrainJobs admitted ({failures[:3]})")
        tb.wait_for("the controller to be in the middle of the wave",
                    lambda: (cl.metric(ctl, "trainer_trainjob_objects_applied_seconds_count") or 0)
                    >= WAVE // 5, 300, 0.1)
        before = cl.metric(ctl, "trainer_trainjob_objects_applied_seconds_count")
        pollers = [ReadyzPoller("trainer-controller",
                                lambda: tb.http_get(f"http://127.0.0.1:{ctl.health}/readyz", 1)[0]),
                   ReadyzPoller("trainer-webhook", lambda: wh.probe("/readyz")[0])]
        time.sleep(1)
        down_at = time.time()
        ok, err = cl.restart_apiserver("--down-seconds", str(DOWN))
        up_at = time.time()
        r.check(ok, f"apiserver killed and restarted ({up_at - down_at:.1f}s until /readyz "
                f"again) {err}")
        r.figure(f"outage at {before:.0f}/{WAVE} TrainJobs applied")
        time.sleep(2)
        for poller in pollers:
            poller.stop.set()
            seen = poller.during(down_at, up_at)
            codes = {c: seen.count(c) for c in sorted(set(seen))}
            r.check(seen and set(seen) == {200},
                    f"{poller.name} /readyz during the {up_at - down_at:.1f}s outage: "
                    f"{len(seen)} polls, status counts {codes} (upstream: not tied to the "
                    "apiserver)")
        r.check((ctl.proc.poll(), wh.proc.poll()) == (None, None) and
                (ctl.proc.pid, wh.proc.pid) == pids, f"both services kept running, same pids {pids}")

        start = time.time()
        problems, _ = cl.audit(k, NS, EXPECTED)
        while problems and time.time() - start < CONVERGE_BOUND:
            time.sleep(2)
            problems, _ = cl.audit(k, NS, EXPECTED)
        r.check(not problems, f"the rest of the wave converged in {time.time() - start:.0f}s "
                f"after the restart (bound {CONVERGE_BOUND:.0f}s): {len(problems)} problems "
                f"{problems[:5]}")

        # The watches came back: new objects after the restart reach both services.
        new_rt = f"{RUNTIME}-after"
        t0 = time.time()
        k.apply(cl.example_runtime("torch-distributed.yaml", new_rt, {LABEL: RUN_ID}))
        client = cl.ApiClient()

        def admitted():
            status, _ = client.request(
                "POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainjobs",
                cl.trainjob("after", NS, new_rt))
            return status == 201
        try:
            tb.wait_for("a TrainJob of the new runtime admitted", admitted, 30, 0.2)
            r.check(True, f"webhook watch recovered: TrainJob of a runtime created after the "
                    f"restart admitted after {time.time() - t0:.1f}s")
            tb.wait_for("its JobSet", lambda: k.run(
                "get", "jobsets.jobset.x-k8s.io", "after", "-n", NS, check=False).returncode == 0,
                60, 0.2)
            r.check(True, f"controller watch recovered: its JobSet created "
                    f"{time.time() - t0:.1f}s after the runtime")
        except AssertionError as e:
            r.check(False, f"watches after the restart: {e}")
        uid = k.get("jobsets.jobset.x-k8s.io", "wave-0000", NS)["metadata"]["uid"]
        t0 = time.time()
        k.run("delete", "jobsets.jobset.x-k8s.io", "wave-0000", "-n", NS, "--wait=false")
        try:
            tb.wait_for("JobSet wave-0000 re-created", lambda: k.get(
                "jobsets.jobset.x-k8s.io", "wave-0000", NS)["metadata"]["uid"] != uid, 60, 0.2)
            r.check(True, f"a JobSet deleted after the restart re-created in "
                    f"{time.time() - t0:.1f}s")
        except AssertionError as e:
            r.check(False, str(e))
        client.close()
    finally:
        for poller in pollers:
            poller.stop.set()
        if ctl is not None and ctl.proc.poll() is None:
            ctl.stop()
        wh.stop()
        k.delete_namespace(NS)
        for name in (RUNTIME, f"{RUNTIME}-after"):
            k.run("delete", "clustertrainingruntime", name, "--ignore-not-found", check=False)
    return r.finish([wh.log_path] + ([ctl.log_path] if ctl else []))


if __name__ == "__main__":
    sys.exit(main())
