#!/usr/bin/env python3
"""Checks that the C++ decoder (runtime/api) and the CRD schema know the same fields.

The schema's fields come from `hack/gen-crds/gen-crds --list-fields` ("<Kind> <path> <type>" for
every field of our own types; Kubernetes and JobSet types are leaves). The decoder's come from
TOOL, a binary that prints one line per field it reads, "<Kind> <path>", with the same path
syntax ("spec.runtimePatches[].manager"), and "<Kind> <path>/*" for a field it keeps whole as
JSON without looking inside (e.g. "TrainJob spec.runtimePatches[].trainingRuntimeSpec/*").
Anything after the path on a line is ignored.

Fails if the decoder names a field the schema lacks, or a schema field is neither decoded nor
inside a field kept whole.

  check_cxx_fields.py TOOL
  check_cxx_fields.py --missing-tool     (exit 77: CTest reports the test as skipped)
"""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def parse(lines):
    fields, opaque = set(), set()
    for line in lines:
        parts = line.split()
        if len(parts) < 2 or line.startswith("#"):
            continue
        kind, path = parts[0], parts[1]
        if path.endswith("/*"):
            path = path[:-2]
            opaque.add((kind, path))
        fields.add((kind, path))
    return fields, opaque


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--missing-tool":
        print("skipped: runtime/api has no runtime_api_field_paths binary yet (see "
              "tests/unit/crds/check_cxx_fields.py for the format it must print)")
        return 77
    schema_out = subprocess.run([sys.executable, os.path.join(ROOT, "hack", "gen-crds", "gen-crds"),
                                 "--list-fields"], check=True, capture_output=True, text=True)
    schema, _ = parse(schema_out.stdout.splitlines())
    cxx_out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True)
    cxx, opaque = parse(cxx_out.stdout.splitlines())

    unknown = sorted(cxx - schema)
    def covered(kind, path):
        if (kind, path) in cxx:
            return True
        return any(k == kind and (path.startswith(o + ".") or path.startswith(o + "[]"))
                   for k, o in opaque)
    missing = sorted(f for f in schema if not covered(*f))
    for kind, path in unknown:
        print(f"the decoder reads {kind} {path}, which the schema does not have")
    for kind, path in missing:
        print(f"the schema has {kind} {path}, which the decoder neither reads nor keeps whole")
    print(f"{len(schema)} schema fields, {len(cxx)} decoder fields ({len(opaque)} kept whole): "
          f"{len(unknown)} unknown to the schema, {len(missing)} not decoded")
    return 1 if unknown or missing else 0


if __name__ == "__main__":
    sys.exit(main())
