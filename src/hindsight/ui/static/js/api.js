// Every call goes through the REST API with the key kept in this tab's sessionStorage.

const STORE = "hindsight.apiKey";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const key = () => sessionStorage.getItem(STORE);
export const setKey = (k) => sessionStorage.setItem(STORE, k);
export const forget = () => sessionStorage.removeItem(STORE);

const PLAIN = {
  401: "The API key was refused",
  403: "This API key may not do that",
  404: "Not found",
  409: "That does not fit the memory's current state",
  422: "The request was not valid",
  429: "Too many requests; wait a moment",
  503: "The service is unavailable; try again shortly",
};

export async function call(method, path, body, query) {
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null || v === "") continue;
      for (const item of Array.isArray(v) ? v : [v]) q.append(k, item);
    }
    if ([...q].length) url += `?${q}`;
  }
  const headers = { Authorization: `Bearer ${key() || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let r;
  try {
    r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "Cannot reach the Hindsight service. Is it running?");
  }
  if (r.status === 204) return null;
  let data = null;
  try { data = await r.json(); } catch { /* not JSON */ }
  if (!r.ok) {
    const said = data && data.error && data.error.message;
    const head = PLAIN[r.status] || `The request failed (HTTP ${r.status})`;
    throw new ApiError(r.status, said ? `${head}: ${said}` : `${head}.`);
  }
  return data;
}

export const ns = (n) => `/v1/namespaces/${encodeURIComponent(n)}`;
