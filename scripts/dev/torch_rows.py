#!/usr/bin/env python3
"""Several bench/torch_baseline.py rows in one Python process, for scripts/dev/fp8-probe.sh.

    python3 scripts/dev/torch_rows.py RESULTS NAME "ARGS" [NAME "ARGS" ...]

Each row is torch_baseline.main(ARGS + ["--json", RESULTS/json/torch_NAME.json]), exactly what
`python3 bench/torch_baseline.py ARGS --json ...` runs, its report in RESULTS/torch_NAME.log; one
line per row on standard output ("torch_NAME (one process): rc=0 9s"). Why one process: the first fp8 probe's
PyTorch rows took 18-19 s each on the H200 machine, most of it importing torch and transformers
before the ~1 s loop; here they are imported once. Each row still builds its own model and
inputs, and the previous row's are freed (gc, torch.cuda.empty_cache) before it. A row that fails
(its exit code, or a traceback in its log) does not stop the next; the exit code is 1 if any did.
"""
import contextlib
import gc
import pathlib
import shlex
import sys
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import torch_baseline  # noqa: E402  (bench/ is not a package)


def run_row(results: pathlib.Path, name: str, args: str) -> int:
    argv = shlex.split(args) + ["--json", str(results / "json" / f"torch_{name}.json")]
    with open(results / f"torch_{name}.log", "w") as log, contextlib.redirect_stdout(log), \
            contextlib.redirect_stderr(log):
        try:
            return torch_baseline.main(argv)
        except BaseException:  # argparse's SystemExit included: the row failed, the next one runs
            traceback.print_exc()
            return 1
        finally:
            gc.collect()
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                torch.cuda.empty_cache()


def main(argv) -> int:
    if len(argv) < 4 or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    results = pathlib.Path(argv[1])
    (results / "json").mkdir(parents=True, exist_ok=True)
    failed = False
    for name, args in zip(argv[2::2], argv[3::2]):
        t0 = time.monotonic()
        rc = run_row(results, name, args)
        print(f"torch_{name} (one process): rc={rc} {time.monotonic() - t0:.0f}s", flush=True)
        failed |= rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
