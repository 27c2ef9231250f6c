// Flux plugin (upstream plugins/flux/flux_test.go): TestFlux, TestValidate,
// TestDeterministicCurve, TestGenerateRange, TestGenerateHostlist, TestEncodeZ85,
// TestBuildCurveSecret and TestGetOriginalCommand by upstream case name, plus the nil
// trainer/numNodes cases upstream crashes on.
#include "runtime/plugins/flux/flux.h"

#include <catch2/catch.hpp>

#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::InfoBuilder;
using testing::PodSet;

framework::Info FluxInfo(std::string_view policy = "{flux: {numProcPerNode: 1}}") {
  return InfoBuilder()
      .MLPolicy(policy)
      .JobSetSpec(
          "replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: "
          "node}]}}}}}]")
      .PodSet(PodSet("node").Ancestor("trainer").Count(1).Containers({"node"}))
      .Build();
}

api::TrainJob Job(std::string_view name, std::string_view uid, std::string_view trainer) {
  std::string yaml = "metadata: {name: " + std::string(name) +
                     ", namespace: default, uid: " + std::string(uid) +
                     "}\nspec:\n  runtimeRef: {name: flux-distributed}\n";
  if (!trainer.empty()) {
    yaml += "  trainer: " + std::string(trainer) + "\n";
  }
  return testing::TrainJob(yaml);
}

std::string Decode64(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    size_t p = kAlphabet.find(c);
    if (p == std::string::npos) break;
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xff));
      bits -= 8;
    }
  }
  return out;
}

