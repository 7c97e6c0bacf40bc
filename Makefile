# riffle -- GNU Make build with GNU conventions.
#   make            library (static + shared), riffle program, examples, and
#                   riffle-mpi when an MPI compiler (mpicc) is installed
#   make check      the whole suite: normal build, ASan+UBSan build, -Werror
#                   builds under gcc and clang, exported-symbol check
#   make bench      benchmarks (ratios against baselines, one run)
#   make install    honours PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, MANDIR,
#                   LIBEXECDIR, PYTHONDIR, CMAKEDIR, BASHCOMPDIR, ZSHCOMPDIR,
#                   FISHCOMPDIR; INSTALL_SHUF_LINK=1 adds BINDIR/shuf -> riffle
#   make python     the Python package in the tree: PYTHONPATH=python imports riffle
#   make deps       install the Debian packages the build and tests need (root)
#   make demo       the README's main job: deal a shuffled 52-card deck
#   make fuzz-long  run each libFuzzer target in fuzz/ for FUZZ_SECONDS (300),
#                   one at a time, growing and minimising fuzz/corpus/TARGET/
#                   (replayed by make check); needs clang's libFuzzer

PREFIX     ?= /usr/local
EXEC_PREFIX?= $(PREFIX)
BINDIR     ?= $(EXEC_PREFIX)/bin
LIBDIR     ?= $(EXEC_PREFIX)/lib
LIBEXECDIR ?= $(EXEC_PREFIX)/libexec
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR   ?= $(LIBDIR)/cmake/riffle
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR    ?=

BUILD      ?= build
CC         ?= cc
CXX        ?= c++
PKG_CONFIG ?= pkg-config
INSTALL    ?= install

VERSION := $(shell sed -n 's/^\#define RF_VERSION_STRING "\(.*\)"/\1/p' include/riffle.h)
SOMAJOR := $(shell sed -n 's/^\#define RF_VERSION_MAJOR \([0-9]*\)/\1/p' include/riffle.h)

CFLAGS   ?= -O2 -g
WARNINGS := -std=c11 -Wall -Wextra -Wshadow -Wcast-qual -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wundef -Wpointer-arith -Wformat=2
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined
endif

SODIUM_CFLAGS := $(shell $(PKG_CONFIG) --cflags libsodium 2>/dev/null)
SODIUM_LIBS   := $(shell $(PKG_CONFIG) --libs libsodium 2>/dev/null || echo -lsodium)
CMOCKA_LIBS   := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)
LIB_DEPS      := $(SODIUM_LIBS) -lgmp -lpthread -lm
# The program's compressed inputs and outputs (cli/decompress.c, cli/compress.c);
# the library itself needs neither.
CLI_DEPS      := $(shell $(PKG_CONFIG) --libs zlib libzstd 2>/dev/null || echo -lz -lzstd)

