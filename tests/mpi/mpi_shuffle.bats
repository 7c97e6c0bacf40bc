#!/usr/bin/env bats
# riffle-mpi against riffle: with a seed, `mpirun -np P riffle-mpi ARGS -o F`
# writes exactly the bytes of `riffle ARGS -o F`, for every P, with tiny
# exchange rounds (RIFFLE_MPI_ROUND_BYTES) and tiny per-rank budgets that
# make every rank spill; and every failure ends the whole job with one
# message, a non-zero status, no output and no temporary file.
#
# Runs each case on Open MPI's build ($BUILD/riffle-mpi) and, when it was
# built, on MPICH's ($BUILD/mpich/riffle-mpi).  Ranks > 2 share the
# machine's cores (--oversubscribe; MPI told to yield when idle).

load ../lib/bg_jobs

setup() {
    : "${BUILD:=build}"
    : "${RIFFLE:=$BUILD/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    OPENMPI_BIN=$BUILD/riffle-mpi
    MPICH_BIN=$BUILD/mpich/riffle-mpi
    [ -x "$OPENMPI_BIN" ] || skip "riffle-mpi is not built in $BUILD"
    FLAVORS=openmpi
    if [ -x "$MPICH_BIN" ] && command -v mpirun.mpich > /dev/null; then
        FLAVORS="openmpi mpich"
    fi
    # Open MPI: root allowed (containers), shared memory, no busy polling.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
    # MPICH: yield the core after each poll, or waiting ranks starve working ones
    export MPIR_CVAR_POLLS_BEFORE_YIELD=1
    export RIFFLE_MPI_ROUND_BYTES=256
    mkdir -p "$T/out"
}

# The small tmpfs of the full-disk case, the directory another user reaches,
# and a launcher still running (SIGKILL to it ends its ranks too: they lose
# their connection to it), go whatever the test's outcome.
teardown() {
    bg_cleanup
    if [ -d "$T/t1" ] && mountpoint -q "$T/t1"; then umount "$T/t1"; fi
    if [ -n "${OPEN_DIR:-}" ]; then rm -rf "$OPEN_DIR"; fi
}

# launcher FLAVOR: sets `mpirun` and `bin` to the flavour's launcher and
# riffle-mpi, for the tests that run them without `mpi`.
launcher() {
    case $1 in
    openmpi) mpirun=mpirun.openmpi bin=$OPENMPI_BIN ;;
    mpich) mpirun=mpirun.mpich bin=$MPICH_BIN ;;
    esac
}

# mpi FLAVOR P ARGS...: riffle-mpi on P ranks (with --exchange=$EXCHANGE
# when it is set: the ranks of this one machine otherwise each read all of
# a single input themselves, and send each other references into several).
mpi() {
    local flavor=$1 p=$2
    shift 2
    if [ -n "${EXCHANGE:-}" ]; then set -- --exchange="$EXCHANGE" "$@"; fi
    case $flavor in
    openmpi) mpirun.openmpi -np "$p" "$OPENMPI_BIN" "$@" ;;
    mpich) # MPICH's rounds cost more than Open MPI's on oversubscribed
        # cores, so its jobs use rounds 4 times larger, still several per job
        if [ -n "${RIFFLE_MPI_ROUND_BYTES:-}" ]; then
            RIFFLE_MPI_ROUND_BYTES=$((RIFFLE_MPI_ROUND_BYTES * 4)) \
                mpirun.mpich -np "$p" "$MPICH_BIN" "$@"
        else
            mpirun.mpich -np "$p" "$MPICH_BIN" "$@"
        fi ;;
    esac
}

# Varied lines: empty ones, long ones, repeats; deterministic.
lines() { # N [seed]
    awk -v n="$1" -v s="${2:-1}" 'BEGIN { srand(s)
        for (i = 0; i < n; i++) {
            k = int(rand() * 70); if (rand() < 0.05) k = 0
            line = i ":"; for (j = 0; j < k; j++) line = line sprintf("%c", 97 + int(rand() * 26))
            if (rand() < 0.03) line = "same"
            print line } }'
}

