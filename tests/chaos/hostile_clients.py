#!/usr/bin/env python3
"""Chaos: hostile clients against trainer-webhook's TLS port.

trainer-webhook runs on the test bed (its runtime caches fed by the apiserver) and is attacked
directly on its HTTPS port, as any pod that can reach it could:
  oversized    bodies over the 7 MiB limit (declared, sent in full, chunked)
  malformed    truncated / non-JSON / wrong-shape AdmissionReviews, deep nesting (100,000 levels),
               invalid UTF-8, huge numbers, an empty body, a wrong Content-Type
  plain-http   an HTTP request in clear text on the TLS port
  stalled      STALLED_TCP connections that never send a byte, STALLED_TLS that finish the
               handshake and never send a request, SLOWLORIS that send their headers one byte
               every 2 s, SLOW_BODY that send 10 bytes of a 1,000-byte body and stop
While they are all open (200 by default, more than the 64 threads the server keeps), a valid
AdmissionReview is sent every 0.25 s: each must be answered (allowed, its uid echoed) within
VALID_BOUND seconds. Every hostile request must be answered (an HTTP error, or an AdmissionReview
that is not an allowed one for malformed input) or its connection closed by the server within its
bound; afterwards a valid review is answered at once and the process still runs.

Bounds (seconds), from the server's timeouts (common/http/server.h): answered cases 5, except a
declared or chunked body over the limit, 15 (cpp-httplib reads and discards a body over the limit,
each read bounded by the 10 s read timeout); plain HTTP 5; never-sending TCP 15 (the TLS handshake
is bounded by the 10 s read timeout); TLS connections with no request 130 (the 120 s keep-alive
timeout, longer than the apiserver's 90 s idle timeout on purpose); slow body 15 (10 s read
timeout); slow-loris 40 (a request must arrive whole within 32 s of its first byte, as Go's
ReadHeaderTimeout in controller-runtime's webhook server, though each byte comes within the 10 s
read timeout).
Prints one line per case with its figure, then PASS/FAIL.
"""

import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_lib as cl  # noqa: E402
from chaos_lib import Conn, one_shot, read_response, request_bytes, review  # noqa: E402

tb = cl.tb

