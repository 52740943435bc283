#!/usr/bin/env bash
# cluster.sh: an emulated multi-host cluster made of Linux network namespaces on this machine,
# for running MPI jobs over real TCP links between "hosts". See tests/cluster/README.md.
#
#   cluster.sh check                      can namespaces be made here? (exit 0, or 1 and why)
#   cluster.sh up --hosts N [options]     build a cluster; prints "export CLUSTER_...=..." lines
#   cluster.sh down                       remove everything the cluster made
#   cluster.sh with [up options] -- CMD   up, run CMD with CLUSTER_* exported, down (always)
#   cluster.sh run [--] MPIRUN-ARGS       mpirun on the cluster, started inside the first host
#   cluster.sh exec HOST CMD...           run CMD on one host (its network, name and hosts file)
#   cluster.sh kill-host HOST             SIGKILL every process of one host
#   cluster.sh link-down HOST | link-up HOST   unplug / replug one host's cable at the switch
#   cluster.sh counters                   bytes each host sent and received over its link
#   cluster.sh status                     hosts, addresses, link states, rate limits
#   cluster.sh build-probe DIR            compile mpi_probe.c into DIR, print the binary's path
#
# up options:
#   --hosts N        number of hosts (1..200, required)
#   --slots S        MPI slots per host in the hostfile (default 2)
#   --rate RATE      limit every link, both directions, with tc tbf (e.g. 100mbit; default none)
#   --duplex MODE    full (default): RATE each way; half: RATE for both directions together,
#                    a host's sends and receives sharing one token bucket (needs --rate)
#   --prefix PFX     namespace prefix, [a-z][a-z0-9]{0,9} (default: "sx" + 4 random hex digits)
#   --subnet A.B.C   the /24 the hosts live in, only inside the namespaces (default 10.213.0)
#   --state DIR      where the state files go (default ${TMPDIR:-/tmp}/sortex-cluster.PFX)
#   --owner PID      tear the cluster down by itself once process PID has exited
#
# Commands other than up/with find the cluster through --state DIR (before the command word or
# right after it), else $CLUSTER_STATE, else --prefix PFX (default state location).
#
# A host HOST is named by its host name (PFX-h2), its short name (h2) or its number (2).
# Exit status: 0 success, 1 failure, 2 usage error.
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
AGENT=$HERE/agent.sh

die() {
    echo "cluster: error: $*" >&2
    exit 1
}
usage() {
    echo "cluster: error: $*" >&2
    echo "usage: cluster.sh {check|up|down|with|run|exec|kill-host|link-down|link-up|counters|status|build-probe} ..." >&2
    exit 2
}
# Prints its arguments as a shell-quoted command line (for logs and the state files).
quoted() {
    printf '%q ' "$@" | sed 's/ $//'
}

# ---- naming -----------------------------------------------------------------------------------
# Namespaces are "PFX-sw" (the switch: one bridge, one port pI per host) and "PFX-hI" (host I,
# whose only link is eth0, address SUBNET.I). The host name equals the namespace name, so the
# launch agent can map a host name straight to its namespace.
switch_ns() { echo "$1-sw"; }
host_ns() { echo "$1-h$2"; }

# Every namespace carrying the prefix, one per line.
prefix_namespaces() {
    ip netns list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}

# ---- state ------------------------------------------------------------------------------------
STATE=${CLUSTER_STATE:-}
PREFIX_ARG=

default_state() {
    echo "${TMPDIR:-/tmp}/sortex-cluster.$1"
}

# Loads $STATE/env (CLUSTER_* variables) into the shell, or dies naming what is missing.
load_state() {
    if [[ -z $STATE && -n $PREFIX_ARG ]]; then
        STATE=$(default_state "$PREFIX_ARG")
    fi
    [[ -n $STATE ]] || usage "no cluster given (--state DIR, \$CLUSTER_STATE or --prefix PFX)"
    [[ -f $STATE/env ]] || die "no cluster state ($STATE/env)"
    # shellcheck source=/dev/null
    source "$STATE/env"
}

