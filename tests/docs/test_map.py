"""The map resolves inside the repository.

Every path a document, a code comment or a message cites (`trace/analyses/roofline.h`,
`docs/PERF.md`, `results/RUN/README.md`, a Markdown link) names something the repository
holds, and nothing cites the notes the project was started from outside it. A citation may
use a placeholder word in capitals (`results/RUN/`, `tests/fixtures/NAME.sqlite`: some path
of that shape must exist), a glob (`results/2026-11-30-run3-*`), braces
(`core/output_file.{h,cpp}`), a module without its extension (`trace/read/sidecars`), or a
member of a run's archive (`results/RUN/archive.tar.xz:path/in/it`).

Run by CTest (docs.map) and as `python3 -m pytest tests/docs`.
"""

import fnmatch
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

# Files whose every line is read (documents) and files whose text is code (comments and
# messages alike: a message that names a document must name one that exists).
DOC_SUFFIXES = (".md",)
CODE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".py", ".sh", ".cmake", ".toml", ".in")
CODE_NAMES = ("CMakeLists.txt", "run")

# The notes the project started from live outside the repository: never named.
OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE|METHOD)\.md\b")
WORKSPACE = re.compile(r"(?<![\w.])/work/")
# A document named by its file name alone (PERF.md, FORMAT.md): some file of that name exists.
BARE_DOC = re.compile(r"(?<![\w/.-])([A-Z][A-Z0-9_-]*\.md)\b")

SEGMENT = r"(?:[\w.*+@%-]|\{[^}\s/]*\})+"

# What a build writes (bench/laptime, bench/liblaptime_gpu.so, bench/laptime_cutlass_probe) is
# named by its place in a build folder, not in the repository.
BUILD_OUTPUT = re.compile(r"bench/(?:lib)?laptime[\w.]*$")
# Shell and CMake: comments only (their code holds patterns and build paths, not citations).
COMMENT_ONLY = (".sh", ".cmake", "CMakeLists.txt", "run")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        if files:
            return [f for f in files if (root / f).exists()]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".git", "build"))]
        files += [os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/") for n in names]
    return files


class Tree:
    """What exists: the tracked files, their folders, and the members of each run's archive."""

    def __init__(self, root, files):
        self.root = root
        self.files = set(files)
        self.dirs = set()
        for f in files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.tops = sorted({f.split("/")[0] for f in files if "/" in f} | {f for f in files if "/" not in f})
        self._members = {}

    def members(self, archive):
        if archive not in self._members:
            with tarfile.open(self.root / archive) as t:
                self._members[archive] = {m.name.rstrip("/").removeprefix("./") for m in t.getmembers()}
        return self._members[archive]

    def exists(self, path):
        path = path.rstrip("/")
        if ".tar.xz:" in path:
            archive, member = path.split(":", 1)
            archives = [f for f in self.files if fnmatch.fnmatchcase(f, archive)] if "*" in archive else [archive]
            return any(a in self.files and self._in_archive(a, member) for a in archives)
        if any(c in path for c in "*?["):
            return any(fnmatch.fnmatchcase(p, path) for p in self.files | self.dirs)
        if path in self.files or path in self.dirs:
            return True
        # A module named without its extension: trace/read/sidecars -> sidecars.h, sidecars.cpp.
        return any(f.startswith(path + ".") for f in self.files if f.startswith(path))

    def _in_archive(self, archive, member):
        member = member.rstrip("/")
        names = self.members(archive)
        if any(c in member for c in "*?["):
            return any(fnmatch.fnmatchcase(n, member) for n in names)
        return member in names or any(n.startswith(member + "/") for n in names)


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(path[: m.start()] + alt + path[m.end() :])
    return out


PLACEHOLDER = re.compile(r"(?<![a-z])[A-Z][A-Z0-9_]*[A-Z0-9](?![a-z])")


def resolves(tree, path):
    for p in expand_braces(path):
        if tree.exists(p):
            continue
        # A placeholder in capitals (RUN, NAME, KERNEL): some path of that shape must exist.
        wild = PLACEHOLDER.sub("*", p)
        if wild != p and tree.exists(wild):
            continue
        return False
    return True


def comment_of(line):
    """The comment part of a line of code ("" when it has none)."""
    at = [i for i in (line.find("//"), line.find("#")) if i >= 0]
    return line[min(at) :] if at else ""


def comments_only(text):
    """The text with every line but its comment blanked (a line keeps its number)."""
    out = []
    for line in text.splitlines():
        s = line.lstrip()
        if s.startswith("#"):
            out.append(line)
        elif " # " in line:
            out.append(line[line.index(" # ") :])
        else:
            out.append("")
    return "\n".join(out)


def citations(tree, rel, text):
    """(line number, cited path as written, path from the root) for each path the text cites."""
    if rel.endswith(COMMENT_ONLY):
        text = comments_only(text)
    tops = "|".join(re.escape(t) for t in tree.tops if t not in ("CMakeLists.txt",))
    rooted = re.compile(r"(?<![\w/.~$-])((?:%s)/(?:%s/?)*)(?::((?:%s/?)+))?" % (tops, SEGMENT, SEGMENT))
    link = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
    here = Path(rel).parent
    for n, line in enumerate(text.splitlines(), 1):
        for m in rooted.finditer(line):
            path = m.group(1).rstrip(".:-")
            if path.endswith(".tar.xz") and m.group(2):
                path += ":" + m.group(2).rstrip(".:-")  # a member of a run's archive
            if "/" not in path.rstrip("/") or BUILD_OUTPUT.match(path):
                continue  # a folder named alone ("docs/") is prose; a build's output is not here
            yield n, path, path
        if rel.endswith(".md"):
            for m in link.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target) or target.startswith("/"):
                    continue
                resolved = os.path.normpath((here / target).as_posix()).replace(os.sep, "/")
                yield n, target, resolved


