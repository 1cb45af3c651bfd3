#!/bin/sh
# slotd-bootstrap: forms a slotd cluster out of the pods of a StatefulSet and
# keeps it formed. Safe to run again and again (the bootstrap Job runs it; so
# can an operator): it only does what is missing.
#
# The nodes, in ordinal order, are SLOTD_NODES="host:port host:port ..." or,
# in Kubernetes, built from SLOTD_STATEFULSET, SLOTD_SERVICE (the headless
# service), SLOTD_NAMESPACE, SLOTD_POD_COUNT, SLOTD_PORT (6379) and
# SLOTD_CLUSTER_DOMAIN (cluster.local) as
#     <statefulset>-<i>.<service>.<namespace>.svc.<domain>:<port>
# SLOTD_REPLICAS (default 1) is the number of replicas per primary: at
# creation the first count/(R+1) nodes become the primaries (at least 3, as
# redis-cli --cluster create requires) and node P+k replicates primary k%P.
#
# 1. Waits until every node answers PING (SLOTD_TIMEOUT seconds, default 300).
# 2. Resolves the names to addresses (CLUSTER MEET takes IP addresses).
# 3. If no node serves a slot yet, creates the cluster: redis-cli --cluster
#    create with the primaries, then redis-cli --cluster add-node
#    --cluster-slave --cluster-master-id for each replica.
#    Otherwise it repairs: a node that knows no other node and serves no slot
#    (a pod whose volume was lost comes back empty, with a new node id) joins
#    as a replica of the primary with the fewest replicas; a node whose peers
#    have an old address of it (pods restarted together and got new IPs) is
#    met again at its current address; a failed node without slots whose
#    address another node id took over is forgotten.
# 4. Waits until every node reports cluster_state:ok and every replica's link
#    is up, then runs redis-cli --cluster check.
#
# Authentication: redis-cli reads the password from REDISCLI_AUTH.
set -eu

timeout_s=${SLOTD_TIMEOUT:-300}
replicas=${SLOTD_REPLICAS:-1}
deadline=$(( $(date +%s) + timeout_s ))

log() { echo "slotd-bootstrap: $*"; }
fail() { log "$*" >&2; exit 1; }

if [ -z "${SLOTD_NODES:-}" ]; then
	: "${SLOTD_STATEFULSET:?SLOTD_NODES or SLOTD_STATEFULSET must be set}"
	: "${SLOTD_SERVICE:?}" "${SLOTD_NAMESPACE:?}" "${SLOTD_POD_COUNT:?}"
	i=0
	SLOTD_NODES=
	while [ "$i" -lt "$SLOTD_POD_COUNT" ]; do
		SLOTD_NODES="$SLOTD_NODES $SLOTD_STATEFULSET-$i.$SLOTD_SERVICE.$SLOTD_NAMESPACE.svc.${SLOTD_CLUSTER_DOMAIN:-cluster.local}:${SLOTD_PORT:-6379}"
		i=$((i + 1))
	done
fi
# shellcheck disable=SC2086 # word splitting of the node list is intended
set -- $SLOTD_NODES
count=$#
primaries=$((count / (replicas + 1)))
[ $((primaries * (replicas + 1))) -eq "$count" ] || fail "$count nodes do not split into primaries with $replicas replicas each"
[ "$primaries" -ge 3 ] || fail "$primaries primaries: a cluster needs at least 3"

# cli ADDR ARGS...: one redis-cli command against host:port ADDR.
cli() {
	cli_addr=$1
	shift
	timeout 10 redis-cli -h "${cli_addr%:*}" -p "${cli_addr##*:}" "$@" </dev/null
}

# field ADDR SECTION NAME: one field of INFO SECTION (or CLUSTER INFO when
# SECTION is "cluster-info").
field() {
	if [ "$2" = cluster-info ]; then
		out=$(cli "$1" cluster info 2>/dev/null) || return 0
	else
		out=$(cli "$1" info "$2" 2>/dev/null) || return 0
	fi
	printf '%s\n' "$out" | tr -d '\r' | sed -n "s/^$3://p"
}

# wait_for WHAT CMD...: runs CMD until it succeeds or the deadline passes.
wait_for() {
	what=$1
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "timed out waiting for $what"
		sleep 1
	done
}

pong() { [ "$(cli "$1" ping 2>/dev/null)" = PONG ]; }