VALIDATE = cl.VALIDATE
STALLED_TCP = int(os.environ.get("STALLED_TCP", "80"))
STALLED_TLS = int(os.environ.get("STALLED_TLS", "80"))
SLOWLORIS = int(os.environ.get("SLOWLORIS", "20"))
SLOW_BODY = int(os.environ.get("SLOW_BODY", "20"))
VALID_BOUND = float(os.environ.get("VALID_BOUND", "2"))
RUN_ID = str(os.getpid())
RUNTIME = f"chaos-hostile-{RUN_ID}"
cl.RUNTIME = RUNTIME

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def answered_cases(port, ctx):
    _, good = review()
    cases = {
        "declared 100 MiB body": (b"POST " + VALIDATE.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                                  b"Content-Type: application/json\r\n"
                                  b"Content-Length: 104857600\r\n\r\n{", {413, None}),
        "8 MiB body sent in full": (request_bytes(b'{"a":"' + b"x" * (8 << 20) + b'"}'), {413}),
        "8 MiB chunked body": (
            (f"POST {VALIDATE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Transfer-Encoding: chunked\r\n\r\n").encode() +
            b"".join(b"%x\r\n" % (1 << 20) + b"x" * (1 << 20) + b"\r\n" for _ in range(8)) +
            b"0\r\n\r\n", {413, 400, None}),
        "truncated JSON": (request_bytes(b'{"apiVersion":"admission.k8s.io/v1","kind":'), {200, 400}),
        "not JSON": (request_bytes(b"\x00\x01\x02 hello"), {200, 400}),
        "empty body": (request_bytes(b""), {200, 400}),
        "JSON array": (request_bytes(b"[1,2,3]"), {200, 400}),
        "review without request": (request_bytes(b'{"apiVersion":"admission.k8s.io/v1",'
                                                 b'"kind":"AdmissionReview"}'), {200, 400}),
        "object is a string": (request_bytes(json.dumps(
            {**good, "request": {**good["request"], "object": "x"}}).encode()), {200, 400}),
        "100,000-deep nesting": (request_bytes(b'{"request":' + b"[" * 100000 + b"]" * 100000 +
                                               b"}"), {200, 400}),
        "100,000-deep unclosed": (request_bytes(b"[" * 100000), {200, 400}),
        "invalid UTF-8 in a name": (request_bytes(json.dumps(good).replace(
            '"name": "valid"', '"name": "va\udcff"', 1).encode("utf-8", "surrogateescape")),
            {200, 400}),
        "invalid UTF-8 bytes": (request_bytes(b'{"request":{"uid":"\xff\xfe\xc3"}}'), {200, 400}),
        "huge numbers": (request_bytes(b'{"request":{"uid":1e999999,"x":' + b"9" * 100000 +
                                       b"}}"), {200, 400}),
        "wrong Content-Type": (request_bytes(json.dumps(good).encode(), content_type="text/plain"),
                               {200, 400, 415}),
        "unknown path": (request_bytes(b"{}", path="/../../etc/passwd"), {404, 400}),
        "header block over 8 KiB": (f"POST {VALIDATE} HTTP/1.1\r\nX-Big: {'a' * 20000}\r\n\r\n"
                                    .encode(), {400, 413, 431, None}),
    }
    worst = 0.0
    for name, (payload, statuses) in cases.items():
        # Over-limit bodies the server reads and discards: bounded by its 10 s read timeout.
        bound = 15.0 if None in statuses and "body" in name else 5.0
        status, body, secs, closed = one_shot(port, ctx, payload, bound)
        worst = max(worst, secs)
        answered = status in statuses and status is not None
        # A response or (for statuses containing None) a close by the server, within the bound.
        ok = answered or (None in statuses and closed)
        detail = f"HTTP {status}" if status else ("closed" if closed else "no answer")
        if status == 200:
            try:
                resp = json.loads(body)["response"]
                ok = ok and isinstance(resp.get("allowed"), bool) and "uid" in resp
                detail += (f" allowed={str(resp['allowed']).lower()} "
                           f"code={resp.get('status', {}).get('code')}")
                if "UTF-8" in name:
                    detail += " (invalid bytes read as U+FFFD, as Go's encoding/json)"
            except (ValueError, KeyError, TypeError, AttributeError):
                ok = False
                detail += " (body is not an AdmissionReview)"
        check(ok and secs < bound, f"hostile {name}: {detail} in {secs:.2f}s "
              f"(bound {bound:.0f}s)")
    return worst


def plain_http(port):
    start = time.time()
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(request_bytes(b"{}"))
    status, body, closed = read_response(s, start + 5)
    s.close()
    secs = time.time() - start
    check(closed and secs < 5, f"hostile plain HTTP on the TLS port: closed={closed} "
          f"(answer {body[:20]!r}) in {secs:.2f}s (bound 5s)")


class Watcher:
    """Times when the server answers (first byte) or closes each of a group of connections,
    from the moment the connection was open."""

    def __init__(self, name, bound):
        self.name, self.bound = name, bound
        self.closed_after = []
        self.lock = threading.Lock()

    def watch(self, conn, start):
        def run():
            conn.wait_answer_or_close(300)  # an answer or the close, whichever comes first
            with self.lock:
                self.closed_after.append(time.time() - start)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t


