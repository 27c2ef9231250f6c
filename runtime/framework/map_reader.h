// MapReader: a Reader over objects held in memory, for unit tests and trainer-render.
//
//   MapReader reader;
//   reader.Add(std::move(jobset_json));        // keyed by apiVersion/kind/namespace/name
//   reader.SetError(JobSetGVK(), "ns", "a", UnavailableError("boom"));  // injected failure
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "runtime/framework/reader.h"

namespace trainer::framework {

class MapReader final : public Reader {
 public:
  // Stores a full object; its apiVersion, kind, metadata.namespace and metadata.name key it.
  Status Add(json::Value object);
  // Makes Get of that key fail with `error`.
  void SetError(const GroupVersionKind& gvk, std::string_view ns, std::string_view name,
                Status error);

  StatusOr<json::Value> Get(const GroupVersionKind& gvk, std::string_view ns,
                            std::string_view name) const override;

 private:
  using Key =
      std::tuple<std::string, std::string, std::string, std::string>;  // apiVersion, kind, ns, name
  std::map<Key, json::Value> objects_;
  std::map<Key, Status> errors_;
};

}  // namespace trainer::framework
