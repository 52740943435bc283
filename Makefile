# sortex: one non-recursive Makefile.
#
#   make                 release build of every program into bin/, and of the installable
#                        library into build/release/lib/
#   make install PREFIX=DIR      programs, libsortex.so and .a, <sortex/sortex.h>, sortex.pc and
#                        man pages under DIR (default /usr/local; DESTDIR is honoured)
#   make uninstall PREFIX=DIR    removes exactly what install put there
#   make SAN=address,undefined   sanitizer profile (libc malloc), build/san/ and build/san/bin/
#   make DEBUG=1         debug profile (-O0, assertions), build/debug/ and build/debug/bin/
#   make NATIVE=1        add -march=native (off by default: binaries stay portable)
#   make lint            warning-free check with -Werror
#   make deps            install missing Debian packages (idempotent)
#   make test            deps + build + every Bats suite (what CI runs)
#   make demo            deps + build + which back-end, in under a minute (tools/demo.sh)
#   make bench / bench-quick / plots   the benchmark suite (see bench/README section)
#
# Builds use every core (JOBS, default nproc; the workflows' inner makes share the same jobs);
# make -jN on the command line chooses otherwise.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(JOBS)
endif

# mpicc unless the caller chose a compiler (make's built-in default "cc" does not count).
ifeq ($(origin CC),default)
CC := mpicc
endif
ifeq ($(origin CXX),default)
CXX := mpicxx
endif

# ---- profiles ---------------------------------------------------------------------------------
ifneq ($(SAN),)
PROFILE := san
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SAN) -fno-sanitize-recover=all
USE_JEMALLOC := 0
else ifeq ($(DEBUG),1)
PROFILE := debug
OPT := -O0 -g
USE_JEMALLOC := 1
else
PROFILE := release
OPT := -O2 -g -DNDEBUG
USE_JEMALLOC := 1
endif
ifeq ($(NATIVE),1)
OPT += -march=native
endif
# VQSORT=0: no Highway; the vqsort entry points fall back to std::sort (local/vqsort.cc says why
# the valgrind profile needs it).
VQSORT ?= 1

BUILD := build/$(PROFILE)
# Release programs go to bin/; other profiles keep theirs apart so they never mix.
ifeq ($(PROFILE),release)
BIN := bin
else
BIN := $(BUILD)/bin
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wpointer-arith -Wundef -Wcast-align -Wwrite-strings -Wvla -Wold-style-definition
ifeq ($(WERROR),1)
WARN += -Werror
endif

# Every object is position-independent and hides what the public header does not mark
# (SORTEX_API): one set of objects makes the programs' archive, the shared library and the
# installed archive. Within the programs hidden symbols link as before; on x86-64 -fPIC code with
# hidden symbols is what -fPIE (gcc's default) makes.
PIC := -fPIC -fvisibility=hidden
CPPFLAGS += -D_GNU_SOURCE -I. -I$(BUILD) -DSORTEX_VQSORT=$(VQSORT)
CFLAGS += -std=c11 $(OPT) $(WARN) $(PIC) -fopenmp -MMD -MP
CXXFLAGS += -std=c++17 $(OPT) -Wall -Wextra $(PIC) -fvisibility-inlines-hidden -fopenmp -MMD -MP
LDFLAGS += -fopenmp $(if $(SAN),-fsanitize=$(SAN) -fno-sanitize-recover=all)
# What the library itself needs. The programs add jemalloc, which then serves their whole process;
# the library never links it, so that a host program keeps its own allocator (util/alloc.c).
LIB_LIBS := -lxxhash -lz $(if $(filter 1,$(VQSORT)),-lhwy_contrib -lhwy) -lstdc++ -lm
LDLIBS += $(LIB_LIBS) $(if $(filter 1,$(USE_JEMALLOC)),-ljemalloc)

# ---- sources ----------------------------------------------------------------------------------
# Every .c file of a module is library code except the CLI files (main.c, *_main.c).
MODULES := util local sort exchange datagen verify sim bench
ALL_C := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
MAIN_C := $(filter %/main.c %_main.c,$(ALL_C))
LIB_C := $(filter-out $(MAIN_C),$(ALL_C))
# The library's one C++ file: the entry point to Highway's vqsort (local/vqsort.cc).
LIB_CC := local/vqsort.cc
LIB_O := $(LIB_C:%.c=$(BUILD)/%.o) $(LIB_CC:%.cc=$(BUILD)/%.o)
# The archive the programs and unit tests link: every module, every symbol reachable.
LIB := $(BUILD)/libsortex.a

