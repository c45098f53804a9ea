#include "scene/gltf_scene.hpp"

#include "scene/scene_wire.hpp"

#include <assimp/DefaultIOSystem.h>
#include <assimp/GltfMaterial.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <sys/stat.h>

#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <glm/gtc/matrix_transform.hpp>
#include <limits>
#include <memory>
#include <sstream>
#include <utility>

namespace vtpage::viewer {

const char* to_string(AddressMode mode) {
    switch (mode) {
        case AddressMode::repeat:
            return "repeat";
        case AddressMode::mirrored_repeat:
            return "mirrored_repeat";
        case AddressMode::clamp_to_edge:
            return "clamp_to_edge";
    }
    return "?";
}

const char* to_string(AlphaMode mode) {
    switch (mode) {
        case AlphaMode::opaque:
            return "opaque";
        case AlphaMode::mask:
            return "mask";
        case AlphaMode::blend:
            return "blend";
    }
    return "?";
}

const char* to_string(MaterialSlot slot) {
    switch (slot) {
        case MaterialSlot::base_colour:
            return "base colour";
        case MaterialSlot::normal:
            return "normal";
        case MaterialSlot::metallic_roughness:
            return "metallic-roughness";
        case MaterialSlot::occlusion:
            return "occlusion";
        case MaterialSlot::emissive:
            return "emissive";
    }
    return "?";
}

const std::optional<TextureSlot>& texture_slot(const SceneMaterial& material, MaterialSlot slot) {
    switch (slot) {
        case MaterialSlot::normal:
            return material.normal_texture;
        case MaterialSlot::metallic_roughness:
            return material.metallic_roughness_texture;
        case MaterialSlot::occlusion:
            return material.occlusion_texture;
        case MaterialSlot::emissive:
            return material.emissive_texture;
        case MaterialSlot::base_colour:
            break;
    }
    return material.base_colour_texture;
}

glm::vec2 UvTransform::apply(glm::vec2 uv) const {
    const float c = std::cos(rotation), s = std::sin(rotation);
    const glm::vec2 scaled = uv * scale;
    return glm::vec2(c * scaled.x + s * scaled.y, -s * scaled.x + c * scaled.y) + offset;
}

namespace {

template <typename... Parts>
[[noreturn]] void fail(const std::string& scene, const Parts&... parts) {
    std::ostringstream message;
    message << scene << ": ";
    (message << ... << parts);
    throw SceneError(message.str());
}

// The files assimp opens for a scene: regular files only, inside the scene's folder, and at
// most `budget` bytes together (a buffer may name a huge file, or a device).
class BoundedIOSystem final : public Assimp::DefaultIOSystem {
public:
    BoundedIOSystem(std::filesystem::path folder, std::uint64_t budget)
        : folder_(std::move(folder)), budget_(budget) {}
    Assimp::IOStream* Open(const char* file, const char* mode) override {
        if (!refusal_.empty()) return nullptr;
        std::error_code error;
        const std::filesystem::path path = std::filesystem::weakly_canonical(file, error);
        if (error || !inside_folder(path)) return refuse(file, "is outside the scene's folder");
        struct stat info {};
        if (::stat(path.c_str(), &info) != 0) return nullptr;  // assimp says it is missing
        if (!S_ISREG(info.st_mode)) return refuse(file, "is not a regular file");
        if (std::uint64_t(info.st_size) > budget_) {
            return refuse(file, "takes the files past ", limit_, " bytes");
        }
        budget_ -= std::uint64_t(info.st_size);
        return Assimp::DefaultIOSystem::Open(path.c_str(), mode);
    }
    // assimp's own check opens the file, which blocks on a FIFO: stat says instead.
    bool Exists(const char* file) const override {
        struct stat info {};
        return ::stat(file, &info) == 0;
    }
    const std::string& refusal() const { return refusal_; }
    void set_limit(std::uint64_t limit) { limit_ = limit; }

private:
    bool inside_folder(const std::filesystem::path& path) const {
        const auto [end, unused] =
            std::mismatch(folder_.begin(), folder_.end(), path.begin(), path.end());
        (void)unused;
        return end == folder_.end();
    }
    template <typename... Parts>
    Assimp::IOStream* refuse(const char* file, const Parts&... parts) {
        std::ostringstream message;
        message << "\"" << file << "\" ";
        (message << ... << parts);
        refusal_ = message.str();
        return nullptr;
    }

