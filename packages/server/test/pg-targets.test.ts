import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { parsePgUrl } from '../src/store/sql/pg-targets.js';

describe('SVC_DATABASE_URL with one or several hosts (libpq form)', () => {
  it('reads every host, the shared parts once, and whether writes are needed', () => {
    const t = parsePgUrl('postgres://svc:p%40ss@db1:5433,db2,[::1]:6432/svc?target_session_attrs=read-write&application_name=svc');
    expect(t.hosts).toEqual([
      { host: 'db1', port: 5433 },
      { host: 'db2', port: 5432 },
      { host: '::1', port: 6432 },
    ]);
    expect(t.client).toMatchObject({ user: 'svc', password: 'p@ss', database: 'svc', application_name: 'svc' });
    expect(t.readWrite).toBe(true);
    expect(t.client).not.toHaveProperty('target_session_attrs');
    // One host: any server will do unless asked; several: svc writes, so the writable one.
    expect(parsePgUrl('postgres://postgres@127.0.0.1:5432/svc').readWrite).toBe(false);
    expect(parsePgUrl('postgresql://a,b/svc').readWrite).toBe(true);
    expect(parsePgUrl('postgres://a,b/svc?target_session_attrs=any').readWrite).toBe(false);
  });

  it('refuses what it cannot honour with one line naming the variable, never the password', () => {
    for (const [url, message] of [
      ['postgres://u:hunter2@h1:99999,h2/svc', 'port 99999 is out of range'],
      ['postgres://u:hunter2@h1,h2/svc?target_session_attrs=standby', 'target_session_attrs=standby is not supported'],
      ['postgres://u:hunter2@h1,:5432/svc', "host ':5432' is not host or host:port"],
    ]) {
      let err: unknown = null;
      try {
        loadConfig({ SVC_DATABASE_URL: url });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect(String(err)).toContain(`SVC_DATABASE_URL: ${message}`);
      expect(String(err)).not.toContain('hunter2');
    }
  });
});
