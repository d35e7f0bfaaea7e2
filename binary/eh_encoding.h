/* eh_encoding: the byte encodings of .eh_frame, .eh_frame_hdr and LSDAs
 * that libdw decodes internally but does not expose: LEB128 numbers and
 * DW_EH_PE-encoded pointers.  The binary layer reads FDE ranges with them and
 * the rewriter re-encodes the .eh_frame it merges.  Each reader advances *p
 * and returns 0, or -1 when the bytes run past end or the form is not one
 * x86-64 toolchains emit. */
#ifndef ICPP_EH_ENCODING_H
#define ICPP_EH_ENCODING_H

#include <stddef.h>
#include <stdint.h>

int eh_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v);
int eh_sleb(const uint8_t **p, const uint8_t *end, int64_t *v);
/* Bytes of a fixed-size DW_EH_PE form; 0 for the LEB128 forms. */
size_t eh_enc_size(int enc);
/* A pointer in encoding enc (absptr or pcrel, any size, not indirect); `at`
 * is the address of the field, for pcrel.  A zero value stays a null pointer
 * (libgcc's rule). */
int eh_read_enc(int enc, const uint8_t **p, const uint8_t *end, uint64_t at, uint64_t *v);

#endif
