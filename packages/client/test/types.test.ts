import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CLIENT_DIR, ROOT } from './support.js';

const FIXTURE = path.join(CLIENT_DIR, 'test/fixtures/consumer.ts');
const EXPECTATION = /^\s*\/\/ @ts-expect-error.*$/gm;

/** Type-checks files with the repository's compiler options (sources via the @svc/source condition). */
function diagnose(files: string[]): string[] {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}

describe('types: a wrong field does not compile', () => {
  it('the consumer fixture compiles, every @ts-expect-error meeting its error', () => {
    const text = fs.readFileSync(FIXTURE, 'utf8');
    expect(text.match(EXPECTATION)?.length).toBeGreaterThanOrEqual(10);
    expect(diagnose([FIXTURE])).toEqual([]);
  });

  it('the same fixture without its @ts-expect-error lines fails, once per line', () => {
    const text = fs.readFileSync(FIXTURE, 'utf8');
    const expected = text.match(EXPECTATION)?.length ?? 0;
    const bad = path.join(CLIENT_DIR, 'test/fixtures/.consumer-unchecked.ts');
    fs.writeFileSync(bad, text.replace(EXPECTATION, '// (expectation removed)'));
    try {
      const errors = diagnose([bad]);
      expect(errors).toHaveLength(expected);
      expect(errors.join('\n')).toMatch(/'leauge' does not exist/);
      expect(errors.join('\n')).toMatch(/Property 'score' does not exist on type/);
      expect(errors.join('\n')).toMatch(/'"delayed"' is not assignable/);
    } finally {
      fs.rmSync(bad, { force: true });
    }
  });
});
