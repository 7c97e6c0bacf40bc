#!/usr/bin/env python3
# An independent statement of riffle's keyed order (riffle.h, "Keyed order"),
# written from the documentation with nothing but hashlib: ChaCha20 (Bernstein's
# 64-bit counter / 64-bit nonce layout, RFC 8439 section 2.3 with that layout),
# BLAKE2b-256 key derivation, item i's key = word i mod 2^16 of stream i / 2^16,
# output by increasing key.  tests/checks/check_keyed_reference.sh compares it
# with `riffle --seed=S` on `seq N`.
# Usage: keyed_reference.py SEED N   (prints the order of the lines 1..N)
import hashlib, struct, sys
def rotl(x,n): return ((x<<n)|(x>>(32-n))) & 0xffffffff
def qr(s,a,b,c,d):
    s[a]=(s[a]+s[b])&0xffffffff; s[d]=rotl(s[d]^s[a],16)
    s[c]=(s[c]+s[d])&0xffffffff; s[b]=rotl(s[b]^s[c],12)
    s[a]=(s[a]+s[b])&0xffffffff; s[d]=rotl(s[d]^s[a],8)
    s[c]=(s[c]+s[d])&0xffffffff; s[b]=rotl(s[b]^s[c],7)
def block(key, counter, nonce):
    st=[0x61707865,0x3320646e,0x79622d32,0x6b206574]+list(struct.unpack('<8I',key))+[counter&0xffffffff,counter>>32,nonce&0xffffffff,nonce>>32]
    w=st[:]
    for _ in range(10):
        qr(w,0,4,8,12);qr(w,1,5,9,13);qr(w,2,6,10,14);qr(w,3,7,11,15)
        qr(w,0,5,10,15);qr(w,1,6,11,12);qr(w,2,7,8,13);qr(w,3,4,9,14)
    return struct.pack('<16I',*[(a+b)&0xffffffff for a,b in zip(w,st)])
def b2(prefix, data): return hashlib.blake2b(prefix+data, digest_size=32).digest()
def keyed_order(seed, n):
    """Item numbers 0..n-1 in the keyed order of `riffle --seed=SEED` (an
    integer seed, the default ChaCha20 generator)."""
    key = b2(b"riffle/seed/u64", struct.pack('<Q', seed))
    K = b2(b"riffle/keyed/key", key)
    keys = []
    for i in range(0, n, 8):
        stream, blk = i >> 16, (i & 0xffff) // 8   # blocks of 2^16 items, 8 keys per ChaCha block
        keys += struct.unpack('<8Q', block(K, blk, stream))
    keys = keys[:n]
    if len(set(keys)) != n:
        sys.exit("a tie: this reference does not shuffle ties")
    return sorted(range(n), key=lambda i: keys[i])

if __name__ == "__main__":
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    sys.stdout.write("".join("%d\n" % (i + 1) for i in keyed_order(seed, n)))
