// JobSet builder steps (upstream plugins/jobset/builder.go).
#include "runtime/plugins/jobset/builder.h"

#include "runtime/framework/apply.h"
#include "runtime/framework/constants.h"

namespace trainer::plugins::jobset {

using framework::ContainersOf;
using framework::kAncestorTrainer;
using framework::kNode;

json::Value* Builder::ReplicatedJobs() {
  json::Value* spec = jobset_.Find("spec");
  json::Value* rjobs = spec != nullptr ? spec->Find("replicatedJobs") : nullptr;
  return rjobs != nullptr && rjobs->IsArray() ? rjobs : nullptr;
}

namespace {

void ApplyInitializer(json::Value& container, const api::DatasetOrModelInitializer& init) {
  json::Value& env = container["env"];
  if (init.storage_uri) {
    framework::UpsertEnvVar(
        env, framework::EnvVar(framework::kInitializerEnvStorageUri, *init.storage_uri));
  }
  framework::UpsertEnvVars(env, framework::NormalizeEnvVars(init.env));
  if (env.empty()) {
    container.Erase("env");
  }
  if (init.secret_ref) {
    json::Value from = json::Value::Object();
    from["secretRef"].Set("name", json::Value(*init.secret_ref));
    json::Value& env_from = container["envFrom"];
    if (!env_from.IsArray()) {
      env_from = json::Value::Array();
    }
    env_from.PushBack(std::move(from));
  }
}

void InitializerJob(json::Value& rjob, std::string_view ancestor,
                    const api::DatasetOrModelInitializer* init) {
  rjob.Set("replicas", json::Value(1));
  json::Value* containers = ContainersOf(rjob);
  if (containers == nullptr || !init) {
    return;
  }
  for (json::Value& c : containers->elements()) {
    if (framework::StringField(c, "name") == ancestor) {
      ApplyInitializer(c, *init);
    }
  }
}

bool RunLauncherAsNode(const framework::Info& info) {
  const auto& ml = info.runtime_policy.ml_policy;
  return ml && ml->mpi && ml->mpi->run_launcher_as_node.value_or(false);
}

void MergeStringMap(json::Value& target, const std::map<std::string, std::string>& entries) {
  if (entries.empty()) {
    return;
  }
  if (!target.IsObject()) {
    target = json::Value::Object();
  }
  for (const auto& [k, v] : entries) {
    target.Set(k, json::Value(v));
  }
}

}  // namespace

Builder& Builder::Initializer(const api::TrainJob& job) {
  json::Value* rjobs = ReplicatedJobs();
  if (rjobs == nullptr) {
    return *this;
  }
  for (json::Value& rjob : rjobs->elements()) {
    std::optional<std::string> ancestor = framework::AncestorOf(rjob);
    if (ancestor == framework::kDatasetInitializer) {
      InitializerJob(rjob, framework::kDatasetInitializer,
                     job.spec.initializer && job.spec.initializer->dataset
                         ? &*job.spec.initializer->dataset
                         : nullptr);
    }
    if (ancestor == framework::kModelInitializer) {
      InitializerJob(rjob, framework::kModelInitializer,
                     job.spec.initializer && job.spec.initializer->model
                         ? &*job.spec.initializer->model
                         : nullptr);
    }
  }
  return *this;
}

Builder& Builder::Trainer(const framework::Info& info, const api::TrainJob& job) {
  json::Value* rjobs = ReplicatedJobs();
  if (rjobs == nullptr) {
    return *this;
  }
  for (json::Value& rjob : rjobs->elements()) {
    bool is_trainer = framework::AncestorOf(rjob) == kAncestorTrainer;
    if (is_trainer) {
      rjob.Set("replicas", json::Value(1));
    }
    bool gets_env =
        is_trainer || (RunLauncherAsNode(info) && framework::StringField(rjob, "name") == kNode);
    json::Value* containers = ContainersOf(rjob);
    if (containers == nullptr || !job.spec.trainer) {
      continue;
    }
    const api::Trainer& t = *job.spec.trainer;
    for (json::Value& c : containers->elements()) {
      if (framework::StringField(c, "name") != kNode) {
        continue;
      }
      if (is_trainer) {
        if (t.image) {
          c.Set("image", json::Value(*t.image));
        }
        if (t.command) {
          c.Set("command", json::Value::StringArray(*t.command));
        }
        if (t.args) {
          c.Set("args", json::Value::StringArray(*t.args));
        }
      }
      if (gets_env) {
        json::Value env = framework::NormalizeEnvVars(t.env);
        if (!env.empty()) {
          framework::UpsertEnvVars(c["env"], env);
        }
      }
    }
  }
  return *this;
}

Builder& Builder::PodLabels(const std::map<std::string, std::string>& labels) {
  if (json::Value* rjobs = ReplicatedJobs(); rjobs != nullptr && !labels.empty()) {
    for (json::Value& rjob : rjobs->elements()) {
      MergeStringMap(rjob["template"]["spec"]["template"]["metadata"]["labels"], labels);
    }
  }
  return *this;
}

Builder& Builder::PodAnnotations(const std::map<std::string, std::string>& annotations) {
  if (json::Value* rjobs = ReplicatedJobs(); rjobs != nullptr && !annotations.empty()) {
    for (json::Value& rjob : rjobs->elements()) {
      MergeStringMap(rjob["template"]["spec"]["template"]["metadata"]["annotations"], annotations);
    }
  }
  return *this;
}

Builder& Builder::Suspend(std::optional<bool> suspend) {
  json::Value& spec = jobset_["spec"];
  if (suspend) {
    spec.Set("suspend", json::Value(*suspend));
  } else {
    spec.Erase("suspend");
  }
  return *this;
}

}  // namespace trainer::plugins::jobset
