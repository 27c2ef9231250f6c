// trainer-render: flags, input loading, and the three output modes (render.h).
#include "tools/trainer-render/render.h"

#include <iostream>
#include <optional>
#include <sstream>

#include "common/files/files.h"
#include "common/flags/flags.h"
#include "common/json/json.h"
#include "common/kube/meta.h"
#include "common/yaml/yaml.h"
#include "runtime/api/codec.h"
#include "runtime/api/defaults.h"
#include "runtime/api/podtemplateoverrides.h"
#include "runtime/core/registry.h"
#include "runtime/framework/constants.h"
#include "runtime/framework/map_reader.h"
#include "runtime/plugins/mpi/mpi.h"

namespace trainer::render {

namespace {

struct Options {
  std::string default_namespace = "default";
  std::vector<std::string> files;
  std::string output = "yaml";
  bool validate = false;
  std::optional<std::string> status_from;
  std::string now;
  std::optional<std::string> mpi_ssh_key;  // PEM file: a fixed MPI key, for tests
  framework::Config config;                // --feature-gates
};

// One input problem: printed as one line, exit code 2.
struct InputError {
  std::string message;
};

flags::FlagSet Flags(Options& o) {
  return flags::FlagSet(
      "trainer-render",
      "Renders offline what trainer-controller would apply for a TrainJob (-f the TrainJob and "
      "its runtimes), what trainer-webhook would answer (--validate), or the TrainJob status a "
      "JobSet implies (--status-from).",
      {
          {"filename",
           "TrainJob, runtime, PriorityClass or Secret manifests (YAML or JSON); - reads "
           "standard input; repeatable.",
           flags::Append(&o.files, "FILE"), "f"},
          {"namespace", "Namespace of a TrainJob (and TrainingRuntimes) without one.",
           flags::String(&o.default_namespace, "NAMESPACE"), "n"},
          {"output", "Output format.", flags::OneOf(&o.output, {"yaml", "json"}), "o"},
          {"now", "The time (RFC 3339) for runtimePatches and conditions; default now.",
           flags::String(&o.now, "TIME")},
          {"mpi-ssh-key",
           "The MPI plugin's SSH key from this PEM file instead of a fresh one "
           "(deterministic output, for tests).",
           flags::OptionalString(&o.mpi_ssh_key, "PEM_FILE")},
          {"validate",
           "Print the admission result instead of the objects (exit code 1 when "
           "denied).",
           flags::Bool(&o.validate)},
          {"status-from", "Print the TrainJob status implied by the JobSet in this file.",
           flags::OptionalString(&o.status_from, "JOBSET_FILE")},
          {"feature-gates",
           "Feature gates as the services take them (TrainJobStatus=true adds the status "
           "server's env, volume and ConfigMap; give the certificate Secret with -f).",
           flags::Value{
               .placeholder = "K=V,...",
               .set = [&o](std::string_view text) { return o.config.feature_gates.Set(text); }}},
      });
}

// Parses the flags; `help` tells the caller to print the usage.
std::optional<InputError> ParseFlags(const std::vector<std::string>& args, Options& opts,
                                     bool* help) {
  flags::FlagSet fs = Flags(opts);
  if (Status s = fs.Parse(args); !s.ok()) {
    return InputError{s.message()};
  }
  *help = fs.help();
  if (*help) {
    return std::nullopt;
  }
  if (opts.files.empty()) {
    return InputError{"at least one -f FILE is required"};
  }
  if (opts.validate && opts.status_from) {
    return InputError{"--validate and --status-from are exclusive"};
  }
  if (opts.now.empty()) {
    opts.now = kube::NowTime();
  }
  return std::nullopt;
}

// A document and where it came from.
struct Document {
  std::string where;  // "FILE: document N"
  json::Value doc;
};

// A file's text; "-" is standard input, as in kubectl -f -, so manifests can be piped into the
// controller image, which has no shell to copy files with (kubectl exec -i ... -f -).
StatusOr<std::string> ReadInput(const std::string& file) {
  if (file != "-") return files::ReadFile(file);
  std::ostringstream text;
  text << std::cin.rdbuf();  // empty input (or a second "-") reads ""
  if (std::cin.bad()) return InternalError("read stdin: input error");
  return text.str();
}

std::optional<InputError> ReadDocuments(const std::string& file, std::vector<Document>& out) {
  StatusOr<std::string> text = ReadInput(file);
  if (!text.ok()) {
    return InputError{text.status().message()};
  }
  const std::string name = file == "-" ? "stdin" : file;
  StatusOr<std::vector<json::Value>> docs = yaml::ParseYamlDocuments(*text);
  if (!docs.ok()) {
    return InputError{name + ": " + docs.status().message()};
  }
  for (size_t i = 0; i < docs->size(); ++i) {
    std::string where = name + ": document " + std::to_string(i + 1);
    json::Value& d = (*docs)[i];
    if (!d.IsObject()) {
      return InputError{where + ": expected an object, got " + std::string(json::DescribeType(d))};
    }
    const json::Value* kind = d.Find("kind");
    const json::Value* items = d.Find("items");
    if (kind != nullptr && kind->IsString() && kind->AsString().ends_with("List") &&
        items != nullptr && items->IsArray()) {
      for (size_t j = 0; j < items->size(); ++j) {
        out.push_back({where + " items[" + std::to_string(j) + "]", items->at(j).Clone()});
      }
      continue;
    }
    out.push_back({where, std::move(d)});
  }
  return std::nullopt;
}

std::string KindOf(const json::Value& doc) {
  const json::Value* kind = doc.Find("kind");
  return kind != nullptr && kind->IsString() ? kind->AsString() : "";
}

void SetNamespace(json::Value& doc, const std::string& ns) {
  json::Value& meta = doc["metadata"];
  const json::Value* cur = meta.Find("namespace");
  if (cur == nullptr || !cur->IsString() || cur->AsString().empty()) {
    meta.Set("namespace", json::Value(ns));
  }
}

// Everything loaded from the files.
struct Inputs {
  std::optional<api::TrainJob> job;
  std::string job_where;
  json::Value job_spec;               // spec as given (before podTemplateOverrides were translated)
  std::vector<json::Value> runtimes;  // defaulted documents for the reader
  std::vector<std::string> runtime_names;    // "Kind/name" for messages
  std::vector<json::Value> cluster_objects;  // other objects plugins read (PriorityClasses,
                                             // the status server's certificate Secret)
};

std::optional<InputError> LoadInputs(const Options& opts, std::ostream& err, Inputs& in) {
  std::vector<Document> docs;
  for (const std::string& f : opts.files) {
    if (auto e = ReadDocuments(f, docs)) return e;
  }
  // The TrainJob first: runtimes without a namespace live in its namespace.
  for (Document& d : docs) {
    if (KindOf(d.doc) != api::kTrainJobKind) continue;
    if (in.job) {
      return InputError{d.where + ": a second TrainJob (the first is in " + in.job_where +
                        "); give exactly one"};
    }
    SetNamespace(d.doc, opts.default_namespace);
    if (const json::Value* spec = d.doc.Find("spec")) {
      in.job_spec = spec->Clone();
    }
    StatusOr<api::TrainJob> job = api::DecodeTrainJob(d.doc);
    if (!job.ok()) return InputError{d.where + ": " + job.status().message()};
    std::vector<std::string> warnings;
    Status s = api::ApplyPodTemplateOverrides(*job, &warnings);
    if (!s.ok()) return InputError{d.where + ": " + s.message()};
    for (const std::string& w : warnings) {
      err << "Warning: " << w << "\n";
    }
    api::ApplySchemaDefaults(*job);
    api::DefaultRuntimePatchTimes(*job, nullptr, opts.now);
    in.job = std::move(job).value();
    in.job_where = d.where;
  }
  if (!in.job) {
    return InputError{"no TrainJob in the given files; give exactly one"};
  }
  for (Document& d : docs) {
    std::string kind = KindOf(d.doc);
    if (kind == api::kTrainJobKind) continue;
    // Read by the Volcano admission check and the TrainJobStatus plugin.
    if (kind == "PriorityClass" || kind == "Secret") {
      in.cluster_objects.push_back(std::move(d.doc));
      continue;
    }
    if (kind != api::kTrainingRuntimeKind && kind != api::kClusterTrainingRuntimeKind) {
      return InputError{d.where +
                        ": kind: expected TrainJob, TrainingRuntime or "
                        "ClusterTrainingRuntime, got \"" +
                        kind + "\""};
    }
    if (kind == api::kTrainingRuntimeKind) {
      SetNamespace(d.doc, in.job->metadata.namespace_);
    } else if (json::Value* meta = d.doc.Find("metadata")) {
      meta->Erase("namespace");
    }
    StatusOr<api::TrainingRuntime> rt = api::DecodeTrainingRuntime(d.doc);
    if (!rt.ok()) return InputError{d.where + ": " + rt.status().message()};
    if (rt->metadata.name.empty()) return InputError{d.where + ": metadata.name: Required value"};
    api::ApplyRuntimeSchemaDefaults(*rt);
    in.runtime_names.push_back(
        kind + " " + (rt->metadata.namespace_.empty() ? "" : rt->metadata.namespace_ + "/") +
        rt->metadata.name);
    in.runtimes.push_back(api::EncodeTrainingRuntime(*rt));
  }
  return std::nullopt;
}

// The MPI key generator of --mpi-ssh-key: the pair of the P-521 PEM in `file`.
StatusOr<plugins::mpi::SSHKeyGenerator> FixedKeyFromFile(const std::string& file) {
  StatusOr<std::string> pem = files::ReadFile(file);
  if (!pem.ok()) {
    return pem.status();
  }
  StatusOr<plugins::mpi::SSHKeyGenerator> gen = plugins::mpi::FixedSSHKeyGenerator(*pem);
  if (!gen.ok()) {
    return gen.status().WithContext(file);
  }
  return gen;
}

void PrintObjects(const std::vector<json::Value>& objects, const std::string& format,
                  std::ostream& out) {
  if (format == "json") {
    json::Value list = json::Value::Object();
    list.Set("apiVersion", json::Value("v1"));
    list.Set("kind", json::Value("List"));
    json::Value& items = list["items"];
    items = json::Value::Array();
    for (const json::Value& o : objects) {
      items.PushBack(o.Clone());
    }
    out << json::WritePretty(list, /*sort_keys=*/false) << "\n";
    return;
  }
  for (const json::Value& o : objects) {
    out << "---\n" << yaml::ToYaml(o);
  }
}

void PrintOne(const json::Value& v, const std::string& format, std::ostream& out) {
  if (format == "json") {
    out << json::WritePretty(v, /*sort_keys=*/false) << "\n";
  } else {
    out << yaml::ToYaml(v);
  }
}

// The TrainJob as the validating webhook receives it: translated by the defaulter, which keeps
// spec.podTemplateOverrides so ValidateObjects can check it against the runtime as v2.1 did.
api::TrainJob AsAdmitted(const Inputs& in) {
  api::TrainJob job = api::Clone(*in.job);
  const json::Value* overrides = in.job_spec.Find("podTemplateOverrides");
  if (overrides != nullptr && job.raw.IsObject()) {
    job.raw["spec"].Set("podTemplateOverrides", overrides->Clone());
  }
  return job;
}

int Validate(core::Runtime* runtime, const Inputs& in, const std::string& key,
             const std::string& format, std::ostream& out) {
  json::Value result = json::Value::Object();
  std::string denial;
  std::vector<std::string> warnings;
  if (runtime == nullptr) {
    denial = "unsupported runtime: " + key;
  } else {
    field::ValidationResult r = runtime->ValidateObjects(nullptr, AsAdmitted(in));
    denial = r.ErrorMessage();
    warnings = std::move(r.warnings);
  }
  result.Set("allowed", json::Value(denial.empty()));
  if (!denial.empty()) {
    json::Value& status = result["status"];
    status.Set("code", json::Value(403));
    status.Set("reason", json::Value("Forbidden"));
    status.Set("message", json::Value(denial));
  }
  if (!warnings.empty()) {
    result.Set("warnings", json::Value::StringArray(warnings));
  }
  PrintOne(result, format, out);
  return denial.empty() ? kExitOk : kExitFailed;
}

}  // namespace

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options opts;
  bool help = false;
  std::optional<InputError> bad = ParseFlags(args, opts, &help);
  if (help || bad) {
    Options defaults;
    return *flags::ExitEarly("trainer-render",
                             bad ? InvalidArgumentError(bad->message) : OkStatus(), help,
                             Flags(defaults).Usage(), out, err);
  }
  Inputs in;
  if (auto e = LoadInputs(opts, err, in)) {
    err << "trainer-render: " << e->message << "\n";
    return kExitBadInput;
  }
  framework::MapReader reader;
  for (json::Value& rt : in.runtimes) {
    if (Status s = reader.Add(std::move(rt)); !s.ok()) {
      err << "trainer-render: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  for (json::Value& o : in.cluster_objects) {
    if (Status s = reader.Add(std::move(o)); !s.ok()) {
      err << "trainer-render: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  std::vector<plugins::PluginFactory> plugin_list = plugins::Registry();
  if (opts.mpi_ssh_key) {
    StatusOr<plugins::mpi::SSHKeyGenerator> gen = FixedKeyFromFile(*opts.mpi_ssh_key);
    if (!gen.ok()) {
      err << "trainer-render: " << gen.status().message() << "\n";
      return kExitBadInput;
    }
    for (plugins::PluginFactory& f : plugin_list) {
      if (f.name == plugins::MPI::kName) {
        f.make = [gen = *gen](const framework::PluginContext& ctx) {
          return plugins::MPI::NewWithKeyGenerator(ctx, gen);
        };
      }
    }
  }
  if (opts.status_from) {
    std::vector<Document> docs;
    if (auto e = ReadDocuments(*opts.status_from, docs)) {
      err << "trainer-render: " << e->message << "\n";
      return kExitBadInput;
    }
    if (docs.size() != 1 || KindOf(docs[0].doc) != framework::kJobSetKind) {
      err << "trainer-render: " << *opts.status_from << ": expected exactly one JobSet\n";
      return kExitBadInput;
    }
    SetNamespace(docs[0].doc, in.job->metadata.namespace_);
    if (Status s = reader.Add(std::move(docs[0].doc)); !s.ok()) {
      err << "trainer-render: " << docs[0].where << ": " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  const std::string now = opts.now;
  StatusOr<std::unique_ptr<core::Runtimes>> runtimes = core::Runtimes::New(
      reader, [now] { return now; }, plugin_list, opts.config);
  if (!runtimes.ok()) {
    err << "trainer-render: " << runtimes.status().message() << "\n";
    return kExitFailed;
  }
  const api::TrainJob& job = *in.job;
  std::string key = api::RuntimeRegistryKey(job.spec.runtime_ref);
  core::Runtime* runtime = (*runtimes)->ForTrainJob(job);
  if (opts.validate) {
    return Validate(runtime, in, key, opts.output, out);
  }
  if (runtime == nullptr) {
    err << "trainer-render: " << in.job_where << ": spec.runtimeRef: unsupported runtime: " << key
        << "\n";
    return kExitBadInput;
  }
  if (opts.status_from) {
    StatusOr<std::optional<api::TrainJobStatus>> status = runtime->TrainJobStatus(job);
    if (!status.ok()) {
      err << "trainer-render: trainjob status: " << status.status().message() << "\n";
      return kExitFailed;
    }
    json::Value doc = json::Value::Object();
    doc.Set("status", api::EncodeTrainJobStatus(status->has_value() ? **status : job.status));
    PrintOne(doc, opts.output, out);
    return kExitOk;
  }
  StatusOr<std::vector<json::Value>> objects = runtime->NewObjects(job);
  if (!objects.ok()) {
    if (IsNotFound(objects.status())) {
      std::string have;
      for (const std::string& n : in.runtime_names) have += (have.empty() ? "" : ", ") + n;
      err << "trainer-render: " << in.job_where
          << ": spec.runtimeRef: " << objects.status().message()
          << " (given runtimes: " << (have.empty() ? "none" : have) << ")\n";
      return kExitBadInput;
    }
    err << "trainer-render: " << objects.status().message() << "\n";
    return kExitFailed;
  }
  PrintObjects(*objects, opts.output, out);
  return kExitOk;
}

}  // namespace trainer::render
