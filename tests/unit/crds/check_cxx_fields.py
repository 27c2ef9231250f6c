#!/usr/bin/env python3
"""Checks that the C++ decoder (runtime/api) and the CRD schema know the same fields.

The schema's fields come from `hack/gen-crds/gen-crds --list-fields` ("<Kind> <path> <type>" for
every field of our own types; Kubernetes and JobSet types are leaves). The decoder's come from
TOOL, a binary that prints one line per field it reads, "<Kind> <path>", with the same path
syntax ("spec.runtimePatches[].manager"), and "<Kind> <path>/*" for a field it keeps whole as
JSON without looking inside (e.g. "TrainJob spec.runtimePatches[].trainingRuntimeSpec/*").
Anything after the path on a line is ignored.

Fails if the decoder names a field the schema lacks, or a schema field is neither decoded nor
inside a field kept whole. Fields inside a Kubernetes or JobSet type (a schema leaf typed
io.k8s..., []io.k8s..., jobset:..., or `metadata`'s "object") are not modelled by our schema, so
a decoder reading inside one (metadata.name, env[].name) is counted apart, not compared.
EXCEPTIONS lists the schema fields the decoder ignores on purpose, each with its reason; an
exception that no longer applies fails the check too, so the list cannot go stale.

  check_cxx_fields.py TOOL
  check_cxx_fields.py --missing-tool     (exit 77: CTest reports the test as skipped)
"""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

# Schema fields deliberately not decoded: (kind, path) -> why.
EXCEPTIONS = {
    ("TrainJob", f"spec.podTemplateOverrides[].metadata.{f}"):
        "v2.1 applied only labels and annotations of an override's metadata; "
        "runtime/api/podtemplateoverrides.cc warns that the rest is ignored"
    for f in ("name", "namespace", "finalizers")
}


def is_foreign(schema_type):
    """A Kubernetes or JobSet type, which gen-crds lists as a leaf."""
    t = schema_type.lstrip("[]")
    return t == "object" or t.startswith("io.k8s.") or t.startswith("jobset:")


def parse(lines):
    fields, opaque, types = set(), set(), {}
    for line in lines:
        parts = line.split()
        if len(parts) < 2 or line.startswith("#"):
            continue
        kind, path = parts[0], parts[1]
        if path.endswith("/*"):
            path = path[:-2]
            opaque.add((kind, path))
        fields.add((kind, path))
        if len(parts) > 2:
            types[(kind, path)] = parts[2]
    return fields, opaque, types


def beneath(path, prefix):
    return path.startswith(prefix + ".") or path.startswith(prefix + "[]")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--missing-tool":
        print("skipped: runtime/api has no runtime_api_field_paths binary yet (see "
              "tests/unit/crds/check_cxx_fields.py for the format it must print)")
        return 77
    schema_out = subprocess.run([sys.executable, os.path.join(ROOT, "hack", "gen-crds", "gen-crds"),
                                 "--list-fields"], check=True, capture_output=True, text=True)
    schema, _, types = parse(schema_out.stdout.splitlines())
    cxx_out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True)
    cxx, opaque, _ = parse(cxx_out.stdout.splitlines())

    foreign = [f for f in schema if is_foreign(types.get(f, ""))]
    def inside_foreign(kind, path):
        return any(k == kind and beneath(path, p) for k, p in foreign)
    inside = {f for f in cxx - schema if inside_foreign(*f)}
    unknown = sorted(cxx - schema - inside)
    def covered(kind, path):
        if (kind, path) in cxx:
            return True
        return any(k == kind and beneath(path, o) for k, o in opaque)
    not_decoded = {f for f in schema if not covered(*f)}
    missing = sorted(not_decoded - EXCEPTIONS.keys())
    stale = sorted(EXCEPTIONS.keys() - not_decoded)
    for kind, path in unknown:
        print(f"the decoder reads {kind} {path}, which the schema does not have")
    for kind, path in missing:
        print(f"the schema has {kind} {path}, which the decoder neither reads nor keeps whole")
    for kind, path in stale:
        print(f"EXCEPTIONS lists {kind} {path}, which is no longer an exception: remove it")
    for (kind, path), why in sorted(EXCEPTIONS.items()):
        print(f"exception: {kind} {path} is not decoded: {why}")
    print(f"{len(schema)} schema fields, {len(cxx)} decoder fields ({len(opaque)} kept whole, "
          f"{len(inside)} inside Kubernetes/JobSet types): {len(unknown)} unknown to the schema, "
          f"{len(missing)} not decoded, {len(EXCEPTIONS)} exceptions, {len(stale)} stale")
    return 1 if unknown or missing or stale else 0


if __name__ == "__main__":
    sys.exit(main())
