// YAML <-> json::Value, typed the way Kubernetes reads YAML (sigs.k8s.io/yaml over go-yaml v2).
//
// Parsing turns YAML into the same value that `sigs.k8s.io/yaml.YAMLToJSONStrict` followed by
// json::Parse would give, so a manifest means the same to us as to kubectl and the apiserver:
//   - plain (unquoted) scalars are resolved with YAML 1.1 rules: true/True/TRUE/yes/on/y (and the
//     false forms) are booleans, null/~/empty are null, 0755 is octal (493), 0x1F hex, 0b101
//     binary, 1_000 is 1000, 1e3 and 1.5 are floats; anything else is a string.
//   - quoted and block (| >) scalars are always strings; `!!str 1` is a string.
//   - a float with an integral value that fits int64 becomes an integer (Go's JSON writes 1e3
//     as 1000); .nan / .inf are errors (JSON cannot hold them).
//   - timestamps stay strings (go-yaml v2 keeps them as strings for untyped targets).
//   - a key set twice in one mapping is an error ("key \"a\" already set in map"); keys that
//     are numbers or booleans become their decimal/"true" text; null or collection keys are
//     errors. Merge keys (`<<: *base`) work, explicit keys win over merged ones.
//   - anchors and aliases are expanded (bounded: excessive aliasing is an error); nesting is
//     bounded (yaml-cpp's parser stops at 500 nested nodes, aliases may not build values deeper
//     than json::Parse's 10000), and errors carry positions: "yaml: line 3, column 5: ...".
//
//   ASSIGN_OR_RETURN(json::Value obj, yaml::ParseYaml(text));
//   std::string text = yaml::ToYaml(obj);   // block style, keys in insertion order
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::yaml {

// Parses a stream holding at most one document. An empty stream (or one holding only comments
// or a null document) yields a null value; more than one non-empty document is an error.
StatusOr<json::Value> ParseYaml(std::string_view text);

// A key set again in one mapping, as go-yaml v2's strict decoding reports it: the line (from 1)
// where the later value starts, and the key as Go's %#v prints it ("\"port\"", or 1 for a
// number key).
struct DuplicateKey {
  int line = 0;
  std::string key;
};

// ParseYaml as go-yaml v2's non-strict decoding reads a key set twice: the later value wins and
// the key is appended to `duplicates` (in the order strict decoding reports them: a value's own
// duplicates before its key's) instead of failing. For upstream's strict decoders, which check
// types on the non-strict result before they report duplicates.
StatusOr<json::Value> ParseYamlKeepingLast(std::string_view text,
                                           std::vector<DuplicateKey>* duplicates);

// Parses a multi-document stream ("---" separated). Documents that are empty or null are
// skipped, as kubectl does.
StatusOr<std::vector<json::Value>> ParseYamlDocuments(std::string_view text);

// Writes `v` as block-style YAML ending in a newline, keys in insertion order. Strings are
// quoted whenever a plain scalar would read back as something else ("true", "1", "", "null",
// ": " inside ...); multi-line strings are literal blocks (`|`). Empty maps and lists are `{}`
// and `[]`. Lists inside maps are not indented (kubectl style). ParseYaml(ToYaml(v)) == v.
std::string ToYaml(const json::Value& v);

}  // namespace trainer::yaml
