// Test helpers (testing.h).
#include "runtime/framework/testing/testing.h"

#include <stdexcept>

#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/framework/info.h"

namespace trainer::testing {

json::Value Yaml(std::string_view text) {
  StatusOr<json::Value> v = yaml::ParseYaml(text);
  if (!v.ok()) {
    throw std::runtime_error("test yaml: " + v.status().message());
  }
  return std::move(v).value();
}

api::TrainJob TrainJob(std::string_view yaml) {
  StatusOr<api::TrainJob> job = api::DecodeTrainJob(Yaml(yaml));
  if (!job.ok()) {
    throw std::runtime_error("test trainjob: " + job.status().message());
  }
  api::ApplySchemaDefaults(*job);
  return std::move(job).value();
}

api::TrainingRuntime Runtime(std::string_view yaml) {
  StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntime(Yaml(yaml));
  if (!rt.ok()) {
    throw std::runtime_error("test runtime: " + rt.status().message());
  }
  api::ApplyRuntimeSchemaDefaults(*rt);
  return std::move(rt).value();
}

api::MLPolicy MLPolicy(std::string_view yaml) {
  json::Value doc = json::Value::Object();
  doc.Set("apiVersion", json::Value("trainer.kubeflow.org/v1alpha1"));
  doc.Set("kind", json::Value("TrainingRuntime"));
  doc["metadata"].Set("name", json::Value("x"));
  doc["spec"].Set("mlPolicy", Yaml(yaml));
  StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntime(doc);
  if (!rt.ok() || !rt->spec.ml_policy) {
    throw std::runtime_error("test mlPolicy: " + rt.status().message());
  }
  return *rt->spec.ml_policy;
}

PodSet& PodSet::Containers(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    framework::Container c;
    c.name = n;
    ps_.containers.push_back(std::move(c));
  }
  return *this;
}

PodSet& PodSet::InitContainers(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    framework::Container c;
    c.name = n;
    ps_.init_containers.push_back(std::move(c));
  }
  return *this;
}

PodSet& PodSet::Container(std::string_view yaml) {
  ps_.containers.push_back(framework::Container::FromJson(Yaml(yaml)));
  return *this;
}

PodSet& PodSet::InitContainer(std::string_view yaml) {
  ps_.init_containers.push_back(framework::Container::FromJson(Yaml(yaml)));
  return *this;
}

PodSet& PodSet::Volumes(std::string_view yaml) {
  ps_.volumes = Yaml(yaml);
  return *this;
}

InfoBuilder& InfoBuilder::MLPolicy(std::string_view yaml) {
  info_.runtime_policy.ml_policy = testing::MLPolicy(yaml);
  return *this;
}

InfoBuilder& InfoBuilder::PodSet(testing::PodSet& ps) {
  info_.template_spec.pod_sets.push_back(ps.Build());
  return *this;
}

InfoBuilder& InfoBuilder::JobSetSpec(std::string_view yaml) {
  info_.template_spec.jobset_spec = Yaml(yaml);
  return *this;
}

std::string EnvNames(const json::Value& env) {
  std::string out;
  if (!env.IsArray()) {
    return out;
  }
  for (const json::Value& e : env.elements()) {
    out += (out.empty() ? "" : ",") + framework::StringField(e, "name");
  }
  return out;
}

std::string EnvValue(const json::Value& env, std::string_view name) {
  const json::Value* e = json::FindByKey(env, "name", name);
  return e != nullptr ? framework::StringField(*e, "value") : "";
}

std::string Canon(const json::Value& v) { return json::WriteCanonical(v); }

}  // namespace trainer::testing
