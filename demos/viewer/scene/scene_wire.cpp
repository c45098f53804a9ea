#include "scene/scene_wire.hpp"

#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <type_traits>

namespace vtpage::viewer {
namespace {

constexpr std::uint32_t wire_magic = 0x43535456u;  // "VTSC"
constexpr std::uint32_t wire_version = 1;

template <typename... Parts>
[[noreturn]] void fail(const std::string& name, const Parts&... parts) {
    std::ostringstream message;
    message << name << ": ";
    (message << ... << parts);
    throw SceneError(message.str());
}

class Writer {
public:
    template <typename T>
    void put(const T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
        out_.insert(out_.end(), bytes, bytes + sizeof(T));
    }
    template <typename T>
    void put_vector(const std::vector<T>& values) {
        put(std::uint64_t(values.size()));
        if (values.empty()) return;  // data() may be null
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(values.data());
        out_.insert(out_.end(), bytes, bytes + values.size() * sizeof(T));
    }
    void put_string(const std::string& text) {
        put_vector(std::vector<char>(text.begin(), text.end()));
    }
    std::vector<std::uint8_t> take() { return std::move(out_); }

private:
    std::vector<std::uint8_t> out_;
};

class Reader {
public:
    Reader(std::span<const std::uint8_t> bytes, std::string name)
        : bytes_(bytes), name_(std::move(name)) {}
    template <typename T>
    T get() {
        static_assert(std::is_trivially_copyable_v<T>);
        need(sizeof(T));
        T value;
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    // A vector of at most `most` elements.
    template <typename T>
    std::vector<T> get_vector(std::uint64_t most) {
        const auto count = get<std::uint64_t>();
        if (count > most) fail(name_, "a list of ", count, " where at most ", most, " may be");
        need(count * sizeof(T));
        std::vector<T> values(count);
        if (count != 0) std::memcpy(values.data(), bytes_.data() + at_, count * sizeof(T));
        at_ += count * sizeof(T);
        return values;
    }
    std::string get_string() {
        const std::vector<char> chars = get_vector<char>(std::uint64_t{1} << 16);
        return {chars.begin(), chars.end()};
    }
    bool done() const { return at_ == bytes_.size(); }

private:
    void need(std::uint64_t bytes) const {
        if (bytes > bytes_.size() - at_) fail(name_, "the scene's bytes end early");
    }
    std::span<const std::uint8_t> bytes_;
    std::string name_;
    std::size_t at_ = 0;
};

void put_slot(Writer& w, const std::optional<TextureSlot>& slot) {
    w.put(std::uint8_t(slot.has_value()));
    if (!slot) return;
    w.put(slot->image);
    w.put(slot->wrap_u);
    w.put(slot->wrap_v);
    w.put(slot->transform);
    w.put(std::uint8_t(slot->srgb));
}

std::optional<TextureSlot> get_slot(Reader& r) {
    if (r.get<std::uint8_t>() == 0) return std::nullopt;
    TextureSlot slot;
    slot.image = r.get<std::uint32_t>();
    slot.wrap_u = r.get<AddressMode>();
    slot.wrap_v = r.get<AddressMode>();
    slot.transform = r.get<UvTransform>();
    slot.srgb = r.get<std::uint8_t>() != 0;
    return slot;
}

std::array<std::optional<TextureSlot>*, 5> slots_of(SceneMaterial& m) {
    return {&m.base_colour_texture, &m.normal_texture, &m.metallic_roughness_texture,
            &m.occlusion_texture, &m.emissive_texture};
}
std::array<const std::optional<TextureSlot>*, 5> slots_of(const SceneMaterial& m) {
    return {&m.base_colour_texture, &m.normal_texture, &m.metallic_roughness_texture,
            &m.occlusion_texture, &m.emissive_texture};
}

void put_material(Writer& w, const SceneMaterial& m) {
    w.put_string(m.name);
    w.put(m.base_colour);
    w.put(m.emissive);
    w.put(m.metallic);
    w.put(m.roughness);
    w.put(m.alpha_mode);
    w.put(m.alpha_cutoff);
    w.put(std::uint8_t(m.double_sided));
    for (const auto* slot : slots_of(m)) put_slot(w, *slot);
}

SceneMaterial get_material(Reader& r) {
    SceneMaterial m;
    m.name = r.get_string();
    m.base_colour = r.get<glm::vec4>();
    m.emissive = r.get<glm::vec3>();
    m.metallic = r.get<float>();
    m.roughness = r.get<float>();
    m.alpha_mode = r.get<AlphaMode>();
    m.alpha_cutoff = r.get<float>();
    m.double_sided = r.get<std::uint8_t>() != 0;
    for (auto* slot : slots_of(m)) *slot = get_slot(r);
    return m;
}

bool finite(std::span<const float> values) {
    for (float v : values) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}
template <typename Vec>
bool finite_all(const std::vector<Vec>& values) {
    return finite(std::span(reinterpret_cast<const float*>(values.data()),
                            values.size() * sizeof(Vec) / sizeof(float)));
}

void check_slot(const std::optional<TextureSlot>& slot, const GltfScene& scene,
                const std::string& name) {
    if (!slot) return;
    if (slot->image >= scene.images.size()) fail(name, "a texture names image ", slot->image);
    for (AddressMode mode : {slot->wrap_u, slot->wrap_v}) {
        if (mode > AddressMode::clamp_to_edge) fail(name, "an address mode out of range");
    }
    const UvTransform& t = slot->transform;
    if (!finite(std::array{t.offset.x, t.offset.y, t.rotation, t.scale.x, t.scale.y})) {
        fail(name, "a texture transform that is not finite");
    }
}

void check_mesh(const SceneMesh& mesh, const GltfScene& scene, const std::string& name) {
    if (mesh.material >= scene.materials.size())
        fail(name, "a mesh names material ", mesh.material);
    const std::size_t n = mesh.positions.size();
    if (mesh.normals.size() != n || mesh.uvs.size() != n)
        fail(name, "a mesh's attributes differ in count");
    if (mesh.indices.empty() || mesh.indices.size() % 3 != 0)
        fail(name, "a mesh without whole triangles");
    for (std::uint32_t index : mesh.indices) {
        if (index >= n) fail(name, "a mesh has index ", index, " of ", n, " vertices");
    }
    if (!finite_all(mesh.positions) || !finite_all(mesh.normals) || !finite_all(mesh.uvs)) {
        fail(name, "a mesh has values that are not finite");
    }
}

}  // namespace

std::vector<std::uint8_t> encode_scene(const GltfScene& scene) {
    Writer w;
    w.put(wire_magic);
    w.put(wire_version);
    w.put(std::uint64_t(scene.images.size()));
    for (const SceneImage& image : scene.images) {
        w.put_string(image.path.string());
        w.put_vector(image.embedded);
        w.put_string(image.format_hint);
        w.put_string(image.name);
    }
    w.put(std::uint64_t(scene.materials.size()));
    for (const SceneMaterial& material : scene.materials) put_material(w, material);
    w.put(std::uint64_t(scene.meshes.size()));
    for (const SceneMesh& mesh : scene.meshes) {
        w.put_string(mesh.name);
        w.put(mesh.material);
        w.put_vector(mesh.positions);
        w.put_vector(mesh.normals);
        w.put_vector(mesh.uvs);
        w.put_vector(mesh.indices);
    }
    w.put_vector(scene.instances);
    w.put(scene.bounds_min);
    w.put(scene.bounds_max);
    return w.take();
}

GltfScene decode_scene(std::span<const std::uint8_t> bytes, const GltfSceneLimits& limits,
                       const std::string& name) {
    Reader r(bytes, name);
    if (r.get<std::uint32_t>() != wire_magic || r.get<std::uint32_t>() != wire_version) {
        fail(name, "not a scene's bytes");
    }
    GltfScene scene;
    const auto images = r.get<std::uint64_t>();
    if (images > limits.max_images) fail(name, images, " images (at most ", limits.max_images, ")");
    for (std::uint64_t i = 0; i < images; ++i) {
        SceneImage image;
        image.path = r.get_string();
        image.embedded = r.get_vector<std::uint8_t>(limits.max_file_bytes);
        image.format_hint = r.get_string();
        image.name = r.get_string();
        scene.images.push_back(std::move(image));
    }
    const auto materials = r.get<std::uint64_t>();
    if (materials > limits.max_materials + 1) fail(name, materials, " materials");
    for (std::uint64_t i = 0; i < materials; ++i) scene.materials.push_back(get_material(r));
    const auto meshes = r.get<std::uint64_t>();
    if (meshes > limits.max_instances) fail(name, meshes, " meshes");
    std::uint64_t vertices = 0, indices = 0;
    for (std::uint64_t i = 0; i < meshes; ++i) {
        SceneMesh mesh;
        mesh.name = r.get_string();
        mesh.material = r.get<std::uint32_t>();
        const std::uint64_t vertices_left =
            limits.max_vertices - std::min<std::uint64_t>(vertices, limits.max_vertices);
        mesh.positions = r.get_vector<glm::vec3>(vertices_left);
        mesh.normals = r.get_vector<glm::vec3>(vertices_left);
        mesh.uvs = r.get_vector<glm::vec2>(vertices_left);
        vertices += mesh.positions.size();
        mesh.indices =
            r.get_vector<std::uint32_t>(3 * std::uint64_t(limits.max_triangles) -
                                        std::min(indices, 3 * std::uint64_t(limits.max_triangles)));
        indices += mesh.indices.size();
        scene.meshes.push_back(std::move(mesh));
    }
    scene.instances = r.get_vector<SceneInstance>(limits.max_instances);
    scene.bounds_min = r.get<glm::vec3>();
    scene.bounds_max = r.get<glm::vec3>();
    if (!r.done()) fail(name, "bytes left after the scene");
    check_scene(scene, limits, name);
    return scene;
}

void check_scene(const GltfScene& scene, const GltfSceneLimits& limits, const std::string& name) {
    for (const SceneMaterial& m : scene.materials) {
        if (m.alpha_mode > AlphaMode::blend) fail(name, "an alpha mode out of range");
        if (!finite(std::array{m.base_colour.r, m.base_colour.g, m.base_colour.b, m.base_colour.a,
                               m.emissive.r, m.emissive.g, m.emissive.b, m.metallic, m.roughness,
                               m.alpha_cutoff})) {
            fail(name, "material \"", m.name, "\" has a factor that is not finite");
        }
        for (const auto* slot : slots_of(m)) check_slot(*slot, scene, name);
    }
    for (const SceneMesh& mesh : scene.meshes) check_mesh(mesh, scene, name);
    if (scene.instances.empty()) fail(name, "the scene draws no triangles");
    if (scene.instances.size() > limits.max_instances) fail(name, "too many instances");
    for (const SceneInstance& instance : scene.instances) {
        if (instance.mesh >= scene.meshes.size())
            fail(name, "an instance names mesh ", instance.mesh);
        if (!finite(std::span(&instance.world[0][0], 16)))
            fail(name, "a transform that is not finite");
    }
    if (!finite(std::array{scene.bounds_min.x, scene.bounds_min.y, scene.bounds_min.z,
                           scene.bounds_max.x, scene.bounds_max.y, scene.bounds_max.z})) {
        fail(name, "the scene's extent is not finite");
    }
}

}  // namespace vtpage::viewer
