#!/usr/bin/env bats
# tests/48-knobs.bats: the one table of environment variables (util/knobs.c): `sortex --knobs`
# lists every setting with its default and unit and the test hooks apart, every variable the
# suites and the benchmark driver set is in it, the README lists it, and only util/knobs.c reads
# the environment.
bats_require_minimum_version 1.5.0
load helper

# The variable names `sortex --knobs` lists, one per line (27 of them).
knob_names() {
    local knobs
    knobs=$(ran_ok "knobs" "$SORTEX" --knobs) || return 1
    awk '/^  [A-Z]/ { print $1 }' <<<"$knobs" | at_least 27 "knobs"
}

@test "--knobs lists the settings with default and unit, then the test hooks apart, and exits 0" {
    run -0 "$SORTEX" --knobs
    assert_line --index 0 --regexp '^settings '
    assert_line --regexp '^test hooks \(for the test suites and measurements; leave them unset\):$'
    assert_line --regexp '^  SORTEX_SCHED_TARGET_H +default [^ ]+ +unit packets$'
    assert_line --regexp '^  SORTEX_TRANSPOSE_STEP +default 64Ki +unit keys$'
    # Every setting is listed before the first test hook, every hook after it.
    python3 - "$output" <<'PY'
import sys
kind, rows = None, {}
for line in sys.argv[1].splitlines():
    if line and not line.startswith(" "):
        kind = line.split(" ")[0]
    elif line.startswith("  ") and not line.startswith("      "):
        rows[line.split()[0]] = (kind, line)
assert rows["SORTEX_SCHED_TARGET_H"][0] == "settings", rows
for hook in ("SORTEX_FAIL", "SORTEX_STALL", "SORTEX_INT_LIMIT", "SORTEX_FWD_RING_BYTES"):
    assert rows[hook][0] == "test", (hook, rows[hook])
for name, (kind, line) in rows.items():
    assert " default " in line, line
PY
    # A value that is set shows, and one that does not parse says so.
    SORTEX_ROUNDS=sync SORTEX_SCHED_TARGET_H=abc run -0 "$SORTEX" --knobs
    assert_line --regexp '^  SORTEX_ROUNDS .*\(set: sync\)$'
    assert_line --regexp '^  SORTEX_SCHED_TARGET_H .*\(set: abc, not valid\)$'
}

@test "every SORTEX_ variable the suites and the benchmark driver set is a knob" {
    local names used name
    names=$(knob_names)
    used=$(grep -rhoE '\bSORTEX_[A-Z_]+(=|": )' "$TOP/tests" "$TOP/bench" |
        grep -oE 'SORTEX_[A-Z_]+' | sort -u)
    [[ -n $used ]] || fail "found no variables"
    for name in $used; do
        # The harness's own variables: where the binaries are, and the per-job timeout.
        [[ $name =~ ^SORTEX_(BIN|BUILD|TEST_TIMEOUT)$ ]] && continue
        grep -qx "$name" <<<"$names" || fail "$name is set by a suite but is no knob"
    done
}

@test "the README lists every knob" {
    local names name
    names=$(knob_names)
    for name in $names; do
        grep -q "\`$name\`" "$TOP/README.md" || fail "README lacks $name"
    done
}

@test "only util/knobs.c reads the environment" {
    run grep -rlE '\bgetenv *\(' --include='*.c' --include='*.h' --include='*.cc' \
        "$TOP/util" "$TOP/sort" "$TOP/exchange" "$TOP/datagen" "$TOP/verify" "$TOP/sim" "$TOP/bench" \
        "$TOP/tests/unit"
    assert_output "$TOP/util/knobs.c"
}
