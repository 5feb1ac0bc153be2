#!/usr/bin/env python3
"""Convert GPT-2 and ResNet-50 checkpoints to laptime's safetensors files, or write seeded
random weights of the same shapes.

    python3 weights/convert.py gpt2 --input ~/hf/gpt2 --output gpt2.safetensors
    python3 weights/convert.py gpt2 --random --seed 0 --output gpt2-random.safetensors
    python3 weights/convert.py resnet50 --input resnet50-0676ba61.pth --output resnet50.safetensors
    python3 weights/convert.py resnet50 --random --seed 0 --output resnet50-random.safetensors

The tensor names, layouts and metadata written here are the contract in weights/FORMAT.md;
the C++ models load exactly that. Every expected tensor is checked for presence and shape,
and anything left over is an error too, so a checkpoint of another architecture fails here
with one sentence instead of producing a file the models would misread.

Needs numpy and safetensors; torch only to read PyTorch pickles (.pth / .bin).
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np

FORMAT_VERSION = "1"

# Upper bounds on every shape value, from --random's options or a config.json: far above any
# real GPT-2 or ResNet, low enough that a typo (n_layer: 1000000000) is one sentence instead of
# a loop that never ends or an allocation that fails. The C++ loader takes values below 2**31.
LIMITS = {
    "n_layer": 1024,
    "n_head": 1024,
    "n_embd": 65536,
    "vocab_size": 2**24,
    "n_positions": 65536,
    "n_ctx": 65536,
    "blocks": 999,  # per ResNet stage, as the C++ loader accepts
    "base_width": 4096,  # as the C++ loader accepts
    "num_classes": 2**20,
    "image_size": 8192,
}
# Parameters --random may draw (GPT-2 XL has 1.6e9): 2**33 fp32 values are 32 GiB.
MAX_PARAMETERS = 2**33
OUTPUT_DTYPES = ("f32", "bf16", "f16")


class ConvertError(Exception):
    """A problem with the user's input, reported as one sentence and exit code 1."""


class Param(NamedTuple):
    name: str  # laptime name (weights/FORMAT.md)
    shape: Tuple[int, ...]  # laptime layout
    kind: str  # how --random draws it: a key of the init table in random_gpt2 / random_resnet50


