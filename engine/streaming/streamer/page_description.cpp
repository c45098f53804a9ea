#include "streaming/streamer/page_description.hpp"

namespace vtpage::vt::streamer_detail {

StreamedPage describe_page(const PageTable& table, const TextureSet& textures,
                           const PageMapping& mapping) {
    StreamedPage page;
    page.page = mapping.page;
    page.physical = mapping.physical;
    page.generation = mapping.generation;
    page.data = table.maps_into_region() ? table.address_of(mapping.page) : mapping.physical.window;
    page.table_page = mapping.page;
    if (auto owner = textures.find(mapping.page)) {
        page.texture = owner->texture;
        page.layout_page = owner->layout_page;
        page.mip = owner->position.mip;
    }
    return page;
}

}  // namespace vtpage::vt::streamer_detail
