"""Expands the API description in api/trainer.kubeflow.org/v1alpha1/ into CustomResourceDefinitions.

The source (format: api/README.md) describes our own types field by field and names the
Kubernetes and JobSet types it embeds. Those are expanded here from two snapshots kept in
hack/gen-crds/data/: the Kubernetes OpenAPI v3 document of core/v1 (as the apiserver serves it)
and the spec schema of JobSet's CRD. The Kubernetes OpenAPI is not written for CRDs, so
KubernetesSchemas rewrites it into the structural form controller-gen produces for the same Go
types (see its docstring); that is what keeps our CRDs equal to upstream Kubeflow Trainer's.

Everything is deterministic: the same inputs give byte-identical YAML.
"""

import copy
import json
import os
import re

import yaml

API_DIR = os.path.join("api", "trainer.kubeflow.org", "v1alpha1")
DATA_DIR = os.path.join("hack", "gen-crds", "data")
K8S_SNAPSHOT = "k8s-v1.36.3-openapi-v3-core-v1.json"
JOBSET_SNAPSHOT = "jobset-v0.12.0-jobsetspec.json"

# The keys a field may carry in the source; anything else is a typo and an error.
FIELD_KEYS = {
    "type", "description", "required", "immutable", "validations", "default", "enum",
    "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
    "itemMaxLength", "listType", "listMapKeys", "mapType", "minProperties",
}
TYPE_KEYS = {"description", "properties", "validations", "minProperties"}
IMMUTABLE_RULE = {"rule": "self == oldSelf", "message": "field is immutable"}

# controller-gen's rendering of resource.Quantity and intstr.IntOrString.
QUANTITY_SCHEMA = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
               r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
    "x-kubernetes-int-or-string": True,
}
INT_OR_STRING_SCHEMA = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
SPECIAL_K8S_TYPES = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY_SCHEMA,
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING_SCHEMA,
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
}
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# controller-gen (crd:generateEmbeddedObjectMeta=true) keeps only these fields of an embedded
# ObjectMeta, without list types.
EMBEDDED_OBJECT_META_FIELDS = ("annotations", "finalizers", "labels", "name", "namespace")

# Where controller-gen's output differs from the OpenAPI in ways the OpenAPI does not show.
# - `+default=ref(Const)` markers: openapi-gen resolves the constant, controller-gen cannot and
#   writes no default.
DROP_DEFAULTS = {
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "cachingMode"),
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "kind"),
}
# - Structs that embed LocalObjectReference inline inherit its `+structType=atomic` in
#   controller-gen; openapi-gen flattens the embedding and drops the marker.
ATOMIC_STRUCTS = {
    "io.k8s.api.core.v1.ConfigMapEnvSource",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.ConfigMapProjection",
    "io.k8s.api.core.v1.ConfigMapVolumeSource",
    "io.k8s.api.core.v1.SecretEnvSource",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.SecretProjection",
}
K8S_PREFIX = "io.k8s."
JOBSET_PREFIX = "jobset:"

ROOT_FIELDS = {
    "apiVersion": {
        "description": "Versioned schema of this object, e.g. trainer.kubeflow.org/v1alpha1.",
        "type": "string",
    },
    "kind": {
        "description": "Kind of this object; servers may infer it from the endpoint.",
        "type": "string",
    },
    "metadata": {"type": "object"},
}


class SourceError(Exception):
    pass