# ---- the installable library ------------------------------------------------------------------
# The version is the public header's (SORTEX_VERSION_* in sort/sortex.h). The shared library's
# file name carries it, its soname the ABI number SOVERSION, raised whenever a change breaks
# programs linked against an earlier build (a field of struct sortex_config or sortex_stats
# moved, a function removed).
version_part = $(shell sed -n 's/^\#define SORTEX_VERSION_$(1) \([0-9]*\)$$/\1/p' sort/sortex.h)
VERSION := $(call version_part,MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SOVERSION := 1
# What a host program links: the sort and what it calls (util, exchange, verify's checksums for
# --check); not the generator, the simulator or the benchmarks.
DIST_MODULES := util local sort exchange verify
DIST_O := $(filter $(foreach m,$(DIST_MODULES),$(BUILD)/$(m)/%),$(LIB_O))
SO := $(BUILD)/lib/libsortex.so.$(VERSION)
# The installed archive: the same objects linked into one (ld -r; -d gives OpenMP's lock of each
# named critical section its place) whose every symbol but the public functions is then made
# local, as the version script sort/libsortex.map does for the shared library. So it cannot
# clash with a host program's own util_* or exchange_*; a host links all of it, as the .so.
DIST_A := $(BUILD)/lib/libsortex.a
OBJCOPY ?= objcopy

# Programs: one line each, "binary-name:main-source".
PROGRAMS := sortex:sort/main.c \
            sortex-gen:datagen/main.c \
            sortex-verify:verify/main.c \
            sortex-example:sort/example_main.c \
            sortex-xbench:bench/xbench_main.c \
            sortex-sched:sim/main.c

# C unit tests: tests/unit/test_*.c, run from tests/*.bats.
UNIT_C := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_C:tests/unit/%.c=$(BUILD)/tests/%)

