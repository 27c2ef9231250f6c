// JSON Patch (RFC 6902/6901), JSON Merge Patch (RFC 7386) and Kubernetes strategic merge patch.
// The strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch (mergeMap/mergeSlice)
// with the merge keys of the core/v1 and JobSet fields that appear in pod and JobSet templates.
#include "common/json/patch.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainer::json {
namespace {

// ---------------------------------------------------------------------------------------------
// RFC 6901 pointers.

std::string EscapeToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

StatusOr<std::vector<std::string>> SplitPointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') return InvalidArgumentError("invalid pointer: must start with '/'");
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    char c = pointer[i];
    if (c == '~') {
      char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
      if (next == '0') {
        token.push_back('~');
      } else if (next == '1') {
        token.push_back('/');
      } else {
        return InvalidArgumentError("invalid pointer: '~' must be followed by '0' or '1'");
      }
      ++i;
      continue;
    }
    token.push_back(c);
  }
  return tokens;
}

// An array index token: "0" or digits without a leading zero, within size_t.
bool ParseIndex(std::string_view token, size_t* out) {
  if (token.empty() || token.size() > 18) return false;
  if (token.size() > 1 && token[0] == '0') return false;
  size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  *out = n;
  return true;
}

// The value at `tokens`, or nullptr.
Value* Resolve(Value& doc, const std::vector<std::string>& tokens, size_t count) {
  Value* cur = &doc;
  for (size_t i = 0; i < count; ++i) {
    const std::string& t = tokens[i];
    if (cur->IsObject()) {
      cur = cur->Find(t);
    } else if (cur->IsArray()) {
      size_t idx;
      if (!ParseIndex(t, &idx) || idx >= cur->size()) return nullptr;
      cur = &cur->at(idx);
    } else {
      return nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

Status Add(Value& doc, const std::vector<std::string>& tokens, Value v) {
  if (tokens.empty()) {
    doc = std::move(v);
    return OkStatus();
  }
  Value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (parent == nullptr) return NotFoundError("path not found");
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    parent->Set(last, std::move(v));
    return OkStatus();
  }
  if (!parent->IsArray()) return InvalidArgumentError("parent is not an object or array");
  Elements& elems = parent->elements();
  if (last == "-") {
    elems.push_back(std::move(v));
    return OkStatus();
  }
  size_t idx;
  if (!ParseIndex(last, &idx)) return InvalidArgumentError("invalid array index \"" + last + "\"");
  if (idx > elems.size()) return InvalidArgumentError("array index " + last + " out of bounds");
  elems.insert(elems.begin() + static_cast<std::ptrdiff_t>(idx), std::move(v));
  return OkStatus();
}

StatusOr<Value> Remove(Value& doc, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return InvalidArgumentError("cannot remove the document root");
  Value* parent = Resolve(doc, tokens, tokens.size() - 1);
  if (parent == nullptr) return NotFoundError("path not found");
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    Value* target = parent->Find(last);
    if (target == nullptr) return NotFoundError("path not found");
    Value out = std::move(*target);
    parent->Erase(last);
    return out;
  }
  size_t idx;
  if (!parent->IsArray() || !ParseIndex(last, &idx) || idx >= parent->size()) {
    return NotFoundError("path not found");
  }
  Elements& elems = parent->elements();
  Value out = std::move(elems[idx]);
  elems.erase(elems.begin() + static_cast<std::ptrdiff_t>(idx));
  return out;
}

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() >= b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

Status ApplyOne(Value& doc, const Value& op) {
  if (!op.IsObject()) return InvalidArgumentError("operation is not an object");
  const Value* name = op.Find("op");
  const Value* path = op.Find("path");
  if (name == nullptr || !name->IsString()) return InvalidArgumentError("missing \"op\"");
  if (path == nullptr || !path->IsString()) return InvalidArgumentError("missing \"path\"");
  ASSIGN_OR_RETURN(std::vector<std::string> tokens, SplitPointer(path->AsString()));
  const std::string& kind = name->AsString();
  const Value* value = op.Find("value");
  auto need_value = [&]() -> Status {
    return value == nullptr ? InvalidArgumentError("missing \"value\"") : OkStatus();
  };
  if (kind == "add") {
    RETURN_IF_ERROR(need_value());
    return Add(doc, tokens, value->Clone());
  }
  if (kind == "remove") {
    return Remove(doc, tokens).status();
  }
  if (kind == "replace") {
    RETURN_IF_ERROR(need_value());
    Value* target = Resolve(doc, tokens, tokens.size());
    if (target == nullptr) return NotFoundError("path not found");
    *target = value->Clone();
    return OkStatus();
  }
  if (kind == "test") {
    RETURN_IF_ERROR(need_value());
    Value* target = Resolve(doc, tokens, tokens.size());
    if (target == nullptr) return NotFoundError("path not found");
    if (*target != *value) return FailedPreconditionError("test failed: value differs");
    return OkStatus();
  }
  if (kind == "move" || kind == "copy") {
    const Value* from = op.Find("from");
    if (from == nullptr || !from->IsString()) return InvalidArgumentError("missing \"from\"");
    ASSIGN_OR_RETURN(std::vector<std::string> from_tokens, SplitPointer(from->AsString()));
    if (kind == "copy") {
      Value* source = Resolve(doc, from_tokens, from_tokens.size());
      if (source == nullptr) return NotFoundError("from path not found");
      return Add(doc, tokens, source->Clone());
    }
    if (from_tokens == tokens) {
      if (Resolve(doc, tokens, tokens.size()) == nullptr) {
        return NotFoundError("from path not found");
      }
      return OkStatus();
    }
    if (IsPrefix(from_tokens, tokens)) {
      return InvalidArgumentError("cannot move a value into one of its children");
    }
    StatusOr<Value> moved = Remove(doc, from_tokens);
    if (!moved.ok()) return NotFoundError("from path not found");
    return Add(doc, tokens, std::move(moved).value());
  }
  return InvalidArgumentError("unknown op \"" + kind + "\"");
}

// ---------------------------------------------------------------------------------------------
// Diff.

Value Op(std::string_view kind, const std::string& path) {
  Value op = Value::Object();
  op.Set("op", Value(kind));
  op.Set("path", Value(path));
  return op;
}

void Diff(const std::string& path, const Value& a, const Value& b, Value& ops) {
  if (a == b) return;
  if (a.IsObject() && b.IsObject()) {
    for (const Member& m : a.members()) {
      std::string child = path + "/" + EscapeToken(m.first);
      const Value* other = b.Find(m.first);
      if (other == nullptr) {
        ops.PushBack(Op("remove", child));
      } else {
        Diff(child, m.second, *other, ops);
      }
    }
    for (const Member& m : b.members()) {
      if (a.Find(m.first) != nullptr) continue;
      Value op = Op("add", path + "/" + EscapeToken(m.first));
      op.Set("value", m.second.Clone());
      ops.PushBack(std::move(op));
    }
    return;
  }
  if (a.IsArray() && b.IsArray()) {
    size_t common = std::min(a.size(), b.size());
    for (size_t i = 0; i < common; ++i) {
      Diff(path + "/" + std::to_string(i), a.at(i), b.at(i), ops);
    }
    for (size_t i = common; i < b.size(); ++i) {
      Value op = Op("add", path + "/" + std::to_string(i));
      op.Set("value", b.at(i).Clone());
      ops.PushBack(std::move(op));
    }
    for (size_t i = a.size(); i > common; --i) {
      ops.PushBack(Op("remove", path + "/" + std::to_string(i - 1)));
    }
    return;
  }
  Value op = Op("replace", path);
  op.Set("value", b.Clone());
  ops.PushBack(std::move(op));
}

// ---------------------------------------------------------------------------------------------
// Strategic merge.

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

bool IsDirective(std::string_view key) {
  return key == kPatchDirective || key == kRetainKeys || key.starts_with(kSetElementOrder) ||
         key.starts_with(kDeleteFromPrimitiveList);
}

// The merge key of a list field, or "" for lists that are replaced.
std::string_view MergeKey(std::string_view field) {
  static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
      {"containers", "name"},       {"initContainers", "name"},
      {"ephemeralContainers", "name"}, {"env", "name"},
      {"volumes", "name"},          {"imagePullSecrets", "name"},
      {"schedulingGates", "name"},  {"resourceClaims", "name"},
      {"replicatedJobs", "name"},   {"hostAliases", "ip"},
      {"volumeMounts", "mountPath"}, {"ports", "containerPort"},
  };
  for (const auto& [name, key] : kKeys) {
    if (name == field) return key;
  }
  return "";
}

