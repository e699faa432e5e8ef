"""Fuzz target for the wire decoders: the shoe's (binary and ASCII dialects) and the bet-spot reader's.

With atheris (coverage-guided): ``.venv/bin/python fuzz/fuzz_decoder.py -atheris_runs=1000000``
(any libFuzzer flag works, e.g. ``-max_total_time=300``).
Without atheris, a plain seeded random-input loop: ``.venv/bin/python fuzz/fuzz_decoder.py --random
--runs 200000 --seed 1``.

Each input is cut into chunks by its first byte and fed to a BinaryDecoder of each dialect (the shoe's and
the reader's, ``firmware_protocol.spots.READER``) and an AsciiDecoder. The
target checks the decoders' promises: no exception, the buffer never above its cap, every byte but idle
delimiters accounted for in some event's ``raw``, and every FrameReceived re-encodes to a frame that
decodes to the same message.
"""

from __future__ import annotations

import argparse
import random
import sys

from firmware_protocol import spot_vectors
from firmware_protocol.ascii import AsciiCard, AsciiDecoder
from firmware_protocol.binary import BinaryDecoder, FrameReceived, decode_frame, encode
from firmware_protocol.spots import READER
from firmware_protocol.vectors import FRAMES, accounted

CAP = 64
#: The reader's cap: above its longest frame (a SPOT of 48 chips, 398 bytes), so every message can pass.
READER_CAP = 512


def check(data: bytes) -> None:
    """One fuzz input: raises AssertionError if a promise is broken."""
    if not data:
        return
    step = data[0] % 17 + 1
    payload = data[1:]
    chunks = [payload[i : i + step] for i in range(0, len(payload), step)]
    binary = BinaryDecoder(max_buffer=CAP)
    reader = BinaryDecoder(max_buffer=READER_CAP, dialect=READER)
    ascii_ = AsciiDecoder(max_line=16)
    raws = reader_raws = b""
    for chunk in chunks:
        for event in reader.feed(chunk):
            reader_raws += event.raw
            if isinstance(event, FrameReceived):
                again = decode_frame(encode(event.seq, event.message, dialect=READER), dialect=READER)
                assert isinstance(again, FrameReceived) and again.message == event.message, event
        assert reader.buffered <= READER_CAP
        for event in binary.feed(chunk):
            raws += event.raw
            if isinstance(event, FrameReceived):
                again = decode_frame(encode(event.seq, event.message))
                assert isinstance(again, FrameReceived) and again.message == event.message, event
        assert binary.buffered <= CAP
        for line in ascii_.feed(chunk):
            if isinstance(line, AsciiCard):
                assert len(line.raw.strip(b" \t")) in (2, 3), line
        assert ascii_.buffered <= 16
    expected = accounted(payload)
    assert expected.startswith(raws) and len(raws) + binary.buffered == len(expected)
    assert expected.startswith(reader_raws) and len(reader_raws) + reader.buffered == len(expected)


def seeds() -> list[bytes]:
    """A starting corpus: the spec's vectors, whole and glued together."""
    corpus = [b"\x05" + v.data for v in FRAMES + spot_vectors.FRAMES]
    corpus.append(b"\x03" + b"".join(v.data for v in FRAMES))
    corpus.append(b"\x07" + b"".join(v.data for v in spot_vectors.FRAMES + spot_vectors.SINGLE))
    corpus.append(b"\x01H10\r\nsK\nDA\rc7\r\n")
    return corpus


def random_loop(runs: int, seed: int) -> None:
    rng = random.Random(seed)
    corpus = seeds()
    for run in range(runs):
        base = bytearray(rng.choice(corpus))
        for _ in range(rng.randint(0, 8)):
            action = rng.random()
            if action < 0.4 and base:
                base[rng.randrange(len(base))] ^= 1 << rng.randrange(8)
            elif action < 0.6:
                base[rng.randint(0, len(base)) : rng.randint(0, len(base))] = rng.randbytes(rng.randint(0, 40))
            elif action < 0.8 and base:
                del base[rng.randrange(len(base))]
            else:
                base += rng.choice(corpus)
        try:
            check(bytes(base))
        except AssertionError:
            sys.stderr.write(f"promise broken at run {run} (seed {seed}): {bytes(base).hex()}\n")
            raise
    sys.stdout.write(f"{runs} random inputs, seed {seed}: no promise broken\n")


def main() -> None:
    if "--random" in sys.argv:
        parser = argparse.ArgumentParser(description="plain random-input fuzz loop (no atheris)")
        parser.add_argument("--random", action="store_true")
        parser.add_argument("--runs", type=int, default=100_000)
        parser.add_argument("--seed", type=int, default=1)
        args = parser.parse_args()
        random_loop(args.runs, args.seed)
        return
    try:
        import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        sys.stderr.write("atheris is not installed: running the plain random loop instead\n")
        random_loop(100_000, 1)
        return
    atheris.instrument_all()  # coverage feedback for the already-imported decoders
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
