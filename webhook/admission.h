// The admission.k8s.io/v1 AdmissionReview protocol and the AdmissionHandler interface every
// trainer webhook implements (TrainJob defaulter and validator, TrainingRuntime and
// ClusterTrainingRuntime validators).
//
// Responses mirror controller-runtime's (pkg/webhook/admission/{response.go,webhook.go}), so
// the apiserver and users see what upstream's Go webhook answers:
//   Allowed()         -> allowed, status {code 200}
//   Denied(msg)       -> not allowed, status {code 403, reason Forbidden, message msg}
//   Errored(code,msg) -> not allowed, status {code, message}
//   Patched(ops)      -> allowed, status {code 200}, patch (base64 JSONPatch), patchType JSONPatch
// plus warnings on any of them. The response always echoes the request's uid.
//
//   class MyValidator final : public AdmissionHandler {
//     AdmissionResponse Handle(const AdmissionRequest& req) override {
//       if (bad(req.object)) return AdmissionResponse::Denied("spec.x: Invalid value: ...");
//       return AdmissionResponse::Allowed();
//     }
//   };
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::webhook {

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";
inline constexpr std::string_view kAdmissionApiVersionBeta = "admission.k8s.io/v1beta1";

// The parts of AdmissionReview.request the trainer webhooks use.
struct AdmissionRequest {
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  // request.kind: the kind of the object being admitted.
  std::string group;
  std::string version;
  std::string kind;
  std::string resource;  // request.resource.resource, e.g. "trainjobs"
  std::string sub_resource;
  std::string name;
  std::string namespace_;
  std::string username;  // request.userInfo.username, for logs
  bool dry_run = false;
  json::Value object;      // null when absent (DELETE)
  json::Value old_object;  // null when absent (CREATE)
  // apiVersion of the review we were sent; the response uses the same one.
  std::string review_api_version = std::string(kAdmissionApiVersion);

  AdmissionRequest Clone() const;
};

class AdmissionResponse {
 public:
  static AdmissionResponse Allowed();
  static AdmissionResponse Denied(std::string message);
  static AdmissionResponse Errored(int32_t code, std::string message);
  // Allowed with a JSONPatch (an array of RFC 6902 operations); an empty array is no patch.
  static AdmissionResponse Patched(json::Value ops);

  // Appends warnings (usable on a temporary: `return Denied(msg).WithWarnings(w);`).
  AdmissionResponse& WithWarnings(std::vector<std::string> warnings) &;
  AdmissionResponse WithWarnings(std::vector<std::string> warnings) &&;

  bool allowed = true;
  int32_t code = 200;
  std::string reason;   // e.g. "Forbidden"; empty for none
  std::string message;  // empty for none
  std::vector<std::string> warnings;
  json::Value patch;  // null, or an array of RFC 6902 operations
};

// Contract: Handle may be called from many threads at once, must not block on the network for
// long (the apiserver's timeout is 10 s), and has no side effects beyond logs and metrics, so
// dryRun requests need no special casing. It should not throw; if it does, the server answers
// 500 for it and counts a panic.
class AdmissionHandler {
 public:
  virtual ~AdmissionHandler() = default;
  virtual AdmissionResponse Handle(const AdmissionRequest& request) = 0;
  // What the server calls. The request is the handler's own, so it may move the objects out of
  // it rather than copy them (a TrainJob decode keeps the document). By default, Handle.
  virtual AdmissionResponse Consume(AdmissionRequest&& request) { return Handle(request); }
};

// Decodes an AdmissionReview body. Errors (InvalidArgument) say what is wrong: not JSON, not an
// AdmissionReview, no request, a field of the wrong type.
StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body);

// Encodes {"kind":"AdmissionReview","apiVersion":...,"response":{...}} for `uid`.
std::string EncodeAdmissionReview(std::string_view uid, const AdmissionResponse& response,
                                  std::string_view api_version = kAdmissionApiVersion);

// The status.reason we report for an error code without one (used for logs and the denials
// metric): 400 BadRequest, 403 Forbidden, 404 NotFound, 413 RequestEntityTooLarge,
// 415 UnsupportedMediaType, 422 Invalid, 500 InternalError, else "Code<n>".
std::string ReasonForCode(int32_t code);

}  // namespace trainer::webhook
