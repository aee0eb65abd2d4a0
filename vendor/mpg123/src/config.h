/* Confab's build configuration for libmpg123 1.32.10 (the library's own sources, unmodified,
 * beside this file, from Debian's mpg123_1.32.10.orig.tar.xz; LGPL v2.1, see ../COPYING), in
 * place of the one its configure script writes. crates/engine/build.rs compiles it with `cc`.
 *
 * What for: MP3 samples exactly as transformers' `load_audio` reads them through soundfile ->
 * libsndfile -> libmpg123, which asks for 32-bit float output only. So only the float ("real")
 * synths are built, with the decoders the soundfile wheel's x86-64 build chooses among at run
 * time (OPT_MULTI with x86-64, AVX and generic, set by build.rs; the plain C decoder elsewhere).
 * Everything else that changes no sample is left out: integer outputs, the crude internal
 * resampler, downsampling, the equalizer, ICY streams, the feeder, and the off_t API
 * (PORTABLE_API: the engine reads through mpg123_reader64). Decoding-relevant settings are the
 * configure defaults: gapless, the frame index, the new Huffman decoder. */

#ifndef CONFAB_MPG123_CONFIG_H
#define CONFAB_MPG123_CONFIG_H

#define PORTABLE_API 1

#define GAPLESS 1
#define FRAME_INDEX 1
#define INDEX_SIZE 1000
#define IEEE_FLOAT 1
#define USE_NEW_HUFFTABLE 1

#define NO_8BIT 1
#define NO_16BIT 1
#define NO_32BIT 1
#define NO_NTOM 1
#define NO_DOWNSAMPLE 1
#define NO_EQUALIZER 1
#define NO_ICY 1
#define NO_FEEDER 1
#define NO_MOREINFO 1

/* The x86 assembly's alignment directive (GNU as and clang's integrated assembler). */
#define ASMALIGN_BALIGN 1
#define CCALIGN 1

#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_LIMITS_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STRERROR 1

#endif
