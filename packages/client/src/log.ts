/** Where the client's log lines go: `console` by default, or any object with these four methods (pino, winston, …). */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

/** How much the client logs: `info` is one line per call, `debug` adds one per attempt. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, off: 50 };
export const DEFAULT_LOG_LEVEL: LogLevel = 'warn';

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(RANK, value);
}

type Method = Exclude<LogLevel, 'off'>;

/** A logger that drops lines below `level`. */
export function leveled(logger: Logger, level: LogLevel): Logger {
  const at =
    (method: Method) =>
    (message: string, ...rest: unknown[]): void => {
      if (RANK[method] >= RANK[level]) logger[method](message, ...rest);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

