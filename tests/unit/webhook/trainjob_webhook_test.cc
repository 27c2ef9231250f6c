// Unit tests for the TrainJob defaulter and validator and the (Cluster)TrainingRuntime validators:
// each handler on fixed inputs (runtimes in a MapReader, a fixed clock), asserting on the
// patched object (the patch applied to the request's object) and on denial texts.
#include "webhook/trainjob_webhook.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/json/json.h"
#include "common/json/patch.h"
#include "runtime/api/codec.h"
#include "runtime/core/registry.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"
#include "webhook/admission.h"
#include "webhook/trainingruntime_webhook.h"

namespace trainer::webhook {
namespace {

constexpr char kNow[] = "2026-01-02T03:04:05Z";

constexpr char kTorchRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          replicas: 1
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch
                      command: [torchrun, train.py]
)";

AdmissionRequest Request(std::string operation, std::string_view object_yaml,
                         std::string_view old_yaml = "") {
  AdmissionRequest r;
  r.uid = "uid-1";
  r.operation = std::move(operation);
  r.kind = "TrainJob";
  r.group = "trainer.kubeflow.org";
  r.version = "v1alpha1";
  r.namespace_ = "default";
  if (!object_yaml.empty()) {
    r.object = testing::Yaml(object_yaml);
  }
  if (!old_yaml.empty()) {
    r.old_object = testing::Yaml(old_yaml);
  }
  r.name = r.object.IsObject() ? r.object["metadata"]["name"].AsString() : "";
  return r;
}

// The object after applying the response's patch to the request's object.
json::Value Patched(const AdmissionRequest& req, const AdmissionResponse& resp) {
  json::Value doc = req.object.Clone();
  if (resp.patch.IsArray()) {
    Status s = json::ApplyJsonPatch(doc, resp.patch);
    REQUIRE(s.ok());
  }
  return doc;
}

bool HasRemove(const json::Value& ops) {
  if (!ops.IsArray()) {
    return false;
  }
  for (const json::Value& op : ops.elements()) {
    if (op.Find("op")->AsString() == "remove") {
      return true;
    }
  }
  return false;
}

std::string Canon(const json::Value& v) { return json::WriteCanonical(v); }

// ---- defaulter ----

TEST_CASE("defaulter CREATE: time set where unset, client time kept, nothing else touched") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  AdmissionRequest req = Request("CREATE", R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j, namespace: default, labels: {a: b}}
spec:
  runtimeRef: {name: torch-distributed}
  futureField: {keep: me}
  runtimePatches:
    - manager: example.com/a
      trainingRuntimeSpec: {template: {metadata: {labels: {x: y}}}}
      unknownInPatch: 1
    - manager: example.com/b
      time: "2025-05-05T05:05:05Z"
)");
  AdmissionResponse resp = d.Handle(req);
  REQUIRE(resp.allowed);
  CHECK(resp.code == 200);
  CHECK_FALSE(HasRemove(resp.patch));
  json::Value want = req.object.Clone();
  want["spec"]["runtimePatches"].at(0).Set("time", json::Value(kNow));
  CHECK(Canon(Patched(req, resp)) == Canon(want));
}

TEST_CASE("defaulter: no runtimePatches, or all times set, means no patch") {
  int clock_reads = 0;
  TrainJobDefaulter d([&] {
    ++clock_reads;
    return std::string(kNow);
  });
  AdmissionResponse none = d.Handle(Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: 2}})"));
  CHECK(none.allowed);
  CHECK(none.patch.IsNull());
  CHECK(clock_reads == 0);  // nothing to time
  AdmissionResponse set = d.Handle(Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches: [{manager: example.com/a, time: "2025-05-05T05:05:05Z"}])"));
  CHECK(set.allowed);
  CHECK(set.patch.IsNull());
}

