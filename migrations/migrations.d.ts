// drizzle-kit writes migrations.js as plain JS; this gives it a type for TS callers.
declare const migrations: {
  journal: { entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] };
  migrations: Record<string, string>;
};
export default migrations;