TEST_CASE("TestFlux", "[flux]") {
  Flux p;
  SECTION("no action when flux policy is nil") {
    framework::Info info;
    api::TrainJob job = Job("test", "", "");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK_FALSE(job.spec.trainer.has_value());
    CHECK(p.Build(&info, job)->empty());
  }
  SECTION("flux mutations are applied correctly") {
    framework::Info info = FluxInfo();
    api::TrainJob job = Job("test-job", "test-uid", "{numNodes: 2}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    const framework::PodSet& ps = info.template_spec.pod_sets[0];
    CHECK(*ps.count == 1);  // PlainML, not Flux, sets the count
    REQUIRE(ps.init_containers.size() == 1);
    const framework::Container& ic = ps.init_containers[0];
    CHECK(ic.name == "flux-installer");
    CHECK(ic.image == "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy");
    CHECK(ic.command == std::vector<std::string>{"/bin/bash", "/etc/flux-config/init.sh"});
    CHECK(
        testing::Canon(ic.volume_mounts) ==
        R"([{"mountPath":"/mnt/flux","name":"flux-install"},{"mountPath":"/etc/flux-config","name":"test-job-flux-entrypoint","readOnly":true}])");
    CHECK(
        testing::Canon(ps.containers[0].volume_mounts) ==
        R"([{"mountPath":"/mnt/flux","name":"flux-install"},{"mountPath":"/opt/software","name":"spack-install"},{"mountPath":"/etc/flux-config","name":"test-job-flux-entrypoint","readOnly":true},{"mountPath":"/curve","name":"flux-curve","readOnly":true},{"mountPath":"/dev/shm","name":"shared-memory","readOnly":true}])");
    CHECK(
        testing::Canon(ps.volumes) ==
        R"([{"emptyDir":{},"name":"spack-install"},{"emptyDir":{},"name":"flux-install"},{"configMap":{"defaultMode":493,"name":"test-job-flux-entrypoint"},"name":"test-job-flux-entrypoint"},{"emptyDir":{"medium":"Memory"},"name":"shared-memory"},{"name":"flux-curve","secret":{"defaultMode":256,"secretName":"test-job-flux-curve"}}])");
    CHECK(*job.spec.trainer->command ==
          std::vector<std::string>{"/bin/bash", "/etc/flux-config/entrypoint.sh", ""});
    CHECK_FALSE(job.spec.trainer->args.has_value());

    StatusOr<std::vector<json::Value>> objs = p.Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 2);
    const json::Value& cm = objs->at(0);
    CHECK(framework::StringField(cm, "kind") == "ConfigMap");
    CHECK(
        testing::Canon(*cm.Find("metadata")) ==
        R"({"name":"test-job-flux-entrypoint","namespace":"default","ownerReferences":[{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"test-job","uid":"test-uid"}]})");
    std::string entry = cm.Find("data")->Find("entrypoint.sh")->AsString();
    CHECK(entry.find("flux R encode --hosts=${hosts} --cores=0 > /tmp/R") != std::string::npos);
    CHECK(entry.find("mainHost=\"test-job-node-0-0\"") != std::string::npos);
    CHECK(entry.find("flags=\"-N 2 -n 2  \"") != std::string::npos);
    std::string init = cm.Find("data")->Find("init.sh")->AsString();
    CHECK(init.find("fluxroot=/opt/view\nmainHost=test-job-0\n") != std::string::npos);
    CHECK(init.find("hosts=\"test-job-node-0-[0-1]\"") != std::string::npos);
    CHECK(init.find("default_bind = \"tcp://eth0:%p\"") != std::string::npos);
    CHECK(init.find("default_connect = \"tcp://%h.test-job.default.svc.cluster.local:%p\"") !=
          std::string::npos);
    CHECK(init.find("{ host=\"test-job-node-0-[0-1]\"},") != std::string::npos);
    CHECK(init.find("queue-policy = \"fcfs\"") != std::string::npos);
    const json::Value& secret = objs->at(1);
    CHECK(framework::StringField(secret, "kind") == "Secret");
    CHECK(framework::StringField(*secret.Find("metadata"), "name") == "test-job-flux-curve");
    CHECK(secret.Find("type") == nullptr);  // upstream leaves the type to the apiserver (Opaque)
  }
  SECTION("runtime command and TrainJob args are wrapped; GPUs go into the resource spec") {
    framework::Info info = FluxInfo("{flux: {numProcPerNode: 2}}");
    info.template_spec.pod_sets[0].containers[0].command = {"lmp", "-in", "in.lj"};
    api::TrainJob job =
        Job("lammps", "u",
            "{numNodes: 4, args: ['-v', 'x'], env: [{name: FLUX_QUEUE_POLICY, value: easy}], "
            "resourcesPerNode: {limits: {nvidia.com/gpu: 2}}}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(job.spec.trainer->command->back() == "lmp -in in.lj -v x");
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, job);
    REQUIRE(objs.ok());
    std::string entry = objs->at(0).Find("data")->Find("entrypoint.sh")->AsString();
    CHECK(entry.find("--cores=0-1 --gpu=0-1 > /tmp/R") != std::string::npos);
    CHECK(entry.find("flags=\"-N 4 -n 8 -g 2  \"") != std::string::npos);
    CHECK(objs->at(0).Find("data")->Find("init.sh")->AsString().find("queue-policy = \"easy\"") !=
          std::string::npos);
  }
  SECTION("FLUX_VIEW_IMAGE from the runtime container env, then the TrainJob env") {
    framework::Info info = FluxInfo();
    info.template_spec.pod_sets[0].containers[0].env =
        testing::Yaml("[{name: FLUX_VIEW_IMAGE, value: runtime/view}]");
    api::TrainJob job = Job("a", "u", "{numNodes: 1}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].init_containers[0].image == "runtime/view");
    framework::Info info2 = FluxInfo();
    info2.template_spec.pod_sets[0].containers[0].env =
        testing::Yaml("[{name: FLUX_VIEW_IMAGE, value: runtime/view}]");
    api::TrainJob job2 =
        Job("a", "u", "{numNodes: 1, env: [{name: FLUX_VIEW_IMAGE, value: job/view}]}");
    REQUIRE(p.EnforceMLPolicy(&info2, job2).ok());
    CHECK(info2.template_spec.pod_sets[0].init_containers[0].image == "job/view");
  }
  SECTION("nil numNodes uses the trainer PodSet count instead of crashing") {
    framework::Info info = FluxInfo();
    info.template_spec.pod_sets[0].count = 3;
    api::TrainJob job = Job("a", "u", "{image: x}");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    StatusOr<std::vector<json::Value>> objs = p.Build(&info, job);
    REQUIRE(objs.ok());
    CHECK(
        objs->at(0).Find("data")->Find("entrypoint.sh")->AsString().find("flags=\"-N 3 -n 3  \"") !=
        std::string::npos);
  }
  SECTION("nil trainer wraps the runtime command instead of crashing") {
    framework::Info info = FluxInfo();
    info.template_spec.pod_sets[0].containers[0].command = {"sleep", "1"};
    api::TrainJob job = Job("a", "u", "");
    REQUIRE(p.EnforceMLPolicy(&info, job).ok());
    REQUIRE(job.spec.trainer.has_value());
    CHECK(*job.spec.trainer->command ==
          std::vector<std::string>{"/bin/bash", "/etc/flux-config/entrypoint.sh", "sleep 1"});
    CHECK(p.Build(&info, job).ok());
  }
}

TEST_CASE("TestValidate", "[flux]") {
  Flux p;
  api::TrainJob empty = Job("t", "", "");
  SECTION("valid when flux policy is nil") {
    framework::Info info;
    CHECK(p.Validate(&info, nullptr, empty).ok());
  }
  SECTION("valid when flux policy is present") {
    framework::Info info = InfoBuilder().MLPolicy("{flux: {}}").Build();
    CHECK(p.Validate(&info, nullptr, empty).ok());
  }
  SECTION("invalid when runtime policy numProcPerNode is less than one") {
    framework::Info info = InfoBuilder().MLPolicy("{flux: {numProcPerNode: 0}}").Build();
    field::ValidationResult r = p.Validate(&info, nullptr, empty);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.numProcPerNode: Invalid value: 0: must be greater than or equal to 1 for "
          "Flux TrainJob");
  }
  SECTION("invalid when trainJob numProcPerNode is less than one") {
    framework::Info info = InfoBuilder().MLPolicy("{flux: {numProcPerNode: 1}}").Build();
    field::ValidationResult r = p.Validate(&info, nullptr, Job("t", "", "{numProcPerNode: 0}"));
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.numProcPerNode: Invalid value: 0: must be greater than or equal to 1 for "
          "Flux TrainJob");
  }
  SECTION("invalid when node podSet includes reserved flux installer init container") {
    framework::Info info = InfoBuilder()
                               .MLPolicy("{flux: {numProcPerNode: 1}}")
                               .PodSet(PodSet("node").InitContainers({"flux-installer"}))
                               .Build();
    field::ValidationResult r = p.Validate(&info, nullptr, empty);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() ==
          "spec.trainer.initContainers: Invalid value: \"flux-installer\": InitContainer "
          "'flux-installer' is reserved");
  }
}

