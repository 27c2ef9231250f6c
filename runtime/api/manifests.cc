// Multi-document YAML -> TrainJobs, runtimes and other objects. See manifests.h.
#include "runtime/api/manifests.h"

#include <string>
#include <utility>

#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"

namespace trainer::api {
namespace {

std::string StringField(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v != nullptr && v->IsString() ? v->AsString() : "";
}

// "TrainJob ns/name" for messages.
std::string Describe(const json::Value& doc) {
  const json::Value* meta = doc.Find("metadata");
  std::string name;
  if (meta != nullptr && meta->IsObject()) {
    const std::string ns = StringField(*meta, "namespace");
    name = ns.empty() ? StringField(*meta, "name") : ns + "/" + StringField(*meta, "name");
  }
  return StringField(doc, "kind") + (name.empty() ? "" : " " + name);
}

bool IsList(const json::Value& doc) {
  const std::string kind = StringField(doc, "kind");
  return kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0 && doc.Has("items");
}

Status DecodeOne(const json::Value& doc, const std::string& where, Manifests* out) {
  if (!doc.IsObject()) {
    return InvalidArgumentError(where + ": expected an object, got " +
                                std::string(json::DescribeType(doc)));
  }
  if (IsList(doc)) {
    const json::Value* items = doc.Find("items");
    if (!items->IsArray()) {
      return InvalidArgumentError(where + ": items: expected array, got " +
                                  std::string(json::DescribeType(*items)));
    }
    for (size_t i = 0; i < items->size(); ++i) {
      RETURN_IF_ERROR(DecodeOne(items->at(i), where + ", item " + std::to_string(i), out));
    }
    return OkStatus();
  }
  const std::string api_version = StringField(doc, "apiVersion");
  const std::string kind = StringField(doc, "kind");
  const std::string context = where + " (" + Describe(doc) + ")";
  if (api_version == kAPIVersion && kind == kTrainJobKind) {
    StatusOr<TrainJob> job = DecodeTrainJob(doc);
    if (!job.ok()) return job.status().WithContext(context);
    out->train_jobs.push_back(std::move(job).value());
  } else if (api_version == kAPIVersion &&
             (kind == kTrainingRuntimeKind || kind == kClusterTrainingRuntimeKind)) {
    StatusOr<TrainingRuntime> rt = DecodeTrainingRuntime(doc);
    if (!rt.ok()) return rt.status().WithContext(context);
    out->runtimes.push_back(std::move(rt).value());
  } else {
    out->others.push_back(doc.Clone());
  }
  return OkStatus();
}

}  // namespace

Status DecodeManifestsInto(std::string_view yaml_text, Manifests* out) {
  ASSIGN_OR_RETURN(std::vector<json::Value> docs, yaml::ParseYamlDocuments(yaml_text));
  for (size_t i = 0; i < docs.size(); ++i) {
    RETURN_IF_ERROR(DecodeOne(docs[i], "document " + std::to_string(i + 1), out));
  }
  return OkStatus();
}

StatusOr<Manifests> DecodeManifests(std::string_view yaml_text) {
  Manifests out;
  RETURN_IF_ERROR(DecodeManifestsInto(yaml_text, &out));
  return out;
}

}  // namespace trainer::api
