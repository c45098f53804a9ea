#!/usr/bin/env bash
# Installs the built library into a scratch prefix, then configures, builds and runs a separate
# project that finds it with find_package(vtpage CONFIG). Where the project has a main.cpp and
# pkg-config is installed, builds and runs it again from the installed vtpage.pc alone, and
# checks that the pkg-config file and the CMake package agree on liburing (VTPAGE_WITH_LIBURING).
# With a fourth argument, the installed headers must be exactly those that file lists: a header
# leaves the package only when no program of the project includes it.
# Usage: install_and_consume.sh <vtpage build dir> <consumer source dir> <scratch dir> [header list]
set -euo pipefail
build=$1 consumer=$2 scratch=$3 header_list=${4:-}
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
if [ -n "$header_list" ]; then
  installed=$(cd "$scratch/prefix/include" && find vtpage -type f | LC_ALL=C sort)
  if ! diff <(grep -v '^#' "$header_list" | LC_ALL=C sort) <(echo "$installed"); then
    echo "the installed headers differ from $header_list ('<' listed only, '>' installed only)"
    exit 1
  fi
  echo "installed headers: $(echo "$installed" | wc -l), as listed"
fi
cmake -S "$consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"

if [ ! -f "$consumer/main.cpp" ] || ! command -v pkg-config >/dev/null; then exit 0; fi
pc=$(find "$scratch/prefix" -name vtpage.pc)
[ -n "$pc" ] || { echo "no vtpage.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
config_dir=$(dirname "$(find "$scratch/prefix" -name vtpageConfigVersion.cmake)")
package_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$config_dir/vtpageConfigVersion.cmake")
pc_version=$(pkg-config --modversion vtpage)
if [ "$pc_version" != "$package_version" ]; then
  echo "vtpage.pc says version $pc_version, the CMake package $package_version"
  exit 1
fi
# liburing: in vtpage.pc, in the config file and in the exported targets, or in none of them.
uring_pc=no uring_config=no uring_targets=no
pkg-config --print-requires vtpage | grep -q '^liburing' && uring_pc=yes
grep -q '^set(VTPAGE_HAS_LIBURING ON)' "$config_dir/vtpageConfig.cmake" && uring_config=yes
grep -q 'VTPAGE_URING' "$config_dir/vtpageTargets.cmake" && uring_targets=yes
if [ "$uring_pc$uring_config$uring_targets" != yesyesyes ] &&
  [ "$uring_pc$uring_config$uring_targets" != nonono ]; then
  echo "liburing: vtpage.pc $uring_pc, vtpageConfig.cmake $uring_config, targets $uring_targets"
  exit 1
fi
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
${CXX:-c++} -std=c++20 -O1 "$consumer/main.cpp" -o "$scratch/consumer-pc" \
  $(pkg-config --cflags --libs vtpage)
"$scratch/consumer-pc"
echo "pkg-config consumer: ok (vtpage.pc $pc_version, liburing $uring_pc)"
