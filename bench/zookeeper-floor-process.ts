/**
 * The ZooKeeper floor (zookeeper-floor.ts) measured in its own process, so that it can run while
 * the load generator drives the proxy without either sharing the other's event loop. Argument:
 * JSON `{ zookeeper, ratePerS, warmupPairs, pairs }`. Prints the `ZooKeeperFloor` as one JSON line
 * when done, and exits.
 */
import { numberField, stringField } from './child-process.js';
import { measureLockFloor } from './zookeeper-floor.js';

const options: unknown = JSON.parse(process.argv[2] ?? '{}');
const floor = await measureLockFloor(stringField(options, 'zookeeper'), {
  ratePerS: numberField(options, 'ratePerS'),
  warmupPairs: numberField(options, 'warmupPairs'),
  pairs: numberField(options, 'pairs'),
});
console.log(JSON.stringify(floor));
process.exit(0);
