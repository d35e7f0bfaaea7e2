/* eh_encoding.c: LEB128 and DW_EH_PE pointers (binary/eh_encoding.h). */
#include "binary/eh_encoding.h"

#include <dwarf.h>
#include <string.h>

int eh_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

int eh_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	int shift = 0;
	uint8_t c = 0x80;
	while (*p < end && shift < 64 && (c & 0x80)) {
		c = *(*p)++;
		r |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	if (c & 0x80)
		return -1;
	if (shift < 64 && (c & 0x40))
		r |= ~0ULL << shift;
	*v = (int64_t)r;
	return 0;
}

size_t eh_enc_size(int enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;            /* leb128 forms */
	}
}

int eh_read_enc(int enc, const uint8_t **p, const uint8_t *end, uint64_t at, uint64_t *v)
{
	if (enc == DW_EH_PE_omit)
		return -1;
	int app = enc & 0x70;
	if (app != DW_EH_PE_absptr && app != DW_EH_PE_pcrel)
		return -1;
	uint64_t raw = 0;
	size_t n = eh_enc_size(enc);
	if ((enc & 0x0f) == DW_EH_PE_uleb128) {
		if (eh_uleb(p, end, &raw))
			return -1;
	} else if ((enc & 0x0f) == DW_EH_PE_sleb128) {
		int64_t s;
		if (eh_sleb(p, end, &s))
			return -1;
		raw = (uint64_t)s;
	} else {
		if (!n || (size_t)(end - *p) < n)
			return -1;
		memcpy(&raw, *p, n);
		if ((enc & DW_EH_PE_signed) && n < 8 && (raw >> (8 * n - 1)) & 1)
			raw |= ~0ULL << (8 * n);
		*p += n;
	}
	/* libgcc: a zero value is a null pointer, never made pc-relative. */
	*v = raw && app == DW_EH_PE_pcrel ? at + raw : raw;
	return 0;
}
