// The page's only way to the service: the public HTTP API, as any integrator would use it.
// Errors come back as problem+json; they are thrown as `ApiError` carrying the stable `code`.

export class ApiError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.code = problem.code || "http_" + status;
    this.status = status;
  }
}

export async function call(method, path, { body, token } = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = "Bearer " + token;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { detail: text };
  }
  if (!res.ok) throw new ApiError(json || {}, res.status);
  return json;
}

export const catalog = () => call("GET", "/v1/catalog");
export const createGame = (spec) => call("POST", "/v1/games", { body: spec });
export const getGame = (id) => call("GET", `/v1/games/${id}`);
export const clock = (id) => call("GET", `/v1/games/${id}/clock`);
export const legalMoves = (id) => call("GET", `/v1/games/${id}/legal-moves`);
export const submitMove = (id, token, move, expectedPly) =>
  call("POST", `/v1/games/${id}/moves`, {
    token,
    body: expectedPly === undefined ? { move } : { move, expected_ply: expectedPly },
  });
export const resign = (id, token) => call("POST", `/v1/games/${id}/resign`, { token });
export const analyse = (request) => call("POST", "/v1/analysis", { body: request });

// Follows a game's NDJSON events stream from `after` (0: from the game's start), calling
// `onLine` with each `game` and `change` line. A dropped connection is resumed after the
// last version seen; the promise settles when the stream ends with the game or `signal`
// aborts it. NDJSON over fetch rather than EventSource, because only fetch can send
// `Last-Event-ID` on the first request.
export async function follow(id, after, onLine, signal) {
  let last = after;
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      const res = await fetch(`/v1/games/${id}/events`, {
        headers: { Accept: "application/x-ndjson", "Last-Event-ID": String(last) },
        signal,
      });
      // The game is over and every event of it was seen: nothing more will come.
      if (res.status === 204) return;
      if (!res.ok) {
        const text = await res.text();
        let problem = {};
        try {
          problem = JSON.parse(text);
        } catch {
          // not problem+json: keep the status alone
        }
        const err = new ApiError(problem, res.status);
        if (res.status !== 503) throw err;
      } else {
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let nl;
          while ((nl = buffer.indexOf("\n")) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (!line) continue;
            const msg = JSON.parse(line);
            if (msg.event === "heartbeat") continue;
            last = msg.version;
            attempt = 0;
            if (onLine(msg) === "finished") return;
          }
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status !== 503) throw e;
    }
    // The stream ended without the game ending (a restart, a proxy): resume shortly.
    await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
  }
}
