/* errmsg: the one-line error messages modules hand back to their callers.
 * Functions that can fail take (char *err, size_t errlen) and fill it with
 * errmsg(), which returns -1 so that `return errmsg(err, errlen, ...);` is
 * the whole failure path.  err may be NULL when the caller does not care. */
#ifndef ICPP_ERRMSG_H
#define ICPP_ERRMSG_H

#include <stddef.h>

int errmsg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