# same "P..." ARGS...: riffle-mpi on each P (and each MPI) writes the bytes
# riffle writes with ARGS.
same() {
    local ps=$1 flavor p
    shift
    "$RIFFLE" "$@" -o "$T/want"
    for flavor in $FLAVORS; do
        for p in $ps; do
            rm -f "$T/got"
            run mpi "$flavor" "$p" "$@" -o "$T/got"
            [ "$status" -eq 0 ] || { echo "$flavor P=$p: status $status: $output"; return 1; }
            cmp "$T/want" "$T/got" || { echo "$flavor P=$p differs"; return 1; }
        done
    done
}

# No temporary left in the output directory nor in the given directories.
no_temporaries() {
    local d
    for d in "$T/out" "$@"; do
        [ -z "$(ls -A "$d")" ] || { echo "left in $d:"; ls -A "$d"; return 1; }
    done
}

# same_split P SPEC: riffle-mpi --split=SPEC on P ranks (and each MPI) writes
# riffle's parts, and no other.
same_split() {
    local p=$1 spec=$2 flavor f
    rm -f "$T"/want*
    "$RIFFLE" --seed=4 --header=1 --split="$spec" --output-pattern="$T/want%d" "$T/lines"
    for flavor in $FLAVORS; do
        rm -f "$T"/got*
        run mpi "$flavor" "$p" --seed=4 --header=1 --split="$spec" \
            --output-pattern="$T/got%d" "$T/lines"
        [ "$status" -eq 0 ] || { echo "--split=$spec $flavor P=$p: $output"; return 1; }
        for f in "$T"/want*; do
            cmp "$f" "$T/got${f#"$T/want"}" || { echo "--split=$spec $flavor P=$p"; return 1; }
        done
        [ "$(ls "$T"/got* | wc -l)" -eq "$(ls "$T"/want* | wc -l)" ]
    done
}

# every_case P: each case of the contract on P ranks (and each MPI), one
# mpirun per case: riffle's bytes.  One test per P keeps a failure's P in
# its name; the inputs are small, so the launches dominate the time.
every_case() {
    local p=$1
    lines 2000 > "$T/lines"
    lines 800 | tr '\n' '\0' > "$T/nul"
    printf 'tail' >> "$T/nul"
    lines 500 1 > "$T/a"
    printf 'x1\nx2\nno newline' > "$T/b"
    lines 700 2 > "$T/c"
    printf 'last without newline' >> "$T/c"
    : > "$T/empty"
    printf 'one\ntwo\n' > "$T/two"
    # one record longer than a rank's byte range, for every P > 1
    { lines 50; awk 'BEGIN { s = ""; for (i = 0; i < 20000; i++) s = s "L"; print s }'
      lines 50 3; } > "$T/huge"
    # every rank spills (4 KiB, far below its share), on one thread and two
    same "$p" --seed=5 --memory=4K --threads=1 "$T/lines"
    same "$p" --seed=5 --memory=4K --threads=2 "$T/lines"
    same "$p" --seed=2 --header=3 "$T/lines"
    same "$p" --seed=11 -z "$T/nul"
    same "$p" --seed=3 "$T/a" "$T/b" "$T/c"
    # -n K: K below every rank's share, above it (P > 1), above the count
    same "$p" --seed=9 -n 10 "$T/lines"
    same "$p" --seed=9 -n 1500 "$T/lines"
    same "$p" --seed=9 -n 5000 --header=1 "$T/lines"
    same_split "$p" 3
    same_split "$p" 80%,10%,10%
    same_split "$p" 100,250,*
    same "$p" --seed=1 "$T/empty"
    [ ! -s "$T/got" ]
    # fewer records than ranks (P > 2)
    same "$p" --seed=1 "$T/two"
    same "$p" --seed=8 "$T/huge"
}

@test "every case on 1 rank: the bytes of riffle --seed" {
    every_case 1
}

@test "every case on 2 ranks: the bytes of riffle --seed" {
    every_case 2
}

@test "every case on 3 ranks: the bytes of riffle --seed" {
    every_case 3
}