// Two list items are the same element: equal merge-key values (and, for ports, the same
// protocol with "TCP" as the default, the list-map key upstream's types declare).
bool SameItem(const Value& a, const Value& b, std::string_view key) {
  const Value* ka = a.Find(key);
  const Value* kb = b.Find(key);
  if (ka == nullptr || kb == nullptr || *ka != *kb) return false;
  if (key == "containerPort") {
    auto protocol = [](const Value& v) -> std::string {
      const Value* p = v.Find("protocol");
      return p != nullptr && p->IsString() ? p->AsString() : "TCP";
    };
    return protocol(a) == protocol(b);
  }
  return true;
}

// Copies `v` without directive keys and (like upstream's IgnoreUnmatchedNulls) without nulls
// in maps: what a patch value becomes where the target had nothing.
Value Materialize(const Value& v) {
  if (v.IsObject()) {
    Value out = Value::Object();
    for (const Member& m : v.members()) {
      if (IsDirective(m.first) || m.second.IsNull()) continue;
      out.members().emplace_back(m.first, Materialize(m.second));
    }
    return out;
  }
  if (v.IsArray()) {
    Value out = Value::Array();
    for (const Value& e : v.elements()) {
      if (e.IsObject()) {
        const Value* p = e.Find(kPatchDirective);
        bool directive_item = p != nullptr && p->IsString() &&
                              (p->AsString() == "delete" || p->AsString() == "replace");
        if (directive_item) continue;
      }
      out.PushBack(Materialize(e));
    }
    return out;
  }
  return v.Clone();
}

