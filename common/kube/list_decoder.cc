// ListDecoder implementation (see list_decoder.h).
#include "common/kube/list_decoder.h"

#include <algorithm>
#include <array>

namespace trainer::kube {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

using ByteSet = std::array<bool, 256>;

constexpr ByteSet Bytes(std::string_view chars) {
  ByteSet set{};
  for (char c : chars) set[static_cast<unsigned char>(c)] = true;
  return set;
}

// What ends a run of item bytes that need no look: outside strings the structure, inside them
// the quote and the escape.
constexpr ByteSet kStructure = Bytes("\"{}[]");
constexpr ByteSet kStringEnd = Bytes("\"\\");

// The first byte of `data` at or after `i` in `stop`, or data.size().
size_t Find(std::string_view data, size_t i, const ByteSet& stop) {
  while (i < data.size() && !stop[static_cast<unsigned char>(data[i])]) ++i;
  return i;
}

}  // namespace

Status ListDecoder::EndItem(std::string_view text, const ItemHandler& on_item) {
  StatusOr<json::Value> item = skip_ != nullptr ? json::Parse(text, *skip_) : json::Parse(text);
  item_.clear();
  if (!item.ok()) return item.status().WithContext("decoding list item " + std::to_string(items_));
  ++items_;
  return on_item(*item);
}

size_t ListDecoder::StringStop(std::string_view data, size_t i) {
  if (escape_) {  // the byte after a backslash never ends the string
    escape_ = false;
    ++i;
  }
  return Find(data, i, kStringEnd);
}

// Depth 1 is the root object; the items array opens depth 2 and each item depth 3. An item's
// bytes are only looked at where they may change the depth (the first list of 100,000 objects is
// hundreds of MB): runs of other bytes are skipped at once, and an item that ends in the chunk it
// began in is parsed from the chunk itself; only an item split across chunks is copied, to item_.
// Bytes inside the items array between items (commas, blanks) are dropped; all others go to
// head_, which thus ends up holding `"items":[]`.
Status ListDecoder::Feed(std::string_view data, const ItemHandler& on_item) {
  if (!error_.ok()) return error_;
  size_t item_from = 0;  // where the current item starts in `data` (0: in an earlier chunk)
  for (size_t i = 0; i < data.size(); ++i) {
    if (in_items_ && depth_ >= 3) {
      if (in_string_) {
        const size_t j = StringStop(data, i);
        if (j == data.size()) break;
        if (data[j] == '\\') {
          escape_ = true;
        } else {
          in_string_ = false;
        }
        i = j;
        continue;
      }
      i = Find(data, i, kStructure);
      if (i == data.size()) break;
      const char c = data[i];
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (--depth_ == 2) {
        std::string_view text = data.substr(item_from, i + 1 - item_from);
        if (!item_.empty()) text = item_.append(text);
        error_ = EndItem(text, on_item);
        if (!error_.ok()) return error_;
      }
      continue;
    }
    const char c = data[i];
    if (in_string_) {
      // Copy the run of plain string bytes at once.
      const size_t j = StringStop(data, i);
      std::string_view run = data.substr(i, j - i);
      head_.append(run);
      if (reading_key_) key_.append(run.substr(0, std::min<size_t>(run.size(), 16)));
      if (j == data.size()) break;
      const char e = data[j];
      head_.push_back(e);
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
        item_from = i;
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
    head_.push_back(c);
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
      if (--depth_ == 0) done_ = true;
    } else if (depth_ == 0 && !IsSpace(c)) {
      error_ = InvalidArgumentError("decoding list: not a JSON object");
      return error_;
    }
  }
  // An item still open continues in the next chunk.
  if (in_items_ && depth_ >= 3) item_.append(data.substr(item_from));
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
