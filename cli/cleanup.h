/* cleanup.h -- remove riffle's temporary files when a signal ends the run.
 *
 * One process-wide registry, the library's (riffle_io.h, rf_removal: a
 * program owns its signals; the library never touches them, tells the
 * program which temporary files exist, and keeps the paths where a handler
 * can remove them):
 *
 *  - file paths: the temporary files of -o and of the --split parts, and any
 *    other file an engine creates (up to CLEANUP_MAX_FILES paths, copied);
 *  - ONE temporary directory holding numbered files "0", "1", ..., "N-1" (the
 *    external engine's buckets), N updated as the library announces them
 *    (riffle_engine.h, the temp callback).
 *
 * On every signal whose default action ends the process (SIGINT, SIGTERM,
 * SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGXFSZ, SIGUSR1, ... the real-time ones;
 * cleanup.c has the list), but those of a fault, the handler unlinks every registered
 * path, then DIR/0 .. DIR/(N-1), then rmdir(DIR), restores the default action
 * and raises the signal again, so the parent sees death by that signal (a
 * shell's 130, 143, 129, 141): `riffle big | head` ends quietly as shuf does,
 * and leaves no bucket files.  A signal that was ignored when riffle started
 * (nohup; SIGPIPE ignored) stays ignored.
 *
 * SIGBUS: the input is mapped with mmap(2), and touching a page of a file
 * that was truncated meanwhile raises SIGBUS.  The handler writes
 * "PROG: bus error: an input file shrank while being read", cleans up as
 * above and _exit(1)s (no core, no re-raise).
 *
 * Everything the handler reads is published with the asynchronous signals
 * blocked in the updating thread, and slot counts last (rf_removal); the
 * handler uses only async-signal-safe calls (rf_removal_run's unlink and
 * rmdir, write, sigaction, sigprocmask, raise, _exit).
 *
 * Threads: the registry functions may be called from any one thread at a
 * time.  The library's worker threads block the asynchronous signals (riffle.h,
 * "Threads"), so those are taken by the program's own threads; SIGBUS, being
 * synchronous, is taken by whichever thread faults.
 */
#ifndef RIFFLE_CLEANUP_H
#define RIFFLE_CLEANUP_H

#include <signal.h>
#include <stddef.h>

/* Registered paths at most (at least the --split part limit plus -o). */
#define CLEANUP_MAX_FILES 4100

/* Room for every signal of cleanup_signals (Linux has 31 standard ones and
 * 33 real-time ones). */
#define CLEANUP_MAX_SIGNALS 128

/* The terminating signals: every signal whose default action ends the
 * process but SIGKILL, SIGBUS and those of a fault (cleanup.c has the list
 * and why), then SIGRTMIN..SIGRTMAX.  Fills sigs[0..n) and returns n.  The
 * one list for every part of riffle that undoes its work on a signal:
 * cleanup_init, and `riffle audit`, which kills its trials (audit_runner.c). */
size_t cleanup_signals(int sigs[CLEANUP_MAX_SIGNALS]);

/* Make the registry and install the handlers.  Call once, early (cli_prog
 * must be final: it names the program in the SIGBUS message).  Returns 0 or
 * an errno value. */
int cleanup_init(void);

/* Register `path` for removal on a signal.  Returns a slot id >= 0, or -1 if
 * the registry is full or the path too long (then nothing guards the file:
 * callers treat it as an error -- a path that cannot be guarded should not be
 * created).  The path is copied. */
int cleanup_add(const char *path);
/* Block the handled signals in this thread while a file is created and
 * registered (cleanup_add), so that no signal can come between the two;
 * cleanup_release unblocks them (a pending one is then handled). */
void cleanup_hold(sigset_t *old);
void cleanup_release(const sigset_t *old);

/* Forget slot `id` (before the file is renamed into place or removed).  An id
 * of -1 is ignored. */
void cleanup_remove(int id);

/* The engine's temp callback (riffle_engine.h, rf_engine_temp_fn) on the
 * registry above (rf_removal_temp): a directory announced (files 0) is set,
 * a count passed on, the end (dir NULL) clears it.  ctx is unused.  Returns
 * 0, or ENAMETOOLONG for a directory whose path does not fit (ENOMEM: no
 * registry). */
int cleanup_engine_temp(void *ctx, const char *dir, unsigned long files);

/* A progress line is (1) or is not (0) on the terminal: the handler then
 * clears it ("\r\033[K") before writing or dying.  Used by progress.c. */
void cleanup_progress_line(int shown);

#endif
