// glibc allocator tuning (mallopt); part of libc, nothing to link.
#include <malloc.h>
