#!/usr/bin/env python3
"""A slow, independent model of gensort 1.5's records, written from the definition in
datagen/README.md, for the tests: it checks sortex-gen where no file made by gensort itself is
kept (skewed ASCII records, record numbers past 2^64).

usage: gensort_model.py KIND START COUNT OUT
  KIND: binary, skew, ascii or ascii-skew; START: the first record number (gensort's -b).
"""
import sys

A = 0x2360ED051FC65DA44385DF649FCCF645
C = 0x4A696D47726179524950202020202001
MOD = 1 << 128
LO64 = (1 << 64) - 1


def number(n):
    """X_n of the LCG from X_0 = 0, by square-and-multiply on the affine map x -> A x + C."""
    ma, mc, x = A, C, 0
    while n:
        if n & 1:
            x = (ma * x + mc) % MOD
        ma, mc = ma * ma % MOD, (ma * mc + mc) % MOD
        n >>= 1
    return x


def masks():
    """K_1..K_9 of the binary record's parts 1..9 (K_0 = 0)."""
    four = [v for v in range(255, -1, -1) if bin(v).count("1") == 4]
    k = [bytes(10)] + [bytes(four[10 * i:10 * i + 10]) for i in range(7)]
    k.append(bytes([0xC8, 0xC4, 0xC2, 0xC1, 0x98, 0x94, 0x92, 0x91, 0x8C, 0xE0]))
    k.append(bytes([0x17, 0x0F, 0x33, 0x2E, 0x2D, 0x2B, 0x27, 0x1E, 0x1D, 0x1B]))
    return k


K = masks()


def top10(x):
    return x.to_bytes(16, "big")[:10]


def binary(r):
    """Record r: the parts of X_(r+1) .. X_(r+10)."""
    x = [number(r + 1 + j) for j in range(10)]
    return b"".join(bytes(a ^ b for a, b in zip(top10(x[j]), K[j])) for j in range(10))


def skew_index(r):
    hi, lo = r >> 64, r & LO64
    if r == 0:
        return 0
    if hi == 0:
        return 64 if lo >> 60 else lo.bit_length()
    return 128 if hi >> 60 else 64 + hi.bit_length()


def skewed(r):
    rec = bytearray(binary(r))
    bits = ((number(r + 1) & LO64) >> 32) & 63
    if bits > 48:
        bits = 0
    if bits:
        key = int.from_bytes(rec[:6], "big")
        other = int.from_bytes(binary(skew_index(r))[:6], "big")
        top = ((1 << bits) - 1) << (48 - bits)
        rec[:6] = ((key & ~top) | (other & top)).to_bytes(6, "big")
    return bytes(rec)


def ascii_key(x):
    hi, lo, out = x >> 64, x & LO64, []
    for _ in range(8):
        out.append(32 + hi % 95)
        hi //= 95
    for _ in range(2):
        out.append(32 + lo % 95)
        lo //= 95
    return bytes(out)


def ascii(r):
    x0 = number(r + 1)
    lo = x0 & LO64
    filler = "".join("%X" % ((lo >> s) & 15) * 4 for s in range(48, -1, -4))
    return ascii_key(x0) + b"  " + ("%032X" % r).encode() + b"  " + filler.encode() + b"\r\n"


def ascii_skewed(r):
    rec = bytearray(ascii(r))
    count = ((number(r + 1) & LO64) >> 32) & 7
    if count > 6:
        count = 0
    rec[:count] = ascii_key(number(skew_index(r) + 1))[:count]
    return bytes(rec)


def main():
    kind, start, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    make = {"binary": binary, "skew": skewed, "ascii": ascii, "ascii-skew": ascii_skewed}[kind]
    with open(out, "wb") as f:
        for r in range(start, start + count):
            f.write(make(r % MOD))


if __name__ == "__main__":
    main()
