#include "vtpage/streaming/sources/texture_set.hpp"

#include <algorithm>
#include <deque>
#include <mutex>

#include "vtpage/streaming/layout/feedback_entry.hpp"

namespace vtpage::vt {

struct TextureSet::State {
    mutable std::mutex mutex;
    std::deque<TextureInfo> textures;  // by id; base pages increase with the id
    std::uint64_t used = 0;            // pages, relative to first_page

    const TextureInfo& at_nolock(const char* operation, TextureId texture) const {
        if (texture >= textures.size()) {
            throw Error(Errc::out_of_range, operation,
                        detail::concat("the set has ", textures.size(), " textures"),
                        detail::concat("texture=", texture));
        }
        return textures[texture];
    }
    // The texture whose pages hold global page `page`, or null.
    const TextureInfo* owner_nolock(PageIndex page) const {
        auto after = std::upper_bound(
            textures.begin(), textures.end(), page,
            [](PageIndex p, const TextureInfo& info) { return p < info.base_page; });
        if (after == textures.begin()) return nullptr;
        const TextureInfo& info = *std::prev(after);
        if (page - info.base_page >= info.layout.page_count) return nullptr;
        return &info;
    }
};

TextureSet::TextureSet(std::uint64_t page_capacity, PageIndex first_page)
    : state_(std::make_unique<State>()), capacity_(page_capacity), first_page_(first_page) {}

TextureSet::~TextureSet() = default;

TextureId TextureSet::add(std::shared_ptr<const TileSource> source) {
    if (!source) throw Error(Errc::invalid_argument, "TextureSet::add", "the source is null");
    const TextureShape shape = source->shape();
    if (!shape.valid()) {
        throw Error(Errc::invalid_argument, "TextureSet::add",
                    detail::concat("textures are 1 to ", max_size,
                                   " texels on a side, in a known tile format"),
                    detail::concat("width=", shape.width, ", height=", shape.height,
                                   ", format=", std::uint32_t(shape.format)));
    }
    const TextureLayout layout(shape);
    std::lock_guard lock(state_->mutex);
    if (state_->textures.size() >= FeedbackEntry::max_textures) {
        throw Error(
            Errc::out_of_range, "TextureSet::add",
            detail::concat("the set holds at most ", FeedbackEntry::max_textures, " textures"));
    }
    if (layout.page_count > capacity_ - state_->used) {
        throw Error(Errc::out_of_memory, "TextureSet::add",
                    detail::concat("the texture needs ", layout.page_count, " pages and only ",
                                   capacity_ - state_->used, " of ", capacity_,
                                   " are left; use a larger region"),
                    detail::concat("width=", shape.width, ", height=", shape.height,
                                   ", source=", source->name()));
    }
    TextureInfo info;
    info.id = static_cast<TextureId>(state_->textures.size());
    info.base_page = first_page_ + state_->used;
    info.layout = layout;
    info.source_layout = TextureLayout(shape.untiled());
    info.source = std::move(source);
    state_->used += layout.page_count;
    state_->textures.push_back(std::move(info));
    return state_->textures.back().id;
}

std::size_t TextureSet::texture_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->textures.size();
}

TextureInfo TextureSet::info(TextureId texture) const {
    std::lock_guard lock(state_->mutex);
    return state_->at_nolock("TextureSet::info", texture);
}

PageIndex TextureSet::base_page(TextureId texture) const {
    std::lock_guard lock(state_->mutex);
    return state_->at_nolock("TextureSet::base_page", texture).base_page;
}

TextureLayout TextureSet::layout(TextureId texture) const {
    std::lock_guard lock(state_->mutex);
    return state_->at_nolock("TextureSet::layout", texture).layout;
}

std::shared_ptr<const TileSource> TextureSet::source(TextureId texture) const {
    std::lock_guard lock(state_->mutex);
    return state_->at_nolock("TextureSet::source", texture).source;
}

PageIndex TextureSet::global_page(TextureId texture, std::uint64_t layout_page) const {
    std::lock_guard lock(state_->mutex);
    const TextureInfo& info = state_->at_nolock("TextureSet::global_page", texture);
    if (layout_page >= info.layout.page_count) {
        throw Error(Errc::out_of_range, "TextureSet::global_page",
                    detail::concat("the texture has ", info.layout.page_count, " pages"),
                    detail::concat("texture=", texture, ", page=", layout_page));
    }
    return info.base_page + layout_page;
}

PageIndex TextureSet::global_page(const TileId& tile) const {
    std::lock_guard lock(state_->mutex);
    const TextureInfo& info = state_->at_nolock("TextureSet::global_page", tile.texture);
    if (!info.layout.has_tile(tile.mip, tile.x, tile.y)) {
        throw Error(Errc::out_of_range, "TextureSet::global_page",
                    "the tile is outside the texture",
                    detail::concat("texture=", tile.texture, ", mip=", tile.mip, ", x=", tile.x,
                                   ", y=", tile.y));
    }
    return info.base_page + info.layout.locate(tile.mip, tile.x, tile.y).page;
}

PageIndex TextureSet::tail_page(TextureId texture) const {
    std::lock_guard lock(state_->mutex);
    const TextureInfo& info = state_->at_nolock("TextureSet::tail_page", texture);
    return info.base_page + info.layout.tail_page();
}

std::optional<PageIndex> TextureSet::parent(PageIndex global_page) const {
    std::lock_guard lock(state_->mutex);
    const TextureInfo* info = state_->owner_nolock(global_page);
    if (!info) return std::nullopt;
    const std::uint64_t page = global_page - info->base_page;
    if (page == info->layout.tail_page()) return std::nullopt;
    return info->base_page + parent_page(info->layout, page);
}

std::optional<PageOwner> TextureSet::find(PageIndex global_page) const {
    std::lock_guard lock(state_->mutex);
    const TextureInfo* info = state_->owner_nolock(global_page);
    if (!info) return std::nullopt;
    PageOwner owner;
    owner.texture = info->id;
    owner.layout_page = global_page - info->base_page;
    owner.position = page_position(info->layout, owner.layout_page);
    owner.tail = owner.layout_page == info->layout.tail_page();
    owner.source = source_location(info->layout, info->source_layout, owner.layout_page);
    return owner;
}

std::uint64_t TextureSet::pages_used() const {
    std::lock_guard lock(state_->mutex);
    return state_->used;
}

}  // namespace vtpage::vt
