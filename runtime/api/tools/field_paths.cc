// runtime_api_field_paths: prints the fields the runtime/api decoders read, one line each,
// "<Kind> <path>" ("TrainJob spec.runtimePatches[].manager"), and "<Kind> <path>/*" for a field
// a decoder keeps whole as JSON (ReadJson). tests/unit/crds/check_cxx_fields.py compares them
// with the CRD schema.
//
// Nothing here names a field. For each Kind, the tool builds from the CRD in deploy/crds the
// fullest document the schema allows (every property present, one item per list, one entry per
// map, a value of the declared type and format), decodes it with the real decoders under a
// decode_util::FieldPathRecorder, and prints what they looked up. The recorder notes a lookup
// whether or not the document has the field, so a decoder reading a field the schema lacks is
// printed too; the full document only makes every decoder branch run.
//
//   runtime_api_field_paths [REPO_ROOT]     (default: the working directory, else the source tree)
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "common/files/files.h"
#include "common/json/json.h"
#include "common/status/status.h"
#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/decode_util.h"
#include "runtime/api/podtemplateoverrides.h"
#include "runtime/api/types.h"

namespace trainer::api {
namespace {

struct Crd {
  std::string_view kind;
  std::string_view file;
};

constexpr Crd kCrds[] = {
    {kTrainJobKind, "deploy/crds/trainer.kubeflow.org_trainjobs.yaml"},
    {kTrainingRuntimeKind, "deploy/crds/trainer.kubeflow.org_trainingruntimes.yaml"},
    {kClusterTrainingRuntimeKind, "deploy/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"},
};

// The openAPIV3Schema of the CRD's served v1alpha1 version.
StatusOr<json::Value> LoadSchema(const std::filesystem::path& root, const Crd& crd) {
  ASSIGN_OR_RETURN(std::string text, files::ReadFile((root / crd.file).string()));
  ASSIGN_OR_RETURN(json::Value doc, yaml::ParseYaml(text));
  const json::Value* versions =
      doc.IsObject() && doc.Find("spec") != nullptr ? doc["spec"].Find("versions") : nullptr;
  if (versions == nullptr || !versions->IsArray()) {
    return InvalidArgumentError(std::string(crd.file) + ": no spec.versions");
  }
  for (const json::Value& v : versions->elements()) {
    const json::Value* name = v.Find("name");
    const json::Value* schema = v.Find("schema");
    if (name == nullptr || !name->IsString() || name->AsString() != "v1alpha1" ||
        schema == nullptr || schema->Find("openAPIV3Schema") == nullptr) {
      continue;
    }
    return schema->Find("openAPIV3Schema")->Clone();
  }
  return InvalidArgumentError(std::string(crd.file) + ": no v1alpha1 openAPIV3Schema");
}

std::string StringOr(const json::Value& schema, std::string_view key) {
  const json::Value* v = schema.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : "";
}

// A value of everything `schema` allows: all properties, one list item, one map entry.
json::Value Fullest(const json::Value& schema) {
  if (const json::Value* ios = schema.Find("x-kubernetes-int-or-string");
      ios != nullptr && ios->IsBool() && ios->AsBool()) {
    return json::Value(int64_t{1});
  }
  std::string type = StringOr(schema, "type");
  if (type.empty()) {
    const json::Value* any_of = schema.Find("anyOf");
    if (any_of != nullptr && any_of->IsArray() && !any_of->empty()) return Fullest(any_of->at(0));
    return json::Value::Object();  // x-kubernetes-preserve-unknown-fields and the like
  }
  if (type == "object") {
    json::Value out = json::Value::Object();
    if (const json::Value* props = schema.Find("properties");
        props != nullptr && props->IsObject()) {
      for (const auto& [name, sub] : props->members()) out.Set(name, Fullest(sub));
    }
    if (const json::Value* extra = schema.Find("additionalProperties");
        extra != nullptr && extra->IsObject()) {
      out.Set("key", Fullest(*extra));
    }
    return out;
  }
  if (type == "array") {
    json::Value out = json::Value::Array();
    if (const json::Value* items = schema.Find("items"); items != nullptr && items->IsObject()) {
      out.PushBack(Fullest(*items));
    }
    return out;
  }
  if (type == "integer" || type == "number") return json::Value(int64_t{1});
  if (type == "boolean") return json::Value(true);
  if (const json::Value* e = schema.Find("enum"); e != nullptr && e->IsArray() && !e->empty()) {
    return e->at(0).Clone();
  }
  if (StringOr(schema, "format") == "date-time") return json::Value("2025-01-01T00:00:00Z");
  return json::Value("x");
}

// "a[0].b[12]" -> "a[].b[]".
std::string WithoutIndices(std::string_view path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] == '[') {
      while (i + 1 < path.size() && path[i + 1] != ']') ++i;
    }
  }
  return out;
}

// Runs every decoder of `kind` on `doc`; errors mean the document did not reach every branch.
Status DecodeAll(std::string_view kind, const json::Value& doc) {
  if (kind == kTrainJobKind) {
    RETURN_IF_ERROR(DecodeTrainJob(doc).status());
    // The deprecated spec.podTemplateOverrides is read by its translation (webhook defaulting).
    return TranslatePodTemplateOverrides(*doc.Find("spec")).status();
  }
  return DecodeTrainingRuntimeAs(doc, kind).status();
}

Status Run(const std::filesystem::path& root) {
  for (const Crd& crd : kCrds) {
    ASSIGN_OR_RETURN(json::Value schema, LoadSchema(root, crd));
    json::Value doc = Fullest(schema);
    doc.Set("apiVersion", json::Value(kAPIVersion));
    doc.Set("kind", json::Value(std::string(crd.kind)));
    decode_util::FieldPathRecorder recorder;
    Status decoded = DecodeAll(crd.kind, doc);
    if (!decoded.ok()) {
      return decoded.WithContext("decoding the fullest " + std::string(crd.kind) + " of " +
                                 std::string(crd.file));
    }
    std::set<std::string> lines;
    for (const std::string& p : recorder.reads()) lines.insert(WithoutIndices(p));
    for (const std::string& p : recorder.kept_whole()) lines.insert(WithoutIndices(p) + "/*");
    for (const std::string& line : lines) {
      std::printf("%.*s %s\n", static_cast<int>(crd.kind.size()), crd.kind.data(), line.c_str());
    }
  }
  return OkStatus();
}

}  // namespace
}  // namespace trainer::api

int main(int argc, char** argv) {
  std::filesystem::path root = argc > 1 ? argv[1] : ".";
  if (argc <= 1 && !std::filesystem::exists(root / "deploy/crds")) root = TRAINER_SOURCE_DIR;
  trainer::Status s = trainer::api::Run(root);
  if (!s.ok()) {
    std::fprintf(stderr, "runtime_api_field_paths: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
