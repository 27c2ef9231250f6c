#!/usr/bin/env python3
"""Round-trip time of one admission call, trainer-webhook against the null webhook, without the
apiserver: the part of the admission benchmark's per-call difference that is the servers' own.

Starts trainer-webhook (--offline-runtimes, as server_cost.sh does) and trainer-bench-null-webhook
on the same certificate, then, for each of --rounds rounds and each server in alternating order,
sends the AdmissionReviews the apiserver sent (hack/bench/admission/testdata: mutate, then
validate, as the apiserver calls them for one create) over one keep-alive TLS connection,
--count pairs, with --gap-us of busy waiting after each call (the apiserver's own work between
calls, which lets the server's thread go idle as it does under the apiserver). Prints each
round's median per call and per server, then the medians over rounds and their difference.

  hack/bench/admission/call_latency.py [--bin build-release/bin] [--rounds 6] [--count 2000]
                                       [--gap-us 300] [--out FILE.json]
"""
import argparse
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hack", "bench"))
from benchlib import free_port, wait_for  # noqa: E402

PATHS = ("mutate", "validate")


def wait_listening(port, proc, log):
    def listening():
        if proc.poll() is not None:
            raise SystemExit("server exited: " + open(log).read())
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return True
        except OSError:
            return False
    try:
        wait_for(listening, 30, "a server on port %d" % port)
    except RuntimeError as e:
        raise SystemExit("%s: %s" % (e, open(log).read()))


class Conn:
    """One keep-alive TLS connection sending the recorded reviews, HTTP/1.1 as the apiserver."""

    def __init__(self, port, cafile):
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.check_hostname = False
        raw = socket.create_connection(("127.0.0.1", port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.requests = {}
        for p in PATHS:
            body = open(os.path.join(HERE, "testdata", "apiserver-%s.json" % p), "rb").read()
            self.requests[p] = (
                b"POST /%s-trainer-kubeflow-org-v1alpha1-trainjob?timeout=10s HTTP/1.1\r\n"
                b"Host: localhost\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, */*\r\nContent-Length: %d\r\n\r\n"
                % (p.encode(), len(body)) + body)

    def call(self, path):
        self.sock.sendall(self.requests[path])
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("connection closed")
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        if int(lines[0].split()[1]) != 200:
            raise SystemExit("%s: %s" % (path, lines[0].decode()))
        length = next(int(l.split(b":", 1)[1]) for l in lines[1:]
                      if l.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += self.sock.recv(65536)

    def close(self):
        self.sock.close()


def measure(port, cafile, count, gap_us):
    conn = Conn(port, cafile)
    lat = {p: [] for p in PATHS}
    try:
        for _ in range(count):
            for p in PATHS:
                t = time.perf_counter()
                conn.call(p)
                lat[p].append(time.perf_counter() - t)
                end = time.perf_counter() + gap_us / 1e6
                while time.perf_counter() < end:
                    pass
    finally:
        conn.close()
    skip = count // 10  # the connection's first calls: handshake, cold caches
    return {p: round(statistics.median(v[skip:]) * 1e6, 1) for p, v in lat.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-release", "bin"))
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--gap-us", type=float, default=300)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="call-latency.")
    subprocess.run([os.path.join(ROOT, "hack", "bench", "webhook", "certs.sh"), work],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ports = {"ours": free_port(), "null": free_port()}
    cmds = {
        "ours": [os.path.join(args.bin, "trainer-webhook"), "--port=%d" % ports["ours"],
                 "--cert-dir=" + work, "--metrics-bind-address=0",
                 "--health-probe-bind-address=0", "--offline-runtimes=" +
                 os.path.join(ROOT, "examples", "runtimes", "torch-distributed.yaml")],
        "null": [os.path.join(args.bin, "trainer-bench-null-webhook"), "--cert-dir", work,
                 "--port", str(ports["null"])],
    }
    procs = {}
    try:
        for name, cmd in cmds.items():
            log = os.path.join(work, name + ".log")
            procs[name] = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
            wait_listening(ports[name], procs[name], log)
        rounds = []
        for r in range(args.rounds):
            order = ["ours", "null"] if r % 2 == 0 else ["null", "ours"]
            row = {"round": r}
            for name in order:
                row[name] = measure(ports[name], os.path.join(work, "ca.crt"), args.count,
                                    args.gap_us)
            rounds.append(row)
            print("round %d: %s" % (r, "  ".join(
                "%s %s" % (n, " ".join("%s %.1f us" % kv for kv in row[n].items()))
                for n in order)), flush=True)
    finally:
        for p in procs.values():
            p.terminate()
            p.wait()
    summary = {}
    for p in PATHS:
        ours = statistics.median(r["ours"][p] for r in rounds)
        null = statistics.median(r["null"][p] for r in rounds)
        summary[p] = {"ours_us": ours, "null_us": null, "added_us": round(ours - null, 1),
                      "ratio": round(ours / null, 3)}
        print("%s: ours %.1f us, null %.1f us per call (medians of %d rounds): %+.1f us, %.2fx"
              % (p, ours, null, len(rounds), ours - null, ours / null))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"benchmark": "admission-call-latency",
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "load_average_end": [round(x, 2) for x in os.getloadavg()],
                       "args": vars(args), "rounds": rounds, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
