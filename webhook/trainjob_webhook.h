// The TrainJob webhooks (upstream pkg/webhooks/trainjob_webhook.go).
//
// TrainJobDefaulter (mutating): sets spec.runtimePatches[].time as upstream's defaulter does
// (api::DefaultRuntimePatchTimes), and translates the deprecated v2.1 spec.podTemplateOverrides
// into its spec.runtimePatches entry with a warning (api::TranslatePodTemplateOverrides). The
// answer is a JSONPatch computed between the object as received and the object with only those
// edits applied to it, so fields we do not model (or do not know) are never removed — what
// controller-runtime achieves by dropping `remove` operations for unknown fields. The
// podTemplateOverrides field itself is kept, so the validator can still check it against the
// runtime as v2.1 did.
//
// TrainJobValidator (validating): `unsupported runtime: <key>` for an unknown runtimeRef, else
// the runtime's ValidateObjects (create: old = null; it includes v2.1's podTemplateOverrides
// checks, the same call `trainer-render --validate` makes);
// errors deny (403 Forbidden, apimachinery's aggregate text), warnings always pass through.
// DELETE is allowed without checks in both, as upstream.
#pragma once

#include <functional>
#include <string>

#include "runtime/core/registry.h"
#include "webhook/admission.h"

namespace trainer::webhook {

class TrainJobDefaulter final : public AdmissionHandler {
 public:
  // `now` returns the current time in RFC 3339 at second precision ("2026-01-02T03:04:05Z").
  explicit TrainJobDefaulter(std::function<std::string()> now) : now_(std::move(now)) {}
  AdmissionResponse Handle(const AdmissionRequest& request) override {
    return Consume(request.Clone());
  }
  AdmissionResponse Consume(AdmissionRequest&& request) override;

 private:
  std::function<std::string()> now_;
};

class TrainJobValidator final : public AdmissionHandler {
 public:
  // `runtimes` must outlive the validator.
  explicit TrainJobValidator(const core::Runtimes* runtimes) : runtimes_(runtimes) {}
  AdmissionResponse Handle(const AdmissionRequest& request) override {
    return Consume(request.Clone());
  }
  AdmissionResponse Consume(AdmissionRequest&& request) override;

 private:
  AdmissionResponse Validate(const api::TrainJob& job, const api::TrainJob* old) const;

  const core::Runtimes* runtimes_;
};

}  // namespace trainer::webhook
