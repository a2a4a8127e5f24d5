#!/usr/bin/env bash
# A single-node Kubernetes cluster of upstream parts, private to this
# machine, for `showdown k8s run` (docs/kubernetes.md, "A cluster on this
# machine"):
#
#   scripts/cluster.sh up       starts it and prints its kubeconfig
#   scripts/cluster.sh load IMAGE...   copies podman images into its runtime
#   scripts/cluster.sh status   what runs
#   scripts/cluster.sh preflight   one line: can this host run the cluster
#                               (root, the built binaries, containers)?
#   scripts/cluster.sh left     fails, naming it, if anything of a cluster is here
#   scripts/cluster.sh down     stops it and removes every process, mount,
#                               network namespace, interface and rule it made
#
# Parts: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kube-proxy and kubectl built from k8s.io/kubernetes by
# tools/k8stest, CoreDNS from tools/coredns, the pods' sandbox from
# tools/pause (`make k8s-cluster-bin` builds them into the user cache);
# Debian's containerd, runc and CNI plugins (installed by `up` when
# missing). The pods' network is the bridge sdcni0 on 10.244.77.0/24 with
# this machine at .1, where the kubelet, the API server's advertised
# address and the cluster's DNS listen; Services are on 10.96.77.0/24.
# Nothing leaves the machine: no masquerade, no route out, no image pull
# (every image is loaded first and the sandbox image is pinned).
#
# Environment: SHOWDOWN_K8S_BIN (the binaries' folder), SHOWDOWN_CLUSTER_DIR
# (its state, /tmp/showdown-cluster), CLUSTER_READY_S (how long `up` waits
# for each part, 120).
set -euo pipefail

cache=${XDG_CACHE_HOME:-$HOME/.cache}
BIN=${SHOWDOWN_K8S_BIN:-$cache/showdown/k8stest/v1.34.2}
DIR=${SHOWDOWN_CLUSTER_DIR:-/tmp/showdown-cluster}
READY_S=${CLUSTER_READY_S:-120}
NODE=showdown-node
BRIDGE=sdcni0
POD_CIDR=10.244.77.0/24
NODE_IP=10.244.77.1
SERVICE_CIDR=10.96.77.0/24
SERVICE_IP=10.96.77.1
NETWORK=showdown-cluster
ETCD_PORT=12379
ETCD_PEER_PORT=12380
API_PORT=16443
PAUSE_IMAGE=localhost/showdown/pause:latest
RUNC=/usr/sbin/runc
CNI_BIN=/usr/lib/cni
PARTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns)

say() { echo "cluster: $*" >&2; }
die() { say "$1"; [ -n "${2:-}" ] && echo "hint: $2" >&2; exit 1; }
kubectl() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig/admin" "$@"; }
ctr() { /usr/bin/ctr --address "$DIR/containerd/containerd.sock" --namespace k8s.io "$@"; }
alive() { [ -f "$DIR/pids/$1" ] && kill -0 "$(cat "$DIR/pids/$1")" 2>/dev/null; }

# start NAME COMMAND...: runs it in a session of its own, logging to
# $DIR/logs/NAME.log, its pid in $DIR/pids/NAME.
start() {
	local name=$1
	shift
	setsid "$@" >"$DIR/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$DIR/pids/$name"
	say "started $name (pid $!, log $DIR/logs/$name.log)"
}

# wait_for NAME WHAT COMMAND...: until COMMAND succeeds, at most READY_S,
# failing early (with the log's tail) when the part has exited.
wait_for() {
	local name=$1 what=$2
	shift 2
	local deadline=$((SECONDS + READY_S))
	until "$@" >/dev/null 2>&1; do
		if ! alive "$name"; then
			tail -20 "$DIR/logs/$name.log" >&2 || true
			die "$name exited before $what" "its whole log: $DIR/logs/$name.log"
		fi
		if [ $SECONDS -ge $deadline ]; then
			tail -20 "$DIR/logs/$name.log" >&2 || true
			die "$name: not $what after ${READY_S}s" "its whole log: $DIR/logs/$name.log; CLUSTER_READY_S waits longer"
		fi
		sleep 1
	done
}