// The defaulter computes its patch entry by entry when it translated nothing; the operations must
// be exactly those of diffing the whole received list against the defaulted one.
TEST_CASE("defaulter: the patch is the diff of the whole runtimePatches list") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  struct Case {
    std::string name;
    AdmissionRequest req;
    std::vector<std::string> times;  // each entry's time after defaulting
  };
  std::vector<Case> cases;
  cases.push_back({"create",
                   Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
    - manager: example.com/a
      unknownInPatch: [1, 2.5, {x: null}]
      trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node}]}}}
    - {manager: example.com/b, time: "2025-05-05T05:05:05Z"}
    - {time: null, manager: example.com/c}
    - manager: example.com/d
)"),
                   {kNow, "2025-05-05T05:05:05Z", kNow, kNow}});
  constexpr char kOld[] = R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
    - {manager: example.com/same, time: "2025-01-01T00:00:00Z"}
    - {manager: example.com/changed, time: "2025-01-01T00:00:00Z"}
)";
  cases.push_back({"update",
                   Request("UPDATE", R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
    - {manager: example.com/same, time: "2030-01-01T00:00:00Z"}
    - manager: example.com/changed
      time: "2030-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {x: "2"}}}}
    - {manager: example.com/new, time: "2030-01-01T00:00:00Z"}
    - {manager: example.com/new-without-time}
)",
                           kOld),
                   {"2025-01-01T00:00:00Z", kNow, "2030-01-01T00:00:00Z", kNow}});
  for (const Case& c : cases) {
    INFO(c.name);
    AdmissionResponse resp = d.Handle(c.req);
    REQUIRE(resp.allowed);
    const json::Value& received = *c.req.object.Find("spec")->Find("runtimePatches");
    json::Value after = received.Clone();
    REQUIRE(after.size() == c.times.size());
    for (size_t i = 0; i < c.times.size(); ++i) {
      after.at(i).Set("time", json::Value(c.times[i]));
    }
    StatusOr<json::Value> want = json::CreateJsonPatchAt("/spec/runtimePatches", &received, after);
    REQUIRE(want.ok());
    REQUIRE(resp.patch.IsArray());
    CHECK(json::Write(resp.patch) == json::Write(*want));
  }
}

TEST_CASE("defaulter UPDATE follows upstream's table") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  constexpr char kOld[] = R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
    - manager: example.com/same
      time: "2025-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {x: "1"}}}}
    - manager: example.com/changed
      time: "2025-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {x: "1"}}}}
)";
  AdmissionRequest req = Request("UPDATE", R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
    - manager: example.com/same
      time: "2030-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {x: "1"}}}}
    - manager: example.com/changed
      time: "2030-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {x: "2"}}}}
    - manager: example.com/new-with-time
      time: "2030-01-01T00:00:00Z"
    - manager: example.com/new-without-time
)",
                                 kOld);
  AdmissionResponse resp = d.Handle(req);
  REQUIRE(resp.allowed);
  json::Value got = Patched(req, resp);
  const json::Value& p = got["spec"]["runtimePatches"];
  CHECK(p.at(0).Find("time")->AsString() == "2025-01-01T00:00:00Z");  // same content: old time
  CHECK(p.at(1).Find("time")->AsString() == kNow);                    // changed: now
  CHECK(p.at(2).Find("time")->AsString() == "2030-01-01T00:00:00Z");  // new manager: kept
  CHECK(p.at(3).Find("time")->AsString() == kNow);                    // new, unset: now
  CHECK_FALSE(HasRemove(resp.patch));
}

TEST_CASE(
    "defaulter translates podTemplateOverrides into a runtimePatches entry, with a warning, "
    "and keeps the field") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  AdmissionRequest req = Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  podTemplateOverrides:
    - targetJobs: [{name: node}]
      spec:
        nodeSelector: {pool: gpu}
)");
  AdmissionResponse resp = d.Handle(req);
  REQUIRE(resp.allowed);
  CHECK_FALSE(HasRemove(resp.patch));
  json::Value got = Patched(req, resp);
  REQUIRE(got["spec"].Has("podTemplateOverrides"));
  const json::Value& patches = got["spec"]["runtimePatches"];
  REQUIRE(patches.size() == 1);
  CHECK(patches.at(0).Find("manager")->AsString() == "trainer.kubeflow.org/podtemplateoverrides");
  CHECK(patches.at(0).Find("time")->AsString() == kNow);
  CHECK(
      Canon(*patches.at(0).Find("trainingRuntimeSpec")) ==
      R"({"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"gpu"}}}}}}]}}})");
  REQUIRE_FALSE(resp.warnings.empty());
  CHECK(resp.warnings.front().find("spec.podTemplateOverrides is deprecated") != std::string::npos);
}