Status MergeMap(Value& target, const Value& patch, bool* delete_me);

Status MergeList(Value& target, const Value& patch, std::string_view field) {
  std::string_view key = MergeKey(field);
  // `- $patch: replace` as an item: the patch list (minus the directive) is the new list.
  for (const Value& item : patch.elements()) {
    const Value* p = item.IsObject() ? item.Find(kPatchDirective) : nullptr;
    if (p != nullptr && p->IsString() && p->AsString() == "replace") {
      target = Materialize(patch);
      return OkStatus();
    }
  }
  if (key.empty() || !target.IsArray()) {
    target = Materialize(patch);
    return OkStatus();
  }
  for (const Value& item : patch.elements()) {
    if (!item.IsObject()) {
      target.PushBack(item.Clone());
      continue;
    }
    const Value* directive = item.Find(kPatchDirective);
    if (item.Find(key) == nullptr) {
      return InvalidArgumentError("map: " + Write(item) + " does not contain declared merge key: " +
                                  std::string(key));
    }
    Elements& elems = target.elements();
    if (directive != nullptr && directive->IsString() && directive->AsString() == "delete") {
      std::erase_if(elems, [&](const Value& t) { return t.IsObject() && SameItem(t, item, key); });
      continue;
    }
    Value* match = nullptr;
    for (Value& t : elems) {
      if (t.IsObject() && SameItem(t, item, key)) {
        match = &t;
        break;
      }
    }
    if (match == nullptr) {
      target.PushBack(Value::Object());
      match = &elems.back();
    }
    bool delete_me = false;
    Status s = MergeMap(*match, item, &delete_me);
    if (!s.ok()) return s.WithContext(std::string(field));
  }
  return OkStatus();
}

Status MergeField(Value& target, std::string_view field, const Value& patch) {
  Value* existing = target.Find(field);
  if (patch.IsObject()) {
    if (existing == nullptr) existing = &target.Set(field, Value::Object());
    bool delete_me = false;
    Status s = MergeMap(*existing, patch, &delete_me);
    if (!s.ok()) return s.WithContext(std::string(field));
    if (delete_me) target.Erase(field);
    return OkStatus();
  }
  if (patch.IsArray()) {
    if (existing == nullptr) existing = &target.Set(field, Value::Array());
    return MergeList(*existing, patch, field);
  }
  target.Set(field, patch.Clone());
  return OkStatus();
}

