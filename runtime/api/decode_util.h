// Small helpers shared by the runtime/api codecs: typed reads of one field of a JSON object that
// name the field's path in errors ("spec.trainer.numNodes: expected integer, got string"), and
// writes that set a key when a value is present and remove it otherwise (Go's omitempty).
// `parent` is the path of `obj`; the key is appended to it in messages.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::api::decode_util {

// obj[key] when present and not null, else nullptr.
const json::Value* Field(const json::Value& obj, std::string_view key);
// The same, for a decoder reading a field of the document: notes Child(parent, key) (see
// FieldPathRecorder). Encoders and helpers use the form above.
const json::Value* Field(const json::Value& obj, std::string_view key, std::string_view parent);

Status WrongType(std::string_view path, std::string_view want, const json::Value& got);

Status ReadString(const json::Value& obj, std::string_view key, std::string_view parent,
                  std::optional<std::string>* out);
// The same for fields without an unset state: absent or null leaves `out` as it is.
Status ReadString(const json::Value& obj, std::string_view key, std::string_view parent,
                  std::string* out);
Status ReadBool(const json::Value& obj, std::string_view key, std::string_view parent,
                std::optional<bool>* out);
Status ReadInt64(const json::Value& obj, std::string_view key, std::string_view parent,
                 std::optional<int64_t>* out);
Status ReadInt64(const json::Value& obj, std::string_view key, std::string_view parent,
                 int64_t* out);
// Integers (or integral doubles) within int32 range.
Status ReadInt32(const json::Value& obj, std::string_view key, std::string_view parent,
                 std::optional<int32_t>* out);
Status ReadStringList(const json::Value& obj, std::string_view key, std::string_view parent,
                      std::optional<std::vector<std::string>>* out);
// A map[string]string (labels, annotations, nodeSelector).
Status ReadStringMap(const json::Value& obj, std::string_view key, std::string_view parent,
                     std::map<std::string, std::string>* out);
// Points `out` at obj[key] when it is an object; nullptr when absent or null.
Status ReadObject(const json::Value& obj, std::string_view key, std::string_view parent,
                  const json::Value** out);
// Points `out` at obj[key] when it is an array; nullptr when absent or null.
Status ReadArray(const json::Value& obj, std::string_view key, std::string_view parent,
                 const json::Value** out);
// How a decoder keeps a sub-tree whole (env, resources): a copy, or, from a document the caller
// gave away (DecodeTrainJob(json::Value&&)), the sub-tree itself, moved out with null left in
// its place. The key keeps its position, so an encode over that document writes the typed value
// back where it was.
enum class Keep { kCopy, kMove };
// `v` kept as `keep` says; kMove requires `v` to be part of a non-const document.
json::Value Kept(const json::Value& v, Keep keep);

// Copies (or, with Keep::kMove, moves) obj[key] when it has type `want`; leaves `out` untouched
// when absent or null.
Status ReadJson(const json::Value& obj, std::string_view key, std::string_view parent,
                json::Type want, json::Value* out, Keep keep = Keep::kCopy);

// json::GetString/GetInt/GetObject/GetArray (common/json) that also note `path`, the field's
// whole path, for FieldPathRecorder. Decoders call these, not the json:: ones, or rather the
// Read* forms above, which build the path only for an error or a recorder (decoding an admitted
// TrainJob is on every admission request, and the path strings were a visible share of it).
Status GetString(const json::Value& obj, std::string_view key, std::string_view path,
                 std::string* out);
Status GetInt(const json::Value& obj, std::string_view key, std::string_view path, int64_t* out);
Status GetObject(const json::Value& obj, std::string_view key, std::string_view path,
                 const json::Value** out);
Status GetArray(const json::Value& obj, std::string_view key, std::string_view path,
                const json::Value** out);

// Records the fields the decoders read, for the check that they match the CRD schema
// (tests/unit/crds, via runtime/api/tools/field_paths.cc). While one lives on a thread, every
// read helper above notes the path it looks up ("spec.runtimePatches[0].manager"), whether or
// not the document has it, and ReadJson also notes its path as kept whole. Without one, noting
// costs a thread_local load.
//   decode_util::FieldPathRecorder rec;
//   (void)DecodeTrainJob(doc);
//   for (const std::string& p : rec.reads()) ...
class FieldPathRecorder {
 public:
  FieldPathRecorder();
  ~FieldPathRecorder();
  FieldPathRecorder(const FieldPathRecorder&) = delete;
  FieldPathRecorder& operator=(const FieldPathRecorder&) = delete;

  const std::set<std::string>& reads() const { return reads_; }
  const std::set<std::string>& kept_whole() const { return kept_whole_; }

  // Called by the helpers; `path` has indices ("a[0].b").
  static void NoteRead(std::string_view path);
  static void NoteKeptWhole(std::string_view path);

 private:
  FieldPathRecorder* previous_;
  std::set<std::string> reads_;
  std::set<std::string> kept_whole_;
};

// A copy of `raw` when it is an object, else an empty object.
json::Value CopyObject(const json::Value* raw);
// raw[key] when raw is an object and raw[key] is an object, else nullptr.
const json::Value* SubObject(const json::Value* raw, std::string_view key);

// Set obj[key] from a present value, erase it otherwise (null json counts as absent).
void Put(json::Value& obj, std::string_view key, const std::optional<std::string>& v);
void Put(json::Value& obj, std::string_view key, const std::optional<bool>& v);
void Put(json::Value& obj, std::string_view key, const std::optional<int32_t>& v);
void Put(json::Value& obj, std::string_view key, const std::optional<int64_t>& v);
void Put(json::Value& obj, std::string_view key, const std::optional<std::vector<std::string>>& v);
void Put(json::Value& obj, std::string_view key, const json::Value& v);

}  // namespace trainer::api::decode_util