TEST_CASE("defaulter: a translation's patch diffs the received entries as they came") {
  // The decode moves each entry's trainingRuntimeSpec out of the received document; the answer
  // that diffs the whole list must still see it (appended and replacing translations).
  TrainJobDefaulter d([] { return std::string(kNow); });
  for (const char* translated : {"", R"(
    - manager: trainer.kubeflow.org/podtemplateoverrides
      time: "2025-01-01T00:00:00Z"
      trainingRuntimeSpec: {template: {metadata: {labels: {old: "1"}}}})"}) {
    INFO(translated);
    AdmissionRequest req = Request("CREATE", std::string(R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  podTemplateOverrides:
    - targetJobs: [{name: node}]
      spec: {nodeSelector: {pool: gpu}}
  runtimePatches:
    - manager: example.com/a
      time: "2025-05-05T05:05:05Z"
      trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node}]}}})") +
                                                 translated);
    const json::Value received = req.object.Find("spec")->Find("runtimePatches")->Clone();
    AdmissionResponse resp = d.Handle(req);
    REQUIRE(resp.allowed);
    json::Value got = Patched(req, resp);
    const json::Value& patches = *got.Find("spec")->Find("runtimePatches");
    REQUIRE(patches.size() == 2);
    CHECK(json::Write(patches.at(0)) == json::Write(received.at(0)));
    CHECK(
        Canon(*patches.at(1).Find("trainingRuntimeSpec")) ==
        R"({"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"gpu"}}}}}}]}}})");
    // The patch is the diff from the received list (not from one missing what the decode
    // moved out) to the answered one.
    StatusOr<json::Value> want =
        json::CreateJsonPatchAt("/spec/runtimePatches", &received, patches);
    REQUIRE(want.ok());
    CHECK(json::Write(resp.patch) == json::Write(*want));
  }
}

TEST_CASE("defaulter re-translation on UPDATE keeps the entry's time when nothing changed") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  constexpr char kSpec[] = R"(
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  podTemplateOverrides:
    - targetJobs: [{name: node}]
      spec: {nodeSelector: {pool: gpu}}
)";
  AdmissionRequest create = Request("CREATE", kSpec);
  json::Value stored = Patched(create, d.Handle(create));
  stored["spec"]["runtimePatches"].at(0).Set("time", json::Value("2025-01-01T00:00:00Z"));
  AdmissionRequest update = Request("UPDATE", kSpec);
  update.old_object = stored.Clone();
  update.object["spec"].Set("runtimePatches", stored["spec"]["runtimePatches"].Clone());
  AdmissionResponse resp = d.Handle(update);
  REQUIRE(resp.allowed);
  CHECK(resp.patch.IsNull());
}

TEST_CASE("defaulter: DELETE allowed; undecodable object is a 400; bad old object a denial") {
  TrainJobDefaulter d([] { return std::string(kNow); });
  AdmissionRequest del = Request("DELETE", "");
  CHECK(d.Handle(del).allowed);
  AdmissionResponse bad = d.Handle(Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec: {runtimeRef: {name: x}, trainer: {numNodes: two}})"));
  CHECK_FALSE(bad.allowed);
  CHECK(bad.code == 400);
  CHECK(bad.message.find("spec.trainer.numNodes") != std::string::npos);
  AdmissionRequest upd = Request("UPDATE", R"(
metadata: {name: j, namespace: default}
spec: {runtimeRef: {name: x}})",
                                 R"(
metadata: {name: j, namespace: default}
spec: {runtimeRef: {name: x}, suspend: "yes"})");
  AdmissionResponse denied = d.Handle(upd);
  CHECK_FALSE(denied.allowed);
  CHECK(denied.code == 403);
}

// ---- validator ----

struct ValidatorFixture {
  framework::MapReader reader;
  std::unique_ptr<core::Runtimes> runtimes;
  std::unique_ptr<TrainJobValidator> validator;

  explicit ValidatorFixture(std::vector<std::string> runtime_yamls = {kTorchRuntime}) {
    for (const std::string& y : runtime_yamls) {
      REQUIRE(reader.Add(api::EncodeTrainingRuntime(testing::Runtime(y))).ok());
    }
    auto r = core::Runtimes::New(reader, [] { return std::string(kNow); });
    REQUIRE(r.ok());
    runtimes = std::move(r).value();
    validator = std::make_unique<TrainJobValidator>(runtimes.get());
  }
};

constexpr char kJob[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: j, namespace: default}
spec:
  runtimeRef: {name: torch-distributed, apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime}
  trainer: {numNodes: 2}
)";

TEST_CASE("validator: a valid TrainJob is allowed") {
  ValidatorFixture f;
  AdmissionResponse r = f.validator->Handle(Request("CREATE", kJob));
  CHECK(r.allowed);
  CHECK(r.warnings.empty());
}

