#!/usr/bin/env python3
"""Integration test of the TrainJob status server (trainer-webhook --feature-gates=TrainJobStatus=true)
against the test bed's kube-apiserver, with real service-account tokens from
`kubectl create token <sa> --audience=trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status`.

trainer-webhook runs as its ServiceAccount with exactly the RBAC of deploy/ (base webhook role plus
deploy/components/trainjob-status and, for pod binding, status-server-pod-binding), so a missing
verb fails here. Cases:
  gate off            no status server listens
  upstream's table    200 echo as decoded and status.trainerStatus written by manager
                      trainer-status (Apply, status subresource); 403 for a token of another
                      TrainJob, of another namespace, or none; 422 Invalid payload; 413 over 64 KiB;
                      404 Train job not found; 422 with the apiserver's message for progress 150;
                      200 without a write when trainerStatus is absent; 404 Not found elsewhere
  certificate         the webhook's certificate, reloaded when the Secret volume changes
  columns             PROGRESS and ETA through `kubectl get trainjobs`
  metrics             requests by code, writes by result
  coalescing          --status-write-interval: a burst is written once per interval, the last
                      report wins, refused reports still get the apiserver's answer at once
  pod binding         --status-server-require-pod-binding: only tokens bound to a live pod of the
                      TrainJob
  issuer unreachable  an identity without issuer discovery: admission serves, reports get 500,
                      and once discovery is allowed reports succeed without a restart; stop is
                      prompt

Environment: TESTBED_DIR (kubeconfig, pki/), TRAINER_BIN_DIR (trainer-webhook), optional KUBECTL.
"""

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "common", "py"))
import testbed  # noqa: E402
from testbed import http_get, wait_for  # noqa: E402

RUN_ID = f"{os.getpid()}"
NS = f"status-test-{RUN_ID}"
NS2 = f"status-test-other-{RUN_ID}"
OPERATOR_NS = "kubeflow-system"

failures = []


def check(cond, what):
    if cond:
        print(f"ok   {what}")
    else:
        print(f"FAIL {what}")
        failures.append(what)


def audience(ns, name):
    return f"trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"


def path(ns, name):
    return f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"


def status_body(message, reason, code):
    return {"metadata": {}, "status": "Failure", "message": message, "reason": reason,
            "code": code}


class StatusClient:
    """HTTPS to the status server, verifying its certificate with the test bed CA."""

    def __init__(self, port, ca):
        self.port = port
        self.ctx = ssl.create_default_context(cafile=ca)

    def request(self, url_path, body=b"", token=None, method="POST", headers=None):
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=20)
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        try:
            conn.request(method, url_path, body=body if method != "GET" else None, headers=h)
            r = conn.getresponse()
            return r.status, r.read().decode(), r.getheader("Content-Type")
        finally:
            conn.close()

    def post(self, ns, name, token, body):
        return self.request(path(ns, name), body, token)


def token(k, ns, sa, aud, *extra):
    return k.run("create", "token", sa, "-n", ns, f"--audience={aud}", "--duration=1h",
                 *extra).stdout.strip()


def trainjob(name, ns=NS):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"runtimeRef": {"name": "torch-distributed"}}}


def metrics(port):
    status, body = http_get(f"http://127.0.0.1:{port}/metrics")
    return body if status == 200 else ""


def metric_value(text, line_prefix):
    for line in text.splitlines():
        if line.startswith(line_prefix + " "):
            return float(line.split()[-1])
    return 0.0


