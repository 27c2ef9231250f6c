// Shared admission checks (see validation.h).
#include "runtime/framework/validation.h"

#include "runtime/framework/go_repr.h"
#include "runtime/framework/info.h"

namespace trainer::framework {

std::optional<field::Error> ReservedEnvError(const api::Trainer& trainer,
                                             const std::set<std::string>& reserved) {
  std::set<std::string> found;
  if (trainer.env.IsArray()) {
    for (const json::Value& e : trainer.env.elements()) {
      if (std::string name = StringField(e, "name"); reserved.count(name) > 0) {
        found.insert(name);
      }
    }
  }
  if (found.empty()) {
    return std::nullopt;
  }
  std::string names;
  for (const std::string& n : found) {
    names += (names.empty() ? "" : " ") + n;
  }
  return field::Invalid(field::NewPath("spec", "trainer", "env"), GoEnvList(trainer.env),
                        "must not have reserved envs, invalid envs configured: [" + names + "]");
}

}  // namespace trainer::framework
