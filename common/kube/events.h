// Events in the events.k8s.io/v1 API, the way client-go's tools/events recorder writes them:
// one Event object per call (no client-side aggregation), named "<regarding name>.<unique hex>",
// in the regarding object's namespace (default for cluster-scoped ones).
//
//   kube::EventRecorder recorder(client, "trainer-controller", pod_name);
//   recorder.Eventf(trainjob, "Normal", "Created", "Create", "created JobSet " + name);
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "common/kube/client.h"
#include "common/status/status.h"

namespace trainer::kube {

struct EventSpec {
  std::string type;    // "Normal" | "Warning"
  std::string reason;  // UpperCamelCase, upstream spelling
  std::string action;  // what was done: "Create", "Reconcile"...
  std::string note;    // human-readable, truncated to 1 kB as the apiserver requires
  std::string reporting_controller;
  std::string reporting_instance;
};

// The Event object for `regarding` (an object with apiVersion, kind and metadata).
json::Value MakeEvent(const json::Value& regarding, const EventSpec& spec,
                      std::chrono::system_clock::time_point now, std::string_view name_suffix);

class EventRecorder {
 public:
  EventRecorder(Writer& writer, std::string reporting_controller, std::string reporting_instance)
      : writer_(writer),
        controller_(std::move(reporting_controller)),
        instance_(std::move(reporting_instance)) {}

  // Creates the Event. Failures are returned for logging; callers never fail a reconcile on them.
  Status Event(const json::Value& regarding, std::string_view type, std::string_view reason,
               std::string_view action, std::string_view note);

 private:
  Writer& writer_;
  const std::string controller_;
  const std::string instance_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace trainer::kube
