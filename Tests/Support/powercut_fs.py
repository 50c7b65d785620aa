#!/usr/bin/python3
"""powercut_fs: a FUSE filesystem that can "cut power".

Run under Debian's /usr/bin/python3 (python3-pyfuse3, fuse3):

    powercut_fs.py BACKING MOUNT [--model ordered|harsh] [--seed N] [--keep P]
                   [--cut-after-sync N] [--cut-after-op N] [--status FILE]

Every operation passes through to the folder BACKING, so while mounted the files behave like
any other. Beside that the filesystem records what a real disk would still hold after a power
cut. On SIGUSR1 ("cut power now") it stops taking changes, unmounts, and rewrites BACKING to
such a state; on SIGTERM or SIGINT it unmounts and leaves BACKING as it is (a clean shutdown).
It writes a JSON status file (--status) when it is mounted (`"mounted": true`), when it
freezes and when it exits: durability events counted (`syncs`), mutating operations counted
(`ops`), `frozen`, and after a cut what was kept and dropped.

The durability model (deliberately simple; everything below is per this process's mount):

* Everything in BACKING at mount time is durable.
* File data: a file's durable content is its content as of its last fsync/fdatasync (a new file
  starts durable-empty). Writes, truncates and O_TRUNC opens after that are not durable.
* Metadata operations (create, mkdir, symlink, link, unlink, rmdir, rename) are kept in a log.
  An operation is durable once the folder it changes has been fsynced after it; a rename, once the
  folder that gets the new name has (journaling filesystems commit a rename as one transaction,
  old name and new together). Folder fsyncs made before an operation do not cover it.
* `ordered` (default; like ext4 data=ordered): a durability event (any fsync) commits the
  journal, so every metadata operation logged before it is durable too. At the cut a seed picks a
  point in time: non-durable metadata operations logged before it survive (a prefix, in order),
  later ones are lost; a file's non-durable data survives only when its last change came before
  that point, else the file holds its durable content.
  With --keep 0 that point is the start: only what is durable survives.
* `harsh`: only the explicit rules above make anything durable. Each non-durable metadata
  operation is kept or dropped independently (kept with probability --keep, default 0.5), and so
  is each file's non-durable data (kept whole, or back to its durable content).
* An operation whose object no longer exists in the surviving tree (a rename of a file whose
  create was dropped) is skipped. Files and folders that no surviving name reaches are gone.
  Modes are kept; owners and times are not modelled.
* A durability event is an fsync or fdatasync of a file or a folder (counted when it returns).
  --cut-after-sync N freezes the filesystem right after the Nth one, --cut-after-op N right after
  the Nth mutating operation: every later change is refused with EIO (reads go on) until the cut.
  The same seed, model and operations give the same surviving state.
"""

import argparse
import errno
import json
import os
import random
import shutil
import signal
import stat
import sys

import pyfuse3
import trio

ROOT = pyfuse3.ROOT_INODE
ORIGINAL = object()  # durable content: what the file held at mount time


class Node:
    """One file, folder or symlink, for as long as it exists (ids are never reused)."""

    def __init__(self, node_id, kind, mode):
        self.id = node_id
        self.kind = kind          # 'file', 'dir' or 'symlink'
        self.mode = mode
        self.paths = set()        # current backing paths (relative to BACKING, '' for the root)
        self.durable = ORIGINAL if kind == 'file' else None  # bytes, or ORIGINAL
        self.dirty_seq = 0        # sequence number of the last non-durable data change (0: clean)
        self.final = None         # content kept when the last name went away while still dirty
        self.target = None        # symlink target
        self.fds = set()


class Op:
    def __init__(self, seq, kind, args, dirs):
        self.seq = seq
        self.kind = kind
        self.args = args
        self.need = set(dirs)     # folders still to fsync before this op is durable

    @property
    def durable(self):
        return not self.need