def _load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Source:
    """The API description: kinds.yaml plus every other *.yaml's `types`."""

    def __init__(self, root):
        api = os.path.join(root, API_DIR)
        self.kinds_doc = _load_yaml(os.path.join(api, "kinds.yaml"))
        self.types = {}
        self.type_files = {}
        for name in sorted(os.listdir(api)):
            if not name.endswith(".yaml") or name == "kinds.yaml":
                continue
            doc = _load_yaml(os.path.join(api, name)) or {}
            for tname, t in (doc.get("types") or {}).items():
                if tname in self.types:
                    raise SourceError(f"type {tname} defined in both {self.type_files[tname]} and {name}")
                self.types[tname] = t
                self.type_files[tname] = name
        self._check()

    def _check(self):
        for tname, t in self.types.items():
            where = f"{self.type_files[tname]}: type {tname}"
            unknown = set(t) - TYPE_KEYS
            if unknown:
                raise SourceError(f"{where}: unknown keys {sorted(unknown)}")
            if not t.get("description"):
                raise SourceError(f"{where}: missing description")
            for fname, f in (t.get("properties") or {}).items():
                unknown = set(f) - FIELD_KEYS
                if unknown:
                    raise SourceError(f"{where}.{fname}: unknown keys {sorted(unknown)}")
                if not f.get("description"):
                    raise SourceError(f"{where}.{fname}: missing description")
                if "type" not in f:
                    raise SourceError(f"{where}.{fname}: missing type")
        used = set()
        for k in self.kinds_doc["kinds"].values():
            used.add(k["root"])
        for t in self.types.values():
            for f in (t.get("properties") or {}).values():
                used.add(_element_type(f["type"]))
        unused = sorted(set(self.types) - used)
        if unused:
            raise SourceError(f"types defined but never used: {unused}")


def _element_type(type_str):
    while type_str.startswith("[]"):
        type_str = type_str[2:]
    return type_str


class KubernetesSchemas:
    """Kubernetes types from the apiserver's OpenAPI v3, rewritten as controller-gen writes them.

    The apiserver's document differs from a CRD schema generated from the same Go types in a few
    systematic ways, each undone here:
      - references are `$ref` or `allOf: [{$ref}]`; a CRD must inline them;
      - Quantity is `oneOf: [string, number]`, IntOrString is `format: int-or-string`, Time is a
        named string: controller-gen writes int-or-string unions and `format: date-time`;
      - openapi-gen gives every required field of a struct its zero value as `default` (`""`,
        `0`, `{}`) and every non-pointer struct field `default: {}`; controller-gen only writes
        the defaults the Go types declare with `+default=`. Zero defaults of required fields and
        `{}` defaults are dropped; the declared ones (`protocol: TCP`, LocalObjectReference's
        `name: ""`, `rbd.pool: rbd`, ...) stay;
      - the served document lists the values of `+enum` types as `enum`; controller-gen does not
        read that marker, so its CRDs accept any string there (the apiserver's Pod validation
        checks them later, when the controller creates the pods). `enum` is dropped;
      - strategic-merge-patch and union annotations (`x-kubernetes-patch-*`,
        `x-kubernetes-unions`) have no place in a CRD schema;
      - `required` is sorted (controller-gen sorts it).
    """

    def __init__(self, snapshot):
        self.defs = snapshot["components"]["schemas"]
        self.used = set()

    def schema(self, name):
        if name in SPECIAL_K8S_TYPES:
            self.used.add(name)
            out = copy.deepcopy(SPECIAL_K8S_TYPES[name])
            desc = self.defs.get(name, {}).get("description")
            if desc and name.endswith((".Time", ".MicroTime")):
                out["description"] = desc
            return out
        return self._named(name, depth=0)

    def _named(self, name, depth):
        node = self._def(name)
        if name == OBJECT_META:
            return self._embedded_object_meta(node, depth)
        out = self._convert(node, depth, type_name=name)
        if name in ATOMIC_STRUCTS:
            out["x-kubernetes-map-type"] = "atomic"
        return out

    def _embedded_object_meta(self, node, depth):
        props = {}
        for pname in EMBEDDED_OBJECT_META_FIELDS:
            p = self._convert(node["properties"][pname], depth + 1)
            p.pop("x-kubernetes-list-type", None)
            props[pname] = p
        return {"description": node.get("description", ""), "properties": props, "type": "object"}

    def _ref_name(self, node):
        ref = node.get("$ref")
        if ref is None and len(node.get("allOf", [])) == 1:
            ref = node["allOf"][0].get("$ref")
        if ref is None:
            return None
        return ref.rsplit("/", 1)[-1]

    def _convert(self, node, depth, type_name=None):
        if depth > 40:
            raise SourceError("Kubernetes type nesting too deep (a recursive type?)")
        ref = self._ref_name(node)
        if ref is not None:
            out = self.schema(ref) if ref in SPECIAL_K8S_TYPES else self._named(ref, depth + 1)
            if "description" in node:
                out["description"] = node["description"]
            # A default next to a reference is openapi-gen's zero value ({}), never a marker.
            return out
        out = {}
        for key, value in node.items():
            if key in ("x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key",
                       "x-kubernetes-unions", "x-kubernetes-group-version-kind", "default",
                       "enum"):
                continue
            if key == "properties":
                required = set(node.get("required", []))
                props = {}
                for pname, pnode in value.items():
                    p = self._convert(pnode, depth + 1)
                    if "default" in pnode and self._ref_name(pnode) is None:
                        if not (pname in required or pnode["default"] == {}
                                or (type_name, pname) in DROP_DEFAULTS):
                            p["default"] = pnode["default"]
                    props[pname] = p
                out["properties"] = props
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                out[key] = self._convert(value, depth + 1)
            elif key == "required":
                out["required"] = sorted(value)
            else:
                out[key] = copy.deepcopy(value)
        return out

    def _def(self, name):
        if name not in self.defs:
            raise SourceError(f"unknown Kubernetes type {name} (not in the OpenAPI snapshot)")
        self.used.add(name)
        return self.defs[name]


