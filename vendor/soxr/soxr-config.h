/* Confab's build configuration for libsoxr 0.1.3 (the library's own sources, unmodified, beside
 * this file; LGPL v2.1, see LICENCE). Only what resampling at 'HQ' (20-bit) needs: the
 * single-precision cores. On x86-64 the SIMD core (cr32s, SSE) is built as in python-soxr's
 * wheels, which transformers' audio loader uses, so that our samples are theirs bit for bit;
 * elsewhere the plain C core (cr32), as libsoxr's own build picks where it finds no SIMD. */

#if !defined soxr_config_included
#define soxr_config_included

#define AVCODEC_FOUND 0
#define AVUTIL_FOUND 0
#define WITH_PFFFT 0

#define HAVE_FENV_H 1
#define HAVE_STDBOOL_H 1
#define HAVE_STDINT_H 1
#define HAVE_LRINT 0
#define HAVE_BIGENDIAN 0

#define WITH_CR32 1
#if defined __x86_64__ || defined _M_X64
#define WITH_CR32S 1
#else
#define WITH_CR32S 0
#endif
#define WITH_CR64 0
#define WITH_CR64S 0
#define WITH_VR32 0

#define WITH_HI_PREC_CLOCK 0
#define WITH_FLOAT_STD_PREC_CLOCK 0
#define WITH_DEV_TRACE 0

#endif
