# bench_lib.sh -- shell helpers shared by bench_cli.sh and bench_external.sh
# (sourced, not run): the generated input files, the tool checks and the
# machine header, so that both benchmarks shuffle the same data and name the
# machine the same way.

# bench_require NAME: /usr/bin/time (peak RSS) and perl (the data) are needed.
bench_require() {
    if [ ! -x /usr/bin/time ]; then
        echo "$1: /usr/bin/time is missing: install the Debian package 'time'" >&2
        exit 1
    fi
    command -v perl > /dev/null || { echo "$1: perl is needed to generate the data" >&2; exit 1; }
}

# bench_gen SIZE FILE: deterministic lines until FILE holds SIZE bytes: a line
# number, a space and 2-81 random letters (~50 bytes per line on average, every
# line distinct).  An existing FILE of at least SIZE bytes is reused.
bench_gen() {
    [ -f "$2" ] && [ "$(wc -c < "$2")" -ge "$1" ] && return 0
    perl -e '
        srand(1);
        my $s = join("", map { chr(97 + int(rand(26))) } 1 .. 2000);
        my ($n, $i, $size) = (0, 0, $ARGV[0]);
        while ($n < $size) {
            my $line = $i++ . " " . substr($s, int(rand(1900)), 2 + int(rand(80))) . "\n";
            print $line;
            $n += length($line);
        }' "$1" > "$2.part" && mv "$2.part" "$2"
}

bench_load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }

# bench_machine: the machine, RAM, date and load, for the report's header.
bench_machine() {
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr);" \
         "$(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(bench_load)"
}
