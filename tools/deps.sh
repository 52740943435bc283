#!/usr/bin/env bash
# Installs the Debian packages sortex needs, and only the missing ones.
# Idempotent: when everything is present it only asks dpkg and returns.
# Without root or apt-get it names the packages to install and fails.
set -euo pipefail

packages=(
    build-essential          # gcc, g++, make
    openmpi-bin libopenmpi-dev  # mpicc, mpirun
    mpich libmpich-dev       # make MPI=mpich and the MPICH suite: mpicc.mpich, mpiexec.mpich
    libjemalloc-dev          # the allocator
    libxxhash-dev            # verify's checksum hash
    zlib1g-dev               # crc32 of gensort's checksum (verify)
    bats bats-support bats-assert bats-file  # test harness
    parallel                 # GNU parallel: Bats runs the test files two at a time
    gnuplot-nox              # plots
    iproute2                 # ip netns for the emulated cluster
    util-linux               # unshare, mount
    procps                   # ps, pkill in the failure tests
    python3                  # small helpers in tests and bench
    python3-numpy python3-pandas  # the results test reads every CSV as their users would
    valgrind                 # the memcheck suite
    libips4o-dev libhwy-dev libboost-dev  # the local sort's baselines (ips4o, vqsort, Boost.Sort)
    libstxxl-dev             # the external sort's baseline (STXXL's sorter, sortex-stxxl)
    e2fsprogs                # mkfs.ext2 for the no-fallocate file system test
    help2man                 # make install: the man pages, from each program's --help
    pkgconf                  # pkg-config: the install test builds a program with sortex.pc
    cmake                    # the install test builds a program with find_package(sortex)
    python3-mpi4py           # the Python module's tests (numpy is above)
    slurmctld slurmd slurm-client munge  # the Slurm suite starts a private Slurm
    slurm-wlm-basic-plugins  # Slurm's PMIx plugin (mpi_pmix_v4.so): srun --mpi=pmix
    xxd                      # the stable-sort reference of the record suites (stable_sort_of)
)

# Debian's MPICH registers its mpicc and mpirun as alternatives beside Open MPI's (the "mpi" and
# "mpirun" groups; Open MPI's rank higher, but an alternative set by hand wins). The tree builds
# with mpicc and runs with mpirun, both Open MPI's (make MPI=mpich names MPICH's own programs),
# so they are set back to Open MPI's when they point elsewhere.
openmpi_default() {
    local group want now
    for group in mpi:/usr/bin/mpicc.openmpi mpirun:/usr/bin/mpirun.openmpi; do
        want=${group#*:} group=${group%%:*}
        now=$(update-alternatives --query "$group" 2>/dev/null | sed -n 's/^Value: //p')
        [[ -z $now || $now == "$want" ]] && continue
        if [[ $(id -u) -ne 0 ]]; then
            echo "sortex: error: $group points to $now, not Open MPI's; set it back with:" >&2
            echo "    sudo update-alternatives --set $group $want" >&2
            return 1
        fi
        echo "deps: $group pointed to $now; set back to $want" >&2
        update-alternatives --quiet --set "$group" "$want"
    done
}

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    openmpi_default
    exit
fi

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "sortex: error: missing Debian packages; install them with:" >&2
    echo "    sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -q >/dev/null
    apt-get install -y -q "${missing[@]}" >/dev/null
fi
openmpi_default
echo "deps: done" >&2
