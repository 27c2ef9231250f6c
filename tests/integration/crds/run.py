#!/usr/bin/env python3
"""Integration test of deploy/crds against a real kube-apiserver (the test bed), no webhook.

1. Applies deploy/crds/*.yaml server-side and waits until they are Established.
2. Runs every case in tests/integration/crds/cases/*.yaml (format below): objects are applied
   with server-side apply, so the apiserver's schema, defaulting and CEL alone accept or reject
   them, and each rejection's message is checked.
3. Checks `kubectl explain` and the printer columns.
4. Applies (server-side, dry run) every trainer.kubeflow.org object in examples/**/*.yaml.

Case files:

  kinds: [TrainingRuntime, ClusterTrainingRuntime]  # optional: run each case once per kind,
                                                    # replacing the string KIND in objects
  objects:                                          # templates steps start from
    job: {apiVersion: ..., kind: TrainJob, spec: {...}}
  cases:
  - name: what the case shows
    steps:
    - from: job                      # a template (or `object:` with a whole object)
      set: {spec.managedBy: foo}     # dotted paths; [i] indexes lists; `unset: [paths]` removes
      manager: other                 # field manager (default crds-test)
      reject: 'spec.managedBy: Invalid value: "foo": ManagedBy must be ...'  # expected error text
      expect: {spec.suspend: false}  # values of the stored object after the step (null: absent)
    - status: {trainerStatus: {progressPercentage: 5}}   # merge patch of the status subresource
      reject: ...

A step without `reject` must succeed. Objects get metadata.name `<file>-<case number>` unless
the step sets one, and the test namespace when the kind is namespaced.

Environment: TESTBED_DIR (the test bed, with kubeconfig), optional KUBECTL, optional CRD_DIR
(default deploy/crds; pointing it at another set of CRDs, e.g. upstream's, runs the same table
against them).
"""

import copy
import glob
import json
import os
import re
import subprocess
import sys
import time

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
CASES_DIR = os.path.join(ROOT, "tests", "integration", "crds", "cases")
GROUP = "trainer.kubeflow.org"
CLUSTER_SCOPED = {"ClusterTrainingRuntime"}
# CEL rules no object can break, with the reason; every other rule needs a rejecting case.
UNREACHABLE_RULES = {
    ("trainjobs", "spec.runtimePatches[].manager", "field is immutable"):
        "manager is the key of the runtimePatches list map: a changed manager is a new entry with "
        "no old value, so this transition rule never has an oldSelf to compare with (the case "
        "'manager is immutable, but ...' shows the change being accepted)",
}
PLURALS = {"TrainJob": "trainjobs", "TrainingRuntime": "trainingruntimes",
           "ClusterTrainingRuntime": "clustertrainingruntimes"}
OWNER_LABEL = "trainer-cpp.crds-test/owned"
MANAGER = "crds-test"
CRD_DIR = os.environ.get("CRD_DIR") or os.path.join(ROOT, "deploy", "crds")



def crd_files():
    """The CRD manifests in CRD_DIR; deploy/crds also holds the kustomization that installs them."""
    return sorted(glob.glob(os.path.join(CRD_DIR, "trainer.kubeflow.org_*.yaml")))