@test "every case on 4 ranks: the bytes of riffle --seed" {
    every_case 4
}

@test "every case on 5 ranks: the bytes of riffle --seed" {
    every_case 5
}

@test "every case on 7 ranks: the bytes of riffle --seed" {
    every_case 7
}

# The same cases with references sent between the ranks (--exchange=refs),
# as between the ranks of a machine when they do not read all of the input.
@test "every case on 2 ranks, references sent: the bytes of riffle --seed" {
    EXCHANGE=refs every_case 2
}

@test "every case on 5 ranks, references sent: the bytes of riffle --seed" {
    EXCHANGE=refs every_case 5
}

# The same cases with every record's bytes sent (--exchange=bytes), as
# between machines.
@test "every case on 2 ranks, bytes exchanged: the bytes of riffle --seed" {
    EXCHANGE=bytes every_case 2
}

@test "every case on 3 ranks, bytes exchanged: the bytes of riffle --seed" {
    EXCHANGE=bytes every_case 3
}

@test "every case on 5 ranks, bytes exchanged: the bytes of riffle --seed" {
    EXCHANGE=bytes every_case 5
}

# The packets of a round for one owner travel as messages of at most
# RIFFLE_MPI_MESSAGE_BYTES (1 GiB by default, so that no round or record
# meets MPI's 2 GiB): here 100 bytes, which cuts frames and records
# across messages.
@test "every case on 3 ranks, bytes sent in messages of 100 bytes: the bytes of riffle --seed" {
    RIFFLE_MPI_MESSAGE_BYTES=100 EXCHANGE=bytes every_case 3
}

@test "every case on 2 ranks, references sent in messages of 7 bytes: the bytes of riffle --seed" {
    RIFFLE_MPI_MESSAGE_BYTES=7 EXCHANGE=refs every_case 2
}

@test "default rounds and budget give the same bytes" {
    lines 3000 > "$T/in"
    unset RIFFLE_MPI_ROUND_BYTES
    same "1 3" --seed=7 "$T/in"
}

@test "every rank spills beyond a tiny --memory: its temporary files counted" {
    lines 2000 > "$T/in"
    # --stats: one line per rank; field 16 is the temporary files it made
    run mpi openmpi 3 --seed=5 --memory=4K --stats "$T/in" -o "$T/got"
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | grep -c '^riffle-mpi: stats: [0-9]')" -eq 3 ]
    printf '%s\n' "$output" | awk '/^riffle-mpi: stats: [0-9]/ { if ($16 + 0 == 0) bad = 1 }
        END { exit bad }'
}

@test "balance: every rank receives about n/P records, whatever the record sizes" {
    # 35000 records, the first 5000 of 300 bytes, the rest of 6 or 7: the
    # byte ranges hold very different counts, the owners n/P each.  A
    # rank's count is binomial(n, 1/P): within n/P +- 5 sqrt(n/P) + 1 but
    # for a chance below 1e-6 (and the seed fixes it)
    awk 'BEGIN { for (i = 0; i < 35000; i++)
        if (i < 5000) printf "%06d%0294d\n", i, 0; else printf "%06d\n", i }' > "$T/in"
    unset RIFFLE_MPI_ROUND_BYTES
    local flavor
    for flavor in $FLAVORS; do
        run mpi "$flavor" 7 --seed=21 --stats "$T/in" -o "$T/got"
        [ "$status" -eq 0 ]
        # the fields: rank, 5 phase times, sent, received, records, ...
        printf '%s\n' "$output" | awk -v n=35000 -v p=7 '
            /^riffle-mpi: stats: [0-9]/ { ranks++; sum += $11
                d = $11 - n / p; if (d < 0) d = -d
                if (d > 5 * sqrt(n / p) + 1) { print "rank " $3 ": " $11 " records"; bad = 1 } }
            END { if (ranks != p || sum != n) { print ranks " ranks, " sum " records"; bad = 1 }
                  exit bad }'
    done
    cmp <(sort "$T/in") <(sort "$T/got")
}