TEST_CASE("validator: DELETE and CONNECT pass, an unknown or missing operation is a 400") {
  ValidatorFixture f;
  CHECK(f.validator->Handle(Request("DELETE", "", kJob)).allowed);
  CHECK(f.validator->Handle(Request("CONNECT", kJob)).allowed);
  for (const char* op : {"", "PATCH"}) {
    AdmissionResponse r = f.validator->Handle(Request(op, kJob));
    CHECK_FALSE(r.allowed);
    CHECK(r.code == 400);
    CHECK(r.message == "unknown operation \"" + std::string(op) + "\"");
  }
}

TEST_CASE("validator: unsupported runtime kind") {
  ValidatorFixture f;
  AdmissionRequest req = Request("CREATE", kJob);
  req.object["spec"]["runtimeRef"].Set("kind", json::Value("FooRuntime"));
  AdmissionResponse r = f.validator->Handle(req);
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 403);
  CHECK(r.reason == "Forbidden");
  CHECK(r.message == "unsupported runtime: FooRuntime.trainer.kubeflow.org");
}

TEST_CASE("validator: missing ClusterTrainingRuntime") {
  ValidatorFixture f;
  AdmissionRequest req = Request("CREATE", kJob);
  req.object["spec"]["runtimeRef"].Set("name", json::Value("nope"));
  AdmissionResponse r = f.validator->Handle(req);
  CHECK_FALSE(r.allowed);
  CHECK(r.message.find("specified clusterTrainingRuntime must be created before the TrainJob is "
                       "created") != std::string::npos);
  CHECK(r.message.rfind("spec.RuntimeRef: Invalid value: ", 0) == 0);
}

TEST_CASE("validator: reserved torch env is denied with upstream's text") {
  ValidatorFixture f;
  AdmissionRequest req = Request("CREATE", kJob);
  json::Value env = testing::Yaml("[{name: PET_NNODES, value: '3'}, {name: OK, value: '1'}]");
  req.object["spec"]["trainer"].Set("env", std::move(env));
  AdmissionResponse r = f.validator->Handle(req);
  CHECK_FALSE(r.allowed);
  CHECK(r.message.find("spec.trainer.env: Invalid value: ") == 0);
  CHECK(r.message.find("must not have reserved envs, invalid envs configured: [PET_NNODES]") !=
        std::string::npos);
}

TEST_CASE("validator: deprecated runtime warns on CREATE and UPDATE") {
  std::string deprecated = kTorchRuntime;
  deprecated.replace(deprecated.find("metadata: {name: torch-distributed}"),
                     std::string("metadata: {name: torch-distributed}").size(),
                     "metadata: {name: torch-distributed, labels: {trainer.kubeflow.org/support: "
                     "deprecated}}");
  ValidatorFixture f({deprecated});
  for (const char* op : {"CREATE", "UPDATE"}) {
    AdmissionResponse r =
        f.validator->Handle(Request(op, kJob, std::string(op) == "UPDATE" ? kJob : ""));
    CHECK(r.allowed);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0] ==
          "Referenced ClusterTrainingRuntime \"torch-distributed\" is deprecated and will be "
          "removed in a future release of Kubeflow Trainer. See runtime deprecation policy: "
          "https://trainer.kubeflow.org/en/latest/operator-guides/"
          "runtime.html#runtime-deprecation-policy");
  }
}

TEST_CASE("validator: runtimePatches changes of a running TrainJob are forbidden") {
  ValidatorFixture f;
  AdmissionRequest req = Request("UPDATE", kJob, kJob);
  req.object["spec"].Set("runtimePatches",
                         testing::Yaml("[{manager: example.com/a, time: '2025-01-01T00:00:00Z'}]"));
  AdmissionResponse r = f.validator->Handle(req);
  CHECK_FALSE(r.allowed);
  CHECK(r.message ==
        "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is "
        "suspended before or after the update");
}

TEST_CASE("validator: podTemplateOverrides are checked against the runtime as in v2.1") {
  ValidatorFixture f;
  AdmissionRequest req = Request("CREATE", kJob);
  req.object["spec"].Set("podTemplateOverrides",
                         testing::Yaml("[{targetJobs: [{name: launcher}], spec: {}}]"));
  AdmissionResponse r = f.validator->Handle(req);
  CHECK_FALSE(r.allowed);
  CHECK(r.message.find("spec.podTemplateOverrides: Invalid value: ") == 0);
  CHECK(r.message.find("must not have targetJob that doesn't exist in the runtime job template") !=
        std::string::npos);
}

