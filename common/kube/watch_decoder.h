// WatchDecoder: turns the bytes of a watch response, in whatever pieces the network delivers
// them, into WatchEvents. The apiserver writes one JSON object per event ({"type": "ADDED",
// "object": {...}}); we frame by JSON structure (braces outside strings), not by newlines, like
// the Go json.Decoder client-go uses, so an event split at any byte, several events in one chunk
// and multi-megabyte objects all decode. Scanning resumes where it stopped, so a large object
// arriving in many small pieces costs linear time.
//
//   WatchDecoder d;
//   Status s = d.Feed(chunk, [](WatchEvent& e) { ...; return true; });
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/kube/types.h"
#include "common/status/status.h"

namespace trainer::kube {

// Decodes one framed event. Unknown event types are an error. `skip` (paths from the event's
// root, e.g. {"object", "metadata", "managedFields"}) is left out of the object.
StatusOr<WatchEvent> DecodeWatchEvent(std::string_view frame,
                                      const json::SkipPaths* skip = nullptr);

class WatchDecoder {
 public:
  // Largest event we buffer before declaring the stream broken (etcd's own limit is 1.5 MiB per
  // object by default; this leaves room for configured larger limits).
  static constexpr size_t kDefaultMaxEventBytes = 64u << 20;

  explicit WatchDecoder(size_t max_event_bytes = kDefaultMaxEventBytes)
      : max_event_bytes_(max_event_bytes) {}
  // Leaves `skip` (paths from each event's object, as WatchOptions::skip) out of the objects.
  explicit WatchDecoder(const json::SkipPaths* skip)
      : max_event_bytes_(kDefaultMaxEventBytes),
        skip_(skip != nullptr ? std::optional(skip->Under({"object"})) : std::nullopt) {}

  // Appends `data`; calls `on_event` for every event completed by it, in order. Returns an
  // error for malformed input; kCancelled if `on_event` returned false (the rest of `data` is
  // dropped).
  Status Feed(std::string_view data, const std::function<bool(WatchEvent&)>& on_event);

  // Bytes of an incomplete event still buffered (non-zero when a stream ends mid-event).
  size_t buffered() const { return buf_.size(); }

 private:
  // Moves scan_ past the string being scanned (to just after its closing quote, in_string_
  // cleared) or to the end of buf_ when the string goes on.
  void SkipString();

  std::string buf_;
  size_t scan_ = 0;  // next byte of buf_ to scan
  int depth_ = 0;    // brace/bracket depth at scan_
  bool in_string_ = false;
  bool escape_ = false;
  const size_t max_event_bytes_;
  const std::optional<json::SkipPaths> skip_;  // from the event's root
};

}  // namespace trainer::kube
