#!/usr/bin/env bats
# make install: the installed tree is all a user needs. The release build is installed once into a
# temporary prefix (make copies what `make test` built; in a fresh tree it builds it first); a
# program that sees only the prefix is built with pkg-config alone, run on 3 ranks and its output
# verified like every sort's.
bats_require_minimum_version 1.5.0
load helper

setup_file() {
    export PREFIX=$BATS_FILE_TMPDIR/prefix
    top_make install PREFIX="$PREFIX" >"$BATS_FILE_TMPDIR/install.log" 2>&1 ||
        { cat "$BATS_FILE_TMPDIR/install.log" >&2; return 1; }
}

setup() {
    export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
    VERSION=$(sed -n 's/^Version: //p' "$PKG_CONFIG_PATH/sortex.pc")
}

@test "make install puts programs, libraries, the header, sortex.pc and man pages in PREFIX" {
    local prog
    for prog in sortex sortex-gen sortex-verify sortex-sched sortex-xbench; do
        assert_file_executable "$PREFIX/bin/$prog"
        run -0 "$PREFIX/bin/$prog" --version
        assert_line --index 0 "$prog $VERSION"
        # help2man titled the page from that first line; the build lines stay out of it.
        run -0 grep -c "^\\.TH ${prog^^} \"1\" \".*\" \"$prog $VERSION\"" \
            "$PREFIX/share/man/man1/$prog.1"
        run grep -c "built from commit" "$PREFIX/share/man/man1/$prog.1"
        assert_output 0
    done
    # What sortex sorts, in its page's NAME and in sortex.pc: keys and records alike.
    run -0 grep -A1 '^\.SH NAME' "$PREFIX/share/man/man1/sortex.1"
    assert_line --index 1 --partial "sort a file of keys or fixed-size records over MPI ranks"
    run -0 grep '^Description: ' "$PKG_CONFIG_PATH/sortex.pc"
    assert_output "Description: Parallel sample sort of keys and fixed-size records over MPI ranks"
    assert_file_exists "$PREFIX/include/sortex/sortex.h"
    assert_file_exists "$PREFIX/lib/libsortex.a"
    assert_file_exists "$PREFIX/lib/libsortex.so.$VERSION"
    assert_equal "$(readlink "$PREFIX/lib/libsortex.so")" libsortex.so.1
    assert_equal "$(readlink "$PREFIX/lib/libsortex.so.1")" "libsortex.so.$VERSION"
    run -0 readelf -d "$PREFIX/lib/libsortex.so.$VERSION"
    assert_output --partial "Library soname: [libsortex.so.1]"
    run -0 pkg-config --modversion sortex
    assert_output "$VERSION"
    # The version macro is the library's.
    run -0 grep -c "^#define SORTEX_VERSION_MAJOR ${VERSION%%.*}\$" \
        "$PREFIX/include/sortex/sortex.h"
}

@test "the libraries define only sortex_ symbols, and bring no allocator" {
    local lib=$PREFIX/lib
    run -0 nm -D --defined-only "$lib/libsortex.so.$VERSION"
    assert_line --regexp ' T sortex_sort$'
    assert_line --regexp ' T sortex_sort_records$'
    assert_line --regexp ' T sortex_format_layout$'
    assert_line --regexp ' T sortex_version$'
    run bash -c "nm -D --defined-only '$lib/libsortex.so.$VERSION' | grep -cv ' sortex_'"
    assert_output 0
    # The static archive as well: its internals are made local when it is built.
    run bash -c "nm -g --defined-only '$lib/libsortex.a' | grep -v -e '^\$' -e ':\$' |
        grep -cv ' sortex_'"
    assert_output 0
    run -0 bash -c "nm -g --defined-only '$lib/libsortex.a' | grep -c ' T sortex_sort_file\$'"
    # A host program keeps its own malloc: the library needs no jemalloc.
    run -0 readelf -d "$lib/libsortex.so.$VERSION"
    refute_output --partial jemalloc
    run bash -c "nm -u '$lib/libsortex.a' | grep -v ' w ' | grep -c -e mallctl -e je_"
    assert_output 0
}

@test "the installed header compiles alone, as C99 and as C++" {
    local src=$BATS_TEST_TMPDIR/h.c
    printf '#include <sortex/sortex.h>\n' >"$src"
    # shellcheck disable=SC2046 # pkg-config's flags are words
    run -0 cc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only \
        $(pkg-config --cflags sortex) "$src"
    # shellcheck disable=SC2046
    run -0 c++ -std=c++11 -Wall -Werror -fsyntax-only -x c++ $(pkg-config --cflags sortex) "$src"
}

