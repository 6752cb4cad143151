/**
 * Which web pages may call the API from a browser: the origins in CORS_ORIGINS, and outside
 * production any page served from this machine (http://localhost:*, http://127.0.0.1:*, [::1]).
 * A request without an Origin header does not come from a web page (curl, a server, a native
 * app) and is not a cross-origin request at all.
 */
export function originPolicy(options: { allowed: readonly string[]; allowLocalhost: boolean }): (origin: string | undefined) => boolean {
  const allowed = new Set(options.allowed.map((origin) => origin.replace(/\/$/, '')));
  return (origin) => {
    if (origin === undefined) return true;
    if (allowed.has(origin)) return true;
    return options.allowLocalhost && /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(origin);
  };
}
