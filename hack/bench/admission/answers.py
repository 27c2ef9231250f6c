#!/usr/bin/env python3
"""What each admission benchmark server answers the kube-apiserver, byte for byte.

On a fresh test bed, a recording webhook (Python, the test bed's serving certificate) is
registered with deploy/base's configurations and receives the TrainJob dry-run create that
run.py measures: the AdmissionReviews the apiserver sends (mutate, validate) and its HTTP
headers. Those exact requests are then replayed over TLS to every server run.py compares (null,
--null-variant ones, ours, --upstream), and each answer is printed: status line, headers, body
size, body and decoded JSONPatch. Load-independent: what differs here is what the apiserver
parses and applies per call.

Usage: hack/bench/admission/answers.py [--upstream] [--null-variant NAME=ARGS ...]
         [--bin build/bin] [--out FILE.json] [--save-requests DIR]
--save-requests writes the recorded reviews as DIR/apiserver-{mutate,validate}.json, the bodies
hack/bench/webhook/server_cost.sh --apiserver sends (hack/bench/admission/testdata).
"""

import argparse
import base64
import gzip
import http.server
import json
import os
import socket
import ssl
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402
from run import NS, benchlib, log  # noqa: E402


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers "allowed" and keeps (path, headers, body) of every POST."""
    protocol_version = "HTTP/1.1"
    seen = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Recorder.seen.append((self.path, dict(self.headers.items()), body))
        uid = json.loads(body)["request"]["uid"]
        out = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "response": {"uid": uid, "allowed": True}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):  # probe_server
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def record(bed, work):
    """The apiserver's requests for one dry-run create of run.py's TrainJob."""
    port = benchlib.free_port()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Recorder)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(bed.pki, "webhook.crt"), os.path.join(bed.pki, "webhook.key"))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        bed.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                    stdin=run.configurations(bed, "https://127.0.0.1:%d" % port))
        api = bed.api()

        def reached():
            Recorder.seen.clear()
            status, body = api.call("POST", benchlib.TRAINJOBS % NS + "?dryRun=All",
                                    run.trainjob("answers"))
            if status != 201:
                raise RuntimeError("dry-run create: %s %s" % (status, body))
            return len(Recorder.seen) == 2
        benchlib.wait_for(reached, 60, "the recording webhook to be called", every=0.2)
        return list(Recorder.seen)
    finally:
        srv.shutdown()


def replay(port, path, headers, body):
    """One request over TLS as the apiserver sent it; (status line, headers, body)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port)) as raw, \
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
        head = "POST %s HTTP/1.1\r\n" % path + "".join(
            "%s: %s\r\n" % (k, v) for k, v in headers.items()) + "\r\n"
        s.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        hdrs = dict(line.split(": ", 1) for line in lines[1:])
        n = int(hdrs.get("Content-Length", 0))
        while len(rest) < n:
            rest += s.recv(65536)
        return lines[0], hdrs, rest[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", action="store_true")
    ap.add_argument("--upstream-bin", default="")
    ap.add_argument("--null-variant", action="append", default=[], type=run.null_variant)
    ap.add_argument("--bin", default=os.path.join(run.ROOT, "build", "bin"))
    ap.add_argument("--out", default="")
    ap.add_argument("--save-requests", default="")
    args = ap.parse_args()
    if args.upstream:
        args.upstream_bin = benchlib.upstream_binary(args.upstream_bin)
    doc = {"requests": [], "answers": {}}
    with benchlib.work_dir("bench-answers-") as work:
        with benchlib.TestBed(os.path.join(work, "testbed")) as bed:
            bed.api().create_namespace(NS)
            seen = record(bed, work)
            if args.save_requests:
                for path, _, body in seen:
                    name = "mutate" if path.startswith("/mutate") else "validate"
                    with open(os.path.join(args.save_requests, "apiserver-%s.json" % name),
                              "wb") as f:
                        f.write(body)
            servers = run.start_servers(args, bed, work)
            try:
                for path, headers, body in seen:
                    print("== apiserver -> %s (%d bytes)" % (path, len(body)))
                    for k, v in headers.items():
                        print("   %s: %s" % (k, v))
                    doc["requests"].append({"path": path, "headers": headers,
                                            "body": json.loads(body)})
                    for name, s in servers.items():
                        status, hdrs, out = replay(s.port, path, headers, body)
                        wire = len(out)
                        if hdrs.get("Content-Encoding") == "gzip":
                            out = gzip.decompress(out)
                        review = json.loads(out) if out else None
                        patch = (review or {}).get("response", {}).get("patch")
                        patch = json.loads(base64.b64decode(patch)) if patch else None
                        print("-- %s: %s, %d bytes (%d on the wire); %s" % (
                            name, status, len(out), wire, "; ".join(
                            "%s: %s" % kv for kv in hdrs.items())))
                        print("   " + out.decode())
                        if patch is not None:
                            print("   patch: " + json.dumps(patch))
                        doc["answers"].setdefault(path, {})[name] = {
                            "status": status, "headers": hdrs, "bytes": len(out), "wire_bytes": wire,
                            "review": review, "patch": patch}
            finally:
                for s in servers.values():
                    s.service.stop()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
        log("wrote %s" % args.out)


if __name__ == "__main__":
    main()
