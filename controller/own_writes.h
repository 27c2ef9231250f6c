// OwnWrites: the objects this controller is applying or just applied, so the informer handlers
// can tell the watch event of our own write (its "echo") from a change made by someone else. The
// pass that applied an object already saw the apiserver's answer (OverlayReader), so the echo
// carries nothing new for the owning TrainJob; re-enqueueing it would run one more pass per
// object written (two per TrainJob: snapshot ConfigMap and JobSet), and a pass started by the
// ConfigMap's echo before the JobSet's echo reaches the cache even re-applies the JobSet.
// Any other event — another version, a delete, an object we did not write — is not an echo.
//
// The echo often arrives before the apply's response (the watch and the request are separate
// streams; measured: about half of them under load), so an event for an object whose apply is
// still in flight is held until that apply ends: then it is either the echo (dropped) or
// someone else's version, and its owners are handed to the requeue callback.
//
//   OwnWrites writes([&](const std::string& key) { queue.Add(key); });
//   writes.Begin(obj);                            // before sending the apply
//   writes.Finish(obj, ok ? &response : nullptr); // once it returned
//   if (!writes.Absorb(event_object, {owner_key})) queue.Add(owner_key);
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/json/json.h"

namespace trainer::controller {

class OwnWrites {
 public:
  // Entries normally live until their echo arrives (well under a second). An echo a relist skips
  // leaves its entry behind until the object's next event; past this many entries the table is
  // cleared, which only costs extra passes.
  static constexpr size_t kMaxEntries = 10000;

  using Requeue = std::function<void(const std::string& owner_key)>;
  explicit OwnWrites(Requeue requeue = {}) : requeue_(std::move(requeue)) {}

  // An apply of `obj` (apiVersion, kind, namespace, name) is about to be sent. Every Begin needs
  // its Finish.
  void Begin(const json::Value& obj);
  // The apply of `obj` ended; `applied` is its response, nullptr when it failed. Events held
  // since Begin that are not this write's echo go to the requeue callback (outside any lock).
  void Finish(const json::Value& obj, const json::Value* applied);
  // Remembers `applied` (an apply response) without a Begin: its next event is the echo.
  void Record(const json::Value& applied);

  // True when the handler of the event carrying `obj` must not enqueue `owners`: `obj` is the
  // version we wrote last (the echo), or an apply of it is in flight and the event is held
  // (owners requeued by Finish unless it was the echo). Any event for a recorded object ends
  // its entry: the watch delivers versions in order, so nothing after it can be the echo.
  bool Absorb(const json::Value& obj, std::vector<std::string> owners);
  size_t size() const;       // recorded versions awaiting their echo
  size_t in_flight() const;  // objects with an apply in flight

 private:
  struct Held {
    std::string rv;
    std::vector<std::string> owners;
  };
  struct InFlight {
    int writes = 0;
    std::vector<Held> held;
  };
  static std::string KeyOf(const json::Value& obj);
  void RecordLocked(std::string key, std::string rv);

  const Requeue requeue_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> versions_;  // group/kind/ns/name -> resourceVersion
  std::unordered_map<std::string, InFlight> in_flight_;    // same keys
};

}  // namespace trainer::controller
