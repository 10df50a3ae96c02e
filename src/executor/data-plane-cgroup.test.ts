import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { inDataPlaneGroup, placeDataPlaneIn } from './data-plane-cgroup.js';

test('without a group the argv is left as it is; with one, a shell joins each group file and execs the program', () => {
  placeDataPlaneIn([]);
  assert.deepEqual(inDataPlaneGroup(['/usr/bin/conmon', '--sync']), ['/usr/bin/conmon', '--sync']);
  placeDataPlaneIn(['/cg/a/cgroup.procs', '/cg/b/cgroup.procs']);
  try {
    const argv = inDataPlaneGroup(['/usr/sbin/redis-server', 'conf'], { uid: 5, gid: 6 });
    assert.equal(argv[0], '/bin/sh');
    assert.deepEqual(argv.slice(3), [
      'slipway-data-plane',
      '2',
      '/cg/a/cgroup.procs',
      '/cg/b/cgroup.procs',
      'setpriv',
      '--reuid=5',
      '--regid=6',
      '--clear-groups',
      '--',
      '/usr/sbin/redis-server',
      'conf',
    ]);
  } finally {
    placeDataPlaneIn([]);
  }
});

test('the shell writes its own pid to every group file, then becomes the program with the same pid', () => {
  const dir = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
  placeDataPlaneIn([`${dir}/one.procs`, `${dir}/two.procs`]);
  try {
    const argv = inDataPlaneGroup(['/bin/sh', '-c', 'echo $$']);
    const printed = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).trim();
    for (const file of ['one', 'two']) assert.equal(execFileSync('cat', [`${dir}/${file}.procs`], { encoding: 'utf8' }).trim(), printed);
  } finally {
    placeDataPlaneIn([]);
    execFileSync('rm', ['-rf', dir]);
  }
});
