#!/usr/bin/env python3
"""A glTF 2.0 scene at scale: hundreds of distinct real images, each a material stack on a box
of its own, for measuring vtpage-viewer where the texture is many times its budget.

  gather  picks distinct images from folders (unpacked Debian packages of wallpapers and game or
          paint textures, say) and writes each as a small thumbnail with a manifest of where it
          came from. Images under --min-side texels, near-flat ones, icons, previews and
          screenshots are skipped, and images that look alike (the same wallpaper at several
          sizes) count once: the largest is kept.
  scene   upscales each thumbnail (Lanczos) so that its longer side is --size texels, and writes
          a scene of one box per image on a grid, the image as each box's base colour, normal and
          metallic-roughness (a stack of three in the viewer: BC1 sRGB + BC5 + BC1). The normal
          maps are colour images read as normals: the point is the volume and the count of
          textures, not the look. scene.gltf is written last.

Thumbnails travel where full images would not; the scene's images are upscaled from them, and
the manifest says so. Needs Pillow.

Usage: tools/make_photo_scene.py gather OUT_DIR SOURCE_DIR... [--thumb 512] [--min-side 512]
       tools/make_photo_scene.py scene THUMB_DIR OUT_DIR [--size 4096] [--count N] [--jobs N]"""
import argparse
import json
import math
import multiprocessing
import pathlib
import sys

from PIL import Image, ImageStat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_streaming_scene import Buffer, box, new_mesh, quad  # noqa: E402

Image.MAX_IMAGE_PIXELS = 1 << 28
SKIPPED_PATH_PARTS = ("icons", "screenshot", "preview", "shot-", "thumb", "cursor", "logo", "/doc/",
                      "captures")
SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


def look(path: pathlib.Path):
    """(width, height, average hash, spread) of an image, or None where it is not wanted."""
    try:
        with Image.open(path) as image:
            width, height = image.size
            if min(width, height) < ARGS.min_side:
                return None
            image.draft("RGB", (64, 64))
            small = image.convert("L").resize((16, 16), Image.BILINEAR)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    pixels = list(small.getdata())
    mean = sum(pixels) / len(pixels)
    spread = ImageStat.Stat(small).stddev[0]
    bits = sum(1 << i for i, p in enumerate(pixels) if p > mean)
    return width, height, bits, spread


def alike(a: int, b: int) -> bool:
    return bin(a ^ b).count("1") <= 24  # of 256 bits


def gather(args) -> None:
    candidates, source_of = [], {}
    for source in args.sources:
        for path in sorted(pathlib.Path(source).rglob("*")):
            lower = str(path).lower()
            if path.suffix.lower() in SUFFIXES and not any(p in lower for p in SKIPPED_PATH_PARTS):
                candidates.append(path)
                source_of[path] = source
    print("%d candidate files" % len(candidates), flush=True)
    with multiprocessing.Pool() as pool:
        looks = pool.map(look, candidates, chunksize=8)
    kept = []  # (pixels, path, width, height, hash)
    for path, seen in zip(candidates, looks):
        if seen is None or seen[3] < 12:  # too small, unreadable or near-flat
            continue
        width, height, bits, _ = seen
        twin = next((i for i, k in enumerate(kept) if alike(k[4], bits)), None)
        if twin is None:
            kept.append((width * height, path, width, height, bits))
        elif width * height > kept[twin][0]:
            kept[twin] = (width * height, path, width, height, bits)
    if args.most_per_source:  # the largest images of each source
        taken, capped = {}, []
        for k in sorted(kept, key=lambda k: -k[0]):
            source = source_of[k[1]]
            if taken.get(source, 0) < args.most_per_source:
                taken[source] = taken.get(source, 0) + 1
                capped.append(k)
        kept = capped
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for number, (_, path, width, height, _) in enumerate(kept):
        name = "%04d.webp" % number
        with Image.open(path) as image:
            image = image.convert("RGB")
            image.thumbnail((args.thumb, args.thumb), Image.LANCZOS)
            image.save(args.out / name, quality=82, method=4)
        manifest.append({"thumbnail": name, "source": str(path), "width": width, "height": height})
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print("%d distinct images kept of %d candidates" % (len(kept), len(candidates)))


def upscale(job) -> str:
    thumb, target, size = job
    if not target.exists():
        with Image.open(thumb) as image:
            scale = size / max(image.size)
            shape = (max(4, round(image.size[0] * scale)), max(4, round(image.size[1] * scale)))
            partial = target.with_suffix(".partial.jpg")
            image.convert("RGB").resize(shape, Image.LANCZOS).save(partial, quality=90)
            partial.replace(target)
    return target.name


