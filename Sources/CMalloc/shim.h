// glibc allocator tuning (mallopt); part of libc, nothing to link.
// glibc only: elsewhere (and with -DMAPPACK_PORTABLE) the module is empty and Allocator's calls
// do nothing.
#include <stdlib.h>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__) && !defined(MAPPACK_PORTABLE)
#include <malloc.h>
#endif
