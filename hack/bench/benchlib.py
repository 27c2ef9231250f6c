"""Helpers the Python benchmarks under hack/bench/ share: the test bed's kubectl, free loopback
ports, plain-HTTP probes and /metrics values, and a process's CPU seconds and memory from /proc.

Import it from a benchmark with
    sys.path.insert(0, os.path.join(ROOT, "hack", "bench")); import benchlib
"""

import os
import re
import socket
import subprocess
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


class Bed:
    """kubectl (built by hack/testbed/build.sh) on a test bed's admin kubeconfig."""

    def __init__(self, testbed_dir, kubeconfig=None):
        self.dir = testbed_dir
        self.kubeconfig = kubeconfig or os.path.join(testbed_dir, "kubeconfig")
        self.kubectl_bin = os.path.join(
            sh(os.path.join(ROOT, "hack/testbed/build.sh"), "--print-bin-dir").strip(), "kubectl")

    def kubectl(self, *args, stdin=None, check=True):
        p = subprocess.run([self.kubectl_bin, "--kubeconfig", self.kubeconfig, *args],
                           input=stdin, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), p.stderr))
        return p.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def http(port, path):
    """The body of http://127.0.0.1:PORT/PATH, or None when it cannot be fetched."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=2) as r:
            return r.read().decode()
    except Exception:  # noqa: BLE001
        return None


def metric(text, name):
    """The value of the unlabelled (or exactly labelled) series NAME in a /metrics text, or 0."""
    m = re.search(r"^%s(?:\{\})? ([0-9.e+]+)$" % re.escape(name), text or "", re.M)
    return float(m.group(1)) if m else 0.0


def proc_cpu_rss(pid):
    """(CPU seconds utime+stime, peak RSS VmHWM bytes, RSS VmRSS bytes) of a live process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    hwm = rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return cpu, hwm, rss
