// Go-style renderings of bad values.
#include "runtime/framework/go_repr.h"

namespace trainer::framework {

namespace {
std::string OptString(const std::optional<std::string>& s) {
  return s ? "(*string)(" + field::GoQuote(*s) + ")" : "(*string)(nil)";
}
std::string StringSlice(const std::vector<std::string>& items) {
  if (items.empty()) {
    return "[]string(nil)";
  }
  std::string out = "[]string{";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i > 0 ? ", " : "") + field::GoQuote(items[i]);
  }
  return out + "}";
}
}  // namespace

field::BadValue GoRuntimeRef(const api::RuntimeRef& ref) {
  json::Value v = json::Value::Object();
  v.Set("name", json::Value(ref.name));
  if (ref.api_group) {
    v.Set("apiGroup", json::Value(*ref.api_group));
  }
  if (ref.kind) {
    v.Set("kind", json::Value(*ref.kind));
  }
  return field::BadValue::GoRepr("v1alpha1.RuntimeRef{Name:" + field::GoQuote(ref.name) +
                                     ", APIGroup:" + OptString(ref.api_group) +
                                     ", Kind:" + OptString(ref.kind) + "}",
                                 std::move(v));
}

field::BadValue GoEnvList(const json::Value& env) {
  if (!env.IsArray()) {
    return field::BadValue::GoRepr("[]v1.EnvVar(nil)", json::Value());
  }
  std::string out = "[]v1.EnvVar{";
  for (size_t i = 0; i < env.size(); ++i) {
    const json::Value& e = env.at(i);
    const json::Value* name = e.Find("name");
    const json::Value* value = e.Find("value");
    const json::Value* from = e.Find("valueFrom");
    out += i > 0 ? ", " : "";
    out += "v1.EnvVar{Name:" + field::GoQuote(name && name->IsString() ? name->AsString() : "") +
           ", Value:" + field::GoQuote(value && value->IsString() ? value->AsString() : "") +
           ", ValueFrom:" +
           (from && from->IsObject() ? "(*v1.EnvVarSource)(" + json::Write(*from) + ")"
                                     : std::string("(*v1.EnvVarSource)(nil)")) +
           "}";
  }
  return field::BadValue::GoRepr(out + "}", env.Clone());
}

field::BadValue GoEnvInjectionTarget(const api::EnvInjectionTarget& target) {
  json::Value v = json::Value::Object();
  v.Set("jobName", json::Value(target.job_name));
  v.Set("containerNames", json::Value::StringArray(target.container_names));
  return field::BadValue::GoRepr(
      "v1alpha1.EnvInjectionTarget{JobName:" + field::GoQuote(target.job_name) +
          ", ContainerNames:" + StringSlice(target.container_names) + "}",
      std::move(v));
}

field::BadValue GoIntOrString(bool is_int, int64_t int_value, const std::string& str) {
  return field::BadValue::GoRepr("intstr.IntOrString{Type:" + std::string(is_int ? "0" : "1") +
                                     ", IntVal:" + std::to_string(is_int ? int_value : 0) +
                                     ", StrVal:" + field::GoQuote(is_int ? "" : str) + "}",
                                 is_int ? json::Value(int_value) : json::Value(str));
}

}  // namespace trainer::framework
