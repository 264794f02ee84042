import type { TestProject } from 'vitest/node';
import { INSTALL_HINT, startZooKeeper, zookeeperInstalled } from './zookeeper-server.js';

/**
 * One real ZooKeeper for the whole run, or the one named by ZOOKEEPER_CONNECT. Missing
 * ZooKeeper fails the run with the install hint: these tests never silently skip it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.ZOOKEEPER_CONNECT;
  if (external !== undefined && external !== '') {
    project.provide('zookeeperConnect', external);
    return async () => {};
  }
  if (!zookeeperInstalled()) throw new Error(INSTALL_HINT);
  const cluster = await startZooKeeper(1);
  project.provide('zookeeperConnect', cluster.connectString);
  return () => cluster.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    zookeeperConnect: string;
  }
}