def main():
    k = tb.Kubectl()
    tb.install_trainer_crds(k)
    work = tempfile.mkdtemp(prefix="chaos-hostile-")
    k.apply(cl.example_runtime("torch-distributed.yaml", RUNTIME))
    wh = tb.Webhook(k, work, cn="chaos-hostile")
    ctx = cl.tls_context(wh.ca)
    threads, conns = [], []
    try:
        tb.wait_for("the webhook to see the runtime",
                    lambda: cl.valid_admission(wh.port, ctx, 5)[0], 30, 0.3)
        ok, secs = cl.valid_admission(wh.port, ctx, 5)
        check(ok, f"valid AdmissionReview before the attack: {secs * 1000:.0f} ms")

        # Stalled and slow connections first; they stay open while the rest runs.
        start = time.time()
        groups = {"never-sending TCP": Watcher("never-sending TCP", 15),
                  "TLS, no request": Watcher("TLS, no request", 130),
                  "slow-loris headers": Watcher("slow-loris headers", 40),
                  "slow body": Watcher("slow body", 15)}
        for n, group, handshake in ((STALLED_TCP, "never-sending TCP", False),
                                    (STALLED_TLS, "TLS, no request", True)):
            for _ in range(n):
                c = Conn(wh.port, ctx, handshake=handshake)
                conns.append(c)
                threads.append(groups[group].watch(c, time.time()))
        slow = []
        for _ in range(SLOW_BODY):
            c = Conn(wh.port, ctx)
            c.send(request_bytes(b"x" * 1000)[:-990])
            conns.append(c)
            threads.append(groups["slow body"].watch(c, time.time()))
        for _ in range(SLOWLORIS):
            c = Conn(wh.port, ctx)
            conns.append(c)
            slow.append(c)
        stop_trickle = threading.Event()
        loris_bytes = request_bytes(b"{}", extra="X-Pad: " + "a" * 4000 + "\r\n")

        def trickle():
            i = 0
            while not stop_trickle.is_set() and i < len(loris_bytes):
                for c in slow:
                    try:
                        c.send(loris_bytes[i:i + 1])
                    except (OSError, ssl.SSLError):
                        pass
                i += 1
                stop_trickle.wait(2)
        tt = threading.Thread(target=trickle, daemon=True)
        tt.start()
        for c in slow:
            threads.append(groups["slow-loris headers"].watch(c, time.time()))
        opened = STALLED_TCP + STALLED_TLS + SLOW_BODY + SLOWLORIS
        print(f"     {opened} stalled/slow connections open", flush=True)

        # Valid admissions while they are open, every 0.25 s for 15 s.
        lat, bad = [], 0
        until = time.time() + 15
        while time.time() < until:
            ok, secs = cl.valid_admission(wh.port, ctx, VALID_BOUND + 5)
            lat.append(secs)
            bad += (not ok) or secs > VALID_BOUND
            time.sleep(0.25)
        lat.sort()
        check(bad == 0, f"valid AdmissionReviews during {opened} stalled connections: "
              f"{len(lat) - bad}/{len(lat)} answered within {VALID_BOUND}s "
              f"(p50 {lat[len(lat) // 2] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms)")

        worst = answered_cases(wh.port, ctx)
        print(f"     slowest answered hostile request: {worst:.2f}s", flush=True)
        plain_http(wh.port)

        # Every stalled/slow connection answered or closed within its group's bound (the last
        # ones were opened a few seconds after `start`); the slow-loris clients trickle on.
        for g in groups.values():
            deadline = start + g.bound + 10
            while time.time() < deadline and len(g.closed_after) < expected(g, groups):
                time.sleep(0.5)
        stop_trickle.set()
        for name, g in groups.items():
            n = expected(g, groups)
            within = [s for s in g.closed_after if s <= g.bound]
            worst_close = max(g.closed_after) if g.closed_after else float("nan")
            check(len(within) == n, f"{name}: {len(within)}/{n} answered or closed by the "
                  f"server within {g.bound:.0f}s of its opening (latest {worst_close:.1f}s)")

        ok, secs = cl.valid_admission(wh.port, ctx, VALID_BOUND)
        check(ok, f"valid AdmissionReview after the attack: {secs * 1000:.0f} ms")
        check(wh.proc.poll() is None, "trainer-webhook still running (same pid %d)" % wh.proc.pid)
    finally:
        for c in conns:
            c.close()
        wh.stop()
        k.run("delete", "clustertrainingruntime", RUNTIME, "--ignore-not-found", check=False)
    if failures:
        print(open(wh.log_path).read()[-4000:])
        print(f"FAIL chaos_hostile_clients: {len(failures)} check(s) failed")
        return 1
    print("PASS chaos_hostile_clients")
    return 0


def expected(g, groups):
    return {"never-sending TCP": STALLED_TCP, "TLS, no request": STALLED_TLS,
            "slow-loris headers": SLOWLORIS, "slow body": SLOW_BODY}[g.name]


if __name__ == "__main__":
    sys.exit(main())