# Resolves HOST (PFX-hI, hI or I) to its number I, or dies.
host_index() {
    local h=$1 i
    case $h in
        "$CLUSTER_PREFIX"-h*) i=${h#"$CLUSTER_PREFIX"-h} ;;
        h*) i=${h#h} ;;
        *) i=$h ;;
    esac
    if ! [[ $i =~ ^[0-9]+$ ]] || ((i < 1 || i > CLUSTER_NHOSTS)); then
        die "no such host ($h; hosts are ${CLUSTER_HOSTS// /, })"
    fi
    echo $((10#$i))
}

# ---- check ------------------------------------------------------------------------------------
# Tries, in a throw-away namespace, everything "up" needs; prints the reason when one fails.
cmd_check() {
    local why="" ns
    ns="sxchk$$-h1"
    CHECK_NS=$ns
    trap 'ip netns del "$CHECK_NS" 2>/dev/null || true' EXIT
    if [[ $(id -u) -ne 0 ]]; then
        why="network namespaces need root (uid $(id -u))"
    elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
        why="ip/tc (iproute2) not installed"
    elif ! command -v unshare >/dev/null || ! command -v hostname >/dev/null; then
        why="unshare/hostname not installed"
    elif ! ip netns add "$ns" 2>/dev/null; then
        why="cannot create a network namespace (ip netns add failed)"
    else
        if ! ip -n "$ns" link add p1 type veth peer name eth0 2>/dev/null; then
            why="cannot create veth pairs inside a namespace"
        elif ! ip -n "$ns" link add br0 type bridge 2>/dev/null; then
            why="cannot create a bridge inside a namespace"
        elif ! ip -n "$ns" link set eth0 up 2>/dev/null ||
            ! tc -n "$ns" qdisc add dev eth0 root tbf rate 10mbit burst 32kb latency 50ms \
                2>/dev/null; then
            why="tc tbf not available inside a namespace"
        elif ! ip netns exec "$ns" unshare --uts -- hostname "$ns" 2>/dev/null; then
            why="cannot create a UTS namespace (unshare --uts) inside a network namespace"
        elif ! ip -n "$ns" link add ifb1 type ifb 2>/dev/null ||
            ! tc -n "$ns" qdisc add dev p1 clsact 2>/dev/null ||
            ! tc -n "$ns" filter add dev p1 ingress protocol all u32 match u32 0 0 \
                action mirred egress redirect dev ifb1 2>/dev/null; then
            CHECK_HALF="no (ifb, clsact, u32 or mirred missing: --duplex half unavailable)"
        fi
        ip netns del "$ns" 2>/dev/null || true
    fi
    if [[ -z $why ]] && ! command -v mpirun >/dev/null; then
        why="mpirun not installed"
    fi
    if [[ -n $why ]]; then
        echo "cluster: unavailable: $why" >&2
        return 1
    fi
    echo "cluster: network namespaces, veth, bridge, tbf and UTS namespaces work here;" \
        "half-duplex links: ${CHECK_HALF:-yes}"
}

# ---- up ---------------------------------------------------------------------------------------
UP_HOSTS=
UP_SLOTS=2
UP_RATE=
UP_DUPLEX=full
UP_PREFIX=
UP_SUBNET=10.213.0
UP_OWNER=

# Parses up's options from "$@"; sets UP_* and UP_REST (the arguments after "--", for with).
parse_up() {
    UP_REST=()
    UP_PREFIX=$PREFIX_ARG
    while (($#)); do
        case $1 in
            --hosts) UP_HOSTS=${2:-}; shift 2 || usage "--hosts needs a value" ;;
            --slots) UP_SLOTS=${2:-}; shift 2 || usage "--slots needs a value" ;;
            --rate) UP_RATE=${2:-}; shift 2 || usage "--rate needs a value" ;;
            --duplex) UP_DUPLEX=${2:-}; shift 2 || usage "--duplex needs a value" ;;
            --prefix) UP_PREFIX=${2:-}; shift 2 || usage "--prefix needs a value" ;;
            --subnet) UP_SUBNET=${2:-}; shift 2 || usage "--subnet needs a value" ;;
            --state) STATE=${2:-}; shift 2 || usage "--state needs a value" ;;
            --owner) UP_OWNER=${2:-}; shift 2 || usage "--owner needs a value" ;;
            --) shift; UP_REST=("$@"); return 0 ;;
            *) usage "unknown option ($1)" ;;
        esac
    done
}

