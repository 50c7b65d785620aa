#include <zck.h>
