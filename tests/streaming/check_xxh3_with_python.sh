#!/bin/sh
# The checksums of format versions 3 and 4 checked outside vtpage: a small texture baked by vtpage-bake, every
# stored page hashed by Python's xxhash (tools/check_baked_pages.py) against the page index, and
# one page's numbers printed. Exit 77 (skipped, the reason printed) where no Python at hand has
# the xxhash module. Arguments: vtpage-bake, check_baked_pages.py, a scratch folder, and the
# Python to try first.
set -eu
bake=$1 script=$2 scratch=$3 python=${4:-python3}
mkdir -p "$scratch"
found=
for candidate in "$python" python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import xxhash" 2>/dev/null; then
    found=$candidate
    break
  fi
done
if [ -z "$found" ]; then
  echo "SKIP: no Python with the xxhash module ($python, python3, /usr/bin/python3); Debian: python3-xxhash"
  exit 77
fi
"$bake" --procedural "$scratch/image.png" --size-log2 9 --seed 3 -q
"$bake" "$scratch/image.png" -o "$scratch/image.vtex" --format rgba8 --address-u repeat --srgb -q
"$bake" --check "$scratch/image.vtex" -q
"$found" "$script" "$scratch/image.vtex"
"$found" "$script" "$scratch/image.vtex" --page 0
