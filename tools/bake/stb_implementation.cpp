// The one place the stb image code is compiled. Only its PNG and JPEG readers: the bake reads
// those two formats, and stb's other readers (PNM, BMP, TGA, PSD, HDR, GIF, PIC) are code that
// untrusted files could reach without serving anyone (the PNM reader's header parser overflows a
// signed int on a long run of digits).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow=local"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#include <stb_image.h>
#include <stb_image_write.h>
#pragma GCC diagnostic pop
