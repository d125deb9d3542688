/** Where the library reports recoverable problems (bad blocks, bad names). */
export interface Logger {
  warn(message: string): void;
  info?(message: string): void;
}

/** The default: one line per problem on stderr. */
export const stderrLogger: Logger = {
  warn(message: string): void {
    process.stderr.write(`tscryptfs: ${message}\n`);
  },
};

/** For callers that want silence (`-q`). Warnings are still counted by whoever wraps it. */
export const silentLogger: Logger = { warn(): void {} };
