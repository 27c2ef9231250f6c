// JSON Patch (RFC 6902/6901), JSON Merge Patch (RFC 7386) and Kubernetes strategic merge patch.
// The strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch (mergeMap/mergeSlice)
// with the merge keys of the core/v1 and JobSet fields that appear in pod and JobSet templates.
#include "common/json/patch.h"

#include <algorithm>
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
// Strategic merge (apimachinery strategicpatch: mergeMap, mergeSlice, normalizeElementOrder).

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

bool IsDirective(std::string_view key) {
  return key == kPatchDirective || key == kRetainKeys || key.starts_with(kSetElementOrder) ||
         key.starts_with(kDeleteFromPrimitiveList);
}

// The patchMergeKey of a list field (from the core/v1 and JobSet struct tags), or "" for lists
// that are replaced.
// Ports are the same item when containerPort and protocol (default TCP) both match.
constexpr std::string_view kPortKey = "containerPort";

std::string_view MergeKey(std::string_view field) {
  static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
      {"containers", "name"},
      {"initContainers", "name"},
      {"ephemeralContainers", "name"},
      {"env", "name"},
      {"volumes", "name"},
      {"imagePullSecrets", "name"},
      {"schedulingGates", "name"},
      {"resourceClaims", "name"},
      {"replicatedJobs", "name"},
      {"hostAliases", "ip"},
      {"volumeMounts", "mountPath"},
      {"volumeDevices", "devicePath"},
      {"ports", "containerPort"},
      {"topologySpreadConstraints", "topologyKey"},
  };
  for (const auto& [name, key] : kKeys) {
    if (name == field) return key;
  }
  return "";
}

// Two list items are the same element: equal merge-key values (and, for ports, the same
// protocol with "TCP" as the default: the list-map key core/v1 declares for ports).
bool SameItem(const Value& a, const Value& b, std::string_view key) {
  const Value* ka = a.Find(key);
  const Value* kb = b.Find(key);
  if (ka == nullptr || kb == nullptr || *ka != *kb) return false;
  if (key == kPortKey) {
    auto protocol = [](const Value& v) -> std::string {
      const Value* p = v.Find("protocol");
      return p != nullptr && p->IsString() ? p->AsString() : "TCP";
    };
    return protocol(a) == protocol(b);
  }
  return true;
}

// Index of the first item of `list` that is the same element as `item`, or -1.
ptrdiff_t IndexOf(const Elements& list, const Value& item, std::string_view key) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (SameItem(list[i], item, key)) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

// The same for a list of pointers (the patch's items).
ptrdiff_t IndexOf(const std::vector<const Value*>& list, const Value& item, std::string_view key) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (SameItem(*list[i], item, key)) return static_cast<ptrdiff_t>(i);
  }
  return -1;
}

// What SameItem reads of each item (its merge key, and the protocol of ports): the target's
// order, kept while its items are merged, without copying them whole.
Elements Identities(const Elements& items, std::string_view key) {
  Elements out;
  out.reserve(items.size());
  for (const Value& item : items) {
    Value id = Value::Object();
    if (const Value* k = item.Find(key)) id.Set(key, k->Clone());
    if (const Value* p = item.Find("protocol"); p != nullptr && key == kPortKey) {
      id.Set("protocol", p->Clone());
    }
    out.push_back(std::move(id));
  }
  return out;
}

// A patch value taken as is where the target had nothing, minus what must not reach the result:
// directive keys and items, and nulls in maps (upstream drops unmatched nulls).
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
      if (e.IsObject() && e.Find(kPatchDirective) != nullptr) continue;
      out.PushBack(Materialize(e));
    }
    return out;
  }
  return v.Clone();
}

