// MPI plugin (upstream plugins/mpi/mpi_test.go): TestMPI (EnforceMLPolicy then Build) and
// TestValidate by upstream case name.
#include "runtime/plugins/mpi/mpi.h"

#include <catch2/catch.hpp>

#include "runtime/api/kinds.h"
#include "runtime/framework/map_reader.h"
#include "runtime/framework/testing/testing.h"

namespace trainer::plugins {
namespace {

using testing::EnvNames;
using testing::EnvValue;
using testing::InfoBuilder;
using testing::PodSet;

const mpi::SSHKeyPair kKey{"PRIVATE", "PUBLIC\n"};

std::unique_ptr<MPI> NewMPI(const framework::Reader& reader) {
  return std::make_unique<MPI>(&reader, [] { return StatusOr<mpi::SSHKeyPair>(kKey); });
}

// launcher (+ node when `with_node`) PodSets with their pod network, as the PodNetwork phase
// leaves them.
framework::Info MPIInfo(std::string_view policy, bool with_node = true,
                        bool launcher_container = false) {
  InfoBuilder b;
  b.MLPolicy(policy);
  PodSet launcher("launcher");
  if (launcher_container) {
    launcher.Containers({"node"});
  }
  b.PodSet(launcher);
  if (with_node) {
    b.PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}));
  }
  framework::Info info = b.Build();
  for (framework::PodSet& ps : info.template_spec.pod_sets) {
    ps.network = framework::PodNetwork{"trainJob", "trainJob", 1};
  }
  return info;
}

api::TrainJob Job(std::string_view trainer) {
  std::string yaml =
      "metadata: {name: trainJob, namespace: default, uid: trainJob}\n"
      "spec:\n  runtimeRef: {name: mpi}\n";
  if (!trainer.empty()) {
    yaml += "  trainer: " + std::string(trainer) + "\n";
  }
  return testing::TrainJob(yaml);
}

constexpr char kOpenMPI[] =
    "{mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh}}";
constexpr char kOpenMPILauncherAsNode[] =
    "{mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh, "
    "runLauncherAsNode: true}}";

constexpr char kSSHVolume[] =
    R"({"name":"mpi-ssh-auth","secret":{"defaultMode":256,"items":[{"key":"ssh-privatekey","mode":416,"path":"id_rsa"},{"key":"ssh-publickey","mode":420,"path":"id_rsa.pub"},{"key":"ssh-publickey","mode":420,"path":"authorized_keys"}],"secretName":"trainJob-mpi-ssh-auth"}})";
constexpr char kHostfileVolume[] =
    R"({"configMap":{"items":[{"key":"hostfile","mode":292,"path":"hostfile"}],"name":"trainJob-mpi-hostfile"},"name":"mpi-hostfile"})";
constexpr char kOwner[] =
    R"([{"apiVersion":"trainer.kubeflow.org/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"TrainJob","name":"trainJob","uid":"trainJob"}])";

std::string Hostfile(const std::vector<json::Value>& objs) {
  REQUIRE(!objs.empty());
  const json::Value& cm = objs.back();
  REQUIRE(framework::StringField(cm, "kind") == "ConfigMap");
  return cm.Find("data")->Find("hostfile")->AsString();
}

void CheckSecret(const json::Value& s) {
  CHECK(
      testing::Canon(s) ==
      std::string(
          R"({"apiVersion":"v1","data":{"ssh-privatekey":"UFJJVkFURQ==","ssh-publickey":"UFVCTElDCg=="},"immutable":true,"kind":"Secret","metadata":{"name":"trainJob-mpi-ssh-auth","namespace":"default","ownerReferences":)") +
          kOwner + R"(},"type":"kubernetes.io/ssh-auth"})");
}

