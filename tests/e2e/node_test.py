#!/usr/bin/env python3
"""The real node works as a cluster's node does, inside the network rule: a pod resolves Service
and headless pod names through the cluster DNS, reaches a Service VIP and the apiserver (with
its ServiceAccount token, as in-cluster clients do), and gets no answer for a name outside
cluster.local; the host reaches a Service VIP over the pod bridge; and the isolation rules
(no forwarding between the bridge and any other interface, no masquerade) are in place.
"""
import json
import subprocess
import sys
import textwrap

import e2e

NS = "e2e-node"

PROBE = textwrap.dedent("""
    import json, socket, ssl, time, urllib.request
    sa = "/var/run/secrets/kubernetes.io/serviceaccount"
    out = {}
    def resolve(name):
        for _ in range(50):
            try:
                return socket.gethostbyname(name)
            except OSError as e:
                err = str(e)
                time.sleep(0.2)
        return "error: " + err
    out["web"] = resolve("web")
    out["pod"] = resolve("web-0.web-headless.e2e-node.svc.cluster.local")
    try:
        out["outside"] = socket.gethostbyname("example.com")
    except OSError as e:
        out["outside"] = "error: " + str(e)
    out["http"] = urllib.request.urlopen("http://web", timeout=10).status
    ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
    req = urllib.request.Request("https://kubernetes.default.svc/api/v1/namespaces/e2e-node/pods",
                                 headers={"Authorization": "Bearer " + open(sa + "/token").read()})
    try:
        urllib.request.urlopen(req, context=ctx, timeout=10)
        out["api"] = 200
    except urllib.error.HTTPError as e:
        out["api"] = e.code  # 403: authenticated as the pod's ServiceAccount, no RBAC to list
    print("PROBE " + json.dumps(out), flush=True)
""")


def manifests(image):
    return f"""
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {NS}}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: 8000}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web-headless, namespace: {NS}}}
spec:
  clusterIP: None
  selector: {{app: web}}
  ports: [{{port: 8000}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: web-0, namespace: {NS}, labels: {{app: web}}}}
spec:
  hostname: web-0
  subdomain: web-headless
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: {image}
      command: [python3, -m, http.server, "8000"]
      readinessProbe: {{tcpSocket: {{port: 8000}}, periodSeconds: 1}}
---
apiVersion: v1
kind: Pod
metadata: {{name: probe, namespace: {NS}}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: probe
      image: {image}
      command: [python3, -c, {json.dumps(PROBE)}]
"""


def main():
    e2e.require_machine()
    env = e2e.e2e_env()
    k = e2e.kubectl()
    node = env["TESTBED_NODE_NAME"]
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    ready = k.out("get", "node", node, "-o",
                  'jsonpath={.status.conditions[?(@.type=="Ready")].status}{.spec.taints}')
    check(ready == "True", f"node {node} is Ready without taints ({ready!r})")

    k.fresh_namespace(NS)
    e2e.wait_for("the default ServiceAccount of " + NS, 30,
                 lambda: k.run("get", "sa", "default", "-n", NS, check=False).returncode == 0)
    k.run("apply", "-f", "-", stdin=manifests(env["TRAINER_MPI_IMAGE"]))
    e2e.wait_for("web-0 to be Ready", 120, lambda: k.out(
        "get", "pod", "web-0", "-n", NS, "-o",
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == "True")
    phase = e2e.wait_for("the probe pod to finish", 120, lambda: (lambda p: p in (
        "Succeeded", "Failed") and p)(k.out("get", "pod", "probe", "-n", NS, "-o",
                                           "jsonpath={.status.phase}")))
    logs = k.out("logs", "probe", "-n", NS)
    print(logs)
    check(phase == "Succeeded", f"the probe pod succeeded ({phase})")
    line = [l for l in logs.splitlines() if l.startswith("PROBE ")]
    probe = json.loads(line[0][len("PROBE "):]) if line else {}
    web_ip = k.out("get", "svc", "web", "-n", NS, "-o", "jsonpath={.spec.clusterIP}")
    pod_ip = k.out("get", "pod", "web-0", "-n", NS, "-o", "jsonpath={.status.podIP}")
    check(probe.get("web") == web_ip, f"'web' resolves to its ClusterIP {web_ip} ({probe.get('web')})")
    check(probe.get("pod") == pod_ip,
          f"the headless pod name resolves to the pod's IP {pod_ip} ({probe.get('pod')})")
    check(str(probe.get("outside", "")).startswith("error"),
          f"a name outside cluster.local does not resolve ({probe.get('outside')})")
    check(probe.get("http") == 200, f"the pod reached Service web ({probe.get('http')})")
    check(probe.get("api") == 403,
          f"the pod reached the apiserver at kubernetes.default.svc as its ServiceAccount "
          f"(403 without RBAC; got {probe.get('api')})")

    host = subprocess.run(["curl", "-fsS", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}",
                           f"http://{web_ip}/"], capture_output=True, text=True)
    check(host.stdout == "200", f"the host reached Service web at {web_ip} ({host.stdout} {host.stderr})")
    route = subprocess.run(["ip", "route", "get", web_ip], capture_output=True, text=True).stdout
    check("dev trainer0" in route, f"the host routes Service VIPs over the pod bridge ({route.strip()})")
    rules = subprocess.run(["iptables", "-S", "TESTBED-NODE-FORWARD"], capture_output=True,
                           text=True).stdout
    check("-A TESTBED-NODE-FORWARD -i trainer0 ! -o trainer0 -j DROP" in rules,
          "the pod bridge's traffic to other interfaces is dropped")
    nat = subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True).stdout
    masq = [l for l in nat.splitlines() if "MASQUERADE" in l and "KUBE-" not in l]
    check(not masq, f"no masquerade rule but kube-proxy's in-node ones ({masq})")

    k.run("delete", "namespace", NS, "--wait=false")
    print(f"{len(failures)} failed" if failures else "node: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