def shape_str(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# --- reading checkpoints -----------------------------------------------------------------------

# Input dtypes numpy holds natively; BF16 has no numpy type and is widened by hand.
_NUMPY_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 is the top half of a float32, so widening is a shift."""
    return (bits.astype("<u4") << 16).view("<f4")


def read_safetensors(path: Path) -> Dict[str, np.ndarray]:
    # safetensors.numpy.load_file cannot return BF16 (numpy has no such type), so read the raw
    # views with the library's own parser and build the arrays here.
    from safetensors import deserialize

    try:
        views = deserialize(path.read_bytes())
    except Exception as e:  # the library's exception types vary between versions
        raise ConvertError(f"cannot read {path} as safetensors: {e}") from None
    out = {}
    for name, view in views:
        dtype, shape, data = view["dtype"], view["shape"], view["data"]
        if dtype == "BF16":
            out[name] = bf16_bits_to_f32(np.frombuffer(data, "<u2")).reshape(shape)
        elif dtype in _NUMPY_DTYPES:
            out[name] = np.frombuffer(data, _NUMPY_DTYPES[dtype]).reshape(shape)
        else:
            raise ConvertError(
                f"tensor '{name}' in {path} has dtype {dtype}, which the converter does not read"
            )
    return out


def read_torch_pickle(path: Path) -> Dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise ConvertError(
            f"reading {path} needs PyTorch (pip install torch); "
            "a .safetensors checkpoint needs only numpy and safetensors"
        ) from None
    try:
        # weights_only refuses arbitrary pickled code: a checkpoint is data, not a program.
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise ConvertError(f"cannot read {path} as a PyTorch checkpoint: {e}") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ConvertError(f"{path} is not a state dict (a mapping of names to tensors)")
    return {name: (t.float() if t.is_floating_point() else t).numpy() for name, t in state.items()}


def read_checkpoint(path: Path) -> Dict[str, np.ndarray]:
    if path.exists() and not path.is_file():  # a FIFO would block the read forever
        raise ConvertError(
            f"input checkpoint {path} is {_kind(path.stat().st_mode)}, not a regular file"
        )
    if not path.is_file():
        raise ConvertError(f"input checkpoint {path} does not exist")
    if path.suffix == ".safetensors":
        return read_safetensors(path)
    if path.suffix in (".pth", ".pt", ".bin"):
        return read_torch_pickle(path)
    raise ConvertError(
        f"input {path} is neither .safetensors nor a PyTorch .pth/.pt/.bin checkpoint"
    )


def match_layout(
    tensors: Dict[str, np.ndarray],
    layout: List[Param],
    source: Path,
    names: Dict[str, str],
    input_shape: Callable[[Param], Tuple[int, ...]],
) -> Dict[str, np.ndarray]:
    """Picks every tensor of `layout` from `tensors` (keyed by laptime name), checking its
    shape in the checkpoint's own layout; fails on anything missing, misshapen or left over.
    `names` maps laptime names back to the checkpoint's, so messages quote the file."""
    picked = {}
    for p in layout:
        original = names.get(p.name, p.name)
        if p.name not in tensors:
            raise ConvertError(f"tensor '{original}' is missing from {source}")
        array, expected = tensors[p.name], input_shape(p)
        if tuple(array.shape) != expected:
            raise ConvertError(
                f"tensor '{original}' in {source} has shape {shape_str(array.shape)}, "
                f"expected {shape_str(expected)}"
            )
        if not np.issubdtype(array.dtype, np.floating):
            raise ConvertError(
                f"tensor '{original}' in {source} holds {array.dtype} values, "
                "expected floating point"
            )
        picked[p.name] = array
    extra = sorted(set(tensors) - set(picked))
    if extra:
        raise ConvertError(
            f"{source} holds tensor '{names.get(extra[0], extra[0])}', which the laptime "
            f"layout does not have ({len(extra)} unexpected tensor(s) in all)"
        )
    return picked


# --- writing -----------------------------------------------------------------------------------


def f32_to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Rounds float32 to the nearest bfloat16, ties to even (what torch's .to(bfloat16) does)."""
    bits = np.ascontiguousarray(a, "<f4").view("<u4")
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")


def encode(name: str, array: np.ndarray, dtype: str) -> Tuple[str, bytes]:
    """The safetensors dtype and little-endian bytes of `array` stored as `dtype`."""
    array = np.asarray(array, "<f4")
    if not np.isfinite(array).all():
        raise ConvertError(f"tensor '{name}' holds non-finite values; the checkpoint is corrupt")
    if dtype == "f32":
        return "F32", array.tobytes()
    if dtype == "f16":
        if np.abs(array).max(initial=0) > np.finfo(np.float16).max:
            raise ConvertError(
                f"tensor '{name}' holds values beyond the float16 range; use --dtype bf16 or f32"
            )
        return "F16", array.astype("<f2").tobytes()
    bits = f32_to_bf16_bits(array)
    if ((bits & 0x7F80) == 0x7F80).any():  # rounded up past the largest finite bfloat16
        raise ConvertError(
            f"tensor '{name}' holds values beyond the bfloat16 range; use --dtype f32"
        )
    return "BF16", bits.tobytes()


def write_safetensors(
    path, tensors: Dict[str, np.ndarray], dtype: str, metadata: Dict[str, str], inputs=()
) -> None:
    """Writes a safetensors file with tensors in the given (model) order.

    Written here rather than with safetensors.numpy because numpy has no bfloat16. The image
    is what the reference writer produces: header padded with spaces to a multiple of 8, so
    every tensor starts aligned. The output is a pure function of the inputs, which makes
    --random files byte-for-byte reproducible. It is written as every laptime output is
    (write_output): whole or not at all, never onto an input or a non-regular file.
    """
    header: Dict[str, object] = {"__metadata__": metadata}
    blobs, offset = [], 0
    for name, array in tensors.items():
        st_dtype, blob = encode(name, array, dtype)
        header[name] = {
            "dtype": st_dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    write_output(path, [len(text).to_bytes(8, "little"), text, *blobs], inputs)


# --- the output file ---------------------------------------------------------------------------
# core/output_file.h's rules for one output, mirrored here because this tool runs where torch is,
# often with no laptime build to call: never onto an input (links followed), never replacing what
# is not a regular file, a link at the path replaced and never written through, the folder
# checked before the work, a temporary made (O_EXCL | O_NOFOLLOW) and renamed through one
# descriptor of the folder, stale temporaries removed, nothing left by a failed write, descriptors
# 0-2 never an output's, the same sentences. One table pins both, tests/fixtures/output_rules.json:
# its cases run against core/output_file (tests/test_output_file.cpp) and against check_output and
# write_output here (tests/python/test_output_rules.py), so a rule changed on one side only fails.

OUTPUT_WHAT = "weights file"  # how the sentences name --output, as laptime's name "the JSON report"
_TEMP_MARKER = ".laptime-"
_TEMP_SUFFIX = ".tmp"
_PID_DIGITS = 10  # room kept for any PID, so a shortened name does not depend on it


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _folder_of(path) -> str:
    return os.path.dirname(os.fspath(path)) or "."


def _name_max(folder) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")  # a path or a descriptor
    except (OSError, ValueError):
        return 255


def _stat(path) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _entry(path: str):
    """Equal for two paths that name one directory entry, whether it exists yet: the folder's
    device and inode, and the name in it (a link is an entry of its own)."""
    folder = _stat(_folder_of(path))
    if folder is None:
        return ("path", os.path.normpath(os.path.abspath(path)))
    return ("entry", folder.st_dev, folder.st_ino, os.path.basename(path))


def check_output(path, inputs=(), what: str = OUTPUT_WHAT) -> str:
    """`path` (as given) when the output may be written there, else ConvertError with the
    sentence core/output_file's check_outputs gives for it."""
    path = os.fspath(path)
    to = f"the {what} to {path}"
    inputs = [os.fspath(p) for p in inputs if os.fspath(p) not in ("", "-")]
    lstat_error = 0
    try:
        lst = os.lstat(path)
    except OSError as e:
        lst, lstat_error = None, e.errno
    if lst is not None:
        # A symbolic link is replaced, never written through; anything else must be a file.
        if not stat.S_ISLNK(lst.st_mode) and not stat.S_ISREG(lst.st_mode):
            raise ConvertError(
                f"refusing to write {to}: it is {_kind(lst.st_mode)}, not a regular file"
            )
        st = _stat(path)  # a link to an input is refused as the input itself would be
        for source in inputs if st is not None else ():
            other = _stat(source)
            if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                raise ConvertError(
                    f"refusing to write {to}: it is the same file as the input {source}"
                )
    elif lstat_error not in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
        raise ConvertError(f"cannot write {to}: {os.strerror(lstat_error)}")  # a loop, no access
    for source in inputs:  # an input that is not there yet is still the input
        if _stat(source) is None and _entry(source) == _entry(path):
            raise ConvertError(
                f"refusing to write {to}: it is the file the command reads as its input {source}"
            )
    name = os.path.basename(path)
    if name in ("", ".", ".."):
        raise ConvertError(f"cannot write {to}: it names a folder, not a file")
    folder = _folder_of(path)
    folder_st = _stat(folder)
    if folder_st is None:
        raise ConvertError(f"cannot write {to}: folder {folder} does not exist")
    if not stat.S_ISDIR(folder_st.st_mode):
        raise ConvertError(f"cannot write {to}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        # access(2)'s reason: a read-only file system, else no permission
        read_only = os.statvfs(folder).f_flag & os.ST_RDONLY
        reason = os.strerror(errno.EROFS if read_only else errno.EACCES)
        raise ConvertError(f"cannot write {to}: folder {folder} is not writable ({reason})")
    limit = _name_max(folder)
    if len(os.fsencode(name)) > limit:
        raise ConvertError(
            f"cannot write {to}: its file name is {len(os.fsencode(name))} bytes long, "
            f"over the folder's limit of {limit}"
        )
    if lstat_error == errno.ENAMETOOLONG:  # the whole path, not its last name, is too long
        raise ConvertError(f"cannot write {to}: {os.strerror(lstat_error)}")
    return path


def write_output(path, chunks: Iterable[bytes], inputs=(), what: str = OUTPUT_WHAT) -> None:
    """Writes the chunks to `path` as core/output_file's OutputFile does: checked first, then a
    temporary beside it, made and renamed through one descriptor of the folder (whatever happens
    to the path's links meanwhile), every write, the fsync and the close checked, renamed onto
    the target only when complete, an existing regular file's mode kept. Errors name `path`."""
    path = check_output(path, inputs, what)
    name = os.path.basename(path)
    try:
        folder_fd = os.open(_folder_of(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise ConvertError(f"cannot write the {what} to {path}: {e.strerror or e}") from None
    tmp = None
    try:
        name_max = _name_max(folder_fd)
        remove_stale_temporaries(path, folder_fd)
        tmp = temporary_name(name, name_max, os.getpid())
        try:  # ours from an earlier write of this process that was not cleaned
            os.unlink(tmp, dir_fd=folder_fd)
        except FileNotFoundError:
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o666, dir_fd=folder_fd)
        if fd <= 2:  # never let a write to standard output or error land in the file
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = moved
        with os.fdopen(fd, "wb") as f:
            old = _lstat_in(folder_fd, name)  # keep an overwritten regular file's mode
            if old is not None and stat.S_ISREG(old.st_mode):
                os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        # The target may have changed since the check (a FIFO made meanwhile): still never replaced.
        now = _lstat_in(folder_fd, name)
        if now is not None and not stat.S_ISREG(now.st_mode) and not stat.S_ISLNK(now.st_mode):
            raise ConvertError(
                f"refusing to write the {what} to {path}: it is {_kind(now.st_mode)}, "
                "not a regular file"
            )
        os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        tmp = None
    except OSError as e:  # a full disk, a quota: named by the user's path, not the temporary
        raise ConvertError(f"cannot write the {what} to {path}: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=folder_fd)
            except FileNotFoundError:
                pass
        os.close(folder_fd)


def _lstat_in(folder_fd: int, name: str) -> Optional[os.stat_result]:
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _temp_stem(name: str, name_max: int) -> str:
    """The output's name, or when the temporary would pass the folder's limit, a prefix of it
    (whole characters) and 16 hex digits of an FNV-1a hash of the whole name."""
    raw = os.fsencode(name)
    fixed = 1 + len(_TEMP_MARKER) + _PID_DIGITS + len(_TEMP_SUFFIX)
    if fixed + len(raw) <= name_max:
        return name
    h = 0xCBF29CE484222325  # FNV-1a 64: offset basis and prime
    for byte in raw:
        h = ((h ^ byte) * 0x100000001B3) % 2**64
    keep = min(max(name_max - fixed - 17, 0), len(raw))
    while keep > 0 and (raw[keep] & 0xC0) == 0x80:  # not inside a UTF-8 character
        keep -= 1
    return os.fsdecode(raw[:keep]) + f"~{h:016x}"


def temporary_name(name: str, name_max: int, pid: int) -> str:
    """".NAME.laptime-PID.tmp": the temporary a process writes for an output named `name`."""
    return f".{_temp_stem(name, name_max)}{_TEMP_MARKER}{pid}{_TEMP_SUFFIX}"


def temporary_for(target, pid: int, name_max: Optional[int] = None) -> Path:
    target = Path(target)
    if name_max is None:
        name_max = _name_max(_folder_of(target))
    return target.with_name(temporary_name(target.name, name_max, pid))


def remove_stale_temporaries(target, folder_fd: Optional[int] = None) -> int:
    """Removes the temporaries of `target` whose process no longer exists; returns how many."""
    folder = _folder_of(target)
    where = folder if folder_fd is None else folder_fd
    prefix = f".{_temp_stem(os.path.basename(os.fspath(target)), _name_max(where))}{_TEMP_MARKER}"
    removed = 0
    for entry in os.listdir(where):
        if not (entry.startswith(prefix) and entry.endswith(_TEMP_SUFFIX)):
            continue
        digits = entry[len(prefix) : -len(_TEMP_SUFFIX)]
        if not digits.isdigit() or len(digits) > 9 or int(digits) in (0, os.getpid()):
            continue
        try:
            os.kill(int(digits), 0)
            continue  # alive
        except ProcessLookupError:
            pass
        except OSError:
            continue  # not ours to judge
        try:
            if folder_fd is None:
                os.unlink(os.path.join(folder, entry))
            else:
                os.unlink(entry, dir_fd=folder_fd)
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def reserve_standard_descriptors() -> None:
    """Descriptors 0-2 that are closed (`convert.py ... >&-`) are held on /dev/null in the mode
    that makes every use fail, so no file this run opens becomes standard output or error (as
    core/output_file.h's reserve_standard_descriptors, after gnulib's stdopen)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_WRONLY if fd == 0 else os.O_RDONLY)
        if null != fd:
            os.dup2(null, fd, inheritable=True)
            os.close(null)


def input_files(model: str, path: Optional[Path]) -> List[Path]:
    """Every file a conversion from `path` reads (a folder: what is in it; GPT-2's checkpoint
    file: the config.json beside it too)."""
    if path is None:
        return []
    if path.is_dir():
        return [p for p in path.iterdir()]
    return [path, path.parent / "config.json"] if model == "gpt2" else [path]


# --- GPT-2 -------------------------------------------------------------------------------------

# HF's GPT-2 implements these with Conv1D, whose weight is [in, out]; laptime stores
# nn.Linear's [out, in].
_CONV1D_WEIGHT = re.compile(r"h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight")
# The causal mask and its fill value: buffers HF saves with the weights, rebuilt by the kernels.
_GPT2_BUFFER = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)")


def gpt2_layout(n_layer: int, n_embd: int, vocab_size: int, n_ctx: int) -> List[Param]:
    C = n_embd
    layout = [
        Param("wte.weight", (vocab_size, C), "embedding"),
        Param("wpe.weight", (n_ctx, C), "embedding"),
    ]
    for i in range(n_layer):
        h = f"h.{i}"
        layout += [
            Param(f"{h}.ln_1.weight", (C,), "ln.weight"),
            Param(f"{h}.ln_1.bias", (C,), "ln.bias"),
            Param(f"{h}.attn.c_attn.weight", (3 * C, C), "linear.weight"),
            Param(f"{h}.attn.c_attn.bias", (3 * C,), "linear.bias"),
            Param(f"{h}.attn.c_proj.weight", (C, C), "residual_proj.weight"),
            Param(f"{h}.attn.c_proj.bias", (C,), "linear.bias"),
            Param(f"{h}.ln_2.weight", (C,), "ln.weight"),
            Param(f"{h}.ln_2.bias", (C,), "ln.bias"),
            Param(f"{h}.mlp.c_fc.weight", (4 * C, C), "linear.weight"),
            Param(f"{h}.mlp.c_fc.bias", (4 * C,), "linear.bias"),
            Param(f"{h}.mlp.c_proj.weight", (C, 4 * C), "residual_proj.weight"),
            Param(f"{h}.mlp.c_proj.bias", (C,), "linear.bias"),
        ]
    return layout + [Param("ln_f.weight", (C,), "ln.weight"), Param("ln_f.bias", (C,), "ln.bias")]


def gpt2_metadata(
    n_layer, n_head, n_embd, vocab_size, n_ctx, layer_norm_epsilon, source
) -> Dict[str, str]:
    if n_embd % n_head:
        raise ConvertError(f"n_embd {n_embd} is not a multiple of n_head {n_head}")
    return {
        "laptime.format": FORMAT_VERSION,
        "laptime.model": "gpt2",
        "laptime.source": source,
        "gpt2.n_layer": str(n_layer),
        "gpt2.n_head": str(n_head),
        "gpt2.n_embd": str(n_embd),
        "gpt2.vocab_size": str(vocab_size),
        "gpt2.n_ctx": str(n_ctx),
        "gpt2.layer_norm_epsilon": repr(float(layer_norm_epsilon)),
    }


# A model's config.json is a few KB nested a few levels; these bounds turn a hostile one into a
# sentence (Python's json recurses once per level: 5,000 levels were a RecursionError).
MAX_CONFIG_BYTES = 16 * 2**20
MAX_CONFIG_DEPTH = 128


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON text, by one pass over it (no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def read_gpt2_config(path: Path) -> dict:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    if st is None:
        raise ConvertError(
            f"{path} does not exist; GPT-2 conversion needs the config.json "
            "that comes with the checkpoint"
        )
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read forever
        raise ConvertError(f"{path} is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > MAX_CONFIG_BYTES:
        raise ConvertError(
            f"{path} is {st.st_size:,} bytes, too large for a model config (at most {MAX_CONFIG_BYTES:,})"
        )
    try:
        text = path.read_text()
        brackets = text.count("[") + text.count("{")
        if brackets > MAX_CONFIG_DEPTH and json_depth(text) > MAX_CONFIG_DEPTH:
            raise ConvertError(
                f"{path} nests JSON arrays or objects more than {MAX_CONFIG_DEPTH} deep; "
                "it is not a model config"
            )
        config = json.loads(text)
    except (ValueError, OSError, RecursionError) as e:
        reason = "it nests too deeply" if isinstance(e, RecursionError) else e
        raise ConvertError(f"cannot read {path} as JSON: {reason}") from None
    if not isinstance(config, dict):
        raise ConvertError(f"{path} is not a JSON object")
    if config.get("model_type", "gpt2") != "gpt2":
        raise ConvertError(f"{path} describes a '{config['model_type']}' model, not gpt2")
    # n_positions is the current name of the context length; old configs call it n_ctx.
    config.setdefault("n_positions", config.get("n_ctx"))
    for key in ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions"):
        value = config.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConvertError(f"{path} has no positive integer '{key}'")
        if value > LIMITS[key]:
            raise ConvertError(
                f"{path} has {key} = {value}, above laptime's limit of {LIMITS[key]}"
            )
    eps = config.setdefault("layer_norm_epsilon", 1e-5)
    if not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise ConvertError(
            f"{path} has layer_norm_epsilon {eps!r}, expected a small positive number"
        )
    # What the kernels implement: a 4C MLP with tanh-approximated GELU and 1/sqrt(head_dim)
    # attention scaling. Anything else would convert fine and then compute the wrong function.
    n_inner = config.get("n_inner")
    if n_inner is not None and n_inner != 4 * config["n_embd"]:
        raise ConvertError(
            f"{path} sets n_inner = {n_inner}, "
            f"but laptime's MLP is 4 * n_embd = {4 * config['n_embd']} wide"
        )
    activation = config.get("activation_function", "gelu_new")
    if activation not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ConvertError(
            f"{path} uses activation '{activation}', "
            "but laptime implements only tanh-approximated GELU (gelu_new)"
        )
    if config.get("scale_attn_by_inverse_layer_idx") or not config.get("scale_attn_weights", True):
        raise ConvertError(
            f"{path} changes the attention scaling, which laptime does not implement"
        )
    return config


def gpt2_input_files(path: Path) -> Tuple[Path, Path]:
    """(checkpoint, config.json) for a HF model folder or a checkpoint file inside one."""
    if path.is_dir():
        for name in ("model.safetensors", "pytorch_model.bin"):
            if (path / name).is_file():
                return path / name, path / "config.json"
        raise ConvertError(f"{path} holds neither model.safetensors nor pytorch_model.bin")
    if not path.exists():
        raise ConvertError(f"input {path} does not exist")
    if not path.is_file():  # a FIFO would block the read forever
        raise ConvertError(f"input {path} is {_kind(path.stat().st_mode)}, not a regular file")
    return path, path.parent / "config.json"


def convert_gpt2(path: Path) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    checkpoint_path, config_path = gpt2_input_files(path)
    config = read_gpt2_config(config_path)
    tensors, names = {}, {}
    for original, array in read_checkpoint(checkpoint_path).items():
        # GPT2LMHeadModel saves its body under `transformer.`; GPT2Model saves it bare.
        name = original[len("transformer.") :] if original.startswith("transformer.") else original
        if _GPT2_BUFFER.fullmatch(name):
            continue
        tensors[name], names[name] = array, original
    lm_head = tensors.pop("lm_head.weight", None)
    if (
        lm_head is not None
        and "wte.weight" in tensors
        and not np.array_equal(lm_head, tensors["wte.weight"])
    ):
        raise ConvertError(
            f"lm_head.weight in {checkpoint_path} differs from wte.weight, but laptime ties the two"
        )

    def as_stored(p: Param) -> Tuple[int, ...]:
        return p.shape[::-1] if _CONV1D_WEIGHT.fullmatch(p.name) else p.shape

    layout = gpt2_layout(
        config["n_layer"], config["n_embd"], config["vocab_size"], config["n_positions"]
    )
    picked = match_layout(tensors, layout, checkpoint_path, names, as_stored)
    out = {
        p.name: (
            np.ascontiguousarray(picked[p.name].T)
            if _CONV1D_WEIGHT.fullmatch(p.name)
            else picked[p.name]
        )
        for p in layout
    }
    metadata = gpt2_metadata(
        config["n_layer"],
        config["n_head"],
        config["n_embd"],
        config["vocab_size"],
        config["n_positions"],
        config["layer_norm_epsilon"],
        checkpoint_path.name,
    )
    return out, metadata


def random_gpt2(seed: int, n_layer: int, n_head: int, n_embd: int, vocab_size: int, n_ctx: int):
    metadata = gpt2_metadata(
        n_layer, n_head, n_embd, vocab_size, n_ctx, 1e-5, f"random:seed={seed}"
    )
    # HF's init (N(0, 0.02); residual projections scaled by 1/sqrt(2 n_layer), GPT-2 paper 2.3),
    # except that biases and LayerNorm parameters are drawn non-trivially: a bias left out or a
    # LayerNorm applied without its affine part must change the output for the tests to see it.
    residual_std = 0.02 / math.sqrt(2 * n_layer)
    init = {
        "embedding": lambda rng, s: normal(rng, s, 0.02),
        "linear.weight": lambda rng, s: normal(rng, s, 0.02),
        "residual_proj.weight": lambda rng, s: normal(rng, s, residual_std),
        "linear.bias": lambda rng, s: normal(rng, s, 0.02),
        "ln.weight": lambda rng, s: 1 + normal(rng, s, 0.1),
        "ln.bias": lambda rng, s: normal(rng, s, 0.1),
    }
    return fill(gpt2_layout(n_layer, n_embd, vocab_size, n_ctx), init, seed), metadata


# --- ResNet-50 ---------------------------------------------------------------------------------

EXPANSION = 4  # bottleneck output channels = 4 x its inner width


def resnet_layout(layers: Tuple[int, ...], base_width: int, num_classes: int) -> List[Param]:
    def bn(prefix: str, channels: int) -> List[Param]:
        return [
            Param(f"{prefix}.{stat}", (channels,), f"bn.{stat}")
            for stat in ("weight", "bias", "running_mean", "running_var")
        ]

    layout = [Param("conv1.weight", (base_width, 3, 7, 7), "conv"), *bn("bn1", base_width)]
    in_ch = base_width
    for stage, blocks in enumerate(layers):
        width = base_width << stage
        out_ch = width * EXPANSION
        for b in range(blocks):
            p = f"layer{stage + 1}.{b}"
            layout += [
                Param(f"{p}.conv1.weight", (width, in_ch, 1, 1), "conv"),
                *bn(f"{p}.bn1", width),
                Param(f"{p}.conv2.weight", (width, width, 3, 3), "conv"),
                *bn(f"{p}.bn2", width),
                Param(f"{p}.conv3.weight", (out_ch, width, 1, 1), "conv"),
                *bn(f"{p}.bn3", out_ch),
            ]
            if b == 0:  # the first block changes the channel count (and, after stage 1, the stride)
                layout += [
                    Param(f"{p}.downsample.0.weight", (out_ch, in_ch, 1, 1), "conv"),
                    *bn(f"{p}.downsample.1", out_ch),
                ]
            in_ch = out_ch
    return layout + [
        Param("fc.weight", (num_classes, in_ch), "fc.weight"),
        Param("fc.bias", (num_classes,), "fc.bias"),
    ]


def resnet_metadata(layers, base_width, num_classes, image_size, source) -> Dict[str, str]:
    return {
        "laptime.format": FORMAT_VERSION,
        "laptime.model": "resnet50",
        "laptime.source": source,
        "resnet.layers": ",".join(str(n) for n in layers),
        "resnet.base_width": str(base_width),
        "resnet.num_classes": str(num_classes),
        "resnet.bn_eps": repr(1e-5),
        "resnet.image_size": str(image_size),
    }


def infer_resnet_shape(
    tensors: Dict[str, np.ndarray], source: Path
) -> Tuple[Tuple[int, ...], int, int]:
    """(blocks per stage, stem width, classes), read off the names and shapes; match_layout
    then checks every tensor against them."""
    for name in ("conv1.weight", "fc.weight"):
        if name not in tensors:
            raise ConvertError(f"tensor '{name}' is missing from {source}")
        if tensors[name].ndim != (4 if name == "conv1.weight" else 2):
            raise ConvertError(
                f"tensor '{name}' in {source} has shape {shape_str(tensors[name].shape)}, "
                "which is not a ResNet's"
            )
    blocks = [0, 0, 0, 0]
    for name in tensors:
        m = re.match(r"layer([1-4])\.(\d+)\.", name)
        if m:
            stage = int(m.group(1)) - 1
            blocks[stage] = max(blocks[stage], int(m.group(2)) + 1)
    if not all(blocks):
        raise ConvertError(
            f"{source} has no layer{blocks.index(0) + 1} blocks, so it is not a four-stage ResNet"
        )
    return tuple(blocks), tensors["conv1.weight"].shape[0], tensors["fc.weight"].shape[0]


def convert_resnet50(path: Path, image_size: int) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    # BatchNorm's update counter is training state; inference never reads it.
    tensors = {
        n: a for n, a in read_checkpoint(path).items() if not n.endswith(".num_batches_tracked")
    }
    layers, base_width, num_classes = infer_resnet_shape(tensors, path)
    layout = resnet_layout(layers, base_width, num_classes)
    picked = match_layout(tensors, layout, path, {}, lambda p: p.shape)
    return {p.name: picked[p.name] for p in layout}, resnet_metadata(
        layers, base_width, num_classes, image_size, path.name
    )


def random_resnet50(
    seed: int, layers: Tuple[int, ...], base_width: int, num_classes: int, image_size: int
):
    metadata = resnet_metadata(layers, base_width, num_classes, image_size, f"random:seed={seed}")

    def kaiming_fan_out(rng, shape):
        """torchvision's kaiming_normal_(mode="fan_out", nonlinearity="relu")."""
        return normal(rng, shape, math.sqrt(2.0 / (shape[0] * shape[2] * shape[3])))

    fc_in = (base_width << (len(layers) - 1)) * EXPANSION
    fc_bound = 1 / math.sqrt(fc_in)  # nn.Linear's default: U(+-1/sqrt(fan_in)) for weight and bias
    # torchvision starts BatchNorm as the identity (1, 0, 0, 1); drawing the statistics instead
    # makes folding them into the convolutions show up in the output when it is wrong.
    init = {
        "conv": kaiming_fan_out,
        "bn.weight": lambda rng, s: uniform(rng, s, 0.5, 1.5),
        "bn.bias": lambda rng, s: normal(rng, s, 0.1),
        "bn.running_mean": lambda rng, s: normal(rng, s, 0.1),
        "bn.running_var": lambda rng, s: uniform(rng, s, 0.5, 1.5),
        "fc.weight": lambda rng, s: uniform(rng, s, -fc_bound, fc_bound),
        "fc.bias": lambda rng, s: uniform(rng, s, -fc_bound, fc_bound),
    }
    return fill(resnet_layout(layers, base_width, num_classes), init, seed), metadata


# --- seeded random weights ---------------------------------------------------------------------


def normal(rng: np.random.Generator, shape, std: float) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)


def uniform(rng: np.random.Generator, shape, low: float, high: float) -> np.ndarray:
    return np.float32(low) + rng.random(shape, dtype=np.float32) * np.float32(high - low)


def fill(layout: List[Param], init: Dict[str, Callable], seed: int) -> Dict[str, np.ndarray]:
    """Draws every tensor in layout order from one PCG64 stream, so a seed fixes the file."""
    count = sum(math.prod(p.shape) for p in layout)
    if count > MAX_PARAMETERS:
        raise ConvertError(
            f"these shapes hold {count:,} parameters, above --random's limit of {MAX_PARAMETERS:,}"
        )
    rng = np.random.Generator(np.random.PCG64(seed))
    return {p.name: init[p.kind](rng, p.shape) for p in layout}


# --- command line ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    # Usage errors are input errors like any other: one sentence, exit code 1 (argparse uses 2).
    def error(self, message: str):
        self.exit(1, f"{self.prog}: error: {message} (see --help)\n")


def positive_int(text: str, limit: Optional[int] = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    if limit is not None and value > limit:
        raise argparse.ArgumentTypeError(f"{value} is above the limit of {limit}")
    return value


def bounded(name: str) -> Callable[[str], int]:
    """A positive integer no larger than LIMITS[name]."""

    def parse(text: str) -> int:
        return positive_int(text, LIMITS[name])

    return parse


def seed_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:40]}' is not an integer") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"{value} is not a seed from 0 to 2**64 - 1")
    return value


def output_path(text: str) -> str:
    """The path as typed (pathlib would drop a final '/' and a leading './'): check_output
    refuses what cannot be written, in the words laptime uses."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give the .safetensors file to write")
    return text


def stage_blocks(text: str) -> Tuple[int, ...]:
    parts = text.split(",")
    if len(parts) != 4:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not four comma-separated block counts like 3,4,6,3"
        )
    return tuple(positive_int(p, LIMITS["blocks"]) for p in parts)


# Shape options of --random: (flag, type, default, help). With --input the checkpoint decides.
_GPT2_SHAPE = [
    ("--n-layer", bounded("n_layer"), 12, "transformer blocks"),
    ("--n-head", bounded("n_head"), 12, "attention heads per block"),
    ("--n-embd", bounded("n_embd"), 768, "embedding width C"),
    ("--vocab-size", bounded("vocab_size"), 50257, "vocabulary size"),
    ("--n-ctx", bounded("n_ctx"), 1024, "context length (positions)"),
]
_RESNET_SHAPE = [
    ("--layers", stage_blocks, (3, 4, 6, 3), "bottleneck blocks per stage"),
    ("--base-width", bounded("base_width"), 64, "stem width; each stage doubles it"),
    ("--num-classes", bounded("num_classes"), 1000, "classifier outputs"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="convert.py",
        description=__doc__.split("\n\n")[0],
        epilog="Names, layouts and metadata: weights/FORMAT.md.",
    )
    models = parser.add_subparsers(
        dest="model",
        metavar="MODEL",
        required=True,
        help="gpt2 or resnet50 (each has its own --help)",
    )
    inputs = {
        "gpt2": "a Hugging Face GPT-2 folder (model.safetensors or pytorch_model.bin, "
        "plus config.json), or the checkpoint file inside one",
        "resnet50": "a torchvision .pth state dict (needs torch) or a timm model.safetensors",
    }
    for model, shape_options in (("gpt2", _GPT2_SHAPE), ("resnet50", _RESNET_SHAPE)):
        sub = models.add_parser(
            model,
            help=f"convert or generate {model} weights",
            description=f"Write laptime {model} weights, converted or seeded random.",
        )
        source = sub.add_mutually_exclusive_group(required=True)
        source.add_argument("--input", type=Path, metavar="PATH", help=inputs[model])
        source.add_argument(
            "--random",
            action="store_true",
            help="seeded random weights of the real shapes, for tests and timing",
        )
        sub.add_argument(
            "--output",
            type=output_path,
            required=True,
            metavar="FILE",
            help="the .safetensors file to write",
        )
        sub.add_argument(
            "--dtype",
            choices=OUTPUT_DTYPES,
            default="f32",
            help="storage type of every tensor (default f32); the models convert on upload",
        )
        if model == "resnet50":
            sub.add_argument(
                "--image-size",
                type=bounded("image_size"),
                default=224,
                metavar="N",
                help="default input resolution recorded in the metadata (default 224)",
            )
        shape = sub.add_argument_group("--random only")
        shape.add_argument(
            "--seed", type=seed_int, metavar="N", help="seed of the PCG64 generator (default 0)"
        )
        for flag, kind, default, text in shape_options:
            shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
            shape.add_argument(
                flag,
                type=kind,
                metavar="N,N,N,N" if flag == "--layers" else "N",
                help=f"{text} (default {shown})",
            )
    return parser


def run(args: argparse.Namespace) -> None:
    # The output is checked before the conversion: never an input, never a device or a FIFO.
    inputs = input_files(args.model, args.input)
    check_output(args.output, inputs)
    shape_options = _GPT2_SHAPE if args.model == "gpt2" else _RESNET_SHAPE
    random_only = [("--seed", 0)] + [(flag, default) for flag, _, default, _ in shape_options]
    values = {}
    for flag, default in random_only:
        dest = flag[2:].replace("-", "_")
        value = getattr(args, dest)
        if args.input is not None and value is not None:
            raise ConvertError(
                f"{flag} applies only with --random; with --input the checkpoint decides"
            )
        values[dest] = default if value is None else value

    if args.model == "gpt2":
        tensors, metadata = random_gpt2(**values) if args.random else convert_gpt2(args.input)
    elif args.random:
        tensors, metadata = random_resnet50(**values, image_size=args.image_size)
    else:
        tensors, metadata = convert_resnet50(args.input, args.image_size)
    write_safetensors(args.output, tensors, args.dtype, metadata, inputs)


def main(argv: Optional[List[str]] = None) -> int:
    reserve_standard_descriptors()
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except ConvertError as e:
        print(f"convert.py: error: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print("convert.py: error: not enough memory for these tensors", file=sys.stderr)
        return 1
    except OSError as e:  # unreadable input or unwritable output: the OS's reason, and the path
        reason = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        print(f"convert.py: error: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
