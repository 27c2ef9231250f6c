// Fuzz target: the watch-stream frame parser (common/kube/watch_decoder.h) at arbitrary chunk
// boundaries. The first input byte seeds the chunk sizes; the rest is the stream. Property: the
// stream fed in pieces gives exactly the events (types and objects), the outcome (ok or an
// error) and the leftover bytes that the stream fed whole gives; every framed event decodes the
// same with DecodeWatchEvent.
#include "common/kube/watch_decoder.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json/json.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

struct Outcome {
  std::vector<std::string> events;  // "<TYPE> <canonical object>"
  bool ok = true;
  size_t buffered = 0;
};

std::string Describe(const kube::WatchEvent& e) {
  return std::string(kube::WatchEventTypeName(e.type)) + " " + json::WriteCanonical(e.object);
}

Outcome Run(std::string_view stream, uint8_t seed, bool whole) {
  kube::WatchDecoder decoder;
  Outcome out;
  auto on_event = [&out](kube::WatchEvent& e) {
    out.events.push_back(Describe(e));
    return true;
  };
  uint32_t state = seed * 2654435761u + 1;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t n = stream.size() - pos;
    if (!whole) {
      state = state * 1664525u + 1013904223u;
      // Mostly tiny pieces (1-8 bytes), sometimes up to 256, so splits land everywhere.
      n = std::min<size_t>(n,
                           (state >> 24) < 200 ? 1 + ((state >> 8) & 7) : 1 + ((state >> 8) & 255));
    }
    Status s = decoder.Feed(stream.substr(pos, n), on_event);
    pos += n;
    if (!s.ok()) {
      out.ok = false;
      return out;
    }
  }
  out.buffered = decoder.buffered();
  return out;
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  if (size == 0) {
    return 0;
  }
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  fuzz::Outcome whole = fuzz::Run(stream, data[0], /*whole=*/true);
  fuzz::Outcome pieces = fuzz::Run(stream, data[0], /*whole=*/false);
  FUZZ_CHECK(pieces.events == whole.events,
             "chunking changed the events: " + std::to_string(pieces.events.size()) + " vs " +
                 std::to_string(whole.events.size()) + " whole");
  FUZZ_CHECK(pieces.ok == whole.ok,
             std::string("chunking changed the outcome: whole ") + (whole.ok ? "ok" : "error"));
  FUZZ_CHECK(pieces.buffered == whole.buffered,
             "chunking changed the leftover: " + std::to_string(pieces.buffered) + " vs " +
                 std::to_string(whole.buffered));
  return 0;
}