def scene(args) -> None:
    manifest = json.loads((args.thumbs / "manifest.json").read_text())
    if args.count:
        manifest = manifest[: args.count]
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(args.thumbs / m["thumbnail"], args.out / ("photo_%04d.jpg" % i), args.size)
            for i, m in enumerate(manifest)]
    with multiprocessing.Pool(args.jobs or None) as pool:
        for done, _ in enumerate(pool.imap_unordered(upscale, jobs), 1):
            if done % 20 == 0 or done == len(jobs):
                print("upscaled %d of %d to %d texels" % (done, len(jobs), args.size), flush=True)

    floor, cube = new_mesh(), new_mesh()
    columns = math.ceil(math.sqrt(len(jobs)))
    rows = math.ceil(len(jobs) / columns)
    spacing = 2.5
    half_x, half_z = columns * spacing / 2, rows * spacing / 2
    quad(floor, (-half_x - 2, 0, half_z + 2), (2 * half_x + 4, 0, 0), (0, 0, -2 * half_z - 4),
         (0, 0), (1, 1))
    box(cube, (1.6, 1.6, 1.6), [(0, 0)], 1 / 1.6)  # each face 0..1
    buffer = Buffer()
    geometry = []  # the floor's and the box's primitive, without a material
    for mesh in (floor, cube):
        geometry.append({"attributes": {
            "POSITION": buffer.add(mesh["positions"], "VEC3", 34962, 5126, "f"),
            "NORMAL": buffer.add(mesh["normals"], "VEC3", 34962, 5126, "f"),
            "TEXCOORD_0": buffer.add(mesh["uvs"], "VEC2", 34962, 5126, "f")},
            "indices": buffer.add(mesh["indices"], "SCALAR", 34963, 5123, "H")})
    # Mesh 0 the floor (material 0), mesh 1 + i box i (material 1 + i): the boxes share the
    # geometry's accessors.
    meshes = [{"primitives": [dict(geometry[0], material=0)]}]
    nodes = [{"mesh": 0}]
    for i in range(len(jobs)):
        x = -half_x + spacing * (i % columns + 0.5)
        z = -half_z + spacing * (i // columns + 0.5)
        meshes.append({"primitives": [dict(geometry[1], material=1 + i)]})
        nodes.append({"mesh": 1 + i, "translation": [x, 0.8, z]})
    images = [{"uri": job[1].name} for job in jobs]
    textures = [{"source": i, "sampler": 0} for i in range(len(images))]
    materials = [{"name": "floor", "pbrMetallicRoughness": {
        "baseColorFactor": [0.45, 0.45, 0.48, 1], "metallicFactor": 0, "roughnessFactor": 1}}]
    for i in range(len(images)):
        materials.append({"name": "photo_%04d" % i, "pbrMetallicRoughness": {
            "baseColorTexture": {"index": i}, "metallicRoughnessTexture": {"index": i}},
            "normalTexture": {"index": i, "scale": 0.2}})
    (args.out / "scene.bin").write_bytes(bytes(buffer.data))
    document = {
        "asset": {"version": "2.0", "generator": "tools/make_photo_scene.py"},
        "scene": 0, "scenes": [{"nodes": list(range(len(nodes)))}], "nodes": nodes,
        "meshes": meshes, "materials": materials, "images": images, "textures": textures,
        "samplers": [{"wrapS": 33071, "wrapT": 33071}],
        "buffers": [{"uri": "scene.bin", "byteLength": len(buffer.data)}],
        "bufferViews": buffer.views, "accessors": buffer.accessors}
    partial = args.out / "scene.gltf.partial"
    partial.write_text(json.dumps(document, indent=1) + "\n")
    partial.replace(args.out / "scene.gltf")
    print("%s: %d boxes, %d distinct images upscaled to %d texels (longer side) from thumbnails"
          % (args.out / "scene.gltf", len(jobs), len(images), args.size))


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    g = commands.add_parser("gather")
    g.add_argument("out", type=pathlib.Path)
    g.add_argument("sources", nargs="+")
    g.add_argument("--thumb", type=int, default=512, help="thumbnails' longer side")
    g.add_argument("--min-side", type=int, default=512, help="the shorter side an image needs")
    g.add_argument("--most-per-source", type=int, default=0,
                   help="keep at most this many of each source folder, the largest (0: all)")
    s = commands.add_parser("scene")
    s.add_argument("thumbs", type=pathlib.Path)
    s.add_argument("out", type=pathlib.Path)
    s.add_argument("--size", type=int, default=4096, help="images' longer side in the scene")
    s.add_argument("--count", type=int, default=0, help="the first N images only")
    s.add_argument("--jobs", type=int, default=0, help="upscaling processes (0: one per core)")
    ARGS = parser.parse_args()
    if ARGS.command == "gather":
        gather(ARGS)
    else:
        scene(ARGS)


ARGS = None
if __name__ == "__main__":
    main()
