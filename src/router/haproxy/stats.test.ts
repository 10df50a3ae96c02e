import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backendLoad, backendSessions, crtListFiles, runningServers } from './stats.js';

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

test('show stat: the sessions and the queue of each backend, for the autoscaler', () => {
  const csv = ['# pxname,svname,qcur,qmax,scur,smax', 'app0,i0,0,0,2,2', 'app0,BACKEND,7,9,2,2', 'app1,BACKEND,,0,1,1', ''].join('\n');
  assert.deepEqual(
    [...backendLoad(csv)],
    [
      ['app0', { sessions: 2, queued: 7 }],
      ['app1', { sessions: 1, queued: 0 }],
    ],
  );
  // stot: the requests sent to it so far, from which the autoscaler tells an idle app (scale to zero).
  const withTotal = ['# pxname,svname,qcur,qmax,scur,smax,slim,stot', 'app0,BACKEND,0,0,0,2,1,41', 'app1,BACKEND,0,0,0,0,1,', ''].join(
    '\n',
  );
  assert.deepEqual(
    [...backendLoad(withTotal)],
    [
      ['app0', { sessions: 0, queued: 0, total: 41 }],
      ['app1', { sessions: 0, queued: 0 }],
    ],
  );
});

test('show servers state: every server with its backend, address, port and administrative state', () => {
  const text = [
    '1',
    '# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port',
    '4 acme 1 acme 127.0.0.1 2 0 1 1 2 1 0 2 0 0 0 0 - 11 - 0 0 - - 0',
    '5 app0 3 i7 10.200.0.2 2 1 1 1 2 1 0 2 0 0 0 0 - 8080 - 0 0 - - 0',
    '',
  ].join('\n');
  assert.deepEqual(runningServers(text), [
    { backend: 'acme', name: 'acme', address: '127.0.0.1', port: 11, adminState: 0 },
    { backend: 'app0', name: 'i7', address: '10.200.0.2', port: 8080, adminState: 1 },
  ]);
  assert.deepEqual(runningServers('No such backend.'), []);
});

test('show ssl crt-list: the certificate files, without their SNI filters', () => {
  const text = '# /r/certificates.list\n/r/default.pem\n/r/certs/abc.pem alpha.test *.beta.test\n';
  assert.deepEqual(crtListFiles(text), ['/r/default.pem', '/r/certs/abc.pem']);
});
