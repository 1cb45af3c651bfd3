#!/bin/sh
# slotd-probe: the probes and the pre-stop hook of a slotd pod, against the
# node on 127.0.0.1:$SLOTD_PORT (default 6379).
#
#   slotd-probe live     the node is serving: PING answers PONG (or LOADING
#                        while it loads its data at start-up)
#   slotd-probe ready    the node is part of a healthy cluster: CLUSTER INFO
#                        says cluster_state:ok
#   slotd-probe prestop  before the pod gets SIGTERM: a primary with an
#                        online replica asks that replica to take over
#                        (CLUSTER FAILOVER) and waits up to
#                        SLOTD_PRESTOP_TIMEOUT seconds (default 30) until it
#                        is a replica itself, so a rolling restart moves the
#                        slots instead of waiting for failure detection.
#
# Authentication: redis-cli reads the password from REDISCLI_AUTH.
set -eu

port=${SLOTD_PORT:-6379}
cli() { timeout 5 redis-cli -h 127.0.0.1 -p "$port" "$@" | tr -d '\r'; }

case ${1:-} in
live)
	r=$(cli ping)
	case $r in
	PONG | LOADING*) exit 0 ;;
	esac
	echo "PING: $r" >&2
	exit 1
	;;
ready)
	cli cluster info | grep -qx 'cluster_state:ok'
	;;
prestop)
	info=$(cli info replication)
	if ! printf '%s\n' "$info" | grep -qx 'role:master'; then
		exit 0
	fi
	# slave0:ip=10.1.2.3,port=6379,state=online,offset=...,lag=0
	replica=$(printf '%s\n' "$info" | sed -n 's/^slave[0-9]*:ip=\([^,]*\),port=\([0-9]*\),state=online.*/\1 \2/p' | head -n 1)
	if [ -z "$replica" ]; then
		echo "slotd-probe prestop: no online replica: shutting down as a primary" >&2
		exit 0
	fi
	# shellcheck disable=SC2086 # "ip port"
	set -- $replica
	echo "slotd-probe prestop: asking $1:$2 to take over" >&2
	timeout 5 redis-cli -h "$1" -p "$2" cluster failover >/dev/null
	end=$(( $(date +%s) + ${SLOTD_PRESTOP_TIMEOUT:-30} ))
	while [ "$(date +%s)" -lt "$end" ]; do
		if cli info replication | grep -qx 'role:slave'; then
			echo "slotd-probe prestop: now a replica of $1:$2" >&2
			exit 0
		fi
		sleep 0.2
	done
	echo "slotd-probe prestop: the failover did not finish in time" >&2
	;;
*)
	echo "usage: slotd-probe live|ready|prestop" >&2
	exit 2
	;;
esac
