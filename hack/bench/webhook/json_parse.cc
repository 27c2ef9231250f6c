// trainer-bench-json-parse: json::Parse alone, for instruction counts per byte
// (hack/bench/webhook/parse_cost.sh). It parses one document `--count` times, destroying each
// Value before the next parse as the webhook does (after its answer): callgrind counts ParseOne
// and DestroyOne apart with --toggle-collect.
//
//   trainer-bench-json-parse --file FILE [--event TYPE] [--skip a.b.*.c ...] [--count 1000]
// --event wraps the (compacted) document as a watch event {"type":TYPE,"object":...}, what the
// controller's watches parse; --skip leaves a path out as json::SkipPaths does (dots between
// keys). Prints the bytes parsed per document and the count.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/files/files.h"
#include "common/flags/flags.h"
#include "common/json/json.h"

namespace trainer::bench {

// Not inlined: callgrind's --toggle-collect names them.
[[gnu::noinline]] StatusOr<json::Value> ParseOne(const std::string& text,
                                                 const json::SkipPaths& skip) {
  return skip.empty() ? json::Parse(text) : json::Parse(text, skip);
}

[[gnu::noinline]] void DestroyOne(StatusOr<json::Value>& v) { v = json::Value(); }

std::vector<std::string> SplitDots(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string_view::npos; start = dot + 1) {
    out.emplace_back(path.substr(start, dot - start));
  }
  out.emplace_back(path.substr(start));
  return out;
}

int Main(int argc, char** argv) {
  std::string file, event;
  std::vector<std::string> skips;
  int count = 1000;
  flags::FlagSet fs("trainer-bench-json-parse",
                    "Parses one JSON document --count times, for callgrind "
                    "(hack/bench/webhook/parse_cost.sh).",
                    {
                        {"file", "The document.", flags::String(&file, "FILE")},
                        {"event", "Wrap the document as a watch event of this type.",
                         flags::String(&event, "TYPE")},
                        {"skip", "A path to leave out (keys between dots, * for any); repeatable.",
                         flags::Append(&skips, "PATH")},
                        {"count", "Parses.", flags::Int(&count, 0, 1'000'000'000)},
                    });
  if (std::optional<int> code = flags::ParseMain(fs, argc, argv, {"file"})) return *code;
  json::SkipPaths skip;
  for (const std::string& path : skips) skip.Add(SplitDots(path));
  StatusOr<std::string> text = files::ReadFile(file);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    return 1;
  }
  StatusOr<json::Value> doc = json::Parse(*text);
  if (!doc.ok()) {
    std::fprintf(stderr, "%s: %s\n", file.c_str(), doc.status().ToString().c_str());
    return 1;
  }
  // Compact, as the apiserver and kubectl send JSON.
  std::string input = json::Write(*doc);
  if (!event.empty()) {
    std::string wrapped = "{\"type\":";
    json::AppendString(wrapped, event);
    wrapped += ",\"object\":" + input + "}";
    input = std::move(wrapped);
  }
  for (int i = 0; i < count; ++i) {
    StatusOr<json::Value> v = ParseOne(input, skip);
    if (!v.ok()) {
      std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
      return 1;
    }
    DestroyOne(v);
  }
  std::printf("parsed %d documents of %zu bytes\n", count, input.size());
  return 0;
}

}  // namespace trainer::bench

int main(int argc, char** argv) { return trainer::bench::Main(argc, argv); }
