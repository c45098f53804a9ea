#!/usr/bin/env python3
"""Writes a glTF 2.0 scene of full PBR materials, for measuring what material stacks cost and
save (vtpage-viewer --scene ... --material-stacks on|off, and --reference-textures):

  floor   a 12 x 12 quad whose base colour, normal, metallic-roughness and occlusion are one
          2048^2 procedural terrain (REPEAT, 3 x 3 repeats): a stack of four (BC1 sRGB, BC5,
          BC1, BC4) in the viewer
  boxes   eight 1.5 x 1.5 x 1.5 boxes in a ring whose base colour, normal and metallic-roughness
          are a photograph (a stack of three, BC1 sRGB, BC5, BC1)

The normal maps are colour images read as normals: the point is the cost of sampling four and
three layers, not the look. The photograph is given (assets/terrain-512.png, say), the terrain
comes from `vtpage-bake --procedural`; scene.gltf is written last.

Usage: tools/make_material_scene.py OUT_DIR --bake path/to/vtpage-bake --photo IMAGE"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_streaming_scene import Buffer, box, new_mesh, quad  # noqa: E402

TERRAIN = (11, 21)  # size log2, seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--bake", required=True, help="the vtpage-bake program")
    parser.add_argument("--photo", required=True, type=pathlib.Path,
                        help="the boxes' image (any format the viewer bakes)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    terrain = "terrain_%d_%d.png" % TERRAIN
    if not (args.out / terrain).exists():
        partial = args.out / (terrain + ".partial.png")
        if subprocess.run([args.bake, "--procedural", str(partial), "--size-log2",
                           str(TERRAIN[0]), "--seed", str(TERRAIN[1]), "--quiet"],
                          stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit("%s --procedural failed" % args.bake)
        partial.replace(args.out / terrain)
    photo = "photo" + args.photo.suffix.lower()
    shutil.copy2(args.photo, args.out / photo)

    floor, cube = new_mesh(), new_mesh()
    quad(floor, (-6, 0, 6), (12, 0, 0), (0, 0, -12), (0, 0), (3, 3))
    box(cube, (1.5, 1.5, 1.5), [(0, 0)], 1 / 1.5)  # each face 0..1
    nodes = [(floor, 0, (0, 0, 0))]
    for i in range(8):
        x, z = [(-4, -4), (0, -4.5), (4, -4), (4.5, 0), (4, 4), (0, 4.5), (-4, 4), (-4.5, 0)][i]
        nodes.append((cube, 1, (x, 0.75, z)))

    buffer = Buffer()
    meshes, mesh_of = [], {}
    for mesh, material, _ in nodes:
        if id(mesh) in mesh_of:
            continue
        attributes = {
            "POSITION": buffer.add(mesh["positions"], "VEC3", 34962, 5126, "f"),
            "NORMAL": buffer.add(mesh["normals"], "VEC3", 34962, 5126, "f"),
            "TEXCOORD_0": buffer.add(mesh["uvs"], "VEC2", 34962, 5126, "f"),
        }
        indices = buffer.add(mesh["indices"], "SCALAR", 34963, 5123, "H")
        mesh_of[id(mesh)] = len(meshes)
        meshes.append({"primitives": [
            {"attributes": attributes, "indices": indices, "material": material}]})
    (args.out / "scene.bin").write_bytes(bytes(buffer.data))

    REPEAT, LINEAR_MIPMAP_LINEAR, LINEAR = 10497, 9987, 9729
    textures = [{"source": 0, "sampler": 0}, {"source": 1, "sampler": 0}]
    floor_material = {
        "name": "terrain floor",
        "pbrMetallicRoughness": {"baseColorTexture": {"index": 0},
                                 "metallicRoughnessTexture": {"index": 0},
                                 "metallicFactor": 0.3, "roughnessFactor": 0.9},
        "normalTexture": {"index": 0},
        "occlusionTexture": {"index": 0},
    }
    box_material = {
        "name": "photo boxes",
        "pbrMetallicRoughness": {"baseColorTexture": {"index": 1},
                                 "metallicRoughnessTexture": {"index": 1},
                                 "metallicFactor": 0.1, "roughnessFactor": 0.7},
        "normalTexture": {"index": 1},
    }
    gltf = {
        "asset": {"version": "2.0", "generator": "vtpage tools/make_material_scene.py"},
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": [{"mesh": mesh_of[id(m)], "translation": list(t)} for m, _, t in nodes],
        "meshes": meshes,
        "materials": [floor_material, box_material],
        "textures": textures,
        "images": [{"uri": terrain}, {"uri": photo}],
        "samplers": [{"wrapS": REPEAT, "wrapT": REPEAT, "minFilter": LINEAR_MIPMAP_LINEAR,
                      "magFilter": LINEAR}],
        "buffers": [{"uri": "scene.bin", "byteLength": len(buffer.data)}],
        "bufferViews": buffer.views,
        "accessors": buffer.accessors,
    }
    partial = args.out / "scene.gltf.partial"
    partial.write_text(json.dumps(gltf, indent=1))
    partial.replace(args.out / "scene.gltf")
    print("%s: 2 images, 2 materials, %d nodes" % (args.out / "scene.gltf", len(nodes)))


if __name__ == "__main__":
    main()
