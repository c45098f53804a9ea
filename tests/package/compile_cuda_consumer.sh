#!/usr/bin/env bash
# Installs the built library into a scratch prefix, then configures and compiles (does not run)
# a CUDA consumer project against it. A consumer whose folder name ends in _std17 sets a standard
# below C++20: it passes if it compiles, or if configuring fails with a message that names C++20
# (never an nvcc error inside a vtpage header).
# Usage: compile_cuda_consumer.sh <vtpage build dir> <consumer source dir> <scratch dir>
set -uo pipefail
build=$1 consumer=$2 scratch=$3
name=$(basename "$consumer")
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null || exit 1
configure_log=$scratch/configure.log
if ! cmake -S "$consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$configure_log" 2>&1; then
  if [[ "$name" == *_std17 ]] && grep -q 'C++20' "$configure_log"; then
    echo "$name: refused at configure time:"
    grep -A3 'CMake Error' "$configure_log"
    echo "$name: ok"
    exit 0
  fi
  cat "$configure_log"
  echo "$name: configuring failed"
  exit 1
fi
if ! cmake --build "$scratch/consumer" >"$scratch/build.log" 2>&1; then
  cat "$scratch/build.log"
  echo "$name: compiling failed"
  exit 1
fi
command=$(cd "$scratch/consumer" && ninja -t commands consumer | grep -m1 'main.cu')
echo "$name: compiled against the installed package with $(grep -o -- '-std=[^ ]*' <<<"$command" |
  sort -u | paste -sd' ') (not run: the cuda_consumer test runs it)"
echo "$name: ok"
