// AdmissionReview decoding and encoding (see admission.h).
#include "webhook/admission.h"

#include <utility>

#include "common/encoding/base64.h"
#include "common/http/server.h"

namespace trainer::webhook {
namespace {

// obj[key] into *out. `path()` names the field in the error and is called only then: building
// every field's path was a visible share of a decode that otherwise allocates little.
template <typename PathFn>
Status ReadStringAt(const json::Value& obj, std::string_view key, std::string* out, PathFn path) {
  const json::Value* v = obj.Find(key);
  if (v != nullptr && v->IsString()) {
    *out = v->AsString();
    return OkStatus();
  }
  return json::GetString(obj, key, path(), out);  // absent or null (OK), or the type error
}

Status ReadString(const json::Value& obj, std::string_view parent, std::string_view key,
                  std::string* out) {
  return ReadStringAt(obj, key, out, [&] { return json::Child(parent, key); });
}

// request.kind / request.resource: {group, version, kind|resource}.
Status ReadGvk(const json::Value& req, std::string_view key, std::string_view last,
               std::string* group, std::string* version, std::string* name) {
  const json::Value* v = req.Find(key);
  if (v == nullptr || v->IsNull()) {
    return OkStatus();
  }
  if (!v->IsObject()) {
    const json::Value* ignored = nullptr;
    return json::GetObject(req, key, json::Child("request", key), &ignored);  // the type error
  }
  for (auto [field, out] :
       {std::pair{std::string_view("group"), group},
        std::pair{std::string_view("version"), version}, std::pair{last, name}}) {
    RETURN_IF_ERROR(ReadStringAt(*v, field, out, [&, field = field] {
      return json::Child(json::Child("request", key), field);
    }));
  }
  return OkStatus();
}

}  // namespace

AdmissionRequest AdmissionRequest::Clone() const {
  AdmissionRequest out;
  out.uid = uid;
  out.operation = operation;
  out.group = group;
  out.version = version;
  out.kind = kind;
  out.resource = resource;
  out.sub_resource = sub_resource;
  out.name = name;
  out.namespace_ = namespace_;
  out.username = username;
  out.dry_run = dry_run;
  out.object = object.Clone();
  out.old_object = old_object.Clone();
  out.review_api_version = review_api_version;
  return out;
}

AdmissionResponse AdmissionResponse::Allowed() { return AdmissionResponse(); }

AdmissionResponse AdmissionResponse::Denied(std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = 403;
  r.reason = "Forbidden";
  r.message = std::move(message);
  return r;
}

AdmissionResponse AdmissionResponse::Errored(int32_t code, std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = code;
  r.message = std::move(message);
  return r;
}

AdmissionResponse AdmissionResponse::Patched(json::Value ops) {
  AdmissionResponse r;
  if (ops.IsArray() && !ops.empty()) {
    r.patch = std::move(ops);
  }
  return r;
}

AdmissionResponse& AdmissionResponse::WithWarnings(std::vector<std::string> more) & {
  for (std::string& w : more) {
    warnings.push_back(std::move(w));
  }
  return *this;
}

AdmissionResponse AdmissionResponse::WithWarnings(std::vector<std::string> more) && {
  WithWarnings(std::move(more));
  return std::move(*this);
}

namespace {

// kind and apiVersion of the AdmissionReview, each checked only when set.
Status ReadReviewType(const json::Value& doc, AdmissionRequest& out) {
  std::string kind, api_version;
  RETURN_IF_ERROR(ReadString(doc, "", "kind", &kind));
  RETURN_IF_ERROR(ReadString(doc, "", "apiVersion", &api_version));
  if (!kind.empty() && kind != "AdmissionReview") {
    return InvalidArgumentError("expected kind AdmissionReview, got \"" + kind + "\"");
  }
  if (!api_version.empty()) {
    if (api_version != kAdmissionApiVersion && api_version != kAdmissionApiVersionBeta) {
      return InvalidArgumentError("unsupported AdmissionReview apiVersion \"" + api_version + "\"");
    }
    out.review_api_version = api_version;
  }
  return OkStatus();
}

// The fields of request we use; object and oldObject are moved out of `req`.
Status ReadRequest(json::Value& req, AdmissionRequest& out) {
  RETURN_IF_ERROR(ReadString(req, "request", "uid", &out.uid));
  RETURN_IF_ERROR(ReadString(req, "request", "operation", &out.operation));
  RETURN_IF_ERROR(ReadString(req, "request", "name", &out.name));
  RETURN_IF_ERROR(ReadString(req, "request", "namespace", &out.namespace_));
  RETURN_IF_ERROR(ReadString(req, "request", "subResource", &out.sub_resource));
  RETURN_IF_ERROR(ReadGvk(req, "kind", "kind", &out.group, &out.version, &out.kind));
  std::string rg, rv;
  RETURN_IF_ERROR(ReadGvk(req, "resource", "resource", &rg, &rv, &out.resource));
  RETURN_IF_ERROR(json::GetBool(req, "dryRun", "request.dryRun", &out.dry_run));
  const json::Value* user = nullptr;
  RETURN_IF_ERROR(json::GetObject(req, "userInfo", "request.userInfo", &user));
  if (user != nullptr) {
    RETURN_IF_ERROR(ReadString(*user, "request.userInfo", "username", &out.username));
  }
  for (auto [key, dest] :
       {std::pair<std::string_view, json::Value*>{"object", &out.object},
        std::pair<std::string_view, json::Value*>{"oldObject", &out.old_object}}) {
    json::Value* v = req.Find(key);
    if (v == nullptr || v->IsNull()) {
      continue;
    }
    if (!v->IsObject()) {
      return InvalidArgumentError("request." + std::string(key) + ": expected object, got " +
                                  std::string(json::DescribeType(*v)));
    }
    *dest = std::move(*v);
  }
  return OkStatus();
}

}  // namespace

StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body) {
  if (body.empty()) {
    return InvalidArgumentError("request body is empty");
  }
  // What no webhook reads is not built: the objects' metadata.managedFields (about a quarter of
  // a TrainJob review's bytes; upstream's Go types decode it into ObjectMeta and never look at
  // it) and the request's members ReadRequest does not read. All of it is still checked as JSON.
  static const json::SkipPaths kUnread({{"request", "object", "metadata", "managedFields"},
                                        {"request", "oldObject", "metadata", "managedFields"},
                                        {"request", "options"},
                                        {"request", "requestKind"},
                                        {"request", "requestResource"},
                                        {"request", "userInfo", "groups"},
                                        {"request", "userInfo", "extra"}});
  StatusOr<json::Value> parsed = json::Parse(body, kUnread);
  if (!parsed.ok()) {
    return InvalidArgumentError("couldn't decode the AdmissionReview: " +
                                parsed.status().message());
  }
  json::Value& doc = *parsed;
  if (!doc.IsObject()) {
    return InvalidArgumentError("couldn't decode the AdmissionReview: expected an object, got " +
                                std::string(json::DescribeType(doc)));
  }
  AdmissionRequest out;
  RETURN_IF_ERROR(ReadReviewType(doc, out));
  json::Value* req = doc.Find("request");
  if (req == nullptr || req->IsNull()) {
    return InvalidArgumentError("AdmissionReview has no request");
  }
  if (!req->IsObject()) {
    return InvalidArgumentError("request: expected object, got " +
                                std::string(json::DescribeType(*req)));
  }
  RETURN_IF_ERROR(ReadRequest(*req, out));
  // The rest of the review (the objects are moved out) is freed once the answer is out.
  http::DestroyAfterResponse(std::move(doc));
  return out;
}

