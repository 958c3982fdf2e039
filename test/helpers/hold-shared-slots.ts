// A process that takes slots of a key and holds them until it is killed (test/store/shared-slots.test.ts):
// argv KEY COUNT MAX; env DATABASE_URL, DATABASE_SCHEMA. Prints "held N" once it has them.
import { openDb } from '../../src/store/db.ts';
import { SharedSlots } from '../../src/store/shared-slots.ts';

const [key, count, max] = process.argv.slice(2);
const db = await openDb({ dataDir: '', databaseUrl: process.env.DATABASE_URL, schema: process.env.DATABASE_SCHEMA });
const slots = new SharedSlots(db, { leaseMs: Number(process.env.LEASE_MS ?? 30_000) });
let held = 0;
while (held < Number(count)) if (await slots.tryTake(key, Number(max))) held++;
console.log(`held ${held}`);
setInterval(() => undefined, 60_000);
