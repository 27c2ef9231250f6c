// Fuzz target: JSON Patch, merge patch and strategic merge (common/json/patch.h). The input is a
// JSON array [a, b, ...]; a and b are used as documents and b also as a patch. Properties:
//   - a patch applied to its source gives its target: ApplyJsonPatch(a, CreateJsonPatch(a, b)) ==
//   b,
//     and CreateJsonPatch(a, a) is [];
//   - ApplyJsonPatch is atomic: when it fails, the document is unchanged;
//   - RFC 7386 merge patch is idempotent: merging b twice equals merging it once;
//   - strategic merge leaves no directive ($patch, $retainKeys, ...) in a result whose target
//     had none.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/json/patch.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

// The directives StrategicMerge interprets (other "$" keys are plain fields to it, as upstream).
bool IsDirective(std::string_view key) {
  return key == "$patch" || key == "$retainKeys" || key.starts_with("$deleteFromPrimitiveList/") ||
         key.starts_with("$setElementOrder/");
}

bool HasDirective(const json::Value& v) {
  if (v.IsObject()) {
    for (const auto& [key, child] : v.members()) {
      if (IsDirective(key)) {
        return true;
      }
      if (HasDirective(child)) {
        return true;
      }
    }
  } else if (v.IsArray()) {
    for (const json::Value& child : v.elements()) {
      if (HasDirective(child)) {
        return true;
      }
    }
  }
  return false;
}

void CheckJsonPatch(const json::Value& a, const json::Value& b) {
  StatusOr<json::Value> ops = json::CreateJsonPatch(a, b);
  FUZZ_CHECK(ops.ok(), "CreateJsonPatch failed: " + ops.status().ToString());
  json::Value doc = a.Clone();
  Status applied = json::ApplyJsonPatch(doc, *ops);
  FUZZ_CHECK(applied.ok(), "the created patch does not apply: " + applied.ToString() +
                               "\n  patch: " + json::Write(*ops));
  FUZZ_CHECK(doc == b, "the created patch gives " + json::Write(doc) + "\n  not " + json::Write(b) +
                           "\n  patch: " + json::Write(*ops));
  StatusOr<json::Value> none = json::CreateJsonPatch(a, a);
  FUZZ_CHECK(none.ok() && none->IsArray() && none->empty(), "CreateJsonPatch(a, a) is not []");

  // b as arbitrary operations.
  json::Value target = a.Clone();
  if (!json::ApplyJsonPatch(target, b).ok()) {
    FUZZ_CHECK(target == a, "a failed ApplyJsonPatch changed the document");
  }
}

void CheckMergePatch(const json::Value& a, const json::Value& b) {
  json::Value once = a.Clone();
  if (!json::MergePatch(once, b).ok()) {
    return;
  }
  json::Value twice = once.Clone();
  Status s = json::MergePatch(twice, b);
  FUZZ_CHECK(s.ok() && twice == once,
             "merge patch is not idempotent: " + json::Write(once) + " then " + json::Write(twice));
}

void CheckStrategicMerge(const json::Value& a, const json::Value& b) {
  json::Value merged = a.Clone();
  if (!json::StrategicMerge(merged, b).ok()) {
    return;
  }
  if (!HasDirective(a)) {
    FUZZ_CHECK(!HasDirective(merged),
               "a directive survived strategic merge: " + json::Write(merged));
  }
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  StatusOr<json::Value> in =
      json::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!in.ok() || !in->IsArray() || in->size() < 2) {
    return 0;
  }
  const json::Value& a = in->at(0);
  const json::Value& b = in->at(1);
  fuzz::CheckJsonPatch(a, b);
  fuzz::CheckMergePatch(a, b);
  fuzz::CheckStrategicMerge(a, b);
  return 0;
}
