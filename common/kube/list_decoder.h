// ListDecoder: decodes a List response (one unpaged list of a whole collection) as its bytes
// arrive, handing each item to a callback as soon as it is complete, so the items of a large
// list are never all in memory (an informer's first list of 100,000 JobSets is ~260 MB of JSON).
// Items are the elements of the root object's "items" array, framed by JSON structure (braces
// outside strings) and parsed one at a time; everything else (kind, apiVersion, metadata with
// resourceVersion and continue) is kept and parsed at the end, whatever the member order.
//
//   ListDecoder d(&skip);                         // skip: parts of each item left out (or nullptr)
//   RETURN_IF_ERROR(d.Feed(chunk, [](json::Value& item) { ...; return OkStatus(); }));
//   ASSIGN_OR_RETURN(json::Value list, d.Finish());  // the List, "items": []
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/status/status.h"

namespace trainer::kube {

class ListDecoder {
 public:
  using ItemHandler = std::function<Status(json::Value& item)>;

  // `skip` (paths from each item's root) must outlive the decoder.
  explicit ListDecoder(const json::SkipPaths* skip = nullptr) : skip_(skip) {}

  // Appends `data`; calls `on_item` for every item it completes, in order. An error of the
  // handler or a malformed document ends decoding with that error.
  Status Feed(std::string_view data, const ItemHandler& on_item);
  // The List without its items, once the document is complete; an error if it is not.
  StatusOr<json::Value> Finish();

  size_t items() const { return items_; }

 private:
  Status EndItem(std::string_view text, const ItemHandler& on_item);
  // Inside a string: the first quote or backslash of `data` from `i` on that is not escaped,
  // or data.size().
  size_t StringStop(std::string_view data, size_t i);

  const json::SkipPaths* skip_;
  std::string head_;  // the document outside the items array's elements
  std::string item_;  // the start of an item split across chunks
  int depth_ = 0;     // open containers at the current byte
  bool in_string_ = false;
  bool escape_ = false;
  bool in_items_ = false;  // inside the root's "items" array
  bool done_ = false;      // the root closed
  std::string key_;        // the root's last string (its member key before a '[')
  bool reading_key_ = false;
  size_t items_ = 0;
  Status error_;
};

}  // namespace trainer::kube
