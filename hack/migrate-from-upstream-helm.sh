#!/usr/bin/env bash
# Replaces upstream Kubeflow Trainer's Helm release (chart kubeflow-trainer, v2.3.0) with a
# trainer-cpp release in the same namespace, keeping every CRD, TrainJob, runtime and JobSet.
#
# Why a script: upstream's chart renders its CRDs as ordinary templates, so `helm uninstall` of
# its release, or `helm upgrade` of it to this chart, deletes the CRDs and with them every
# TrainJob and runtime (and the garbage collector then deletes their JobSets and pods).
#
#   hack/migrate-from-upstream-helm.sh [--from kubeflow-trainer] [--to trainer-cpp]
#       [--namespace kubeflow-system] [--chart charts/trainer-cpp] [--state-dir DIR]
#       [--check] [-- HELM_INSTALL_ARGS...]
#
# HELM_INSTALL_ARGS go to `helm install` (and to the `helm template` of step 1), e.g.
# `-f values.yaml --set webhook.replicas=2 --wait`. The values of the old release come first
# (`helm get values`: what its installer gave), less `image.*`, which names upstream's image.
# --check stops after step 1. Steps, each printed; a rerun with the same --state-dir (default
# ./trainer-migration-<from>) continues where a failed one stopped:
#   1. checks: the old release is upstream's chart, the new one does not exist; renders the new
#      release, so values this chart refuses stop here, before anything changes; names any object
#      the new release renders that exists but came from neither the old release nor its
#      runtime installer (Helm would refuse to take it over)
#   2. saves the old release's manifest and values in the state directory
#   3. stops upstream's manager: its Deployments the new release does not render, scaled to 0
#   4. Helm forgets the old release (its release Secrets are deleted): nothing it installed is
#      deleted and no hook runs (upstream's pre-delete hook deletes the runtimes)
#   5. applies this chart's CRDs (server-side; the TrainJob CRD gains spec.podTemplateOverrides)
#   6. hands to the new release what both render under one name (the webhook configurations, the
#      certificate Secret, kubeflow-trainer-public, the runtimes the old installer applied)
#   7. helm install of the new release
#   8. deletes what only the old release rendered, the CRDs excepted (upstream's Deployment,
#      Service, ServiceAccount, roles, ConfigMaps)
# Admission is refused from step 3 until trainer-webhook is ready (failurePolicy Fail); running
# TrainJobs are not affected. docs/install.md, "From upstream's Helm chart", says what to check.
set -euo pipefail

from=kubeflow-trainer to=trainer-cpp ns=kubeflow-system
chart="$(cd "$(dirname "$0")/.." && pwd)/charts/trainer-cpp"
state="" check_only=0 install_args=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
# value FLAG ARG: ARG, or exit naming the flag that lacks it.
value() {
  [[ -n "${2:-}" && "$2" != -* ]] || { echo "migrate: $1 needs a value" >&2; exit 2; }
  printf '%s' "$2"
}
while (($#)); do
  case "$1" in
    --from) from=$(value "$1" "${2:-}") || exit 2; shift 2 ;;
    --to) to=$(value "$1" "${2:-}") || exit 2; shift 2 ;;
    -n|--namespace) ns=$(value "$1" "${2:-}") || exit 2; shift 2 ;;
    --chart) chart=$(value "$1" "${2:-}") || exit 2; shift 2 ;;
    --state-dir) state=$(value "$1" "${2:-}") || exit 2; shift 2 ;;
    --check) check_only=1; shift ;;
    --) shift; install_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "migrate: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
state=${state:-./trainer-migration-$from}
HELM=${HELM:-helm} KUBECTL=${KUBECTL:-kubectl}

step() { echo "[migrate $(date +%H:%M:%S)] $*"; }
die() { echo "[migrate] error: $*" >&2; exit 1; }
k() { "$KUBECTL" -n "$ns" "$@"; }
# names FILE: "kind.group/name" of the objects of a manifest that exist now. A kind the cluster
# does not serve has no objects: kubectl's error for it is shown, and the rest still listed.
names() {
  k get --ignore-not-found -f "$1" -o name 2>"$state/names.err" | sort -u || true
  [[ ! -s "$state/names.err" ]] || sed 's/^/[migrate] (listing) /' "$state/names.err" >&2
}

for tool in "$HELM" "$KUBECTL"; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
mkdir -p "$state"
started="$state/from-manifest.yaml"  # present once step 2 ran: the old release is gone from Helm

