// Small readers of object metadata shared by the client, the informer and the controllers:
// namespace/name keys ("ns/name", or "name" for cluster-scoped objects, like client-go's
// MetaNamespaceKeyFunc), resourceVersion, and stripping managedFields to save cache memory.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/json/json.h"

namespace trainer::kube {

// metadata.<field> as a string; "" when absent.
std::string_view MetaString(const json::Value& obj, std::string_view field);
inline std::string_view Namespace(const json::Value& obj) { return MetaString(obj, "namespace"); }
inline std::string_view Name(const json::Value& obj) { return MetaString(obj, "name"); }
inline std::string_view ResourceVersion(const json::Value& obj) {
  return MetaString(obj, "resourceVersion");
}
inline std::string_view Uid(const json::Value& obj) { return MetaString(obj, "uid"); }

// "ns/name", or "name" when ns is empty.
std::string ObjectKey(std::string_view ns, std::string_view name);
std::string ObjectKeyOf(const json::Value& obj);
// Inverse of ObjectKey: {"ns", "name"} or {"", "name"}.
std::pair<std::string, std::string> SplitObjectKey(std::string_view key);

// Removes metadata.managedFields (often half an object's bytes) in place.
void StripManagedFields(json::Value& obj);

// metav1.Time ("2006-01-02T15:04:05Z") and metav1.MicroTime ("2006-01-02T15:04:05.000000Z"), UTC.
std::string FormatTime(std::chrono::system_clock::time_point t);
std::string FormatMicroTime(std::chrono::system_clock::time_point t);
// metav1.Now() as it is written: the system clock, second precision, UTC.
inline std::string NowTime() { return FormatTime(std::chrono::system_clock::now()); }
// Parses both forms (and RFC 3339 with a numeric offset); nullopt if malformed.
std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view text);

}  // namespace trainer::kube
