#!/usr/bin/env bash
# agent.sh: Open MPI's launch agent for the emulated cluster, used in place of ssh through
# "--mca plm_rsh_agent". mpirun calls it as an ssh: "agent.sh HOST WORD...", where the words
# form one shell command line (an orted daemon with its arguments, quoted for a remote shell).
# Instead of logging in somewhere, it enters HOST's namespaces and runs that line with sh.
set -euo pipefail
(($# >= 2)) || {
    echo "agent: error: usage: agent.sh HOST COMMAND..." >&2
    exit 2
}
host=$1
shift
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/cluster.sh" exec "$host" /bin/sh -c "$*"
