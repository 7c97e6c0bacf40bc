"""The description of riffle._riffle, the compiled part of the Python package.

cffi's out-of-line API mode: the declarations below (a subset of the public
headers include/riffle*.h, which stay the manual) are compiled against the
real headers by the C compiler, so a mismatch is a build error, and every
call releases the GIL.  The module is compiled from libriffle's own sources
(src/*/*.c) together with the package's glue (riffle/_glue.c), so it needs
no libriffle.so at run time; it links libsodium and GMP as shared libraries
(Debian's static archives of both are not position-independent).  Every
library symbol is hidden: the module exports its init function only.

Not run by hand: setup.py (at the top of the tree) names make_ffi in
cffi_modules, and setuptools builds the extension from it -- for
`pip install .`, `pip wheel .` and `make python` alike.
"""
import glob
import os
import shlex
import subprocess

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

CDEF = """
typedef enum rf_status { RF_OK, RF_EINVAL, RF_ENOMEM, RF_EENTROPY, RF_ECRYPTO,
                         RF_EEMPTY, RF_ERANGE, RF_EIO, ... } rf_status;
typedef enum rf_rng_kind { RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64,
                           ... } rf_rng_kind;
typedef struct rf_rng { ...; } rf_rng;
#define RF_KEY_BYTES 32
#define RF_PERM_TABLE_MAX ...

const char *rf_version(void);
const char *rf_strerror(rf_status status);
rf_status rf_rng_kind_parse(const char *name, rf_rng_kind *kind);
const char *rf_rng_kind_name(rf_rng_kind kind);
rf_status rf_seed_os(uint8_t key[32]);
rf_status rf_seed_text(uint8_t key[32], const char *text);
rf_status rf_rng_init(rf_rng *g, rf_rng_kind kind, const uint8_t key[32], uint64_t stream);
rf_rng *rf_rng_new_os(rf_status *status);
void rf_rng_free(rf_rng *g);
void rf_rng_fill(rf_rng *g, void *buf, size_t len);

size_t rf_shuffle_bucket_scratch_size(size_t n, size_t size);
rf_status rf_shuffle_parallel(rf_rng *g, void *base, size_t n, size_t size,
                              unsigned threads, void *scratch);
rf_status rf_sample(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *scratch,
                    size_t scratch_size);

typedef enum rf_perm_mode { RF_PERM_AUTO, RF_PERM_TABLE, RF_PERM_SIPHASH,
                            RF_PERM_MULTIPLY, ... } rf_perm_mode;
typedef struct rf_perm { ...; } rf_perm;
rf_perm *rf_perm_new(const uint8_t key[32], uint64_t max, rf_perm_mode mode,
                     rf_status *status);
void rf_perm_free(rf_perm *p);
uint64_t rf_perm_at(const rf_perm *p, uint64_t i);
uint64_t rf_perm_inverse(const rf_perm *p, uint64_t y);
void rf_perm_at_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out);
uint64_t rf_perm_max(const rf_perm *p);
rf_perm_mode rf_perm_get_mode(const rf_perm *p);
const char *rf_perm_mode_name(rf_perm_mode mode);
rf_status rf_perm_mode_parse(const char *name, rf_perm_mode *mode);

/* The engine. */
typedef struct rf_engine_input { ...; } rf_engine_input;
rf_engine_input rf_engine_input_path(const char *path);
typedef enum rf_engine_phase { RF_ENGINE_READ, RF_ENGINE_SCATTER, RF_ENGINE_SHUFFLE,
                               RF_ENGINE_WRITE, ... } rf_engine_phase;
typedef enum rf_engine_op { RF_ENGINE_OP_NONE, RF_ENGINE_OP_INPUT, RF_ENGINE_OP_OUTPUT,
                            RF_ENGINE_OP_TEMP_DIR, RF_ENGINE_OP_TEMP_FILE,
                            RF_ENGINE_OP_TEMP_REMOVE, RF_ENGINE_OP_READ,
                            RF_ENGINE_OP_CHANGED, RF_ENGINE_OP_CSV, ... } rf_engine_op;
typedef struct rf_engine_error {
    rf_status status;
    rf_engine_op op;
    int err;
    char path[4096];
    uint64_t line;
} rf_engine_error;
size_t rf_engine_error_message(const rf_engine_error *e, char *buf, size_t len);
uint64_t rf_engine_usable_memory(void);
uint64_t rf_engine_default_memory(void);
rf_status rf_engine_memory_parse(const char *text, uint64_t *bytes);
#define RF_ENGINE_ALL ...

/* The atomic output file (riffle_io.h), as the riffle program's -o. */
typedef struct rf_atomic_file { int fd; ...; } rf_atomic_file;
int rf_atomic_open(rf_atomic_file *a, const char *path);
int rf_atomic_commit(rf_atomic_file *a);
void rf_atomic_abort(rf_atomic_file *a);
int rf_atomic_staged(const rf_atomic_file *a);
int rf_same_file_pair(const char *const *names, size_t n, size_t *a, size_t *b);

typedef struct rf_split { ...; } rf_split;
typedef enum rf_split_problem { RF_SPLIT_OK, ... } rf_split_problem;
typedef struct rf_split_error { rf_split_problem problem; ...; } rf_split_error;
rf_status rf_split_parse(rf_split *s, const char *spec, rf_split_error *err);
void rf_split_free(rf_split *s);
size_t py_split_parts(const rf_split *s);
rf_status rf_split_names(const char *pattern, size_t parts, char ***names,
                         rf_split_error *err);
void rf_split_names_free(char **names, size_t parts);
size_t rf_split_error_message(const rf_split_error *e, char *buf, size_t len);

/* The package's glue (below). */
typedef struct py_run { ...; } py_run;
void py_fill_below(rf_rng *g, uint64_t n, uint64_t *out, size_t k);
void py_fill_words(rf_rng *g, uint64_t *out, size_t k);
void py_fill_double(rf_rng *g, double *out, size_t k);
void py_perm_gather(const rf_perm *p, const uint64_t *idx, size_t k, uint64_t *out);
void py_perm_inverse_gather(const rf_perm *p, const uint64_t *idx, size_t k, uint64_t *out);
void py_perm_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out,
                   unsigned threads);
size_t rf_delims_count(const void *p, size_t len, unsigned char delim);
size_t py_records_scan(const unsigned char *data, size_t size, unsigned char delim,
                       uint64_t *offs);
uint64_t py_records_gather(const unsigned char *data, const uint64_t *offs,
                           const uint64_t *idx, size_t k, uint64_t *ends,
                           unsigned char *out);
rf_status rf_fair_commit(uint8_t commit[32], const uint8_t server_seed[32]);
rf_status rf_fair_deal(size_t *order, size_t n, const uint8_t server_seed[32],
                       const void *client, size_t len, uint64_t nonce);
typedef enum rf_compression {
    RF_COMPRESSION_NONE = 0,
    RF_COMPRESSION_GZIP = 1,
    RF_COMPRESSION_ZSTD = 2
} rf_compression;
rf_compression rf_compression_sniff(const void *bytes, size_t len, int *partial);
const char *rf_compression_name(rf_compression c);
int rf_compression_of_path(const char *path, rf_compression *c);
typedef struct rf_file_stamp { ...; } rf_file_stamp;
int rf_file_stamp_fd(int fd, rf_file_stamp *s);
int py_stamp_same(const rf_file_stamp *then, const rf_file_stamp *now);
void py_perm_strided(const rf_perm *p, uint64_t n, uint64_t first, uint64_t step,
                     size_t k, int64_t *out);
rf_status py_keyed_index(const uint8_t key[32], rf_rng_kind kind, uint64_t m,
                         unsigned threads, uint64_t *idx);
rf_status py_epoch_key(const uint8_t seed_key[32], uint64_t epoch, uint8_t key[32]);
py_run *py_run_new(void);
void py_run_free(py_run *r);
void py_run_cancel(py_run *r);
rf_status py_run_shuffle(py_run *r, const uint8_t key[32], rf_rng_kind kind,
                         const char **paths, size_t n, int fd, unsigned char delim,
                         uint64_t header, uint64_t count, uint64_t memory,
                         const char *tmpdir, unsigned threads, rf_engine_error *err);
rf_status py_run_split(py_run *r, const uint8_t key[32], rf_rng_kind kind,
                       const char **paths, size_t n, const rf_split *split,
                       const int *fds, unsigned char delim, uint64_t header,
                       uint64_t count, uint64_t memory, const char *tmpdir,
                       unsigned threads, rf_engine_error *err,
                       rf_split_error *split_err, size_t *part);
extern "Python" void py_on_progress(void *ctx, rf_engine_phase phase, uint64_t done,
                                    uint64_t total);
"""