TEST_CASE("validator: DELETE allowed; undecodable object 400") {
  ValidatorFixture f;
  CHECK(f.validator->Handle(Request("DELETE", "", kJob)).allowed);
  AdmissionResponse r = f.validator->Handle(Request("CREATE", R"(
metadata: {name: j, namespace: default}
spec: {runtimeRef: {name: torch-distributed}, trainer: {numNodes: two}})"));
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 400);
}

// ---- runtime validators ----

constexpr char kBadRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: %KIND%
metadata: {name: bad, namespace: default, labels: {trainer.kubeflow.org/support: deprecated}}
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          replicas: 2
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec: {template: {spec: {containers: [{name: trainer, image: x}]}}}
        - name: other
          replicas: 3
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: something-else}
            spec: {template: {spec: {containers: [{name: x, image: x}]}}}
        - name: model-initializer
          replicas: 1
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}
            spec: {template: {spec: {containers: [{name: model-initializer, image: x}]}}}
)";

AdmissionRequest RuntimeRequest(std::string op, std::string_view kind) {
  std::string y = kBadRuntime;
  y.replace(y.find("%KIND%"), 6, kind);
  AdmissionRequest r = Request(std::move(op), y, "");
  r.kind = std::string(kind);
  return r;
}

constexpr char kWantRuntimeErrors[] =
    "[spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1, "
    "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: ";

TEST_CASE(
    "ClusterTrainingRuntime CREATE: replicas and required container, plus deprecation "
    "warning") {
  TrainingRuntimeValidator v(/*cluster=*/true);
  AdmissionResponse r = v.Handle(RuntimeRequest("CREATE", "ClusterTrainingRuntime"));
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 403);
  CHECK(r.message.rfind(kWantRuntimeErrors, 0) == 0);
  CHECK(r.message.find("must contain the required container for the ancestor: trainer]") !=
        std::string::npos);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rfind("ClusterTrainingRuntime \"bad\" is deprecated and will be removed",
                            0) == 0);
}

TEST_CASE("ClusterTrainingRuntime UPDATE validates without the warning") {
  TrainingRuntimeValidator v(/*cluster=*/true);
  AdmissionResponse r = v.Handle(RuntimeRequest("UPDATE", "ClusterTrainingRuntime"));
  CHECK_FALSE(r.allowed);
  CHECK(r.message.rfind(kWantRuntimeErrors, 0) == 0);
  CHECK(r.warnings.empty());
}

TEST_CASE("TrainingRuntime: CREATE validated, no warning; UPDATE and DELETE not validated") {
  TrainingRuntimeValidator v(/*cluster=*/false);
  AdmissionResponse create = v.Handle(RuntimeRequest("CREATE", "TrainingRuntime"));
  CHECK_FALSE(create.allowed);
  CHECK(create.message.rfind(kWantRuntimeErrors, 0) == 0);
  CHECK(create.warnings.empty());
  CHECK(v.Handle(RuntimeRequest("UPDATE", "TrainingRuntime")).allowed);
  CHECK(v.Handle(RuntimeRequest("DELETE", "TrainingRuntime")).allowed);
}

TEST_CASE("runtime validators: CONNECT passes, an unknown operation is a 400") {
  for (bool cluster : {true, false}) {
    TrainingRuntimeValidator v(cluster);
    const char* kind = cluster ? "ClusterTrainingRuntime" : "TrainingRuntime";
    CHECK(v.Handle(RuntimeRequest("CONNECT", kind)).allowed);
    AdmissionResponse r = v.Handle(RuntimeRequest("PATCH", kind));
    CHECK_FALSE(r.allowed);
    CHECK(r.code == 400);
    CHECK(r.message == "unknown operation \"PATCH\"");
  }
}

TEST_CASE("ValidateReplicatedJobs: valid shipped runtime shape has no errors") {
  api::TrainingRuntime rt = testing::Runtime(kTorchRuntime);
  CHECK(ValidateReplicatedJobs(*rt.spec.template_.Find("spec")->Find("replicatedJobs")).empty());
  CHECK(ValidateReplicatedJobs(json::Value()).empty());
}

}  // namespace
}  // namespace trainer::webhook