class Kubectl:
    def __init__(self):
        tb = os.environ.get("TESTBED_DIR") or os.path.join(ROOT, ".local", "testbed")
        self.kubeconfig = os.path.join(tb, "kubeconfig")
        if not os.path.exists(self.kubeconfig):
            sys.exit(f"crds test: no test bed kubeconfig at {self.kubeconfig} (start one with "
                     "hack/testbed/up.sh, or run through ctest)")
        binary = os.environ.get("KUBECTL")
        if not binary:
            bin_dir = subprocess.run([os.path.join(ROOT, "hack", "testbed", "build.sh"),
                                      "--print-bin-dir"], check=True, capture_output=True,
                                     text=True).stdout.strip()
            binary = os.path.join(bin_dir, "kubectl")
        self.binary = binary

    def run(self, *args, stdin=None, check=True):
        p = subprocess.run([self.binary, "--kubeconfig", self.kubeconfig, *args], input=stdin,
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {p.stderr.strip()}")
        return p


# ---- dotted paths ----

_SEG = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _segments(path):
    segs = []
    for name, index in _SEG.findall(path):
        segs.append(int(index) if index else name)
    return segs


def path_get(obj, path):
    return _walk(obj, _segments(path))


def _walk(obj, segs):
    for seg in segs:
        if isinstance(seg, int):
            if not isinstance(obj, list) or seg >= len(obj):
                return None
            obj = obj[seg]
        else:
            if not isinstance(obj, dict) or seg not in obj:
                return None
            obj = obj[seg]
    return obj


def path_set(obj, path, value):
    segs = _segments(path)
    for i, seg in enumerate(segs[:-1]):
        nxt = [] if isinstance(segs[i + 1], int) else {}
        if isinstance(seg, int):
            while len(obj) <= seg:
                obj.append(copy.deepcopy(nxt))
            obj = obj[seg]
        else:
            obj = obj.setdefault(seg, nxt)
    last = segs[-1]
    if isinstance(last, int):
        while len(obj) <= last:
            obj.append(None)
    obj[last] = copy.deepcopy(value)


def path_unset(obj, path):
    segs = _segments(path)
    parent = _walk(obj, segs[:-1])
    if isinstance(parent, dict) and segs[-1] in parent:
        del parent[segs[-1]]
    elif isinstance(parent, list) and isinstance(segs[-1], int) and segs[-1] < len(parent):
        parent.pop(segs[-1])
    else:
        raise ValueError(f"unset {path}: no such field")


def substitute(node, old, new):
    if isinstance(node, dict):
        return {k: substitute(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [substitute(x, old, new) for x in node]
    return new if node == old else node


def _rules(schema, path):
    """(field path with [] for list items, rule) for every x-kubernetes-validations rule."""
    for rule in schema.get("x-kubernetes-validations", []):
        yield path, rule
    for name, sub in (schema.get("properties") or {}).items():
        yield from _rules(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        yield from _rules(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _rules(schema["additionalProperties"], path + "[*]")


# ---- the run ----

class Run:
    def __init__(self, kubectl):
        self.k = kubectl
        self.ns = f"crds-test-{os.getpid()}"
        self.failures = []
        self.passed = 0
        self.rejections = []  # (plural, expected message) of each passing rejection

    def fail(self, where, why):
        self.failures.append(f"{where}: {why}")
        print(f"FAIL {where}: {why}")

    def check_no_trainer_webhooks(self):
        # These tests are about the schema alone: a webhook for our group would change answers.
        for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            items = json.loads(self.k.run("get", kind, "-o", "json").stdout)["items"]
            for cfg in items:
                for wh in cfg.get("webhooks", []):
                    for rule in wh.get("rules", []):
                        if GROUP in rule.get("apiGroups", []) or "*" in rule.get("apiGroups", []):
                            sys.exit(f"crds test: {kind}/{cfg['metadata']['name']} intercepts "
                                     f"{GROUP}; this test needs the schema alone (another test "
                                     "left its webhook registered?)")

    def install_crds(self):
        files = crd_files()
        args = ["apply", "--server-side", "--force-conflicts", f"--field-manager={MANAGER}"]
        for f in files:
            args += ["-f", f]
        self.k.run(*args)
        # Polled rather than `kubectl wait`, which errors out when it reads a CRD whose status has
        # no conditions yet.
        deadline = time.time() + 60
        for plural in PLURALS.values():
            while True:
                result = self.k.run("get", f"crd/{plural}.{GROUP}", "-o",
                                    "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
                                    check=False)
                if result.stdout.strip() == "True":
                    break
                if time.time() > deadline:
                    sys.exit(f"crds test: crd/{plural}.{GROUP} not Established after 60 s")
                time.sleep(0.2)
        # The CRDs' OpenAPI reaches discovery (and kubectl explain) shortly after Established.
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.k.run("explain", "trainjob.spec", check=False).returncode == 0:
                break
            time.sleep(0.5)
        print(f"installed {len(files)} CRDs")

    def setup(self):
        self.k.run("create", "namespace", self.ns)
        self.k.run("delete", "clustertrainingruntimes", "-l", OWNER_LABEL, "--ignore-not-found",
                   "--wait=false")

    def cleanup(self):
        self.k.run("delete", "clustertrainingruntimes", "-l", OWNER_LABEL, "--ignore-not-found",
                   "--wait=false", check=False)
        # As testbed.Kubectl.delete_namespace: TrainJobs now (later tests' controllers would
        # reconcile leftovers), the rest through the namespace controller.
        self.k.run("delete", "trainjobs", "--all", "-n", self.ns, "--wait=false",
                   "--ignore-not-found", check=False)
        self.k.run("delete", "namespace", self.ns, "--wait=false", check=False)

    # -- cases --

    def run_case_files(self):
        files = sorted(glob.glob(os.path.join(CASES_DIR, "*.yaml")))
        if not files:
            self.fail("cases", f"no case files in {CASES_DIR}")
        for path in files:
            doc = yaml.safe_load(open(path, encoding="utf-8"))
            stem = os.path.splitext(os.path.basename(path))[0]
            kinds = doc.get("kinds") or [None]
            for kind in kinds:
                objects = doc.get("objects") or {}
                if kind:
                    objects = substitute(objects, "KIND", kind)
                for i, case in enumerate(doc["cases"]):
                    suffix = f"-{kind.lower()[:3]}" if kind else ""
                    name = f"{stem}-{i}{suffix}".lower()
                    label = f"{stem} #{i}{' [' + kind + ']' if kind else ''}: {case['name']}"
                    self.run_case(label, name, objects, case, kind)

    def run_case(self, label, name, objects, case, kind):
        last = None  # (kind, name) of the object the case works on
        rejections = []
        for n, step in enumerate(case["steps"]):
            where = f"{label} (step {n + 1})"
            if kind:
                step = substitute(step, "KIND", kind)
            if "status" in step:
                if last is None:
                    self.fail(where, "a status step needs an object from an earlier step")
                    return
                result = self.patch_status(last, step["status"])
            else:
                obj = self.build(step, objects, name, where)
                if obj is None:
                    return
                last = (obj["kind"], obj["metadata"]["name"])
                result = self.k.run("apply", "--server-side",
                                    f"--field-manager={step.get('manager', MANAGER)}", "-f", "-",
                                    stdin=json.dumps(obj), check=False)
            if not self.check_result(where, step, result):
                return
            if "reject" in step:
                rejections.append((PLURALS[last[0]], " ".join(step["reject"].split())))
            if "expect" in step and not self.check_expect(where, last, step["expect"]):
                return
        self.rejections.extend(rejections)
        self.passed += 1
        print(f"ok   {label}")

    def check_rule_coverage(self):
        """Every CEL rule of every CRD must have been hit by a rejecting step (the expected text
        names the rule's field path and message)."""
        total = 0
        for path in crd_files():
            crd = yaml.safe_load(open(path, encoding="utf-8"))
            plural = crd["spec"]["names"]["plural"]
            schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            for field, rule in _rules(schema, ""):
                total += 1
                key = (plural, field or "<nil>", rule["message"])
                if key in UNREACHABLE_RULES:
                    print(f"note {plural} {key[1]}: {rule['rule']!r} cannot be broken: "
                          f"{UNREACHABLE_RULES[key]}")
                    continue
                prefix = (field or "<nil>") + ": "
                hit = any(p == plural and re.sub(r"\[\d+\]", "[]", text).startswith(prefix)
                          and rule["message"] in text for p, text in self.rejections)
                if hit:
                    self.passed += 1
                else:
                    self.fail(f"rule coverage {plural} {prefix}{rule['rule']}",
                              f"no case is rejected with {rule['message']!r}")
        print(f"checked that each of the {total} CEL rules of the CRDs rejected a case")

    def build(self, step, objects, name, where):
        if "object" in step:
            obj = copy.deepcopy(step["object"])
        elif step.get("from") in objects:
            obj = copy.deepcopy(objects[step["from"]])
        else:
            self.fail(where, f"step needs `object` or `from` naming one of {sorted(objects)}")
            return None
        obj.setdefault("metadata", {})
        obj["metadata"].setdefault("name", name)
        for path, value in (step.get("set") or {}).items():
            path_set(obj, path, value)
        for path in step.get("unset") or []:
            try:
                path_unset(obj, path)
            except ValueError as e:
                self.fail(where, str(e))
                return None
        obj["metadata"].setdefault("labels", {})[OWNER_LABEL] = "true"
        if obj["kind"] not in CLUSTER_SCOPED:
            obj["metadata"]["namespace"] = self.ns
        return obj

    def patch_status(self, target, status):
        kind, name = target
        args = ["patch", PLURALS[kind], name, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": status})]
        if kind not in CLUSTER_SCOPED:
            args += ["-n", self.ns]
        return self.k.run(*args, check=False)

    def check_result(self, where, step, result):
        err = " ".join(result.stderr.split())
        want = step.get("reject")
        if want is None:
            if result.returncode != 0:
                self.fail(where, f"want accepted, got error: {err}")
                return False
            return True
        if result.returncode == 0:
            self.fail(where, f"want rejected with {want!r}, but it was accepted")
            return False
        if " ".join(want.split()) not in err:
            self.fail(where, f"rejected, but the message lacks {want!r}; got: {err}")
            return False
        return True

    def get(self, kind, name):
        args = ["get", PLURALS[kind], name, "-o", "json"]
        if kind not in CLUSTER_SCOPED:
            args += ["-n", self.ns]
        return json.loads(self.k.run(*args).stdout)

    def check_expect(self, where, target, expect):
        obj = self.get(*target)
        ok = True
        for path, want in expect.items():
            got = path_get(obj, path)
            if got != want:
                self.fail(where, f"{path}: want {json.dumps(want)}, got {json.dumps(got)}")
                ok = False
        return ok

    # -- kubectl explain and printer columns --

    def check_explain(self):
        crds = {}
        for path in crd_files():
            crd = yaml.safe_load(open(path, encoding="utf-8"))
            crds[crd["spec"]["names"]["singular"]] = crd
        checks = [
            ("trainjob", "spec.trainer", "<Object>"),
            ("trainjob", "spec.trainer.numNodes", "<integer>"),
            ("trainingruntime", "spec.mlPolicy.torch", "<Object>"),
            ("clustertrainingruntime", "spec.mlPolicy.torch", "<Object>"),
            ("trainjob", "spec.podTemplateOverrides", "<[]Object>"),
        ]
        for resource, field, type_text in checks:
            where = f"kubectl explain {resource}.{field}"
            node = crds[resource]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            for seg in field.split("."):
                node = (node.get("properties") or {}).get(seg)
                if node is None:
                    break
                if node.get("type") == "array":
                    node = dict(node, properties=node["items"].get("properties", {}))
            if node is None:
                self.fail(where, f"the {resource} CRD has no field {field}")
                continue
            want = " ".join(node["description"].split())
            result = self.k.run("explain", f"{resource}.{field}", check=False)
            out = " ".join(result.stdout.split())
            if result.returncode != 0:
                self.fail(where, result.stderr.strip())
            elif want not in out or type_text not in out:
                self.fail(where, f"want {type_text} and description {want!r}; got: {out[:400]}")
            else:
                self.passed += 1
                print(f"ok   {where}: {want[:70]}")

    def check_printer_columns(self):
        where = "kubectl get trainjob (printer columns)"
        name = "printer-columns"
        job = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "TrainJob",
               "metadata": {"name": name, "namespace": self.ns},
               "spec": {"runtimeRef": {"name": "torch-distributed"}}}
        self.k.run("apply", "--server-side", f"--field-manager={MANAGER}", "-f", "-",
                   stdin=json.dumps(job))
        conditions = [
            {"type": "Suspended", "status": "False", "reason": "Resumed",
             "message": "TrainJob is resumed", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Complete", "status": "True", "reason": "AllJobsCompleted",
             "message": "jobset completed successfully",
             "lastTransitionTime": "2026-01-01T00:01:00Z"},
        ]
        self.patch_status(("TrainJob", name), {"conditions": conditions})
        # PROGRESS and ETA (empty: nothing reported) are ours; LAST REPORT shows with -o wide.
        out = self.k.run("get", "trainjob", name, "-n", self.ns).stdout.splitlines()
        header, row = out[0].split(), out[1].split()
        wide = self.k.run("get", "trainjob", name, "-n", self.ns, "-o", "wide").stdout.splitlines()
        if (header != ["NAME", "STATE", "PROGRESS", "ETA", "AGE"] or row[:2] != [name, "Complete"]
                or wide[0].split() != ["NAME", "STATE", "PROGRESS", "ETA", "AGE", "LAST",
                                       "REPORT"]):
            self.fail(where, "want columns NAME STATE PROGRESS ETA AGE (wide: LAST REPORT) and "
                      f"State Complete; got {out} / {wide[0]}")
        else:
            self.passed += 1
            print(f"ok   {where}: {' '.join(header)} / {' '.join(row)}")

    # -- examples --

    def apply_examples(self):
        docs = []
        for path in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.yaml"),
                                     recursive=True)):
            for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
                if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith(GROUP + "/"):
                    docs.append((os.path.relpath(path, ROOT), doc))
        if not docs:
            print("note: no trainer.kubeflow.org objects under examples/ yet")
            return
        for path, doc in docs:
            where = f"example {path} {doc['kind']}/{doc['metadata'].get('name')}"
            if doc["kind"] not in CLUSTER_SCOPED and not doc["metadata"].get("namespace"):
                doc = dict(doc, metadata=dict(doc["metadata"], namespace=self.ns))
            # A dry run goes through decoding, defaulting, the schema and CEL like a real write,
            # without clashing with other tests that install the same runtimes.
            result = self.k.run("apply", "--server-side", "--dry-run=server",
                                f"--field-manager={MANAGER}", "-f", "-", stdin=json.dumps(doc),
                                check=False)
            if result.returncode != 0:
                self.fail(where, " ".join(result.stderr.split()))
            else:
                self.passed += 1
                print(f"ok   {where}")


def main():
    k = Kubectl()
    run = Run(k)
    run.check_no_trainer_webhooks()
    run.install_crds()
    run.setup()
    try:
        run.run_case_files()
        run.check_rule_coverage()
        run.check_explain()
        run.check_printer_columns()
        run.apply_examples()
    finally:
        run.cleanup()
    print(f"\n{run.passed} passed, {len(run.failures)} failed")
    for f in run.failures:
        print(f"  FAIL {f}")
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
