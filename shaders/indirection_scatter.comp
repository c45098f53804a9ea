#version 460
// The indirection table's upload when the changed entries are scattered: one invocation per
// changed entry writes its value at its page. One dispatch costs the same whether the entries
// are neighbours or not, where a copy costs one region per run of neighbours.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Entries {
    uint64_t entry[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Values {
    uint64_t value[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Pages {
    uint page[];
};

// IndirectionScatterPushConstants in engine/interop/vulkan_indirection_scatter.hpp.
layout(push_constant, std430) uniform Scatter {
    uint64_t table;   // the indirection table
    uint64_t values;  // count device addresses (0: not resident)
    uint64_t pages;   // count page indices, each below the table's page count
    uint count;
} scatter;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= scatter.count) return;
    Entries(scatter.table).entry[Pages(scatter.pages).page[i]] = Values(scatter.values).value[i];
}