need_tools() {
	[ "$(id -u)" -eq 0 ] || die "needs root (network interfaces, cgroups, mounts)" "run it as root"
	local missing=()
	for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns pause; do
		[ -x "$BIN/$b" ] || missing+=("$b")
	done
	[ ${#missing[@]} -eq 0 ] || die "missing in $BIN: ${missing[*]}" "make k8s-cluster-bin (a cold build is many minutes: docs/kubernetes.md)"
	local pkgs=()
	command -v containerd >/dev/null || pkgs+=(containerd)
	[ -x "$RUNC" ] || pkgs+=(runc)
	[ -x "$CNI_BIN/bridge" ] || pkgs+=(containernetworking-plugins)
	command -v iptables >/dev/null || pkgs+=(iptables)
	command -v conntrack >/dev/null || pkgs+=(conntrack)
	command -v podman >/dev/null || pkgs+=(podman)
	command -v openssl >/dev/null || pkgs+=(openssl)
	if [ ${#pkgs[@]} -gt 0 ]; then
		say "installing ${pkgs[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
	fi
}

# cert NAME CN [O] [SANS]: a key and a certificate signed by the cluster's CA.
cert() {
	local name=$1 cn=$2 o=${3:-} sans=${4:-}
	local subj="/CN=$cn"
	[ -n "$o" ] && subj="/O=$o$subj"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$DIR/pki/$name.key" -subj "$subj" -out "$DIR/pki/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -n "$sans" ] && echo "subjectAltName=$sans"
	} >"$DIR/pki/$name.ext"
	openssl x509 -req -in "$DIR/pki/$name.csr" -CA "$DIR/pki/ca.crt" -CAkey "$DIR/pki/ca.key" \
		-CAcreateserial -days 2 -extfile "$DIR/pki/$name.ext" -out "$DIR/pki/$name.crt" 2>/dev/null
}

# kubeconfig NAME CERT: a kubeconfig for the client certificate CERT.
kubeconfig() {
	cat >"$DIR/kubeconfig/$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: showdown
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $DIR/pki/ca.crt
users:
- name: $1
  user:
    client-certificate: $DIR/pki/$2.crt
    client-key: $DIR/pki/$2.key
contexts:
- name: showdown
  context: {cluster: showdown, user: $1}
current-context: showdown
EOF
}

pki() {
	mkdir -p "$DIR/pki" "$DIR/kubeconfig"
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$DIR/pki/ca.key" -subj "/CN=showdown-cluster-ca" -out "$DIR/pki/ca.crt" 2>/dev/null
	cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:$NODE_IP,IP:$SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	cert admin showdown-admin system:masters
	cert controller-manager system:kube-controller-manager
	cert scheduler system:kube-scheduler
	cert kubelet "system:node:$NODE" system:nodes
	cert kubelet-serving "system:node:$NODE" system:nodes "IP:$NODE_IP,DNS:$NODE"
	cert kube-proxy system:kube-proxy system:node-proxier
	cert coredns system:coredns
	openssl genrsa -out "$DIR/pki/sa.key" 2048 2>/dev/null
	openssl rsa -in "$DIR/pki/sa.key" -pubout -out "$DIR/pki/sa.pub" 2>/dev/null
	kubeconfig admin admin
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig kubelet kubelet
	kubeconfig kube-proxy kube-proxy
	kubeconfig coredns coredns
}

network() {
	# Recorded so that down restores them.
	sysctl -n net.ipv4.ip_forward >"$DIR/sysctl.ip_forward"
	sysctl -n net.bridge.bridge-nf-call-iptables >"$DIR/sysctl.bridge_nf" 2>/dev/null || echo - >"$DIR/sysctl.bridge_nf"
	ip link add "$BRIDGE" type bridge
	ip addr add "$NODE_IP/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	# Pods get one route besides their own subnet: the Services' range, via
	# this machine, where kube-proxy's rules turn it into a pod's address;
	# nothing else is routable from a pod. Traffic between pods and from
	# this machine crosses the bridge; kube-proxy's
	# rules see bridged packets only with br_netfilter's sysctl on.
	sysctl -qw net.ipv4.ip_forward=1
	[ "$(cat "$DIR/sysctl.bridge_nf")" = - ] || sysctl -qw net.bridge.bridge-nf-call-iptables=1
	mkdir -p "$DIR/cni/net.d" "$DIR/cni/ipam"
	cat >"$DIR/cni/net.d/10-showdown.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$NETWORK",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam",
             "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
             "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}]}
  }]
}
EOF
	ls /var/run/netns 2>/dev/null | sort >"$DIR/netns.before" || true
}

