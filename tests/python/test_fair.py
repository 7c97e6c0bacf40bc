"""riffle.fair_commit and riffle.fair_deal: the deal of `riffle deal
--commit`, card for card, and the commitment `riffle verify` checks."""
import hashlib
import subprocess

import numpy as np
import pytest

import riffle

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]


def names(order):
    return [RANKS[c % 13] + "SHDC"[c // 13] for c in order]


def test_commit_is_sha256_of_the_seed():
    seed = bytes(range(32))
    assert riffle.fair_commit(seed) == hashlib.sha256(seed).hexdigest()
    assert riffle.fair_commit(seed.hex()) == hashlib.sha256(seed).hexdigest()


@pytest.mark.parametrize("client,nonce", [("abc", 7), ("", 0), ("joueur-é", 2**64 - 1)])
def test_deal_equals_the_program(cli, client, nonce):
    seed = "%064x" % 0x5eed
    commit = hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    out = cli("verify", "--server-seed=" + seed, "--commit=" + commit,
              "--client-seed=" + client, "--nonce=%d" % nonce, "-H", "1").decode()
    lines = out.splitlines()
    assert lines[0] == "commit: " + commit
    assert lines[1].split(": ", 1)[1].split() == names(riffle.fair_deal(seed, client, nonce))


def test_a_deal_the_program_verifies(riffle_bin, tmp_path):
    # the program checks a deal Python made: a checker and a server agree
    seed = bytes(range(100, 132))
    deal = tmp_path / "deal.txt"
    deal.write_text("commit: %s\nhand 1: %s\n" % (riffle.fair_commit(seed),
                                                   " ".join(names(riffle.fair_deal(seed, "p", 3)))))
    ok = subprocess.run([riffle_bin, "verify", "--server-seed=" + seed.hex(), "--client-seed=p",
                         "--nonce=3", "-H", "1", "--deal=" + str(deal)],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([riffle_bin, "verify", "--server-seed=" + seed.hex(), "--client-seed=p",
                          "--nonce=4", "-H", "1", "--deal=" + str(deal)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert bad.returncode == 1 and b"deal mismatch" in bad.stderr


def test_deal_is_a_permutation_and_seeded():
    seed = b"\x01" * 32
    for n in (1, 2, 52, 54, 1000):
        d = riffle.fair_deal(seed, b"x", 1, n)
        assert d.dtype == np.int64 and sorted(d.tolist()) == list(range(n))
    a = riffle.fair_deal(seed, "x", 1)
    assert np.array_equal(a, riffle.fair_deal(seed, b"x", 1))
    assert not np.array_equal(a, riffle.fair_deal(seed, "x", 2))
    assert not np.array_equal(a, riffle.fair_deal(seed, "y", 1))


def test_bad_arguments():
    with pytest.raises(ValueError, match="32 bytes"):
        riffle.fair_deal(b"short")
    with pytest.raises(ValueError, match="hexadecimal"):
        riffle.fair_commit("zz" * 32)
    with pytest.raises(ValueError, match="nonce"):
        riffle.fair_deal(bytes(32), "", -1)
    with pytest.raises(ValueError, match="nonce"):
        riffle.fair_deal(bytes(32), "", 2**64)
    with pytest.raises(ValueError, match="n must"):
        riffle.fair_deal(bytes(32), "", 0, 0)
    with pytest.raises(TypeError):
        riffle.fair_deal(bytes(32), 5)
