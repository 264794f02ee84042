import type { Command } from '../cli-context.js';
import { dlqCommand } from './dlq.js';
import { startCommand } from './start.js';

/** Every subcommand, in the order `--help` lists them. New commands (e.g. `dlq`) register here. */
export const COMMANDS: readonly Command[] = [startCommand, dlqCommand];

export function findCommand(name: string): Command | null {
  return COMMANDS.find((command) => command.name === name) ?? null;
}
