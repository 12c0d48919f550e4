// What a key's role lets it do to a memory (src/hindsight/services/roles.py). The API
// enforces this; the panel only says so up front instead of offering a button that fails.

const ORDER = ["reader", "writer", "curator", "admin"];
const NEEDS = {
  edit: "writer", archive: "writer", restore: "writer", delete: "writer",
  // vouching for a memory: verified, permanent (either way), confidence above the initial
  verify: "curator", permanent: "curator",
  // reviewing the quarantine: approve (it becomes active) or reject (it is erased)
  approve: "curator", reject: "curator",
};

// null when `role` may do `action`, else why not, in plain words
export function refusal(role, action) {
  const needed = NEEDS[action];
  if (!needed || !ORDER.includes(role)) return null; // unknown: let the API decide
  if (ORDER.indexOf(role) >= ORDER.indexOf(needed)) return null;
  return `Needs the ${needed} role (or higher); this API key has the ${role} role.`;
}

export const may = (role, action) => refusal(role, action) === null;
