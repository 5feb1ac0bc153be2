#!/usr/bin/env bash
# What laptime's build and tests need, installed if missing. The README's two commands and
# .ci/run call it first.
#
#   scripts/setup.sh           check; on Debian/Ubuntu install what is missing
#   scripts/setup.sh --check   check only: list what is missing, exit 1 if anything is
#   scripts/setup.sh --host-only [--check]
#                              the same for the host-only build (cmake -DLAPTIME_CUDA=OFF: the
#                              trace analyzer and its tests), which needs no CUDA toolkit, cuDNN,
#                              cudnn-frontend or CUTLASS
#
# It checks first and installs nothing when everything is there (well under a second). On
# Debian or Ubuntu it installs the missing pieces: apt packages (as root, or through sudo) and
# Python packages with pip for the python3 on PATH, the one CMake finds. On other systems it
# prints what to install and exits 1. The CUDA toolkit and cuDNN are not installed here (which
# build fits the driver is the machine owner's choice): without them it says so and exits 1.
set -euo pipefail

check_only=0
host_only=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --host-only) host_only=1 ;;
    *) echo "usage: scripts/setup.sh [--host-only] [--check]" >&2; exit 2 ;;
  esac
done

say() { echo "setup.sh: $*" >&2; }
# CUTLASS's headers (layers/cutlass/: the sm_90a GEMMs), one version on every machine: the
# kernels are tuned and checked against it.
cutlass_pin=nvidia-cutlass==4.2.0.0

apt_missing=()   # Debian package names
pip_missing=()   # PyPI names
other_missing=() # what no package manager here provides