std::string EncodeAdmissionReview(std::string_view uid, const AdmissionResponse& response,
                                  std::string_view api_version) {
  // Field order as Go's encoding/json writes admissionv1.AdmissionReview / metav1.Status; written
  // field by field (a tree built to be written once cost more than the writing).
  std::string out;
  out.reserve(256);
  out += R"({"kind":"AdmissionReview","apiVersion":)";
  json::AppendString(out, api_version);
  out += R"(,"response":{"uid":)";
  json::AppendString(out, uid);
  out += response.allowed ? R"(,"allowed":true)" : R"(,"allowed":false)";
  out += R"(,"status":{"metadata":{})";
  if (!response.message.empty()) {
    out += R"(,"message":)";
    json::AppendString(out, response.message);
  }
  if (!response.reason.empty()) {
    out += R"(,"reason":)";
    json::AppendString(out, response.reason);
  }
  out += R"(,"code":)";
  out += std::to_string(response.code == 0 ? 200 : response.code);
  out += '}';
  if (response.patch.IsArray() && !response.patch.empty()) {
    out += R"(,"patch":")";
    out += encoding::Base64Encode(json::Write(response.patch));  // base64 needs no escaping
    out += R"(","patchType":"JSONPatch")";
  }
  if (!response.warnings.empty()) {
    out += R"(,"warnings":[)";
    for (size_t i = 0; i < response.warnings.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      json::AppendString(out, response.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

std::string ReasonForCode(int32_t code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 500:
      return "InternalError";
    default:
      return "Code" + std::to_string(code);
  }
}

}  // namespace trainer::webhook
