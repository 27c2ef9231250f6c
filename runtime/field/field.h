// Field errors of admission validation, rendered exactly as apimachinery renders them
// (k8s.io/apimachinery/pkg/util/validation/field: Path, Error, ErrorList, and
// utilerrors.NewAggregate), so users of trainer-cpp read the same text as upstream users.
//
//   field::Path p = field::NewPath("spec").Child("runtimePatches").Index(0);  //
//   spec.runtimePatches[0] field::Error e = field::Forbidden(p, "RuntimePatches can only be ...");
//   e.ToString();  // "spec.runtimePatches[0]: Forbidden: RuntimePatches can only be ..."
//
// Bad values are JSON. Scalars render like Go (%q strings, %v numbers and bools); Go structs
// render with `%#v`, which carries Go type names and pointer addresses that we cannot (and do
// not try to) reproduce byte for byte: callers pass a readable Go-like rendering when they have
// one (BadValue::GoRepr), tests and users match on the detail text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"

namespace trainer::field {

// A field path: "spec.trainer.env", "spec.runtimePatches[0]", "spec.annotations[key]".
class Path {
 public:
  Path() = default;
  explicit Path(std::string_view root) : text_(root) {}

  Path Child(std::string_view name) const;
  template <typename... More>
  Path Child(std::string_view name, More... more) const {
    return Child(name).Child(more...);
  }
  Path Index(int64_t i) const;
  Path Key(std::string_view key) const;
  const std::string& String() const { return text_; }

 private:
  std::string text_;
};

// field.NewPath("spec", "trainer") == Path("spec").Child("trainer").
template <typename... More>
Path NewPath(std::string_view root, More... more) {
  if constexpr (sizeof...(More) == 0) {
    return Path(root);
  } else {
    return Path(root).Child(more...);
  }
}

enum class ErrorType {
  kNotFound,
  kRequired,
  kDuplicate,
  kInvalid,
  kNotSupported,
  kForbidden,
  kTooLong,
  kTooMany,
  kInternal,
  kTypeInvalid
};

// "Invalid value", "Required value", "Forbidden", "Internal error" ...
std::string_view ErrorTypeString(ErrorType t);

// The offending value of an error.
class BadValue {
 public:
  BadValue() = default;  // omitted: the error prints no value
  static BadValue Json(json::Value v);
  // A value rendered by the caller in Go's `%#v` style, e.g. a struct.
  static BadValue GoRepr(std::string text, json::Value v = json::Value());

  BadValue(const BadValue& other);
  BadValue& operator=(const BadValue& other);
  BadValue(BadValue&&) = default;
  BadValue& operator=(BadValue&&) = default;

  bool omitted() const { return omitted_; }
  const json::Value& value() const { return value_; }
  // The text apimachinery prints for the value.
  std::string Render() const;

 private:
  bool omitted_ = true;
  json::Value value_;
  std::optional<std::string> go_repr_;
};

struct Error {
  ErrorType type = ErrorType::kInvalid;
  std::string field;  // the path as text
  BadValue bad_value;
  std::string detail;

  // "<field>: <body>", as (*field.Error).Error().
  std::string ToString() const;
  // The part after "<field>: ".
  std::string Body() const;
};

using ErrorList = std::vector<Error>;

Error Invalid(const Path& path, BadValue value, std::string detail);
Error Required(const Path& path, std::string detail = "");
Error Forbidden(const Path& path, std::string detail);
Error Duplicate(const Path& path, BadValue value);
Error NotFound(const Path& path, BadValue value);
// detail: `supported values: "a", "b"`.
Error NotSupported(const Path& path, BadValue value, const std::vector<std::string>& valid);
Error InternalError(const Path& path, std::string err);

// Shorthands for common bad values.
BadValue String(std::string_view s);
BadValue Int(int64_t i);
BadValue Bool(bool b);
BadValue StringList(const std::vector<std::string>& items);

// Go's strconv.Quote for the ASCII/UTF-8 strings we handle.
std::string GoQuote(std::string_view s);

// utilerrors.NewAggregate(msgs).Error(): "" for none, the message for one, "[a, b]" for more;
// duplicate messages are printed once (and one distinct message prints without brackets).
std::string AggregateMessages(const std::vector<std::string>& messages);
std::string Aggregate(const ErrorList& errors);

// validation.IsDomainPrefixedPath (k8s.io/apimachinery/pkg/util/validation).
ErrorList IsDomainPrefixedPath(const Path& path, std::string_view dp_path);
// validation.IsDNS1123Subdomain: the list of problems, empty when valid.
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);

// What admission returns: warnings plus field errors. Validation is a result, not an error.
struct ValidationResult {
  std::vector<std::string> warnings;
  ErrorList errors;

  bool ok() const { return errors.empty(); }
  void Append(ValidationResult other);
  // The text the webhook denies with (Aggregate of the errors).
  std::string ErrorMessage() const { return Aggregate(errors); }
};

}  // namespace trainer::field
