// Which material slots become layers of one material stack (scene/scene_stacks.hpp): slots whose
// baked textures have the same size and whose wrap modes and uv transforms are the same stack,
// in slot order; slots that differ stay textures of their own; emissive never joins; materials
// with fewer than two slots that agree have no stack; materials that would stack the same files
// in the same order share one.
#include "scene/scene_stacks.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace vtpage::viewer {
namespace {

using Slots = std::array<std::int32_t, material_slot_count>;

constexpr StackFile big{1024, 1024};

// A material with a texture in each slot whose file index is not -1.
SceneMaterial material_with(const Slots& files) {
    SceneMaterial material;
    const TextureSlot slot{.image = 0};
    if (files[0] >= 0) material.base_colour_texture = slot;
    if (files[1] >= 0) material.normal_texture = slot;
    if (files[2] >= 0) material.metallic_roughness_texture = slot;
    if (files[3] >= 0) material.occlusion_texture = slot;
    if (files[4] >= 0) material.emissive_texture = slot;
    return material;
}

struct Case {
    GltfScene scene;
    std::vector<Slots> slots;
    std::vector<StackFile> files;

    SceneMaterial& add(const Slots& material_files) {
        slots.push_back(material_files);
        scene.images.resize(1);
        return scene.materials.emplace_back(material_with(material_files));
    }
    SceneStacks plan() const { return plan_stacks(scene, slots, files); }
};

std::vector<std::int32_t> layers_of(const MaterialStack& material) {
    return {material.layers.begin(), material.layers.end()};
}

TEST(SceneStacksTest, SlotsThatAgreeFormOneStackInSlotOrder) {
    Case c;
    c.files.assign(5, big);
    c.add({0, 1, 2, 3, 4});
    const SceneStacks stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 1u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{0, 1, 2, 3}));  // emissive apart
    EXPECT_EQ(stacks.materials[0].stack, 0);
    EXPECT_EQ(layers_of(stacks.materials[0]), (std::vector<std::int32_t>{0, 1, 2, 3, -1}));
    EXPECT_EQ(stacks.stacked_slots, 4u);
}

TEST(SceneStacksTest, AMaterialWithOneTexturedSlotOrEmissiveOnlyBesideItHasNoStack) {
    Case c;
    c.files.assign(3, big);
    c.add({0, -1, -1, -1, -1});
    c.add({1, -1, -1, -1, 2});  // base colour and emissive: emissive never joins
    const SceneStacks stacks = c.plan();
    EXPECT_TRUE(stacks.stacks.empty());
    for (const MaterialStack& material : stacks.materials) {
        EXPECT_EQ(material.stack, -1);
        EXPECT_EQ(layers_of(material), (std::vector<std::int32_t>(5, -1)));
    }
    EXPECT_EQ(stacks.stacked_slots, 0u);
}

TEST(SceneStacksTest, ABakedSizeThatDiffersKeepsTheSlotApart) {
    Case c;
    c.files = {big, big, {512, 512}, big, {1024, 512}};
    c.add({0, 1, 2, 3, -1});    // metallic-roughness smaller
    c.add({0, -1, -1, 4, -1});  // occlusion as wide, not as tall: no stack
    const SceneStacks stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 1u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{0, 1, 3}));
    EXPECT_EQ(layers_of(stacks.materials[0]), (std::vector<std::int32_t>{0, 1, -1, 2, -1}));
    EXPECT_EQ(stacks.materials[1].stack, -1);
    EXPECT_EQ(stacks.stacked_slots, 3u);
}

TEST(SceneStacksTest, AWrapModeThatDiffersKeepsTheSlotApart) {
    Case c;
    c.files.assign(4, big);
    SceneMaterial& material = c.add({0, 1, 2, -1, -1});
    material.normal_texture->wrap_u = AddressMode::clamp_to_edge;
    material.metallic_roughness_texture->wrap_v = AddressMode::mirrored_repeat;
    c.add({0, 3, -1, -1, -1}).normal_texture->wrap_v = AddressMode::clamp_to_edge;
    const SceneStacks stacks = c.plan();
    EXPECT_TRUE(stacks.stacks.empty());
    EXPECT_EQ(stacks.materials[0].stack, -1);
    EXPECT_EQ(stacks.materials[1].stack, -1);
}

