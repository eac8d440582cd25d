#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""nbdcheck.py - libnbd-driven data checks for the fairq-nbd host tests.

Every check keeps a model of what the export must hold, drives fairq-nbd
through libnbd (python3-libnbd, the library nbdsh/nbdcopy/nbdinfo use),
and compares every byte it reads back with the model.  Output: one line
per finding; exit status 0 = all good, 1 = a mismatch or error.

  nbdcheck.py unaligned URI MODEL   random unaligned reads and writes at
                                    odd offsets across block boundaries,
                                    64 in flight, then 200 of 64 KiB to
                                    1 MiB + 5; the model is saved to
                                    MODEL (compare it with the file)
  nbdcheck.py interleave URI NCONN  NCONN connections write disjoint
                                    9-byte pieces that share every 4 KiB
                                    block, 64 in flight each (a lost
                                    read-modify-write shows as a torn
                                    piece)
  nbdcheck.py commands URI          FLUSH, FUA, TRIM, WRITE_ZEROES (also
                                    unaligned) and block sizes
  nbdcheck.py fill URI SEED         write a seeded pattern, flush
  nbdcheck.py verify URI SEED       read it back, compare
  nbdcheck.py reads URI SECONDS     keep reading and checking a seeded
                                    pattern (written first) for SECONDS
  nbdcheck.py pipeline URI I MODEL  one connection keeps 128 requests in
                                    flight over its own 2 MiB region at
                                    I x 2 MiB: 512 4 KiB writes (every
                                    7th FUA, a FLUSH after every 64),
                                    then 512 reads checked by SHA-256;
                                    the data written is saved to MODEL
  nbdcheck.py abandon SOCKET ROUNDS raw-protocol clients that vanish:
                                    after the greeting, inside an option,
                                    with 64 requests pending and a write
                                    payload cut short (1000 bytes of
                                    64 KiB, 700,000 of 1 MiB)
  nbdcheck.py refused URI LIMIT     WRITEs at and across LIMIT (the
                                    server's RLIMIT_FSIZE) of 4 KiB to
                                    1 MiB + 5 get ENOSPC; the connection
                                    goes on (data written after is read
                                    back)
  nbdcheck.py pieces SOCKET         raw-protocol WRITEs of 64 KiB to
                                    1 MiB whose payload comes in many
                                    small sends (1 to 65536 bytes), read
                                    back and compared
"""
import hashlib
import random
import socket
import struct
import sys
import time

import nbd

INFLIGHT = 64
REGION = 4 << 20        # bytes the random checks work in


def connect(uri):
    h = nbd.NBD()
    h.connect_uri(uri)
    return h


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def pattern(seed, size):
    return bytearray(random.Random(seed).randbytes(size))


class Pipe:
    """Up to INFLIGHT commands on handle h; callbacks run on completion."""

    def __init__(self, h, depth=INFLIGHT):
        self.h = h
        self.depth = depth
        self.pending = {}
        self.peak = 0

    def _reap(self):
        while self.pending:
            cookie = self.h.aio_peek_command_completed()
            if not cookie:
                return
            done = self.pending.pop(cookie)
            self.h.aio_command_completed(cookie)
            if done:
                done()

    def wait_room(self, n=None):
        while len(self.pending) >= (n or self.depth):
            self.h.poll(-1)
            self._reap()

    def add(self, cookie, done=None):
        self.pending[cookie] = done
        self.peak = max(self.peak, len(self.pending))

    def drain(self):
        self.wait_room(1)

    def pread(self, count, off, check):
        self.wait_room()
        buf = nbd.Buffer(count)
        cookie = self.h.aio_pread(buf, off)
        self.add(cookie, lambda: check(off, buf.to_bytearray()))
        return cookie

    def pwrite(self, data, off, flags=0):
        self.wait_room()
        cookie = self.h.aio_pwrite(nbd.Buffer.from_bytearray(data), off,
                                   flags=flags)
        self.add(cookie)
        return cookie


def odd_extent(rng, size):
    """An offset and length that are rarely aligned and often cross a
    512 and a 4096 boundary."""
    base = rng.randrange(0, size // 4096) * 4096
    off = base + rng.choice([1, 7, 511, 513, 4095, 3000, rng.randrange(4096)])
    length = rng.choice([1, 3, 511, 513, 1000, 4097, 8191, 12289,
                         rng.randrange(1, 20000)])
    off = min(off, size - 1)
    return off, min(length, size - off)


def large_extent(rng, size):
    """Lengths the server sends by sendfile or writes behind (64 KiB up
    to 1 MiB) and just past it, at odd offsets."""
    off = rng.randrange(0, size // 4096) * 4096 + rng.choice([0, 1, 4095])
    length = rng.choice([65536, 65539, rng.randrange(65536, 1 << 20),
                         1 << 20, (1 << 20) + 5])
    off = min(off, size - 1)
    return off, min(length, size - off)


def cmd_unaligned(uri, model_path):
    h = connect(uri)
    size = min(h.get_size(), REGION)
    rng = random.Random(1)
    model = bytearray(size)
    for i in range(0, size, 65536):     # what the file holds now
        model[i:i + 65536] = h.pread(min(65536, size - i), i)
    p = Pipe(h)
    bad = []

    def check_at(off, want):
        def check(o, got):
            if got != want:
                bad.append(o)
        return check

    # no request overlaps one in flight (NBD leaves the order of
    # overlapping requests open): reads are checked against the model as
    # of their submission.  Neighbours in the same block do overlap in
    # flight: that is what the server's read-modify-write must survive.
    def phase(count, extent):
        busy = []
        for n in range(count):
            off, length = extent(rng, size)
            busy = [(o, ln, c) for (o, ln, c) in busy if c in p.pending]
            if any(o < off + length and off < o + ln
                   for (o, ln, c) in busy):
                p.drain()
                busy = []
            if rng.random() < 0.5:
                data = bytearray(rng.randbytes(length))
                model[off:off + length] = data
                c = p.pwrite(data, off)
            else:
                c = p.pread(length, off,
                            check_at(off, bytes(model[off:off + length])))
            busy.append((off, length, c))
        p.drain()

    phase(3000, odd_extent)
    peak = p.peak
    phase(200, large_extent)
    h.flush()
    for i in range(0, size, 65536):
        if h.pread(min(65536, size - i), i) != model[i:i + 65536]:
            bad.append(i)
    with open(model_path, "wb") as f:
        f.write(model)
    print("unaligned: 3000 requests, peak %d in flight, then 200 of "
          "64 KiB to 1 MiB, %d mismatches" % (peak, len(bad)))
    if peak < INFLIGHT:
        die("only %d requests were in flight at once" % peak)
    if bad:
        die("data mismatch at offsets %s" % bad[:10])


def cmd_interleave(uri, nconn):
    hs = [connect(uri) for _ in range(nconn)]
    piece, region = 9, 1 << 20
    stride = piece * nconn
    pipes = [Pipe(h) for h in hs]
    want = bytearray(region)
    writes = []
    for i in range(nconn):
        for j in range(region // stride):
            off = j * stride + i * piece
            data = bytes([(i * 64 + j) & 0xff]) * piece
            want[off:off + piece] = data
            writes.append((i, off, data))
    random.Random(2).shuffle(writes)
    for i, off, data in writes:         # all connections at once
        pipes[i].pwrite(bytearray(data), off)
    for p in pipes:
        p.drain()
    hs[0].flush()
    got = bytearray()
    for i in range(0, region, 65536):
        got += hs[0].pread(65536, i)
    torn = [i for i in range(0, (region // stride) * stride, piece)
            if got[i:i + piece] != want[i:i + piece]]
    print("interleave: %d connections, %d pieces of %d bytes, %d torn"
          % (nconn, len(writes), piece, len(torn)))
    if torn:
        die("torn pieces at %s" % torn[:10])


def cmd_commands(uri):
    h = connect(uri)
    bs = [h.get_block_size(t) for t in
          (nbd.SIZE_MINIMUM, nbd.SIZE_PREFERRED, nbd.SIZE_MAXIMUM)]
    print("block sizes min/pref/max: %d/%d/%d" % tuple(bs))
    if bs[0] != 1 or bs[1] < 4096 or bs[2] != 32 << 20:
        die("block sizes %s, want 1/>=4096/32M" % bs)
    for f in ("can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"):
        if not getattr(h, f)():
            die(f + " is false")
    h.pwrite(b"\xa5" * 65536, 1 << 20)
    h.pwrite(b"\x5a" * 4097, (1 << 20) + 3, nbd.CMD_FLAG_FUA)
    h.flush()
    exp = bytearray(b"\xa5" * 65536)
    exp[3:3 + 4097] = b"\x5a" * 4097
    # zero: unaligned, with and without NO_HOLE, with FUA
    h.zero(1000, (1 << 20) + 5000)
    exp[5000:6000] = bytes(1000)
    h.zero(5, (1 << 20) + 9001, nbd.CMD_FLAG_NO_HOLE | nbd.CMD_FLAG_FUA)
    exp[9001:9006] = bytes(5)
    h.zero(8192, (1 << 20) + 16384)
    exp[16384:24576] = bytes(8192)
    got = h.pread(65536, 1 << 20)
    if got != exp:
        first = next(i for i in range(65536) if got[i] != exp[i])
        die("after FUA write and zeroes: first difference at +%d" % first)
    # trim: contents unspecified afterwards; the neighbours must survive
    h.trim(8192, (1 << 20) + 32768, nbd.CMD_FLAG_FUA)
    h.trim(100, (1 << 20) + 50001)
    got = h.pread(65536, 1 << 20)
    if got[:32768] != exp[:32768] or got[40960:50001] != exp[40960:50001] \
       or got[50101:] != exp[50101:]:
        die("TRIM changed bytes outside its range")
    h.flush()
    print("flush, FUA, zero (NO_HOLE, unaligned), trim: data as expected")


def cmd_fill(uri, seed):
    h = connect(uri)
    size = min(h.get_size(), REGION)
    data = pattern(seed, size)
    p = Pipe(h)
    for i in range(0, size, 65536):
        p.pwrite(data[i:i + 65536], i)
    p.drain()
    h.flush()
    print("fill: %d bytes, seed %d" % (size, seed))


def cmd_verify(uri, seed):
    h = connect(uri)
    size = min(h.get_size(), REGION)
    data = pattern(seed, size)
    for i in range(0, size, 65536):
        if h.pread(min(65536, size - i), i) != data[i:i + 65536]:
            die("seed %d: mismatch in the 64 KiB at %d" % (seed, i))
    print("verify: %d bytes, seed %d" % (size, seed))


def cmd_reads(uri, secs):
    cmd_fill(uri, 7)
    h = connect(uri)
    size = min(h.get_size(), REGION)
    data = pattern(7, size)
    rng = random.Random(3)
    p = Pipe(h)
    bad = []
    n = 0
    end = time.monotonic() + secs

    def check(off, got):
        if got != data[off:off + len(got)]:
            bad.append(off)
    while time.monotonic() < end:
        off, length = odd_extent(rng, size)
        p.pread(length, off, check)
        n += 1
    p.drain()
    print("reads: %d unaligned reads in %.1f s, %d mismatches"
          % (n, secs, len(bad)))
    if bad or n < 100:
        die("reader starved or saw wrong data (%d reads, bad %s)"
            % (n, bad[:5]))


PIPE_DEPTH = 128        # pipeline: requests in flight per connection
PIPE_REGION = 2 << 20   # pipeline: bytes per connection


def cmd_pipeline(uri, index, model_path):
    h = connect(uri)
    base, blk = index * PIPE_REGION, 4096
    if h.get_size() < base + PIPE_REGION:
        die("export of %d bytes has no region %d" % (h.get_size(), index))
    rng = random.Random(100 + index)
    p = Pipe(h, PIPE_DEPTH)
    model = bytearray()
    sums, bad = [], []
    fua = flushes = 0
    for i in range(PIPE_REGION // blk):
        data = bytearray(rng.randbytes(blk))
        model += data
        sums.append(hashlib.sha256(data).digest())
        p.pwrite(data, base + i * blk, nbd.CMD_FLAG_FUA if i % 7 == 0 else 0)
        fua += i % 7 == 0
        if i % 64 == 63:
            p.wait_room()
            p.add(h.aio_flush())
            flushes += 1
    p.drain()

    def check_sum(i):
        def check(off, got):
            if hashlib.sha256(got).digest() != sums[i]:
                bad.append(off)
        return check
    for i in range(PIPE_REGION // blk):
        p.pread(blk, base + i * blk, check_sum(i))
    p.drain()
    with open(model_path, "wb") as f:
        f.write(model)
    print("pipeline %d: %d writes (%d FUA), %d flushes, %d reads, peak %d "
          "in flight, %d checksum mismatches"
          % (index, len(sums), fua, flushes, len(sums), p.peak, len(bad)))
    if p.peak < PIPE_DEPTH:
        die("only %d requests were in flight at once" % p.peak)
    if bad:
        die("checksum mismatch at offsets %s" % bad[:10])


OPT_MAGIC = 0x49484156454F5054
REP_MAGIC = 0x3e889045565a9
REQ_MAGIC = 0x25609513
SIMPLE_MAGIC = 0x67446698


def raw_greeted(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    greeting = b""
    while len(greeting) < 18:
        chunk = s.recv(18 - len(greeting))
        if not chunk:
            die("server closed before its greeting")
        greeting += chunk
    if greeting[:16] != b"NBDMAGICIHAVEOPT":
        die("bad greeting %r" % greeting)
    return s


def raw_go(s):
    s.sendall(struct.pack(">I", 3))     # FIXED_NEWSTYLE | NO_ZEROES
    s.sendall(struct.pack(">QII", OPT_MAGIC, 7, 6) + struct.pack(">IH", 0, 0))
    while True:
        hdr = b""
        while len(hdr) < 20:
            hdr += s.recv(20 - len(hdr))
        magic, _, rtype, length = struct.unpack(">QIII", hdr)
        body = b""
        while len(body) < length:
            body += s.recv(length - len(body))
        if magic != REP_MAGIC:
            die("bad option reply magic")
        if rtype == 1:                  # NBD_REP_ACK
            return
        if rtype != 3:                  # NBD_REP_INFO
            die("NBD_OPT_GO refused: reply type %#x" % rtype)


def raw_reply(s, handle, length):
    """The simple reply to @handle (sent alone), with @length bytes."""
    hdr = b""
    while len(hdr) < 16:
        chunk = s.recv(16 - len(hdr))
        if not chunk:
            die("server closed before reply %d" % handle)
        hdr += chunk
    magic, err, got = struct.unpack(">IIQ", hdr)
    if magic != SIMPLE_MAGIC or got != handle or err:
        die("reply %r to handle %d" % ((magic, err, got), handle))
    data = bytearray()
    while len(data) < length:
        chunk = s.recv(min(65536, length - len(data)))
        if not chunk:
            die("server closed inside reply %d" % handle)
        data += chunk
    return data


def cmd_pieces(path, unused):
    """Large writes whose payload comes in many small sends (every
    send is a socket buffer of its own), read back and compared."""
    s = raw_greeted(path)
    raw_go(s)
    rng = random.Random(5)
    for n, (length, piece) in enumerate([(1 << 20, 4200), (1 << 20, 100),
                                         (65536 + 3, 1), (999999, 65536)]):
        off = 4096 * n * 300 + 7
        data = rng.randbytes(length)
        s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, 1, 2 * n, off, length))
        for i in range(0, length, piece):
            s.sendall(data[i:i + piece])
        raw_reply(s, 2 * n, 0)
        s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, 0, 2 * n + 1, off,
                              length))
        if raw_reply(s, 2 * n + 1, length) != data:
            die("write of %d bytes in pieces of %d read back wrong"
                % (length, piece))
    s.close()
    print("pieces: 4 writes sent in small pieces read back right")


def cmd_refused(uri, limit):
    """WRITEs at and across @limit, where the server's file refuses
    them, fail with ENOSPC whatever their size; after each the
    connection goes on and reads back what it writes below @limit."""
    h = connect(uri)
    limit = int(limit)
    rng = random.Random(9)
    cases = [(4096, limit + 4096), (65536, limit), ((1 << 20) + 5, limit),
             (1 << 20, limit + 3), (1 << 20, limit - 4096 - 5),
             (100000, limit - 99)]
    for length, off in cases:
        try:
            h.pwrite(rng.randbytes(length), off)
            die("write of %d bytes at %d past the limit %d succeeded"
                % (length, off, limit))
        except nbd.Error as e:
            if e.errno != "ENOSPC":
                die("write of %d bytes at %d: %s, not ENOSPC"
                    % (length, off, e))
        good = rng.randbytes(rng.choice([65536 + 7, 4096, 1 << 20]))
        at = limit - len(good) - 100
        h.pwrite(good, at)
        if h.pread(len(good), at) != good:
            die("after a refused write of %d bytes at %d: data read back "
                "wrong" % (length, off))
    print("refused: %d writes past the file size limit got ENOSPC, the "
          "connection went on" % len(cases))


def cmd_abandon(path, rounds):
    for n in range(rounds):
        s = raw_greeted(path)           # gone after the greeting
        s.close()
        s = raw_greeted(path)           # gone inside an option
        s.sendall(struct.pack(">I", 1) + struct.pack(">QII", OPT_MAGIC, 7, 100)
                  + b"\0\0")
        s.close()
        s = raw_greeted(path)           # 64 reads pending, cut write
        raw_go(s)
        reqs = b"".join(struct.pack(">IHHQQI", REQ_MAGIC, 0, 0, i,
                                    (i * 1048576 + 7) % (3 << 20), 1 << 20)
                        for i in range(64))
        s.sendall(reqs + struct.pack(">IHHQQI", REQ_MAGIC, 0, 1, 99, 5, 65536)
                  + b"x" * 1000)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))   # RST, replies unread
        s.close()
        s = raw_greeted(path)           # most of a 1 MiB payload, cut
        raw_go(s)
        s.sendall(struct.pack(">IHHQQI", REQ_MAGIC, 0, 1, 98, 3, 1 << 20)
                  + b"y" * 700000)
        s.close()
    print("abandon: %d rounds of 4 vanishing clients" % rounds)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, uri = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        if cmd == "unaligned":
            cmd_unaligned(uri, arg)
        elif cmd == "interleave":
            cmd_interleave(uri, int(arg))
        elif cmd == "commands":
            cmd_commands(uri)
        elif cmd == "fill":
            cmd_fill(uri, int(arg))
        elif cmd == "verify":
            cmd_verify(uri, int(arg))
        elif cmd == "reads":
            cmd_reads(uri, float(arg))
        elif cmd == "pipeline":
            cmd_pipeline(uri, int(arg), sys.argv[4])
        elif cmd == "abandon":
            cmd_abandon(uri, int(arg))
        elif cmd == "pieces":
            cmd_pieces(uri, arg)
        elif cmd == "refused":
            cmd_refused(uri, arg)
        else:
            print(__doc__)
            sys.exit(2)
    except nbd.Error as e:
        die("libnbd: %s" % e)


main()
