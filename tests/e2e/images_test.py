#!/usr/bin/env python3
"""The images hack/images/build.sh builds hold what the node runs and nothing a service does not
use: the two services run as 65532 from a root file system without a shell, command-line tools
(the webhook keeps its certificate in-process) or package manager, owned by root; their own
programs are the only ones and start from it (the ldd closure is complete); the Dockerfiles run
the same recipe with the same user and entrypoint; the service images are smaller than
upstream's manager image; the training images have torchrun / mpirun, sshd and mpiuser.
Prints every image's size.
"""
import os
import re
import subprocess
import sys
import tempfile

import e2e

# Each service image stays under upstream Kubeflow Trainer v2.3.0's manager image
# (distroless/static:nonroot + the 32.8 MiB manager binary: about 35 MiB, docs/install.md "Images").
LIMIT_MIB = 32

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run_in(rootfs, user, *argv):
    return subprocess.run(["chroot", f"--userspec={user}", rootfs, *argv], capture_output=True,
                          text=True, timeout=120)


def dockerfile(image):
    text = open(os.path.join(e2e.ROOT, "deploy", "images", image, "Dockerfile")).read()
    recipe = re.search(r"hack/images/service\.sh (\S+) ", text)
    user = re.search(r"^USER (\S+)$", text, re.M)
    entry = re.search(r'^ENTRYPOINT \["([^"]+)"\]$', text, re.M)
    return (recipe and recipe.group(1), user and user.group(1), entry and entry.group(1),
            "FROM scratch" in text)


def check_service(image, archive, tmp):
    a = e2e.Archive(archive)
    members = a.members()
    mib = a.size / 1048576
    print(f"     {image}: {mib:.1f} MiB ({len(members)} files)")
    check(mib <= LIMIT_MIB, f"{image} ({mib:.1f} MiB) is at most {LIMIT_MIB} MiB, under upstream's "
          f"manager image")
    cfg = a.config["config"]
    check(cfg["User"] == "65532:65532", f"{image} runs as 65532:65532 (config User {cfg['User']!r})")
    entry = f"/usr/local/bin/{image}"
    check(cfg["Entrypoint"] == [entry], f"{image} entrypoint is {entry}")
    recipe, user, dentry, scratch = dockerfile(image)
    check((recipe, user, dentry, scratch) == (image, "65532:65532", entry, True),
          f"deploy/images/{image}/Dockerfile runs hack/images/service.sh {image}, FROM scratch, "
          f"USER 65532:65532, ENTRYPOINT {entry} (found {recipe}, {user}, {dentry}, scratch={scratch})")
    for bad in ("usr/bin/dpkg", "usr/bin/apt", "usr/bin/apt-get", "usr/bin/sh", "usr/bin/dash"):
        check(bad not in members, f"{image} has no {bad}")
    for bad in ("usr/bin/bash", "usr/bin/curl", "usr/bin/jq", "usr/bin/openssl"):
        check(bad not in members, f"{image} has no {bad}")
    # The only programs are the service's own: hack/images/service.sh's programs_of.
    own = {entry.lstrip("/")} | ({"usr/local/bin/trainer-render"}
                                 if image == "trainer-controller" else set())
    programs = {n for n, m in members.items() if m.isfile() and
                n.startswith(("usr/bin/", "usr/sbin/", "usr/local/bin/", "usr/local/sbin/"))}
    check(programs == own, f"{image}'s programs are {sorted(own)} (found {sorted(programs)[:8]})")
    writable = [n for n, m in members.items()
                if not m.issym() and n != "tmp" and (m.uid != 0 or m.mode & 0o022)]
    check(not writable, f"{image}: every file is root's and not writable by others {writable[:5]}")
    rootfs = os.path.join(tmp, image)
    a.extract(rootfs)
    p = run_in(rootfs, "65532:65532", entry, "--help")
    check(p.returncode == 0 and "usage" in (p.stdout + p.stderr).lower(),
          f"{entry} --help runs in the image as 65532 (exit {p.returncode}: {p.stderr.strip()[:200]})")
    if image == "trainer-controller":
        p = run_in(rootfs, "65532:65532", "/usr/local/bin/trainer-render", "--help")
        check("usage: trainer-render" in (p.stdout + p.stderr).lower(),
              f"trainer-render runs in the image (exit {p.returncode}: {p.stderr.strip()[:200]})")


def main():
    e2e.require_machine()
    built = e2e.images()
    for image, (ref, archive) in sorted(built.items()):
        print(f"     {image:20} {ref:45} {os.path.getsize(archive) / 1048576:8.1f} MiB  {archive}")
    with tempfile.TemporaryDirectory() as tmp:
        for image in ("trainer-webhook", "trainer-controller"):
            check_service(image, built[image][1], tmp)

        pause = e2e.Archive(built["pause"][1])
        check(pause.config["config"]["Entrypoint"] == ["/pause"], "pause's entrypoint is /pause")
        pause.extract(os.path.join(tmp, "pause"))
        check(run_in(os.path.join(tmp, "pause"), "65535:65535", "/pause", "-v").returncode == 0,
              "pause runs")

        jobset = e2e.Archive(built["jobset-controller"][1])
        check(jobset.config["config"]["User"] == "65532:65532" and
              jobset.config["config"]["Entrypoint"] == ["/manager"] and "manager" in jobset.members(),
              "jobset-controller is /manager, as user 65532, as JobSet's own image")

        torch = e2e.Archive(built["torch"][1])
        torch.extract(os.path.join(tmp, "torch"))
        p = run_in(os.path.join(tmp, "torch"), "0:0", "/usr/bin/python3", "-c",
                   "import torch, torch.distributed as d\n"
                   "from torch.distributed.elastic.multiprocessing.api import Std\n"
                   "assert Std.from_str('0') == Std.NONE and Std.from_str('3') == Std.ALL\n"
                   "print(torch.__version__, d.is_gloo_available())")
        check(p.returncode == 0 and p.stdout.strip().endswith("True"),
              f"torch imports with gloo; torchrun parses its redirects ({p.stdout.strip()} "
              f"{p.stderr.strip()[-200:]})")
        check(os.access(os.path.join(tmp, "torch", "usr/bin/torchrun"), os.X_OK), "torchrun is on PATH")

        mpi = e2e.Archive(built["openmpi"][1])
        members = mpi.members()
        for path in ("usr/bin/mpirun", "usr/sbin/sshd", "usr/bin/ssh", "home/mpiuser/.sshd_config"):
            check(path in members, f"openmpi image has /{path}")
        check(not any(n.startswith("etc/ssh/ssh_host_") for n in members),
              "openmpi image holds no SSH host key")
        mpi.extract(os.path.join(tmp, "openmpi"))
        p = run_in(os.path.join(tmp, "openmpi"), "1000:1000", "/usr/bin/id", "-un")
        check(p.stdout.strip() == "mpiuser", f"uid 1000 is mpiuser ({p.stdout.strip()})")
    print(f"{len(failures)} failed" if failures else "images: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
