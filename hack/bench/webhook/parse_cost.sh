#!/usr/bin/env bash
# json::Parse's instructions per byte (callgrind), on the documents the services parse most: the
# bench's TrainJob AdmissionReview (the webhook's body; plain, and with the paths
# webhook/admission.cc's DecodeAdmissionReview leaves out) and a JobSet watch event (the
# controller's watches; plain, and with the paths controller/caches.cc's CacheOptions leaves out
# of JobSets). Load-independent, like server_cost.sh: for comparing two builds of common/json.
#
#   hack/bench/webhook/parse_cost.sh [--bin build/bin] [--count 2000] [--top 0] [--keep DIR]
# Each figure is the difference of two runs (20 parses, then 20 + count), divided by count and by
# the document's bytes, so a first parse's set-up cancels out. Destroying the parsed Values is
# counted apart (the webhook frees its documents after its answer). --top N prints the N
# functions with the most inclusive and self instructions of the first case's parse; --keep DIR
# keeps the callgrind.out files.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
exe=trainer-bench-json-parse
source "$here/callgrind_common.sh"
callgrind_options "$@"

review=(--file "$here/trainjob-create.json")
review_skip=("${review[@]}")
for p in request.object.metadata.managedFields request.oldObject.metadata.managedFields \
  request.options request.requestKind request.requestResource request.userInfo.groups \
  request.userInfo.extra; do
  review_skip+=(--skip "$p")
done
event=(--file "$root/tests/unit/common/informer/testdata/jobset.json" --event MODIFIED)
event_skip=("${event[@]}" --skip 'object.spec.replicatedJobs.*.template')
for f in fieldsV1 time apiVersion; do
  event_skip+=(--skip "object.metadata.managedFields.*.$f")
done

# inclusive <callgrind.out> <function>: the function's inclusive instructions.
inclusive() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v f="$2" 'index($0, f) && !done {gsub(",", "", $1); print $1; done = 1}'
}

# cost <label> <args...>: one line, "<label>: N instructions per byte (B bytes, I per parse,
# D to destroy)".
first=1
cost() {
  local label="$1" parse=() destroy=() bytes="" n out
  shift
  for n in 20 $((20 + count)); do
    out="$work/callgrind.out.${label// /-}.$n"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
      --toggle-collect='trainer::bench::ParseOne*' --toggle-collect='trainer::bench::DestroyOne*' \
      "$exe" "$@" --count "$n" >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; exit 1; }
    bytes=$(sed -nE 's/^parsed [0-9]+ documents of ([0-9]+) bytes$/\1/p' "$work/run.log")
    parse+=("$(inclusive "$out" 'trainer::bench::ParseOne(')")
    destroy+=("$(inclusive "$out" 'trainer::bench::DestroyOne(')")
  done
  python3 -c "import sys; p = ($((parse[1] - parse[0])) / $count); \
d = ($((destroy[1] - destroy[0])) / $count); \
print('%s: %.1f instructions per byte (%d bytes, %.0f per parse, %.0f to destroy)' % \
      (sys.argv[1], p / $bytes, $bytes, p, d))" "$label"
  if ((top > 0 && first)); then
    top_functions "$out" "$top"
  fi
  first=0
}

cost "review" "${review[@]}"
cost "review, webhook's skips" "${review_skip[@]}"
cost "JobSet event" "${event[@]}"
cost "JobSet event, controller's skips" "${event_skip[@]}"
