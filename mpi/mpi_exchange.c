/*
 * mpi_exchange.c -- every record to the rank that owns its key.
 *
 * Rank r reads part r of the input (rf_engine_part_count: the bytes after
 * the header cut into P ranges), numbers its records from `first`, the
 * records of the parts before it (MPI_Exscan), and scatters them by owner
 * (rf_engine_scatter).  The packets travel in rounds: MPI_Alltoall of the
 * byte counts (64-bit), an MPI_Allreduce that says whether every rank is
 * done, or one failed, then the packets, each round at most `room` bytes
 * per owner (or one larger record), as non-blocking point-to-point
 * messages of at most 1 GiB each: MPI's int counts then limit neither a
 * round nor a record.  The packets are sent from where the scatter packed
 * them and received into memory of the gather's own, which parses and
 * keeps them there (rf_engine_gather_buffer, _recv): no copy on either
 * side.  The rounds overlap: while one travels, the last is parsed and the
 * next packed.  A job of one rank never comes here (riffle_mpi.c runs the
 * one-process engine).  A rank's own packets are copied into its receive
 * buffer, as MPI's all-to-all does; the library's local lane
 * (rf_engine_scatter_local) would copy them into the gather too, which
 * costs the same (docs/BENCHMARKS_MPI.md), or hold the whole part's input
 * pages.
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

/* Bytes per message, at most: a round's packets for one owner travel as
 * pieces of this size, each one MPI message (MPI counts are C ints), so
 * that neither a round nor a record is limited by MPI's 2 GiB.
 * RIFFLE_MPI_MESSAGE_BYTES sets it lower (the tests use tiny pieces). */
#define PIECE_MAX ((size_t)1 << 30)
/* The tag of the packets' messages (the collectives do not match tags). */
#define PACKET_TAG 1

static size_t piece_bytes(void)
{
    const char *env = getenv("RIFFLE_MPI_MESSAGE_BYTES");
    if (env && *env) {
        char *end;
        const unsigned long long v = strtoull(env, &end, 10);
        if (!*end && v > 0 && v <= PIECE_MAX)
            return (size_t)v;
    }
    return PIECE_MAX;
}

/* The rounds in flight.  Round k's packets for owner d are sent from the
 * scatter's buffer where they were packed (out[d], len[d] bytes), those
 * of part q received into a buffer of the gather's own (rbuf, one part
 * after another, rlen[q] bytes each), all as non-blocking messages
 * (req).  The scatter's two buffers take turns, so round k's stay valid
 * while round k+1 is packed. */
struct round {
    uint64_t *scount, *rcount; /* bytes to and from each rank (MPI_Alltoall) */
    size_t *len, *rlen;
    const void **out;
    size_t piece;              /* bytes per message, at most */
    MPI_Request *req;          /* the round's messages */
    MPI_Status *st;            /* their statuses (MPI_STATUSES_IGNORE would do,
                                  but gcc 12 takes it for an array of none) */
    size_t nreq, req_cap;
    void *rbuf;                /* the gather's buffer of the round in flight */
    void *prev;                /* the last round's, received, not yet parsed */
    size_t *prev_len;
};

static int round_init(struct round *r, int size)
{
    memset(r, 0, sizeof *r);
    const size_t n = (size_t)size;
    r->scount = calloc(n, sizeof *r->scount);
    r->rcount = calloc(n, sizeof *r->rcount);
    r->len = calloc(n, sizeof *r->len);
    r->rlen = calloc(n, sizeof *r->rlen);
    r->prev_len = calloc(n, sizeof *r->prev_len);
    r->out = calloc(n, sizeof *r->out);
    r->piece = piece_bytes();
    return r->scount && r->rcount && r->len && r->rlen && r->prev_len && r->out ? 0 : -1;
}

static void round_free(struct round *r)
{
    free(r->scount);
    free(r->rcount);
    free(r->len);
    free(r->rlen);
    free(r->prev_len);
    free(r->out);
    free(r->req);
    free(r->st);
}

/* The messages that len bytes take. */
static size_t pieces(const struct round *r, size_t len)
{
    return len / r->piece + (len % r->piece != 0);
}

/* Room for the round's messages, made before any is posted (a message
 * posted to a peer cannot be taken back).  0, or -1 out of memory. */
static int reserve_messages(struct round *r, int size)
{
    size_t n = 0;
    for (int d = 0; d < size; d++)
        n += pieces(r, r->len[d]) + pieces(r, r->rlen[d]);
    if (n <= r->req_cap)
        return 0;
    if (n > SIZE_MAX / sizeof(MPI_Status))
        return -1;
    MPI_Request *q = realloc(r->req, n * sizeof *q);
    if (q)
        r->req = q;
    MPI_Status *st = q ? realloc(r->st, n * sizeof *st) : NULL;
    if (st)
        r->st = st;
    if (!q || !st)
        return -1;
    r->req_cap = n;
    return 0;
}

/* The next round of this rank's packets (none once done, or after a
 * failure): r->len, r->out and the counts to send. */