class Generator:
    def __init__(self, root):
        self.root = root
        self.src = Source(root)
        self.k8s = KubernetesSchemas(_load_json(os.path.join(root, DATA_DIR, K8S_SNAPSHOT)))
        self.jobset = _load_json(os.path.join(root, DATA_DIR, JOBSET_SNAPSHOT))

    # ---- schema expansion ----

    def type_schema(self, type_str, where):
        if type_str.startswith("[]"):
            return {"type": "array", "items": self.type_schema(type_str[2:], where)}
        if type_str == "map[string]string":
            return {"type": "object", "additionalProperties": {"type": "string"}}
        scalar = {
            "string": {"type": "string"},
            "boolean": {"type": "boolean"},
            "int": {"type": "integer"},
            "int32": {"type": "integer", "format": "int32"},
            "int64": {"type": "integer", "format": "int64"},
            "date-time": {"type": "string", "format": "date-time"},
            "object": {"type": "object"},
        }
        if type_str in scalar:
            return dict(scalar[type_str])
        if type_str.startswith(K8S_PREFIX):
            return self.k8s.schema(type_str)
        if type_str.startswith(JOBSET_PREFIX):
            name = type_str[len(JOBSET_PREFIX):]
            if name not in self.jobset["types"]:
                raise SourceError(f"{where}: unknown JobSet type {name}")
            return copy.deepcopy(self.jobset["types"][name])
        if type_str in self.src.types:
            return self.local_type(type_str)
        raise SourceError(f"{where}: unknown type {type_str}")

    def local_type(self, name):
        t = self.src.types[name]
        out = {"description": _text(t["description"]), "type": "object"}
        props = t.get("properties") or {}
        if props:
            out["properties"] = {f: self.field(name, f, spec) for f, spec in props.items()}
            required = sorted(f for f, spec in props.items() if spec.get("required"))
            if required:
                out["required"] = required
        if "minProperties" in t:
            out["minProperties"] = t["minProperties"]
        if t.get("validations"):
            out["x-kubernetes-validations"] = [_rule(r) for r in t["validations"]]
        return out

    def field(self, type_name, field_name, f):
        where = f"{self.src.type_files[type_name]}: {type_name}.{field_name}"
        s = self.type_schema(f["type"], where)
        s["description"] = _text(f["description"])
        for key in ("default", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern",
                    "minItems", "maxItems", "minProperties"):
            if key in f:
                s[key] = copy.deepcopy(f[key])
        if "itemMaxLength" in f:
            if s.get("type") != "array":
                raise SourceError(f"{where}: itemMaxLength on a non-list")
            s["items"]["maxLength"] = f["itemMaxLength"]
        if "listMapKeys" in f:
            if f.get("listType", "map") != "map":
                raise SourceError(f"{where}: listMapKeys needs listType map")
            s["x-kubernetes-list-type"] = "map"
            s["x-kubernetes-list-map-keys"] = list(f["listMapKeys"])
            item_required = set(s["items"].get("required", []))
            item_props = s["items"].get("properties", {})
            for k in f["listMapKeys"]:
                if k not in item_required and "default" not in item_props.get(k, {}):
                    raise SourceError(f"{where}: list map key {k} must be required or defaulted")
        elif "listType" in f:
            s["x-kubernetes-list-type"] = f["listType"]
        if "mapType" in f:
            s["x-kubernetes-map-type"] = f["mapType"]
        rules = [_rule(r) for r in f.get("validations") or []]
        if f.get("immutable"):
            rules.append(dict(IMMUTABLE_RULE))
        if rules:
            s["x-kubernetes-validations"] = s.get("x-kubernetes-validations", []) + rules
        return s

    # ---- CRDs ----

    def crds(self):
        """{file name: CRD object} for every kind."""
        doc = self.src.kinds_doc
        group, version = doc["group"], doc["version"]
        out = {}
        for kind, k in doc["kinds"].items():
            root = self.local_type(k["root"])
            root["properties"] = {**copy.deepcopy(ROOT_FIELDS), **root.get("properties", {})}
            v = {
                "name": version,
                "schema": {"openAPIV3Schema": root},
                "served": True,
                "storage": True,
            }
            if k.get("printerColumns"):
                v["additionalPrinterColumns"] = [
                    {"jsonPath": c["jsonPath"], "name": c["name"], "type": c["type"],
                     **{o: c[o] for o in ("description", "priority") if o in c}}
                    for c in k["printerColumns"]
                ]
            if "status" in (k.get("subresources") or []):
                v["subresources"] = {"status": {}}
            names = {"kind": kind, "listKind": kind + "List", "plural": k["plural"],
                     "singular": k["singular"]}
            for opt in ("shortNames", "categories"):
                if k.get(opt):
                    names[opt] = list(k[opt])
            crd = {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{k['plural']}.{group}"},
                "spec": {"group": group, "names": names, "scope": k["scope"], "versions": [v]},
            }
            out[f"{group}_{k['plural']}.yaml"] = crd
        return out

    # ---- flat field list ----

    def fields(self):
        """Lines "<Kind> <path> <type>" for every field of our own types (not inside Kubernetes
        or JobSet types, which stay opaque JSON in the C++ API)."""
        lines = []
        for kind, k in self.src.kinds_doc["kinds"].items():
            lines.append(f"{kind} apiVersion string")
            lines.append(f"{kind} kind string")
            lines.append(f"{kind} metadata object")
            self._walk_fields(kind, k["root"], "", lines, depth=0)
        return lines

    def _walk_fields(self, kind, tname, prefix, lines, depth):
        if depth > 30:
            raise SourceError(f"type {tname} is recursive")
        for fname, f in (self.src.types[tname].get("properties") or {}).items():
            path = prefix + fname
            lines.append(f"{kind} {path} {f['type']}")
            elem = _element_type(f["type"])
            if elem in self.src.types:
                suffix = "[]" * ((len(f["type"]) - len(elem)) // 2)
                self._walk_fields(kind, elem, path + suffix + ".", lines, depth + 1)


# Where JobSet's CRD (controller-gen output) renders each Kubernetes type we reference, for
# verify_k8s(): a path of property names under JobSetSpec, "[]" stepping into list items.
_POD = "replicatedJobs [] template spec template spec".split()
_CONTAINER = _POD + "containers []".split()
JOBSET_RENDERINGS = {
    "io.k8s.api.core.v1.Affinity": _POD + ["affinity"],
    "io.k8s.api.core.v1.EnvVar": _CONTAINER + ["env", "[]"],
    "io.k8s.api.core.v1.LocalObjectReference": _POD + ["imagePullSecrets", "[]"],
    "io.k8s.api.core.v1.PodSchedulingGate": _POD + ["schedulingGates", "[]"],
    "io.k8s.api.core.v1.PodSecurityContext": _POD + ["securityContext"],
    "io.k8s.api.core.v1.ResourceRequirements": _CONTAINER + ["resources"],
    "io.k8s.api.core.v1.SecurityContext": _CONTAINER + ["securityContext"],
    "io.k8s.api.core.v1.Toleration": _POD + ["tolerations", "[]"],
    "io.k8s.api.core.v1.Volume": _POD + ["volumes", "[]"],
    "io.k8s.api.core.v1.VolumeMount": _CONTAINER + ["volumeMounts", "[]"],
}


def _strip_descriptions(node):
    if isinstance(node, dict):
        return {k: _strip_descriptions(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip_descriptions(x) for x in node]
    return node


def _schema_diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'JobSet' if k not in a else 'ours'}")
            else:
                _schema_diff(a[k], b[k], f"{path}.{k}", out)
    elif a != b:
        out.append(f"{path}: ours {json.dumps(a)[:120]}, JobSet {json.dumps(b)[:120]}")


def verify_k8s(root):
    """Checks that every Kubernetes type the source references expands exactly (descriptions
    aside) as controller-gen rendered it in JobSet's CRD. Returns a list of problems."""
    gen = Generator(root)
    referenced = set()
    for t in gen.src.types.values():
        for f in (t.get("properties") or {}).values():
            elem = _element_type(f["type"])
            if elem.startswith(K8S_PREFIX):
                referenced.add(elem)
    problems = []
    for name in sorted(referenced):
        if name not in JOBSET_RENDERINGS:
            problems.append(f"{name}: no rendering in JobSet's CRD to verify it against "
                            "(add its path to JOBSET_RENDERINGS)")
            continue
        node = gen.jobset["types"]["JobSetSpec"]
        for step in JOBSET_RENDERINGS[name]:
            node = node["items"] if step == "[]" else node["properties"][step]
        out = []
        _schema_diff(_strip_descriptions(gen.k8s.schema(name)), _strip_descriptions(node), name,
                     out)
        problems.extend(out)
    return problems


def _text(s):
    return s.strip()


def _rule(r):
    unknown = set(r) - {"rule", "message"}
    if unknown or "rule" not in r or "message" not in r:
        raise SourceError(f"a validation needs exactly rule and message: {r}")
    return {"message": r["message"], "rule": r["rule"]}


# ---- YAML output ----

class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper, data):
    # Multi-line strings as literal blocks, like controller-gen; PyYAML falls back to quoting
    # when a block cannot represent the string exactly (e.g. trailing spaces).
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)
_Dumper.ignore_aliases = lambda self, data: True

HEADER = ("# Generated by hack/gen-crds from api/trainer.kubeflow.org/v1alpha1/. DO NOT EDIT.\n"
          "# Regenerate with: hack/gen-crds/gen-crds\n")


def to_yaml(obj):
    body = yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True, width=100,
                     allow_unicode=True)
    return HEADER + "---\n" + body


def render(root):
    """{file name: YAML text} of every CRD."""
    gen = Generator(root)
    return {name: to_yaml(crd) for name, crd in gen.crds().items()}


def list_fields(root):
    return Generator(root).fields()
