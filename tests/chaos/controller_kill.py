#!/usr/bin/env python3
"""Chaos: trainer-controller killed with SIGKILL KILLS times during a wave of WAVE TrainJobs.

The runtime is examples/runtimes/deepspeed-distributed.yaml (OpenMPI: an SSH-key Secret and a
hostfile ConfigMap per TrainJob) with the coscheduling PodGroup policy (a scheduler-plugins
PodGroup per TrainJob), so each TrainJob owns a JobSet, two ConfigMaps (hostfile, runtime
snapshot), a Secret and a PodGroup. A reference TrainJob converged by a healthy controller gives
the expected set.

The controller runs while the wave is created; each incarnation is killed (-9) once it has
applied the objects of KILL_AFTER TrainJobs (read from its /metrics), and a new one is started at
once. After the last kill the final incarnation must converge: every TrainJob of the wave has
exactly its expected objects (none missing, none duplicated), every owned object has exactly one
controller owner that exists with the same uid (no orphans), no TrainJob carries an error
condition, and the work queue drains. Bound: CONVERGE_BOUND seconds after the last restart.
Figures: when each kill landed (objects present), convergence time, object counts.
"""

import os
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402

tb = cl.tb
WAVE = int(os.environ.get("WAVE", "1000"))
KILLS = int(os.environ.get("KILLS", "3"))
KILL_AFTER = int(os.environ.get("KILL_AFTER", "150"))
CONVERGE_BOUND = float(os.environ.get("CONVERGE_BOUND", "300"))
RUN_ID = str(os.getpid())
NS = f"chaos-kill-{RUN_ID}"
RUNTIME = f"chaos-mpi-{RUN_ID}"


def mpi_runtime():
    rt = cl.example_runtime("deepspeed-distributed.yaml", RUNTIME)
    rt["spec"]["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    return rt


def applied(ctl):
    v = cl.metric(ctl, "trainer_trainjob_objects_applied_seconds_count")
    return int(v or 0)


def main():
    r = cl.Result("chaos_controller_kill")
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-kill-")
    k.apply(mpi_runtime())
    k.run("create", "namespace", NS)
    logs = []
    ctl = None
    try:
        ctl = tb.Controller(log_dir=work)
        logs.append(ctl.log_path)
        # The reference: one TrainJob converged by a healthy controller.
        k.apply(cl.trainjob("reference", NS, RUNTIME))
        expected = tb.wait_for("the reference TrainJob's objects", lambda: (
            lambda e: e if len(e) == 4 else None)(cl.expected_objects(k, NS, "reference")), 60)
        r.figure("objects per TrainJob: " + ", ".join(f"{n} {kind}" for kind, n in
                                                      sorted(expected.items())))
        r.check(expected == {"jobsets.jobset.x-k8s.io": 1, "configmaps": 2, "secrets": 1,
                             "podgroups.scheduling.x-k8s.io": 1},
                f"MPI + coscheduling TrainJob owns a JobSet, 2 ConfigMaps, a Secret, a PodGroup "
                f"({expected})")

        # The wave, created in the background while the controller works through it.
        wave_start = time.time()
        created = {}

        def create():
            created["failures"] = cl.create_wave(NS, RUNTIME, "wave", WAVE)
            created["secs"] = time.time() - wave_start
        creator = threading.Thread(target=create, daemon=True)
        creator.start()
        pids = [ctl.proc.pid]
        for kill in range(1, KILLS + 1):
            tb.wait_for(f"incarnation {kill} to apply {KILL_AFTER} TrainJobs",
                        lambda: applied(ctl) >= KILL_AFTER, 600, 0.05)
            n = applied(ctl)
            ctl.stop(signal.SIGKILL)
            r.figure(f"kill {kill}: SIGKILL pid {ctl.proc.pid} at {time.time() - wave_start:.1f}s "
                     f"after it applied {n} TrainJobs' objects")
            ctl = tb.Controller(log_dir=work)
            logs.append(ctl.log_path)
            pids.append(ctl.proc.pid)
        restarted = time.time()
        creator.join(600)
        r.check(not creator.is_alive() and not created.get("failures"),
                f"wave of {WAVE} TrainJobs created in {created.get('secs', 0):.0f}s "
                f"(failures: {created.get('failures', 'unfinished')})")
        n_jobs = len(k.items("trainjobs", NS))
        r.check(n_jobs == WAVE + 1, f"{n_jobs} TrainJobs stored (want {WAVE + 1})")
        # Cheap signal first (the queue drained), then the full audit until it is clean.
        deadline = restarted + CONVERGE_BOUND
        tb.wait_for("work queue drained", lambda: cl.metric(ctl, "workqueue_depth") == 0,
                    max(1, deadline - time.time()), 0.5)
        problems, counts = cl.audit(k, NS, expected)
        while problems and time.time() < deadline:
            time.sleep(2)
            problems, counts = cl.audit(k, NS, expected)
        secs = time.time() - restarted
        r.check(not problems, f"after {KILLS} kills every TrainJob converged with its exact "
                f"objects, no duplicates, no orphans: {len(problems)} problems "
                f"{problems[:5]} ({secs:.0f}s after the last restart, bound "
                f"{CONVERGE_BOUND:.0f}s)")
        r.figure("objects owned: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
        bad = [t["metadata"]["name"] for t in k.items("trainjobs", NS)
               if (t.get("status") or {}).get("conditions")]
        r.check(not bad, f"no TrainJob carries a condition (errors): {bad[:5]}")
        r.check(ctl.proc.poll() is None, f"final controller (pid {ctl.proc.pid}) running")
        r.figure(f"wave total {time.time() - wave_start:.0f}s, pids {pids}")
    finally:
        if ctl is not None and ctl.proc.poll() is None:
            ctl.stop()
        k.delete_namespace(NS)
        k.run("delete", "clustertrainingruntime", RUNTIME, "--ignore-not-found", check=False)
    return r.finish(logs[-2:])


if __name__ == "__main__":
    sys.exit(main())