static void next_packets(struct job *j, struct round *r, rf_engine_scatter *s, size_t room,
                         int *done)
{
    memset(r->len, 0, (size_t)j->size * sizeof *r->len);
    if (!*done && !j->err.failed) {
        rf_engine_error e;
        if (rf_engine_scatter_next(s, room, r->out, r->len, done, &e) != RF_OK)
            job_fail_engine(j, &e);
    }
    for (int d = 0; d < j->size; d++) {
        r->scount[d] = j->err.failed ? 0 : (uint64_t)r->len[d];
        j->st.sent += r->scount[d];
    }
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

/* The receive side of a round: counts in (MPI_Alltoall), a buffer of the
 * gather's for them and room for the messages; then every rank agrees on
 * failures and on whether every rank is done (MPI_Allreduce), before any
 * packet moves -- a rank that failed posts nothing, so its peers must not
 * either.  Returns -1 when one failed, 1 when this is every rank's last
 * round, else 0. */
static int open_round(struct job *j, struct round *r, rf_engine_gather *g, int done,
                      size_t *total)
{
    MPI_Alltoall(r->scount, 1, MPI_UINT64_T, r->rcount, 1, MPI_UINT64_T, j->comm);
    *total = 0;
    int fits = 1;
    for (int q = 0; q < j->size; q++) {
        fits &= r->rcount[q] <= SIZE_MAX - *total;
        r->rlen[q] = fits ? (size_t)r->rcount[q] : 0;
        *total += r->rlen[q];
    }
    r->rbuf = NULL;
    rf_engine_error e;
    if (!j->err.failed && (!fits || reserve_messages(r, j->size) != 0))
        job_fail(j, "memory exhausted");
    if (!j->err.failed && rf_engine_gather_buffer(g, *total, &r->rbuf, &e) != RF_OK)
        job_fail_engine(j, &e);
    int mine[2] = {done, j->err.failed ? j->rank : j->size}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, j->comm);
    if (all[1] != j->size)
        return -1;
    return all[0] ? 1 : 0;
}

/* One peer's bytes p[0..len) as messages of at most r->piece bytes:
 * received (send 0) or sent.  MPI delivers the messages of one sender,
 * tag and communicator in the order they were sent, so the pieces meet
 * their receives in order. */
static void post(struct job *j, struct round *r, int send, const unsigned char *p, size_t len,
                 int peer)
{
    for (size_t at = 0; at < len; at += r->piece) {
        const int n = (int)(len - at < r->piece ? len - at : r->piece);
        MPI_Request *q = &r->req[r->nreq++];
        if (send)
            MPI_Isend(p + at, n, MPI_BYTE, peer, PACKET_TAG, j->comm, q);
        else
            MPI_Irecv((unsigned char *)(uintptr_t)(p + at), n, MPI_BYTE, peer, PACKET_TAG,
                      j->comm, q);
    }
}

/* Round k's messages: every send, then every receive.  A large message
 * begins with a handshake that the peer answers at its next MPI call;
 * with the sends started first, the handshakes are done by the first
 * MPI_Testall, and the data then flows while the rank parses and packs
 * (posted the other way round, a rate-limited link idled during them:
 * docs/BENCHMARKS_MPI.md).  The rank's packets for itself are copied, as
 * MPI's own all-to-all does: sent to itself, they would pass through the
 * transport's buffers. */
static void post_round(struct job *j, struct round *r)
{
    r->nreq = 0;
    unsigned char *self = NULL;
    size_t at = 0;
    for (int d = 0; d < j->size; d++)
        if (d != j->rank)
            post(j, r, 1, r->out[d], r->len[d], d);
    for (int q = 0; q < j->size; q++) {
        unsigned char *p = (unsigned char *)r->rbuf + at;
        if (q == j->rank)
            self = p;
        else
            post(j, r, 0, p, r->rlen[q], q);
        at += r->rlen[q];
    }
    if (r->len[j->rank])
        memcpy(self, r->out[j->rank], r->len[j->rank]);
}

/* MPI_Testall now and then while this rank works between posting a
 * round's messages and waiting for them: Open MPI (and MPICH without its
 * asynchronous progress thread) moves a large message's data only inside
 * MPI calls. */
static void nudge(struct round *r)
{
    int flag;
    MPI_Testall((int)r->nreq, r->req, &flag, r->st);
}

/* The rounds, pipelined: while round k travels, round k-1 is parsed into
 * the gather and round k+1 is keyed and packed (the scatter and the
 * gather each keep two rounds' buffers).  Ends at the last round, or when
 * every rank has seen that one failed. */
static void rounds(struct job *j, struct round *r, rf_engine_scatter *s, rf_engine_gather *g)
{
    const size_t room = round_room(j->size);
    int done = 0;
    uint64_t total_records = 0, sent = 0;
    next_packets(j, r, s, room, &done);
    for (;;) {
        if (j->show_progress)
            sent = rf_engine_scatter_records(s, &total_records);
        job_progress(j, "exchange", sent, total_records);
        size_t total;
        const int last = open_round(j, r, g, done, &total);
        if (last < 0)
            return;
        post_round(j, r);
        nudge(r);
        parse_prev(j, r, g);
        nudge(r);
        if (!last)
            next_packets(j, r, s, room, &done);
        MPI_Waitall((int)r->nreq, r->req, r->st);
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
