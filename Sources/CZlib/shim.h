#include <zlib.h>

/* inflateInit2 and deflateInit are macros (they pass the library version and the stream's size). */

/* Inflates a gzip or a zlib stream, whichever the header says (15 window bits + 32: detect). */
static inline int mappack_inflate_init(z_stream *stream) { return inflateInit2(stream, 15 + 32); }

/* Deflates into a zlib stream (RFC 1950: two-byte header, deflate data, Adler-32). */
static inline int mappack_deflate_init(z_stream *stream, int level) { return deflateInit(stream, level); }

/* Deflates into a gzip stream (RFC 1952; 15 window bits + 16: a gzip header with no file name and
   modification time 0, so the same input gives the same bytes). */
static inline int mappack_gzip_deflate_init(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
