"""convert.py's output file held to tests/fixtures/output_rules.json, the cases core/output_file is
held to in tests/test_output_file.cpp (OutputRules): the same outcome and the same sentence for
every case, so a rule changed on one side only fails. The table says how each case reads."""

import importlib.util
import json
import os
import random
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("convert", ROOT / "weights" / "convert.py")
convert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convert)

TABLE = json.loads((ROOT / "tests" / "fixtures" / "output_rules.json").read_text())
CASES = {case["id"]: case for case in TABLE["cases"]}


def describe(path):
    """What an entry is and holds, to compare before and after."""
    try:
        st = os.lstat(path)
    except OSError:
        return "missing"
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return f"link to {os.readlink(path)}"
    if stat.S_ISREG(st.st_mode):
        return ("file", mode, Path(path).read_bytes())
    if stat.S_ISDIR(st.st_mode):
        return f"folder {mode:o}"
    kinds = ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"))
    for test, name in kinds:
        if test(st.st_mode):
            return name
    return "other"


def snapshot(folder):
    return {name: describe(os.path.join(folder, name)) for name in os.listdir(folder)}


def dead_pid():
    """A process that is certainly gone: exited and reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def make(folder, entry, dead, labels, folders):
    name, kind = entry["name"], entry["is"]
    path = os.path.join(folder, name)
    if kind == "file":
        Path(path).write_text(entry.get("holds", ""))
        if "mode" in entry:
            os.chmod(path, int(entry["mode"], 8))
    elif kind == "symlink":
        os.symlink(entry["to"], path)
    elif kind == "hardlink":
        os.link(os.path.join(folder, entry["to"]), path)
    elif kind == "link_loop":
        os.symlink(name, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.bind(path)
    elif kind == "folder":
        os.mkdir(path)
        if "mode" in entry:
            os.chmod(path, int(entry["mode"], 8))
        folders.append(path)
    elif kind == "temporary":
        pid = dead if entry["pid"] == "dead" else os.getppid()
        temporary = convert.temporary_for(os.path.join(folder, entry["of"]), pid)
        temporary.write_text("half")
        labels[name] = temporary.name
    else:
        raise AssertionError(f"a setup entry the harness does not know: {entry}")


def attempt(out, inputs, data, line_between=False):
    """Writes `data` through write_output as convert.py does: "" when written, else the sentence.
    With a line for standard output, it is written between opening the output and writing it,
    and must fail."""
    def chunks():
        if line_between:
            try:
                os.write(1, b"the human report\n")
                yield b"the line for standard output was written somewhere"
            except OSError:
                pass
        yield data

    try:
        convert.write_output(out, chunks(), inputs, TABLE["what"])
    except convert.ConvertError as e:
        return str(e)
    return ""


def attempt_under(fault, out, inputs, data):
    """attempt() in a child process under the case's fault; the sentence comes back by a pipe."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports through the pipe)
        code = 1
        try:
            os.close(read_end)
            if fault == "file-size-limit":
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
            elif fault == "standard-output-closed":
                os.close(1)
                convert.reserve_standard_descriptors()
            elif fault == "standard-input-and-output-closed-unreserved":
                os.close(0)
                os.close(1)
            else:
                raise AssertionError(f"a fault the harness does not know: {fault}")
            message = attempt(out, inputs, data, fault != "file-size-limit")
            os.write(write_end, message.encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as r:
        message = r.read().decode()
    _, status = os.waitpid(child, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the child process failed"
    return message


@pytest.fixture
def folder():
    # Short and fresh: a socket's path must fit sun_path.
    path = tempfile.mkdtemp(prefix="laptime-rules-")
    folders = []
    yield path, folders
    for f in folders:
        os.chmod(f, 0o700)
    shutil.rmtree(path)


@pytest.mark.parametrize("case_id", list(CASES))
def test_convert_holds_the_rule(folder, case_id):
    case = CASES[case_id]
    folder, folders = folder
    if case.get("not_as_root") and os.geteuid() == 0:
        pytest.skip("root writes and searches any folder")
    labels = {}
    dead = dead_pid()
    for entry in case.get("setup", []):
        make(folder, entry, dead, labels, folders)

    name_max = os.pathconf(folder, "PC_NAME_MAX")
    at = lambda name: name if name.startswith("/") else f"{folder}/{name}"
    if "output_name_bytes" in case:
        length = {"NAME_MAX": name_max, "NAME_MAX+1": name_max + 1}[case["output_name_bytes"]]
        out = at("n" * length)
    else:
        out = at(case["output"])
    inputs = [at(name) for name in case.get("inputs", [])]
    sentence = case.get("sentence", "")
    for placeholder, value in (
        ("{what}", TABLE["what"]),
        ("{output}", out),
        ("{dir}", folder),
        ("{NAME_MAX+1}", str(name_max + 1)),
        ("{NAME_MAX}", str(name_max)),
    ):
        sentence = sentence.replace(placeholder, value)

    fault = case.get("fault", "")
    rng = random.Random()
    data = rng.randbytes(10000 if fault == "file-size-limit" else rng.randint(1, 4000))
    before, out_before = snapshot(folder), describe(out)
    try:
        convert.check_output(out, inputs, TABLE["what"])
        checked = ""
    except convert.ConvertError as e:
        checked = str(e)
    written = attempt_under(fault, out, inputs, data) if fault else attempt(out, inputs, data)
    outcome = case["outcome"]
    assert outcome in ("written", "refused", "failed"), outcome
    assert checked == (sentence if outcome == "refused" else ""), "check_output"
    assert written == ("" if outcome == "written" else sentence), "write_output"

    # Everything else as it was, less what the case removes, and no temporary left.
    expected, after = before, snapshot(folder)
    for label in case.get("removed", []):
        expected.pop(labels.get(label, label))
    if outcome == "written":
        assert os.path.dirname(out) == folder
        st = os.lstat(out)
        assert stat.S_ISREG(st.st_mode), describe(out)
        assert Path(out).read_bytes() == data, "the output holds exactly the bytes written"
        if "keeps_mode" in case:
            assert stat.S_IMODE(st.st_mode) == int(case["keeps_mode"], 8)
        expected.pop(os.path.basename(out), None)
        after.pop(os.path.basename(out))
    else:
        assert describe(out) == out_before, "the output untouched"
    assert after == expected


def test_temporary_names():
    """The temporary's name, cut and hashed near the folder's limit: core/output_file's names."""
    assert TABLE["temporaries"]
    for t in TABLE["temporaries"]:
        got = convert.temporary_name(t["name"], t["name_max"], t["pid"])
        assert got == t["temporary"], t["name"]
        assert len(os.fsencode(got)) <= t["name_max"]


def test_convert_names_its_output_as_the_table_does():
    """The sentences users of convert.py read are the table's: --output is the table's what."""
    assert convert.OUTPUT_WHAT == TABLE["what"]
