/*
 * mpi_exchange.c -- every record to the rank that owns its key.
 *
 * Rank r reads part r of the input (rf_engine_part_count: the bytes after
 * the header cut into P ranges), numbers its records from `first`, the
 * records of the parts before it (MPI_Exscan), and scatters them by owner
 * (rf_engine_scatter).  The packets travel in rounds: MPI_Alltoall of the
 * byte counts, an MPI_Allreduce that says whether every rank is done, or
 * one failed, then MPI_Ialltoallv of the packets, each round at most `room`
 * bytes per owner, so that counts and displacements stay far below the
 * 2^31 of MPI's int arguments.  The packets are sent from where the scatter
 * packed them and received into memory of the gather's own, which parses
 * and keeps them there (rf_engine_gather_buffer, _recv): no copy on either
 * side.  The rounds overlap: while one travels, the last is parsed and the
 * next packed.  A job of one rank never comes here (riffle_mpi.c runs the
 * one-process engine).  A rank's own records go through MPI to itself like
 * the others': the library's local lane (rf_engine_scatter_local) would
 * copy them into the gather, which costs what MPI's copy to self costs
 * (docs/BENCHMARKS_MPI.md), or hold the whole part's input pages.
 *
 * Ranks of one machine that see the same input files send each other
 * references instead of records (rf_engine_scatter_refer,
 * rf_engine_gather_inputs: about 3 bytes a record), and each reads its
 * records from its own mapping of the files: nothing is copied before the
 * write.  Which ranks do is agreed collectively (plan_references), so both
 * sides of every pair decide alike; --exchange=bytes turns it off.
 *
 * When every rank can map the whole input -- one input file, every rank on
 * one machine -- nothing travels at all: each rank reads all of the input
 * and keeps the records of its own key range (rf_engine_gather_direct),
 * finding every delimiter and drawing every key itself, which costs less
 * than framing, sending, parsing and keying again a share of them
 * (docs/BENCHMARKS_MPI.md).  --exchange=direct asks for it anywhere the
 * ranks see the same file (a shared file system: each rank then reads all
 * of it), --exchange=refs or bytes turns it off.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_job.h"

/* Bytes per owner per round, by default: 16 MiB out of each rank per round
 * whatever P, between 64 KiB and 4 MiB per owner.  The round's buffers (the
 * scatter's packets and what comes in, plus a copy of the packets when
 * they cannot be sent in place: at most about three times that) then stay
 * within the 64 MiB that the memory target allows beside the records, and
 * messages of 64 KiB and more keep the latency of
 * a collective (tens of microseconds) negligible against the bytes.
 * RIFFLE_MPI_ROUND_BYTES sets it (the tests use tiny rounds). */
#define ROUND_TOTAL ((size_t)16 << 20)
#define ROUND_MIN ((size_t)64 << 10)
#define ROUND_MAX ((size_t)4 << 20)

static size_t round_room(int size)
{
    const char *env = getenv("RIFFLE_MPI_ROUND_BYTES");
    if (env && *env) {
        char *end;
        const unsigned long long v = strtoull(env, &end, 10);
        if (!*end && v > 0)
            return (size_t)v;
    }
    size_t room = ROUND_TOTAL / (size_t)size;
    return room < ROUND_MIN ? ROUND_MIN : room > ROUND_MAX ? ROUND_MAX : room;
}

/* The buffers of the rounds in flight.  Round k's packets are sent from
 * the scatter's buffer (or, when they cannot be reached from one base
 * address, from sbuf[k % 2]) into a buffer of the gather's own. */
struct round {
    int *scount, *sdispl, *rcount, *rdispl;
    unsigned char *sbuf[2];
    size_t scap[2];
    size_t *len, *rlen;
    const void **out;
    MPI_Aint *addr; /* the packets' addresses, for in_place */
    void *rbuf;     /* the gather's buffer of the round in flight */
    void *prev;     /* the last round's, received, not yet parsed */
    size_t *prev_len;
};