TEST_CASE("TestMPI", "[mpi]") {
  framework::MapReader reader;
  auto p = NewMPI(reader);
  SECTION("no action when info is nil") {
    api::TrainJob job = Job("{numNodes: 2}");
    CHECK(p->EnforceMLPolicy(nullptr, job).ok());
    StatusOr<std::vector<json::Value>> objs = p->Build(nullptr, job);
    REQUIRE(objs.ok());
    CHECK(objs->empty());
  }
  SECTION("no action when mlPolicySource is nil") {
    framework::Info info = InfoBuilder().Label("key", "value").Build();
    api::TrainJob job = Job("{numNodes: 2}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(p->Build(&info, job)->empty());
  }
  SECTION("no action when mlPolicySource mpi is null") {
    framework::Info info = MPIInfo("{numNodes: 1}");
    api::TrainJob job = Job("{numNodes: 2}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(info.template_spec.pod_sets[0].volumes.empty());
    CHECK(p->Build(&info, job)->empty());
  }
  SECTION("trainJob numNodes is respected rather than mlPolicy one") {
    framework::Info info = MPIInfo(kOpenMPI);
    api::TrainJob job = Job("{numNodes: 2}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    const auto& ps = info.template_spec.pod_sets;
    CHECK(*ps[0].count == 1);
    CHECK(*ps[1].count == 2);
    CHECK(testing::Canon(ps[0].volumes) ==
          "[" + std::string(kSSHVolume) + "," + kHostfileVolume + "]");
    CHECK(testing::Canon(ps[1].volumes) == "[" + std::string(kSSHVolume) + "]");
    CHECK(testing::Canon(ps[1].containers[0].volume_mounts) ==
          R"([{"mountPath":"/root/.ssh","name":"mpi-ssh-auth"}])");
    StatusOr<std::vector<json::Value>> objs = p->Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 2);
    CheckSecret(objs->at(0));
    CHECK(
        testing::Canon(objs->at(1)) ==
        std::string(
            R"({"apiVersion":"v1","data":{"hostfile":"trainJob-node-0-0.trainJob slots=1\ntrainJob-node-0-1.trainJob slots=1\n"},"kind":"ConfigMap","metadata":{"name":"trainJob-mpi-hostfile","namespace":"default","ownerReferences":)") +
            kOwner + "}}");
  }
  SECTION("trainJob numProcPerNode is respected rather than mlPolicy one") {
    framework::Info info = MPIInfo(kOpenMPI, true, /*launcher_container=*/true);
    api::TrainJob job = Job("{numNodes: 1, numProcPerNode: 2}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(*info.runtime_policy.ml_policy->mpi->num_proc_per_node == 2);
    const framework::Container& launcher = info.template_spec.pod_sets[0].containers[0];
    CHECK(EnvNames(launcher.env) ==
          "OMPI_MCA_orte_default_hostfile,OMPI_MCA_orte_keep_fqdn_hostnames,"
          "OMPI_MCA_orte_set_default_slots,OMPI_MCA_plm_rsh_args");
    CHECK(EnvValue(launcher.env, "OMPI_MCA_orte_default_hostfile") == "/etc/mpi/hostfile");
    CHECK(EnvValue(launcher.env, "OMPI_MCA_orte_keep_fqdn_hostnames") == "true");
    CHECK(EnvValue(launcher.env, "OMPI_MCA_orte_set_default_slots") == "2");
    CHECK(EnvValue(launcher.env, "OMPI_MCA_plm_rsh_args") == "-o ConnectionAttempts=10");
    CHECK(
        testing::Canon(launcher.volume_mounts) ==
        R"([{"mountPath":"/root/.ssh","name":"mpi-ssh-auth"},{"mountPath":"/etc/mpi","name":"mpi-hostfile"}])");
    CHECK(Hostfile(*p->Build(&info, job)) == "trainJob-node-0-0.trainJob slots=2\n");
  }
  SECTION("numProcPerNode is set to number of GPUs in TrainJob") {
    framework::Info info = MPIInfo(kOpenMPI, true, true);
    api::TrainJob job =
        Job("{numNodes: 1, image: 'test:trainjob', command: [trainjob], args: [trainjob], "
            "resourcesPerNode: {requests: {custom.com/gpu: 5}}}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(*info.runtime_policy.ml_policy->mpi->num_proc_per_node == 5);
    CHECK(EnvValue(info.template_spec.pod_sets[0].containers[0].env,
                   "OMPI_MCA_orte_set_default_slots") == "5");
    CHECK(Hostfile(*p->Build(&info, job)) == "trainJob-node-0-0.trainJob slots=5\n");
  }
  SECTION("runLauncherAsNode is true") {
    framework::Info info = MPIInfo(kOpenMPILauncherAsNode, true, true);
    api::TrainJob job = Job("{numNodes: 10}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(*info.template_spec.pod_sets[0].count == 1);
    CHECK(*info.template_spec.pod_sets[1].count == 9);
    std::string hostfile = Hostfile(*p->Build(&info, job));
    CHECK(hostfile.rfind("trainJob-launcher-0-0.trainJob slots=1\n"
                         "trainJob-node-0-0.trainJob slots=1\n",
                         0) == 0);
    CHECK(std::count(hostfile.begin(), hostfile.end(), '\n') == 10);
  }
  SECTION("sshAuth secret already has existed in the cluster") {
    REQUIRE(reader
                .Add(testing::Yaml("{apiVersion: v1, kind: Secret, metadata: {name: "
                                   "trainJob-mpi-ssh-auth, namespace: default}, immutable: true}"))
                .ok());
    framework::Info info = MPIInfo(kOpenMPILauncherAsNode, /*with_node=*/false);
    api::TrainJob job = Job("{}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    StatusOr<std::vector<json::Value>> objs = p->Build(&info, job);
    REQUIRE(objs.ok());
    REQUIRE(objs->size() == 1);  // the immutable Secret is never re-applied
    CHECK(Hostfile(*objs) == "trainJob-launcher-0-0.trainJob slots=1\n");
  }
  SECTION("failed to get sshAuth secret due to API error") {
    reader.SetError(api::kSecretGVK, "default", "trainJob-mpi-ssh-auth",
                    UnavailableError("failed to get SSH Auth Secret from API during Build"));
    framework::Info info = MPIInfo(kOpenMPILauncherAsNode, false);
    api::TrainJob job = Job("{}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    StatusOr<std::vector<json::Value>> objs = p->Build(&info, job);
    REQUIRE_FALSE(objs.ok());
    CHECK(objs.status().message() == "failed to get SSH Auth Secret from API during Build");
  }
  SECTION("hostfile endpoints honour network.subdomain") {
    framework::Info info = MPIInfo(kOpenMPI);
    info.template_spec.pod_sets[1].network->subdomain = "custom";
    api::TrainJob job = Job("{numNodes: 2}");
    REQUIRE(p->EnforceMLPolicy(&info, job).ok());
    CHECK(Hostfile(*p->Build(&info, job)) ==
          "trainJob-node-0-0.custom slots=1\ntrainJob-node-0-1.custom slots=1\n");
  }
  SECTION("unsupported MPI implementation fails EnforceMLPolicy") {
    framework::Info info = MPIInfo("{mpi: {numProcPerNode: 1, mpiImplementation: ''}}", true, true);
    api::TrainJob job = Job("{}");
    Status s = p->EnforceMLPolicy(&info, job);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == "MPI implementation for \"\" doesn't supported");
  }
  SECTION("key generation failure is reported") {
    MPI failing(&reader, [] { return StatusOr<mpi::SSHKeyPair>(InternalError("no entropy")); });
    framework::Info info = MPIInfo(kOpenMPI);
    api::TrainJob job = Job("{}");
    REQUIRE(failing.EnforceMLPolicy(&info, job).ok());
    StatusOr<std::vector<json::Value>> objs = failing.Build(&info, job);
    REQUIRE_FALSE(objs.ok());
    CHECK(objs.status().message() == "failed to build SSH Auth secret: no entropy");
  }
}

constexpr char kNumNodesError[] =
    "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with enabled "
    "runLauncherAsNode does not have either launcher and node";

TEST_CASE("TestValidate", "[mpi]") {
  framework::MapReader reader;
  auto p = NewMPI(reader);
  auto validate = [&](const framework::Info* info, std::string_view trainer) {
    return p->Validate(info, nullptr, Job(trainer));
  };
  const char* kAsNode =
      "{mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, runLauncherAsNode: true}}";
  const char* kPlain = "{mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI}}";
  SECTION("no action when info is nil ") { CHECK(validate(nullptr, "{}").ok()); }
  SECTION("no action when info does not have MLPolicySource") {
    framework::Info info;
    CHECK(validate(&info, "").ok());
  }
  SECTION("info does not have MPIPolicySource") {
    framework::Info info = InfoBuilder().MLPolicy("{numNodes: 1}").Build();
    CHECK(validate(&info, "").ok());
  }
  SECTION("numProcPerNode typed is int") {
    framework::Info info = InfoBuilder().MLPolicy(kPlain).Build();
    CHECK(validate(&info, "{numProcPerNode: 8}").ok());
  }
  SECTION("runtime does not have Launcher but TrainJob has only 1 numNodes") {
    framework::Info info = InfoBuilder()
                               .MLPolicy(kAsNode)
                               .PodSet(PodSet("node").Ancestor("trainer").Containers({"node"}))
                               .Build();
    CHECK(validate(&info, "{numNodes: 1}").ok());
  }
  SECTION("runtime does not have Launcher even though MPI with runLauncherAsNode has 2 numNodes") {
    framework::Info info =
        InfoBuilder().MLPolicy(kAsNode).PodSet(PodSet("node").Containers({"node"})).Build();
    field::ValidationResult r = validate(&info, "{numNodes: 2}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() == kNumNodesError);
  }
  SECTION("runtime does not have Node even though MPI with runLauncherAsNode has 2 numNodes") {
    framework::Info info =
        InfoBuilder().MLPolicy(kAsNode).PodSet(PodSet("launcher").Containers({"node"})).Build();
    field::ValidationResult r = validate(&info, "{numNodes: 2}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() == kNumNodesError);
  }
  SECTION(
      "runtime does not have Launcher and Node even though MPI with runLauncherAsNode has 2 "
      "numNodes") {
    framework::Info info = InfoBuilder().MLPolicy(kAsNode).Build();
    field::ValidationResult r = validate(&info, "{numNodes: 2}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].ToString() == kNumNodesError);
  }
  SECTION("trainer has reserved MPI env OMPI_MCA_orte_default_hostfile") {
    framework::Info info = InfoBuilder().MLPolicy(kPlain).Build();
    field::ValidationResult r =
        validate(&info, "{env: [{name: OMPI_MCA_orte_default_hostfile, value: /custom/hostfile}]}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].field == "spec.trainer.env");
    CHECK(r.errors[0].detail ==
          "must not have reserved envs, invalid envs configured: [OMPI_MCA_orte_default_hostfile]");
  }
  SECTION("trainer has multiple reserved MPI envs") {
    framework::Info info = InfoBuilder().MLPolicy(kPlain).Build();
    field::ValidationResult r =
        validate(&info,
                 "{env: [{name: OMPI_MCA_plm_rsh_args, value: custom-args}, {name: "
                 "OMPI_MCA_orte_default_hostfile, value: /custom/hostfile}]}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].detail ==
          "must not have reserved envs, invalid envs configured: [OMPI_MCA_orte_default_hostfile "
          "OMPI_MCA_plm_rsh_args]");
  }
  SECTION("trainer has non-reserved env is valid") {
    framework::Info info = InfoBuilder().MLPolicy(kPlain).Build();
    CHECK(validate(&info, "{env: [{name: CUSTOM_ENV, value: custom-value}]}").ok());
  }
}

TEST_CASE("MPI watches", "[mpi]") {
  framework::MapReader reader;
  auto p = NewMPI(reader);
  std::vector<framework::Watch> w = p->Watches();
  REQUIRE(w.size() == 2);
  CHECK(w[0].gvk.kind == "ConfigMap");
  CHECK(w[1].gvk.kind == "Secret");
}

}  // namespace
}  // namespace trainer::plugins
