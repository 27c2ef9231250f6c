// Typed field reads and omitempty-style writes for the runtime/api codecs.
#include "runtime/api/decode_util.h"

#include <limits>
#include <utility>

namespace trainer::api::decode_util {

namespace {
thread_local FieldPathRecorder* t_recorder = nullptr;

void Note(std::string_view parent, std::string_view key) {
  if (t_recorder != nullptr) FieldPathRecorder::NoteRead(json::Child(parent, key));
}
}  // namespace

FieldPathRecorder::FieldPathRecorder() : previous_(t_recorder) { t_recorder = this; }
FieldPathRecorder::~FieldPathRecorder() { t_recorder = previous_; }

void FieldPathRecorder::NoteRead(std::string_view path) {
  if (t_recorder != nullptr) t_recorder->reads_.emplace(path);
}

void FieldPathRecorder::NoteKeptWhole(std::string_view path) {
  if (t_recorder != nullptr) t_recorder->kept_whole_.emplace(path);
}

const json::Value* Field(const json::Value& obj, std::string_view key) {
  const json::Value* v = obj.Find(key);
  return v == nullptr || v->IsNull() ? nullptr : v;
}

const json::Value* Field(const json::Value& obj, std::string_view key, std::string_view parent) {
  Note(parent, key);
  return Field(obj, key);
}

Status GetString(const json::Value& obj, std::string_view key, std::string_view path,
                 std::string* out) {
  FieldPathRecorder::NoteRead(path);
  return json::GetString(obj, key, path, out);
}

Status GetInt(const json::Value& obj, std::string_view key, std::string_view path, int64_t* out) {
  FieldPathRecorder::NoteRead(path);
  return json::GetInt(obj, key, path, out);
}

Status GetObject(const json::Value& obj, std::string_view key, std::string_view path,
                 const json::Value** out) {
  FieldPathRecorder::NoteRead(path);
  return json::GetObject(obj, key, path, out);
}

Status GetArray(const json::Value& obj, std::string_view key, std::string_view path,
                const json::Value** out) {
  FieldPathRecorder::NoteRead(path);
  return json::GetArray(obj, key, path, out);
}

Status WrongType(std::string_view path, std::string_view want, const json::Value& got) {
  return InvalidArgumentError(std::string(path) + ": expected " + std::string(want) + ", got " +
                              std::string(json::DescribeType(got)));
}

Status ReadString(const json::Value& obj, std::string_view key, std::string_view parent,
                  std::optional<std::string>* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return WrongType(json::Child(parent, key), "string", *v);
  *out = v->AsString();
  return OkStatus();
}

Status ReadString(const json::Value& obj, std::string_view key, std::string_view parent,
                  std::string* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return WrongType(json::Child(parent, key), "string", *v);
  *out = v->AsString();
  return OkStatus();
}

Status ReadBool(const json::Value& obj, std::string_view key, std::string_view parent,
                std::optional<bool>* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (!v->IsBool()) return WrongType(json::Child(parent, key), "boolean", *v);
  *out = v->AsBool();
  return OkStatus();
}

Status ReadInt64(const json::Value& obj, std::string_view key, std::string_view parent,
                 int64_t* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (v->IsInt()) {
    *out = v->AsInt();
    return OkStatus();
  }
  return json::GetInt(obj, key, json::Child(parent, key), out);  // an integral double, or the error
}

Status ReadInt64(const json::Value& obj, std::string_view key, std::string_view parent,
                 std::optional<int64_t>* out) {
  if (Field(obj, key, parent) == nullptr) return OkStatus();
  int64_t value = 0;
  RETURN_IF_ERROR(ReadInt64(obj, key, parent, &value));
  *out = value;
  return OkStatus();
}

Status ReadInt32(const json::Value& obj, std::string_view key, std::string_view parent,
                 std::optional<int32_t>* out) {
  std::optional<int64_t> wide;
  RETURN_IF_ERROR(ReadInt64(obj, key, parent, &wide));
  if (!wide) return OkStatus();
  if (*wide < std::numeric_limits<int32_t>::min() || *wide > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError(json::Child(parent, key) + ": " + std::to_string(*wide) +
                                " overflows int32");
  }
  *out = static_cast<int32_t>(*wide);
  return OkStatus();
}

Status ReadStringList(const json::Value& obj, std::string_view key, std::string_view parent,
                      std::optional<std::vector<std::string>>* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  const std::string path = json::Child(parent, key);
  if (!v->IsArray()) return WrongType(path, "array", *v);
  std::vector<std::string> items;
  items.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json::Value& item = v->at(i);
    if (!item.IsString()) return WrongType(json::Index(path, i), "string", item);
    items.push_back(item.AsString());
  }
  *out = std::move(items);
  return OkStatus();
}