static int round_init(struct round *r, int size)
{
    memset(r, 0, sizeof *r);
    const size_t n = (size_t)size;
    r->scount = calloc(n, sizeof *r->scount);
    r->sdispl = calloc(n, sizeof *r->sdispl);
    r->rcount = calloc(n, sizeof *r->rcount);
    r->rdispl = calloc(n, sizeof *r->rdispl);
    r->len = calloc(n, sizeof *r->len);
    r->rlen = calloc(n, sizeof *r->rlen);
    r->prev_len = calloc(n, sizeof *r->prev_len);
    r->out = calloc(n, sizeof *r->out);
    r->addr = calloc(n, sizeof *r->addr);
    return r->scount && r->sdispl && r->rcount && r->rdispl && r->len && r->rlen &&
                   r->prev_len && r->out && r->addr
               ? 0
               : -1;
}

static void round_free(struct round *r)
{
    free(r->scount);
    free(r->sdispl);
    free(r->rcount);
    free(r->rdispl);
    free(r->len);
    free(r->rlen);
    free(r->prev_len);
    free(r->out);
    free(r->addr);
    free(r->sbuf[0]);
    free(r->sbuf[1]);
}

/* A buffer that only grows, with an eighth more than asked: a round's
 * total varies by a few records from round to round, and growing to the
 * exact need would replace the buffer at every new maximum -- a fresh
 * mapping from malloc, every page of it faulted in again by the copy that
 * fills it. */
static int reserve(unsigned char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    free(*buf);
    const size_t want = need + need / 8 >= need ? need + need / 8 : need;
    *buf = malloc(want);
    *cap = *buf ? want : 0;
    return *buf ? 0 : -1;
}

/* The displacements of the packets from the lowest of them, when they all
 * fit MPI's int: the send then reads the scatter's frames where they lie
 * (the scatter lays a round's frames in one buffer, owner d's at d times a
 * stride) instead of a copy of them in one block.  MPI_Get_address and
 * MPI_Aint_diff are MPI's portable address arithmetic (MPI 3.1, section
 * 4.1.5).  Returns the lowest packet, or NULL when they do not fit (or
 * there are none). */
static const void *in_place(const struct job *j, const struct round *r)
{
    int low = -1;
    MPI_Aint base = 0, *at = r->addr;
    for (int d = 0; d < j->size; d++) {
        if (r->len[d] == 0)
            continue;
        MPI_Get_address(r->out[d], &at[d]);
        if (low < 0 || MPI_Aint_diff(at[d], base) < 0)
            low = d, base = at[d];
    }
    if (low < 0)
        return NULL;
    for (int d = 0; d < j->size; d++) {
        if (r->len[d] == 0)
            continue;
        const MPI_Aint off = MPI_Aint_diff(at[d], base);
        if ((size_t)off > (size_t)INT_MAX - r->len[d])
            return NULL;
    }
    for (int d = 0; d < j->size; d++)
        r->sdispl[d] = r->len[d] ? (int)MPI_Aint_diff(at[d], base) : 0;
    return r->out[low];
}

/* The send side of round k: counts and displacements from the scatter's
 * packets, and the buffer they are taken from -- the scatter's own
 * (in_place), else a copy of them in owner order in sbuf[k % 2].  Returns
 * the buffer, or NULL with the failure recorded. */
static const void *pack(struct job *j, struct round *r, uint64_t k)
{
    size_t total = 0;
    for (int d = 0; d < j->size; d++) {
        if (r->len[d] > (size_t)INT_MAX - total) {
            job_fail(j, "a round of more than 2 GiB for MPI (a record that large?)");
            return NULL;
        }
        r->scount[d] = (int)r->len[d];
        r->sdispl[d] = (int)total;
        total += r->len[d];
    }
    j->st.sent += total;
    const int b = (int)(k % 2);
    if (total == 0)
        return r->sbuf[b];
    const void *base = in_place(j, r);
    if (base)
        return base;
    if (reserve(&r->sbuf[b], &r->scap[b], total) != 0) {
        job_fail(j, "memory exhausted");
        return NULL;
    }
    for (int d = 0; d < j->size; d++)
        if (r->len[d])
            memcpy(r->sbuf[b] + r->sdispl[d], r->out[d], r->len[d]);
    return r->sbuf[b];
}

/* The next round of this rank's packets (none once done, or after a
 * failure): r->len, r->out, and the send buffer. */
