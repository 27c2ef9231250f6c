"""Report a TrainJob's training progress to Kubeflow Trainer's status server, with nothing but the
Python standard library.

With the TrainJobStatus feature gate on, every trainer container of a TrainJob gets three
environment variables (docs/progress.md):

    KUBEFLOW_TRAINER_SERVER_URL      https://<service>.<namespace>.svc:10443/apis/.../status
    KUBEFLOW_TRAINER_SERVER_CA_CERT  the CA file that signs the server's certificate
    KUBEFLOW_TRAINER_SERVER_TOKEN    a service-account token file for this TrainJob (rotated
                                     by the kubelet: read it at every report)

and whatever is reported appears in `kubectl get trainjobs` (PROGRESS, ETA) and in
status.trainerStatus, where dashboards and early-stopping tools can read it.

    from kubeflow_progress import ProgressReporter

    reporter = ProgressReporter()          # a no-op outside a TrainJob with the gate on
    for step in range(total_steps):
        loss = train_step()
        reporter.report_step(step + 1, total_steps, metrics={"loss": loss})
    reporter.close()                       # sends the last report, waits briefly

Reports never raise and never block training: they go to one background thread that sends the
newest report (older unsent ones are dropped), retries with exponential backoff when the server
cannot be reached or answers 5xx or 429, and gives up on a report the server refuses (403, 404,
413, 422: logged once). By default only the primary process reports (RANK, OMPI_COMM_WORLD_RANK,
PMI_RANK or JAX_PROCESS_ID, when set, must be 0); pass primary_only=False to report from every
process.

From a shell:  python3 kubeflow_progress.py --progress 50 --eta 600 --metric loss=0.31
"""

import argparse
import datetime
import json
import logging
import os
import random
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request

__all__ = ["ProgressReporter"]

log = logging.getLogger("kubeflow_progress")

ENV_URL = "KUBEFLOW_TRAINER_SERVER_URL"
ENV_CA = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
ENV_TOKEN = "KUBEFLOW_TRAINER_SERVER_TOKEN"
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "JAX_PROCESS_ID")

# What the TrainJob CRD accepts in status.trainerStatus.
MAX_METRICS = 256
MAX_METRIC_CHARS = 64
# Answers that will not change by sending the same report again.
PERMANENT = {400, 401, 403, 404, 405, 413, 422}


def _is_primary(environ):
    for name in RANK_VARIABLES:
        value = environ.get(name, "").strip()
        if value and value != "0":
            return False
    return True


def _metric_text(value):
    if isinstance(value, float):
        text = repr(value)
    else:
        text = str(value)
    return text[:MAX_METRIC_CHARS]