TEST(SceneStacksTest, ATransformThatDiffersAtAllKeepsTheSlotApart) {
    Case c;
    c.files.assign(4, big);
    const UvTransform shared{.offset = {0.25f, 0.5f}, .rotation = 0.5f, .scale = {2, 2}};
    SceneMaterial& material = c.add({0, 1, 2, 3, -1});
    material.base_colour_texture->transform = shared;
    material.normal_texture->transform = shared;
    material.metallic_roughness_texture->transform = shared;
    material.metallic_roughness_texture->transform.rotation = 0.5000001f;  // compared exactly
    material.occlusion_texture->transform = shared;
    material.occlusion_texture->transform.scale.y = 2.5f;
    const SceneStacks stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 1u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(layers_of(stacks.materials[0]), (std::vector<std::int32_t>{0, 1, -1, -1, -1}));
}

// The largest group that agrees stacks, though the base colour is not in it.
TEST(SceneStacksTest, TheLargestGroupThatAgreesStacks) {
    Case c;
    c.files = {{256, 256}, big, big, big};
    c.add({0, 1, 2, 3, -1});
    SceneStacks stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 1u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{1, 2, 3}));
    EXPECT_EQ(layers_of(stacks.materials[0]), (std::vector<std::int32_t>{-1, 0, 1, 2, -1}));

    // Two pairs: the one with the earliest slot.
    c.files = {big, {256, 256}, big, {256, 256}};
    stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 1u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{0, 2}));
}

TEST(SceneStacksTest, MaterialsWithTheSameFilesInTheSameOrderShareAStack) {
    Case c;
    c.files.assign(4, big);
    c.add({0, 1, -1, -1, -1});
    c.add({0, 1, -1, -1, 3});   // the same stack, its emissive apart
    c.add({1, 0, -1, -1, -1});  // the same files in another order: a stack of its own
    c.add({0, -1, 2, -1, -1});
    const SceneStacks stacks = c.plan();
    ASSERT_EQ(stacks.stacks.size(), 3u);
    EXPECT_EQ(stacks.stacks[0], (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(stacks.stacks[1], (std::vector<std::size_t>{1, 0}));
    EXPECT_EQ(stacks.stacks[2], (std::vector<std::size_t>{0, 2}));
    EXPECT_EQ(stacks.materials[0].stack, 0);
    EXPECT_EQ(stacks.materials[1].stack, 0);
    EXPECT_EQ(stacks.materials[2].stack, 1);
    EXPECT_EQ(stacks.materials[3].stack, 2);
    EXPECT_EQ(stacks.stacked_slots, 8u);
}

TEST(SceneStacksTest, WithoutStacksEveryMaterialHasNone) {
    const SceneStacks none = no_stacks(3);
    EXPECT_TRUE(none.stacks.empty());
    ASSERT_EQ(none.materials.size(), 3u);
    for (const MaterialStack& material : none.materials) {
        EXPECT_EQ(material.stack, -1);
        for (const std::int32_t layer : material.layers) EXPECT_EQ(layer, -1);
    }
    EXPECT_EQ(none.stacked_slots, 0u);
}

TEST(SceneStacksTest, SlotsThatDoNotMatchTheFilesAreRefused) {
    Case c;
    c.files.assign(2, big);
    c.add({0, 1, -1, -1, -1});
    c.slots.push_back({});
    EXPECT_THROW(c.plan(), SceneError);  // two sets of slots, one material
    c.slots.pop_back();
    c.slots[0][1] = 2;  // past the files
    EXPECT_THROW(c.plan(), SceneError);
}

}  // namespace
}  // namespace vtpage::viewer