containerd_up() {
	mkdir -p "$DIR/containerd"
	cat >"$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
# This machine may raise a process's oom_score_adj but not lower it.
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$DIR/containerd/containerd.sock"
[ttrpc]
  address = "$DIR/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$DIR/cni/net.d"
EOF
	start containerd containerd --config "$DIR/containerd/config.toml"
	wait_for containerd "serving" ctr version
	# The sandbox image, built here from tools/pause: the runtime never pulls one.
	local ctx="$DIR/pause-image"
	mkdir -p "$ctx"
	cp "$BIN/pause" "$ctx/pause"
	printf 'FROM scratch\nCOPY pause /pause\nUSER 65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Containerfile"
	podman build -q -t "$PAUSE_IMAGE" -f "$ctx/Containerfile" "$ctx" >/dev/null
	load "$PAUSE_IMAGE"
}

# load IMAGE...: from podman's storage into the cluster's runtime.
load() {
	alive containerd || die "the cluster's containerd is not running" "scripts/cluster.sh up"
	local img
	for img in "$@"; do
		podman image exists "$img" || die "no image $img in podman's storage" "bin/showdown images build"
		podman save --format oci-archive -o "$DIR/image.tar" "$img" >/dev/null
		ctr images import --no-unpack=false --index-name "$img" "$DIR/image.tar" >/dev/null
		rm -f "$DIR/image.tar"
		say "loaded $img"
	done
}

control_plane() {
	start etcd "$BIN/etcd" --data-dir "$DIR/etcd" \
		--client-url "http://127.0.0.1:$ETCD_PORT" --peer-url "http://127.0.0.1:$ETCD_PEER_PORT"
	wait_for etcd "ready" grep -q ready "$DIR/logs/etcd.log"
	start kube-apiserver "$BIN/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address=127.0.0.1 --advertise-address="$NODE_IP" --secure-port="$API_PORT" \
		--cert-dir="$DIR/pki" --tls-cert-file="$DIR/pki/apiserver.crt" --tls-private-key-file="$DIR/pki/apiserver.key" \
		--client-ca-file="$DIR/pki/ca.crt" \
		--kubelet-client-certificate="$DIR/pki/apiserver-kubelet-client.crt" --kubelet-client-key="$DIR/pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$DIR/pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$DIR/pki/sa.pub" --service-account-signing-key-file="$DIR/pki/sa.key" \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--authorization-mode=Node,RBAC --allow-privileged=false --v=1
	wait_for kube-apiserver "ready" curl -sf --cacert "$DIR/pki/ca.crt" \
		--cert "$DIR/pki/admin.crt" --key "$DIR/pki/admin.key" "https://127.0.0.1:$API_PORT/readyz"
	start kube-controller-manager "$BIN/kube-controller-manager" \
		--kubeconfig="$DIR/kubeconfig/controller-manager" \
		--authentication-kubeconfig="$DIR/kubeconfig/controller-manager" --authorization-kubeconfig="$DIR/kubeconfig/controller-manager" \
		--bind-address=127.0.0.1 --secure-port=0 --leader-elect=false \
		--service-account-private-key-file="$DIR/pki/sa.key" --root-ca-file="$DIR/pki/ca.crt" \
		--use-service-account-credentials=true --service-cluster-ip-range="$SERVICE_CIDR" --v=1
	start kube-scheduler "$BIN/kube-scheduler" \
		--kubeconfig="$DIR/kubeconfig/scheduler" \
		--authentication-kubeconfig="$DIR/kubeconfig/scheduler" --authorization-kubeconfig="$DIR/kubeconfig/scheduler" \
		--bind-address=127.0.0.1 --secure-port=0 --leader-elect=false --v=1
}

node_up() {
	mkdir -p "$DIR/kubelet"
	# The pods' resolver: the cluster's DNS, and no search domain or
	# nameserver of this machine's.
	: >"$DIR/resolv.conf"
	cat >"$DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $DIR/pki/ca.crt}
# Only clients with a certificate of the cluster's CA get through at all.
authorization: {mode: AlwaysAllow}
tlsCertFile: $DIR/pki/kubelet-serving.crt
tlsPrivateKeyFile: $DIR/pki/kubelet-serving.key
containerRuntimeEndpoint: unix://$DIR/containerd/containerd.sock
cgroupDriver: cgroupfs
# This machine's cgroups are v1 (hybrid); the kubelet refuses v1 unless told.
failCgroupV1: false
failSwapOn: false
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $DIR/resolv.conf
maxPods: 40
serializeImagePulls: false
evictionHard: {memory.available: "200Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
	start kubelet "$BIN/kubelet" --config="$DIR/kubelet/config.yaml" --kubeconfig="$DIR/kubeconfig/kubelet" \
		--root-dir="$DIR/kubelet/root" --cert-dir="$DIR/kubelet/pki" \
		--hostname-override="$NODE" --node-ip="$NODE_IP" --v=1
	wait_for kubelet "registered with the API server" kubectl get node "$NODE"
	wait_for kubelet "Ready" kubectl wait --for=condition=Ready --timeout=2s node "$NODE"
	cat >"$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $DIR/kubeconfig/kube-proxy}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {localhostNodePorts: false}
# 0: leave this machine's conntrack settings as they are.
conntrack: {maxPerCore: 0, min: 0}
EOF
	start kube-proxy "$BIN/kube-proxy" --config="$DIR/kube-proxy.yaml" --v=1
	wait_for kube-proxy "healthy" curl -sf http://127.0.0.1:10256/healthz
}

dns_up() {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}
EOF
	cat >"$DIR/Corefile" <<EOF
cluster.local:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local {
        kubeconfig $DIR/kubeconfig/coredns showdown
    }
}
.:53 {
    bind $NODE_IP
    errors
}
EOF
	start coredns "$BIN/coredns" -conf "$DIR/Corefile"
	wait_for coredns "answering" grep -q "CoreDNS-" "$DIR/logs/coredns.log"
}

