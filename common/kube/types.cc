// GroupVersionKind/Resource helpers, enum names, and ListAll (the pager).
#include "common/kube/types.h"

#include "common/kube/client.h"

namespace trainer::kube {

std::string GroupVersionKind::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

GroupVersionKind GroupVersionKind::FromApiVersion(std::string_view api_version,
                                                  std::string_view kind) {
  GroupVersionKind gvk;
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    gvk.version = std::string(api_version);
  } else {
    gvk.group = std::string(api_version.substr(0, slash));
    gvk.version = std::string(api_version.substr(slash + 1));
  }
  gvk.kind = std::string(kind);
  return gvk;
}

GroupVersionKind GroupVersionKind::Of(const json::Value& obj) {
  const json::Value* av = obj.Find("apiVersion");
  const json::Value* kind = obj.Find("kind");
  return FromApiVersion(av != nullptr && av->IsString() ? av->AsString() : std::string(),
                        kind != nullptr && kind->IsString() ? kind->AsString() : std::string());
}

std::string GroupVersionKind::ToString() const {
  return group.empty() ? kind + "." + version : kind + "." + version + "." + group;
}

std::string GroupVersionResource::ToString() const {
  return group.empty() ? resource + "." + version : resource + "." + version + "." + group;
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

std::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "ERROR";
}

namespace {

StatusOr<json::Value> ListPages(Reader& reader, const GroupVersionResource& gvr,
                                std::string_view ns, ListOptions options) {
  json::Value all;
  json::Value items = json::Value::Array();
  while (true) {
    ASSIGN_OR_RETURN(json::Value page, reader.List(gvr, ns, options));
    if (json::Value* page_items = page.Find("items");
        page_items != nullptr && page_items->IsArray()) {
      for (json::Value& item : page_items->elements()) items.PushBack(std::move(item));
    }
    std::string next;
    if (const json::Value* meta = page.Find("metadata"); meta != nullptr) {
      if (const json::Value* c = meta->Find("continue"); c != nullptr && c->IsString()) {
        next = c->AsString();
      }
    }
    if (all.IsNull()) {
      all = std::move(page);
    }
    if (next.empty()) break;
    options.continue_token = next;
    // A continue token already pins the snapshot; the apiserver rejects both together.
    options.resource_version.clear();
    options.resource_version_match.clear();
  }
  all.Set("items", std::move(items));
  if (json::Value* meta = all.Find("metadata"); meta != nullptr) meta->Erase("continue");
  return all;
}

}  // namespace

StatusOr<json::Value> Reader::ListEach(const GroupVersionResource& gvr, std::string_view ns,
                                       const ListOptions& options,
                                       const std::function<Status(json::Value& item)>& on_item) {
  ASSIGN_OR_RETURN(json::Value list, List(gvr, ns, options));
  if (json::Value* items = list.Find("items"); items != nullptr && items->IsArray()) {
    for (json::Value& item : items->elements()) RETURN_IF_ERROR(on_item(item));
  }
  list.Set("items", json::Value::Array());
  return list;
}

StatusOr<json::Value> ListAll(Reader& reader, const GroupVersionResource& gvr, std::string_view ns,
                              ListOptions options) {
  if (options.limit <= 0) options.limit = 500;
  const ListOptions first = options;
  StatusOr<json::Value> result = ListPages(reader, gvr, ns, options);
  if (!result.ok() && IsGone(result.status())) {
    ListOptions full = first;
    full.limit = 0;
    full.continue_token.clear();
    return reader.List(gvr, ns, full);
  }
  return result;
}

}  // namespace trainer::kube
