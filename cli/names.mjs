// The names one tenant name gives rise to, in every file the generator writes.
// A tenant name is what callers send as params.tenant, so it stays plain:
// lower-case words joined by hyphens.

const TENANT = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * @param {string} tenant e.g. `weather` or `trip-planner`
 * @returns {{ tenant: string, camel: string, pascal: string, binding: string, title: string, words: string, agentClass: string, subagentClass: string }}
 */
export function tenantNames(tenant) {
  if (!TENANT.test(tenant) || tenant.length > 40) {
    throw new Error(
      `tenant name ${JSON.stringify(tenant)}: use lower-case letters and digits, words joined by "-", starting with a letter (at most 40 characters)`,
    );
  }
  const words = tenant.split("-");
  const pascal = words.map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  return {
    tenant,
    camel: pascal[0].toLowerCase() + pascal.slice(1),
    pascal,
    // Always suffixed, so no tenant's binding can take a name the platform reads (AI, TURN_WORKFLOW, …).
    binding: `${words.join("_").toUpperCase()}_AGENT`,
    title: words.map((w) => w[0].toUpperCase() + w.slice(1)).join(" "),
    words: words.join(" "),
    agentClass: `${pascal}Agent`,
    // The class a delegating tenant's subtasks run in (add-tenant --round).
    subagentClass: `${pascal}Subagent`,
  };
}

/** The placeholders of templates/ and what they become for `names` (file paths and contents alike). */
export const placeholders = (names) => ({
  __tenant__: names.tenant,
  __name__: names.camel,
  __Name__: names.pascal,
  __BINDING__: names.binding,
  __Title__: names.title,
  __words__: names.words,
});
