// Status report authorization (auth.h).
#include "webhook/statusserver/auth.h"

#include <vector>

#include "runtime/plugins/trainjobstatus/trainjobstatus.h"

namespace trainer::statusserver {
namespace {

// The byte length of a white-space rune at s[i] (Go's unicode.IsSpace), or 0.
size_t SpaceAt(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  static constexpr std::string_view kMultiByte[] = {
      "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81",
      "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86",
      "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8",
      "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
  for (std::string_view sp : kMultiByte) {
    if (s.substr(i, sp.size()) == sp) return sp.size();
  }
  return 0;
}

bool EqualFoldAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string StringAt(const json::Value& obj, std::string_view a, std::string_view b) {
  const json::Value* v = obj.Find(a);
  v = v != nullptr ? v->Find(b) : nullptr;
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

}  // namespace

std::string BearerToken(std::string_view authorization) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < authorization.size()) {
    if (size_t n = SpaceAt(authorization, i)) {
      i += n;
      continue;
    }
    size_t start = i;
    while (i < authorization.size() && SpaceAt(authorization, i) == 0) ++i;
    fields.push_back(authorization.substr(start, i - start));
  }
  if (fields.size() != 2 || !EqualFoldAscii(fields[0], "Bearer")) return "";
  return std::string(fields[1]);
}

AuthResult ServiceAccountAuthorizer::Authorize(std::string_view authorization, std::string_view ns,
                                               std::string_view trainjob) {
  const std::string audience = plugins::trainjobstatus::TokenAudience(ns, trainjob);
  jwt::Issuer::Result r = issuer_->Verify(BearerToken(authorization), audience);
  if (r.kind == jwt::Issuer::kUnavailable) return {AuthResult::kUnavailable, r.reason};
  if (r.kind != jwt::Issuer::kValid) return {AuthResult::kForbidden, r.reason};
  if (StringAt(r.claims, "kubernetes.io", "namespace") != ns) {
    return {AuthResult::kForbidden, "token is not for namespace " + std::string(ns)};
  }
  if (pods_ == nullptr) return {AuthResult::kAllowed, ""};
  const json::Value* k8s = r.claims.Find("kubernetes.io");
  const std::string pod = StringAt(*k8s, "pod", "name");
  const std::string uid = StringAt(*k8s, "pod", "uid");
  if (pod.empty() || uid.empty()) return {AuthResult::kForbidden, "token is not bound to a pod"};
  if (!pods_->HasSynced()) return {AuthResult::kUnavailable, "pod cache not synced"};
  std::optional<std::string> owner = pods_->TrainJobOf(ns, pod, uid);
  if (!owner) return {AuthResult::kForbidden, "pod " + pod + " is not running"};
  if (*owner != trainjob) {
    return {AuthResult::kForbidden,
            "pod " + pod + " does not belong to TrainJob " + std::string(trainjob)};
  }
  return {AuthResult::kAllowed, ""};
}

}  // namespace trainer::statusserver
