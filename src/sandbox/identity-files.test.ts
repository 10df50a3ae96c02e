import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sandboxIdentity } from './identity-files.js';

test("a sandbox's passwd and group list the system accounts and its own app's, no other app's", () => {
  const host = {
    passwd: [
      'root:x:0:0:root:/root:/bin/bash',
      'haproxy:x:108:115::/var/lib/haproxy:/usr/sbin/nologin',
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
      'someone:x:1000:1000:A person:/home/someone:/bin/bash',
      'app-shop:x:200001:200001:app_1:/nonexistent:/usr/sbin/nologin',
      'app-other:x:200002:200002:app_2:/nonexistent:/usr/sbin/nologin',
      '',
    ].join('\n'),
    group: ['root:x:0:', 'nogroup:x:65534:', 'someone:x:1000:', 'app-shop:x:200001:', 'app-other:x:200002:'].join('\n'),
  };
  const seen = sandboxIdentity(host, { uid: 200001, gid: 200001 });
  assert.deepEqual(
    seen.passwd
      .trim()
      .split('\n')
      .map((l) => l.split(':')[0]),
    ['root', 'haproxy', 'nobody', 'app-shop'],
  );
  assert.deepEqual(
    seen.group
      .trim()
      .split('\n')
      .map((l) => l.split(':')[0]),
    ['root', 'nogroup', 'app-shop'],
  );
});

test("a sandbox of an app linked to FS buckets also lists their groups, and no other's", () => {
  const host = {
    passwd: 'app-shop:x:200001:200001:app_1:/nonexistent:/usr/sbin/nologin\n',
    group: ['app-shop:x:200001:', 'slb-0d4c1f2e5b6a:x:2400001:', 'slb-111111111111:x:2400002:'].join('\n'),
  };
  const seen = sandboxIdentity(host, { uid: 200001, gid: 200001 }, [2400001]);
  assert.deepEqual(seen.group.trim().split('\n'), ['app-shop:x:200001:', 'slb-0d4c1f2e5b6a:x:2400001:']);
});
