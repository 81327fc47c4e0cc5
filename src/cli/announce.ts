/** Prints the initial admin token once, on first start (stderr, never a log line that could be shipped). */
export function announceBootstrapToken(result: { created: boolean; token: string | null }): void {
  if (!result.created) return;
  if (result.token)
    process.stderr.write(
      `\n=== svc: initial admin token (shown once; store it now) ===\n${result.token}\n` +
        `=== use it as: Authorization: Bearer <token> ===\n\n`,
    );
  else process.stderr.write('svc: initial admin token created from SVC_AUTH_BOOTSTRAP_TOKEN\n');
}

/** Prints the memory service's initial admin API key once, on its first start. */
export function announceMemoryKey(key: string | null): void {
  if (key)
    process.stderr.write(
      `\n=== svc memory service: initial admin API key (shown once; store it now) ===\n${key}\n` +
        `=== use it as: x-api-key: <key> ===\n\n`,
    );
}
