// The certificate Secret's codec (see state.h).
#include "certs/state.h"

#include "common/encoding/base64.h"
#include "common/kube/meta.h"

namespace trainer::certs {
namespace {

std::string DataValue(const json::Value* data, std::string_view key) {
  const json::Value* v = data != nullptr ? data->Find(key) : nullptr;
  if (v == nullptr || !v->IsString()) {
    return "";
  }
  StatusOr<std::string> decoded = encoding::Base64Decode(v->AsString());
  return decoded.ok() ? std::move(decoded).value() : std::string();
}

std::string Annotation(const json::Value* annotations, std::string_view key) {
  const json::Value* v = annotations != nullptr ? annotations->Find(key) : nullptr;
  return v != nullptr && v->IsString() ? v->AsString() : std::string();
}

std::map<std::string, Report> DecodeReports(const std::string& text) {
  std::map<std::string, Report> out;
  StatusOr<json::Value> doc = json::Parse(text);
  if (!doc.ok() || !doc->IsObject()) {
    return out;
  }
  for (const auto& [replica, v] : doc->members()) {
    const json::Value* ca = v.Find("ca");
    const json::Value* at = v.Find("at");
    if (ca == nullptr || !ca->IsString() || at == nullptr || !at->IsString()) {
      continue;
    }
    std::optional<Time> t = kube::ParseTime(at->AsString());
    if (t.has_value()) {
      out[replica] = Report{.ca = ca->AsString(), .at = *t};
    }
  }
  return out;
}

json::Value EncodeReports(const std::map<std::string, Report>& reports) {
  json::Value out = json::Value::Object();
  for (const auto& [replica, r] : reports) {
    json::Value v = json::Value::Object();
    v.Set("ca", json::Value(r.ca));
    v.Set("at", json::Value(kube::FormatTime(r.at)));
    out.Set(replica, std::move(v));
  }
  return out;
}

// A string value, or null (which a merge patch reads as "remove").
json::Value OrNull(const std::string& s) { return s.empty() ? json::Value() : json::Value(s); }
json::Value Base64OrNull(const std::string& s) {
  return s.empty() ? json::Value() : json::Value(encoding::Base64Encode(s));
}

}  // namespace

bool State::SameContent(const State& o) const {
  return ca == o.ca && serving == o.serving && next_ca == o.next_ca && bundle == o.bundle &&
         phase_since == o.phase_since && injected_bundle == o.injected_bundle &&
         injected_at == o.injected_at && reports == o.reports && rotate == o.rotate;
}

Phase PhaseOf(const State& state) {
  if (!state.next_ca.cert_pem.empty()) {
    return Phase::kTrustNext;
  }
  return state.bundle.size() > 1 ? Phase::kSignNext : Phase::kStable;
}

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kStable:
      return "Stable";
    case Phase::kTrustNext:
      return "TrustNext";
    case Phase::kSignNext:
      return "SignNext";
  }
  return "Unknown";
}

State DecodeSecret(const json::Value& secret) {
  State s;
  s.resource_version = std::string(kube::ResourceVersion(secret));
  const json::Value* data = secret.Find("data");
  s.ca = {DataValue(data, kCACertKey), DataValue(data, kCAKeyKey)};
  s.serving = {DataValue(data, kTLSCertKey), DataValue(data, kTLSKeyKey)};
  s.next_ca = {DataValue(data, kNextCACertKey), DataValue(data, kNextCAKeyKey)};
  StatusOr<std::vector<std::string>> bundle = SplitBundle(DataValue(data, kCABundleKey));
  if (bundle.ok()) {
    s.bundle = std::move(bundle).value();
  }
  const json::Value* metadata = secret.Find("metadata");
  const json::Value* annotations = metadata != nullptr ? metadata->Find("annotations") : nullptr;
  s.phase_since = kube::ParseTime(Annotation(annotations, kPhaseSinceAnnotation));
  std::string injected = Annotation(annotations, kBundleInjectedAnnotation);
  if (size_t space = injected.find(' '); space != std::string::npos) {
    s.injected_at = kube::ParseTime(std::string_view(injected).substr(space + 1));
    if (s.injected_at.has_value()) {
      s.injected_bundle = injected.substr(0, space);
    }
  }
  s.reports = DecodeReports(Annotation(annotations, kReplicasAnnotation));
  s.rotate = Annotation(annotations, kRotateAnnotation);
  return s;
}

json::Value EncodeSecretPatch(const State& state) {
  json::Value data = json::Value::Object();
  data.Set(kCACertKey, Base64OrNull(state.ca.cert_pem));
  data.Set(kCAKeyKey, Base64OrNull(state.ca.key_pem));
  data.Set(kTLSCertKey, Base64OrNull(state.serving.cert_pem));
  data.Set(kTLSKeyKey, Base64OrNull(state.serving.key_pem));
  data.Set(kNextCACertKey, Base64OrNull(state.next_ca.cert_pem));
  data.Set(kNextCAKeyKey, Base64OrNull(state.next_ca.key_pem));
  data.Set(kCABundleKey, Base64OrNull(JoinBundle(state.bundle)));

  json::Value annotations = json::Value::Object();
  annotations.Set(kPhaseSinceAnnotation, state.phase_since.has_value()
                                             ? json::Value(kube::FormatTime(*state.phase_since))
                                             : json::Value());
  annotations.Set(kBundleInjectedAnnotation, state.injected_at.has_value()
                                                 ? json::Value(state.injected_bundle + " " +
                                                               kube::FormatTime(*state.injected_at))
                                                 : json::Value());
  annotations.Set(kReplicasAnnotation,
                  state.reports.empty() ? json::Value()
                                        : json::Value(json::Write(EncodeReports(state.reports))));
  annotations.Set(kRotateAnnotation, OrNull(state.rotate));

  json::Value metadata = json::Value::Object();
  metadata.Set("resourceVersion", json::Value(state.resource_version));
  metadata.Set("annotations", std::move(annotations));
  json::Value patch = json::Value::Object();
  patch.Set("metadata", std::move(metadata));
  patch.Set("data", std::move(data));
  return patch;
}

}  // namespace trainer::certs