def table_columns(out):
    """kubectl's table output (header and one row) as {column: value}; empty cells are ""."""
    header, row = out.splitlines()[0], out.splitlines()[1]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    names = header.split()
    cols = {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(row)
        cols[names[n]] = row[start:end].strip()
    return cols


def apply_rbac(k, *files):
    for f in files:
        with open(os.path.join(ROOT, f)) as fh:
            k.run("apply", "-f", "-", stdin=fh.read())


def start_webhook(k, work, name, kubeconfig, *flags):
    d = os.path.join(work, name)
    os.mkdir(d)
    status_port = testbed.free_port()
    wh = testbed.Webhook(k, d, cn=name, kubeconfig=kubeconfig,
                         flags=(f"--status-server-port={status_port}", *flags))
    wh.status_port = status_port
    return wh


def stop_webhook(wh):
    wh.stop()


def test_gate_off(k, work, kubeconfig):
    wh = start_webhook(k, work, "gate-off", kubeconfig)
    try:
        check(wh.probe("/readyz")[0] == 200, "gate off: the webhook is ready")
        try:
            StatusClient(wh.status_port, wh.ca).post(NS, "job-a", "x", {})
            check(False, "gate off: no status server listens")
        except OSError:
            check(True, "gate off: no status server listens")
    finally:
        stop_webhook(wh)


def test_upstream_table(k, work, kubeconfig):
    wh = start_webhook(k, work, "table", kubeconfig, "--feature-gates=TrainJobStatus=true")
    try:
        check(wh.probe("/readyz")[0] == 200, "gate on: the webhook is ready")
        c = StatusClient(wh.status_port, wh.ca)
        tok = token(k, NS, "reporter", audience(NS, "job-a"))
        wait_for("the status server verifies tokens",
                 lambda: c.post(NS, "job-a", tok, {})[0] == 200, 60)

        report = {"trainerStatus": {"progressPercentage": 42, "estimatedRemainingSeconds": 600,
                                    "metrics": [{"name": "loss", "value": "0.25"},
                                                {"name": "accuracy", "value": "0.9"}],
                                    "lastUpdatedTime": "2026-01-02T04:04:05.678+01:00"},
                  "unknownField": True}
        code, body, ctype = c.post(NS, "job-a", tok, report)
        want_echo = {"trainerStatus": {"progressPercentage": 42, "estimatedRemainingSeconds": 600,
                                       "metrics": [{"name": "loss", "value": "0.25"},
                                                   {"name": "accuracy", "value": "0.9"}],
                                       "lastUpdatedTime": "2026-01-02T03:04:05Z"}}
        check(code == 200 and json.loads(body) == want_echo and body.endswith("\n"),
              f"200 echoes the request as decoded (UTC, whole seconds, unknown fields dropped): "
              f"{code} {body!r}")
        check(ctype == "application/json", f"replies are application/json: {ctype}")
        tj = k.get_or_none("trainjob", "job-a", NS, managed_fields=True)
        check(tj["status"].get("trainerStatus") == want_echo["trainerStatus"],
              f"status.trainerStatus follows: {tj['status'].get('trainerStatus')}")
        managers = [(m["manager"], m["operation"], m.get("subresource"))
                    for m in tj["metadata"].get("managedFields", [])]
        check(("trainer-status", "Apply", "status") in managers,
              f"written by server-side apply, field manager trainer-status: {managers}")

        other_job = token(k, NS, "reporter", audience(NS, "job-b"))
        check(c.post(NS, "job-a", other_job, report)[:2] ==
              (403, json.dumps(status_body("Forbidden", "Forbidden", 403),
                               separators=(",", ":")) + "\n"),
              "a token for another TrainJob: 403 Forbidden")
        other_ns = token(k, NS2, "reporter", audience(NS, "job-a"))
        check(c.post(NS, "job-a", other_ns, report)[0] == 403,
              "a token of another namespace with this TrainJob's audience: 403")
        check(c.post(NS, "job-a", None, report)[0] == 403, "no token: 403")
        check(c.post(NS, "job-a", "not-a-jwt", report)[0] == 403, "a malformed token: 403")

        code, body, _ = c.post(NS, "job-a", tok, "{not json")
        check((code, json.loads(body)) == (422, status_body("Invalid payload", "Invalid", 422)),
              f"bad JSON: 422 Invalid payload ({code} {body!r})")
        code, body, _ = c.post(NS, "job-a", tok, "x" * (70 * 1024))
        check((code, json.loads(body)) ==
              (413, status_body("Payload too large", "RequestEntityTooLarge", 413)),
              f"70 KiB: 413 Payload too large ({code})")
        missing = token(k, NS, "reporter", audience(NS, "no-such-job"))
        code, body, _ = c.post(NS, "no-such-job", missing, report)
        check((code, json.loads(body)) == (404, status_body("Train job not found", "NotFound",
                                                            404)),
              f"unknown TrainJob: 404 Train job not found ({code} {body!r})")
        code, body, _ = c.post(NS, "job-a", tok, {"trainerStatus": {
            "progressPercentage": 150, "lastUpdatedTime": "2026-01-01T00:00:00Z"}})
        msg = json.loads(body).get("message", "")
        check(code == 422 and json.loads(body)["reason"] == "Invalid" and
              "Invalid value: 150" in msg and "less than or equal to 100" in msg and
              msg.startswith('TrainJob.trainer.kubeflow.org "job-a" is invalid'),
              f"progress 150: 422 with the apiserver's message ({code} {msg!r})")
        code, body, _ = c.post(NS, "job-a", tok, {"other": 1})
        check((code, body) == (200, "{}\n"), f"no trainerStatus: 200 echo ({code} {body!r})")
        tj = k.get("trainjob", "job-a", NS)
        check(tj["status"]["trainerStatus"]["progressPercentage"] == 42,
              "no trainerStatus and refused reports leave the status as it was")

        for method, p in (("GET", path(NS, "job-a")), ("PUT", path(NS, "job-a")),
                          ("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/x/trainjobs"),
                          ("POST", "/healthz")):
            code, body, _ = c.request(p, "{}", tok, method=method)
            check((code, json.loads(body) if body else None) ==
                  (404, status_body("Not found", "NotFound", 404)),
                  f"{method} {p}: 404 Not found ({code} {body!r})")

        # The PROGRESS and ETA printer columns.
        out = k.run("get", "trainjobs", "-n", NS, "job-a").stdout
        cols = table_columns(out)
        check(cols.get("PROGRESS") == "42" and cols.get("ETA") == "600",
              f"kubectl get shows PROGRESS and ETA: {out!r}")
        wide = k.run("get", "trainjobs", "-n", NS, "job-a", "-o", "wide").stdout
        check("LAST REPORT" in wide.splitlines()[0], f"-o wide adds the last report: {wide!r}")

        # The certificate is the webhook's, reloaded from the Secret volume.
        check(testbed.served_cn(wh.status_port, wh.ca) == "table",
              "the status server presents the webhook's certificate")
        crt, key = testbed.sign_cert(wh.pki, wh.work, "table-rotated")
        wh.certs.publish(crt, key)
        wait_for("the rotated certificate is served",
                 lambda: testbed.served_cn(wh.status_port, wh.ca) == "table-rotated", 30)
        check(True, "a new certificate in the Secret volume is served without a restart")

        m = metrics(wh.metrics_port)
        for code in ("200", "403", "404", "413", "422"):
            check(metric_value(m, f'trainer_status_server_requests_total{{code="{code}"}}') >= 1,
                  f"trainer_status_server_requests_total counts {code}")
        check(metric_value(m, 'trainer_status_server_writes_total{result="success"}') >= 1,
              "trainer_status_server_writes_total counts successful writes")
        check(metric_value(m, 'trainer_status_server_writes_total{result="invalid"}') >= 1,
              "trainer_status_server_writes_total counts refused writes")
        check(metric_value(m, "trainer_status_server_request_duration_seconds_count") >= 10,
              "trainer_status_server_request_duration_seconds observes every report")
        check(metric_value(m, "trainer_status_server_token_keys_loaded_timestamp_seconds") > 0,
              "the issuer's keys were loaded")
    finally:
        stop_webhook(wh)


def test_coalescing(k, work, kubeconfig):
    wh = start_webhook(k, work, "coalesce", kubeconfig, "--feature-gates=TrainJobStatus=true",
                       "--status-write-interval=3s")
    try:
        c = StatusClient(wh.status_port, wh.ca)
        tok = token(k, NS, "reporter", audience(NS, "job-c"))
        wait_for("the status server verifies tokens",
                 lambda: c.post(NS, "job-c", tok, {})[0] == 200, 60)
        before = metric_value(metrics(wh.metrics_port),
                              'trainer_status_server_writes_total{result="success"}')
        codes = []
        for p in range(1, 31):
            codes.append(c.post(NS, "job-c", tok, {"trainerStatus": {
                "progressPercentage": p, "lastUpdatedTime": "2026-01-01T00:00:00Z"}})[0])
        check(codes == [200] * 30, f"every report of a burst is answered 200: {set(codes)}")
        code, body, _ = c.post(NS, "job-c", tok, {"trainerStatus": {
            "progressPercentage": 101, "lastUpdatedTime": "2026-01-01T00:00:00Z"}})
        check(code == 422 and "less than or equal to 100" in body,
              f"a report the CRD refuses is never held: 422 at once ({code})")
        missing = token(k, NS, "reporter", audience(NS, "no-such-job"))
        check(c.post(NS, "no-such-job", missing, {"trainerStatus": {
            "progressPercentage": 1, "lastUpdatedTime": "2026-01-01T00:00:00Z"}})[0] == 404,
            "a report for a TrainJob that does not exist is never held: 404")
        wait_for("the last report of the burst is written",
                 lambda: k.get("trainjob", "job-c", NS).get("status", {}).get(
                     "trainerStatus", {}).get("progressPercentage") == 30, 15)
        check(True, "the last report wins")
        after = metric_value(metrics(wh.metrics_port),
                             'trainer_status_server_writes_total{result="success"}')
        check(after - before <= 4, f"30 reports in a burst took {after - before:.0f} writes")
        check(metric_value(metrics(wh.metrics_port), "trainer_status_server_reports_held_total")
              >= 20, "trainer_status_server_reports_held_total counts held reports")
    finally:
        stop_webhook(wh)


def test_pod_binding(k, work, kubeconfig):
    wh = start_webhook(k, work, "binding", kubeconfig, "--feature-gates=TrainJobStatus=true",
                       "--status-server-require-pod-binding")
    try:
        c = StatusClient(wh.status_port, wh.ca)

        def pod(name, job):
            k.create({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": NS,
                                   "labels": {"jobset.sigs.k8s.io/jobset-name": job}},
                      "spec": {"serviceAccountName": "reporter",
                               "containers": [{"name": "node", "image": "busybox"}]}})
            return k.get("pod", name, NS)["metadata"]["uid"]

        def bound(name, uid, job="job-a"):
            return token(k, NS, "reporter", audience(NS, job), "--bound-object-kind=Pod",
                         f"--bound-object-name={name}", f"--bound-object-uid={uid}")

        uid = pod("job-a-node-0-0", "job-a")
        other_uid = pod("job-b-node-0-0", "job-b")
        good = bound("job-a-node-0-0", uid)
        report = {"trainerStatus": {"progressPercentage": 7,
                                    "lastUpdatedTime": "2026-01-01T00:00:00Z"}}
        wait_for("a token bound to a pod of the TrainJob is accepted",
                 lambda: c.post(NS, "job-a", good, report)[0] == 200, 60)
        check(True, "a token bound to a live pod of the TrainJob: 200")
        check(c.post(NS, "job-a", token(k, NS, "reporter", audience(NS, "job-a")), report)[0] ==
              403, "a token bound to no pod: 403")
        check(c.post(NS, "job-a", bound("job-b-node-0-0", other_uid), report)[0] == 403,
              "a token bound to a pod of another TrainJob: 403")
        k.run("delete", "pod", "job-a-node-0-0", "-n", NS, "--grace-period=0", "--force",
              "--wait=false")
        wait_for("a token of a deleted pod is refused",
                 lambda: c.post(NS, "job-a", good, report)[0] == 403, 30)
        check(True, "a token bound to a pod that is gone: 403")
    finally:
        stop_webhook(wh)


