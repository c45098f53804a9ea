// The one place stb's image writer is compiled: vtpage-bake --procedural writes its PNG with it.
// Images are read through libvips only (vips_image_reader.hpp), so stb's readers are not built.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma GCC diagnostic pop