@test "ranks of one machine send references: every rank, a few bytes a record" {
    # 100000 lines of 50 bytes (5 MB): a reference is about 3 bytes; --stats
    # gives each rank's MB sent and the ranks it referred to (field 18)
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%08d %040d\n", i, i * 7 }' > "$T/in"
    unset RIFFLE_MPI_ROUND_BYTES
    local p
    for p in 2 3; do
        run mpi openmpi "$p" --exchange=refs --seed=4 --stats "$T/in" -o "$T/got"
        [ "$status" -eq 0 ]
        printf '%s\n' "$output" | awk -v p="$p" '
            /^riffle-mpi: stats: [0-9]/ { ranks++; sent += $9; if ($18 != p || $20 != 0) bad = 1 }
            END { print "sent " sent " MB for 5 MB"; exit !(ranks == p && !bad && sent < 0.4) }'
        "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
        # and none with --exchange=bytes, nor for an input larger than a
        # rank's --memory (read in any order, it would have to stay in memory)
        local opt
        for opt in --exchange=bytes --memory=1M; do
            run mpi openmpi "$p" --exchange=refs "$opt" --seed=4 --stats "$T/in" -o "$T/got"
            [ "$status" -eq 0 ]
            printf '%s\n' "$output" | awk '/^riffle-mpi: stats: [0-9]/ { if ($18 != 0) bad = 1 }
                END { exit bad }'
            "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
        done
    done
}

@test "ranks of one machine read one input themselves: nothing sent, every rank" {
    # --stats: field 9 the MB sent, 11 the records, 20 whether the rank read
    # its records itself (direct)
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%08d %040d\n", i, i * 7 }' > "$T/in"
    cp "$T/in" "$T/in2"
    unset RIFFLE_MPI_ROUND_BYTES
    local flavor p
    for flavor in $FLAVORS; do
        for p in 2 3; do
            run mpi "$flavor" "$p" --seed=4 --stats "$T/in" -o "$T/got"
            [ "$status" -eq 0 ]
            printf '%s\n' "$output" | awk -v p="$p" '
                /^riffle-mpi: stats: [0-9]/ { ranks++; sent += $9; records += $11
                    if ($20 != 1) bad = 1 }
                END { exit !(ranks == p && !bad && sent == 0 && records == 100000) }'
            "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
        done
    done
    # auto reads directly only one input within --memory
    local args
    for args in "--memory=1M $T/in" "$T/in $T/in2" "--exchange=refs $T/in" "--exchange=bytes $T/in"; do
        # shellcheck disable=SC2086
        run mpi openmpi 2 --seed=4 --stats $args -o "$T/got"
        [ "$status" -eq 0 ]
        printf '%s\n' "$output" | awk '/^riffle-mpi: stats: [0-9]/ { if ($20 != 0) bad = 1 }
            END { exit bad }'
    done
    # --exchange=direct: whatever --memory says of the mapping (the order
    # must still fit), but one input only
    run mpi openmpi 2 --exchange=direct --memory=4M --seed=4 --stats "$T/in" -o "$T/got"
    [ "$status" -eq 0 ]
    "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
    rm -f "$T/got"
    run mpi openmpi 2 --exchange=direct --seed=4 "$T/in" "$T/in2" -o "$T/got"
    [ "$status" -ne 0 ]
    [[ "$output" == *"--exchange=direct reads one regular input file, the same on every rank"* ]]
    [ "$(printf '%s\n' "$output" | grep -c 'exchange=direct')" -eq 1 ]
    [ ! -e "$T/got" ]
    no_temporaries
}

@test "--exchange takes auto, direct, refs or bytes" {
    printf 'a\nb\n' > "$T/in"
    run mpi openmpi 1 --exchange=pigeons --seed=1 "$T/in" -o "$T/got"
    [ "$status" -ne 0 ]
    [[ "$output" == *"invalid exchange 'pigeons' (auto, direct, refs or bytes)"* ]]
    [ ! -e "$T/got" ]
}

