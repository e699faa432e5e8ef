"""Benchmark: binary decoder throughput on CARD frames, and its cost per frame against the wire time.

Run: ``.venv/bin/python benchmarks/bench_decoder.py [--frames N] [--chunk BYTES]``. Frames are fed in
chunks the size a serial read returns (default 64 bytes), so frames straddle chunk boundaries as on a
real port. Target: at least 100,000 CARD frames/s on the controller.
"""

from __future__ import annotations

import argparse
import statistics
import time

from firmware_protocol.ascii import AsciiDecoder, encode_card
from firmware_protocol.binary import BinaryDecoder, FrameReceived, encode
from firmware_protocol.messages import SUITS, CardRead

BITS_PER_BYTE = 10  # 8N1: start bit, 8 data bits, stop bit


def card_stream(frames: int) -> bytes:
    return b"".join(encode(i % 0xFFFF + 1, CardRead(i % 13 + 1, SUITS[i % 4])) for i in range(frames))


def run(decoder_factory: type, data: bytes, chunk: int, repeats: int) -> tuple[float, int]:
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    times = []
    count = 0
    for _ in range(repeats):
        decoder = decoder_factory()
        start = time.perf_counter()
        count = 0
        for piece in chunks:
            count += len(decoder.feed(piece))
        times.append(time.perf_counter() - start)
    return statistics.median(times), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    data = card_stream(args.frames)
    frame_len = len(encode(2, CardRead(10, "H")))
    assert all(isinstance(e, FrameReceived) for e in BinaryDecoder().feed(data[: frame_len * 50]))
    seconds, count = run(BinaryDecoder, data, args.chunk, args.repeats)
    per_frame = seconds / count
    print(f"binary CARD frames: {count} frames of {frame_len} bytes, fed in {args.chunk}-byte chunks")
    print(f"  throughput     {count / seconds:12,.0f} frames/s   (target >= 100,000)")
    print(f"  cost per frame {per_frame * 1e6:12.2f} µs")
    for baud in (9600, 115200):
        wire = frame_len * BITS_PER_BYTE / baud
        print(
            f"  at {baud:>6} baud one frame takes {wire * 1e3:7.3f} ms on the wire:"
            f" decoding costs {per_frame / wire:.3%} of it ({wire / per_frame:,.0f}x headroom)"
        )
    for chunk in (1, 16, 256, 4096):
        s, n = run(BinaryDecoder, data[: frame_len * 20_000], chunk, 3)
        print(f"  chunk {chunk:>5} bytes: {n / s:12,.0f} frames/s")

    lines = b"".join(encode_card(CardRead(i % 13 + 1, SUITS[i % 4])) for i in range(args.frames))
    seconds, count = run(AsciiDecoder, lines, args.chunk, args.repeats)
    line_len = len(lines) / count
    print(f"ascii card lines: {count} lines of {line_len:.1f} bytes on average")
    print(f"  throughput     {count / seconds:12,.0f} lines/s")
    wire = line_len * BITS_PER_BYTE / 9600
    print(f"  at   9600 baud a line takes {wire * 1e3:.3f} ms: decoding costs {seconds / count / wire:.3%} of it")


if __name__ == "__main__":
    main()
