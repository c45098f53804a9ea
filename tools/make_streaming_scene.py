#!/usr/bin/env python3
"""Writes a glTF 2.0 scene whose baked textures are several times a small page budget, for the
viewer's scene parity test (tests/viewer/scene_parity_test.cpp) and for trying --scene by hand:

  floor    a 12 x 12 quad, its base colour repeating 6 times each way in uv (sampler REPEAT) and
           1.5 times more by KHR_texture_transform's scale: minified in every view
  wall     a 6 x 3 x 0.3 box, MIRRORED_REPEAT, its faces' uv across the image's edges; its
           occlusion the cutout (another size: no stack)
  box      a 2 x 2 x 2 box, REPEAT / CLAMP_TO_EDGE, its uv rotated, scaled and offset onto a
           small window by KHR_texture_transform: magnified from close by; its metallic-roughness
           and occlusion the same image, sampler and transform (a material stack in the viewer)
  pillar   a 1 x 4 x 1 box, the floor's image again but CLAMP_TO_EDGE, each side across an edge
  fence    an 8 x 4 panel, alpha-masked (cutoff 0.5), double-sided: a magenta cutout of round
           holes and diagonal slots made here, magenta so that the test can tell it by colour

The terrains come from `vtpage-bake --procedural` (4096^2 each); the viewer bakes them in four
samplings (BC1) and the box's metallic-roughness (BC1) and occlusion (BC4), the cutout as the
fence's base colour (BC3) and the wall's occlusion (BC4), and makes the box's stack of three of
them: 149 pages of 2 MiB, 298 MiB. Images that exist are kept (a
terrain is named by its size and seed, the cutout is made again where this script is newer);
scene.gltf is written last, so that its presence means the scene is whole.

Usage: tools/make_streaming_scene.py OUT_DIR --bake path/to/vtpage-bake"""
import argparse
import json
import math
import pathlib
import struct
import subprocess
import sys
import zlib

# The procedural images: (size log2, seed), each named by them so that a change makes new ones.
FLOOR, WALL = (12, 11), (12, 12)
CUTOUT_SIZE = 512


def procedural_name(size_log2: int, seed: int) -> str:
    return "terrain_%d_%d.png" % (size_log2, seed)


def write_png_rgba(path: pathlib.Path, width: int, height: int, rows: list[bytes]) -> None:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\0" + row for row in rows)  # filter 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                     chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def cutout_rows(size: int) -> list[bytes]:
    """Round holes on a 4 x 4 grid and a diagonal slot, their edges a few texels soft, over a
    colour gradient: alpha crosses the cutoff along curves at every angle."""
    rows = []
    cell = size / 4
    for y in range(size):
        row = bytearray(size * 4)
        for x in range(size):
            cx, cy = (x + 0.5) % cell - cell / 2, (y + 0.5) % cell - cell / 2
            hole = math.hypot(cx, cy) - cell * 0.3
            slot = abs((x - y) * 0.7071) - size * 0.04
            inside = min(hole, slot)
            alpha = min(1.0, max(0.0, 0.5 + inside / 6))
            i = 4 * x
            row[i] = 170 + (70 * x) // size
            row[i + 1] = 20 + (50 * y) // size
            row[i + 2] = 150 + (80 * (x + y)) // (2 * size)
            row[i + 3] = round(255 * alpha)
        rows.append(bytes(row))
    return rows


