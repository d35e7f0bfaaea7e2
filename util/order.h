/* order: the qsort/bsearch comparison of uint64_t keys (addresses, packed
 * pairs), shared by the modules that sort them. */
#ifndef ICPP_ORDER_H
#define ICPP_ORDER_H

/* <0, 0, >0 as *(uint64_t *)x is below, equal to, above *(uint64_t *)y. */
int u64_cmp(const void *x, const void *y);

#endif