class ProgressReporter:
    """Sends progress reports for the TrainJob this process runs in.

    url, ca_file, token_file default to the KUBEFLOW_TRAINER_SERVER_* variables; without a URL
    the reporter is disabled and every call is a no-op (so the same training code runs anywhere).
    """

    def __init__(self, url=None, ca_file=None, token_file=None, primary_only=True,
                 timeout=10.0, max_backoff=60.0, environ=None, clock=time.monotonic):
        environ = os.environ if environ is None else environ
        self.url = url if url is not None else environ.get(ENV_URL, "")
        self.ca_file = ca_file if ca_file is not None else environ.get(ENV_CA, "")
        self.token_file = token_file if token_file is not None else environ.get(ENV_TOKEN, "")
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.enabled = bool(self.url) and (not primary_only or _is_primary(environ))
        self._clock = clock
        self._lock = threading.Condition()
        self._pending = None      # the newest report not sent yet
        self._sending = False
        self._closed = False
        self._refused = set()     # HTTP codes already logged
        self._first_step = None   # (clock, step) of the first report_step
        self._context = None
        self._context_source = None
        self._thread = None
        self.sent = 0             # reports the server accepted (for tests and curiosity)
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="kubeflow-progress",
                                            daemon=True)
            self._thread.start()

    # -- what training code calls ----------------------------------------------------------

    def report(self, progress=None, eta_seconds=None, metrics=None):
        """Queues a report. progress: percent done (0-100); eta_seconds: seconds left;
        metrics: {name: value}, values written as text. Returns at once; never raises."""
        if not self.enabled:
            return
        try:
            body = self._body(progress, eta_seconds, metrics)
        except Exception:  # noqa: BLE001 - a bad value must not stop training
            log.exception("kubeflow_progress: report not sent")
            return
        with self._lock:
            if self._closed:
                return
            self._pending = body
            self._lock.notify_all()

    def report_step(self, step, total_steps, metrics=None):
        """report() with progress and ETA computed from the step count and the pace so far."""
        if not self.enabled or not total_steps:
            return
        now = self._clock()
        if self._first_step is None:
            self._first_step = (now, step)
        progress = 100.0 * step / total_steps
        eta = None
        started, first = self._first_step
        if step > first and now > started:
            eta = (total_steps - step) * (now - started) / (step - first)
        self.report(progress=progress, eta_seconds=eta, metrics=metrics)

    def flush(self, timeout=10.0):
        """Waits until the newest report is sent (or given up); False on timeout."""
        if not self.enabled:
            return True
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending is not None or self._sending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self, timeout=10.0):
        """Sends what is queued (waiting up to `timeout`), then stops the thread."""
        if not self.enabled:
            return
        self.flush(timeout)
        with self._lock:
            self._closed = True
            self._pending = None
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    # -- the background sender --------------------------------------------------------------

    def _body(self, progress, eta_seconds, metrics):
        status = {}
        if progress is not None:
            status["progressPercentage"] = int(min(100, max(0, round(float(progress)))))
        if eta_seconds is not None:
            status["estimatedRemainingSeconds"] = int(min(2**31 - 1, max(0, round(eta_seconds))))
        items = []
        for name, value in list((metrics or {}).items())[:MAX_METRICS]:
            name, text = str(name)[:MAX_METRIC_CHARS], _metric_text(value)
            if name and text:
                items.append({"name": name, "value": text})
        if items:
            status["metrics"] = items
        status["lastUpdatedTime"] = datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        return json.dumps({"trainerStatus": status}).encode()

    def _run(self):
        backoff = 0.0
        while True:
            with self._lock:
                while self._pending is None and not self._closed:
                    self._lock.wait()
                if self._closed and self._pending is None:
                    return
                body, self._pending = self._pending, None
                self._sending = True
            retry = self._send(body)
            with self._lock:
                self._sending = False
                if retry and self._pending is None and not self._closed:
                    self._pending = body  # nothing newer: try this one again
                self._lock.notify_all()
                if not retry:
                    backoff = 0.0
                    continue
                backoff = min(self.max_backoff, max(1.0, backoff * 2))
                # Sleep with jitter, but wake for close().
                self._lock.wait(backoff * (0.5 + random.random() / 2))

    def _ssl_context(self):
        """A context trusting the CA file, rebuilt when the file changes (the kubelet updates the
        projected volume in place)."""
        try:
            source = (self.ca_file, os.stat(self.ca_file).st_mtime_ns) if self.ca_file else None
        except OSError:
            source = None
        if self._context is None or source != self._context_source:
            context = ssl.create_default_context(cafile=self.ca_file or None)
            self._context, self._context_source = context, source
        return self._context

    def _send(self, body):
        """Sends one report; True when it should be retried."""
        try:
            headers = {"Content-Type": "application/json"}
            if self.token_file:
                with open(self.token_file) as f:
                    headers["Authorization"] = "Bearer " + f.read().strip()
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=self.timeout,
                                        context=self._ssl_context()) as response:
                response.read()
            self.sent += 1
            return False
        except urllib.error.HTTPError as e:
            message = e.read().decode(errors="replace")[:300]
            if e.code in PERMANENT:
                if e.code not in self._refused:
                    self._refused.add(e.code)
                    log.warning("kubeflow_progress: the status server refused a report (HTTP %d): "
                                "%s", e.code, message)
                return False
            log.debug("kubeflow_progress: HTTP %d, retrying: %s", e.code, message)
            return True
        except Exception as e:  # noqa: BLE001 - unreachable, TLS, token file: retry later
            log.debug("kubeflow_progress: %s, retrying", e)
            return True


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Report a TrainJob's progress to the status server (reads the "
                    "KUBEFLOW_TRAINER_SERVER_* variables).")
    parser.add_argument("--progress", type=float, help="percent done, 0-100")
    parser.add_argument("--eta", type=float, help="seconds left")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to keep retrying (default 30)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    reporter = ProgressReporter(primary_only=False)
    if not reporter.enabled:
        print(f"{ENV_URL} is not set: nothing to report to", file=sys.stderr)
        return 1
    metrics = dict(m.split("=", 1) for m in args.metric if "=" in m)
    reporter.report(progress=args.progress, eta_seconds=args.eta, metrics=metrics)
    ok = reporter.flush(args.timeout) and reporter.sent > 0
    reporter.close(timeout=0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
