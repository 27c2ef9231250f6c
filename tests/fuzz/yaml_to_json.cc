// Fuzz target: YAML -> JSON (common/yaml) and the JSON reader/writer behind it. Properties of
// every document ParseYamlDocuments accepts:
//   - JSON round trip: json::Parse(json::Write(doc)) == doc, and writing again gives the same text;
//   - YAML round trip: ParseYaml(ToYaml(doc)) == doc (the contract in yaml.h);
//   - ParseYaml agrees with ParseYamlDocuments: one document (or none, giving null) or an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/yaml/yaml.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<std::vector<json::Value>> docs = yaml::ParseYamlDocuments(text);
  StatusOr<json::Value> single = yaml::ParseYaml(text);
  if (!docs.ok()) {
    FUZZ_CHECK(!single.ok(),
               "ParseYaml accepted what ParseYamlDocuments rejected: " + docs.status().ToString());
    return 0;
  }
  if (docs->size() == 1) {
    FUZZ_CHECK(single.ok() && *single == docs->front(),
               "ParseYaml disagrees with the only document of ParseYamlDocuments");
  } else if (docs->empty()) {
    FUZZ_CHECK(single.ok() && single->IsNull(), "an empty stream is not null for ParseYaml");
  }
  for (const json::Value& doc : *docs) {
    std::string written = json::Write(doc);
    StatusOr<json::Value> reparsed = json::Parse(written);
    FUZZ_CHECK(reparsed.ok(), "json::Parse rejects json::Write output: " +
                                  reparsed.status().ToString() + "\n  " + written);
    FUZZ_CHECK(*reparsed == doc, "JSON round trip changed the value:\n  " + written);
    FUZZ_CHECK(json::Write(*reparsed) == written,
               "JSON round trip changed the text:\n  " + written);
    FUZZ_CHECK(json::WriteCanonical(*reparsed) == json::WriteCanonical(doc),
               "canonical text differs after a round trip:\n  " + written);

    std::string yaml_text = yaml::ToYaml(doc);
    StatusOr<json::Value> from_yaml = yaml::ParseYaml(yaml_text);
    FUZZ_CHECK(from_yaml.ok(), "ParseYaml rejects ToYaml output: " + from_yaml.status().ToString() +
                                   "\n" + yaml_text);
    FUZZ_CHECK(*from_yaml == doc, "YAML round trip changed the value:\n  json: " + written +
                                      "\n  yaml:\n" + yaml_text +
                                      "  back: " + json::Write(*from_yaml));
  }
  return 0;
}
