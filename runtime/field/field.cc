// Rendering of field errors and aggregates, after apimachinery's field.Error.ErrorBody and
// utilerrors.aggregate.Error.
#include "runtime/field/field.h"

#include <cstdio>
#include <set>

namespace trainer::field {

Path Path::Child(std::string_view name) const {
  Path p = *this;
  if (!p.text_.empty()) {
    p.text_ += ".";
  }
  p.text_ += name;
  return p;
}

Path Path::Index(int64_t i) const {
  Path p = *this;
  p.text_ += "[" + std::to_string(i) + "]";
  return p;
}

Path Path::Key(std::string_view key) const {
  Path p = *this;
  p.text_ += "[";
  p.text_ += key;
  p.text_ += "]";
  return p;
}

std::string_view ErrorTypeString(ErrorType t) {
  switch (t) {
    case ErrorType::kNotFound:
      return "Not found";
    case ErrorType::kRequired:
      return "Required value";
    case ErrorType::kDuplicate:
      return "Duplicate value";
    case ErrorType::kInvalid:
      return "Invalid value";
    case ErrorType::kNotSupported:
      return "Unsupported value";
    case ErrorType::kForbidden:
      return "Forbidden";
    case ErrorType::kTooLong:
      return "Too long";
    case ErrorType::kTooMany:
      return "Too many";
    case ErrorType::kInternal:
      return "Internal error";
    case ErrorType::kTypeInvalid:
      return "Invalid value";
  }
  return "Invalid value";
}

BadValue BadValue::Json(json::Value v) {
  BadValue b;
  b.omitted_ = false;
  b.value_ = std::move(v);
  return b;
}

BadValue BadValue::GoRepr(std::string text, json::Value v) {
  BadValue b = Json(std::move(v));
  b.go_repr_ = std::move(text);
  return b;
}

BadValue::BadValue(const BadValue& other)
    : omitted_(other.omitted_), value_(other.value_.Clone()), go_repr_(other.go_repr_) {}

BadValue& BadValue::operator=(const BadValue& other) {
  if (this != &other) {
    omitted_ = other.omitted_;
    value_ = other.value_.Clone();
    go_repr_ = other.go_repr_;
  }
  return *this;
}

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

namespace {

bool AllStrings(const json::Value& v) {
  for (const json::Value& e : v.elements()) {
    if (!e.IsString()) {
      return false;
    }
  }
  return true;
}

std::string RenderJson(const json::Value& v) {
  switch (v.type()) {
    case json::Type::kNull:
      return "null";
    case json::Type::kString:
      return GoQuote(v.AsString());
    case json::Type::kArray:
      if (AllStrings(v)) {  // Go: []string{"a", "b"}
        std::string out = "[]string{";
        for (size_t i = 0; i < v.size(); ++i) {
          if (i > 0) {
            out += ", ";
          }
          out += GoQuote(v.at(i).AsString());
        }
        return out + "}";
      }
      return json::Write(v);
    default:
      return json::Write(v);
  }
}

}  // namespace

std::string BadValue::Render() const {
  if (go_repr_) {
    return *go_repr_;
  }
  return RenderJson(value_);
}

std::string Error::Body() const {
  std::string s;
  if (type == ErrorType::kRequired || type == ErrorType::kForbidden ||
      type == ErrorType::kTooLong || type == ErrorType::kInternal || bad_value.omitted()) {
    s = std::string(ErrorTypeString(type));
  } else {
    s = std::string(ErrorTypeString(type)) + ": " + bad_value.Render();
  }
  if (!detail.empty()) {
    s += ": " + detail;
  }
  return s;
}

std::string Error::ToString() const { return field + ": " + Body(); }

Error Invalid(const Path& path, BadValue value, std::string detail) {
  return Error{ErrorType::kInvalid, path.String(), std::move(value), std::move(detail)};
}

Error Required(const Path& path, std::string detail) {
  return Error{ErrorType::kRequired, path.String(), BadValue(), std::move(detail)};
}

Error Forbidden(const Path& path, std::string detail) {
  return Error{ErrorType::kForbidden, path.String(), BadValue(), std::move(detail)};
}

Error Duplicate(const Path& path, BadValue value) {
  return Error{ErrorType::kDuplicate, path.String(), std::move(value), ""};
}

Error NotFound(const Path& path, BadValue value) {
  return Error{ErrorType::kNotFound, path.String(), std::move(value), ""};
}

Error NotSupported(const Path& path, BadValue value, const std::vector<std::string>& valid) {
  std::string detail;
  if (!valid.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < valid.size(); ++i) {
      if (i > 0) {
        detail += ", ";
      }
      detail += GoQuote(valid[i]);
    }
  }
  return Error{ErrorType::kNotSupported, path.String(), std::move(value), std::move(detail)};
}