# run_use EXE NP EXCHANGE: runs a build of use_sortex on the keys of one input, from the file and in
# memory, and verifies both outputs against the input with the installed sortex-verify.
run_use() {
    local exe=$1 np=$2 exchange=$3 in
    in=$(gen_input zipf 200003 "$np")
    rm -f "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
    run -0 mpi "$np" "$exe" "$in" "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin" \
        "$exchange"
    assert_line "header $VERSION, library $VERSION, exchange $exchange"
    assert_line --regexp '^file: 200003 keys, imbalance'
    assert_line --regexp '^memory: 200003 keys, imbalance'
    run -0 "$PREFIX/bin/sortex-verify" "$BATS_TEST_TMPDIR/file.bin" --input "$in"
    assert_output --partial "verdict:   valid"
    run -0 "$PREFIX/bin/sortex-verify" "$BATS_TEST_TMPDIR/memory.bin" --input "$in"
    assert_output --partial "verdict:   valid"
}

@test "a program built with pkg-config alone sorts on 3 ranks, from a file and in memory" {
    local exe=$BATS_TEST_TMPDIR/use_sortex
    # shellcheck disable=SC2046
    run -0 cc -Wall -Wextra -Werror -o "$exe" "$TOP/tests/install/use_sortex.c" \
        $(pkg-config --cflags --libs sortex)
    # mpicc takes the same flags (it adds its own MPI flags once more).
    # shellcheck disable=SC2046
    run -0 mpicc -o "$exe-mpicc" "$TOP/tests/install/use_sortex.c" \
        $(pkg-config --cflags --libs sortex)
    # Outside the system's directories the loader is told where the library is, as a user would.
    run -0 ldd "$exe"
    assert_line --partial "libsortex.so.1 => not found"
    export LD_LIBRARY_PATH=$PREFIX/lib
    run -0 ldd "$exe"
    assert_line --partial "libsortex.so.1 => $PREFIX/lib/libsortex.so.1"
    refute_output --partial jemalloc
    run_use "$exe" 3 forward
}

@test "a program sorts gensort records and its own layout in memory on 3 ranks, stably" {
    local exe=$BATS_TEST_TMPDIR/use_sortex in fmt flags
    # shellcheck disable=SC2046
    run -0 cc -Wall -Wextra -Werror -o "$exe" "$TOP/tests/install/use_sortex.c" \
        $(pkg-config --cflags --libs sortex)
    export LD_LIBRARY_PATH=$PREFIX/lib
    # gensort, then 13-byte records with a 5-byte key at offset 3 and many equal keys, which the
    # program describes with sortex_format_layout().
    for fmt in gensort 13:3:5; do
        if [[ $fmt == gensort ]]; then
            flags=(--format gensort)
            in=$(SORT_FORMAT="--format gensort" gen_input gensort 30011 3)
        else
            flags=(--record-size 13 --key-offset 3 --key-size 5)
            in=$(SORT_FORMAT="${flags[*]}" gen_input few 30011 3)
        fi
        rm -f "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
        run -0 mpi 3 "$exe" "$in" "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin" \
            forward "$fmt"
        assert_line --regexp '^file: 30011 records, imbalance'
        assert_line --regexp '^memory: 30011 records, imbalance'
        run -0 "$PREFIX/bin/sortex-verify" "$BATS_TEST_TMPDIR/memory.bin" --input "$in" "${flags[@]}"
        assert_output --partial "verdict:   valid"
        # A stable sort has one result: the file sort's (tested stable by 40-sort and 42-rootio).
        cmp "$BATS_TEST_TMPDIR/file.bin" "$BATS_TEST_TMPDIR/memory.bin"
    done
}

@test "a program links the static archive with what pkg-config --static lists" {
    local exe=$BATS_TEST_TMPDIR/use_sortex_static
    # --as-needed: the archive satisfies every sortex_ symbol, so libsortex.so is not needed.
    # shellcheck disable=SC2046
    run -0 cc -Wl,--as-needed -o "$exe" "$TOP/tests/install/use_sortex.c" \
        "$PREFIX/lib/libsortex.a" $(pkg-config --cflags --static --libs sortex)
    run -0 readelf -d "$exe"
    refute_output --partial libsortex
    run_use "$exe" 3 alltoallv
}

@test "DESTDIR stages the install under PREFIX's paths, and make uninstall removes every file" {
    local stage=$BATS_TEST_TMPDIR/stage
    run -0 top_make install DESTDIR="$stage" PREFIX=/opt/sortex
    assert_file_exists "$stage/opt/sortex/include/sortex/sortex.h"
    run -0 grep -c '^prefix=/opt/sortex$' "$stage/opt/sortex/lib/pkgconfig/sortex.pc"
    run grep -c "$stage" "$stage/opt/sortex/lib/pkgconfig/sortex.pc"
    assert_output 0
    # 5 programs and their man pages, the .so with its 2 links, the .a, the header, sortex.pc.
    run -0 bash -c "find '$stage' -type f -o -type l | wc -l"
    assert_output 16
    run -0 top_make uninstall DESTDIR="$stage" PREFIX=/opt/sortex
    run -0 find "$stage" -type f -o -type l
    assert_output ""
    assert_not_exists "$stage/opt/sortex/include/sortex"
}