def scanned(files):
    for f in files:
        if f == SELF:
            continue
        name = f.rsplit("/", 1)[-1]
        if f.endswith(DOC_SUFFIXES):
            yield f
        elif f.startswith("tests/fixtures/") and not f.endswith((".py", ".sh")):
            continue  # recorded outputs and captures: data, not the map
        elif f.endswith(CODE_SUFFIXES) or name in CODE_NAMES:
            yield f


def broken_citations(root):
    files = tracked_files(root)
    tree = Tree(root, files)
    broken, outside = [], []
    names = {f.rsplit("/", 1)[-1] for f in files}
    for f in scanned(files):
        try:
            text = (root / f).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if not f.endswith(DOC_SUFFIXES):
                line = comment_of(line)  # in code, a test's made-up path is data, not a citation
            if OUTSIDE.search(line) or WORKSPACE.search(line):
                outside.append(f"{f}:{n}: {line.strip()[:120]}")
            elif any(m.group(1) not in names for m in BARE_DOC.finditer(line)):
                outside.append(f"{f}:{n}: {line.strip()[:120]}")
        for n, cited, path in citations(tree, f, text):
            if not resolves(tree, path):
                broken.append(f"{f}:{n}: {cited}")
    return broken, outside


def test_every_cited_path_exists():
    broken, _ = broken_citations(ROOT)
    assert not broken, "paths cited but not in the repository:\n" + "\n".join(broken)


def test_nothing_cites_notes_outside_the_repository():
    _, outside = broken_citations(ROOT)
    assert not outside, "citations of files outside the repository:\n" + "\n".join(outside)


def test_the_check_catches_what_it_is_for(tmp_path):
    """The checker on a small tree planted with each kind of citation, good and bad."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "core").mkdir()
    (tmp_path / "results" / "r1").mkdir(parents=True)
    (tmp_path / "core" / "stats.h").write_text("// docs/GOOD.md names a document that exists\n")
    (tmp_path / "core" / "stats.cpp").write_text("// core/stats.h and core/stats.{h,cpp}, core/stats\n")
    member = tmp_path / "log.txt"
    member.write_text("x")
    with tarfile.open(tmp_path / "results" / "r1" / "archive.tar.xz", "w:xz") as t:
        t.add(member, arcname="calls/log.txt")
    member.unlink()
    (tmp_path / "docs" / "GOOD.md").write_text(
        "See [the stats](../core/stats.h), results/RUN/archive.tar.xz, results/r1/archive.tar.xz:calls/log.txt,\n"
        "core/*.cpp and core/ alone.\n"
    )
    good = broken_citations(tmp_path)
    assert good == ([], []), good
    bad = "DES" + "IGN.md"
    (tmp_path / "docs" / "BAD.md").write_text(
        f"core/missing.h, [x](../core/gone.h), core/stats.{{h,hpp}}, results/r1/archive.tar.xz:calls/none.txt\n"
        f"see {bad}, and /wor" "k/elsewhere/file\n"
    )
    broken, outside = broken_citations(tmp_path)
    assert [b.split(": ", 1)[1] for b in broken] == [
        "core/missing.h",
        "core/stats.{h,hpp}",
        "results/r1/archive.tar.xz:calls/none.txt",
        "../core/gone.h",
    ], broken
    assert len(outside) == 1 and outside[0].startswith("docs/BAD.md:2:"), outside


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
