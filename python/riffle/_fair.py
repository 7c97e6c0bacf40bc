"""riffle.fair_commit and riffle.fair_deal: the provably fair deal of
riffle_fair.h (derivation riffle-deal-v1, docs/provably-fair.md), so that a
game server or a player's checker in Python deals and verifies exactly what
`riffle deal --commit` and `riffle verify` do."""
import operator

import numpy as np

from ._core import check
from ._riffle import ffi, lib

SEED_BYTES = 32


def _server_seed(server_seed):
    """32 bytes, from bytes or 64 hexadecimal digits."""
    if isinstance(server_seed, str):
        try:
            server_seed = bytes.fromhex(server_seed)
        except ValueError:
            raise ValueError("server_seed must be 64 hexadecimal digits") from None
    if not isinstance(server_seed, (bytes, bytearray)) or len(server_seed) != SEED_BYTES:
        raise ValueError("server_seed must be 32 bytes (or 64 hexadecimal digits)")
    return bytes(server_seed)


def _client_seed(client_seed):
    """The client seed's bytes: a str as UTF-8 (what --client-seed passes on
    a UTF-8 command line), bytes as they are."""
    if isinstance(client_seed, str):
        return client_seed.encode("utf-8")
    if isinstance(client_seed, (bytes, bytearray)):
        return bytes(client_seed)
    raise TypeError("client_seed must be str or bytes")


def fair_commit(server_seed):
    """The commitment to a server seed: SHA-256 of its 32 bytes, as 64
    lowercase hexadecimal digits (the `commit:` line of riffle deal
    --commit).  server_seed: 32 bytes or 64 hexadecimal digits."""
    out = ffi.new("uint8_t[32]")
    check(lib.rf_fair_commit(out, _server_seed(server_seed)), "fair_commit")
    return bytes(ffi.buffer(out, 32)).hex()


def fair_deal(server_seed, client_seed="", nonce=0, n=52):
    """The deal of a deck of n cards from a server seed, a client seed and
    a nonce (0 <= nonce < 2**64): a numpy array of the card numbers (0 ..
    n-1, in the deck's starting order) in dealt order.  For the standard
    deck, card c is riffle deal's name RANKS[c % 13] + SUITS[c // 13] with
    RANKS = A 2 .. 10 J Q K and SUITS = S H D C; `riffle verify ... -H 1`
    prints the same deal as one hand.  Dealing k cards deals the first k.
    Errors: ValueError for a malformed seed, nonce or n."""
    seed = _server_seed(server_seed)
    client = _client_seed(client_seed)
    nonce = operator.index(nonce)
    n = operator.index(n)
    if not 0 <= nonce < 2**64:
        raise ValueError("nonce must be in [0, 2**64)")
    if n < 1:
        raise ValueError("n must be at least 1")
    order = np.empty(n, dtype=np.uintp)
    buf = ffi.from_buffer("size_t[]", order)
    check(lib.rf_fair_deal(buf, n, seed, client, len(client), nonce), "fair_deal")
    return order.astype(np.int64)
