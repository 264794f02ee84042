#!/usr/bin/env node
import process from 'node:process';
import { runCli } from './run-cli.js';

// The exit is explicit: after `start` has closed the proxy, a lingering handle (a ZooKeeper
// client thread, a keep-alive socket) must not keep a stopped proxy's process alive.
const exitCode = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  signals: process,
});
process.exit(exitCode);