validate_up() {
    if ! [[ $UP_HOSTS =~ ^[0-9]+$ ]] || ((UP_HOSTS < 1 || UP_HOSTS > 200)); then
        usage "--hosts must be 1..200 (${UP_HOSTS:-missing})"
    fi
    if ! [[ $UP_SLOTS =~ ^[0-9]+$ ]] || ((UP_SLOTS < 1)); then
        usage "--slots must be >= 1 ($UP_SLOTS)"
    fi
    [[ -z $UP_RATE || $UP_RATE =~ ^[0-9]+(\.[0-9]+)?[kKmMgG]?(bit|bps)$ ]] ||
        usage "--rate must look like 100mbit ($UP_RATE)"
    [[ $UP_DUPLEX == full || $UP_DUPLEX == half ]] ||
        usage "--duplex must be full or half ($UP_DUPLEX)"
    [[ $UP_DUPLEX == full || -n $UP_RATE ]] || usage "--duplex half needs --rate"
    [[ $UP_SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] ||
        usage "--subnet must be the first three octets, like 10.213.0 ($UP_SUBNET)"
    # Private ranges only: the subnet must never look like anything reachable.
    [[ $UP_SUBNET =~ ^10\. || $UP_SUBNET =~ ^192\.168\. ||
        $UP_SUBNET =~ ^172\.(1[6-9]|2[0-9]|3[01])\. ]] ||
        usage "--subnet must be private (10/8, 172.16/12 or 192.168/16) ($UP_SUBNET)"
    if [[ -z $UP_PREFIX ]]; then
        # A random prefix nobody uses yet; "ip netns add" failing later catches the last race.
        local tries=0
        while :; do
            UP_PREFIX=sx$(printf '%04x' $((RANDOM % 65536)))
            [[ -z $(prefix_namespaces "$UP_PREFIX") ]] && break
            ((++tries < 50)) || die "no free namespace prefix found"
        done
    fi
    [[ $UP_PREFIX =~ ^[a-z][a-z0-9]{0,9}$ ]] || usage "--prefix must match [a-z][a-z0-9]{0,9} ($UP_PREFIX)"
    [[ -z $(prefix_namespaces "$UP_PREFIX") ]] ||
        die "namespaces with this prefix exist already ($UP_PREFIX-*); cluster.sh down --prefix $UP_PREFIX"
    [[ -z $UP_OWNER || $UP_OWNER =~ ^[0-9]+$ ]] || usage "--owner must be a pid ($UP_OWNER)"
    : "${STATE:=$(default_state "$UP_PREFIX")}"
    [[ $STATE != *[[:space:]:]* ]] || usage "--state must not contain spaces or colons ($STATE)"
    [[ $AGENT != *[[:space:]:]* ]] || die "the launch agent's path has spaces or colons ($AGENT)"
}

# Adds a tbf rate limit on the egress of one interface in one namespace.
limit_rate() {
    local ns=$1 dev=$2 rate=$3
    # The bucket holds a few full-size (GSO) packets; 50 ms of queue before tbf drops.
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$rate" burst 256kb latency 50ms
}

# Makes the link of host i half-duplex at the switch: both directions through port pI (ingress: what
# the host sends; egress: what it receives) are redirected into one ifb device whose tbf they share,
# so the host's sends plus receives stay within the rate, as in the half-duplex model of the
# h-relation paper (Sanders and Solis-Oba 2001). After the ifb's queue, packets go on where they
# were going. u32 with an empty match is the match-all filter every kernel with tc filters has.
half_duplex() {
    local sw=$1 i=$2 rate=$3
    ip -n "$sw" link add "ifb$i" type ifb
    ip -n "$sw" link set "ifb$i" up
    limit_rate "$sw" "ifb$i" "$rate"
    tc -n "$sw" qdisc add dev "p$i" clsact
    local dir
    for dir in ingress egress; do
        tc -n "$sw" filter add dev "p$i" "$dir" protocol all u32 match u32 0 0 \
            action mirred egress redirect dev "ifb$i"
    done
}

# Writes the state files: env (sourceable), hostfile, hosts, and the mpirun/exec wrappers.
write_state() {
    local pfx=$1 n=$2 i hosts=""
    for ((i = 1; i <= n; i++)); do
        hosts+="${hosts:+ }$(host_ns "$pfx" "$i")"
    done
    {
        echo "# Written by cluster.sh up; sourced by the other commands."
        printf 'CLUSTER_STATE=%q\n' "$STATE"
        printf 'CLUSTER_PREFIX=%q\n' "$pfx"
        printf 'CLUSTER_SWITCH=%q\n' "$(switch_ns "$pfx")"
        printf 'CLUSTER_HOSTS=%q\n' "$hosts"
        printf 'CLUSTER_NHOSTS=%q\n' "$n"
        printf 'CLUSTER_SLOTS=%q\n' "$UP_SLOTS"
        printf 'CLUSTER_NP=%q\n' $((n * UP_SLOTS))
        printf 'CLUSTER_SUBNET=%q\n' "$UP_SUBNET.0/24"
        printf 'CLUSTER_RATE=%q\n' "$UP_RATE"
        printf 'CLUSTER_DUPLEX=%q\n' "$UP_DUPLEX"
        printf 'CLUSTER_HOSTFILE=%q\n' "$STATE/hostfile"
        printf 'CLUSTER_MPIRUN=%q\n' "$STATE/mpirun"
        printf 'CLUSTER_EXEC=%q\n' "$STATE/exec"
        printf 'CLUSTER_SH=%q\n' "$SELF"
    } >"$STATE/env"
    for ((i = 1; i <= n; i++)); do
        echo "$(host_ns "$pfx" "$i") slots=$UP_SLOTS"
    done >"$STATE/hostfile"
    # Wrappers: single paths a caller can use in place of "mpirun" or an ssh to a host.
    printf '#!/bin/sh\nexec %s --state %s run -- "$@"\n' "$(quoted "$SELF")" "$(quoted "$STATE")" \
        >"$STATE/mpirun"
    printf '#!/bin/sh\nexec %s --state %s exec -- "$@"\n' "$(quoted "$SELF")" "$(quoted "$STATE")" \
        >"$STATE/exec"
    chmod +x "$STATE/mpirun" "$STATE/exec"
}

# Prints the CLUSTER_* variables as export lines, for eval "$(cluster.sh up ...)".
print_exports() {
    sed -n 's/^\(CLUSTER_[A-Z_]*=\)/export \1/p' "$STATE/env"
}

cmd_up() {
    parse_up "$@"
    ((${#UP_REST[@]} == 0)) || usage "up takes no command (did you mean with?)"
    do_up
}

# Builds the cluster described by the UP_* variables; prints the export lines.
do_up() {
    validate_up
    local pfx=$UP_PREFIX n=$UP_HOSTS sw i ns
    sw=$(switch_ns "$pfx")

    mkdir -p "$STATE" || die "cannot create the state directory ($STATE)"
    [[ ! -e $STATE/env && ! -e $STATE/prefix ]] || die "a cluster state exists already ($STATE)"
    # Whatever fails or interrupts from here on, nothing made so far may stay behind; only what
    # this run made is removed (a namespace that existed already may be another run's).
    echo "$pfx" >"$STATE/prefix"
    UP_MADE=()
    trap undo_up EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # The switch: one bridge, no address, IPv6 off so the counters carry only the jobs' traffic.
    ip netns add "$sw"
    UP_MADE+=("$sw")
    ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set br0 up

    for ((i = 1; i <= n; i++)); do
        ns=$(host_ns "$pfx" "$i")
        ip netns add "$ns"
        UP_MADE+=("$ns")
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
        # No slow start after idle, as clusters tune TCP: otherwise every message after a pause
        # (each step of a scheduled exchange) restarts at a small window, ~20 ms per step here.
        ip netns exec "$ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
        ip -n "$ns" link set lo up
        # The cable: both ends are created inside the namespaces, never in the root one.
        ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns"
        ip -n "$sw" link set "p$i" master br0
        ip -n "$sw" link set "p$i" up
        ip -n "$ns" addr add "$UP_SUBNET.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        if [[ -n $UP_RATE && $UP_DUPLEX == half ]]; then
            half_duplex "$sw" "$i" "$UP_RATE"
        elif [[ -n $UP_RATE ]]; then
            limit_rate "$ns" eth0 "$UP_RATE"
            limit_rate "$sw" "p$i" "$UP_RATE"
        fi
    done

    # Name resolution: "ip netns exec NS" bind-mounts /etc/netns/NS/hosts over /etc/hosts in
    # the mount namespace it creates, so these names exist only inside the hosts.
    {
        echo "127.0.0.1 localhost"
        for ((i = 1; i <= n; i++)); do
            echo "$UP_SUBNET.$i $(host_ns "$pfx" "$i")"
        done
    } >"$STATE/hosts"
    for ((i = 1; i <= n; i++)); do
        ns=$(host_ns "$pfx" "$i")
        # /etc/netns may vanish under us if a parallel run removes it while empty: retry.
        UP_MADE+=("/etc/netns/$ns")
        mkdir -p "/etc/netns/$ns" || mkdir -p "/etc/netns/$ns"
        cp "$STATE/hosts" "/etc/netns/$ns/hosts"
    done

    write_state "$pfx" "$n"
    # Every host must answer before the cluster is handed out.
    # shellcheck source=/dev/null
    source "$STATE/env"
    for ((i = 1; i <= n; i++)); do
        wait_reachable "$i" || die "host $i does not answer on $UP_SUBNET.0/24"
    done
    if [[ -n $UP_OWNER ]]; then
        start_watchdog "$UP_OWNER"
    fi
    trap - EXIT
    print_exports
}

# Removes what a failed "up" made (UP_MADE: namespaces and /etc/netns directories), and its state.
undo_up() {
    local made
    echo "cluster: up failed; removing what it made" >&2
    for made in "${UP_MADE[@]}"; do
        case $made in
            /etc/netns/*) rm -rf "$made" ;;
            *) kill_namespace "$made" && ip netns del "$made" ;;
        esac
    done 2>/dev/null || true
    rmdir /etc/netns 2>/dev/null || true
    rm -f "$STATE"/{env,prefix,hostfile,hosts,mpirun,exec,watchdog.pid}
    rmdir "$STATE" 2>/dev/null || true
}

# The watchdog: a detached process that runs "down" once the owner has gone, so even a killed
# owner (SIGKILL, a crashed test runner) leaves nothing behind.
start_watchdog() {
    local owner=$1
    kill -0 "$owner" 2>/dev/null || die "the owner process does not exist ($owner)"
    setsid -f "$SELF" --state "$STATE" _watch "$owner" </dev/null >/dev/null 2>&1
    # Up returns once the watchdog is in place, so a "down" right after always finds it.
    local try
    for ((try = 0; try < 100; try++)); do
        [[ ! -s $STATE/watchdog.pid ]] || return 0
        sleep 0.02
    done
    die "the watchdog did not start"
}

cmd_watch() {
    local owner=$1 fd
    # Hold none of the caller's descriptors (a test runner waits for its pipes to close).
    for fd in "/proc/$BASHPID/fd"/*; do
        fd=${fd##*/}
        if ((fd > 2)); then
            eval "exec $fd>&-" 2>/dev/null || true
        fi
    done
    echo $BASHPID >"$STATE/watchdog.pid"
    while kill -0 "$owner" 2>/dev/null && [[ -f $STATE/env ]]; do
        sleep 1
    done
    if [[ -f $STATE/env ]]; then
        cmd_down >/dev/null 2>&1 || true
    fi
}

# ---- reachability ---------------------------------------------------------------------------
# Succeeds when ADDRESS answers from namespace NS: a TCP connect to a closed port is refused at
# once by a reachable host, and times out (or finds no route) otherwise. No ping needed.
answers() {
    local ns=$1 address=$2 err
    if err=$(ip netns exec "$ns" timeout 1 bash -c "exec 3<>/dev/tcp/$address/9" 2>&1); then
        return 0
    fi
    [[ $err == *"Connection refused"* ]]
}

# Waits up to 10 s until host I answers another host (host 1, or host 2 for host 1).
wait_reachable() {
    local i=$1 from deadline=$((SECONDS + 10))
    ((CLUSTER_NHOSTS > 1)) || return 0
    from=$(host_ns "$CLUSTER_PREFIX" $((i == 1 ? 2 : 1)))
    until answers "$from" "${CLUSTER_SUBNET%.0/24}.$i"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

# ---- down -------------------------------------------------------------------------------------
# Kills every process in a namespace (repeatedly: a dying job may still fork).
kill_namespace() {
    local ns=$1 pids try
    for ((try = 0; try < 50; try++)); do
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        [[ -n $pids ]] || return 0
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        sleep 0.1
    done
    echo "cluster: warning: processes survive in $ns: $pids" >&2
    return 1
}

cmd_down() {
    local pfx="" ns wpid rc=0
    if [[ -z $STATE && -n $PREFIX_ARG ]]; then
        STATE=$(default_state "$PREFIX_ARG")
    fi
    if [[ -n $STATE && -f $STATE/prefix ]]; then
        pfx=$(<"$STATE/prefix")
    fi
    : "${pfx:=$PREFIX_ARG}"
    [[ -n $pfx ]] || usage "no cluster given (--state DIR, \$CLUSTER_STATE or --prefix PFX)"
    [[ $pfx =~ ^[a-z][a-z0-9]{0,9}$ ]] || die "bad prefix ($pfx)"

    # The watchdog first (unless this is the watchdog), so it does not race this teardown.
    if [[ -n $STATE && -f $STATE/watchdog.pid ]]; then
        wpid=$(<"$STATE/watchdog.pid")
        if [[ $wpid != "$BASHPID" && $wpid != "$$" ]]; then
            kill "$wpid" 2>/dev/null || true
        fi
    fi
    # Processes first (a namespace lives on while a process is in it), then namespaces.
    for ns in $(prefix_namespaces "$pfx"); do
        kill_namespace "$ns" || rc=1
    done
    for ns in $(prefix_namespaces "$pfx"); do
        ip netns del "$ns" || rc=1
    done
    rm -rf /etc/netns/"$pfx"-*
    rmdir /etc/netns 2>/dev/null || true
    # What Open MPI leaves behind when a host dies: session directories and shared-memory
    # segments. Their names carry the host names, hence this cluster's prefix.
    rm -rf "${TMPDIR:-/tmp}"/ompi."$pfx"-h* /tmp/ompi."$pfx"-h* /dev/shm/vader_segment."$pfx"-h*
    if [[ -n $STATE && -f $STATE/prefix ]]; then
        rm -f "$STATE"/{env,prefix,hostfile,hosts,mpirun,exec,watchdog.pid}
        rmdir "$STATE" 2>/dev/null || true
    fi
    if [[ -n $(prefix_namespaces "$pfx") ]]; then
        echo "cluster: error: namespaces left: $(prefix_namespaces "$pfx" | tr '\n' ' ')" >&2
        rc=1
    fi
    return $rc
}

# ---- with -------------------------------------------------------------------------------------
cmd_with() {
    parse_up "$@"
    ((${#UP_REST[@]} > 0)) || usage "with needs a command after --"
    local cmd=("${UP_REST[@]}") rc=0
    # This process owns the cluster: a watchdog removes it even if this process is SIGKILLed.
    UP_OWNER=$$
    do_up >/dev/null
    trap 'cmd_down >/dev/null || true' EXIT
    set -a
    # shellcheck source=/dev/null
    source "$STATE/env"
    set +a
    "${cmd[@]}" || rc=$?
    exit $rc
}

# ---- run and exec -----------------------------------------------------------------------------
# The Open MPI settings that make mpirun work across the namespaces; see README.md.
mpirun_args() {
    local -n mpirun_out=$1
    # shellcheck disable=SC2034,SC2054 # a nameref (the caller reads it); commas of the btl list
    mpirun_out=(
        --hostfile "$CLUSTER_HOSTFILE"
        # Daemons on other hosts are started by entering their namespace instead of ssh, one by
        # one from mpirun (a tree spawn would run the agent inside other hosts).
        --mca plm_rsh_agent "$AGENT"
        --mca plm_rsh_no_tree_spawn 1
        --mca btl tcp,vader,self
        --mca btl_tcp_if_include "$CLUSTER_SUBNET"
        --mca oob_tcp_if_include "$CLUSTER_SUBNET"
        # A host that stops answering is declared lost after 2 + 3 x 1 s, so the job aborts
        # instead of hanging.
        --mca oob_tcp_keepalive_time 2
        --mca oob_tcp_keepalive_intvl 1
        --mca oob_tcp_keepalive_probes 3
        # Daemons stay children of mpirun instead of daemonizing, so one that cannot call back
        # (its host unreachable at launch) fails the job within seconds instead of hanging it.
        --mca orte_leave_session_attached 1
    )
}

cmd_run() {
    load_state
    [[ ${1:-} != -- ]] || shift
    local args
    mpirun_args args
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # The ranks of all hosts share this machine's cores: binding would pile them up.
    export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
    exec "$SELF" exec "${CLUSTER_HOSTS%% *}" mpirun "${args[@]}" "$@"
}

# exec HOST CMD...: CMD runs in HOST's network namespace, in a mount namespace where
# /etc/hosts is the cluster's, and in a fresh UTS namespace carrying HOST's name.
cmd_exec() {
    [[ ${1:-} != -- ]] || shift
    (($# >= 2)) || usage "exec needs a host and a command"
    local host=$1
    shift
    [[ $host =~ ^[a-z][a-z0-9]{0,9}-h[0-9]+$ && -e /run/netns/$host ]] ||
        die "no such host ($host)"
    # shellcheck disable=SC2016 # $0 and $@ belong to the inner sh
    exec ip netns exec "$host" unshare --uts -- \
        /bin/sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

# ---- failures ---------------------------------------------------------------------------------
cmd_kill_host() {
    (($# == 1)) || usage "kill-host needs one host"
    load_state
    local i
    i=$(host_index "$1")
    kill_namespace "$(host_ns "$CLUSTER_PREFIX" "$i")"
}

cmd_link() {
    local state=$1
    shift
    (($# == 1)) || usage "link-$state needs one host"
    load_state
    local i ns
    i=$(host_index "$1")
    # The switch's end of the cable: the host keeps its address and sees no carrier.
    ip -n "$CLUSTER_SWITCH" link set "p$i" "$state"
    if [[ $state == up ]]; then
        # Forget addresses that failed to resolve while the cable was out, and return only once
        # the host answers again (the kernel activates a returning link asynchronously).
        for ns in $CLUSTER_HOSTS; do
            ip -n "$ns" neigh flush all
        done
        wait_reachable "$i" || die "host $i unreachable after link-up"
    fi
}

# ---- observing --------------------------------------------------------------------------------
# counters: one line per host: name, bytes it sent, bytes it received (read at the switch port).
cmd_counters() {
    load_state
    local i rx tx
    printf '%-14s %14s %14s\n' host tx_bytes rx_bytes
    for ((i = 1; i <= CLUSTER_NHOSTS; i++)); do
        # The switch port receives what the host transmits, and the other way round.
        { read -r rx && read -r tx; } < <(ip netns exec "$CLUSTER_SWITCH" \
            cat /sys/class/net/p$i/statistics/rx_bytes /sys/class/net/p$i/statistics/tx_bytes)
        printf '%-14s %14s %14s\n' "$(host_ns "$CLUSTER_PREFIX" "$i")" "$rx" "$tx"
    done
}

cmd_status() {
    load_state
    local i ns link qdisc
    echo "cluster $CLUSTER_PREFIX: $CLUSTER_NHOSTS hosts x $CLUSTER_SLOTS slots," \
        "subnet $CLUSTER_SUBNET, rate ${CLUSTER_RATE:-unlimited}" \
        "${CLUSTER_RATE:+(${CLUSTER_DUPLEX:-full} duplex)}, state $CLUSTER_STATE"
    for ((i = 1; i <= CLUSTER_NHOSTS; i++)); do
        ns=$(host_ns "$CLUSTER_PREFIX" "$i")
        link=$(ip -n "$CLUSTER_SWITCH" -br link show "p$i" | awk '{ print $2 }')
        qdisc=$(tc -n "$ns" qdisc show dev eth0 | awk '{ print $2 }')
        printf '%-14s %-15s link %-5s qdisc %-8s processes %s\n' "$ns" \
            "$(ip -n "$ns" -br -4 addr show eth0 | awk '{ print $3 }')" "$link" "$qdisc" \
            "$(ip netns pids "$ns" | wc -l)"
    done
}

cmd_build_probe() {
    (($# == 1)) || usage "build-probe needs an output directory"
    mkdir -p "$1"
    local bin=$1/mpi_probe
    # Rebuilt only when the source is newer; the compile is atomic through a temporary name.
    if [[ ! -x $bin || $HERE/mpi_probe.c -nt $bin ]]; then
        mpicc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -o "$bin.tmp.$$" "$HERE/mpi_probe.c"
        mv -f "$bin.tmp.$$" "$bin"
    fi
    echo "$bin"
}

# ---- main -------------------------------------------------------------------------------------
# Global options (--state, --prefix) may come before or right after the command word.
global_opts() {
    while (($#)); do
        case $1 in
            --state) STATE=${2:-}; shift 2 || usage "--state needs a value" ;;
            --prefix) PREFIX_ARG=${2:-}; shift 2 || usage "--prefix needs a value" ;;
            *) break ;;
        esac
        NSHIFT=$((NSHIFT + 2))
    done
}

NSHIFT=0
global_opts "$@"
shift $NSHIFT
(($# >= 1)) || usage "no command given"
command=$1
shift
case $command in
    up | with | exec | build-probe | check | _watch) ;;
    *)
        NSHIFT=0
        global_opts "$@"
        shift $NSHIFT
        ;;
esac

case $command in
    check) cmd_check ;;
    up) cmd_up "$@" ;;
    down) (($# == 0)) || usage "down takes no arguments"; cmd_down ;;
    with) cmd_with "$@" ;;
    run) cmd_run "$@" ;;
    exec) cmd_exec "$@" ;;
    kill-host) cmd_kill_host "$@" ;;
    link-down) cmd_link down "$@" ;;
    link-up) cmd_link up "$@" ;;
    counters) cmd_counters ;;
    status) cmd_status ;;
    build-probe) cmd_build_probe "$@" ;;
    _watch) cmd_watch "$@" ;;
    -h | --help | help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' ;;
    *) usage "unknown command ($command)" ;;
esac