up() {
	need_tools
	if [ -d "$DIR/pids" ]; then
		for p in "${PARTS[@]}"; do
			alive "$p" && die "a cluster already runs in $DIR ($p)" "scripts/cluster.sh down"
		done
		say "a stopped cluster's state is in $DIR: taking it down first"
		down
	fi
	ip link show "$BRIDGE" >/dev/null 2>&1 && die "interface $BRIDGE exists already" "scripts/cluster.sh down"
	mkdir -p "$DIR/pids" "$DIR/logs"
	trap 'trap - EXIT; say "interrupted: taking the cluster down"; down; exit 130' INT TERM
	trap 'rc=$?; if [ $rc -ne 0 ]; then say "up failed: taking the cluster down (logs kept in $DIR.failed)"; rm -rf "$DIR.failed"; cp -r "$DIR/logs" "$DIR.failed" 2>/dev/null || true; down; fi' EXIT
	local began=$SECONDS
	pki
	network
	control_plane
	containerd_up
	node_up
	dns_up
	trap - INT TERM EXIT
	say "up in $((SECONDS - began)) s: node $NODE at $NODE_IP, pods on $POD_CIDR, Services on $SERVICE_CIDR, DNS at $NODE_IP:53"
	for p in "${PARTS[@]}"; do say "  $p pid $(cat "$DIR/pids/$p")"; done
	say "kubeconfig: $DIR/kubeconfig/admin (context showdown)"
	echo "$DIR/kubeconfig/admin"
}

status() {
	[ -d "$DIR/pids" ] || { say "no cluster in $DIR"; return 1; }
	local p rc=0
	for p in "${PARTS[@]}"; do
		if alive "$p"; then say "$p: running (pid $(cat "$DIR/pids/$p"))"; else say "$p: not running"; rc=1; fi
	done
	return $rc
}

# stop NAME: SIGTERM, then SIGKILL after 10 s.
stop() {
	alive "$1" || return 0
	local pid
	pid=$(cat "$DIR/pids/$1")
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
}

