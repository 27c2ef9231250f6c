#!/usr/bin/env bash
# A real Kubernetes node for the test bed in $TESTBED_DIR: containerd + runc, a CNI bridge,
# kubelet, kube-proxy (iptables mode) and CoreDNS, all with their state under $TESTBED_DIR/node.
# hack/testbed/add.sh --node (and up.sh --node) start it; down.sh stops it and undoes every
# change it made to the host. hack/testbed/README.md ("A real node") describes the design.
#
# Usage: hack/testbed/node.sh start | stop | status
#   start   needs root; refuses while another test bed's node runs (the node is machine-wide:
#           the bridge, iptables chains, cgroups and a few fixed paths)
#   stop    idempotent; also works when the processes died or $TESTBED_DIR is half gone
#
# The network rule: test traffic stays on this machine. Pods live in network namespaces the node
# created, on the bridge trainer0 (10.88.0.0/24, gateway 10.88.0.1); Service VIPs (10.0.0.0/24)
# are DNATed to them on the host. No masquerade to the outside: iptables drops everything the
# bridge would forward to another interface (and back), and pods reach the host only for DNS and
# the apiserver. CoreDNS answers cluster.local and the two reverse zones and nothing else (no
# forward). containerd's registry traffic goes to a proxy at 127.0.0.1:1 that does not exist, so
# an image missing on the node fails to pull instead of leaving the machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NODE_DIR="$TESTBED_DIR/node"
NODE_NAME=testbed-node-0
BRIDGE=trainer0
POD_CIDR=10.88.0.0/24
GATEWAY=10.88.0.1
SERVICE_CIDR=10.0.0.0/24 # the apiserver's --service-cluster-ip-range (up.sh)
DNS_ZONES="cluster.local 0.88.10.in-addr.arpa 0.0.10.in-addr.arpa"
CGROUP_ROOT=trainer-testbed
# Machine-wide record of the running node: which test bed owns it and the host state it found.
HOST_RECORD=/run/trainer-testbed-node
# Host settings the node's parts change: the bridge plugin sets ip_forward; kubelet sets the
# kernel tunables it wants (vm.overcommit_memory, kernel.panic, ...). Restored on stop.
SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding
  net.ipv6.conf.all.forwarding net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# Paths outside $TESTBED_DIR that kubelet, containerd or libcni use whatever they are told
# (device plugins, legacy container log links, shim sockets, the CNI result cache). Removed on
# stop when they did not exist before start.
FIXED_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/cni
  /run/netns /opt/containerd /etc/cni /opt/cni /usr/libexec/kubernetes)
IPTABLES_TABLES=(filter nat mangle raw)

say() { testbed_log "node: $*"; }

# --- Host state: record before, undo after ----------------------------------------------------

iptables_chains() { # FAMILY(iptables|ip6tables): "<table> <chain>" per user chain
  local t
  for t in "${IPTABLES_TABLES[@]}"; do
    "$1-save" -t "$t" 2>/dev/null | sed -n "s/^:\\([^ ]*\\) .*/$t \\1/p"
  done
}

