// Who may report a TrainJob's status (upstream pkg/statusserver/auth.go): the bearer token must
// be a service-account token of the TrainJob's issuer (verified locally, common/jwt/issuer.h)
// for the audience trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status, and
// its kubernetes.io namespace claim must be the TrainJob's namespace. That is upstream's
// contract: any service account of the namespace holding a token with that audience may report.
//
// With pod binding on (--status-server-require-pod-binding, beyond upstream) the token must also
// be bound to a pod (its kubernetes.io pod claim, as in the projected tokens the TrainJobStatus
// plugin mounts) that exists now with that uid and belongs to the TrainJob, looked up in an
// informer cache (PodDirectory), never per request from the apiserver.
//
// Results: kAllowed; kForbidden (upstream's 403) with the reason, for logs and metrics;
// kUnavailable (500) when the issuer's keys or the pod cache are not loaded yet: a transient
// state of ours is not the reporter's fault.
//
//   ServiceAccountAuthorizer auth(&issuer, /*pods=*/nullptr);
//   AuthResult r = auth.Authorize(req.get_header_value("Authorization"), ns, name);
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/jwt/issuer.h"

namespace trainer::statusserver {

struct AuthResult {
  enum Kind { kAllowed, kForbidden, kUnavailable };
  Kind kind = kForbidden;
  std::string reason;
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // `authorization` is the Authorization header as received ("" when absent).
  virtual AuthResult Authorize(std::string_view authorization, std::string_view ns,
                               std::string_view trainjob) = 0;
};

// Pods by namespace and name, from a cache.
class PodDirectory {
 public:
  virtual ~PodDirectory() = default;
  virtual bool HasSynced() const = 0;
  // The TrainJob (its JobSet's name label) of pod ns/name if it exists with `uid` and has not
  // finished (phase Succeeded or Failed); nullopt otherwise.
  virtual std::optional<std::string> TrainJobOf(std::string_view ns, std::string_view name,
                                                std::string_view uid) const = 0;
};

class ServiceAccountAuthorizer final : public Authorizer {
 public:
  // `pods` null: no pod binding (upstream's behaviour). Both must outlive the authorizer.
  ServiceAccountAuthorizer(jwt::Issuer* issuer, const PodDirectory* pods)
      : issuer_(issuer), pods_(pods) {}
  AuthResult Authorize(std::string_view authorization, std::string_view ns,
                       std::string_view trainjob) override;

 private:
  jwt::Issuer* issuer_;
  const PodDirectory* pods_;
};

// The credentials of an RFC 7235 "Bearer" Authorization header, as upstream's extractRawToken:
// fields split on white space (Go's strings.Fields), exactly two, the scheme matched
// case-insensitively; "" otherwise.
std::string BearerToken(std::string_view authorization);

}  // namespace trainer::statusserver
