export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

export const consoleLogger: Logger = {
  info: (message) => console.log(`[feed] ${message}`),
  warn: (message) => console.warn(`[feed] warning: ${message}`),
  error: (message, error) => console.error(`[feed] ${message}`, error ?? ''),
};

/** For tests: keeps errors visible, drops the chatter. */
export const quietLogger: Logger = { info: () => {}, warn: () => {}, error: consoleLogger.error };
