// Input characters (go-yaml v2 readerc.go). yaml-cpp guesses UTF-16/32 from the first bytes and
// passes other bytes through, so a manifest it accepts could hold text the apiserver's reader
// rejects (and that json::Write could not emit). We check the stream first, with go-yaml's
// texts. Unlike go-yaml, UTF-16 with a byte order mark is not decoded; it is rejected here.
// Internal to common/yaml.
#pragma once

#include <string_view>

#include "common/status/status.h"

namespace trainer::yaml::internal {

// OK, or the first character go-yaml's reader rejects, as "yaml: line L, column C: <problem>"
// (go-yaml itself reports reader errors without a position; ours has one).
Status CheckInputCharacters(std::string_view text);

}  // namespace trainer::yaml::internal