static const void *next_packets(struct job *j, struct round *r, rf_engine_scatter *s,
                                size_t room, uint64_t k, int *done)
{
    memset(r->len, 0, (size_t)j->size * sizeof *r->len);
    if (!*done && !j->err.failed) {
        rf_engine_error e;
        if (rf_engine_scatter_next(s, room, r->out, r->len, done, &e) != RF_OK)
            job_fail_engine(j, &e);
    }
    const void *sbuf = j->err.failed ? NULL : pack(j, r, k);
    if (j->err.failed)
        memset(r->scount, 0, (size_t)j->size * sizeof *r->scount);
    return sbuf;
}

/* The last round's packets, received whole, into the gather (in place). */
static void parse_prev(struct job *j, struct round *r, rf_engine_gather *g)
{
    if (!r->prev)
        return;
    rf_engine_error e;
    if (!j->err.failed && rf_engine_gather_recv(g, r->prev, r->prev_len, &e) != RF_OK)
        job_fail_engine(j, &e);
    r->prev = NULL;
}

/* The receive side of a round: counts in (MPI_Alltoall), displacements,
 * and a buffer of the gather's for them; then every rank agrees on
 * failures and on whether every rank is done (MPI_Allreduce), before any
 * packet moves -- a collective cannot be left half-way.  Returns -1 when
 * one failed, 1 when this is every rank's last round, else 0. */
static int open_round(struct job *j, struct round *r, rf_engine_gather *g, int done,
                      size_t *total)
{
    const size_t n = (size_t)j->size;
    MPI_Alltoall(r->scount, 1, MPI_INT, r->rcount, 1, MPI_INT, j->comm);
    *total = 0;
    for (size_t q = 0; q < n; q++) {
        if ((size_t)r->rcount[q] > (size_t)INT_MAX - *total) {
            job_fail(j, "a round of more than 2 GiB for MPI (a record that large?)");
            break;
        }
        r->rdispl[q] = (int)*total;
        r->rlen[q] = (size_t)r->rcount[q];
        *total += (size_t)r->rcount[q];
    }
    r->rbuf = NULL;
    rf_engine_error e;
    if (!j->err.failed && rf_engine_gather_buffer(g, *total, &r->rbuf, &e) != RF_OK)
        job_fail_engine(j, &e);
    int mine[2] = {done, j->err.failed ? j->rank : j->size}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, j->comm);
    if (all[1] != j->size)
        return -1;
    return all[0] ? 1 : 0;
}

/* MPI_Test now and then while this rank works between starting a round's
 * exchange and waiting for it: Open MPI moves a non-blocking collective's
 * data only inside MPI calls. */
static void nudge(MPI_Request *req)
{
    int flag;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
}

/* The rounds, pipelined: while round k travels (MPI_Ialltoallv), round k-1
 * is parsed into the gather and round k+1 is keyed and packed (the scatter
 * and the gather each keep two rounds' buffers).  Ends at the last round,
 * or when every rank has seen that one failed. */
static void rounds(struct job *j, struct round *r, rf_engine_scatter *s, rf_engine_gather *g)
{
    const size_t room = round_room(j->size);
    int done = 0;
    uint64_t total_records = 0, sent = 0;
    const void *sbuf = next_packets(j, r, s, room, 0, &done);
    for (uint64_t k = 0;; k++) {
        if (j->show_progress)
            sent = rf_engine_scatter_records(s, &total_records);
        job_progress(j, "exchange", sent, total_records);
        size_t total;
        const int last = open_round(j, r, g, done, &total);
        if (last < 0)
            return;
        MPI_Request req;
        MPI_Ialltoallv(sbuf, r->scount, r->sdispl, MPI_BYTE, r->rbuf, r->rcount, r->rdispl,
                       MPI_BYTE, j->comm, &req);
        nudge(&req);
        parse_prev(j, r, g);
        nudge(&req);
        if (!last)
            sbuf = next_packets(j, r, s, room, k + 1, &done);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        j->st.received += total;
        j->st.rounds++;
        r->prev = r->rbuf;
        memcpy(r->prev_len, r->rlen, (size_t)j->size * sizeof *r->rlen);
        if (last) {
            parse_prev(j, r, g);
            return;
        }
    }
}