    std::filesystem::path folder_;
    std::uint64_t budget_;
    std::uint64_t limit_ = 0;
    std::string refusal_;
};

// A .glb's container (header, then JSON and binary chunks, each with its length): checked
// against the real size before assimp reads it, since assimp allocates what a chunk's length
// says first (a 90-byte file can ask for 2 GiB). `read_at` gives up to n bytes at an offset.
template <typename ReadAt>
void check_glb_container(const std::string& name, std::uint64_t size, ReadAt read_at) {
    const auto word = [](const std::uint8_t* bytes) {
        return std::uint32_t(bytes[0]) | std::uint32_t(bytes[1]) << 8 |
               std::uint32_t(bytes[2]) << 16 | std::uint32_t(bytes[3]) << 24;
    };
    std::uint8_t header[20] = {};
    if (size < 4 || read_at(0, header, 4) != 4 || std::memcmp(header, "glTF", 4) != 0) return;
    if (size < 20 || read_at(0, header, 20) != 20) fail(name, "a .glb shorter than its header");
    if (word(header + 4) != 2) fail(name, "a .glb of version ", word(header + 4), " (2 is read)");
    if (word(header + 8) != size) {
        fail(name, "the .glb says it is ", word(header + 8), " bytes long, the file is ", size);
    }
    std::uint64_t offset = 12;
    for (int chunk = 0; offset < size; ++chunk) {
        std::uint8_t chunk_header[8] = {};
        if (size - offset < 8 || read_at(offset, chunk_header, 8) != 8) {
            fail(name, "a .glb chunk header is cut at byte ", offset);
        }
        const std::uint64_t length = word(chunk_header);
        if (length > size - offset - 8) {
            fail(name, "a .glb chunk of ", length, " bytes at byte ", offset, " runs past the end");
        }
        if (chunk == 0 && std::memcmp(chunk_header + 4, "JSON", 4) != 0) {
            fail(name, "a .glb whose first chunk is not its JSON");
        }
        offset += 8 + length;
    }
}

constexpr unsigned import_flags = aiProcess_Triangulate | aiProcess_SortByPType |
                                  aiProcess_GenNormals | aiProcess_FlipUVs |
                                  aiProcess_ValidateDataStructure;

bool finite(const aiVector3D& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

AddressMode address_mode(aiTextureMapMode mode) {
    switch (mode) {
        case aiTextureMapMode_Clamp:
        case aiTextureMapMode_Decal:
            return AddressMode::clamp_to_edge;
        case aiTextureMapMode_Mirror:
            return AddressMode::mirrored_repeat;
        default:
            return AddressMode::repeat;
    }
}

glm::mat4 to_glm(const aiMatrix4x4& m) {
    glm::mat4 result;
    for (int row = 0; row < 4; ++row) {
        for (int column = 0; column < 4; ++column) result[column][row] = m[row][column];
    }
    return result;
}

bool finite(const glm::mat4& m) {
    for (int column = 0; column < 4; ++column) {
        for (int row = 0; row < 4; ++row) {
            if (!std::isfinite(m[column][row])) return false;
        }
    }
    return true;
}

// KHR_texture_transform as the file has it, from what assimp (5.2 and later) made of it for its
// own uv space: its translation also carries the move of the origin from glTF's top-left corner
// to the bottom-left one and of the rotation's centre to the image's centre; aiProcess_FlipUVs
// then negated the rotation (back to the file's) and the translation's v. Undone here, so that
// UvTransform::apply on the file's uvs (which aiProcess_FlipUVs restores) is the extension's.
UvTransform gltf_transform(const aiUVTransform& assimp) {
    UvTransform t;
    t.rotation = assimp.mRotation;
    t.scale = {assimp.mScaling.x, assimp.mScaling.y};
    const float c = std::cos(t.rotation), s = std::sin(t.rotation);
    t.offset.x = assimp.mTranslation.x - 0.5f * t.scale.x * (1 - c + s);
    t.offset.y = assimp.mTranslation.y + 1 - t.scale.y + 0.5f * t.scale.y * (s + c - 1);
    return t;
}

// Reads one scene that assimp accepted into a GltfScene, checking as it goes.
class SceneReader {
public:
    SceneReader(const aiScene& scene, std::string name, std::filesystem::path folder,
                const GltfSceneLimits& limits)
        : ai_(scene), name_(std::move(name)), folder_(std::move(folder)), limits_(limits) {}

    GltfScene read() {
        read_images();
        read_materials();
        read_meshes();
        read_nodes();
        if (out_.instances.empty()) fail(name_, "the scene draws no triangles");
        compute_bounds();
        check_scene(out_, limits_, name_);  // factors, references, indices: as every reader checks
        return std::move(out_);
    }

private:
    void read_images() {
        if (ai_.mNumTextures > limits_.max_images) {
            fail(name_, ai_.mNumTextures, " embedded images (at most ", limits_.max_images, ")");
        }
        for (unsigned i = 0; i < ai_.mNumTextures; ++i) {
            const aiTexture& texture = *ai_.mTextures[i];
            if (texture.mHeight != 0 || texture.pcData == nullptr) {
                fail(name_, "embedded image ", i, " is not an encoded image (PNG, JPEG, ...)");
            }
            SceneImage image;
            const auto* bytes = reinterpret_cast<const std::uint8_t*>(texture.pcData);
            image.embedded.assign(bytes, bytes + texture.mWidth);
            image.format_hint = std::string(texture.achFormatHint,
                                            strnlen(texture.achFormatHint, HINTMAXTEXTURELEN));
            image.name = "embedded image " + std::to_string(i);
            out_.images.push_back(std::move(image));
        }
        embedded_count_ = out_.images.size();
    }

    // The image a texture path names: "*N" an embedded one, else a file beside the scene.
    std::uint32_t image_for(const aiString& path) {
        const std::string text(path.C_Str(), path.length);
        if (const aiTexture* embedded = ai_.GetEmbeddedTexture(path.C_Str())) {
            for (std::size_t i = 0; i < embedded_count_; ++i) {
                if (ai_.mTextures[i] == embedded) return std::uint32_t(i);
            }
        }
        if (text.empty() || text[0] == '*')
            fail(name_, "a material names image \"", text, "\", which the scene does not hold");
        const std::filesystem::path relative(text);
        if (relative.is_absolute())
            fail(name_, "image \"", text,
                 "\" is an absolute path: images must lie beside the scene");
        for (const auto& part : relative) {
            if (part == "..") fail(name_, "image \"", text, "\" leaves the scene's folder");
        }
        const std::filesystem::path file = folder_ / relative;
        for (std::size_t i = embedded_count_; i < out_.images.size(); ++i) {
            if (out_.images[i].path == file) return std::uint32_t(i);
        }
        if (out_.images.size() >= limits_.max_images)
            fail(name_, "more than ", limits_.max_images, " images");
        SceneImage image;
        image.path = file;
        image.name = text;
        out_.images.push_back(std::move(image));
        return std::uint32_t(out_.images.size() - 1);
    }

    std::optional<TextureSlot> slot(const aiMaterial& material, aiTextureType type, bool srgb) {
        if (material.GetTextureCount(type) == 0) return std::nullopt;
        aiString path;
        aiTextureMapMode modes[2] = {aiTextureMapMode_Wrap, aiTextureMapMode_Wrap};
        if (material.GetTexture(type, 0, &path, nullptr, nullptr, nullptr, nullptr, modes) !=
            AI_SUCCESS) {
            return std::nullopt;
        }
        TextureSlot slot;
        slot.image = image_for(path);
        slot.wrap_u = address_mode(modes[0]);
        slot.wrap_v = address_mode(modes[1]);
        slot.srgb = srgb;
        aiUVTransform transform;
        if (material.Get(AI_MATKEY_UVTRANSFORM(type, 0), transform) == AI_SUCCESS) {
            slot.transform = gltf_transform(transform);
            if (!std::isfinite(slot.transform.offset.x) ||
                !std::isfinite(slot.transform.offset.y) || !std::isfinite(slot.transform.scale.x) ||
                !std::isfinite(slot.transform.scale.y) || !std::isfinite(slot.transform.rotation)) {
                fail(name_, "a texture transform of material \"", material.GetName().C_Str(),
                     "\" is not finite");
            }
        }
        return slot;
    }

    void read_materials() {
        if (ai_.mNumMaterials > limits_.max_materials) {
            fail(name_, ai_.mNumMaterials, " materials (at most ", limits_.max_materials, ")");
        }
        for (unsigned i = 0; i < ai_.mNumMaterials; ++i) {
            const aiMaterial& ai = *ai_.mMaterials[i];
            SceneMaterial m;
            m.name = ai.GetName().C_Str();
            aiColor4D colour;
            if (ai.Get(AI_MATKEY_BASE_COLOR, colour) == AI_SUCCESS) {
                m.base_colour = {colour.r, colour.g, colour.b, colour.a};
            }
            aiColor3D emissive;
            if (ai.Get(AI_MATKEY_COLOR_EMISSIVE, emissive) == AI_SUCCESS) {
                m.emissive = {emissive.r, emissive.g, emissive.b};
            }
            ai.Get(AI_MATKEY_METALLIC_FACTOR, m.metallic);
            ai.Get(AI_MATKEY_ROUGHNESS_FACTOR, m.roughness);
            read_alpha(ai, m);
            int two_sided = 0;
            if (ai.Get(AI_MATKEY_TWOSIDED, two_sided) == AI_SUCCESS)
                m.double_sided = two_sided != 0;
            // Base colour and emissive hold colours (sRGB); the others hold data (linear).
            m.base_colour_texture = slot(ai, aiTextureType_BASE_COLOR, true);
            if (!m.base_colour_texture)
                m.base_colour_texture = slot(ai, aiTextureType_DIFFUSE, true);
            m.normal_texture = slot(ai, aiTextureType_NORMALS, false);
            m.metallic_roughness_texture = slot(ai, aiTextureType_UNKNOWN, false);
            m.occlusion_texture = slot(ai, aiTextureType_LIGHTMAP, false);
            m.emissive_texture = slot(ai, aiTextureType_EMISSIVE, true);
            out_.materials.push_back(std::move(m));
        }
        if (out_.materials.empty()) out_.materials.emplace_back();  // glTF's default material
    }

    void read_alpha(const aiMaterial& ai, SceneMaterial& m) const {
        aiString mode;
        if (ai.Get(AI_MATKEY_GLTF_ALPHAMODE, mode) == AI_SUCCESS) {
            const std::string text = mode.C_Str();
            if (text == "MASK") m.alpha_mode = AlphaMode::mask;
            if (text == "BLEND") m.alpha_mode = AlphaMode::blend;
        }
        ai.Get(AI_MATKEY_GLTF_ALPHACUTOFF, m.alpha_cutoff);
    }

    void read_meshes() {
        mesh_index_.assign(ai_.mNumMeshes, -1);
        for (unsigned i = 0; i < ai_.mNumMeshes; ++i) {
            const aiMesh& ai = *ai_.mMeshes[i];
            // Points and lines (split off by aiProcess_SortByPType) are not drawn.
            if ((ai.mPrimitiveTypes & aiPrimitiveType_TRIANGLE) == 0 || ai.mNumFaces == 0) continue;
            mesh_index_[i] = int(out_.meshes.size());
            out_.meshes.push_back(read_mesh(ai));
        }
    }

    SceneMesh read_mesh(const aiMesh& ai) {
        vertices_ += ai.mNumVertices;
        triangles_ += ai.mNumFaces;
        if (vertices_ > limits_.max_vertices)
            fail(name_, "more than ", limits_.max_vertices, " vertices");
        if (triangles_ > limits_.max_triangles)
            fail(name_, "more than ", limits_.max_triangles, " triangles");
        SceneMesh mesh;
        mesh.name = ai.mName.C_Str();
        if (ai.mMaterialIndex >= out_.materials.size()) {
            fail(name_, "mesh \"", mesh.name, "\" names material ", ai.mMaterialIndex, " of ",
                 out_.materials.size());
        }
        mesh.material = ai.mMaterialIndex;
        mesh.positions.reserve(ai.mNumVertices);
        for (unsigned v = 0; v < ai.mNumVertices; ++v) {
            if (!finite(ai.mVertices[v]))
                fail(name_, "mesh \"", mesh.name, "\" has a position that is not finite");
            mesh.positions.emplace_back(ai.mVertices[v].x, ai.mVertices[v].y, ai.mVertices[v].z);
            const aiVector3D n =
                ai.mNormals && finite(ai.mNormals[v]) ? ai.mNormals[v] : aiVector3D(0, 1, 0);
            mesh.normals.emplace_back(n.x, n.y, n.z);
            const aiVector3D uv = ai.mTextureCoords[0] ? ai.mTextureCoords[0][v] : aiVector3D();
            mesh.uvs.emplace_back(std::isfinite(uv.x) ? uv.x : 0.0f,
                                  std::isfinite(uv.y) ? uv.y : 0.0f);
        }
        mesh.indices.reserve(std::size_t(ai.mNumFaces) * 3);
        for (unsigned f = 0; f < ai.mNumFaces; ++f) {
            const aiFace& face = ai.mFaces[f];
            if (face.mNumIndices != 3) continue;  // a point or line left in a mixed mesh
            for (unsigned k = 0; k < 3; ++k) {
                if (face.mIndices[k] >= ai.mNumVertices) {
                    fail(name_, "mesh \"", mesh.name, "\" has index ", face.mIndices[k], " of ",
                         ai.mNumVertices, " vertices");
                }
                mesh.indices.push_back(face.mIndices[k]);
            }
        }
        if (mesh.indices.empty()) fail(name_, "mesh \"", mesh.name, "\" has no triangles");
        return mesh;
    }

    // The node tree, walked without recursion and at most max_node_depth deep.
    void read_nodes() {
        if (ai_.mRootNode == nullptr) fail(name_, "the scene has no root node");
        struct Visit {
            const aiNode* node;
            glm::mat4 parent;
            std::size_t depth;
        };
        std::vector<Visit> stack{{ai_.mRootNode, glm::mat4(1.0f), 0}};
        while (!stack.empty()) {
            const Visit visit = stack.back();
            stack.pop_back();
            if (visit.depth > limits_.max_node_depth)
                fail(name_, "nodes nest deeper than ", limits_.max_node_depth);
            const glm::mat4 world = visit.parent * to_glm(visit.node->mTransformation);
            if (!finite(world))
                fail(name_, "node \"", visit.node->mName.C_Str(),
                     "\" has a transform that is not finite");
            for (unsigned i = 0; i < visit.node->mNumMeshes; ++i)
                add_instance(*visit.node, visit.node->mMeshes[i], world);
            for (unsigned i = 0; i < visit.node->mNumChildren; ++i) {
                stack.push_back({visit.node->mChildren[i], world, visit.depth + 1});
            }
        }
    }

    void add_instance(const aiNode& node, unsigned mesh, const glm::mat4& world) {
        if (mesh >= mesh_index_.size())
            fail(name_, "node \"", node.mName.C_Str(), "\" names mesh ", mesh, " of ",
                 mesh_index_.size());
        if (mesh_index_[mesh] < 0) return;  // points or lines
        if (out_.instances.size() >= limits_.max_instances)
            fail(name_, "more than ", limits_.max_instances, " mesh instances");
        out_.instances.push_back({std::uint32_t(mesh_index_[mesh]), world});
    }

    void compute_bounds() {
        glm::vec3 low(std::numeric_limits<float>::max()),
            high(std::numeric_limits<float>::lowest());
        for (const SceneInstance& instance : out_.instances) {
            for (const glm::vec3& p : out_.meshes[instance.mesh].positions) {
                const glm::vec3 w = glm::vec3(instance.world * glm::vec4(p, 1.0f));
                low = glm::min(low, w);
                high = glm::max(high, w);
            }
        }
        if (!std::isfinite(low.x + low.y + low.z + high.x + high.y + high.z)) {
            fail(name_, "the scene's extent is not finite");
        }
        out_.bounds_min = low;
        out_.bounds_max = high;
    }

    const aiScene& ai_;
    std::string name_;
    std::filesystem::path folder_;
    const GltfSceneLimits& limits_;
    GltfScene out_;
    std::size_t embedded_count_ = 0;
    std::vector<int> mesh_index_;
    std::size_t vertices_ = 0;
    std::size_t triangles_ = 0;
};

}  // namespace

GltfScene load_gltf_scene(const std::filesystem::path& path, const GltfSceneLimits& limits) {
    const std::string name = path.string();
    std::error_code error;
    const std::filesystem::path canonical = std::filesystem::canonical(path, error);
    if (error) fail(name, "cannot be opened: ", error.message());
    if (!std::filesystem::is_regular_file(canonical, error)) fail(name, "is not a regular file");
    const std::uint64_t size = std::filesystem::file_size(canonical, error);
    if (error) fail(name, "cannot be read: ", error.message());
    if (size > limits.max_file_bytes)
        fail(name, size, " bytes (at most ", limits.max_file_bytes, ")");
    std::ifstream file(canonical, std::ios::binary);
    check_glb_container(name, size, [&](std::uint64_t offset, std::uint8_t* into, std::size_t n) {
        file.clear();
        file.seekg(std::streamoff(offset));
        file.read(reinterpret_cast<char*>(into), std::streamsize(n));
        return std::size_t(file.gcount());
    });
    Assimp::Importer importer;
    auto* io = new BoundedIOSystem(canonical.parent_path(), limits.max_file_bytes);
    io->set_limit(limits.max_file_bytes);
    importer.SetIOHandler(io);  // the importer owns it
    const aiScene* scene = importer.ReadFile(canonical.string(), import_flags);
    if (!io->refusal().empty()) fail(name, io->refusal());
    if (scene == nullptr)
        fail(name, "not a glTF scene that can be read: ", importer.GetErrorString());
    return SceneReader(*scene, name, canonical.parent_path(), limits).read();
}

GltfScene load_gltf_scene_from_memory(const void* bytes, std::size_t size, const char* hint,
                                      const GltfSceneLimits& limits) {
    const std::string name = std::string("scene in memory (") + hint + ")";
    if (size > limits.max_file_bytes)
        fail(name, size, " bytes (at most ", limits.max_file_bytes, ")");
    const auto* data = static_cast<const std::uint8_t*>(bytes);
    check_glb_container(name, size, [&](std::uint64_t offset, std::uint8_t* into, std::size_t n) {
        const std::size_t available = offset < size ? std::min<std::size_t>(n, size - offset) : 0;
        if (available != 0) std::memcpy(into, data + offset, available);
        return available;
    });
    Assimp::Importer importer;
    // Files a scene in memory names are refused: nothing on disk is its folder.
    auto* io = new BoundedIOSystem(std::filesystem::path("/nonexistent-scene-folder"), 0);
    importer.SetIOHandler(io);
    const aiScene* scene = importer.ReadFileFromMemory(bytes, size, import_flags, hint);
    if (scene == nullptr)
        fail(name, "not a glTF scene that can be read: ", importer.GetErrorString());
    return SceneReader(*scene, name, std::filesystem::path(), limits).read();
}

}  // namespace vtpage::viewer