def pkg_config(flag, package):
    """pkg-config's FLAG for PACKAGE as a list, empty when it has none."""
    try:
        out = subprocess.run(["pkg-config", flag, package], capture_output=True, text=True)
    except OSError:
        return []
    return shlex.split(out.stdout) if out.returncode == 0 else []


def rel(path):
    """PATH relative to the current directory: setuptools wants the sources
    of an extension relative to setup.py's directory, where it runs."""
    return os.path.relpath(path, os.getcwd())


def library_sources():
    """libriffle's C sources, sorted as the Makefile's LIB_SRCS."""
    found = sorted(glob.glob(os.path.join(TOP, "src", "*", "*.c")))
    if not found:
        raise RuntimeError("libriffle's sources are not in %s/src: build from the "
                           "riffle tree or its sdist" % TOP)
    return [rel(f) for f in found]


def make_ffi():
    """The cffi.FFI that builds riffle._riffle (setup.py's cffi_modules)."""
    with open(os.path.join(HERE, "riffle", "_glue.c")) as f:
        glue = f.read()
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source(
        "riffle._riffle", glue,
        sources=library_sources(),
        include_dirs=[rel(os.path.join(TOP, "include")), rel(os.path.join(TOP, "src"))],
        define_macros=[("_GNU_SOURCE", None)],
        # hidden: libriffle's symbols stay inside the module, as in
        # libriffle.a (RF_BUILDING_LIBRARY is not defined, so RF_API adds
        # no default visibility); PyInit__riffle is exported by Python.h
        extra_compile_args=["-std=c11", "-fvisibility=hidden"]
        + pkg_config("--cflags", "libsodium"),
        extra_link_args=(pkg_config("--libs", "libsodium") or ["-lsodium"])
        + ["-lgmp", "-lpthread", "-lm"],
    )
    return ffi