/* Count part `rank`, and number its first record (exclusive scan).  Agreed. */
static int count_part(struct job *j, uint64_t *first, uint64_t *bytes)
{
    uint64_t records = 0;
    *bytes = 0;
    rf_engine_error e;
    if (rf_engine_part_count(&j->eo, j->in, j->n_in, (unsigned)j->rank, (unsigned)j->size,
                             &records, bytes, &e) != RF_OK)
        job_fail_engine(j, &e);
    if (job_agree(j) != 0)
        return -1;
    *first = 0;
    MPI_Exscan(&records, first, 1, MPI_UINT64_T, MPI_SUM, j->comm);
    if (j->rank == 0)
        *first = 0; /* MPI_Exscan leaves rank 0's result undefined */
    return 0;
}

/* A hash of the input files as this rank sees them (FNV-1a of the
 * device -- with `device` --, inode, size and modification time of each):
 * what ranks must agree on to read each other's records themselves.  0
 * when one is not a regular file, or when they hold more bytes than
 * `limit` (unless 0): an owner that reads the input itself reads its
 * records in any order, from all of it, which is fast only while the input
 * stays in memory (the page cache); a larger one goes as bytes, each part
 * read once, in order. */
static uint64_t files_hash(const struct job *j, int device, uint64_t limit)
{
    uint64_t h = 0xcbf29ce484222325ull, total = 0;
    for (int i = 0; i < j->opts->n_files; i++) {
        rf_file_stamp st;
        if (rf_file_stamp_path(j->opts->files[i], &st) != 0 || !st.regular)
            return 0;
        total += (uint64_t)st.size;
        if (limit && total > limit)
            return 0;
        const uint64_t f[5] = {device ? st.dev : 0, st.ino, (uint64_t)st.size,
                               (uint64_t)st.mtime_sec, (uint64_t)st.mtime_nsec};
        for (int k = 0; k < 5; k++)
            for (int b = 0; b < 64; b += 8)
                h = (h ^ ((f[k] >> b) & 0xff)) * 0x100000001b3ull;
    }
    return h ? h : 1;
}

/* The rank's --memory (or the library's default). */
static uint64_t rank_budget(const struct job *j)
{
    return j->eo.memory ? j->eo.memory : rf_engine_default_memory();
}

/* Whether h, not 0, is every rank's (one collective). */
static int same_everywhere(const struct job *j, uint64_t h)
{
    const uint64_t mine[2] = {h, ~h};
    uint64_t most[2];
    MPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, j->comm);
    return h != 0 && most[0] == h && ~most[1] == h; /* max h == min h */
}

/* Whether every rank reads its records itself (rf_engine_gather_direct):
 * --exchange=direct, where every rank sees the same one regular input
 * (inode, size and time: a file system shared between machines gives each
 * its own device number); or, with auto, every rank on one machine, whose
 * page cache holds the input once, and the input within --memory.  Every
 * rank decides alike (the hash is compared collectively); a direct run
 * that cannot be is the job's failure.  Collective. */
static int plan_direct(struct job *j)
{
    const enum exchange_mode m = j->opts->exchange;
    if (m == EXCHANGE_REFS || m == EXCHANGE_BYTES) /* every rank parsed the same options */
        return 0;
    const int one = j->opts->n_files == 1;
    if (m == EXCHANGE_AUTO)
        return one && j->machine_ranks == j->size &&
               same_everywhere(j, files_hash(j, 1, rank_budget(j)));
    if (!same_everywhere(j, one ? files_hash(j, 0, 0) : 0)) {
        job_fail(j, "--exchange=direct reads one regular input file, the same on every rank");
        j->err.global = 1;
        return -1;
    }
    return 1;
}

/* Every rank reads all of the input and orders its own records: no
 * count, no exchange.  Agreed. */
static int exchange_direct(struct job *j, rf_engine_gather **gp)
{
    const double t = now();
    job_progress(j, "read", 0, 0);
    rf_engine_error e;
    if (rf_engine_gather_direct(gp, &j->eo, j->in, j->n_in, (unsigned)j->rank,
                                (unsigned)j->size, &e) != RF_OK) {
        *gp = NULL;
        job_fail_engine(j, &e);
    }
    j->st.direct = 1;
    j->st.records = *gp ? rf_engine_gather_records(*gp) : 0;
    j->st.seconds[PH_EXCHANGE] = now() - t;
    if (job_agree(j) != 0) {
        rf_engine_gather_close(*gp);
        *gp = NULL;
        return -1;
    }
    return 0;
}