# kill_cgroups: every process left in the pods' cgroups (the kubelet's
# kubepods tree, in each v1 hierarchy or in v2), then the cgroups.
kill_cgroups() {
	local d
	for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/unified/kubepods; do
		[ -d "$d" ] || continue
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null || true
	done
	sleep 0.5
	for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/unified/kubepods; do
		[ -d "$d" ] || continue
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

down() {
	trap - INT
	[ -d "$DIR" ] || { say "no cluster in $DIR"; return 0; }
	# The pods first, through the kubelet, so that their sandboxes' networks
	# are released the upstream way (the runtime calls the CNI plugins' DEL).
	if alive kube-apiserver && alive kubelet && [ -x "$BIN/kubectl" ]; then
		local ns
		for ns in $(kubectl get namespaces -o name 2>/dev/null | sed 's#namespace/##' | grep -v '^kube-' || true); do
			kubectl delete pods --all -n "$ns" --grace-period=1 --wait=false >/dev/null 2>&1 || true
		done
		for _ in $(seq 1 30); do
			[ -z "$(ctr tasks ls -q 2>/dev/null)" ] && break
			sleep 1
		done
	fi
	local p
	for p in coredns kube-proxy kubelet; do stop "$p"; done
	# Whatever sandboxes are left: through the runtime, which releases them.
	if alive containerd; then
		local id
		for id in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill -s KILL "$id" >/dev/null 2>&1 || true; done
		sleep 1
		for id in $(ctr containers ls -q 2>/dev/null); do ctr tasks rm -f "$id" >/dev/null 2>&1 || true; ctr containers rm "$id" >/dev/null 2>&1 || true; done
	fi
	for p in containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$p"; done
	# The runtime's shims outlive it; so would their containers.
	pkill -KILL -f "containerd-shim.*-address $DIR/containerd/containerd.sock" 2>/dev/null || true
	kill_cgroups
	[ -x "$BIN/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
	# The network namespaces the runtime made, and the mounts under the state.
	if [ -f "$DIR/netns.before" ]; then
		local n
		for n in $(ls /var/run/netns 2>/dev/null | sort | comm -13 "$DIR/netns.before" - | grep '^cni-' || true); do
			ip netns delete "$n" 2>/dev/null || umount "/var/run/netns/$n" 2>/dev/null || true
			rm -f "/var/run/netns/$n"
		done
	fi
	awk -v d="$DIR" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	# The bridge's ports (the pods' veth ends), the bridge, the rules.
	local v
	for v in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link delete "$v" 2>/dev/null || true; done
	ip link delete "$BRIDGE" 2>/dev/null || true
	iptables-save 2>/dev/null | grep -q "$NETWORK" && say "warning: iptables rules naming $NETWORK are left (iptables-save | grep $NETWORK)"
	[ -f "$DIR/sysctl.ip_forward" ] && sysctl -qw net.ipv4.ip_forward="$(cat "$DIR/sysctl.ip_forward")"
	[ -f "$DIR/sysctl.bridge_nf" ] && [ "$(cat "$DIR/sysctl.bridge_nf")" != - ] && sysctl -qw net.bridge.bridge-nf-call-iptables="$(cat "$DIR/sysctl.bridge_nf")"
	left
	rm -rf "$DIR"
	say "down"
}

# parts_left: the pids of processes run from the binaries' folder, and of
# containerd and its shims started on this cluster's socket.
parts_left() {
	local d pid exe out=()
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = $$ ] && continue
		exe=$(readlink "$d/exe" 2>/dev/null) || continue
		case $exe in
		"$BIN"/* | "$DIR"/*) out+=("$pid") ;;
		*containerd*) tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q "$DIR/" && out+=("$pid") ;;
		esac
	done
	echo "${out[*]}"
}

# left: says what of the cluster is still here (and fails if anything is).
left() {
	local bad=0
	local procs
	procs=$(parts_left)
	if [ -n "$procs" ]; then say "left: processes $procs"; bad=1; fi
	local d
	for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[ -d "$d" ] || continue
		procs=$(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')
		if [ -n "${procs// /}" ]; then say "left: processes of pods in $d: $procs"; bad=1; fi
	done
	if awk -v d="$DIR" 'index($2, d) == 1' /proc/mounts | grep -q .; then say "left: mounts under $DIR"; bad=1; fi
	if ip link show "$BRIDGE" >/dev/null 2>&1; then say "left: interface $BRIDGE"; bad=1; fi
	if [ -f "$DIR/netns.before" ] && ls /var/run/netns 2>/dev/null | sort | comm -13 "$DIR/netns.before" - | grep -q .; then say "left: network namespaces"; bad=1; fi
	return $bad
}

# preflight: one line saying whether this host can run the cluster, and
# if not, which is missing: root, the built binaries or what containers
# need of the kernel (overlayfs, cgroups, bridges); the packages are
# installed by up. Exits 0 when it can.
preflight() {
	local missing=() b
	for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns pause; do
		[ -x "$BIN/$b" ] || missing+=("$b")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "cluster: cannot run here: the built binaries are missing in $BIN (${missing[*]}); make k8s-cluster-bin builds them (minutes: docs/kubernetes.md)"
		return 1
	fi
	local why=()
	[ "$(id -u)" -eq 0 ] || why+=("not root")
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || why+=("no overlay filesystem")
	[ -d /sys/fs/cgroup/cpu ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || why+=("no cpu cgroup")
	[ -d /sys/class/net ] && [ -w /proc/sys/net/ipv4/ip_forward ] || why+=("cannot set ip_forward (no network namespace of its own to change)")
	if [ ${#why[@]} -gt 0 ]; then
		echo "cluster: cannot run here: this host cannot run containers (${why[*]})"
		return 1
	fi
	echo "cluster: can run here: binaries in $BIN, root, overlayfs and cgroups present"
}

case "${1:-}" in
up) up ;;
preflight) preflight ;;
left) left && say "nothing of a cluster is left" ;;
down) down ;;
status) status ;;
load) shift; load "$@" ;;
*) echo "usage: scripts/cluster.sh up|down|status|preflight|left|load IMAGE..." >&2; exit 2 ;;
esac
