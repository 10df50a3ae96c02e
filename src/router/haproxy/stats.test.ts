import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backendSessions } from './stats.js';

test("show stat: the scur of each BACKEND line, by the header's column names", () => {
  const csv = [
    '# pxname,svname,qcur,qmax,scur,smax,slim,stot',
    'http,FRONTEND,,,3,3,9000,7',
    'unknown_host,BACKEND,0,0,0,0,900,0',
    'app0,i0,0,0,2,2,,5',
    'app0,BACKEND,0,0,2,2,1,5',
    'app1,BACKEND,0,0,0,1,1,1',
    '',
  ].join('\n');
  assert.deepEqual(
    [...backendSessions(csv)],
    [
      ['unknown_host', 0],
      ['app0', 2],
      ['app1', 0],
    ],
  );
  assert.deepEqual([...backendSessions('# svname,pxname,scur\nBACKEND,app3,4\n')], [['app3', 4]], 'columns found by name');
  assert.equal(backendSessions('Unknown command.').size, 0);
});
