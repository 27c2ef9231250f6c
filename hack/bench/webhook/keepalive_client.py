#!/usr/bin/env python3
"""Posts one AdmissionReview COUNT times over one keep-alive TLS connection, one request at a time.

The client of hack/bench/webhook/server_cost.sh: a fixed number of requests (wrk runs for a fixed
time), in the request shape wrk sends (hack/bench/webhook/admission.lua), each response read whole
before the next request goes out, as on wrk's single connection.

  keepalive_client.py --port PORT --path /validate-... --body FILE --count N [--cafile CA]
Exits non-zero if a response is not 200 or the connection closes early.
"""
import argparse
import socket
import ssl
import sys


def read_response(sock, buf):
    """Reads one HTTP response with a Content-Length body; returns (status, rest of buffer)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed before a response")
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(buf) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed in a response body")
        buf += chunk
    return status, buf[length:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--cafile")
    ap.add_argument("--apiserver", action="store_true",
                    help="send the request as the kube-apiserver does: PATH?timeout=10s, its "
                         "User-Agent, Accept and Accept-Encoding: gzip headers")
    args = ap.parse_args()
    body = open(args.body, "rb").read()
    if args.apiserver:
        request = (
            f"POST {args.path}?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
            f"User-Agent: kube-apiserver-admission\r\nContent-Length: {len(body)}\r\n"
            "Accept: application/json, */*\r\nContent-Type: application/json\r\n"
            "Accept-Encoding: gzip\r\n\r\n"
        ).encode() + body
    else:
        request = (
            f"POST {args.path} HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
    ctx = ssl.create_default_context(cafile=args.cafile)
    if not args.cafile:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection(("127.0.0.1", args.port))
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
        buf = b""
        for i in range(args.count):
            sock.sendall(request)
            status, buf = read_response(sock, buf)
            if status != 200:
                print(f"request {i}: status {status}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