Error InternalError(const Path& path, std::string err) {
  return Error{ErrorType::kInternal, path.String(), BadValue(), std::move(err)};
}

BadValue String(std::string_view s) { return BadValue::Json(json::Value(s)); }
BadValue Int(int64_t i) { return BadValue::Json(json::Value(i)); }
BadValue Bool(bool b) { return BadValue::Json(json::Value(b)); }
BadValue StringList(const std::vector<std::string>& items) {
  return BadValue::Json(json::Value::StringArray(items));
}

std::string AggregateMessages(const std::vector<std::string>& messages) {
  if (messages.empty()) {
    return "";
  }
  if (messages.size() == 1) {
    return messages[0];
  }
  std::set<std::string> seen;
  std::string result;
  for (const std::string& m : messages) {
    if (!seen.insert(m).second) {
      continue;
    }
    if (seen.size() > 1) {
      result += ", ";
    }
    result += m;
  }
  if (seen.size() == 1) {
    return result;
  }
  return "[" + result + "]";
}

std::string Aggregate(const ErrorList& errors) {
  std::vector<std::string> messages;
  messages.reserve(errors.size());
  for (const Error& e : errors) {
    messages.push_back(e.ToString());
  }
  return AggregateMessages(messages);
}

namespace {
// The patterns apimachinery validates with; they appear in the error texts. The matchers below
// accept exactly what these regexes accept (checked against std::regex in field_test.cc), without
// a regex engine on the admission path.
constexpr char kDNS1123SubdomainFmt[] =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr char kDNS1123SubdomainErrorMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr char kHTTPPathFmt[] = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// kDNS1123SubdomainFmt: dot-separated labels of [-a-z0-9], each non-empty and starting and
// ending with [a-z0-9].
bool MatchesDNS1123Subdomain(std::string_view value) {
  size_t start = 0;
  while (true) {
    size_t end = value.find('.', start);
    std::string_view label = value.substr(start, end == std::string_view::npos ? end : end - start);
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') {
        return false;
      }
    }
    if (end == std::string_view::npos) {
      return true;
    }
    start = end + 1;
  }
}

// kHTTPPathFmt: one or more characters of its class.
bool MatchesHTTPPath(std::string_view value) {
  constexpr std::string_view kPunctuation = "/-._~%!$&'()*+,;=:";
  if (value.empty()) {
    return false;
  }
  for (char c : value) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              kPunctuation.find(c) != std::string_view::npos;
    if (!ok) {
      return false;
    }
  }
  return true;
}
}  // namespace

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 253) {
    errs.push_back("must be no more than 253 characters");
  }
  if (!MatchesDNS1123Subdomain(value)) {
    errs.push_back(std::string(kDNS1123SubdomainErrorMsg) +
                   " (e.g. 'example.com', regex used for validation is '" + kDNS1123SubdomainFmt +
                   "')");
  }
  return errs;
}

ErrorList IsDomainPrefixedPath(const Path& path, std::string_view dp_path) {
  ErrorList errs;
  if (dp_path.empty()) {
    errs.push_back(Required(path, ""));
    return errs;
  }
  size_t slash = dp_path.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == dp_path.size()) {
    errs.push_back(
        Invalid(path, String(dp_path), "must be a domain-prefixed path (such as \"acme.io/foo\")"));
    return errs;
  }
  std::string_view host = dp_path.substr(0, slash);
  for (std::string& msg : IsDNS1123Subdomain(host)) {
    errs.push_back(Invalid(path, String(host), std::move(msg)));
  }
  std::string_view rest = dp_path.substr(slash + 1);
  if (!MatchesHTTPPath(rest)) {
    errs.push_back(
        Invalid(path, String(rest),
                std::string("Invalid path (regex used for validation is '") + kHTTPPathFmt + "')"));
  }
  return errs;
}

void ValidationResult::Append(ValidationResult other) {
  for (std::string& w : other.warnings) {
    warnings.push_back(std::move(w));
  }
  for (Error& e : other.errors) {
    errors.push_back(std::move(e));
  }
}

}  // namespace trainer::field
