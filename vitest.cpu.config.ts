import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// The suite with each file's CPU and wall time written to $SVC_TEST_CPU_LOG
// (scripts/cpu-per-file.setup.ts): `SVC_TEST_CPU_LOG=/tmp/cpu.tsv npx vitest run -c vitest.cpu.config.ts`.
export default mergeConfig(base, defineConfig({ test: { setupFiles: ['./scripts/cpu-per-file.setup.ts'] } }));