class Buffer:
    """The scene's one binary buffer, its views and accessors."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def add(self, values: list, kind: str, target: int, component: int, fmt: str) -> int:
        while len(self.data) % 4:
            self.data.append(0)
        flat = [c for v in values for c in (v if isinstance(v, tuple) else (v,))]
        raw = struct.pack("<%d%s" % (len(flat), fmt), *flat)
        self.views.append({"buffer": 0, "byteOffset": len(self.data), "byteLength": len(raw),
                           "target": target})
        self.data += raw
        accessor = {"bufferView": len(self.views) - 1, "componentType": component,
                    "count": len(values), "type": kind}
        if kind == "VEC3":
            accessor["min"] = [min(v[i] for v in values) for i in range(3)]
            accessor["max"] = [max(v[i] for v in values) for i in range(3)]
        self.accessors.append(accessor)
        return len(self.accessors) - 1


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def quad(mesh: dict, corner, eu, ev, uv0, uv1) -> None:
    """A rectangle from corner along eu and ev, facing cross(eu, ev), uv from uv0 at the corner
    to uv1 at the opposite one."""
    n = cross(eu, ev)
    length = math.sqrt(sum(c * c for c in n))
    n = tuple(c / length for c in n)
    base = len(mesh["positions"])
    for su, sv in ((0, 0), (1, 0), (1, 1), (0, 1)):
        mesh["positions"].append(tuple(corner[i] + su * eu[i] + sv * ev[i] for i in range(3)))
        mesh["normals"].append(n)
        mesh["uvs"].append((uv0[0] + su * (uv1[0] - uv0[0]), uv0[1] + sv * (uv1[1] - uv0[1])))
    mesh["indices"] += [base, base + 1, base + 2, base, base + 2, base + 3]


def box(mesh: dict, size, uv0s, uv_per_unit: float) -> None:
    """An axis-aligned box of this size centred on the origin, facing out; the faces' uv from
    uv0s[i] (+z, -z, +x, -x, +y, -y; the last one given for the rest), uv_per_unit to a unit of
    length."""
    hx, hy, hz = (s / 2 for s in size)
    faces = [((-hx, -hy, hz), (2 * hx, 0, 0), (0, 2 * hy, 0)),  # +z
             ((hx, -hy, -hz), (-2 * hx, 0, 0), (0, 2 * hy, 0)),  # -z
             ((hx, -hy, hz), (0, 0, -2 * hz), (0, 2 * hy, 0)),  # +x
             ((-hx, -hy, -hz), (0, 0, 2 * hz), (0, 2 * hy, 0)),  # -x
             ((-hx, hy, hz), (2 * hx, 0, 0), (0, 0, -2 * hz)),  # +y
             ((-hx, -hy, -hz), (2 * hx, 0, 0), (0, 0, 2 * hz))]  # -y
    for i, (corner, eu, ev) in enumerate(faces):
        uv0 = uv0s[min(i, len(uv0s) - 1)]
        lu, lv = (math.sqrt(sum(c * c for c in e)) * uv_per_unit for e in (eu, ev))
        quad(mesh, corner, eu, ev, uv0, (uv0[0] + lu, uv0[1] + lv))


def new_mesh() -> dict:
    return {"positions": [], "normals": [], "uvs": [], "indices": []}


def make_images(out: pathlib.Path, bake: str) -> None:
    """The images the scene lacks: vtpage-bake makes the terrains (two at once), this script the
    cutout (again where it is older than this script)."""
    running = []
    for size_log2, seed in (FLOOR, WALL):
        path = out / procedural_name(size_log2, seed)
        if not path.exists():
            running.append((path, subprocess.Popen(
                [bake, "--procedural", str(path) + ".partial.png", "--size-log2", str(size_log2),
                 "--seed", str(seed), "--quiet"], stdout=subprocess.DEVNULL)))
    cutout = out / "cutout.png"
    if not cutout.exists() or cutout.stat().st_mtime < pathlib.Path(__file__).stat().st_mtime:
        partial = out / "cutout.partial.png"
        write_png_rgba(partial, CUTOUT_SIZE, CUTOUT_SIZE, cutout_rows(CUTOUT_SIZE))
        partial.replace(cutout)
    for path, process in running:
        if process.wait() != 0:
            sys.exit("%s --procedural failed (exit status %d)" % (bake, process.returncode))
        pathlib.Path(str(path) + ".partial.png").replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--bake", required=True, help="the vtpage-bake program")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    make_images(args.out, args.bake)

    # Texel densities: the floor's repeats are minified in every view of the camera paths; the
    # other objects show small windows of their 4096^2 images, so that a view of them at 480 x
    # 360 pixels asks for levels 0 and 1, across the edges their samplers treat specially. Each
    # window lies within one page of each level, so that a view fits a budget of 16 pages.
    floor, wall, cube, pillar, fence = (new_mesh() for _ in range(5))
    quad(floor, (-6, 0, 6), (12, 0, 0), (0, 0, -12), (0, 0), (6, 6))
    # The wall mirrored at u = 1 and v = 0 in front, at u = 0 behind; the pillar clamped at a
    # different edge on each side: the views from around the scene ask for different pages.
    front, back = (0.985, -0.0075), (-0.015, 0.55)
    box(wall, (6, 3, 0.3), [front, back, front, front, front, front], 0.005)
    box(cube, (2, 2, 2), [(0, 0)], 0.5)  # each face 0..1, then the texture transform
    right = (0.3, -0.006)
    box(pillar, (1, 4, 1), [(-0.006, 0.3), (0.994, 0.2), right, (0.6, 0.975), right, right], 0.012)
    quad(fence, (0, 0, 4), (0, 0, -8), (0, 4, 0), (0, 0), (2, 1))  # facing +x

    images = [procedural_name(*FLOOR), procedural_name(*WALL), "cutout.png"]
    REPEAT, MIRRORED, CLAMP, LINEAR_MIPMAP_LINEAR, LINEAR = 10497, 33648, 33071, 9987, 9729
    samplers = [(REPEAT, REPEAT), (MIRRORED, MIRRORED), (REPEAT, CLAMP), (CLAMP, CLAMP)]
    # (name, image, sampler, KHR_texture_transform or None, alpha mode, more slots): the more
    # slots' textures as (glTF material key, image, sampler, transform). The box's
    # metallic-roughness and occlusion share its base colour's image size, sampler and transform:
    # the viewer draws the three as one material stack. The wall's occlusion is the cutout, of
    # another size: a texture of its own beside the wall's base colour.
    box_transform = {"offset": [0.45, -0.005], "rotation": 0.6, "scale": [0.012, 0.012]}
    materials = [
        ("floor", 0, 0, {"scale": [1.5, 1.5]}, "OPAQUE", []),
        ("mirrored wall", 1, 1, None, "OPAQUE", [("occlusionTexture", 2, 1, None)]),
        ("transformed box", 1, 2, box_transform, "OPAQUE",
         [("metallicRoughnessTexture", 1, 2, box_transform),
          ("occlusionTexture", 1, 2, box_transform)]),
        ("clamped pillar", 0, 3, None, "OPAQUE", []),
        ("cutout fence", 2, 0, None, "MASK", []),
    ]
    # (mesh, material, translation): the wall faces +z, where the orbit sees it head-on; the box
    # is near the approach's closest pose; the fence stands at the floor's -x edge, the sky
    # behind it as the approach sees it.
    nodes = [(floor, 0, (0, 0, 0)), (wall, 1, (-1.5, 1.5, -3)), (cube, 2, (3.5, 1, 0.5)),
             (pillar, 3, (-4.5, 2, 3)), (fence, 4, (-5.5, 0, 0))]

    buffer = Buffer()
    gltf_meshes = []
    for mesh, material, _ in nodes:
        attributes = {
            "POSITION": buffer.add(mesh["positions"], "VEC3", 34962, 5126, "f"),
            "NORMAL": buffer.add(mesh["normals"], "VEC3", 34962, 5126, "f"),
            "TEXCOORD_0": buffer.add(mesh["uvs"], "VEC2", 34962, 5126, "f"),
        }
        indices = buffer.add(mesh["indices"], "SCALAR", 34963, 5123, "H")
        gltf_meshes.append({"name": materials[material][0], "primitives": [
            {"attributes": attributes, "indices": indices, "material": material}]})
    (args.out / "scene.bin").write_bytes(bytes(buffer.data))

    def texture_json(image, sampler, transform):
        texture = {"index": len(textures)}
        textures.append({"source": image, "sampler": sampler})
        if transform:
            texture["extensions"] = {"KHR_texture_transform": transform}
        return texture

    def material_json(name, image, sampler, transform, alpha_mode, more):
        m = {"name": name, "pbrMetallicRoughness": {
            "baseColorTexture": texture_json(image, sampler, transform), "metallicFactor": 0.0,
            "roughnessFactor": 0.8}}
        for key, more_image, more_sampler, more_transform in more:
            texture = texture_json(more_image, more_sampler, more_transform)
            if key == "metallicRoughnessTexture":
                m["pbrMetallicRoughness"].update({key: texture, "metallicFactor": 0.5})
            else:
                m[key] = texture
        if alpha_mode == "MASK":
            m.update(alphaMode="MASK", alphaCutoff=0.5, doubleSided=True)
        return m

    textures: list[dict] = []
    gltf = {
        "asset": {"version": "2.0", "generator": "vtpage tools/make_streaming_scene.py"},
        "extensionsUsed": ["KHR_texture_transform"],
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": [{"mesh": i, "translation": list(t)} for i, (_, _, t) in enumerate(nodes)],
        "meshes": gltf_meshes,
        "materials": [material_json(*m) for m in materials],
        "textures": textures,
        "images": [{"uri": name} for name in images],
        "samplers": [{"wrapS": s, "wrapT": t, "minFilter": LINEAR_MIPMAP_LINEAR,
                      "magFilter": LINEAR} for s, t in samplers],
        "buffers": [{"uri": "scene.bin", "byteLength": len(buffer.data)}],
        "bufferViews": buffer.views,
        "accessors": buffer.accessors,
    }
    temporary = args.out / "scene.gltf.partial"
    temporary.write_text(json.dumps(gltf, indent=1))
    temporary.replace(args.out / "scene.gltf")
    print("%s: %d images, %d materials" % (args.out / "scene.gltf", len(images), len(materials)))


if __name__ == "__main__":
    main()
