// WatchDecoder implementation: an incremental JSON framer plus event decoding.
#include "common/kube/watch_decoder.h"

#include <cstring>

#include "common/json/json.h"

namespace trainer::kube {

StatusOr<WatchEvent> DecodeWatchEvent(std::string_view frame, const json::SkipPaths* skip) {
  StatusOr<json::Value> parsed = skip != nullptr ? json::Parse(frame, *skip) : json::Parse(frame);
  if (!parsed.ok()) return parsed.status().WithContext("decoding watch event");
  json::Value& root = *parsed;
  const json::Value* type = root.Find("type");
  if (type == nullptr || !type->IsString()) {
    return InvalidArgumentError("decoding watch event: missing \"type\"");
  }
  WatchEvent event;
  const std::string& t = type->AsString();
  if (t == "ADDED") {
    event.type = WatchEventType::kAdded;
  } else if (t == "MODIFIED") {
    event.type = WatchEventType::kModified;
  } else if (t == "DELETED") {
    event.type = WatchEventType::kDeleted;
  } else if (t == "BOOKMARK") {
    event.type = WatchEventType::kBookmark;
  } else if (t == "ERROR") {
    event.type = WatchEventType::kError;
  } else {
    return InvalidArgumentError("decoding watch event: unknown type \"" + t + "\"");
  }
  json::Value* object = root.Find("object");
  if (object == nullptr || !object->IsObject()) {
    return InvalidArgumentError("decoding watch event: missing \"object\"");
  }
  event.object = std::move(*object);
  return event;
}

// Strings are most of an event's bytes (a ConfigMap's data, managedFields keys): memchr finds
// their ends rather than the byte loop of Feed. Linear: each quote and backslash is searched for
// once.
void WatchDecoder::SkipString() {
  const char* const end = buf_.data() + buf_.size();
  const char* p = buf_.data() + scan_;
  const char* quote = nullptr;  // the next '"' at or after p (end: none), until p passes it
  while (p < end) {
    if (escape_) {  // the byte after a backslash never ends the string
      escape_ = false;
      ++p;
      continue;
    }
    if (quote == nullptr || quote < p) {
      quote = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
      if (quote == nullptr) quote = end;
    }
    const char* backslash =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(quote - p)));
    if (backslash != nullptr) {
      p = backslash + 1;
      escape_ = true;
      continue;
    }
    p = quote;
    if (quote < end) {
      ++p;
      in_string_ = false;
      break;
    }
  }
  scan_ = static_cast<size_t>(p - buf_.data());
}

Status WatchDecoder::Feed(std::string_view data, const std::function<bool(WatchEvent&)>& on_event) {
  buf_.append(data);
  size_t consumed = 0;  // bytes of buf_ already emitted or skipped
  Status result;
  while (scan_ < buf_.size()) {
    if (in_string_) {
      SkipString();
      continue;
    }
    const char c = buf_[scan_];
    if (depth_ == 0) {
      // Between events only whitespace may appear.
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++scan_;
        consumed = scan_;
        continue;
      }
      if (c != '{') {
        result = InvalidArgumentError("decoding watch stream: unexpected byte '" +
                                      std::string(1, c) + "' between events");
        break;
      }
    }
    ++scan_;
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        StatusOr<WatchEvent> event = DecodeWatchEvent(
            std::string_view(buf_).substr(consumed, scan_ - consumed), skip_ ? &*skip_ : nullptr);
        consumed = scan_;
        if (!event.ok()) {
          result = event.status();
          break;
        }
        if (!on_event(*event)) {
          result = CancelledError("watch handler stopped the stream");
          break;
        }
      }
    }
  }
  if (!result.ok()) {
    buf_.clear();
    scan_ = 0;
    depth_ = 0;
    in_string_ = escape_ = false;
    return result;
  }
  buf_.erase(0, consumed);
  scan_ -= consumed;
  if (buf_.size() > max_event_bytes_) {
    return InvalidArgumentError("decoding watch stream: event larger than " +
                                std::to_string(max_event_bytes_) + " bytes");
  }
  return OkStatus();
}

}  // namespace trainer::kube