// Merges map `patch` into `target` (made an object if it is not one). Sets *delete_me for
// `$patch: delete`, which removes the map from its parent.
Status MergeMap(Value& target, const Value& patch, bool* delete_me) {
  if (const Value* p = patch.Find(kPatchDirective); p != nullptr) {
    std::string kind = p->IsString() ? p->AsString() : Write(*p);
    if (kind == "delete") {
      *delete_me = true;
      target = Value::Object();
      return OkStatus();
    }
    if (kind == "replace") {
      target = Materialize(patch);
      return OkStatus();
    }
    if (kind != "merge") return InvalidArgumentError("unknown patch type: " + kind + " in map");
  }
  if (!target.IsObject()) target = Value::Object();
  for (const Member& m : patch.members()) {
    const std::string& k = m.first;
    if (k.starts_with(kDeleteFromPrimitiveList)) {
      Value* list = target.Find(std::string_view(k).substr(kDeleteFromPrimitiveList.size()));
      if (list != nullptr && list->IsArray() && m.second.IsArray()) {
        std::erase_if(list->elements(), [&](const Value& e) {
          for (const Value& d : m.second.elements()) {
            if (d == e) return true;
          }
          return false;
        });
      }
      continue;
    }
    if (IsDirective(k)) continue;
    if (m.second.IsNull()) {
      target.Erase(k);
      continue;
    }
    RETURN_IF_ERROR(MergeField(target, k, m.second));
  }
  if (const Value* retain = patch.Find(kRetainKeys); retain != nullptr) {
    if (!retain->IsArray()) return InvalidArgumentError("$retainKeys must be a list");
    std::erase_if(target.members(), [&](const Member& m) {
      for (const Value& k : retain->elements()) {
        if (k.IsString() && k.AsString() == m.first) return false;
      }
      return true;
    });
  }
  return OkStatus();
}

Status MergePatchValue(Value& target, const Value& patch) {
  if (!patch.IsObject()) {
    target = patch.Clone();
    return OkStatus();
  }
  if (!target.IsObject()) target = Value::Object();
  for (const Member& m : patch.members()) {
    if (m.second.IsNull()) {
      target.Erase(m.first);
      continue;
    }
    Value* existing = target.Find(m.first);
    if (existing == nullptr) existing = &target.Set(m.first, Value());
    RETURN_IF_ERROR(MergePatchValue(*existing, m.second));
  }
  return OkStatus();
}

}  // namespace

StatusOr<json::Value> CreateJsonPatch(const json::Value& from, const json::Value& to) {
  Value ops = Value::Array();
  Diff("", from, to, ops);
  return ops;
}

Status ApplyJsonPatch(json::Value& doc, const json::Value& ops) {
  if (!ops.IsArray()) return InvalidArgumentError("json patch: expected an array of operations");
  Value work = doc.Clone();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Value& op = ops.at(i);
    Status s = ApplyOne(work, op);
    if (!s.ok()) {
      std::string what = "json patch operation " + std::to_string(i);
      const Value* name = op.Find("op");
      const Value* path = op.Find("path");
      if (name != nullptr && name->IsString() && path != nullptr && path->IsString()) {
        what += " (" + name->AsString() + " " + path->AsString() + ")";
      }
      return s.WithContext(what);
    }
  }
  doc = std::move(work);
  return OkStatus();
}

Status MergePatch(json::Value& target, const json::Value& patch) {
  return MergePatchValue(target, patch);
}

Status StrategicMerge(json::Value& target, const json::Value& patch) {
  if (!patch.IsObject()) {
    return InvalidArgumentError("strategic merge patch: expected an object, got " +
                                std::string(DescribeType(patch)));
  }
  Value work = target.Clone();
  bool delete_me = false;
  RETURN_IF_ERROR(MergeMap(work, patch, &delete_me));
  target = std::move(work);
  return OkStatus();
}

}  // namespace trainer::json
