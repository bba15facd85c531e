/** `svc reporters`' help, apart from its code: `svc --help` and usage errors load no client code. */

export const REPORTERS_USAGE = {
  reporters: `usage: svc reporters <list|suspend|restore> [options]
  list      reporters with their track records, flagged first, as a table or --json
  suspend   suspend a reporter: its reports count for nothing, its open votes are withdrawn
  restore   lift a reporter's suspension
They call the running service (GET /v1/reporters, POST /v1/reporters/{id}/suspend|restore) with a
key that has the admin product, so a suspension reaches every node.
svc reporters <subcommand> --help shows its options.`,
  list: `usage: svc reporters list [--key-id KEY_ID] [--flagged] [--suspended] [--url URL] [--key KEY] [--json]
  --key-id     only the reporters of this API key (key_…)
  --flagged    only those the flag rule marks (docs/reporters.md)
  --suspended  only suspended reporters
  --url        the service (default from SVC_HOST and SVC_PORT)
  --key        a key with the admin product (default $SVC_API_KEY, else the sandbox demo key of SVC_DATA_DIR)
  --json       print the records as a JSON array instead of a table`,
  suspend: `usage: svc reporters suspend REPORTER_ID [--url URL] [--key KEY] [--json]
  REPORTER_ID  the reporter's id (rep_…), as svc reporters list shows it
  --url, --key as for svc reporters list; --json prints the record`,
  restore: `usage: svc reporters restore REPORTER_ID [--url URL] [--key KEY] [--json]
  REPORTER_ID  the reporter's id (rep_…), as svc reporters list shows it
  --url, --key as for svc reporters list; --json prints the record`,
};

export type ReportersSubcommand = 'list' | 'suspend' | 'restore';
export const isReportersSubcommand = (s: string | undefined): s is ReportersSubcommand => s === 'list' || s === 'suspend' || s === 'restore';
