#!/usr/bin/python3
"""The crash matrix under power loss: `mappack store` operations on a powercut_fs mount, power cut
at every durability event (and points between), then the surviving state is remounted and checked.

    powercut_matrix.py [--bin .build/debug] [--sample] [--scenarios a,b] [--work DIR] [--keep-work]

For each scenario (first-start install from an image folder and from a .tar.zst, with its
cache-seed import; update to a newer catalog; run-time download; each of those two with its state
database rolled back afterwards, which must not open `ok`; delete; move; `mappack build`,
whose finished-looking outputs must verify or be absent; and for a store that uses its image in
place (`--in-place`, the image folder outside the cut filesystem): its first start, an update of
its base regions, a delete of a base region, and a new base image at the same place taken over at
open) a clean run on the
mount counts durability events (fsync/fdatasync of files and folders) and mutating operations.
Then for each cut point the operation runs again from the same starting state with the filesystem
frozen right after that event (later changes fail with EIO, as if the machine were off), power is
cut under the `ordered` or `harsh` model (alternating, the seed is the cut index), and the state
that survived is mounted again and checked:

* `state.sqlite` (with its journal, as SQLite would find them) passes `PRAGMA integrity_check`;
* `mappack store status` says `ok` only if `mappack store verify` (full) passes;
* `mappack store repair --image IMAGE` succeeds and leaves a store that verifies in full and opens
  `ok` with full validation (for a move: at exactly one of the two places);
* no file of the store that verified before the operation is lost or changed (except what the
  operation itself removes or replaces: a deleted region's files, an update's changed files);
* a cut after the operation returned success keeps everything it did (the operation's outcome is
  there before any repair).

Prints `cut points tried: N, states checked: M, failures: F` (states: distinct surviving trees) and
exits 1 on any failure, 77 (with `skip: …`) when FUSE cannot be mounted.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from powercut_selftest import Mount, fuse_available  # noqa: E402

OLD = '2026.11.0'
NEW = '2026.12.0'
# The `japan` catalog a store adds beside the image's (issue 42): its own regions, versions and files.
JAPAN_OLD = '2026.10.0'
JAPAN_NEW = '2026.11.5'
# Scenarios whose surviving `state.sqlite` is replaced by the one from before the operation (a restored
# backup, a disk that lied about a flush): open must not say `ok`, and repair must bring the store back.
ROLLED_BACK = {'download-rolled-back': 'download', 'update-rolled-back': 'update'}
# Scenarios of a store that uses its image in place (repaired with `--in-place`).
IN_PLACE = ('install-in-place', 'update-in-place', 'delete-in-place', 'new-base', 'new-base-catalogs')


class Failure(Exception):
    pass


class BindMount:
    """The surviving backing folder mounted again at the mount point (a bind mount as root, else
    powercut_fs without a cut): the store sees the paths it was given, and nothing more is recorded."""

    def __init__(self, root):
        self.mount = os.path.join(root, 'mount')
        self.fuse = None
        if os.getuid() != 0 or subprocess.run(['mount', '--bind', os.path.join(root, 'backing'), self.mount],
                                              stderr=subprocess.DEVNULL).returncode != 0:
            self.fuse = Mount(root)

    def stop(self):
        if self.fuse:
            self.fuse.stop()
        else:
            subprocess.run(['umount', self.mount], check=True)


class Matrix:
    def __init__(self, options):
        self.options = options
        self.bin = os.path.abspath(options.bin)
        self.work = options.work or tempfile.mkdtemp(prefix='powercut-matrix-')
        os.makedirs(self.work, exist_ok=True)
        self.cuts = 0
        self.states = {}
        self.failures = []

    # ---- tools ----

    def run(self, tool, args, timeout=120, check=True, env=None):
        result = subprocess.run([os.path.join(self.bin, tool), *args], capture_output=True, text=True, timeout=timeout,
                                env={**os.environ, 'SOURCE_DATE_EPOCH': '1790000000', **(env or {})})
        if check and result.returncode != 0:
            raise Failure('%s %s: exit %d\n%s%s' % (tool, ' '.join(args), result.returncode, result.stdout[-1500:],
                                                    result.stderr[-1500:]))
        return result

    def store(self, verb, storage, cache, *extra, check=True, timeout=120):
        return self.run('mappack', ['store', verb, *extra, '--storage', storage, '--cache', cache], check=check,
                        timeout=timeout)

    # ---- fixture ----

    def fixture(self):
        """Two published demo-world versions and a preinstall image (folder + .tar.zst) of the first."""
        root = self.options.fixture or os.path.join(self.work, 'fixture')
        self.image = os.path.join(root, 'out', 'pc-' + OLD)
        self.archive = self.image + '.tar.zst'
        self.recipe = os.path.join(root, 'pc.yaml')
        self.catalog = {v: 'file://' + os.path.join(root, 'served', 'cat-' + v, 'catalog.json') for v in (OLD, NEW)}
        self.japan = {v: 'file://' + os.path.join(root, 'served', 'japan-' + v, 'catalog.json') for v in (JAPAN_OLD, JAPAN_NEW)}
        # The new version's image: the next system image an in-place store's base is replaced by.
        self.new_image = os.path.join(root, 'out-new', 'pc-' + NEW)
        # Where in-place stores find their base (outside the cut filesystem, like a read-only partition).
        self.base_folder = os.path.join(self.work, 'base-image')
        if os.path.exists(os.path.join(root, 'ready')) and os.path.isdir(self.new_image):
            with open(os.path.join(root, 'ready')) as f:
                self.seed_entries = int(f.read())
            self.japan_fixture(root)
            self.kept_fixture(root)
            return
        shutil.rmtree(root, ignore_errors=True)
        self.japan_fixture(root)
        for version in (OLD, NEW):
            self.run('demo-world', ['--out', os.path.join(root, 'src-' + version), '--only', 'europe/ch,europe/li',
                                    '--scale', '0.02', '--map-version', version, '--base-version', OLD,
                                    '--change-fraction', '0.3'])
            self.run('mappack', ['publish', os.path.join(root, 'src-' + version), '--out',
                                 os.path.join(root, 'served', 'cat-' + version)])
        recipe = os.path.join(root, 'pc.yaml')
        with open(recipe, 'w') as f:
            f.write('name: pc\ncatalog: %s\nmapVersion: %s\nregions:\n  include: [europe/ch]\n'
                    'cacheSeed:\n  include: [world]\n  maxBytes: 64 MiB\noutput:\n  formats: [directory, tar.zst]\n'
                    % (self.catalog[OLD][len('file://'):], OLD))
        self.run('mappack', ['build', recipe, '--cache', os.path.join(root, 'cache'), '--out', os.path.join(root, 'out')])
        new_recipe = os.path.join(root, 'pc-new.yaml')
        with open(new_recipe, 'w') as f:
            f.write('name: pc\ncatalog: %s\nmapVersion: %s\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n'
                    % (self.catalog[NEW][len('file://'):], NEW))
        self.run('mappack', ['build', new_recipe, '--cache', os.path.join(root, 'cache'), '--out', os.path.join(root, 'out-new')])
        reference = os.path.join(root, 'reference')
        self.store('install', reference + '/storage', reference + '/cache', '--image', self.image)
        self.seed_entries = self.cache_entries(reference + '/storage', reference + '/cache')
        with open(os.path.join(root, 'ready'), 'w') as f:
            f.write(str(self.seed_entries))
        self.kept_fixture(root)

    def kept_fixture(self, root):
        """How many map-cache entries an update to NEW keeps: the seed's entries of bundles NEW did
        not change (an update that ends keeps exactly those, issue 42), counted on a reference store."""
        kept = os.path.join(root, 'kept')
        if not os.path.exists(kept):
            reference = os.path.join(root, 'reference-update')
            shutil.rmtree(reference, ignore_errors=True)
            self.store('install', reference + '/storage', reference + '/cache', '--image', self.image)
            self.store('update', reference + '/storage', reference + '/cache', '--catalog', self.catalog[NEW])
            with open(kept, 'w') as f:
                f.write(str(self.cache_entries(reference + '/storage', reference + '/cache')))
        with open(kept) as f:
            self.kept_entries = int(f.read())
        if not 0 < self.kept_entries <= self.seed_entries:
            raise Failure('the update fixture keeps %r of %r cache entries: the seed\'s world overview is unchanged'
                          % (self.kept_entries, self.seed_entries))

    def japan_fixture(self, root):
        """The `japan` catalog in two versions (the second changes Tokyo), published beside the world."""
        if all(os.path.exists(url[len('file://'):]) for url in self.japan.values()):
            return
        regions = [('japan', None, {'regions/japan/overview.db': 3000}),
                   ('japan/tokyo', 'japan', {'regions/japan/tokyo/tiles.db': 9000, 'regions/japan/tokyo/search.db': 700}),
                   ('japan/osaka', 'japan', {'regions/japan/osaka/tiles.db': 6000})]
        for version in (JAPAN_OLD, JAPAN_NEW):
            source = os.path.join(root, 'japan-src-' + version)
            shutil.rmtree(source, ignore_errors=True)
            rows, bundles = [], {}
            for region, parent, files in regions:
                bundle = region.replace('/', '.')
                for path, size in files.items():
                    full = os.path.join(source, 'bundles', bundle, path)
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    seed = (path + version) if (region == 'japan/tokyo' and version == JAPAN_NEW) else path
                    with open(full, 'wb') as f:
                        f.write(hashlib.sha256(seed.encode()).digest() * (size // 32 + 1))
                rows.append({'id': region, 'parent': parent, 'names': {'en': region}, 'bundles': [bundle]})
                bundles[bundle] = {'kind': 'tiles'}
            with open(os.path.join(source, 'source.json'), 'w') as f:
                json.dump({'format': 'mappack-source/1', 'catalog': 'japan', 'mapVersion': version,
                           'released': '2026-11-20T00:00:00Z', 'regions': rows, 'bundles': bundles}, f)
            self.run('mappack', ['publish', source, '--out', os.path.join(root, 'served', 'japan-' + version)])

    def japan_state(self, storage, cache):
        """The `japan` catalog's map version and installed region count (`store catalogs --json`), or None."""
        out = self.store('catalogs', storage, cache, '--json', check=False).stdout
        for line in out.splitlines():
            if line.startswith('{') and json.loads(line).get('id') == 'japan':
                record = json.loads(line)
                return record.get('mapVersion'), record.get('installedRegions')
        return None

    def cache_entries(self, storage, cache):
        """The map cache's entry count (`store cache size`: `N bytes (…), M entries`)."""
        out = self.store('cache', storage, cache, 'size', check=False).stdout.strip()
        return int(out.split(', ')[-1].split()[0]) if out.endswith('entries') else None

    # ---- scenarios ----
    # Each: (name, prepare(base) -> None on a plain folder, op args(mount) -> (verb, extra),
    #        done(check_root) -> None raising Failure when the finished operation's outcome is missing)

    def scenarios(self):
        image = self.image

        def installed(base):
            self.store('install', base + '/storage', base + '/cache', '--image', image)

        def with_japan(base):
            installed(base)
            self.store('catalogs', base + '/storage', base + '/cache', 'add', self.japan[JAPAN_OLD])

        def with_tokyo(base):
            with_japan(base)
            self.store('download', base + '/storage', base + '/cache', 'japan/tokyo', '--catalog', 'japan')

        def base_image(folder):  # the in-place base, at its one place
            shutil.rmtree(self.base_folder, ignore_errors=True)
            shutil.copytree(folder, self.base_folder, symlinks=True)

        def nothing_in_place(base):
            os.makedirs(base, exist_ok=True)
            base_image(image)

        def installed_in_place(base):
            base_image(image)
            self.store('install', base + '/storage', base + '/cache', '--image', self.base_folder, '--in-place')

        def replaced_base(base):  # installed on the old image; then the next system image is there
            installed_in_place(base)
            base_image(self.new_image)

        def replaced_base_with_tokyo(base):  # as `replaced_base`, with Japan added and Tokyo downloaded first
            installed_in_place(base)
            self.store('catalogs', base + '/storage', base + '/cache', 'add', self.japan[JAPAN_OLD])
            self.store('download', base + '/storage', base + '/cache', 'japan/tokyo', '--catalog', 'japan')
            base_image(self.new_image)

        def nothing(base):
            os.makedirs(base, exist_ok=True)

        def output_folder(base):  # the build's Output folder exists (and is durable) before it runs
            os.makedirs(base + '/out')

        def regions(root):
            out = self.store('regions', root + '/storage', root + '/cache', '--json').stdout
            return {json.loads(line)['id']: json.loads(line) for line in out.splitlines() if line.startswith('{')}

        def status(root, storage='storage'):
            out = self.store('status', root + '/' + storage, root + '/cache', '--json', check=False).stdout
            events = [json.loads(line) for line in out.splitlines() if line.startswith('{')]
            return events[-1] if events else {}

        def expect(condition, what):
            if not condition:
                raise Failure('finished operation not durable: ' + what)

        def not_ok(root):
            expect(status(root).get('status') not in (None, 'ok'), 'a rolled-back state opens as %r' % status(root))

        def install_done(root):
            expect(status(root).get('status') == 'ok', 'store not ok after install: %r' % status(root))
            entries = self.cache_entries(root + '/storage', root + '/cache')
            expect(entries == self.seed_entries, 'cache holds %r entries, the seed %r' % (entries, self.seed_entries))

        def update_done(root):
            expect(status(root).get('mapVersion') == NEW, 'version %r' % status(root).get('mapVersion'))
            entries = self.cache_entries(root + '/storage', root + '/cache')
            expect(entries == self.kept_entries, 'cache holds %r entries after the update, it keeps %r'
                   % (entries, self.kept_entries))

        return {
            'install-folder': (nothing, ('install', ['--image', image]), install_done),
            'install-archive': (nothing, ('install', ['--image', self.archive]), install_done),
            'update': (installed, ('update', ['--catalog', self.catalog[NEW]]), update_done),
            'download': (installed, ('download', ['europe/li', '--catalog', self.catalog[OLD]]),
                         lambda r: expect(regions(r).get('europe/li', {}).get('state') == 'completed',
                                          'europe/li %r' % regions(r).get('europe/li'))),
            # A second catalog's download and update: its rows are written with the switch's commit.
            'download-catalog': (with_japan, ('download', ['japan/tokyo', '--catalog', 'japan']),
                                 lambda r: expect(self.japan_state(r + '/storage', r + '/cache') == (JAPAN_OLD, 1),
                                                  'japan %r' % (self.japan_state(r + '/storage', r + '/cache'),))),
            'update-catalog': (with_tokyo, ('update', ['--catalog', self.japan[JAPAN_NEW]]),
                               lambda r: expect(self.japan_state(r + '/storage', r + '/cache') == (JAPAN_NEW, 1),
                                                'japan %r' % (self.japan_state(r + '/storage', r + '/cache'),))),
            'delete': (installed, ('delete', ['europe/ch/zh']),
                       lambda r: expect('europe/ch/zh' not in regions(r), 'europe/ch/zh still listed')),
            # `--sync`: every finished-looking output verifies (absent is allowed).
            'build': (output_folder, ('@build', ['--sync']), lambda r: self.check_build(r)),
            # The default, unsynced: after the cut (a reboot), the next build rebuilds and its outputs verify.
            'build-fast': (output_folder, ('@build', []), lambda r: self.check_rebuild_after_reboot(r)),
            # The operation commits; then its state database is rolled back (`roll_back_state`).
            'download-rolled-back': (installed, ('download', ['europe/li', '--catalog', self.catalog[OLD]]), not_ok),
            'update-rolled-back': (installed, ('update', ['--catalog', self.catalog[NEW]]), not_ok),
            'move': (installed, ('move', ['--to', '@MOUNT@/moved']),
                     lambda r: expect(status(r, 'moved').get('status') == 'ok', 'moved store %r' % status(r, 'moved'))),
            'install-in-place': (nothing_in_place, ('install', ['--image', self.base_folder, '--in-place']), install_done),
            'update-in-place': (installed_in_place, ('update', ['--catalog', self.catalog[NEW]]),
                                lambda r: expect(status(r).get('mapVersion') == NEW, 'version %r' % status(r).get('mapVersion'))),
            'delete-in-place': (installed_in_place, ('delete', ['europe/ch/zh']),
                                lambda r: expect('europe/ch/zh' not in regions(r), 'europe/ch/zh still listed')),
            # An app's start with the new base at the same place: open takes it over.
            'new-base': (replaced_base, ('install', ['--image', self.base_folder, '--in-place']),
                         lambda r: expect(status(r).get('mapVersion') == NEW, 'version %r' % status(r).get('mapVersion'))),
            # The same with an added catalog: the switch to the new base keeps Japan and Tokyo in one commit.
            'new-base-catalogs': (replaced_base_with_tokyo, ('install', ['--image', self.base_folder, '--in-place']),
                                  lambda r: expect(status(r).get('mapVersion') == NEW
                                                   and self.japan_state(r + '/storage', r + '/cache') == (JAPAN_OLD, 1),
                                                   'version %r, japan %r' % (status(r).get('mapVersion'),
                                                                             self.japan_state(r + '/storage', r + '/cache')))),
        }

    # ---- one run on the mount ----

    def run_op(self, scenario, base, cut_args):
        """Copies `base` into a fresh backing folder, mounts, runs the operation, cuts or stops. Returns
        (run folder, fs status, operation result)."""
        run_root = os.path.join(self.work, 'run')
        subprocess.run(['fusermount3', '-u', '-q', os.path.join(run_root, 'mount')], stderr=subprocess.DEVNULL)
        shutil.rmtree(run_root, ignore_errors=True)
        os.makedirs(run_root)
        shutil.copytree(base, os.path.join(run_root, 'backing'), symlinks=True)
        mount = Mount(run_root, *[a for a in cut_args if a != '--cut'])
        verb, extra = self.scenarios()[scenario][1]
        extra = [a.replace('@MOUNT@', mount.mount) for a in extra]
        try:
            if verb == '@build':
                result = self.run('mappack', ['build', self.recipe, *extra, '--out', mount.mount + '/out', '--cache',
                                              mount.mount + '/cache'], check=False, timeout=300,
                                  env={'MAPPACK_TEST_BOOT_ID': 'before-cut'})
            else:
                result = self.store(verb, mount.mount + '/storage', mount.mount + '/cache', *extra, check=False,
                                    timeout=300)
        finally:
            fs = mount.cut() if '--cut' in cut_args else None
            if fs is None:
                fs = mount.stop()
        return run_root, mount, fs, result

    # ---- checks of a surviving state ----

    @staticmethod
    def tree_digest(folder):
        h = hashlib.sha256()
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames) + [d + '/' for d in dirnames]:
                path = os.path.join(dirpath, name.rstrip('/'))
                h.update(os.path.relpath(path, folder).encode() + b'\0')
                if not name.endswith('/') and os.path.isfile(path) and not os.path.islink(path):
                    with open(path, 'rb') as f:
                        h.update(hashlib.sha256(f.read()).digest())
        return h.hexdigest()

    @staticmethod
    def store_files(storage):
        files = {}
        root = os.path.join(storage, 'store')
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if os.path.islink(path):  # an in-place store's marker hiding a base file
                    continue
                with open(path, 'rb') as f:
                    files[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
        return files

    def integrity(self, storage):
        database = os.path.join(storage, 'state.sqlite')
        if not os.path.exists(database):
            return
        scratch = tempfile.mkdtemp(prefix='powercut-db-', dir=self.work)
        try:
            for suffix in ('', '-journal', '-wal', '-shm'):
                if os.path.exists(database + suffix):
                    shutil.copy2(database + suffix, os.path.join(scratch, 'state.sqlite' + suffix))
            connection = sqlite3.connect(os.path.join(scratch, 'state.sqlite'))
            try:
                result = connection.execute('PRAGMA integrity_check').fetchall()
            except sqlite3.DatabaseError as error:
                raise Failure('state.sqlite: %s' % error)
            finally:
                connection.close()
            if result != [('ok',)]:
                raise Failure('state.sqlite integrity_check: %r' % result[:5])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def check_build(self, mount_root, finished=False):
        """Every finished-looking output (an image folder with its manifest, a .tar.zst) verifies, or
        is absent (`finished`: both must be there)."""
        out = os.path.join(mount_root, 'out')
        names = sorted(os.listdir(out)) if os.path.isdir(out) else []
        for name in names:
            path = os.path.join(out, name)
            if name.startswith('.'):
                continue
            if name.endswith('.tar.zst') or os.path.exists(os.path.join(path, 'manifest.json')):
                verify = self.run('mappack', ['verify', path], check=False)
                if verify.returncode != 0:
                    raise Failure('build output %s looks finished but does not verify:\n%s%s'
                                  % (name, verify.stdout[-1000:], verify.stderr[-1000:]))
        if finished:
            image = 'pc-' + OLD
            for name in (image, image + '.tar.zst'):
                if name not in names:
                    raise Failure('finished operation not durable: build output %s missing (out holds %r)' % (name, names))
            return
        # A new run is not tried here: each cache entry the cut damaged fails one run with its name
        # (README, Downloads), so after a cut with many damaged entries it takes as many runs.

    def check_rebuild_after_reboot(self, mount_root):
        """The boot after a cut: the same build again (a new boot id) ends ok, and its outputs verify. Each
        cache entry the cut damaged fails one run with its name and is dropped, so a few runs may be needed."""
        out = os.path.join(mount_root, 'out')
        os.makedirs(out, exist_ok=True)
        # At most one run per cached bundle (each damaged entry fails one run and is dropped), and one more.
        cached = sum(len(files) for _, _, files in os.walk(os.path.join(mount_root, 'cache')))
        for _ in range(cached + 2):
            result = self.run('mappack', ['build', self.recipe, '--out', out, '--cache', os.path.join(mount_root, 'cache')],
                              check=False, timeout=300, env={'MAPPACK_TEST_BOOT_ID': 'after-cut'})
            if result.returncode == 0:
                return self.check_build(mount_root, finished=True)
        raise Failure('the build after the cut never succeeded:\n%s%s' % (result.stdout[-1500:], result.stderr[-1500:]))

    def roll_back_state(self, scenario, run_root):
        """Puts the state database from before the operation back under the surviving tree."""
        storage = os.path.join(run_root, 'backing', 'storage')
        for suffix in ('-journal', '-wal', '-shm'):
            if os.path.exists(storage + '/state.sqlite' + suffix):
                os.remove(storage + '/state.sqlite' + suffix)
        shutil.copyfile(os.path.join(self.work, 'base-' + scenario, 'storage', 'state.sqlite'), storage + '/state.sqlite')

    def check_state(self, scenario, mount_root, cache, before, finished):
        scenario = ROLLED_BACK.get(scenario, scenario)
        if scenario == 'build-fast':
            return self.check_rebuild_after_reboot(mount_root)
        if scenario == 'build':
            return finished(mount_root) if finished else self.check_build(mount_root)
        locations = ['storage', 'moved'] if scenario == 'move' else ['storage']
        for location in locations:
            self.integrity(os.path.join(mount_root, location))
        if finished is not None:
            finished(mount_root)
        for location in locations:
            storage = os.path.join(mount_root, location)
            status = self.store('status', storage, cache, '--json', check=False)
            if '"status":"ok"' in status.stdout.replace(' ', ''):
                verify = self.store('verify', storage, cache, check=False)
                if verify.returncode != 0:
                    raise Failure('%s: status ok but verify fails:\n%s%s' % (location, verify.stdout[-1500:],
                                                                             verify.stderr[-1500:]))
        usable = []
        for location in locations:
            storage = os.path.join(mount_root, location)
            if scenario == 'move' and not os.path.exists(storage):
                continue
            in_place = scenario in IN_PLACE
            self.store('repair', storage, cache, *([] if scenario == 'move' else
                                                   ['--image', self.base_folder, '--in-place'] if in_place else ['--image', self.image]))
            status = self.store('status', storage, cache, '--full', '--json', check=False)
            text = status.stdout.replace(' ', '')
            if '"status":"ok"' in text:
                self.store('verify', storage, cache)
                usable.append(storage)
            elif not (scenario == 'move' and '"status":"empty"' in text):
                raise Failure('%s after repair: %s%s' % (location, status.stdout[-800:], status.stderr[-800:]))
        if len(usable) != 1:
            raise Failure('usable stores after repair: %r (expected exactly one)' % usable)
        if scenario.startswith('install'):
            entries = self.cache_entries(usable[0], cache)
            if entries != self.seed_entries:
                raise Failure('cache holds %r entries after repair, the seed %r' % (entries, self.seed_entries))
        after = self.store_files(usable[0])
        version = json.loads([l for l in self.store('status', usable[0], cache, '--json').stdout.splitlines()
                              if l.startswith('{')][-1]).get('mapVersion')
        # An update of the image's catalog changes its files; one of `japan` changes Tokyo's, and only
        # together with Japan's version (the catalog's rows commit with the files).
        japan = self.japan_state(usable[0], cache) if scenario.endswith('-catalog') else None
        updated = (scenario == 'update' and version == NEW) or (scenario == 'update-catalog' and japan == (JAPAN_NEW, 1))
        if scenario == 'update':
            # The cache is never older than the maps: at NEW it holds exactly the entries the update
            # keeps; at OLD the seed's, or only the kept ones when the state was rolled back under a
            # reset cache (fewer entries, none stale).
            entries = self.cache_entries(usable[0], cache)
            allowed = (self.kept_entries,) if version == NEW else (self.seed_entries, self.kept_entries)
            if entries not in allowed:
                raise Failure('cache holds %r entries at %s after repair, expected one of %r' % (entries, version, allowed))
        if scenario == 'update-catalog' and japan not in ((JAPAN_OLD, 1), (JAPAN_NEW, 1)):
            raise Failure('japan after repair: %r' % (japan,))
        if scenario.endswith('-catalog') and version != OLD:
            raise Failure('the image catalog moved to %r' % version)
        if scenario == 'new-base-catalogs':
            japan = self.japan_state(usable[0], cache)
            if japan != (JAPAN_OLD, 1):
                raise Failure('japan after repair: %r' % (japan,))
        # A new base replaces the base's files, never Japan's (the device's own).
        new_base = scenario in ('update-in-place', 'new-base') or scenario == 'new-base-catalogs'
        for path, digest in before.items():
            if path not in after:
                if scenario == 'delete' or updated or (new_base and version == NEW and not path.startswith('regions/japan/')):
                    continue
                raise Failure('file lost: store/%s' % path)
            if after[path] != digest and not (updated and (scenario == 'update' or path.startswith('regions/japan/'))) \
                    and not (new_base and version == NEW and not path.startswith('regions/japan/')):
                raise Failure('file changed: store/%s' % path)

    def check_cut(self, scenario, run_root, before, finished, label):
        if scenario in ROLLED_BACK:
            self.roll_back_state(scenario, run_root)
        digest = self.tree_digest(os.path.join(run_root, 'backing'))
        key = (scenario, digest, finished is not None)
        if key in self.states:
            return
        if self.options.keep_work:  # the surviving state as it was before the checks (repair changes it)
            kept = os.path.join(self.work, 'failed-%d' % (len(self.failures) + 1))
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(os.path.join(run_root, 'backing'), kept, symlinks=True)
        remount = BindMount(run_root)
        try:
            self.check_state(scenario, remount.mount, remount.mount + '/cache', before, finished)
            self.states[key] = None
        except Failure as failure:
            self.states[key] = str(failure)
            self.failures.append('%s %s: %s' % (scenario, label, failure))
            print('FAIL %s %s: %s' % (scenario, label, failure), flush=True)
        except subprocess.TimeoutExpired as timeout:
            self.failures.append('%s %s: timeout %s' % (scenario, label, timeout))
            print('FAIL %s %s: timeout %s' % (scenario, label, timeout), flush=True)
        finally:
            remount.stop()

    # ---- the matrix ----

    def points(self, syncs, ops):
        """Cut points: after every durability event, plus evenly spread mutating operations between."""
        sync_points = list(range(1, syncs + 1))
        if self.options.last_syncs:
            return [('--cut-after-sync', n) for n in sync_points[-self.options.last_syncs:]]
        op_points = sorted({max(1, ops * i // 8) for i in range(1, 8)})
        if self.options.sample:
            return [('--cut-after-sync', max(1, syncs // 2))]
        elif self.options.max_sync_points and len(sync_points) > self.options.max_sync_points:
            step = len(sync_points) / self.options.max_sync_points
            sync_points = sorted({sync_points[int(i * step)] for i in range(self.options.max_sync_points)} | {syncs})
        return [('--cut-after-sync', n) for n in sync_points] + [('--cut-after-op', n) for n in op_points]

    def scenario(self, name):
        prepare, _, finished = self.scenarios()[name]
        base = os.path.join(self.work, 'base-' + name)
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        prepare(base)
        before = self.store_files(os.path.join(base, 'storage')) if os.path.isdir(os.path.join(base, 'storage')) else {}
        # The clean run: counts, and a cut right after the operation returned must keep its outcome.
        run_root, _, fs, result = self.run_op(name, base, ['--cut', '--model', 'harsh', '--keep', '0'])
        if result.returncode != 0:
            raise Failure('%s: the operation fails on the mount: %s%s' % (name, result.stdout[-1500:], result.stderr[-1500:]))
        syncs, ops = fs['syncs'], fs['ops']
        self.cuts += 1
        self.check_cut(name, run_root, before, finished, 'after success')
        points = [] if self.options.only_after_success else self.points(syncs, ops)
        print('%s: %d durability events, %d mutating operations, %d cut points' % (name, syncs, ops, len(points)),
              flush=True)
        for index, (kind, n) in enumerate(points):
            model = ['ordered', 'harsh'][index % 2]
            drop = ['--keep', 0] if self.options.drop_all else []
            run_root, _, fs, result = self.run_op(name, base, ['--cut', '--model', model, '--seed', index, kind, n, *drop])
            self.cuts += 1
            self.check_cut(name, run_root, before, None, '%s %d (%s, seed %d)' % (kind, n, model, index))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--bin', default='.build/debug')
    parser.add_argument('--sample', action='store_true', help='a few cut points per scenario (for make test)')
    parser.add_argument('--scenarios', default='install-folder,install-archive,update,download,download-rolled-back,'
                                               'update-rolled-back,download-catalog,update-catalog,delete,move,build,build-fast,'
                                               'install-in-place,update-in-place,delete-in-place,new-base,new-base-catalogs')
    parser.add_argument('--max-sync-points', type=int, default=20, help='per scenario, spread evenly (0: all)')
    parser.add_argument('--only-after-success', action='store_true',
                        help='only the cut right after the operation returned (what it did must all be durable)')
    parser.add_argument('--last-syncs', type=int, default=0, help='only cuts after each of the last N durability events')
    parser.add_argument('--fixture', default=None, help='folder for the images and catalogs, reused when ready')
    parser.add_argument('--drop-all', action='store_true', help='every cut drops every non-durable change (--keep 0)')
    parser.add_argument('--work', default=None)
    parser.add_argument('--keep-work', action='store_true')
    options = parser.parse_args()
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # children (mappack, the filesystem) get a clean signal mask
    if not fuse_available():
        print('skip: FUSE cannot be mounted here (/dev/fuse or fusermount3 missing); the power-cut matrix did not run')
        return 77
    started = time.time()
    matrix = Matrix(options)
    try:
        matrix.fixture()
        for name in options.scenarios.split(','):
            try:
                matrix.scenario(name)
            except (Failure, RuntimeError, subprocess.TimeoutExpired) as failure:
                matrix.failures.append('%s: %s' % (name, failure))
                print('FAIL %s: %s' % (name, failure), flush=True)
    finally:
        subprocess.run(['fusermount3', '-u', '-q', os.path.join(matrix.work, 'run', 'mount')], stderr=subprocess.DEVNULL)
        if not options.keep_work and not options.work:
            shutil.rmtree(matrix.work, ignore_errors=True)
    print('cut points tried: %d, states checked: %d, failures: %d (%.0f s)'
          % (matrix.cuts, len(matrix.states), len(matrix.failures), time.time() - started))
    return 1 if matrix.failures else 0


if __name__ == '__main__':
    sys.exit(main())