@test "wire format 2: at most 1.08 bytes sent per byte of the records that travel" {
    # 100000 lines of 50 bytes (5 MB): each record goes as a one-byte gap and
    # its bytes, plus 64 bytes per frame; --stats gives each rank's bytes
    # sent (its own included) and those of records that stayed in the rank
    # without travelling (MB, 3 decimals)
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%08d %040d\n", i, i * 7 }' > "$T/in"
    [ "$(wc -c < "$T/in")" -eq 5000000 ]
    unset RIFFLE_MPI_ROUND_BYTES
    local p
    for p in 2 3 5; do
        run mpi openmpi "$p" --exchange=bytes --seed=4 --stats "$T/in" -o "$T/got"
        [ "$status" -eq 0 ]
        printf '%s\n' "$output" | awk -v p="$p" '
            /^riffle-mpi: stats: [0-9]/ { ranks++; sent += $9; kept += $17 }
            END { r = sent / (5.0 - kept)
                  print "sent " sent " MB, kept " kept " MB: " r " per byte that travels"
                  exit !(ranks == p && r >= 1.0 && r <= 1.08) }'
        "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
    done
}

@test "one rank sends nothing: the one-process engine writes every record" {
    awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%08d %040d\n", i, i * 7 }' > "$T/in"
    run mpi openmpi 1 --seed=4 --stats "$T/in" -o "$T/got"
    [ "$status" -eq 0 ]
    # no rounds, nothing sent or received, every record counted
    printf '%s\n' "$output" | awk '
        /^riffle-mpi: stats: [0-9]/ { ranks++; sent = $9; got = $10; recs = $11; rounds = $12 }
        END { print "sent " sent " MB, received " got " MB, " recs " records, " rounds " rounds"
              exit !(ranks == 1 && sent == 0 && got == 0 && recs == 20000 && rounds == 0) }'
    "$RIFFLE" --seed=4 "$T/in" | cmp - "$T/got"
}

@test "-o naming the input: replaced at the end, as riffle does" {
    lines 700 > "$T/a"
    cp "$T/a" "$T/b"
    "$RIFFLE" --seed=12 "$T/a" -o "$T/a"
    run mpi openmpi 3 --seed=12 "$T/b" -o "$T/b"
    [ "$status" -eq 0 ]
    cmp "$T/a" "$T/b"
}

@test "-n 0 with a header: the header alone" {
    lines 100 > "$T/in"
    same "2" --seed=9 -n 0 --header=1 "$T/in"
    head -n 1 "$T/in" | cmp - "$T/got"
}

@test "--split of a -n K head, with a header" {
    lines 1500 > "$T/in"
    local flavor i
    "$RIFFLE" --seed=3 -n 100 --header=1 --split=3 --output-pattern="$T/want%d" "$T/in"
    for flavor in $FLAVORS; do
        rm -f "$T"/got*
        run mpi "$flavor" 3 --seed=3 -n 100 --header=1 --split=3 --output-pattern="$T/got%d" "$T/in"
        [ "$status" -eq 0 ]
        for i in 0 1 2; do cmp "$T/want$i" "$T/got$i"; done
    done
}

@test "--split counts that do not add up: riffle's message, no part" {
    lines 100 > "$T/in"
    run mpi openmpi 3 --seed=1 --split=10,20 --output-pattern="$T/out/p%d" "$T/in"
    [ "$status" -ne 0 ]
    [[ "$output" == *"riffle-mpi: the --split counts add up to 30, but 100 records are output"* ]]
    no_temporaries
}

@test "--rng and --random-source: riffle's keys" {
    lines 600 > "$T/in"
    same "3" --seed=6 --rng=pcg64 "$T/in"
    head -c 32 /dev/zero | tr '\0' 'k' > "$T/key"
    same "2" --random-source="$T/key" "$T/in"
}

@test "without a seed: a permutation of the input, the same on every rank" {
    lines 2000 > "$T/in"
    run mpi openmpi 4 "$T/in" -o "$T/got"
    [ "$status" -eq 0 ]
    cmp <(sort "$T/in") <(sort "$T/got")
    ! cmp -s "$T/in" "$T/got"
}