std::string ShortText(const Value& v) {
  std::string text = Write(v);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

Status MergeMap(Value& target, const Value& patch);

// mergeSliceWithSpecialElements: `$patch: delete` items remove matching target items,
// `$patch: replace` makes the other patch items the whole list. Returns the ordinary items.
StatusOr<std::vector<const Value*>> ApplyListDirectives(Value& target, const Value& patch,
                                                        std::string_view key, bool* replaced) {
  std::vector<const Value*> items;
  bool replace = false;
  for (const Value& item : patch.elements()) {
    const Value* directive = item.Find(kPatchDirective);
    if (directive == nullptr) {
      items.push_back(&item);
      continue;
    }
    std::string kind = directive->IsString() ? directive->AsString() : Write(*directive);
    if (kind == "delete") {
      if (item.Find(key) == nullptr) {
        return InvalidArgumentError("map: " + ShortText(item) +
                                    " does not contain declared merge key: " + std::string(key));
      }
      std::erase_if(target.elements(), [&](const Value& t) { return SameItem(t, item, key); });
    } else if (kind == "replace") {
      replace = true;
    } else if (kind == "merge") {
      return InvalidArgumentError("merging lists cannot yet be specified in the patch");
    } else {
      return InvalidArgumentError("unknown patch type: " + kind + " in map: " + ShortText(item));
    }
  }
  if (replace) {
    Value list = Value::Array();
    for (const Value* item : items) list.PushBack(Materialize(*item));
    target = std::move(list);
    items.clear();
  }
  *replaced = replace;
  return items;
}

// A keyed list: items merge by key; then, as upstream's normalizeElementOrder, the items the
// patch names come in patch order and the others keep their relative target order, a target
// item going first only when it preceded, in the target, the patch item it is compared with
// (so new items land before the target's untouched ones).
Status MergeKeyedList(Value& target, const Value& patch, std::string_view key) {
  for (const Value* list : {static_cast<const Value*>(&target), &patch}) {
    for (const Value& item : list->elements()) {
      if (!item.IsObject()) {
        return InvalidArgumentError("list element types are not identical: " + ShortText(*list));
      }
    }
  }
  bool replaced = false;
  ASSIGN_OR_RETURN(std::vector<const Value*> items,
                   ApplyListDirectives(target, patch, key, &replaced));
  if (replaced) return OkStatus();
  const Elements server = Identities(target.elements(), key);
  Elements merged = std::move(target.elements());
  for (const Value* item : items) {
    if (item->Find(key) == nullptr) {
      return InvalidArgumentError("map: " + ShortText(*item) +
                                  " does not contain declared merge key: " + std::string(key));
    }
    ptrdiff_t at = IndexOf(merged, *item, key);
    if (at >= 0) {
      RETURN_IF_ERROR(MergeMap(merged[static_cast<size_t>(at)], *item));
    } else {
      merged.push_back(Materialize(*item));
    }
  }
  // Partition, then order each part (stable: by first index in its reference list).
  std::vector<Value> in_patch, server_only;
  for (Value& v : merged) {
    (IndexOf(items, v, key) >= 0 ? in_patch : server_only).push_back(std::move(v));
  }
  std::stable_sort(in_patch.begin(), in_patch.end(), [&](const Value& a, const Value& b) {
    return IndexOf(items, a, key) < IndexOf(items, b, key);
  });
  Elements out;
  size_t i = 0, j = 0;
  while (i < server_only.size() || j < in_patch.size()) {
    bool take_left = false;
    if (j >= in_patch.size()) {
      take_left = true;
    } else if (i < server_only.size()) {
      ptrdiff_t li = IndexOf(server, server_only[i], key);
      ptrdiff_t ri = IndexOf(server, in_patch[j], key);
      take_left = li >= 0 && ri >= 0 && li < ri;
    }
    out.push_back(std::move(take_left ? server_only[i++] : in_patch[j++]));
  }
  target.elements() = std::move(out);
  return OkStatus();
}

// Applies `$deleteFromPrimitiveList/<field>`: removes the listed values from the target list.
void DeleteFromPrimitiveList(Value& target, std::string_view field, const Value& values) {
  Value* list = target.Find(field);
  if (list == nullptr || !list->IsArray() || !values.IsArray()) return;
  std::erase_if(list->elements(), [&](const Value& e) {
    for (const Value& d : values.elements()) {
      if (d == e) return true;
    }
    return false;
  });
}

// `$retainKeys`: every key the patch sets must be listed; target keys not listed are cleared.
Status ApplyRetainKeys(Value& target, const Value& patch) {
  const Value* retain = patch.Find(kRetainKeys);
  if (retain == nullptr) return OkStatus();
  if (!retain->IsArray()) return InvalidArgumentError("invalid patch format of retainKeys");
  auto listed = [&](std::string_view k) {
    for (const Value& r : retain->elements()) {
      if (r.IsString() && r.AsString() == k) return true;
    }
    return false;
  };
  for (const Member& m : patch.members()) {
    if (m.second.IsNull() || IsDirective(m.first)) continue;
    if (!listed(m.first)) return InvalidArgumentError("invalid patch format of retainKeys");
  }
  std::erase_if(target.members(), [&](const Member& m) { return !listed(m.first); });
  return OkStatus();
}

// mergeMap: `$patch: replace` takes the patch map, `$patch: delete` leaves an empty map.
Status MergeMap(Value& target, const Value& patch) {
  if (const Value* p = patch.Find(kPatchDirective); p != nullptr) {
    std::string kind = p->IsString() ? p->AsString() : Write(*p);
    if (kind == "replace") {
      target = Materialize(patch);
      return OkStatus();
    }
    if (kind == "delete") {
      target = Value::Object();
      return OkStatus();
    }
    return InvalidArgumentError("unknown patch type: " + kind + " in map: " + ShortText(patch));
  }
  if (!target.IsObject()) target = Value::Object();
  RETURN_IF_ERROR(ApplyRetainKeys(target, patch));
  for (const Member& m : patch.members()) {
    const std::string& k = m.first;
    const Value& pv = m.second;
    if (k.starts_with(kDeleteFromPrimitiveList)) {
      DeleteFromPrimitiveList(target, std::string_view(k).substr(kDeleteFromPrimitiveList.size()),
                              pv);
      continue;
    }
    if (IsDirective(k)) continue;  // $setElementOrder is not honoured (documented)
    if (pv.IsNull()) {
      target.Erase(k);
      continue;
    }
    Value* existing = target.Find(k);
    if (existing == nullptr || existing->type() != pv.type() ||
        (existing->IsNumber() && pv.IsNumber())) {
      target.Set(k, Materialize(pv));
      continue;
    }
    Status s;
    if (pv.IsObject()) {
      s = MergeMap(*existing, pv);
    } else if (pv.IsArray() && !MergeKey(k).empty()) {
      s = MergeKeyedList(*existing, pv, MergeKey(k));
    } else {
      *existing = Materialize(pv);
    }
    if (!s.ok()) return s.WithContext(k);
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

StatusOr<json::Value> CreateJsonPatchAt(std::string_view at, const json::Value* from,
                                        const json::Value& to) {
  Value ops = Value::Array();
  if (from == nullptr) {
    Value op = Op("add", std::string(at));
    op.Set("value", to.Clone());
    ops.PushBack(std::move(op));
  } else {
    Diff(std::string(at), *from, to, ops);
  }
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
  Value work = target.Clone();
  RETURN_IF_ERROR(StrategicMergeNonAtomic(work, patch));
  target = std::move(work);
  return OkStatus();
}

Status StrategicMergeNonAtomic(json::Value& target, const json::Value& patch) {
  if (!patch.IsObject()) {
    return InvalidArgumentError("strategic merge patch: expected an object, got " +
                                std::string(DescribeType(patch)));
  }
  return MergeMap(target, patch);
}

}  // namespace trainer::json
