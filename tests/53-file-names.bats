#!/usr/bin/env bats
# Names at the file system's limits: output and stats names up to the directory's limit of 255
# bytes sort and are read back, longer ones are refused before any data moves; a path of any
# bytes is recorded in the stats file as itself. Every sort is checked by the verifier.
bats_require_minimum_version 1.5.0
load helper

setup() {
    setup_input 1000000 5
}

@test "output names up to the directory's limit sort, longer ones are refused before any data moves" {
    local dir=$BATS_TEST_TMPDIR/d len name
    mkdir -p "$dir"
    for len in 200 240 255; do
        name=$(printf 'n%.0s' $(seq "$len"))
        OUT=$dir/$name
        run mpi 3 "$SORTEX" --input "$IN" --output "$OUT" --stats "$dir/${name:5}"
        assert_success
        run "$VERIFY" "$OUT" --input "$IN"
        assert_success
        assert_file_exists "$dir/${name:5}"
        # ... and such a file is read back as an input too.
        run mpi 2 "$SORTEX" --input "$OUT" --output "$dir/again.bin"
        assert_success
        run "$VERIFY" "$dir/again.bin" --input "$IN"
        assert_success
        rm -f "$OUT" "$dir/${name:5}" "$dir/again.bin"
    done
    name=$(printf 'n%.0s' $(seq 256))
    OUT=$dir/$name
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$OUT"
    assert_equal "$status" 2
    one_error_line "output name is too long: at most 255 characters"
    run --separate-stderr mpi 3 -q "$SORTEX" --input "$IN" --output "$dir/ok.bin" --stats "$OUT"
    assert_equal "$status" 2
    one_error_line "output name is too long"
    nothing_written "$dir"
    assert_file_not_exists "$dir/ok.bin"
}

@test "the stats file records any path as itself and counts as integers" {
    local odd=$BATS_TEST_TMPDIR/$'line\nbreak\ttab "q" \\ \x01 ü'.bin
    cp "$IN" "$odd"
    run_mpi 3 "$SORTEX" --input "$odd" --output "$OUT" --stats "$BATS_TEST_TMPDIR/s.json"
    assert_success
    run python3 - "$BATS_TEST_TMPDIR/s.json" "$odd" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["input"] == sys.argv[2], (d["input"], sys.argv[2])
for k in ("min", "max"):
    assert isinstance(d["n_out"][k], int), d["n_out"]
assert isinstance(d["n"], int) and d["n"] == 1000000
print("ok")
PY
    assert_output "ok"
}