@test "a missing input: one message, non-zero, no output, no temporary" {
    lines 10 > "$T/in"
    local flavor
    for flavor in $FLAVORS; do
        run mpi "$flavor" 3 --seed=1 "$T/in" "$T/missing" -o "$T/out/o"
        [ "$status" -ne 0 ]
        [ "$(printf '%s\n' "$output" | grep -c "^riffle-mpi: ")" -eq 1 ]
        [[ "$output" == *"riffle-mpi: rank 0: $T/missing: No such file or directory"* ]]
        [ ! -e "$T/out/o" ]
        no_temporaries
    done
}

@test "a compressed input: refused before any work, one message, nothing left" {
    lines 10 > "$T/in"
    lines 10 | gzip > "$T/in.gz"
    local flavor p
    for flavor in $FLAVORS; do
        for p in 1 3; do
            run mpi "$flavor" "$p" --seed=1 "$T/in" "$T/in.gz" -o "$T/out/o"
            [ "$status" -ne 0 ]
            [ "$(printf '%s\n' "$output" | grep -c "^riffle-mpi: ")" -eq 1 ]
            [[ "$output" == *"riffle-mpi: $T/in.gz: gzip-compressed input is not read by riffle-mpi"* ]]
            [ ! -e "$T/out/o" ]
            no_temporaries
        done
    done
}

@test "an output directory that cannot be written: message, non-zero, nothing left" {
    lines 10 > "$T/in"
    local flavor mpirun bin
    for flavor in $FLAVORS; do
        run mpi "$flavor" 2 --seed=1 "$T/in" -o "$T/nodir/o"
        [ "$status" -ne 0 ]
        [[ "$output" == *"riffle-mpi: rank 0: $T/nodir/o: No such file or directory"* ]]
        [ ! -e "$T/nodir" ]
    done
    # a directory without write permission: root writes anywhere, so the job
    # runs as nobody (util-linux setpriv), from a directory nobody reaches
    OPEN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/riffle-mpi.XXXXXX")
    chmod 755 "$OPEN_DIR"
    mkdir -m 755 "$OPEN_DIR/ro"
    mkdir -m 777 "$OPEN_DIR/tmp"
    cp "$T/in" "$OPEN_DIR/in"
    chmod 644 "$OPEN_DIR/in"
    local as_user=()
    if [ "$(id -u)" -eq 0 ]; then
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    else
        chmod 555 "$OPEN_DIR/ro"
    fi
    for flavor in $FLAVORS; do
        launcher "$flavor"
        cp "$bin" "$OPEN_DIR/riffle-mpi-$flavor"
        "${as_user[@]}" test -x "$OPEN_DIR/riffle-mpi-$flavor" ||
            skip "user nobody cannot reach $OPEN_DIR"
        "${as_user[@]}" test ! -w "$OPEN_DIR/ro"
        run "${as_user[@]}" "$mpirun" -np 2 "$OPEN_DIR/riffle-mpi-$flavor" --seed=1 \
            --memory=4K -T "$OPEN_DIR/tmp" "$OPEN_DIR/in" -o "$OPEN_DIR/ro/o"
        [ "$status" -ne 0 ]
        [ "$(printf '%s\n' "$output" | grep -c "^riffle-mpi: ")" -eq 1 ]
        [[ "$output" == *"riffle-mpi: rank 0: $OPEN_DIR/ro/o: Permission denied"* ]]
        [ -z "$(ls -A "$OPEN_DIR/ro")" ]
        [ -z "$(ls -A "$OPEN_DIR/tmp")" ]
    done
}

@test "an output that cannot take writes at offsets (a pipe) is refused" {
    lines 10 > "$T/in"
    run mpi openmpi 2 --seed=1 "$T/in" -o /dev/stdout
    [ "$status" -ne 0 ]
    [[ "$output" == *"riffle-mpi: rank 0: /dev/stdout: the ranks write at offsets"* ]]
}

@test "a full temporary file system on one rank: that rank named, nothing left" {
    [ "$(id -u)" = 0 ] || skip "mounting a small tmpfs needs root"
    mkdir -p "$T/t0" "$T/t1" "$T/t2"
    mount -t tmpfs -o size=64k tmpfs "$T/t1" 2> /dev/null || skip "cannot mount a tmpfs here"
    lines 30000 > "$T/in"
    # each rank its own -T: rank 1's is the 64 KiB tmpfs
    cat > "$T/wrap" <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}
