#!/usr/bin/env bats
# tests/05-cli.bats: the command-line tables every program reads its options through
# (util/cli.h) and the names of the public enums (sort/names.h), as a C unit test; the programs'
# own options are their suites'.

bats_require_minimum_version 1.5.0
load helper

@test "the command-line tables parse, refuse and print --help as the programs rely on (C unit test)" {
    run -0 "$SORTEX_BUILD/tests/test_cli"
    assert_output "test_cli: all passed"
}
