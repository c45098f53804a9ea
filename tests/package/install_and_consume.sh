#!/usr/bin/env bash
# Installs the built library into a scratch prefix, then configures, builds and runs a separate
# project that finds it with find_package(vtpage CONFIG).
# Usage: install_and_consume.sh <vtpage build dir> <consumer source dir> <scratch dir>
set -euo pipefail
build=$1 consumer=$2 scratch=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$consumer" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