def user_kubeconfig(k, work, user):
    """A kubeconfig for a client-certificate user `user` (no groups) signed by the test bed CA."""
    pki = os.path.join(k.testbed, "pki")
    key, csr, crt = (os.path.join(work, f"{user}.{e}") for e in ("key", "csr", "crt"))
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-subj", f"/CN={user}",
                    "-out", csr], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
                    "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "1",
                    "-out", crt], check=True, capture_output=True)
    admin = json.loads(k.run("config", "view", "--raw", "--minify", "-o", "json").stdout)
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "u",
           "clusters": [{"name": "testbed", "cluster": admin["clusters"][0]["cluster"]}],
           "users": [{"name": user, "user": {"client-certificate": crt, "client-key": key}}],
           "contexts": [{"name": "u", "context": {"cluster": "testbed", "user": user}}]}
    path = os.path.join(work, f"{user}.kubeconfig")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def test_issuer_unreachable(k, work):
    user = f"status-test-user-{RUN_ID}"
    kubeconfig = user_kubeconfig(k, work, user)
    # What admission and the status writes need, not issuer discovery.
    k.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": user},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "trainer-webhook"},
             "subjects": [{"kind": "User", "name": user}]})
    discovery = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": user + "-status"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": "trainer-webhook-status-server"},
                 "subjects": [{"kind": "User", "name": user}]}
    wh = start_webhook(k, work, "no-issuer", kubeconfig, "--feature-gates=TrainJobStatus=true")
    try:
        check(wh.probe("/readyz")[0] == 200,
              "issuer unreachable: the webhook is ready (admission does not wait for it)")
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": {"uid": "u1", "operation": "CREATE",
                              "kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1",
                                       "kind": "TrainJob"},
                              "resource": {"group": "trainer.kubeflow.org",
                                           "version": "v1alpha1", "resource": "trainjobs"},
                              "namespace": NS, "name": "x", "object": trainjob("x")}}
        conn = http.client.HTTPSConnection("127.0.0.1", wh.port, timeout=10,
                                           context=ssl.create_default_context(cafile=wh.ca))
        conn.request("POST", "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
                     json.dumps(review), {"Content-Type": "application/json"})
        r = conn.getresponse()
        answer = json.loads(r.read())
        check(r.status == 200 and answer["response"]["uid"] == "u1",
              "issuer unreachable: admission still answers")
        c = StatusClient(wh.status_port, wh.ca)
        tok = token(k, NS, "reporter", audience(NS, "job-a"))
        code, body, _ = c.post(NS, "job-a", tok, {})
        check((code, json.loads(body)) == (500, status_body("Internal error", "InternalError", 500)),
              f"issuer unreachable: reports get 500 Internal error ({code} {body!r})")
        k.apply(discovery)
        wait_for("reports succeed once the issuer is reachable",
                 lambda: c.post(NS, "job-a", tok, {})[0] == 200, 60)
        check(True, "the issuer is retried with backoff: reports succeed without a restart")
        t0 = time.time()
        wh.proc.send_signal(signal.SIGTERM)
        wh.proc.wait(30)
        check(time.time() - t0 < 6, f"SIGTERM stops it promptly ({time.time() - t0:.1f}s)")
    finally:
        stop_webhook(wh)
        k.run("delete", "clusterrolebinding", user, user + "-status", "--ignore-not-found",
              check=False)


