#include <archive.h>
#include <archive_entry.h>

// libarchive's AE_IF* file types are cast macros Swift cannot import; typed copies:
static const unsigned int MP_AE_IFREG = AE_IFREG;
static const unsigned int MP_AE_IFDIR = AE_IFDIR;
static const unsigned int MP_AE_IFLNK = AE_IFLNK;
static const unsigned int MP_AE_IFCHR = AE_IFCHR;
static const unsigned int MP_AE_IFBLK = AE_IFBLK;
static const unsigned int MP_AE_IFIFO = AE_IFIFO;
static const unsigned int MP_AE_IFSOCK = AE_IFSOCK;