# resolve HOST:PORT: the address with the host resolved to an IP.
resolve() {
	h=${1%:*}
	case $h in
	*[!0-9.]*) ip=$(getent hosts "$h" | awk '{ print $1; exit }') ;;
	*) ip=$h ;;
	esac
	[ -n "$ip" ] || return 1
	echo "$ip:${1##*:}"
}

addrs=
for n in "$@"; do
	wait_for "$n to answer PING" pong "$n"
	wait_for "$n to resolve" resolve "$n" >/dev/null
	addrs="$addrs $(resolve "$n")"
done
# shellcheck disable=SC2086
set -- $addrs
log "nodes: $*"

# nth N ADDRS...: the N-th address (0-based).
nth() {
	k=$1
	shift
	shift "$k"
	echo "$1"
}

anchor=
for a in "$@"; do
	if [ "$(field "$a" cluster-info cluster_slots_assigned)" = 16384 ]; then
		anchor=$a
		break
	fi
done

if [ -z "$anchor" ]; then
	for a in "$@"; do
		[ "$(field "$a" cluster-info cluster_slots_assigned)" = 0 ] ||
			fail "$a serves some slots but the cluster does not cover all 16384: fix it by hand (redis-cli --cluster fix)"
	done
	list=
	i=0
	while [ "$i" -lt "$primaries" ]; do
		list="$list $(nth "$i" "$@")"
		i=$((i + 1))
	done
	log "creating the cluster with primaries$list"
	# shellcheck disable=SC2086
	redis-cli --cluster create $list --cluster-yes
	anchor=$(nth 0 "$@")
	k=0
	while [ "$k" -lt $((count - primaries)) ]; do
		r=$(nth $((primaries + k)) "$@")
		p=$(nth $((k % primaries)) "$@")
		log "adding $r as a replica of $p"
		redis-cli --cluster add-node "$r" "$anchor" --cluster-slave --cluster-master-id "$(cli "$p" cluster myid)"
		k=$((k + 1))
	done
else
	log "the cluster exists (all slots served, seen from $anchor): repairing what is missing"
	# A failed node without slots that lost its address (another node id
	# took it over: its pod came back empty and rejoined) is forgotten
	# everywhere.
	cli "$anchor" cluster nodes | tr -d '\r' | while read -r id addr flags _ _ _ _ _ slotranges; do
		case ",$flags," in *,fail,*) ;; *) continue ;; esac
		[ -z "$slotranges" ] || continue
		gone=
		case ",$flags," in *,noaddr,*) gone=yes ;; esac
		for b in "$@"; do
			if [ "${addr%%@*}" = "$b" ] && [ "$(cli "$b" cluster myid)" != "$id" ]; then
				gone=yes
			fi
		done
		[ -n "$gone" ] || continue
		log "forgetting $id, a failed node whose address another node took over"
		for c in "$@"; do
			cli "$c" cluster forget "$id" >/dev/null || true
		done
	done
	for a in "$@"; do
		if [ "$(field "$a" cluster-info cluster_known_nodes)" = 1 ] &&
			[ "$(field "$a" cluster-info cluster_slots_assigned)" = 0 ]; then
			log "$a is empty and alone: adding it as a replica"
			redis-cli --cluster add-node "$a" "$anchor" --cluster-slave
		fi
	done
	for a in "$@"; do
		nodes=$(cli "$a" cluster nodes)
		for b in "$@"; do
			[ "$a" != "$b" ] || continue
			case $nodes in
			*" $b@"*) ;;
			*)
				log "$a does not know $b at that address: CLUSTER MEET"
				cli "$a" cluster meet "${b%:*}" "${b##*:}" >/dev/null
				;;
			esac
		done
	done
fi

state_ok() { [ "$(field "$1" cluster-info cluster_state)" = ok ]; }
link_up() {
	[ "$(field "$1" replication role)" != slave ] ||
		[ "$(field "$1" replication master_link_status)" = up ]
}
all_known() { [ "$(field "$1" cluster-info cluster_known_nodes)" -ge "$count" ]; }
for a in "$@"; do
	wait_for "$a to know every node" all_known "$a"
	wait_for "$a to report cluster_state:ok" state_ok "$a"
	wait_for "$a to be in sync with its primary" link_up "$a"
done
redis-cli --cluster check "$anchor"
log "cluster ready: $primaries primaries, $replicas replica(s) each"
