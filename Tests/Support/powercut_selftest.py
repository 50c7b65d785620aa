#!/usr/bin/python3
"""Self-tests of powercut_fs.py: what survives a cut under each model. Exit 0 when all pass.

Prints `skip: …` and exits 77 when FUSE cannot be mounted here.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FS = os.path.join(HERE, 'powercut_fs.py')


class Mount:
    """powercut_fs.py on a fresh backing folder; `cut()` or `stop()` ends it."""

    def __init__(self, root, *args, backing=None):
        self.backing = backing or os.path.join(root, 'backing')
        self.mount = os.path.join(root, 'mount')
        self.status_path = os.path.join(root, 'status.json')
        os.makedirs(self.backing, exist_ok=True)
        os.makedirs(self.mount, exist_ok=True)
        if os.path.exists(self.status_path):
            os.unlink(self.status_path)
        self.process = subprocess.Popen(['/usr/bin/python3', FS, self.backing, self.mount, '--status', self.status_path,
                                         *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 120  # a loaded machine starts Python slowly
        while not self.status().get('mounted'):
            if self.process.poll() is not None or time.time() > deadline:
                self.process.kill()
                _, err = self.process.communicate()
                subprocess.run(['fusermount3', '-u', '-q', self.mount], stderr=subprocess.DEVNULL)
                raise RuntimeError('mount failed: ' + err.decode(errors='replace')[-2000:])
            time.sleep(0.02)

    def status(self):
        try:
            with open(self.status_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _end(self, signum):
        self.process.send_signal(signum)
        try:
            _, err = self.process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            self.process.kill()
            subprocess.run(['fusermount3', '-u', '-q', self.mount], stderr=subprocess.DEVNULL)
            raise
        if self.process.returncode != 0:
            raise RuntimeError('powercut_fs failed: ' + err.decode(errors='replace')[-2000:])
        return self.status()

    def cut(self):
        return self._end(signal.SIGUSR1)

    def stop(self):
        return self._end(signal.SIGTERM)

    def path(self, rel):
        return os.path.join(self.mount, rel)

    def backing_path(self, rel):
        return os.path.join(self.backing, rel)


def write(path, data, sync=False):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    if sync:
        os.fsync(fd)
    os.close(fd)


def sync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def case_fsynced_data_survives(root):
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    write(m.path('a'), b'durable', sync=True)
    sync_dir(m.mount)
    m.cut()
    assert read(m.backing_path('a')) == b'durable'


def case_unsynced_data_gone_in_harsh(root):
    backing = os.path.join(root, 'backing')
    os.makedirs(backing)
    write(os.path.join(backing, 'old'), b'before')
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    write(m.path('old'), b'after, never fsynced')
    assert read(m.path('old')) == b'after, never fsynced'
    m.cut()
    assert read(m.backing_path('old')) == b'before'


def case_create_without_dir_fsync_vanishes(root):
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    os.mkdir(m.path('d'))
    sync_dir(m.mount)
    write(m.path('d/f'), b'data', sync=True)  # the file is synced, its folder is not
    m.cut()
    assert os.path.isdir(m.backing_path('d'))
    assert not os.path.exists(m.backing_path('d/f'))


def case_rename_durable_only_after_dir_fsync(root):
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    write(m.path('tmp'), b'new', sync=True)
    sync_dir(m.mount)
    os.rename(m.path('tmp'), m.path('final'))
    m.cut()
    assert os.path.exists(m.backing_path('tmp')) and not os.path.exists(m.backing_path('final'))

    shutil.rmtree(root)
    os.makedirs(root)
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    write(m.path('tmp'), b'new', sync=True)
    sync_dir(m.mount)
    os.rename(m.path('tmp'), m.path('final'))
    sync_dir(m.mount)
    m.cut()
    assert read(m.backing_path('final')) == b'new' and not os.path.exists(m.backing_path('tmp'))


def case_rename_over_keeps_old_or_new(root):
    backing = os.path.join(root, 'backing')
    os.makedirs(backing)
    write(os.path.join(backing, 'state'), b'old')
    outcomes = set()
    for seed in range(12):
        m = Mount(root, '--model', 'harsh', '--seed', seed)
        write(m.path('state.tmp'), b'new', sync=True)
        os.rename(m.path('state.tmp'), m.path('state'))
        m.cut()
        outcomes.add(read(m.backing_path('state')))
        for name in os.listdir(backing):
            os.unlink(os.path.join(backing, name))
        write(os.path.join(backing, 'state'), b'old')
    assert outcomes == {b'old', b'new'}, outcomes


def case_ordered_prefix(root):
    """ordered: a later operation never survives without the earlier ones (no fsync in between)."""
    for seed in range(10):
        shutil.rmtree(root)
        os.makedirs(root)
        m = Mount(root, '--model', 'ordered', '--seed', seed)
        for i in range(5):
            os.mkdir(m.path('d%d' % i))
        m.cut()
        present = [os.path.isdir(m.backing_path('d%d' % i)) for i in range(5)]
        assert present == sorted(present, reverse=True), present


def case_ordered_fsync_commits_earlier_metadata(root):
    m = Mount(root, '--model', 'ordered', '--seed', 3)
    os.mkdir(m.path('d'))
    write(m.path('d/f'), b'x', sync=True)  # the journal commit makes d and d/f durable
    m.cut()
    assert read(m.backing_path('d/f')) == b'x'


def case_cut_after_sync_freezes(root):
    m = Mount(root, '--model', 'harsh', '--keep', '1', '--cut-after-sync', 2)
    write(m.path('one'), b'1', sync=True)
    sync_dir(m.mount)
    try:
        write(m.path('two'), b'2')
        raise AssertionError('a write after the freeze was accepted')
    except OSError:
        pass
    assert m.status()['frozen'] and m.status()['syncs'] == 2
    m.cut()
    assert read(m.backing_path('one')) == b'1' and not os.path.exists(m.backing_path('two'))


def case_deterministic(root):
    results = []
    for _ in range(2):
        shutil.rmtree(root)
        os.makedirs(root)
        m = Mount(root, '--model', 'harsh', '--seed', 42)
        for i in range(20):
            write(m.path('f%d' % i), b'%d' % i, sync=i % 2 == 0)
        m.cut()
        results.append(sorted(os.listdir(m.backing)))
    assert results[0] == results[1]


def case_clean_stop_keeps_everything(root):
    m = Mount(root, '--model', 'harsh', '--keep', '0')
    write(m.path('a'), b'not synced')
    m.stop()
    assert read(m.backing_path('a')) == b'not synced'


CASES = [case_fsynced_data_survives, case_unsynced_data_gone_in_harsh, case_create_without_dir_fsync_vanishes,
         case_rename_durable_only_after_dir_fsync, case_rename_over_keeps_old_or_new, case_ordered_prefix,
         case_ordered_fsync_commits_earlier_metadata, case_cut_after_sync_freezes, case_deterministic,
         case_clean_stop_keeps_everything]


def fuse_available():
    return os.path.exists('/dev/fuse') and shutil.which('fusermount3') is not None


def main():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    if not fuse_available():
        print('skip: FUSE cannot be mounted here (/dev/fuse or fusermount3 missing)')
        return 77
    failures = 0
    for case in CASES:
        root = tempfile.mkdtemp(prefix='powercut-selftest-')
        try:
            case(root)
            print('ok   ' + case.__name__)
        except Exception as error:  # report every case, then fail
            failures += 1
            print('FAIL %s: %r' % (case.__name__, error))
        finally:
            subprocess.run(['fusermount3', '-u', '-q', os.path.join(root, 'mount')], stderr=subprocess.DEVNULL)
            shutil.rmtree(root, ignore_errors=True)
    print('%d cases, %d failures' % (len(CASES), failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
