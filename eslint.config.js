import tseslint from 'typescript-eslint';

/** Import rules that keep the layers of docs/architecture.md ("Parts and layers") apart. */
const layer = (files, { paths = [], patterns = [] }) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
});

const DRIVERS = ['kysely', 'pg', 'better-sqlite3', 'ioredis'].map((name) => ({ name, message: 'Database and Redis access lives in store/ or a feature repository.' }));
const SQL_DRIVERS = ['kysely', 'pg', 'better-sqlite3'].map((name) => ({ name, message: "SQL on a table lives in its owner's repository (docs/architecture.md, \"Persistence\")." }));
/** The store's means of writing SQL by hand: statement texts, their cache, row decoding, COPY. */
const SQL_HELPERS = [
  {
    group: ['**/store/sql/write-tx.js', '**/store/sql/row-reader.js', '**/store/sql/statement-cache.js', '**/store/sql/pg-copy.js', '**/store/sql/scope-sql.js'],
    message: "SQL on a table lives in its owner's repository in store/ (docs/architecture.md, \"Persistence\").",
  },
];
/** Members of a `Db` handle and of Kysely through which SQL runs without importing a driver. */
const SQL_MEMBER = 'MemberExpression[property.name=/^(kysely|pgPool|sqliteFile|statements|executeQuery|selectFrom|insertInto|updateTable|deleteFrom)$/]';
/**
 * What a migration may import from the store: other migrations and the leaf modules of row shapes
 * and row ↔ record mappers, never a repository (docs/architecture.md, "Parts and layers"): a
 * migration is fixed once shipped, and a repository changes with the code of the day.
 */
const MIGRATION_STORE_LEAVES = ['events/json', 'events/rows', 'sql/columns', 'sql/database', '[\\w-]+/types'];
const HTTP_FRAMEWORK = ['fastify', '@fastify/swagger', '@fastify/swagger-ui', '@fastify/type-provider-typebox'].map((name) => ({ name, message: 'Fastify belongs to http/, routes/ and app.ts.' }));
const NETWORK = ['node:net', 'node:dns', 'node:http', 'node:https', 'node:tls', 'undici', 'ws', 'node:fs', 'node:child_process'].map((name) => ({
  name,
  message: 'The domain is pure: I/O is done by the feature that calls it.',
}));

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'clients/*/**/*', '!clients/*/*.test.ts', '**/dist/**', 'bench/.out/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/ban-ts-comment': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // SQL lives in store/, each table's in its owner (docs/architecture.md, "Persistence"). First,
  // so that the stricter rules of the layers below (each a superset) take over for their files.
  {
    ...layer(['packages/server/src/**/*.ts'], { paths: SQL_DRIVERS, patterns: SQL_HELPERS }),
    ignores: ['packages/server/src/store/**'],
  },
  // ... and no SQL through a `Db` handle or a transaction outside store/ either: the import rule
  // above cannot see it.
  {
    files: ['packages/server/src/**/*.ts'],
    ignores: ['packages/server/src/store/**'],
    rules: {
      'no-restricted-syntax': ['error', { selector: SQL_MEMBER, message: "SQL on a table lives in its owner's repository in store/ (docs/architecture.md, \"Persistence\")." }],
    },
  },
  // The schema package is what clients are typed from: TypeBox and nothing of the server.
  layer(['packages/schema/src/**/*.ts'], {
    patterns: [{ group: ['@svc/server', '**/server/**', 'node:*', 'fastify', '@fastify/*'], message: 'packages/schema holds wire shapes only (TypeBox).' }],
  }),
  // The domain: pure rules over an injected clock. It may import itself and @svc/schema only, so
  // a relative import may not climb out of domain/ (depth decides how far `..` reaches).
  layer(['packages/server/src/domain/*.ts'], {
    paths: [...DRIVERS, ...HTTP_FRAMEWORK, ...NETWORK],
    patterns: [{ group: ['../*', '@svc/server'], message: 'domain/ imports only domain/ and @svc/schema.' }],
  }),
  layer(['packages/server/src/domain/*/*.ts'], {
    paths: [...DRIVERS, ...HTTP_FRAMEWORK, ...NETWORK],
    patterns: [{ group: ['../../*', '@svc/server'], message: 'domain/ imports only domain/ and @svc/schema.' }],
  }),
  // The store knows nothing of HTTP.
  layer(['packages/server/src/store/**/*.ts'], {
    paths: HTTP_FRAMEWORK,
    patterns: [{ group: ['**/http/**', '**/routes/**', '**/app.js'], message: 'store/ does not depend on the HTTP layer.' }],
  }),
  // Migrations import no repository (docs/architecture.md, "Parts and layers"), and nothing of
  // the layers above the store; the store's own rule above still holds.
  layer(['packages/server/src/store/migrations/*.ts'], {
    paths: HTTP_FRAMEWORK,
    patterns: [
      { regex: '^\\./(?!\\d{4}-[\\w-]+\\.js$)', message: 'A migration imports other migrations (store/migrations/NNNN-*.ts) by their numbered files.' },
      { regex: `^\\.\\./(?!(${MIGRATION_STORE_LEAVES.join('|')})\\.js$|\\.\\./)`, message: 'A migration imports other migrations and the store\'s leaf modules only, never a repository (docs/architecture.md).' },
      { regex: '^\\.\\./\\.\\./(?!domain/)', message: 'A migration imports the domain only, never a repository or a feature (docs/architecture.md).' },
    ],
  }),
  // Routes validate, call a feature or a repository, and map errors: no SQL, no drivers.
  layer(['packages/server/src/routes/**/*.ts'], {
    paths: DRIVERS,
    patterns: [
      ...SQL_HELPERS,
      { group: ['**/store/sql/db.js'], message: 'Routes get repositories, not the database handle.' },
      { group: ['**/services.js'], message: 'A route plugin declares the parts it uses and app.ts hands them over (docs/architecture.md).' },
    ],
  }),
  // SQL on a table is written only in its owner's repository (docs/architecture.md, "Persistence"):
  // the simulator, the status service and live/'s game directory and official feed read and write
  // through repositories.
  layer(['packages/server/src/sim/**/*.ts', 'packages/server/src/status/service.ts', 'packages/server/src/live/games.ts', 'packages/server/src/live/official.ts'], {
    paths: SQL_DRIVERS,
    patterns: SQL_HELPERS,
  }),
  // The benchmarks stand beside the server and use its one surface (packages/server/src/index.ts),
  // so its modules can move without them (docs/architecture.md, "Parts and layers").
  layer(['bench/**/*.ts'], {
    patterns: [{ group: ['**/packages/server/src/**', '**/server/src/**'], message: 'bench/ uses the server through @svc/server (packages/server/src/index.ts).' }],
  }),
  // The shared test vectors are the server's output that the clients check against: the schema
  // package holds them, the server's scripts/ writes them.
  layer(['packages/schema/test-vectors/**/*.ts', 'packages/schema/test/**/*.ts'], {
    patterns: [{ group: ['@svc/server', '**/server/**'], message: 'packages/schema depends on nothing of the server.' }],
  }),
);