have() { command -v "$1" >/dev/null 2>&1; }
header() {  # header FILE: true when some include folder of the usual ones holds it
  local d
  for d in /usr/include /usr/local/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
    [[ -e "$d/$1" ]] && return 0
  done
  return 1
}
version_ge() { [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" == "$2" ]]; }

check() {
  apt_missing=(); pip_missing=(); other_missing=()
  have cmake || apt_missing+=(cmake)
  if have cmake; then
    local v
    v=$(cmake --version | head -1 | awk '{print $3}')
    version_ge "$v" 3.24 || other_missing+=("CMake >= 3.24 (found $v; pip install cmake gives a newer one)")
  fi
  have g++ || apt_missing+=(g++)
  have make || apt_missing+=(make)
  header gtest/gtest.h || apt_missing+=(libgtest-dev)
  header gmock/gmock.h || apt_missing+=(libgmock-dev)
  header nlohmann/json.hpp || apt_missing+=(nlohmann-json3-dev)
  header CLI/CLI.hpp || apt_missing+=(libcli11-dev)
  header sqlite3.h || apt_missing+=(libsqlite3-dev)
  header re2/re2.h || apt_missing+=(libre2-dev)  # --range re:REGEX, matched in linear time
  header rapidjson/reader.h || apt_missing+=(rapidjson-dev)  # the PyTorch profiler's JSON, streamed
  header zlib.h || apt_missing+=(zlib1g-dev)                 # ... and its .json.gz, inflated as read

  if ! have python3; then
    apt_missing+=(python3 python3-pip ca-certificates)
    pip_missing+=(numpy safetensors pytest "jsonschema>=4.18")
    [[ $host_only == 1 ]] || pip_missing+=(nvidia-cudnn-frontend "$cutlass_pin")
  else
    # One interpreter start for every Python check: pip, the modules, then cudnn-frontend's
    # headers where CMake looks for them (layers/CMakeLists.txt: <site>/include,
    # $CUDNN_FRONTEND_ROOT) and CUTLASS's (layers/cutlass/cutlass.cmake:
    # <site>/cutlass_library/source/include, $CUTLASS_ROOT/include).
    local py
    py=$(LAPTIME_SETUP_HOST_ONLY=$host_only LAPTIME_CUTLASS_PIN=$cutlass_pin python3 - <<'EOF'
import importlib.util, os, re, site, sysconfig
for name, module in (("@pip", "pip"), ("numpy", "numpy"), ("safetensors", "safetensors"), ("pytest", "pytest")):
    if importlib.util.find_spec(module) is None:
        print(name)
# The JSON Schemas' test (tests/schema): jsonschema with its `referencing` registry (4.18 on).
if importlib.util.find_spec("jsonschema") is None or importlib.util.find_spec("referencing") is None:
    print("jsonschema>=4.18")
roots = [os.path.join(p, "include") for p in (sysconfig.get_paths()["purelib"], site.getusersitepackages())]
if os.environ.get("CUDNN_FRONTEND_ROOT"):
    roots.append(os.path.join(os.environ["CUDNN_FRONTEND_ROOT"], "include"))
ok = False
for r in roots:
    try:
        text = open(os.path.join(r, "cudnn_frontend_version.h")).read()
    except OSError:
        continue
    v = [int(re.search(r"CUDNN_FRONTEND_%s_VERSION (\d+)" % k, text).group(1)) for k in ("MAJOR", "MINOR")]
    ok = ok or tuple(v) >= (1, 32)
if not ok and os.environ.get("LAPTIME_SETUP_HOST_ONLY") != "1":
    print("nvidia-cudnn-frontend")
cutlass = [os.path.join(p, "cutlass_library", "source", "include") for p in (sysconfig.get_paths()["purelib"], site.getusersitepackages())]
if os.environ.get("CUTLASS_ROOT"):
    cutlass.append(os.path.join(os.environ["CUTLASS_ROOT"], "include"))
ok = False
for r in cutlass:
    try:
        text = open(os.path.join(r, "cutlass", "version.h")).read()
    except OSError:
        continue
    v = [int(re.search(r"#define CUTLASS_%s (\d+)" % k, text).group(1)) for k in ("MAJOR", "MINOR")]
    ok = ok or tuple(v) >= (4, 2)
if not ok and os.environ.get("LAPTIME_SETUP_HOST_ONLY") != "1":
    print(os.environ["LAPTIME_CUTLASS_PIN"])
EOF
    ) || py="@pip numpy safetensors pytest jsonschema>=4.18$([[ $host_only == 1 ]] || echo " nvidia-cudnn-frontend $cutlass_pin")"
    local p
    for p in $py; do
      if [[ $p == @pip ]]; then apt_missing+=(python3-pip ca-certificates); else pip_missing+=("$p"); fi
    done
  fi

  [[ $host_only == 1 ]] && return 0
  # Not installed by this script: CUDA (nvcc, cuBLASLt, CUPTI, NVTX) and cuDNN 9.
  local cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
  if ! have nvcc && [[ ! -x "$cuda/bin/nvcc" ]]; then
    other_missing+=("the CUDA toolkit 12+ (nvcc not on PATH nor in $cuda/bin; https://developer.nvidia.com/cuda-downloads)")
  fi
  local found_cudnn=0 d
  for d in "$cuda/include" "${CUDNN_ROOT:-/nonexistent}/include" /usr/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
    [[ -e "$d/cudnn.h" ]] && found_cudnn=1
  done
  [[ $found_cudnn == 1 ]] || other_missing+=("cuDNN 9 (cudnn.h not found; Debian/Ubuntu with NVIDIA's repository: apt-get install cudnn9-cuda-13, or set CUDNN_ROOT)")
}

report() {
  ((${#apt_missing[@]})) && say "missing system packages (Debian/Ubuntu names): ${apt_missing[*]}"
  ((${#pip_missing[@]})) && say "missing Python packages: ${pip_missing[*]} (pip install; nvidia-cudnn-frontend and nvidia-cutlass with --no-deps: only their C++ headers are used)"
  local m
  for m in "${other_missing[@]}"; do say "missing: $m"; done
}

check
if ((${#apt_missing[@]} + ${#pip_missing[@]} + ${#other_missing[@]} == 0)); then
  exit 0
fi
report
if [[ $check_only == 1 ]]; then exit 1; fi
if ((${#other_missing[@]})); then
  say "install the above first (nothing was installed: the build cannot succeed without it)"
  exit 1
fi

if ((${#apt_missing[@]})); then
  if ! have apt-get || [[ ! -e /etc/debian_version ]]; then
    say "this is not Debian or Ubuntu: install the equivalents of the packages above with your package manager, then run this again"
    exit 1
  fi
  sudo=()
  if [[ $(id -u) != 0 ]]; then
    if have sudo; then sudo=(sudo); else say "not root and no sudo: run as root, or: apt-get install ${apt_missing[*]}"; exit 1; fi
  fi
  say "installing with apt-get: ${apt_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
  check  # python3 and pip may have just arrived
fi

if ((${#pip_missing[@]})); then
  pip=(python3 -m pip install -q --disable-pip-version-check)
  [[ $(id -u) == 0 ]] && pip+=(--root-user-action=ignore)  # root on purpose: a system-wide set-up
  # Debian 12 / Ubuntu 23.04+ mark the system Python as externally managed (PEP 668); outside
  # a virtual environment pip then needs to be told that installing into it is intended.
  if python3 -c 'import sys, sysconfig, os; sys.exit(not (sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))'; then
    pip+=(--break-system-packages)
  fi
  regular=() headers=()
  for p in "${pip_missing[@]}"; do
    if [[ $p == nvidia-cudnn-frontend || $p == "$cutlass_pin" ]]; then headers+=("$p"); else regular+=("$p"); fi
  done
  say "installing with pip: ${pip_missing[*]}"
  ((${#regular[@]})) && "${pip[@]}" "${regular[@]}"
  # Only their C++ headers are used; --no-deps skips their Python packages (cudnn-frontend's
  # ~530 MB DSL, CUTLASS's cuda-python, scipy, networkx...).
  ((${#headers[@]})) && "${pip[@]}" -U --no-deps "${headers[@]}"
fi

check
if ((${#apt_missing[@]} + ${#pip_missing[@]} + ${#other_missing[@]})); then
  report
  say "still missing after installing: see above"
  exit 1
fi
say "everything laptime needs is installed"