Status ReadStringMap(const json::Value& obj, std::string_view key, std::string_view parent,
                     std::map<std::string, std::string>* out) {
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  const std::string path = json::Child(parent, key);
  if (!v->IsObject()) return WrongType(path, "object", *v);
  for (const auto& [k, item] : v->members()) {
    if (!item.IsString()) return WrongType(json::Child(path, k), "string", item);
    (*out)[k] = item.AsString();
  }
  return OkStatus();
}

namespace {

// Points `out` at obj[key] when `(value.*is)()`; nullptr when absent or null.
Status ReadContainer(const json::Value& obj, std::string_view key, std::string_view parent,
                     bool (json::Value::*is)() const, std::string_view type_name,
                     const json::Value** out) {
  *out = nullptr;
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (!(v->*is)()) return WrongType(json::Child(parent, key), type_name, *v);
  *out = v;
  return OkStatus();
}

}  // namespace

Status ReadObject(const json::Value& obj, std::string_view key, std::string_view parent,
                  const json::Value** out) {
  return ReadContainer(obj, key, parent, &json::Value::IsObject, "object", out);
}

Status ReadArray(const json::Value& obj, std::string_view key, std::string_view parent,
                 const json::Value** out) {
  return ReadContainer(obj, key, parent, &json::Value::IsArray, "array", out);
}

json::Value Kept(const json::Value& v, Keep keep) {
  // The caller owns the (non-const) document: moving out of it is what it asked for.
  return keep == Keep::kMove ? std::move(const_cast<json::Value&>(v)) : v.Clone();
}

Status ReadJson(const json::Value& obj, std::string_view key, std::string_view parent,
                json::Type want, json::Value* out, Keep keep) {
  if (t_recorder != nullptr) FieldPathRecorder::NoteKeptWhole(json::Child(parent, key));
  const json::Value* v = Field(obj, key, parent);
  if (v == nullptr) return OkStatus();
  if (v->type() != want) return WrongType(json::Child(parent, key), json::TypeName(want), *v);
  *out = Kept(*v, keep);
  return OkStatus();
}

json::Value CopyObject(const json::Value* raw) {
  return raw != nullptr && raw->IsObject() ? raw->Clone() : json::Value::Object();
}

const json::Value* SubObject(const json::Value* raw, std::string_view key) {
  if (raw == nullptr || !raw->IsObject()) return nullptr;
  const json::Value* v = raw->Find(key);
  return v != nullptr && v->IsObject() ? v : nullptr;
}

namespace {
template <typename T>
void PutScalar(json::Value& obj, std::string_view key, const std::optional<T>& v) {
  if (v) {
    obj.Set(key, json::Value(*v));
  } else {
    obj.Erase(key);
  }
}
}  // namespace

void Put(json::Value& obj, std::string_view key, const std::optional<std::string>& v) {
  PutScalar(obj, key, v);
}
void Put(json::Value& obj, std::string_view key, const std::optional<bool>& v) {
  PutScalar(obj, key, v);
}
void Put(json::Value& obj, std::string_view key, const std::optional<int32_t>& v) {
  if (v) {
    obj.Set(key, json::Value(static_cast<int64_t>(*v)));
  } else {
    obj.Erase(key);
  }
}
void Put(json::Value& obj, std::string_view key, const std::optional<int64_t>& v) {
  PutScalar(obj, key, v);
}
void Put(json::Value& obj, std::string_view key, const std::optional<std::vector<std::string>>& v) {
  if (v) {
    obj.Set(key, json::Value::StringArray(*v));
  } else {
    obj.Erase(key);
  }
}
void Put(json::Value& obj, std::string_view key, const json::Value& v) {
  if (v.IsNull()) {
    obj.Erase(key);
  } else {
    obj.Set(key, v.Clone());
  }
}

}  // namespace trainer::api::decode_util
