// ListDecoder implementation (see list_decoder.h).
#include "common/kube/list_decoder.h"

namespace trainer::kube {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

Status ListDecoder::EndItem(const ItemHandler& on_item) {
  StatusOr<json::Value> item = skip_ != nullptr ? json::Parse(item_, *skip_) : json::Parse(item_);
  item_.clear();
  if (!item.ok()) return item.status().WithContext("decoding list item " + std::to_string(items_));
  ++items_;
  return on_item(*item);
}

// Depth 1 is the root object; the items array opens depth 2 and each item depth 3. Bytes of an
// item go to item_; bytes inside the items array between items (commas, blanks) are dropped;
// all others go to head_, which thus ends up holding `"items":[]`.
Status ListDecoder::Feed(std::string_view data, const ItemHandler& on_item) {
  if (!error_.ok()) return error_;
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    const bool in_item = in_items_ && depth_ >= 3;
    if (in_string_) {
      // Copy the run of plain string bytes at once.
      size_t j = i;
      while (j < data.size() && (escape_ || (data[j] != '"' && data[j] != '\\'))) {
        escape_ = false;
        ++j;
      }
      std::string_view run = data.substr(i, j - i);
      (in_item ? item_ : head_).append(run);
      if (reading_key_) key_.append(run.substr(0, std::min<size_t>(run.size(), 16)));
      if (j == data.size()) break;
      const char e = data[j];
      (in_item ? item_ : head_).push_back(e);
      if (e == '\\') {
        escape_ = true;
        if (reading_key_) key_.push_back(e);
      } else {
        in_string_ = false;
        reading_key_ = false;
      }
      i = j;
      continue;
    }
    if (done_) {
      if (!IsSpace(c)) error_ = InvalidArgumentError("decoding list: data after the document");
      if (!error_.ok()) return error_;
      continue;
    }
    if (in_items_ && depth_ == 2) {
      // Between items.
      if (c == '{') {
        depth_ = 3;
        item_.push_back(c);
      } else if (c == ']') {
        depth_ = 1;
        in_items_ = false;
        head_.push_back(c);
      } else if (c != ',' && !IsSpace(c)) {
        error_ = InvalidArgumentError(std::string("decoding list: an item is not an object: '") +
                                      c + "'");
        return error_;
      }
      continue;
    }
    std::string& out = in_item ? item_ : head_;
    out.push_back(c);
    if (c == '"') {
      in_string_ = true;
      if (depth_ == 1) {
        reading_key_ = true;
        key_.clear();
      }
    } else if (c == '{' || c == '[') {
      if (depth_ == 0 && c != '{') {
        error_ = InvalidArgumentError("decoding list: not a JSON object");
        return error_;
      }
      if (depth_ == 1 && c == '[' && key_ == "items") in_items_ = true;
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (depth_ <= 0) {
        error_ = InvalidArgumentError("decoding list: unbalanced document");
        return error_;
      }
      --depth_;
      if (in_item && depth_ == 2) {
        error_ = EndItem(on_item);
        if (!error_.ok()) return error_;
      } else if (depth_ == 0) {
        done_ = true;
      }
    } else if (depth_ == 0 && !IsSpace(c)) {
      error_ = InvalidArgumentError("decoding list: not a JSON object");
      return error_;
    }
  }
  return OkStatus();
}

StatusOr<json::Value> ListDecoder::Finish() {
  if (!error_.ok()) return error_;
  if (!done_) return InvalidArgumentError("decoding list: the document ended early");
  ASSIGN_OR_RETURN(json::Value list, json::Parse(head_));
  if (!list.IsObject()) return InvalidArgumentError("decoding list: not a JSON object");
  return list;
}

}  // namespace trainer::kube
