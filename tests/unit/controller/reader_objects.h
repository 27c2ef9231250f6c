// What the reader tests (overlay_reader_test, syncing_reader_test) read: a JobSet named in
// namespace "ns" with a resourceVersion, and the resourceVersion a read returned.
#pragma once

#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::controller::testing {

inline json::Value JobSet(std::string_view name, std::string_view rv) {
  json::Value js = json::Value::Object();
  js.Set("apiVersion", "jobset.x-k8s.io/v1alpha2");
  js.Set("kind", "JobSet");
  js["metadata"].Set("name", std::string(name));
  js["metadata"].Set("namespace", "ns");
  js["metadata"].Set("resourceVersion", std::string(rv));
  return js;
}

// "<none>" when the read failed.
inline std::string Rv(const StatusOr<json::Value>& obj) {
  return obj.ok() ? std::string(obj->Find("metadata")->Find("resourceVersion")->AsString())
                  : "<none>";
}

}  // namespace trainer::controller::testing
