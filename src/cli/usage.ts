import { COMMANDS } from './commands/index.js';

export function usageText(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const commands = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return [
    'Usage: es-lock-proxy <command> [options]',
    '',
    'A write proxy for Elasticsearch that serializes document writes per document id with',
    'ZooKeeper priority locks (foreground before background).',
    '',
    'Commands:',
    ...commands,
    '',
    'Options:',
    '  -h, --help     show this help (also: es-lock-proxy <command> --help)',
    '  -V, --version  print the version',
    '',
  ].join('\n');
}