/* refer[d] = 1 for the ranks this one sends references to (and receives
 * references from: the relation is symmetric): those on the same machine
 * (j->machine) that see the same input files, unless
 * --exchange=bytes.  Collective: every rank calls it, whatever happened
 * before, and every rank takes the same collectives.  Returns how many
 * (0 with *refer NULL: none), or -1 on no memory (agreed: no rank refers). */
static int plan_references(struct job *j, unsigned char **referp)
{
    *referp = NULL;
    if (j->opts->exchange == EXCHANGE_BYTES) /* every rank parsed the same options */
        return 0;
    const uint64_t mine[2] = {(uint64_t)j->machine, files_hash(j, 1, rank_budget(j))};
    uint64_t *all = malloc((size_t)j->size * sizeof mine);
    unsigned char *refer = malloc((size_t)j->size);
    int ok = all && refer, every = 0;
    MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_MIN, j->comm);
    int n = -1;
    if (every) {
        MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, j->comm);
        n = 0;
        for (int d = 0; d < j->size; d++) {
            refer[d] = mine[1] && all[2 * d] == mine[0] && all[2 * d + 1] == mine[1];
            n += refer[d];
        }
    }
    free(all);
    if (n > 0)
        *referp = refer;
    else
        free(refer);
    return n;
}

/* The scatter sends references to the ranks of refer[], and the gather
 * reads the inputs for theirs. */
static void use_references(struct job *j, const unsigned char *refer, rf_engine_scatter *s,
                           rf_engine_gather *g)
{
    rf_engine_error e;
    if (rf_engine_gather_inputs(g, &j->eo, j->in, j->n_in, &e) != RF_OK)
        return job_fail_engine(j, &e);
    for (int d = 0; d < j->size; d++) {
        if (refer[d] && rf_engine_scatter_refer(s, (unsigned)d, &e) != RF_OK)
            return job_fail_engine(j, &e);
        j->st.referred += refer[d];
    }
}

int job_exchange(struct job *j, rf_engine_gather **gp)
{
    *gp = NULL;
    const int direct = plan_direct(j);
    if (direct != 0)
        return direct < 0 ? job_agree(j) : exchange_direct(j, gp);
    double t = now();
    job_progress(j, "count", 0, 0);
    uint64_t first, bytes;
    if (count_part(j, &first, &bytes) != 0)
        return -1;
    j->st.seconds[PH_COUNT] = now() - t;
    t = now();
    rf_engine_scatter *s = NULL;
    rf_engine_gather *g = NULL;
    struct round r;
    rf_engine_error e;
    unsigned char *refer;
    const int referred = plan_references(j, &refer);
    if (round_init(&r, j->size) != 0 || referred < 0)
        job_fail(j, "memory exhausted");
    else if (rf_engine_gather_open(&g, &j->eo, (unsigned)j->size, &e) != RF_OK)
        job_fail_engine(j, &e);
    else if (rf_engine_scatter_open(&s, &j->eo, j->in, j->n_in, (unsigned)j->rank,
                                    (unsigned)j->size, first, (unsigned)j->size, &e) != RF_OK)
        job_fail_engine(j, &e);
    else if (refer)
        use_references(j, refer, s, g);
    free(refer);
    int status = job_agree(j);
    if (status == 0) {
        rounds(j, &r, s, g);
        uint64_t total = 0, sent = 0;
        if (j->show_progress)
            sent = rf_engine_scatter_records(s, &total);
        job_progress(j, "exchange", sent, total);
        /* every rank's failure, the last round's gather included, and its
         * message (open_round has only agreed that one failed) */
        status = job_agree(j);
    }
    round_free(&r);
    if (s)
        (void)rf_engine_scatter_kept(s, &j->st.kept);
    /* the part is sent: its mapping and round buffers go (no local lane
     * holds records in them) */
    rf_engine_scatter_close(s);
    j->st.records = g ? rf_engine_gather_records(g) : 0;
    j->st.seconds[PH_EXCHANGE] = now() - t;
    if (status != 0) {
        rf_engine_gather_close(g);
        return -1;
    }
    *gp = g;
    return 0;
}
