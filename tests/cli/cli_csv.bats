#!/usr/bin/env bats
# --csv: CSV records (RFC 4180) as the records of riffle, riffle sample and
# the splits by key.  A record ends at a line feed outside double quotes, so
# quoted fields keep their commas, doubled quotes, line feeds and CR LF
# endings; every engine (memory, external, streamed head, threads) gives the
# same seeded bytes; an input that ends inside quotes fails naming its file
# and the line where the record starts, with no output; a key or group is a
# column named in the header.  scatter, gather and riffle-mpi refuse --csv.

setup() {
    : "${BUILD:=build}"
    : "${RIFFLE:=$BUILD/riffle}"
    case $RIFFLE in /*) ;; *) RIFFLE=$PWD/$RIFFLE ;; esac
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
}

# A CSV file of N records after a header "id,user,text": ids from 1, users
# u0..u(K-1), texts that hold commas, doubled quotes, line feeds and CR LF
# in quotes; every record ends in CR LF when CRLF=1.
make_csv() { # file n keys [crlf]
    python3 - "$@" <<'EOF'
import sys
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
eol = "\r\n" if len(sys.argv) > 4 and sys.argv[4] == "1" else "\n"
texts = ['plain', '"a, b"', '"say ""hi"""', '"two\nlines"', '"crlf\r\ninside"', '""', '"x,\n""y"",\nz"']
with open(path, "w", newline="") as f:
    f.write('id,user,"the text"' + eol)
    for i in range(1, n + 1):
        user = "u%d" % ((i * 7919) % k)
        if i % 3 == 0:
            user = '"%s"' % user  # the same key, quoted
        f.write("%d,%s,%s%s" % (i, user, texts[i % len(texts)], eol))
EOF
}

# The CSV records of a file, one a line, sorted: line feeds and CRs inside
# a record written as \n and \r (a record's closing LF dropped).
records() { # file
    python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
recs, cur, q = [], bytearray(), False
for b in data:
    if b == 0x22:
        q = not q
    if b == 0x0A and not q:
        recs.append(bytes(cur)); cur = bytearray(); continue
    cur.append(b)
if cur:
    recs.append(bytes(cur))
for r in sorted(recs):
    sys.stdout.write(r.decode().replace("\r", "\\r").replace("\n", "\\n") + "\n")
EOF
}

# The first field of each record (its id), in order.
ids() { # file
    records_in_order "$1" | cut -d, -f1
}

records_in_order() { # file
    python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
cur, q = bytearray(), False
for b in data:
    if b == 0x22:
        q = not q
    if b == 0x0A and not q:
        sys.stdout.write(bytes(cur).decode().replace("\r", "\\r").replace("\n", "\\n") + "\n")
        cur = bytearray(); continue
    cur.append(b)
EOF
}

@test "quoted commas, doubled quotes, line feeds and CR LF stay inside their record" {
    make_csv "$T/in.csv" 500 20 1
    "$RIFFLE" --csv --seed=1 "$T/in.csv" > "$T/out"
    [ "$(records "$T/out")" = "$(records "$T/in.csv")" ]
    [ "$(records "$T/in.csv" | wc -l)" -eq 501 ]
    # a line tool cuts them: plain riffle gives more, different records
    "$RIFFLE" --seed=1 "$T/in.csv" > "$T/lines"
    [ "$(records "$T/lines")" != "$(records "$T/in.csv")" ]
    # the output is a reordering: not the input itself
    ! cmp -s "$T/out" "$T/in.csv"
}

@test "--header=1 keeps the header first; -n K is the head of the full shuffle" {
    make_csv "$T/in.csv" 300 10
    "$RIFFLE" --csv --header=1 --seed=2 "$T/in.csv" > "$T/full"
    [ "$(head -n 1 "$T/full")" = 'id,user,"the text"' ]
    [ "$(records "$T/full")" = "$(records "$T/in.csv")" ]
    "$RIFFLE" --csv --header=1 --seed=2 -n 7 "$T/in.csv" > "$T/head"
    [ "$(records_in_order "$T/head")" = "$(records_in_order "$T/full" | head -n 8)" ]
    [ "$(records_in_order "$T/head" | wc -l)" -eq 8 ]
}

@test "seeded bytes are the same in memory, external, threaded, streamed and from a pipe" {
    make_csv "$T/in.csv" 3000 40 1
    "$RIFFLE" --csv --header=1 --seed=3 "$T/in.csv" > "$T/mem"
    for m in 4K 16K 64K; do
        cmp "$T/mem" <("$RIFFLE" --csv --header=1 --seed=3 --memory=$m -T "$T/tmp" "$T/in.csv")
        cmp "$T/mem" <("$RIFFLE" --csv --header=1 --seed=3 --memory=$m -T "$T/tmp" - < "$T/in.csv")
    done
    for t in 1 2 4; do
        cmp "$T/mem" <("$RIFFLE" --csv --header=1 --seed=3 --threads=$t "$T/in.csv")
    done
    cmp "$T/mem" <(cat "$T/in.csv" | "$RIFFLE" --csv --header=1 --seed=3)
    [ -z "$(ls -A "$T/tmp")" ]
    # -n through the streamed head and the external engine
    "$RIFFLE" --csv --header=1 --seed=3 -n 50 "$T/in.csv" > "$T/n50"
    cmp "$T/n50" <("$RIFFLE" --csv --header=1 --seed=3 -n 50 --memory=4K -T "$T/tmp" "$T/in.csv")
}

@test "--split: the parts are the full shuffle cut, each starting with the header" {
    make_csv "$T/in.csv" 400 10
    "$RIFFLE" --csv --header=1 --seed=4 "$T/in.csv" > "$T/full"
    "$RIFFLE" --csv --header=1 --seed=4 --split=80%,20% --output-pattern="$T/p%d.csv" "$T/in.csv"
    [ "$(head -n 1 "$T/p0.csv")" = 'id,user,"the text"' ]
    [ "$(head -n 1 "$T/p1.csv")" = 'id,user,"the text"' ]
    [ "$(records_in_order "$T/p0.csv" | wc -l)" -eq 321 ]
    [ "$(records_in_order "$T/p1.csv" | wc -l)" -eq 81 ]
    diff <(records_in_order "$T/full") \
         <({ records_in_order "$T/p0.csv"; records_in_order "$T/p1.csv" | tail -n +2; })
}

@test "an unterminated quote: the file and line named, exit 1, no output, no temporary" {
    make_csv "$T/in.csv" 200 10
    printf '201,u1,"never closed\nmore\n' >> "$T/in.csv"
    line=$(( $(wc -l < "$T/in.csv") - 1 ))
    for m in 1G 4K; do
        run "$RIFFLE" --csv --header=1 --seed=5 --memory=$m -T "$T/tmp" -o "$T/out" "$T/in.csv"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: $T/in.csv: unterminated quote in the CSV record starting at line $line" ]
        [ ! -e "$T/out" ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
    # a first input left open is not closed by the next one
    printf 'a,"open\n' > "$T/a.csv"; printf 'b"\n' > "$T/b.csv"
    run "$RIFFLE" --csv "$T/a.csv" "$T/b.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/a.csv: unterminated quote in the CSV record starting at line 1" ]
    run "$RIFFLE" --csv --split=2 --output-pattern="$T/q%d" "$T/in.csv"
    [ "$status" -eq 1 ]
    [ ! -e "$T/q0" ] && [ ! -e "$T/q1" ]
}

@test "compressed CSV input: the same bytes as the plain file" {
    make_csv "$T/in.csv" 500 10 1
    gzip -c "$T/in.csv" > "$T/in.csv.gz"
    cmp <("$RIFFLE" --csv --header=1 --seed=6 "$T/in.csv") \
        <("$RIFFLE" --csv --header=1 --seed=6 "$T/in.csv.gz")
    cmp <("$RIFFLE" --csv --header=1 --seed=6 "$T/in.csv") \
        <("$RIFFLE" --csv --header=1 --seed=6 --memory=4K -T "$T/tmp" "$T/in.csv.gz")
    # an unterminated quote inside a compressed file is found too
    printf '9,u,"open\n' | gzip -c > "$T/bad.csv.gz"
    run "$RIFFLE" --csv "$T/bad.csv.gz"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/bad.csv.gz: unterminated quote in the CSV record starting at line 1" ]
}

@test "--csv refuses -z, -e, -i and -r" {
    printf 'a\n' > "$T/in.csv"
    for opt in -z "-e x" -r; do
        run "$RIFFLE" --csv $opt "$T/in.csv"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: cannot combine --csv and ${opt%% *}" ]
    done
    run "$RIFFLE" --csv -i 1-3
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --csv and -i" ]
}

@test "--key=COLUMN --split: no key in two parts, a quoted key is the same key" {
    make_csv "$T/in.csv" 600 30 1
    "$RIFFLE" --csv --header=1 --seed=7 --key=user --split=70%,30% \
        --output-pattern="$T/k%d.csv" "$T/in.csv"
    users() { records_in_order "$1" | tail -n +2 | cut -d, -f2 | tr -d '"' | sort -u; }
    [ -n "$(users "$T/k0.csv")" ] && [ -n "$(users "$T/k1.csv")" ]
    [ -z "$(comm -12 <(users "$T/k0.csv") <(users "$T/k1.csv"))" ]
    # every record once, the header at the top of each part
    [ "$(head -n 1 "$T/k1.csv")" = $'id,user,"the text"\r' ]
    diff <(records "$T/in.csv" | grep -v '^id,') \
         <({ records_in_order "$T/k0.csv" | tail -n +2; records_in_order "$T/k1.csv" | tail -n +2; } | sort)
    # the column by its number, and a quoted header name: the same parts
    "$RIFFLE" --csv --header=1 --seed=7 --key=2 --split=70%,30% \
        --output-pattern="$T/n%d.csv" "$T/in.csv"
    cmp "$T/k0.csv" "$T/n0.csv"
    "$RIFFLE" --csv --header=1 --seed=7 --key="the text" --split=2 \
        --output-pattern="$T/t%d.csv" "$T/in.csv"
    [ -s "$T/t0.csv" ] && [ -s "$T/t1.csv" ]
}

@test "--key=COLUMN on compressed input: the parts of the plain file; corrupt input refused" {
    make_csv "$T/in.csv" 300 10 1
    gzip -c "$T/in.csv" > "$T/in.csv.gz"
    "$RIFFLE" --csv --header=1 --seed=12 --key=user --split=2 --output-pattern="$T/p%d" "$T/in.csv"
    "$RIFFLE" --csv --header=1 --seed=12 --key=user --split=2 --output-pattern="$T/z%d" "$T/in.csv.gz"
    cmp "$T/p0" "$T/z0"
    cmp "$T/p1" "$T/z1"
    head -c 200 "$T/in.csv.gz" > "$T/cut.gz"
    run "$RIFFLE" --csv --header=1 --key=user --split=2 --output-pattern="$T/c%d" "$T/cut.gz"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/cut.gz: truncated gzip data at byte 200" ]
    [ ! -e "$T/c0" ] && [ ! -e "$T/c1" ]
}

@test "--key=COLUMN errors: unknown column, no header, a record without the column" {
    make_csv "$T/in.csv" 20 3
    run "$RIFFLE" --csv --header=1 --key=nope --split=2 --output-pattern="$T/e%d" "$T/in.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/in.csv: no key column 'nope' in the CSV header" ]
    [ ! -e "$T/e0" ] && [ ! -e "$T/e1" ]
    run "$RIFFLE" --csv --key=user --split=2 --output-pattern="$T/e%d" "$T/in.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/in.csv: the key column 'user' is a name, but there is no header (give --header=1, or a column number)" ]
    printf 'a,b\n1,x\n"2\nstill 2"\n3,z\n' > "$T/short.csv"
    run "$RIFFLE" --csv --header=1 --key=b --split=2 --output-pattern="$T/e%d" "$T/short.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/short.csv:3: missing key column 'b'" ]
    [ ! -e "$T/e0" ]
}

@test "sample --csv: whole records, the header first and never chosen" {
    make_csv "$T/in.csv" 300 10 1
    "$RIFFLE" sample --csv --header=1 --seed=8 -n 25 "$T/in.csv" > "$T/s"
    [ "$(head -n 1 "$T/s")" = $'id,user,"the text"\r' ]
    [ "$(records_in_order "$T/s" | wc -l)" -eq 26 ]
    [ -z "$(comm -13 <(records "$T/in.csv") <(records "$T/s"))" ]
    # the same sample from a pipe; --prob keeps input order
    cmp "$T/s" <("$RIFFLE" sample --csv --header=1 --seed=8 -n 25 < "$T/in.csv")
    "$RIFFLE" sample --csv --header=1 --seed=8 --prob=0.3 "$T/in.csv" > "$T/p"
    ids "$T/p" | tail -n +2 | sort -c -n
    [ "$(records_in_order "$T/p" | wc -l)" -gt 40 ]
    # the header is not a candidate: --header=1 samples what tail -n +2 gives
    tail -n +2 "$T/in.csv" > "$T/body.csv"
    cmp <(tail -n +2 "$T/p") <("$RIFFLE" sample --csv --seed=8 --prob=0.3 "$T/body.csv")
}

@test "sample on compressed input: the sample of the plain file; a corrupt one prints nothing" {
    make_csv "$T/in.csv" 300 10 1
    gzip -c "$T/in.csv" > "$T/in.csv.gz"
    cmp <("$RIFFLE" sample --csv --header=1 --seed=13 -n 20 "$T/in.csv") \
        <("$RIFFLE" sample --csv --header=1 --seed=13 -n 20 "$T/in.csv.gz")
    cmp <("$RIFFLE" sample --csv --header=1 --seed=13 --group=user -n 2 "$T/in.csv") \
        <("$RIFFLE" sample --csv --header=1 --seed=13 --group=user -n 2 < "$T/in.csv.gz")
    head -c 200 "$T/in.csv.gz" > "$T/cut.gz"
    run "$RIFFLE" sample --csv --seed=13 --prob=0.5 "$T/cut.gz"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/cut.gz: truncated gzip data at byte 200" ]
}

@test "sample --csv --key/--group by column name" {
    make_csv "$T/in.csv" 400 12
    "$RIFFLE" sample --csv --header=1 --seed=9 --key=user -n 3 "$T/in.csv" > "$T/k"
    users() { records_in_order "$1" | tail -n +2 | cut -d, -f2 | tr -d '"' | sort -u; }
    [ "$(users "$T/k" | wc -l)" -eq 3 ]
    # every record of a chosen user, quoted or not
    for u in $(users "$T/k"); do
        [ "$(records_in_order "$T/k" | cut -d, -f2 | tr -d '"' | grep -cx "$u")" -eq \
          "$(records_in_order "$T/in.csv" | cut -d, -f2 | tr -d '"' | grep -cx "$u")" ]
    done
    cmp "$T/k" <("$RIFFLE" sample --csv --header=1 --seed=9 --key=2 -n 3 "$T/in.csv")
    "$RIFFLE" sample --csv --header=1 --seed=9 --group=user -n 2 "$T/in.csv" > "$T/g"
    [ "$(records_in_order "$T/g" | tail -n +2 | cut -d, -f2 | tr -d '"' | sort | uniq -c |
         awk '$1 != 2' | wc -l)" -eq 0 ]
    [ "$(users "$T/g" | wc -l)" -eq 12 ]
    run "$RIFFLE" sample --csv --header=1 --group=nope -n 1 "$T/in.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/in.csv: no group column 'nope' in the CSV header" ]
    run "$RIFFLE" sample --csv --key=user -n 1 "$T/in.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/in.csv: the key column 'user' is a name, but there is no header (give --header=1, or a column number)" ]
}

@test "sample --csv errors: unterminated quote with its line, -z and --weights refused" {
    printf 'a,b\n1,"x\n2,y\n' > "$T/bad.csv"
    run "$RIFFLE" sample --csv --seed=1 -n 5 "$T/bad.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/bad.csv: unterminated quote in the CSV record starting at line 2" ]
    run "$RIFFLE" sample --csv -z -n 1 "$T/bad.csv"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --csv and -z" ]
    run "$RIFFLE" sample --csv -w 1 -n 1 "$T/bad.csv"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --csv and --weights" ]
}

@test "--lockstep --csv: a header with a quoted line feed counts as one record" {
    printf 'h,"two\nlines"\n1,a\n2,b\n3,c\n' > "$T/a.csv"
    printf 'h,x\n1,A\n2,B\n3,C\n' > "$T/b.csv"
    "$RIFFLE" --lockstep --csv --header=1 --seed=10 "$T/a.csv" "$T/b.csv" \
        -o "$T/a.out" -o "$T/b.out"
    [ "$(tail -n +3 "$T/a.out" | cut -d, -f1)" = "$(tail -n +2 "$T/b.out" | cut -d, -f1)" ]
}

@test "scatter, gather and riffle-mpi refuse --csv" {
    printf 'a\n' > "$T/in.csv"
    run "$RIFFLE" scatter --csv --task=0 --tasks=1 --dir="$T/d" "$T/in.csv"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle scatter: unrecognized option '--csv'" ]
    run "$RIFFLE" gather --csv --dir="$T/d"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle gather: unrecognized option '--csv'" ]
    [ -x "$BUILD/riffle-mpi" ] || skip "riffle-mpi is not built in $BUILD"
    run "$BUILD/riffle-mpi" --csv "$T/in.csv"
    [ "$status" -ne 0 ]
    [[ "${lines[0]}" == *"unrecognized option '--csv'" ]]
}

@test "-d sets the CSV field delimiter of --key; sample --header works on lines too" {
    printf 'id;user\n1;"a;1"\n2;b\n3;"a;1"\n4;b\n5;c\n' > "$T/semi.csv"
    "$RIFFLE" --csv --header=1 -d ';' --key=user --seed=11 --split=2 \
        --output-pattern="$T/s%d.csv" "$T/semi.csv"
    # "a;1" is one key: both of its records in one part
    [ "$(cat "$T/s0.csv" "$T/s1.csv" | grep -c '"a;1"')" -eq 2 ]
    [ "$(grep -c '"a;1"' "$T/s0.csv")" -ne 1 ]
    printf 'head\n1\n2\n3\n4\n' > "$T/lines"
    "$RIFFLE" sample --header=1 --seed=1 -n 2 "$T/lines" > "$T/out"
    [ "$(head -n 1 "$T/out")" = head ]
    [ "$(tail -n +2 "$T/out" | grep -c '^[1-4]$')" -eq 2 ]
}
