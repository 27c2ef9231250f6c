// Go `%#v` renderings of the upstream structs that appear as bad values in field errors, so our
// messages read like upstream's. Pointers print as (*T)(<value>) where Go prints an address.
#pragma once

#include <string>

#include "common/json/json.h"
#include "runtime/api/types.h"
#include "runtime/field/field.h"

namespace trainer::framework {

// v1alpha1.RuntimeRef{Name:"x", APIGroup:(*string)("g"), Kind:(*string)("k")}
field::BadValue GoRuntimeRef(const api::RuntimeRef& ref);
// []v1.EnvVar{v1.EnvVar{Name:"A", Value:"1", ValueFrom:(*v1.EnvVarSource)(nil)}}
field::BadValue GoEnvList(const json::Value& env);
// v1alpha1.EnvInjectionTarget{JobName:"node", ContainerNames:[]string{"c"}}
field::BadValue GoEnvInjectionTarget(const api::EnvInjectionTarget& target);
// intstr.IntOrString{Type:1, IntVal:0, StrVal:"auto"}
field::BadValue GoIntOrString(bool is_int, int64_t int_value, const std::string& str);

}  // namespace trainer::framework
