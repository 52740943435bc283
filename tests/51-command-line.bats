#!/usr/bin/env bats
# The programs' command lines: every program answers --help (with its defaults) and --version,
# refuses a stray argument with exit 2 and one error line, takes -t for --threads, and refuses
# an empty item in a list.
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000 5
}

@test "every program answers --help with its defaults and --version, and refuses a stray argument with exit 2 and one line" {
    local prog dflt args launch row rows n=0
    # Each program, one option whose --help line must show its default ("[...]" after the text,
    # or "(default ...)" where the programs' shared format options use that form), and a
    # command line it would run, to which a stray word is added.
    mapfile -t rows <<EOF
sortex|--exchange NAME .*\[alltoallv\]|--input $IN --output $OUT
sortex-gen|--seed S .*\(default 0\)|--dist uniform --n 10 -o $OUT
sortex-verify|--threads N .*\(default: OMP_NUM_THREADS|$IN
sortex-sched|--algos LIST .*\[all\]|--pattern random --ranks 4
sortex-xbench|--reps R .*\[5\]|--exchange alltoallv
sortex-localsort|--reps R .*\[5\]|--n 1000 --reps 1
sortex-example|--n N .*\[100000\]|--n 1000
EOF
    for row in "${rows[@]}"; do
        IFS='|' read -r prog dflt args <<<"$row"
        echo "program $prog"
        n=$((n + 1))
        run -0 "$SORTEX_BIN/$prog" --help
        assert_output --partial "--version"
        assert_line --regexp "$dflt"
        # Defaults are the rule, not one line: most option lines that take a value show one.
        (($(grep -cE '\[[^]]+\]|\(default' <<<"$output") >= 4)) || fail "$prog: few defaults"
        run -0 "$SORTEX_BIN/$prog" --version
        assert_line --index 0 --regexp "^$prog [0-9]+\.[0-9]+\.[0-9]+$"
        assert_line --regexp "^built from commit [0-9a-f]+"
        # The MPI programs under mpirun (two ranks, one line), the others as they are run.
        launch=()
        [[ $prog =~ ^sortex(-xbench|-example)?$ ]] && launch=(mpi 2 -q)
        # shellcheck disable=SC2086 # the command line is words
        run --separate-stderr "${launch[@]}" "$SORTEX_BIN/$prog" $args banana
        assert_equal "$status" 2
        one_error_line "" "$prog"
        [[ $prog == sortex-verify ]] || assert_regex "$stderr" "\\(banana\\)"
        assert_file_not_exists "$OUT"
    done
    assert_equal "$n" 7
}

@test "-t is --threads in every program that takes threads" {
    local g=$BATS_TEST_TMPDIR/g.bin
    run -0 "$GEN" --dist uniform --n 100000 -t 2 -o "$g"
    run_mpi 2 "$SORTEX" -i "$g" -o "$OUT" -t 1
    assert_success
    run -0 "$VERIFY" "$OUT" -t 2 --input "$g"
    run --separate-stderr "$VERIFY" "$OUT" -t i64
    assert_equal "$status" 2
    assert_regex "$stderr" "the format is --format"
    run -0 "$SORTEX_BIN/sortex-sched" --pattern random --ranks 8 -t 1
    run -0 "$SORTEX_BIN/sortex-localsort" --algo sortex --n 100000 -t 2 --reps 1
}

@test "sortex-localsort refuses an empty item in its lists, as every program's lists do" {
    # The lists of sortex-sched, --sort and sortex-xbench: 35-simulator, 36-sort-model, 60-bench.
    local args
    for args in "--n 1000,,2000" "--n 1000," "--algo ,sortex" "--threads 1,,2" "--dist ''"; do
        # shellcheck disable=SC2086 # the arguments are words
        eval run --separate-stderr "$SORTEX_BIN/sortex-localsort" $args --reps 1
        assert_equal "$status" 2
        one_error_line "" sortex-localsort
        assert_regex "$stderr" "^sortex-localsort: error: --[a-z]+ list has an empty item"
    done
}