ALL_CPPFLAGS := -D_GNU_SOURCE -Iinclude $(SODIUM_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS   := $(WARNINGS) $(CFLAGS)

LIB_SRCS  := $(sort $(wildcard src/*/*.c))
CLI_SRCS  := $(sort $(wildcard cli/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c tests/engine/test_*.c))
AUDIT_TEST_SRCS := $(sort $(wildcard tests/audit/test_*.c))
TEST_HELPERS := $(sort $(wildcard tests/lib/*.c))
AUDIT_SRCS := $(sort $(wildcard audit/*.c))
EX_SRCS   := $(sort $(wildcard examples/*.c))
MPI_SRCS  := $(sort $(wildcard mpi/*.c))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
HELPER_OBJS := $(TEST_HELPERS:%.c=$(BUILD)/%.o)
AUDIT_OBJS := $(AUDIT_SRCS:%.c=$(BUILD)/%.o)
TESTS     := $(TEST_SRCS:%.c=$(BUILD)/%) $(AUDIT_TEST_SRCS:%.c=$(BUILD)/%)
EXAMPLES  := $(EX_SRCS:%.c=$(BUILD)/%)

# riffle-mpi: built by `make` when an MPI compiler wrapper is found (Open
# MPI's by default; MPICC=mpicc.mpich for MPICH), always by `make check`.
# MPICH_CC, when found, builds a second binary $(BUILD)/mpich/riffle-mpi
# for the same tests.
MPICC     ?= $(firstword $(shell command -v mpicc.openmpi mpicc 2>/dev/null))
MPICH_CC  ?= $(shell command -v mpicc.mpich 2>/dev/null)
RIFFLE_MPI := $(BUILD)/riffle-mpi
RIFFLE_MPICH := $(BUILD)/mpich/riffle-mpi
MPI_OBJS  := $(MPI_SRCS:%.c=$(BUILD)/%.o)
MPICH_OBJS := $(MPI_SRCS:%.c=$(BUILD)/mpich/%.o)
# Not in the sanitizer build: the MPI libraries' own allocations would drown
# its reports, and the tests run riffle-mpi from the plain build only.
MPI_PROGRAMS := $(if $(filter 1,$(SANITIZE)),,$(if $(MPI_SRCS),$(if $(MPICC),$(RIFFLE_MPI)) \
                $(if $(MPICH_CC),$(RIFFLE_MPICH))))

STATIC := $(BUILD)/libriffle.a
AUDIT_LIB := $(BUILD)/libriffle_audit.a
SHARED := $(BUILD)/libriffle.so.$(VERSION)
RIFFLE := $(BUILD)/riffle

.PHONY: all lib check test bench install uninstall clean deps demo tests fuzz-long python \
        install-python mpi python-if-cffi

# The Python package is built and tested with Debian's interpreter: the first
# python3 on PATH may be another build that cannot see Debian's python3-cffi
# and python3-numpy.  PYTHONDIR: where `make install` puts the package, a
# directory that interpreter searches (Debian: /usr/lib/python3/dist-packages
# for PREFIX=/usr, PREFIX/lib/python3.X/dist-packages otherwise).
PYTHON     ?= /usr/bin/python3
PYTHONDIR  ?= $(shell $(PYTHON) -c 'import sys; p = "$(PREFIX)"; \
    print(p + "/lib/python3/dist-packages" if p == "/usr" else \
          p + "/lib/python%d.%d/dist-packages" % sys.version_info[:2])' 2>/dev/null)
# The module is built in place (python/riffle/_riffle*.so: its suffix is
# cffi's choice) by the same setup.py as `pip install .`, libriffle's sources
# compiled into it; PY_STAMP records when.
PY_STAMP   := $(BUILD)/python/module.stamp
PY_SRCS    := setup.py pyproject.toml python/build_ffi.py python/riffle/_glue.c
PROGRAMS := $(if $(CLI_SRCS),$(RIFFLE) $(BUILD)/shuf)
COMPLETIONS := $(addprefix $(BUILD)/completions/,riffle.bash _riffle riffle.fish)
CMAKE_FILES := $(BUILD)/cmake/riffleConfig.cmake $(BUILD)/cmake/riffleConfigVersion.cmake
all: lib $(PROGRAMS) $(EXAMPLES) $(BUILD)/riffle.pc $(CMAKE_FILES) $(if $(CLI_SRCS),$(COMPLETIONS)) \
     $(MPI_PROGRAMS)

lib: $(STATIC) $(SHARED)

$(BUILD)/src/%.o: src/%.c include/riffle.h $(wildcard src/*/*.h include/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -DRF_BUILDING_LIBRARY -Isrc $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/cli/%.o: cli/%.c $(wildcard include/*.h cli/*.h audit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -Iaudit $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%.o: tests/%.c $(wildcard include/*.h src/*/*.h tests/lib/*.h audit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -Isrc -Itests/lib -Iaudit $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/audit/%.o: audit/%.c $(wildcard include/*.h audit/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/examples/%.o: examples/%.c include/riffle.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# The MPI wrappers add their include and library directories to the flags.
$(BUILD)/mpi/%.o: mpi/%.c $(wildcard include/*.h mpi/*.h)
	@mkdir -p $(@D)
	$(MPICC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/mpich/mpi/%.o: mpi/%.c $(wildcard include/*.h mpi/*.h)
	@mkdir -p $(@D)
	$(MPICH_CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(RIFFLE_MPI): $(MPI_OBJS) $(STATIC)
	$(MPICC) $(LDFLAGS) -o $@ $(MPI_OBJS) $(STATIC) $(LIB_DEPS)

$(RIFFLE_MPICH): $(MPICH_OBJS) $(STATIC)
	$(MPICH_CC) $(LDFLAGS) -o $@ $(MPICH_OBJS) $(STATIC) $(LIB_DEPS)

# riffle-mpi whatever was found: an error without an MPI compiler.
mpi: $(if $(MPICC),$(MPI_PROGRAMS),no-mpicc)
no-mpicc:
	@echo "riffle-mpi needs an MPI compiler wrapper (mpicc): make deps, or MPICC=..." >&2; exit 1

$(STATIC): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libriffle.so.$(SOMAJOR) $(LDFLAGS) -o $@ $^ $(LIB_DEPS)
	ln -sf libriffle.so.$(VERSION) $(BUILD)/libriffle.so.$(SOMAJOR)
	ln -sf libriffle.so.$(VERSION) $(BUILD)/libriffle.so

# The audit: a library of its own above libriffle, linked by the program and
# its tests; not installed.
$(AUDIT_LIB): $(AUDIT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(RIFFLE): $(CLI_OBJS) $(AUDIT_LIB) $(STATIC)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(AUDIT_LIB) $(STATIC) $(CLI_DEPS) $(LIB_DEPS)

# Invoked as `shuf`, riffle accepts exactly shuf's interface.
$(BUILD)/shuf: $(RIFFLE)
	ln -sf riffle $@

# Tests link the audit library: the audit's own tests use it through
# audit/audit.h, and the helpers in tests/lib share its odometer and chi-square.
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(HELPER_OBJS) $(AUDIT_LIB) $(STATIC)
	$(CC) $(LDFLAGS) -o $@ $< $(HELPER_OBJS) $(AUDIT_LIB) $(STATIC) $(CMOCKA_LIBS) $(LIB_DEPS)

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(STATIC)
	$(CC) $(LDFLAGS) -o $@ $< $(STATIC) $(LIB_DEPS)

# riffle.pc names the install directories: made again by `make install`, so
# that the PREFIX given there is the one it records.
PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'
$(BUILD)/riffle.pc: riffle.pc.in include/riffle.h
	@mkdir -p $(@D)
	$(PC_SUBST) $< > $@

# The CMake package files (find_package(riffle), target riffle::riffle), from
# templates in cmake/ with the same substitutions, made again by `make install`.
# Their libraries' link interface is LIB_DEPS, as a CMake list of flags; the
# pointer size lets the version file refuse a build of another word size.
EMPTY :=
LIB_DEPS_LIST := $(subst $(EMPTY) $(EMPTY),;,$(strip $(LIB_DEPS)))
SIZEOF_VOID_P := $(shell printf '__SIZEOF_POINTER__\n' | $(CC) -E -P -x c - 2>/dev/null | tail -n 1)
CMAKE_SUBST = $(PC_SUBST) -e 's|@CMAKEDIR@|$(CMAKEDIR)|g' -e 's|@SOMAJOR@|$(SOMAJOR)|g' \
	    -e 's|@LIB_DEPS_LIST@|$(LIB_DEPS_LIST)|g' -e 's|@SIZEOF_VOID_P@|$(SIZEOF_VOID_P)|g'
$(BUILD)/cmake/%.cmake: cmake/%.cmake.in include/riffle.h
	@mkdir -p $(@D)
	$(CMAKE_SUBST) $< > $@

# Shell completions, written by a program built from the commands' option
# tables (cli/cli_options.h), as the command-line fuzzer is: they offer the
# options the program parses, no copy of them.
GEN_COMPLETIONS := $(BUILD)/gen_completions
$(BUILD)/completion/gen_completions.o: cli/completion/gen_completions.c cli/cli_options.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -Icli $(ALL_CFLAGS) -c -o $@ $<

$(GEN_COMPLETIONS): $(BUILD)/completion/gen_completions.o $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJS)) $(AUDIT_LIB) $(STATIC)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLI_DEPS) $(LIB_DEPS)

$(BUILD)/completions/riffle.bash: $(GEN_COMPLETIONS)
	@mkdir -p $(@D)
	$(GEN_COMPLETIONS) bash > $@.tmp && mv $@.tmp $@
$(BUILD)/completions/_riffle: $(GEN_COMPLETIONS)
	@mkdir -p $(@D)
	$(GEN_COMPLETIONS) zsh > $@.tmp && mv $@.tmp $@
$(BUILD)/completions/riffle.fish: $(GEN_COMPLETIONS)
	@mkdir -p $(@D)
	$(GEN_COMPLETIONS) fish > $@.tmp && mv $@.tmp $@

# The command-line fuzzer (fuzz/cli_argv.c): built from the program's objects
# (all but main.c) for their option tables, run by tests/checks/check_cli_fuzz.sh.
CLI_ARGV := $(BUILD)/cli_argv
$(BUILD)/fuzz_cli/%.o: fuzz/%.c $(wildcard include/*.h cli/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -Icli $(ALL_CFLAGS) -c -o $@ $<

$(CLI_ARGV): $(BUILD)/fuzz_cli/cli_argv.o $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJS)) $(AUDIT_LIB) $(STATIC)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLI_DEPS) $(LIB_DEPS)

# The sanitizer build's library cannot be loaded by a plain interpreter: the
# package is built and tested with the plain build only.
tests: all $(TESTS) $(if $(CLI_SRCS),$(CLI_ARGV)) $(if $(filter 1,$(SANITIZE)),,python-if-cffi)

# The package needs cffi and setuptools to build; without them the tests go
# on and check_python.sh reports the Python tests as skipped.  Decided when the
# target runs, so other targets never start the interpreter; after the
# library, so that the sub-make does not build it a second time.
python-if-cffi: $(STATIC)
	@if $(PYTHON) -c 'import cffi, setuptools' 2>/dev/null; then \
	    $(MAKE) --no-print-directory python; \
	else echo "python: $(PYTHON) cannot import cffi or setuptools: the Python package is not built and its tests are skipped (sh scripts/deps.sh)"; fi

# setuptools compiles into $(BUILD)/python and writes the module in place,
# where PYTHONPATH=python finds it; Make has decided it is out of date, hence
# --force.  An older module of another suffix would be imported first: gone.
$(PY_STAMP): $(PY_SRCS) $(LIB_SRCS) $(wildcard include/*.h src/*/*.h)
	rm -f python/riffle/_riffle*.so
	$(PYTHON) setup.py -q build_ext --inplace --force --build-temp $(BUILD)/python
	touch $@

python: $(PY_STAMP)

# The whole suite, ending in one line "N passed, N failed, N skipped".
check:
	$(MAKE) tests mpi
	$(MAKE) BUILD=build-asan SANITIZE=1 tests
	tests/run.sh build build-asan

# Benchmarks print ratios against their baselines, measured in the same run.
bench: all
	$(MAKE) -C bench BUILD=$(abspath $(BUILD))/bench LIB=$(abspath $(STATIC))
	@echo "benchmarks built in $(BUILD)/bench; run: bench/bench_all.sh"
	bench/bench_all.sh $(BUILD)/bench

# Long fuzzing, one target after the other on one core: the corpus kept in
# fuzz/corpus/ grows, then is minimised; crash inputs go to fuzz/crashes/.
# The build recipe is shared with tests/checks/check_fuzz.sh.
FUZZ_SECONDS ?= 300
FUZZ_BUILD   ?= $(BUILD)/fuzz
fuzz-long:
	MAKE='$(MAKE)' sh scripts/fuzz.sh build $(FUZZ_BUILD)
	sh scripts/fuzz.sh long $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The main job on a built-in example: deal a shuffled 52-card deck to 4 hands.
demo: all
	$(if $(CLI_SRCS),$(RIFFLE) deal,$(BUILD)/examples/deal52)

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(CMAKEDIR)
	$(if $(CLI_SRCS),$(INSTALL) -m 755 $(RIFFLE) $(DESTDIR)$(BINDIR)/riffle)
	$(INSTALL) -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libriffle.a
	$(INSTALL) -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libriffle.so.$(VERSION)
	ln -sf libriffle.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libriffle.so.$(SOMAJOR)
	ln -sf libriffle.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libriffle.so
	$(INSTALL) -m 644 include/riffle*.h $(DESTDIR)$(INCLUDEDIR)/
	$(PC_SUBST) riffle.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/riffle.pc
	$(CMAKE_SUBST) cmake/riffleConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/riffleConfig.cmake
	$(CMAKE_SUBST) cmake/riffleConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/riffleConfigVersion.cmake
	if [ -f docs/riffle.1 ]; then $(INSTALL) -m 644 docs/riffle.1 $(DESTDIR)$(MANDIR)/man1/riffle.1; fi
	if [ -x $(RIFFLE_MPI) ]; then $(INSTALL) -m 755 $(RIFFLE_MPI) $(DESTDIR)$(BINDIR)/riffle-mpi; \
	    $(INSTALL) -m 644 docs/riffle-mpi.1 $(DESTDIR)$(MANDIR)/man1/riffle-mpi.1; fi
	$(if $(CLI_SRCS),$(install_shuf_links))
	$(if $(CLI_SRCS),$(install_completions))
	@if $(PYTHON) -c 'import cffi, numpy, setuptools' 2>/dev/null; then \
	    $(MAKE) --no-print-directory install-python; \
	else echo "install: $(PYTHON) has no cffi, numpy or setuptools: the Python package is not installed"; fi

install-python: $(PY_STAMP)
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/riffle
	$(INSTALL) -m 644 python/riffle/*.py $(DESTDIR)$(PYTHONDIR)/riffle/
	$(INSTALL) -m 755 python/riffle/_riffle*.so $(DESTDIR)$(PYTHONDIR)/riffle/

# The `shuf` name (riffle then accepts exactly shuf's interface) is
# installed where it shadows nothing: $(LIBEXECDIR)/riffle/shuf, for users who
# put that directory first in PATH.  INSTALL_SHUF_LINK=1 also links
# $(BINDIR)/shuf, but never over a file that is not already that link (with
# PREFIX=/usr that would be coreutils' own shuf).  The libexec link names
# $(BINDIR)/riffle without DESTDIR: it dangles in a staging tree and resolves
# once the tree is installed.
SHUF_DIR := $(LIBEXECDIR)/riffle
define install_shuf_links
$(INSTALL) -d $(DESTDIR)$(SHUF_DIR)
	ln -sfn $(BINDIR)/riffle $(DESTDIR)$(SHUF_DIR)/shuf
	@if [ "$(INSTALL_SHUF_LINK)" = 1 ]; then \
	    l=$(DESTDIR)$(BINDIR)/shuf; \
	    if { [ -e "$$l" ] || [ -L "$$l" ]; } && [ "$$(readlink "$$l")" != riffle ]; then \
	        echo "install: $$l exists and is not a link to riffle; not replaced" >&2; exit 1; \
	    fi; \
	    echo "ln -sfn riffle $$l"; ln -sfn riffle "$$l"; \
	fi
endef

define install_completions
$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL) -m 644 $(BUILD)/completions/riffle.bash $(DESTDIR)$(BASHCOMPDIR)/riffle
	$(INSTALL) -m 644 $(BUILD)/completions/_riffle $(DESTDIR)$(ZSHCOMPDIR)/_riffle
	$(INSTALL) -m 644 $(BUILD)/completions/riffle.fish $(DESTDIR)$(FISHCOMPDIR)/riffle.fish
endef

# Removes both shuf links, the BINDIR one only if it is riffle's.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/riffle $(DESTDIR)$(LIBDIR)/libriffle.a \
	    $(DESTDIR)$(LIBDIR)/libriffle.so* $(DESTDIR)$(PKGCONFIGDIR)/riffle.pc \
	    $(DESTDIR)$(MANDIR)/man1/riffle.1 $(DESTDIR)$(SHUF_DIR)/shuf \
	    $(DESTDIR)$(BINDIR)/riffle-mpi $(DESTDIR)$(MANDIR)/man1/riffle-mpi.1 \
	    $(DESTDIR)$(CMAKEDIR)/riffleConfig.cmake $(DESTDIR)$(CMAKEDIR)/riffleConfigVersion.cmake \
	    $(DESTDIR)$(BASHCOMPDIR)/riffle $(DESTDIR)$(ZSHCOMPDIR)/_riffle \
	    $(DESTDIR)$(FISHCOMPDIR)/riffle.fish
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true
	if [ "$$(readlink $(DESTDIR)$(BINDIR)/shuf)" = riffle ]; then rm -f $(DESTDIR)$(BINDIR)/shuf; fi
	rmdir $(DESTDIR)$(SHUF_DIR) 2>/dev/null || true
	cd $(DESTDIR)$(INCLUDEDIR) && rm -f riffle*.h
	$(if $(PYTHONDIR),rm -rf $(DESTDIR)$(PYTHONDIR)/riffle)

clean:
	rm -rf build build-asan build-werror-gcc build-werror-clang

# Debian packages for building, testing and benchmarking (run as root).
deps:
	sh scripts/deps.sh