class PowerCutFS(pyfuse3.Operations):
    def __init__(self, backing, options):
        super().__init__()
        self.backing = os.path.realpath(backing)
        self.options = options
        self.next_id = ROOT + 1
        self.nodes = {}
        self.by_backing_ino = {}
        self.fh_node = {}
        self.dir_handles = {}
        self.log = []
        self.pending_by_dir = {}
        self.seq = 0
        self.committed = 0
        self.syncs = 0
        self.ops = 0
        self.frozen = False
        self.initial = {}  # dir node -> {name: node id}
        self._scan()

    # ---- bookkeeping ----

    def _abs(self, rel):
        return self.backing + ('/' + rel if rel else '')

    def _new_node(self, kind, mode, backing_ino, node_id=None):
        if node_id is None:
            node_id = self.next_id
            self.next_id += 1
        node = Node(node_id, kind, mode)
        self.nodes[node_id] = node
        self.by_backing_ino[backing_ino] = node_id
        return node

    @staticmethod
    def _kind(mode):
        if stat.S_ISDIR(mode):
            return 'dir'
        if stat.S_ISLNK(mode):
            return 'symlink'
        return 'file'

    def _scan(self):
        st = os.lstat(self.backing)
        root = self._new_node('dir', stat.S_IMODE(st.st_mode), st.st_ino, node_id=ROOT)
        root.paths.add('')
        stack = ['']
        while stack:
            rel = stack.pop()
            parent = self.by_backing_ino[os.lstat(self._abs(rel)).st_ino]
            table = self.initial.setdefault(parent, {})
            for name in sorted(os.listdir(self._abs(rel))):
                child_rel = (rel + '/' if rel else '') + name
                st = os.lstat(self._abs(child_rel))
                if st.st_ino in self.by_backing_ino:
                    node = self.nodes[self.by_backing_ino[st.st_ino]]
                else:
                    node = self._new_node(self._kind(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino)
                    if node.kind == 'symlink':
                        node.target = os.readlink(self._abs(child_rel))
                node.paths.add(child_rel)
                table[name.encode()] = node.id
                if node.kind == 'dir':
                    stack.append(child_rel)

    def _path(self, node_id):
        node = self.nodes.get(node_id)
        if node is None or not node.paths:
            raise pyfuse3.FUSEError(errno.ENOENT)
        return min(node.paths)

    def _child(self, parent_id, name):
        parent = self._path(parent_id)
        return (parent + '/' if parent else '') + os.fsdecode(name)

    def _attr(self, node_id, st):
        entry = pyfuse3.EntryAttributes()
        for field in ('st_mode', 'st_nlink', 'st_uid', 'st_gid', 'st_rdev', 'st_size', 'st_blksize', 'st_blocks',
                      'st_atime_ns', 'st_mtime_ns', 'st_ctime_ns'):
            setattr(entry, field, getattr(st, field))
        entry.st_ino = node_id
        entry.generation = 0
        entry.entry_timeout = 60  # every change goes through this process, so the kernel may cache
        entry.attr_timeout = 60
        return entry

    def _node_for(self, rel, st):
        node_id = self.by_backing_ino.get(st.st_ino)
        if node_id is None or not self.nodes[node_id].paths and not self.nodes[node_id].fds:
            node = self._new_node(self._kind(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino)
        else:
            node = self.nodes[node_id]
        node.paths.add(rel)
        return node

    def _mutating(self):
        if self.frozen:
            raise pyfuse3.FUSEError(errno.EIO)
        self.ops += 1

    def _after_op(self):
        if self.options.cut_after_op is not None and self.ops >= self.options.cut_after_op:
            self._freeze()

    def _after_sync(self):
        self.syncs += 1
        if self.options.cut_after_sync is not None and self.syncs >= self.options.cut_after_sync:
            self._freeze()

    def _freeze(self):
        if not self.frozen:
            self.frozen = True
            self.write_status()

    def _log(self, kind, args, dirs):
        self.seq += 1
        op = Op(self.seq, kind, args, dirs)
        self.log.append(op)
        for folder in op.need:
            self.pending_by_dir.setdefault(folder, []).append(op)

    def _touch_data(self, node):
        """A data change is about to happen: keep the durable content if it is still the original."""
        if node.durable is ORIGINAL:
            with open(self._abs(self._path(node.id)), 'rb') as f:
                node.durable = f.read()
        self.seq += 1
        node.dirty_seq = self.seq

    def _current_content(self, node):
        if node.paths:
            with open(self._abs(min(node.paths)), 'rb') as f:
                return f.read()
        if node.fds:
            fd = next(iter(node.fds))
            return os.pread(fd, os.fstat(fd).st_size, 0)
        return node.final if node.final is not None else b''

    def write_status(self, extra=None):
        if not self.options.status:
            return
        status = {'syncs': self.syncs, 'ops': self.ops, 'frozen': self.frozen, 'model': self.options.model,
                  'seed': self.options.seed}
        status.update(extra or {})
        tmp = self.options.status + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(status, f)
        os.replace(tmp, self.options.status)

    # ---- lookups and attributes ----

    async def lookup(self, parent_inode, name, ctx=None):
        rel = self._child(parent_inode, name)
        try:
            st = os.lstat(self._abs(rel))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node = self._node_for(rel, st)
        return self._attr(node.id, st)

    async def getattr(self, inode, ctx=None):
        node = self.nodes.get(inode)
        if node is None:
            raise pyfuse3.FUSEError(errno.ENOENT)
        try:
            if node.paths:
                st = os.lstat(self._abs(self._path(inode)))
            elif node.fds:
                st = os.fstat(next(iter(node.fds)))
            else:
                raise pyfuse3.FUSEError(errno.ENOENT)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return self._attr(inode, st)

    async def setattr(self, inode, attr, fields, fh, ctx):
        node = self.nodes[inode]
        path = self._abs(self._path(inode)) if node.paths else None
        try:
            if fields.update_size:
                self._mutating()
                self._touch_data(node)
                if fh is not None:
                    os.ftruncate(fh, attr.st_size)
                else:
                    os.truncate(path, attr.st_size)
                self._after_op()
            if fields.update_mode:
                self._mutating()
                node.mode = stat.S_IMODE(attr.st_mode)
                if fh is not None:
                    os.fchmod(fh, node.mode)
                else:
                    os.chmod(path, node.mode)
                self._after_op()
            if fields.update_uid or fields.update_gid:
                uid = attr.st_uid if fields.update_uid else -1
                gid = attr.st_gid if fields.update_gid else -1
                os.chown(path, uid, gid, follow_symlinks=False)
            if fields.update_atime or fields.update_mtime:
                st = os.lstat(path) if path else os.fstat(fh)
                atime = attr.st_atime_ns if fields.update_atime else st.st_atime_ns
                mtime = attr.st_mtime_ns if fields.update_mtime else st.st_mtime_ns
                if path and node.kind != 'symlink':
                    os.utime(path, ns=(atime, mtime))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        return await self.getattr(inode)

    async def readlink(self, inode, ctx):
        return os.fsencode(os.readlink(self._abs(self._path(inode))))

    async def statfs(self, ctx):
        st = os.statvfs(self.backing)
        out = pyfuse3.StatvfsData()
        for field in ('f_bsize', 'f_frsize', 'f_blocks', 'f_bfree', 'f_bavail', 'f_files', 'f_ffree', 'f_favail'):
            setattr(out, field, getattr(st, field))
        out.f_namemax = st.f_namemax
        return out

    async def getxattr(self, inode, name, ctx):
        raise pyfuse3.FUSEError(pyfuse3.ENOATTR)

    async def listxattr(self, inode, ctx):
        return []

    async def forget(self, inode_list):
        pass  # nodes are kept for the whole mount: the crash model needs them

    # ---- namespace changes ----

    def _created(self, parent_inode, name, rel, kind):
        st = os.lstat(self._abs(rel))
        node = self._new_node(kind, stat.S_IMODE(st.st_mode), st.st_ino)
        node.paths.add(rel)
        if kind == 'file':
            node.durable = b''
        self._log('create', (parent_inode, name, node.id), [parent_inode])
        return node, st

    async def mkdir(self, parent_inode, name, mode, ctx):
        self._mutating()
        rel = self._child(parent_inode, name)
        try:
            os.mkdir(self._abs(rel), mode)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node, st = self._created(parent_inode, name, rel, 'dir')
        self._after_op()
        return self._attr(node.id, st)

    async def symlink(self, parent_inode, name, target, ctx):
        self._mutating()
        rel = self._child(parent_inode, name)
        try:
            os.symlink(target, self._abs(rel))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node, st = self._created(parent_inode, name, rel, 'symlink')
        node.target = os.fsdecode(target)
        self._after_op()
        return self._attr(node.id, st)

    async def mknod(self, parent_inode, name, mode, rdev, ctx):
        raise pyfuse3.FUSEError(errno.EPERM)

    async def create(self, parent_inode, name, mode, flags, ctx):
        self._mutating()
        rel = self._child(parent_inode, name)
        try:
            fd = os.open(self._abs(rel), self._readable(flags) | os.O_CREAT | os.O_EXCL, mode)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node, st = self._created(parent_inode, name, rel, 'file')
        node.fds.add(fd)
        self.fh_node[fd] = node.id
        self._after_op()
        return pyfuse3.FileInfo(fh=fd), self._attr(node.id, st)

    def _capture_if_last(self, node, rel):
        """`rel` is about to lose its file: keep the content a crash could bring back."""
        if node.kind == 'file' and node.paths == {rel}:
            if node.durable is ORIGINAL:
                node.durable = self._current_content(node)
            node.final = self._current_content(node)

    async def unlink(self, parent_inode, name, ctx):
        self._mutating()
        rel = self._child(parent_inode, name)
        try:
            st = os.lstat(self._abs(rel))
            node = self._node_for(rel, st)
            self._capture_if_last(node, rel)
            os.unlink(self._abs(rel))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node.paths.discard(rel)
        self._log('unlink', (parent_inode, name, node.id), [parent_inode])
        self._after_op()

    async def rmdir(self, parent_inode, name, ctx):
        self._mutating()
        rel = self._child(parent_inode, name)
        try:
            st = os.lstat(self._abs(rel))
            node = self._node_for(rel, st)
            os.rmdir(self._abs(rel))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node.paths.discard(rel)
        self._log('unlink', (parent_inode, name, node.id), [parent_inode])
        self._after_op()

    async def rename(self, parent_inode_old, name_old, parent_inode_new, name_new, flags, ctx):
        if flags:
            raise pyfuse3.FUSEError(errno.EINVAL)
        self._mutating()
        old = self._child(parent_inode_old, name_old)
        new = self._child(parent_inode_new, name_new)
        try:
            node = self._node_for(old, os.lstat(self._abs(old)))
            replaced = None
            try:
                target_st = os.lstat(self._abs(new))
                replaced = self._node_for(new, target_st)
                if replaced.id == node.id:
                    replaced = None
                else:
                    self._capture_if_last(replaced, new)
            except FileNotFoundError:
                pass
            os.rename(self._abs(old), self._abs(new))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        if replaced is not None:
            replaced.paths.discard(new)
        self._move_paths(node, old, new)
        self._log('rename', (parent_inode_old, name_old, parent_inode_new, name_new, node.id), [parent_inode_new])
        self._after_op()

    def _move_paths(self, node, old, new):
        node.paths.discard(old)
        node.paths.add(new)
        if node.kind == 'dir':
            prefix = old + '/'
            for other in self.nodes.values():
                moved = {new + '/' + p[len(prefix):] for p in other.paths if p.startswith(prefix)}
                if moved:
                    other.paths = {p for p in other.paths if not p.startswith(prefix)} | moved

    async def link(self, inode, new_parent_inode, new_name, ctx):
        self._mutating()
        rel = self._child(new_parent_inode, new_name)
        try:
            os.link(self._abs(self._path(inode)), self._abs(rel))
            st = os.lstat(self._abs(rel))
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        self.nodes[inode].paths.add(rel)
        self._log('link', (new_parent_inode, new_name, inode), [new_parent_inode])
        self._after_op()
        return self._attr(inode, st)

    # ---- files ----

    @staticmethod
    def _readable(flags):
        """The backing descriptor must be readable too: fsync reads the durable content through it."""
        if flags & os.O_ACCMODE == os.O_WRONLY:
            flags = (flags & ~os.O_ACCMODE) | os.O_RDWR
        return flags

    async def open(self, inode, flags, ctx):
        node = self.nodes[inode]
        writing = flags & (os.O_WRONLY | os.O_RDWR) or flags & os.O_TRUNC
        if writing:
            self._mutating()
        if flags & os.O_TRUNC:
            self._touch_data(node)
        try:
            fd = os.open(self._abs(self._path(inode)), self._readable(flags) & ~os.O_CREAT)
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno)
        node.fds.add(fd)
        self.fh_node[fd] = inode
        if writing:
            self._after_op()
        return pyfuse3.FileInfo(fh=fd)

    async def read(self, fh, off, size):
        return os.pread(fh, size, off)

    async def write(self, fh, off, buf):
        self._mutating()
        self._touch_data(self.nodes[self.fh_node[fh]])
        written = os.pwrite(fh, buf, off)
        self._after_op()
        return written

    async def flush(self, fh):
        pass

    async def release(self, fh):
        node = self.nodes.get(self.fh_node.pop(fh, None))
        if node is not None:
            node.fds.discard(fh)
        os.close(fh)

    async def fsync(self, fh, datasync):
        if self.frozen:
            raise pyfuse3.FUSEError(errno.EIO)
        node = self.nodes[self.fh_node[fh]]
        size = os.fstat(fh).st_size
        node.durable = os.pread(fh, size, 0)
        node.dirty_seq = 0
        self._journal_commit()
        self._after_sync()

    # ---- folders ----

    async def opendir(self, inode, ctx):
        self._path(inode)
        fh = len(self.dir_handles) + 1
        while fh in self.dir_handles:
            fh += 1
        self.dir_handles[fh] = inode
        return fh

    async def readdir(self, fh, start_id, token):
        inode = self.dir_handles[fh]
        rel = self._path(inode)
        names = sorted(os.listdir(self._abs(rel)))
        for index in range(start_id, len(names)):
            child = (rel + '/' if rel else '') + names[index]
            try:
                st = os.lstat(self._abs(child))
            except FileNotFoundError:
                continue
            node = self._node_for(child, st)
            if not pyfuse3.readdir_reply(token, os.fsencode(names[index]), self._attr(node.id, st), index + 1):
                break

    async def releasedir(self, fh):
        self.dir_handles.pop(fh, None)

    async def fsyncdir(self, fh, datasync):
        if self.frozen:
            raise pyfuse3.FUSEError(errno.EIO)
        inode = self.dir_handles[fh]
        for op in self.pending_by_dir.pop(inode, []):
            op.need.discard(inode)
        self._journal_commit()
        self._after_sync()

    def _journal_commit(self):
        """ordered: a durability event commits every metadata operation logged so far."""
        if self.options.model != 'ordered':
            return
        for op in self.log[self.committed:]:
            op.need.clear()
        self.committed = len(self.log)
        self.pending_by_dir.clear()

    # ---- the cut ----

    def surviving_state(self):
        """The folder tree a disk could show after a power cut now: {node id: {name: node id}} and contents."""
        rng = random.Random(self.options.seed)
        cutoff = None
        if self.options.model == 'ordered':
            cutoff = 0 if self.options.keep == 0 else rng.randint(0, self.seq)
        tables = {folder: dict(entries) for folder, entries in self.initial.items()}
        kept_ops = dropped_ops = 0
        for op in self.log:
            if not op.durable:
                keep = op.seq < cutoff if cutoff is not None else rng.random() < self.options.keep
                if not keep:
                    dropped_ops += 1
                    continue
                kept_ops += 1
            self._apply(tables, op)
        contents = {}
        kept_data = dropped_data = 0
        reachable = self._reachable(tables)
        for node_id in sorted(reachable):
            node = self.nodes[node_id]
            if node.kind != 'file':
                continue
            if not node.dirty_seq:
                contents[node_id] = node.durable
                continue
            keep = node.dirty_seq < cutoff if cutoff is not None else rng.random() < self.options.keep
            if keep:
                kept_data += 1
                contents[node_id] = self._current_content(node)
            else:
                dropped_data += 1
                contents[node_id] = node.durable
        for node_id, content in list(contents.items()):
            if content is ORIGINAL:  # never changed while mounted
                contents[node_id] = self._current_content(self.nodes[node_id])
        summary = {'keptOps': kept_ops, 'droppedOps': dropped_ops, 'keptData': kept_data, 'droppedData': dropped_data,
                   'cutoff': cutoff, 'lastSeq': self.seq}
        return tables, contents, summary

    @staticmethod
    def _apply(tables, op):
        if op.kind == 'create':
            folder, name, node_id = op.args
            tables.setdefault(folder, {})[name] = node_id
            tables.setdefault(node_id, {})
        elif op.kind == 'link':
            folder, name, node_id = op.args
            tables.setdefault(folder, {})[name] = node_id
        elif op.kind == 'unlink':
            folder, name, node_id = op.args
            if tables.get(folder, {}).get(name) == node_id:
                del tables[folder][name]
        elif op.kind == 'rename':
            old_folder, old_name, new_folder, new_name, node_id = op.args
            if tables.get(old_folder, {}).get(old_name) == node_id:
                del tables[old_folder][old_name]
                tables.setdefault(new_folder, {})[new_name] = node_id

    def _reachable(self, tables):
        seen = {ROOT}
        stack = [ROOT]
        while stack:
            folder = stack.pop()
            for child in tables.get(folder, {}).values():
                if child not in seen and child in self.nodes:
                    seen.add(child)
                    if self.nodes[child].kind == 'dir':
                        stack.append(child)
        return seen

    def rewrite_backing(self):
        tables, contents, summary = self.surviving_state()
        for name in os.listdir(self.backing):
            path = os.path.join(self.backing, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        made = {}

        def materialize(folder_id, rel, trail):
            for name, child_id in sorted(tables.get(folder_id, {}).items()):
                node = self.nodes.get(child_id)
                if node is None or child_id in trail:
                    continue
                child_rel = rel + '/' + os.fsdecode(name)
                path = self.backing + child_rel
                if node.kind == 'dir':
                    if child_id in made:
                        continue  # a folder has one name; a second one (impossible on a real disk) is dropped
                    os.mkdir(path)
                    made[child_id] = path
                    materialize(child_id, child_rel, trail | {child_id})
                    os.chmod(path, node.mode)
                elif node.kind == 'symlink':
                    os.symlink(node.target or '', path)
                elif child_id in made:
                    os.link(made[child_id], path)
                else:
                    with open(path, 'wb') as f:
                        f.write(contents.get(child_id) or b'')
                    os.chmod(path, node.mode)
                    made[child_id] = path

        materialize(ROOT, '', {ROOT})
        return summary


def _errors_as_errno(method):
    """An OSError from the backing folder becomes the same errno for the caller, never a crash of the filesystem."""
    async def wrapper(*args, **kwargs):
        try:
            return await method(*args, **kwargs)
        except pyfuse3.FUSEError:
            raise
        except OSError as error:
            raise pyfuse3.FUSEError(error.errno or errno.EIO)
        except (KeyError, ValueError):
            raise pyfuse3.FUSEError(errno.EIO)
    wrapper.__name__ = method.__name__
    return wrapper


for _name in ('lookup', 'getattr', 'setattr', 'readlink', 'statfs', 'mkdir', 'symlink', 'create', 'unlink', 'rmdir',
              'rename', 'link', 'open', 'read', 'write', 'release', 'fsync', 'opendir', 'readdir', 'releasedir',
              'fsyncdir'):
    setattr(PowerCutFS, _name, _errors_as_errno(getattr(PowerCutFS, _name)))


async def serve(fs, mountpoint):
    async with trio.open_nursery() as nursery:
        async def signals():
            with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGTERM, signal.SIGINT) as receiver:
                async for signum in receiver:
                    fs.cut = signum == signal.SIGUSR1
                    fs.frozen = True
                    nursery.cancel_scope.cancel()
                    return
        nursery.start_soon(signals)
        nursery.start_soon(pyfuse3.main)


def main():
    parser = argparse.ArgumentParser(description='FUSE filesystem that can cut power (see the module text).')
    parser.add_argument('backing')
    parser.add_argument('mountpoint')
    parser.add_argument('--model', choices=['ordered', 'harsh'], default='ordered')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--keep', type=float, default=0.5, help='harsh: chance a non-durable change survives')
    parser.add_argument('--cut-after-sync', type=int, default=None)
    parser.add_argument('--cut-after-op', type=int, default=None)
    parser.add_argument('--status', default=None)
    options = parser.parse_args()
    # A parent may have blocked signals (a test runner's threads do); the control channel needs them.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    fs = PowerCutFS(options.backing, options)
    fs.cut = False
    fuse_options = set(pyfuse3.default_options)
    fuse_options.add('fsname=powercut')
    fuse_options.add('default_permissions')
    pyfuse3.init(fs, options.mountpoint, fuse_options)
    fs.write_status({'mounted': True})
    try:
        trio.run(serve, fs, options.mountpoint)
    finally:
        pyfuse3.close(unmount=True)
    summary = fs.rewrite_backing() if fs.cut else {}
    fs.write_status({'mounted': False, 'cut': fs.cut, **summary})


if __name__ == '__main__':
    sys.exit(main())
