// NotFoundMessage, Reader::GetTrainingRuntime and the in-memory Reader.
#include "runtime/framework/reader.h"


#include "common/strings/ascii.h"
#include "runtime/api/codec.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/map_reader.h"

namespace trainer::framework {

std::string NotFoundMessage(const GroupVersionKind& gvk, std::string_view name) {
  std::string plural = strings::AsciiLower(gvk.kind);
  // The apiserver's default plural: "priorityclass" -> "priorityclasses", "policy" ->
  // "policies".
  if (plural.ends_with("s") || plural.ends_with("x") || plural.ends_with("ch")) {
    plural += "es";
  } else if (plural.size() > 1 && plural.back() == 'y' &&
             std::string_view("aeiou").find(plural[plural.size() - 2]) == std::string_view::npos) {
    plural.back() = 'i';
    plural += "es";
  } else {
    plural += "s";
  }
  std::string resource = gvk.group.empty() ? plural : plural + "." + gvk.group;
  return resource + " \"" + std::string(name) + "\" not found";
}

StatusOr<std::shared_ptr<const api::TrainingRuntime>> Reader::GetTrainingRuntime(
    const GroupVersionKind& gvk, std::string_view ns, std::string_view name) const {
  ASSIGN_OR_RETURN(json::Value doc, Get(gvk, ns, name));
  ASSIGN_OR_RETURN(api::TrainingRuntime runtime, api::DecodeTrainingRuntime(doc));
  return std::make_shared<const api::TrainingRuntime>(std::move(runtime));
}

namespace {
std::string StringAt(const json::Value& obj, std::string_view a, std::string_view b = "") {
  const json::Value* v = obj.Find(a);
  if (v != nullptr && !b.empty()) {
    v = v->Find(b);
  }
  return v != nullptr && v->IsString() ? v->AsString() : "";
}
}  // namespace

Status MapReader::Add(json::Value object) {
  std::string api_version = StringAt(object, "apiVersion");
  std::string kind = StringAt(object, "kind");
  std::string name = StringAt(object, "metadata", "name");
  if (api_version.empty() || kind.empty() || name.empty()) {
    return InvalidArgumentError("map reader: object needs apiVersion, kind and metadata.name");
  }
  Key key{api_version, kind, StringAt(object, "metadata", "namespace"), name};
  objects_[key] = std::move(object);
  return OkStatus();
}

void MapReader::SetError(const GroupVersionKind& gvk, std::string_view ns, std::string_view name,
                         Status error) {
  errors_[Key{gvk.ApiVersion(), gvk.kind, std::string(ns), std::string(name)}] = std::move(error);
}

StatusOr<json::Value> MapReader::Get(const GroupVersionKind& gvk, std::string_view ns,
                                     std::string_view name) const {
  Key key{gvk.ApiVersion(), gvk.kind, std::string(ns), std::string(name)};
  if (auto it = errors_.find(key); it != errors_.end()) {
    return it->second;
  }
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    return NotFoundError(NotFoundMessage(gvk, name));
  }
  return it->second.Clone();
}

}  // namespace trainer::framework
