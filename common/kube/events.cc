// Event construction and recording.
#include "common/kube/events.h"

#include <cstdio>

#include "common/kube/meta.h"
#include "common/kube/rest_mapper.h"

namespace trainer::kube {

json::Value MakeEvent(const json::Value& regarding, const EventSpec& spec,
                      std::chrono::system_clock::time_point now, std::string_view name_suffix) {
  std::string ns(Namespace(regarding));
  if (ns.empty()) ns = "default";
  json::Value ev = json::Value::Object();
  ev.Set("apiVersion", "events.k8s.io/v1");
  ev.Set("kind", "Event");
  json::Value& meta = ev["metadata"];
  meta.Set("name", std::string(Name(regarding)) + "." + std::string(name_suffix));
  meta.Set("namespace", ns);
  ev.Set("eventTime", FormatMicroTime(now));
  ev.Set("reportingController", spec.reporting_controller);
  ev.Set("reportingInstance", spec.reporting_instance);
  ev.Set("action", spec.action);
  ev.Set("reason", spec.reason);
  json::Value& ref = ev["regarding"];
  const GroupVersionKind gvk = GroupVersionKind::Of(regarding);
  ref.Set("apiVersion", gvk.ApiVersion());
  ref.Set("kind", gvk.kind);
  if (!Namespace(regarding).empty()) ref.Set("namespace", std::string(Namespace(regarding)));
  ref.Set("name", std::string(Name(regarding)));
  if (!Uid(regarding).empty()) ref.Set("uid", std::string(Uid(regarding)));
  if (!ResourceVersion(regarding).empty()) {
    ref.Set("resourceVersion", std::string(ResourceVersion(regarding)));
  }
  constexpr size_t kMaxNote = 1024;
  ev.Set("note", spec.note.size() > kMaxNote ? spec.note.substr(0, kMaxNote) : spec.note);
  ev.Set("type", spec.type);
  return ev;
}

Status EventRecorder::Event(const json::Value& regarding, std::string_view type,
                            std::string_view reason, std::string_view action,
                            std::string_view note) {
  const auto now = std::chrono::system_clock::now();
  // Unique per process: nanoseconds since the epoch plus a counter, in hex, as client-go does.
  char suffix[40];
  std::snprintf(
      suffix, sizeof(suffix), "%llx",
      static_cast<unsigned long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count() +
          counter_.fetch_add(1)));
  EventSpec spec{std::string(type), std::string(reason), std::string(action),
                 std::string(note), controller_,         instance_};
  json::Value ev = MakeEvent(regarding, spec, now, suffix);
  const std::string ns = ev["metadata"]["namespace"].AsString();
  StatusOr<json::Value> created = writer_.Create(kEvents, ns, ev);
  if (!created.ok()) {
    return created.status().WithContext("recording event " + std::string(reason) + " for " +
                                        ObjectKeyOf(regarding));
  }
  return OkStatus();
}

}  // namespace trainer::kube
