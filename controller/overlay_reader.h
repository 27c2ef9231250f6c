// OverlayReader: a framework::Reader over a base reader (the informer caches) that also sees the
// objects the current thread applied in its current reconcile pass. The informer learns about an
// applied object only when its watch event arrives; without the overlay the JobSet plugin's status
// step, run right after the apply in the same pass, would find no JobSet and fail the pass
// (upstream's first reconcile of every TrainJob ends in that error and a requeue).
//
//   OverlayReader reader(cache);
//   { OverlayReader::Scope scope(reader);      // one per reconcile pass, on the worker thread
//     reader.Remember(std::move(applied));     // visible to Get on this thread until scope ends
//   }
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "controller/own_writes.h"
#include "runtime/framework/reader.h"

namespace trainer::controller {

class OverlayReader final : public framework::Reader {
 public:
  // Trims a remembered object as the base reader's cache trims its kind (caches.h).
  using Shape = std::function<void(json::Value& obj)>;

  // `own_writes` (optional) is told of every write (BeginWrite/EndWrite), so the informer
  // handlers can recognize the watch events of these writes (own_writes.h). `shape` (optional)
  // runs on every remembered object: a read then returns the same fields whether it is served
  // from the overlay or from the cache, and a pass does not copy the parts of an apply response
  // (a JobSet's pod templates and managedFields) that no reader uses.
  explicit OverlayReader(const framework::Reader& base, OwnWrites* own_writes = nullptr,
                         Shape shape = {})
      : base_(base), own_writes_(own_writes), shape_(std::move(shape)) {}

  // Starts (and on destruction ends) the calling thread's overlay for one pass.
  class Scope {
   public:
    explicit Scope(OverlayReader& reader);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OverlayReader& reader_;
  };

  // Makes `object` (apiVersion, kind, metadata.namespace/name) visible to this thread's Gets
  // until its Scope ends. No-op outside a Scope. Taken by value: callers hand over the apply
  // response they no longer need, rather than have it copied.
  void Remember(json::Value object);
  // Bracket one apply of `object` (any thread), so OwnWrites can tell its echo: BeginWrite
  // before the request, EndWrite with its result.
  void BeginWrite(const json::Value& object);
  void EndWrite(const json::Value& object, const StatusOr<json::Value>& result);

  StatusOr<json::Value> Get(const kube::GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override;

 private:
  const framework::Reader& base_;
  OwnWrites* const own_writes_;
  const Shape shape_;
};

}  // namespace trainer::controller
