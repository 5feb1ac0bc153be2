#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): small safetensors images, valid ones
("valid-*", which the reader must load) and broken ones (every other name, which it must refuse
with one sentence). test_safetensors reads every file here with the same expectation, so the
corpus doubles as a regression set. Run it again after adding a case; the files are committed.
"""
import json
import pathlib
import struct

OUT = pathlib.Path(__file__).resolve().parent / "corpus"


def image(header, data=b"", pad=True, length=None):
    """8-byte little-endian length, the header (a dict is dumped as JSON), then data."""
    if isinstance(header, dict):
        header = json.dumps(header, separators=(",", ":"))
    text = header if isinstance(header, bytes) else header.encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


F32_2x3 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
CASES = {
    # valid
    "valid-two-tensors": image({"__metadata__": {"laptime.format": "1", "gpt2.n_layer": "2"},
                                "w": entry("F32", [2, 3], 0, 24), "b": entry("BF16", [2], 24, 28)},
                               F32_2x3 + b"\x80\x3f\x00\xc0"),
    "valid-empty-header": image({}),
    "valid-every-dtype": image({"d": entry("F64", [1], 0, 8), "l": entry("I64", [1], 8, 16),
                                "f": entry("F32", [1], 16, 20), "i": entry("I32", [1], 20, 24),
                                "h": entry("F16", [1], 24, 26), "b": entry("BF16", [1], 26, 28),
                                "u": entry("U8", [2], 28, 30)}, bytes(range(30))),
    "valid-scalar-and-empty": image({"s": entry("F32", [], 0, 4), "e": entry("F32", [0, 7], 4, 4)},
                                    b"\x00\x00\x80\x3f"),
    "valid-unpadded-header": image({"w": entry("U8", [3], 0, 3)}, b"abc", pad=False),
    # broken layout
    "bad-hole": image({"a": entry("U8", [2], 0, 2), "b": entry("U8", [2], 4, 6)}, bytes(6)),
    "bad-trailing-bytes": image({"a": entry("U8", [2], 0, 2)}, bytes(5)),
    "bad-overlap": image({"a": entry("U8", [4], 0, 4), "b": entry("U8", [2], 2, 4)}, bytes(4)),
    "bad-past-the-end": image({"a": entry("F32", [4], 0, 16)}, bytes(8)),
    "bad-size-mismatch": image({"a": entry("F32", [3], 0, 8)}, bytes(8)),
    # broken values
    "bad-nested-dtype": image('{"w":{"dtype":' + "[" * 200 + "]" * 200 +
                              ',"shape":[1],"data_offsets":[0,4]}}', bytes(4)),
    "bad-nested-offsets": image('{"w":{"dtype":"F32","shape":[1],"data_offsets":' +
                                "[" * 200 + "0" + "]" * 200 + "}}", bytes(4)),
    "bad-shape-overflow": image({"w": entry("U8", [2**32, 2**32], 0, 0)}),
    "bad-bytes-overflow": image({"w": entry("F64", [2**62], 0, 0)}),
    "bad-negative-dim": image({"w": entry("F32", [2, -1], 0, 8)}, bytes(8)),
    "bad-float-offsets": image('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}}', bytes(4)),
    "bad-unknown-dtype": image({"w": entry("F8_E4M3", [4], 0, 4)}, bytes(4)),
    "bad-metadata-number": image('{"__metadata__":{"n":12}}'),
    "bad-duplicate-name": image('{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                                '"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', bytes(1)),
    "bad-duplicate-field": image('{"w":{"dtype":"U8","dtype":"F32","shape":[1],"data_offsets":[0,1]}}',
                                 bytes(1)),
    "bad-nul-after-json": image(b'{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}\0xyz', bytes(1)),
    "bad-missing-field": image('{"w":{"dtype":"U8","data_offsets":[0,1]}}', bytes(1)),
    # broken framing
    "bad-json": image('{"w":{"dtype":"F32",', pad=False),
    "bad-not-an-object": image("[1,2]"),
    "bad-header-length-past-end": image("{}", length=1000),
    "bad-header-length-over-limit": image("{}", length=2**63),
    "bad-too-short": b"\x02\x00\x00",
    "bad-invalid-utf8": image(b'{"\xff":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', bytes(1)),
}


def main():
    OUT.mkdir(exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    for name, data in CASES.items():
        (OUT / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    print(f"wrote {len(CASES)} files, {sum(len(d) for d in CASES.values())} bytes, to {OUT}")


if __name__ == "__main__":
    main()
