import { sql, type Column, type Placeholder, type SQL } from "drizzle-orm";

/**
 * `column = +value`: the comparison `eq` makes, with the value behind a unary
 * plus so that the planner cannot read the bound value. The SQLite of local
 * workerd (3.54) compiles a statement again at every new binding when its plan
 * could depend on that value (an equality over an index's leading column with
 * an `ORDER BY` or `max()` over the next): the event log's append did so four
 * times a turn (bench/README.md "The rest, by process and by statement").
 * The index is used as before.
 */
export const eqParam = (column: Column, value: Placeholder | number | string): SQL => sql`${column} = +${value}`;