exec "\$BIN" -T "$T/t\$r" "\$@"
EOF
    chmod +x "$T/wrap"
    local flavor mpirun bin
    for flavor in $FLAVORS; do
        launcher "$flavor"
        BIN=$bin run "$mpirun" -np 3 "$T/wrap" --seed=1 --memory=16K "$T/in" -o "$T/out/o"
        [ "$status" -ne 0 ]
        [[ "$output" == *"riffle-mpi: rank 1: "*"No space left on device"* ]]
        [ ! -e "$T/out/o" ]
        no_temporaries "$T/t0" "$T/t1" "$T/t2"
    done
}

@test "standard input and a missing -o are refused with a clear message" {
    local flavor
    for flavor in $FLAVORS; do
        run mpi "$flavor" 2 --seed=1 - -o "$T/out/o"
        [ "$status" -ne 0 ]
        [[ "$output" == *"riffle-mpi: standard input cannot be read"* ]]
    done
    run mpi openmpi 2 --seed=1
    [ "$status" -ne 0 ]
    [[ "$output" == *"riffle-mpi: no input file"* ]]
    printf 'a\n' > "$T/in"
    run mpi openmpi 2 --seed=1 "$T/in"
    [ "$status" -ne 0 ]
    [[ "$output" == *"riffle-mpi: no output: -o FILE is required"* ]]
    no_temporaries
}

@test "--progress: one line, from rank 0" {
    # the first phase: each rank reading all of the one input (direct), or
    # counting its part before the exchange (references)
    lines 500 > "$T/in"
    local flavor
    for flavor in $FLAVORS; do
        run mpi "$flavor" 3 --seed=1 --progress "$T/in" -o "$T/out/o"
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "$output" | grep -c 'riffle-mpi: read')" -eq 1 ]
        run mpi "$flavor" 3 --exchange=refs --seed=1 --progress "$T/in" -o "$T/out/o"
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "$output" | grep -c 'riffle-mpi: count')" -eq 1 ]
    done
}

# Hydra (MPICH's mpiexec) forwards SIGTERM to the ranks and waits for them,
# as Open MPI's mpirun does; but its own exit status after the signal varies
# from run to run (0 or 15), so only Open MPI's is checked.  The ranks'
# clean-up is checked on both.
@test "SIGTERM to mpirun: every rank removes its temporaries" {
    mkdir -p "$T/tmp"
    lines 50000 > "$T/in"
    # rounds of a usual size: this test is about the signal, not the rounds
    export RIFFLE_MPI_ROUND_BYTES=65536
    local flavor mpirun bin pid
    for flavor in $FLAVORS; do
        launcher "$flavor"
        : > "$T/err"
        # a tiny budget: every rank spills; RIFFLE_MPI_PAUSE holds every rank
        # where the ordering begins, its temporaries made, until the signal
        RIFFLE_MPI_PAUSE=order default_signals "$mpirun" -np 2 "$bin" --seed=1 --progress \
            --memory=8K -T "$T/tmp" "$T/in" -o "$T/out/o" > "$T/log" 2> "$T/err" 3>&- &
        pid=$!
        bg_track "$pid"
        # the signal once rank 0 reports the ordering
        wait_until 60 grep -q order "$T/err" ||
            { echo "$flavor: no order phase" >&2; cat "$T/err" >&2; return 1; }
        [ -n "$(ls -A "$T/tmp")" ] || [ -n "$(ls -A "$T/out")" ] # temporaries exist
        kill -TERM "$pid"
        bg_reap "$pid" || { echo "$flavor: the launcher outlived SIGTERM" >&2; return 1; }
        [ "$flavor" = mpich ] || [ "$BG_STATUS" -ne 0 ] ||
            { echo "$flavor: status 0 after SIGTERM" >&2; return 1; }
        [ ! -e "$T/out/o" ]
        no_temporaries "$T/tmp"
    done
}