def main():
    tb = testbed.testbed_dir()
    for p in (os.path.join(tb, "kubeconfig"), os.path.join(testbed.bin_dir(), "trainer-webhook")):
        if not os.path.exists(p):
            sys.exit(f"status server test: missing {p}")
    k = testbed.Kubectl(tb)
    testbed.install_trainer_crds(k, manager="status-test")
    for ns in (NS, NS2, OPERATOR_NS):
        k.run("create", "namespace", ns, check=False)
    for ns in (NS, NS2):
        k.run("create", "serviceaccount", "reporter", "-n", ns)
    for name in ("job-a", "job-b", "job-c"):
        k.apply(trainjob(name), manager="status-test")
    # trainer-webhook as deploy/ runs it: its ServiceAccount with exactly deploy/'s RBAC.
    k.run("create", "serviceaccount", "trainer-webhook", "-n", OPERATOR_NS, check=False)
    apply_rbac(k, "deploy/base/rbac/webhook.yaml",
               "deploy/components/trainjob-status/rbac.yaml",
               "deploy/components/status-server-pod-binding/rbac.yaml")
    work = tempfile.mkdtemp(prefix="status-it-")
    kubeconfig = testbed.service_account_kubeconfig(
        k, OPERATOR_NS, "trainer-webhook", os.path.join(work, "webhook.kubeconfig"))
    try:
        test_gate_off(k, work, kubeconfig)
        test_upstream_table(k, work, kubeconfig)
        test_coalescing(k, work, kubeconfig)
        test_pod_binding(k, work, kubeconfig)
        test_issuer_unreachable(k, work)
    finally:
        k.delete_namespace(NS)
        k.delete_namespace(NS2)
    if failures:
        print(f"\n{len(failures)} failure(s); logs in {work}")
        sys.exit(1)
    print("\nall status server checks passed")


if __name__ == "__main__":
    main()