record_host_state() {
  mkdir -p "$HOST_RECORD"
  echo "$TESTBED_DIR" >"$HOST_RECORD/owner"
  local s p
  for s in "${SYSCTLS[@]}"; do
    p=/proc/sys/${s//.//}
    [[ -f $p ]] && echo "$s $(cat "$p")"
  done >"$HOST_RECORD/sysctls"
  for p in "${FIXED_PATHS[@]}"; do [[ -e $p ]] && echo "$p"; done >"$HOST_RECORD/paths"
  iptables_chains iptables >"$HOST_RECORD/iptables"
  iptables_chains ip6tables >"$HOST_RECORD/ip6tables"
  nft_tables >"$HOST_RECORD/nft-tables"
}

# nftables tables ("<family> <name>"); iptables-nft creates its tables on first use.
nft_tables() { nft list tables 2>/dev/null | sed -n 's/^table //p' || true; }

# remove_new_chains FAMILY: drops every chain the record does not list, with every rule that
# jumps to one, in one iptables-restore per table (atomic; the rest of the table is kept).
remove_new_chains() {
  local family=$1 t new
  for t in "${IPTABLES_TABLES[@]}"; do
    new=$(comm -13 <(grep "^$t " "$HOST_RECORD/$family" | cut -d' ' -f2 | sort) \
      <(iptables_chains "$family" | grep "^$t " | cut -d' ' -f2 | sort) | tr '\n' ' ')
    [[ -n "${new// /}" ]] || continue
    "$family-save" -t "$t" | awk -v new="$new" '
      BEGIN { n = split(new, a, " "); for (i = 1; i <= n; i++) drop[a[i]] = 1 }
      /^:/ { name = substr($1, 2); if (name in drop) next }
      /^-A / { if ($2 in drop) next
               for (i = 3; i < NF; i++) if (($i == "-j" || $i == "-g") && ($(i + 1) in drop)) next }
      { print }' | "$family-restore" -T "$t"
  done
}

# Cgroups: kubelet puts every pod under /<CGROUP_ROOT>/kubepods in each hierarchy.
cgroup_hierarchies() {
  awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts
}

create_cgroup_root() {
  local h
  for h in $(cgroup_hierarchies); do
    mkdir -p "$h/$CGROUP_ROOT"
    if [[ -f "$h/cpuset.cpus" ]]; then # a new cpuset starts empty; give it its parent's
      cat "$h/cpuset.cpus" >"$h/$CGROUP_ROOT/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h/$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

remove_cgroup_root() {
  local h d pid left=0
  for h in $(cgroup_hierarchies); do
    [[ -d "$h/$CGROUP_ROOT" ]] || continue
    # Processes of the node's pods that outlived their containers (none, normally).
    for pid in $(find "$h/$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null); do
      kill -KILL "$pid" 2>/dev/null || true
    done
    # Deepest first; a cgroup still holding a process cannot go (and is reported).
    while read -r d; do
      rmdir "$d" 2>/dev/null || left=1
    done < <(find "$h/$CGROUP_ROOT" -depth -type d)
  done
  ((left == 0)) || say "warning: some cgroups under /$CGROUP_ROOT still hold processes"
}

restore_host_state() {
  local name value p
  ip link del "$BRIDGE" 2>/dev/null || true # its routes go with it
  remove_new_chains iptables
  remove_new_chains ip6tables
  # Tables that did not exist before hold only what the node's parts put there.
  local table
  while read -r table; do
    [[ -n "$table" ]] && nft delete table $table
  done < <(comm -13 <(sort "$HOST_RECORD/nft-tables") <(nft_tables | sort))
  while read -r name value; do
    p=/proc/sys/${name//.//}
    [[ -f $p && "$(cat "$p")" != "$value" ]] && echo "$value" >"$p"
  done <"$HOST_RECORD/sysctls"
  remove_cgroup_root
  for p in "${FIXED_PATHS[@]}"; do
    if [[ -e $p ]] && ! grep -qx "$p" "$HOST_RECORD/paths"; then
      rm -rf "$p"
    fi
  done
}

# --- Processes and mounts ---------------------------------------------------------------------

containerd_sock() { echo "$NODE_DIR/containerd/containerd.sock"; }
node_ctr() { ctr --address "$(containerd_sock)" --namespace k8s.io "$@"; }

# Kills every container the node's containerd runs and removes it (sandboxes included), then the
# runc shims that served them: they are matched by our containerd's socket path on their
# command line, which no other process has.
remove_containers() {
  local ids pid
  if [[ -S "$(containerd_sock)" ]] && testbed_pid_alive containerd; then
    ids=$(node_ctr tasks ls -q 2>/dev/null || true)
    for pid in $ids; do node_ctr tasks kill --signal SIGKILL "$pid" >/dev/null 2>&1 || true; done
    if [[ -n "$ids" ]]; then
      testbed_wait_for "the node's containers to stop" 10 all_tasks_stopped || true
      node_ctr tasks delete $ids >/dev/null 2>&1 || true
    fi
    ids=$(node_ctr containers ls -q 2>/dev/null || true)
    [[ -z "$ids" ]] || node_ctr containers delete $ids >/dev/null 2>&1 || true
  fi
  for pid in $(pgrep -f -- "-address $(containerd_sock)" || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
}
all_tasks_stopped() { ! node_ctr tasks ls 2>/dev/null | awk 'NR > 1 { print $3 }' | grep -qv STOPPED; }

unmount_all() {
  local m
  # Deepest first, so nested mounts go before their parents.
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "warning: could not unmount $m"
  done < <(awk -v d="$NODE_DIR/" 'index($2, d) == 1 || $2 == substr(d, 1, length(d) - 1) { print $2 }' \
    /proc/self/mounts | sed 's/\\040/ /g' | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-)
}

stop_node() {
  local owner="" name
  [[ -f "$HOST_RECORD/owner" ]] && owner=$(cat "$HOST_RECORD/owner")
  if [[ -n "$owner" && "$owner" != "$TESTBED_DIR" ]]; then
    [[ -d "$NODE_DIR" ]] && say "the machine's node belongs to $owner, not to $TESTBED_DIR; leaving it"
    return 0
  fi
  [[ -z "$owner" && ! -d "$NODE_DIR" ]] && return 0
  say "stopping"
  for name in coredns kube-proxy kubelet apiserver-proxy; do testbed_stop "$name"; done
  remove_containers
  testbed_stop containerd
  unmount_all
  if [[ -n "$owner" ]]; then
    restore_host_state
    rm -rf "$HOST_RECORD"
  fi
  rm -rf "$NODE_DIR"
  say "stopped; host state restored"
}

# --- Start --------------------------------------------------------------------------------------

preflight() {
  (($(id -u) == 0)) || testbed_die "a real node needs root (containerd, kubelet, iptables, the bridge)"
  local missing=() c
  for c in containerd runc ctr iptables iptables-save iptables-restore ip6tables-save ip nft; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
    missing+=(containernetworking-plugins)
  ((${#missing[@]} == 0)) ||
    testbed_die "missing for the node: ${missing[*]} (hack/install-deps.sh installs them)"
  if [[ -f "$HOST_RECORD/owner" ]]; then
    testbed_die "a node of the test bed in $(cat "$HOST_RECORD/owner") runs on this machine" \
      "(one at a time: it is machine-wide); stop it with TESTBED_DIR=$(cat "$HOST_RECORD/owner")" \
      "hack/testbed/down.sh (or hack/testbed/node.sh stop)"
  fi
  ip link show "$BRIDGE" >/dev/null 2>&1 && testbed_die "interface $BRIDGE exists but no node owns it"
  if ip route show | grep -q "^10\.88\.0\.\|^10\.0\.0\."; then
    testbed_die "routes for $POD_CIDR or $SERVICE_CIDR exist already; the node needs both ranges"
  fi
  testbed_pid_alive kube-apiserver || testbed_die "no running test bed in $TESTBED_DIR"
}

# The control plane a node needs: ServiceAccount admission (pods get tokens), the apiserver
# reaching kubelets by InternalIP, and controllers for Deployments, Services, nodes and
# ServiceAccounts. up.sh --node starts it so; an older test bed is restarted with it here.
ensure_control_plane() {
  local pid args
  read -r pid _ <"$TESTBED_DIR/pids/kube-apiserver"
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  if [[ "$args" == *"--disable-admission-plugins=ServiceAccount"* ||
        "$args" != *"--kubelet-preferred-address-types=InternalIP"* ]]; then
    say "restarting kube-apiserver with ServiceAccount admission and kubelet InternalIP"
    "$TESTBED_ROOT/hack/testbed/restart-apiserver.sh" --signal TERM --down-seconds 0 \
      --set-flag disable-admission-plugins= --set-flag kubelet-preferred-address-types=InternalIP
  fi
  read -r pid _ <"$TESTBED_DIR/pids/kube-controller-manager"
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  if [[ "$args" != *"node-lifecycle-controller"* ]]; then
    say "restarting kube-controller-manager with the controllers a node needs"
    testbed_stop kube-controller-manager
    testbed_start_kcm --node
  fi
}

write_configs() {
  local pause_image=$1 kubelet_port=$2 kubelet_healthz=$3 proxy_healthz=$4 proxy_metrics=$5
  local dns_health=$6 dns_ready=$7 KC="$TESTBED_DIR/kubeconfig"
  mkdir -p "$NODE_DIR"/{containerd/certs.d,cni/net.d,cni/ipam,kubelet/root,kubelet/pod-logs} \
    "$NODE_DIR"/{kubelet/volume-plugins,kube-proxy,coredns,runc}
  cat >"$NODE_DIR/containerd/config.toml" <<EOF
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$(containerd_sock)"
[ttrpc]
  address = "$(containerd_sock).ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/$pause_image"
  # This machine's root has no CAP_SYS_RESOURCE: without it every sandbox fails to start.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE_DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$NODE_DIR/containerd/certs.d"
EOF
  cat >"$NODE_DIR/cni/net.d/10-testbed.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "testbed",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$NODE_DIR/cni/ipam"
      }
    }
  ]
}
EOF
  : >"$NODE_DIR/kubelet/resolv.conf" # pods get no host resolver, only the cluster's DNS
  cat >"$NODE_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $GATEWAY
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_healthz
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://$(containerd_sock)
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
podLogsDir: $NODE_DIR/kubelet/pod-logs
volumePluginDir: $NODE_DIR/kubelet/volume-plugins
clusterDNS: [$GATEWAY]
clusterDomain: cluster.local
resolvConf: $NODE_DIR/kubelet/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
maxPods: 110
# Secret volumes follow their Secret within seconds (JobSet's webhook certificate, cert rotation).
syncFrequency: 10s
EOF
  cat >"$NODE_DIR/kube-proxy/config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: $KC
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
nodePortAddresses: ["$GATEWAY/32"]
healthzBindAddress: 127.0.0.1:$proxy_healthz
metricsBindAddress: 127.0.0.1:$proxy_metrics
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
  cat >"$NODE_DIR/coredns/Corefile" <<EOF
$(for z in $DNS_ZONES; do printf '%s:53 ' "$z"; done){
    bind $GATEWAY
    errors
    health 127.0.0.1:$dns_health
    ready 127.0.0.1:$dns_ready
    kubernetes $DNS_ZONES {
        kubeconfig $KC testbed
        pods insecure
        ttl 5
    }
    cache 5
}
EOF
}

# Isolation rules, in chains of our own at the top of INPUT and FORWARD (IPv4 and IPv6).
install_isolation() {
  local api_port=$1
  iptables -N TESTBED-NODE-FORWARD
  iptables -A TESTBED-NODE-FORWARD -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  iptables -A TESTBED-NODE-FORWARD -o "$BRIDGE" ! -i "$BRIDGE" -j DROP
  iptables -I FORWARD 1 -j TESTBED-NODE-FORWARD
  iptables -N TESTBED-NODE-INPUT
  iptables -A TESTBED-NODE-INPUT -i "$BRIDGE" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
  iptables -A TESTBED-NODE-INPUT -i "$BRIDGE" -d "$GATEWAY" -p udp --dport 53 -j RETURN
  iptables -A TESTBED-NODE-INPUT -i "$BRIDGE" -d "$GATEWAY" -p tcp --dport 53 -j RETURN
  iptables -A TESTBED-NODE-INPUT -i "$BRIDGE" -d "$GATEWAY" -p tcp --dport "$api_port" -j RETURN
  iptables -A TESTBED-NODE-INPUT -i "$BRIDGE" -j DROP
  iptables -I INPUT 1 -j TESTBED-NODE-INPUT
  ip6tables -N TESTBED-NODE-FORWARD
  ip6tables -A TESTBED-NODE-FORWARD -i "$BRIDGE" -j DROP
  ip6tables -A TESTBED-NODE-FORWARD -o "$BRIDGE" -j DROP
  ip6tables -I FORWARD 1 -j TESTBED-NODE-FORWARD
  ip6tables -N TESTBED-NODE-INPUT
  ip6tables -A TESTBED-NODE-INPUT -i "$BRIDGE" -j DROP
  ip6tables -I INPUT 1 -j TESTBED-NODE-INPUT
}

node_ready() {
  [[ "$(testbed_kubectl get node "$NODE_NAME" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}
no_taints() { [[ -z "$(testbed_kubectl get node "$NODE_NAME" -o 'jsonpath={.spec.taints}')" ]]; }

# On a failed start: the logs' last lines, then stop_node undoes what was done.
on_start_failure() {
  local rc=$? name
  ((rc == 0)) && return 0
  echo "[testbed] error: node start-up failed (exit $rc)" >&2
  for name in containerd kubelet kube-proxy coredns apiserver-proxy; do
    [[ -f "$TESTBED_DIR/logs/$name.log" ]] || continue
    echo "[testbed] --- last lines of $TESTBED_DIR/logs/$name.log:" >&2
    tail -n 15 "$TESTBED_DIR/logs/$name.log" | sed 's/^/    /' >&2
  done
  stop_node
  exit "$rc"
}

start_node() {
  preflight
  trap on_start_failure EXIT
  local BIN start=$SECONDS pause_image api_port
  "$TESTBED_ROOT/hack/testbed/build.sh" node coredns
  BIN=$(testbed_bin_dir)
  pause_image=$("$TESTBED_ROOT/hack/images/build.sh" --env pause | sed -n "s/^export TRAINER_PAUSE_IMAGE='\\(.*\\)'$/\\1/p")
  [[ -n "$pause_image" ]] || testbed_die "could not build the pause image (hack/images/build.sh pause)"
  api_port=$(testbed_apiserver_url); api_port=${api_port##*:}

  record_host_state
  mkdir -p "$NODE_DIR"
  write_configs "$pause_image" "$(testbed_free_port)" "$(testbed_free_port)" \
    "$(testbed_free_port)" "$(testbed_free_port)" "$(testbed_free_port)" "$(testbed_free_port)"

  # The bridge exists before the first pod, so the kubelet (node IP), CoreDNS and the apiserver
  # proxy can bind the gateway address at once. Host -> Service VIP goes out on the bridge with
  # the gateway as source: never towards the default route.
  ip link add "$BRIDGE" type bridge
  ip addr add "$GATEWAY/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  ip route add "$SERVICE_CIDR" dev "$BRIDGE" src "$GATEWAY"
  install_isolation "$api_port"
  create_cgroup_root

  say "starting containerd"
  (export HTTP_PROXY=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 NO_PROXY=
    testbed_start containerd "$(command -v containerd)" --config "$NODE_DIR/containerd/config.toml")
  testbed_wait_for "containerd on $(containerd_sock)" 30 node_ctr version
  "$TESTBED_ROOT/hack/images/build.sh" --load pause

  # In-cluster clients reach the apiserver at the ClusterIP of Service default/kubernetes; its
  # endpoint is the gateway, where the proxy forwards to the apiserver on 127.0.0.1.
  # The interpreter itself (python3 may be a wrapper script), so down.sh recognises the process.
  testbed_start apiserver-proxy "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" \
    "$TESTBED_ROOT/hack/testbed/tcp-forward.py" "$GATEWAY" "$api_port" 127.0.0.1 "$api_port"
  ensure_control_plane
  testbed_kubectl apply --server-side --field-manager=testbed --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: Endpoints
metadata:
  name: kubernetes
  namespace: default
subsets:
  - addresses: [{ip: $GATEWAY}]
    ports: [{name: https, port: $api_port, protocol: TCP}]
EOF

  say "starting kubelet ($NODE_NAME), kube-proxy and CoreDNS"
  testbed_start kubelet "$BIN/kubelet" --config="$NODE_DIR/kubelet/config.yaml" \
    --kubeconfig="$TESTBED_DIR/kubeconfig" --root-dir="$NODE_DIR/kubelet/root" \
    --cert-dir="$NODE_DIR/kubelet/pki" \
    --hostname-override="$NODE_NAME" --node-ip="$GATEWAY"
  testbed_start kube-proxy "$BIN/kube-proxy" --config="$NODE_DIR/kube-proxy/config.yaml"
  testbed_start coredns "$BIN/coredns" -conf "$NODE_DIR/coredns/Corefile"
  testbed_wait_for "node $NODE_NAME to be Ready" 90 node_ready
  # The node-lifecycle controller takes the not-ready taint off once the node is Ready.
  testbed_wait_for "node $NODE_NAME to lose its not-ready taint" 60 no_taints
  local dns_ready
  dns_ready=$(sed -n 's/^ *ready 127.0.0.1:\([0-9]*\)$/\1/p' "$NODE_DIR/coredns/Corefile")
  testbed_wait_for "CoreDNS to be ready" 60 curl -fsS "http://127.0.0.1:$dns_ready/ready"
  local proxy_healthz
  proxy_healthz=$(sed -n 's/^healthzBindAddress: 127.0.0.1:\([0-9]*\)$/\1/p' "$NODE_DIR/kube-proxy/config.yaml")
  testbed_wait_for "kube-proxy to be healthy" 60 curl -fsS "http://127.0.0.1:$proxy_healthz/healthz"

  cat >>"$TESTBED_DIR/env" <<EOF
export TESTBED_NODE_NAME='$NODE_NAME'
export TESTBED_NODE_CONTAINERD='$(containerd_sock)'
export TESTBED_NODE_DNS='$GATEWAY'
EOF
  trap - EXIT
  say "ready in $((SECONDS - start))s: $NODE_NAME (pods $POD_CIDR on $BRIDGE, DNS $GATEWAY)"
}

case "${1:-}" in
  start) start_node ;;
  stop) stop_node ;;
  status)
    if [[ -f "$HOST_RECORD/owner" ]]; then echo "node of $(cat "$HOST_RECORD/owner")"; else echo "no node"; fi ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
