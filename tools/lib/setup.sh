# Shared by the scripts in tools/: install what is missing, configure, build, read arguments.
# Source it; it defines functions only.

WEFT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages weft's build needs (ccache is used when present, never required; Open MPI runs
# the CPU backend's ranks; CBC solves the planner's integer programs).
WEFT_BUILD_PACKAGES=(
  cmake ninja-build g++
  libboost-graph-dev libeigen3-dev libfmt-dev nlohmann-json3-dev libtbb-dev libcli11-dev
  libopenmpi-dev openmpi-bin
  coinor-libcbc-dev
)
# And those its tests add: Catch2 and Google Benchmark; chromium renders the HTML report in a test;
# python3 runs tools/docs.py, which checks the docs' generated numbers; clang 14 and its libFuzzer
# runtime build the sanitizer pass and the fuzz harnesses.
WEFT_PACKAGES=("${WEFT_BUILD_PACKAGES[@]}" catch2 libbenchmark-dev chromium python3 clang-14 libclang-rt-14-dev)

weft_install_packages() {
  local missing=() package
  for package in "${WEFT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "weft: missing Debian packages; install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "weft: installing ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Shows each "[done/total]" line of a build on stdin in place on stderr.
weft_show_progress() {
  local line
  while IFS= read -r line; do
    case "$line" in \[[0-9]*/[0-9]*\]*) printf '\r  %s' "${line%% *}" >&2 ;; esac
  done
  echo >&2
}

# weft_build BUILD_DIR [CMAKE_ARGS...]: configures when the tree is new or its arguments changed
# (ninja reconfigures by itself when a CMakeLists.txt changes), then builds.
weft_build() {
  local build_dir="$1"
  shift
  local args=(-G Ninja "$@")
  if [ "${CI:-}" = "true" ]; then args+=(-DWEFT_WERROR=ON -DWEFT_UNITY_BUILD=ON); fi
  local stamp="$build_dir/.weft-configure-args"
  if [ ! -f "$build_dir/CMakeCache.txt" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${args[*]}" ]; then
    echo "weft: configuring $build_dir" >&2
    mkdir -p "$build_dir"
    if ! cmake -S "$WEFT_ROOT" -B "$build_dir" "${args[@]}" >"$build_dir/configure.log" 2>&1; then
      cat "$build_dir/configure.log" >&2
      exit 1
    fi
    echo "${args[*]}" >"$stamp"
  fi
  echo "weft: building $build_dir${WEFT_TARGET:+ (target $WEFT_TARGET)}" >&2
  local build=(cmake --build "$build_dir" ${WEFT_TARGET:+--target "$WEFT_TARGET"})
  if [ -n "${WEFT_PROGRESS:-}" ]; then
    # Ninja's [done/total] lines, one at a time on the terminal's last line, as they come (a shell
    # loop: awk would buffer them); the log keeps them all.
    if ! "${build[@]}" 2>&1 | tee "$build_dir/build.log" | weft_show_progress; then
      cat "$build_dir/build.log" >&2
      echo "weft: build failed (log: $build_dir/build.log)" >&2
      exit 1
    fi
    return 0
  fi
  if ! "${build[@]}" >"$build_dir/build.log" 2>&1; then
    cat "$build_dir/build.log" >&2
    echo "weft: build failed (log: $build_dir/build.log)" >&2
    exit 1
  fi
}

# Prints the calling script's header comment (the comment lines after the #! line: its usage) and
# exits with STATUS (default 2: a usage error; 0 when help was asked for).
weft_usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
  exit "${1:-2}"
}

# Prints the usage and exits 0 when the first argument asks for help.
weft_help_if_asked() {
  case "${1:-}" in -h | --help) weft_usage 0 ;; esac
}

# Exits 2 with a message unless VALUE ($2) is a positive integer; NAME ($1) says what it is.
weft_require_positive_integer() {
  case "$2" in
    '' | *[!0-9]* | 0) echo "tools/$(basename "$0"): $1 must be a positive integer, not '$2'" >&2; exit 2 ;;
  esac
}
