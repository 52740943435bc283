#!/usr/bin/env bash
# slurm.sh: a private Slurm on this machine (Debian's slurmctld, slurmd and munge), for running
# sortex under sbatch and srun in the tests (tests/64-slurm.bats).
#
#   slurm.sh check                 can it run here? (exit 0, or 1 and the reason on stderr)
#   slurm.sh up [--cpus N] [--owner PID]
#                                  start munged, slurmctld and slurmd with a configuration of
#                                  their own in a fresh directory; prints the "export ..." lines
#                                  (SLURM_CONF, TEST_SLURM_STATE) that point the clients at it;
#                                  with --owner, a watcher takes it down once process PID ends
#   slurm.sh down [STATE]          stop the three daemons and remove the directory
#                                  (STATE defaults to $TEST_SLURM_STATE)
#
# Nothing of the machine's is used or changed: the munge key, the configuration, the state and
# the logs live in the directory; the daemons listen on free ports of 127.0.0.1 picked at start;
# the clients find the configuration through SLURM_CONF. One node, this host, declared with N CPUs
# (default 8, more than a small machine has: slurmd takes the configuration's word, so that a job
# of 4 tasks of 2 CPUs fits on 2 cores, oversubscribed). Processes are tracked by /proc
# (proctrack/linuxproc) and not bound (task/none): no cgroups are touched. Needs root, as slurmd
# does to start jobs.
# Exit status: 0 success, 1 failure, 2 usage error.
set -euo pipefail
export PATH=$PATH:/usr/sbin

die() {
    echo "slurm: error: $*" >&2
    exit 1
}

cmd_check() {
    local p
    [[ $(id -u) -eq 0 ]] || { echo "slurm: unavailable: slurmd needs root" >&2; return 1; }
    for p in munged slurmctld slurmd srun sbatch scontrol sinfo scancel; do
        command -v "$p" >/dev/null 2>&1 ||
            { echo "slurm: unavailable: $p is missing (make deps)" >&2; return 1; }
    done
    compgen -G "/usr/lib/*/slurm-wlm/mpi_pmix*.so" >/dev/null ||
        { echo "slurm: unavailable: Slurm has no PMIx plugin (mpi_pmix.so)" >&2; return 1; }
}

# Two free TCP ports of 127.0.0.1, as the kernel hands them out.
free_ports() {
    /usr/bin/python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# Waits up to 30 s for the node to be idle; fails with the daemons' last log lines.
wait_idle() {
    local dir=$1 i
    for ((i = 0; i < 150; i++)); do
        if [[ $(sinfo -h -o %t 2>/dev/null) == idle ]]; then
            return 0
        fi
        sleep 0.2
    done
    tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    return 1
}

cmd_up() {
    local cpus=8 owner=
    while [[ $# -gt 0 ]]; do
        case $1 in
        --cpus) cpus=${2:?--cpus needs a number}; shift 2 ;;
        --owner) owner=${2:?--owner needs a process id}; shift 2 ;;
        *) echo "slurm: error: unknown option $1" >&2; exit 2 ;;
        esac
    done
    cmd_check || exit 1
    local dir node ports
    # munged wants every directory up to its socket searchable by all, and its key private.
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sortex-slurm.XXXXXX")
    chmod 755 "$dir"
    mkdir -p "$dir/munge" "$dir/key" "$dir/state" "$dir/spool" "$dir/log"
    chmod 700 "$dir/key"
    dd if=/dev/urandom of="$dir/key/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/key/munge.key"
    munged --key-file="$dir/key/munge.key" --socket="$dir/munge/socket" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/munge/seed" || { rm -rf "$dir"; die "munged did not start"; }
    node=$(hostname -s)
    read -r -a ports < <(free_ports)
    cat >"$dir/slurm.conf" <<EOF
# A private Slurm of tests/slurm/slurm.sh: one node, this host.
ClusterName=sortex
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
# Batch jobs start at once, not up to 3 s later (batch_sched_delay).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$dir/slurm.conf
    if ! slurmctld -f "$SLURM_CONF" || ! slurmd -f "$SLURM_CONF" || ! wait_idle "$dir"; then
        cmd_down "$dir" >/dev/null 2>&1 || true
        die "Slurm did not start (its logs were in $dir/log)"
    fi
    if [[ -n $owner ]]; then
        # Detached from the caller's terminal and pipes, so that nobody waits for it.
        setsid "$0" watch "$owner" "$dir" </dev/null >/dev/null 2>&1 &
    fi
    printf 'export SLURM_CONF=%q TEST_SLURM_STATE=%q\n' "$SLURM_CONF" "$dir"
}

# Takes the Slurm of @dir down once process @owner has ended (unless it is down already).
cmd_watch() {
    local owner=$1 dir=$2
    while [[ -d /proc/$owner && -f $dir/slurm.conf ]]; do
        sleep 1
    done
    if [[ -f $dir/slurm.conf ]]; then
        cmd_down "$dir"
    fi
}

# Ends the process whose id is in @file (if it is still that process), waiting for it.
stop_pid() {
    local file=$1 name=$2 pid i
    [[ -f $file ]] || return 0
    pid=$(cat "$file")
    [[ -n $pid && -d /proc/$pid ]] || return 0
    grep -q "$name" "/proc/$pid/comm" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        [[ -d /proc/$pid ]] || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

cmd_down() {
    local dir=${1:-${TEST_SLURM_STATE:-}}
    [[ -n $dir && -f $dir/slurm.conf ]] || die "no private Slurm (${dir:-no state directory})"
    export SLURM_CONF=$dir/slurm.conf
    # Jobs first, then the daemons (scontrol shutdown asks slurmctld to stop the slurmd too).
    scancel --quiet --user root 2>/dev/null || true
    scontrol shutdown >/dev/null 2>&1 || true
    stop_pid "$dir/slurmd.pid" slurmd
    stop_pid "$dir/slurmctld.pid" slurmctld
    stop_pid "$dir/munge/munged.pid" munged
    rm -rf "$dir"
}

[[ $# -ge 1 ]] || { echo "usage: slurm.sh {check|up|down} ..." >&2; exit 2; }
cmd=$1
shift
case $cmd in
check) cmd_check ;;
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
watch) cmd_watch "$@" ;;
*) echo "usage: slurm.sh {check|up|down} ..." >&2; exit 2 ;;
esac
