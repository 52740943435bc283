# tests/helper.bash: shared set-up of every Bats suite.
#
# Loads Debian's bats-support, bats-assert and bats-file; finds the binaries; offers run_mpi,
# which runs an MPI job with everything running here needs (root, oversubscription, a timeout).

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

TOP=$(cd "$(dirname "${BATS_TEST_FILENAME}")/.." && pwd)
: "${SORTEX_BIN:=$TOP/bin}"
: "${SORTEX_BUILD:=$TOP/build/release}"
export SORTEX_BIN SORTEX_BUILD
SORTEX=$SORTEX_BIN/sortex
GEN=$SORTEX_BIN/sortex-gen
VERIFY=$SORTEX_BIN/sortex-verify

# Open MPI refuses root without these; they are harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Quiet, single-node defaults; vader (shared memory) + self is what one host uses.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}

# Seconds one MPI job may take before it is killed (a hang is a failure, not a stall).
: "${SORTEX_TEST_TIMEOUT:=120}"

# run_mpi NP CMD...: mpirun with oversubscription, unbound ranks and a timeout.
mpi() {
    local np=$1
    shift
    timeout --kill-after=10 "$SORTEX_TEST_TIMEOUT" \
        mpirun -np "$np" --oversubscribe --bind-to none "$@"
}
run_mpi() {
    run mpi "$@"
}

# The back-ends registered in the binary, one per line (the test matrix is driven by this).
backends() {
    "$SORTEX" --exchange help | awk 'NR > 1 && NF { print $1 }'
}

# sha256 of a file, for "the input is unchanged" checks.
checksum() {
    sha256sum "$1" | cut -d' ' -f1
}

# Number of 8-byte keys in a file.
nkeys() {
    echo $(($(stat -c %s "$1") / 8))
}
