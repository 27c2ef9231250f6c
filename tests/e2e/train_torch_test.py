#!/usr/bin/env python3
"""Real distributed training through the whole path: examples/local/torch-ddp.yaml, a TrainJob on
the default torch-distributed ClusterTrainingRuntime with its image set to the node's
python3-torch image, two nodes. torchrun takes node count, rank and master address from the
PET_* variables the Torch plugin injects and meets at the JobSet's headless Service name resolved
by the cluster DNS; the two pods train a small linear model with DDP over gloo on synthetic data
for 300 steps. Pass: the TrainJob is Complete, and the logs of both
pods show world size 2, their rank, and a loss that fell by more than 10x.
"""
import os
import re
import sys
import time

import yaml

import e2e

NS = "e2e-train-torch"
NAME = "torch-ddp"
EXAMPLE = os.path.join(e2e.ROOT, "examples", "local", "torch-ddp.yaml")


def trainjob(image):
    """examples/local/torch-ddp.yaml in this test's namespace, on the image just built."""
    with open(EXAMPLE) as f:
        job = yaml.safe_load(f)
    job["metadata"]["namespace"] = NS
    job["spec"]["trainer"]["image"] = image
    return yaml.safe_dump(job)


def condition(k, kind, name, ctype):
    return k.out("get", kind, name, "-n", NS, "-o",
                 f'jsonpath={{.status.conditions[?(@.type=="{ctype}")].status}}')


def main():
    e2e.require_machine()
    env = e2e.e2e_env()
    k = e2e.kubectl()
    k.fresh_namespace(NS)
    t0 = time.time()
    k.run("create", "-f", "-", stdin=trainjob(env["TRAINER_TORCH_IMAGE"]))
    try:
        e2e.wait_for(f"TrainJob {NAME} to be Complete", 300, lambda: condition(
            k, "trainjob", NAME, "Complete") == "True" or condition(k, "trainjob", NAME, "Failed") == "True")
    finally:
        print(k.run("get", "trainjob,jobset,jobs,pods", "-n", NS, "-o", "wide", check=False).stdout)
    elapsed = time.time() - t0
    failures = []
    if condition(k, "trainjob", NAME, "Complete") != "True":
        failures.append("the TrainJob is not Complete: " + k.out("get", "trainjob", NAME, "-n", NS,
                                                                 "-o", "jsonpath={.status}"))
    pods = k.out("get", "pods", "-n", NS, "-o", "jsonpath={.items[*].metadata.name}").split()
    ranks = set()
    for pod in pods:
        log = k.out("logs", pod, "-n", NS)
        print(f"--- {pod}\n{log}")
        world = re.search(r"^rank (\d) world size (\d+) ", log, re.M)
        losses = [float(v) for v in re.findall(r"^rank \d step \d+ loss ([0-9.e+-]+)$", log, re.M)]
        if not world or world.group(2) != "2":
            failures.append(f"{pod}: no 'world size 2' in its log")
            continue
        ranks.add(world.group(1))
        if len(losses) < 2 or not losses[-1] < losses[0] / 10:
            failures.append(f"{pod}: the loss did not fall by 10x ({losses})")
        else:
            print(f"ok   {pod}: rank {world.group(1)} of 2, loss {losses[0]:.4f} -> {losses[-1]:.6f}")
    if ranks != {"0", "1"}:
        failures.append(f"want ranks 0 and 1 in the two pods' logs, found {sorted(ranks)}")
    print(f"TrainJob {NAME}: {'Complete' if not failures else 'FAILED'} after {elapsed:.0f}s")
    for f in failures:
        print("FAIL", f)
    if not failures:
        k.run("delete", "namespace", NS, "--wait=false")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