TEST_CASE("TestDeterministicCurve", "[flux]") {
  StatusOr<std::string> a = flux::CurveCertificate(Job("job", "uid-123", ""));
  StatusOr<std::string> b = flux::CurveCertificate(Job("job", "uid-123", ""));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK(a->find("curve") != std::string::npos);
  CHECK(a->find("public-key") != std::string::npos);
}

TEST_CASE("TestGenerateRange", "[flux]") {
  SECTION("single node") { CHECK(flux::GenerateRange(1, 0) == "0"); }
  SECTION("multiple nodes starting at zero") { CHECK(flux::GenerateRange(4, 0) == "0-3"); }
  SECTION("multiple nodes with offset start") { CHECK(flux::GenerateRange(3, 10) == "10-12"); }
}

TEST_CASE("TestGenerateHostlist", "[flux]") {
  SECTION("prefix with one node") {
    CHECK(flux::GenerateHostlist("lammps-job", 1) == "lammps-job-node-0-[0]");
  }
  SECTION("prefix with four nodes") {
    CHECK(flux::GenerateHostlist("flux-cluster", 4) == "flux-cluster-node-0-[0-3]");
  }
  SECTION("empty prefix handled") { CHECK(flux::GenerateHostlist("", 2) == "-node-0-[0-1]"); }
}

TEST_CASE("TestEncodeZ85", "[flux]") {
  SECTION("32 bytes produces 40 characters") {
    CHECK(flux::EncodeZ85(std::string(32, '\0')).size() == 40);
  }
  SECTION("invalid length returns empty string") {
    CHECK(flux::EncodeZ85(std::string("\x01\x02\x03", 3)).empty());
  }
  SECTION("all zeros produces zeros in Z85") {
    CHECK(flux::EncodeZ85(std::string(4, '\0')) == "00000");
  }
  SECTION("the ZeroMQ RFC 32 test vector") {
    CHECK(flux::EncodeZ85("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B") == "HelloWorld");
  }
}

TEST_CASE("TestBuildCurveSecret", "[flux]") {
  api::TrainJob job = Job("test-job", "12345-67890", "");
  StatusOr<json::Value> s = flux::BuildCurveSecret(job);
  REQUIRE(s.ok());
  CHECK(framework::StringField(*s->Find("metadata"), "name") == "test-job-flux-curve");
  std::string cert = Decode64(s->Find("data")->Find("curve.cert")->AsString());
  for (const char* header :
       {"metadata", "curve", "public-key =", "secret-key =", "name = \"test-job\""}) {
    CHECK(cert.find(header) != std::string::npos);
  }
  CHECK(cert.find("    public-key =") != std::string::npos);
  StatusOr<json::Value> again = flux::BuildCurveSecret(job);
  CHECK(*again == *s);
  job.metadata.uid = "different-uid";
  CHECK(*flux::BuildCurveSecret(job) != *s);
}

TEST_CASE("curve key pair matches X25519 of sha256(uid)", "[flux]") {
  // Expected values computed with `openssl pkey` from the raw key sha256("test-uid").
  StatusOr<std::string> cert = flux::CurveCertificate(Job("test-job", "test-uid", ""));
  REQUIRE(cert.ok());
  CHECK(*cert ==
        "#  ZeroMQ CURVE Secret Certificate\n#  Generated by Kubeflow Trainer\n\nmetadata\n    "
        "name = \"test-job\"\ncurve\n"
        "    public-key = \"Ug@]XzF/$c5XiSA?ciBzON!?%<ykt08OK7}!GmY&\"\n"
        "    secret-key = \"S8&cm^cJ}6BIG=ra8+eAkr}]ba-^q(m2?$njMZ}m\"\n");
}

TEST_CASE("TestGetOriginalCommand", "[flux]") {
  framework::Info info;
  SECTION("full command and args") {
    api::TrainJob job =
        Job("test", "", "{image: image, command: [python], args: [train.py, --epochs, '10']}");
    CHECK(flux::GetOriginalCommand(job, info) == "python train.py --epochs 10");
  }
  SECTION("command and args with extra spaces") {
    api::TrainJob job =
        Job("test", "", "{image: image, command: ['  python  '], args: [' script.py ']}");
    CHECK(flux::GetOriginalCommand(job, info) == "python    script.py");
  }
}

}  // namespace
}  // namespace trainer::plugins