# C++ baseline programs for the benchmarks: bench/*.cc, one binary each, except the baselines'
# own object (bench/baselines.cc), which every one of them links.
BASE_OBJ := $(BUILD)/bench/baselines.o
# Reached only through the pattern rule below, the object would be an intermediate file, which
# make deletes at the end of the build that made it: the next make would compile it (the
# slowest file of the tree) and relink again. .SECONDARY keeps it.
.SECONDARY: $(BASE_OBJ)
BASE_CC := $(filter-out bench/baselines.cc,$(wildcard bench/*.cc))
BASE_BIN := $(BASE_CC:bench/%.cc=$(BIN)/sortex-%)

prog_name = $(word 1,$(subst :, ,$(1)))
prog_main = $(word 2,$(subst :, ,$(1)))
PROG_BIN := $(foreach p,$(PROGRAMS),$(BIN)/$(call prog_name,$(p)))

.PHONY: all lib man programs unit deps test demo bench bench-quick plots lint clean format \
        install uninstall FORCE
all: $(PROG_BIN) $(BASE_BIN) lib
lib: $(SO) $(DIST_A)
# The programs without the C++ baselines, which only the benchmarks (and their tests) run.
programs: $(PROG_BIN)

define program_rule
$(BIN)/$(call prog_name,$(1)): $(BUILD)/$(patsubst %.c,%.o,$(call prog_main,$(1))) $(LIB) | $(BIN)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))

# The baselines users compare with, from Debian: ips4o (header-only; its parallel sort needs
# 16-byte atomics from libatomic), Highway's vqsort (linked here too, for builds with VQSORT=0),
# Boost.Sort (header-only).
BASE_LIBS := -lhwy_contrib -lhwy -latomic -lstxxl
$(BIN)/sortex-%: bench/%.cc $(BASE_OBJ) $(LIB) $(BUILD)/flags | $(BIN)
	@mkdir -p $(BUILD)/bench
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MF $(BUILD)/bench/$*.d $(LDFLAGS) -o $@ $< $(BASE_OBJ) $(LIB) \
	    $(LDLIBS) $(BASE_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB) $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(LIB): $(LIB_O)
	@rm -f $@
	$(AR) rcs $@ $^

# --no-undefined: the library names every library it needs (the .pc file need not); --as-needed:
# and no more.
$(SO): $(DIST_O) sort/libsortex.map
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libsortex.so.$(SOVERSION) -Wl,--no-undefined \
	    -Wl,--as-needed -Wl,--version-script=sort/libsortex.map -o $@ $(DIST_O) $(LIB_LIBS)

$(DIST_A): $(DIST_O)
	@mkdir -p $(@D)
	$(LD) -r -d -o $(@D)/sortex.o $^
	$(OBJCOPY) --localize-hidden --wildcard --keep-global-symbol='sortex_*' $(@D)/sortex.o
	@rm -f $@
	$(AR) rcs $@ $(@D)/sortex.o

$(BUILD)/%.o: %.c $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cc $(BUILD)/flags
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

# The commit and the compiler flags go into version.c through a header rewritten only when they
# change. "-dirty" means uncommitted changes to the sources; results/ holds outputs and does not
# count. The flags are what results headers record beside the CPU.
BUILD_FLAGS := $(shell $(CC) -dumpfullversion 2>/dev/null | sed 's/^/gcc /') $(OPT) -fopenmp
$(BUILD)/util/version.o: $(BUILD)/commit.h
$(BUILD)/commit.h: FORCE
	@mkdir -p $(@D)
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	 d=$$(git diff --quiet HEAD -- . ':!results' 2>/dev/null || echo -dirty); \
	 text=$$(printf '#define SORTEX_COMMIT "%s"\n#define SORTEX_BUILD_FLAGS "%s"\n#define SORTEX_BUILD_VERSION "%s"' \
	        "$$c$$d" "$(BUILD_FLAGS)" "$(VERSION)"); \
	 [ -f $@ ] && [ "$$(cat $@)" = "$$text" ] || printf '%s\n' "$$text" > $@

# Objects are rebuilt when the flags they are compiled with change, not only their sources: a file
# rewritten only then. (Objects of a tree built before -fPIC would not link into the shared
# library; a NATIVE=1 object must not end up in a portable build.) -Werror changes no object.
$(BUILD)/flags: FORCE
	@mkdir -p $(@D)
	@text='$(filter-out -Werror,$(CC) $(CXX) $(CPPFLAGS) $(CFLAGS) $(CXXFLAGS))'; \
	 [ -f $@ ] && [ "$$(cat $@)" = "$$text" ] || printf '%s\n' "$$text" > $@

$(BIN):
	@mkdir -p $@

unit: $(UNIT_BIN)

# ---- workflows --------------------------------------------------------------------------------
deps:
	@tools/deps.sh

# The test suites find the binaries through SORTEX_BIN and SORTEX_BUILD; the sanitizer and
# valgrind suites use the san and memcheck profiles, built here too.
test: deps
	@$(MAKE) --no-print-directory all unit
	@$(MAKE) --no-print-directory SAN=address,undefined programs
	@$(MAKE) --no-print-directory DEBUG=1 USE_JEMALLOC=0 VQSORT=0 BUILD=build/memcheck programs
	@SORTEX_BIN=$(abspath $(BIN)) SORTEX_BUILD=$(abspath $(BUILD)) tools/run-tests.sh $(TESTS)

demo: deps
	@$(MAKE) --no-print-directory all
	@SORTEX_BIN=$(abspath $(BIN)) tools/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@SORTEX_BIN=$(abspath $(BIN)) bench/run --full

bench-quick: deps
	@$(MAKE) --no-print-directory all
	@SORTEX_BIN=$(abspath $(BIN)) bench/run --quick

# Every results set bench/run wrote: this machine's, and the emulated clusters' if present.
plots:
	@for d in results results/cluster results/cluster-half; do \
	    if [ -f $$d/runs.json ]; then bench/plots.sh $$d || exit 1; fi; \
	done

# ---- install ----------------------------------------------------------------------------------
# make install PREFIX=DIR [DESTDIR=STAGE]: the programs a user runs (not the example or the
# local-sort baseline benchmark), the library (shared, with its soname link and the link-time
# name, and static), the public header as <sortex/sortex.h>, sortex.pc for pkg-config (its paths
# are PREFIX's, never DESTDIR's) and a man page per program, written by help2man from its --help
# and --version. `make uninstall` with the same variables removes exactly those files.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# The pkg-config name of the MPI the library is built with (its header includes mpi.h, and the
# host program links the same MPI).
MPI_PC ?= ompi-c
INSTALL ?= install

# Each installed program and the line its man page gives under NAME.
MAN_NAME_sortex := sort a file of keys or fixed-size records over MPI ranks with a parallel sample sort
MAN_NAME_sortex-gen := write benchmark inputs: key distributions and gensort records
MAN_NAME_sortex-verify := check that a file is sorted and holds the keys of its input
MAN_NAME_sortex-sched := model every exchange back-end on a count matrix, without MPI
MAN_NAME_sortex-xbench := time every exchange back-end on synthetic count matrices (MPI)
INSTALL_PROGRAMS := sortex sortex-gen sortex-verify sortex-sched sortex-xbench

SO_LINKS := libsortex.so.$(SOVERSION) libsortex.so
PC_REQUIRES_PRIVATE := libxxhash zlib $(if $(filter 1,$(VQSORT)),libhwy-contrib libhwy)

# help2man writes each page from the program's --help and --version, whose first line, "PROG
# VERSION", titles it. The lines after it describe one build (commit, MPI library, allocator,
# flags): they are left out, so that a page changes only with the program.
MAN_PAGES := $(INSTALL_PROGRAMS:%=$(BUILD)/man/%.1)
man: $(MAN_PAGES)
$(BUILD)/man/%.1: $(BIN)/%
	@mkdir -p $(@D)
	help2man --no-info --name='$(MAN_NAME_$*)' --output=$@.tmp $<
	sed '/^built from commit /,/^compiled with: /d' $@.tmp > $@
	@rm -f $@.tmp

install: $(addprefix $(BIN)/,$(INSTALL_PROGRAMS)) $(SO) $(DIST_A) $(MAN_PAGES)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/sortex \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 755 $(addprefix $(BIN)/,$(INSTALL_PROGRAMS)) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(SO) $(DESTDIR)$(LIBDIR)
	ln -sf libsortex.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsortex.so.$(SOVERSION)
	ln -sf libsortex.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsortex.so
	$(INSTALL) -m 644 $(DIST_A) $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 644 sort/sortex.h $(DESTDIR)$(INCLUDEDIR)/sortex
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|; s|@MPI_PC@|$(MPI_PC)|' \
	    -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES_PRIVATE)|' sort/sortex.pc.in \
	    > $(DESTDIR)$(PKGCONFIGDIR)/sortex.pc
	$(INSTALL) -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INSTALL_PROGRAMS))
	rm -f $(DESTDIR)$(LIBDIR)/libsortex.so.$(VERSION) $(addprefix $(DESTDIR)$(LIBDIR)/,$(SO_LINKS)) \
	    $(DESTDIR)$(LIBDIR)/libsortex.a
	rm -f $(DESTDIR)$(INCLUDEDIR)/sortex/sortex.h $(DESTDIR)$(PKGCONFIGDIR)/sortex.pc
	rm -f $(foreach p,$(INSTALL_PROGRAMS),$(DESTDIR)$(MANDIR)/man1/$(p).1)
	[ ! -d $(DESTDIR)$(INCLUDEDIR)/sortex ] || rmdir --ignore-fail-on-non-empty \
	    $(DESTDIR)$(INCLUDEDIR)/sortex

lint:
	@$(MAKE) --no-print-directory -B WERROR=1 all unit

format:
	clang-format -i $(ALL_C) $(wildcard */*.h) $(UNIT_C)

clean:
	rm -rf build bin

FORCE:

-include $(LIB_O:.o=.d) $(UNIT_BIN:=.d) $(BASE_CC:bench/%.cc=$(BUILD)/bench/%.d) $(BASE_OBJ:.o=.d) $(foreach p,$(PROGRAMS),$(BUILD)/$(patsubst %.c,%.d,$(call prog_main,$(p))))