# --- 1
if [[ ! -s "$started" ]]; then
  chart_of=$("$HELM" -n "$ns" list --filter "^${from}\$" -o json |
    sed -n 's/.*"chart":"\([^"]*\)".*/\1/p')
  [[ -n "$chart_of" ]] || die "no Helm release $from in namespace $ns (--from, --namespace)"
  [[ "$chart_of" == kubeflow-trainer-* ]] ||
    die "release $from is chart $chart_of, not upstream's kubeflow-trainer"
  ! "$HELM" -n "$ns" status "$to" >/dev/null 2>&1 ||
    die "release $to exists already in namespace $ns (--to)"
  "$HELM" -n "$ns" get values "$from" -o yaml >"$state/from-values.yaml"
  "$HELM" -n "$ns" get manifest "$from" >"$state/from-manifest.next"
  # What the old release owns: its manifest's objects, and the runtimes its installer Job applied.
  { names "$state/from-manifest.next"
    "$KUBECTL" get clustertrainingruntimes -o name \
      -l trainer.kubeflow.org/managed-by=runtimes-installer 2>/dev/null || true
  } | sort -u >"$state/from.names.next"
  from_names="$state/from.names.next"
else
  step "continuing the migration recorded in $state"
  from_names="$state/from.names"
fi
values=(-f "$state/from-values.yaml" --set image.registry=null,image.repository=null,image.tag=null)
step "1. rendering release $to from $chart with $from's values and ${install_args[*]:-no more}"
"$HELM" template "$to" "$chart" -n "$ns" "${values[@]}" "${install_args[@]}" >"$state/to.yaml" ||
  die "$chart refuses these values (above); nothing was changed"
names "$state/to.yaml" >"$state/to.names"
foreign=$(comm -23 "$state/to.names" "$from_names")
if [[ -n "$foreign" && ! -s "$started" ]]; then
  die "these objects exist and are not $from's: Helm would refuse to install $to over them;
remove them or choose other names first:
$foreign"
fi
((check_only)) && { step "checks passed (--check): nothing was changed"; exit 0; }

# --- 2
if [[ ! -s "$started" ]]; then
  step "2. saving $from's manifest and values in $state"
  mv "$state/from.names.next" "$state/from.names"
  mv "$state/from-manifest.next" "$started"
fi

# --- 3
for d in $(comm -23 "$state/from.names" "$state/to.names" | grep '^deployment\.apps/' || true); do
  k get "$d" >/dev/null 2>&1 || continue  # deleted by an earlier run's step 8
  step "3. stopping $d (replicas 0)"
  k scale "$d" --replicas=0
done

# --- 4
step "4. Helm forgets release $from (its release Secrets; nothing it installed is deleted)"
k delete secret -l "owner=helm,name=$from" --ignore-not-found

# --- 5
step "5. applying $chart's CRDs"
"$KUBECTL" apply --server-side --force-conflicts -f "$chart/crds/"

# --- 6
handover=$(comm -12 "$state/to.names" "$state/from.names")
if [[ -n "$handover" ]]; then
  step "6. handing to $to: $(echo "$handover" | tr '\n' ' ')"
  # shellcheck disable=SC2086  # one name per word
  k annotate --overwrite $handover "meta.helm.sh/release-name=$to" \
    "meta.helm.sh/release-namespace=$ns" >/dev/null
  # shellcheck disable=SC2086
  k label --overwrite $handover app.kubernetes.io/managed-by=Helm \
    trainer.kubeflow.org/managed-by- >/dev/null
fi

# --- 7
# A rerun after a failed install upgrades the release that install left.
verb=install
"$HELM" -n "$ns" status "$to" >/dev/null 2>&1 && verb=upgrade
step "7. helm $verb $to"
"$HELM" "$verb" "$to" "$chart" -n "$ns" "${values[@]}" "${install_args[@]}"

# --- 8
# Never the CRDs; runtimes only the admin deletes (TrainJobs may use them).
for o in $(comm -23 "$state/from.names" <(names "$state/to.yaml")); do
  case "$o" in
    customresourcedefinition.*) ;;
    clustertrainingruntime.*) step "8. left in place: $o ($to does not render it)" ;;
    *) k get "$o" >/dev/null 2>&1 || continue  # deleted by an earlier run
       step "8. deleting $o (only $from had it)"; k delete "$o" --ignore-not-found ;;
  esac
done
step "done: release $to serves; $state holds $from's manifest and values"
