// OwnWrites: the objects this controller just applied, by resourceVersion, so the informer
// handlers can tell the watch event of our own write (its "echo") from a change made by someone
// else. The pass that applied an object already saw the apiserver's answer (OverlayReader), so
// the echo carries nothing new for the owning TrainJob; re-enqueueing it would run one more
// pass per object written (two per TrainJob: snapshot ConfigMap and JobSet), and a pass started
// by the ConfigMap's echo before the JobSet's echo reaches the cache even re-applies the JobSet.
// Any other event — another version, a delete, an object we did not write — is not an echo.
//
//   OwnWrites writes;
//   writes.Record(applied);              // the apply's response
//   if (!writes.IsEcho(event_object)) queue.Add(owner_key);
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/json/json.h"

namespace trainer::controller {

class OwnWrites {
 public:
  // Entries normally live until their echo arrives (well under a second). An echo that reaches
  // the informer before the apply's response reaches Record, or one a relist skips, leaves its
  // entry behind until the object's next event; past this many entries the table is cleared,
  // which only costs extra passes.
  static constexpr size_t kMaxEntries = 10000;

  // Remembers `applied` (an apply response: apiVersion, kind, namespace, name, resourceVersion).
  void Record(const json::Value& applied);
  // True when `obj` is the version Record saw last for its object. Any event for a recorded
  // object ends its entry: the watch delivers versions in order, so nothing after it can be the
  // echo.
  bool IsEcho(const json::Value& obj);
  size_t size() const;

 private:
  static std::string KeyOf(const json::Value& obj);

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> versions_;  // group/kind/ns/name -> resourceVersion
};

}  // namespace trainer::controller
