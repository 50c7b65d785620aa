// Linux calls that glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not
// set; typed wrappers over syscall(2), whose variadic signature Swift cannot call.
// Linux only: other systems (and builds with -DMAPPACK_PORTABLE) see an empty module and the
// Swift side uses its POSIX fallback (see MapIO/Files/DirectoryEntryReader.swift).
#if defined(__linux__) && !defined(MAPPACK_PORTABLE)
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/types.h>
#include <unistd.h>

// The filesystem type of fd (statfs's f_type: EXT4_SUPER_MAGIC and the like).
static inline long mp_filesystem_type(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (long)info.f_type : -1;
}

// getdents64(2): a directory's entries (struct linux_dirent64) read into the caller's buffer,
// without a DIR stream (whose fdopendir costs an fstat and two fcntl per directory).
static inline ssize_t mp_getdents64(int fd, void *buffer, size_t count) {
    return (ssize_t)syscall(SYS_getdents64, fd, buffer, count);
}

// syncfs(2): writes back everything of the filesystem holding fd, in one call.
static inline int mp_syncfs(int fd) {
    return (int)syscall(SYS_syncfs, fd);
}

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>

// Declared by glibc (2.34 and later) only under _GNU_SOURCE.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
#define MP_POSIX_SPAWN_SETSID 0x80

// posix_spawn(3) of a child that outlives this process undisturbed: a session of its own (a
// terminal's Ctrl-C to this process group does not reach it), standard input and output on
// /dev/null, and no other descriptor of ours (no lock or pipe stays held by it). Returns the
// child's pid, or -1 with errno.
static inline pid_t mp_spawn_detached(const char *path, char *const argv[], char *const envp[]) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    if (posix_spawnattr_init(&attributes) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    int failed = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        || posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        || posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        || posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        || posix_spawnattr_setflags(&attributes, MP_POSIX_SPAWN_SETSID);
    pid_t child = -1;
    int code = failed ? EINVAL : posix_spawn(&child, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (code != 0) {
        errno = code;
        return -1;
    }
    return child;
}

// sync_file_range(2), glibc's wrapper (it picks sync_file_range2 where the architecture needs it),
// declared here as <fcntl.h> declares it under _GNU_SOURCE.
extern int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);

// Starts writeback of all of fd's dirty pages and returns without waiting for it
// (SYNC_FILE_RANGE_WRITE, 2 in <linux/fs.h>). Not durable on its own: no metadata, no cache flush.
static inline int mp_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, 2);
}

#include <sys/ioctl.h>

// FICLONE as <linux/fs.h> defines it; that header is not included, since its mount flags clash
// with glibc's <sys/mount.h> in one module.
#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif

// ioctl(2) FICLONE: makes dest share all of src's extents (a reflink, copy on write) on filesystems
// that offer it (XFS with reflink=1, btrfs); 0 on success, -1 with errno (EOPNOTSUPP, EXDEV,
// EINVAL, ENOTTY where the filesystem or the pair cannot). ioctl is variadic, so Swift calls this.
static inline int mp_clone_file(int dest, int src) {
    return ioctl(dest, FICLONE, src);
}

// The inode flags ioctls and the "top of a directory hierarchy" flag as <linux/fs.h> defines them.
#ifndef FS_IOC_GETFLAGS
#define FS_IOC_GETFLAGS _IOR('f', 1, long)
#define FS_IOC_SETFLAGS _IOW('f', 2, long)
#endif
#define MP_FS_TOPDIR_FL 0x00020000

// Sets FS_TOPDIR_FL on the folder open at fd (the kernel reads and writes the flags as an int):
// ext4 then places each new subfolder the way it places top-level folders (Orlov: a group of its
// own choosing), not near the folder. 0 on success, -1 with errno (ENOTTY, EOPNOTSUPP where the
// filesystem has no such flag).
static inline int mp_mark_top_folder(int fd) {
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return -1;
    if (flags & MP_FS_TOPDIR_FL) return 0;
    flags |= MP_FS_TOPDIR_FL;
    return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}
#endif
