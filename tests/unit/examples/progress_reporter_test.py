#!/usr/bin/env python3
"""examples/progress/kubeflow_progress.py against a local HTTPS server standing in for the status
server: what it sends (body, token, TLS with the given CA), retries with backoff on 5xx and
unreachable servers, no retry of refused reports, the newest report winning, primary-only, and
that nothing it does raises into training code."""

import http.server
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "progress"))
import kubeflow_progress  # noqa: E402
from kubeflow_progress import ProgressReporter  # noqa: E402

WORK = tempfile.mkdtemp(prefix="progress-reporter-test-")
CERT, KEY = os.path.join(WORK, "tls.crt"), os.path.join(WORK, "tls.key")
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", KEY, "-out", CERT, "-days", "1", "-subj", "/CN=status",
                "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)


class Server:
    """Records POSTs; answers with the codes queued in `answers` (then 200)."""

    def __init__(self):
        self.requests = []
        self.answers = []
        self.delay = 0.0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(outer.delay)
                outer.requests.append((self.path, self.headers.get("Authorization"),
                                       json.loads(body)))
                code = outer.answers.pop(0) if outer.answers else 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body if code == 200 else b'{"message":"no"}')

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(CERT, KEY)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/apis/x/status"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def token_file(text):
    path = os.path.join(WORK, f"token-{time.monotonic_ns()}")
    with open(path, "w") as f:
        f.write(text + "\n")
    return path


class ReporterTest(unittest.TestCase):
    def setUp(self):
        self.server = Server()
        self.token = token_file("t0k3n")

    def tearDown(self):
        self.server.stop()

    def reporter(self, **kw):
        env = {"KUBEFLOW_TRAINER_SERVER_URL": self.server.url,
               "KUBEFLOW_TRAINER_SERVER_CA_CERT": CERT,
               "KUBEFLOW_TRAINER_SERVER_TOKEN": self.token, **kw.pop("env", {})}
        return ProgressReporter(environ=env, max_backoff=0.05, **kw)

    def test_sends_what_the_status_server_expects(self):
        r = self.reporter()
        r.report(progress=42.4, eta_seconds=599.6,
                 metrics={"loss": 0.25, "epoch": 3, "long": "x" * 100, "": 1})
        self.assertTrue(r.flush(5))
        r.close()
        path, auth, body = self.server.requests[0]
        self.assertEqual(path, "/apis/x/status")
        self.assertEqual(auth, "Bearer t0k3n")
        ts = body["trainerStatus"]
        self.assertEqual(ts["progressPercentage"], 42)
        self.assertEqual(ts["estimatedRemainingSeconds"], 600)
        self.assertEqual(ts["metrics"], [{"name": "loss", "value": "0.25"},
                                         {"name": "epoch", "value": "3"},
                                         {"name": "long", "value": "x" * 64}])
        self.assertRegex(ts["lastUpdatedTime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(r.sent, 1)

    def test_values_are_kept_within_the_crd(self):
        r = self.reporter()
        r.report(progress=250, eta_seconds=-5)
        r.flush(5)
        r.report(progress=-1, metrics={f"m{i}": i for i in range(300)})
        r.flush(5)
        r.close()
        first, second = (b["trainerStatus"] for _, _, b in self.server.requests)
        self.assertEqual((first["progressPercentage"], first["estimatedRemainingSeconds"]),
                         (100, 0))
        self.assertEqual(second["progressPercentage"], 0)
        self.assertEqual(len(second["metrics"]), 256)

    def test_the_token_is_read_at_every_report(self):
        r = self.reporter()
        r.report(progress=1)
        r.flush(5)
        with open(self.token, "w") as f:
            f.write("rotated")
        r.report(progress=2)
        r.flush(5)
        r.close()
        self.assertEqual([a for _, a, _ in self.server.requests],
                         ["Bearer t0k3n", "Bearer rotated"])

    def test_5xx_is_retried_until_accepted(self):
        self.server.answers = [500, 503, 429]
        r = self.reporter()
        r.report(progress=5)
        self.assertTrue(r.flush(10))
        r.close()
        self.assertEqual(len(self.server.requests), 4)
        self.assertEqual(r.sent, 1)

    def test_a_refused_report_is_not_retried(self):
        self.server.answers = [422]
        r = self.reporter()
        with self.assertLogs("kubeflow_progress", "WARNING") as logs:
            r.report(progress=5)
            self.assertTrue(r.flush(5))
        r.close()
        self.assertEqual(len(self.server.requests), 1)
        self.assertIn("HTTP 422", logs.output[0])

    def test_the_newest_report_wins(self):
        self.server.delay = 0.3
        r = self.reporter()
        for p in range(1, 11):
            r.report(progress=p)
            time.sleep(0.01)
        self.assertTrue(r.flush(10))
        r.close()
        sent = [b["trainerStatus"]["progressPercentage"] for _, _, b in self.server.requests]
        self.assertEqual(sent[-1], 10)
        self.assertLess(len(sent), 10)

    def test_unreachable_server_never_raises(self):
        r = ProgressReporter(url="https://127.0.0.1:1/x", ca_file=CERT, token_file="/nonexistent",
                             max_backoff=0.05, environ={})
        r.report(progress=1, metrics={"bad": object()})
        self.assertFalse(r.flush(0.3))
        r.close(timeout=0.1)

    def test_disabled_outside_a_trainjob_and_on_other_ranks(self):
        off = ProgressReporter(environ={})
        self.assertFalse(off.enabled)
        off.report(progress=1)
        off.report_step(1, 10)
        self.assertTrue(off.flush())
        off.close()
        for var in kubeflow_progress.RANK_VARIABLES:
            self.assertFalse(self.reporter(env={var: "3"}).enabled, var)
            self.assertTrue(self.reporter(env={var: "0"}).enabled, var)
        self.assertTrue(self.reporter(env={"RANK": "3"}, primary_only=False).enabled)

    def test_report_step_computes_progress_and_eta(self):
        now = [100.0]
        r = self.reporter(clock=lambda: now[0])
        r.report_step(10, 100)
        r.flush(5)
        now[0] = 110.0
        r.report_step(20, 100, metrics={"loss": 1.5})
        r.flush(5)
        r.close()
        first, second = (b["trainerStatus"] for _, _, b in self.server.requests)
        self.assertEqual(first["progressPercentage"], 10)
        self.assertNotIn("estimatedRemainingSeconds", first)
        self.assertEqual(second["progressPercentage"], 20)
        self.assertEqual(second["estimatedRemainingSeconds"], 80)  # 10 steps took 10 s

    def test_command_line(self):
        env = {**os.environ, "KUBEFLOW_TRAINER_SERVER_URL": self.server.url,
               "KUBEFLOW_TRAINER_SERVER_CA_CERT": CERT,
               "KUBEFLOW_TRAINER_SERVER_TOKEN": self.token}
        p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "progress",
                                                         "kubeflow_progress.py"),
                            "--progress", "50", "--eta", "60", "--metric", "loss=0.3"],
                           env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        ts = self.server.requests[0][2]["trainerStatus"]
        self.assertEqual((ts["progressPercentage"], ts["estimatedRemainingSeconds"],
                          ts["metrics"]), (50, 60, [{"name": "loss", "value": "0.3"}]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
